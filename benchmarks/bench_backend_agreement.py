"""Do the two backends give a pull the same entries? The shared corpus on SQLite and on Qdrant local mode.

The shared corpus (``tests/corpora/tdr-docs.bundle``: a repository with 39 ADRs, 669 commits) is
cloned and ingested once under ``--data-root`` (reused on later runs), exported from its SQLite
memory and imported into a fresh Qdrant store in the client's local mode
(:mod:`mission_memory.stores.transfer`, no re-embedding). Then the 32 questions of
``benchmarks/eval/questions-tdr-docs.jsonl`` are pulled on both (budget 6,000 tokens, mission
``tdr``), one process, the backends alternating question by question (which goes first alternates
too), so machine load falls on both alike.

Reported (docs/adr/0043): questions with the same entries in the same order, the same entry set,
the same first entry; the Jaccard overlap of the entry sets (mean, min); the target ADR among the
first three decisions on each; and, one level down, the BM25 lists the pull asked for (every call
of ``bm25_search_by_layer`` recorded on both stores): lists with the same records in the same
order, and the largest relative score difference. Pull latency per backend: p50/p95 of wall and
process CPU time per question (CPU is steadier on a loaded machine).

Usage::

        nice .venv/bin/python benchmarks/bench_backend_agreement.py [--data-root DIR] [--qdrant-spec qdrant+memory:]

Prints a table and writes ``benchmarks/out/bench_backend_agreement.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_pull import log, machine_note, pct  # noqa: E402

from tests.corpus import corpus_path  # noqa: E402  (the corpora of tests/corpora, one helper)

OUT_DIR = Path(__file__).resolve().parent / "out"
QUESTIONS = Path(__file__).resolve().parent / "eval" / "questions-tdr-docs.jsonl"
BUNDLE = corpus_path("tdr-docs.bundle")


def _recording(store: Any, sink: list[tuple[Any, ...]]) -> None:
    """Record every ``bm25_search_by_layer`` call of ``store``: its arguments and its answer."""
    method: Callable[..., Any] = store.bm25_search_by_layer

    def recorded(terms: Any, where: Any, limit: int) -> Any:
        found = method(terms, where, limit)
        sink.append((list(terms), repr(where), limit, {layer.value: [(h.record_id, h.score) for h in hits]
                                                       for layer, hits in found.items()}))
        return found

    store.bm25_search_by_layer = recorded


def _corpus_memory(data_root: Path) -> Any:
    """The corpus's SQLite memory, ingested on the first run."""
    from mission_memory.api import Memory
    from mission_memory.config import load_settings

    clone, data = data_root / "tdr-docs", data_root / "sqlite"
    done = data_root / "ingested"
    if not clone.exists():
        subprocess.run(["git", "clone", "-q", str(BUNDLE), str(clone)], check=True)
    memory = Memory.open(load_settings(data_dir=data))
    if not done.exists():
        log("ingesting the shared corpus (about two minutes)")
        memory.ingest_repository(clone, mission="tdr")
        done.write_text("ok", encoding="utf-8")
    return memory


