"""The PostgreSQL backend beyond the contract: settings, status, moving a memory, the HNSW plan, extras.

Every test runs against the real server of the ``postgres_server`` fixture (tests/postgres_server.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from mission_memory.cli.app import app
from mission_memory.errors import BackendUnavailable, ConfigError
from mission_memory.records import Layer, RecordKind
from mission_memory.stores.base import SearchFilter
from mission_memory.stores.postgres import PostgresStore
from mission_memory.stores.registry import open_store
from mission_memory.stores.sqlite import SqliteStore
from mission_memory.stores.transfer import export_memory, import_memory
from tests.stores.contract.test_store_contract import _record, _unit
from tests.stores.test_memory_transfer import _filled, _snapshot

runner = CliRunner()


def test_a_password_in_the_url_is_refused_and_a_missing_database_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="must not hold a password; set MISSION_MEMORY_POSTGRES_PASSWORD"):
        open_store("postgresql://mission:hunter2@127.0.0.1:5432/memory", tmp_path)
    with pytest.raises(ConfigError, match="names no database"):
        open_store("postgresql://mission@127.0.0.1:5432", tmp_path)


def test_an_unreachable_server_is_backend_unavailable_naming_host_port_and_database(tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(BackendUnavailable, match=r"PostgreSQL at 127\.0\.0\.1:1/memory cannot be reached"):
        open_store("postgresql://mission@127.0.0.1:1/memory", tmp_path)
    assert time.monotonic() - started < 10


def test_status_names_the_backend_and_host_port_database_and_never_the_password(
    postgres_url: str, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MISSION_MEMORY_STORE", postgres_url)
    monkeypatch.setenv("MISSION_MEMORY_POSTGRES_PASSWORD", "s3cret-never-shown")
    shown = runner.invoke(app, ["status", "--json"])
    assert shown.exit_code == 0, shown.output
    status = json.loads(shown.stdout)
    where = postgres_url.split("@", 1)[1]  # host:port/database
    assert (status["backend"], status["database"], status["store"]) == ("postgres", where, f"postgres ({where})")
    assert "s3cret" not in shown.output
    plain = runner.invoke(app, ["status"])
    assert f"postgres ({where})" in plain.stdout and "s3cret" not in plain.output


def test_a_memory_goes_from_sqlite_to_postgres_to_qdrant_and_back_unchanged(tmp_path: Path, postgres_url: str) -> None:
    source = SqliteStore(tmp_path / "a.db")
    _filled(source)
    expected = _snapshot(source)
    stores = [source]
    path = tmp_path / "0.jsonl"
    with path.open("w", encoding="utf-8") as out:
        export_memory(source, out)
    for n, spec in enumerate([postgres_url, f"qdrant+path://{tmp_path / 'q'}", "sqlite"], start=1):
        target = open_store(spec, tmp_path / f"data{n}")
        stores.append(target)
        report = import_memory(target, path)
        assert (report.records, report.vectors, report.events, report.state) == (11, 10, 3, 2), spec
        assert _snapshot(target) == expected, spec  # vectors bit for bit, events with their ids and times
        path = tmp_path / f"{n}.jsonl"
        with path.open("w", encoding="utf-8") as out:
            export_memory(target, out)
    again = import_memory(stores[1], tmp_path / "3.jsonl")  # idempotent on postgres too
    assert (again.added, again.events_added) == (0, 0)
    for store in stores:
        store.close()


def test_a_large_mission_is_searched_through_its_own_hnsw_index_with_the_exact_results(postgres_url: str) -> None:
    """docs/adr/0084: a mission of hnsw_min_rows vectors or more gets a partial HNSW index; a small one does not."""
    store = PostgresStore(postgres_url, hnsw_min_rows=300)
    big = [_record(f"b{i}.md", f"big {i}", mission="big",
                   kind=RecordKind.DECISION if i % 10 == 0 else RecordKind.DOC_CHUNK) for i in range(400)]
    small = [_record(f"s{i}.md", f"small {i}", mission="small") for i in range(50)]
    vectors = _unit(450, dim=16, seed=5)
    store.upsert(big[:200], vectors[:200], "model-a")
    with store._connection() as conn:
        assert store.vectors.indexed(conn) == []  # 200 < 300: exact scan only
    store.upsert(big[200:] + small, vectors[200:], "model-a")
    assert store.wait_for_index_builds(timeout=60)  # built after the write (tests/stores/test_postgres_hnsw_build.py)
    assert store._rows("SELECT model_id, mission FROM vector_indexes") == [("model-a", "big")]
    with store._connection() as conn:
        for q in range(5):
            query = _unit(1, dim=16, seed=100 + q)[0]
            for per_kind in (False, True):
                where = SearchFilter((Layer.DOMAIN, Layer.WORKFLOW), mission="big")
                through_index = store.dense_search_by_layer(query, "model-a", where, 10, per_kind=per_kind)
                exact = store.vectors.exact(conn, query, "model-a", "r.mission = %s AND r.layer = ANY(%s)",
                                            ["big", ["domain", "workflow"]], 10, per_kind)
                for layer, hits in through_index.items():
                    wanted = sorted((s, rid) for rid, lay, _, s in exact if lay == layer.value)
                    assert [h.record_id for h in hits] == [rid for _, rid in sorted(wanted, key=lambda w: -w[0])]
        plan = conn.execute(
            "EXPLAIN SELECT seq FROM vectors WHERE model_id = 'model-a' AND mission = 'big'"
            " ORDER BY embedding::vector(16) <#> %s::vector(16) LIMIT 10", (str(query.tolist()),)).fetchall()
        assert "vectors_hnsw_" in " ".join(row[0] for row in plan)
        assert store.delete_vectors_not_of("model-b") == 450
        assert store.vectors.indexed(conn) == []
    store.close()


@pytest.mark.parametrize(("blocked", "spec", "extra"), [
    ("psycopg", "postgresql://mission@127.0.0.1:5432/memory", "postgres"),
    ("qdrant_client", "qdrant+memory:", "qdrant"),
])
def test_a_backend_whose_extra_is_not_installed_names_the_command_that_installs_it(
    blocked: str, spec: str, extra: str, tmp_path: Path
) -> None:
    # The package is made unimportable in a child process, as in an install without the extra.
    code = (f"import sys; sys.modules[{blocked!r}] = None\n"
            "from mission_memory.cli.app import main\nsys.argv = ['mission-memory', 'status']\nmain()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "MISSION_MEMORY_STORE": spec, "MISSION_MEMORY_DATA_DIR": str(tmp_path)})
    assert done.returncode == 1
    assert f"pip install 'mission-memory[{extra}]'" in done.stderr and "Traceback" not in done.stderr


def test_the_embedded_default_needs_neither_server_client(tmp_path: Path) -> None:
    code = ("import sys\nfor name in ('qdrant_client', 'psycopg', 'pgvector'): sys.modules[name] = None\n"
            "from mission_memory.cli.app import main\nsys.argv = ['mission-memory', 'status', '--json']\nmain()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "MISSION_MEMORY_STORE": "sqlite", "MISSION_MEMORY_DATA_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["backend"] == "sqlite"


def test_vectors_are_stored_bit_for_bit(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    record = _record("a.md", "alpha")
    vector = np.array([[np.nextafter(np.float32(0.1), np.float32(1)), 1e-38, -3.4e38, 0.0]], dtype=np.float32)
    store.upsert([record], vector, "model-a")
    assert store.vectors_for([record.id], "model-a")[record.id].tobytes() == vector[0].tobytes()
    store.close()


def test_bm25_gives_the_sqlite_stores_hits_order_and_scores_after_replacements_and_deletes(
    postgres_url: str, tmp_path: Path
) -> None:
    """BM25's statistics (N, Σ|d|, n) follow every write path: add, replace, delete, delete_missing."""
    words = ["upload", "proxy", "retries", "ledger", "archive", "signing", "key", "rotation", "queue", "backoff"]
    rng = np.random.default_rng(4)
    records = [_record(f"r{i}.md", " ".join(rng.choice(words, size=int(rng.integers(3, 40)))),
                       kind=[RecordKind.DOC_CHUNK, RecordKind.DECISION, RecordKind.COMMIT][i % 3],
                       mission="n" if i % 5 == 0 else "m") for i in range(60)]
    stores = [SqliteStore(tmp_path / "a.db"), PostgresStore(postgres_url)]
    for store in stores:
        store.upsert_records(records)
        store.upsert_records([_record("r3.md", "upload upload ledger replaced"), _record("r4.md", "key rotation")])
        store.delete([records[7].id, records[8].id])
        store.delete_missing("m", ["commit"], [r.source_key for r in records[:30]])
    every = SearchFilter(tuple(Layer))
    for terms in (["upload"], ["ledger", "key"], ["archive", "signing", "queue"], ["backoff", "proxy", "upload"]):
        for where in (every, SearchFilter((Layer.WORKFLOW,), min_criticality=0.1), SearchFilter(tuple(Layer), mission="m"),
                      SearchFilter((Layer.DOMAIN, Layer.WORKFLOW), mission="m"), SearchFilter(tuple(Layer), mission="n")):
            sqlite_hits, postgres_hits = (store.bm25_search(terms, where, 15) for store in stores)
            assert [h.record_id for h in postgres_hits] == [h.record_id for h in sqlite_hits], terms
            assert [h.score for h in postgres_hits] == pytest.approx([h.score for h in sqlite_hits], rel=1e-12)
    assert stores[1].phrase_search(["key rotation"], every, 5) == stores[0].phrase_search(["key rotation"], every, 5)
    for store in stores:
        store.close()


