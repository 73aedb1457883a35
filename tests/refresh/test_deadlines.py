"""LLM calls have a total deadline and every refresh pass a budget (ADR 0019): an endpoint that
trickles or hangs costs at most the deadline, and once the pass budget is used up the remaining LLM
calls fall back to extractive at once, the report (and ``--json``) saying so. Real loopback servers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.config import Settings
from mission_memory.refresh.orchestrator import refresh_once, refresh_status
from mission_memory.refresh.summarizers import ChatCompletionsSummarizer, InMemorySpendLedger
from mission_memory.trackers.local_files import LocalFolderTracker
from tests.refresh.test_summarizers import MATERIAL, NOW, OK_BODY
from tests.slow_http_servers import SlowHttpServer, slow_http_server

PASS_AT = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
TASKS = 4


def _llm(base_url: str, deadline: float) -> ChatCompletionsSummarizer:
    return ChatCompletionsSummarizer(
        f"{base_url}/v1", "qwen2.5:7b", None, InMemorySpendLedger(), 100_000, deadline_seconds=deadline,
        clock=lambda: NOW,
    )


def test_an_llm_endpoint_trickling_its_answer_falls_back_to_extractive_at_the_deadline() -> None:
    body = json.dumps(OK_BODY).encode()  # ~300 bytes at 40 ms each: 12 s if nothing stops it
    with slow_http_server("trickle", body, interval=0.04) as server:
        result = _llm(server.url, deadline=1.0).summarize(MATERIAL)

    assert result.summarizer == "extractive" and result.tokens_spent == 0
    assert result.fallback_reason is not None
    assert f"LLM endpoint at {server.url}/v1/chat/completions" in result.fallback_reason
    assert "1 s deadline (MISSION_MEMORY_LLM_DEADLINE_SECONDS)" in result.fallback_reason
    assert result.text.startswith("Extractive summary used instead of the LLM")


def test_an_llm_endpoint_that_never_answers_falls_back_at_the_deadline() -> None:
    with slow_http_server("hang") as server:
        result = _llm(server.url, deadline=1.0).extract_open_questions(MATERIAL)

    assert result.questions == ()
    assert result.fallback_reason is not None and "1 s deadline" in result.fallback_reason


@pytest.fixture
def tasks_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "tasks"
    folder.mkdir()
    for n in range(1, TASKS + 1):
        (folder / f"OPS-{n}.md").write_text(
            f"---\nkey: OPS-{n}\ntitle: Long task number {n}\nlabels: [LONG-TERM]\n"
            f"created: 2025-02-0{n}T09:00:00Z\n---\n\nKeep task {n} moving.\n\n## Comments\n\n"
            f"### Olena · 2025-02-1{n}T10:00:00Z\n\nShould task {n} wait for the field test?\n",
            encoding="utf-8",
        )
    return folder


@pytest.fixture
def hanging_llm() -> Iterator[SlowHttpServer]:
    with slow_http_server("hang") as server:
        yield server


def test_a_pass_against_a_hanging_llm_stops_calling_it_at_the_budget_and_refreshes_every_task(
    tasks_dir: Path, hanging_llm: SlowHttpServer
) -> None:
    settings = Settings(llm_base_url=f"{hanging_llm.url}/v1", llm_model="m", llm_deadline_seconds=1.0,
                        refresh_pass_budget_seconds=1.0)
    with Memory.open() as memory:
        report = refresh_once(memory.store, memory.embedder, LocalFolderTracker(tasks_dir), None, PASS_AT, settings)
        last_pass = refresh_status(memory.store, settings, now=PASS_AT)["last_pass"]

    assert sorted(r["task"] for r in report.refreshed) == [f"OPS-{n}" for n in range(1, TASKS + 1)]
    assert report.failed == []
    assert {r["summarizer"] for r in report.refreshed} == {"extractive"}
    # The first call waits out the budget; the other 2 * TASKS - 1 calls fall back at once.
    assert hanging_llm.requests == 1
    assert report.to_json()["budget"] == {"seconds": 1.0, "used_up": True, "llm_calls_skipped": 2 * TASKS - 1}
    later = [r["fallback_reason"] for r in report.refreshed[1:]]
    assert all("refresh pass budget of 1 s" in reason for reason in later)
    assert last_pass["budget"]["used_up"] is True  # `refresh status` shows it too


def test_refresh_once_json_reports_the_used_up_budget(
    tasks_dir: Path, hanging_llm: SlowHttpServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MISSION_MEMORY_LLM_BASE_URL", f"{hanging_llm.url}/v1")
    monkeypatch.setenv("MISSION_MEMORY_LLM_MODEL", "m")
    monkeypatch.setenv("MISSION_MEMORY_REFRESH_PASS_BUDGET_SECONDS", "1")
    result = CliRunner().invoke(
        app, ["refresh", "once", "--tasks-dir", str(tasks_dir), "--now", PASS_AT.isoformat(), "--json"]
    )

    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert len(data["refreshed"]) == TASKS
    assert data["budget"] == {"seconds": 1.0, "used_up": True, "llm_calls_skipped": 2 * TASKS - 1}
