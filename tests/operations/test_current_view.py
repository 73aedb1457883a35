"""The current view (issue 24 item 6): ``events firing`` lists what is open now, ``escalation status --plot``
draws the event rate against the flood thresholds, and the digest's footer says when the entry cap, not
relevance, left critical events out."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.operations.sources.alertmanager import events_from_alertmanager
from tests.operations.event_factory import T0, burst, event

runner = CliRunner()


def _alert(name: str, fp: str, starts: datetime, status: str = "firing") -> dict[str, object]:
    return {"status": status, "labels": {"alertname": name, "severity": "critical", "service": "checkout"},
            "annotations": {"summary": f"{name} on checkout", "runbook_url": f"https://runbooks.internal/{name}"},
            "startsAt": starts.isoformat(), "endsAt": (starts + timedelta(minutes=5)).isoformat()
            if status == "resolved" else "0001-01-01T00:00:00Z", "fingerprint": fp}


def test_events_firing_lists_the_open_alerts_and_not_the_resolved_ones() -> None:
    with Memory.open(event_mission="estate") as memory:
        for name, fp, minutes in (("Down", "f1", 50), ("Slow", "f2", 30), ("Full", "f3", 20)):
            memory.record_events(events_from_alertmanager({"alerts": [_alert(name, fp, T0 - timedelta(minutes=minutes))]}),
                                 now=T0, embed=False)
        memory.record_events(events_from_alertmanager({"alerts": [_alert("Slow", "f2", T0 - timedelta(minutes=30),
                                                                          "resolved")]}), now=T0, embed=False)
    listed = runner.invoke(app, ["events", "firing", "--mission", "estate", "--json", "--now", T0.isoformat()])
    assert listed.exit_code == 0, listed.output
    alerts = json.loads(listed.output)
    assert [(a["type"], a["runbook_url"]) for a in alerts] == [
        ("Full", "https://runbooks.internal/Full"), ("Down", "https://runbooks.internal/Down")]
    table = runner.invoke(app, ["events", "firing", "--mission", "estate", "--now", T0.isoformat()])
    assert "Down" in table.output and "Slow" not in table.output
    before = runner.invoke(app, ["events", "firing", "--mission", "estate", "--json",
                                 "--now", (T0 - timedelta(minutes=40)).isoformat()])
    assert [a["type"] for a in json.loads(before.output)] == ["Down"]  # as of an earlier moment
    assert runner.invoke(app, ["events", "--json"]).exit_code == 0  # the retrieval events listing is still there


def test_escalation_status_plots_the_event_rate_and_the_thresholds(tmp_path: Path) -> None:
    with Memory.open(event_mission="ops") as memory:
        memory.record_events(burst(30, T0, spread=timedelta(minutes=6)), now=T0, embed=False)
    target = tmp_path / "rate.png"
    result = runner.invoke(app, ["escalation", "status", "--mission", "ops", "--now", T0.isoformat(), "--plot",
                                 str(target), "--hours", "1"])
    assert result.exit_code == 0, result.output
    assert f"Event rate plotted to {target}" in result.output
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and target.stat().st_size > 5000
    bad = runner.invoke(app, ["escalation", "status", "--mission", "ops", "--plot", str(tmp_path / "no" / "x.png")])
    assert bad.exit_code == 1 and "cannot write the plot to" in bad.output


def test_the_footer_says_when_the_entry_cap_left_critical_events_out() -> None:
    now = datetime.now(UTC)
    texts = ("Relay link lost at the northern ridge after the antenna mast collapsed",
             "Antenna fault on relay 7: link to the eastern posts is down",
             "Southern relay dropped its link; technicians suspect a waterlogged antenna cable",
             "Link loss west of the river, relay antenna pointing drifted in the storm",
             "Relay on the water tower lost the link: antenna amplifier burnt out",
             "Antenna of the depot relay shot through, link lost since noon",
             "Bridge relay link lost, the antenna feed line was cut by shelling",
             "Forest relay antenna iced over, the link fails every few minutes",
             "Harbour relay reports antenna fault and total link loss",
             "Airfield relay link lost; the antenna rotor motor jammed",
             "Hill relay antenna struck by lightning, no link",
             "Link lost at the school relay after its antenna was stolen",
             "Mine relay antenna flooded; link lost to the lower posts",
             "Relay at the crossroads lost its link when the antenna mast bent")
    distinct = [event(i, now - timedelta(minutes=11 * i), sector=f"sector-{i}", type_=f"link_loss_{i}",
                      criticality=0.9, text=text) for i, text in enumerate(texts)]
    with Memory.open(event_mission="ops", max_digest_entries=10) as memory:  # a cap below the 14 events
        assert memory.record_events(distinct, embed=False).escalation.mode.value == "normal"
        memory.embed_pending()
        digest = memory.query("relay link lost antenna fault", scope="domain", filters={"mission": "ops"})
    assert len(digest.entries) == 10
    assert "left out by the 10-entry cap, not for relevance" in digest.text
    assert "nothing relevant omitted" not in digest.text or "critical events" in digest.text.splitlines()[-1]
