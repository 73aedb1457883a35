"""The outgoing operator sets the incident's status, commander, next update and contingency with the
``incident`` commands; the incoming operator's brief shows them, inside the fence, at 1,500 and 4,000
tokens (docs/adr/0091).

On 6adcb71 none of these fields existed: the brief read the next check and the contingencies from free
handover notes, and had no status, commander or start set by an operator.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.operations.sources.alertmanager import events_from_alertmanager

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
OPENED = NOW - timedelta(minutes=40)
CONTINGENCY = "if the replica lag passes 60 s then fail checkout over to eu-west"


def _page() -> dict[str, Any]:
    alert = {"status": "firing", "labels": {"alertname": "CheckoutErrorBudgetBurn", "severity": "critical",
                                            "service": "checkout", "instance": "api-7:9102"},
             "annotations": {"summary": "Checkout burns its error budget 14x"},
             "startsAt": OPENED.isoformat().replace("+00:00", "Z"), "endsAt": "0001-01-01T00:00:00Z",
             "fingerprint": "fp-burn"}
    return {"version": "4", "status": "firing", "receiver": "mission-memory", "alerts": [alert]}


def _logs(n: int, end: datetime) -> list[dict[str, Any]]:
    step = timedelta(minutes=8) / n
    return [{"id": f"log-{i}", "time": (end - i * step).isoformat(), "sector": "checkout",
             "type": ("WARN", "INFO", "ERROR")[i % 3], "criticality": (0.6, 0.2, 0.8)[i % 3], "source": "app-log",
             "text": f"upstream {i} answered in {100 + i} ms"} for i in range(n)]


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, ["incident", *args, "--mission", "shop", "--now", (NOW - timedelta(minutes=5)).isoformat()])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("budget", [1500, 4000])
def test_the_incoming_brief_shows_what_the_outgoing_operator_set_on_the_incident(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, budget: int
) -> None:
    with Memory.open() as memory:
        memory.record_events(list(events_from_alertmanager(_page())), mission="shop", now=OPENED, embed=False)
        memory.record_events(_logs(1200, NOW - timedelta(seconds=30)), mission="shop", now=NOW, embed=False)
        monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "night@x")
        memory.handover_note("Watching the replica lag closely " * 20, "hypothesis", mission="shop",
                             now=NOW - timedelta(minutes=6))
    _cli("status", "identified")
    _cli("commander", "night@x")
    _cli("next-update", "12:30")
    shown = _cli("contingency", CONTINGENCY)
    assert "status identified" in shown and CONTINGENCY in shown
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "day@x")
    with Memory.open() as memory:
        brief = memory.rotation_brief(mission="shop", from_operator="night@x", for_operator="day@x", now=NOW,
                                      token_budget=budget, archive=False, embed_archived=False)
    block = next(shown for item, shown in brief.entries if item.section.name == "CRISIS")
    flat = " ".join(block.split())
    assert flat.startswith("Severity: critical")
    assert ("Incident INC-20260301-112000: Checkout burns its error budget 14x · status identified"
            " · since 11:20 UTC (alert) · commander night@x") in flat
    assert re.search(r"Next check: 12:30 UTC \(in 30 min\)", flat), block
    assert CONTINGENCY in flat and "(night@x, 11:55 UTC)" in flat
    assert brief.tokens_used <= budget
    # operator text reaches the incoming agent only inside the brief's fence
    fenced = re.search(r"<<<excerpt (\d+) nonce=(\d+)>>>\n(.*?)<<<end excerpt \1 nonce=\2>>>", brief.text, re.DOTALL)
    assert fenced is not None
    assert any(CONTINGENCY in " ".join(m.group(3).split()) for m in
               re.finditer(r"<<<excerpt (\d+) nonce=(\d+)>>>\n(.*?)<<<end excerpt \1 nonce=\2>>>", brief.text, re.DOTALL))


def test_an_incident_an_operator_opened_shows_in_the_brief_without_flood_or_alert_and_the_terminal_gets_escapes(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memory.open() as memory:
        memory.record_events(_logs(3, NOW - timedelta(minutes=20)), mission="shop", now=NOW - timedelta(minutes=20),
                             embed=False)
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "night@x")
    _cli("open", "EU customers report slow payments")
    _cli("commander", "night\x1b[2J@x")
    shown = _cli("next-update", "45m")
    assert "\x1b" not in shown and "night\\u001b[2J@x" in shown
    assert "Next update: 2026-03-01 12:40 UTC (in 45 min)" in shown
    with Memory.open() as memory:
        assert memory.escalation_status("shop", now=NOW).mode.value == "normal"
        brief = memory.rotation_brief(mission="shop", from_operator="night@x", for_operator="day@x",
                                      now=NOW + timedelta(hours=1), token_budget=1500, archive=False, embed_archived=False)
    block = next(shown for item, shown in brief.entries if item.section.name == "CRISIS")
    assert "EU customers report slow payments · status investigating" in block
    assert "OVERDUE by 20 min" in block  # the update was due at 12:40; the brief is read at 13:00
    result = CliRunner().invoke(app, ["incident", "--mission", "shop", "--json"])
    assert result.exit_code == 0 and "\x1b" not in result.output and '"commander": "night\\u001b[2J@x"' in result.output
