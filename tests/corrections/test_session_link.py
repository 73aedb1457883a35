"""A correction given a session links only to a retrieval event of that session (ADR 0082), through the
real CLI, on a real git repository and the real embedder."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.records import RecordKind
from tests.conftest import GitRepo

# shares no content word with any query below: only the session can link it
SQLITE_SUMMARY = "Offline field teams keep it in SQLite"


@pytest.fixture
def ingested(mission_repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "alice@example.org")
    with Memory.open() as memory:
        memory.ingest_repository(mission_repo.root)
    return mission_repo


def _adr_id(number: int) -> str:
    with Memory.open() as memory:
        decisions = memory.store.records_of_kind([RecordKind.DECISION.value], mission="uploader")
    return next(r.id for r in decisions if r.attributes.get("number") == number)


def _cli_query(runner: CliRunner, task: str, *flags: str) -> dict[str, Any]:
    """Ask through the CLI and return its retrieval event as ``events --limit 1 --json`` shows it."""
    asked = runner.invoke(app, ["query", task, "--mission", "uploader", *flags])
    assert asked.exit_code == 0, asked.output
    shown = runner.invoke(app, ["events", "--limit", "1", "--json"])
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.stdout)
    [event] = data if isinstance(data, list) else data["events"]
    return dict(event)


def _cli_correct(runner: CliRunner, *flags: str) -> dict[str, Any]:
    done = runner.invoke(app, [
        "correct", "--class", "missed-decision", "--category", "data", "--outcome", "modified", "--json", *flags,
    ])
    assert done.exit_code == 0, done.output
    return dict(json.loads(done.stdout))


def test_correct_with_a_session_links_to_that_sessions_query_not_to_another_sessions(ingested: GitRepo) -> None:
    runner = CliRunner()
    adr2 = _adr_id(2)
    # an older query of another session (an MCP client's), about the ledger, whose digest serves ADR-2
    with Memory.open() as memory:
        other = memory.query("Why does the upload ledger use SQLite in WAL mode?", client="mcp", session_id="mcp-1")
    assert adr2 in [e.record.id for e in other.entries]
    # this session's own query: the documents only, so its digest cannot serve ADR-2
    own = _cli_query(runner, "How are the nightly backups copied to cold storage?", "--scope", "domain")
    assert adr2 not in own["record_ids"] and own["session_id"] != "mcp-1"

    correction = _cli_correct(runner, "--summary", SQLITE_SUMMARY, "--expected", "ADR-0002",
                              "--session", own["session_id"])

    label = correction["label"]
    assert (label["retrieval_event_id"], label["retrieval_caused"]) == (own["id"], "true")
    assert label["missed_record_ids"] == [adr2]


def test_a_session_without_a_query_links_to_nothing_though_another_session_asked_about_it(
    ingested: GitRepo,
) -> None:
    runner = CliRunner()
    _cli_query(runner, "Why does the upload ledger use SQLite in WAL mode?")

    correction = _cli_correct(runner, "--summary", "The ledger stays in SQLite", "--expected", "ADR-2",
                              "--session", "a-session-that-asked-nothing")

    assert correction["label"]["retrieval_caused"] == "unknown"
    assert correction["label"]["retrieval_event_id"] is None


def test_within_its_session_a_correction_follows_the_query_it_is_about_before_a_later_one(ingested: GitRepo) -> None:
    with Memory.open() as memory:
        about = memory.query("Where is the upload ledger kept?", scope="domain", session_id="sess-1")
        memory.query("How are the API keys rotated?", scope="domain", session_id="sess-1")
        memory.query("Which database holds the upload ledger?", session_id="sess-2")
        correction = memory.record_correction(
            correction_class="missed-decision", category="data", outcome="modified",
            summary="The ledger stays in SQLite for offline field teams", expected=["ADR-2"], session_id="sess-1",
        )
    assert correction.label.retrieval_event_id == about.retrieval_event_id
    assert correction.label.retrieval_caused.value == "true"


def test_a_correction_naming_no_record_follows_its_sessions_latest_query_but_accuses_it_of_nothing(
    ingested: GitRepo,
) -> None:
    with Memory.open() as memory:
        latest = memory.query("How are the API keys rotated?", scope="domain", session_id="sess-m")
        correction = memory.record_correction(
            correction_class="wrong-approach", category="data", outcome="modified",
            summary=SQLITE_SUMMARY, session_id="sess-m",
        )
    # the session's latest event is the one it follows; it is not about that query's task and names
    # no record, so whether that digest missed something cannot be said (ADR 0062's protection)
    assert correction.label.retrieval_event_id == latest.retrieval_event_id
    assert correction.label.retrieval_caused.value == "unknown"
    assert correction.label.missed_record_ids == ()
