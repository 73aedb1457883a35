"""A mission's HNSW index is built after the write that crosses the threshold, not inside it.

docs/adr/0084: building the partial HNSW index of a mission of 40,000 real vectors takes tens of
seconds; built inside the crossing write's transaction, that write (an ingest, an event intake)
held the store's write lock, and every other writer waited, for the whole build. The build now runs
``CREATE INDEX CONCURRENTLY`` after the write commits, and a search goes through the index only once
it is valid; until then the exact scan serves it. A build left unfinished (its process ended, its
statement cancelled) leaves an invalid index, which the next crossing write replaces.

Every test runs against the real server of the ``postgres_server`` fixture. A transaction that has
written to ``vectors`` and not committed (``blocker``) holds the build at its first wait, so the
tests see the state while the index is being built without depending on how fast the machine is.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from mission_memory.records import Layer, Record, RecordKind
from mission_memory.stores.base import SearchFilter
from mission_memory.stores.postgres import PostgresStore
from mission_memory.stores.postgres_vectors import HNSW_MIN_ROWS
from mission_memory.stores.registry import open_store
from tests.stores.contract.test_store_contract import _record, _unit

MODEL = "model-a"
DIM = 16


def _records(count: int, mission: str = "big", start: int = 0) -> list[Record]:
    return [_record(f"{mission}{i}.md", f"{mission} {i}", mission=mission,
                    kind=RecordKind.DECISION if i % 10 == 0 else RecordKind.DOC_CHUNK) for i in range(start, count)]


def _index_state(url: str, store: PostgresStore) -> tuple[bool | None, list[tuple[str, str]]]:
    """Whether the mission's index exists and is valid (None: no such index), and the indexes recorded."""
    name = store.vectors.index_name(MODEL, "big")
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(%s)", (name,)).fetchone()
        recorded = [(str(m), str(mi)) for m, mi in conn.execute("SELECT model_id, mission FROM vector_indexes")]
    return (None if row is None else bool(row[0])), recorded


def _assert_exact(store: PostgresStore) -> None:
    """The store's mission-scoped search returns the exact scan's hits (per layer, and per layer and kind)."""
    with store._connection() as conn:
        for q in range(3):
            query = _unit(1, dim=DIM, seed=300 + q)[0]
            for per_kind in (False, True):
                where = SearchFilter((Layer.DOMAIN, Layer.WORKFLOW), mission="big")
                got = store.dense_search_by_layer(query, MODEL, where, 10, per_kind=per_kind)
                exact = store.vectors.exact(conn, query, MODEL, "r.mission = %s AND r.layer = ANY(%s)",
                                            ["big", ["domain", "workflow"]], 10, per_kind)
                assert sorted(h.record_id for hits in got.values() for h in hits) == sorted(r[0] for r in exact)


def test_a_write_crossing_the_hnsw_threshold_commits_without_waiting_for_the_build(postgres_url: str) -> None:
    store = PostgresStore(postgres_url, hnsw_min_rows=300)
    records, vectors = _records(400), _unit(400, dim=DIM, seed=7)
    store.upsert(records[:200], vectors[:200], MODEL)
    blocker = psycopg.connect(postgres_url)  # a writer of `vectors` that has not committed
    blocker.execute("LOCK TABLE vectors IN ROW EXCLUSIVE MODE")
    pool = ThreadPoolExecutor(max_workers=1)
    try:
        crossing = pool.submit(store.upsert, records[200:], vectors[200:], MODEL)
        crossing.result(timeout=10)  # inside the write, the build would wait for the blocker, holding the lock
        with psycopg.connect(postgres_url, autocommit=True) as other:  # committed: every session sees it
            assert other.execute("SELECT count(*) FROM vectors WHERE mission = 'big'").fetchone() == (400,)
        valid, recorded = _index_state(postgres_url, store)
        assert valid is not True and recorded == []  # being built: not used yet
        _assert_exact(store)  # the exact scan serves the mission meanwhile
        store.upsert(_records(5, mission="small"), _unit(5, dim=DIM, seed=8), MODEL)  # other writers go on
    finally:
        blocker.rollback()
        blocker.close()
        pool.shutdown(wait=True)
    assert store.wait_for_index_builds(timeout=60)
    assert _index_state(postgres_url, store) == (True, [(MODEL, "big")])
    _assert_exact(store)  # through the index: 400 rows, HNSW finds the exact top 10 at this size
    with store._connection() as conn:
        plan = conn.execute(
            "EXPLAIN SELECT seq FROM vectors WHERE model_id = %s AND mission = 'big'"
            " ORDER BY embedding::vector(16) <#> %s::vector(16) LIMIT 10", (MODEL, str([0.25] * DIM))).fetchall()
    assert "vectors_hnsw_" in " ".join(row[0] for row in plan)
    store.close()


def test_an_unfinished_build_is_replaced_by_the_next_crossing_write(postgres_url: str) -> None:
    store = PostgresStore(postgres_url, hnsw_min_rows=300)
    store.upsert(_records(300), _unit(300, dim=DIM, seed=9), MODEL)
    assert store.wait_for_index_builds(timeout=60)
    name = store.vectors.index_name(MODEL, "big")
    with psycopg.connect(postgres_url, autocommit=True) as conn:  # a build that ended half way: invalid index
        conn.execute(f'DROP INDEX "{name}"')
        conn.execute("DELETE FROM vector_indexes")
        blocker = psycopg.connect(postgres_url)
        blocker.execute("LOCK TABLE vectors IN ROW EXCLUSIVE MODE")
        try:
            conn.execute("SET statement_timeout = '300ms'")
            with pytest.raises(psycopg.errors.QueryCanceled):  # waiting for the blocker, cancelled
                conn.execute(f'CREATE INDEX CONCURRENTLY "{name}" ON vectors USING hnsw ((embedding::vector(16))'
                             f" vector_ip_ops) WHERE model_id = '{MODEL}' AND mission = 'big'")
        finally:
            blocker.rollback()
            blocker.close()
    assert _index_state(postgres_url, store) == (False, [])
    _assert_exact(store)  # an invalid index is never read
    store.upsert(_records(310, start=300), _unit(10, dim=DIM, seed=10), MODEL)
    assert store.wait_for_index_builds(timeout=60)
    assert _index_state(postgres_url, store) == (True, [(MODEL, "big")])
    _assert_exact(store)
    store.close()


def test_the_hnsw_threshold_is_a_setting(postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MISSION_MEMORY_POSTGRES_HNSW_MIN_ROWS moves the threshold (a benchmark keeps every mission exact)."""
    default = open_store(postgres_url, tmp_path)
    assert isinstance(default, PostgresStore)
    assert default.vectors.hnsw_min_rows == HNSW_MIN_ROWS
    default.close()
    monkeypatch.setenv("MISSION_MEMORY_POSTGRES_HNSW_MIN_ROWS", "123")
    store = open_store(postgres_url, tmp_path)
    assert isinstance(store, PostgresStore)
    assert store.vectors.hnsw_min_rows == 123
    store.close()
