"""The SQLite backend's per-process vector cache: one :class:`VectorTable` per model, kept current.

Dense search reads no vector from SQLite at query time: it scores the cached matrix. The cache is
refreshed when another process has written, which two numbers tell: the deletion counter in
``meta`` (any delete or replacement bumps it: reload) and the highest vector row id (new rows:
append them). A table of at least ``snapshot_min_rows`` rows is also written as a memory-mapped
snapshot file next to the database, so that a new process does not read 100k rows one by one.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from mission_memory.errors import BackendUnavailable
from mission_memory.stores.sqlite_filters import CODED_COLUMNS, LAYER_CODES, NUMERIC_COLUMNS
from mission_memory.stores.vector_table import VectorTable

__all__ = ["SqliteVectorCache"]

_LAYER_NAMES = {layer.value: code for layer, code in LAYER_CODES.items()}


class SqliteVectorCache:
    """The vector tables of one SQLite store, by model.

    Args:
        database: the store's file (the snapshot folder is ``<stem>.vectors/`` beside it).
        connect: gives the calling thread's connection.
        snapshot_min_rows: tables at least this large are also kept as a snapshot file.
    """

    def __init__(self, database: Path, connect: Callable[[], sqlite3.Connection], snapshot_min_rows: int) -> None:
        self.database = database
        self.snapshot_min_rows = snapshot_min_rows
        self._connect = connect
        self._lock = threading.Lock()
        self._table: VectorTable | None = None

    def table(self, model_id: str) -> VectorTable:
        """The vector table of ``model_id``, current with the database.

        Order of preference: this process's table (when nothing changed), the table plus rows
        written since, the snapshot file plus rows written since, a full read from SQLite (which
        then refreshes the snapshot).
        """
        conn = self._connect()
        deletions = int(conn.execute("SELECT value FROM meta WHERE key = 'vector_deletions'").fetchone()[0])
        max_row = conn.execute("SELECT max(record_rowid) FROM vectors WHERE model_id = ?", (model_id,)).fetchone()[0]
        max_rowid = int(max_row or 0)
        with self._lock:
            table = self._table
            if table is None or table.model_id != model_id or table.deletions != deletions:
                table = VectorTable.load(self._snapshot_path(model_id))
            if (
                table is None
                or table.model_id != model_id
                or table.deletions != deletions
                or table.max_rowid > max_rowid
                or table.columns != (NUMERIC_COLUMNS, CODED_COLUMNS)
            ):
                table = self._read(model_id, deletions, after=0)
                if table.size >= self.snapshot_min_rows:
                    self._save_snapshot(table)
            elif table.max_rowid < max_rowid:
                more = self._read(model_id, deletions, after=table.max_rowid)
                table = table.extended(more)
                if more.size >= max(self.snapshot_min_rows, table.size // 10):
                    self._save_snapshot(table)
            self._table = table
            return table

    def _snapshot_path(self, model_id: str) -> Path:
        return VectorTable.snapshot_path(self.database.parent / f"{self.database.stem}.vectors", model_id)

    def _save_snapshot(self, table: VectorTable) -> None:
        # The snapshot only saves time; a read-only data dir still answers queries.
        with contextlib.suppress(OSError):
            table.save(self._snapshot_path(table.model_id))

    def _read(self, model_id: str, deletions: int, after: int) -> VectorTable:
        columns = ", ".join(f"r.{c}" for c in (*NUMERIC_COLUMNS, *CODED_COLUMNS))
        rows = self._connect().execute(
            f"SELECT v.record_rowid, v.vector, r.layer, {columns}, v.dim FROM vectors v"
            " JOIN records r ON r.rowid = v.record_rowid"
            " WHERE v.model_id = ? AND v.record_rowid > ? ORDER BY v.record_rowid",
            (model_id, after),
        ).fetchall()
        dims = {row[-1] for row in rows}
        if len(dims) > 1:
            raise BackendUnavailable(f"store {self.database} mixes vector sizes for model {model_id}; run reindex")
        dim = dims.pop() if dims else (self._table.matrix.shape[1] if self._table is not None else 0)
        return VectorTable.from_rows(model_id, deletions, after, dim, [row[:-1] for row in rows], _LAYER_NAMES,
                                     NUMERIC_COLUMNS, CODED_COLUMNS)
