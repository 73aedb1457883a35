"""Handover notes: stored as embedded workflow records, idempotent, refused when empty or unknown."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.errors import InputError
from mission_memory.records import Layer, RecordKind
from tests.conftest import GitRepo
from tests.handover.scenario import MISSION, at


@pytest.fixture
def ingested(make_git_repo) -> GitRepo:  # type: ignore[no-untyped-def]
    repo = make_git_repo(MISSION)
    repo.commit("Initial README", "2025-01-10T09:00:00+00:00", {"README.md": "# Uploader\n"})
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
    return repo


def test_a_note_is_a_workflow_record_that_only_a_pull_about_the_handover_finds(ingested: GitRepo) -> None:
    with Memory.open() as memory:
        note = memory.handover_note("Припущення: шторм повторів спричиняє тайм-аут клієнта.", "hypothesis",
                                    operator="alice", now=at(6))
        assert (note.layer, note.kind, note.operator) == (Layer.WORKFLOW, RecordKind.HANDOVER_NOTE, "alice")
        assert note.provenance.ref.startswith("handover-note/") and note.attributes["note_kind"] == "hypothesis"
        again = memory.handover_note("Припущення: шторм повторів спричиняє тайм-аут клієнта.", "hypothesis",
                                     operator="alice", now=at(6))
        assert again.id == note.id
        assert len(memory.store.records_of_kind([RecordKind.HANDOVER_NOTE.value])) == 1
        ordinary = memory.query("чому тайм-аут клієнта", scope="workflow", token_budget=2000)
        about_handover = memory.query("що передала попередня зміна: чому тайм-аут клієнта", scope="workflow",
                                      token_budget=2000)
    # notes are the brief's spine, noise in an ordinary pull (issue 23, ADR 0060)
    assert not any(e.record.id == note.id for e in ordinary.entries)
    assert any(e.record.id == note.id for e in about_handover.entries)


@pytest.mark.parametrize(("text", "kind", "message"), [
    ("   ", "next-step", "the handover note is empty"),
    ("x" * 2001, "warning", "2001 characters"),
    ("check the ledger", "idea", "note kind 'idea' is not one of: hypothesis, next-step, warning"),
])
def test_bad_notes_are_refused_and_nothing_is_stored(ingested: GitRepo, text: str, kind: str, message: str) -> None:
    with Memory.open() as memory:
        with pytest.raises(InputError, match=message):
            memory.handover_note(text, kind, operator="alice")
        assert memory.store.records_of_kind([RecordKind.HANDOVER_NOTE.value]) == []


def test_cli_handover_note(ingested: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "alice")
    done = CliRunner().invoke(app, ["handover", "note", "Watch OPS-9", "--kind", "warning", "--json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert (data["kind"], data["operator"], data["mission"]) == ("warning", "alice", MISSION)
    bad = CliRunner().invoke(app, ["handover", "note", "x", "--kind", "idea"])
    assert bad.exit_code == 1 and "note kind 'idea'" in bad.stderr
