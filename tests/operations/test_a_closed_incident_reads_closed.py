"""A closed incident does not read as live: no next update counting down, no current severity (trial
defect: after `incident close` the block still said "Next update: 12:30 UTC (in 29 min)" and "severity
critical")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.operations.sources.alertmanager import events_from_alertmanager

T0 = datetime(2026, 3, 1, 11, 55, tzinfo=UTC)


def _firing(name: str) -> dict[str, object]:
    alert = {"status": "firing", "labels": {"alertname": name, "severity": "critical", "service": "checkout"},
             "annotations": {"summary": f"{name} on api-7"}, "startsAt": "2026-03-01T11:55:00Z",
             "endsAt": "0001-01-01T00:00:00Z", "fingerprint": f"fp-{name}"}
    return {"version": "4", "status": "firing", "receiver": "mission-memory", "alerts": [alert]}


def test_a_closed_incident_shows_no_live_next_update_or_severity(data_dir: Path) -> None:
    at = T0 + timedelta(minutes=10)
    with Memory.open() as memory:
        memory.record_events(list(events_from_alertmanager(_firing("CheckoutDown"))), mission="shop", now=T0, embed=False)
        memory.change_incident("next-update", "12:30", mission="shop", operator="bob@x", now=at)
        live = CliRunner().invoke(app, ["incident", "--mission", "shop", "--now", at.isoformat()])
        assert "Next update: 2026-03-01 12:30 UTC (in 25 min)" in live.output and "severity critical" in live.output
        memory.change_incident("close", "mitigated by failover", mission="shop", operator="bob@x", now=at)
    shown = CliRunner().invoke(app, ["incident", "--mission", "shop", "--now", (at + timedelta(minutes=1)).isoformat()])
    assert shown.exit_code == 0, shown.output
    assert "(in " not in shown.output and "OVERDUE" not in shown.output, shown.output
    assert "Next update: none: it closed at 2026-03-01 12:05 UTC" in shown.output, shown.output
    assert "severity critical" not in shown.output and "severity at close critical" in shown.output, shown.output
    timeline = CliRunner().invoke(app, ["query", "what happened", "--mission", "shop", "--timeline",
                                        "--now", (at + timedelta(minutes=1)).isoformat()])
    assert "(in " not in timeline.output and "severity critical ·" not in timeline.output, timeline.output
