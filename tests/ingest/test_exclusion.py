"""Ingest exclusion: ``.mission-memory-ignore`` in a git repository and ``.gitignore`` files in a plain
folder, in ``.gitignore`` syntax."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.errors import InputError
from mission_memory.ingest.exclusion import IngestExclusion, folder_files
from mission_memory.records import Record
from tests.conftest import GitRepo


@pytest.fixture
def memory() -> Iterator[Memory]:
    with Memory.open() as m:
        yield m


def _paths(memory: Memory) -> set[str]:
    records: list[Record] = [r for batch in memory.store.iterate() for r in batch]
    return {r.attributes["path"] for r in records if "path" in r.attributes}


def _write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_mission_memory_ignore_excludes_matching_tracked_files_and_a_negation_keeps_one(
    memory: Memory, make_git_repo: Callable[[str], GitRepo]
) -> None:
    repo = make_git_repo("repo")
    repo.commit("Docs and drafts", "2024-06-01T10:00:00+00:00", {
        ".mission-memory-ignore": "# drafts are not knowledge yet\ndocs/чернетки/*\n!docs/чернетки/готово.md\n*.private.md\n",
        "docs/guide.md": "# Guide\n\nBack up nightly.\n",
        "docs/чернетки/ідея.md": "# Ідея\n\nЩе не вирішено.\n",
        "docs/чернетки/готово.md": "# Готово\n\nВирішено.\n",
        "notes/pay.private.md": "# Pay\n\nSalaries.\n",
    })
    memory.ingest_repository(repo.root)
    assert _paths(memory) == {"docs/guide.md", "docs/чернетки/готово.md"}


def test_a_file_newly_ignored_is_removed_on_the_next_ingest(
    memory: Memory, make_git_repo: Callable[[str], GitRepo]
) -> None:
    repo = make_git_repo("repo")
    repo.commit("Docs", "2024-06-01T10:00:00+00:00", {
        "docs/guide.md": "# Guide\n\nBack up nightly.\n", "docs/old.md": "# Old\n\nObsolete.\n",
    })
    memory.ingest_repository(repo.root)
    assert "docs/old.md" in _paths(memory)
    repo.commit("Ignore the old page", "2024-06-02T10:00:00+00:00", {".mission-memory-ignore": "docs/old.md\n"})
    report = memory.ingest_repository(repo.root)
    assert _paths(memory) == {"docs/guide.md"}
    assert report.removed["doc_chunk"] == 1


def test_a_plain_folder_honours_its_gitignore_files_at_every_depth(tmp_path: Path) -> None:
    root = tmp_path / "folder"
    _write(root, {
        ".gitignore": "*.log\nout/\n",
        "README.md": "# Readme\n",
        "run.log": "noise\n",
        "out/report.md": "# Generated\n",
        "docs/.gitignore": "draft-*.md\n!draft-final.md\n",
        "docs/draft-1.md": "# Draft\n",
        "docs/draft-final.md": "# Final\n",
        "docs/guide.md": "# Guide\n",
        "src/out/notes.md": "# Also ignored: out/ matches at any depth\n",
        "node_modules/pkg/README.md": "# Vendor\n",
    })
    assert folder_files(root) == [".gitignore", "README.md", "docs/.gitignore", "docs/draft-final.md", "docs/guide.md"]


def test_a_plain_folder_ingest_leaves_out_what_gitignore_and_the_ignore_file_exclude(
    memory: Memory, tmp_path: Path
) -> None:
    root = tmp_path / "folder"
    _write(root, {
        ".gitignore": "build-notes/\n",
        ".mission-memory-ignore": "docs/secret.md\n",
        "docs/guide.md": "# Посібник\n\nРезервні копії щоночі.\n",
        "docs/secret.md": "# Secret\n\nKeys.\n",
        "build-notes/tmp.md": "# Tmp\n",
    })
    memory.ingest_repository(root)
    assert _paths(memory) == {"docs/guide.md"}


def test_an_invalid_pattern_is_an_error_naming_the_file_and_line_and_stored_records_stay(
    memory: Memory, make_git_repo: Callable[[str], GitRepo]
) -> None:
    repo = make_git_repo("repo")
    repo.commit("Docs", "2024-06-01T10:00:00+00:00", {"docs/guide.md": "# Guide\n\nBack up nightly.\n"})
    memory.ingest_repository(repo.root)
    before = memory.status()["records"]
    repo.commit("A broken ignore file", "2024-06-02T10:00:00+00:00", {".mission-memory-ignore": "docs/old.md\n!\n"})
    with pytest.raises(InputError, match=r"\.mission-memory-ignore, line 2: '!' is not a \.gitignore pattern"):
        memory.ingest_repository(repo.root)
    assert memory.status()["records"] == before


def test_without_an_ignore_file_nothing_is_excluded(tmp_path: Path) -> None:
    exclusion = IngestExclusion(tmp_path)
    assert exclusion.kept(["a.md", "docs/b.md"]) == ["a.md", "docs/b.md"]
