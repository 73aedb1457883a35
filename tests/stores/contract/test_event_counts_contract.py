"""Store contract: counting records per component over a time window (the escalation rate, docs/design.md §7)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from mission_memory.records import Provenance, Record, RecordKind, SourceKind
from mission_memory.stores.base import MemoryStore

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _event(ref: str, when: datetime, component: str | None, mission: str = "m",
           kind: RecordKind = RecordKind.DOMAIN_EVENT) -> Record:
    return Record.build(
        kind=kind, title=ref, text=f"event {ref}",
        provenance=Provenance(kind=SourceKind.EVENT, ref=ref, uri=f"urn:{ref}", mission=mission, time=when),
        component=component,
    )


def test_count_by_component_counts_the_half_open_window_per_component(store: MemoryStore) -> None:
    store.upsert_records([
        _event("at-start", T0 - timedelta(minutes=10), "north"),      # excluded: the window opens after it
        _event("inside", T0 - timedelta(minutes=9), "north"),
        _event("at-end", T0, "south"),                                  # included: the window closes on it
        _event("later", T0 + timedelta(seconds=1), "south"),            # excluded
        _event("no-sector", T0 - timedelta(minutes=1), None),
        _event("other-mission", T0 - timedelta(minutes=1), "north", mission="x"),
        _event("a-doc", T0 - timedelta(minutes=1), "north", kind=RecordKind.DOC_CHUNK),
    ])
    counts = store.count_by_component(
        [RecordKind.DOMAIN_EVENT.value], mission="m", after=T0 - timedelta(minutes=10), through=T0
    )
    assert counts == {"north": 1, "south": 1, "": 1}
    every_mission = store.count_by_component(
        [RecordKind.DOMAIN_EVENT.value], after=T0 - timedelta(minutes=10), through=T0
    )
    assert every_mission == {"north": 2, "south": 1, "": 1}
    assert store.count_by_component([], after=T0, through=T0) == {}


def test_event_retention_rows_are_one_missions_events_before_the_cutoff_in_pages(store: MemoryStore) -> None:
    """What pruning reads (docs/adr/0058): record id, time, type, event id and state, without the records."""
    events = [
        Record.build(kind=RecordKind.DOMAIN_EVENT, title=f"e{n}", text=f"event e{n}",
                     provenance=Provenance(kind=SourceKind.EVENT, ref=f"event:e{n}", uri=f"urn:e{n}", mission="m",
                                           time=T0 - timedelta(minutes=n)),
                     attributes={"event_id": f"e{n}", "event_type": "Down" if n % 2 else "log",
                                 "state": "resolved" if n == 3 else "firing"})
        for n in range(1, 8)
    ]
    store.upsert_records([
        *events,
        _event("other-mission", T0 - timedelta(minutes=5), "north", mission="x"),
        _event("a-doc", T0 - timedelta(minutes=5), "north", kind=RecordKind.DOC_CHUNK),
    ])
    pages = list(store.event_retention_rows("m", T0 - timedelta(minutes=2), batch=2))
    rows = [row for page in pages for row in page]
    assert all(0 < len(page) <= 2 for page in pages)
    assert sorted(r.event_id for r in rows) == [f"e{n}" for n in range(3, 8)]  # e2 is at the cutoff: kept
    by_id = {r.event_id: r for r in rows}
    assert by_id["e3"].state == "resolved" and by_id["e3"].event_type == "Down"
    assert by_id["e4"].event_type == "log" and by_id["e4"].time == T0 - timedelta(minutes=4)
    assert {r.record_id for r in rows} == {e.id for e in events if e.provenance.time < T0 - timedelta(minutes=2)}


def test_event_kinds_are_exact_over_every_event_passing_the_filter(store: MemoryStore) -> None:
    """The window's kinds (docs/adr/0088): exact counts, first and last, the best event, the oldest and newest
    member; an event stored without a kind key is a kind of its own; the answer equals the fallback's."""
    from mission_memory.operations.event_groups import event_kinds
    from mission_memory.records import Layer
    from mission_memory.stores.base import EventKindIndex
    from mission_memory.stores.filters import SearchFilter

    def ev(n: int, key: str | None, crit: float, minutes: float, mission: str = "m") -> Record:
        return Record.build(
            kind=RecordKind.DOMAIN_EVENT, title=f"e{n}", text=f"event e{n}", criticality=crit,
            provenance=Provenance(kind=SourceKind.EVENT, ref=f"event:e{n}", uri=f"urn:e{n}", mission=mission,
                                  time=T0 - timedelta(minutes=minutes)),
            attributes={"event_id": f"e{n}", **({"kind_key": key} if key else {})})

    loop = [ev(n, "k-loop", 0.8, 30 - n * 0.1) for n in range(300)]
    records = [*loop, ev(900, "k-loop", 0.9, 40), ev(901, "k-disk", 0.95, 5), ev(902, None, 0.5, 1),
               ev(903, "k-disk", 0.95, 2), ev(904, "k-loop", 1.0, 1, mission="x")]
    store.upsert_records(records)
    where = SearchFilter((Layer.DOMAIN,), mission="m", since=T0 - timedelta(minutes=35))
    kinds = store.event_kinds(where) if isinstance(store, EventKindIndex) else event_kinds(store, where)
    assert [(k.key, k.count, k.max_criticality) for k in kinds] == [
        ("k-disk", 2, 0.95), ("k-loop", 300, 0.8), (f"record:{records[-3].id}", 1, 0.5)]
    disk, loop_kind, single = kinds
    assert disk.best_id == records[-2].id  # the most critical, newest among equals
    assert (disk.oldest_ref, disk.newest_ref) == ("event:e901", "event:e903")
    assert (loop_kind.first_seen, loop_kind.last_seen) == (T0 - timedelta(minutes=30), T0 - timedelta(minutes=30 - 299 * 0.1))
    assert (loop_kind.oldest_ref, loop_kind.newest_ref) == ("event:e0", "event:e299")
    assert loop_kind.best_id == loop[-1].id
    assert single.best_id == records[-3].id and single.oldest_ref == single.newest_ref == "event:e902"
    # the older 0.9 repeat is outside the window; with the whole history it is the loop's best
    whole = {k.key: k for k in event_kinds(store, SearchFilter((Layer.DOMAIN,), mission="m"))}
    assert whole["k-loop"].count == 301 and whole["k-loop"].best_id == records[300].id


