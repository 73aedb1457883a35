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


def _commit_levels(memory: Memory) -> dict[str, str]:
    return {r.title: r.access_level.value for b in memory.store.iterate() for r in b if r.kind is RecordKind.COMMIT}


def test_a_commit_takes_the_most_restricted_level_of_the_files_it_touches(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.commit("guide only", "2024-06-02T10:00:00+00:00", {"docs/guide.md": "# Guide\n\nUploads are retried twice.\n"})
    repo.commit("keys only", "2024-06-03T10:00:00+00:00", {"docs/security/keys.md": "# Keys\n\nKeys rotate weekly.\n"})
    repo.commit("vault only", "2024-06-04T10:00:00+00:00", {"docs/ops/vault.md": RESTRICTED_FRONT + "Two witnesses.\n"})
    repo.commit("a script beside the keys", "2024-06-05T10:00:00+00:00", {"docs/security/rotate.sh": "echo rotate\n"})
    monkeypatch.setenv("MISSION_MEMORY_ACCESS_PATHS", '{"docs/security/**": "restricted"}')
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
        assert _commit_levels(memory) == {
            "docs": "secret",  # touches the secret ADR
            "guide only": "internal",
            "keys only": "restricted",  # the path mapping
            "vault only": "restricted",  # the file's front matter
            "a script beside the keys": "restricted",  # not a document, but inside the mapped folder
        }
        again = memory.ingest_repository(repo.root)
        assert sum(again.added.values()) == 0 and sum(again.updated.values()) == 0  # idempotent


def test_a_new_mapping_or_front_matter_reclassifies_the_commits_stored_before(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.commit("keys only", "2024-06-03T10:00:00+00:00", {"docs/security/keys.md": "# Keys\n\nKeys rotate weekly.\n"})
    repo.commit("guide only", "2024-06-04T10:00:00+00:00", {"docs/guide.md": "# Guide\n\nUploads are retried twice.\n"})
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
        assert _commit_levels(memory)["keys only"] == "internal"
    monkeypatch.setenv("MISSION_MEMORY_ACCESS_PATHS", '{"docs/security/**": "restricted"}')
    with Memory.open() as memory:
        report = memory.ingest_repository(repo.root)  # no new commit: the stored ones are reclassified
        assert _commit_levels(memory)["keys only"] == "restricted"
        assert report.updated[RecordKind.COMMIT.value] == 1 and report.added[RecordKind.COMMIT.value] == 0
        assert memory.store.count_kind("ops", RecordKind.COMMIT.value) == 3  # replaced, not duplicated
        assert [w for w in report.warnings if "MISSION_MEMORY_ACCESS_PATHS differs" in w]
    repo.commit("mark the guide restricted", "2024-06-05T10:00:00+00:00",
                {"docs/guide.md": "---\naccess: restricted\n---\n\n# Guide\n\nUploads are retried twice.\n"})
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
        levels = _commit_levels(memory)
        assert levels["guide only"] == "restricted" and levels["mark the guide restricted"] == "restricted"


def test_an_include_glob_keeps_the_levels_of_files_it_does_not_read_for_their_commits(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
        repo.commit("vault only", "2024-06-04T10:00:00+00:00", {"docs/ops/vault.md": RESTRICTED_FRONT + "Two witnesses.\n"})
        memory.ingest_repository(repo.root, include=["docs/guide.md"])  # the vault's front matter is not read
        assert _commit_levels(memory)["vault only"] == "restricted"


def test_an_ingest_without_the_mapping_says_the_mapping_changed(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """An ingest from a shell (or a cron job) that forgot the mapping lowers levels: it must say so."""
    monkeypatch.setenv("MISSION_MEMORY_ACCESS_PATHS", '{"docs/security/**": "restricted"}')
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
        same = memory.ingest_repository(repo.root)
        assert not [w for w in same.warnings if "MISSION_MEMORY_ACCESS_PATHS" in w]
    monkeypatch.delenv("MISSION_MEMORY_ACCESS_PATHS")
    with Memory.open() as memory:
        forgot = memory.ingest_repository(repo.root)
    (warning,) = [w for w in forgot.warnings if "MISSION_MEMORY_ACCESS_PATHS differs" in w]
    assert "(now: none)" in warning
