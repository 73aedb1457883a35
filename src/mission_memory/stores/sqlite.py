"""The embedded store: one SQLite file in WAL mode holding records, BM25, vectors and events.

Everything a memory holds lives in ``<data dir>/memory.db``:

* ``records`` — one row per :class:`~mission_memory.records.Record`, unique by id and by source key;
* ``records_fts`` — an FTS5 index (external content, kept in sync by triggers) for BM25;
* ``vectors`` — one float32 vector per record, tagged with the id of the model that made it;
* ``retrieval_events`` — every pull query: query, scope, filters, returned ids and scores, tokens;
* ``ingest_state`` — per-mission bookmarks (the last ingested commit) for incremental ingest.

Vector search is exact cosine similarity in NumPy over a per-process matrix cache, refreshed when
another process has written (a deletion counter and the highest vector row id tell which; new rows
are appended, a deletion reloads). It needs no SQLite extension, so it works on Python builds that
cannot load one.

Several processes share one file: WAL lets readers run beside one writer, writes take the lock up
front (``BEGIN IMMEDIATE``) and wait ``busy_timeout``, and a still-busy write is retried, so
"database is locked" does not reach a user. Each write is one transaction: a killed process leaves
the last committed state.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from mission_memory.errors import BackendUnavailable
from mission_memory.records import Layer, Provenance, Record, RecordKind
from mission_memory.stores.base import Hit, RecordStore, SearchFilter, UpsertOutcome, VectorIndex
from mission_memory.stores.vector_table import VectorTable
from mission_memory.utc import as_utc

__all__ = ["SCHEMA_VERSION", "SqliteStore"]

T = TypeVar("T")

_BUSY_TIMEOUT_MS = 30_000
_WRITE_RETRY_SECONDS = 120.0

# Named migrations, applied in order and recorded in the ``migrations`` table.
_MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_initial",
        """
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS records (
            rowid INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            source_key TEXT NOT NULL UNIQUE,
            mission TEXT NOT NULL,
            layer TEXT NOT NULL,
            kind TEXT NOT NULL,
            title TEXT NOT NULL,
            text TEXT NOT NULL,
            source_kind TEXT NOT NULL,
            ref TEXT NOT NULL,
            uri TEXT NOT NULL,
            time REAL NOT NULL,
            source_commit TEXT,
            criticality REAL NOT NULL,
            access_level TEXT NOT NULL,
            component TEXT,
            operator TEXT,
            mission_type TEXT,
            outcome TEXT,
            attributes TEXT NOT NULL,
            ingested_at REAL NOT NULL
        );
        CREATE INDEX IF NOT EXISTS records_mission_kind ON records (mission, kind);
        CREATE INDEX IF NOT EXISTS records_layer ON records (layer);
        CREATE VIRTUAL TABLE IF NOT EXISTS records_fts USING fts5(
            title, text, content='records', content_rowid='rowid',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER IF NOT EXISTS records_ai AFTER INSERT ON records BEGIN
            INSERT INTO records_fts (rowid, title, text) VALUES (new.rowid, new.title, new.text);
        END;
        CREATE TRIGGER IF NOT EXISTS records_ad AFTER DELETE ON records BEGIN
            INSERT INTO records_fts (records_fts, rowid, title, text)
                VALUES ('delete', old.rowid, old.title, old.text);
            DELETE FROM vectors WHERE record_rowid = old.rowid;
        END;
        CREATE TABLE IF NOT EXISTS vectors (
            record_rowid INTEGER PRIMARY KEY,
            model_id TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL
        );
        CREATE INDEX IF NOT EXISTS vectors_model ON vectors (model_id, record_rowid);
        CREATE TRIGGER IF NOT EXISTS vectors_ad AFTER DELETE ON vectors BEGIN
            UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_deletions';
        END;
        CREATE TABLE IF NOT EXISTS retrieval_events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            time REAL NOT NULL,
            query TEXT NOT NULL,
            scope TEXT NOT NULL,
            filters TEXT NOT NULL,
            token_budget INTEGER NOT NULL,
            tokens_used INTEGER NOT NULL,
            record_ids TEXT NOT NULL,
            scores TEXT NOT NULL,
            omitted INTEGER NOT NULL,
            duration_ms REAL NOT NULL,
            model_id TEXT NOT NULL
        );
        CREATE TABLE IF NOT EXISTS ingest_state (
            mission TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
            PRIMARY KEY (mission, key)
        );
        INSERT OR IGNORE INTO meta (key, value) VALUES ('vector_deletions', '0');
        """,
    ),
]
SCHEMA_VERSION = len(_MIGRATIONS)

_RECORD_COLUMNS = (
    "rowid, id, source_key, mission, layer, kind, title, text, source_kind, ref, uri, time, "
    "source_commit, criticality, access_level, component, operator, attributes"
)


_LAYER_CODES = {layer: i for i, layer in enumerate(Layer)}
_LAYER_NAMES = {layer.value: i for i, layer in enumerate(Layer)}
_SNAPSHOT_MIN_ROWS = 2000


def _ts(moment: datetime) -> float:
    return as_utc(moment).timestamp()


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
            continue  # iter_records translates inside
        setattr(cls, name, wrap(member))
    return cls


@_translating
class SqliteStore:
    """Records, FTS5 BM25, exact NumPy vector search and retrieval events in one SQLite file.

    Implements :class:`~mission_memory.stores.base.RecordStore` and
    :class:`~mission_memory.stores.base.VectorIndex`. Safe to use from several threads (one
    connection per thread) and several processes (WAL, immediate write locks, retries).

    Args:
        path: the database file; its folder is created if missing.
        snapshot_min_rows: vector tables of at least this many rows are also kept as a snapshot
            file (``<stem>.vectors/``) so that a new process does not read them row by row.

    Raises:
        BackendUnavailable: the file cannot be opened or is not a mission-memory database.
    """

    def __init__(self, path: Path, snapshot_min_rows: int = _SNAPSHOT_MIN_ROWS) -> None:
        self.path = path
        self.snapshot_min_rows = snapshot_min_rows
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._conn_lock = threading.Lock()
        self._cache_lock = threading.Lock()
        self._cache: VectorTable | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BackendUnavailable(f"cannot create data dir {path.parent}: {exc}") from exc
        self._migrate()

    # -- connections and transactions -------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                       check_same_thread=False)
                conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
                self._retry(lambda: conn.execute("PRAGMA journal_mode = WAL"))
                conn.execute("PRAGMA synchronous = NORMAL")
                conn.execute("PRAGMA foreign_keys = ON")
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

    def _translate(self, exc: sqlite3.Error) -> BackendUnavailable:
        """The package error for a SQLite failure, with what the user can do about it."""
        message = str(exc).lower()
        if "readonly" in message or "read-only" in message:
            return BackendUnavailable(f"data dir {self.path.parent} is not writable ({exc})")
        if "malformed" in message or "not a database" in message or "corrupt" in message:
            return BackendUnavailable(
                f"store {self.path} is damaged ({exc}); it is derived data: move it aside and re-ingest"
            )
        if "unable to open" in message:
            return BackendUnavailable(f"cannot open store {self.path} ({exc}); is {self.path.parent} writable?")
        return BackendUnavailable(f"store {self.path} failed: {exc}")

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, lock taken up front; rolled back on any error."""
        conn = self._conn()
        self._retry(lambda: conn.execute("BEGIN IMMEDIATE"))
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            self._retry(lambda: conn.execute("COMMIT"))

    def _migrate(self) -> None:
        try:
            conn = self._conn()
            applied = _applied_migrations(conn)
            if applied is not None and all(name in applied for name, _ in _MIGRATIONS):
                return  # nothing to write: a read-only data dir can still be read
            with self._write() as tx:
                tx.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at REAL)")
                done = {row[0] for row in tx.execute("SELECT name FROM migrations")}
                for name, sql in _MIGRATIONS:
                    if name in done:
                        continue
                    for statement in _split_sql(sql):
                        tx.execute(statement)
                    tx.execute("INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (name, time.time()))
            conn.execute("SELECT count(*) FROM records").fetchone()
        except BackendUnavailable:
            raise
        except sqlite3.DatabaseError as exc:
            raise BackendUnavailable(f"{self.path} is not a usable mission-memory store: {exc}") from exc

    def close(self) -> None:
        """Close every connection this object opened."""
        with self._conn_lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()

    # -- records ------------------------------------------------------------------------------

    def known_ids(self, ids: Iterable[str]) -> set[str]:
        """Which of ``ids`` are stored already."""
        wanted = list(dict.fromkeys(ids))
        found: set[str] = set()
        conn = self._conn()
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(row[0] for row in conn.execute(f"SELECT id FROM records WHERE id IN ({marks})", chunk))
        return found

    def upsert(
        self, records: Sequence[Record], vectors: npt.NDArray[np.float32] | None, model_id: str
    ) -> UpsertOutcome:
        """Store ``records`` with their row-aligned ``vectors`` in one transaction.

        A record whose id is stored is unchanged; one whose source key holds another id replaces
        that record (and its vector); otherwise it is added.

        Args:
            records: the records.
            vectors: shape ``(len(records), dim)`` float32 unit vectors, or None to store none.
            model_id: id of the model that made ``vectors``.
        """
        outcome = UpsertOutcome()
        now = time.time()
        with self._write() as tx:
            for i, record in enumerate(records):
                if tx.execute("SELECT 1 FROM records WHERE id = ?", (record.id,)).fetchone():
                    outcome.unchanged.append(record.id)
                    continue
                old = tx.execute("SELECT rowid FROM records WHERE source_key = ?", (record.source_key,)).fetchone()
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

    def delete_missing(self, mission: str, kinds: Sequence[str], keep_source_keys: Iterable[str]) -> int:
        """Delete records of ``mission`` and ``kinds`` whose source key is not in ``keep_source_keys``.

        Used after a full pass over a mission's files: a deleted document or a renamed heading
        leaves no stale record behind. Returns how many records were deleted.
        """
        keep = set(keep_source_keys)
        marks = ",".join("?" * len(kinds))
        with self._write() as tx:
            rows = tx.execute(
                f"SELECT rowid, source_key FROM records WHERE mission = ? AND kind IN ({marks})", (mission, *kinds)
            ).fetchall()
            stale = [rowid for rowid, key in rows if key not in keep]
            for rowid in stale:
                tx.execute("DELETE FROM records WHERE rowid = ?", (rowid,))
        return len(stale)

    def get_records(self, rowids: Sequence[int]) -> dict[int, Record]:
        """Records by row id (missing ids are absent from the result)."""
        out: dict[int, Record] = {}
        conn = self._conn()
        ids = list(dict.fromkeys(rowids))
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for row in conn.execute(f"SELECT {_RECORD_COLUMNS} FROM records WHERE rowid IN ({marks})", chunk):
                out[row[0]] = _row_to_record(row)
        return out

    def kinds_of(self, rowids: Sequence[int]) -> dict[int, tuple[RecordKind, bool]]:
        """``(kind, bare_merge)`` by row id, read without building the records.

        ``bare_merge`` is true for a merge commit whose message has no body.
        """
        out: dict[int, tuple[RecordKind, bool]] = {}
        conn = self._conn()
        ids = list(dict.fromkeys(rowids))
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for rowid, kind, merge, has_body in conn.execute(
                "SELECT rowid, kind, json_extract(attributes, '$.merge'), json_extract(attributes, '$.has_body')"
                f" FROM records WHERE rowid IN ({marks})",
                chunk,
            ):
                out[rowid] = (RecordKind(kind), bool(merge) and has_body == 0)
        return out

    def records_by_source_keys(self, keys: Sequence[str]) -> dict[str, int]:
        """Row ids by source key, for the keys that are stored."""
        conn = self._conn()
        out: dict[str, int] = {}
        for start in range(0, len(keys), 500):
            chunk = list(keys[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for rowid, key in conn.execute(f"SELECT rowid, source_key FROM records WHERE source_key IN ({marks})", chunk):
                out[key] = rowid
        return out

    def iter_records(self, batch: int = 256) -> Iterator[list[tuple[int, Record]]]:
        """All records in row-id order, in batches of ``(rowid, record)``."""
        conn = self._conn()
        last = 0
        while True:
            try:
                rows = conn.execute(
                    f"SELECT {_RECORD_COLUMNS} FROM records WHERE rowid > ? ORDER BY rowid LIMIT ?", (last, batch)
                ).fetchall()
            except sqlite3.Error as exc:
                raise self._translate(exc) from exc
            if not rows:
                return
            last = rows[-1][0]
            yield [(row[0], _row_to_record(row)) for row in rows]

    def counts(self) -> dict[str, dict[str, int]]:
        """Record counts as ``{layer: {kind: n}}``."""
        out: dict[str, dict[str, int]] = {layer.value: {} for layer in Layer}
        for layer, kind, n in self._conn().execute("SELECT layer, kind, count(*) FROM records GROUP BY layer, kind"):
            out.setdefault(layer, {})[kind] = n
        return out

    def vector_models(self) -> dict[str, int]:
        """Stored vector counts by model id."""
        return dict(self._conn().execute("SELECT model_id, count(*) FROM vectors GROUP BY model_id").fetchall())

    def components(self, limit: int = 30) -> dict[str, int]:
        """Record counts of the most common components (the values ``--component`` filters on)."""
        rows = self._conn().execute(
            "SELECT component, count(*) AS n FROM records WHERE component IS NOT NULL"
            " GROUP BY component ORDER BY n DESC, component LIMIT ?",
            (limit,),
        ).fetchall()
        return dict(rows)

    def count_kind(self, mission: str, kind: str) -> int:
        """How many records of ``kind`` ``mission`` holds."""
        row = self._conn().execute("SELECT count(*) FROM records WHERE mission = ? AND kind = ?", (mission, kind)).fetchone()
        return int(row[0])

    def missions(self) -> dict[str, int]:
        """Record counts by mission."""
        return dict(self._conn().execute("SELECT mission, count(*) FROM records GROUP BY mission").fetchall())

    # -- search -------------------------------------------------------------------------------

    def bm25_search(self, terms: Sequence[str], where: SearchFilter, limit: int) -> list[Hit]:
        """BM25 over title (weight 2) and text (weight 1); ``terms`` are OR-ed phrase tokens.

        Returns hits best first with ``score = -bm25`` (higher is better).
        """
        merged = [h for hits in self.bm25_search_by_layer(terms, where, limit).values() for h in hits]
        return sorted(merged, key=lambda h: -h.score)[:limit]

    def bm25_search_by_layer(self, terms: Sequence[str], where: SearchFilter, limit: int) -> dict[Layer, list[Hit]]:
        """The best ``limit`` BM25 hits of each layer in ``where.layers``, best first.

        With no restriction but the layers, one FTS5 query ranks all records without touching the
        records table, and the best ``limit × layers`` hits are split by layer (most of the cost
        of a join is paid per matching row, which is most rows for common words). With structured
        filters, the query joins the records table so that a selective filter still finds its
        rows.
        """
        out: dict[Layer, list[Hit]] = {layer: [] for layer in where.layers}
        if not terms:
            return out
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        conn = self._conn()
        unrestricted = replace(where, layers=tuple(Layer)) == SearchFilter(layers=tuple(Layer))
        if unrestricted:
            rows = conn.execute(
                "SELECT rowid, bm25(records_fts, 2.0, 1.0) AS s FROM records_fts WHERE records_fts MATCH ?"
                " ORDER BY s LIMIT ?",
                (match, limit * len(Layer)),
            ).fetchall()
            layers = self._layers_of([r[0] for r in rows])
            for rowid, score in rows:
                layer = layers.get(rowid)
                if layer in out and len(out[layer]) < limit:
                    out[layer].append(Hit(rowid=rowid, score=-float(score)))
            return out
        # Filtered: rank without the join, then filter the best rows in Python; only when the
        # filter is so selective that too few of them pass, pay the join on every matching row.
        cap = max(limit * len(where.layers) * 4, 800)
        ranked = conn.execute(
            "SELECT rowid, bm25(records_fts, 2.0, 1.0) AS s FROM records_fts WHERE records_fts MATCH ?"
            " ORDER BY s LIMIT ?",
            (match, cap),
        ).fetchall()
        passing = self._passing(where, [r[0] for r in ranked])
        for rowid, score in ranked:
            layer = passing.get(rowid)
            if layer is not None and len(out[layer]) < limit:
                out[layer].append(Hit(rowid=rowid, score=-float(score)))
        if len(ranked) < cap or sum(len(hits) for hits in out.values()) >= limit:
            return out
        out = {layer: [] for layer in where.layers}
        clauses, params = _filter_sql(where, alias="r")
        rows = conn.execute(
            "SELECT r.rowid, bm25(records_fts, 2.0, 1.0) AS s, r.layer FROM records_fts "
            "JOIN records r ON r.rowid = records_fts.rowid "
            f"WHERE records_fts MATCH ? {''.join(' AND ' + c for c in clauses)} ORDER BY s LIMIT ?",
            (match, *params, limit * len(where.layers)),
        ).fetchall()
        for rowid, score, layer_name in rows:
            layer = Layer(layer_name)
            if len(out[layer]) < limit:
                out[layer].append(Hit(rowid=rowid, score=-float(score)))
        return out

    def phrase_search(self, phrases: Sequence[str], where: SearchFilter, limit: int, title_only: bool = False) -> list[int]:
        """Row ids of records containing any of ``phrases`` as an exact token sequence, best first.

        Used to find records a task names outright (``ADR-0005``, ``TDR-1234``); cheap because
        an FTS5 phrase query reads only the postings of its tokens.
        """
        if not phrases:
            return []
        column = "title : " if title_only else ""
        match = " OR ".join(column + '"' + p.replace('"', '""') + '"' for p in phrases)
        clauses, params = _filter_sql(where, alias="r")
        rows = self._conn().execute(
            "SELECT r.rowid FROM records_fts JOIN records r ON r.rowid = records_fts.rowid "
            f"WHERE records_fts MATCH ? {''.join(' AND ' + c for c in clauses)} "
            "ORDER BY bm25(records_fts, 2.0, 1.0) LIMIT ?",
            (match, *params, limit),
        ).fetchall()
        return [row[0] for row in rows]

    def _passing(self, where: SearchFilter, rowids: Sequence[int]) -> dict[int, Layer]:
        """Layer by row id, for the rows among ``rowids`` that pass ``where`` (same rules as the SQL)."""
        out: dict[int, Layer] = {}
        conn = self._conn()
        since = _ts(where.since) if where.since is not None else None
        until = _ts(where.until) if where.until is not None else None
        layers = {layer.value for layer in where.layers}
        for start in range(0, len(rowids), 500):
            chunk = list(rowids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for rowid, layer, mission, component, criticality, moment, mission_type, outcome in conn.execute(
                "SELECT rowid, layer, mission, component, criticality, time, mission_type, outcome"
                f" FROM records WHERE rowid IN ({marks})",
                chunk,
            ):
                if (
                    layer in layers
                    and (where.mission is None or mission == where.mission)
                    and (where.component is None or component == where.component)
                    and (where.min_criticality is None or criticality >= where.min_criticality)
                    and (since is None or moment >= since)
                    and (until is None or moment <= until)
                    and (where.mission_type is None or mission_type in (None, where.mission_type))
                    and (where.outcome is None or layer != Layer.PRACTITIONER.value or outcome == where.outcome)
                ):
                    out[rowid] = Layer(layer)
        return out

    def _layers_of(self, rowids: Sequence[int]) -> dict[int, Layer]:
        out: dict[int, Layer] = {}
        conn = self._conn()
        for start in range(0, len(rowids), 500):
            chunk = list(rowids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for rowid, layer in conn.execute(f"SELECT rowid, layer FROM records WHERE rowid IN ({marks})", chunk):
                out[rowid] = Layer(layer)
        return out

    def dense_search(
        self, query: npt.NDArray[np.float32], model_id: str, where: SearchFilter, limit: int
    ) -> list[Hit]:
        """Exact cosine similarity of ``query`` with every stored vector of ``model_id`` passing ``where``."""
        hits = self.dense_search_by_layer(query, model_id, where, limit)
        merged = sorted((h for layer_hits in hits.values() for h in layer_hits), key=lambda h: -h.score)
        return merged[:limit]

    def dense_search_by_layer(
        self, query: npt.NDArray[np.float32], model_id: str, where: SearchFilter, limit: int
    ) -> dict[Layer, list[Hit]]:
        """Like :meth:`dense_search`, but the best ``limit`` hits of each layer in ``where.layers``.

        One matrix-vector product scores every vector (about 7 ms over 100k × 384 here); the
        filters and layers are then applied as boolean masks on the scores, so no vector is copied.
        """
        cache = self._vector_cache(model_id)
        out: dict[Layer, list[Hit]] = {layer: [] for layer in where.layers}
        if cache.rowids.size == 0:
            return out
        scores = cache.matrix @ np.asarray(query, dtype=np.float32)
        base = _filter_mask(cache, where)
        for layer in where.layers:
            mask = cache.layer == _LAYER_CODES[layer]
            if base is not None:
                mask &= base
            idx = np.flatnonzero(mask)
            if idx.size == 0:
                continue
            layer_scores = scores[idx]
            k = min(limit, idx.size)
            top = np.argpartition(-layer_scores, k - 1)[:k]
            top = top[np.argsort(-layer_scores[top])]
            out[layer] = [Hit(rowid=int(cache.rowids[idx[i]]), score=float(layer_scores[i])) for i in top]
        return out

    def vectors_for(self, rowids: Sequence[int], model_id: str) -> dict[int, npt.NDArray[np.float32]]:
        """Stored unit vectors of ``model_id`` by row id."""
        cache = self._vector_cache(model_id)
        if cache.rowids.size == 0:
            return {}
        wanted = np.asarray(list(rowids), dtype=np.int64)
        pos = np.searchsorted(cache.rowids, wanted)
        out: dict[int, npt.NDArray[np.float32]] = {}
        for rid, p in zip(wanted.tolist(), pos.tolist(), strict=True):
            if p < cache.rowids.size and cache.rowids[p] == rid:
                out[rid] = cache.matrix[p]
        return out

    def _vector_cache(self, model_id: str) -> VectorTable:
        """The vector table of ``model_id``, current with the database.

        Order of preference: this process's table (when nothing changed), the table plus rows
        written since, the snapshot file plus rows written since, a full read from SQLite (which
        then refreshes the snapshot).
        """
        conn = self._conn()
        deletions = int(conn.execute("SELECT value FROM meta WHERE key = 'vector_deletions'").fetchone()[0])
        max_row = conn.execute("SELECT max(record_rowid) FROM vectors WHERE model_id = ?", (model_id,)).fetchone()[0]
        max_rowid = int(max_row or 0)
        with self._cache_lock:
            cache = self._cache
            if cache is None or cache.model_id != model_id or cache.deletions != deletions:
                cache = VectorTable.load(self._snapshot_path(model_id))
            if (
                cache is None
                or cache.model_id != model_id
                or cache.deletions != deletions
                or cache.max_rowid > max_rowid
            ):
                cache = self._read_vectors(model_id, deletions, after=0)
                if cache.size >= self.snapshot_min_rows:
                    self._save_snapshot(cache)
            elif cache.max_rowid < max_rowid:
                more = self._read_vectors(model_id, deletions, after=cache.max_rowid)
                cache = cache.extended(more)
                if more.size >= max(self.snapshot_min_rows, cache.size // 10):
                    self._save_snapshot(cache)
            self._cache = cache
            return cache

    def _snapshot_path(self, model_id: str) -> Path:
        return VectorTable.snapshot_path(self.path.parent / f"{self.path.stem}.vectors", model_id)

    def _save_snapshot(self, table: VectorTable) -> None:
        # The snapshot only saves time; a read-only data dir still answers queries.
        with contextlib.suppress(OSError):
            table.save(self._snapshot_path(table.model_id))

    def _read_vectors(self, model_id: str, deletions: int, after: int) -> VectorTable:
        rows = self._conn().execute(
            "SELECT v.record_rowid, v.vector, r.layer, r.criticality, r.time, r.mission, r.component,"
            " r.mission_type, r.outcome, v.dim FROM vectors v JOIN records r ON r.rowid = v.record_rowid"
            " WHERE v.model_id = ? AND v.record_rowid > ? ORDER BY v.record_rowid",
            (model_id, after),
        ).fetchall()
        dims = {row[9] for row in rows}
        if len(dims) > 1:
            raise BackendUnavailable(f"store {self.path} mixes vector sizes for model {model_id}; run reindex")
        dim = dims.pop() if dims else (self._cache.matrix.shape[1] if self._cache is not None else 0)
        return VectorTable.from_rows(model_id, deletions, after, dim, rows, _LAYER_NAMES)

    # -- vectors maintenance --------------------------------------------------------------------

    def rowids_without_vector(self, model_id: str, limit: int) -> list[int]:
        """Row ids of records that have no vector of ``model_id`` (for reindex and repair)."""
        rows = self._conn().execute(
            "SELECT r.rowid FROM records r LEFT JOIN vectors v ON v.record_rowid = r.rowid AND v.model_id = ?"
            " WHERE v.record_rowid IS NULL ORDER BY r.rowid LIMIT ?",
            (model_id, limit),
        ).fetchall()
        return [row[0] for row in rows]

    def delete_vectors_not_of(self, model_id: str) -> int:
        """Delete every vector made by a model other than ``model_id``; return how many."""
        with self._write() as tx:
            return tx.execute("DELETE FROM vectors WHERE model_id != ?", (model_id,)).rowcount

    def put_vectors(self, rowids: Sequence[int], vectors: npt.NDArray[np.float32], model_id: str) -> None:
        """Store vectors of ``model_id`` for existing records (records deleted meanwhile are skipped)."""
        with self._write() as tx:
            # Rows below the highest vector row id change: make every cached table reload.
            tx.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_deletions'")
            for rowid, vec in zip(rowids, vectors, strict=True):
                if tx.execute("SELECT 1 FROM records WHERE rowid = ?", (rowid,)).fetchone() is None:
                    continue
                tx.execute("DELETE FROM vectors WHERE record_rowid = ?", (rowid,))
                tx.execute(
                    "INSERT INTO vectors (record_rowid, model_id, dim, vector) VALUES (?, ?, ?, ?)",
                    (rowid, model_id, int(vec.shape[0]), np.ascontiguousarray(vec, dtype=np.float32).tobytes()),
                )

    # -- retrieval events and ingest state -----------------------------------------------------

    def log_retrieval_event(self, event: dict[str, Any]) -> str:
        """Store one retrieval event (DESIGN.md §4); return its id.

        ``event`` holds ``query``, ``scope``, ``filters`` (dict), ``token_budget``, ``tokens_used``,
        ``record_ids`` (list), ``scores`` (list), ``omitted``, ``duration_ms``, ``model_id``.
        """
        event_id = uuid.uuid4().hex
        with self._write() as tx:
            tx.execute(
                "INSERT INTO retrieval_events (id, time, query, scope, filters, token_budget, tokens_used,"
                " record_ids, scores, omitted, duration_ms, model_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    event_id, time.time(), event["query"], event["scope"],
                    json.dumps(event["filters"], ensure_ascii=False, default=str), event["token_budget"],
                    event["tokens_used"], json.dumps(event["record_ids"]), json.dumps(event["scores"]),
                    event["omitted"], event["duration_ms"], event["model_id"],
                ),
            )
        return event_id

    def retrieval_events(self, limit: int = 100) -> list[dict[str, Any]]:
        """The latest retrieval events, newest first."""
        rows = self._conn().execute(
            "SELECT id, time, query, scope, filters, token_budget, tokens_used, record_ids, scores, omitted,"
            " duration_ms, model_id FROM retrieval_events ORDER BY seq DESC LIMIT ?",
            (limit,),
        ).fetchall()
        keys = ("id", "time", "query", "scope", "filters", "token_budget", "tokens_used", "record_ids", "scores",
                "omitted", "duration_ms", "model_id")
        out = []
        for row in rows:
            item = dict(zip(keys, row, strict=True))
            for key in ("filters", "record_ids", "scores"):
                item[key] = json.loads(item[key])
            item["time"] = datetime.fromtimestamp(item["time"], tz=UTC).isoformat()
            out.append(item)
        return out

    def count_retrieval_events(self) -> int:
        """How many retrieval events are stored."""
        return int(self._conn().execute("SELECT count(*) FROM retrieval_events").fetchone()[0])

    def get_state(self, mission: str, key: str) -> str | None:
        """An ingest bookmark of ``mission``, or None."""
        row = self._conn().execute(
            "SELECT value FROM ingest_state WHERE mission = ? AND key = ?", (mission, key)
        ).fetchone()
        return None if row is None else str(row[0])

    def set_state(self, mission: str, key: str, value: str) -> None:
        """Set an ingest bookmark of ``mission``."""
        with self._write() as tx:
            tx.execute(
                "INSERT INTO ingest_state (mission, key, value) VALUES (?, ?, ?)"
                " ON CONFLICT (mission, key) DO UPDATE SET value = excluded.value",
                (mission, key, value),
            )

    def integrity_check(self) -> str:
        """Result of ``PRAGMA integrity_check`` (``ok`` when sound)."""
        return str(self._conn().execute("PRAGMA integrity_check").fetchone()[0])

    def ensure_sound(self) -> None:
        """Run ``PRAGMA quick_check``; raise :class:`BackendUnavailable` when the file is damaged.

        Ingest calls it first, so that writing into a damaged file is refused, not reported as success.
        """
        result = str(self._conn().execute("PRAGMA quick_check").fetchone()[0])
        if result != "ok":
            raise BackendUnavailable(
                f"store {self.path} is damaged ({result[:200]}); it is derived data: move it aside and re-ingest"
            )


def _applied_migrations(conn: sqlite3.Connection) -> set[str] | None:
    """Names of the applied migrations, or None when the table does not exist yet."""
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'migrations'").fetchone()
    if exists is None:
        return None
    return {row[0] for row in conn.execute("SELECT name FROM migrations")}


def _split_sql(script: str) -> list[str]:
    """Split a migration into statements, keeping trigger bodies whole."""
    statements: list[str] = []
    buffer = ""
    for line in script.strip().splitlines():
        buffer += line + "\n"
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements


def _filter_sql(where: SearchFilter, alias: str) -> tuple[list[str], list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    marks = ",".join("?" * len(where.layers))
    clauses.append(f"{alias}.layer IN ({marks})")
    params.extend(layer.value for layer in where.layers)
    if where.mission is not None:
        clauses.append(f"{alias}.mission = ?")
        params.append(where.mission)
    if where.component is not None:
        clauses.append(f"{alias}.component = ?")
        params.append(where.component)
    if where.min_criticality is not None:
        clauses.append(f"{alias}.criticality >= ?")
        params.append(where.min_criticality)
    if where.since is not None:
        clauses.append(f"{alias}.time >= ?")
        params.append(_ts(where.since))
    if where.until is not None:
        clauses.append(f"{alias}.time <= ?")
        params.append(_ts(where.until))
    if where.mission_type is not None:
        clauses.append(f"({alias}.mission_type IS NULL OR {alias}.mission_type = ?)")
        params.append(where.mission_type)
    if where.outcome is not None:
        clauses.append(f"({alias}.layer != 'practitioner' OR {alias}.outcome = ?)")
        params.append(where.outcome)
    return clauses, params


def _filter_mask(cache: VectorTable, where: SearchFilter) -> npt.NDArray[np.bool_] | None:
    mask: npt.NDArray[np.bool_] | None = None

    def both(extra: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        return extra if mask is None else mask & extra

    if where.mission is not None:
        mask = both(cache.codes["mission"] == cache.code_of("mission", where.mission))
    if where.component is not None:
        mask = both(cache.codes["component"] == cache.code_of("component", where.component))
    if where.min_criticality is not None:
        mask = both(cache.criticality >= where.min_criticality)
    if where.since is not None:
        mask = both(cache.time >= _ts(where.since))
    if where.until is not None:
        mask = both(cache.time <= _ts(where.until))
    if where.mission_type is not None:
        code = cache.code_of("mission_type", where.mission_type)
        mask = both((cache.codes["mission_type"] == -1) | (cache.codes["mission_type"] == code))
    if where.outcome is not None:
        code = cache.code_of("outcome", where.outcome)
        mask = both((cache.layer != _LAYER_CODES[Layer.PRACTITIONER]) | (cache.codes["outcome"] == code))
    return mask


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


def _conforms(store: SqliteStore) -> tuple[RecordStore, VectorIndex]:
    """Never called: lets the type checker prove that SqliteStore satisfies both protocols."""
    return store, store
