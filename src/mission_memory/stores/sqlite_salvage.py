"""Salvage a damaged ``memory.db``: copy every row that can still be read into a new data dir.

A damaged store is refused, never answered from (:mod:`~mission_memory.stores.sqlite_integrity`), and
its refusal used to send the user to SQLite's ``.recover``. That command needs the ``sqlite_dbpage``
virtual table, which Debian's and other distributions' ``sqlite3`` 3.40 builds lack: it prints ``SQL
logic error`` and writes nothing, even on an intact file. This module does the same job with Python's
own SQLite, table by table:

* the damaged file (and its ``-wal``, whose committed transactions count) is copied into a
  temporary folder first, so nothing is written next to the original;
* a file cut short (a copy stopped part way, a truncation) is refused by SQLite as a whole: its
  header counts more pages than it holds. The copy's header is set to the pages the file does hold
  (and a partial last page dropped), so SQLite reads the surviving pages and reports the missing ones
  as damage where a b-tree points at them; how many pages were missing is reported;
* the new store is a fresh :class:`~mission_memory.stores.sqlite.SqliteStore` at the current schema,
  so its indexes, full-text index and triggers are whole; rows are inserted with their own rowids
  (a vector keeps pointing at its record) and ``INSERT OR IGNORE``, so nothing is replaced;
* each table is read in rowid order, a batch at a time. A batch that fails is read again one row at
  a time; a row that cannot be read is skipped by seeking past it in doubling steps
  (``rowid > last + 1, + 2, + 4, …``): SQLite seeks through the b-tree's interior pages, so a damaged
  leaf page loses the rows on it and no more. Every skipped range is reported.

Derived files (the vector snapshot, the BM25 index) are rebuilt by the new store on first use.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from mission_memory.errors import InputError

__all__ = ["SALVAGED_TABLES", "SalvageReport", "TableSalvage", "salvage_sqlite_store"]

SALVAGED_TABLES = ("records", "vectors", "retrieval_events", "ingest_state")
"""The tables that hold data (the full-text index is rebuilt from ``records`` by the new store's trigger;
``meta`` and ``migrations`` are the new store's own)."""

_BATCH = 500
_MAX_ROWID = 2**62


@dataclass
class TableSalvage:
    """What was read of one table.

    Attributes:
        table: its name.
        copied: rows read and written to the new store.
        skipped: ``(after, before)`` rowid ranges that could not be read: rows with ``after < rowid <
            before`` are lost (``before`` is None when the rest of the table could not be reached).
        error: why the table could not be read at all (its schema is damaged), or "".
    """

    table: str
    copied: int = 0
    skipped: list[tuple[int, int | None]] = field(default_factory=list)
    error: str = ""

    def to_json(self) -> dict[str, object]:
        """The figures as ``salvage --json`` prints them."""
        return {"table": self.table, "copied": self.copied,
                "skipped": [{"after": a, "before": b} for a, b in self.skipped], "error": self.error or None}


@dataclass
class SalvageReport:
    """The result of :func:`salvage_sqlite_store`.

    Attributes:
        source: the damaged file.
        target: the new store's file.
        tables: one entry per table of :data:`SALVAGED_TABLES`.
        orphan_vectors: vectors dropped because their record could not be read.
        records_without_vector: records copied whose vector could not be read (the embedding queue
            embeds them again).
        missing_pages: pages the source's header counts that the file no longer holds (it was cut
            short), 0 when it holds them all.
        pages: the pages the source's header counts (or the file holds, when more).
    """

    source: Path
    target: Path
    tables: list[TableSalvage]
    orphan_vectors: int = 0
    records_without_vector: int = 0
    missing_pages: int = 0
    pages: int = 0

    @property
    def complete(self) -> bool:
        """Whether every row of every table was read (the source was readable throughout)."""
        return not self.missing_pages and all(not t.skipped and not t.error for t in self.tables)

    def to_json(self) -> dict[str, object]:
        """The report as ``salvage --json`` prints it."""
        return {"source": str(self.source), "target": str(self.target), "complete": self.complete,
                "tables": [t.to_json() for t in self.tables], "orphan_vectors": self.orphan_vectors,
                "records_without_vector": self.records_without_vector, "missing_pages": self.missing_pages,
                "pages": self.pages}


def salvage_sqlite_store(source: Path, data_dir: Path) -> SalvageReport:
    """Copy every readable row of the store file ``source`` into a new store ``data_dir/memory.db``.

    Args:
        source: a damaged (or any) ``memory.db``; it is only read, through a copy.
        data_dir: the new data dir; created when missing. Its ``memory.db`` must not exist yet.

    Returns:
        What was copied and what could not be read, per table.

    Raises:
        InputError: ``source`` is not a file, or ``data_dir`` already holds a store (nothing is
            overwritten), or ``data_dir`` is ``source``'s own folder.
    """
    from mission_memory.stores.sqlite import SqliteStore
    from mission_memory.stores.sqlite_integrity import SQLITE_HEADER

    source = source.expanduser().resolve()
    if not source.is_file():
        raise InputError(f"salvage: {source} is not a file")
    with source.open("rb") as handle:
        if handle.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
            raise InputError(f"salvage: {source} is not a SQLite database (its first bytes are not SQLite's"
                             " header): name the store's memory.db")
    target = data_dir.expanduser().resolve() / "memory.db"
    if target.parent == source.parent:
        raise InputError(f"salvage: --to {target.parent} is the damaged store's own folder; name a new one")
    if target.exists() or target.with_name("memory.db-wal").exists():
        raise InputError(f"salvage: {target} already exists; name a new data dir (nothing is overwritten)")
    with tempfile.TemporaryDirectory(prefix="mm-salvage-") as tmp:
        copy = Path(tmp) / source.name
        shutil.copyfile(source, copy)
        wal = source.with_name(source.name + "-wal")
        if wal.is_file():
            shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
        pages, missing = _fit_header_to_file(copy)
        reader = sqlite3.connect(copy, isolation_level=None)
        try:
            found = {str(r[0]) for r in reader.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.DatabaseError as exc:
            reader.close()
            raise InputError(f"salvage: the schema of {source} cannot be read ({exc}): nothing can be salvaged"
                             " table by table") from exc
        if "records" not in found:
            reader.close()
            raise InputError(f"salvage: {source} is not a mission-memory store (it has no records table)")
        SqliteStore(target).close()  # the current schema, whole
        writer = sqlite3.connect(target, isolation_level=None)
        try:
            writer.execute("PRAGMA busy_timeout = 30000")
            tables = [_salvage_table(reader, writer, name) for name in SALVAGED_TABLES]
            # a vector whose record was on a damaged page points at nothing: it leaves; a record whose
            # vector was lost is embedded again by the embedding queue (`status` counts it)
            orphans = writer.execute("DELETE FROM vectors WHERE record_rowid NOT IN (SELECT rowid FROM records)")
            dropped = max(orphans.rowcount, 0)
            unembedded = int(writer.execute(
                "SELECT count(*) FROM records WHERE rowid NOT IN (SELECT record_rowid FROM vectors)").fetchone()[0])
        finally:
            reader.close()
            writer.close()
    return SalvageReport(source, target, tables, dropped, unembedded, missing, pages)


def _fit_header_to_file(copy: Path) -> tuple[int, int]:
    """Make a file cut short readable: drop a partial last page and set the header's page count
    (offset 28, sqlite.org/fileformat.html §1.3.7) to the pages the file holds, when it counted more.

    Returns:
        ``(pages counted, pages missing)``; the count is the file's own when the header's is not
        valid (change counter at offset 24 differs from offset 92) or smaller.
    """
    with copy.open("r+b") as f:
        header = bytearray(f.read(100))
        if len(header) < 100:
            return 0, 0
        page_size = int.from_bytes(header[16:18], "big")
        page_size = 65536 if page_size == 1 else page_size
        if page_size < 512 or page_size > 65536 or page_size & (page_size - 1):
            return 0, 0  # not a page size SQLite writes: SQLite's own error says so
        size = f.seek(0, 2)
        held = size // page_size
        counted = int.from_bytes(header[28:32], "big")
        if header[24:28] != header[92:96] or counted <= held:
            return max(counted, held), 0
        f.truncate(held * page_size)
        header[28:32] = held.to_bytes(4, "big")
        f.seek(0)
        f.write(header)
    return counted, counted - held


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    """The stored columns of ``table``, without generated columns (they cannot be inserted) and
    without an ``INTEGER PRIMARY KEY`` (it is the rowid, copied as such)."""
    rows = conn.execute(f"PRAGMA table_xinfo({table})").fetchall()  # cid, name, type, notnull, dflt, pk, hidden
    keys = [r for r in rows if int(r[5]) > 0]
    alias = str(keys[0][1]) if len(keys) == 1 and str(keys[0][2]).upper() == "INTEGER" else None
    return [str(r[1]) for r in rows if int(r[6]) == 0 and str(r[1]) != alias]


def _salvage_table(reader: sqlite3.Connection, writer: sqlite3.Connection, table: str) -> TableSalvage:
    result = TableSalvage(table)
    try:
        have = set(_columns(reader, table))
        columns = [c for c in _columns(writer, table) if c in have]
    except sqlite3.DatabaseError as exc:
        result.error = f"cannot read its schema: {exc}"
        return result
    if not columns:
        result.error = "not in the damaged store"
        return result
    listed = ", ".join(columns)
    insert = f"INSERT OR IGNORE INTO {table} (rowid, {listed}) VALUES ({', '.join('?' * (len(columns) + 1))})"
    select = f"SELECT rowid, {listed} FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT ?"
    writer.execute("BEGIN IMMEDIATE")
    try:
        for row in _readable_rows(reader, select, result):
            writer.execute(insert, row)
            result.copied += 1
        writer.execute("COMMIT")
    except BaseException:
        writer.execute("ROLLBACK")
        raise
    return result


def _readable_rows(reader: sqlite3.Connection, select: str, result: TableSalvage) -> Iterator[tuple[object, ...]]:
    """Rows of one table in rowid order, stepping past those that cannot be read (module docstring)."""
    last = -_MAX_ROWID
    while True:
        try:
            batch = reader.execute(select, (last, _BATCH)).fetchall()
        except sqlite3.DatabaseError:
            batch = []
            try:
                one = reader.execute(select, (last, 1)).fetchall()
            except sqlite3.DatabaseError:
                resumed = _seek_past(reader, select, last)
                result.skipped.append((last, resumed))
                if resumed is None:
                    return
                last = resumed - 1
                continue
            batch = one
        if not batch:
            return
        yield from batch
        last = int(batch[-1][0])


def _seek_past(reader: sqlite3.Connection, select: str, last: int) -> int | None:
    """The first readable rowid after a row that cannot be read, seeking in doubling steps; None when none is."""
    step = 1
    while last + step < _MAX_ROWID:
        try:
            found = reader.execute(select, (last + step, 1)).fetchall()
        except sqlite3.DatabaseError:
            step *= 2
            continue
        return int(found[0][0]) if found else None
    return None
