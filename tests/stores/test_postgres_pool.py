"""The PostgreSQL store's connections and its read paths at scale (issue 38, docs/adr/0084).

A server process serves tool calls from many threads: they share a bounded pool of connections,
and a call that finds none free waits at most the store's deadline. The BM25 ranking reads each
query term's postings from one index (an index-only scan), not from rows spread over the table.
Every test runs against the real server of the ``postgres_server`` fixture.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from mission_memory.errors import BackendUnavailable
from mission_memory.stores.postgres import PostgresStore
from tests.stores.contract.test_store_contract import _record


def _connections(url: str) -> int:
    """Sessions of the store (application_name mission-memory) open on ``url``'s database."""
    with psycopg.connect(url, autocommit=True) as admin:
        row = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                            " AND application_name = 'mission-memory'").fetchone()
    return int(row[0]) if row else 0


def test_threads_share_a_bounded_pool_of_connections(postgres_url: str) -> None:
    store = PostgresStore(postgres_url, pool_size=3)
    store.upsert_records([_record(f"r{i}.md", f"ledger {i}") for i in range(20)])
    start = threading.Barrier(12)

    def call(_: int) -> int:
        start.wait()
        return sum(sum(kinds.values()) for kinds in store.counts().values())

    with ThreadPoolExecutor(max_workers=12) as pool:
        assert list(pool.map(call, range(12))) == [20] * 12
    assert 1 <= _connections(postgres_url) <= 3
    store.close()
    assert _connections(postgres_url) == 0


def test_a_call_that_finds_no_free_connection_fails_within_the_deadline_naming_the_pool(postgres_url: str) -> None:
    store = PostgresStore(postgres_url, deadline_seconds=1.0, pool_size=1)
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with store._connection():
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        started = time.monotonic()
        with pytest.raises(BackendUnavailable, match=r"no connection of its pool \(1\) was free within 1 s"):
            store.counts()
        assert 0.9 <= time.monotonic() - started < 5
    finally:
        release.set()
        holder.join(10)
    assert store.count_kind("m", "doc_chunk") == 0  # the connection is back in the pool
    store.close()


def test_a_nested_call_on_one_thread_reuses_its_connection(postgres_url: str) -> None:
    store = PostgresStore(postgres_url, deadline_seconds=1.0, pool_size=1)
    store.upsert_records([_record("a.md", "ledger upload")])
    with store._connection() as conn:
        assert store.known_ids([_record("a.md", "ledger upload").id])  # would wait for itself otherwise
        assert conn.execute("SELECT count(*) FROM records").fetchone() == (1,)
    store.close()


def test_bm25_reads_a_terms_postings_by_an_index_only_scan(postgres_url: str) -> None:
    """Each posting carries what the ranking reads (frequency, token count, layer) in the index, so
    a term's postings are read from the index and not from heap rows spread over the table."""
    store = PostgresStore(postgres_url)
    store.upsert_records([_record(f"r{i}.md", f"ledger upload {i}", mission="m") for i in range(50)])
    with store._connection() as conn:
        conn.execute("VACUUM ANALYZE postings")
        with conn.transaction():
            conn.execute("SET LOCAL enable_seqscan = off")
            conn.execute("SET LOCAL enable_bitmapscan = off")
            plan = " ".join(row[0] for row in conn.execute(
                "EXPLAIN SELECT seq, freq, tokens, layer FROM postings WHERE term = 'ledger' AND mission = 'm'"))
    assert "Index Only Scan" in plan, plan
    store.close()
