"""Dense search over a :class:`~mission_memory.stores.vector_table.VectorTable`: the best rows of each group.

Exact dense search scores every float32 vector: at 1M × 384 that reads 1.5 GB per query, which on
a 2-core machine takes a few hundred milliseconds and is bound by memory bandwidth. The quantized
search reads the int8 copy instead (a quarter of the bytes, scored with SIMD int8 dot products by
``numkong``), keeps the best ``max(limit × RESCORE_FACTOR, RESCORE_MIN)`` rows of each group by that
approximate score, and rescores only those with the exact float32 vectors, so the scores returned
are exact and only the choice of which rows to rescore is approximate (docs/adr/0033). Its recall
against exact search is checked by a test and reported by ``benchmarks/bench_pull.py``.

Groups are sets of row positions (one per layer, filters applied); when together they cover
most of the table, one pass scores every row and each group reads its share; when they are small
(a selective filter), only their rows are gathered and scored.

The exact search stays selectable for comparison: ``MISSION_MEMORY_DENSE_SEARCH=exact``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt

from mission_memory.stores.vector_table import VectorTable

__all__ = [
    "QUANTIZED_MIN_ROWS",
    "RESCORE_FACTOR",
    "RESCORE_MIN",
    "SCAN_THREADS",
    "SPLIT_MIN_ROWS",
    "best_rows",
    "exact_search_forced",
    "one_blas_thread",
    "top_indices",
]

RESCORE_FACTOR = 4
"""Rows rescored exactly per group, as a multiple of the number asked for."""
RESCORE_MIN = 200
"""Rows rescored exactly per group at least (docs/adr/0033)."""
QUANTIZED_MIN_ROWS = 20_000
"""Below this many rows the exact search is as fast as the quantized one, so it is used."""
_SAMPLE_ROWS = 8192
"""Scores sampled (every k-th) to place the cut of :func:`top_indices` (docs/adr/0049)."""
_PARTITION_MAX = 32_768
"""Up to this many scores, :func:`top_indices` partitions them all: no cut to place."""
_SHARE_FOR_ONE_PASS = 0.3
"""Groups covering more than this share of the rows are scored by one pass over the whole table."""

SCAN_THREADS = 2
"""Parts a large int8 scan is split into, each on its own thread (docs/adr/0049)."""
SPLIT_MIN_ROWS = 200_000
"""Below this many rows a scan takes a few milliseconds and runs on the calling thread alone."""

Positions = npt.NDArray[np.int64]
Scores = npt.NDArray[np.float32]


@functools.cache
def one_blas_thread() -> None:
    """Give NumPy's BLAS (OpenBLAS in NumPy's wheels) one thread for the rest of the process.

    The products here are matrix-vector products, bound by memory bandwidth, which a second BLAS
    thread does not speed up; but OpenBLAS's idle workers spin, taking the machine's other core
    from the query embedding and the BM25 search a pull runs beside them. Measured on the 10k
    store (50 pulls per run, two runs each, one process per run): process CPU time per pull p50
    52.7 and 48.5 ms with the default threads against 38.7 and 41.5 ms with one (docs/adr/0047;
    the issue measured pull p50/p95 −22 %/−24 % at 100k with ``OPENBLAS_NUM_THREADS=1``). Done
    once, on the first search, through ``threadpoolctl`` (the variable is read only when NumPy loads).
    """
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


@functools.cache
def _scan_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=max(1, SCAN_THREADS - 1), thread_name_prefix="mm-dense-scan")


def exact_search_forced() -> bool:
    """True when ``MISSION_MEMORY_DENSE_SEARCH=exact`` asks for the exact search (for comparisons;
    :func:`mission_memory.config.exact_dense_search_forced`)."""
    from mission_memory.config import exact_dense_search_forced

    return exact_dense_search_forced()


def best_rows(
    table: VectorTable,
    query: npt.NDArray[np.float32],
    groups: Sequence[Positions],
    limit: int,
    *,
    exact: bool | None = None,
    quantized_min_rows: int = QUANTIZED_MIN_ROWS,
) -> list[tuple[Positions, Scores]]:
    """The best ``limit`` rows of each group by cosine similarity with ``query``, best first.

    Args:
        table: the vectors.
        query: shape ``(dim,)`` unit vector.
        groups: row positions in ``table`` (not row ids), each ascending and without repeats.
        limit: rows wanted per group.
        exact: True scores every row in float32; False uses the int8 first pass with exact
            rescoring; None (default) chooses the first pass when the table has at least
            ``quantized_min_rows`` rows and :func:`exact_search_forced` is false.
        quantized_min_rows: see ``exact``.

    Returns:
        Per group, ``(positions, scores)``: at most ``limit`` positions and their exact float32
        cosine similarities, highest first.
    """
    one_blas_thread()
    q = np.ascontiguousarray(query, dtype=np.float32)
    if exact is None:
        exact = table.size < quantized_min_rows or exact_search_forced()
    covered = sum(int(g.size) for g in groups)
    one_pass = covered > _SHARE_FOR_ONE_PASS * table.size
    if exact:
        everything = table.matrix @ q if one_pass else None
        out = []
        for group in groups:
            scores = everything[group] if everything is not None else table.matrix[group] @ q
            out.append(_top(group, scores, limit))
        return out
    q8, q_scale = _quantize_query(q)
    approx_all = _approximate(table.quantized, table.scales, q8, q_scale) if one_pass else None
    depth = max(limit * RESCORE_FACTOR, RESCORE_MIN)
    out = []
    for group in groups:
        if group.size <= depth:
            out.append(_top(group, table.float_rows(group) @ q, limit))
            continue
        approx = (
            approx_all[group]
            if approx_all is not None
            else _approximate(table.quantized[group], table.scales[group], q8, q_scale)
        )
        chosen = group[top_indices(approx, depth)]
        chosen.sort()  # ascending positions read the snapshot in file order
        out.append(_top(chosen, table.float_rows(chosen) @ q, limit))
    return out


def top_indices(scores: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.intp]:
    """Indices of the ``k`` highest ``scores``, in no order; the same set ``argpartition`` gives.

    ``np.argpartition`` over the 600k approximate scores of a layer at 1M rows costs 5–10 ms, on
    a stage the int8 scan itself finishes in about 20 (docs/adr/0049). Here a sample of every
    ``n / 8192``-th score places a cut that about ``2k + 64`` scores are expected to pass; one
    vectorised comparison keeps those, and only they are partitioned. When fewer than ``k`` pass
    (a sample that misjudged the tail), every score is partitioned, so the result never depends
    on the sample: it is always the ``k`` highest (among equal scores at the boundary, any).

    Args:
        scores: shape ``(n,)``.
        k: how many; ``1 <= k``; all of them when ``k >= n``.

    Returns:
        Shape ``(min(k, n),)`` indices into ``scores``.
    """
    n = int(scores.shape[0])
    if k >= n:
        return np.arange(n)
    if n <= _PARTITION_MAX:
        return np.argpartition(-scores, k - 1)[:k]
    stride = n // _SAMPLE_ROWS
    sample = scores[::stride]
    above = min(int(sample.shape[0]) - 1, (2 * k + 64) // stride + 1)
    cut = np.partition(sample, sample.shape[0] - 1 - above)[sample.shape[0] - 1 - above]
    passing = np.flatnonzero(scores >= cut)
    if passing.shape[0] < k:
        return np.argpartition(-scores, k - 1)[:k]
    return passing[np.argpartition(-scores[passing], k - 1)[:k]]


def _quantize_query(q: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.int8], float]:
    peak = float(np.abs(q).max()) if q.size else 0.0
    scale = peak / 127.0 if peak > 0 else 1.0
    return np.clip(np.rint(q / scale), -127, 127).astype(np.int8), scale


def _approximate(
    quantized: npt.NDArray[np.int8], scales: npt.NDArray[np.float32], q8: npt.NDArray[np.int8], q_scale: float
) -> Scores:
    """Approximate cosine similarity of every row: int8 dot products (exact integers) times both scales.

    Tables of at least :data:`SPLIT_MIN_ROWS` rows are scanned in :data:`SCAN_THREADS` parts at
    once (``numkong`` releases the GIL while it computes; docs/adr/0049).
    """
    import numkong  # a compiled SIMD kernel library; imported on first use, not at CLI start-up

    n = quantized.shape[0]
    dots = np.empty((1, n), dtype=np.float32)

    def scan(start: int, stop: int) -> None:
        numkong.cdist(q8[None, :], quantized[start:stop], metric="dot", dtype="int8", out=dots[:, start:stop],
                      out_dtype="float32")

    parts = SCAN_THREADS if n >= SPLIT_MIN_ROWS else 1
    if parts > 1:
        bounds = [n * i // parts for i in range(parts + 1)]
        others = [_scan_pool().submit(scan, bounds[i], bounds[i + 1]) for i in range(1, parts)]
        scan(bounds[0], bounds[1])
        for part in others:
            part.result()
    elif n:
        scan(0, n)
    approx: Scores = dots[0] * scales
    approx *= np.float32(q_scale)
    return approx


def _top(positions: Positions, scores: npt.NDArray[np.float32], limit: int) -> tuple[Positions, Scores]:
    k = min(limit, int(positions.size))
    if k <= 0:
        return positions[:0], scores[:0].astype(np.float32)
    top = top_indices(scores, k)
    top = top[np.argsort(-scores[top], kind="stable")]
    return positions[top], scores[top].astype(np.float32)