def test_a_database_of_an_earlier_schema_is_migrated_once_when_opened(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    kept = [_record("a.md", "ledger upload", mission="m"), _record("b.md", "ledger archive", mission="n")]
    store.upsert_records(kept)
    store._run("ALTER TABLE postings DROP COLUMN mission, DROP COLUMN layer")  # as 0001_initial left it
    store._run("ALTER TABLE postings ADD PRIMARY KEY (term, seq)")
    store._run("DELETE FROM schema_migrations WHERE name IN ('0002_postings_scope', '0004_postings_covering_key')")
    store.close()
    reopened = PostgresStore(postgres_url)
    assert {h.record_id for h in reopened.bm25_search(["ledger"], SearchFilter(tuple(Layer), mission="n"), 5)} == {
        kept[1].id}
    names = [row[0] for row in reopened._rows("SELECT name FROM schema_migrations ORDER BY name")]
    assert names == ["0001_initial", "0002_postings_scope", "0003_event_kind_key", "0004_postings_covering_key",
                     "0005_vector_halves"]
    assert "(term, mission, seq) INCLUDE (freq, tokens, layer)" in reopened._row(
        "SELECT pg_get_indexdef('postings_pkey'::regclass)")[0]
    reopened.close()


def test_a_missions_exact_search_ranks_a_halfvec_copy_and_rescores_its_best_rows_in_float32(postgres_url: str) -> None:
    """docs/adr/0084: the halfvec copy is kept by the write that stores the float32 vector (replaced and
    deleted with it); a mission-scoped search ranks it with a bounded top-k per group, then rescores the
    best rows exactly, so hits and scores are the float32 scan's."""
    store = PostgresStore(postgres_url, hnsw_min_rows=10**9)
    records = [_record(f"h{i}.md", f"half {i}", mission="m",
                       kind=RecordKind.DECISION if i % 3 == 0 else RecordKind.DOC_CHUNK) for i in range(600)]
    vectors = _unit(600, dim=16, seed=9)
    store.upsert(records, vectors, "model-a")
    store.put_vectors([r.id for r in records[:50]], _unit(50, dim=16, seed=10), "model-a")
    mismatched = store._row("SELECT count(*) FROM vectors v FULL JOIN vector_halves h ON h.seq = v.seq"
                            " WHERE h.seq IS NULL OR v.seq IS NULL OR h.half <> v.embedding::halfvec"
                            " OR (h.model_id, h.mission, h.layer, h.kind) <> (v.model_id, v.mission, v.layer, v.kind)")
    assert mismatched == (0,) and store._row("SELECT count(*) FROM vector_halves") == (600,)
    with store._connection() as conn:
        for q in range(4):
            query = _unit(1, dim=16, seed=200 + q)[0]
            for per_kind in (False, True):
                where = SearchFilter(tuple(Layer), mission="m")
                got = store.dense_search_by_layer(query, "model-a", where, 5, per_kind=per_kind)
                exact = store.vectors.exact(conn, query, "model-a", "r.mission = %s", ["m"], 5, per_kind)
                assert sorted((h.record_id, h.score) for hits in got.values() for h in hits) == sorted(
                    (rid, score) for rid, _, _, score in exact)
        plan = " ".join(row[0] for row in conn.execute("EXPLAIN " + store.vectors.first_pass_sql(per_kind=True), (
            "[" + ",".join(["0"] * 16) + "]", ["domain"], ["decision"], "model-a", "m", "[" + ",".join(["0"] * 16) + "]",
            120, 5)).fetchall())
        assert "vector_halves_scope" in plan
    assert store.delete_vectors_not_of("model-b") == 600
    assert store._row("SELECT count(*) FROM vector_halves") == (0,)
    store.close()
