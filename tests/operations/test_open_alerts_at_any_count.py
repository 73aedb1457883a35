"""Open alerts hold at any count (issue 37): the open-alert state kept only the newest 5,000 open alerts
of a mission, so an outage with more dropped the oldest open alerts silently (from ``events firing``,
the brief's floor and the incident). Here 12,000 open alerts are all kept, counted and closed one by
one, on a real SQLite store, and a one-alert intake among them stays cheap (it does not rewrite them all)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.operations.alert_state import open_alerts, update_open_alerts
from mission_memory.operations.domain_events import DomainEvent, EventState
from mission_memory.stores.sqlite import SqliteStore

T0 = datetime(2026, 3, 1, 8, 0, tzinfo=UTC)
OPEN = 12_000
INTAKE = 4_000


def _alert(i: int, *, resolved: bool = False) -> DomainEvent:
    start = T0 + timedelta(milliseconds=20 * i)  # the first opened is the oldest
    return DomainEvent(id=f"am-{i}", time=start, sector=f"rack-{i % 40}", type="HostDown", criticality=0.9,
                       source="alertmanager", text=f"host edge-{i:05d} unreachable", fingerprint=f"fp-{i:05d}",
                       labels=(("instance", f"edge-{i:05d}:9100"),),
                       state=EventState.RESOLVED if resolved else EventState.FIRING,
                       ends_at=T0 + timedelta(hours=2) if resolved else None)


def test_twelve_thousand_open_alerts_are_all_kept_and_closed_one_by_one(tmp_path: object) -> None:
    from pathlib import Path

    store = SqliteStore(Path(str(tmp_path)) / "mm.sqlite3")
    try:
        began = time.perf_counter()
        for first in range(0, OPEN, INTAKE):  # three intakes of 4,000 new alerts each
            count = update_open_alerts(store, "prod", [_alert(i) for i in range(first, first + INTAKE)])
            assert count == first + INTAKE
        opened_s = time.perf_counter() - began
        began = time.perf_counter()
        alerts = open_alerts(store, "prod")
        read_s = time.perf_counter() - began
        assert len(alerts) == OPEN
        assert {a.fingerprint for a in alerts} == {f"fp-{i:05d}" for i in range(OPEN)}  # the oldest too
        # one more notification of the oldest alert and one new alert: an intake of two
        assert update_open_alerts(store, "prod", [_alert(0), _alert(OPEN)]) == OPEN + 1
        # the oldest resolves: exactly it closes, the rest stay open
        began = time.perf_counter()
        assert update_open_alerts(store, "prod", [_alert(0, resolved=True)]) == OPEN
        small_s = time.perf_counter() - began
        assert "fp-00000" not in {a.fingerprint for a in open_alerts(store, "prod")}
        # seconds, not minutes; a one-alert intake does not rewrite them all
        assert opened_s < 30 and read_s < 5 and small_s < 1, (opened_s, read_s, small_s)
    finally:
        store.close()


def test_events_firing_and_the_brief_count_every_open_alert_above_five_thousand(data_dir: object) -> None:
    hosts = 6_000
    now = T0 + timedelta(hours=1)
    with Memory.open() as memory:
        memory.record_events([_alert(0)], mission="prod", now=now, embed=False)  # the mission and its first alert
        update_open_alerts(memory.store, "prod", [_alert(i) for i in range(1, hosts)])  # as an intake keeps them
        began = time.perf_counter()
        brief = memory.rotation_brief(mission="prod", for_operator="bob@example.org", token_budget=2500, now=now)
        brief_s = time.perf_counter() - began
    assert f"Open alerts ({hosts}" in brief.text, brief.text[:2000]
    result = CliRunner().invoke(app, ["events", "firing", "--mission", "prod", "--json"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.output)
    assert len(listed) == hosts
    assert brief_s < 30, brief_s  # the floor groups them: it does not render 6,000 lines many times over
