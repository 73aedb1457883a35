"""The embedded store: one SQLite file in WAL mode holding records, BM25, vectors and events.

Everything a memory holds lives in ``<data dir>/memory.db``:

* ``records`` — one row per :class:`~mission_memory.records.Record`, unique by id and by source key;
* ``records_fts`` — an FTS5 index (external content, kept in sync by triggers) for BM25;
* ``vectors`` — one float32 vector per record, tagged with the id of the model that made it;
* ``retrieval_events`` — every pull query (:class:`~mission_memory.retrieval_events.RetrievalEvent`);
* ``ingest_state`` — per-mission named values (ingest bookmarks, refresh state).

Its schema and migrations are in :mod:`~mission_memory.stores.sqlite_migrations`, its readings of
a search filter in :mod:`~mission_memory.stores.sqlite_filters`, its vector cache in
:mod:`~mission_memory.stores.sqlite_vector_cache`. SQLite row ids stay inside this package:
everything it returns is keyed by record id.

Vector search is cosine similarity in NumPy over a per-process matrix cache, with an int8 first
pass and exact rescoring on large tables (docs/adr/0033). It needs no SQLite extension, so it works
on Python builds that cannot load one.

BM25 is FTS5's ``bm25(records_fts, 2.0, 1.0)``; in stores of 20,000 records or more it is scored
in NumPy from an inverted index of the store's own, read from the FTS5 index and kept as a
memory-mapped snapshot in ``<stem>.bm25/`` (:mod:`~mission_memory.stores.sqlite_bm25_index`),
with the same rows, order and scores (docs/adr/0048).

Several processes share one file: WAL lets readers run beside one writer, writes take the lock up
front (``BEGIN IMMEDIATE``) and wait ``busy_timeout``, and a still-busy write is retried, so
"database is locked" does not reach a user. Each write is one transaction: a killed process leaves
the last committed state.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import json
import os
import sqlite3
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from mission_memory.errors import BackendUnavailable, ConfigError, StoreDamaged
from mission_memory.records import LAYER_OF_KIND, Layer, Provenance, Record, RecordKind, redacted_state_value
from mission_memory.retrieval_events import NewRetrievalEvent, RetrievalEvent
from mission_memory.stores import sqlite_event_kinds
from mission_memory.stores.base import (
    EventKind,
    EventRetentionRow,
    Hit,
    MemoryStore,
    RecordMerge,
    RecordPriors,
    UpsertOutcome,
)
from mission_memory.stores.filters import SearchFilter, matches
from mission_memory.stores.snapshot_integrity import (
    DATA_FILE_MODE,
    create_data_file,
    make_data_folder,
    read_access_problem,
    remove_orphaned_temporaries,
)
from mission_memory.stores.sqlite_bm25_index import INDEX_MIN_ROWS, Bm25IndexCache
from mission_memory.stores.sqlite_filters import (
    FILTER_COLUMNS,
    KIND_CODES,
    LAYER_CODES,
    filter_sql,
    row_columns,
)
from mission_memory.stores.sqlite_fts_terms import COMMON_SHARE, FtsTermStats, TermPlan, fts_totals
from mission_memory.stores.sqlite_integrity import (
    check_file_shape,
    check_soundness,
    damage_message,
    restamp_own_writes,
)
from mission_memory.stores.sqlite_migrations import (
    MIGRATIONS,
    SCHEMA_VERSION,
    applied_migrations,
    apply_migrations,
    pending_migrations,
)
from mission_memory.stores.sqlite_vector_cache import SqliteVectorCache
from mission_memory.stores.write_path import check_vector_rows
from mission_memory.utc import as_utc

if TYPE_CHECKING:  # NumPy is imported where vectors are written, read or searched: opening a store loads none
    import numpy as np
    import numpy.typing as npt

__all__ = ["SCHEMA_VERSION", "SPLIT_MIN_POSTINGS", "SPLIT_PARTS", "SqliteStore", "count_stored_rows"]

T = TypeVar("T")

_BUSY_TIMEOUT_MS = 30_000
_WRITE_RETRY_SECONDS = 120.0
WRITE_WAIT_SECONDS = _WRITE_RETRY_SECONDS + _BUSY_TIMEOUT_MS / 1000
"""The longest a write waits for the store's write lock in all (150 s, in slices of
:data:`_LOCK_SLICE_MS`); then it fails naming the file. Other statements that find the store busy wait
``busy_timeout`` (30 s) each and are retried for 120 s."""
LOCK_WAIT_NOTICE_SECONDS = 2.0
_LOCK_SLICE_MS = 200
"""A write waits for the write lock in slices of this many milliseconds (``busy_timeout`` while it
takes the lock), so Ctrl-C during a wait is acted on within one slice: SQLite's busy handler sleeps in
C, and Python runs its signal handler only when the statement returns (a 30 s slice kept an
interrupted ``ingest`` waiting up to 30 s)."""
"""A write still waiting for the write lock after this long is told to :attr:`SqliteStore.lock_wait_notice`."""


_EVENT_COLUMNS_V1 = (
    "id", "time", "query", "scope", "filters", "token_budget", "tokens_used", "record_ids", "scores", "omitted",
    "duration_ms", "model_id",
)
_EVENT_COLUMNS = (*_EVENT_COLUMNS_V1, "session_id", "operator", "mission", "client")

_RECORD_COLUMNS = (
    "rowid, id, source_key, mission, layer, kind, title, text, source_kind, ref, uri, time, "
    "source_commit, criticality, access_level, component, operator, attributes"
)


_SNAPSHOT_MIN_ROWS = 2000
SPLIT_MIN_POSTINGS = 40_000
"""BM25 queries with at least this many postings are ranked in parts on several threads. A ranking
costs about 0.85 ms of CPU per 1,000 postings here (100k store, correlation 0.96), and splitting
adds about a quarter; a pull ranks BM25 beside the query embedding and dense search (about 21 ms),
so below some 35 ms of ranking a split cannot shorten the pull (docs/adr/0047)."""
SPLIT_PARTS = 2
"""Row id ranges (threads) a large BM25 ranking is cut into: the machine's two cores."""
_SPLIT_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="mm-bm25")
_LAYER_OF_CODE = {code: layer for layer, code in LAYER_CODES.items()}
_CHUNK = 500


def _ts(moment: datetime) -> float:
    return as_utc(moment).timestamp()


def _add_time_window(clauses: list[str], params: list[Any], since: datetime | None, until: datetime | None) -> None:
    """Add ``since <= time < until`` (either bound optional) to a WHERE clause list and its parameters."""
    if since is not None:
        clauses.append("time >= ?")
        params.append(_ts(since))
    if until is not None:
        clauses.append("time < ?")
        params.append(_ts(until))


