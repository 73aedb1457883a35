"""What the entry cap costs a pull: cap 10 against cap 40, alternating query by query in one process.

``bench_pull.py`` runs its variants one after the other, so on a shared machine a change of load
between them shows up as a difference. This opens the ``bench_pull.py`` store (``--data-root``, a
store built by it, e.g. ``/work/benchdata/store-100000``) twice, with ``max_digest_entries`` 10 and
40, and alternates the two over ``bench_pull``'s query set, measuring wall time and the process's
CPU time (which load on other processes hardly moves), and the entries each digest holds
(docs/adr/0067).

Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_digest_cap.py --store /work/benchdata/store-100000 \\
        [--budget 8000] [--queries 30] [--caps 10,40]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from bench_pull import query_set

from mission_memory.api import Memory
from mission_memory.config import load_settings


def _p95(values: list[float]) -> float:
    return sorted(values)[int(0.95 * (len(values) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, required=True, help="a store bench_pull.py built")
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--caps", default="10,40")
    args = parser.parse_args()
    caps = [int(c) for c in args.caps.split(",")]
    memories = {cap: Memory.open(load_settings(data_dir=args.store, max_digest_entries=cap)) for cap in caps}
    for memory in memories.values():
        memory.query("warm-up: open the store", token_budget=args.budget)
    results: dict[int, dict[str, list[float]]] = {cap: {"wall": [], "cpu": [], "entries": []} for cap in caps}
    for i, (task, filters) in enumerate(query_set(args.queries)):
        for cap in caps if i % 2 == 0 else reversed(caps):
            wall, cpu = time.perf_counter(), time.process_time()
            digest = memories[cap].query(task, token_budget=args.budget, filters=filters or None)
            results[cap]["wall"].append((time.perf_counter() - wall) * 1000)
            results[cap]["cpu"].append((time.process_time() - cpu) * 1000)
            results[cap]["entries"].append(len(digest.entries))
    for cap, r in results.items():
        print(f"budget {args.budget} cap {cap}: entries {statistics.mean(r['entries']):.1f}  "
              f"wall p50 {statistics.median(r['wall']):.1f} p95 {_p95(r['wall']):.1f} ms  "
              f"CPU p50 {statistics.median(r['cpu']):.1f} p95 {_p95(r['cpu']):.1f} ms")
    for memory in memories.values():
        memory.close()


if __name__ == "__main__":
    main()
