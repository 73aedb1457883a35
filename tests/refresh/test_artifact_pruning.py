"""Superseded refresh artifacts are pruned after a set age; the current one keeps their provenance (ADR 0030)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.errors import ConfigError
from mission_memory.records import Record, RecordKind
from mission_memory.trackers.local_files import LocalFolderTracker
from tests.conftest import GitRepo
from tests.retrieval.stale_current_cases import PASSES, build_navigator_repo


def _artifacts(memory: Memory) -> dict[str, list[Record]]:
    out: dict[str, list[Record]] = {}
    for record in memory.store.records_of_kind([RecordKind.REFRESH_ARTIFACT.value], mission="navigator"):
        out.setdefault(record.attributes["artifact"], []).append(record)
    return {kind: sorted(records, key=lambda r: r.provenance.time) for kind, records in out.items()}


@pytest.fixture
def navigator(tmp_path: Path) -> tuple[GitRepo, Path]:
    return build_navigator_repo(lambda name: GitRepo(tmp_path / name), tmp_path / "tasks"), tmp_path / "tasks"


@pytest.fixture
def memory() -> Iterator[Memory]:
    with Memory.open(load_settings(llm_base_url=None)) as opened:
        yield opened


def _passes(memory: Memory, navigator: tuple[GitRepo, Path]) -> None:
    repo, tasks = navigator
    for now in PASSES:
        memory.refresh_once(LocalFolderTracker(tasks), repo.root, now=now, summarizer=None)


def test_superseded_artifacts_older_than_the_age_are_pruned_and_named_by_the_current_one(
    memory: Memory, navigator: tuple[GitRepo, Path]
) -> None:
    _passes(memory, navigator)  # the default age (30 days) prunes nothing within these three weeks
    before = _artifacts(memory)
    assert {kind: len(records) for kind, records in before.items()} == {
        "summary": 3, "tool_lineage": 3, "open_questions": 3}

    report = memory.prune_refresh_artifacts(now=PASSES[2], older_than_days=5)

    after = _artifacts(memory)
    assert {kind: len(records) for kind, records in after.items()} == {
        "summary": 1, "tool_lineage": 1, "open_questions": 1}
    assert len(report.pruned) == 6 and report.rewritten == 3
    lineage = after["tool_lineage"][0]
    old = before["tool_lineage"]
    assert lineage.source_key == old[2].source_key and lineage.text == old[2].text
    chain = lineage.attributes["pruned_predecessors"]
    assert [e["id"] for e in chain] == [old[0].id, old[1].id]
    assert chain[1]["commits"] == old[1].attributes["commits"] and chain[0]["refreshed_at"].startswith("2025-03-03")
    assert memory.store.get([r.id for r in old[:2]]) == {}
    assert lineage.id in memory.store.vectors_for([lineage.id], memory.embedder.model_id)

    digest = memory.query("route planner tool changes", token_budget=3000, filters={"mission": "navigator"})
    assert lineage.id in [e.record.id for e in digest.entries]
    assert memory.prune_refresh_artifacts(now=PASSES[2], older_than_days=5).pruned == ()


def test_the_age_is_a_setting_and_each_pass_prunes_carrying_the_chain_forward(
    navigator: tuple[GitRepo, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MISSION_MEMORY_REFRESH_PRUNE_AFTER_DAYS", "5")
    with Memory.open() as memory:
        repo, tasks = navigator
        memory.refresh_once(LocalFolderTracker(tasks), repo.root, now=PASSES[0])
        memory.refresh_once(LocalFolderTracker(tasks), repo.root, now=PASSES[1])
        second = _artifacts(memory)["tool_lineage"]
        assert len(second) == 1 and len(second[0].attributes["pruned_predecessors"]) == 1
        memory.refresh_once(LocalFolderTracker(tasks), repo.root, now=PASSES[2])
        third = _artifacts(memory)["tool_lineage"]
    assert len(third) == 1 and third[0].provenance.time == PASSES[2]
    times = [e["refreshed_at"][:10] for e in third[0].attributes["pruned_predecessors"]]
    assert times == ["2025-03-03", "2025-03-12"]


def test_a_superseded_artifact_younger_than_the_age_stays(memory: Memory, navigator: tuple[GitRepo, Path]) -> None:
    _passes(memory, navigator)
    report = memory.prune_refresh_artifacts(now=PASSES[2] + timedelta(days=1), older_than_days=12)
    assert len(report.pruned) == 3  # the first pass's three; the second pass's are ten days old
    assert {len(records) for records in _artifacts(memory).values()} == {2}


def test_a_negative_age_is_refused_with_the_setting_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MISSION_MEMORY_REFRESH_PRUNE_AFTER_DAYS", "-1")
    with pytest.raises(ConfigError, match="refresh_prune_after_days"):
        load_settings()
