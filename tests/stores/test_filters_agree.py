"""One filter, three readings: the SQL clause, the NumPy mask and the Python predicate always agree.

All three come from one field table (record_filters.FILTER_FIELDS); this property test runs random
records and random filters through a real SQLite store and checks that the records each reading
keeps are the same set (docs/design.md §4: BM25 and dense search apply the same filters).
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mission_memory.records import AccessLevel, Layer, Provenance, Record, RecordKind, SourceKind
from mission_memory.stores.filters import SearchFilter, filter_columns, matches
from mission_memory.stores.sqlite import SqliteStore
from mission_memory.stores.sqlite_filters import filter_mask, filter_sql

KINDS = (RecordKind.DOC_CHUNK, RecordKind.DECISION, RecordKind.CORRECTION_PATTERN)
START = datetime(2024, 1, 1, tzinfo=UTC)
CRITICALITIES = st.sampled_from([0.0, 0.1, 0.3, 0.30000001, 0.5, 0.7, 0.9, 1.0])
MOMENTS = st.integers(min_value=0, max_value=5).map(lambda d: START + timedelta(days=d, hours=d))
NAMES = st.sampled_from(["a", "b", "c"])


@st.composite
def records(draw: st.DrawFn) -> Record:
    kind = draw(st.sampled_from(KINDS))
    attributes: dict[str, str] = {}
    if draw(st.booleans()):
        attributes["mission_type"] = draw(NAMES)
    if draw(st.booleans()):
        attributes["outcome"] = draw(st.sampled_from(["accepted", "rejected", "modified"]))
    return Record.build(
        kind=kind, title="t", text=f"text {draw(st.integers(0, 10**9))}",
        provenance=Provenance(kind=SourceKind.DOC, ref=f"r{draw(st.integers(0, 10**9))}", uri="file:///r",
                              mission=draw(NAMES), time=draw(MOMENTS)),
        component=draw(st.none() | NAMES), criticality=draw(CRITICALITIES), operator=draw(st.none() | NAMES),
        access_level=draw(st.sampled_from(list(AccessLevel))), attributes=attributes,
    )


@st.composite
def filters(draw: st.DrawFn) -> SearchFilter:
    layers = draw(st.lists(st.sampled_from(list(Layer)), min_size=1, max_size=3, unique=True))
    choices = {
        "mission": NAMES | st.just("never"),
        "component": NAMES,
        "min_criticality": CRITICALITIES,
        "since": MOMENTS,
        "until": MOMENTS,
        "mission_type": NAMES,
        "outcome": st.sampled_from(["accepted", "rejected", "modified"]),
        "operator": NAMES,
        "max_access": st.sampled_from(list(AccessLevel)),
    }
    chosen = draw(st.lists(st.sampled_from(sorted(choices)), max_size=3, unique=True))
    values = {name: draw(choices[name]) for name in chosen}
    return SearchFilter(tuple(layers), **values)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(records(), min_size=1, max_size=30, unique_by=lambda r: r.source_key), filters())
def test_sql_numpy_and_python_readings_of_a_filter_keep_the_same_records(
    stored: list[Record], where: SearchFilter
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = SqliteStore(Path(folder) / "m.db")
        vectors = np.eye(len(stored), 4 + len(stored), dtype=np.float32)
        store.upsert(stored, vectors, "model-a")

        predicate = {r.id for r in stored if matches(where, filter_columns(r))}

        clauses, params = filter_sql(where, alias="r")
        sql = {row[0] for row in store._conn().execute(
            f"SELECT r.id FROM records r WHERE {' AND '.join(clauses)}", params
        )}

        table = store._vectors.table("model-a")
        mask = filter_mask(table, where)
        layer_ok = np.isin(table.layer, [list(Layer).index(layer) for layer in where.layers])
        keep = layer_ok if mask is None else layer_ok & mask
        ids = store._ids_of([int(r) for r in table.rowids[keep]])
        numpy_kept = set(ids.values())

        python_kept = {rid for rid, _ in store._passing(where, [int(r) for r in table.rowids]).values()}
        store.close()
    assert sql == predicate == numpy_kept == python_kept
