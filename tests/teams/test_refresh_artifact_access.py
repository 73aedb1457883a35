"""A refresh artifact summarising a task takes the task's access level from its ``access:LEVEL`` label."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

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
