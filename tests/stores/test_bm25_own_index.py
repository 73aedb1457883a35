"""BM25 from the store's own inverted index equals FTS5's ranking: same rows, order and scores (ADR 0048).

Every comparison reads one state of the database: the index path and the FTS5 path run in one read
transaction on the same connection (``SqliteStore`` joins a transaction its connection is in).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mission_memory.records import Layer, Provenance, Record, RecordKind, SourceKind
from mission_memory.stores.base import Hit, SearchFilter
from mission_memory.stores.sqlite import SqliteStore
from mission_memory.stores.sqlite_bm25_index import Bm25Index
from mission_memory.stores.sqlite_fts_terms import fts_totals

ENGLISH = (
    "proxy upload bucket queue scan keycloak export metadata checksum lambda cluster deploy rollback"
    " migration schema token cache latency router planner tool agent memory index files"
).split()
UKRAINIAN = (
    "кластер розгортання відкат міграція схема токен кеш затримка маршрутизатор планувальник"
    " інструмент агент пам'ять індекс файли сховище черга"
).split()
VOCABULARY = ENGLISH + UKRAINIAN
KINDS = (RecordKind.COMMIT, RecordKind.DOC_CHUNK, RecordKind.DECISION)
NEVER = 10**12  # bm25_index_min_rows that keeps a store on FTS5


def _record(rng: np.random.Generator, i: int, mission: str = "m", tag: str = "") -> Record:
    pool = ENGLISH if i % 3 else UKRAINIAN
    title = " ".join(str(w) for w in rng.choice(pool, size=int(rng.integers(0, 4))))
    body = " ".join(str(w) for w in rng.choice(VOCABULARY, size=int(rng.integers(0, 40))))
    return Record.build(
        kind=KINDS[i % len(KINDS)],
        title=f"{title} {tag}".strip(),
        text=f"{body}. Files: src/file{i % 7}.py",
        provenance=Provenance(kind=SourceKind.DOC, ref=f"r{i}", uri=f"file:///r{i}", mission=mission,
                              time=datetime(2025, 1, 1, tzinfo=UTC)),
        component="api" if i % 11 == 0 else "web",
    )


def _records(n: int, seed: int, start: int = 0, tag: str = "") -> list[Record]:
    rng = np.random.default_rng(seed)
    return [_record(rng, i, mission="m" if i % 4 else "other", tag=tag) for i in range(start, start + n)]


def _index_store(path: Path) -> SqliteStore:
    return SqliteStore(path, bm25_index_min_rows=0)


@contextmanager
def _one_state(store: SqliteStore) -> Iterator[None]:
    conn = store._conn()
    conn.execute("BEGIN")
    try:
        yield
    finally:
        conn.execute("COMMIT")


def _fts5_ranking(store: SqliteStore, terms: list[str]) -> list[tuple[int, float]]:
    """Every matching row, ``(rowid, bm25)``, by FTS5 itself, ordered as ``_bm25_ranked`` orders ties."""
    match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
    rows: list[tuple[int, float]] = store._conn().execute(
        "SELECT rowid, bm25(records_fts, 2.0, 1.0) AS s FROM records_fts WHERE records_fts MATCH ?"
        " ORDER BY s, rowid", (match,),
    ).fetchall()
    return rows


def _both_paths(
    store: SqliteStore, terms: list[str], where: SearchFilter, limit: int
) -> tuple[dict[Layer, list[Hit]], dict[Layer, list[Hit]]]:
    """``bm25_search_by_layer`` through the index and through FTS5, in one state of the database."""
    with _one_state(store):
        own = store.bm25_search_by_layer(terms, where, limit)
        kept = store.bm25_index.min_rows
        store.bm25_index.min_rows = NEVER
        try:
            fts5 = store.bm25_search_by_layer(terms, where, limit)
        finally:
            store.bm25_index.min_rows = kept
    return own, fts5


def _assert_same(own: dict[Layer, list[Hit]], fts5: dict[Layer, list[Hit]]) -> None:
    assert own.keys() == fts5.keys()
    for layer in own:
        assert [h.record_id for h in own[layer]] == [h.record_id for h in fts5[layer]]
        assert [h.score for h in own[layer]] == pytest.approx([h.score for h in fts5[layer]], rel=1e-9)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> SqliteStore:
    store = _index_store(tmp_path_factory.mktemp("own-bm25") / "m.db")
    store.upsert_records(_records(1500, seed=3))
    return store


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(terms=st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=6))
def test_every_matching_row_has_fts5s_score_to_the_last_bit(store: SqliteStore, terms: list[str]) -> None:
    conn = store._conn()
    with _one_state(store):
        plan = store._term_stats.plan(conn, terms, 1.0)
        view = store.bm25_index.view(conn, plan.totals)
        assert view is not None
        score = view.scores([ts[0] for ts in plan.tokens], [d[0] for d in plan.docs], plan.totals)
        assert view.best(score, 10**9) == _fts5_ranking(store, terms)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    terms=st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=5),
    layers=st.sets(st.sampled_from(list(Layer)), min_size=1).map(lambda s: tuple(sorted(s))),
    component=st.sampled_from([None, "api", "web"]),
    mission=st.sampled_from([None, "m", "other"]),
    limit=st.sampled_from([1, 5, 30]),
    common_share=st.sampled_from([0.5, 1.0]),
)
def test_the_index_path_returns_the_fts5_paths_hits(
    store: SqliteStore, terms: list[str], layers: tuple[Layer, ...], component: str | None,
    mission: str | None, limit: int, common_share: float,
) -> None:
    values = {k: v for k, v in (("component", component), ("mission", mission)) if v is not None}
    store.bm25_common_share = common_share
    try:
        own, fts5 = _both_paths(store, terms, SearchFilter(layers=layers, **values), limit)
    finally:
        store.bm25_common_share = 0.5
    _assert_same(own, fts5)


def test_deletes_replacements_and_a_tail_keep_the_ranking_exact(tmp_path: Path) -> None:
    store = _index_store(tmp_path / "m.db")
    records = _records(1200, seed=5)
    store.upsert_records(records)
    terms = ["proxy", "кластер", "checksum", "files"]
    everything = SearchFilter(layers=tuple(Layer))
    _assert_same(*_both_paths(store, terms, everything, 20))
    assert store.bm25_index.builds == 1
    # Replacements (same source key, new text: the old row is deleted, a new row id is added),
    # plain deletes of the best rows, and new rows after the index.
    best = [h.record_id for h in store.bm25_search(terms, everything, 10)]
    store.delete(best[:5])
    replaced = _records(40, seed=6, tag="proxy proxy")  # the same refs: replace those records
    store.upsert_records(replaced)
    store.upsert_records(_records(30, seed=7, start=5000, tag="checksum"))
    for where in (everything, SearchFilter(layers=(Layer.WORKFLOW,), component="api")):
        own, fts5 = _both_paths(store, terms, where, 20)
        _assert_same(own, fts5)
        found = {h.record_id for hits in own.values() for h in hits}
        assert not found & set(best[:5])
    conn = store._conn()
    with _one_state(store):
        totals = fts_totals(conn)
        view = store.bm25_index.view(conn, totals)
        totals = fts_totals(conn)
        assert view is not None and view.tail == 70 and view.deleted.size == 1200 + 70 - totals.rows >= 40
    assert store.bm25_index.builds == 1  # exact without a rebuild


def test_a_large_tail_extends_the_index_and_many_deletes_rebuild_it(tmp_path: Path) -> None:
    store = _index_store(tmp_path / "m.db")
    store.bm25_index.rebuild_min_rows = 50
    store.upsert_records(_records(300, seed=8))
    everything = SearchFilter(layers=tuple(Layer))
    _assert_same(*_both_paths(store, ["proxy"], everything, 10))
    store.delete([r.id for r in _records(300, seed=8)[:20]])  # deleted rows stay in the index, masked
    store.upsert_records(_records(120, seed=9, start=1000, tag="новинка"))  # a new token; more than 50 rows after the index
    for terms in (["proxy", "schema"], ["новинка", "кеш"], ["files"]):
        _assert_same(*_both_paths(store, terms, everything, 10))
        _assert_same(*_both_paths(store, terms, SearchFilter(layers=(Layer.WORKFLOW,), component="api"), 10))
    assert (store.bm25_index.builds, store.bm25_index.extensions) == (1, 1)
    conn = store._conn()
    with _one_state(store):
        view = store.bm25_index.view(conn, fts_totals(conn))
        assert view is not None and view.tail == 0 and view.deleted.size == 20 and view.index.rows == 420
    # The extended index is the one a new build would give, less the deleted rows.
    with _one_state(store):
        built = Bm25Index.build(conn)
    assert sorted(view.index.tokens) == built.tokens and "новинка" in built.terms
    for token in built.tokens:
        positions, freqs = view.index.postings(token)
        live = ~np.isin(positions, view.deleted)
        rebuilt_positions, rebuilt_freqs = built.postings(token)
        assert view.index.rowids[positions[live]].tolist() == built.rowids[rebuilt_positions].tolist()
        assert freqs[live].tolist() == rebuilt_freqs.tolist()
    alive = ~np.isin(np.arange(view.index.rows), view.deleted)
    assert view.index.lengths[alive].tolist() == built.lengths.tolist()
    store.delete([r.id for r in _records(300, seed=8)[20:100]])  # 100 deleted rows > 50: rebuild
    _assert_same(*_both_paths(store, ["proxy", "schema"], everything, 10))
    assert (store.bm25_index.builds, store.bm25_index.extensions) == (2, 1)


def test_a_term_of_several_tokens_falls_back_to_fts5(store: SqliteStore) -> None:
    terms = ["keycloak-export", "proxy"]  # the first is the phrase "keycloak export"
    _assert_same(*_both_paths(store, terms, SearchFilter(layers=tuple(Layer)), 10))


def test_a_new_process_reads_the_snapshot_and_a_damaged_one_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = _index_store(path)
    store.upsert_records(_records(800, seed=10))
    terms = ["cache", "міграція", "router"]
    expected = [(h.record_id, h.score) for h in store.bm25_search(terms, SearchFilter(layers=tuple(Layer)), 15)]
    assert store.bm25_index.snapshot_path.exists()
    assert _in_new_process(path, terms) == {"builds": 0, "hits": expected}
    snapshot = store.bm25_index.snapshot_path
    data = bytearray(snapshot.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte in the arrays
    snapshot.write_bytes(bytes(data))
    assert Bm25Index.load(snapshot) is None
    assert _in_new_process(path, terms) == {"builds": 1, "hits": expected}
    assert Bm25Index.load(snapshot) is not None  # rebuilt and saved
    snapshot.write_bytes(snapshot.read_bytes()[: snapshot.stat().st_size // 3])  # a partial file
    assert Bm25Index.load(snapshot) is None
    assert _in_new_process(path, terms) == {"builds": 1, "hits": expected}


def test_a_snapshot_of_another_database_is_not_trusted(tmp_path: Path) -> None:
    first = _index_store(tmp_path / "a" / "m.db")
    first.upsert_records(_records(300, seed=11))
    first.bm25_search(["proxy"], SearchFilter(layers=tuple(Layer)), 5)
    second = _index_store(tmp_path / "b" / "m.db")
    second.upsert_records(_records(300, seed=12))
    second.bm25_index.snapshot_path.parent.mkdir(parents=True)
    second.bm25_index.snapshot_path.write_bytes(first.bm25_index.snapshot_path.read_bytes())
    _assert_same(*_both_paths(second, ["proxy", "cache"], SearchFilter(layers=tuple(Layer)), 10))
    assert second.bm25_index.builds == 1


def test_rankings_stay_fts5s_while_another_process_writes(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = _index_store(path)
    store.upsert_records(_records(600, seed=13))
    store.bm25_search(["proxy"], SearchFilter(layers=tuple(Layer)), 5)  # the index, before the writer starts
    writer = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from pathlib import Path
        from test_bm25_own_index import _records
        from mission_memory.stores.sqlite import SqliteStore
        store = SqliteStore(Path({str(path)!r}))
        for batch in range(40):
            store.upsert_records(_records(25, seed=100 + batch, start=10_000 + 25 * batch, tag="proxy"))
            oldest = store._conn().execute("SELECT id FROM records ORDER BY rowid LIMIT 3").fetchall()
            store.delete([rid for (rid,) in oldest])
        print("done")
    """)], stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    rounds = 0
    try:
        while writer.poll() is None or rounds < 3:
            for where in (SearchFilter(layers=tuple(Layer)), SearchFilter(layers=(Layer.WORKFLOW,), component="api")):
                _assert_same(*_both_paths(store, ["proxy", "queue", "кеш"], where, 20))
            rounds += 1
    finally:
        out, _ = writer.communicate(timeout=120)
    assert writer.returncode == 0 and out.strip() == "done"
    assert rounds >= 3
    with _one_state(store):
        assert store._conn().execute("SELECT count(*) FROM records WHERE rowid > 600").fetchone()[0] == 1000


