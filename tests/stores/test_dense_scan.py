"""Dense search with the int8 first pass returns what exact brute force returns (docs/adr/0033)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from mission_memory.records import Layer, Provenance, Record, RecordKind, SourceKind
from mission_memory.stores.base import SearchFilter
from mission_memory.stores.dense_scan import best_rows
from mission_memory.stores.filters import matches
from mission_memory.stores.sqlite import SqliteStore
from mission_memory.stores.sqlite_filters import row_columns
from mission_memory.stores.vector_table import VectorTable, quantize_rows

DIM = 384
MODEL = "model-a"
KINDS = (RecordKind.DOC_CHUNK, RecordKind.COMMIT, RecordKind.DECISION, RecordKind.CORRECTION_PATTERN)
COMPONENTS = (None, "api", "web", "auth", "infra")
FILTERS = [
    SearchFilter(layers=tuple(Layer)),
    SearchFilter(layers=tuple(Layer), component="api"),
    SearchFilter(layers=(Layer.WORKFLOW,), min_criticality=0.7),
    SearchFilter(layers=(Layer.DOMAIN, Layer.WORKFLOW), since=datetime(2025, 6, 1, tzinfo=UTC)),
    SearchFilter(layers=tuple(Layer), component="web", min_criticality=0.5),
]


def _records(n: int, seed: int) -> list[Record]:
    rng = np.random.default_rng(seed)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    out = []
    for i in range(n):
        kind = KINDS[int(rng.integers(len(KINDS)))]
        out.append(Record.build(
            kind=kind,
            title=f"record {i}",
            text=f"text of record {i}",
            provenance=Provenance(kind=SourceKind.DOC, ref=f"r{i}.md", uri=f"file:///r{i}.md", mission="m",
                                  time=start + timedelta(days=int(rng.integers(365)))),
            component=COMPONENTS[int(rng.integers(len(COMPONENTS)))],
            criticality=float(rng.choice([0.2, 0.5, 0.7, 0.9])),
            operator="op" if kind is RecordKind.CORRECTION_PATTERN else None,
        ))
    return out


def _unit(rows: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((rows, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Record], np.ndarray]:
    path = tmp_path_factory.mktemp("dense") / "m.db"
    records = _records(4000, seed=1)
    vectors = _unit(len(records), seed=2)
    store = SqliteStore(path)
    for start in range(0, len(records), 1000):
        store.upsert(records[start : start + 1000], vectors[start : start + 1000], MODEL)
    store.close()
    return path, records, vectors


def _brute_force(records: list[Record], vectors: np.ndarray, query: np.ndarray, where: SearchFilter,
                 limit: int) -> dict[Layer, list[tuple[str, float]]]:
    """Exact cosine ranking per layer, filters checked record by record in Python."""
    scores = vectors @ query
    out: dict[Layer, list[tuple[str, float]]] = {}
    for layer in where.layers:
        passing = [i for i, r in enumerate(records) if r.layer is layer and matches(where, row_columns(_ROWS[r.id]))]
        ranked = sorted(passing, key=lambda i: -scores[i])[:limit]
        out[layer] = [(records[i].id, float(scores[i])) for i in ranked]
    return out


_ROWS: dict[str, tuple[object, ...]] = {}
"""The filter columns of every stored record, read back from the real store (as the store filters them)."""


def _load_filter_rows(path: Path) -> None:
    import sqlite3

    from mission_memory.stores.sqlite_filters import FILTER_COLUMNS

    if _ROWS:
        return
    with sqlite3.connect(path) as conn:
        for rid, *values in conn.execute(f"SELECT id, {', '.join(FILTER_COLUMNS)} FROM records"):
            _ROWS[rid] = tuple(values)


@pytest.mark.parametrize("where", FILTERS, ids=["all", "component", "criticality", "since", "component+crit"])
def test_the_quantized_first_pass_finds_the_exact_top_60_of_every_layer(
    filled: tuple[Path, list[Record], np.ndarray], where: SearchFilter
) -> None:
    path, records, vectors = filled
    _load_filter_rows(path)
    store = SqliteStore(path, quantized_min_rows=1)  # the first pass on every table, however small
    queries = _unit(20, seed=3)
    # Half the queries lie near a stored vector, as a task lies near the records about it.
    queries[:10] = vectors[:10] + 0.6 * queries[:10]
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    position = {r.id: i for i, r in enumerate(records)}
    found = wanted = 0
    for query in queries:
        fast = store.dense_search_by_layer(query, MODEL, where, 60)
        exact = _brute_force(records, vectors, query, where, 60)
        for layer in where.layers:
            truth = dict(exact[layer])
            got = {h.record_id: h.score for h in fast[layer]}
            assert len(got) == len(truth)
            found += len(got.keys() & truth.keys())
            wanted += len(truth)
            for rid, score in got.items():  # every score returned is the exact cosine
                assert score == pytest.approx(float(vectors[position[rid]] @ query), abs=1e-5)
    assert wanted > 0 and found / wanted >= 0.99


def test_quantized_and_exact_search_agree_on_the_same_table(filled: tuple[Path, list[Record], np.ndarray]) -> None:
    path, _, _ = filled
    store = SqliteStore(path)
    table = store._vectors.table(MODEL)
    everything = np.arange(table.size, dtype=np.int64)
    few = everything[::37]  # a selective filter: the rows are gathered, not scanned in one pass
    for query in _unit(10, seed=4):
        for group in (everything, few):
            (fast_pos, fast_scores), = best_rows(table, query, [group], 60, exact=False)
            (exact_pos, exact_scores), = best_rows(table, query, [group], 60, exact=True)
            assert len(set(fast_pos.tolist()) & set(exact_pos.tolist())) >= 59
            np.testing.assert_allclose(fast_scores[:10], exact_scores[:10], atol=1e-6)


def test_int8_rows_reconstruct_each_coordinate_within_half_a_step() -> None:
    matrix = _unit(300, seed=5)
    matrix[7] = 0.0
    quantized, scales = quantize_rows(matrix)
    assert quantized.dtype == np.int8 and scales.shape == (300,)
    error = np.abs(quantized.astype(np.float32) * scales[:, None] - matrix)
    assert np.all(error <= scales[:, None] / 2 + 1e-7)
    assert scales[7] == 0 and not quantized[7].any()
    assert np.abs(quantized).max() == 127


def test_the_snapshot_keeps_the_int8_matrix_and_its_scales(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "m.db", snapshot_min_rows=1)
    records = _records(50, seed=6)
    vectors = _unit(50, seed=7)
    store.upsert(records, vectors, MODEL)
    built = store._vectors.table(MODEL)
    loaded = VectorTable.load(next((tmp_path / "m.vectors").glob("*.mmvec")))
    assert loaded is not None
    np.testing.assert_array_equal(np.asarray(loaded.quantized), built.quantized)
    np.testing.assert_array_equal(np.asarray(loaded.scales), built.scales)
    np.testing.assert_array_equal(np.asarray(loaded.matrix), vectors)


def test_a_search_leaves_numpys_blas_with_one_thread(filled: tuple[Path, list[Record], np.ndarray]) -> None:
    from threadpoolctl import threadpool_info

    table = SqliteStore(filled[0])._vectors.table(MODEL)
    best_rows(table, _unit(1, seed=8)[0], [np.arange(table.size, dtype=np.int64)], 5, exact=True)
    blas = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
    assert blas and all(pool["num_threads"] == 1 for pool in blas)
