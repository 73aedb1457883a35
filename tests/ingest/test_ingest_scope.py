"""What an ingest run reads and what it costs: ``include``/``exclude`` globs on top of the ignore file,
the cost per top-level folder in the report, and document chunks embedded by their head (ADR 0034)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.errors import InputError
from mission_memory.ingest.exclusion import PathGlobs
from mission_memory.ingest.passage_heads import DOC_CHUNK_HEAD_CHARS, DOC_CHUNK_HEADS, passage_text
from mission_memory.records import Provenance, Record, RecordKind, SourceKind
from tests.conftest import GitRepo

FILES = {
    "README.md": "# Reader\n\nA reading app.\n",
    "docs/setup.md": "# Setup\n\nInstall with pip.\n\n## Keys\n\nRotate keys monthly.\n",
    "diary/june-first.md": "# June 1\n\nTried the old sync command.\n",
    "diary/june-second.md": "# June 2\n\nStill trying.\n",
    ".mission-memory-ignore": "notes/\n",
    "notes/todo.md": "# Todo\n\nNothing.\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "reader")
    repo.commit("Start the reader", "2025-06-01T10:00:00+00:00", FILES)
    return repo


def _doc_paths(memory: Memory) -> set[str]:
    return {
        r.attributes["path"] for batch in memory.store.iterate() for r in batch if r.kind is RecordKind.DOC_CHUNK
    }


def test_exclude_globs_leave_folders_out_on_top_of_the_ignore_file(repo: GitRepo) -> None:
    with Memory.open() as memory:
        memory.ingest_repository(repo.root, exclude=["diary/"])
        assert _doc_paths(memory) == {"README.md", "docs/setup.md"}


def test_include_globs_keep_only_matching_files_and_history_is_still_ingested(repo: GitRepo) -> None:
    with Memory.open() as memory:
        report = memory.ingest_repository(repo.root, include=["docs/**", "*.md"], exclude=["diary/june-second.md"])
        assert _doc_paths(memory) == {"README.md", "docs/setup.md", "diary/june-first.md"}
        assert report.added["commit"] == 1


def test_a_glob_that_is_not_a_pattern_is_an_error_naming_it_and_nothing_is_written(repo: GitRepo) -> None:
    with Memory.open() as memory:
        with pytest.raises(InputError, match=r"--exclude glob '' is empty"):
            memory.ingest_repository(repo.root, exclude=[""])
        assert memory.store.count_kind("reader", RecordKind.DOC_CHUNK.value) == 0


def test_globs_follow_gitignore_rules() -> None:
    globs = PathGlobs(include=["docs/"], exclude=["*.tmp.md"])
    assert globs.kept(["docs/a.md", "docs/deep/b.md", "docs/c.tmp.md", "src/docs.md"]) == ["docs/a.md", "docs/deep/b.md"]


def test_the_report_names_the_costliest_folders_with_records_and_seconds(repo: GitRepo) -> None:
    with Memory.open() as memory:
        report = memory.ingest_repository(repo.root)
    data = report.to_json()
    folders = {row["folder"]: row for row in data["folders"]}
    assert set(folders) == {"(root)", "docs", "diary", "(git history)"}
    assert folders["diary"]["records"] == 2 and folders["diary"]["embedded"] == 2
    assert folders["docs"]["records"] == 2
    assert folders["(git history)"]["records"] == 1
    # seconds are shown to two decimals: a folder read in under 5 ms shows 0.0, one that embedded does not
    assert all(row["seconds"] >= 0 for row in data["folders"]) and folders["diary"]["seconds"] > 0
    assert [row["seconds"] for row in data["folders"]] == sorted((row["seconds"] for row in data["folders"]), reverse=True)
    assert data["seconds"] > 0 and data["records_per_second"] > 0
    assert sum(row["records"] for row in data["folders"]) == data["added"]


def _chunk(text: str) -> Record:
    return Record.build(
        kind=RecordKind.DOC_CHUNK, title="docs/a.md › Long", text=text,
        provenance=Provenance(kind=SourceKind.DOC, ref="docs/a.md#long", uri="file:///a", mission="m",
                              time=datetime(2025, 1, 1, tzinfo=UTC)),
    )


def test_with_heads_a_document_chunk_is_embedded_by_its_head_cut_between_words() -> None:
    record = _chunk("# Long\n\n" + "слово " * 400)
    head = passage_text(record, DOC_CHUNK_HEADS)
    assert len(head) <= DOC_CHUNK_HEAD_CHARS
    assert record.embedding_text.startswith(head) and head.endswith("слово")


def test_by_default_a_document_chunk_is_embedded_whole() -> None:
    record = _chunk("# Long\n\n" + "слово " * 400)
    assert passage_text(record) == passage_text(record, {}) == record.embedding_text  # ADR 0034


def test_a_short_chunk_is_embedded_whole() -> None:
    record = _chunk("# Long\n\nShort text.")
    assert passage_text(record, DOC_CHUNK_HEADS) == record.embedding_text


def test_sections_whose_text_did_not_change_keep_their_vectors_when_an_edit_above_moves_them(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "guide")
    sections = "".join(f"## Part {n}\n\nStep {n} of the rotation checklist.\n\n" for n in range(1, 5))
    repo.commit("Add the guide", "2025-06-01T10:00:00+00:00", {"docs/guide.md": f"# Guide\n\nIntro.\n\n{sections}"})
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
        before = {r.provenance.ref: r.id for batch in memory.store.iterate() for r in batch if r.kind is RecordKind.DOC_CHUNK}
        old_vectors = memory.store.vectors_for(list(before.values()), memory.embedder.model_id)
        repo.commit("Expand the intro", "2025-06-02T10:00:00+00:00",
                    {"docs/guide.md": f"# Guide\n\nIntro.\n\nRead this first.\nThen the rest.\n\n{sections}"})
        report = memory.ingest_repository(repo.root)
        after = {r.provenance.ref: r.id for batch in memory.store.iterate() for r in batch if r.kind is RecordKind.DOC_CHUNK}
        new_vectors = memory.store.vectors_for(list(after.values()), memory.embedder.model_id)
    moved = [ref for ref in before if ref.startswith("docs/guide.md#part-")]
    assert len(moved) == 4 and all(before[ref] != after[ref] for ref in moved)  # their line numbers changed
    assert report.embedded == 2  # the edited intro and the new commit
    assert report.vectors_reused == 4
    for ref in moved:
        assert (new_vectors[after[ref]] == old_vectors[before[ref]]).all()


def test_a_narrowed_run_keeps_what_earlier_runs_stored_outside_its_globs(repo: GitRepo) -> None:
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
        report = memory.ingest_repository(repo.root, include=["docs/"])
        assert sum(report.removed.values()) == 0
        assert _doc_paths(memory) == {"README.md", "docs/setup.md", "diary/june-first.md", "diary/june-second.md"}
