"""The SQLite backend's own inverted index for BM25: FTS5's postings in CSR arrays, scored in NumPy.

FTS5's ``bm25()`` reads, for every row a query matches, the position lists of every phrase and a
``docsize`` row, about 0.8 ms of CPU per 1,000 postings; no query form avoids it (docs/adr/0047).
This index holds what ``bm25(records_fts, 2.0, 1.0)`` needs of a row and nothing else, so a
query costs a gather and a few vector operations per query term (docs/adr/0048):

* ``rowids`` (int64, ascending) and ``lengths`` (int32): per row position, the row id and the row's
  token count over both columns (FTS5's ``xColumnSize(-1)``, the ``|d|`` of BM25);
* ``offsets`` (int64, one more than the terms) and, per term, its postings: ``positions`` (int32
  row positions, ascending) and ``freqs`` (uint16 or uint32), the weighted term frequency
  ``2 × hits in the title + 1 × hits in the text`` (FTS5's ``aFreq`` with weights 2.0, 1.0);
* a term dictionary (index token → term id), the tokens in id order.

Everything is read from the FTS5 index itself (``fts5vocab(..., instance)``: every token instance
with its row and column), so the tokens are FTS5's own, never a re-implementation of its tokenizer.
The statistics that change with every write (the row count ``N``, the table's total tokens and each
term's document count) are not in the index: :func:`~mission_memory.stores.sqlite_fts_terms.fts_totals`
and ``fts5vocab(..., row)`` read them at query time, so scores are those FTS5 gives at that moment, to the last bit
(:func:`~mission_memory.stores.fts5_bm25.term_score` follows ``fts5Bm25Function`` in SQLite's ``ext/fts5/fts5_aux.c``
operation by operation).

The index is derived state, kept as one memory-mapped snapshot file in ``<stem>.bm25/`` beside
the database, written to a temporary name and renamed into place (a reader maps either the old
file or the new one, never half of one), tagged with the highest row id it covers and the record
id of that row, and checked (size, CRC-32) before it is trusted.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import sqlite3
import threading
import uuid
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mission_memory.stores.fts5_bm25 import TEXT_WEIGHT, TITLE_WEIGHT, idf, term_score
from mission_memory.stores.snapshot_integrity import (
    DATA_FILE_MODE,
    create_data_file,
    data_checked,
    data_file_mode,
    make_data_folder,
)
from mission_memory.stores.sqlite_fts_terms import TOKENIZER, FtsTotals

if TYPE_CHECKING:  # NumPy is imported where an index is built, read or scored: opening a store loads none
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "INDEX_MIN_ROWS",
    "REBUILD_MIN_ROWS",
    "REBUILD_SHARE",
    "SNAPSHOT_NAME",
    "Bm25Index",
    "Bm25IndexCache",
    "Bm25IndexView",
]

SNAPSHOT_NAME = "index-v1.mmbm25"
"""The snapshot file's name inside ``<stem>.bm25/`` (the number is the file format)."""

_MAGIC = b"MMBM25\x00\x01"
_ALIGN = 64
_ARRAYS = ("rowids", "lengths", "offsets", "positions", "freqs", "terms")


