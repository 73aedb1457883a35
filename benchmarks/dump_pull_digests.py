"""Write the digests of whole pulls to a JSON file, to compare two checkouts byte for byte.

Runs ``bench_pull.py``'s task set (every 5th with a filter) through ``Memory.query`` at two budgets
on a store and writes, per pull, the digest text, record ids, scores, tokens used and omitted.
The envelope nonce is fixed, since token counts (and so where an excerpt is cut) depend on it.
Run it once per checkout, choosing the code with ``PYTHONPATH``, then compare the files::

    PYTHONPATH=X/src nice .venv/bin/python benchmarks/dump_pull_digests.py STORE_DIR main.json [--queries 50]
    nice .venv/bin/python benchmarks/dump_pull_digests.py STORE_DIR this.json [--queries 50]
    python3 benchmarks/dump_pull_digests.py --compare main.json this.json

Note that every pull logs a retrieval event in the store, as ``bench_pull.py``'s do.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def dump(data_dir: Path, out: Path, queries: int) -> None:
    from bench_pull import query_set

    import mission_memory.retrieval.query as query_module
    from mission_memory.api import Memory
    from mission_memory.config import load_settings

    query_module.new_nonce = lambda: "0123456789ab"  # type: ignore[attr-defined]
    memory = Memory.open(load_settings(data_dir=data_dir))
    rows = []
    for task, filters in query_set(queries):
        for budget in (2000, 8000):
            d = memory.query(task, token_budget=budget, filters=filters or None)
            rows.append({"task": task, "budget": budget, "text": d.text, "ids": [e.record.id for e in d.entries],
                         "scores": [e.score for e in d.entries], "tokens_used": d.tokens_used, "omitted": d.omitted})
    memory.close()
    out.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    print(f"{out}: {len(rows)} digests")


def compare(a: Path, b: Path) -> None:
    left, right = json.loads(a.read_text(encoding="utf-8")), json.loads(b.read_text(encoding="utf-8"))
    same = sum(x == y for x, y in zip(left, right, strict=True))
    print(f"{len(left)} digests, {same} identical, {len(left) - same} differ")
    for x, y in zip(left, right, strict=True):
        if x != y:
            print(f"  differs: {x['task']!r} at budget {x['budget']} (same records: {x['ids'] == y['ids']})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs=2, type=Path, help="STORE_DIR OUT.json, or with --compare two JSON files")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--compare", action="store_true")
    args = parser.parse_args()
    if args.compare:
        compare(*args.paths)
    else:
        dump(args.paths[0], args.paths[1], args.queries)


if __name__ == "__main__":
    main()
