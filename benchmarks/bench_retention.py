"""Pull latency at 100k events before and after pruning, and the prune's own time (issue 24, docs/adr/0058).

Stores ``--events`` domain events (default 100,000) spread evenly over ``--days`` days (default 180) into a
fresh embedded store through ``Memory.record_events`` in batches of 1,000 (no vectors: the event vector
queue is not drained, as on a store whose queue lags; dense search sees the small document set only),
with a small real git repository ingested beside them (decisions and documents, embedded). The store is
built once; each variant (this checkout, and every ``--compare-src DIR``) gets a copy of it and, in a
worker process with ``PYTHONPATH`` set to its ``src/``, runs ``--queries`` pull queries (default 20, four
wordings alternating) and prints p50/p95, prunes with ``Memory.prune_events(max_age_days=--keep-days)``
(default 30), checks that every decision and document is still there, and runs the same queries again.
The load average is printed beside each variant's figures.

Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_retention.py [--events 100000] [--days 180] [--keep-days 30]
        [--queries 20] [--vectors] [--compare-src DIR]...

``--vectors`` first gives every event a random unit vector of the embedder's model (as once the event
vector queue has caught up), so the prune also deletes vectors and the vector snapshot is rewritten.
``--compare-src DIR``: another checkout's ``src/`` (``git archive main src | tar -x -C DIR``; DIR or
DIR/src), which must read this checkout's store. Works in temporary folders; nothing else is written.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

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


def _random_vectors(memory: Memory, rng: random.Random) -> None:
    """Unit vectors of the embedder's model for every record without one (what a caught-up queue would
    store; random, since only their storage and deletion are measured)."""
    model, dim = memory.embedder.model_id, memory.embedder.dim
    generator = np.random.default_rng(rng.randrange(2**32))
    while ids := memory.store.ids_without_vector(model, 5000):
        vectors = generator.standard_normal((len(ids), dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        memory.store.put_vectors(ids, vectors, model)


def _package_root(folder: Path) -> Path:
    """The folder holding ``mission_memory/``: ``folder`` or ``folder/src`` (else the run would measure this one twice)."""
    for candidate in (folder, folder / "src"):
        if (candidate / "mission_memory" / "__init__.py").is_file():
            return candidate.resolve()
    raise SystemExit(f"--compare-src {folder}: no mission_memory package in it or in its src/ folder")


def _kinds(memory: Memory) -> dict[str, int]:
    return {k: v for layer in memory.store.counts().values() for k, v in layer.items() if v}


def _worker(data_dir: Path, now: datetime, queries: int, keep_days: float) -> None:
    """Pulls, a prune, pulls again on the store in ``data_dir``; one JSON line of figures on stdout."""
    with Memory.open(data_dir=data_dir, event_mission="ops") as memory:
        kinds_before = _kinds(memory)
        _pulls(memory, 2, now)  # warm up
        load = os.getloadavg()[0]
        before = _pulls(memory, queries, now)
        started = time.perf_counter()
        report = memory.prune_events("ops", now=now, max_age_days=keep_days)
        prune_s = time.perf_counter() - started
        kinds_after = _kinds(memory)
        _pulls(memory, 2, now)
        after = _pulls(memory, queries, now)
        load_end = os.getloadavg()[0]
    print(json.dumps({"before": before, "after": after, "prune_s": prune_s, "pruned": report.total,
                      "kinds_before": kinds_before, "kinds_after": kinds_after, "load": [load, load_end]}))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--days", type=float, default=180.0)
    parser.add_argument("--keep-days", type=float, default=30.0)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--vectors", action="store_true",
                        help="give every event a (random) vector first, as once the queue has caught up")
    parser.add_argument("--compare-src", type=Path, action="append", default=[],
                        help="also measure the package in this src/ folder on a copy of the same store (repeatable)")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(Path(args.worker[0]), datetime.fromisoformat(args.worker[1]), args.queries, args.keep_days)
        return
    rng = random.Random(0)
    now = datetime.now(UTC)
    here = Path(__file__).resolve().parent.parent / "src"
    variants = [("this checkout", here)] + [(str(p), _package_root(p)) for p in args.compare_src]
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        with Memory.open(data_dir=data, event_mission="ops") as memory:
            memory.ingest_repository(_repo(Path(tmp) / "ops"), mission="ops")
            events = _events(args.events, args.days, now, rng)
            started = time.perf_counter()
            for i in range(0, len(events), 1000):
                memory.record_events(events[i:i + 1000], "ops", now=now, embed=False)
            stored_s = time.perf_counter() - started
            if args.vectors:
                _random_vectors(memory, rng)
            memory.prepare_search()
        load = os.getloadavg()
        print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} after storing, {os.cpu_count()} cores")
        print(f"stored {args.events:,} events over {args.days:g} days in {stored_s:.1f} s"
              + (" (then a vector for each)" if args.vectors else ""), flush=True)
        results = []
        for n, (label, src) in enumerate(variants):
            copy = Path(tmp) / f"variant-{n}"
            shutil.copytree(data, copy)
            env = {**os.environ, "PYTHONPATH": str(src)}
            out = subprocess.run([sys.executable, __file__, "--worker", str(copy), now.isoformat(),
                                  "--queries", str(args.queries), "--keep-days", str(args.keep_days)],
                                 env=env, capture_output=True, text=True, check=True, timeout=7200)
            results.append((label, json.loads(out.stdout.strip().splitlines()[-1])))
            shutil.rmtree(copy)
    for label, r in results:
        kept = {k: v for k, v in r["kinds_before"].items() if k != "domain_event"}
        assert kept == {k: v for k, v in r["kinds_after"].items() if k != "domain_event"}, f"{label}: prune touched other kinds"
        print(f"\n{label} (load {r['load'][0]:.1f} at the first pulls, {r['load'][1]:.1f} at the end); other records: {kept}")
        print(f"  pull before pruning ({r['kinds_before'].get('domain_event', 0):,} events): p50 {_pct(r['before'], .5):.0f} ms, "
              f"p95 {_pct(r['before'], .95):.0f} ms over {args.queries} queries")
        print(f"  pruned {r['pruned']:,} events older than {args.keep_days:g} days in {r['prune_s']:.1f} s "
              f"(decisions, documents and commits untouched)")
        print(f"  pull after pruning ({r['kinds_after'].get('domain_event', 0):,} events): p50 {_pct(r['after'], .5):.0f} ms, "
              f"p95 {_pct(r['after'], .95):.0f} ms over {args.queries} queries")


if __name__ == "__main__":
    main()
