"""Domain events: the model, JSON Lines / CSV / Alertmanager readers, and the domain-layer record."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mission_memory.config import AlertmanagerMapping
from mission_memory.errors import InputError
from mission_memory.operations.domain_events import (
    DomainEvent,
    EventState,
    event_record,
    read_events_csv,
    read_events_jsonl,
)
from mission_memory.operations.sources.alertmanager import alertmanager_fingerprint, events_from_alertmanager
from mission_memory.records import Layer, RecordKind

SHELLING = {
    "id": "evt-001", "time": "2026-03-01T12:00:00Z", "sector": "Північ", "type": "shelling",
    "criticality": 0.9, "source": "post-7", "text": "Обстріл опорного пункту, двоє поранених.",
    "unit": "рота 3",
}
JAMMING = {
    "id": "evt-002", "time": "2026-03-01T12:02:00+02:00", "sector": "North", "type": "ew_jamming",
    "criticality": 0.7, "source": "sensor-12", "text": "GPS jamming burst on 1.57 GHz", "caused_by": ["evt-001"],
}

# The body Alertmanager posts to a webhook receiver (version 4), as documented by Prometheus.
ALERTMANAGER = {
    "version": "4", "groupKey": "{}:{alertname=\"HighErrorRate\"}", "truncatedAlerts": 0, "status": "firing",
    "receiver": "mission-memory", "groupLabels": {"alertname": "HighErrorRate"},
    "commonLabels": {"alertname": "HighErrorRate", "severity": "critical"},
    "commonAnnotations": {}, "externalURL": "http://alertmanager.example:9093",
    "alerts": [
        {"status": "firing", "labels": {"alertname": "HighErrorRate", "severity": "critical", "service": "checkout",
                                         "namespace": "shop"},
         "annotations": {"summary": "checkout 5xx above 5%", "description": "Error budget burning 14x"},
         "startsAt": "2026-03-01T12:00:00.000Z", "endsAt": "0001-01-01T00:00:00Z",
         "generatorURL": "http://prometheus.example/graph?g0.expr=...", "fingerprint": "c7a5b2f1e0d94a31"},
        {"status": "resolved", "labels": {"alertname": "PodCrashLooping", "severity": "warning", "namespace": "payments"},
         "annotations": {"summary": "payments-api restarting"},
         "startsAt": "2026-03-01T11:40:00Z", "endsAt": "2026-03-01T11:58:00Z", "fingerprint": "0e11aa22bb33cc44"},
    ],
}


def lines(*items: object) -> str:
    return "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items)


def test_json_lines_give_events_with_times_in_utc_and_ukrainian_text_kept() -> None:
    events = read_events_jsonl(lines(SHELLING, JAMMING) + "\n")
    assert [e.id for e in events] == ["evt-001", "evt-002"]
    assert events[1].time == datetime(2026, 3, 1, 10, 2, tzinfo=UTC)
    assert events[0].sector == "Північ" and events[1].caused_by == ("evt-001",)
    assert events[0].state is EventState.FIRING


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"time": None}, "line 2: time is missing"),
        ({"criticality": 1.5}, "line 2: criticality: Input should be less than or equal to 1"),
        ({"colour": "red"}, "line 2: colour is not a known field"),
        ({"text": "   "}, "line 2: text: Value error, must not be blank"),
        ({"time": "yesterday"}, "line 2: time: Input should be a valid datetime"),
    ],
)
def test_a_bad_event_is_refused_naming_the_line_and_the_field(change: dict[str, object], expected: str) -> None:
    bad = {k: v for k, v in {**JAMMING, **change}.items() if v is not None}
    with pytest.raises(InputError) as caught:
        read_events_jsonl(lines(SHELLING, bad), source="events.jsonl")
    assert f"events.jsonl {expected}" in str(caught.value)
    assert "pydantic.dev" not in str(caught.value)


def test_broken_json_a_non_object_and_an_oversized_batch_are_refused_clearly() -> None:
    with pytest.raises(InputError, match=r"line 2: not valid JSON \(Expecting"):
        read_events_jsonl(lines(SHELLING) + '{"id": "x", \n')
    with pytest.raises(InputError, match="line 2: expected a JSON object, got list"):
        read_events_jsonl(lines(SHELLING) + "[1, 2]\n")
    with pytest.raises(InputError, match="item 1: expected a JSON object, got int"):  # a JSON array of events
        read_events_jsonl("[1, 2]\n")
    with pytest.raises(InputError, match="larger than the 5,000,000 bytes"):
        read_events_jsonl(lines(SHELLING) * 40_000)
    with pytest.raises(InputError, match="not UTF-8"):
        read_events_jsonl(b"\xff\xfe{}")


def test_csv_reads_a_header_row_and_splits_cause_ids() -> None:
    text = (
        "id,time,sector,type,criticality,source,text,caused_by\n"
        "e1,2026-03-01T12:00:00Z,North,shelling,0.9,post-7,Обстріл,\n"
        'e2,2026-03-01T12:01:00Z,North,lost_link,0.8,uav-ops,"Lost link with 3 of 8 drones, swarm B",e1;e0\n'
    )
    events = read_events_csv(text, source="events.csv")
    assert [e.id for e in events] == ["e1", "e2"]
    assert events[1].caused_by == ("e1", "e0") and events[0].caused_by == ()
    with pytest.raises(InputError, match=r"events\.csv line 1: unknown column 'colour'"):
        read_events_csv("id,colour\n1,red\n", source="events.csv")
    with pytest.raises(InputError, match=r"events\.csv line 2: criticality: Input should be greater than or equal to 0"):
        read_events_csv("id,time,sector,type,criticality,text\ne,2026-03-01T12:00:00Z,N,t,-1,x\n", source="events.csv")


def test_alertmanager_alerts_map_severity_sector_type_id_and_state() -> None:
    firing, resolved = events_from_alertmanager(ALERTMANAGER)
    assert firing.type == "HighErrorRate" and firing.sector == "checkout" and firing.criticality == 0.9
    assert firing.id == "c7a5b2f1e0d94a31@2026-03-01T12:00:00.000Z"
    assert firing.time == datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    assert firing.text == "checkout 5xx above 5%\nError budget burning 14x"
    assert firing.source == "alertmanager/mission-memory"
    assert resolved.state is EventState.RESOLVED and resolved.sector == "payments"
    # a resolved alert keeps its start as its time (an all-clear adds nothing to the rate), its end beside it
    assert resolved.time == datetime(2026, 3, 1, 11, 40, tzinfo=UTC) and resolved.criticality == 0.6
    assert resolved.ends_at == datetime(2026, 3, 1, 11, 58, tzinfo=UTC)
    assert resolved.duration == timedelta(minutes=18)
    assert resolved.text.startswith("RESOLVED: payments-api restarting")


def test_the_alertmanager_mapping_is_configurable() -> None:
    mapping = AlertmanagerMapping(severity_criticality={"Critical": 1.0}, sector_labels=("namespace",),
                                  default_criticality=0.3)
    firing, resolved = events_from_alertmanager(ALERTMANAGER, mapping)
    assert (firing.sector, firing.criticality) == ("shop", 1.0)
    assert resolved.criticality == 0.3


def test_a_malformed_alertmanager_payload_names_the_alert_and_field() -> None:
    with pytest.raises(InputError, match="'alerts' list"):
        events_from_alertmanager({"status": "firing"})
    broken = json.loads(json.dumps(ALERTMANAGER))
    del broken["alerts"][1]["fingerprint"]  # older Alertmanager versions: derived from the labels
    derived = events_from_alertmanager(broken)[1]
    assert derived.fingerprint == alertmanager_fingerprint(broken["alerts"][1]["labels"])
    assert derived.id == f"{derived.fingerprint}@{broken['alerts'][1]['startsAt']}"
    for bad in ("severity=critical", ["alertname", "X"]):
        broken = json.loads(json.dumps(ALERTMANAGER))
        broken["alerts"][0]["labels"] = bad
        with pytest.raises(InputError, match=r"alerts\[0\]: labels must be an object"):
            events_from_alertmanager(broken)
    broken = json.loads(json.dumps(ALERTMANAGER))
    broken["alerts"][0]["labels"] = {"severity": "critical"}
    broken["commonLabels"] = {}
    with pytest.raises(InputError, match=r"alerts\[0\]: labels.alertname is missing"):
        events_from_alertmanager(broken)


def test_an_event_becomes_a_domain_record_whose_slot_an_update_replaces() -> None:
    event = DomainEvent.model_validate(SHELLING)
    record = event_record(event, "op-north")
    assert record.layer is Layer.DOMAIN and record.kind is RecordKind.DOMAIN_EVENT
    assert record.component == "Північ" and record.criticality == 0.9
    assert record.provenance.ref == "event:evt-001" and record.provenance.mission == "op-north"
    assert record.title.startswith("[shelling] Північ: Обстріл")
    update = event_record(event.model_copy(update={"state": EventState.RESOLVED, "text": "Обстріл припинено."}), "op-north")
    assert update.source_key == record.source_key and update.id != record.id


@given(text=st.text(st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("\n\t\r"), min_size=1,
                   max_size=400).filter(str.strip),
       type_=st.text(alphabet="abcdefghijklmnopqrstuvwxyz_.", min_size=1, max_size=20))
@settings(max_examples=200, deadline=None)
def test_an_event_is_embedded_with_its_words_once(text: str, type_: str) -> None:
    """The record's title repeats the head of the event's text; the embedder reads those words once
    (issue 37: a loghub line's passage was about twice its tokens): the title's label, then the text."""
    event = DomainEvent(id="ev-1", time=datetime(2015, 7, 29, tzinfo=UTC), sector="QuorumPeer[myid=1]",
                        type=type_, criticality=0.5, source="loghub/Zookeeper", text=text)
    record = event_record(event, "ops")
    assert record.embedding_text == f"[{type_}] QuorumPeer[myid=1]: {record.text}"


def test_a_loghub_line_passage_holds_its_words_once() -> None:
    event = DomainEvent(id="Zookeeper-1", time=datetime(2015, 7, 29, tzinfo=UTC), sector="QuorumPeer[myid=1]",
                        type="E31", criticality=0.5, source="loghub/Zookeeper", text="Notification time out: 3200")
    assert event_record(event, "ops").embedding_text == "[E31] QuorumPeer[myid=1]: Notification time out: 3200"
