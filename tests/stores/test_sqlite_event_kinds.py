"""The SQLite store's per-minute kind summary (stores/sqlite_event_kinds.py, docs/adr/0095) answers exactly
what a fold over every stored event answers, after inserts, re-sends that move an event, and deletions,
for windows whose bounds fall anywhere in a minute."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mission_memory.records import Layer, Provenance, Record, RecordKind, SourceKind
from mission_memory.stores.base import EventKind, sort_event_kinds
from mission_memory.stores.filters import SearchFilter, filter_columns, matches
from mission_memory.stores.sqlite import SqliteStore
from tests.schema_rollback import undo_kind_summaries

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

_event = st.tuples(
    st.integers(0, 11),                      # ref slot: a later write of a slot replaces the earlier (re-send)
    st.sampled_from(["k-a", "k-b", None]),   # kind key (None: a kind of its own)
    st.sampled_from([0.5, 0.8, 0.95]),
    st.one_of(st.integers(-40, 40), st.integers(-200, 200)),  # 0.7 s steps from T0: seconds shared, minutes crossed
    st.sampled_from(["north", "south", None]),
)


def _record(slot: int, key: str | None, crit: float, tenths: int, sector: str | None) -> Record:
    return Record.build(
        kind=RecordKind.DOMAIN_EVENT, title=f"e{slot}", text=f"event e{slot} at {tenths}", criticality=crit, component=sector,
        provenance=Provenance(kind=SourceKind.EVENT, ref=f"event:e{slot}", uri=f"urn:e{slot}", mission="m",
                              time=T0 + timedelta(seconds=tenths * 0.7)),
        attributes={"event_id": f"e{slot}", **({"kind_key": key} if key else {})})


def _expected(records: dict[str, Record], where: SearchFilter) -> list[EventKind]:
    out: dict[str, list[Record]] = {}
    for record in records.values():
        if matches(where, filter_columns(record)):
            key = record.attributes.get("kind_key") or f"record:{record.id}"
            out.setdefault(str(key), []).append(record)
    kinds = []
    for key, members in out.items():
        by_time = sorted(members, key=lambda r: (r.provenance.time, r.id))
        best = max(members, key=lambda r: (r.criticality, r.provenance.time, r.id))
        kinds.append(EventKind(key=key, count=len(members), first_seen=by_time[0].provenance.time,
                               last_seen=by_time[-1].provenance.time, max_criticality=best.criticality,
                               best_id=best.id, oldest_ref=by_time[0].provenance.ref, newest_ref=by_time[-1].provenance.ref))
    return sort_event_kinds(kinds)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    writes=st.lists(_event, min_size=1, max_size=25),
    deletions=st.sets(st.integers(0, 11), max_size=4),
    since=st.one_of(st.none(), st.integers(-35, 35), st.integers(-150, 150)),
    until=st.one_of(st.none(), st.integers(-35, 35), st.integers(-150, 150)),
    min_crit=st.sampled_from([None, 0.8]),
    sector=st.sampled_from([None, "north"]),
)
def test_the_summary_answers_as_a_fold_over_every_event(
    tmp_path: Path, writes: list[tuple[int, str | None, float, int, str | None]], deletions: set[int],
    since: int | None, until: int | None, min_crit: float | None, sector: str | None,
) -> None:
    path = tmp_path / f"s{abs(hash((tuple(writes), since, until, min_crit, sector))) % 10**9}"
    store = SqliteStore(path / "memory.db")
    try:
        kept: dict[str, Record] = {}
        for write in writes:
            record = _record(*write)
            store.upsert_records([record])
            kept = {k: r for k, r in kept.items() if r.provenance.ref != record.provenance.ref}
            kept[record.id] = record
        gone = [rid for rid, r in kept.items() if int(r.provenance.ref.removeprefix("event:e")) in deletions]
        store.delete(gone)
        for rid in gone:
            del kept[rid]
        values = {"mission": "m", "min_criticality": min_crit, "component": sector,
                  "since": T0 + timedelta(seconds=since * 0.9) if since is not None else None,
                  "until": T0 + timedelta(seconds=until * 0.9) if until is not None else None}
        where = SearchFilter((Layer.DOMAIN,), **{k: v for k, v in values.items() if v is not None})
        assert store.event_kinds(where) == _expected(kept, where)
        if since is not None and until is not None:
            after, through = T0 + timedelta(seconds=since * 0.9), T0 + timedelta(seconds=until * 0.9)
            counts: dict[str, int] = {}
            for r in kept.values():
                if after < r.provenance.time <= through:
                    counts[r.component or ""] = counts.get(r.component or "", 0) + 1
            assert store.count_by_component([RecordKind.DOMAIN_EVENT.value], mission="m", after=after,
                                            through=through) == counts
    finally:
        store.close()


def test_a_store_written_before_the_summary_is_summarised_by_its_migration(tmp_path: Path) -> None:
    """Migrations 0006 and 0007 summarise the events already stored, keyed or not; a later write adds to that."""
    path = tmp_path / "memory.db"
    store = SqliteStore(path)
    records = [_record(n, "k-a" if n % 3 else None, 0.8, n * 40, "north") for n in range(9)]
    store.upsert_records(records)
    store.close()
    conn = sqlite3.connect(path)  # back to schema 5: no summaries, no triggers
    with conn:
        undo_kind_summaries(conn)
    conn.close()
    store = SqliteStore(path)
    try:
        extra = _record(20, "k-a", 0.95, 100, "north")
        store.upsert_records([extra])
        kept = {r.id: r for r in [*records, extra]}
        for since in (30.0, 30.5, 84.1):  # a bound inside a minute, inside a second
            where = SearchFilter((Layer.DOMAIN,), mission="m", since=T0 + timedelta(seconds=since))
            assert store.event_kinds(where) == _expected(kept, where)
    finally:
        store.close()


def test_a_bound_inside_a_busy_second_reads_that_second_exactly(tmp_path: Path) -> None:
    """A flood's bound falls inside a second holding many events of one kind: the minute and the second
    straddle it, and only that second's events are read from the records, exactly."""
    store = SqliteStore(tmp_path / "memory.db")
    try:
        burst = [Record.build(kind=RecordKind.DOMAIN_EVENT, title=f"b{n}", text=f"retry {n}", criticality=0.8,
                              component="north",
                              provenance=Provenance(kind=SourceKind.EVENT, ref=f"event:b{n}", uri=f"urn:b{n}",
                                                    mission="m", time=T0 + timedelta(seconds=30 + n / 20)),
                              attributes={"event_id": f"b{n}", "kind_key": "k-loop"}) for n in range(60)]
        store.upsert_records(burst)
        kept = {r.id: r for r in burst}
        for since in (30.0, 30.52, 31.0, 31.97, 32.96):  # 20 events per second from 30 s to 32.95 s
            where = SearchFilter((Layer.DOMAIN,), mission="m", since=T0 + timedelta(seconds=since))
            assert store.event_kinds(where) == _expected(kept, where)
            until = SearchFilter((Layer.DOMAIN,), mission="m", until=T0 + timedelta(seconds=since))
            assert store.event_kinds(until) == _expected(kept, until)
            after = T0 + timedelta(seconds=since)
            assert store.count_by_component([RecordKind.DOMAIN_EVENT.value], mission="m", after=after,
                                            through=T0 + timedelta(minutes=2)) == (
                {"north": n} if (n := sum(1 for r in burst if r.provenance.time > after)) else {})
    finally:
        store.close()


def test_a_read_only_store_without_the_summaries_answers_from_its_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file of schema 5 that cannot be written (an archived mission) is not migrated: its kinds and
    sector counts are read from the records, with the same answer."""
    path = tmp_path / "memory.db"
    store = SqliteStore(path)
    records = [_record(n, "k-a" if n % 3 else None, 0.8, n * 40, "north") for n in range(9)]
    store.upsert_records(records)
    store.close()
    conn = sqlite3.connect(path)
    with conn:
        undo_kind_summaries(conn)
    conn.close()
    monkeypatch.setattr("mission_memory.stores.sqlite._is_read_only", lambda _path: True)
    store = SqliteStore(path)
    try:
        assert store.read_only
        where = SearchFilter((Layer.DOMAIN,), mission="m", since=T0 + timedelta(seconds=30))
        assert store.event_kinds(where) == _expected({r.id: r for r in records}, where)
        assert store.count_by_component([RecordKind.DOMAIN_EVENT.value], mission="m", after=T0,
                                        through=T0 + timedelta(minutes=10)) == {"north": 8}
    finally:
        store.close()
