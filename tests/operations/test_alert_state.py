"""Alert state over real HTTP (issue 24 item 2): an alert is open until resolved, a mass all-clear neither
floods the mission nor stays critical, the timeline counts what is still firing, payloads without a
fingerprint are accepted, the on-call labels and the runbook link are kept and shown, and PagerDuty v3 and
Opsgenie webhooks are received beside Alertmanager, from payloads in the vendors' documented shapes
(tests/operations/webhook_payloads/)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from mission_memory.api import Memory
from mission_memory.operations.alert_state import open_alerts
from mission_memory.operations.sources.alertmanager import alertmanager_fingerprint
from mission_memory.records import RecordKind
from tests.mcp_http_server import http_mcp_server

PAYLOADS = Path(__file__).parent / "webhook_payloads"


def _fixture(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((PAYLOADS / name).read_text(encoding="utf-8"))
    return loaded


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _alert(n: int, starts: datetime, *, status: str = "firing", ends: datetime | None = None) -> dict[str, Any]:
    return {
        "status": status,
        "labels": {"alertname": f"Check{n}Failing", "severity": "critical", "service": f"svc-{n}",
                   "instance": f"node-{n}:9100", "cluster": "eu-prod-2", "region": "eu-west-1"},
        "annotations": {"summary": f"check {n} failing", "runbook_url": f"https://runbooks.internal/check-{n}"},
        "startsAt": _iso(starts),
        "endsAt": _iso(ends) if ends else "0001-01-01T00:00:00Z",
        "generatorURL": f"http://prometheus.internal:9090/graph?g0.expr=check_{n}",
        "fingerprint": f"fp{n:04d}",
    }


def _payload(*alerts: dict[str, Any], status: str = "firing") -> dict[str, Any]:
    return {"version": "4", "groupKey": "{}:{}", "truncatedAlerts": 0, "status": status, "receiver": "mission-memory",
            "groupLabels": {}, "commonLabels": {}, "commonAnnotations": {}, "externalURL": "http://alertmanager:9093",
            "alerts": list(alerts)}


def _base(url: str) -> str:
    return url.removesuffix("/mcp")


def test_a_mass_all_clear_does_not_flood_and_resolved_alerts_leave_the_critical_set(data_dir: Path) -> None:
    now = datetime.now(UTC)
    starts = [now - timedelta(hours=3) + timedelta(minutes=15 * n) for n in range(11)]  # 11 alerts over 3 h
    with http_mcp_server(data_dir) as url, httpx.Client(base_url=_base(url), timeout=60) as http:
        for n, at in enumerate(starts):
            assert http.post("/alerts/alertmanager?mission=estate", json=_payload(_alert(n, at))).status_code == 200
        clear = http.post("/alerts/alertmanager?mission=estate", json=_payload(
            *[_alert(n, at, status="resolved", ends=now - timedelta(seconds=30)) for n, at in enumerate(starts)],
            status="resolved"))
        assert clear.status_code == 200, clear.text
        assert clear.json()["replaced"] == 11
        assert clear.json()["escalation"]["mode"] == "normal"  # an all-clear is not a flood
    with Memory.open() as memory:
        records = memory.store.records_of_kind([RecordKind.DOMAIN_EVENT.value], mission="estate")
        assert {r.criticality for r in records} == {0.0}
        assert {r.attributes["source_criticality"] for r in records} == {0.9}
        assert open_alerts(memory.store, "estate") == []
        memory.embed_pending()
        digest = memory.query("check failing", filters={"mission": "estate"}, timeline=True)
    assert "Critical events of this window" not in digest.text and "Firing now" not in digest.text
    assert "State: RESOLVED" in digest.text  # entries carry the resolved marker


def test_the_timeline_counts_alerts_still_firing_that_started_before_the_window(data_dir: Path) -> None:
    now = datetime.now(UTC)
    with http_mcp_server(data_dir) as url, httpx.Client(base_url=_base(url), timeout=60) as http:
        for n in range(9):
            posted = http.post("/alerts/alertmanager?mission=estate",
                               json=_payload(_alert(n, now - timedelta(minutes=40 - n))))
            assert posted.status_code == 200, posted.text
    with Memory.open() as memory:
        assert len(open_alerts(memory.store, "estate")) == 9
        digest = memory.query("what is firing in the estate", filters={"mission": "estate"}, timeline=True)
    assert "Firing now: 9 alerts open (9 critical), 9 of them started before this window" in digest.text
    for n in range(9):
        assert f"event:fp{n:04d}@" in digest.text
    assert "runbook https://runbooks.internal/check-8" in digest.text  # the runbook link with the alert


def test_a_payload_without_fingerprints_is_accepted_and_keeps_the_on_call_labels(data_dir: Path) -> None:
    payload = _fixture("alertmanager_v4_without_fingerprint.json")
    labels = payload["alerts"][0]["labels"]
    with http_mcp_server(data_dir) as url, httpx.Client(base_url=_base(url), timeout=60) as http:
        answer = http.post("/alerts/alertmanager?mission=estate", json=payload)
        assert answer.status_code == 200, answer.text
        assert answer.json()["added"] == 1
    with Memory.open() as memory:
        [record] = memory.store.records_of_kind([RecordKind.DOMAIN_EVENT.value], mission="estate")
        digest = memory.query("postgres down on db-1", filters={"mission": "estate"})
    a = record.attributes
    assert a["fingerprint"] == alertmanager_fingerprint(labels)
    assert a["labels"] == {"cluster": "eu-prod-2", "instance": "db-1.internal:5432", "region": "eu-west-1",
                           "service": "postgres"}
    assert a["runbook_url"] == "https://runbooks.internal/postgres/down"
    assert a["generator_url"].startswith("http://prometheus.internal:9090/graph")
    assert "Runbook: https://runbooks.internal/postgres/down" in digest.text
    assert "Labels: cluster=eu-prod-2, instance=db-1.internal:5432, region=eu-west-1" in digest.text


def test_pagerduty_v3_incidents_are_received_and_resolved(data_dir: Path) -> None:
    with http_mcp_server(data_dir) as url, httpx.Client(base_url=_base(url), timeout=60) as http:
        fired = http.post("/alerts/pagerduty?mission=estate", json=_fixture("pagerduty_v3_incident_triggered.json"))
        assert fired.status_code == 200, fired.text
        assert fired.json()["added"] == 1
        with Memory.open() as memory:
            [alert] = open_alerts(memory.store, "estate")
            assert (alert.type, alert.sector, alert.criticality) == ("PagerDutyIncident", "Checkout API", 0.95)
            assert alert.fingerprint == "checkout-5xx-eu-prod-2"
        service = http.post("/alerts/pagerduty?mission=estate", json={"event": {
            "id": "x", "event_type": "service.updated", "resource_type": "service", "data": {"id": "PSVC001"}}})
        assert service.status_code == 200 and service.json()["received"] == 0
        broken = http.post("/alerts/pagerduty?mission=estate", json={"event": {"event_type": "incident.triggered",
                                                                               "data": {"id": "Q2"}}})
        assert broken.status_code == 400
        assert broken.json()["error"] == "pagerduty webhook: event.data.created_at is missing; nothing was stored"
        resolved = http.post("/alerts/pagerduty?mission=estate", json=_fixture("pagerduty_v3_incident_resolved.json"))
        assert resolved.status_code == 200 and resolved.json()["replaced"] == 1
    with Memory.open() as memory:
        [record] = memory.store.records_of_kind([RecordKind.DOMAIN_EVENT.value], mission="estate")
        assert record.attributes["state"] == "resolved" and record.criticality == 0.0
        assert record.attributes["event_id"] == "pagerduty:Q1INC42"
        assert record.attributes["generator_url"] == "https://estate.pagerduty.com/incidents/Q1INC42"
        assert record.attributes["ends_at"].startswith("2026-03-01T12:20:00")
        assert open_alerts(memory.store, "estate") == []


def test_opsgenie_alerts_are_received_and_closed(data_dir: Path) -> None:
    with http_mcp_server(data_dir) as url, httpx.Client(base_url=_base(url), timeout=60) as http:
        created = http.post("/alerts/opsgenie?mission=estate", json=_fixture("opsgenie_create.json"))
        assert created.status_code == 200, created.text
        with Memory.open() as memory:
            [alert] = open_alerts(memory.store, "estate")
            assert (alert.sector, alert.criticality, alert.fingerprint) == ("payments", 0.9, "payments-queue-depth")
            assert alert.runbook_url == "https://runbooks.internal/payments/queue"
            assert alert.since == datetime(2026, 3, 1, 11, 55, tzinfo=UTC)
        bad = _fixture("opsgenie_create.json")
        bad["alert"]["tags"] = "payments"
        refused = http.post("/alerts/opsgenie?mission=estate", json=bad)
        assert refused.status_code == 400
        assert refused.json()["error"] == "opsgenie webhook: alert.tags must be a list, got str; nothing was stored"
        closed = http.post("/alerts/opsgenie?mission=estate", json=_fixture("opsgenie_close.json"))
        assert closed.status_code == 200 and closed.json()["replaced"] == 1
    with Memory.open() as memory:
        [record] = memory.store.records_of_kind([RecordKind.DOMAIN_EVENT.value], mission="estate")
        assert record.attributes["state"] == "resolved" and record.text.startswith("RESOLVED: Payments queue depth")
        assert record.attributes["ends_at"].startswith("2026-03-01T12:20:00")
        assert open_alerts(memory.store, "estate") == []
