"""Degraded-mode pull latency during a flood, this checkout beside another one, in one run (issue 24).

A degraded pull reads the flood's events twice: triage groups the most critical ones into kinds
(docs/adr/0057) and the crisis timeline reads the window's events to count, group and chain them
(docs/adr/0040). This benchmark times ``Memory.query`` on a store in the middle of a flood:

* **hadoop** — loghub's Hadoop MapReduce sample of a real network failure (``--loghub DIR``; one error
  repeated 147 times beside two FATAL lines and distinct errors), 2,000 lines;
* **retry-loop N** — ``--flood-events N`` (default 5,000) generated events in 10 minutes: one retry
  loop's error at criticality 0.8 repeated with a changing attempt number, 12 distinct critical errors,
  warnings and info lines.

Each dataset is shifted so that its flood is happening now, replayed into a fresh store per variant
through ``Memory.record_events`` in batches of 10 with the clock at each batch, and queried ``--pulls``
times (default 20) at an 8,000-token budget with the clock at its last event (when the checkout's
``query`` takes one: a 200,000-event store takes minutes to write, and its flood must not age out of
degraded mode meanwhile), with the question alternating. Variants run in worker processes (``PYTHONPATH`` set to their ``src/``),
their pulls interleaved in rounds of 2, so load changes hit them alike. Printed per dataset and
variant: the process's first pull (its store just written, nothing read yet), then pull p50 / p95
and the digest's token count; the load average is printed beside each round.

Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_triage_latency.py [--loghub DIR] [--flood-events 5000 ...]
        [--batch 10] [--pulls 20] [--compare-src DIR]...

``--compare-src DIR`` (repeatable) measures another checkout's ``src/`` (``git archive c55bf25 src |
tar -x -C DIR``; DIR or DIR/src) beside this one. Works in temporary folders; nothing else is written.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

QUESTIONS = (
    "Which containers were assigned to the reduce tasks?",
    "What is going on with the job right now and what should the on-call engineer do first?",
)
BUDGET = 8000


def _package_root(folder: Path) -> Path:
    """The folder holding ``mission_memory/``: ``folder`` or ``folder/src`` (else the run would measure this one twice)."""
    for candidate in (folder, folder / "src"):
        if (candidate / "mission_memory" / "__init__.py").is_file():
            return candidate.resolve()
    raise SystemExit(f"--compare-src {folder}: no mission_memory package in it or in its src/ folder")


def _hadoop_events(loghub: Path) -> tuple[list[dict[str, Any]], datetime]:
    """The Hadoop sample's events as mappings, and the middle of its longest flood."""
    from mission_memory.operations.scenarios import LOGHUB_DATASETS, loghub_scenario

    path = LOGHUB_DATASETS["Hadoop"][0]
    if (loghub / path).is_file():
        text = (loghub / path).read_text(encoding="utf-8")
    else:
        text = subprocess.run(["git", "--git-dir", str(loghub), "show", f"HEAD:{path}"], capture_output=True,
                              text=True, check=True, timeout=120).stdout
    scenario = loghub_scenario("Hadoop", text)
    start, end = max(scenario.floods, key=lambda f: f[1] - f[0])
    events = [{"id": e.id, "time": e.time.isoformat(), "sector": e.sector, "type": e.type,
               "criticality": e.criticality, "source": e.source, "text": e.text} for e in scenario.events]
    return events, start + (end - start) / 2


def _retry_loop_events(n: int, seed: int = 0) -> tuple[list[dict[str, Any]], datetime]:
    """``n`` events in 10 minutes: a retry loop's repeated error, 12 distinct errors, warnings and info."""
    rng = random.Random(seed)
    start = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    step = timedelta(minutes=10) / n
    distinct = {rng.randrange(n): k for k in range(12)}
    out = []
    for i in range(n):
        if i in distinct:
            k = distinct[i]
            kind, crit, text = f"E{k}", 0.9, f"Distinct failure {chr(65 + k)}: component {k} stopped answering"
        elif i % 3 == 0:
            kind, crit = "E-retry", 0.8
            text = f"ERROR IN CONTACTING RM. attempt {i} to 10.0.{i % 250}.7:8030 after {rng.randint(1, 999)} ms"
        elif i % 3 == 1:
            kind, crit, text = "W1", 0.5, f"Slow heartbeat from container_{i:06d} ({rng.randint(1, 99)} s)"
        else:
            kind, crit, text = "I1", 0.2, f"Assigned container_{i:06d} to attempt_{i:06d}_r_000001"
        out.append({"id": f"retry-{i}", "time": (start + i * step).isoformat(), "sector": "RMContainerAllocator",
                    "type": kind, "criticality": crit, "source": "bench", "text": text})
    return out, start + timedelta(minutes=9)


