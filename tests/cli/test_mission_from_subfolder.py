"""Every shell resolves the same default mission from a subfolder of a repository (issue 36): the
repository's (its git top-level's folder name), never the subfolder's own name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mission_memory.cli.app import app
from mission_memory.hook.session_start import digest_for
from tests.conftest import GitRepo

runner = CliRunner()


@pytest.fixture
def in_subfolder(two_missions: tuple[GitRepo, GitRepo], monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working directory is ``archive/src/ledger``; ``uploader`` and ``archive`` are stored."""
    _, archive = two_missions
    folder = archive.root / "src" / "ledger"
    monkeypatch.chdir(folder)
    monkeypatch.delenv("MISSION_MEMORY_EVENT_MISSION", raising=False)
    return folder


def _run(args: list[str]) -> dict:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_mission_of_a_subfolder_is_the_repository_s(in_subfolder: Path) -> None:
    from mission_memory.mission_scope import mission_here

    assert mission_here() == "archive"
    assert mission_here(in_subfolder) == "archive"


def test_query_brief_and_decision_from_a_subfolder_use_the_repository_mission(in_subfolder: Path) -> None:
    assert _run(["query", "Which database holds the upload ledger?"])["mission_scope"]["mission"] == "archive"
    assert _run(["brief", "--for", "ana@example.org"])["mission"] == "archive"
    recorded = _run(["decide", "Keep the ledger small", "--decision",
                     "The ledger keeps one row per upload.", "--rationale", "Audits read it whole."])
    assert recorded["mission"] == "archive"


def test_feed_and_escalation_status_from_a_subfolder_use_the_repository_mission(
    in_subfolder: Path, tmp_path: Path
) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text(json.dumps({
        "id": "ev-1", "time": "2026-03-01T12:00:00+00:00", "sector": "east", "type": "telemetry",
        "criticality": 0.2, "source": "test", "text": "Heartbeat from relay station 1.",
    }) + "\n")
    fed = _run(["feed", str(events), "--now", "2026-03-01T12:01:00+00:00", "--no-embed"])
    assert fed["mission"] == "archive" and not fed["new_mission"]
    status = _run(["escalation", "status", "--now", "2026-03-01T12:01:00+00:00"])
    assert status["mission"] == "archive"


def test_correct_from_a_subfolder_uses_the_repository_mission(in_subfolder: Path) -> None:
    recorded = _run(["correct", "--class", "wrong-approach", "--category", "data", "--outcome", "modified",
                     "--summary", "The ledger stays in MongoDB."])
    assert recorded["mission"] == "archive"


def test_the_session_start_hook_in_a_subfolder_uses_the_repository_mission(in_subfolder: Path, data_dir: Path) -> None:
    text = digest_for(str(in_subfolder), data_dir)
    assert text.startswith("# mission-memory: pull digest for archive")


def test_a_captured_prompt_from_a_subfolder_belongs_to_the_repository_mission(in_subfolder: Path) -> None:
    from mission_memory.corrections.pipeline import mission_of_prompt

    assert mission_of_prompt(None, str(in_subfolder)) == "archive"
    assert mission_of_prompt("uploader", str(in_subfolder)) == "uploader"
    assert mission_of_prompt(None, None) == "unknown"


def test_the_mission_is_resolved_once() -> None:
    """No shell computes a default mission from a folder name of its own (one home: mission_scope)."""
    root = Path(__file__).resolve().parents[2] / "src" / "mission_memory"
    offenders = []
    for path in root.rglob("*.py"):
        text = path.read_text()
        for needle in ("Path.cwd().name", "cwd.name", "resolve().name", "PurePosixPath(cwd).name"):
            if needle in text and path.name != "mission_scope.py":
                offenders.append(f"{path.relative_to(root)}: {needle}")
    assert not offenders, offenders
