"""A short turn is embedded after the turn before it (issue 25 item 3, docs/adr/0070): a question that
only the pair answers finds the short turn, and what is stored and shown is the turn alone.

Real SQLite files and the real embedder; the conversation is stored through ``record_events`` and
embedded by the embedding queue's catch-up, as ``mission-memory feed`` does.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from mission_memory.api import Memory
from mission_memory.operations.event_context import SHORT_TEXT_CHARS, contextual_passages, previous_events
from mission_memory.records import Layer
from mission_memory.retrieval.query import search_candidates
from mission_memory.retrieval.ranking import RankingParams
from mission_memory.stores.filters import QueryFilters, SearchFilter

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
TURNS = [
    ("Olena", "Morning! Did you sleep well after the concert?"),
    ("Taras", "Not really, my ears are still ringing."),
    ("Olena", "Have you decided which city we should pick for the team offsite in May?"),
    ("Taras", "Lisbon, definitely."),  # the answer: says nothing of an offsite on its own
    ("Olena", "I finally fixed the bike's rear brake yesterday."),
    ("Taras", "Nice, did you need new pads?"),
    ("Olena", "Yes, and a new cable too."),
    ("Taras", "My sister is visiting us next weekend."),
    ("Olena", "Say hello to her from me!"),
    ("Taras", "Will do. She is bringing her dog."),
    ("Olena", "What time is the dentist appointment?"),
    ("Taras", "At four, I think."),
]
ANSWER = "chat:3"


def _conversation(memory: Memory, sector: str = "c1", prefix: str = "chat") -> None:
    memory.record_events(
        [
            {"id": f"{prefix}:{i}", "time": (T0 + timedelta(minutes=i)).isoformat(), "sector": sector,
             "type": "message", "criticality": 0.5, "source": speaker, "text": f"{speaker}: {text}"}
            for i, (speaker, text) in enumerate(TURNS)
        ],
        mission="chat", embed=False,
    )
    memory.embed_pending()


def _dense_event_ids(memory: Memory, question: str) -> list[str]:
    where = SearchFilter((Layer.DOMAIN,), QueryFilters(mission="chat"))
    lists = search_candidates(memory.store, memory.embedder, question, where, RankingParams())
    hits = sorted(
        ((h.score, h.record_id) for by_kind in lists.dense.get(Layer.DOMAIN, {}).values() for h in by_kind),
        reverse=True,
    )
    records = memory.store.get([rid for _, rid in hits])
    return [str(records[rid].attributes["event_id"]) for _, rid in hits]


def test_a_short_answer_is_found_by_a_question_only_it_and_the_turn_before_answer() -> None:
    with Memory.open() as memory:
        _conversation(memory)
        # Alone, "Lisbon, definitely." is 9th of 12 by cosine for this question (measured); with the
        # question it answers before it, it is next to that question, at the top.
        assert ANSWER in _dense_event_ids(memory, "Where will the team offsite in May be held?")[:2]
        digest = memory.query("Where will the team offsite in May be held?", scope="domain",
                              filters={"mission": "chat"})
        shown = [e.record.attributes["event_id"] for e in digest.entries]
        assert ANSWER in shown[:2]
        # the answer's vector is close to the question's (it holds its text), yet the two are not
        # near-duplicates: both are shown
        assert "chat:2" in shown
        # What is stored, indexed and shown is the turn alone, never its context.
        entry = next(e for e in digest.entries if e.record.attributes["event_id"] == ANSWER)
        assert entry.record.text == "Taras: Lisbon, definitely."
        assert "offsite" not in entry.text and "offsite" not in entry.block
        assert "offsite" not in entry.record.title


def test_the_previous_event_is_the_one_before_in_the_same_sector_and_mission() -> None:
    with Memory.open() as memory:
        _conversation(memory, sector="c1", prefix="chat")
        memory.record_events(  # another conversation in the same minutes: never the context of the first
            [{"id": f"other:{i}", "time": (T0 + timedelta(minutes=i, seconds=30)).isoformat(), "sector": "c2",
              "type": "message", "criticality": 0.5, "source": "Ivan", "text": f"Ivan: unrelated line {i}"}
             for i in range(len(TURNS))],
            mission="chat", embed=False,
        )
        records = [r for batch in memory.store.iterate() for r in batch]
        by_event = {str(r.attributes["event_id"]): r for r in records}
        previous = previous_events(memory.store, records)
        assert previous[by_event["chat:3"].id].attributes["event_id"] == "chat:2"
        assert previous[by_event["other:5"].id].attributes["event_id"] == "other:4"
        assert by_event["chat:0"].id not in previous and by_event["other:0"].id not in previous
        passages = contextual_passages(memory.store, [by_event["chat:3"], by_event["chat:0"], by_event["chat:2"]])
        assert passages[0] == f"{by_event['chat:2'].text}\n{by_event['chat:3'].embedding_text}"
        assert passages[1] == by_event["chat:0"].embedding_text  # the first turn has none before it
        # a turn of SHORT_TEXT_CHARS or more says what it is about: embedded alone
        assert len(by_event["chat:2"].text) >= SHORT_TEXT_CHARS
        assert passages[2] == by_event["chat:2"].embedding_text
