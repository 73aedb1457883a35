"""``mission_names`` (index seeks) names exactly the missions ``missions`` counts (docs/adr/0049)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from mission_memory.records import AccessLevel, Provenance, Record, RecordKind, SourceKind
from mission_memory.stores.base import MissionNames, stored_mission_names
from mission_memory.stores.sqlite import SqliteStore
from mission_memory.teams.access_control import AccessContext, AccessScopedStore


def _record(mission: str, i: int) -> Record:
    return Record.build(
        kind=RecordKind.DOC_CHUNK,
        title=f"{mission} record {i}",
        text=f"text {i} of {mission}",
        provenance=Provenance(kind=SourceKind.DOC, ref=f"{mission}/r{i}.md", uri=f"file:///{mission}/r{i}.md",
                              mission=mission, time=datetime(2025, 3, 1, tzinfo=UTC)),
    )


def test_names_follow_writes_and_deletes(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "m.db")
    assert isinstance(store, MissionNames)
    assert store.mission_names() == frozenset() == stored_mission_names(store)
    names = ["alpha", "Beta", "beta", "gamma-2", "дельта", "a b"]
    store.upsert_records([_record(m, i) for m in names for i in range(3 if m != "gamma-2" else 1)])
    assert store.mission_names() == frozenset(store.missions()) == frozenset(names)
    store.delete_mission("beta")
    store.delete_mission("alpha")
    assert store.mission_names() == frozenset(store.missions()) == {"Beta", "gamma-2", "дельта", "a b"}
    scoped = AccessScopedStore(store, AccessContext(operator="ana", clearance=AccessLevel.INTERNAL))
    assert stored_mission_names(scoped) == store.mission_names()
