"""What asking for records without a vector costs on a real store (issue 21, docs/adr/0063).

The event vector queue asks the store for records without a vector of the current model before every
batch (``SqliteStore.ids_without_vector``), and ``status``, ``escalation status`` and the digest
footer count them (``vector_backlog``). This benchmark times, on a copy of an existing SQLite store
(``bench_pull.py --data-root DIR`` keeps one: ``DIR/store-100000/memory.db``):

* the query ``ids_without_vector`` ran before (a vector lookup per record, ``LEFT JOIN``) and the one it
  runs now (two ordered index scans merged with ``EXCEPT``), alternating round by round, with all
  vectors present (the queue idle) and with the newest ``--missing`` records' vectors removed (the
  queue behind);
* ``vector_backlog`` on the copy, as ``status`` asks it (reading up to 20,000 waiting records) and as
  a pull's footer does (up to 1,000), both cases.

Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_vector_backlog.py --db DIR/store-100000/memory.db
        [--missing 10000] [--rounds 5] [--limit 32]

Prints medians in milliseconds and the load average before and after; the copy is removed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from mission_memory.retrieval.query import _BACKLOG_READ as FOOTER_READ
from mission_memory.stores.write_path import BACKLOG_READ

BEFORE = (
    "SELECT r.id FROM records r LEFT JOIN vectors v ON v.record_rowid = r.rowid AND v.model_id = ?"
    " WHERE v.record_rowid IS NULL ORDER BY r.rowid LIMIT ?"
)
AFTER = (
    "SELECT id FROM records WHERE rowid IN (SELECT rowid FROM records EXCEPT"
    " SELECT record_rowid FROM vectors WHERE model_id = ? ORDER BY 1 LIMIT ?) ORDER BY rowid"
)


def _timed(conn: sqlite3.Connection, sql: str, model: str, limit: int) -> tuple[float, list[str]]:
    started = time.perf_counter()
    rows = [row[0] for row in conn.execute(sql, (model, limit)).fetchall()]
    return (time.perf_counter() - started) * 1000, rows


def _compare(conn: sqlite3.Connection, model: str, limit: int, rounds: int) -> dict[str, float]:
    times: dict[str, list[float]] = {"before": [], "after": []}
    for _ in range(rounds):
        spent_before, rows_before = _timed(conn, BEFORE, model, limit)
        spent_after, rows_after = _timed(conn, AFTER, model, limit)
        assert rows_before == rows_after, "the two queries disagree"
        times["before"].append(spent_before)
        times["after"].append(spent_after)
    return {name: statistics.median(values) for name, values in times.items()}


def _backlog_ms(database: Path, model: str, rounds: int, read: int) -> tuple[float, int]:
    from mission_memory.stores.sqlite import SqliteStore
    from mission_memory.stores.write_path import vector_backlog

    store = SqliteStore(database)
    try:
        spent, missing = [], 0
        for _ in range(rounds):
            started = time.perf_counter()
            missing = vector_backlog(store, model, read=read).missing
            spent.append((time.perf_counter() - started) * 1000)
        return statistics.median(spent), missing
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="an existing SQLite store (copied, never changed)")
    parser.add_argument("--missing", type=int, default=10_000, help="newest records whose vectors the copy drops")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--limit", type=int, default=32, help="records asked per call (the queue's batch)")
    args = parser.parse_args()
    print(f"load average before {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="bench-backlog-") as folder:
        database = Path(folder) / "memory.db"
        shutil.copyfile(args.db, database)
        conn = sqlite3.connect(database)
        (model,) = conn.execute("SELECT model_id FROM vectors LIMIT 1").fetchone()
        (records,) = conn.execute("SELECT count(*) FROM records").fetchone()
        print(f"store: {records:,} records, model {model}")
        for case in ("queue idle", "queue behind"):
            if case == "queue behind":
                conn.execute("DELETE FROM vectors WHERE record_rowid > (SELECT max(rowid) FROM records) - ?",
                             (args.missing,))
                conn.commit()
            medians = _compare(conn, model, args.limit, args.rounds)
            status, missing = _backlog_ms(database, model, args.rounds, BACKLOG_READ)
            footer, _ = _backlog_ms(database, model, args.rounds, FOOTER_READ)
            print(f"{case:>12} ({missing:,} without a vector): ids_without_vector LIMIT {args.limit} before "
                  f"{medians['before']:.1f} ms, after {medians['after']:.1f} ms; vector_backlog as status reads it "
                  f"{status:.1f} ms, as the digest footer does {footer:.1f} ms")
        conn.close()
    print(f"load average after {os.getloadavg()}")


if __name__ == "__main__":
    main()