def _translating(cls: type[SqliteStore]) -> type[SqliteStore]:
    """Wrap the public methods of ``cls`` so that SQLite errors leave as :class:`BackendUnavailable`."""
    for name, member in list(vars(cls).items()):
        if name.startswith("_") or not callable(member):
            continue

        def wrap(method: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(method)
            def translated(self: SqliteStore, *args: Any, **kwargs: Any) -> Any:
                try:
                    return method(self, *args, **kwargs)
                except sqlite3.Error as exc:
                    raise self._translate(exc) from exc

            return translated

        if inspect.isgeneratorfunction(member):
            continue  # iterate translates inside
        setattr(cls, name, wrap(member))
    return cls


@_translating
class SqliteStore:
    """Records, FTS5 BM25, exact NumPy vector search and retrieval events in one SQLite file.

    Implements :class:`~mission_memory.stores.base.MemoryStore`. Safe to use from several threads (one
    connection per thread) and several processes (WAL, immediate write locks, retries).

    Args:
        path: the database file; its folder is created if missing.
        snapshot_min_rows: vector tables of at least this many rows are also kept as a snapshot
            file (``<stem>.vectors/``) so that a new process does not read them row by row.
        quantized_min_rows: vector tables of at least this many rows are searched with the int8
            first pass and exact rescoring (docs/adr/0033); smaller ones exactly. None: the
            default of :mod:`~mission_memory.stores.dense_scan` (``QUANTIZED_MIN_ROWS``).
        bm25_common_share: BM25 leaves out query terms found in more than this share of the
            records while rarer terms remain (1.0 keeps every term; docs/adr/0033).
        bm25_split_postings, bm25_split_parts: a BM25 query whose kept terms have at least
            ``bm25_split_postings`` postings in all is ranked as ``bm25_split_parts`` row id ranges
            on as many threads, with the same result (docs/adr/0047); ``parts=1`` never splits.
        bm25_index_min_rows: stores with at least this many records rank BM25 with their own
            inverted index (``<stem>.bm25/``, scores exactly FTS5's; docs/adr/0048) instead of
            FTS5's ``bm25()``; ``0`` always, a very large number never.

    Raises:
        BackendUnavailable: the file cannot be opened or is not a mission-memory database.
    """

    def __init__(
        self,
        path: Path,
        snapshot_min_rows: int = _SNAPSHOT_MIN_ROWS,
        quantized_min_rows: int | None = None,
        bm25_common_share: float = COMMON_SHARE,
        bm25_split_postings: int = SPLIT_MIN_POSTINGS,
        bm25_split_parts: int = SPLIT_PARTS,
        bm25_index_min_rows: int = INDEX_MIN_ROWS,
    ) -> None:
        self.path = path
        self.lock_wait_notice: Callable[[str], None] | None = None
        """Told, once per write, when the write has waited :data:`LOCK_WAIT_NOTICE_SECONDS` for the
        write lock (a sentence naming the file and :data:`WRITE_WAIT_SECONDS`); None says nothing.
        The CLI prints it on stderr."""
        self.snapshot_min_rows = snapshot_min_rows
        self.quantized_min_rows = quantized_min_rows
        self.bm25_common_share = bm25_common_share
        self.bm25_split_postings = bm25_split_postings
        self.bm25_split_parts = bm25_split_parts
        self._term_stats = FtsTermStats()
        self.bm25_index = Bm25IndexCache(path, bm25_index_min_rows)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._conn_lock = threading.Lock()
        self._vectors = SqliteVectorCache(path, self._conn, snapshot_min_rows)
        unreadable = read_access_problem(path)  # before anything stats the file (chmod 000 on the data dir)
        if unreadable is not None:
            raise BackendUnavailable(unreadable)
        if path.parent.exists() and not path.parent.is_dir():
            raise ConfigError(
                f"data dir {path.parent} is a file, not a folder (set MISSION_MEMORY_DATA_DIR to a folder)"
            )
        try:
            make_data_folder(path.parent)
        except OSError as exc:
            raise BackendUnavailable(f"cannot create data dir {path.parent}: {exc}") from exc
        check_file_shape(path)  # a 0-byte, foreign or truncated file: refused, never made a new store
        self.read_only = _is_read_only(path)
        if not self.read_only:
            for folder in (path.parent, self._vectors.snapshot_folder, self.bm25_index.snapshot_path.parent):
                remove_orphaned_temporaries(folder)
            if not path.exists():
                self._create()
        self._check_soundness()
        self._migrate()

    # -- connections and transactions -------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            try:
                if self.read_only:
                    conn = sqlite3.connect(_read_only_uri(self.path), uri=True, timeout=_BUSY_TIMEOUT_MS / 1000,
                                           isolation_level=None, check_same_thread=False)
                else:
                    conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                           check_same_thread=False)
                conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
                if not self.read_only:
                    self._retry(lambda: conn.execute("PRAGMA journal_mode = WAL"))
                    conn.execute("PRAGMA synchronous = NORMAL")
                conn.execute("PRAGMA foreign_keys = ON")
                if self.read_only:
                    _shadow_missing_columns(conn)
            except sqlite3.DatabaseError as exc:
                raise self._translate(exc) from exc
            self._local.conn = conn
            with self._conn_lock:
                self._connections.append(conn)
        return conn

    def _retry(self, action: Callable[[], T]) -> T:
        deadline = time.monotonic() + _WRITE_RETRY_SECONDS
        delay = 0.01
        while True:
            try:
                return action()
            except sqlite3.OperationalError as exc:
                message = str(exc).lower()
                if "locked" not in message and "busy" not in message:
                    raise self._translate(exc) from exc
                if time.monotonic() > deadline:
                    raise BackendUnavailable(f"store {self.path} stayed busy for {_WRITE_RETRY_SECONDS:.0f} s: {exc}") from exc
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    def _take_write_lock(self, conn: sqlite3.Connection) -> None:
        """``BEGIN IMMEDIATE`` on ``conn``, waiting for another writer at most :data:`WRITE_WAIT_SECONDS`
        in all, in slices of :data:`_LOCK_SLICE_MS` so an interrupt is not held up by SQLite's sleep.

        Raises:
            BackendUnavailable: the lock stayed taken that long (the message names the file), or the
                store failed otherwise (translated by :meth:`_translate`).
        """
        deadline = time.monotonic() + WRITE_WAIT_SECONDS
        conn.execute(f"PRAGMA busy_timeout = {_LOCK_SLICE_MS}")
        try:
            while True:
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as exc:
                    message = str(exc).lower()
                    if "locked" not in message and "busy" not in message:
                        raise self._translate(exc) from exc
                    if time.monotonic() > deadline:
                        raise BackendUnavailable(
                            f"store {self.path} stayed busy for {WRITE_WAIT_SECONDS:.0f} s: {exc}") from exc
        finally:
            conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")

    def _translate(self, exc: sqlite3.Error) -> BackendUnavailable:
        """The package error for a SQLite failure, with what the user can do about it."""
        message = str(exc).lower()
        if "readonly" in message or "read-only" in message:
            return BackendUnavailable(f"data dir {self.path.parent} is not writable ({exc})")
        if "malformed" in message or "not a database" in message or "corrupt" in message:
            return StoreDamaged(damage_message(self.path, str(exc)))
        if "disk is full" in message or "disk full" in message:
            return BackendUnavailable(
                f"the disk holding {self.path.parent} is full ({exc}): this change was not stored; everything"
                " stored before it is kept. Free space on that disk and run it again"
            )
        if "unable to open" in message:
            unreadable = read_access_problem(self.path)
            if unreadable is not None:
                return BackendUnavailable(f"{unreadable} ({exc})")
            if self.path.parent.is_dir() and not os.access(self.path.parent, os.W_OK):
                return BackendUnavailable(f"cannot open store {self.path} ({exc}); is {self.path.parent} writable?")
            return BackendUnavailable(f"cannot open store {self.path} ({exc})")
        return BackendUnavailable(f"store {self.path} failed: {exc}")

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, lock taken up front; rolled back on any error.

        Raises:
            BackendUnavailable: the store was opened read-only (its data dir is not writable).
        """
        if self.read_only:
            raise BackendUnavailable(
                f"data dir {self.path.parent} is not writable (the store is open read-only: it can be"
                " queried, not changed)"
            )
        conn = self._conn()
        notice = self.lock_wait_notice
        timer = None
        if notice is not None:  # said once, only when another process holds the lock that long
            timer = threading.Timer(LOCK_WAIT_NOTICE_SECONDS, notice, args=(
                f"waiting for the write lock of {self.path} (another process is writing to it); waiting at most "
                f"{WRITE_WAIT_SECONDS:.0f} s in all",))
            timer.daemon = True
            timer.start()
        try:
            self._take_write_lock(conn)
        finally:
            if timer is not None:
                timer.cancel()
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            self._retry(lambda: conn.execute("COMMIT"))

    def _create(self) -> None:
        """Make a new store whole: schema written under a temporary name (mode 0600), then linked
        into place, so ``memory.db`` is never seen empty (an empty one is damage, docs/adr/0055).
        Another process linking its own new store first wins; this one's is discarded."""
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
        try:
            create_data_file(tmp, DATA_FILE_MODE).close()
            conn = sqlite3.connect(tmp, isolation_level=None)
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("BEGIN IMMEDIATE")
                apply_migrations(conn)
                conn.execute("COMMIT")
            finally:
                conn.close()  # the last connection: the WAL is copied in and removed
            try:
                os.link(tmp, self.path)
            except FileExistsError:
                pass
            except OSError:  # a file system without hard links
                if not self.path.exists():
                    os.replace(tmp, self.path)
        except sqlite3.Error as exc:
            raise self._translate(exc) from exc
        except OSError as exc:
            raise BackendUnavailable(f"cannot create store {self.path}: {exc}") from exc
        finally:
            for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
                leftover.unlink(missing_ok=True)

    def _check_soundness(self) -> None:
        """:func:`~mission_memory.stores.sqlite_integrity.check_soundness` on this thread's connection."""
        try:
            conn = self._conn()
        except BackendUnavailable:
            raise
        self._sound_at = (check_soundness(self.path, conn), time.monotonic())

    def _migrate(self) -> None:
        try:
            conn = self._conn()
            applied = applied_migrations(conn)
            self._applied = applied or set()
            if not pending_migrations(applied):
                return  # nothing to write: a read-only data dir can still be read
            if self.read_only:
                if applied is None:
                    raise BackendUnavailable(
                        f"{self.path} is not a mission-memory store, and its data dir is not writable"
                    )
                return  # an older schema, read as it is: it cannot be migrated without writing
            with self._write() as tx:
                apply_migrations(tx)
            self._applied = applied_migrations(conn) or set()
            conn.execute("SELECT count(*) FROM records").fetchone()
        except BackendUnavailable:
            raise
        except sqlite3.DatabaseError as exc:
            raise BackendUnavailable(f"{self.path} is not a usable mission-memory store: {exc}") from exc

    backend = "sqlite"

    @property
    def description(self) -> str:
        """``sqlite`` (:class:`~mission_memory.stores.base.DescribedStore`)."""
        return "sqlite"

    @property
    def location(self) -> str:
        """The database file."""
        return str(self.path)

    @property
    def schema_version(self) -> int:
        """How many of the named migrations the file holds (:data:`SCHEMA_VERSION` once migrated)."""
        return sum(1 for name, _ in MIGRATIONS if name in self._applied)

    def close(self) -> None:
        """Close every connection this object opened."""
        with self._conn_lock:
            closed = bool(self._connections)
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()
        sound = getattr(self, "_sound_at", None)
        if closed and sound is not None and not self.read_only:
            restamp_own_writes(self.path, *sound)

    # -- records ------------------------------------------------------------------------------

    def known_ids(self, record_ids: Iterable[str]) -> set[str]:
        """Which of ``record_ids`` are stored already."""
        wanted = list(dict.fromkeys(record_ids))
        found: set[str] = set()
        conn = self._conn()
        for chunk in _chunks(wanted):
            marks = ",".join("?" * len(chunk))
            found.update(row[0] for row in conn.execute(f"SELECT id FROM records WHERE id IN ({marks})", chunk))
        return found

    def upsert_records(self, records: Sequence[Record], *, merge: RecordMerge | None = None) -> UpsertOutcome:
        """Store ``records`` in one transaction (see :meth:`upsert`)."""
        return self.upsert(records, None, "", merge=merge)

    def upsert(
        self, records: Sequence[Record], vectors: npt.NDArray[np.float32] | None, model_id: str,
        *, merge: RecordMerge | None = None,
    ) -> UpsertOutcome:
        """Store ``records`` with their row-aligned ``vectors`` in one transaction.

        Each record first goes through :meth:`Record.redacted` (a record that still holds a secret
        is stored redacted, its id derived again; docs/adr/0053).
        A record whose id is stored is unchanged; one whose source key holds another id replaces
        that record (and its vector); otherwise it is added.

        Args:
            records: the records.
            vectors: shape ``(len(records), dim)`` float32 unit vectors, or None to store none.
            model_id: id of the model that made ``vectors``.
            merge: ``merge(stored, new)``: the record to store in place of a stored one of the same
                source key, read inside this transaction (:class:`~mission_memory.stores.base.RecordStore`).
        """
        import numpy as np

        if vectors is not None:
            check_vector_rows(len(records), vectors)
        records = [record.redacted() for record in records]  # the last guard: no secret reaches disk (docs/adr/0053)
        outcome = UpsertOutcome()
        now = time.time()
        with self._write() as tx:
            for i, record in enumerate(records):
                if tx.execute("SELECT 1 FROM records WHERE id = ?", (record.id,)).fetchone():
                    outcome.unchanged.append(record.id)
                    continue
                old = tx.execute("SELECT rowid FROM records WHERE source_key = ?", (record.source_key,)).fetchone()
                if old and merge is not None:
                    row = tx.execute(f"SELECT {_RECORD_COLUMNS} FROM records WHERE rowid = ?", (old[0],)).fetchone()
                    stored = _row_to_record(row)
                    record = merge(stored, record).redacted()
                    if record.id == stored.id or tx.execute("SELECT 1 FROM records WHERE id = ?", (record.id,)).fetchone():
                        outcome.unchanged.append(record.id)
                        continue
                if old:
                    tx.execute("DELETE FROM records WHERE rowid = ?", (old[0],))
                    outcome.replaced.append(record.id)
                else:
                    outcome.added.append(record.id)
                rowid = self._insert_record(tx, record, now)
                if vectors is not None:
                    vec = np.ascontiguousarray(vectors[i], dtype=np.float32)
                    tx.execute(
                        "INSERT INTO vectors (record_rowid, model_id, dim, vector) VALUES (?, ?, ?, ?)",
                        (rowid, model_id, int(vec.shape[0]), vec.tobytes()),
                    )
        return outcome

    def _insert_record(self, tx: sqlite3.Connection, record: Record, now: float) -> int:
        p = record.provenance
        cursor = tx.execute(
            "INSERT INTO records (id, source_key, mission, layer, kind, title, text, source_kind, ref, uri,"
            " time, source_commit, criticality, access_level, component, operator, mission_type, outcome,"
            " attributes, ingested_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                record.id, record.source_key, p.mission, record.layer.value, record.kind.value, record.title,
                record.text, p.kind.value, p.ref, p.uri, _ts(p.time), p.commit, record.criticality,
                record.access_level.value, record.component, record.operator,
                record.attributes.get("mission_type"), record.attributes.get("outcome"),
                json.dumps(record.attributes, ensure_ascii=False, sort_keys=True, default=str), now,
            ),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def delete_missing(
        self, mission: str, kinds: Sequence[str], keep_source_keys: Iterable[str],
        *, spare: Callable[[Record], bool] | None = None,
    ) -> int:
        """Delete records of ``mission`` and ``kinds`` whose source key is not in ``keep_source_keys``
        and that ``spare`` does not keep.

        Used after a full pass over a mission's files: a deleted document or a renamed heading
        leaves no stale record behind. The candidates are read and ``spare`` is asked inside the
        deleting transaction (``BEGIN IMMEDIATE``), so a record another process wrote before it began
        is judged as stored and one written after it waits for the commit (docs/adr/0056). Returns
        how many records were deleted.
        """
        keep = set(keep_source_keys)
        marks = ",".join("?" * len(kinds))
        with self._write() as tx:
            rows = tx.execute(
                f"SELECT rowid, source_key FROM records WHERE mission = ? AND kind IN ({marks})", (mission, *kinds)
            ).fetchall()
            stale = [rowid for rowid, key in rows if key not in keep]
            if spare is not None and stale:
                spared = set()
                for chunk in _chunks(stale):
                    for row in tx.execute(
                        f"SELECT {_RECORD_COLUMNS} FROM records WHERE rowid IN ({','.join('?' * len(chunk))})", chunk
                    ):
                        if spare(_row_to_record(row)):
                            spared.add(row[0])
                stale = [rowid for rowid in stale if rowid not in spared]
            for rowid in stale:
                tx.execute("DELETE FROM records WHERE rowid = ?", (rowid,))
        return len(stale)

    def records_of_kind(
        self,
        kinds: Sequence[str],
        *,
        mission: str | None = None,
        operator: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 1000,
    ) -> list[Record]:
        """Records of ``kinds``, newest provenance time first (see :meth:`RecordStore.records_of_kind`)."""
        if not kinds:
            return []
        clauses = [f"kind IN ({','.join('?' * len(kinds))})"]
        params: list[Any] = [str(k) for k in kinds]
        for column, value in (("mission", mission), ("operator", operator)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        _add_time_window(clauses, params, since, until)
        rows = self._conn().execute(
            f"SELECT {_RECORD_COLUMNS} FROM records WHERE {' AND '.join(clauses)}"
            " ORDER BY time DESC, rowid DESC LIMIT ?",
            (*params, max(0, limit)),
        ).fetchall()
        return [_row_to_record(row) for row in rows]

    def count_by_component(
        self, kinds: Sequence[str], *, mission: str | None = None, after: datetime, through: datetime
    ) -> dict[str, int]:
        """Records of ``kinds`` with time in ``(after, through]``, counted per component (see the protocol)."""
        if not kinds:
            return {}
        if list(kinds) == [RecordKind.DOMAIN_EVENT.value] and self._summarised():  # docs/adr/0095
            return sqlite_event_kinds.count_events_by_component(self._conn(), mission, _ts(after), _ts(through))
        clauses = [f"kind IN ({','.join('?' * len(kinds))})", "time > ?", "time <= ?"]
        params: list[Any] = [*(str(k) for k in kinds), _ts(after), _ts(through)]
        if mission is not None:
            clauses.append("mission = ?")
            params.append(mission)
        rows = self._conn().execute(
            f"SELECT coalesce(component, ''), count(*) FROM records WHERE {' AND '.join(clauses)} GROUP BY 1",
            params,
        ).fetchall()
        return {str(component): int(n) for component, n in rows}

    def delete_mission(self, mission: str) -> dict[str, int]:
        """Delete ``mission``'s records (vectors and index entries go with them), events and state."""
        with self._write() as tx:
            records = tx.execute("DELETE FROM records WHERE mission = ?", (mission,)).rowcount
            events = tx.execute("DELETE FROM retrieval_events WHERE mission = ?", (mission,)).rowcount
            state = tx.execute("DELETE FROM ingest_state WHERE mission = ?", (mission,)).rowcount
        return {"records": records, "retrieval_events": events, "state": state}

    def relocate(self, moves: Mapping[str, str]) -> int:
        """Set the provenance URI of stored records (``{record id: uri}``); return how many changed."""
        if not moves:
            return 0
        with self._write() as tx:
            return sum(tx.execute("UPDATE records SET uri = ? WHERE id = ? AND uri IS NOT ?", (uri, rid, uri)).rowcount
                       for rid, uri in moves.items())

    def delete(self, record_ids: Iterable[str]) -> int:
        """Delete these records (their vectors and index entries go with them); return how many existed."""
        ids = list(dict.fromkeys(record_ids))
        deleted = 0
        with self._write() as tx:
            for chunk in _chunks(ids):
                marks = ",".join("?" * len(chunk))
                deleted += tx.execute(f"DELETE FROM records WHERE id IN ({marks})", chunk).rowcount
        return deleted

    def get(self, record_ids: Sequence[str]) -> dict[str, Record]:
        """Records by id (ids that are not stored are absent from the result)."""
        out: dict[str, Record] = {}
        conn = self._conn()
        for chunk in _chunks(list(dict.fromkeys(record_ids))):
            marks = ",".join("?" * len(chunk))
            for row in conn.execute(f"SELECT {_RECORD_COLUMNS} FROM records WHERE id IN ({marks})", chunk):
                out[row[1]] = _row_to_record(row)
        return out

    def priors_of(self, record_ids: Sequence[str]) -> dict[str, RecordPriors]:
        """:class:`RecordPriors` by record id, read without building the records."""
        from mission_memory.decisions import DecisionAttributes  # on first use: ``status`` never needs it

        out: dict[str, RecordPriors] = {}
        conn = self._conn()
        for chunk in _chunks(list(dict.fromkeys(record_ids))):
            marks = ",".join("?" * len(chunk))
            for rid, layer, kind, merge, has_body, criticality, status, superseded_by, probably, moment, stored in conn.execute(
                "SELECT id, layer, kind, json_extract(attributes, '$.merge'), json_extract(attributes, '$.has_body'),"
                " criticality, json_extract(attributes, '$.status'), json_extract(attributes, '$.superseded_by'),"
                f" json_extract(attributes, '$.probably_superseded_by'), time, ingested_at FROM records WHERE id IN ({marks})",
                chunk,
            ):
                kind = RecordKind(kind)
                links = {"status": status, "superseded_by": superseded_by, "probably_superseded_by": probably}
                for key in ("superseded_by", "probably_superseded_by"):
                    if isinstance(links[key], str) and links[key][:1] in ("[", "{"):
                        links[key] = json.loads(links[key])
                out[rid] = RecordPriors(
                    layer=Layer(layer), kind=kind, bare_merge=bool(merge) and has_body == 0, criticality=criticality,
                    superseded=kind is RecordKind.DECISION and DecisionAttributes.marks_superseded(links),
                    time=datetime.fromtimestamp(moment, UTC) if isinstance(moment, (int, float)) else None,
                    stored=datetime.fromtimestamp(stored, UTC) if isinstance(stored, (int, float)) else None,
                )
        return out

    def event_retention_rows(self, mission: str, until: datetime, batch: int = 5000) -> Iterator[list[EventRetentionRow]]:
        """Domain events of ``mission`` before ``until`` as :class:`EventRetentionRow` s, in rowid order
        (keyset pages over the ``(mission, kind)`` index; the attributes' three fields read by SQLite)."""
        pages = self._rowid_pages(
            "SELECT rowid, id, time, json_extract(attributes, '$.event_type'), json_extract(attributes, '$.event_id'),"
            " json_extract(attributes, '$.state') FROM records WHERE mission = ? AND kind = ? AND time < ? AND",
            (mission, RecordKind.DOMAIN_EVENT.value, _ts(until)), batch,
        )
        for rows in pages:
            yield [EventRetentionRow(rid, datetime.fromtimestamp(when, UTC), str(kind or ""), str(eid or ""),
                                     str(state or "")) for _, rid, when, kind, eid, state in rows]

    def _rowid_pages(self, select: str, params: tuple[Any, ...], batch: int) -> Iterator[list[Any]]:
        """Rows of ``select`` (``… WHERE … AND``, its first column the rowid) in keyset pages of at most
        ``batch``, in rowid order; each page is read in its own statement, so writers are not held up."""
        conn = self._conn()
        last = 0
        while True:
            try:
                rows = conn.execute(f"{select} rowid > ? ORDER BY rowid LIMIT ?", (*params, last, max(1, batch))).fetchall()
            except sqlite3.Error as exc:
                raise self._translate(exc) from exc
            if not rows:
                return
            last = rows[-1][0]
            yield rows

    def most_critical(self, where: SearchFilter, limit: int) -> list[Hit]:
        """The ``limit`` most critical records passing ``where``, newest first among equals."""
        clauses, params = filter_sql(where, alias="r")
        rows = self._conn().execute(
            f"SELECT r.id, r.criticality FROM records r WHERE {' AND '.join(clauses)}"
            " ORDER BY r.criticality DESC, r.time DESC, r.id LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [Hit(record_id=rid, score=float(criticality)) for rid, criticality in rows]

    def _summarised(self) -> bool:
        """Whether the file holds the per-minute and per-second kind summaries (migrations 0006 and 0007)."""
        return {"0006_event_kind_minutes", "0007_event_kind_seconds"} <= self._applied

    def event_kinds(self, where: SearchFilter) -> list[EventKind]:
        """Every kind of domain event passing ``where``, exact (:class:`~mission_memory.stores.base.EventKindIndex`).

        Read from the per-minute kind summary the triggers keep (``event_kind_minutes``): a summary row
        wholly inside the time range as kept, one straddling a bound from its events, so the cost follows
        the kinds and minutes of the window, not its events (docs/adr/0088, 0095).
        """
        try:
            if not self._summarised():  # a read-only store of an older schema: read from the records
                return sqlite_event_kinds.event_kinds_by_scan(self._conn(), where)
            return sqlite_event_kinds.event_kinds(self._conn(), where)
        except sqlite3.Error as exc:
            raise self._translate(exc) from exc

    def ids_by_source_keys(self, keys: Sequence[str]) -> dict[str, str]:
        """Record id by source key, for the keys that are stored."""
        conn = self._conn()
        out: dict[str, str] = {}
        for chunk in _chunks(list(keys)):
            marks = ",".join("?" * len(chunk))
            for rid, key in conn.execute(f"SELECT id, source_key FROM records WHERE source_key IN ({marks})", chunk):
                out[key] = rid
        return out

    def iterate(self, batch: int = 256) -> Iterator[list[Record]]:
        """All records in insertion order, in batches of at most ``batch``."""
        for rows in self._rowid_pages(f"SELECT {_RECORD_COLUMNS} FROM records WHERE", (), batch):
            yield [_row_to_record(row) for row in rows]

    def counts(self) -> dict[str, dict[str, int]]:
        """Record counts as ``{layer: {kind: n}}``."""
        out: dict[str, dict[str, int]] = {layer.value: {} for layer in Layer}
        for layer, kind, n in self._conn().execute("SELECT layer, kind, count(*) FROM records GROUP BY layer, kind"):
            out.setdefault(layer, {})[kind] = n
        return out

    def vector_models(self) -> dict[str, int]:
        """Stored vector counts by model id."""
        return dict(self._conn().execute("SELECT model_id, count(*) FROM vectors GROUP BY model_id").fetchall())

    def components(self, limit: int = 30, *, mission: str | None = None) -> dict[str, int]:
        """Record counts of the most common components (the values ``--component`` filters on) of
        ``mission``'s records (None: of every mission's)."""
        scoped, args = ("", ()) if mission is None else (" AND mission = ?", (mission,))
        rows = self._conn().execute(
            f"SELECT component, count(*) AS n FROM records WHERE component IS NOT NULL{scoped}"
            " GROUP BY component ORDER BY n DESC, component LIMIT ?",
            (*args, limit),
        ).fetchall()
        return dict(rows)

    def has_component(self, component: str, *, mission: str | None = None) -> bool:
        """Whether any record (of ``mission``; None: of any) has ``component`` (an index lookup)."""
        scoped, args = ("", ()) if mission is None else (" AND mission = ?", (mission,))
        row = self._conn().execute(
            f"SELECT 1 FROM records WHERE component = ?{scoped} LIMIT 1", (component, *args)
        ).fetchone()
        return row is not None

    def count_kind(self, mission: str, kind: str) -> int:
        """How many records of ``kind`` ``mission`` holds."""
        row = self._conn().execute("SELECT count(*) FROM records WHERE mission = ? AND kind = ?", (mission, kind)).fetchone()
        return int(row[0])

    def missions(self) -> dict[str, int]:
        """Record counts by mission."""
        return dict(self._conn().execute("SELECT mission, count(*) FROM records GROUP BY mission").fetchall())

    def mission_names(self) -> frozenset[str]:
        """The missions holding at least one record, by index seeks (one per mission) instead of
        the scan of every record that :meth:`missions` counts with (docs/adr/0049)."""
        rows = self._conn().execute(
            "WITH RECURSIVE m(name) AS (SELECT min(mission) FROM records UNION ALL"
            " SELECT (SELECT min(mission) FROM records WHERE mission > m.name) FROM m WHERE m.name IS NOT NULL)"
            " SELECT name FROM m WHERE name IS NOT NULL"
        ).fetchall()
        return frozenset(row[0] for row in rows)

    def prepare_search(self, model_id: str) -> bool:
        """Bring the vector snapshot of ``model_id`` and the BM25 index up to date now.

        Both are otherwise built by the first query that needs them (docs/adr/0048: about 7 s of
        CPU at 100k records, over a minute at 1M); ingest and ``reindex`` call this after
        writing (:class:`~mission_memory.stores.base.SearchPreparation`). Stores smaller than both
        thresholds, and read-only ones (nothing could be saved for the next process), are left
        alone.

        Returns:
            True when the derived state was brought up to date, False when nothing was done.

        Raises:
            BackendUnavailable: the database cannot be read.
        """
        if self.read_only:
            return False
        conn = self._conn()
        rows = int(conn.execute("SELECT count(*) FROM records").fetchone()[0])
        if rows < min(self.snapshot_min_rows, self.bm25_index.min_rows):
            return False
        if rows >= self.snapshot_min_rows:
            self._vectors.table(model_id)
        if rows >= self.bm25_index.min_rows:
            with _read_transaction(conn):
                self.bm25_index.view(conn, fts_totals(conn))
        return True

    # -- search -------------------------------------------------------------------------------

    def bm25_search(self, terms: Sequence[str], where: SearchFilter, limit: int) -> list[Hit]:
        """BM25 over title (weight 2) and text (weight 1); ``terms`` are OR-ed phrase tokens.

        Returns hits best first with ``score = -bm25`` (higher is better).
        """
        merged = [h for hits in self.bm25_search_by_layer(terms, where, limit).values() for h in hits]
        return sorted(merged, key=lambda h: -h.score)[:limit]

    def bm25_search_by_layer(self, terms: Sequence[str], where: SearchFilter, limit: int) -> dict[Layer, list[Hit]]:
        """The best ``limit`` BM25 hits of each layer in ``where.layers``, best first.

        One FTS5 query ranks the matching rows without touching the records table; the ranked
        rows are then checked against ``where`` in Python (the same rules as the SQL, from one
        field table). Under filters, the best ``limit × layers`` passing rows are kept (each layer
        capped at ``limit``); the ranking is read as deep as the share of records passing the
        filter suggests, so a selective filter costs one ranking, not a ranking plus a join of the
        records table on every matching row (docs/adr/0033). Terms found in more
        than :attr:`bm25_common_share` of the records are left out of the query when rarer terms
        remain (:class:`~mission_memory.stores.sqlite_fts_terms.FtsTermStats`). The ranking comes
        from the store's own index when it has one (:meth:`_bm25_ranking`, docs/adr/0048); the
        whole search reads one state of the database (one read transaction, or the caller's).
        """
        out: dict[Layer, list[Hit]] = {layer: [] for layer in where.layers}
        if not terms:
            return out
        conn = self._conn()
        with _read_transaction(conn):
            plan = self._term_stats.plan(conn, terms, self.bm25_common_share)
            ranked_from = self._bm25_ranking(conn, plan)
            return self._bm25_chosen(where, limit, ranked_from)

    def _bm25_chosen(
        self, where: SearchFilter, limit: int, ranked_from: Callable[[int, int], list[tuple[int, float]]]
    ) -> dict[Layer, list[Hit]]:
        """The best ``limit`` hits of each layer from a ranking ``ranked_from(size, offset)``
        (see :meth:`bm25_search_by_layer`)."""
        chosen: dict[Layer, list[tuple[int, float]]] = {layer: [] for layer in where.layers}
        if not where.active():
            ranked = ranked_from(limit * len(Layer), 0)
            passing = self._passing_layers(where, [r[0] for r in ranked])
            for rowid, score in ranked:
                layer = passing.get(rowid)
                if layer is not None and len(chosen[layer]) < limit:
                    chosen[layer].append((rowid, score))
            return self._bm25_hits(chosen)
        # Under filters: the best ``limit × layers`` rows that pass, each layer capped at ``limit``.
        # The ranking is read as far as the share of rows passing suggests (twice that, to be
        # safe): estimated from the vector cache when it is loaded, else observed on the way.
        wanted, seen, offset = limit * len(where.layers), 0, 0
        share = self._vectors.passing_share(where)
        size = max(4 * wanted, 800) if share is None else max(int(2 * wanted / max(share, 1e-4)), 800)
        ranked = ranked_from(size, 0)
        while ranked:
            passing = self._passing_layers(where, [r[0] for r in ranked])
            for rowid, score in ranked:
                layer = passing.get(rowid)
                if layer is None:
                    continue
                seen += 1
                if len(chosen[layer]) < limit:
                    chosen[layer].append((rowid, score))
                if seen >= wanted:
                    return self._bm25_hits(chosen)
            if len(ranked) < size:
                break
            share = share if share is not None else max(len(passing), 1) / len(ranked)
            offset += len(ranked)
            size = max(int(2 * (wanted - seen) / max(share, 1e-4)), size)
            ranked = ranked_from(size, offset)
        return self._bm25_hits(chosen)

    def _bm25_ranking(self, conn: sqlite3.Connection, plan: TermPlan) -> Callable[[int, int], list[tuple[int, float]]]:
        """``ranked(size, offset)``: ``(rowid, bm25)`` of the query's matching rows, best first.

        From the store's own inverted index (docs/adr/0048) when the store is large enough and
        every kept term is one index token; rows written after the index are ranked by FTS5
        restricted to their row ids (its scores are global there too, docs/adr/0047) and merged
        by ``(bm25, rowid)``. Otherwise FTS5 ranks the whole query (:meth:`_bm25_ranked`). Both
        give the same rows, in the same order, with the same scores.
        """
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in plan.terms)
        parts = self.bm25_split_parts if plan.postings >= self.bm25_split_postings else 1
        view = None
        if plan.terms and all(len(ts) == 1 for ts in plan.tokens):
            view = self.bm25_index.view(conn, plan.totals)
        if view is None:
            return lambda size, offset: self._bm25_ranked(match, size, offset, parts)
        score = view.scores([ts[0] for ts in plan.tokens], [d[0] for d in plan.docs], plan.totals)
        after = view.index.max_rowid

        def ranked(size: int, offset: int) -> list[tuple[int, float]]:
            rows = view.best(score, offset + size)
            if view.tail:
                rows.extend(conn.execute(
                    "SELECT rowid, bm25(records_fts, 2.0, 1.0) AS s FROM records_fts WHERE records_fts MATCH ?"
                    " AND rowid > ? ORDER BY s, rowid LIMIT ?",  # ties by row id, as the merge orders them
                    (match, after, offset + size),
                ).fetchall())
                rows.sort(key=lambda row: (row[1], row[0]))
            return rows[offset : offset + size]

        return ranked

    def _bm25_hits(self, chosen: dict[Layer, list[tuple[int, float]]]) -> dict[Layer, list[Hit]]:
        """Hits (record ids, ``score = -bm25``) of the chosen ``(rowid, bm25)`` rows of each layer."""
        ids = self._ids_of([rowid for rows in chosen.values() for rowid, _ in rows])
        return {
            layer: [Hit(record_id=ids[rowid], score=-float(score)) for rowid, score in rows if rowid in ids]
            for layer, rows in chosen.items()
        }

    def _passing_layers(self, where: SearchFilter, rowids: Sequence[int]) -> dict[int, Layer]:
        """The layer of each row among ``rowids`` that passes ``where``.

        Rows the vector cache holds are checked there (NumPy, no SQL); the others, and every row
        when no table is cached, are read from the records table (:meth:`_passing`).
        """
        known, unknown = self._vectors.passing_layers(where, rowids)
        out = {rowid: _LAYER_OF_CODE[code] for rowid, code in known.items()}
        if unknown:
            out.update({rowid: layer for rowid, (_, layer) in self._passing(where, unknown).items()})
        return out

    def _bm25_ranked(self, match: str, limit: int, offset: int, parts: int = 1) -> list[tuple[int, float]]:
        """``(rowid, bm25)`` of the rows matching ``match``, best (lowest) first, from ``offset``.

        With ``parts > 1`` the row ids are cut into that many ranges ranked at once, one in this
        thread and the others on :data:`_SPLIT_POOL`, and the best of their bests are merged
        (docs/adr/0047). FTS5 takes BM25's document frequencies and average length from the whole
        index whatever the row id range, so every score, and so the rows returned, are those of
        the one ranking; equal scores are ordered by row id.
        """
        sql = "SELECT rowid, bm25(records_fts, 2.0, 1.0) AS s FROM records_fts WHERE records_fts MATCH ?"
        if parts <= 1:
            rows: list[tuple[int, float]] = self._conn().execute(
                sql + " ORDER BY s LIMIT ? OFFSET ?", (match, limit, offset)
            ).fetchall()
            return rows
        low, high = self._conn().execute("SELECT coalesce(min(rowid), 0), coalesce(max(rowid), 0) FROM records").fetchone()
        # The outer ranges are open, so a row written meanwhile is ranked as by one query.
        edges = [-(2**63), *(low + (high + 1 - low) * i // parts for i in range(1, parts)), 2**63]

        def ranked(start: int, stop: int) -> list[tuple[int, float]]:
            part: list[tuple[int, float]] = self._conn().execute(
                sql + " AND rowid >= ? AND rowid <= ? ORDER BY s LIMIT ?", (match, start, stop - 1, offset + limit)
            ).fetchall()
            return part

        others = [_SPLIT_POOL.submit(ranked, a, b) for a, b in itertools.pairwise(edges[1:])]
        rows = ranked(edges[0], edges[1])
        for future in others:
            rows.extend(future.result())
        rows.sort(key=lambda row: (row[1], row[0]))
        return rows[offset : offset + limit]

    def phrase_search(
        self, phrases: Sequence[str], where: SearchFilter, limit: int, title_only: bool = False
    ) -> list[str]:
        """Ids of records containing any of ``phrases`` as an exact token sequence, best first.

        Used to find records a task names outright (``ADR-0005``, ``TDR-1234``); cheap because
        an FTS5 phrase query reads only the postings of its tokens.
        """
        if not phrases:
            return []
        column = "title : " if title_only else ""
        match = " OR ".join(column + '"' + p.replace('"', '""') + '"' for p in phrases)
        clauses, params = filter_sql(where, alias="r")
        rows = self._conn().execute(
            "SELECT r.id FROM records_fts JOIN records r ON r.rowid = records_fts.rowid "
            f"WHERE records_fts MATCH ? {''.join(' AND ' + c for c in clauses)} "
            "ORDER BY bm25(records_fts, 2.0, 1.0) LIMIT ?",
            (match, *params, limit),
        ).fetchall()
        return [row[0] for row in rows]

    def _passing(self, where: SearchFilter, rowids: Sequence[int]) -> dict[int, tuple[str, Layer]]:
        """``(record id, layer)`` by row id, for the rows among ``rowids`` that pass ``where``."""
        out: dict[int, tuple[str, Layer]] = {}
        conn = self._conn()
        columns = ", ".join(FILTER_COLUMNS)
        for chunk in _chunks(list(rowids)):
            marks = ",".join("?" * len(chunk))
            for rowid, rid, *values in conn.execute(
                f"SELECT rowid, id, {columns} FROM records WHERE rowid IN ({marks})", chunk
            ):
                row = row_columns(tuple(values))
                if matches(where, row):
                    out[rowid] = (rid, Layer(row["layer"]))
        return out

    def _ids_of(self, rowids: Sequence[int]) -> dict[int, str]:
        out: dict[int, str] = {}
        conn = self._conn()
        for chunk in _chunks(list(rowids)):
            marks = ",".join("?" * len(chunk))
            out.update(conn.execute(f"SELECT rowid, id FROM records WHERE rowid IN ({marks})", chunk).fetchall())
        return out

    def dense_search(
        self, query: npt.NDArray[np.float32], model_id: str, where: SearchFilter, limit: int
    ) -> list[Hit]:
        """Exact cosine similarity of ``query`` with every stored vector of ``model_id`` passing ``where``."""
        hits = self.dense_search_by_layer(query, model_id, where, limit)
        merged = sorted((h for layer_hits in hits.values() for h in layer_hits), key=lambda h: -h.score)
        return merged[:limit]

    def dense_search_by_layer(
        self, query: npt.NDArray[np.float32], model_id: str, where: SearchFilter, limit: int, per_kind: bool = False
    ) -> dict[Layer, list[Hit]]:
        """Like :meth:`dense_search`, but the best ``limit`` hits of each layer in ``where.layers``
        (with ``per_kind``, of each record kind of each layer, merged per layer best first).

        The filters and layers (or kinds) become groups of row positions of the cached vector
        table; a large table is searched with an int8 first pass and exact float32 rescoring, a
        small one exactly (:func:`~mission_memory.stores.dense_scan.best_rows`, docs/adr/0033).
        Scores are exact cosine similarities either way.
        """
        from mission_memory.stores.dense_scan import QUANTIZED_MIN_ROWS, best_rows

        table = self._vectors.table(model_id)
        out: dict[Layer, list[Hit]] = {layer: [] for layer in where.layers}
        if table.rowids.size == 0:
            return out
        base = self._vectors.filter_mask(table, where)  # the mask BM25 computed for this pull, if any
        groups: list[npt.NDArray[np.int64]] = []
        owners: list[tuple[Layer, RecordKind | None]] = []
        for layer in where.layers:
            parts: list[tuple[RecordKind | None, npt.NDArray[np.int64]]] = (
                [(kind, table.kind_rows(KIND_CODES[kind])) for kind in RecordKind if LAYER_OF_KIND[kind] is layer]
                if per_kind
                else [(None, table.layer_rows(LAYER_CODES[layer]))]
            )
            for kind, rows in parts:
                rows = rows[base[rows]] if base is not None else rows
                if rows.size:
                    groups.append(rows)
                    owners.append((layer, kind))
        threshold = QUANTIZED_MIN_ROWS if self.quantized_min_rows is None else self.quantized_min_rows
        best = best_rows(table, query, groups, limit, quantized_min_rows=threshold)
        found: dict[Layer, list[tuple[int, float, RecordKind | None]]] = {}
        for (layer, kind), (positions, scores) in zip(owners, best, strict=True):
            found.setdefault(layer, []).extend(
                (rowid, score, kind) for rowid, score in zip(table.rowids[positions].tolist(), scores.tolist(), strict=True)
            )
        ids = self._ids_of([rowid for hits in found.values() for rowid, _, _ in hits])
        for layer, hits in found.items():
            hits.sort(key=lambda h: -h[1])  # stable: equal scores keep their group's order
            out[layer] = [Hit(ids[rowid], score, kind) for rowid, score, kind in hits if rowid in ids]
        return out

    def vectors_for(self, record_ids: Sequence[str], model_id: str) -> dict[str, npt.NDArray[np.float32]]:
        """Stored unit vectors of ``model_id`` by record id."""
        import numpy as np

        table = self._vectors.table(model_id)
        if table.rowids.size == 0 or not record_ids:
            return {}
        conn = self._conn()
        rowid_of: dict[int, str] = {}
        for chunk in _chunks(list(dict.fromkeys(record_ids))):
            marks = ",".join("?" * len(chunk))
            rowid_of.update(conn.execute(f"SELECT rowid, id FROM records WHERE id IN ({marks})", chunk).fetchall())
        wanted = np.asarray(list(rowid_of), dtype=np.int64)
        pos = np.minimum(np.searchsorted(table.rowids, wanted), table.size - 1)
        held = table.rowids[pos] == wanted
        found, at = wanted[held], np.sort(pos[held])  # row ids ascend with positions
        rows = table.float_rows(at)  # one read per row in a large table (docs/adr/0049)
        return {rowid_of[rowid]: rows[i] for i, rowid in enumerate(np.sort(found).tolist())}

    # -- vectors maintenance --------------------------------------------------------------------

    def ids_without_vector(self, model_id: str, limit: int, *, mission: str | None = None) -> list[str]:
        """Ids of records (of ``mission``; None: of all) that have no vector of ``model_id`` (for reindex,
        repair and the event vector queue), oldest first."""
        if mission is not None:
            rows = self._conn().execute(
                "SELECT id FROM records WHERE mission = ? AND rowid NOT IN"
                " (SELECT record_rowid FROM vectors WHERE model_id = ?) ORDER BY rowid LIMIT ?",
                (mission, model_id, limit),
            ).fetchall()
            return [row[0] for row in rows]
        # Two ordered index scans merged (EXCEPT) instead of a vector lookup per record: 195-210 ms
        # instead of 300-350 ms at 100k records, and the event queue asks before every batch
        # (benchmarks/bench_vector_backlog.py, docs/adr/0063).
        rows = self._conn().execute(
            "SELECT id FROM records WHERE rowid IN (SELECT rowid FROM records EXCEPT"
            " SELECT record_rowid FROM vectors WHERE model_id = ? ORDER BY 1 LIMIT ?) ORDER BY rowid",
            (model_id, limit),
        ).fetchall()
        return [row[0] for row in rows]

    def delete_vectors_not_of(self, model_id: str) -> int:
        """Delete every vector made by a model other than ``model_id``; return how many."""
        with self._write() as tx:
            return tx.execute("DELETE FROM vectors WHERE model_id != ?", (model_id,)).rowcount

    def put_vectors(self, record_ids: Sequence[str], vectors: npt.NDArray[np.float32], model_id: str) -> None:
        """Store vectors of ``model_id`` for stored records (records deleted meanwhile are skipped).

        Raises:
            InputError: ``vectors`` does not have one row per record id (nothing is written).
        """
        import numpy as np

        check_vector_rows(len(record_ids), vectors)
        with self._write() as tx:
            # Rows below the highest vector row id change: make every cached table reload.
            tx.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_deletions'")
            for rid, vec in zip(record_ids, vectors, strict=True):
                row = tx.execute("SELECT rowid FROM records WHERE id = ?", (rid,)).fetchone()
                if row is None:
                    continue
                tx.execute("DELETE FROM vectors WHERE record_rowid = ?", (row[0],))
                tx.execute(
                    "INSERT INTO vectors (record_rowid, model_id, dim, vector) VALUES (?, ?, ?, ?)",
                    (row[0], model_id, int(vec.shape[0]), np.ascontiguousarray(vec, dtype=np.float32).tobytes()),
                )

    # -- retrieval events and state ------------------------------------------------------------

    def log_retrieval_event(self, event: NewRetrievalEvent) -> RetrievalEvent:
        """Store one retrieval event (docs/design.md §4), giving it an id and the current time."""
        stored = RetrievalEvent(**event.model_dump(), id=uuid.uuid4().hex, time=datetime.now(UTC))
        with self._write() as tx:
            tx.execute(
                f"INSERT INTO retrieval_events ({', '.join(_EVENT_COLUMNS)}) VALUES ({','.join('?' * len(_EVENT_COLUMNS))})",
                _event_row(stored),
            )
        return stored

    def retrieval_events(self, limit: int = 100) -> list[RetrievalEvent]:
        """The latest retrieval events, newest first (events from before schema v2 have no origin)."""
        return self._select_events("1", [], limit)

    def _select_events(self, where: str, params: Sequence[Any], limit: int) -> list[RetrievalEvent]:
        columns = [c if c in _EVENT_COLUMNS_V1 or "0002_retrieval_event_origin" in self._applied else f"NULL AS {c}"
                   for c in _EVENT_COLUMNS]
        rows = self._conn().execute(
            f"SELECT {', '.join(columns)} FROM retrieval_events WHERE {where} ORDER BY seq DESC LIMIT ?",
            (*params, max(0, limit)),
        ).fetchall()
        return [RetrievalEvent.from_table_row(_EVENT_COLUMNS, row) for row in rows]

    def retrieval_events_matching(
        self,
        *,
        session_id: str | None = None,
        operator: str | None = None,
        mission: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
    ) -> list[RetrievalEvent]:
        """Events matching every given field, newest first (see :meth:`RetrievalEventLog.retrieval_events_matching`)."""
        clauses: list[str] = []
        params: list[Any] = []
        origin = "0002_retrieval_event_origin" in self._applied
        for column, value in (("session_id", session_id), ("operator", operator), ("mission", mission)):
            if value is not None:
                if not origin:
                    return []
                clauses.append(f"{column} = ?")
                params.append(value)
        _add_time_window(clauses, params, since, until)
        return self._select_events(" AND ".join(clauses) or "1", params, limit)

    def count_retrieval_events(self) -> int:
        """How many retrieval events are stored."""
        return int(self._conn().execute("SELECT count(*) FROM retrieval_events").fetchone()[0])

    def put_retrieval_events(self, events: Sequence[RetrievalEvent]) -> int:
        """Store events as they are, in the order given, skipping stored ids; return how many were new."""
        added = 0
        marks = ",".join("?" * len(_EVENT_COLUMNS))
        with self._write() as tx:
            for stored in events:
                added += tx.execute(
                    f"INSERT OR IGNORE INTO retrieval_events ({', '.join(_EVENT_COLUMNS)}) VALUES ({marks})",
                    _event_row(stored),
                ).rowcount
        return added

    def get_state(self, mission: str, key: str) -> str | None:
        """An ingest bookmark of ``mission``, or None."""
        row = self._conn().execute(
            "SELECT value FROM ingest_state WHERE mission = ? AND key = ?", (mission, key)
        ).fetchone()
        return None if row is None else str(row[0])

    def set_state(self, mission: str, key: str, value: str) -> None:
        """Set an ingest bookmark of ``mission`` (the value redacted first: :func:`redacted_state_value`)."""
        value = redacted_state_value(value)  # the last guard: no secret reaches disk (docs/adr/0053)
        with self._write() as tx:
            tx.execute(
                "INSERT INTO ingest_state (mission, key, value) VALUES (?, ?, ?)"
                " ON CONFLICT (mission, key) DO UPDATE SET value = excluded.value",
                (mission, key, value),
            )

    def replace_state(self, mission: str, key: str, expected: str | None, value: str) -> bool:
        """Set ``key`` of ``mission`` to ``value`` if it holds ``expected`` (None: absent), read and written
        in one ``BEGIN IMMEDIATE`` transaction (no other process between); True when set."""
        value = redacted_state_value(value)  # the last guard: no secret reaches disk (docs/adr/0053)
        with self._write() as tx:
            row = tx.execute("SELECT value FROM ingest_state WHERE mission = ? AND key = ?", (mission, key)).fetchone()
            if (None if row is None else str(row[0])) != expected:
                return False
            tx.execute(
                "INSERT INTO ingest_state (mission, key, value) VALUES (?, ?, ?)"
                " ON CONFLICT (mission, key) DO UPDATE SET value = excluded.value",
                (mission, key, value),
            )
        return True

    def state_items(self, mission: str | None = None) -> list[tuple[str, str, str]]:
        """Every ``(mission, key, value)``, of ``mission`` only when given, sorted."""
        where, params = ("WHERE mission = ?", (mission,)) if mission is not None else ("", ())
        rows = self._conn().execute(
            f"SELECT mission, key, value FROM ingest_state {where} ORDER BY mission, key", params
        ).fetchall()
        return [(str(m), str(k), str(v)) for m, k, v in rows]

    def integrity_check(self) -> str:
        """Result of ``PRAGMA integrity_check`` (``ok`` when sound)."""
        return str(self._conn().execute("PRAGMA integrity_check").fetchone()[0])

    def ensure_sound(self) -> None:
        """Run ``PRAGMA quick_check`` now (not only once per file version, as opening does); raise
        :class:`~mission_memory.errors.StoreDamaged` when the file is damaged.

        Ingest calls it first, so that writing into a damaged file is refused, not reported as success.
        """
        conn = self._conn()
        result = "\n".join(str(row[0]) for row in conn.execute("PRAGMA quick_check(20)"))
        if result != "ok":
            raise StoreDamaged(damage_message(self.path, f"quick_check: {result[:300]}", conn))


@contextmanager
def _read_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """One read transaction on ``conn`` (WAL: one state of the database for every statement in
    it), unless ``conn`` is in a transaction already."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")


def _event_row(stored: RetrievalEvent) -> tuple[Any, ...]:
    """The ``retrieval_events`` row of an event, in :data:`_EVENT_COLUMNS` order."""
    return (
        stored.id, stored.time.timestamp(), stored.query, stored.scope,
        json.dumps(stored.filters, ensure_ascii=False, default=str), stored.token_budget,
        stored.tokens_used, json.dumps(list(stored.record_ids)), json.dumps(list(stored.scores)),
        stored.omitted, stored.duration_ms, stored.model_id, stored.session_id, stored.operator,
        stored.mission, stored.client.value if stored.client is not None else None,
    )


def _shadow_missing_columns(conn: sqlite3.Connection) -> None:
    """On a read-only store of an older schema, a temporary view adds the derived filter columns the
    file lacks (``event_type``, migration 0004_operations_event_type), so filters still read them."""
    columns = {row[1] for row in conn.execute("PRAGMA main.table_info(records)")}
    if columns and "event_type" not in columns:
        conn.execute(
            "CREATE TEMP VIEW IF NOT EXISTS records AS"
            " SELECT rowid AS rowid, *, json_extract(attributes, '$.event_type') AS event_type FROM main.records"
        )


def _is_read_only(path: Path) -> bool:
    """True when ``path`` exists but this user cannot write it or its folder (an archived mission,
    a mounted backup, a shared store). A WAL database then needs a read-only open mode."""
    return path.exists() and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))


def _read_only_uri(path: Path) -> str:
    """The SQLite URI that reads ``path`` without writing anything next to it.

    With a ``-wal`` file holding transactions (a writer crashed or is still running) and its
    ``-shm`` index present, ``mode=ro`` reads both, so nothing committed is missed. Without them
    (a clean close checkpoints and removes both), SQLite cannot create the ``-shm`` file in a
    read-only folder, so the file is opened ``immutable=1``: read as it is, with no locking.
    """
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    quoted = urllib.parse.quote(str(path.resolve()))
    if wal.exists() and wal.stat().st_size > 0 and shm.exists():
        return f"file:{quoted}?mode=ro"
    return f"file:{quoted}?immutable=1"


def count_stored_rows(path: Path, table: str = "records") -> int:
    """How many rows ``table`` of the SQLite file ``path`` holds, read without opening a store (nothing
    is migrated, created or written beside it); 0 when it is missing, unreadable or has no such table.

    For messages about a store that is not the one open (a data dir whose backend was switched): this
    store's ``records``, or the ``points`` of a Qdrant local-mode collection (a SQLite file too).
    """
    try:
        if not path.is_file():
            return 0
        conn = sqlite3.connect(_read_only_uri(path), uri=True, timeout=1.0)
    except (OSError, sqlite3.Error):
        return 0
    try:
        return int(conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0])
    except sqlite3.Error:
        return 0
    finally:
        conn.close()


def _row_to_record(row: Sequence[Any]) -> Record:
    (_, rid, source_key, mission, layer, kind, title, text, source_kind, ref, uri, when, commit, criticality,
     access_level, component, operator, attributes) = row
    return Record(
        id=rid,
        source_key=source_key,
        layer=layer,
        kind=kind,
        title=title,
        text=text,
        provenance=Provenance(
            kind=source_kind, ref=ref, uri=uri, mission=mission,
            time=datetime.fromtimestamp(when, tz=UTC), commit=commit,
        ),
        criticality=criticality,
        access_level=access_level,
        component=component,
        operator=operator,
        attributes=json.loads(attributes),
    )


def _chunks(items: list[Any]) -> Iterator[list[Any]]:
    """``items`` in slices small enough for one SQL ``IN (...)``."""
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


def _conforms(store: SqliteStore) -> MemoryStore:
    """Never called: lets the type checker prove that SqliteStore satisfies :class:`MemoryStore`."""
    return store
