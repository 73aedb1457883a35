"""An OpenAI-compatible ``/v1/embeddings`` server on loopback whose passage requests can be held.

A test points one process (an ingest) at a held endpoint and the others (``decide``, the MCP server)
at a free one: the ingest then stays in its embedding phase, after it has read the store and before
it deletes anything, for exactly as long as the test needs, with no sleeps and no timing luck.
Vectors are a fixed function of the text (16 float32 from its BLAKE2 digest), so every process
gets the same vector for the same text and the store never mixes vector spaces.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["EmbeddingEndpoint", "embedding_endpoint"]

DIMENSIONS = 16


def _vector(text: str) -> list[float]:
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=DIMENSIONS).digest()
    return [(byte - 127.5) / 127.5 for byte in digest]


@dataclass
class EmbeddingEndpoint:
    """A running endpoint: its API root, the gate passage requests wait on, and what it served.

    Attributes:
        url: the API root (``http://127.0.0.1:PORT/v1``), for ``MISSION_MEMORY_EMBEDDINGS_URL``.
        released: passage requests wait until this is set (it starts set unless ``held``).
        waiting: set once a passage request is waiting at the gate.
        passages: how many passages were embedded.
    """

    url: str
    released: threading.Event = field(default_factory=threading.Event)
    waiting: threading.Event = field(default_factory=threading.Event)
    passages: int = 0

    def environment(self) -> dict[str, str]:
        """The ``MISSION_MEMORY_*`` variables that make a process embed through this endpoint."""
        return {
            "MISSION_MEMORY_EMBEDDER": "openai",
            "MISSION_MEMORY_EMBEDDINGS_URL": self.url,
            "MISSION_MEMORY_EMBEDDINGS_MODEL": "held-e5",
            "MISSION_MEMORY_EMBEDDINGS_ROLE_STYLE": "input_type",
            "MISSION_MEMORY_EMBEDDINGS_DEADLINE_SECONDS": "300",
        }


@contextmanager
def embedding_endpoint(*, held: bool = False) -> Iterator[EmbeddingEndpoint]:
    """Serve embeddings on a free loopback port for the block; ``held`` closes the passage gate."""
    state: dict[str, Any] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
            endpoint: EmbeddingEndpoint = state["endpoint"]
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            texts = [str(t) for t in body["input"]]
            if body.get("input_type") == "passage":
                endpoint.waiting.set()
                endpoint.released.wait(timeout=300)
                endpoint.passages += len(texts)
            data = [{"object": "embedding", "index": i, "embedding": _vector(t)} for i, t in enumerate(texts)]
            answer = json.dumps({"object": "list", "data": data, "model": body.get("model")}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the http.server signature
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    endpoint = EmbeddingEndpoint(url=f"http://127.0.0.1:{server.server_address[1]}/v1")
    if not held:
        endpoint.released.set()
    state["endpoint"] = endpoint
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        endpoint.released.set()
        server.shutdown()
        server.server_close()
