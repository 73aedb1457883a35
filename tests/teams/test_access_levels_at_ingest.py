"""Access levels at ingest: a path-pattern setting, front matter in documents and ADRs, tracker labels."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.config import load_settings
from mission_memory.errors import ConfigError, InputError
from mission_memory.records import AccessLevel, RecordKind
from mission_memory.trackers.local_files import LocalFolderTracker
from tests.conftest import GitRepo

RESTRICTED_FRONT = "---\naccess: restricted\n---\n\n# Vault\n\nThe vault opens with two keys.\n"
SECRET_ADR = """---
status: accepted
date: 2024-06-01
access: secret
---

# Encrypt the archive

## Context and Problem Statement

Disks get lost.

## Decision Outcome

Chosen option: "envelope encryption".
"""
UKRAINIAN_PUBLIC = "---\naccess: public\n---\n\n# Довідка для операторів\n\nЗавантаження відновлюються після втрати зв'язку.\n"


@pytest.fixture
def repo(make_git_repo: Callable[[str], GitRepo]) -> GitRepo:
    repo = make_git_repo("ops")
    repo.commit("docs", "2024-06-01T10:00:00+00:00", {
        "docs/guide.md": "# Guide\n\nUploads are retried.\n",
        "docs/security/keys.md": "# Keys\n\nKeys rotate monthly.\n",
        "docs/security/public-notice.md": "---\naccess: public\n---\n\n# Notice\n\nA public notice in a protected folder.\n",
        "docs/ops/vault.md": RESTRICTED_FRONT,
        "docs/faq-uk.md": UKRAINIAN_PUBLIC,
        "docs/adr/0001-encrypt-the-archive.md": SECRET_ADR,
    })
    return repo


def _levels(memory: Memory) -> dict[str, str]:
    out = {}
    for batch in memory.store.iterate():
        for r in batch:
            path = r.attributes.get("path")
            if isinstance(path, str):
                out[path] = r.access_level.value
    return out


def test_levels_come_from_the_path_mapping_and_front_matter_with_internal_by_default(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MISSION_MEMORY_ACCESS_PATHS", '{"docs/security/**": "restricted"}')
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
        assert _levels(memory) == {
            "docs/guide.md": "internal",
            "docs/security/keys.md": "restricted",
            "docs/security/public-notice.md": "restricted",  # a file cannot declassify itself out of the folder
            "docs/ops/vault.md": "restricted",
            "docs/faq-uk.md": "public",
            "docs/adr/0001-encrypt-the-archive.md": "secret",
        }
        decision = next(r for b in memory.store.iterate() for r in b if r.kind is RecordKind.DECISION)
        assert decision.access_level is AccessLevel.SECRET and decision.attributes["access"] == "secret"


def test_changing_the_mapping_re_stores_the_records_with_their_new_level(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
        assert _levels(memory)["docs/security/keys.md"] == "internal"
    monkeypatch.setenv("MISSION_MEMORY_ACCESS_PATHS", '{"docs/security/keys.md": "secret"}')
    with Memory.open() as memory:
        report = memory.ingest_repository(repo.root)
        assert _levels(memory)["docs/security/keys.md"] == "secret"
        assert report.updated[RecordKind.DOC_CHUNK.value] >= 1
        again = memory.ingest_repository(repo.root)
        assert sum(again.added.values()) == 0 and sum(again.updated.values()) == 0  # idempotent


def test_an_unknown_level_in_front_matter_is_an_error_naming_the_file_and_nothing_is_stored(
    repo: GitRepo,
) -> None:
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
        before = memory.store.counts()
    repo.commit("bad level", "2024-07-01T10:00:00+00:00", {
        "docs/guide.md": "---\naccess: top-secret\n---\n\n# Guide\n\nChanged.\n",
        "docs/new.md": "# New\n\nA new file.\n",
    })
    with Memory.open() as memory:
        with pytest.raises(InputError, match=r"docs/guide\.md \(front matter\): access level 'top-secret' is not one of"):
            memory.ingest_repository(repo.root)
        assert memory.store.counts() == before


def test_an_unknown_level_in_the_setting_is_a_clear_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MISSION_MEMORY_ACCESS_PATHS", '{"docs/security/**": "confidential"}')
    with pytest.raises(ConfigError, match="access_paths"):
        load_settings()
    done = CliRunner().invoke(app, ["status"])
    assert done.exit_code == 1 and "access_paths" in done.output


def test_tracker_labels_give_the_task_and_its_comments_their_level(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "OPS-9.md").write_text(
        "---\nkey: OPS-9\ntitle: Rotate the escrow key\nlabels: [security, access:restricted]\nstate: open\n"
        "created: 2025-01-10T09:00:00Z\nupdated: 2025-01-11T09:00:00Z\n---\n\nBook the ceremony.\n\n"
        "## Comments\n\n### alice · 2025-01-11T09:00:00Z\n\nBooked for Friday.\n",
        encoding="utf-8",
    )
    (tasks / "OPS-10.md").write_text(
        "---\nkey: OPS-10\ntitle: Tidy the guide\nlabels: [docs]\nstate: open\n"
        "created: 2025-01-10T09:00:00Z\nupdated: 2025-01-11T09:00:00Z\n---\n\nTypos.\n",
        encoding="utf-8",
    )
    with Memory.open() as memory:
        memory.ingest_tracker(LocalFolderTracker(tasks), mission="ops")
        levels = {(r.kind.value, r.title.split(":")[0]): r.access_level.value
                  for b in memory.store.iterate() for r in b}
    assert levels[("issue", "OPS-9")] == "restricted" and levels[("issue", "OPS-10")] == "internal"
    comments = [level for (kind, _), level in levels.items() if kind == "comment"]
    assert comments == ["restricted"]


def test_an_unknown_level_in_a_tracker_label_is_an_error_naming_the_task(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "OPS-9.md").write_text(
        "---\nkey: OPS-9\ntitle: Rotate\nlabels: [access:cosmic]\nstate: open\n"
        "created: 2025-01-10T09:00:00Z\nupdated: 2025-01-11T09:00:00Z\n---\n\nBook it.\n",
        encoding="utf-8",
    )
    with Memory.open() as memory:
        with pytest.raises(InputError, match=r"task OPS-9 \(label 'access:cosmic'\): access level 'cosmic'"):
            memory.ingest_tracker(LocalFolderTracker(tasks), mission="ops")
        assert not any(memory.store.counts().values())
