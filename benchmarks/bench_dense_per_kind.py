"""Pull's candidate search with dense candidates per layer against per record kind (docs/adr/0050),
alternating query by query in one process.

Each query runs step 1 of pull (:func:`~mission_memory.retrieval.query.search_candidates`: BM25
beside the dense search, then the hits' priors) three times: per layer (before docs/adr/0050), per
kind, and today's defaults (per kind, plus Rocchio feedback for a task in another script than its
records), alternating the order, on the same store with the same query vector (embedded once
beforehand, so the embedding's time is left out); wall and process CPU time per way, and how many
dense hits each way hands on to fusion. The stores are those of ``bench_pull.py`` (``--data-root``).

Usage::

    nice .venv/bin/python benchmarks/bench_dense_per_kind.py --data-root DIR [--sizes 10000,100000] [--queries 50]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.records import Layer
from mission_memory.retrieval.query import search_candidates
from mission_memory.retrieval.ranking import RankingParams
from mission_memory.stores.filters import SearchFilter

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_pull import query_set  # noqa: E402  (the same varied English and Ukrainian tasks)

LAYERS = (Layer.DOMAIN, Layer.WORKFLOW, Layer.PRACTITIONER)


class EmbeddedOnce:
    """The store's embedder with every task embedded beforehand (so the timing is the search's)."""

    def __init__(self, memory: Memory, tasks: list[str]) -> None:
        self.model_id = memory.embedder.model_id
        self.vectors = {task: memory.embedder.embed_query(task) for task in tasks}

    def embed_query(self, task: str) -> npt.NDArray[np.float32]:
        return self.vectors[task]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-root", type=Path, required=True)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    ways = {
        "per layer": RankingParams(per_kind_candidates=False, vector_feedback_docs=0),
        "per kind": RankingParams(vector_feedback_docs=0),
        "today": RankingParams(),  # per kind, and Rocchio feedback for a task in another script
    }
    print(f"{'records':>8} {'way':10} {'wall p50':>9} {'wall p95':>9} {'cpu p50':>8} {'cpu p95':>8} {'dense hits p50':>15}")
    for size in (int(s) for s in args.sizes.split(",")):
        memory = Memory.open(load_settings(data_dir=args.data_root / f"store-{size}"))
        tasks = [task for task, _ in query_set(args.queries)]
        embedder = EmbeddedOnce(memory, tasks)
        where = SearchFilter(LAYERS)
        for params in ways.values():  # load the vector table (and its kinds) before timing
            search_candidates(memory.store, embedder, tasks[0], where, params)  # type: ignore[arg-type]
        wall: dict[str, list[float]] = {w: [] for w in ways}
        cpu: dict[str, list[float]] = {w: [] for w in ways}
        hits: dict[str, list[int]] = {w: [] for w in ways}
        for i, task in enumerate(tasks):
            for way in (list(ways) if i % 2 == 0 else list(reversed(ways))):  # alternate who goes first
                started, started_cpu = time.perf_counter(), time.process_time()
                lists = search_candidates(memory.store, embedder, task, where, ways[way])  # type: ignore[arg-type]
                cpu[way].append((time.process_time() - started_cpu) * 1000)
                wall[way].append((time.perf_counter() - started) * 1000)
                hits[way].append(sum(len(h) for by_kind in lists.dense.values() for h in by_kind.values()))
        for way in ways:
            w, c = sorted(wall[way]), sorted(cpu[way])
            p95 = max(0, round(len(w) * 0.95) - 1)
            print(f"{size:>8} {way:10} {statistics.median(w):9.2f} {w[p95]:9.2f} {statistics.median(c):8.2f} "
                  f"{c[p95]:8.2f} {statistics.median(hits[way]):15.0f}")
        memory.close()


if __name__ == "__main__":
    main()
