"""Small messages of the handover commands that named the wrong cause."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.config import load_settings
from mission_memory.errors import InputError
from mission_memory.records import AccessLevel
from mission_memory.teams.access_control import AccessContext

NOW = datetime(2026, 12, 1, 10, 1, tzinfo=UTC)


def test_acknowledging_on_a_mission_that_is_not_stored_says_so(tmp_path: Path) -> None:
    """``brief ack --mission nosuch`` said to run ``mission-memory brief`` first."""
    with Memory(load_settings(data_dir=tmp_path / "data")) as memory:
        memory.record_events([{"id": "e", "time": "2026-12-01T10:00:00Z", "sector": "s", "type": "t",
                               "criticality": 0.3, "text": "x"}], mission="shop", embed=False,
                             now=NOW)
        with pytest.raises(InputError, match=r"no mission named 'nosuch' is stored .*shop"):
            memory.acknowledge_brief(for_operator="day@x", mission="nosuch")


def test_a_lower_clearance_is_not_told_no_handover_was_archived(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over a team server an ``internal`` reader was told "none archived" while restricted briefs existed."""
    with Memory(load_settings(data_dir=tmp_path / "data")) as memory:
        memory.record_events([{"id": "e", "time": "2026-12-01T10:00:00Z", "sector": "s", "type": "t",
                               "criticality": 0.3, "text": "x"}], mission="shop", embed=False,
                             now=NOW)
        reader = AccessContext("bob", AccessLevel.INTERNAL)
        brief = memory.rotation_brief(mission="shop", access=reader, embed_archived=False)
    assert "none archived on this mission before this shift that your clearance shows" in brief.text


def test_an_event_from_the_future_is_an_error_naming_the_file(tmp_path: Path) -> None:
    """Other ``feed`` errors named the file (``bad.jsonl line 2: …``); this one said only ``events[0]``."""
    path = tmp_path / "late.jsonl"
    path.write_text('{"id": "b-2", "time": "2030-01-01T00:00:00Z", "sector": "s", "type": "t", "criticality": 0.5,'
                    ' "text": "from the future"}\n', encoding="utf-8")
    done = CliRunner().invoke(app, ["feed", str(path), "--mission", "shop", "--no-embed"])
    assert done.exit_code == 1
    assert " ".join(done.stderr.split()).startswith(f"Error: {path}: events[0] (id 'b-2'): time 2030-01-01")
