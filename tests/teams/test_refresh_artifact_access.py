"""A refresh artifact summarising a task takes the task's access level from its ``access:LEVEL`` label."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.config import Settings
from mission_memory.records import RecordKind
from mission_memory.refresh.orchestrator import refresh_once
from mission_memory.trackers.local_files import LocalFolderTracker
from tests.conftest import GitRepo
from tests.refresh.push_mission import FIRST_PASS, build_push_mission


def test_the_artifacts_of_a_restricted_task_are_restricted(make_git_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    mission = build_push_mission(make_git_repo, tmp_path)
    ops9 = mission.tasks_dir / "OPS-9.md"
    ops9.write_text(ops9.read_text(encoding="utf-8").replace("labels: [LONG-TERM]", "labels: [LONG-TERM, access:restricted]"),
                    encoding="utf-8")
    with Memory.open() as memory:
        report = refresh_once(memory.store, memory.embedder, LocalFolderTracker(mission.tasks_dir), mission.repo.root,
                              FIRST_PASS, Settings(llm_base_url=None, llm_model=None))
        levels = {(r.attributes["task"], r.attributes["artifact"]): r.access_level.value
                  for b in memory.store.iterate() for r in b if r.kind is RecordKind.REFRESH_ARTIFACT}
    assert report.failed == []
    assert {v for (task, _), v in levels.items() if task == "OPS-9"} == {"restricted"}
    assert {v for (task, _), v in levels.items() if task == "OPS-7"} == {"internal"}


def _open_questions_text(memory: Memory, task: str) -> str:
    return "\n".join(r.text for b in memory.store.iterate() for r in b
                     if r.kind is RecordKind.REFRESH_ARTIFACT and r.attributes["task"] == task
                     and r.attributes["artifact"] == "open_questions")


@pytest.mark.parametrize("restricted", [False, True])
def test_an_artifact_quotes_no_proposed_decision_above_its_own_level(
    make_git_repo: Callable[[str], GitRepo], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, restricted: bool
) -> None:
    """OPS-7 (internal) matches the proposed ADR 0004; once the ADR is restricted, OPS-7's open questions
    must not name it (an internal reader would learn a restricted decision's title)."""
    mission = build_push_mission(make_git_repo, tmp_path)
    paths = {"docs/adr/0004-*": "restricted"} if restricted else {}
    monkeypatch.setenv("MISSION_MEMORY_ACCESS_PATHS", json.dumps(paths))
    with Memory.open() as memory:
        memory.ingest_repository(mission.repo.root)
        refresh_once(memory.store, memory.embedder, LocalFolderTracker(mission.tasks_dir), mission.repo.root,
                     FIRST_PASS, Settings(llm_base_url=None, llm_model=None, access_paths=paths))  # type: ignore[arg-type]
        text = _open_questions_text(memory, "OPS-7")
        levels = {r.access_level.value for b in memory.store.iterate() for r in b
                  if r.kind is RecordKind.REFRESH_ARTIFACT and r.attributes["task"] == "OPS-7"}
    assert levels == {"internal"}
    assert ("Cap antivirus scan retries" in text) is not restricted


VAULT_TOOLS = '''from mcp.server.mcpserver import MCPServer

mcp = MCPServer("vault")


@mcp.tool()
def open_vault_drawer(drawer: int) -> str:
    """Open a drawer of the key vault."""
    return ""
'''


@pytest.mark.parametrize("restricted", [False, True])
def test_an_artifact_names_no_tool_declared_in_a_file_above_its_level(
    make_git_repo: Callable[[str], GitRepo], tmp_path: Path, restricted: bool
) -> None:
    """A commit outside OPS-7 adds a tool in ops/vault/tools.py; once that folder is restricted, OPS-7's
    (internal) tool lineage must not name it."""
    mission = build_push_mission(make_git_repo, tmp_path)
    mission.repo.commit("Add the vault tools", "2025-01-04T09:00:00+00:00", {"ops/vault/tools.py": VAULT_TOOLS})
    paths = {"ops/vault/**": "restricted"} if restricted else {}
    with Memory.open() as memory:
        refresh_once(memory.store, memory.embedder, LocalFolderTracker(mission.tasks_dir), mission.repo.root,
                     FIRST_PASS, Settings(llm_base_url=None, llm_model=None, access_paths=paths))  # type: ignore[arg-type]
        lineage = {r.access_level.value: r.text for b in memory.store.iterate() for r in b
                   if r.kind is RecordKind.REFRESH_ARTIFACT and r.attributes["task"] == "OPS-7"
                   and r.attributes["artifact"] == "tool_lineage"}
    assert list(lineage) == ["internal"]
    assert ("open_vault_drawer" in lineage["internal"]) is not restricted
