"""The brief's first block lists the open alerts, and only them, under any flood of log lines and any budget.

On 6adcb71 the incident block said "Still firing: 9 distinct alerts, 1999 events", listing WARN and INFO
log templates, left out an open 0.8 Alertmanager alert, and at 1,500 tokens named no firing item at all
("+8 more distinct alerts") while the status list and a whole decision were kept. When the event rate
fell, the severity line vanished although a P1 PagerDuty incident was still open; ``events firing``
showed ``PagerDutyIncident`` instead of the incident's title, and no instance.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.config import load_settings
from mission_memory.operations.sources.alertmanager import events_from_alertmanager
from mission_memory.operations.sources.pagerduty import events_from_pagerduty

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
PAYLOADS = Path(__file__).parents[1] / "operations" / "webhook_payloads"
ALERTS = (("CheckoutErrorBudgetBurn", "critical", "api-7:9102", "Checkout burns its error budget 14x"),
          ("PostgresReplicaLagging", "error", "pg-replica-2:9187", "Replica lag above 30 s"),
          ("TLSCertExpiringSoon", "warning", "lb-1:443", "Certificate of shop.example expires in 6 days"))
LOG_KINDS = (("WARN", 0.6, "GC pause of {n} ms on worker {n}"), ("INFO", 0.2, "request {n} served in {n} ms"),
             ("ERROR", 0.8, "upstream timed out after {n} ms on conn {n}"), ("DEBUG", 0.1, "cache probe {n} hit"))


def _alertmanager(name: str, severity: str, instance: str, summary: str, started: datetime) -> dict[str, Any]:
    return {"status": "firing", "labels": {"alertname": name, "severity": severity, "service": "checkout",
                                           "instance": instance},
            "annotations": {"summary": summary, "runbook_url": f"https://runbooks.example/{name}"},
            "startsAt": started.isoformat().replace("+00:00", "Z"), "endsAt": "0001-01-01T00:00:00Z",
            "fingerprint": f"fp-{name}"}


def _logs(n: int, end: datetime, prefix: str = "log") -> list[dict[str, Any]]:
    step = timedelta(minutes=8) / n
    out = []
    for i in range(n):
        kind, crit, template = LOG_KINDS[i % len(LOG_KINDS)]
        out.append({"id": f"{prefix}-{i}", "time": (end - i * step).isoformat(), "sector": "checkout", "type": kind,
                    "criticality": crit, "source": "app-log", "text": template.replace("{n}", str(100 + i))})
    return out


def _record_alerts(memory: Memory, at: datetime) -> None:
    payload = {"version": "4", "status": "firing", "receiver": "mission-memory",
               "alerts": [_alertmanager(*a, at - timedelta(minutes=40)) for a in ALERTS]}
    memory.record_events(list(events_from_alertmanager(payload)), mission="shop", now=at, embed=False)


@pytest.mark.parametrize("budget", [1500, 4000])
def test_every_open_alert_is_named_first_and_no_log_template_is_called_an_alert(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, budget: int
) -> None:
    with Memory(load_settings(data_dir=tmp_path / "data")) as memory:
        _record_alerts(memory, NOW - timedelta(minutes=1))
        memory.record_events(_logs(1200, NOW - timedelta(seconds=30)), mission="shop", now=NOW, embed=False)
        assert memory.escalation_status("shop", now=NOW).mode.value == "degraded"
        monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "night@x")
        memory.record_decision("Fail checkout over to eu-west", decision="Checkout runs from eu-west until the "
                               "replica catches up. " * 12, rationale="The primary region is degraded. " * 12,
                               mission="shop", now=NOW - timedelta(minutes=2))
        monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "day@x")
        brief = memory.rotation_brief(mission="shop", now=NOW, token_budget=budget, archive=False,
                                      embed_archived=False)
    block = next(shown for item, shown in brief.entries if item.section.name == "CRISIS")
    alerts = block.split("Open alerts", 1)[1].split("\n\n", 1)[0].split("Recurring", 1)[0]
    assert alerts.startswith(" (3, most critical first")
    for name, _, instance, summary in ALERTS:
        assert name in alerts and instance in alerts and summary in alerts, (name, block)
    assert alerts.index("CheckoutErrorBudgetBurn") < alerts.index("PostgresReplicaLagging") < alerts.index("TLSCertExpiringSoon")
    for kind, _, _ in LOG_KINDS:  # log kinds are recurring events, never alerts
        assert not re.search(rf"^- {kind} ", alerts, re.MULTILINE), (kind, alerts)
    assert "distinct alert" not in block
    assert "Recurring log events (not alerts)" in block
    assert block.splitlines()[0].startswith("Severity: critical")
    assert brief.tokens_used <= budget


def test_a_p1_still_open_after_the_rate_falls_keeps_the_severity_and_is_found_by_its_title(data_dir: Path) -> None:
    triggered = json.loads((PAYLOADS / "pagerduty_v3_incident_triggered.json").read_text(encoding="utf-8"))
    opened = datetime(2026, 3, 1, 11, 55, tzinfo=UTC)  # the payload's created_at
    now = opened + timedelta(hours=3)
    with Memory.open() as memory:
        memory.record_events(list(events_from_pagerduty(triggered)), mission="shop", now=opened, embed=False)
        # a flood an hour after the incident was opened, then quiet
        memory.record_events(_logs(400, opened + timedelta(hours=1)), mission="shop",
                             now=opened + timedelta(hours=1), embed=False)
        assert memory.escalation_status("shop", now=now).mode.value == "normal"
        brief = memory.rotation_brief(mission="shop", from_operator="night@x", for_operator="day@x", now=now,
                                      token_budget=1500, archive=False, embed_archived=False)
        block = next(shown for item, shown in brief.entries if item.section.name == "CRISIS")
        assert block.splitlines()[0].startswith("Severity: critical"), block
        assert "Checkout 5xx above 20% in eu-prod-2" in block and "On-call A" in block  # title, assignee
        # in a flood again, the incident is found by its title
        memory.record_events(_logs(400, now, "again"), mission="shop", now=now, embed=False)
        assert memory.escalation_status("shop", now=now).mode.value == "degraded"
        digest = memory.query("checkout 5xx eu-prod-2", filters={"mission": "shop"}, token_budget=1500, now=now)
        assert digest.entries and digest.entries[0].record.attributes["event_id"] == "pagerduty:Q1INC42", digest.text
    listed = CliRunner().invoke(app, ["events", "firing", "--mission", "shop", "--now", now.isoformat()])
    assert listed.exit_code == 0, listed.output
    assert "Checkout 5xx above 20% in eu-prod-2" in " ".join(listed.output.split())


def test_events_firing_tells_two_instances_of_one_alert_apart(data_dir: Path) -> None:
    with Memory.open() as memory:
        payload = {"version": "4", "status": "firing", "receiver": "mission-memory", "alerts": [
            {**_alertmanager("HostDown", "critical", host, f"{host} does not answer ping", NOW - timedelta(minutes=5)),
             "fingerprint": f"fp-{host}"} for host in ("db-1:9100", "db-2:9100")]}
        memory.record_events(list(events_from_alertmanager(payload)), mission="shop", now=NOW, embed=False)
    listed = CliRunner().invoke(app, ["events", "firing", "--mission", "shop", "--now", NOW.isoformat()])
    assert listed.exit_code == 0, listed.output
    shown = "".join(listed.output.split())  # the table may wrap a cell over lines
    assert "db-1:9100" in shown and "db-2:9100" in shown
