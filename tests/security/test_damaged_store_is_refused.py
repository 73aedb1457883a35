"""Damage is refused, never served: bit rot in a vector snapshot, a malformed or empty ``memory.db``,
orphaned temporary files, and the data files' modes (issue 22 item 7; docs/adr/0055)."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from mission_memory.cli.app import app
from mission_memory.errors import StoreDamaged
from mission_memory.records import Layer, Provenance, Record, RecordKind, SourceKind
from mission_memory.stores.filters import SearchFilter
from mission_memory.stores.snapshot_integrity import STAMP_SUFFIX
from mission_memory.stores.sqlite import SqliteStore
from mission_memory.stores.vector_table import VectorTable

MODEL = "model-a"


def _record(i: int, kind: RecordKind = RecordKind.DOC_CHUNK, mission: str = "m") -> Record:
    return Record.build(
        kind=kind, title=f"doc {i}", text=f"document number {i} about the upload ledger " + "x" * 200,
        provenance=Provenance(kind=SourceKind.DOC, ref=f"d{i}.md", uri=f"file:///d{i}.md", mission=mission,
                              time=datetime(2025, 1, 1, tzinfo=UTC)),
    )


def _unit(rows: int, dim: int = 16, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(rows, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _where() -> SearchFilter:
    return SearchFilter(layers=tuple(Layer))


def _age(path: Path, seconds: float = 120.0) -> int:
    old = path.stat().st_mtime_ns - int(seconds * 1e9)
    os.utime(path, ns=(old, old))
    return old


def test_bit_rot_in_a_vector_snapshot_with_its_mtime_restored_is_not_served(tmp_path: Path) -> None:
    """200 flipped bytes inside the matrix of ``memory.vectors/*.mmvec`` and the modification time set
    back with ``os.utime``: inode, size and mtime are the stamp's, but the snapshot must not be trusted."""
    db = tmp_path / "memory.db"
    store = SqliteStore(db, snapshot_min_rows=1)
    vectors = _unit(400)
    store.upsert([_record(i) for i in range(400)], vectors, MODEL)
    probes = [int(p) for p in (3, 97, 180, 250, 333)]
    where = _where()
    expected = [[(h.record_id, round(h.score, 5)) for h in store.dense_search(vectors[p], MODEL, where, 5)]
                for p in probes]
    store.close()
    snapshot = next((tmp_path / "memory.vectors").glob("*.mmvec"))
    mtime = _age(snapshot)
    checked = SqliteStore(db, snapshot_min_rows=1)  # checks the CRC and stamps the snapshot
    assert checked.dense_search(vectors[0], MODEL, where, 1)
    checked.close()
    assert snapshot.with_name(snapshot.name + STAMP_SUFFIX).is_file()

    data = bytearray(snapshot.read_bytes())
    size = int.from_bytes(data[7:15], "little")
    header = json.loads(data[15 : 15 + size])
    start = -(-(7 + 8 + size) // 64) * 64
    matrix = start + header["arrays"]["matrix"]["offset"]
    row_bytes = 16 * 4
    for probe in probes:  # 40 bytes in each probe's own row: 200 bytes in all
        at = matrix + probe * row_bytes
        data[at : at + 40] = bytes(b ^ 0xFF for b in data[at : at + 40])
    with snapshot.open("r+b") as f:  # in place: same inode and size
        f.write(bytes(data))
    os.utime(snapshot, ns=(mtime, mtime))

    fresh = SqliteStore(db, snapshot_min_rows=1)
    answered = [[(h.record_id, round(h.score, 5)) for h in fresh.dense_search(vectors[p], MODEL, where, 5)]
                for p in probes]
    assert answered == expected, "a snapshot with flipped bytes answered the probe queries"
    assert VectorTable.load(snapshot) is not None  # rebuilt from SQLite and written again


def test_a_stamp_older_than_a_day_is_checked_again(tmp_path: Path) -> None:
    """Damage below the file system (a flipped bit on the medium) changes no time: the stamp expires."""
    from mission_memory.stores import snapshot_integrity

    db = tmp_path / "memory.db"
    store = SqliteStore(db, snapshot_min_rows=1)
    vectors = _unit(50)
    store.upsert([_record(i) for i in range(50)], vectors, MODEL)
    store.dense_search(vectors[0], MODEL, _where(), 1)  # writes the snapshot
    store.close()
    snapshot = next((tmp_path / "memory.vectors").glob("*.mmvec"))
    _age(snapshot)
    assert VectorTable.load(snapshot) is not None
    stamp = snapshot.with_name(snapshot.name + STAMP_SUFFIX)
    held = json.loads(stamp.read_text())
    held["checked_at_ns"] -= int((snapshot_integrity.STAMP_MAX_AGE_SECONDS + 60) * 1e9)
    stamp.write_text(json.dumps(held))
    reads: list[int] = []
    real = snapshot_integrity.data_crc32

    def counting(f, start):  # type: ignore[no-untyped-def]
        reads.append(start)
        return real(f, start)

    snapshot_integrity.data_crc32 = counting  # type: ignore[assignment]
    try:
        assert VectorTable.load(snapshot) is not None
        assert VectorTable.load(snapshot) is not None
    finally:
        snapshot_integrity.data_crc32 = real  # type: ignore[assignment]
    assert len(reads) == 1  # read once for the expired stamp, then stamped afresh


def _damage_an_index_no_query_reads(db: Path) -> None:
    """Overwrite the leaf pages of the ``records_event_type`` index (read only by event-type filters)."""
    conn = sqlite3.connect(db)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    pages = [row[0] for row in conn.execute(
        "SELECT pageno FROM dbstat WHERE name = 'records_event_type' AND pagetype = 'leaf'"
    )]
    conn.close()
    assert pages, "the index has leaf pages"
    with db.open("r+b") as f:
        for page in pages:
            f.seek((page - 1) * page_size + 8)
            f.write(b"\xa5" * (page_size - 8))


def _store_with_decisions(db: Path) -> None:
    store = SqliteStore(db)
    records = [_record(i) for i in range(1500)] + [_record(2000 + i, RecordKind.DECISION) for i in range(3)]
    store.upsert(records, _unit(len(records)), MODEL)
    store.close()
    assert not Path(f"{db}-wal").exists()


def test_a_malformed_store_is_refused_by_every_command_with_advice_that_names_what_is_lost(
    data_dir: Path,
) -> None:
    db = data_dir / "memory.db"
    _store_with_decisions(db)
    _damage_an_index_no_query_reads(db)
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] != "ok"
    assert conn.execute("SELECT count(*) FROM records").fetchone()[0] == 1503  # still readable around it
    conn.close()

    with pytest.raises(StoreDamaged) as refused:
        SqliteStore(db)
    message = str(refused.value)
    assert "derived data" not in message and "move it aside and re-ingest" not in message
    assert "3 decisions" in message and f"mission-memory salvage {db}" in message

    runner = CliRunner()
    for argv in (["status"], ["query", "upload ledger", "--json"], ["export", "-o", str(data_dir.parent / "x.jsonl")],
                 ["decide", "Keep the ledger", "--decision", "keep it", "--rationale", "it works"]):
        done = runner.invoke(app, argv)
        assert done.exit_code != 0, (argv, done.output)
        assert "is damaged" in done.output, (argv, done.output)


def test_an_empty_memory_db_is_refused_not_made_a_new_store(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    db = data_dir / "memory.db"
    db.write_bytes(b"")
    with pytest.raises(StoreDamaged, match="empty"):
        SqliteStore(db)
    assert db.stat().st_size == 0  # nothing was written into it
    done = CliRunner().invoke(app, ["status"])
    assert done.exit_code != 0 and "is damaged" in done.output, done.output


def test_a_truncated_memory_db_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    _store_with_decisions(db)
    with db.open("r+b") as f:
        f.truncate(db.stat().st_size // 2 // 4096 * 4096)  # whole pages: only the header tells
    with pytest.raises(StoreDamaged, match="cut short"):
        SqliteStore(db)


def test_orphaned_temporary_files_of_killed_snapshot_writes_are_removed_on_open(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    store = SqliteStore(db, snapshot_min_rows=1)
    store.upsert([_record(i) for i in range(20)], _unit(20), MODEL)
    store.dense_search(_unit(1)[0], MODEL, _where(), 1)
    store.close()
    dead = 2**22 + 12345  # above the default pid_max: no process has it
    vectors, bm25 = tmp_path / "memory.vectors", tmp_path / "memory.bm25"
    bm25.mkdir(exist_ok=True)
    orphans = [
        vectors / f".snapshot-{dead}-{'a' * 32}.tmp",
        bm25 / f".index-v1.mmbm25.{dead}.{'b' * 32}.tmp",
        vectors / f"x-v3.mmvec.checked.{dead}.tmp",
        tmp_path / f".memory.db.{dead}.{'c' * 32}.tmp",
    ]
    live = vectors / f".snapshot-{os.getpid()}-{'d' * 32}.tmp"  # a writer that still runs: kept
    for path in (*orphans, live):
        path.write_bytes(b"\0" * 4096)
    keep = vectors / "notes.txt"
    keep.write_text("not ours")
    SqliteStore(db, snapshot_min_rows=1).close()
    assert [p for p in orphans if p.exists()] == []
    assert live.exists() and keep.exists()


def test_a_new_store_is_private_to_its_owner(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        folder = tmp_path / "fresh" / "data"
        store = SqliteStore(folder / "memory.db", snapshot_min_rows=1)
        store.upsert([_record(i) for i in range(30)], _unit(30), MODEL)
        store.dense_search(_unit(1)[0], MODEL, _where(), 3)
        store.close()
    finally:
        os.umask(old)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert any(p.name == "memory.db" for p in files) and any(p.suffix == ".mmvec" for p in files)
    assert {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {p.name: "0o600" for p in files}
