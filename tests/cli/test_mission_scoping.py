"""The CLI answers from the mission of the repository it runs in; `forget` and `demo` (ADR 0029)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from tests.conftest import GitRepo
from tests.security.held_embeddings import embedding_endpoint

runner = CliRunner()

QUESTION = "Which database holds the upload ledger?"


def _query(args: list[str]) -> dict:
    result = runner.invoke(app, ["query", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_query_in_a_repository_answers_from_its_mission_only(
    two_missions: tuple[GitRepo, GitRepo], monkeypatch: pytest.MonkeyPatch
) -> None:
    uploader, archive = two_missions
    monkeypatch.chdir(archive.root / "src" / "ledger")
    data = _query([QUESTION])
    assert data["entries"] and {e["mission"] for e in data["entries"]} == {"archive"}
    assert data["mission_scope"] == {"mission": "archive", "all_missions": False, "reason": "default",
                                     "default_mission": "archive"}
    assert "Mission: 'archive' (the repository asked from; widen with --all-missions)\n" in data["digest"]
    monkeypatch.chdir(uploader.root / "docs")
    data = _query([QUESTION])
    assert {e["mission"] for e in data["entries"]} == {"uploader"}


def test_all_missions_widens_on_purpose_and_says_so(
    two_missions: tuple[GitRepo, GitRepo], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, archive = two_missions
    monkeypatch.chdir(archive.root)
    data = _query([QUESTION, "--all-missions"])
    assert {e["mission"] for e in data["entries"]} == {"archive", "uploader"}
    assert data["mission_scope"]["reason"] == "all-asked" and data["mission_scope"]["all_missions"] is True
    assert "Missions: all (widened on purpose)" in data["digest"]
    assert _query([QUESTION, "--mission", "uploader"])["mission_scope"]["reason"] == "asked"


def test_outside_a_stored_mission_the_query_answers_from_all_and_the_header_says_which_was_missing(
    two_missions: tuple[GitRepo, GitRepo], make_git_repo: Callable[[str], GitRepo], monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = make_git_repo("never-ingested")
    elsewhere.commit("init", "2024-01-01T00:00:00+00:00", {"a.txt": "a\n"})
    monkeypatch.chdir(elsewhere.root)
    data = _query([QUESTION])
    assert {e["mission"] for e in data["entries"]} == {"archive", "uploader"}
    assert data["mission_scope"] == {"mission": None, "all_missions": True, "reason": "default-not-stored",
                                     "default_mission": "never-ingested"}
    assert "Missions: all (the default mission 'never-ingested' is not stored" in data["digest"]
    plain = runner.invoke(app, ["query", QUESTION])
    assert plain.exit_code == 0 and "Missions: all (the default mission 'never-ingested' is not stored" in plain.stdout


def test_the_retrieval_event_records_the_mission_the_query_answered_from(
    two_missions: tuple[GitRepo, GitRepo], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, archive = two_missions
    monkeypatch.chdir(archive.root)
    _query([QUESTION])
    with Memory.open() as memory:
        event = memory.retrieval_events(1)[0]
    assert event.mission == "archive" and event.filters.get("mission") == "archive"


def test_mission_and_all_missions_together_are_an_error(two_missions: tuple[GitRepo, GitRepo]) -> None:
    result = runner.invoke(app, ["query", QUESTION, "--mission", "archive", "--all-missions"])
    assert result.exit_code == 1 and "--all-missions" in result.stderr and "'archive'" in result.stderr


def test_forget_deletes_a_missions_records_vectors_and_events_and_nothing_else(
    two_missions: tuple[GitRepo, GitRepo], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, archive = two_missions
    monkeypatch.chdir(archive.root)
    _query([QUESTION])
    with Memory.open() as memory:
        before = memory.status()
    archive_records = before["missions"]["archive"]

    result = runner.invoke(app, ["forget", "--mission", "archive", "--yes", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["mission"] == "archive"
    assert report["deleted"]["records"] == archive_records and report["deleted"]["retrieval_events"] == 1

    with Memory.open() as memory:
        after = memory.status()
        assert memory.store.records_of_kind(["decision", "commit", "doc_chunk"], mission="archive") == []
    assert "archive" not in after["missions"] and after["missions"]["uploader"] == before["missions"]["uploader"]
    assert sum(after["vectors_by_model"].values()) == sum(before["vectors_by_model"].values()) - archive_records
    assert after["retrieval_events"] == before["retrieval_events"] - 1


def test_forget_asks_first_and_keeps_everything_when_refused(two_missions: tuple[GitRepo, GitRepo]) -> None:
    refused = runner.invoke(app, ["forget", "--mission", "archive"], input="n\n")
    assert refused.exit_code == 1 and "nothing deleted" in refused.stderr
    without_yes = runner.invoke(app, ["forget", "--mission", "archive", "--json"])
    assert without_yes.exit_code == 1 and "--yes" in without_yes.stderr
    with Memory.open() as memory:
        assert "archive" in memory.store.missions()
    accepted = runner.invoke(app, ["forget", "--mission", "archive"], input="y\n")
    assert accepted.exit_code == 0, accepted.output
    assert "Deleted mission 'archive'" in accepted.stdout
    with Memory.open() as memory:
        assert set(memory.store.missions()) == {"uploader"}


def test_forget_of_an_unknown_mission_names_it_and_the_stored_ones(two_missions: tuple[GitRepo, GitRepo]) -> None:
    result = runner.invoke(app, ["forget", "--mission", "nope", "--yes"])
    assert result.exit_code == 1 and "'nope'" in result.stderr and "archive, uploader" in result.stderr


def test_demo_keeps_its_memory_apart_from_the_users_missions_and_removes_it(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo ingests this whole repository, as a user's demo does, so the README's record count is
    checked against the real count; its passages are embedded by a loopback endpoint
    (tests/security/held_embeddings.py: a vector is a fixed function of the text) instead of the shipped
    model, which took about 80 CPU-s of the suite for ~900 records. What the demo itself decides (its
    own data dir, the user's store untouched, the count, the digest's mission, ``--remove``) does not
    depend on which embedder made the vectors; the shipped embedder's ingest is covered by every other
    ingest test."""
    with embedding_endpoint() as endpoint:
        for name, value in endpoint.environment().items():
            monkeypatch.setenv(name, value)
        result = runner.invoke(app, ["demo", "--budget", "1500"])
    assert result.exit_code == 0, result.output
    assert "Mission: 'mission-memory-demo'" in result.stdout
    assert "demo --remove" in result.stderr and str(data_dir / "demo") in result.stderr.replace("\n", "")
    # the README's record count stays within 30 % of what the demo ingests (it grows with the history)
    ingested = re.search(r"Ingested .*: (\d+) added", result.stderr)
    said = re.search(r"The demo ingests this repository\s+\(about (\d[\d,]*) records",
                     (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8"))
    assert ingested is not None and said is not None
    stated = int(said.group(1).replace(",", ""))  # the README writes 1,070
    assert abs(int(ingested.group(1)) - stated) <= 0.30 * int(ingested.group(1)), ingested.group(0)
    with Memory.open() as memory:  # the user's store: untouched by the demo
        assert memory.store.missions() == {}
    assert (data_dir / "demo" / "memory.db").is_file()

    removed = runner.invoke(app, ["demo", "--remove"])
    assert removed.exit_code == 0 and "Removed the demo's memory" in removed.stderr
    assert not (data_dir / "demo").exists()
