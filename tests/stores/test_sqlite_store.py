"""The SQLite store: idempotent upserts, replacement by source key, BM25 and dense search under filters."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from mission_memory.errors import BackendUnavailable
from mission_memory.records import Layer, Provenance, Record, RecordKind, SourceKind
from mission_memory.retrieval_events import NewRetrievalEvent
from mission_memory.stores.base import SearchFilter
from mission_memory.stores.sqlite import SqliteStore

ALL = SearchFilter(layers=tuple(Layer))


def _record(ref: str, text: str, kind: RecordKind = RecordKind.DOC_CHUNK, *, component: str | None = None,
            criticality: float = 0.5, when: datetime | None = None, mission: str = "m") -> Record:
    return Record.build(
        kind=kind,
        title=ref,
        text=text,
        provenance=Provenance(kind=SourceKind.DOC, ref=ref, uri=f"file:///{ref}", mission=mission,
                              time=when or datetime(2025, 1, 1, tzinfo=UTC)),
        component=component,
        criticality=criticality,
    )


def _unit(rows: int, dim: int = 8, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(rows, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_upserting_the_same_records_twice_changes_nothing(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "m.db")
    records = [_record(f"a.md#{i}", f"text {i}") for i in range(3)]
    first = store.upsert(records, _unit(3), "model-a")
    second = store.upsert(records, _unit(3), "model-a")
    assert len(first.added) == 3 and not first.unchanged
    assert second.unchanged == [r.id for r in records] and not second.added
    assert store.counts()["domain"] == {"doc_chunk": 3}


def test_a_changed_source_replaces_its_old_record_and_vector(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "m.db")
    store.upsert([_record("a.md#x", "old text")], _unit(1), "model-a")
    outcome = store.upsert([_record("a.md#x", "new text")], _unit(1, seed=1), "model-a")
    assert len(outcome.replaced) == 1
    assert store.counts()["domain"] == {"doc_chunk": 1}
    assert store.vector_models() == {"model-a": 1}
    assert store.bm25_search(["old"], ALL, 10) == []
    assert len(store.bm25_search(["new"], ALL, 10)) == 1


def test_bm25_and_dense_search_honour_component_criticality_and_time_filters(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "m.db")
    records = [
        _record("a.md", "upload proxy retries", component="api", criticality=0.9, when=datetime(2024, 5, 1, tzinfo=UTC)),
        _record("b.md", "upload proxy retries", component="web", criticality=0.2, when=datetime(2025, 5, 1, tzinfo=UTC)),
    ]
    vectors = _unit(2)
    store.upsert(records, vectors, "model-a")
    only_api = SearchFilter(layers=(Layer.DOMAIN,), component="api")
    critical = SearchFilter(layers=(Layer.DOMAIN,), min_criticality=0.5)
    recent = SearchFilter(layers=(Layer.DOMAIN,), since=datetime(2025, 1, 1, tzinfo=UTC))
    rows = store.get([h.record_id for h in store.bm25_search(["proxy"], only_api, 10)])
    assert [r.component for r in rows.values()] == ["api"]
    assert [store.get([h.record_id])[h.record_id].component for h in store.dense_search(vectors[1], "model-a", critical, 10)] == ["api"]
    assert [store.get([h.record_id])[h.record_id].component for h in store.dense_search(vectors[0], "model-a", recent, 10)] == ["web"]
    assert store.bm25_search(["proxy"], SearchFilter(layers=(Layer.WORKFLOW,)), 10) == []


def test_dense_search_ranks_the_identical_vector_first_and_ignores_other_models(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "m.db")
    vectors = _unit(20)
    store.upsert([_record(f"d{i}.md", f"doc {i}") for i in range(20)], vectors, "model-a")
    hits = store.dense_search(vectors[7], "model-a", ALL, 5)
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert store.get([hits[0].record_id])[hits[0].record_id].title == "d7.md"
    assert store.dense_search(vectors[7], "model-b", ALL, 5) == []


def test_a_second_process_sees_vectors_written_after_its_cache_was_filled(tmp_path: Path) -> None:
    reader = SqliteStore(tmp_path / "m.db")
    writer = SqliteStore(tmp_path / "m.db")
    vectors = _unit(4)
    writer.upsert([_record("one.md", "one")], vectors[:1], "model-a")
    assert len(reader.dense_search(vectors[0], "model-a", ALL, 10)) == 1
    writer.upsert([_record(f"more{i}.md", "more") for i in range(3)], vectors[1:], "model-a")
    assert len(reader.dense_search(vectors[0], "model-a", ALL, 10)) == 4
    writer.upsert([_record("one.md", "one, edited")], vectors[:1], "model-a")
    assert len(reader.dense_search(vectors[0], "model-a", ALL, 10)) == 4
    assert reader.integrity_check() == "ok"


def test_a_file_that_is_not_a_database_is_reported_by_name(tmp_path: Path) -> None:
    bogus = tmp_path / "memory.db"
    bogus.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(BackendUnavailable, match=r"memory\.db"):
        SqliteStore(bogus)


def test_retrieval_events_are_stored_and_listed_newest_first(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "m.db")
    for q in ("first", "second"):
        store.log_retrieval_event(NewRetrievalEvent(
            query=q, scope="all", filters={}, token_budget=100, tokens_used=10,
            record_ids=("x",), scores=(0.5,), omitted=0, duration_ms=1.0, model_id="m",
        ))
    assert [e.query for e in store.retrieval_events()] == ["second", "first"]


def test_a_new_process_loads_vectors_from_the_snapshot_and_appends_rows_written_since(tmp_path: Path) -> None:
    writer = SqliteStore(tmp_path / "m.db", snapshot_min_rows=1)
    vectors = _unit(6)
    writer.upsert([_record(f"d{i}.md", f"doc {i}", component="api") for i in range(3)], vectors[:3], "model-a")
    first = writer.dense_search(vectors[0], "model-a", ALL, 10)
    snapshots = list((tmp_path / "m.vectors").glob("*.mmvec"))
    assert len(snapshots) == 1

    writer.upsert([_record(f"e{i}.md", f"doc {i}", component="web") for i in range(3)], vectors[3:], "model-a")
    reader = SqliteStore(tmp_path / "m.db", snapshot_min_rows=1)
    hits = reader.dense_search(vectors[4], "model-a", ALL, 10)
    assert len(hits) == 6 and hits[0].score == pytest.approx(1.0, abs=1e-5)
    web = reader.dense_search(vectors[0], "model-a", SearchFilter(layers=(Layer.DOMAIN,), component="web"), 10)
    assert {reader.get([h.record_id])[h.record_id].component for h in web} == {"web"}
    assert reader.dense_search(vectors[0], "model-a", ALL, 1)[0].record_id == first[0].record_id


def test_a_deletion_or_a_corrupt_snapshot_makes_a_process_reread_the_database(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "m.db", snapshot_min_rows=1)
    vectors = _unit(3)
    store.upsert([_record(f"d{i}.md", f"doc {i}") for i in range(3)], vectors, "model-a")
    store.dense_search(vectors[0], "model-a", ALL, 10)
    snapshot = next((tmp_path / "m.vectors").glob("*.mmvec"))
    store.upsert([_record("d0.md", "doc 0, edited")], vectors[:1], "model-a")
    fresh = SqliteStore(tmp_path / "m.db", snapshot_min_rows=1)
    assert len(fresh.dense_search(vectors[0], "model-a", ALL, 10)) == 3
    snapshot.write_bytes(b"garbage")
    again = SqliteStore(tmp_path / "m.db", snapshot_min_rows=1)
    assert len(again.dense_search(vectors[0], "model-a", ALL, 10)) == 3


def test_a_damaged_vector_snapshot_of_the_right_size_is_rebuilt_not_searched(tmp_path: Path) -> None:
    """Bytes zeroed or flipped inside ``memory.vectors/*.mmvec`` (same size, header intact) must not
    change what dense search returns: the snapshot is checked (CRC-32) and rebuilt from SQLite."""
    from mission_memory.stores.vector_table import VectorTable

    store = SqliteStore(tmp_path / "m.db", snapshot_min_rows=1)
    vectors = _unit(40)
    store.upsert([_record(f"d{i}.md", f"doc {i}") for i in range(40)], vectors, "model-a")
    expected = [(h.record_id, h.score) for h in store.dense_search(vectors[7], "model-a", ALL, 5)]
    snapshot = next((tmp_path / "m.vectors").glob("*.mmvec"))
    assert VectorTable.load(snapshot) is not None
    intact = snapshot.read_bytes()
    for damage in ("zeroed", "flipped"):
        data = bytearray(intact)
        tail = len(data) // 2
        if damage == "zeroed":
            data[tail:] = bytes(len(data) - tail)
        else:
            data[tail] ^= 0x40
        snapshot.write_bytes(bytes(data))
        assert VectorTable.load(snapshot) is None, damage
        fresh = SqliteStore(tmp_path / "m.db", snapshot_min_rows=1)
        assert [(h.record_id, h.score) for h in fresh.dense_search(vectors[7], "model-a", ALL, 5)] == expected
        assert VectorTable.load(snapshot) is not None, f"{damage}: the snapshot is written again"


def test_the_vector_snapshot_is_as_readable_as_the_database(tmp_path: Path) -> None:
    """A new store is private (0600, docs/adr/0055) and its snapshot too; an owner who shares the
    store with another account (``chmod 644 memory.db``: an archive, a service's store) shares the
    snapshots written after that, so that account does not rebuild the table in every process."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        store = SqliteStore(tmp_path / "m.db", snapshot_min_rows=1)
        vectors = _unit(4)
        store.upsert([_record(f"d{i}.md", f"doc {i}") for i in range(3)], vectors[:3], "model-a")
        store.dense_search(vectors[0], "model-a", ALL, 10)
        snapshot = next((tmp_path / "m.vectors").glob("*.mmvec"))
        assert stat.S_IMODE(snapshot.stat().st_mode) == stat.S_IMODE((tmp_path / "m.db").stat().st_mode) == 0o600
        os.chmod(tmp_path / "m.db", 0o644)
        store.upsert([_record("d3.md", "doc 3")], vectors[3:], "model-a")
        store.delete([_record("d0.md", "doc 0").id])  # a deletion: the snapshot is written anew
        store.dense_search(vectors[1], "model-a", ALL, 10)
    finally:
        os.umask(old)
    snapshot = next((tmp_path / "m.vectors").glob("*.mmvec"))
    assert stat.S_IMODE(snapshot.stat().st_mode) == 0o644
    assert [p.name for p in snapshot.parent.iterdir()] == [snapshot.name]  # no temporary file left


def test_a_snapshot_replaced_while_it_loads_is_mapped_from_the_file_that_was_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process may rename a new snapshot over the path between the check and the mapping;
    the arrays must come from the file whose header and CRC were read, not from the new one."""
    import os

    from mission_memory.stores import vector_table
    from mission_memory.stores.vector_table import VectorTable

    small = SqliteStore(tmp_path / "small.db", snapshot_min_rows=1)
    big = SqliteStore(tmp_path / "big.db", snapshot_min_rows=1)
    small.upsert([_record(f"s{i}.md", f"small {i}") for i in range(3)], _unit(3), "model-a")
    big.upsert([_record(f"b{i}.md", f"big {i}") for i in range(40)], _unit(40)[::-1].copy(), "model-a")
    small.dense_search(_unit(3)[0], "model-a", ALL, 3)
    big.dense_search(_unit(3)[0], "model-a", ALL, 3)
    checked = next((tmp_path / "small.vectors").glob("*.mmvec"))
    newer = next((tmp_path / "big.vectors").glob("*.mmvec"))
    expected = VectorTable.load(checked)
    assert expected is not None

    real_crc32 = vector_table.zlib.crc32
    swapped: list[bool] = []

    def crc32_then_replace(data: object, value: int = 0) -> int:
        result = real_crc32(data, value)  # type: ignore[call-overload]
        if not swapped:  # the other process's rename lands during the check
            swapped.append(True)
            os.replace(newer, checked)
        return int(result)

    monkeypatch.setattr(vector_table.zlib, "crc32", crc32_then_replace)
    table = VectorTable.load(checked)
    monkeypatch.undo()
    assert swapped and table is not None
    assert np.array_equal(np.asarray(table.rowids), np.asarray(expected.rowids))
    assert np.array_equal(np.asarray(table.matrix), np.asarray(expected.matrix))
    monkeypatch.setattr(vector_table, "READ_ROWS_MIN_ROWS", 1)  # rows read with pread, as from 200k rows
    assert np.array_equal(table.float_rows(np.arange(table.size)), np.asarray(expected.matrix))


def test_a_damaged_store_is_reported_with_a_recovery_hint_and_refuses_ingest(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = SqliteStore(path)
    store.upsert([_record(f"d{i}.md", "x" * 3000) for i in range(200)], _unit(200), "model-a")
    store.close()
    data = bytearray(path.read_bytes())
    for offset in range(8192, len(data) - 4096, 4096):  # keep the header page, damage the rest
        data[offset : offset + 512] = b"\xff" * 512
    path.write_bytes(bytes(data))
    with pytest.raises(BackendUnavailable, match=r"damaged.*re-ingest"):
        damaged = SqliteStore(path)
        damaged.ensure_sound()
        damaged.counts()


def test_a_read_only_data_dir_can_still_be_read(tmp_path: Path) -> None:
    import os

    folder = tmp_path / "ro"
    store = SqliteStore(folder / "m.db")
    store.upsert([_record("a.md", "alpha")], _unit(1), "model-a")
    store.close()
    for name in os.listdir(folder):
        os.chmod(folder / name, 0o444)
    os.chmod(folder, 0o555)
    try:
        if os.access(folder / "m.db", os.W_OK):
            pytest.skip("running as a user who can write anyway (root)")
        reader = SqliteStore(folder / "m.db")
        assert reader.counts()["domain"] == {"doc_chunk": 1}
        with pytest.raises(BackendUnavailable, match="not writable"):
            reader.upsert([_record("b.md", "beta")], _unit(1), "model-a")
    finally:
        os.chmod(folder, 0o755)


def test_a_selective_filter_still_finds_its_rows_among_many_matches(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "m.db")
    many = [_record(f"web{i}.md", "upload proxy retries", component="web") for i in range(900)]
    store.upsert([*many, _record("api.md", "the upload proxy of the api", component="api")], _unit(901), "model-a")
    hits = store.bm25_search(["proxy"], SearchFilter(layers=tuple(Layer), component="api"), 10)
    assert [store.get([h.record_id])[h.record_id].component for h in hits] == ["api"]
    broad = store.bm25_search(["proxy"], SearchFilter(layers=(Layer.DOMAIN,), mission="m"), 10)
    assert len(broad) == 10


def test_a_data_dir_that_is_a_file_is_named_as_a_configuration_error(tmp_path: Path) -> None:
    from mission_memory.errors import ConfigError

    not_a_folder = tmp_path / "data"
    not_a_folder.write_text("notes\n")
    with pytest.raises(ConfigError, match=r"data dir .*data is a file, not a folder"):
        SqliteStore(not_a_folder / "memory.db")
    assert not_a_folder.read_text() == "notes\n"