def measure(data_root: Path, qdrant_spec: str) -> dict[str, Any]:
    from mission_memory.api import Memory
    from mission_memory.stores.registry import open_store
    from mission_memory.stores.transfer import export_memory, import_memory

    sqlite_memory = _corpus_memory(data_root)
    with tempfile.TemporaryDirectory(dir=data_root) as scratch:
        path = Path(scratch) / "tdr.jsonl"
        with path.open("w", encoding="utf-8") as out:
            export_memory(sqlite_memory.store, out, mission="tdr")
        t0 = time.perf_counter()
        store = open_store(qdrant_spec, Path(scratch), sqlite_memory.settings)
        imported = import_memory(store, path)
        import_s = time.perf_counter() - t0
        log(f"imported {imported.to_json()} in {import_s:.1f} s")
        qdrant_memory = Memory(sqlite_memory.settings, embedder=sqlite_memory.embedder, store=store)
        memories = {"sqlite": sqlite_memory, "qdrant": qdrant_memory}
        calls: dict[str, list[tuple[Any, ...]]] = {name: [] for name in memories}
        for name, memory in memories.items():
            _recording(memory.store, calls[name])
        questions = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
        for memory in memories.values():  # warm-up: model, tokenizer, vector cache
            memory.query(questions[0]["question"], token_budget=6000, filters={"mission": "tdr"})
        for sink in calls.values():
            sink.clear()
        wall: dict[str, list[float]] = {name: [] for name in memories}
        cpu: dict[str, list[float]] = {name: [] for name in memories}
        rows = []
        for i, item in enumerate(questions):
            ids: dict[str, list[str]] = {}
            top3: dict[str, list[str]] = {}
            for name in (list(memories) if i % 2 == 0 else list(reversed(memories))):
                c0, t0 = time.process_time(), time.perf_counter()
                digest = memories[name].query(item["question"], token_budget=6000, filters={"mission": "tdr"})
                wall[name].append((time.perf_counter() - t0) * 1000)
                cpu[name].append((time.process_time() - c0) * 1000)
                entries = [e.record for e in digest.entries]
                ids[name] = [r.id for r in entries]
                top3[name] = [r.provenance.ref for r in entries if r.kind.value == "decision"][:3]
            a, b = ids["sqlite"], ids["qdrant"]
            union = set(a) | set(b)
            rows.append({
                "id": item["id"], "same_order": a == b, "same_set": set(a) == set(b),
                "same_first": a[:1] == b[:1], "jaccard": len(set(a) & set(b)) / len(union) if union else 1.0,
                "target_top3": {name: any(ref.endswith(item["target"]) for ref in refs) for name, refs in top3.items()},
            })
    lists_same, lists_total, worst = 0, 0, 0.0
    for s_call, q_call in zip(calls["sqlite"], calls["qdrant"], strict=True):
        assert s_call[:3] == q_call[:3], "the pulls asked the stores different BM25 questions"
        for layer, s_hits in s_call[3].items():
            q_hits = q_call[3][layer]
            lists_total += 1
            lists_same += [rid for rid, _ in s_hits] == [rid for rid, _ in q_hits]
            for (s_id, s_score), (q_id, q_score) in zip(s_hits, q_hits, strict=False):
                if s_id == q_id and s_score:
                    worst = max(worst, abs(q_score - s_score) / abs(s_score))
    n = len(rows)
    figures = {
        "questions": n,
        "same_order": sum(r["same_order"] for r in rows),
        "same_set": sum(r["same_set"] for r in rows),
        "same_first": sum(r["same_first"] for r in rows),
        "jaccard_mean": round(sum(r["jaccard"] for r in rows) / n, 3),
        "jaccard_min": round(min(r["jaccard"] for r in rows), 3),
        "target_top3": {name: sum(r["target_top3"][name] for r in rows) for name in ("sqlite", "qdrant")},
        "bm25_lists_same_order": lists_same, "bm25_lists": lists_total,
        "bm25_max_relative_score_difference": worst,
        "pull": {name: {"p50_ms": round(pct(wall[name], 50), 1), "p95_ms": round(pct(wall[name], 95), 1),
                        "cpu_p50_ms": round(pct(cpu[name], 50), 1), "cpu_p95_ms": round(pct(cpu[name], 95), 1)}
                 for name in memories},
        "records": sum(sum(kinds.values()) for kinds in sqlite_memory.store.counts().values()),
        "rows": rows,
    }
    for memory in memories.values():
        memory.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-root", type=Path, default=None)
    parser.add_argument("--qdrant-spec", default="qdrant+memory:")
    args = parser.parse_args()
    data_root = args.data_root or Path(tempfile.mkdtemp(prefix="bench-agreement-"))
    data_root.mkdir(parents=True, exist_ok=True)
    machine = machine_note()
    figures = measure(data_root, args.qdrant_spec)
    figures["machine"] = machine
    figures["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    n = figures["questions"]
    print(f"\nshared corpus, {figures['records']} records, {n} questions (load before {machine['loadavg']},"
          f" after {figures['loadavg_after']})")
    print(f"same entries, same order: {figures['same_order']}/{n}; same set: {figures['same_set']}/{n};"
          f" same first: {figures['same_first']}/{n}; Jaccard mean {figures['jaccard_mean']}"
          f" (min {figures['jaccard_min']}); target ADR in top 3: sqlite {figures['target_top3']['sqlite']},"
          f" qdrant {figures['target_top3']['qdrant']}")
    print(f"BM25 lists identical: {figures['bm25_lists_same_order']}/{figures['bm25_lists']};"
          f" max relative score difference {figures['bm25_max_relative_score_difference']:.3g}")
    print(f"{'backend':8} {'p50 ms':>8} {'p95 ms':>8} {'cpu p50':>8} {'cpu p95':>8}")
    for name, row in figures["pull"].items():
        print(f"{name:8} {row['p50_ms']:8.1f} {row['p95_ms']:8.1f} {row['cpu_p50_ms']:8.1f} {row['cpu_p95_ms']:8.1f}")
    OUT_DIR.mkdir(exist_ok=True)
    (OUT_DIR / "bench_backend_agreement.json").write_text(json.dumps(figures, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
