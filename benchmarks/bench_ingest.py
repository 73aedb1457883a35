"""Ingest rate on the corpus repository (tests/corpora), the embedding of whole passages beside their heads (ADR 0034).

Clones ``tests/corpora/tdr-docs.bundle`` once, then ingests it into a fresh data dir per mode,
one mode after the other in the same run with the same embedder instance:

* ``whole``: every record's passage text embedded whole (up to the embedder's own character cap), the
  behaviour before ADR 0034 (``passage_heads={}``);
* ``heads``: the default, document chunks embedded by their head
  (:data:`mission_memory.ingest.passage_heads.HEAD_CHARS`).

For each it prints records/s overall (wall clock) and per kind, and the CPU seconds the process spent
(all threads), which on a machine shared with other work says more than the wall clock: records per
CPU-second times the cores is the rate the same work reaches on an idle machine. Embedding time of a
batch is attributed to its records in proportion to the characters embedded. An unchanged re-ingest
is run after each mode and must embed nothing. ``--repeat`` alternates the modes that many times.

After each mode's ingest the ADR-topic tasks of ``tests/test_shared_corpus.py`` are asked (budget 6,000)
and the rank of the expected ADR among the digest's decisions is printed, so a speed-up that costs
ranking shows in the same run.

``--embed-only K`` is the quick form for a busy machine: the corpus's records are built once (their
passages captured without embedding), every K-th record of each kind is kept, and its passages are
embedded in both modes batch by batch, alternating, with the real embedder; per kind it prints records/s
and records per CPU-second, and the corpus rate they extrapolate to. Storing, reading and git cost are
left out there (the full form measures them).

Usage::

    nice .venv/bin/python benchmarks/bench_ingest.py [--modes whole,heads] [--repeat 1]
        [--bundle tests/corpora/tdr-docs.bundle]
    nice .venv/bin/python benchmarks/bench_ingest.py --embed-only 8
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.embeddings import Embedder, make_embedder
from mission_memory.ingest.passage_heads import DOC_CHUNK_HEADS
from mission_memory.ingest.repository import ingest_repository
from mission_memory.records import RecordKind

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.corpus import corpus_path  # noqa: E402  (the corpora of tests/corpora, one helper)

BUNDLE = corpus_path("tdr-docs.bundle")
MODES: dict[str, dict[RecordKind, int] | None] = {"whole": {}, "heads": dict(DOC_CHUNK_HEADS)}
ADR_TOPIC_TASKS = [  # the same tasks as tests/test_shared_corpus.py
    ("Which frontend framework should the web application use?", "0003"),
    ("How do users log in and which identity provider do we run?", "0005"),
    ("Pick a library to generate Excel spreadsheets for metadata", "0031"),
    ("Increase the SQS message visibility timeout for the file check lambdas", "0020"),
    ("Disable Keycloak users who have been inactive for a long time", "0037"),
    ("Which software identifies the file format of uploaded records?", "0010"),
    ("Як користувачі входять у систему і який провайдер ідентичності ми використовуємо?", "0005"),
    ("Яку бібліотеку обрати для генерації таблиць Excel?", "0031"),
    ("Вимкнути неактивних користувачів Keycloak", "0037"),
    ("Який сервіс безперервної інтеграції ми використовуємо?", "0024"),
    ("Як ми перевіряємо метадані CSV файлів?", "0035"),
    ("Чому ми використовуємо AWS Step Functions для перевірок файлів?", "0027"),
    ("Як налаштувати GOV.UK Notify для різних середовищ?", "0014"),
    ("як ми автентифікуємо користувачів?", "0005"),
    ("який фронтенд-фреймворк ми обрали?", "0003"),
    ("Should we monitor requests with AWS X-Ray?", "0029"),
    ("How are judgment transfer URLs structured?", "0023"),
]


def adr_ranks(memory: Memory) -> list[int | None]:
    """Rank (1-based) of each task's ADR among its digest's decisions, None when absent."""
    ranks: list[int | None] = []
    for task, adr in ADR_TOPIC_TASKS:
        digest = memory.query(task, token_budget=6000)
        decisions = [
            e.record.provenance.ref.rsplit("/", 1)[-1][:4] for e in digest.entries if e.record.kind.value == "decision"
        ]
        ranks.append(decisions.index(adr) + 1 if adr in decisions else None)
    return ranks


class TimedEmbedder:
    """Wraps an embedder and records, per batch, the seconds spent and the characters embedded."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.batches: list[tuple[float, list[int]]] = []

    def embed_query(self, text: str) -> Any:
        return self.inner.embed_query(text)

    def embed_passages(self, texts: Sequence[str]) -> Any:
        t0 = time.perf_counter()
        out = self.inner.embed_passages(texts)
        self.batches.append((time.perf_counter() - t0, [len(t) for t in texts]))
        return np.asarray(out)


