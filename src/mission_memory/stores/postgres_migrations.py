"""The PostgreSQL store's schema and its migrations, applied in order, each once, under a lock.

Every migration is a name and its SQL; :func:`apply_migrations` runs the ones a database has not
recorded in ``schema_migrations``, each in its own transaction, holding the advisory lock
:data:`MIGRATION_LOCK` so that two server processes opening one new database at once do not both
create it (the second waits, then finds the migrations recorded). The layout follows the SQLite
store's (:mod:`~mission_memory.stores.sqlite_migrations`, schema version 5), with:

* ``records.seq`` — the write order (BM25 ties and :meth:`iterate` go by it, as SQLite's by row id);
* ``records.tokens`` and ``postings`` — the BM25 index: each record's token count and, per token,
  its weighted frequency (title × 2 + text) beside the record's token count (so a ranking reads
  ``postings`` alone), tokenised by SQLite's FTS5 tokenizer
  (:class:`~mission_memory.stores.qdrant_terms.TermEncoder`), so scores are FTS5's
  (docs/adr/0084); ``bm25_totals`` — BM25's ``N`` and ``Σ|d|``, kept by statement triggers on
  ``records`` (writes are serialised by the store's lock, so the one row is never contended);
* ``vectors.embedding`` — pgvector's ``vector`` (any dimension; one model's rows share one), and
  its ``halfvec`` copy in ``vector_halves`` (written with it, deleted with it);
  a mission with many vectors also gets a partial HNSW index of its own
  (:mod:`~mission_memory.stores.postgres_vectors`).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "MIGRATIONS", "MIGRATION_DEADLINE_SECONDS", "MIGRATION_LOCK", "SCHEMA_VERSION", "applied_migrations", "apply_migrations",
]

MIGRATION_LOCK = 0x6D6D_6D69_6772
"""The ``pg_advisory_xact_lock`` key migrations hold (any fixed number no other lock uses)."""
MIGRATION_DEADLINE_SECONDS = 1800
"""The ``statement_timeout`` of one migration: longer than one ordinary statement's deadline, since a
migration may rebuild an index over every posting (``0004`` took about a minute at 100k records,
9.7M postings, on a loaded 2-core machine), and still bounded."""
MIGRATION_BUILD_MEMORY = "256MB"
"""``maintenance_work_mem`` of one migration (an index rebuilt over every posting sorts them all)."""

MIGRATIONS: tuple[tuple[str, str], ...] = (
    ("0001_initial", """
        CREATE EXTENSION IF NOT EXISTS vector;
        CREATE TABLE records (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id text NOT NULL UNIQUE,
            source_key text NOT NULL UNIQUE,
            mission text NOT NULL,
            layer text NOT NULL,
            kind text NOT NULL,
            title text NOT NULL,
            text text NOT NULL,
            source_kind text NOT NULL,
            ref text NOT NULL,
            uri text NOT NULL,
            time double precision NOT NULL,
            source_commit text,
            criticality double precision NOT NULL,
            access_level text NOT NULL,
            component text,
            operator text,
            mission_type text,
            outcome text,
            event_type text,
            attributes text NOT NULL,
            ingested_at double precision NOT NULL,
            tokens integer NOT NULL
        );
        CREATE INDEX records_mission_kind ON records (mission, kind);
        CREATE INDEX records_layer ON records (layer);
        CREATE INDEX records_component ON records (component);
        CREATE INDEX records_kind_time ON records (kind, time);
        CREATE INDEX records_criticality ON records (criticality DESC, time DESC);
        CREATE TABLE postings (
            term text NOT NULL,
            seq bigint NOT NULL REFERENCES records (seq) ON DELETE CASCADE,
            freq integer NOT NULL,
            tokens integer NOT NULL,
            PRIMARY KEY (term, seq)
        );
        CREATE INDEX postings_seq ON postings (seq);
        CREATE TABLE bm25_totals (
            one boolean PRIMARY KEY DEFAULT true CHECK (one),
            records bigint NOT NULL,
            tokens bigint NOT NULL
        );
        INSERT INTO bm25_totals (records, tokens) VALUES (0, 0);
        CREATE FUNCTION bm25_totals_add() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE bm25_totals SET records = records + (SELECT count(*) FROM added),
                                   tokens = tokens + (SELECT coalesce(sum(tokens), 0) FROM added);
            RETURN NULL;
        END $$;
        CREATE FUNCTION bm25_totals_remove() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE bm25_totals SET records = records - (SELECT count(*) FROM removed),
                                   tokens = tokens - (SELECT coalesce(sum(tokens), 0) FROM removed);
            RETURN NULL;
        END $$;
        CREATE TRIGGER records_bm25_added AFTER INSERT ON records REFERENCING NEW TABLE AS added
            FOR EACH STATEMENT EXECUTE FUNCTION bm25_totals_add();
        CREATE TRIGGER records_bm25_removed AFTER DELETE ON records REFERENCING OLD TABLE AS removed
            FOR EACH STATEMENT EXECUTE FUNCTION bm25_totals_remove();
        CREATE TABLE vectors (
            seq bigint PRIMARY KEY REFERENCES records (seq) ON DELETE CASCADE,
            model_id text NOT NULL,
            mission text NOT NULL,
            layer text NOT NULL,
            kind text NOT NULL,
            dim integer NOT NULL,
            embedding vector NOT NULL
        );
        CREATE INDEX vectors_model_mission ON vectors (model_id, mission);
        CREATE TABLE retrieval_events (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id text NOT NULL UNIQUE,
            time double precision NOT NULL,
            query text NOT NULL,
            scope text NOT NULL,
            filters text NOT NULL,
            token_budget integer NOT NULL,
            tokens_used integer NOT NULL,
            record_ids text NOT NULL,
            scores text NOT NULL,
            omitted integer NOT NULL,
            duration_ms double precision NOT NULL,
            model_id text NOT NULL,
            session_id text,
            operator text,
            mission text,
            client text
        );
        CREATE INDEX retrieval_events_time ON retrieval_events (time);
        CREATE INDEX retrieval_events_mission ON retrieval_events (mission);
        CREATE TABLE ingest_state (
            mission text NOT NULL,
            key text NOT NULL,
            value text NOT NULL,
            PRIMARY KEY (mission, key)
        );
        CREATE TABLE vector_indexes (
            name text PRIMARY KEY,
            model_id text NOT NULL,
            mission text NOT NULL,
            dim integer NOT NULL,
            UNIQUE (model_id, mission)
        );
    """),
    ("0002_postings_scope", """
        ALTER TABLE postings ADD COLUMN mission text, ADD COLUMN layer text;
        UPDATE postings p SET mission = r.mission, layer = r.layer FROM records r WHERE r.seq = p.seq;
        ALTER TABLE postings ALTER COLUMN mission SET NOT NULL, ALTER COLUMN layer SET NOT NULL;
    """),
    ("0003_event_kind_key", """
        ALTER TABLE records ADD COLUMN kind_key text GENERATED ALWAYS AS (
            CASE WHEN kind = 'domain_event' THEN (attributes::jsonb ->> 'kind_key') END) STORED;
        CREATE INDEX records_event_window ON records (mission, time) INCLUDE (layer, kind_key, criticality)
            WHERE kind = 'domain_event';
    """),
    ("0004_postings_covering_key", """
        ALTER TABLE postings DROP CONSTRAINT IF EXISTS postings_pkey;
        ALTER TABLE postings ADD PRIMARY KEY (term, mission, seq) INCLUDE (freq, tokens, layer);
    """),
    ("0005_vector_halves", """
        CREATE TABLE vector_halves (
            seq bigint PRIMARY KEY REFERENCES vectors (seq) ON DELETE CASCADE,
            model_id text NOT NULL,
            mission text NOT NULL,
            layer text NOT NULL,
            kind text NOT NULL,
            half halfvec NOT NULL
        );
        INSERT INTO vector_halves (seq, model_id, mission, layer, kind, half)
            SELECT seq, model_id, mission, layer, kind, embedding::halfvec FROM vectors;
        CREATE INDEX vector_halves_scope ON vector_halves (model_id, mission, layer, kind);
    """),
)
"""``(name, SQL)`` in the order they apply. ``0002_postings_scope`` gives each posting its record's
mission and layer, so a ranking restricted to a mission reads ``postings`` alone (docs/adr/0084).
``0003_event_kind_key`` stores a domain event's kind key as a column (read from its attributes), with a
partial index over the events of a mission by time, so a window's kinds are one aggregate in the
server (:meth:`~mission_memory.stores.postgres.PostgresStore.event_kinds`, docs/adr/0088).
``0004_postings_covering_key`` keys postings by ``(term, mission, seq)`` and carries what a ranking
reads (frequency, token count, layer) in that index, so a term's postings are read by an
index-only scan instead of one heap page each, spread over the table: a six-term query over
80k postings at 100k records read 77k heap pages (1.4 s) before, none (0.3 s) after.
``0005_vector_halves`` keeps a ``halfvec`` copy of every vector (half the bytes) with its record's
mission, layer and kind, keyed by them, deleted with its vector (foreign key): a mission-scoped
exact search ranks it first and rescores the best rows in float32
(:mod:`~mission_memory.stores.postgres_vectors`)."""

SCHEMA_VERSION = 5
"""The record schema the tables hold: the fields of SQLite schema version 5 (``event_type`` included)."""


def applied_migrations(conn: Any) -> set[str]:
    """The names of the migrations ``conn``'s database has recorded (none for a new database)."""
    exists = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()[0]
    if not exists:
        return set()
    return {str(row[0]) for row in conn.execute("SELECT name FROM schema_migrations")}


def apply_migrations(conn: Any) -> list[str]:
    """Apply the migrations ``conn``'s database lacks, in order, each in one transaction under
    :data:`MIGRATION_LOCK`; return the names applied (empty when it was up to date).

    Args:
        conn: a psycopg connection in autocommit mode.

    Raises:
        psycopg.Error: a statement failed (that migration is rolled back; earlier ones stay).
    """
    done: list[str] = []
    for name, sql in MIGRATIONS:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz"
                " NOT NULL DEFAULT now())"
            )
            if conn.execute("SELECT 1 FROM schema_migrations WHERE name = %s", (name,)).fetchone():
                continue
            conn.execute(f"SET LOCAL statement_timeout = '{MIGRATION_DEADLINE_SECONDS}s'")
            conn.execute(f"SET LOCAL maintenance_work_mem = '{MIGRATION_BUILD_MEMORY}'")
            conn.execute(sql)
            conn.execute("INSERT INTO schema_migrations (name) VALUES (%s)", (name,))
            done.append(name)
    return done