class Bm25Index:
    """FTS5's postings of the rows up to :attr:`max_rowid`, as memory-mappable CSR arrays.

    Build with :meth:`build`, keep with :meth:`save`, reopen with :meth:`load`. The arrays are
    read-only (views of a memory map after :meth:`load`).

    Attributes:
        rowids: int64 ``(rows,)``, ascending: the row id at each row position.
        lengths: int32 ``(rows,)``: tokens of each row over both columns.
        offsets: int64 ``(terms + 1,)``: term ``t``'s postings are ``[offsets[t], offsets[t+1])``.
        positions: int32 ``(postings,)``: row positions, ascending within a term.
        freqs: uint16 or uint32 ``(postings,)``: weighted term frequencies (title × 2 + text).
        terms: index token → term id.
        max_rowid: the highest row id covered (rows written later are not in the index).
        last_id: the record id of the row ``max_rowid`` when built: a snapshot of another
            database with the same row ids is told apart by it.
    """

    def __init__(
        self,
        rowids: npt.NDArray[np.int64],
        lengths: npt.NDArray[np.int32],
        offsets: npt.NDArray[np.int64],
        positions: npt.NDArray[np.int32],
        freqs: npt.NDArray[np.unsignedinteger],
        tokens: list[str],
        max_rowid: int,
        last_id: str,
    ) -> None:
        self.rowids = rowids
        self.lengths = lengths
        self.offsets = offsets
        self.positions = positions
        self.freqs = freqs
        self.tokens = tokens
        self.terms = {token: i for i, token in enumerate(tokens)}
        self.max_rowid = max_rowid
        self.last_id = last_id
        self._map: mmap.mmap | None = None

    @property
    def rows(self) -> int:
        """Rows covered (deleted ones included until a rebuild)."""
        return int(self.rowids.size)

    def nbytes(self) -> int:
        """Bytes of the arrays (the snapshot file's size, about)."""
        return int(sum(getattr(self, name).nbytes for name in _ARRAYS[:-1])) + sum(
            len(t.encode()) + 1 for t in self.tokens
        )

    def postings(self, token: str) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.unsignedinteger]]:
        """Row positions and weighted frequencies of ``token`` (empty when the index lacks it)."""
        import numpy as np

        term = self.terms.get(token)
        if term is None:
            return np.empty(0, dtype=np.int32), np.empty(0, dtype=np.uint16)
        lo, hi = int(self.offsets[term]), int(self.offsets[term + 1])
        return self.positions[lo:hi], self.freqs[lo:hi]

    # -- building ------------------------------------------------------------------------------

    @classmethod
    def build(cls, conn: sqlite3.Connection) -> Bm25Index:
        """Read FTS5's postings of every row of ``records_fts`` into a new index.

        Run inside one read transaction (the caller's), so the rows, their tokens and
        :attr:`max_rowid` are one state of the database. The token instances come from
        ``fts5vocab(main, records_fts, instance)`` grouped by term (the vocabulary table's own
        order), each term's rows and columns as one string, so SQLite does the iteration.

        Raises:
            sqlite3.Error: the FTS5 index cannot be read.
        """
        import numpy as np

        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.mm_records_instances"
            " USING fts5vocab(main, records_fts, instance)"
        )
        rowids = np.fromiter(
            (r for (r,) in conn.execute("SELECT rowid FROM records ORDER BY rowid")), dtype=np.int64
        )
        max_rowid = int(rowids[-1]) if rowids.size else 0
        last = conn.execute("SELECT id FROM records WHERE rowid = ?", (max_rowid,)).fetchone()
        read = _read_postings(conn, "temp.mm_records_instances", rowids)
        return cls(
            rowids, read.lengths.astype(np.int32), read.offsets, read.positions, _narrowest(read.freqs),
            read.tokens, max_rowid, str(last[0]) if last is not None else "",
        )

    def extended(self, conn: sqlite3.Connection) -> Bm25Index:
        """This index plus the rows written after it (a new index; this one is not changed).

        The new rows are tokenized by a temporary FTS5 table with ``records_fts``'s tokenizer
        (the same tokens the main index holds) and their postings read from its ``fts5vocab``
        as :meth:`build` reads the main index's; each term's postings are then the old ones
        followed by the new (row positions stay ascending). Run inside the caller's read
        transaction. Rows of this index deleted since stay in it (a rebuild drops them).

        Raises:
            sqlite3.Error: the records cannot be read.
        """
        import numpy as np

        new_rowids = np.fromiter(
            (r for (r,) in conn.execute("SELECT rowid FROM records WHERE rowid > ? ORDER BY rowid", (self.max_rowid,))),
            dtype=np.int64,
        )
        if new_rowids.size == 0:
            return self
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.mm_new_rows_fts USING fts5(title, text, tokenize='{TOKENIZER}')"
        )
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.mm_new_rows_instances USING fts5vocab(temp, mm_new_rows_fts, instance)"
        )
        conn.execute("DELETE FROM temp.mm_new_rows_fts")
        try:
            conn.execute(
                "INSERT INTO temp.mm_new_rows_fts (rowid, title, text)"
                " SELECT rowid, title, text FROM records WHERE rowid > ? ORDER BY rowid",
                (self.max_rowid,),
            )
            read = _read_postings(conn, "temp.mm_new_rows_instances", new_rowids)
        finally:
            conn.execute("DELETE FROM temp.mm_new_rows_fts")
        max_rowid = int(new_rowids[-1])
        last = conn.execute("SELECT id FROM records WHERE rowid = ?", (max_rowid,)).fetchone()
        tokens = list(self.tokens) + [t for t in read.tokens if t not in self.terms]
        union = {t: i for i, t in enumerate(tokens)}
        old_counts = np.diff(self.offsets)
        new_ids = np.fromiter((union[t] for t in read.tokens), dtype=np.int64, count=len(read.tokens))
        new_counts = np.diff(read.offsets)
        counts = np.zeros(len(tokens), dtype=np.int64)
        counts[: old_counts.size] = old_counts
        counts[new_ids] += new_counts
        offsets = np.zeros(len(tokens) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        # Where each posting goes: its term's new start, plus its rank within the term (old ones first).
        old_dest = np.arange(self.positions.size, dtype=np.int64) + np.repeat(
            offsets[: old_counts.size] - self.offsets[:-1], old_counts
        )
        old_padded = np.zeros(len(tokens), dtype=np.int64)
        old_padded[: old_counts.size] = old_counts
        head = offsets[new_ids] + old_padded[new_ids]
        new_dest = np.arange(read.positions.size, dtype=np.int64) + np.repeat(head - read.offsets[:-1], new_counts)
        positions = np.empty(int(offsets[-1]), dtype=np.int32)
        positions[old_dest] = self.positions
        positions[new_dest] = read.positions + self.rows
        freqs = np.empty(int(offsets[-1]), dtype=np.uint32)
        freqs[old_dest] = self.freqs
        freqs[new_dest] = read.freqs
        return Bm25Index(
            np.concatenate([self.rowids, new_rowids]),
            np.concatenate([self.lengths, read.lengths.astype(np.int32)]),
            offsets, positions, _narrowest(freqs), tokens, max_rowid, str(last[0]) if last is not None else "",
        )

    # -- the snapshot file -------------------------------------------------------------------

    def save(self, path: Path, mode: int = DATA_FILE_MODE) -> None:
        """Write the index to ``path`` atomically (a temporary file in the same folder, renamed).

        Layout: 8 magic bytes, the header's length (8 bytes, little-endian), a JSON header
        (``max_rowid``, ``last_id``, each array's offset, dtype and length, the CRC-32 of the
        data), then the arrays, each aligned to 64 bytes.

        Raises:
            OSError: the folder cannot be written.
        """
        blobs: dict[str, bytes | npt.NDArray[np.generic]] = {
            "rowids": self.rowids, "lengths": self.lengths, "offsets": self.offsets,
            "positions": self.positions, "freqs": self.freqs,
            "terms": "\n".join(self.tokens).encode(),
        }
        layout: dict[str, list[object]] = {}
        cursor = 0
        for name in _ARRAYS:
            blob = blobs[name]
            size = len(blob) if isinstance(blob, bytes) else int(blob.nbytes)
            dtype = "bytes" if isinstance(blob, bytes) else str(blob.dtype)
            count = len(blob) if isinstance(blob, bytes) else int(blob.size)
            layout[name] = [cursor, dtype, count]
            cursor += _padded(size)
        data_size = cursor
        crc = 0
        for name in _ARRAYS:
            raw = _raw(blobs[name])
            crc = zlib.crc32(raw, crc)
            crc = zlib.crc32(b"\0" * (_padded(len(raw)) - len(raw)), crc)
        header = json.dumps({
            "format": 1, "max_rowid": self.max_rowid, "last_id": self.last_id,
            "arrays": layout, "data_size": data_size, "crc32": crc,
        }).encode()
        start = _padded(16 + len(header))
        make_data_folder(path.parent)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
        try:
            with create_data_file(tmp, mode) as out:
                out.write(_MAGIC + len(header).to_bytes(8, "little") + header)
                out.write(b"\0" * (start - 16 - len(header)))
                for name in _ARRAYS:
                    raw = _raw(blobs[name])
                    out.write(raw)
                    out.write(b"\0" * (_padded(len(raw)) - len(raw)))
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)

    @classmethod
    def load(cls, path: Path) -> Bm25Index | None:
        """The index in the snapshot file ``path``, or None when it is missing, of another
        format, truncated or damaged (wrong size, bad header, CRC-32 mismatch): such a file is
        never trusted, and the caller rebuilds it. The arrays are views of a read-only memory map.

        The CRC is computed with plain reads of the open file, not through the map, so that only
        the postings a query touches become part of this process's resident set (snapshot files
        are replaced, never changed in place, so the map shows the bytes that were checked).
        """
        import numpy as np

        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                head = f.read(16)
                if len(head) < 16 or head[:8] != _MAGIC:
                    return None
                header_len = int.from_bytes(head[8:16], "little")
                if header_len <= 0 or 16 + header_len > size:
                    return None
                header = json.loads(f.read(header_len).decode())
                start = _padded(16 + header_len)
                if header.get("format") != 1 or start + int(header["data_size"]) != size:
                    return None
                if not data_checked(f, Path(path), start, int(header["crc32"])):
                    return None
                mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
            return None
        try:
            view = memoryview(mapped)[start:]
            arrays: dict[str, object] = {}
            for name in _ARRAYS:
                offset, dtype, count = header["arrays"][name]
                if dtype == "bytes":
                    arrays[name] = bytes(view[offset : offset + count])
                else:
                    arrays[name] = np.frombuffer(mapped, dtype=np.dtype(dtype), count=count, offset=start + offset)
            view.release()
            terms_blob = arrays["terms"]
            assert isinstance(terms_blob, bytes)
            tokens = terms_blob.decode().split("\n") if terms_blob else []
            index = cls(
                arrays["rowids"], arrays["lengths"], arrays["offsets"], arrays["positions"],  # type: ignore[arg-type]
                arrays["freqs"], tokens, int(header["max_rowid"]), str(header["last_id"]),  # type: ignore[arg-type]
            )
            if index.offsets.size != len(tokens) + 1 or index.lengths.size != index.rowids.size:
                return None
            if index.offsets.size and int(index.offsets[-1]) != index.positions.size:
                return None
            index._map = mapped
            return index
        except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
            return None


