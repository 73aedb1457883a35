"""A store made by schema v1 opens with today's code: migrated to v2, its records and events still read.

The v1 DDL below is copied verbatim from the 0001_initial migration as it shipped, so this test
keeps proving the upgrade path even if the migration module is reorganised.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from mission_memory.api import Memory
from mission_memory.records import Provenance, Record, RecordKind, SourceKind
from mission_memory.retrieval_events import Client
from mission_memory.stores.sqlite_migrations import SCHEMA_VERSION

V1_DDL = """
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
        """


def _split(script: str) -> list[str]:
    statements, buffer = [], ""
    for line in script.strip().splitlines():
        buffer += line + "\n"
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    return statements


def _make_v1_store(path: Path, record: Record) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("BEGIN")
    conn.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at REAL)")
    for statement in _split(V1_DDL):
        conn.execute(statement)
    conn.execute("INSERT INTO migrations (name, applied_at) VALUES ('0001_initial', ?)", (time.time(),))
    p = record.provenance
    conn.execute(
        "INSERT INTO records (id, source_key, mission, layer, kind, title, text, source_kind, ref, uri,"
        " time, source_commit, criticality, access_level, component, operator, mission_type, outcome,"
        " attributes, ingested_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (record.id, record.source_key, p.mission, record.layer.value, record.kind.value, record.title,
         record.text, p.kind.value, p.ref, p.uri, p.time.timestamp(), None, record.criticality,
         record.access_level.value, record.component, None, None, None, "{}", time.time()),
    )
    conn.execute(
        "INSERT INTO retrieval_events (id, time, query, scope, filters, token_budget, tokens_used,"
        " record_ids, scores, omitted, duration_ms, model_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        ("e" * 32, 1_700_000_000.0, "old question", "all", json.dumps({"component": "docs"}), 800, 42,
         json.dumps([record.id]), json.dumps([0.8]), 0, 12.0, "model-old"),
    )
    conn.execute("COMMIT")
    conn.close()


def test_a_v1_store_is_migrated_and_answers_queries_and_keeps_its_old_events(data_dir: Path) -> None:
    from datetime import UTC, datetime

    record = Record.build(
        kind=RecordKind.DOC_CHUNK, title="Backups",
        text="The ledger file is copied to cold storage every night at 02:00 UTC.",
        provenance=Provenance(kind=SourceKind.DOC, ref="docs/guide.md#backups", uri="file:///guide.md",
                              mission="uploader", time=datetime(2024, 3, 5, tzinfo=UTC)),
    )
    _make_v1_store(data_dir / "memory.db", record)

    with Memory.open() as memory:
        assert memory.status()["schema_version"] == SCHEMA_VERSION == 7
        old = memory.retrieval_events(10)
        assert len(old) == 1
        assert old[0].query == "old question" and old[0].record_ids == (record.id,)
        assert old[0].filters == {"component": "docs"}
        assert (old[0].session_id, old[0].operator, old[0].mission, old[0].client) == (None, None, None, None)

        digest = memory.query("When is the ledger copied to cold storage?", token_budget=1000)
        assert [e.record.id for e in digest.entries] == [record.id]
        new = memory.retrieval_events(10)
        assert [e.query for e in new] == ["When is the ledger copied to cold storage?", "old question"]
        assert new[0].client is Client.API and new[0].mission == "uploader" and new[0].session_id
