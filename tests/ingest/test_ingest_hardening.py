"""Ingest on hostile repositories: supersession cycles, file names that are not UTF-8, oversized
decisions and documents without headings (issue 9 item 7)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.ingest.documents import split_document
from mission_memory.records import Record, RecordKind
from tests.conftest import GitRepo

_ADR = """# {number}. {title}

Date: {date}

## Status

{status}

## Context

{context}

## Decision

{decision}
"""


@pytest.fixture
def memory() -> Iterator[Memory]:
    with Memory.open() as m:
        yield m


def _records(memory: Memory) -> list[Record]:
    return [r for batch in memory.store.iterate() for r in batch]


def test_a_supersession_cycle_keeps_the_newest_decision_current_and_says_so(
    memory: Memory, make_git_repo: Callable[[str], GitRepo]
) -> None:
    repo = make_git_repo("cycle")
    repo.commit("Two decisions that supersede each other", "2024-06-01T10:00:00+00:00", {
        "docs/adr/0001-keep-the-ledger-in-postgresql.md": _ADR.format(
            number=1, title="Keep the ledger in PostgreSQL", date="2024-01-10", status="Superseded by ADR-0002",
            context="The ledger needs a server.", decision="Keep PostgreSQL."),
        "docs/adr/0002-zberihaty-reiestr-u-sqlite.md": _ADR.format(
            number=2, title="Зберігати реєстр у SQLite", date="2024-05-20", status="Замінено ADR-0001",
            context="Польові машини працюють без мережі.", decision="Використовувати SQLite у режимі WAL."),
    })
    report = memory.ingest_repository(repo.root)

    decisions = {r.attributes["number"]: r for r in _records(memory) if r.kind is RecordKind.DECISION}
    assert decisions[1].attributes["status"] == "superseded"
    assert decisions[1].attributes["superseded_by"] == ["0002"]
    assert decisions[2].attributes["status"] == "accepted"
    assert decisions[2].attributes["superseded_by"] == []
    warnings = report.to_json()["warnings"]
    assert len(warnings) == 1
    assert "supersession cycle" in warnings[0]
    assert "ADR-0002 (docs/adr/0002-zberihaty-reiestr-u-sqlite.md) is the newest and stays current" in warnings[0]


def test_a_file_name_that_is_not_utf8_is_reported_readably_as_an_undecodable_file_name(
    memory: Memory, make_git_repo: Callable[[str], GitRepo]
) -> None:
    repo = make_git_repo("names")
    repo.write("docs/guide.md", "# Guide\n\nBack up nightly.\n")
    (repo.root / os.fsdecode(b"docs/bad-\xff\xfe.md")).write_text("# Bad\n\nText.\n", encoding="utf-8")
    repo.commit("Add a guide and a file named in latin-1", "2024-06-01T10:00:00+00:00")

    report = memory.ingest_repository(repo.root)

    assert report.skipped == [{"path": "docs/bad-\\xff\\xfe.md", "reason": "undecodable file name"}]
    assert any(r.provenance.ref.startswith("docs/guide.md") for r in _records(memory))


def test_a_plain_folder_file_name_that_is_not_utf8_is_reported_the_same_way(memory: Memory, tmp_path: Path) -> None:
    root = tmp_path / "folder"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "посібник.md").write_text("# Посібник\n\nЩоночі.\n", encoding="utf-8")
    (root / os.fsdecode(b"docs/\xe7\xe0\xec\xb3\xf2\xea\xe8.md")).write_text("# cp1251\n", encoding="utf-8")

    report = memory.ingest_repository(root)

    assert report.skipped == [{"path": "docs/\\xe7\\xe0\\xec\\xb3\\xf2\\xea\\xe8.md", "reason": "undecodable file name"}]
    assert any(r.provenance.ref.startswith("docs/посібник.md") for r in _records(memory))


def test_an_oversized_decision_is_a_bounded_record_and_its_whole_text_becomes_document_chunks(
    make_git_repo: Callable[[str], GitRepo], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A decision's context a quarter past the 20,000 characters a decision record keeps is enough to be
    cut, split into chunks and have its tail kept (it was 70,000 characters: three times the embedding
    work for the same path)."""
    repo = make_git_repo("big")
    paragraph = "Польові вузли синхронізують журнал, коли з'являється зв'язок; конфлікти вирішує оператор. "
    context = "\n\n".join(f"{i}. {paragraph * 3}" for i in range(90))  # about 25,000 characters
    repo.commit("A very long decision", "2024-06-01T10:00:00+00:00", {
        "docs/adr/0001-sync-the-ledger.md": _ADR.format(
            number=1, title="Sync the ledger", date="2024-06-01", status="Accepted", context=context,
            decision="Sync when online."),
    })
    monkeypatch.setenv("MISSION_MEMORY_MAX_FILE_BYTES", "50000000")
    with Memory.open() as memory:
        report = memory.ingest_repository(repo.root)
        records = _records(memory)

    decision = next(r for r in records if r.kind is RecordKind.DECISION)
    assert len(decision.text) <= 20_000
    assert decision.text.startswith("# 1. Sync the ledger")
    assert len(decision.attributes["context"]) <= 20_000
    chunks = [r for r in records if r.kind is RecordKind.DOC_CHUNK]
    assert len(chunks) >= 10
    assert all(len(r.text) <= 2400 for r in chunks)
    assert any("89. Польові" in r.text for r in chunks)  # the tail is not lost
    assert any("kept to its first 20,000" in w for w in report.warnings)


