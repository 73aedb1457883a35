"""The SQLite backend's schema: named migrations, applied in order and recorded in ``migrations``.

A migration is never edited once released; a change to the schema is a new named migration, so
every store made by an older version opens with the new code (simonw/llm's named migrations).

* ``0001_initial`` — records, FTS5 index, vectors, retrieval events, ingest state;
* ``0002_retrieval_event_origin`` — who and where of a retrieval event: session, operator,
  mission, client (docs/adr/0016). Events logged before it read these as None;
* ``0003_records_component_index`` — an index on ``records.component``: a query filtered by
  component checks the component exists, and ``status`` counts records per component, without
  scanning every record (a GROUP BY over 100k records took about 1 s);
* ``0004_operations_event_type`` — a domain event's type as a filter column;
* ``0005_event_kind_key`` — a domain event's kind key as a column, with the indexes that aggregate a
  window's events by kind in the store (docs/adr/0088);
* ``0006_event_kind_minutes`` — per minute, kind of domain event and filter values, the events' count,
  oldest and newest, kept by triggers on ``records``, so a window's kinds are read from it and not from
  every event (:mod:`~mission_memory.stores.sqlite_event_kinds`, docs/adr/0095);
* ``0007_event_kind_seconds`` — the same per second, read only for a minute that straddles a query's
  time bound, so a bound inside a flood reads one second of a kind's events, not one minute.
"""

from __future__ import annotations

import sqlite3
import time

from mission_memory.stores.sqlite_event_kinds import EVENT_KIND_MINUTES_SQL, EVENT_KIND_SECONDS_SQL

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "applied_migrations", "apply_migrations", "pending_migrations"]

# Named migrations, applied in order and recorded in the ``migrations`` table.
MIGRATIONS: list[tuple[str, str]] = [
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
    (
        "0002_retrieval_event_origin",
        """
        ALTER TABLE retrieval_events ADD COLUMN session_id TEXT;
        ALTER TABLE retrieval_events ADD COLUMN operator TEXT;
        ALTER TABLE retrieval_events ADD COLUMN mission TEXT;
        ALTER TABLE retrieval_events ADD COLUMN client TEXT;
        """,
    ),
    (
        "0003_records_component_index",
        """
        CREATE INDEX IF NOT EXISTS records_component ON records (component);
        """,
    ),
    (
        "0004_operations_event_type",
        # A domain event's type as a filter column, read from its attributes (no backfill, no write-path change).
        """
        ALTER TABLE records ADD COLUMN event_type TEXT
            GENERATED ALWAYS AS (json_extract(attributes, '$.event_type')) VIRTUAL;
        CREATE INDEX IF NOT EXISTS records_event_type ON records (event_type);
        """,
    ),
    (
        "0005_event_kind_key",
        # A domain event's kind key (docs/adr/0088), read from its attributes: the window's kinds, their
        # counts and first and last times are one GROUP BY over the covering index, their representative
        # and oldest and newest members one index lookup each, however many events the window holds.
        """
        ALTER TABLE records ADD COLUMN kind_key TEXT
            GENERATED ALWAYS AS (json_extract(attributes, '$.kind_key')) VIRTUAL;
        CREATE INDEX IF NOT EXISTS records_event_window ON records (mission, kind, time, layer, kind_key, criticality);
        CREATE INDEX IF NOT EXISTS records_kind_critical ON records (kind_key, criticality, time) WHERE kind_key IS NOT NULL;
        CREATE INDEX IF NOT EXISTS records_kind_time ON records (kind_key, time) WHERE kind_key IS NOT NULL;
        """,
    ),
    ("0006_event_kind_minutes", EVENT_KIND_MINUTES_SQL),
    ("0007_event_kind_seconds", EVENT_KIND_SECONDS_SQL),
]
SCHEMA_VERSION = len(MIGRATIONS)


def applied_migrations(conn: sqlite3.Connection) -> set[str] | None:
    """Names of the applied migrations, or None when the table does not exist yet."""
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'migrations'").fetchone()
    if exists is None:
        return None
    return {row[0] for row in conn.execute("SELECT name FROM migrations")}


def pending_migrations(applied: set[str] | None) -> list[str]:
    """Names of the migrations not applied yet, in order."""
    return [name for name, _ in MIGRATIONS if applied is None or name not in applied]


def apply_migrations(tx: sqlite3.Connection) -> None:
    """Apply every pending migration inside the caller's write transaction ``tx``."""
    tx.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at REAL)")
    done = {row[0] for row in tx.execute("SELECT name FROM migrations")}
    for name, sql in MIGRATIONS:
        if name in done:
            continue
        for statement in split_sql(sql):
            tx.execute(statement)
        tx.execute("INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (name, time.time()))


def split_sql(script: str) -> list[str]:
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
