"""``escalation status --now T`` is a what-if: it assesses at T and stores nothing.

On main before this change it saved its result: asked at a later time, when the window held no event,
it stored "normal", so the next ``escalation status`` found the flood starting again (a new "since")
and the stored incident's start moved (the trial read 22:07:35, then 22:16:05).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.operations.escalation_state import STATE_KEY
from tests.operations.event_factory import burst


def _status(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(app, ["escalation", "status", "--mission", "ops", "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_a_status_at_another_time_changes_nothing_stored(data_dir: Path) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    with Memory.open(event_mission="ops") as memory:
        state = memory.record_events(burst(30, now - timedelta(minutes=2), spread=timedelta(minutes=2)),
                                     now=now, embed=False).escalation
        assert state.mode.value == "degraded"
        stored = memory.store.get_state("ops", STATE_KEY)
        incident = memory.incident("ops")
        assert incident is not None and incident.status != "resolved"
    later = _status("--now", (now + timedelta(minutes=30)).isoformat())
    assert later["mode"] == "normal"  # the what-if is answered …
    with Memory.open(event_mission="ops") as memory:
        assert memory.store.get_state("ops", STATE_KEY) == stored  # … and nothing of it stored
        after = memory.incident("ops")
        assert after is not None and (after.started, after.status) == (incident.started, incident.status)
    current = _status()
    assert current["mode"] == "degraded" and current["since"] == state.since.isoformat(), current  # type: ignore[union-attr]