@dataclass
class _Postings:
    """Postings read from one ``fts5vocab(..., instance)`` table: CSR by term, rows as positions
    into the row ids given, and each row's token count."""

    tokens: list[str]
    offsets: npt.NDArray[np.int64]
    positions: npt.NDArray[np.int32]
    freqs: npt.NDArray[np.uint32]
    lengths: npt.NDArray[np.int64]


def _read_postings(conn: sqlite3.Connection, vocabulary: str, rowids: npt.NDArray[np.int64]) -> _Postings:
    """The postings of every term in the ``instance`` vocabulary table ``vocabulary`` (a trusted
    name), for an FTS5 table whose rows are ``rowids`` (ascending).

    Grouped by term in the vocabulary table's own order (SQLite sorts nothing), each term's token
    instances as one ``group_concat`` string (row id × 2, plus 1 in the title) parsed by NumPy, so
    no Python code runs per instance.
    """
    import numpy as np

    tokens: list[str] = []
    sizes: list[int] = []
    pos_parts: list[npt.NDArray[np.int32]] = []
    freq_parts: list[npt.NDArray[np.uint32]] = []
    lengths = np.zeros(rowids.size, dtype=np.int64)
    cursor = conn.execute(f"SELECT term, group_concat(doc * 2 + (col = 'title')) FROM {vocabulary} GROUP BY term")
    for token, packed in cursor:
        codes = np.fromstring(packed, dtype=np.int64, sep=",")  # text mode: C parsing, not deprecated
        if codes.size > 1 and bool(np.any(codes[1:] < codes[:-1])):
            codes.sort()  # the vocabulary table gives rows in order; never rely on it unchecked
        docs = codes >> 1
        weights = np.where(codes & 1, TITLE_WEIGHT, TEXT_WEIGHT)
        starts = np.flatnonzero(np.r_[True, docs[1:] != docs[:-1]])
        row_pos = np.searchsorted(rowids, docs[starts])
        lengths[row_pos] += np.diff(np.r_[starts, docs.size])  # a term's rows are distinct
        tokens.append(str(token))
        sizes.append(int(starts.size))
        pos_parts.append(row_pos.astype(np.int32))
        freq_parts.append(np.add.reduceat(weights, starts).astype(np.uint32))
    offsets = np.zeros(len(tokens) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    positions = np.concatenate(pos_parts) if pos_parts else np.empty(0, dtype=np.int32)
    freqs = np.concatenate(freq_parts) if freq_parts else np.empty(0, dtype=np.uint32)
    return _Postings(tokens, offsets, positions, freqs, lengths)


def _narrowest(freqs: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.unsignedinteger]:
    """``freqs`` as uint16 when every value fits, else uint32."""
    import numpy as np

    if freqs.size == 0 or int(freqs.max()) <= np.iinfo(np.uint16).max:
        return freqs.astype(np.uint16, copy=False)
    return freqs.astype(np.uint32, copy=False)


def _raw(blob: bytes | npt.NDArray[np.generic]) -> memoryview:
    """The bytes of ``blob`` without a copy."""
    import numpy as np

    if isinstance(blob, bytes):
        return memoryview(blob)
    return np.ascontiguousarray(blob).reshape(-1).view(np.uint8).data


def _padded(size: int) -> int:
    """``size`` rounded up to the array alignment."""
    return (size + _ALIGN - 1) // _ALIGN * _ALIGN


INDEX_MIN_ROWS = 20_000
"""Stores with fewer FTS rows rank BM25 with FTS5 itself (measured in docs/adr/0048)."""
REBUILD_SHARE = 0.1
"""The index is extended when the rows written after it exceed this share of its rows (and
:data:`REBUILD_MIN_ROWS`), and rebuilt when its rows deleted since do: exact either way, only
faster after."""
REBUILD_MIN_ROWS = 2_000


class Bm25IndexView:
    """The index as of one query: its arrays, the rows of it deleted since, the rows after it.

    Attributes:
        index: the :class:`Bm25Index`.
        deleted: int64 row positions of the index whose records are deleted (never returned).
        tail: how many records have a row id above ``index.max_rowid`` (ranked by FTS5).
    """

    def __init__(self, index: Bm25Index, deleted: npt.NDArray[np.int64], tail: int) -> None:
        self.index = index
        self.deleted = deleted
        self.tail = tail

    def scores(self, tokens: list[str], docs: list[int], totals: FtsTotals) -> npt.NDArray[np.float64]:
        """BM25 of every row position for the OR-query of single-token phrases ``tokens``.

        Args:
            tokens: one index token per query phrase, in query order (repeats count twice, as in
                FTS5).
            docs: each token's document count in the whole FTS table now (``fts5vocab``).
            totals: FTS5's row count and token total now.

        Returns:
            float64 ``(rows,)``: FTS5's score negated (higher is better; 0.0 where no phrase
            matches or the row is deleted), bit for bit what ``-bm25(records_fts, 2.0, 1.0)``
            gives, since the same float64 operations run in the same order.
        """
        import numpy as np

        index = self.index
        score = np.zeros(index.rows, dtype=np.float64)
        avgdl = totals.avgdl
        for token, n in zip(tokens, docs, strict=True):
            positions, freqs = index.postings(token)
            if positions.size == 0:
                continue
            lengths = index.lengths[positions].astype(np.float64)
            score[positions] += term_score(idf(totals.rows, n), freqs.astype(np.float64), lengths, avgdl)
        if self.deleted.size:
            score[self.deleted] = 0.0
        return score

    def best(self, score: npt.NDArray[np.float64], k: int) -> list[tuple[int, float]]:
        """``(rowid, bm25)`` of the best ``k`` rows with a positive score, best first; equal scores
        by row id (as ``_bm25_ranked`` orders them). ``bm25`` is FTS5's value (``-score``)."""
        import numpy as np

        matched = np.flatnonzero(score > 0.0)
        if k <= 0 or matched.size == 0:
            return []
        values = score[matched]
        if matched.size > k:
            threshold = np.partition(values, matched.size - k)[matched.size - k]
            keep = values >= threshold  # every row tied at the threshold, so ties resolve by row id
            matched, values = matched[keep], values[keep]
        order = np.lexsort((matched, -values))[:k]
        rowids = self.index.rowids[matched[order]]
        return list(zip(rowids.tolist(), (-values[order]).tolist(), strict=True))


class Bm25IndexCache:
    """The BM25 index of one SQLite store: loaded, built, saved and checked against the database.

    Args:
        database: the store's file (the snapshot is ``<stem>.bm25/`` beside it).
        min_rows: tables with fewer FTS rows get no index (FTS5 ranks them).
    """

    def __init__(self, database: Path, min_rows: int = INDEX_MIN_ROWS) -> None:
        self.database = database
        self.min_rows = min_rows
        self._lock = threading.Lock()
        self._index: Bm25Index | None = None
        self._deleted: tuple[Bm25Index, int, npt.NDArray[np.int64]] | None = None
        self.rebuild_share = REBUILD_SHARE
        self.rebuild_min_rows = REBUILD_MIN_ROWS
        self.builds = 0
        """Indexes built by this process (for tests and benchmarks)."""
        self.extensions = 0
        """Indexes extended with the rows written after them by this process."""

    @property
    def snapshot_path(self) -> Path:
        """``<database stem>.bm25/index-v1.mmbm25`` beside the database."""
        return self.database.parent / f"{self.database.stem}.bm25" / SNAPSHOT_NAME

    def view(self, conn: sqlite3.Connection, totals: FtsTotals) -> Bm25IndexView | None:
        """The index checked against the database as ``conn`` reads it, or None (too few rows).

        Call inside one read transaction on ``conn``, with ``totals`` read in it. Order of
        preference: this process's index, the snapshot file, a new build (then saved; a data dir
        that cannot be written keeps it in memory). Row ids only grow and records never change
        in place, so an index stays exact for its rows; the rows deleted since are found by
        count (``totals.rows`` minus the rows after the index against the index's rows) and, when
        there are any, listed once per count. The index is extended when the rows after it pass
        :attr:`rebuild_share` of it (and :attr:`rebuild_min_rows`), and rebuilt when the deleted
        ones do or the counts contradict it.

        Raises:
            sqlite3.Error: the database cannot be read.
        """
        if totals.rows < self.min_rows:
            return None
        with self._lock:
            index = self._index
            if index is None:
                index = self._checked(conn, Bm25Index.load(self.snapshot_path))
            for _ in range(3):
                if index is None:
                    index = self._build(conn)
                tail = int(conn.execute("SELECT count(*) FROM records WHERE rowid > ?", (index.max_rowid,)).fetchone()[0])
                deleted_count = index.rows - (totals.rows - tail)
                limit = max(self.rebuild_min_rows, int(self.rebuild_share * index.rows))
                deleted = self._deleted_rows(conn, index, deleted_count) if 0 <= deleted_count <= limit else None
                if deleted is None:
                    index = None  # too many deleted rows, or counts that contradict the index: rebuild
                elif tail > limit:
                    index = self._extend(conn, index)
                else:
                    self._index = index
                    return Bm25IndexView(index, deleted, tail)
            return None  # an index that disagrees right after its build: never expected; FTS5 answers

    def _checked(self, conn: sqlite3.Connection, index: Bm25Index | None) -> Bm25Index | None:
        """``index`` when it can be of this database (its last row holds the same record id, or is deleted)."""
        if index is None:
            return None
        row = conn.execute("SELECT id FROM records WHERE rowid = ?", (index.max_rowid,)).fetchone()
        if row is not None and str(row[0]) != index.last_id:
            return None
        return index

    def _extend(self, conn: sqlite3.Connection, index: Bm25Index) -> Bm25Index:
        extended = index.extended(conn)
        self.extensions += 1
        with contextlib.suppress(OSError):
            extended.save(self.snapshot_path, data_file_mode(self.database))
        return extended

    def _build(self, conn: sqlite3.Connection) -> Bm25Index:
        index = Bm25Index.build(conn)
        self.builds += 1
        with contextlib.suppress(OSError):  # the snapshot only saves time: a read-only data dir still answers
            index.save(self.snapshot_path, data_file_mode(self.database))
        return index

    def _deleted_rows(self, conn: sqlite3.Connection, index: Bm25Index, count: int) -> npt.NDArray[np.int64] | None:
        """Row positions of ``index`` whose records are deleted, when there are ``count`` of them.

        Deleted rows of an index only accumulate, so their number identifies the set: it is
        listed once per count. None when the rows found are not ``count`` (another database).
        """
        import numpy as np

        if count == 0:
            return np.empty(0, dtype=np.int64)
        cached = self._deleted
        if cached is not None and cached[0] is index and cached[1] == count:
            return cached[2]
        live = np.fromiter(
            (r for (r,) in conn.execute("SELECT rowid FROM records WHERE rowid <= ?", (index.max_rowid,))),
            dtype=np.int64,
        )
        gone = np.flatnonzero(~np.isin(index.rowids, live, assume_unique=True)).astype(np.int64)
        if gone.size != count or live.size != index.rows - count:
            return None
        self._deleted = (index, count, gone)
        return gone