def run_mode(name: str, repo: Path, work: Path, embedder: Embedder) -> dict[str, Any]:
    timed = TimedEmbedder(embedder)
    memory = Memory(load_settings(data_dir=work / f"data-{name}-{time.time_ns()}"), embedder=embedder)
    kinds: list[str] = []
    real_upsert = memory.store.upsert

    def upsert(records: Any, vectors: Any, model_id: str) -> Any:
        kinds.extend(r.kind.value for r in records)
        return real_upsert(records, vectors, model_id)

    memory.store.upsert = upsert  # type: ignore[method-assign]
    try:
        cpu0, wall0 = time.process_time(), time.perf_counter()
        report = ingest_repository(memory.store, timed, repo, mission="tdr", passage_heads=MODES[name])
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        again = ingest_repository(memory.store, timed, repo, mission="tdr", passage_heads=MODES[name])
        ranks = adr_ranks(memory)
    finally:
        memory.close()
    embed_s: Counter[str] = Counter()
    index = 0
    for seconds, lengths in timed.batches[: len(timed.batches)]:
        total = sum(lengths) or 1
        for length in lengths:
            if index < len(kinds):
                embed_s[kinds[index]] += seconds * length / total
            index += 1
    per_kind = Counter(kinds)
    return {
        "mode": name, "records": report.embedded, "wall_s": wall, "cpu_s": cpu,
        "rate": report.embedded / wall, "rate_cpu": report.embedded / cpu,
        "per_kind": {k: (n, embed_s[k]) for k, n in sorted(per_kind.items())},
        "reingest_embedded": again.embedded, "folders": report.costliest_folders(5), "ranks": ranks,
    }


class CapturingEmbedder:
    """Collects the records' passages instead of embedding them (for ``--embed-only``); unit vectors out."""

    model_id = "capture"
    dim = 4

    def embed_query(self, text: str) -> Any:
        return np.full(self.dim, 0.5, dtype=np.float32)

    def embed_passages(self, texts: Sequence[str]) -> Any:
        return np.full((len(texts), self.dim), 0.5, dtype=np.float32)


