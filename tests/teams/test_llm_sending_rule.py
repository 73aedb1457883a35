"""No text above ``MISSION_MEMORY_LLM_MAX_ACCESS`` (default ``internal``) is sent to the LLM endpoint.

The refresh summariser and question extraction see a task's material (its text, comments and the
commits touching it); the correction summaries see an operator's prompt. Both talk to a real
chat-completions endpoint on loopback (pytest-httpserver), which records every request.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from mission_memory.api import Memory
from mission_memory.config import Settings
from mission_memory.corrections.llm_summary import LlmCorrectionSummaries
from mission_memory.ingest.access_levels import AccessRules
from mission_memory.records import AccessLevel, RecordKind
from mission_memory.refresh.orchestrator import refresh_once
from mission_memory.trackers.local_files import LocalFolderTracker
from tests.conftest import GitRepo
from tests.corrections.captured_prompts import capture_prompt
from tests.refresh.push_mission import FIRST_PASS, PushMission, build_push_mission

SUMMARY = "The retry queue for scans landed."


@pytest.fixture
def mission(make_git_repo: Callable[[str], GitRepo], tmp_path: Path) -> PushMission:
    return build_push_mission(make_git_repo, tmp_path)


@pytest.fixture
def memory() -> Iterator[Memory]:
    with Memory.open() as opened:
        yield opened


@pytest.fixture
def llm(httpserver: HTTPServer) -> HTTPServer:
    reply = {"choices": [{"message": {"role": "assistant", "content": SUMMARY}}], "usage": {"total_tokens": 50}}
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_json(reply)
    return httpserver


def _settings(llm: HTTPServer, **overrides: object) -> Settings:
    return Settings(llm_base_url=llm.url_for("/v1"), llm_model="m", **overrides)  # type: ignore[arg-type]


def _sent(llm: HTTPServer) -> str:
    return "\n".join(json.dumps(json.loads(request.get_data())) for request, _ in llm.log)


def _summaries(memory: Memory, task: str) -> list[tuple[str, str | None, str]]:
    return [(r.access_level.value, r.attributes.get("fallback_reason"), r.attributes["summarizer"])
            for b in memory.store.iterate() for r in b
            if r.kind is RecordKind.REFRESH_ARTIFACT and r.attributes["task"] == task
            and r.attributes["artifact"] == "summary"]


def _label(mission: PushMission, task: str, label: str) -> None:
    path = mission.tasks_dir / f"{task}.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("labels: [LONG-TERM", f"labels: [LONG-TERM, {label}"), encoding="utf-8")


def test_a_restricted_tasks_material_is_not_sent_and_the_artifact_says_why(
    mission: PushMission, memory: Memory, llm: HTTPServer
) -> None:
    _label(mission, "OPS-7", "access:restricted")
    report = refresh_once(memory.store, memory.embedder, LocalFolderTracker(mission.tasks_dir), mission.repo.root,
                          FIRST_PASS, _settings(llm))
    assert report.failed == [] and "OPS-7" in [r["task"] for r in report.refreshed]
    assert llm.log == []  # OPS-7 is restricted; idle OPS-9 needs no call
    ((level, reason, summarizer),) = _summaries(memory, "OPS-7")
    assert level == "restricted" and summarizer == "extractive"
    assert reason is not None and "restricted, above MISSION_MEMORY_LLM_MAX_ACCESS (internal)" in reason


def test_the_setting_lets_restricted_material_through_when_raised(
    mission: PushMission, memory: Memory, llm: HTTPServer
) -> None:
    _label(mission, "OPS-7", "access:restricted")
    refresh_once(memory.store, memory.embedder, LocalFolderTracker(mission.tasks_dir), mission.repo.root,
                 FIRST_PASS, _settings(llm, llm_max_access=AccessLevel.RESTRICTED))
    assert "Antivirus scan retry queue" in _sent(llm)
    assert _summaries(memory, "OPS-7") == [("restricted", None, "chat-completions:m")]


def test_a_commit_touching_a_restricted_path_keeps_its_tasks_material_home_and_raises_the_artifacts(
    mission: PushMission, memory: Memory, llm: HTTPServer
) -> None:
    """OPS-7's commit touches src/scan.py; the mapping makes src/ restricted (its label says nothing)."""
    settings = _settings(llm, access_paths={"src/**": "restricted"})
    refresh_once(memory.store, memory.embedder, LocalFolderTracker(mission.tasks_dir), mission.repo.root,
                 FIRST_PASS, settings)
    assert llm.log == [] and "scan.py" not in _sent(llm)
    levels = {r.access_level.value for b in memory.store.iterate() for r in b
              if r.kind is RecordKind.REFRESH_ARTIFACT and r.attributes["task"] == "OPS-7"}
    assert levels == {"restricted"}  # the artifacts quote the commit: they take its level


def test_a_restricted_commit_record_from_ingest_raises_the_material_too(
    mission: PushMission, memory: Memory, llm: HTTPServer
) -> None:
    """Front matter is read at ingest: a commit record stored restricted counts, whatever the mapping."""
    mission.repo.commit("OPS-7: note the scanner vault", "2025-01-04T09:00:00+00:00",
                        {"docs/vault.md": "---\naccess: restricted\n---\n\n# Vault\n\nScanner vault.\n"})
    memory.ingest_repository(mission.repo.root, mission="ops-agent")
    refresh_once(memory.store, memory.embedder, LocalFolderTracker(mission.tasks_dir), mission.repo.root,
                 FIRST_PASS, _settings(llm))
    assert "scanner vault" not in _sent(llm).lower()
    assert {level for level, _, _ in _summaries(memory, "OPS-7")} == {"restricted"}


def test_a_prompt_naming_a_restricted_path_is_not_sent_for_a_correction_summary(llm: HTTPServer) -> None:
    rules = AccessRules({"docs/security/**": AccessLevel.RESTRICTED})
    summaries = LlmCorrectionSummaries(llm.url_for("/v1"), "m", deadline_seconds=5, access_rules=rules)
    hidden = summaries.summary("no, leave `docs/security/keys.md` alone", "wrong-approach", "scope", "docs", "rejected")
    assert hidden is None and summaries.withheld == 1 and llm.log == []
    sent = summaries.summary("no, leave the guide alone", "wrong-approach", "scope", "docs", "rejected")
    assert sent == SUMMARY and len(llm.log) == 1 and summaries.withheld == 1


def test_with_the_setting_at_public_no_prompt_leaves_the_process(
    mission_repo: GitRepo, tmp_path: Path, llm: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MISSION_MEMORY_LLM_BASE_URL", llm.url_for("/v1"))
    monkeypatch.setenv("MISSION_MEMORY_LLM_MODEL", "m")
    monkeypatch.setenv("MISSION_MEMORY_LLM_MAX_ACCESS", "public")
    hook_dir = tmp_path / "hook-data"
    capture_prompt(hook_dir, "2025-10-10T09:00:00+00:00", "Add retries to the uploader", session="s1",
                   cwd=mission_repo.root)
    capture_prompt(hook_dir, "2025-10-10T09:05:00+00:00", "no, don't change src/ledger.py, revert it",
                   session="s1", cwd=mission_repo.root)
    with Memory.open() as memory:
        memory.ingest_repository(mission_repo.root)
        memory.import_corrections(prompts=hook_dir / "prompts.git", operator="alice")
        corrections = memory.corrections()
    assert corrections and llm.log == []  # the correction is stored, summarised from its fields
    assert corrections[0].summary.startswith("Operator corrected the agent in a prompt")
