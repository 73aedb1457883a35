"""The incident as a record (issue 37): it keeps the PagerDuty incident number and id, or the Opsgenie alert
id, of the alert that opened it; ``incident list`` shows a mission's past incidents (``--json`` too); an
operator sets the severity level by hand, the brief says so and by whom, and while an alert of the
incident is open the level its open alerts derive still holds (a lower level by hand is refused)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.errors import InputError
from mission_memory.operations.sources.alertmanager import events_from_alertmanager
from mission_memory.operations.sources.opsgenie import events_from_opsgenie
from mission_memory.operations.sources.pagerduty import events_from_pagerduty

T0 = datetime(2026, 3, 1, 11, 55, tzinfo=UTC)
PAYLOADS = Path(__file__).parent / "webhook_payloads"


def _payload(name: str) -> Any:
    return json.loads((PAYLOADS / name).read_text(encoding="utf-8"))


def _alert(name: str, severity: str, status: str, started: datetime, ended: datetime | None = None) -> dict[str, Any]:
    return {"version": "4", "status": status, "receiver": "r", "alerts": [{
        "status": status, "labels": {"alertname": name, "severity": severity, "service": "checkout"},
        "annotations": {"summary": f"{name} on checkout"}, "startsAt": started.isoformat(),
        "endsAt": (ended or datetime(1, 1, 1, tzinfo=UTC)).isoformat(), "fingerprint": f"fp-{name}"}]}


def test_the_incident_keeps_the_pagerduty_number_and_id_and_the_opsgenie_alert_id(data_dir: Path) -> None:
    pd = _payload("pagerduty_v3_incident_triggered.json")
    og = _payload("opsgenie_create.json")
    with Memory.open() as memory:
        memory.record_events(list(events_from_pagerduty(pd)), mission="shop", now=T0, embed=False)
        memory.record_events(list(events_from_opsgenie(og)), mission="ops", now=T0, embed=False)
        shop, ops = memory.incident("shop"), memory.incident("ops")
    assert shop is not None and ops is not None
    assert shop.opened_by == "alert" and ops.opened_by == "alert"
    assert shop.to_json()["source"] == {"name": "pagerduty", "id": "Q1INC42", "number": "42",
                                        "url": "https://estate.pagerduty.com/incidents/Q1INC42"}
    assert ops.to_json()["source"]["name"] == "opsgenie"
    assert ops.to_json()["source"]["id"] == "7f1c2d3e-4b5a-6978-8a9b-0c1d2e3f4a5b"
    assert ops.to_json()["source"]["number"] == "128"  # Opsgenie's tinyId
    shown = CliRunner().invoke(app, ["incident", "--mission", "shop", "--now", T0.isoformat()])
    assert shown.exit_code == 0, shown.output
    assert "PagerDuty incident #42 (Q1INC42)" in shown.output


def test_incident_list_shows_the_past_incidents_of_a_mission(data_dir: Path) -> None:
    with Memory.open() as memory:
        memory.record_events(list(events_from_alertmanager(_alert("CheckoutDown", "critical", "firing", T0))),
                             mission="shop", now=T0, embed=False)
        resolved = T0 + timedelta(minutes=30)
        memory.record_events(list(events_from_alertmanager(_alert("CheckoutDown", "critical", "resolved", T0, resolved))),
                             mission="shop", now=resolved, embed=False)
        memory.change_incident("open", "payments slow", mission="shop", operator="ann@x", now=T0 + timedelta(hours=1))
        memory.change_incident("close", "fixed by rollback", mission="shop", operator="ann@x", now=T0 + timedelta(hours=2))
        memory.change_incident("open", "search errors", mission="shop", operator="bob@x", now=T0 + timedelta(hours=3))
    runner = CliRunner()
    listed = runner.invoke(app, ["incident", "list", "--mission", "shop", "--json"])
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.output)
    assert [r["title"] for r in rows] == ["search errors", "payments slow", "CheckoutDown on checkout"]  # newest first
    assert [r["status"] for r in rows] == ["investigating", "resolved", "resolved"]
    assert rows[2]["resolved_at"] == resolved.isoformat() and rows[2]["opened_by"] == "alert"
    text = runner.invoke(app, ["incident", "list", "--mission", "shop"])
    assert text.exit_code == 0, text.output
    assert "3 incidents" in text.output and "payments slow" in text.output and "resolved" in text.output


def test_an_operator_sets_the_severity_by_hand_and_open_alerts_hold_theirs(data_dir: Path) -> None:
    at = T0 + timedelta(minutes=5)
    with Memory.open() as memory:
        memory.record_events([{"id": "log-1", "time": T0.isoformat(), "sector": "payments", "type": "log",
                               "criticality": 0.2, "text": "payment latency p99 at 2.1 s"}],
                             mission="shop", now=T0, embed=False)
        memory.change_incident("open", "payments slow", mission="shop", operator="ann@x", now=T0)
        raised = memory.change_incident("severity", "critical", mission="shop", operator="ann@x", now=at)
        assert raised.severity == "critical" and raised.severity_set_by == "ann@x"
        brief = memory.rotation_brief(mission="shop", for_operator="bob@x", token_budget=4000, now=at)
        assert "set by hand by ann@x" in brief.text, brief.text[:1500]
        # no alert open: a lower level by hand is taken
        assert memory.change_incident("severity", "elevated", mission="shop", operator="ann@x", now=at).severity == "elevated"
        # a high alert (0.8) joins: its level holds over the hand's lower one, and lowering below it is refused
        memory.record_events(list(events_from_alertmanager(_alert("PayDown", "high", "firing", at))),
                             mission="shop", now=at, embed=False)
        joined = memory.incident("shop")
        assert joined is not None and joined.severity == "high"
        with pytest.raises(InputError, match="open alerts hold it at high"):
            memory.change_incident("severity", "elevated", mission="shop", operator="ann@x", now=at)
        with pytest.raises(InputError, match="severity 'urgent'"):
            memory.change_incident("severity", "urgent", mission="shop", operator="bob@x", now=at)
        final = memory.change_incident("severity", "critical", mission="shop", operator="bob@x", now=at)
    assert final.is_open and final.severity == "critical" and final.severity_set_by == "bob@x"
    assert [(c.field, c.value, c.by) for c in final.log if c.field == "severity"] == [
        ("severity", "critical", "ann@x"), ("severity", "elevated", "ann@x"), ("severity", "critical", "bob@x")]
