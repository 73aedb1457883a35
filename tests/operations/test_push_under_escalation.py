"""Push under escalation (docs/design.md §7, issue 10 item 4): while degraded, tasks linked to an escalating
sector are refreshed at once (bounded) and the queue runs by criticality; visible in ``refresh status``.
The push-refresh scenario's real git repository and local task folder, the real embedder and store."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.config import Settings
from mission_memory.refresh.escalation_queue import MAX_FORCED_PER_PASS
from mission_memory.refresh.orchestrator import RefreshReport, refresh_once
from mission_memory.trackers.local_files import LocalFolderTracker
from tests.conftest import GitRepo
from tests.operations.event_factory import burst, event
from tests.refresh.push_mission import FIRST_PASS, WITHIN_DAY, PushMission, build_push_mission

NO_LLM = Settings(llm_base_url=None, llm_model=None)
MISSION = "ops-agent"  # the repository folder's name: the refresher's mission


def _task(key: str, labels: str) -> str:
    return f"---\nkey: {key}\ntitle: Watch {key}\nlabels: [{labels}]\nstate: Todo\ncreated: 2024-12-20T09:00:00Z\n---\n\nKeep {key} current.\n"


@pytest.fixture
def mission(make_git_repo: Callable[[str], GitRepo], tmp_path: Path) -> PushMission:
    built = build_push_mission(make_git_repo, tmp_path)
    (built.tasks_dir / "OPS-20.md").write_text(_task("OPS-20", "LONG-TERM, sector:north"), encoding="utf-8")
    (built.tasks_dir / "OPS-21.md").write_text(_task("OPS-21", "LONG-TERM, South"), encoding="utf-8")
    return built


@pytest.fixture
def memory() -> Iterator[Memory]:
    with Memory.open() as opened:
        yield opened


def _pass(memory: Memory, mission: PushMission, now: datetime) -> RefreshReport:
    return refresh_once(memory.store, memory.embedder, LocalFolderTracker(mission.tasks_dir), mission.repo.root,
                        now, NO_LLM)


def test_in_normal_mode_a_pass_within_a_day_refreshes_nothing(mission: PushMission, memory: Memory) -> None:
    _pass(memory, mission, FIRST_PASS)
    memory.record_events(burst(4, WITHIN_DAY, sector="north"), MISSION, now=WITHIN_DAY, embed=False)
    again = _pass(memory, mission, WITHIN_DAY)
    assert again.refreshed == []
    assert memory.refresh_status(now=WITHIN_DAY)["escalation"] is None


def test_while_degraded_linked_tasks_are_due_at_once_most_critical_first(mission: PushMission, memory: Memory) -> None:
    first = _pass(memory, mission, FIRST_PASS)
    assert {r["task"] for r in first.refreshed} == {"OPS-7", "OPS-9", "OPS-20", "OPS-21"}
    flood = burst(12, WITHIN_DAY, sector="north", criticality=0.5) + burst(
        11, WITHIN_DAY, sector="south", start_index=100, criticality=0.3)
    flood.append(event(500, WITHIN_DAY - timedelta(minutes=1), sector="south", criticality=0.95,
                       text="Обстріл складу в секторі South"))
    state = memory.record_events(flood, MISSION, now=WITHIN_DAY, embed=False).escalation
    assert state.mode.value == "degraded" and set(state.escalating_sectors) == {"north", "south"}

    again = _pass(memory, mission, WITHIN_DAY)  # 22 hours after the first pass: nothing is due by schedule
    assert [r["task"] for r in again.refreshed] == ["OPS-21", "OPS-20"]  # south holds the 0.95 event
    assert again.refreshed[0]["escalation"] == {"sectors": ["south"], "criticality": 0.95, "forced_due": True}
    assert again.refreshed[1]["escalation"]["sectors"] == ["north"]
    assert {s["task"] for s in again.skipped} == {"OPS-7", "OPS-9"}

    status = memory.refresh_status(now=WITHIN_DAY)["escalation"]
    assert status["mode"] == "degraded" and status["forced_due"] == ["OPS-21", "OPS-20"]
    assert status["linked_tasks"]["OPS-20"] == {"sectors": ["north"], "criticality": 0.5}
    shown = CliRunner().invoke(app, ["refresh", "status", "--now", WITHIN_DAY.isoformat()])
    assert shown.exit_code == 0, shown.output
    assert "Escalation (degraded" in shown.output and "OPS-21, OPS-20" in shown.output

    # Bounded: a task just refreshed is not forced again within the hour.
    third = _pass(memory, mission, WITHIN_DAY + timedelta(minutes=30))
    assert third.refreshed == []


def test_forced_refreshes_per_pass_are_bounded(mission: PushMission, memory: Memory) -> None:
    for i in range(MAX_FORCED_PER_PASS + 2):
        (mission.tasks_dir / f"N-{i}.md").write_text(_task(f"N-{i}", "LONG-TERM, north"), encoding="utf-8")
    _pass(memory, mission, FIRST_PASS)
    memory.record_events(burst(15, WITHIN_DAY, sector="north"), MISSION, now=WITHIN_DAY, embed=False)
    again = _pass(memory, mission, WITHIN_DAY)
    assert len(again.refreshed) == MAX_FORCED_PER_PASS
    assert all(r["escalation"]["forced_due"] for r in again.refreshed)
    assert json.loads(json.dumps(again.to_json()))["refreshed"][0]["escalation"]["sectors"] == ["north"]