def _in_new_process(path: Path, terms: list[str]) -> dict[str, object]:
    script = textwrap.dedent(f"""
        import json
        from pathlib import Path
        from mission_memory.records import Layer
        from mission_memory.stores.base import SearchFilter
        from mission_memory.stores.sqlite import SqliteStore
        store = SqliteStore(Path({str(path)!r}), bm25_index_min_rows=0)
        hits = store.bm25_search({terms!r}, SearchFilter(layers=tuple(Layer)), 15)
        print(json.dumps({{"builds": store.bm25_index.builds, "hits": [[h.record_id, h.score] for h in hits]}}))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    result: dict[str, object] = json.loads(out.stdout)
    result["hits"] = [tuple(hit) for hit in result["hits"]]  # type: ignore[union-attr]
    return result


def test_the_averages_record_is_fts5s_row_count_and_token_total(store: SqliteStore) -> None:
    conn = store._conn()
    totals = fts_totals(conn)
    assert totals.rows == conn.execute("SELECT count(*) FROM records").fetchone()[0]
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.t_instances USING fts5vocab(main, records_fts, instance)")
    assert totals.tokens == conn.execute("SELECT count(*) FROM temp.t_instances").fetchone()[0]
    assert isinstance(conn, sqlite3.Connection)


def _same_text(i: int, text: str) -> Record:
    return Record.build(
        kind=RecordKind.COMMIT, title="tied", text=text,
        provenance=Provenance(kind=SourceKind.DOC, ref=f"tie{i}", uri=f"file:///tie{i}", mission="m",
                              time=datetime(2025, 1, 1, tzinfo=UTC)),
    )


def test_equal_scores_before_and_after_the_index_are_ordered_by_row_id(tmp_path: Path) -> None:
    store = _index_store(tmp_path / "m.db")
    store.upsert_records(_records(300, seed=14))
    store.upsert_records([_same_text(i, "zebra crossing") for i in range(6)])
    store.bm25_search(["zebra"], SearchFilter(layers=tuple(Layer)), 5)  # the index covers these six
    store.upsert_records([_same_text(i, "zebra crossing") for i in range(6, 12)])  # six more, after it
    for limit in (3, 6, 8, 12):
        own, fts5 = _both_paths(store, ["zebra"], SearchFilter(layers=tuple(Layer)), limit)
        _assert_same(own, fts5)
    conn = store._conn()
    with _one_state(store):
        ranking = _fts5_ranking(store, ["zebra"])
        assert len({s for _, s in ranking}) == 1 and len(ranking) == 12
        own_ids = [h.record_id for h in store.bm25_search(["zebra"], SearchFilter(layers=tuple(Layer)), 8)]
        rowid_of = dict(conn.execute("SELECT id, rowid FROM records WHERE title = 'tied'").fetchall())
        assert [rowid_of[r] for r in own_ids] == [r for r, _ in ranking[:8]]


def test_a_term_frequency_above_uint16_is_kept_exactly(tmp_path: Path) -> None:
    store = _index_store(tmp_path / "m.db")
    store.upsert_records(_records(200, seed=15))
    store.upsert_records([_same_text(0, "proxy " * 70_000)])
    _assert_same(*_both_paths(store, ["proxy", "cache"], SearchFilter(layers=tuple(Layer)), 10))
    conn = store._conn()
    with _one_state(store):
        view = store.bm25_index.view(conn, fts_totals(conn))
        assert view is not None and view.index.freqs.dtype == np.uint32


@pytest.mark.parametrize("seed", [21, 22, 23])
def test_random_writes_deletes_and_replacements_between_queries(tmp_path: Path, seed: int) -> None:
    """Extensions, rebuilds, masked deletes and tails in a random order: every query stays FTS5's."""
    store = _index_store(tmp_path / "m.db")
    store.bm25_index.rebuild_min_rows = 40
    rng = np.random.default_rng(seed)
    store.upsert_records(_records(200, seed=seed))
    next_ref = 200
    for step in range(12):
        action = int(rng.integers(3))
        if action == 0:  # new records
            n = int(rng.integers(5, 80))
            store.upsert_records(_records(n, seed=seed * 100 + step, start=next_ref))
            next_ref += n
        elif action == 1:  # delete some of the stored records
            ids = [r for (r,) in store._conn().execute("SELECT id FROM records ORDER BY random() LIMIT ?",
                                                        (int(rng.integers(1, 30)),))]
            store.delete(ids)
        else:  # replace some (same source keys, new text)
            start = int(rng.integers(0, max(next_ref - 30, 1)))
            store.upsert_records(_records(int(rng.integers(1, 30)), seed=seed * 1000 + step, start=start, tag="new"))
        terms = [str(t) for t in rng.choice(VOCABULARY, size=int(rng.integers(1, 5)))]
        for where in (SearchFilter(layers=tuple(Layer)), SearchFilter(layers=(Layer.WORKFLOW,), component="api")):
            _assert_same(*_both_paths(store, terms, where, int(rng.choice([5, 30]))))
    assert store.bm25_index.builds + store.bm25_index.extensions >= 2  # the index changed on the way


def test_a_reader_never_maps_a_torn_snapshot_while_another_process_rewrites_it(tmp_path: Path) -> None:
    store = _index_store(tmp_path / "m.db")
    store.upsert_records(_records(400, seed=30))
    conn = store._conn()
    with _one_state(store):
        small = Bm25Index.build(conn)
    store.upsert_records(_records(400, seed=31, start=1000))
    with _one_state(store):
        large = Bm25Index.build(conn)
    small.save(tmp_path / "small.mmbm25")
    large.save(tmp_path / "large.mmbm25")
    target = tmp_path / "live" / "index-v1.mmbm25"
    small.save(target)
    writer = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        from pathlib import Path
        from mission_memory.stores.sqlite_bm25_index import Bm25Index
        versions = [Bm25Index.load(Path({str(tmp_path / "small.mmbm25")!r})),
                    Bm25Index.load(Path({str(tmp_path / "large.mmbm25")!r}))]
        for i in range(150):
            versions[i % 2].save(Path({str(target)!r}))
        print("done")
    """)], stdout=subprocess.PIPE, text=True)
    loads = 0
    try:
        while writer.poll() is None or loads < 20:
            index = Bm25Index.load(target)
            assert index is not None  # the old file or the new one, never a partial one
            assert index.max_rowid in (small.max_rowid, large.max_rowid)
            expected = small if index.max_rowid == small.max_rowid else large
            assert index.positions.size == expected.positions.size and index.tokens == expected.tokens
            loads += 1
    finally:
        out, _ = writer.communicate(timeout=120)
    assert out.strip() == "done"
    assert not list(target.parent.glob(".*.tmp"))  # no temporary file left behind


@pytest.mark.parametrize("content", [
    b"",
    b"MMBM25\x00\x01",
    b"MMBM25\x00\x01" + (2).to_bytes(8, "little") + b"[]",
    b"MMBM25\x00\x01" + (10**9).to_bytes(8, "little") + b"{}",
    b"NOTBM25\x00" + (2).to_bytes(8, "little") + b"{}" + b"\x00" * 100,
])
def test_a_snapshot_that_is_not_one_of_ours_is_ignored(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "index-v1.mmbm25"
    path.write_bytes(content)
    assert Bm25Index.load(path) is None
