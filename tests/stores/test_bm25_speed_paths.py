"""BM25 under a selective filter and with common terms left out: same best rows as the full query (ADR 0033)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from mission_memory.records import Layer, Provenance, Record, RecordKind, SourceKind
from mission_memory.stores.base import SearchFilter
from mission_memory.stores.sqlite import SPLIT_MIN_POSTINGS, SPLIT_PARTS, SqliteStore
from mission_memory.stores.sqlite_filters import filter_sql
from mission_memory.stores.sqlite_fts_terms import FtsTermStats

WORDS = "proxy upload bucket queue scan keycloak export metadata checksum lambda".split()


def _records(n: int) -> list[Record]:
    rng = np.random.default_rng(11)
    out = []
    for i in range(n):
        words = " ".join(WORDS[int(j)] for j in rng.integers(len(WORDS), size=6))
        out.append(Record.build(
            kind=RecordKind.COMMIT if i % 3 else RecordKind.DOC_CHUNK,
            title=f"change {i}",
            text=f"{words}. Files: src/file{i % 7}.py",  # "file" is in every record, as in commits
            provenance=Provenance(kind=SourceKind.DOC, ref=f"r{i}", uri=f"file:///r{i}", mission="m",
                                  time=datetime(2025, 1, 1, tzinfo=UTC)),
            component="api" if i % 40 == 0 else "web",  # "api" passes for 1 record in 40
        ))
    return out


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> SqliteStore:
    store = SqliteStore(tmp_path_factory.mktemp("bm25") / "m.db")
    store.upsert_records(_records(3000))
    return store


def _joined(store: SqliteStore, terms: list[str], where: SearchFilter, limit: int) -> dict[Layer, list[str]]:
    """The reference: one SQL query joining every matching row with the records and their filters."""
    clauses, params = filter_sql(where, alias="r")
    match = " OR ".join(f'"{t}"' for t in terms)
    rows = store._conn().execute(
        "SELECT r.id, r.layer FROM records_fts JOIN records r ON r.rowid = records_fts.rowid "
        f"WHERE records_fts MATCH ? {''.join(' AND ' + c for c in clauses)} "
        "ORDER BY bm25(records_fts, 2.0, 1.0), r.rowid LIMIT ?",
        (match, *params, limit * len(where.layers)),
    ).fetchall()
    out: dict[Layer, list[str]] = {layer: [] for layer in where.layers}
    for rid, layer in rows:
        if len(out[Layer(layer)]) < limit:
            out[Layer(layer)].append(rid)
    return out


def test_a_selective_filter_gets_the_best_passing_rows_of_each_layer(store: SqliteStore) -> None:
    where = SearchFilter(layers=(Layer.DOMAIN, Layer.WORKFLOW), component="api")
    terms = ["proxy", "checksum", "keycloak"]
    hits = store.bm25_search_by_layer(terms, where, 30)
    expected = _joined(store, terms, where, 30)
    for layer in where.layers:
        assert {h.record_id for h in hits[layer]} == set(expected[layer])
        assert len(hits[layer]) == len(expected[layer]) > 0
        scores = [h.score for h in hits[layer]]
        assert scores == sorted(scores, reverse=True)
    assert {store.get([h.record_id for h in hits[Layer.WORKFLOW]])[h.record_id].component
            for h in hits[Layer.WORKFLOW]} == {"api"}


def test_the_passing_share_is_estimated_from_the_vector_cache_when_it_is_loaded(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "m.db")
    records = _records(400)
    vectors = np.random.default_rng(1).standard_normal((400, 8)).astype(np.float32)
    store.upsert(records, vectors / np.linalg.norm(vectors, axis=1, keepdims=True), "model-a")
    where = SearchFilter(layers=tuple(Layer), component="api")
    assert store._vectors.passing_share(where) is None  # nothing cached yet
    store.dense_search(vectors[0], "model-a", where, 5)
    assert store._vectors.passing_share(where) == pytest.approx(10 / 400)
    hits = store.bm25_search_by_layer(["proxy", "scan"], where, 60)
    assert {h.record_id for layer in hits.values() for h in layer} == {
        rid for layer in _joined(store, ["proxy", "scan"], where, 60).values() for rid in layer
    }


def test_a_term_in_more_than_half_of_the_records_is_left_out_while_a_rarer_one_remains(store: SqliteStore) -> None:
    conn = store._conn()
    stats = FtsTermStats()
    # "files" is stemmed to "file", which every record holds; "proxy" is in about half of them at most.
    assert stats.rare_terms(conn, ["files", "checksum"], 0.5) == ["checksum"]
    assert stats.rare_terms(conn, ["files", "file"], 0.5) == ["files", "file"]  # all common: all kept
    assert stats.rare_terms(conn, ["files", "checksum"], 1.0) == ["files", "checksum"]
    assert stats.rare_terms(conn, ["ukrainian", "перевірки"], 0.5) == ["ukrainian", "перевірки"]


def test_leaving_out_a_term_above_half_of_the_records_keeps_the_best_rows(store: SqliteStore) -> None:
    where = SearchFilter(layers=tuple(Layer))
    store.bm25_common_share = 0.5
    capped = store.bm25_search_by_layer(["files", "keycloak"], where, 20)
    store.bm25_common_share = 1.0
    try:
        full = store.bm25_search_by_layer(["files", "keycloak"], where, 20)
    finally:
        store.bm25_common_share = 0.5
    for layer in where.layers:
        assert [h.record_id for h in capped[layer]] == [h.record_id for h in full[layer]]


def test_term_statistics_work_on_a_read_only_connection(store: SqliteStore, tmp_path: Path) -> None:
    conn = sqlite3.connect(f"file:{store.path}?mode=ro", uri=True, isolation_level=None)
    try:
        assert FtsTermStats().rare_terms(conn, ["file", "lambda"], 0.5) == ["lambda"]
    finally:
        conn.close()


@pytest.mark.parametrize("parts", [2, 3])
def test_a_ranking_split_into_row_id_ranges_returns_the_rows_and_scores_of_one_ranking(
    store: SqliteStore, parts: int
) -> None:
    terms = ["proxy", "checksum", "files"]
    match = " OR ".join(f'"{t}"' for t in terms)
    whole = store._bm25_ranked(match, 150, 0)
    assert len(whole) == 150
    for offset in (0, 40, 2990):
        one = store._bm25_ranked(match, 60, offset)
        split = store._bm25_ranked(match, 60, offset, parts)
        assert [s for _, s in split] == [s for _, s in one]  # the same scores: same IDF and lengths
        assert {r for r, _ in split} == {r for r, _ in one} or offset == 2990  # ties may order differently
    for where in (SearchFilter(layers=tuple(Layer)), SearchFilter(layers=(Layer.DOMAIN, Layer.WORKFLOW), component="api")):
        store.bm25_split_postings, store.bm25_split_parts = 0, parts
        try:
            split_hits = store.bm25_search_by_layer(terms, where, 30)
        finally:
            store.bm25_split_postings, store.bm25_split_parts = SPLIT_MIN_POSTINGS, SPLIT_PARTS
        one_hits = store.bm25_search_by_layer(terms, where, 30)
        for layer in where.layers:
            assert [h.score for h in split_hits[layer]] == [h.score for h in one_hits[layer]]
        assert sum(len(hits) for hits in split_hits.values()) > 30


def test_the_term_plan_counts_the_postings_of_the_kept_terms(store: SqliteStore) -> None:
    plan = FtsTermStats().plan(store._conn(), ["files", "checksum"], 0.5)
    assert plan.terms == ["checksum"]
    assert plan.records == 3000
    assert 0 < plan.postings < 3000  # "checksum" only; "files" (every record) was left out
    everything = FtsTermStats().plan(store._conn(), ["files", "checksum"], 1.0)
    assert everything.postings == plan.postings + 3000
