"""What the write that makes a PostgreSQL mission cross the HNSW threshold costs it and other writers.

docs/adr/0084: from :data:`~mission_memory.stores.postgres_vectors.HNSW_MIN_ROWS` vectors a mission
gets a partial HNSW index. For each ``--sizes`` N, a mission is filled with N − ``--crossing`` rows
through :class:`~mission_memory.stores.postgres.PostgresStore` (threshold N), then one write of
``--crossing`` rows crosses it, while another store (another pool of sessions, as another server
process) writes one record to another mission every ``--interval`` seconds. Reported: how long the
crossing write took, how long until the index was valid and recorded (searches use it from then),
and the latencies of the other writer's writes that overlapped the time from the crossing write's
start until the index was valid (count, p50, max), and of those that started after the crossing
write returned (count, max). Vectors are real e5 embeddings (``--vectors``, rows reused beyond the file with noise
of norm 0.3, as ``bench_postgres_vectors.py``) or random ones.

``--compare-src DIR`` runs the same measurement with another checkout's ``src/`` (``git archive
COMMIT src | tar -x -C DIR``) in the same run, each code on a database of its own, alternating by size.

Usage::

    nice .venv/bin/python benchmarks/bench_hnsw_crossing.py [--sizes 40000,50000] [--vectors real.npy]
        [--compare-src DIR] [--postgres-url URL]

Prints a table and writes ``benchmarks/out/bench_hnsw_crossing.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_postgres_vectors import mission_vectors  # noqa: E402  (the same rows as that benchmark)

OUT = Path(__file__).resolve().parent / "out" / "bench_hnsw_crossing.json"
DIM = 384
MODEL = "bench-model"
NOISE = 0.3
"""Norm of the noise added to a real vector reused beyond the file's rows."""


def _records(mission: str, start: int, n: int) -> list[Any]:
    from mission_memory.records import Provenance, Record, RecordKind, SourceKind

    kinds = [RecordKind.DOC_CHUNK, RecordKind.COMMIT, RecordKind.DECISION, RecordKind.DOMAIN_EVENT]
    return [Record.build(
        kind=kinds[(start + i) % len(kinds)], title=f"record {start + i}", text=f"text of record {start + i}",
        provenance=Provenance(kind=SourceKind.DOC, ref=f"{mission}-{start + i}", uri=f"urn:{mission}:{start + i}",
                              mission=mission, time=datetime(2025, 1, 1, tzinfo=UTC)),
    ) for i in range(n)]


