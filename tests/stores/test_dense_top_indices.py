"""``top_indices`` picks exactly the set ``argpartition`` picks, whatever its sample sees (docs/adr/0049)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mission_memory.stores.dense_scan import top_indices


def _reference(scores: np.ndarray, k: int) -> set[int]:
    return set(np.argpartition(-scores, k - 1)[:k].tolist())


@pytest.mark.parametrize("n", [10, 32_768, 40_000, 250_001])
@pytest.mark.parametrize("k", [1, 60, 240, 5_000])
def test_the_k_highest_of_random_scores(n: int, k: int) -> None:
    scores = np.random.default_rng(n + k).standard_normal(n).astype(np.float32)
    got = top_indices(scores, k)
    assert got.shape == (min(k, n),)
    assert set(got.tolist()) == (_reference(scores, k) if k < n else set(range(n)))


def test_scores_sorted_so_the_sample_misjudges_the_tail() -> None:
    # Rising scores with the best block between two sampled positions: the sample sees none of it.
    n = 200_000
    scores = np.linspace(0.0, 1.0, n, dtype=np.float32)
    stride = n // 8192
    scores[::stride] = -1.0  # every sampled score is the lowest: the cut passes everything
    got = top_indices(scores, 240)
    assert set(got.tolist()) == _reference(scores, 240)
    scores = np.zeros(n, dtype=np.float32)
    between = np.arange(1, 10 * stride)
    scores[between[between % stride != 0]] = 1.0  # the top lies between samples; every sample ties at 0
    got = top_indices(scores, 60)
    assert np.all(scores[got] == 1.0) and len(set(got.tolist())) == 60


def test_a_sample_that_sets_the_cut_too_high_falls_back_to_every_score() -> None:
    n = 100_000
    stride = n // 8192
    scores = np.zeros(n, dtype=np.float32)
    scores[::stride] = 1.0  # the sampled scores are all the highest and fewer than k of them exist
    k = (n // stride) + 50
    got = top_indices(scores, k)
    assert set(got.tolist()) >= set(np.flatnonzero(scores == 1.0).tolist())
    assert got.shape == (k,) and len(set(got.tolist())) == k


def test_rows_read_from_a_snapshot_are_its_rows_even_after_it_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mission_memory.stores import vector_table
    from mission_memory.stores.vector_table import VectorTable

    monkeypatch.setattr(vector_table, "READ_ROWS_MIN_ROWS", 100)
    rng = np.random.default_rng(11)
    rows = [(i + 1, rng.standard_normal(8).astype(np.float32).tobytes(), "domain") for i in range(300)]
    table = VectorTable.from_rows("m", 0, 0, 8, rows, {"domain": 0}, (), ())
    path = tmp_path / "t.mmvec"
    table.save(path)
    loaded = VectorTable.load(path)
    assert loaded is not None and isinstance(loaded.matrix, np.memmap)
    wanted = np.array([0, 5, 6, 150, 299], dtype=np.int64)
    np.testing.assert_array_equal(loaded.float_rows(wanted), table.matrix[wanted])
    assert loaded.float_rows(wanted[:0]).shape == (0, 8)
    # Another process replaces the snapshot (rename over it): the loaded table still reads its own file.
    other = VectorTable.from_rows("m", 1, 0, 8, rows[:10], {"domain": 0}, (), ())
    other.save(path)
    np.testing.assert_array_equal(loaded.float_rows(wanted), table.matrix[wanted])


def test_a_split_scan_and_rows_read_from_the_snapshot_give_the_one_thread_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mission_memory.stores import dense_scan, vector_table
    from mission_memory.stores.vector_table import VectorTable

    rng = np.random.default_rng(12)
    vectors = rng.standard_normal((5_000, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = [(i + 1, vectors[i].tobytes(), "domain") for i in range(len(vectors))]
    VectorTable.from_rows("m", 0, 0, 32, rows, {"domain": 0}, (), ()).save(tmp_path / "t.mmvec")
    table = VectorTable.load(tmp_path / "t.mmvec")
    assert table is not None
    query = vectors[17] + 0.5 * vectors[99]
    query /= np.linalg.norm(query)
    groups = [np.arange(0, 5_000, dtype=np.int64), np.arange(0, 5_000, 3, dtype=np.int64)]
    before = dense_scan.best_rows(table, query, groups, 60, exact=False)
    monkeypatch.setattr(dense_scan, "SPLIT_MIN_ROWS", 100)
    monkeypatch.setattr(vector_table, "READ_ROWS_MIN_ROWS", 100)
    after = dense_scan.best_rows(table, query, groups, 60, exact=False)
    exact = dense_scan.best_rows(table, query, groups, 60, exact=True)
    for (p0, s0), (p1, s1), (pe, _) in zip(before, after, exact, strict=True):
        np.testing.assert_array_equal(p0, p1)
        np.testing.assert_array_equal(s0, s1)
        assert len(set(p1.tolist()) & set(pe.tolist())) >= 59
