"""The brief and the pairs export under an access context: the core enforces it, so the CLI shares it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mission_memory.cli.app import app
from mission_memory.records import AccessLevel, RecordKind
from mission_memory.teams.access_control import AccessContext, Role
from tests.teams.scenario import ALICE_PRACTITIONER_CANARY, MISSION, RESTRICTED_CANARIES, TeamMission

ALICE = AccessContext("alice", AccessLevel.RESTRICTED, Role.LEAD)
BOB = AccessContext("bob", AccessLevel.INTERNAL)
CAROL = AccessContext("carol", AccessLevel.INTERNAL)


def test_the_brief_holds_nothing_above_the_incoming_operators_clearance(team: TeamMission) -> None:
    with team.memory() as memory:
        for_bob = memory.rotation_brief(mission=MISSION, from_operator="alice", since="2024-01-01", access=BOB)
        for_alice = memory.rotation_brief(mission=MISSION, from_operator="bob", since="2024-01-01", access=ALICE)
        archived = memory.store.get([for_bob.archived_id, for_alice.archived_id])
    assert not [c for c in RESTRICTED_CANARIES if c in for_bob.text]
    assert "ADR-0001" in for_bob.text  # the window's internal decision is there
    assert for_bob.window.to_operator == "bob"
    assert archived[for_bob.archived_id].access_level is AccessLevel.INTERNAL
    assert "MARMOT-ADR-43" in for_alice.text  # the restricted decision of the window, for the lead
    assert archived[for_alice.archived_id].access_level is AccessLevel.RESTRICTED  # it quotes it


def test_a_non_lead_cannot_build_a_brief_for_someone_else(team: TeamMission) -> None:
    from mission_memory.errors import InputError

    with team.memory() as memory, pytest.raises(InputError, match="only for themselves"):
        memory.rotation_brief(mission=MISSION, for_operator="alice", access=BOB)


def test_an_archived_brief_is_seen_only_by_its_incoming_operator_and_leads(team: TeamMission) -> None:
    with team.memory() as memory:
        brief = memory.rotation_brief(mission=MISSION, from_operator="alice", since="2024-01-01", access=BOB)
        for who, sees in ((BOB, True), (CAROL, False), (ALICE, True)):
            digest = memory.query("handover brief bob", scope="workflow", token_budget=20_000, access=who,
                                  filters={"mission": MISSION})
            assert (brief.archived_id in {e.record.id for e in digest.entries}) is sees, who.operator


def test_the_handover_hands_the_predecessors_profile_to_the_successor_only(team: TeamMission) -> None:
    with team.memory() as memory:
        brief = memory.query("brief", scope="handover", filters={"mission": MISSION, "operator": "alice"}, access=BOB)
        digest = memory.query("uploads retried forever", scope="practitioner", access=BOB, token_budget=8000)
    assert "missed-decision" in brief.text  # alice's correction class, in her profile handed to bob
    assert ALICE_PRACTITIONER_CANARY not in digest.text and "MARMOT-PRACT-44" not in brief.text


def _pairs(*flags: str) -> list[dict[str, object]]:
    done = CliRunner().invoke(app, ["corrections", "pairs", *flags])
    assert done.exit_code == 0, done.output
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def test_the_pairs_export_leaves_out_records_above_the_clearance(
    team: TeamMission, monkeypatch: pytest.MonkeyPatch
) -> None:
    with team.memory() as memory:
        served = memory.query("cold storage shipping of archive batches", access=ALICE, session_id="alice-pairs",
                              filters={"mission": MISSION, "max_access": "internal"}, token_budget=250)
        correction = memory.record_correction(
            correction_class="missed-decision", category="security", outcome="modified", component="docs",
            summary="The agent did not know the archive is encrypted.", expected=["ADR-0002", "ADR-0001"],
            session_id="alice-pairs", mission=MISSION, access=ALICE,
        )
        restricted_decision = next(
            r.id for b in memory.store.iterate() for r in b
            if r.kind is RecordKind.DECISION and r.access_level is AccessLevel.RESTRICTED
        )
        bobs = memory.correction_pairs(mission=MISSION, access=BOB)
    assert restricted_decision in correction.label.missed_record_ids  # alice may see it
    assert len(correction.label.missed_record_ids) == 2, [e.record.title for e in served.entries]
    monkeypatch.setenv("MISSION_MEMORY_DATA_DIR", str(team.data_dir))
    everything = _pairs("--mission", MISSION)
    assert restricted_decision in {rid for p in everything for rid in p["missed"]}  # type: ignore[attr-defined]
    narrowed = _pairs("--mission", MISSION, "--max-access-level", "internal")
    ids = {rid for p in narrowed for key in ("retrieved", "missed") for rid in p[key]}  # type: ignore[attr-defined]
    assert narrowed and restricted_decision not in ids and not ids & team.restricted_ids
    assert all(p["correction_id"] != correction.correction_id for p in bobs)  # alice's correction is hers


def test_an_unknown_level_on_the_export_is_an_error_naming_it(team: TeamMission) -> None:
    done = CliRunner().invoke(app, ["corrections", "pairs", "--max-access-level", "cosmic"])
    assert done.exit_code == 1 and "--max-access-level 'cosmic'" in done.output


def test_mission_scoping_keeps_every_layer_to_the_tokens_missions(
    team: TeamMission,
) -> None:
    from mission_memory.errors import InputError
    from mission_memory.records import Layer

    elsewhere = AccessContext("dana", AccessLevel.RESTRICTED, Role.LEAD, frozenset({"another-mission"}))
    with team.memory() as memory:
        with pytest.raises(InputError, match="outside the missions operator 'dana' may read"):
            memory.query("How are failed uploads retried?", filters={"mission": MISSION}, access=elsewhere)
        digest = memory.query("Where is the upload ledger kept and how are uploads retried?", access=elsewhere,
                              token_budget=20_000)
        own = memory.query("Where is the upload ledger kept and how are uploads retried?", token_budget=20_000)
    assert not digest.entries  # neither the mission's workflow nor its documents (docs/adr/0055)
    assert {Layer.WORKFLOW, Layer.DOMAIN} <= {e.record.layer for e in own.entries}


def test_the_whole_memory_export_below_restricted_holds_no_restricted_text(
    team: TeamMission, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`export --max-access-level internal` leaves out the restricted commit too (its message and file list)."""
    monkeypatch.setenv("MISSION_MEMORY_DATA_DIR", str(team.data_dir))
    target = tmp_path / "shareable.jsonl"
    done = CliRunner().invoke(app, ["export", "--max-access-level", "internal", "-o", str(target)])
    assert done.exit_code == 0, done.output
    text = target.read_text(encoding="utf-8")
    assert "Add the upload guide" in text  # the internal commit is there
    assert [c for c in RESTRICTED_CANARIES if c in text] == []
