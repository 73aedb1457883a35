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
