"""A degraded pull reads the flood's events once per process, not once per question (issue 24, docs/adr/0057).

Every degraded pull groups the flood's most critical events (triage) and reads the window's events (the
crisis timeline). The events made from stored records are kept, keyed by the record's content-derived id
and the fields outside it; these tests hold that a record read again gives the same event without
validating it again, and that a record differing only in its time or operator is read afresh."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from mission_memory.api import Memory
from mission_memory.errors import InputError
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


def test_a_stored_event_built_quickly_equals_the_validated_one(tmp_path) -> None:
    """Stored events whose fields are plainly valid skip pydantic's validation; the event must be the one
    validation makes, field for field, for every shape intake stores (labels, runbooks, resolved alerts,
    causes, units, operators, Ukrainian text, multi-line text)."""
    from mission_memory.operations.scenarios import service_estate_scenario, uav_scenario

    events = [*service_estate_scenario(1).events, *uav_scenario(1).events[:150],
              DomainEvent(id="multi", time=T0, sector="s", type="log", criticality=1.0, source="x",
                          text="line one\n\tline two\r\n", operator="oksana", unit="crew-2", caused_by=("a", "b")),
              DomainEvent(id="runbook", time=T0, sector="payments", type="HighErrorRate", criticality=0.9,
                          source="alertmanager", text="Обстріл: error rate 7 % on payments", fingerprint="4f1c",
                          labels={"instance": "pay-1:9100", "region": "eu-west-1"},
                          runbook_url="https://runbooks.example.org/payments", generator_url="http://prom:9090/graph")]
    with Memory.open(data_dir=tmp_path / "data", event_mission="m") as memory:
        memory.record_events(events, "m", now=max(e.ends_at or e.time for e in events), embed=False)
        records = memory.store.records_of_kind([RecordKind.DOMAIN_EVENT.value], mission="m", limit=1000)
    assert len(records) > 150
    shapes = {"labels": 0, "runbook_url": 0, "ends_at": 0, "caused_by": 0}
    for record in records:
        fields = domain_events._stored_fields(record)
        assert domain_events._checked_stored_fields(fields) is not None  # every stored shape takes the quick path
        validated = DomainEvent.model_validate(fields, context={"stored": True})
        built = domain_events._validated_event(record)
        assert built == validated
        assert built.model_dump() == validated.model_dump()
        for name in shapes:
            shapes[name] += bool(getattr(built, name))
    assert all(shapes.values()), shapes  # each shape was met


def test_a_stored_event_that_is_not_plainly_valid_is_validated_and_named(tmp_path) -> None:
    record = event_record(_event(7), "hadoop")
    broken = record.model_copy(update={"attributes": {**record.attributes, "state": "exploded"}})
    with pytest.raises(InputError, match=f"record {broken.id}: stored event attributes"):
        event_from_record(broken)
    padded = record.model_copy(update={"attributes": {**record.attributes, "sector": "  RMContainerAllocator "}})
    assert domain_events._validated_event(padded).sector == "RMContainerAllocator"
