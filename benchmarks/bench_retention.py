"""Pull latency at 100k events before and after pruning (issue 24 item 4, docs/adr/0058).

Stores ``--events`` domain events (default 100,000) spread evenly over ``--days`` days (default 180) into a
fresh embedded store through ``Memory.record_events`` in batches of 1,000 (no vectors: the event vector
queue is not drained, as on a store whose queue lags; dense search sees the small document set only),
with a small real git repository ingested beside them (decisions and documents, embedded). Then it runs
``--queries`` pull queries (default 20, four wordings alternating) and prints p50/p95, prunes with
``Memory.prune_events(max_age_days=--keep-days)`` (default 30), checks that every decision and
document is still there, and runs the same queries again. The load average is printed with the figures.

Usage::

    .venv/bin/python benchmarks/bench_retention.py [--events 100000] [--days 180] [--keep-days 30] [--queries 20]

Works in temporary folders; nothing else is written.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from mission_memory.api import Memory

SECTORS = ["north", "south", "east", "west", "checkout", "payments"]
TEXTS = [
    "Shelling reported near the {s} checkpoint, {n} rounds, no casualties yet.",
    "Обстріл у секторі {s}: {n} вибухів, уточнюємо втрати.",
    "GPS jamming detected over sector {s}; drones switching to inertial navigation ({n}).",
    "Error rate of service {s} above objective: {n}% of requests failing.",
    "Heartbeat {n} from relay in sector {s}.",
]
QUERIES = [
    "What is happening in sector north right now?",
    "Що відбувається з дронами рою?",
    "Which services are failing and why?",
    "Which database holds the ledger and why was it chosen?",
]


def _repo(root: Path) -> Path:
    env = {**os.environ, "GIT_AUTHOR_NAME": "ops", "GIT_AUTHOR_EMAIL": "ops@example.org",
           "GIT_COMMITTER_NAME": "ops", "GIT_COMMITTER_EMAIL": "ops@example.org"}
    root.mkdir()
    (root / "docs" / "adr").mkdir(parents=True)
    (root / "docs" / "adr" / "0001-ledger-in-sqlite.md").write_text(
        "# 1. Keep the ledger in SQLite\n\nStatus: accepted\n\n## Decision\n\nThe ledger lives in SQLite in WAL mode "
        "for offline field use.\n", encoding="utf-8")
    (root / "docs" / "runbook.md").write_text(
        "# Runbook\n\n## Relay down\n\nRestart the relay, then check its antenna and power.\n", encoding="utf-8")
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "Ledger decision and runbook"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, timeout=60)
    return root


def _events(n: int, days: float, now: datetime, rng: random.Random) -> list[dict[str, Any]]:
    step = timedelta(days=days) / n
    out = []
    for i in range(n):
        sector = rng.choice(SECTORS)
        out.append({"id": f"ev-{i}", "time": (now - timedelta(days=days) + i * step).isoformat(), "sector": sector,
                    "type": rng.choice(["shelling", "ew_jamming", "HighErrorRate", "heartbeat"]),
                    "criticality": rng.choice([0.1, 0.2, 0.3, 0.5, 0.9]), "source": "bench",
                    "text": rng.choice(TEXTS).format(s=sector, n=rng.randint(1, 99))})
    return out


def _pulls(memory: Memory, count: int, now: datetime) -> list[float]:
    times = []
    for i in range(count):
        started = time.perf_counter()
        memory.query(QUERIES[i % len(QUERIES)], filters={"mission": "ops"}, token_budget=4000, now=now)
        times.append((time.perf_counter() - started) * 1000)
    return sorted(times)


def _pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--days", type=float, default=180.0)
    parser.add_argument("--keep-days", type=float, default=30.0)
    parser.add_argument("--queries", type=int, default=20)
    args = parser.parse_args()
    rng = random.Random(0)
    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as tmp, Memory.open(data_dir=Path(tmp) / "data", event_mission="ops") as memory:
        memory.ingest_repository(_repo(Path(tmp) / "ops"), mission="ops")
        events = _events(args.events, args.days, now, rng)
        started = time.perf_counter()
        for i in range(0, len(events), 1000):
            memory.record_events(events[i:i + 1000], "ops", now=now, embed=False)
        stored_s = time.perf_counter() - started
        memory.prepare_search()
        kinds_before = {k: v for layer in memory.store.counts().values() for k, v in layer.items() if v}
        _pulls(memory, 2, now)  # warm up
        load = os.getloadavg()
        before = _pulls(memory, args.queries, now)
        started = time.perf_counter()
        report = memory.prune_events("ops", now=now, max_age_days=args.keep_days)
        prune_s = time.perf_counter() - started
        kinds_after = {k: v for layer in memory.store.counts().values() for k, v in layer.items() if v}
        _pulls(memory, 2, now)
        after = _pulls(memory, args.queries, now)
        load_end = os.getloadavg()
    kept = {k: v for k, v in kinds_before.items() if k != "domain_event"}
    assert kept == {k: v for k, v in kinds_after.items() if k != "domain_event"}, "prune touched other kinds"
    print(f"load average: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} at the first pulls, "
          f"{load_end[0]:.1f} at the end, {os.cpu_count()} cores")
    print(f"stored {args.events:,} events over {args.days:g} days in {stored_s:.1f} s; other records: {kept}")
    print(f"pull before pruning ({kinds_before.get('domain_event', 0):,} events): p50 {_pct(before, .5):.0f} ms, "
          f"p95 {_pct(before, .95):.0f} ms over {args.queries} queries")
    print(f"pruned {report.total:,} events older than {args.keep_days:g} days in {prune_s:.1f} s "
          f"(decisions, documents and commits untouched)")
    print(f"pull after pruning ({kinds_after.get('domain_event', 0):,} events): p50 {_pct(after, .5):.0f} ms, "
          f"p95 {_pct(after, .95):.0f} ms over {args.queries} queries")


if __name__ == "__main__":
    main()
