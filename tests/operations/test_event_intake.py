"""Event intake: stored and lexically searchable at once, vectors from the embedding queue, and a bad
batch stores nothing (issue 10 item 1). Real SQLite files and the real embedder."""

from __future__ import annotations

from datetime import timedelta

import pytest

from mission_memory.api import Memory
from mission_memory.errors import InputError
from mission_memory.operations.domain_events import DomainEvent
from mission_memory.records import Layer, RecordKind
from mission_memory.stores.base import SearchFilter
from tests.operations.event_factory import T0, event

DOMAIN = SearchFilter((Layer.DOMAIN,))


def _event_count(memory: Memory) -> int:
    return memory.store.counts().get("domain", {}).get(RecordKind.DOMAIN_EVENT.value, 0)


def test_an_event_is_lexically_searchable_at_once_and_gets_its_vector_from_the_queue() -> None:
    with Memory.open(event_mission="ops") as memory:
        report = memory.record_events(
            [event(1, T0, text="Втрата зв'язку з трьома дронами рою над сектором Північ", sector="north", type_="lost_link")],
            now=T0, embed=False,
        )
        assert report.added == 1
        hits = memory.store.bm25_search(["дронами"], DOMAIN, 5)
        assert len(hits) == 1
        record = memory.store.get([hits[0].record_id])[hits[0].record_id]
        assert record.component == "north" and record.attributes["event_type"] == "lost_link"
        assert memory.embedding_lag() == 1
        assert memory.embed_pending() == 1
        assert memory.embedding_lag() == 0
        assert memory.store.vectors_for([record.id], memory.embedder.model_id)


def test_the_background_queue_catches_up_with_every_event() -> None:
    with Memory.open(event_mission="ops") as memory:
        for batch in range(3):
            memory.record_events([event(batch * 10 + i, T0 - timedelta(seconds=i)) for i in range(10)], now=T0)
        # drain() waits for the background pass in progress, then embeds whatever it left.
        memory.embed_pending()
        assert memory.embedding_lag() == 0
        assert _event_count(memory) == 30


def test_events_sharing_an_id_keep_the_last_and_a_resolved_alert_replaces_its_firing_one() -> None:
    with Memory.open(event_mission="ops") as memory:
        first = memory.record_events([event(1, T0), event(1, T0, text="second report of the same event")], now=T0, embed=False)
        assert (first.received, first.added) == (1, 1)
        again = memory.record_events([event(1, T0, text="resolved: link restored", state="resolved")], now=T0, embed=False)
        assert (again.added, again.replaced) == (0, 1)
        assert _event_count(memory) == 1


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        ({"time": None}, r"events\[1\]: time: Input should be a valid datetime"),
        ({"criticality": 1.5}, r"events\[1\]: criticality: Input should be less than or equal to 1"),
        ({"colour": "red"}, r"events\[1\]: colour is not a known field \(known: id, time"),
        ({"sector": "   "}, r"events\[1\]: sector: Value error, must not be blank"),
    ],
)
def test_a_bad_event_names_its_field_and_stores_nothing(broken: dict[str, object], message: str) -> None:
    with Memory.open(event_mission="ops") as memory:
        memory.record_events([event(0, T0)], now=T0, embed=False)
        bad = event(2, T0) | broken
        with pytest.raises(InputError, match=message):
            memory.record_events([event(1, T0), bad, event(3, T0)], now=T0, embed=False)
        assert _event_count(memory) == 1


def test_a_missing_time_is_named() -> None:
    incomplete = event(1, T0)
    del incomplete["time"]
    with Memory.open(event_mission="ops") as memory, pytest.raises(InputError, match=r"events\[0\]: time is missing"):
        memory.record_events([incomplete], now=T0)


def test_event_objects_and_the_mission_argument_are_taken_as_given() -> None:
    with Memory.open() as memory:
        report = memory.record_events([DomainEvent.model_validate(event(1, T0))], "uav-centre", now=T0, embed=False)
        assert report.mission == "uav-centre"
        assert memory.store.missions() == {"uav-centre": 1}