def worker(url: str, size: int, crossing: int, interval: float, vectors_path: str | None) -> dict[str, Any]:
    """One measurement (see the module docstring) with the ``mission_memory`` on ``sys.path``."""
    import psycopg

    import mission_memory
    from mission_memory.stores.postgres import PostgresStore

    real = np.load(vectors_path).astype(np.float32) if vectors_path else None
    rng = np.random.default_rng(size)
    mission = f"m{size}"
    store = PostgresStore(url, hnsw_min_rows=size)
    started = time.perf_counter()
    for start in range(0, size - crossing, 2000):
        n = min(2000, size - crossing - start)
        store.upsert(_records(mission, start, n), mission_vectors(rng, real, start, n, NOISE), MODEL)
    fill_s = time.perf_counter() - started
    other = PostgresStore(url, hnsw_min_rows=size)
    latencies: list[tuple[float, float]] = []  # (start, seconds) of each of the other writer's writes
    stop = threading.Event()

    def write_elsewhere() -> None:
        i = 0
        while not stop.is_set():
            t0 = time.perf_counter()
            other.upsert(_records("other", i, 1), mission_vectors(rng, None, i, 1, NOISE), MODEL)
            latencies.append((t0, time.perf_counter() - t0))
            i += 1
            stop.wait(interval)

    name = store.vectors.index_name(MODEL, mission)
    thread = threading.Thread(target=write_elsewhere)
    thread.start()
    time.sleep(2 * interval)
    t0 = time.perf_counter()
    store.upsert(_records(mission, size - crossing, crossing), mission_vectors(rng, real, size - crossing, crossing, NOISE), MODEL)
    written = time.perf_counter()
    write_s = written - t0
    with psycopg.connect(url, autocommit=True) as conn:
        while True:
            valid = conn.execute(
                "SELECT 1 FROM vector_indexes x JOIN pg_index i ON i.indexrelid = to_regclass(x.name)"
                " WHERE x.name = %s AND i.indisvalid", (name,)).fetchone()
            if valid or time.perf_counter() - t0 > 1800:
                break
            time.sleep(0.05)
    ready = time.perf_counter()
    valid_s = ready - t0
    stop.set()
    thread.join()  # a write in flight ends (and is counted) first
    window = [(start, seconds) for start, seconds in latencies if start + seconds >= t0 and start <= ready]
    during = [seconds for _, seconds in window]
    after = [seconds for start, seconds in window if start >= written]
    store.close()
    other.close()
    return {
        "code": str(Path(mission_memory.__file__).resolve().parents[1]), "mission_vectors": size,
        "vectors": "real e5 (+noise)" if real is not None else "random", "fill_s": round(fill_s, 1),
        "crossing_rows": crossing, "crossing_write_s": round(write_s, 2), "index_valid_after_s": round(valid_s, 1),
        "other_writes_during": len(during),
        "other_write_p50_ms": round(float(np.percentile(during, 50)) * 1000, 1) if during else None,
        "other_write_max_ms": round(max(during) * 1000, 1) if during else None,
        "other_writes_after_the_crossing_write": len(after),
        "other_write_max_ms_after_the_crossing_write": round(max(after) * 1000, 1) if after else None,
        "load_avg": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    from tests.postgres_server import start_server, stop_server

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="40000,50000")
    parser.add_argument("--crossing", type=int, default=200, help="rows of the write that crosses the threshold")
    parser.add_argument("--interval", type=float, default=0.25, help="seconds between the other writer's writes")
    parser.add_argument("--vectors", type=Path, help="real passage embeddings (.npy, n x 384, unit rows)")
    parser.add_argument("--compare-src", type=Path, help="another checkout's src/ measured in the same run")
    parser.add_argument("--postgres-url", help="a server (its maintenance database); default: one started here")
    parser.add_argument("--worker", nargs=2, metavar=("URL", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        url, size = args.worker
        json.dump(worker(url, int(size), args.crossing, args.interval, str(args.vectors) if args.vectors else None),
                  sys.stdout)
        return
    import psycopg

    server = None
    admin = args.postgres_url
    if admin is None:
        server = start_server(Path(tempfile.mkdtemp(prefix="mm-bench-crossing-")))
        admin = server.url()
    codes: list[tuple[str, Path | None]] = [("this checkout", None)]
    if args.compare_src:
        src = args.compare_src if (args.compare_src / "mission_memory").is_dir() else args.compare_src / "src"
        codes.insert(0, (f"compare-src {args.compare_src}", src))
    results = []
    try:
        for size in [int(s) for s in args.sizes.split(",")]:
            for label, src in codes:
                database = f"crossing_{size}_{len(results)}"
                with psycopg.connect(admin, autocommit=True) as conn:
                    conn.execute(f"CREATE DATABASE {database}")
                url = admin.rsplit("/", 1)[0] + f"/{database}"
                env = dict(os.environ, **({"PYTHONPATH": str(src)} if src else {}))
                cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", url, str(size),
                       "--crossing", str(args.crossing), "--interval", str(args.interval),
                       *(["--vectors", str(args.vectors)] if args.vectors else [])]
                print(f"[{size}] {label} …", file=sys.stderr, flush=True)
                done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
                if done.returncode != 0:
                    raise SystemExit(f"worker failed:\n{done.stderr[-3000:]}")
                row = {"variant": label, **json.loads(done.stdout)}
                print(json.dumps(row), file=sys.stderr, flush=True)
                results.append(row)
                with psycopg.connect(admin, autocommit=True) as conn:
                    conn.execute(f"DROP DATABASE {database} WITH (FORCE)")
    finally:
        if server is not None:
            stop_server(server)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(results, indent=2))
    print("| variant | vectors | crossing write s | index valid after s | other writes during: n, p50 / max ms |"
          " after the crossing write returned: n, max ms |")
    print("|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['variant']} | {r['mission_vectors']:,} | {r['crossing_write_s']} | {r['index_valid_after_s']} |"
              f" {r['other_writes_during']}, {r['other_write_p50_ms']} / {r['other_write_max_ms']} |"
              f" {r['other_writes_after_the_crossing_write']}, {r['other_write_max_ms_after_the_crossing_write']} |")
    print(f"\nJSON: {OUT}")


if __name__ == "__main__":
    main()
