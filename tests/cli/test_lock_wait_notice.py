"""``feed`` on a store another process holds the write lock of says on stderr, after about two
seconds, that it waits for that file's write lock and how long it waits at most; its ``--json``
output on stdout stays one JSON object. Real processes, a real SQLite file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from mission_memory.api import Memory

HOLD = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.readline()  # held until the test says
conn.execute("ROLLBACK")
"""


def test_feed_waiting_for_the_write_lock_says_so_on_stderr(data_dir: Path, tmp_path: Path) -> None:
    with Memory.open():
        pass  # the store exists
    store = data_dir / "memory.db"
    events = tmp_path / "events.jsonl"
    events.write_text(json.dumps({"id": "e1", "time": "2026-03-01T12:00:00Z", "sector": "north", "type": "probe",
                                  "criticality": 0.4, "source": "monitor", "text": "a probe"}) + "\n")
    with subprocess.Popen([sys.executable, "-c", HOLD, str(store)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True) as holder:
        assert holder.stdin is not None and holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        feed = subprocess.Popen(
            [sys.executable, "-m", "mission_memory", "feed", str(events), "--mission", "ops", "--new-mission",
             "--no-embed", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
        assert feed.stderr is not None
        notice = ""
        for line in feed.stderr:  # the lock is held until feed has said it waits, however slow the machine
            notice += line
            if "waiting for the write lock" in line:
                break
        waited = time.monotonic() - started
        holder.stdin.write("release\n")
        holder.stdin.flush()
        out, rest = feed.communicate(timeout=120)
    done = subprocess.CompletedProcess(feed.args, feed.returncode, out, notice + rest)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["added"] == 1  # stdout is the JSON report only
    assert waited >= 2  # said after about two seconds of waiting, not at once
    assert f"waiting for the write lock of {store}" in done.stderr, done.stderr
    assert "at most 150 s in all" in done.stderr, done.stderr