def _worker(data_dir: Path, events_file: Path) -> None:
    """Replay the events shifted to now, then answer ``pull K`` lines with JSON figures (stdin/stdout)."""
    from mission_memory.api import Memory

    spec = json.loads(events_file.read_text(encoding="utf-8"))
    at = datetime.fromisoformat(spec["at"])
    shift = datetime.now(UTC) - at
    mission = spec["mission"]
    events = []
    for e in spec["events"]:
        moment = datetime.fromisoformat(e["time"])
        if moment <= at:
            events.append({**e, "time": (moment + shift).isoformat()})
    events.sort(key=lambda e: e["time"])
    with Memory.open(data_dir=data_dir, event_mission=mission) as memory:
        memory.embedder.embed_passages(["warm up"])
        size = int(os.environ.get("MM_BENCH_BATCH", "10"))
        for i in range(0, len(events), size):
            batch = events[i:i + size]
            memory.record_events(batch, mission, now=datetime.fromisoformat(batch[-1]["time"]), embed=False)
        memory.prepare_search()
        # the pulls' clock is the flood's last event, however long the writing took (a checkout whose
        # query has no clock reads the wall clock: its flood ages while the store is written)
        clock = {"now": datetime.fromisoformat(events[-1]["time"])} if "now" in inspect.signature(memory.query).parameters else {}
        started = time.perf_counter()
        memory.query(QUESTIONS[0], filters={"mission": mission}, token_budget=BUDGET, **clock)  # the process's first pull
        first = (time.perf_counter() - started) * 1000
        print(json.dumps({"ready": len(events), "first": first}), flush=True)
        asked = 0
        for line in sys.stdin:
            count = int(line.split()[1])
            times, tokens, degraded = [], [], 0
            for _ in range(count):
                started = time.perf_counter()
                digest = memory.query(QUESTIONS[asked % len(QUESTIONS)], filters={"mission": mission},
                                      token_budget=BUDGET, **clock)
                times.append((time.perf_counter() - started) * 1000)
                tokens.append(digest.tokens_used)
                degraded += "Mode: degraded" in digest.text
                asked += 1
            print(json.dumps({"ms": times, "tokens": tokens, "degraded": degraded}), flush=True)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--loghub", type=Path, help="a loghub checkout or bare git dir (Hadoop sample)")
    parser.add_argument("--flood-events", type=int, nargs="+", default=[5000],
                        help="events of the generated retry-loop flood, one dataset per size (0: none)")
    parser.add_argument("--batch", type=int, default=10,
                        help="events per record_events call while writing (10: a live feed; 5000: a bulk load)")
    parser.add_argument("--pulls", type=int, default=20, help="pulls per dataset and variant")
    parser.add_argument("--compare-src", type=Path, action="append", default=[],
                        help="also measure the package in this src/ folder (repeatable)")
    parser.add_argument("--worker", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(*args.worker)
        return
    here = Path(__file__).resolve().parent.parent / "src"
    variants = [("this checkout", here)] + [(str(p), _package_root(p)) for p in args.compare_src]
    datasets: list[tuple[str, list[dict[str, Any]], datetime]] = []
    if args.loghub:
        datasets.append(("hadoop", *_hadoop_events(args.loghub)))
    else:
        print("hadoop: skipped (no --loghub DIR; `git clone --depth 1 https://github.com/logpai/loghub`)")
    for size in args.flood_events:
        if size:
            datasets.append((f"retry-loop {size}", *_retry_loop_events(size)))
    load = os.getloadavg()
    print(f"load average at start: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores; "
          f"{args.pulls} pulls per variant at {BUDGET:,} tokens, interleaved in rounds of 2", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, events, at in datasets:
            spec = Path(tmp) / f"{len(rows)}.json"
            spec.write_text(json.dumps({"mission": "flood", "at": at.isoformat(), "events": events}), encoding="utf-8")
            workers = []
            for label, src in variants:
                env = {**os.environ, "PYTHONPATH": str(src), "MM_BENCH_BATCH": str(args.batch)}
                data = Path(tmp) / f"data-{len(rows)}-{len(workers)}"
                proc = subprocess.Popen([sys.executable, __file__, "--worker", str(data), str(spec)], env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                assert proc.stdout is not None
                ready = json.loads(proc.stdout.readline())
                workers.append((label, proc, {"ms": [], "tokens": [], "degraded": 0, "stored": ready["ready"],
                                              "first": ready["first"]}))
            loads = []
            done = 0
            while done < args.pulls:
                step = min(2, args.pulls - done)
                for _label, proc, acc in workers:
                    assert proc.stdin is not None and proc.stdout is not None
                    proc.stdin.write(f"pull {step}\n")
                    proc.stdin.flush()
                    got = json.loads(proc.stdout.readline())
                    acc["ms"] += got["ms"]
                    acc["tokens"] += got["tokens"]
                    acc["degraded"] += got["degraded"]
                loads.append(os.getloadavg()[0])
                done += step
            for label, proc, acc in workers:
                assert proc.stdin is not None
                proc.stdin.close()
                proc.wait(timeout=120)
                rows.append((name, label, acc, min(loads), max(loads)))
    print()
    print(f"{'dataset':18} {'variant':28} {'events':>6} {'degraded':>8} {'first ms':>8} {'p50 ms':>7} {'p95 ms':>7} "
          f"{'tokens':>6} {'load (1 min) during':>19}")
    for name, label, acc, low, high in rows:
        tokens = sum(acc["tokens"]) / len(acc["tokens"]) if acc["tokens"] else float("nan")
        print(f"{name:18} {label[-28:]:28} {acc['stored']:>6} {acc['degraded']:>4}/{len(acc['ms']):<3} "
              f"{acc['first']:>8.0f} {_pct(acc['ms'], .5):>7.0f} {_pct(acc['ms'], .95):>7.0f} {tokens:>6.0f} {low:>9.1f}–{high:<9.1f}")
    load = os.getloadavg()
    print(f"\nload average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")


if __name__ == "__main__":
    main()