def embed_only(repo: Path, work: Path, every: int, embedder: Embedder) -> None:
    from mission_memory.ingest.passage_heads import passage_text

    memory = Memory(load_settings(data_dir=work / "capture"), embedder=CapturingEmbedder())
    try:
        ingest_repository(memory.store, CapturingEmbedder(), repo, mission="tdr")
        records = [r for batch in memory.store.iterate() for r in batch]
    finally:
        memory.close()
    records.sort(key=lambda r: (r.kind.value, r.id))
    counts = Counter(r.kind.value for r in records)
    sample = [r for i, r in enumerate(records) if i % every == 0]
    wall: dict[str, Counter[str]] = {m: Counter() for m in MODES}
    cpu: dict[str, Counter[str]] = {m: Counter() for m in MODES}
    done: Counter[str] = Counter()
    for start in range(0, len(sample), 32):
        batch = sample[start : start + 32]
        order = list(MODES) if (start // 32) % 2 == 0 else list(MODES)[::-1]
        for mode in order:
            texts = [passage_text(r, MODES[mode]) for r in batch]
            c0, w0 = time.process_time(), time.perf_counter()
            embedder.embed_passages(texts)
            dc, dw = time.process_time() - c0, time.perf_counter() - w0
            total = sum(len(t) for t in texts) or 1
            for r, t in zip(batch, texts, strict=True):
                wall[mode][r.kind.value] += dw * len(t) / total
                cpu[mode][r.kind.value] += dc * len(t) / total
        done.update(r.kind.value for r in batch)
        print(f"  {start + len(batch)}/{len(sample)} sampled records embedded in both modes", file=sys.stderr, flush=True)
    print(f"embed-only, every {every}th record of {len(records)} ({len(sample)} sampled), modes alternating per batch")
    print(f"{'mode':<6} {'kind':<10} {'sampled':>7} {'rec/s':>7} {'rec/cpu-s':>9}   corpus records")
    for mode in MODES:
        est_wall = est_cpu = 0.0
        for kind in sorted(done):
            n = done[kind]
            print(f"{mode:<6} {kind:<10} {n:>7} {n / wall[mode][kind]:>7.1f} {n / cpu[mode][kind]:>9.2f}   {counts[kind]}")
            est_wall += counts[kind] * wall[mode][kind] / n
            est_cpu += counts[kind] * cpu[mode][kind] / n
        print(f"{mode:<6} {'corpus':<10} {len(records):>7} {len(records) / est_wall:>7.1f} {len(records) / est_cpu:>9.2f}"
              f"   (extrapolated: {est_wall:.0f} s wall, {est_cpu:.0f} CPU-s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, default=BUNDLE)
    parser.add_argument("--modes", default="whole,heads")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--embed-only", type=int, default=0, metavar="K",
                        help="quick form: embed every K-th record's passage in both modes, alternating")
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    for mode in modes:
        if mode not in MODES:
            sys.exit(f"unknown mode {mode!r}: use {', '.join(MODES)}")
    work = Path(tempfile.mkdtemp(prefix="mm-bench-ingest-"))
    try:
        repo = work / "repo"
        subprocess.run(["git", "clone", "-q", str(args.bundle), str(repo)], check=True)
        embedder = make_embedder(load_settings().embedder)
        if args.embed_only:
            print(f"bench_ingest --embed-only · {os.cpu_count()} CPUs · load avg before {os.getloadavg()[0]:.1f}")
            embed_only(repo, work, args.embed_only, embedder)
            print(f"load avg after {os.getloadavg()[0]:.1f}")
            return
        print(f"bench_ingest · {os.cpu_count()} CPUs · load avg before {os.getloadavg()[0]:.1f} · {args.bundle}")
        results = []
        for round_ in range(args.repeat):
            for mode in modes:
                print(f"  round {round_ + 1}: {mode} …", file=sys.stderr, flush=True)
                results.append(run_mode(mode, repo, work, embedder))
        print(f"load avg after {os.getloadavg()[0]:.1f}")
        print(f"{'mode':<6} {'records':>7} {'wall s':>7} {'rec/s':>6} {'cpu s':>7} {'rec/cpu-s':>9} "
              f"{'re-ingest embedded':>18}  per kind: records, embed s, rec/s")
        for r in results:
            kinds = "; ".join(
                f"{k} {n}, {s:.1f} s, {n / s if s else 0:.1f}/s" for k, (n, s) in r["per_kind"].items()
            )
            print(f"{r['mode']:<6} {r['records']:>7} {r['wall_s']:>7.1f} {r['rate']:>6.1f} {r['cpu_s']:>7.1f} "
                  f"{r['rate_cpu']:>9.2f} {r['reingest_embedded']:>18}  {kinds}")
        for r in results:
            top3 = sum(1 for rank in r["ranks"] if rank is not None and rank <= 3)
            print(f"{r['mode']:<6} ADR-topic tasks: ADR among the first three decisions in {top3} of "
                  f"{len(ADR_TOPIC_TASKS)}; ranks {r['ranks']}")
        last = results[-1]
        print("costliest folders (last run): " + ", ".join(
            f"{f['folder']} {f['records']} records {f['seconds']:.1f} s" for f in last["folders"]))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
