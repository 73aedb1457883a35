"""Pull latency on the two store backends side by side: SQLite/NumPy and Qdrant (client local mode).

For each size (default 100k; ``--sizes 100000,1000000``) the synthetic store of ``bench_pull.py``
(:func:`bench_pull.build_store`: varied English and Ukrainian texts, random unit vectors of dim 384
tagged with the real embedder's model id) is built or reused under ``--data-root``, then moved into
a Qdrant store in the client's local mode with ``mission-memory export``/``import``'s core
(:mod:`mission_memory.stores.transfer`), which also gives the export and import throughput.

Both memories then answer the same ``--queries`` tasks of ``bench_pull.query_set`` (every 5th with
filters) with the real embedder and tokenizer, one process, **alternating backend query by query**
(which goes first alternates too), so machine load falls on both alike. Reported per backend: p50
and p95 of the wall time and of the process CPU time of a pull, and the dense-search and BM25 shares
(wall, summed over the queries). ``--qdrant-spec`` picks the local mode (``qdrant+memory:`` by
default; ``qdrant+path:///dir`` keeps it on disk).

What local mode cannot show about a Qdrant server: local mode is the client's pure-Python/NumPy
re-implementation: it evaluates payload filters in Python point by point, scans every vector
(no HNSW), scores sparse vectors in Python, ignores payload indexes, and has no network hop,
serialisation, replication or concurrency. A server's latency comes from a different engine
(Rust, HNSW with filterable payload indexes, an inverted index for sparse vectors) plus a round
trip per request (pull makes about six) and is not predicted by these figures.

Usage::

    nice .venv/bin/python benchmarks/bench_backends.py [--sizes 100000] [--queries 40]
        [--data-root DIR] [--qdrant-spec qdrant+memory:]

Prints a table and writes ``benchmarks/out/bench_backends.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_pull import build_store, log, machine_note, pct, query_set  # noqa: E402
from local_mode_fill import amortised_appends  # noqa: E402

OUT_DIR = Path(__file__).resolve().parent / "out"


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _timed_stage(store: Any, name: str, sink: dict[str, float]) -> None:
    method = getattr(store, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            sink[name] = sink.get(name, 0.0) + (time.perf_counter() - t0) * 1000

    setattr(store, name, wrapper)


def measure(n: int, data_root: Path, n_queries: int, qdrant_spec: str) -> dict[str, Any]:
    from mission_memory.api import Memory
    from mission_memory.config import load_settings
    from mission_memory.stores.registry import open_store
    from mission_memory.stores.transfer import export_memory, import_memory

    sqlite_dir = data_root / f"sqlite-{n}"
    build = build_store(sqlite_dir, n)
    settings = load_settings(data_dir=sqlite_dir)
    sqlite_memory = Memory.open(settings)
    embedder = sqlite_memory.embedder
    figures: dict[str, Any] = {"records": n, "build": build}

    # The export is kept beside the store and reused (1M records: 4 GB, eight minutes to write).
    path = data_root / f"export-{n}.jsonl"
    export_s = None
    if not path.exists():
        t0 = time.perf_counter()
        partial = path.with_suffix(".partial")
        with partial.open("w", encoding="utf-8") as out:
            exported = export_memory(sqlite_memory.store, out)
        partial.replace(path)
        export_s = time.perf_counter() - t0
        log(f"[{n}] exported {exported.records} records in {export_s:.1f} s ({path.stat().st_size / 1e6:.0f} MB)")
    else:
        log(f"[{n}] reusing the export {path}")
    qdrant_store = open_store(qdrant_spec, data_root / f"qdrant-{n}", settings)
    rss_before = _rss_mb()
    t0 = time.perf_counter()

    def progress(phase: str, done: int, total: int) -> None:
        if done % 10_240 == 0 or done == total:
            log(f"[{n}] {phase}: {done}/{total} ({time.perf_counter() - t0:.0f} s)")

    # Local mode's own insertion is quadratic (local_mode_fill.py); the block makes it linear.
    with amortised_appends():
        imported = import_memory(qdrant_store, path, progress=progress)
    import_s = time.perf_counter() - t0
    log(f"[{n}] imported into Qdrant local mode in {import_s:.1f} s")
    figures["transfer"] = {
        "export_seconds": None if export_s is None else round(export_s, 1),
        "export_records_per_second": None if export_s is None else round(n / export_s),
        "file_mb": round(path.stat().st_size / 1e6), "import_seconds": round(import_s, 1),
        "import_records_per_second": round(n / import_s), "imported": imported.to_json(),
        "max_rss_mb_after_import": round(_rss_mb()), "max_rss_mb_before_import": round(rss_before),
    }
    qdrant_memory = Memory(settings, embedder=embedder, store=qdrant_store)
    memories = {"sqlite": sqlite_memory, "qdrant-local": qdrant_memory}
    stages: dict[str, dict[str, float]] = {name: {} for name in memories}
    for name, memory in memories.items():
        for stage in ("dense_search_by_layer", "bm25_search_by_layer"):
            _timed_stage(memory.store, stage, stages[name])
    tasks = query_set(n_queries)
    for name, memory in memories.items():  # warm-up: vector cache, tokenizer, model
        memory.query(tasks[0][0], filters=tasks[0][1] or None)
        stages[name].clear()
    wall: dict[str, list[float]] = {name: [] for name in memories}
    cpu: dict[str, list[float]] = {name: [] for name in memories}
    for i, (task, filters) in enumerate(tasks):
        order = list(memories) if i % 2 == 0 else list(reversed(memories))
        for name in order:
            c0, t0 = time.process_time(), time.perf_counter()
            memories[name].query(task, filters=filters or None)
            wall[name].append((time.perf_counter() - t0) * 1000)
            cpu[name].append((time.process_time() - c0) * 1000)
        if (i + 1) % 10 == 0:
            log(f"[{n}] {i + 1}/{len(tasks)} queries")
    figures["pull"] = {
        name: {
            "p50_ms": round(pct(wall[name], 50), 1), "p95_ms": round(pct(wall[name], 95), 1),
            "cpu_p50_ms": round(pct(cpu[name], 50), 1), "cpu_p95_ms": round(pct(cpu[name], 95), 1),
            "dense_ms_per_query": round(stages[name].get("dense_search_by_layer", 0.0) / len(tasks), 1),
            "bm25_ms_per_query": round(stages[name].get("bm25_search_by_layer", 0.0) / len(tasks), 1),
        }
        for name in memories
    }
    figures["max_rss_mb"] = round(_rss_mb())
    for memory in memories.values():
        memory.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--data-root", type=Path, default=None)
    parser.add_argument("--qdrant-spec", default="qdrant+memory:")
    args = parser.parse_args()
    data_root = args.data_root or Path(tempfile.mkdtemp(prefix="bench-backends-"))
    data_root.mkdir(parents=True, exist_ok=True)
    results = {"machine": machine_note(), "queries": args.queries, "qdrant_spec": args.qdrant_spec, "sizes": []}
    for n in (int(s) for s in args.sizes.split(",")):
        figures = measure(n, data_root, args.queries, args.qdrant_spec)
        figures["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
        results["sizes"].append(figures)
        print(f"\n{n} records ({args.queries} queries, alternating; load before {results['machine']['loadavg']},"
              f" after {figures['loadavg_after']})")
        print(f"{'backend':14} {'p50 ms':>8} {'p95 ms':>8} {'cpu p50':>8} {'cpu p95':>8} {'dense/q':>8} {'bm25/q':>8}")
        for name, row in figures["pull"].items():
            print(f"{name:14} {row['p50_ms']:8.1f} {row['p95_ms']:8.1f} {row['cpu_p50_ms']:8.1f} "
                  f"{row['cpu_p95_ms']:8.1f} {row['dense_ms_per_query']:8.1f} {row['bm25_ms_per_query']:8.1f}")
        print("transfer:", json.dumps(figures["transfer"]))
    OUT_DIR.mkdir(exist_ok=True)
    (OUT_DIR / "bench_backends.json").write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
