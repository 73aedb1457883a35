"""Leave a SQLite store file as an older release did, to test what opening it does."""

from __future__ import annotations

import sqlite3


def undo_kind_summaries(conn: sqlite3.Connection) -> None:
    """Remove what migrations 0006 and 0007 added (the per-minute and per-second kind summaries and their
    triggers), as a store of schema 5 or earlier holds none of it."""
    for trigger in ("records_event_kind", "records_event_kind_seconds"):
        conn.execute(f"DROP TRIGGER {trigger}_ai")
        conn.execute(f"DROP TRIGGER {trigger}_ad")
    conn.execute("DROP TABLE event_kind_minutes")
    conn.execute("DROP TABLE event_kind_seconds")
    conn.execute("DELETE FROM migrations WHERE name IN ('0006_event_kind_minutes', '0007_event_kind_seconds')")
