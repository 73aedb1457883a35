"""A mission holds one git repository: another repository of the same folder name does not replace it.

A new user's trial ingested a second repository whose folder was named like the first (the default
mission is the folder's name): the first one's 39 ADRs and 470 documents were removed without a
word, and the two histories were mixed.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.errors import InputError
from mission_memory.records import RecordKind
from tests.conftest import NYGARD_ADR, GitRepo

ADR_PATH = "doc/adr/0001-use-postgresql-for-the-upload-ledger.md"


@pytest.fixture
def memory() -> Iterator[Memory]:
    with Memory.open() as m:
        yield m


def _first(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "a" / "svc")
    repo.commit("Record the ledger decision", "2025-01-02T10:00:00+00:00", {ADR_PATH: NYGARD_ADR})
    repo.commit("Describe the service", "2025-01-03T10:00:00+00:00", {"docs/guide.md": "# Guide\n\nRun it.\n"})
    return repo


def _other(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "b" / "svc")
    repo.commit("Start another project", "2025-02-01T10:00:00+00:00", {"README.md": "# Other\n\nSomething else.\n"})
    return repo


def _kinds(memory: Memory) -> dict[str, int]:
    return {k: memory.store.count_kind("svc", k) for k in (RecordKind.DECISION.value, RecordKind.DOC_CHUNK.value,
                                                           RecordKind.COMMIT.value)}


def test_another_repository_of_the_same_name_is_refused_and_nothing_stored_is_lost(
    memory: Memory, tmp_path: Path
) -> None:
    memory.ingest_repository(_first(tmp_path).root)
    before = _kinds(memory)
    assert before["decision"] == 1 and before["commit"] == 2
    with pytest.raises(InputError, match=r"mission 'svc' holds the history of another git repository.*--mission"):
        memory.ingest_repository(_other(tmp_path).root)
    assert _kinds(memory) == before


def test_a_new_clone_of_the_same_repository_with_new_commits_is_ingested(memory: Memory, tmp_path: Path) -> None:
    first = _first(tmp_path)
    memory.ingest_repository(first.root)
    subprocess.run(["git", "clone", "-q", str(first.root), str(tmp_path / "c" / "svc")], check=True)
    clone = GitRepo.__new__(GitRepo)
    clone.root = tmp_path / "c" / "svc"
    clone.git("config", "user.name", "Test Operator")
    clone.git("config", "user.email", "operator@example.org")
    clone.commit("Extend the guide", "2025-01-04T10:00:00+00:00", {"docs/guide.md": "# Guide\n\nRun it twice.\n"})
    report = memory.ingest_repository(clone.root)
    assert report.added[RecordKind.COMMIT.value] == 1
    assert _kinds(memory)["decision"] == 1


def test_replace_repository_replaces_the_missions_files_when_asked(memory: Memory, tmp_path: Path) -> None:
    memory.ingest_repository(_first(tmp_path).root)
    report = memory.ingest_repository(_other(tmp_path).root, replace_repository=True)
    assert report.removed[RecordKind.DECISION.value] == 1
    assert _kinds(memory)["decision"] == 0


def test_the_cli_names_the_mission_and_both_ways_on(tmp_path: Path) -> None:
    runner = CliRunner()
    first = runner.invoke(app, ["ingest", str(_first(tmp_path).root), "--json"])
    assert first.exit_code == 0, first.output
    refused = runner.invoke(app, ["ingest", str(_other(tmp_path).root), "--json"])
    assert refused.exit_code == 1
    error = json.loads(refused.stderr)
    assert "svc" in error["error"] and "--replace-repository" in error["error"]
    with Memory.open() as memory:
        assert _kinds(memory)["decision"] == 1


def test_the_same_repository_ingested_from_a_new_path_points_its_unchanged_records_there(
    memory: Memory, tmp_path: Path
) -> None:
    first = _first(tmp_path)
    memory.ingest_repository(first.root)
    moved = tmp_path / "moved" / "svc"
    subprocess.run(["git", "clone", "-q", str(first.root), str(moved)], check=True)
    report = memory.ingest_repository(moved)
    assert sum(report.added.values()) == sum(report.updated.values()) == 0 and report.embedded == 0
    assert report.relocated > 0
    records = [r for batch in memory.store.iterate() for r in batch if r.provenance.mission == "svc"]
    uris = {r.provenance.uri for r in records}
    assert uris and all(u.startswith(moved.as_uri()) for u in uris), uris
    again = memory.ingest_repository(moved)  # idempotent: nothing more to move
    assert again.relocated == 0 and again.embedded == 0
    assert {r.provenance.uri for batch in memory.store.iterate() for r in batch} == uris
