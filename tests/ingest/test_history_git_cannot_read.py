"""A history git cannot read whole: a missing blob is skipped and named, a shallow clone is reported
as such; neither aborts the ingest (issue 21 item 2: an ingest of a 4,193-commit repository stored
nothing because git could not read one old file)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.records import RecordKind
from tests.conftest import NYGARD_ADR, GitRepo

runner = CliRunner()


def _history(repo: GitRepo, commits: int) -> None:
    repo.commit("Add the upload ledger decision", "2025-01-02T10:00:00+00:00",
                {"docs/adr/0001-use-postgresql.md": NYGARD_ADR, "README.md": "# Uploader\n\nMoves files.\n"})
    for i in range(commits - 1):
        repo.commit(f"Tune the retry budget, step {i}", f"2025-01-{i + 3:02d}T10:00:00+00:00",
                    {"docs/retries.md": f"# Retries\n\nThe upload proxy retries {i + 2} times.\n"})


def _drop_loose_object(repo: GitRepo, sha: str) -> None:
    path = repo.root / ".git" / "objects" / sha[:2] / sha[2:]
    assert path.is_file(), "the test needs the blob as a loose object"
    path.unlink()


def test_a_missing_history_blob_is_skipped_and_named_and_the_ingest_completes(
    make_git_repo: Callable[[str], GitRepo],
) -> None:
    repo = make_git_repo("damaged")
    _history(repo, 4)
    first_version = repo.git("rev-parse", "HEAD~2:docs/retries.md")  # a version no longer checked out
    _drop_loose_object(repo, first_version)
    assert subprocess.run(["git", "log", "--numstat"], cwd=repo.root, capture_output=True).returncode != 0

    result = runner.invoke(app, ["ingest", str(repo.root), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["by_kind"]["added"][RecordKind.COMMIT.value] == 4  # every commit, the damaged ones too
    named = {(u["path"], u["object"]) for u in data["unreadable_history"]}
    assert named == {("docs/retries.md", first_version)}
    assert {u["commit"] for u in data["unreadable_history"]} == {
        repo.git("rev-parse", "HEAD~2"), repo.git("rev-parse", "HEAD~1")}  # written, then changed
    assert any("could not read 1 object" in w for w in data["warnings"])
    assert data["shallow"] is False
    with Memory.open() as memory:
        kinds = memory.status()["layers"]
        assert kinds["workflow"][RecordKind.DECISION.value] == 1
        stored = memory.store.records_of_kind([RecordKind.COMMIT.value], mission="damaged", limit=10)
        later = next(r for r in stored if r.title == "Tune the retry budget, step 2")
        assert later.attributes["files"] == ["docs/retries.md"] and later.attributes["insertions"] == 1

    # The human summary names it too (another mission, so the whole history is read again).
    again = runner.invoke(app, ["ingest", str(repo.root), "--mission", "damaged-again"])
    assert again.exit_code == 0, again.output
    assert "could not read 1 object" in again.stdout and "docs/retries.md in " in again.stdout


def test_a_shallow_clone_is_ingested_and_reported_as_shallow(make_git_repo: Callable[[str], GitRepo],
                                                              tmp_path: Path) -> None:
    origin = make_git_repo("origin")
    _history(origin, 8)
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "5", origin.root.as_uri(), str(clone)], check=True,
                   capture_output=True)

    result = runner.invoke(app, ["ingest", str(clone), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["shallow"] is True
    assert data["by_kind"]["added"][RecordKind.COMMIT.value] == 5
    assert any("shallow clone" in w and "--unshallow" in w for w in data["warnings"])
    human = runner.invoke(app, ["ingest", str(clone)])
    assert human.exit_code == 0 and "is a shallow clone" in human.stdout

    full = runner.invoke(app, ["ingest", str(origin.root), "--json"])
    assert json.loads(full.stdout)["shallow"] is False


def test_a_partial_clone_is_read_from_what_it_holds_without_fetching(make_git_repo: Callable[[str], GitRepo],
                                                                      tmp_path: Path) -> None:
    """A blobless clone keeps old blobs on its remote; counting lines would fetch each of them."""
    origin = make_git_repo("origin")
    _history(origin, 4)
    origin.git("config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "partial"
    subprocess.run(["git", "clone", "-q", "--filter=blob:none", origin.root.as_uri(), str(clone)], check=True,
                   capture_output=True)

    def missing() -> set[str]:
        listed = subprocess.run(["git", "rev-list", "--objects", "--missing=print", "HEAD"], cwd=clone, check=True,
                                capture_output=True, text=True).stdout
        return {line[1:] for line in listed.splitlines() if line.startswith("?")}

    before = missing()
    assert before  # the older versions of docs/retries.md stayed on the remote
    result = runner.invoke(app, ["ingest", str(clone), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["by_kind"]["added"][RecordKind.COMMIT.value] == 4
    assert {u["object"] for u in data["unreadable_history"]} == before
    assert missing() == before  # nothing was fetched
