"""The ``refresh`` command group: ``once``, ``status``, ``run`` — JSON shapes, messages, the schedule loop."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner

from mission_memory.cli.app import app
from mission_memory.errors import BackendUnavailable, InputError
from mission_memory.refresh.cron_loop import run_schedule
from tests.conftest import GitRepo
from tests.refresh.push_mission import (
    EIGHT_DAYS_LATER,
    FIRST_PASS,
    WITHIN_DAY,
    PushMission,
    build_push_mission,
)
from tests.trackers.test_plane import (
    BASE,
    COMMENTS,
    ITEM_7,
    ITEM_9,
    KEY,
    PROJECT,
    SLUG,
    envelope,
    serve_project,
)

runner = CliRunner()


@pytest.fixture
def mission(make_git_repo: Callable[[str], GitRepo], tmp_path: Path) -> PushMission:
    return build_push_mission(make_git_repo, tmp_path)


@pytest.fixture(autouse=True)
def no_llm(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LLM_BASE_URL", "LLM_MODEL", "LLM_API_KEY", "PLANE_API_KEY", "GITHUB_TOKEN", "REFRESH_PASS_BUDGET_SECONDS"):
        monkeypatch.delenv(f"MISSION_MEMORY_{name}", raising=False)


def _once(mission: PushMission, now: datetime, *extra: str) -> dict[str, Any]:
    args = ["refresh", "once", "--tracker", "local", "--tasks-dir", str(mission.tasks_dir),
            "--repo", str(mission.repo.root), "--now", now.isoformat(), "--json", *extra]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_refresh_once_json_lists_refreshed_skipped_and_failed_and_query_finds_the_artifacts(
    mission: PushMission,
) -> None:
    first = _once(mission, FIRST_PASS)
    assert set(first) >= {"refreshed", "skipped", "failed"}
    assert [r["task"] for r in first["refreshed"]] == ["OPS-7", "OPS-9"]
    assert {a["artifact"] for a in first["refreshed"][0]["artifacts"]} == {"summary", "tool_lineage", "open_questions"}

    result = runner.invoke(app, ["query", "Antivirus scan retry queue: open questions", "--scope", "workflow", "--json"])
    assert result.exit_code == 0, result.output
    entries = json.loads(result.stdout)["entries"]
    refreshed = [e for e in entries if e["kind"] == "refresh_artifact"]
    assert {a["id"] for a in first["refreshed"][0]["artifacts"]} <= {e["record_id"] for e in refreshed}
    assert all(e["source"]["kind"] == "push-refresh" for e in refreshed)


def test_refresh_once_now_replays_the_day_and_the_week(mission: PushMission) -> None:
    _once(mission, FIRST_PASS)
    within = _once(mission, WITHIN_DAY)
    assert within["refreshed"] == [] and {s["task"] for s in within["skipped"]} == {"OPS-7", "OPS-9"}
    later = _once(mission, EIGHT_DAYS_LATER)
    assert [r["task"] for r in later["refreshed"]] == ["OPS-7", "OPS-9"] and later["skipped"] == []


def test_refresh_once_label_reaches_the_pass_through_memory(mission: PushMission) -> None:
    # OPS-7 carries LONG-TERM and antivirus, OPS-9 only LONG-TERM: the label picks OPS-7 alone.
    data = _once(mission, FIRST_PASS, "--label", "ANTIVIRUS")
    assert [r["task"] for r in data["refreshed"]] == ["OPS-7"] and data["skipped"] == []
    assert data["budget"] == {"seconds": 900.0, "used_up": False, "llm_calls_skipped": 0}


def test_refresh_once_prints_a_readable_report_without_json(mission: PushMission) -> None:
    result = runner.invoke(app, ["refresh", "once", "--tasks-dir", str(mission.tasks_dir), "--repo",
                                 str(mission.repo.root), "--now", "2025-01-05T12:00:00Z"])
    assert result.exit_code == 0, result.output
    assert "refreshed OPS-7: 3 artifacts, 1 commits, 1 comments, summary by extractive" in result.stdout
    assert "refreshed OPS-9" in result.stdout


@pytest.mark.parametrize("command", [["once"], ["run", "--schedule", "* * * * *", "--max-passes", "1"]])
def test_a_repo_that_is_not_a_folder_is_named_as_the_repo_flag(
    mission: PushMission, tmp_path: Path, command: list[str]
) -> None:
    """``--repo /nope`` said "ingest path /nope does not exist", naming no flag."""
    result = runner.invoke(app, ["refresh", *command, "--tasks-dir", str(mission.tasks_dir),
                                 "--repo", str(tmp_path / "nope")])
    assert result.exit_code == 1
    assert f"--repo {tmp_path / 'nope'}: no such folder" in " ".join(result.stderr.split())


def test_refresh_status_shows_the_queue_recent_refreshes_and_llm_spend(mission: PushMission) -> None:
    _once(mission, FIRST_PASS)
    result = runner.invoke(app, ["refresh", "status", "--now", "2025-01-05T13:00:00+00:00", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [q["task"] for q in data["queue"]] == ["OPS-7", "OPS-9"]
    assert all(datetime.fromisoformat(q["next_due"]) >= FIRST_PASS + timedelta(hours=24) for q in data["queue"])
    assert data["llm"]["spent_today"] == 0 and data["llm"]["daily_cap"] == 200_000
    assert len(data["recent_refreshes"]) == 2

    text = runner.invoke(app, ["refresh", "status", "--now", "2025-01-05T13:00:00+00:00"])
    assert text.exit_code == 0, text.output
    assert "OPS-7" in text.stdout and "OPS-9" in text.stdout
    assert "LLM: not configured (extractive summaries) · spent 0 of 200000 tokens on 2025-01-05" in text.stdout


def test_refresh_status_of_an_empty_store_is_an_empty_queue() -> None:
    result = runner.invoke(app, ["refresh", "status", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["queue"] == [] and data["last_pass"] is None


def test_refresh_once_reads_plane_with_the_key_from_the_environment(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve_project(httpserver)
    httpserver.expect_request(f"{BASE}/work-items/{ITEM_9}/comments/").respond_with_json(COMMENTS)
    httpserver.expect_request(f"{BASE}/work-items/{ITEM_7}/comments/").respond_with_json(
        envelope([], page=0, more=False, total=0)
    )
    monkeypatch.setenv("MISSION_MEMORY_PLANE_API_KEY", KEY)
    result = runner.invoke(app, [
        "refresh", "once", "--tracker", "plane", "--plane-url", httpserver.url_for("/").rstrip("/"),
        "--plane-workspace", SLUG, "--plane-project", PROJECT, "--now", "2025-03-01T00:00:00Z", "--json",
    ])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["tracker"] == "plane" and data["failed"] == []
    refreshed = {r["task"]: r for r in data["refreshed"]}
    assert set(refreshed) == {"OPS-7", "OPS-9"} and refreshed["OPS-9"]["comments"] == 2
    assert all(request.headers.get("X-API-Key") == KEY for request, _ in httpserver.log)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["refresh", "once"], "--tracker local needs --tasks-dir"),
        (["refresh", "once", "--tasks-dir", "{tasks}", "--now", "next tuesday"], "--now 'next tuesday' is not an ISO 8601"),
        (["refresh", "once", "--tracker", "plane", "--plane-url", "http://127.0.0.1:9"],
         "needs --plane-workspace, --plane-project"),
        (["refresh", "once", "--tracker", "plane", "--plane-url", "http://127.0.0.1:9", "--plane-workspace", "w",
          "--plane-project", "p"], "MISSION_MEMORY_PLANE_API_KEY"),
        (["refresh", "once", "--tracker", "github"], "--github-repo"),
        (["refresh", "once", "--tasks-dir", "{missing}"], "does not exist"),
        (["refresh", "run", "--schedule", "every half hour", "--tasks-dir", "{tasks}"], "not a valid cron expression"),
    ],
)
def test_refresh_commands_name_the_bad_input(mission: PushMission, tmp_path: Path, args: list[str], message: str) -> None:
    filled = [a.format(tasks=mission.tasks_dir, missing=tmp_path / "nope") for a in args]
    result = runner.invoke(app, filled)
    assert result.exit_code == 1
    assert "Error:" in result.stderr and message in " ".join(result.stderr.split())


def test_a_malformed_task_file_fails_alone_naming_the_file_and_the_other_tasks_are_refreshed(
    mission: PushMission,
) -> None:
    (mission.tasks_dir / "OPS-9.md").write_text(
        "---\nkey: OPS-9\ntitle: Broken\nlabels: [LONG-TERM]\ncreated: 2024-12-20\n---\n\n"
        "## Comments\n\n### x · not a time\n\nHi\n",
        encoding="utf-8",
    )
    args = ["refresh", "once", "--tasks-dir", str(mission.tasks_dir), "--now", FIRST_PASS.isoformat(), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    [failed] = report["failed"]
    assert failed["task"] == "OPS-9" and "OPS-9.md" in failed["error"] and "not ISO 8601" in failed["error"]
    assert report["refreshed"] or report["skipped"]
    status = json.loads(runner.invoke(app, ["refresh", "status", "--json"]).stdout)
    assert status["last_pass"] is not None and status["queue"]
    text = " ".join(runner.invoke(app, ["refresh", "status"]).stdout.split())
    assert "1 failed" in text and "failed: OPS-9:" in text and "not ISO 8601" in text


# -- the schedule loop ---------------------------------------------------------------------------------


class _FakeTime:
    """A clock that only moves when the loop waits."""

    def __init__(self, start: datetime) -> None:
        self.now = start
        self.waits: list[float] = []

    def clock(self) -> datetime:
        return self.now

    def wait(self, seconds: float) -> bool:
        self.waits.append(seconds)
        self.now += timedelta(seconds=seconds)
        return False


def test_the_loop_runs_one_pass_at_each_cron_firing() -> None:
    fake = _FakeTime(datetime(2025, 1, 5, 12, 10, tzinfo=UTC))
    fired: list[datetime] = []
    passes = run_schedule("*/30 * * * *", fired.append, clock=fake.clock, wait=fake.wait, max_passes=3)
    assert passes == 3
    assert [f.strftime("%H:%M") for f in fired] == ["12:30", "13:00", "13:30"]
    assert fake.waits == [1200.0, 1800.0, 1800.0]


def test_a_failing_pass_is_logged_and_the_loop_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    fake = _FakeTime(datetime(2025, 1, 5, 12, 0, tzinfo=UTC))
    calls: list[datetime] = []

    def flaky(fire: datetime) -> None:
        calls.append(fire)
        if len(calls) == 1:
            raise BackendUnavailable("plane at http://127.0.0.1:9 is unreachable")

    with caplog.at_level(logging.ERROR, logger="mission_memory.refresh.cron_loop"):
        passes = run_schedule("0 * * * *", flaky, clock=fake.clock, wait=fake.wait, max_passes=2)
    assert passes == 2 and len(calls) == 2
    assert "plane at http://127.0.0.1:9 is unreachable" in caplog.text


def test_a_long_pass_skips_the_firings_it_overlapped() -> None:
    fake = _FakeTime(datetime(2025, 1, 5, 11, 59, tzinfo=UTC))
    fired: list[datetime] = []

    def slow(fire: datetime) -> None:
        fired.append(fire)
        fake.now += timedelta(minutes=95)

    run_schedule("*/30 * * * *", slow, clock=fake.clock, wait=fake.wait, max_passes=2)
    assert [f.strftime("%H:%M") for f in fired] == ["12:00", "14:00"]


def test_the_loop_stops_when_told_to_while_waiting() -> None:
    fired: list[datetime] = []
    passes = run_schedule("*/30 * * * *", fired.append, clock=lambda: datetime(2025, 1, 5, tzinfo=UTC),
                          wait=lambda seconds: True)
    assert passes == 0 and fired == []


def test_an_invalid_cron_expression_is_refused() -> None:
    with pytest.raises(InputError, match="not a valid cron expression"):
        run_schedule("61 * * * *", lambda fire: None, clock=lambda: datetime.now(UTC), wait=lambda s: True)


def test_the_installed_refresher_stops_cleanly_on_sigterm(mission: PushMission, data_dir: Path) -> None:
    script = Path(sys.executable).parent / "mission-memory"
    env = dict(os.environ, MISSION_MEMORY_DATA_DIR=str(data_dir))
    with subprocess.Popen(
        [str(script), "refresh", "run", "--schedule", "0 0 1 1 *", "--tracker", "local",
         "--tasks-dir", str(mission.tasks_dir), "--repo", str(mission.repo.root)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as proc:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "Next refresh pass in" in line:
                break
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "stopping after the current pass" in err and "Refresher stopped after 0 passes." in err
