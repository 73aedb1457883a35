"""Digest packing of this checkout against another checkout's: byte-identical output, and its cost.

For every question of the ranking evaluation sets (``benchmarks/eval/questions-*.jsonl``), the
task set of ``bench_pull.py`` and the titles of up to ``--commit-titles`` stored commits, the pull's
steps 1–3 run once (this checkout's code) on a real store; then both checkouts'
:func:`~mission_memory.retrieval.digest.pack_digest` pack the same candidates with the same nonce,
clock and tokenizer at several budgets, taking turns at going first. Reported: how many digests
differ (text, tokens used, omitted, each entry's block, excerpt and token count) — the target is
none — and the CPU time of packing (``time.thread_time``), p50 / p95 / mean per way.

``--compare-src DIR`` names the other checkout's ``src`` folder (``git archive main src | tar -x -C
X``, then ``X/src``); its ``retrieval/digest.py`` is loaded under another module name.

Usage::

    nice .venv/bin/python benchmarks/bench_digest_packing.py --data-dir STORE_DIR --compare-src X/src
        [--budgets 600,2000,8000] [--commit-titles 150]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_pull import module_of_checkout, query_set  # noqa: E402

EVAL = Path(__file__).resolve().parent / "eval"


def questions(memory: Any, commit_titles: int) -> list[str]:
    out = []
    for path in sorted(EVAL.glob("questions-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line)["question"])
    out += [task for task, _ in query_set(40)]
    from mission_memory.records import RecordKind

    titles = [r.title for batch in memory.store.iterate() for r in batch if r.kind is RecordKind.COMMIT]
    return out + titles[:commit_titles]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--compare-src", type=Path, required=True)
    parser.add_argument("--budgets", default="600,2000,8000")
    parser.add_argument("--commit-titles", type=int, default=150)
    args = parser.parse_args()

    from mission_memory.api import Memory
    from mission_memory.config import load_settings
    from mission_memory.errors import BudgetError
    from mission_memory.retrieval import digest as this_digest
    from mission_memory.retrieval.filters import Scope, layers_in_scope
    from mission_memory.retrieval.query import rank_candidates, search_candidates, select_candidates
    from mission_memory.retrieval.ranking import tuned_params
    from mission_memory.stores.filters import SearchFilter

    other = module_of_checkout(args.compare_src.resolve(), "mission_memory/retrieval/digest.py", "other_digest")
    memory = Memory.open(load_settings(data_dir=args.data_dir))
    store, embedder, tokenizer, settings = memory.store, memory.embedder, memory.tokenizer, memory.settings
    budgets = [int(b) for b in args.budgets.split(",")]
    layers = layers_in_scope(Scope.ALL)
    where = SearchFilter(layers, None)
    params = tuned_params(store)
    now = datetime(2026, 12, 1, tzinfo=UTC)
    ways = {"this checkout": this_digest.pack_digest, "compare-src": other.pack_digest}
    cpu: dict[str, list[float]] = {name: [] for name in ways}
    compared = differing = 0
    examples: list[str] = []
    tasks = questions(memory, args.commit_titles)
    for i, task in enumerate(tasks):
        lists = search_candidates(store, embedder, task, where, params)
        ranked = rank_candidates(lists, layers, params)
        candidates, _ = select_candidates(store, embedder.model_id, task, where, ranked, params,
                                          settings.max_digest_entries)
        for budget in budgets:
            out = {}
            for name in list(ways) if (i + budget) % 2 == 0 else list(reversed(ways)):
                c0 = time.thread_time()
                try:
                    packed = ways[name](
                        task, "all", candidates, budget, tokenizer, settings.max_entry_tokens, layers, now,
                        nonce="0123456789ab",
                    )
                except BudgetError as exc:  # a budget too small raises the same error both ways
                    packed = repr(exc)
                cpu[name].append((time.thread_time() - c0) * 1000)
                if isinstance(packed, str):
                    out[name] = packed
                    continue
                text, entries, used, omitted = packed  # entries' token counts are read here, after timing
                out[name] = (text, [(e.record.id, e.score, e.text, e.block, e.tokens) for e in entries], used, omitted)
            compared += 1
            if out["this checkout"] != out["compare-src"]:
                differing += 1
                if len(examples) < 3:
                    examples.append(f"{task!r} at budget {budget}")
    memory.close()
    print(f"bench_digest_packing · {time.strftime('%Y-%m-%dT%H:%M:%S')} · store {args.data_dir} · "
          f"{len(tasks)} tasks × budgets {budgets} = {compared} digests")
    print(f"digests differing (text, tokens, omitted, entries' blocks/excerpts/token counts): {differing}"
          + (f" e.g. {examples}" if examples else ""))
    print(f"{'way':<14} {'cpu p50 ms':>10} {'cpu p95 ms':>10} {'cpu mean ms':>11}")
    for name, values in cpu.items():
        v = np.asarray(values)
        print(f"{name:<14} {np.percentile(v, 50):>10.2f} {np.percentile(v, 95):>10.2f} {v.mean():>11.2f}")


if __name__ == "__main__":
    main()
