"""A mission's views count and list its own records only: another mission in the same store never
shows in its component suggestions, its event vector queue line or its escalation status."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mission_memory.cli.app import app

runner = CliRunner()
NOW = "2026-12-05T22:00:00+00:00"


def _events(path: Path, prefix: str, sector: str, n: int) -> Path:
    path.write_text("".join(json.dumps({
        "id": f"{prefix}{i}", "time": NOW, "source": "monitor", "sector": sector, "type": f"{prefix} kafka",
        "criticality": 0.5, "text": f"kafka consumer {prefix} lag {i}",
    }) + "\n" for i in range(n)), encoding="utf-8")
    return path


def _feed(path: Path, mission: str, *extra: str) -> None:
    result = runner.invoke(app, ["feed", str(path), "--mission", mission, "--new-mission", "--json", *extra])
    assert result.exit_code == 0, result.output


def _two_missions(tmp_path: Path) -> None:
    """Mission ``evil`` holds 2 embedded events in sector ``docs``; mission ``bad`` then stores 10
    events of sector ``sec`` without a vector."""
    _feed(_events(tmp_path / "evil.jsonl", "evil", "docs", 2), "evil")
    _feed(_events(tmp_path / "bad.jsonl", "bad", "sec", 10), "bad", "--no-embed")


def test_component_suggestions_list_the_missions_own_components(tmp_path: Path) -> None:
    _two_missions(tmp_path)
    result = runner.invoke(app, ["query", "kafka", "--mission", "evil", "--component", "nope"])
    assert result.exit_code != 0
    assert "(components, most records first: docs)" in result.output, result.output
    # a component of the other mission is no component of this one
    result = runner.invoke(app, ["query", "kafka", "--mission", "evil", "--component", "sec"])
    assert result.exit_code != 0 and "no component named 'sec' is stored" in result.output, result.output
    result = runner.invoke(app, ["query", "kafka", "--mission", "bad", "--component", "nope"])
    assert "(components, most records first: sec)" in result.output, result.output


def test_the_vector_queue_line_counts_the_missions_own_events(tmp_path: Path) -> None:
    _two_missions(tmp_path)
    result = runner.invoke(app, ["query", "kafka", "--mission", "evil", "--json"])
    assert result.exit_code == 0, result.output
    assert "without a vector" not in json.loads(result.stdout)["digest"]
    result = runner.invoke(app, ["query", "kafka", "--mission", "bad", "--json"])
    assert "10 events are stored without a vector yet" in json.loads(result.stdout)["digest"]
    result = runner.invoke(app, ["query", "kafka", "--all-missions", "--json"])
    assert "10 events are stored without a vector yet" in json.loads(result.stdout)["digest"]


def test_escalation_status_counts_the_missions_own_vector_queue(tmp_path: Path) -> None:
    _two_missions(tmp_path)
    result = runner.invoke(app, ["escalation", "status", "--mission", "evil", "--now", NOW, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["vector_queue"]["events"] == 0
    result = runner.invoke(app, ["escalation", "status", "--mission", "bad", "--now", NOW, "--json"])
    assert json.loads(result.stdout)["vector_queue"]["events"] == 10
