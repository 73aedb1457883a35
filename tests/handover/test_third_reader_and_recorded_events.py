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


def test_many_recorded_events_are_one_entry_each_and_the_footer_counts_those_left_out(
        shift: tuple[Memory, GitRepo]) -> None:
    memory, _ = shift
    memory.record_events([{
        "id": f"obs-{i}", "time": (NOW - timedelta(hours=3, minutes=i)).isoformat(), "sector": "uploads",
        "type": "observation", "criticality": round(0.3 + i / 40, 2), "source": "operator", "operator": "alice",
        "text": f"Observation {i}: the upload queue at field office {i} held {100 + i} files for over an hour",
    } for i in range(15)], MISSION, now=NOW, embed=False)
    small = memory.rotation_brief(for_operator="bob", now=NOW, archive=False, token_budget=2000)
    shown = [text for item, text in small.entries if item.section.value == "Events recorded in the window"]
    assert shown and all(text.count("Observation ") == 1 for text in shown)  # one event per entry, whole
    assert "Observation 14:" in shown[0]  # the most critical first
    assert small.omitted >= 15 - len(shown) > 0
    roomy = memory.rotation_brief(for_operator="bob", now=NOW, archive=False, token_budget=12000)
    assert sum(item.section.value == "Events recorded in the window" for item, _ in roomy.entries) == 15
