"""An archived rotation brief takes the access level of everything it shows, not only of the records it quotes.

A brief's profile, recent files and other components are built from commits (paths, subjects,
counts) and corrections, not quoted as records. A new user's brief over a repository whose
``admins/`` folder is restricted by the path mapping quoted no restricted record, so it was archived
``internal`` while naming ``admins/`` files and their commits, and ``export --max-access-level
internal`` (the README's shareable export) carried them.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.records import AccessLevel, RecordKind
from mission_memory.teams.access_control import AccessContext, Role
from tests.conftest import GitRepo

CANARIES = ("admins/", "SPRUCE-ADMIN-7", "SPRUCE-COMMIT-8")


def _memory(data_dir: Path) -> Memory:
    return Memory(load_settings(data_dir=data_dir, access_paths={"admins/**": "restricted"}))


def _mission(make_git_repo: Callable[[str], GitRepo], data_dir: Path) -> GitRepo:
    repo = make_git_repo("svc")
    repo.commit("Add the service guide", "2024-03-01T10:00:00+00:00",
                {"docs/guide.md": "# Guide\n\nThe service retries uploads three times.\n"})
    repo.commit("Add the user administrator runbook", "2024-03-02T10:00:00+00:00",
                {"admins/user-administrator.md": "# User administrators\n\nThe admin group is SPRUCE-ADMIN-7.\n"})
    repo.commit("Point admins at SPRUCE-COMMIT-8", "2024-03-03T10:00:00+00:00",
                {"admins/user-administrator.md": "# User administrators\n\nAsk SPRUCE-COMMIT-8.\n"})
    repo.commit("Explain the upload retries", "2024-03-04T10:00:00+00:00",
                {"docs/guide.md": "# Guide\n\nThe service retries uploads three times, then parks them.\n"})
    with _memory(data_dir) as memory:
        memory.ingest_repository(repo.root, mission="svc")
    return repo


def _shown(text: str) -> list[str]:
    return [c for c in CANARIES if c in text]


def test_a_brief_naming_restricted_files_and_commits_is_archived_restricted_and_stays_out_of_an_internal_export(
    make_git_repo: Callable[[str], GitRepo], tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    repo = _mission(make_git_repo, data_dir)
    lead = AccessContext("alice", AccessLevel.RESTRICTED, Role.LEAD)
    with _memory(data_dir) as memory:
        briefs = [memory.rotation_brief(mission="svc", since="2024-01-01", repository=repo.root),  # the local user
                  memory.rotation_brief(mission="svc", since="2024-01-01", access=lead)]
        quoted_levels = {r.access_level for b in briefs for r in memory.store.get(
            [rid for item, _ in b.entries for rid in item.record_ids]).values()}
        archived = memory.store.get([b.archived_id for b in briefs])
        out = io.StringIO()
        memory.export_memory(out, mission="svc", max_access_level=AccessLevel.INTERNAL)
    assert quoted_levels <= {AccessLevel.INTERNAL, AccessLevel.PUBLIC}  # no restricted record is quoted …
    for brief in briefs:
        assert _shown(brief.text), brief.text  # … yet the brief names the restricted folder and its commits
        assert archived[brief.archived_id].access_level is AccessLevel.RESTRICTED
    exported = out.getvalue()
    assert not _shown(exported), _shown(exported)


def test_a_brief_showing_nothing_restricted_is_archived_at_the_level_of_what_it_quotes(
    make_git_repo: Callable[[str], GitRepo], tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    _mission(make_git_repo, data_dir)
    reader = AccessContext("bob", AccessLevel.INTERNAL)
    with _memory(data_dir) as memory:
        brief = memory.rotation_brief(mission="svc", since="2024-01-01", access=reader)
        archived = memory.store.get([brief.archived_id])[brief.archived_id]
        kinds = {r.kind for b in memory.store.iterate() for r in b}
    assert RecordKind.HANDOVER_BRIEF in kinds
    assert not _shown(brief.text)
    assert archived.access_level is AccessLevel.INTERNAL
