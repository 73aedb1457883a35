"""Ingesting a real git repository: layers, provenance, skips, idempotence, incremental updates."""

from __future__ import annotations

from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.errors import InputError
from mission_memory.records import RecordKind
from tests.conftest import GitRepo


@pytest.fixture
def memory() -> Memory:
    with Memory.open() as m:
        yield m


def _all_records(memory: Memory) -> list:
    return [r for batch in memory.store.iterate() for r in batch]


def test_ingest_files_commits_adrs_principles_and_documents_with_provenance(memory: Memory, mission_repo: GitRepo) -> None:
    report = memory.ingest_repository(mission_repo.root)
    by_kind = report.to_json()["by_kind"]["added"]
    assert by_kind["commit"] == 5
    assert by_kind["decision"] == 3
    assert by_kind["principle"] == 2
    assert by_kind["doc_chunk"] >= 4
    records = {r.provenance.ref: r for r in _all_records(memory)}
    ledger = records["docs/adr/0002-use-sqlite-in-wal-mode.md"]
    assert ledger.attributes["status"] == "accepted"
    assert ledger.attributes["supersedes"] == ["0001"]
    assert any(a["option"] == "Keep PostgreSQL" for a in ledger.attributes["rejected_alternatives"])
    assert ledger.provenance.commit == mission_repo.git("log", "-1", "--format=%H", "--", "docs/adr/0002-use-sqlite-in-wal-mode.md")
    old = records["docs/adr/0001-use-postgresql-for-the-upload-ledger.md"]
    assert old.attributes["superseded_by"] == ["0002"] and old.attributes["status"] == "superseded"
    commit = next(r for r in records.values() if r.kind is RecordKind.COMMIT and r.title.startswith("OPS-31"))
    assert commit.attributes["tracker_keys"] == ["OPS-31"]
    assert "docs/adr/0002-use-sqlite-in-wal-mode.md" in commit.attributes["files"]
    assert commit.provenance.time.isoformat().startswith("2024-09-15T12:00")
    assert "docs/guide.md#rotating-the-api-keys" in records
    assert records["docs/guide.md#rotating-the-api-keys"].provenance.uri.endswith("guide.md#rotating-the-api-keys")
    assert {r.attributes.get("principle_id") for r in records.values() if r.kind is RecordKind.PRINCIPLE} == {"P1", "P2"}


def test_binary_files_are_skipped_with_a_reason_and_latin1_text_is_read_by_the_fallback(
    memory: Memory, mission_repo: GitRepo
) -> None:
    report = memory.ingest_repository(mission_repo.root)
    assert {(s["path"], s["reason"]) for s in report.skipped} == {("docs/logo.md", "binary")}
    assert report.decoded == {"docs/legacy.txt": "cp1252"}


def test_huge_files_are_skipped_as_too_large(mission_repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    mission_repo.commit("Add a huge page", "2024-11-01T00:00:00+00:00", {"docs/huge.md": "# Huge\n\n" + "x" * 5000})
    monkeypatch.setenv("MISSION_MEMORY_MAX_FILE_BYTES", "4000")
    with Memory.open() as memory:
        report = memory.ingest_repository(mission_repo.root)
    assert ("docs/huge.md", "too-large") in {(s["path"], s["reason"]) for s in report.skipped}


def test_reingesting_an_unchanged_repository_adds_and_embeds_nothing(memory: Memory, mission_repo: GitRepo) -> None:
    first = memory.ingest_repository(mission_repo.root)
    before = memory.status()["records"]
    second = memory.ingest_repository(mission_repo.root)
    assert sum(second.added.values()) == 0 and sum(second.updated.values()) == 0
    assert second.embedded == 0
    assert memory.status()["records"] == before == sum(first.added.values())


def test_a_new_commit_and_an_edited_section_are_picked_up_and_a_deleted_file_is_removed(
    memory: Memory, mission_repo: GitRepo
) -> None:
    memory.ingest_repository(mission_repo.root)
    guide = (mission_repo.root / "docs/guide.md").read_text()
    mission_repo.commit("OPS-50: back up twice a day", "2024-12-01T00:00:00+00:00",
                        {"docs/guide.md": guide.replace("every night at 02:00 UTC", "at 02:00 and 14:00 UTC")})
    (mission_repo.root / "README.md").unlink()
    mission_repo.commit("Remove README", "2024-12-02T00:00:00+00:00")
    report = memory.ingest_repository(mission_repo.root)
    assert report.added["commit"] == 2
    assert report.updated["doc_chunk"] == 1
    assert report.removed["doc_chunk"] == 1
    refs = {r.provenance.ref for r in _all_records(memory)}
    assert "README.md" not in refs


def test_a_plain_folder_is_ingested_as_documents(memory: Memory, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "runbook.md").write_text("# Runbook\n\n## Restart\n\nRestart the worker with `systemctl restart up`.\n")
    report = memory.ingest_repository(folder)
    assert report.head is None and report.added["doc_chunk"] >= 1


def test_a_missing_path_is_an_error_naming_it(memory: Memory, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does-not-exist"):
        memory.ingest_repository(tmp_path / "does-not-exist")
    (tmp_path / "file.md").write_text("x")
    with pytest.raises(InputError, match="is a file"):
        memory.ingest_repository(tmp_path / "file.md")


def test_mission_defaults_to_the_repository_folder_name(memory: Memory, mission_repo: GitRepo) -> None:
    memory.ingest_repository(mission_repo.root)
    assert set(memory.status()["missions"]) == {"uploader"}
    assert load_settings().data_dir.exists()


def test_a_task_naming_an_adr_or_a_tracker_key_gets_those_records_first(memory: Memory, mission_repo: GitRepo) -> None:
    memory.ingest_repository(mission_repo.root)
    digest = memory.query("Revisit ADR-1 before the audit", token_budget=3000)
    assert digest.entries[0].record.title.startswith("ADR-0001")
    assert digest.entries[0].superseded
    digest = memory.query("finish OPS-31 on the field laptops", token_budget=3000)
    assert digest.entries[0].record.kind is RecordKind.COMMIT
    assert digest.entries[0].record.attributes["tracker_keys"] == ["OPS-31"]


def test_a_decision_without_a_stated_component_belongs_to_its_top_level_folder(
    memory: Memory, mission_repo: GitRepo
) -> None:
    memory.ingest_repository(mission_repo.root)
    digest = memory.query("Which database holds the upload ledger?", filters={"component": "docs"})
    decisions = [e for e in digest.entries if e.record.kind is RecordKind.DECISION]
    assert decisions and all(e.record.component == "docs" for e in decisions)
