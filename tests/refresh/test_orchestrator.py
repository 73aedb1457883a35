"""The refresh pass end to end: a real git repository, a local task folder, the real embedder and store."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner
from werkzeug import Request, Response

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.config import Settings
from mission_memory.errors import BackendUnavailable
from mission_memory.records import Layer, Record, RecordKind, SourceKind
from mission_memory.refresh.ledger import StoreSpendLedger
from mission_memory.refresh.orchestrator import RefreshReport, refresh_once, refresh_status
from mission_memory.refresh.summarizers import ExtractiveSummarizer, SummaryMaterial, SummaryResult
from mission_memory.trackers.base import Task, TaskComment
from mission_memory.trackers.local_files import LocalFolderTracker
from tests.conftest import GitRepo
from tests.refresh.push_mission import (
    EIGHT_DAYS_LATER,
    FIRST_PASS,
    WITHIN_DAY,
    PushMission,
    build_push_mission,
)

NO_LLM = Settings(llm_base_url=None, llm_model=None)


@pytest.fixture
def mission(make_git_repo: Callable[[str], GitRepo], tmp_path: Path) -> PushMission:
    return build_push_mission(make_git_repo, tmp_path)


@pytest.fixture
def memory() -> Iterator[Memory]:
    with Memory.open() as opened:
        yield opened


def _artifacts(memory: Memory, task: str | None = None) -> list[Record]:
    out = [
        record
        for batch in memory.store.iterate()
        for record in batch
        if record.kind is RecordKind.REFRESH_ARTIFACT and (task is None or record.attributes["task"] == task)
    ]
    return sorted(out, key=lambda r: (r.provenance.time, r.attributes["artifact"]))


def _by_artifact(records: list[Record], when: datetime) -> dict[str, Record]:
    return {r.attributes["artifact"]: r for r in records if r.provenance.time == when}


def _pass(memory: Memory, mission: PushMission, now: datetime, **kwargs: Any) -> RefreshReport:
    tracker = kwargs.pop("tracker", None) or LocalFolderTracker(mission.tasks_dir)
    settings = kwargs.pop("settings", NO_LLM)
    return refresh_once(memory.store, memory.embedder, tracker, mission.repo.root, now, settings, **kwargs)


def test_a_pass_stores_three_workflow_artifacts_with_provenance_that_query_finds(
    mission: PushMission, memory: Memory
) -> None:
    memory.ingest_repository(mission.repo.root)  # the usual order: ingest the mission, then refresh
    report = _pass(memory, mission, FIRST_PASS)

    assert [r["task"] for r in report.refreshed] == ["OPS-7", "OPS-9"]  # the active task first
    assert report.failed == [] and report.skipped == []
    ops7 = _by_artifact(_artifacts(memory, "OPS-7"), FIRST_PASS)
    assert set(ops7) == {"summary", "tool_lineage", "open_questions"}
    for record in ops7.values():
        assert record.layer is Layer.WORKFLOW
        assert record.provenance.kind is SourceKind.PUSH_REFRESH
        assert record.provenance.ref == "OPS-7"
        assert record.provenance.commit == mission.c2  # the repository as of the pass: C3 is later
        assert record.attributes["commits"] == [mission.c2]
        assert len(record.attributes["comments"]) == 1
    assert "retry queue" in ops7["summary"].text.lower()
    assert "cap the scan retries" in ops7["open_questions"].text
    assert "cap the antivirus retries" in ops7["open_questions"].text  # the TODO added in src/scan.py
    assert "Cap antivirus scan retries at five attempts" in ops7["open_questions"].text  # the proposed ADR
    assert "search_logs" in ops7["tool_lineage"].text or "no tool" in ops7["tool_lineage"].text
    assert {a["id"] for a in report.refreshed[0]["artifacts"]} == {r.id for r in ops7.values()}
    assert len(_artifacts(memory)) == 6

    result = CliRunner().invoke(app, ["query", "antivirus scan retry queue open questions", "--json"])
    assert result.exit_code == 0, result.output
    found = {e["record_id"] for e in json.loads(result.output)["entries"]}
    assert {r.id for r in ops7.values()} <= found


def test_a_second_pass_within_a_day_refreshes_nothing_even_with_new_commits(
    mission: PushMission, memory: Memory
) -> None:
    _pass(memory, mission, FIRST_PASS)
    again = _pass(memory, mission, WITHIN_DAY)

    assert again.refreshed == [] and again.failed == []
    assert {s["task"] for s in again.skipped} == {"OPS-7", "OPS-9"}
    for item in again.skipped:
        assert datetime.fromisoformat(item["next_due"]) >= FIRST_PASS + timedelta(hours=24)
    assert len(_artifacts(memory)) == 6


def test_a_pass_eight_days_later_refreshes_again_with_the_tool_change_and_new_activity(
    mission: PushMission, memory: Memory
) -> None:
    _pass(memory, mission, FIRST_PASS)
    _pass(memory, mission, WITHIN_DAY)
    mission.add_late_comment()
    later = _pass(memory, mission, EIGHT_DAYS_LATER)

    assert [r["task"] for r in later.refreshed] == ["OPS-7", "OPS-9"]
    ops7 = _by_artifact(_artifacts(memory, "OPS-7"), EIGHT_DAYS_LATER)
    assert ops7["summary"].attributes["commits"] == [mission.c3]
    assert len(ops7["summary"].attributes["comments"]) == 1  # only the comment added since
    lineage = ops7["tool_lineage"].text
    assert "search_logs" in lineage and "severity" in lineage and "limit" in lineage
    assert "do we also need it in the digest?" in ops7["open_questions"].text
    assert len(_artifacts(memory)) == 12  # each refresh adds its own artifacts
    idle = _by_artifact(_artifacts(memory, "OPS-9"), EIGHT_DAYS_LATER)
    assert idle["summary"].attributes["commits"] == []


def test_a_replayed_pass_at_the_same_time_adds_no_duplicate(mission: PushMission, memory: Memory) -> None:
    _pass(memory, mission, FIRST_PASS)
    records = memory.status()["records"]
    for key in ("OPS-7", "OPS-9"):  # as if the pass died after storing, before writing the state
        memory.store.set_state("__refresh__", f"task:{key}", json.dumps({"key": key}))
    replay = _pass(memory, mission, FIRST_PASS)
    assert len(replay.refreshed) == 2
    assert memory.status()["records"] == records


class _CommentsFailFor:
    """The local tracker, except that reading the comments of one task fails."""

    def __init__(self, inner: LocalFolderTracker, failing_key: str) -> None:
        self.kind = inner.kind
        self.inner = inner
        self.failing_key = failing_key

    def list_tasks(self, label: str = "LONG-TERM") -> list[Task]:
        return self.inner.list_tasks(label)

    def list_comments(self, task: Task) -> list[TaskComment]:
        if task.key == self.failing_key:
            raise BackendUnavailable(f"comments of {task.key}: tracker answered 503")
        return self.inner.list_comments(task)

    def unreadable_items(self) -> list[tuple[str, str]]:
        return self.inner.unreadable_items()


class _SummaryFailsFor:
    """The extractive summarizer, except that it crashes for one task (a bug, not a domain error)."""

    name = "extractive"

    def __init__(self, failing_key: str) -> None:
        self.inner = ExtractiveSummarizer()
        self.failing_key = failing_key

    def summarize(self, material: SummaryMaterial) -> SummaryResult:
        if material.task.key == self.failing_key:
            raise ZeroDivisionError("division by zero")
        return self.inner.summarize(material)


def test_one_task_failing_to_read_is_recorded_and_the_other_task_is_still_refreshed(
    mission: PushMission, memory: Memory
) -> None:
    tracker = _CommentsFailFor(LocalFolderTracker(mission.tasks_dir), "OPS-7")
    report = _pass(memory, mission, FIRST_PASS, tracker=tracker)

    assert report.failed == [{"task": "OPS-7", "error": "comments of OPS-7: tracker answered 503"}]
    assert [r["task"] for r in report.refreshed] == ["OPS-9"]
    assert _artifacts(memory, "OPS-7") == []
    queue = {item["task"]: item for item in refresh_status(memory.store, NO_LLM, now=FIRST_PASS)["queue"]}
    assert queue["OPS-7"]["last_error"] == "comments of OPS-7: tracker answered 503"
    assert queue["OPS-7"]["due"] is True and queue["OPS-9"]["due"] is False

    healed = _pass(memory, mission, FIRST_PASS + timedelta(hours=1))
    assert [r["task"] for r in healed.refreshed] == ["OPS-7"]
    queue = {item["task"]: item for item in refresh_status(memory.store, NO_LLM, now=FIRST_PASS)["queue"]}
    assert queue["OPS-7"]["last_error"] is None


def test_one_task_crashing_while_built_is_recorded_and_the_pass_goes_on(
    mission: PushMission, memory: Memory
) -> None:
    report = _pass(memory, mission, FIRST_PASS, summarizer=_SummaryFailsFor("OPS-7"))

    assert report.failed == [{"task": "OPS-7", "error": "ZeroDivisionError: division by zero"}]
    assert [r["task"] for r in report.refreshed] == ["OPS-9"]
    assert _artifacts(memory, "OPS-7") == []


def test_an_unreadable_task_state_fails_that_task_once_and_heals_on_the_next_pass(
    mission: PushMission, memory: Memory
) -> None:
    memory.store.set_state("__refresh__", "task:OPS-9", "{not json")
    report = _pass(memory, mission, FIRST_PASS)
    assert [f["task"] for f in report.failed] == ["OPS-9"] and [r["task"] for r in report.refreshed] == ["OPS-7"]
    healed = _pass(memory, mission, FIRST_PASS + timedelta(minutes=5))
    assert [r["task"] for r in healed.refreshed] == ["OPS-9"] and healed.failed == []


def test_memory_refresh_once_and_refresh_status_run_the_pass_with_settings_from_the_environment(
    mission: PushMission, memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("LLM_BASE_URL", "LLM_MODEL"):
        monkeypatch.delenv(f"MISSION_MEMORY_{name}", raising=False)
    monkeypatch.setenv("MISSION_MEMORY_LLM_DAILY_TOKEN_CAP", "5000")
    with Memory.open() as opened:  # settings are read when the memory opens
        report = opened.refresh_once(LocalFolderTracker(mission.tasks_dir), mission.repo.root, now=FIRST_PASS)
        status = opened.refresh_status(now=FIRST_PASS)
    assert report.to_json()["refreshed"][0]["summarizer"] == "extractive"
    assert [q["task"] for q in status["queue"]] == ["OPS-7", "OPS-9"]
    assert status["llm"]["daily_cap"] == 5000 and status["llm"]["configured"] is False


def test_status_shows_the_queue_the_latest_refreshes_and_llm_spend_against_the_cap(
    mission: PushMission, memory: Memory
) -> None:
    _pass(memory, mission, FIRST_PASS)
    StoreSpendLedger(memory.store).add(FIRST_PASS.date(), 1234)
    settings = Settings(llm_base_url="http://127.0.0.1:9/v1", llm_model="m", llm_daily_token_cap=5000)

    data = refresh_status(memory.store, settings, now=FIRST_PASS + timedelta(hours=1))

    assert [item["task"] for item in data["queue"]] == ["OPS-7", "OPS-9"]  # soonest due first
    assert all(not item["due"] and item["last_refresh"] == FIRST_PASS.isoformat() for item in data["queue"])
    assert [r["task"] for r in data["recent_refreshes"]] == ["OPS-7", "OPS-9"]
    assert data["llm"] == {"configured": True, "model": "m", "day": "2025-01-05", "spent_today": 1234,
                           "daily_cap": 5000, "remaining": 3766}
    assert data["last_pass"]["refreshed"] == 2


def test_a_pull_that_returns_a_task_artifact_feeds_the_time_since_last_pull_signal(
    mission: PushMission, memory: Memory
) -> None:
    start = datetime.now(UTC) - timedelta(days=2)  # retrieval events carry the wall-clock time
    _pass(memory, mission, start)
    digest = memory.query("Quarterly key rotation runbook", scope="workflow")
    assert any(e.record.attributes.get("task") == "OPS-9" for e in digest.entries)

    _pass(memory, mission, start + timedelta(days=3))
    pulled = memory.retrieval_events(1)[0].time
    queue = {q["task"]: q for q in refresh_status(memory.store, NO_LLM)["queue"]}
    expected = (start + timedelta(days=3) - pulled).total_seconds() / 3600
    assert queue["OPS-9"]["signals"]["hours_since_last_pull"] == pytest.approx(expected)


def test_the_spend_ledger_keeps_one_total_per_day() -> None:
    with Memory.open() as memory:
        ledger = StoreSpendLedger(memory.store)
        ledger.add(date(2025, 1, 5), 100)
        ledger.add(date(2025, 1, 5), 50)
        ledger.add(date(2025, 1, 6), 7)
        assert (ledger.spent_on(date(2025, 1, 5)), ledger.spent_on(date(2025, 1, 6))) == (150, 7)
        assert ledger.spent_on(date(2025, 1, 7)) == 0


# -- the LLM path -----------------------------------------------------------------------------------


def _chat_reply(content: str, tokens: int) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1736078400, "model": "ops-summarizer",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": tokens - 40, "completion_tokens": 40, "total_tokens": tokens},
    }


def _llm_settings(httpserver: HTTPServer, cap: int = 200_000) -> Settings:
    return Settings(llm_base_url=httpserver.url_for("/v1"), llm_model="ops-summarizer",
                           llm_api_key="sk-test", llm_daily_token_cap=cap)


def _chat_handler(summary: str, questions: list[str], tokens: int) -> Callable[[Request], Response]:
    def handle(request: Request) -> Response:
        system = json.loads(request.get_data())["messages"][0]["content"].lower()
        content = "\n".join(f"- {q}" for q in questions) if "open questions" in system else summary
        return Response(json.dumps(_chat_reply(content, tokens)), content_type="application/json")

    return handle


def test_the_llm_writes_the_summary_through_the_chat_completions_endpoint_and_spend_is_counted(
    mission: PushMission, memory: Memory, httpserver: HTTPServer
) -> None:
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(
        _chat_handler("The retry queue for antivirus scans landed in src/scan.py.",
                      ["Is five retries enough for a slow scanner? [ref: comment:OPS-7#c1]"], 300)
    )
    report = _pass(memory, mission, FIRST_PASS, settings=_llm_settings(httpserver))

    ops7 = report.refreshed[0]
    assert ops7["summarizer"] == "chat-completions:ops-summarizer" and ops7["fallback_reason"] is None
    artifacts = _by_artifact(_artifacts(memory, "OPS-7"), FIRST_PASS)
    assert "The retry queue for antivirus scans landed in src/scan.py." in artifacts["summary"].text
    assert "Is five retries enough for a slow scanner? (comment:OPS-7#c1)" in artifacts["open_questions"].text
    assert len(httpserver.log) == 2  # OPS-7: summary + questions; idle OPS-9 needs no call
    request = httpserver.log[0][0]
    assert request.headers["Authorization"] == "Bearer sk-test"
    assert json.loads(request.get_data())["model"] == "ops-summarizer"
    spent = StoreSpendLedger(memory.store).spent_on(FIRST_PASS.date())
    assert spent == 300 * len(httpserver.log) and spent > 0
    status = refresh_status(memory.store, _llm_settings(httpserver), now=FIRST_PASS)
    assert status["llm"]["spent_today"] == spent


def test_a_failing_llm_endpoint_falls_back_to_extractive_and_says_so_in_the_artifact(
    mission: PushMission, memory: Memory, httpserver: HTTPServer
) -> None:
    httpserver.expect_request("/v1/chat/completions").respond_with_data("upstream crashed", status=500)
    report = _pass(memory, mission, FIRST_PASS, settings=_llm_settings(httpserver))

    assert report.failed == [] and len(report.refreshed) == 2  # never dropped
    ops7 = report.refreshed[0]
    assert ops7["fallback_reason"] and "500" in ops7["fallback_reason"]
    artifacts = _by_artifact(_artifacts(memory, "OPS-7"), FIRST_PASS)
    assert "extractive" in artifacts["summary"].text.splitlines()[0].lower()
    assert artifacts["summary"].attributes["fallback_reason"] == ops7["fallback_reason"]
    assert artifacts["open_questions"].text.startswith("LLM question extraction not used:")
    assert "Should we cap the scan retries at five?" in artifacts["open_questions"].text  # heuristics still ran
    assert StoreSpendLedger(memory.store).spent_on(FIRST_PASS.date()) == 0


def test_a_reached_daily_cap_falls_back_without_calling_the_llm_and_status_shows_it(
    mission: PushMission, memory: Memory, httpserver: HTTPServer
) -> None:
    httpserver.expect_request("/v1/chat/completions").respond_with_handler(_chat_handler("unused", [], 300))
    StoreSpendLedger(memory.store).add(FIRST_PASS.date(), 990)
    settings = _llm_settings(httpserver, cap=1000)
    report = _pass(memory, mission, FIRST_PASS, settings=settings)

    assert httpserver.log == []
    ops7, idle = report.refreshed
    assert ops7["summarizer"] == "extractive" and "daily LLM token cap reached (990 of 1000)" in ops7["fallback_reason"]
    assert idle["fallback_reason"] is None  # nothing happened on OPS-9: no LLM call was due at all
    summary = _by_artifact(_artifacts(memory, "OPS-7"), FIRST_PASS)["summary"]
    assert "cap" in summary.text.splitlines()[0].lower()
    llm = refresh_status(memory.store, settings, now=FIRST_PASS)["llm"]
    assert (llm["spent_today"], llm["daily_cap"], llm["remaining"]) == (990, 1000, 10)
    recent = {r["task"]: r for r in refresh_status(memory.store, settings, now=FIRST_PASS)["recent_refreshes"]}
    assert recent["OPS-7"]["fallback_reason"] == ops7["fallback_reason"]


# -- a pass killed mid-way -------------------------------------------------------------------------


_DRIVER = textwrap.dedent(
    """
    import os, signal, sys
    from datetime import datetime
    from pathlib import Path

    from mission_memory.api import Memory
    from mission_memory.config import Settings
    from mission_memory.trackers.local_files import LocalFolderTracker
    from mission_memory.refresh.orchestrator import refresh_once
    from mission_memory.refresh.summarizers import ExtractiveSummarizer
    from mission_memory.stores.sqlite import SqliteStore

    where = os.environ["KILL_WHERE"]
    inner = ExtractiveSummarizer()

    class KillingSummarizer:
        name = "extractive"
        calls = 0

        def summarize(self, material):
            KillingSummarizer.calls += 1
            if where == "building-second-task" and KillingSummarizer.calls == 2:
                os.kill(os.getpid(), signal.SIGKILL)
            return inner.summarize(material)

    inserted = 0
    original_insert = SqliteStore._insert_record

    def insert_then_die(self, tx, record, now):
        global inserted
        rowid = original_insert(self, tx, record, now)
        inserted += 1
        if where == "inside-the-transaction" and inserted == 2:
            print("killing after inserting artifact", inserted, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        return rowid

    SqliteStore._insert_record = insert_then_die
    with Memory.open() as memory:
        refresh_once(memory.store, memory.embedder, LocalFolderTracker(Path(sys.argv[1])), Path(sys.argv[2]),
                     datetime.fromisoformat(sys.argv[3]), Settings(llm_base_url=None, llm_model=None),
                     KillingSummarizer())
    print("finished", flush=True)
    """
)


@pytest.mark.parametrize("where", ["inside-the-transaction", "building-second-task"])
def test_a_refresh_killed_mid_pass_leaves_no_half_stored_artifact(
    mission: PushMission, data_dir: Path, tmp_path: Path, where: str
) -> None:
    driver = tmp_path / "driver.py"
    driver.write_text(_DRIVER, encoding="utf-8")
    env = dict(os.environ, MISSION_MEMORY_DATA_DIR=str(data_dir), KILL_WHERE=where)
    done = subprocess.run(
        [sys.executable, str(driver), str(mission.tasks_dir), str(mission.repo.root), FIRST_PASS.isoformat()],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert "finished" not in done.stdout

    with sqlite3.connect(data_dir / "memory.db") as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with Memory.open() as memory:
        per_task: dict[str, int] = {}
        for record in _artifacts(memory):
            per_task[record.attributes["task"]] = per_task.get(record.attributes["task"], 0) + 1
        assert all(n == 3 for n in per_task.values()), per_task
        expected = {} if where == "inside-the-transaction" else {"OPS-7": 3}
        assert per_task == expected
        # The killed task was not marked refreshed: the next pass refreshes it completely.
        report = refresh_once(memory.store, memory.embedder, LocalFolderTracker(mission.tasks_dir),
                              mission.repo.root, FIRST_PASS, NO_LLM)
        assert "OPS-9" in {r["task"] for r in report.refreshed}
        assert all(n == 3 for n in _count_by_task(memory).values())
        assert memory.store.integrity_check() == "ok"


def _count_by_task(memory: Memory) -> dict[str, int]:
    out: dict[str, int] = {}
    for record in _artifacts(memory):
        out[record.attributes["task"]] = out.get(record.attributes["task"], 0) + 1
    return out


def test_a_pass_before_the_first_commit_still_refreshes_every_task(mission: PushMission, memory: Memory) -> None:
    early = datetime(2024, 12, 31, tzinfo=UTC)
    report = _pass(memory, mission, early)
    assert report.failed == []
    assert {r["task"] for r in report.refreshed} == {"OPS-7", "OPS-9"}
    lineage = _by_artifact(_artifacts(memory, "OPS-9"), early)["tool_lineage"]
    assert "no commit" in lineage.text and lineage.provenance.commit is None
