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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mission_memory.errors import BackendUnavailable
from mission_memory.stores.filters import SearchFilter
from mission_memory.stores.snapshot_integrity import data_file_mode
from mission_memory.stores.sqlite_filters import (
    CODED_COLUMNS,
    KIND_NAMES,
    LAYER_CODES,
    NUMERIC_COLUMNS,
    filter_mask,
)

if TYPE_CHECKING:  # NumPy and the table are imported when vectors are read: opening a store loads neither
    import numpy as np
    import numpy.typing as npt

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
        self._last_mask: tuple[VectorTable, SearchFilter, npt.NDArray[np.bool_] | None] | None = None

    def table(self, model_id: str) -> VectorTable:
        """The vector table of ``model_id``, current with the database.

        Order of preference: this process's table (when nothing changed), the table plus rows
        written since, the snapshot file plus rows written since, a full read from SQLite (which
        then refreshes the snapshot). A snapshot without record kinds (written before
        docs/adr/0050) gets them from one read of ``records`` and is saved again.
        """
        from mission_memory.stores.vector_table import VectorTable

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
            else:
                save = table.kind is None or table.kind_names != KIND_NAMES
                if save:  # a snapshot written before docs/adr/0050: add the kinds once
                    table = self._with_kinds(table)
                if table.max_rowid < max_rowid:
                    more = self._read(model_id, deletions, after=table.max_rowid)
                    table = table.extended(more)
                    save = save or more.size >= max(self.snapshot_min_rows, table.size // 10)
                if save and table.size >= self.snapshot_min_rows:
                    self._save_snapshot(table)
            self._table = table
            return table

    def passing_share(self, where: SearchFilter) -> float | None:
        """Share of the cached table's rows in ``where``'s layers passing its filters, or None
        when no table is cached; an estimate for sizing a BM25 read (the table may be a little
        behind the database)."""
        import numpy as np

        table = self._table
        if table is None or table.size == 0:
            return None
        in_layers = np.isin(table.layer, [LAYER_CODES[layer] for layer in where.layers])
        mask = self._mask(table, where)
        passing = in_layers if mask is None else in_layers & mask
        return float(np.count_nonzero(passing)) / table.size

    def passing_layers(self, where: SearchFilter, rowids: Sequence[int]) -> tuple[dict[int, int], list[int]]:
        """Check rows against ``where`` with the cached table's columns, without SQL.

        A record's filter columns never change under its row id (a changed record is a new row),
        so the cached table answers for every row it holds, even when it is behind the database.

        Returns:
            ``(passing, unknown)``: the layer code of each row of ``rowids`` in the table that
            passes (layers and filters), and the rows the table does not hold (all of them when
            no table is cached), for the caller to check another way.
        """
        import numpy as np

        table = self._table
        if table is None or table.size == 0 or not rowids:
            return {}, list(rowids)
        wanted = np.asarray(rowids, dtype=np.int64)
        pos = np.minimum(np.searchsorted(table.rowids, wanted), table.size - 1)
        known = table.rowids[pos] == wanted
        layers = table.layer[pos]
        ok = known & np.isin(layers, [LAYER_CODES[layer] for layer in where.layers])
        mask = self._mask(table, where)
        if mask is not None:
            ok &= mask[pos]
        passing = dict(zip(wanted[ok].tolist(), layers[ok].tolist(), strict=True))
        return passing, wanted[~known].tolist()

    def filter_mask(self, table: VectorTable, where: SearchFilter) -> npt.NDArray[np.bool_] | None:
        """:func:`~mission_memory.stores.sqlite_filters.filter_mask` of ``where`` over ``table``,
        computed once for a pull's BM25 and dense searches alike (the last pair is kept)."""
        return self._mask(table, where)

    def _mask(self, table: VectorTable, where: SearchFilter) -> npt.NDArray[np.bool_] | None:
        """:func:`filter_mask` of ``where`` over ``table``, kept for the next call with the same pair."""
        cached = self._last_mask
        if cached is not None and cached[0] is table and cached[1] == where:
            return cached[2]
        mask = filter_mask(table, where)
        self._last_mask = (table, where, mask)
        return mask

    @property
    def snapshot_folder(self) -> Path:
        """The folder of the vector snapshots, ``<stem>.vectors/`` beside the database."""
        return self.database.parent / f"{self.database.stem}.vectors"

    def _snapshot_path(self, model_id: str) -> Path:
        from mission_memory.stores.vector_table import VectorTable

        return VectorTable.snapshot_path(self.snapshot_folder, model_id)

    def _save_snapshot(self, table: VectorTable) -> None:
        # The snapshot only saves time; a read-only data dir still answers queries.
        with contextlib.suppress(OSError):
            table.save(self._snapshot_path(table.model_id), data_file_mode(self.database))

    def _with_kinds(self, table: VectorTable) -> VectorTable:
        """``table`` with its rows' record kinds read from ``records`` (one pass, no vectors read)."""
        import numpy as np

        code = {name: i for i, name in enumerate(KIND_NAMES)}
        kind = np.full(table.size, -1, dtype=np.int8)
        if table.size:
            rows = self._connect().execute(
                "SELECT rowid, kind FROM records WHERE rowid <= ? ORDER BY rowid", (table.max_rowid,)
            ).fetchall()
            rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            kinds = np.fromiter((code.get(r[1], -1) for r in rows), dtype=np.int8, count=len(rows))
            pos = np.minimum(np.searchsorted(rowids, table.rowids), max(len(rows) - 1, 0))
            if len(rows):
                held = rowids[pos] == table.rowids
                kind[held] = kinds[pos[held]]
        return table.with_kinds(kind, KIND_NAMES)

    def _read(self, model_id: str, deletions: int, after: int) -> VectorTable:
        from mission_memory.stores.vector_table import VectorTable

        columns = ", ".join(f"r.{c}" for c in (*NUMERIC_COLUMNS, *CODED_COLUMNS))
        rows = self._connect().execute(
            f"SELECT v.record_rowid, v.vector, r.layer, {columns}, r.kind, v.dim FROM vectors v"
            " JOIN records r ON r.rowid = v.record_rowid"
            " WHERE v.model_id = ? AND v.record_rowid > ? ORDER BY v.record_rowid",
            (model_id, after),
        ).fetchall()
        dims = {row[-1] for row in rows}
        if len(dims) > 1:
            raise BackendUnavailable(f"store {self.database} mixes vector sizes for model {model_id}; run reindex")
        dim = dims.pop() if dims else (self._table.matrix.shape[1] if self._table is not None else 0)
        return VectorTable.from_rows(model_id, deletions, after, dim, [row[:-1] for row in rows], _LAYER_NAMES,
                                     NUMERIC_COLUMNS, CODED_COLUMNS, KIND_NAMES)
