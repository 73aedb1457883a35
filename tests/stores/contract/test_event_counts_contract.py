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
