"""A degraded pull reads the flood's events once per process, not once per question (issue 24, docs/adr/0057).

Every degraded pull groups the flood's most critical events (triage) and reads the window's events (the
crisis timeline). The events made from stored records are kept, keyed by the record's content-derived id
and the fields outside it; these tests hold that a record read again gives the same event without
validating it again, and that a record differing only in its time or operator is read afresh."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from mission_memory.api import Memory
from mission_memory.operations import domain_events
from mission_memory.operations.domain_events import DomainEvent, event_from_record, event_record
from mission_memory.records import Provenance, RecordKind

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _event(i: int) -> DomainEvent:
    return DomainEvent(id=f"rm-{i}", time=T0 + timedelta(seconds=2 * i), sector="RMContainerAllocator", type="E38",
                       criticality=0.8, source="hadoop", text="ERROR IN CONTACTING RM.")


def test_a_stored_event_read_again_is_not_validated_again(tmp_path, monkeypatch) -> None:
    with Memory.open(data_dir=tmp_path / "data", event_mission="hadoop") as memory:
        memory.record_events([_event(i) for i in range(30)], "hadoop", now=T0 + timedelta(minutes=1), embed=False)
        records = memory.store.records_of_kind([RecordKind.DOMAIN_EVENT.value], mission="hadoop", limit=100)
        first = [event_from_record(r) for r in records]
        validated = []
        real = domain_events._validated_event
        monkeypatch.setattr(domain_events, "_validated_event", lambda r: validated.append(r.id) or real(r))
        again = [event_from_record(r) for r in memory.store.records_of_kind(
            [RecordKind.DOMAIN_EVENT.value], mission="hadoop", limit=100)]
    assert validated == []
    assert [e.id for e in again] == [e.id for e in first]
    assert all(a is b for a, b in zip(again, first, strict=True))


def test_a_record_differing_outside_its_id_is_read_afresh() -> None:
    record = event_record(_event(1), "hadoop")
    moved = record.model_copy(update={"provenance": Provenance(**{**record.provenance.model_dump(),
                                                                  "time": T0 + timedelta(hours=1)})})
    signed = record.model_copy(update={"operator": "oksana"})
    assert moved.id == record.id == signed.id
    assert event_from_record(record).time == T0 + timedelta(seconds=2)
    assert event_from_record(moved).time == T0 + timedelta(hours=1)
    assert event_from_record(signed).operator == "oksana"
    assert event_from_record(record).operator is None


def test_the_kept_events_are_bounded(monkeypatch) -> None:
    monkeypatch.setattr(domain_events, "READ_EVENTS_KEPT", 5)
    for i in range(12):
        event_from_record(event_record(_event(100 + i), "hadoop"))
    assert len(domain_events._READ_EVENTS) <= 5