def test_every_backend_aggregates_event_kinds_in_the_store(store: MemoryStore) -> None:
    """No backend answers the window's kinds by reading every event into Python (docs/adr/0088): each
    implements ``EventKindIndex`` and counts events with and without a kind key exactly."""
    from mission_memory.records import Layer
    from mission_memory.stores.base import EventKindIndex
    from mission_memory.stores.filters import SearchFilter

    assert isinstance(store, EventKindIndex), f"{type(store).__name__} has no in-store kind aggregate"
    records = [Record.build(kind=RecordKind.DOMAIN_EVENT, title=f"e{n}", text=f"event e{n}", criticality=0.5 + n / 100,
                            provenance=Provenance(kind=SourceKind.EVENT, ref=f"event:e{n}", uri=f"urn:e{n}", mission="m",
                                                  time=T0 - timedelta(seconds=n % 5)),
                            attributes={"event_id": f"e{n}", **({"kind_key": f"k{n % 3}"} if n % 4 else {})})
               for n in range(24)]
    store.upsert_records(records)
    where = SearchFilter((Layer.DOMAIN,), mission="m", min_criticality=0.55)
    kinds = store.event_kinds(where)
    assert sum(k.count for k in kinds) == 19 and len(kinds) == 3 + 4
    by_key = {k.key: k for k in kinds}
    assert by_key["k1"].count == 5 and by_key["k1"].best_id == records[22].id  # e7 e10 e13 e19 e22
    assert (by_key["k1"].oldest_ref, by_key["k1"].newest_ref) == ("event:e19", "event:e10")
    assert by_key[f"record:{records[8].id}"].count == 1 and by_key[f"record:{records[8].id}"].best_id == records[8].id
