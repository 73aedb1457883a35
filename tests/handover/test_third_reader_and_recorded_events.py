"""A shift handed over with a third reader in between: alice leaves, carol (a supervisor) reads a
brief of alice's shift for herself, then bob takes over. Bob's brief quotes the events alice recorded
(the status line counts them, so the brief shows them) and does not call carol's read the last
handover; it says the same shift was also briefed to carol. Real SQLite, the real embedder."""

from __future__ import annotations

from datetime import timedelta

from mission_memory.api import Memory
from tests.conftest import GitRepo
from tests.handover.scenario import MISSION, NOW

OBSERVED = "Upload queue at the field office backs up every night at 02:00; the antivirus scan holds the lock"


def _alice_records_an_event(memory: Memory) -> None:
    memory.record_events([{
        "id": "obs-1", "time": (NOW - timedelta(hours=2)).isoformat(), "sector": "uploads", "type": "observation",
        "criticality": 0.7, "source": "operator", "text": OBSERVED, "operator": "alice",
    }], MISSION, now=NOW - timedelta(hours=2), embed=False)


def test_the_incoming_brief_quotes_the_events_the_outgoing_operator_recorded(shift: tuple[Memory, GitRepo]) -> None:
    memory, _ = shift
    _alice_records_an_event(memory)
    brief = memory.rotation_brief(for_operator="bob", now=NOW, archive=False)
    assert brief.window.from_operator == "alice"
    assert "- alice:" in brief.entries[0][1] and "1 event" in brief.entries[0][1]
    quoted = "\n".join(text for _, text in brief.entries[1:])
    assert OBSERVED in quoted and "event `event:obs-1`" in quoted and "criticality 0.70" in quoted
    assert "## Events recorded in the window" in brief.text


def test_a_third_readers_brief_is_not_the_last_handover_of_the_next_one(shift: tuple[Memory, GitRepo]) -> None:
    memory, _ = shift
    _alice_records_an_event(memory)
    carol = memory.rotation_brief(for_operator="carol", now=NOW - timedelta(minutes=30))
    assert (carol.window.from_operator, carol.window.to_operator) == ("alice", "carol")
    bob = memory.rotation_brief(for_operator="bob", now=NOW)
    assert (bob.window.from_operator, bob.window.to_operator) == ("alice", "bob")
    status = bob.entries[0][1]
    assert "last handover: alice → carol" not in status, status
    assert "also briefed: alice → carol" in status and "not acknowledged" in status, status


def test_the_archived_brief_has_its_vector_at_once(shift: tuple[Memory, GitRepo]) -> None:
    memory, _ = shift
    brief = memory.rotation_brief(for_operator="bob", now=NOW)
    assert brief.archived_id
    assert memory.store.vectors_for([brief.archived_id], memory.embedder.model_id)
