"""Ingest-time preparation of the SQLite store's derived search state (vector snapshot, BM25 index).

A store large enough to keep derived state gets both files from ``prepare_search``, and a new
store object on the same file then answers its first query from them without building anything.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from mission_memory.records import Layer, Provenance, Record, RecordKind, SourceKind
from mission_memory.stores.base import SearchFilter, SearchPreparation, prepare_search
from mission_memory.stores.sqlite import SqliteStore
from mission_memory.stores.vector_table import VectorTable

MODEL = "test-model"
WORDS = "proxy upload bucket queue scan keycloak export metadata checksum lambda cluster deploy".split()


def _filled(path: Path, n: int, **thresholds: int) -> SqliteStore:
    store = SqliteStore(path, **thresholds)
    rng = np.random.default_rng(7)
    records = [
        Record.build(
            kind=RecordKind.DOC_CHUNK,
            title=f"note {i}",
            text=" ".join(str(w) for w in rng.choice(WORDS, size=12)),
            provenance=Provenance(kind=SourceKind.DOC, ref=f"r{i}", uri=f"file:///r{i}", mission="m",
                                  time=datetime(2025, 1, 1, tzinfo=UTC)),
        )
        for i in range(n)
    ]
    store.upsert_records(records)
    vectors = rng.standard_normal((n, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    store.put_vectors([r.id for r in records], vectors, MODEL)
    return store


def test_prepare_search_writes_both_snapshots_and_the_next_store_builds_nothing(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = _filled(path, 60, snapshot_min_rows=50, bm25_index_min_rows=50)
    assert isinstance(store, SearchPreparation)
    assert prepare_search(store, MODEL) is True
    assert store.bm25_index.builds == 1
    assert store.bm25_index.snapshot_path.is_file()
    assert VectorTable.snapshot_path(tmp_path / "memory.vectors", MODEL).is_file()
    store.close()

    again = SqliteStore(path, snapshot_min_rows=50, bm25_index_min_rows=50)
    hits = again.bm25_search(["keycloak", "lambda"], SearchFilter((Layer.DOMAIN,)), 5)
    assert hits
    assert again.bm25_index.builds == 0  # answered from the snapshot prepare_search wrote
    again.close()


def test_prepare_search_leaves_a_small_store_alone(tmp_path: Path) -> None:
    store = _filled(tmp_path / "memory.db", 20, snapshot_min_rows=50, bm25_index_min_rows=50)
    assert store.prepare_search(MODEL) is False
    assert store.bm25_index.builds == 0
    assert not store.bm25_index.snapshot_path.exists()
    store.close()


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write a read-only file")
def test_prepare_search_does_nothing_on_a_read_only_store(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    _filled(path, 60, snapshot_min_rows=50, bm25_index_min_rows=50).close()
    for file in tmp_path.iterdir():
        file.chmod(0o444)
    tmp_path.chmod(0o555)
    try:
        store = SqliteStore(path, snapshot_min_rows=50, bm25_index_min_rows=50)
        assert store.prepare_search(MODEL) is False
        store.close()
    finally:
        tmp_path.chmod(0o755)


def test_an_import_into_sqlite_prepares_search_like_an_ingest(tmp_path: Path) -> None:
    """Restoring an export (or moving a Qdrant memory back) must not leave the build of the vector
    snapshot and the BM25 index to the first query, often an agent's tool call with its own timeout;
    the embedding model is not loaded for it."""
    from mission_memory.api import Memory
    from mission_memory.config import load_settings
    from mission_memory.embeddings import configured_model_id
    from mission_memory.stores.transfer import export_memory

    settings = load_settings(data_dir=tmp_path / "data")
    model = configured_model_id(settings)
    source = _filled(tmp_path / "source.db", 60)
    ids = [r for (r,) in source._conn().execute("SELECT id FROM records")]
    vectors = np.random.default_rng(3).standard_normal((len(ids), 8)).astype(np.float32)
    source.put_vectors(ids, vectors / np.linalg.norm(vectors, axis=1, keepdims=True), model)
    export = tmp_path / "memory.jsonl"
    with export.open("w", encoding="utf-8") as out:
        export_memory(source, out)
    source.close()

    target = SqliteStore(tmp_path / "data" / "memory.db", snapshot_min_rows=50, bm25_index_min_rows=50)
    phases: list[tuple[str, int, int]] = []
    with Memory(settings, store=target) as memory:
        memory.import_memory(export, progress=lambda phase, done, total: phases.append((phase, done, total)))
        assert memory._embedder is None  # preparing needs the model's id, not the model
        assert ("index", 1, 1) in phases
        assert target.bm25_index.builds == 1 and target.bm25_index.snapshot_path.is_file()
        assert VectorTable.snapshot_path(tmp_path / "data" / "memory.vectors", model).is_file()


def test_forgetting_a_mission_prepares_search_for_what_remains(tmp_path: Path) -> None:
    """Deleting a large mission leaves the BM25 index with too many deleted rows; forget rebuilds it
    (and the vector snapshot) then, not the first query after it."""
    from mission_memory.api import Memory
    from mission_memory.config import load_settings
    from mission_memory.embeddings import configured_model_id

    settings = load_settings(data_dir=tmp_path / "data")
    path = tmp_path / "data" / "memory.db"
    store = SqliteStore(path, snapshot_min_rows=50, bm25_index_min_rows=50)
    store.bm25_index.rebuild_min_rows = 10  # as 2,000 deleted rows of a large store
    rng = np.random.default_rng(5)
    records = [
        Record.build(
            kind=RecordKind.DOC_CHUNK, title=f"note {i}", text=" ".join(str(w) for w in rng.choice(WORDS, size=12)),
            provenance=Provenance(kind=SourceKind.DOC, ref=f"r{i}", uri=f"file:///r{i}", mission=f"m{i % 2}",
                                  time=datetime(2025, 1, 1, tzinfo=UTC)),
        )
        for i in range(240)
    ]
    store.upsert_records(records)
    vectors = rng.standard_normal((len(records), 8)).astype(np.float32)
    store.put_vectors([r.id for r in records], vectors / np.linalg.norm(vectors, axis=1, keepdims=True),
                      configured_model_id(settings))
    phases: list[tuple[str, int, int]] = []
    with Memory(settings, store=store) as memory:
        assert memory.prepare_search() is True
        builds = store.bm25_index.builds
        memory.forget_mission("m1", progress=lambda phase, done, total: phases.append((phase, done, total)))
        assert memory._embedder is None
    assert phases == [("index", 0, 1), ("index", 1, 1)]
    assert store.bm25_index.builds == builds + 1  # rebuilt by forget: half the indexed rows are gone
    again = SqliteStore(path, snapshot_min_rows=50, bm25_index_min_rows=50)
    hits = again.bm25_search(["keycloak", "lambda"], SearchFilter((Layer.DOMAIN,)), 200)
    assert hits and len(hits) <= 120
    assert again.bm25_index.builds == 0 and again.bm25_index.extensions == 0  # the snapshot is current
    again.close()


def test_a_vector_snapshot_without_record_kinds_gets_them_and_is_saved_again(tmp_path: Path) -> None:
    """docs/adr/0050: a snapshot written before the kind array (readers then ignore what they do not
    know) is used, its kinds read once from ``records``, and saved again with them."""
    path = tmp_path / "memory.db"
    store = _filled(path, 60, snapshot_min_rows=50, bm25_index_min_rows=50)
    assert prepare_search(store, MODEL) is True
    store.close()
    snapshot = VectorTable.snapshot_path(tmp_path / "memory.vectors", MODEL)
    current = VectorTable.load(snapshot)
    assert current is not None and current.kind is not None and set(current.kind.tolist()) == {0}
    older = VectorTable(current.model_id, current.deletions, current.max_rowid, np.array(current.rowids),
                        np.array(current.matrix), np.array(current.quantized), np.array(current.scales),
                        np.array(current.layer), current.numbers, current.codes, current.vocab)
    older.save(snapshot)
    assert VectorTable.load(snapshot).kind is None  # type: ignore[union-attr]

    again = SqliteStore(path, snapshot_min_rows=50, bm25_index_min_rows=50)
    full_reads: list[int] = []
    read = again._vectors._read
    again._vectors._read = lambda *a, **kw: full_reads.append(1) or read(*a, **kw)  # type: ignore[method-assign]
    query = np.zeros(8, dtype=np.float32)
    query[0] = 1.0
    per_kind = again.dense_search_by_layer(query, MODEL, SearchFilter((Layer.DOMAIN,)), 5, per_kind=True)
    per_layer = again.dense_search_by_layer(query, MODEL, SearchFilter((Layer.DOMAIN,)), 5)
    assert [(h.record_id, h.score) for h in per_kind[Layer.DOMAIN]] == [
        (h.record_id, h.score) for h in per_layer[Layer.DOMAIN]
    ] and len(per_kind[Layer.DOMAIN]) == 5  # one kind: the same hits
    assert {h.kind for h in per_kind[Layer.DOMAIN]} == {RecordKind.DOC_CHUNK}
    assert full_reads == []  # the vectors came from the snapshot; only the kinds were read
    again.close()
    saved = VectorTable.load(snapshot)
    assert saved is not None and saved.kind is not None and saved.kind_names == tuple(k.value for k in RecordKind)
