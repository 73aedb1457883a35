"""`handover note`, `handover note --closes`, `handover notes` and `brief ack --read-back` over a real store
(typer's CliRunner in process, and one real subprocess), issue 23 items 1 and 5, ADR 0060."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from tests.conftest import GitRepo

MISSION = "uploader"


@pytest.fixture
def ingested(make_git_repo: Callable[[str], GitRepo]) -> GitRepo:
    repo = make_git_repo(MISSION)
    repo.git("config", "user.name", "alice")
    repo.commit("Ledger: write-ahead log", "2025-03-03T10:00:00+00:00", {"src/ledger/wal.py": "WAL = True\n"})
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
    return repo


def _run(monkeypatch: pytest.MonkeyPatch, operator: str, *args: str) -> tuple[int, str, str]:
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", operator)
    done = CliRunner().invoke(app, list(args))
    return done.exit_code, done.stdout, done.stderr


def test_notes_are_listed_whole_until_a_later_note_closes_them(ingested: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = _run(monkeypatch, "alice", "handover", "note", "Retry storms come from the client timeout.",
                          "--kind", "hypothesis", "--json")
    assert code == 0, err
    hypothesis = json.loads(out)
    code, out, err = _run(monkeypatch, "alice", "handover", "note", "Do not run the migration on Friday.",
                          "--kind", "warning", "--json")
    assert code == 0, err
    code, out, _ = _run(monkeypatch, "bob", "handover", "notes", "--json")
    rows = json.loads(out)
    assert code == 0 and [r["kind"] for r in rows] == ["warning", "hypothesis"]  # newest first
    assert {r["operator"] for r in rows} == {"alice"} and rows[1]["text"] == "Retry storms come from the client timeout."
    note_id = rows[1]["note_id"]
    assert hypothesis["ref"] == f"handover-note/{note_id}"

    # bob, the successor, replaces alice's hypothesis with his own, naming it by the 12 characters a brief shows
    code, out, err = _run(monkeypatch, "bob", "handover", "note", "The timeout is fine; the proxy drops idle links.",
                          "--kind", "hypothesis", "--closes", note_id[:12])
    assert code == 0, err
    assert out.startswith("Stored handover hypothesis ")
    code, out, _ = _run(monkeypatch, "carol", "handover", "notes")
    assert code == 0
    assert "The timeout is fine; the proxy drops idle links." in out and "Do not run the migration" in out
    assert "Retry storms come from" not in out
    assert "[hypothesis] " in out and " by bob at " in out

    # a resolved note closes without opening anything
    warning = next(r["note_id"] for r in json.loads(_run(monkeypatch, "bob", "handover", "notes", "--json")[1])
                   if r["kind"] == "warning")
    code, _, err = _run(monkeypatch, "bob", "handover", "note", "Migration ran on Monday.", "--kind", "resolved",
                        "--closes", warning)
    assert code == 0, err
    left = json.loads(_run(monkeypatch, "carol", "handover", "notes", "--json")[1])
    assert [r["text"] for r in left] == ["The timeout is fine; the proxy drops idle links."]


def test_the_id_a_stored_note_is_printed_with_is_the_one_brief_and_notes_show_and_closes_takes(
    ingested: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = _run(monkeypatch, "alice", "handover", "note", "Do not run the migration on Friday.",
                          "--kind", "warning")
    assert code == 0, err
    printed = re.fullmatch(r"Stored handover warning ([0-9a-f]{12}) for mission 'uploader' \(the id `brief` and "
                           r"`handover notes` show; `--closes \1` closes it\)\n", out)
    assert printed is not None, out
    note_id = printed.group(1)
    code, out, _ = _run(monkeypatch, "bob", "handover", "notes")
    assert code == 0 and f"\n### 1. [warning] {note_id} by alice at " in out, out
    code, out, _ = _run(monkeypatch, "bob", "brief")
    assert code == 0 and f"id {note_id}" in out
    code, out, _ = _run(monkeypatch, "alice", "handover", "note", "Again, as JSON.", "--kind", "hypothesis", "--json")
    shown = json.loads(out)
    assert shown["ref"] == f"handover-note/{shown['note_id']}" and shown["note_id"] != shown["record_id"]
    code, _, err = _run(monkeypatch, "bob", "handover", "note", "Migration ran on Monday.", "--kind", "resolved",
                        "--closes", note_id)
    assert code == 0, err
    assert [r["kind"] for r in json.loads(_run(monkeypatch, "bob", "handover", "notes", "--json")[1])] == ["hypothesis"]


@pytest.mark.parametrize(("closes", "message"), [
    ("abc", "give at least 6 characters of the note's id"),
    ("0123456789ab", "names no open handover note of mission 'uploader'"),
])
def test_closing_a_note_that_is_not_open_is_refused_and_nothing_is_stored(
    ingested: GitRepo, monkeypatch: pytest.MonkeyPatch, closes: str, message: str
) -> None:
    code, _, err = _run(monkeypatch, "bob", "handover", "note", "Done.", "--kind", "resolved", "--closes", closes)
    assert code == 1 and message in err
    assert json.loads(_run(monkeypatch, "bob", "handover", "notes", "--json")[1]) == []
    code, out, _ = _run(monkeypatch, "bob", "handover", "notes")
    assert code == 0 and out.strip() == "No open handover notes."


def test_a_read_back_is_kept_with_the_acknowledgement_and_shown_by_the_next_brief(
    ingested: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _run(monkeypatch, "alice", "handover", "note", "Watch the WAL size.", "--kind", "warning")[0] == 0
    code, out, err = _run(monkeypatch, "bob", "brief", "--json")
    assert code == 0, err
    assert json.loads(out)["from"] == "alice" and json.loads(out)["archived_id"]
    read_back = "I hold the WAL watch; the migration waits for Monday."
    code, out, err = _run(monkeypatch, "bob", "brief", "ack", "--read-back", read_back)
    assert code == 0, err
    assert out.startswith("Acknowledged brief ") and f"read-back: {read_back}" in out
    code, out, _ = _run(monkeypatch, "bob", "brief", "ack", "--json")  # again: the first read-back stays
    assert code == 0 and json.loads(out)["read_back"] == read_back
    # bob works (a note), then hands over to carol: her brief says the last handover was read back
    assert _run(monkeypatch, "bob", "handover", "note", "WAL size stable at 40 MB.", "--kind", "hypothesis")[0] == 0
    code, out, _ = _run(monkeypatch, "carol", "brief", "--json")
    status = json.loads(out)["entries"][0]["text"]
    assert code == 0 and json.loads(out)["from"] == "bob"
    assert "last handover: alice → bob" in status and "acknowledged by bob" in status
    assert f"read-back: {read_back}" in status


@pytest.mark.parametrize("read_back", ["x" * 301, "two\nlines"])
def test_a_read_back_longer_than_one_line_is_refused(ingested: GitRepo, monkeypatch: pytest.MonkeyPatch,
                                                     read_back: str) -> None:
    assert _run(monkeypatch, "alice", "handover", "note", "Watch the WAL size.", "--kind", "warning")[0] == 0
    assert _run(monkeypatch, "bob", "brief")[0] == 0
    code, _, err = _run(monkeypatch, "bob", "brief", "ack", "--read-back", read_back)
    assert code == 1 and "the read-back is one line of at most 300 characters" in err


def test_handover_notes_in_a_real_subprocess(ingested: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _run(monkeypatch, "alice", "handover", "note", "Next: rotate the upload keys.", "--kind", "next-step")[0] == 0
    done = subprocess.run([sys.executable, "-m", "mission_memory", "handover", "notes", "--mission", MISSION, "--json"],
                          capture_output=True, text=True, timeout=120, env={**os.environ}, check=False)
    assert done.returncode == 0, done.stderr
    assert [(r["kind"], r["operator"], r["text"]) for r in json.loads(done.stdout)] == [
        ("next-step", "alice", "Next: rotate the upload keys.")]
