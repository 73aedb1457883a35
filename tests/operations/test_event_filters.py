"""Sector and event type as pull filters (issue 10 item 1), on a real SQLite store and the real embedder:
BM25, dense search and the Python predicate agree, and a store made before the event-type column
gains it by migration (0004_operations_event_type)."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.records import Layer
from mission_memory.stores.base import SearchFilter
from mission_memory.stores.filters import filter_columns, matches
from tests.operations.event_factory import T0, event
from tests.schema_rollback import undo_kind_summaries

EVENTS = [
    event(1, T0, sector="north", type_="shelling", text="Shelling near the northern bridge, two craters."),
    event(2, T0 - timedelta(minutes=1), sector="north", type_="ew_jamming", text="GPS jamming over the northern bridge."),
    event(3, T0 - timedelta(minutes=2), sector="south", type_="shelling", text="Shelling at the southern depot."),
    event(4, T0 - timedelta(minutes=3), sector="south", type_="lost_link", text="Обстріл і втрата зв'язку з дроном біля мосту."),
]


def test_sector_and_event_type_filters_agree_across_bm25_dense_and_python() -> None:
    with Memory.open(event_mission="ops") as memory:
        memory.record_events(EVENTS, now=T0)
        memory.embed_pending()
        store, embedder = memory.store, memory.embedder
        every = {r.id: r for batch in store.iterate() for r in batch}
        for values in ({"sector": "north"}, {"event_type": "shelling"}, {"sector": "south", "event_type": "shelling"},
                       {"event_type": "none-such"}):
            where = SearchFilter((Layer.DOMAIN,), **values)
            expected = {rid for rid, r in every.items() if matches(where, filter_columns(r))}
            lexical = {h.record_id for h in store.bm25_search(["bridge", "shelling", "depot", "мосту"], where, 50)}
            dense = {h.record_id for hits in store.dense_search_by_layer(
                embedder.embed_query("shelling near the bridge"), embedder.model_id, where, 50).values() for h in hits}
            assert dense == expected, values
            assert lexical <= expected and (lexical or not expected), values
        where = SearchFilter((Layer.DOMAIN,), event_type="shelling")
        shelling = {r.attributes["event_id"] for r in every.values() if matches(where, filter_columns(r))}
        assert shelling == {"ev-1", "ev-3"}


def test_a_pull_filtered_by_event_type_shows_only_those_events() -> None:
    with Memory.open(event_mission="ops") as memory:
        memory.record_events(EVENTS, now=T0)
        memory.embed_pending()
        digest = memory.query("what happened near the bridge", scope="domain",
                              filters={"event_type": "shelling", "sector": "north"})
        assert [e.record.attributes["event_id"] for e in digest.entries] == ["ev-1"]
        assert digest.filters == {"sector": "north", "event_type": "shelling"}


def test_a_store_without_the_event_type_column_gains_it_and_filters_old_events(data_dir: Path) -> None:
    with Memory.open(event_mission="ops") as memory:
        memory.record_events(EVENTS, now=T0, embed=False)
    database = data_dir / "memory.db"
    with sqlite3.connect(database) as conn:  # undo 0004 as an older release left the file
        undo_kind_summaries(conn)
        conn.execute("DROP INDEX records_event_type")
        conn.execute("ALTER TABLE records DROP COLUMN event_type")
        conn.execute("DELETE FROM migrations WHERE name = '0004_operations_event_type'")
    conn.close()
    with Memory.open() as memory:
        hits = memory.store.bm25_search(["shelling"], SearchFilter((Layer.DOMAIN,), event_type="shelling"), 10)
        assert len(hits) == 2


def test_a_read_only_store_of_the_older_schema_still_answers_with_event_filters(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memory.open(event_mission="ops") as memory:
        memory.record_events(EVENTS, now=T0)
        memory.embed_pending()
    with sqlite3.connect(data_dir / "memory.db") as conn:  # the file as a release before 0004 left it (no 0004 to 0007)
        undo_kind_summaries(conn)
        for index in ("records_event_window", "records_kind_critical", "records_kind_time"):  # and 0005
            conn.execute(f"DROP INDEX {index}")
        conn.execute("ALTER TABLE records DROP COLUMN kind_key")
        conn.execute("DELETE FROM migrations WHERE name = '0005_event_kind_key'")
        conn.execute("DROP INDEX records_event_type")
        conn.execute("ALTER TABLE records DROP COLUMN event_type")
        conn.execute("DELETE FROM migrations WHERE name = '0004_operations_event_type'")
    conn.close()
    # The data dir cannot be written (an archived mission); tests run as root, so say so directly.
    monkeypatch.setattr("mission_memory.stores.sqlite._is_read_only", lambda _path: True)
    with Memory.open() as memory:
        assert memory.store.read_only
        digest = memory.query("what happened near the bridge", scope="domain", filters={"event_type": "shelling"})
        shown = {e.record.attributes["event_id"] for e in digest.entries}
        assert shown and shown <= {"ev-1", "ev-3"}