@pytest.mark.parametrize("suffix", [".md", ".txt", ".rst"])
def test_a_large_document_without_headings_or_blank_lines_splits_into_bounded_chunks(suffix: str) -> None:
    line = "Журнал завантажень синхронізується з архівом щоночі о 02:00 UTC.\n"
    text = line * 40_000  # about 2.6 MB, one paragraph, no heading
    chunks = split_document(text, f"docs/journal{suffix}", max_chars=2400)
    assert len(chunks) >= len(text) // 2400
    assert all(0 < len(chunk.text) <= 2400 for chunk in chunks)
    assert sum(len(chunk.text) for chunk in chunks) >= len(text.strip()) - len(chunks)  # nothing dropped


def test_a_single_huge_line_splits_into_bounded_chunks() -> None:
    chunks = split_document("x" * 3_000_000, "docs/blob.md", max_chars=2400)
    assert all(0 < len(chunk.text) <= 2400 for chunk in chunks)
    assert sum(len(chunk.text) for chunk in chunks) == 3_000_000


def test_a_git_folder_a_wildcard_mission_or_a_blank_one_is_refused_and_nothing_is_stored(
    memory: Memory, make_git_repo: Callable[[str], GitRepo]
) -> None:
    from mission_memory.errors import InputError

    repo = make_git_repo("field")
    repo.commit("README", "2024-06-01T10:00:00+00:00", {"README.md": "# Field\n\nMoves records.\n"})
    with pytest.raises(InputError, match=r"inside a \.git folder"):
        memory.ingest_repository(repo.root / ".git")
    for name, reason in [("*", "all-missions wildcard"), ("  ", "is empty"), (" ops", "surrounding blanks"),
                         ("ops\nx", "control characters")]:
        with pytest.raises(InputError, match=reason):
            memory.ingest_repository(repo.root, mission=name)
    assert _records(memory) == []


def test_a_subfolder_of_a_repository_ingests_the_whole_repository_and_says_so(
    memory: Memory, make_git_repo: Callable[[str], GitRepo]
) -> None:
    repo = make_git_repo("field")
    repo.commit("Docs", "2024-06-01T10:00:00+00:00", {"README.md": "# Field\n", "docs/guide.md": "# Guide\n\nRun it.\n"})
    report = memory.ingest_repository(repo.root / "docs")
    data = report.to_json()
    assert data["mission"] == "field" and data["path"] == str(repo.root.resolve())
    assert any("is inside the git repository" in w and "--include" in w for w in data["warnings"])


def test_a_decision_is_never_dated_after_the_commit_that_wrote_it(
    memory: Memory, make_git_repo: Callable[[str], GitRepo]
) -> None:
    from datetime import UTC, datetime

    repo = make_git_repo("morning")
    repo.commit("Decide in the morning", "2024-06-01T09:00:00+00:00", {
        "docs/adr/0001-keep-the-ledger-in-sqlite.md": _ADR.format(
            number=1, title="Keep the ledger in SQLite", date="2024-06-01", status="Accepted",
            context="Field machines run offline.", decision="Keep SQLite."),
        "docs/adr/0002-use-wal.md": _ADR.format(
            number=2, title="Use WAL", date="2024-05-20", status="Accepted",
            context="Readers and writers at once.", decision="WAL mode."),
    })
    memory.ingest_repository(repo.root)
    times = {r.attributes["number"]: r.provenance.time for r in _records(memory) if r.kind is RecordKind.DECISION}
    assert times[1] == datetime(2024, 6, 1, 9, 0, tzinfo=UTC)  # committed before noon of its date
    assert times[2] == datetime(2024, 5, 20, 12, 0, tzinfo=UTC)  # an earlier date: noon of that date
