"""What the untrusted-text envelope (ADR 0021) costs: tokens per entry, entries per budget, packing time.

Packs the same synthetic candidates (English and Ukrainian decision and document texts of 300–1500
characters, with provenance like an ingested repository's) with :func:`pack_digest` at several
budgets, with the real ``cl100k_base`` tokenizer and the default 10 % margin, and prints per budget:
entries that fit, tokens used, the envelope's share of the digest (the marker lines and the header
sentence, counted in place) and the median packing time.

Usage::

    .venv/bin/python benchmarks/bench_digest_envelope.py [--candidates 40] [--repeats 15]

Prints a table to stdout; nothing is written.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from datetime import UTC, datetime

from mission_memory.records import Layer, Provenance, Record, RecordKind, SourceKind
from mission_memory.retrieval.digest import pack_digest
from mission_memory.retrieval.ranking import Candidate
from mission_memory.tokens import TiktokenTokenizer

WORDS_EN = "upload proxy retries ledger sqlite backoff archive operator decision scan queue field laptop".split()
WORDS_UK = "проксі завантаження повтор журнал рішення черга перевірка антивірус оператор архів".split()
LAYERS = (Layer.WORKFLOW, Layer.DOMAIN, Layer.PRACTITIONER)


def _candidates(n: int, seed: int = 7) -> list[Candidate]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        words = WORDS_UK if i % 2 else WORDS_EN
        text = " ".join(rng.choice(words) for _ in range(rng.randint(50, 220))) + "."
        kind = RecordKind.DECISION if i % 4 == 0 else RecordKind.DOC_CHUNK
        record = Record.build(
            kind=kind,
            title=f"ADR-{i:04d}: {' '.join(rng.choice(words) for _ in range(6))}",
            text=text,
            provenance=Provenance(kind=SourceKind.ADR if kind is RecordKind.DECISION else SourceKind.DOC,
                                  ref=f"docs/adr/{i:04d}-entry.md#decision", uri=f"file:///repo/docs/adr/{i:04d}.md",
                                  mission="bench", time=datetime(2025, 1, 1, tzinfo=UTC), commit="ab" * 20),
            attributes={"status": "accepted", "decision": text[:300]} if kind is RecordKind.DECISION else {},
        )
        out.append(Candidate(rowid=i, score=1.0 - i / (2 * n), record=record))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--candidates", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    tokenizer = TiktokenTokenizer(safety_margin=0.1)
    candidates = _candidates(args.candidates)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    print(f"{'budget':>7} {'entries':>7} {'tokens':>7} {'envelope':>9} {'per entry':>9} {'pack ms p50':>11}")
    for budget in (1000, 2500, 8000, 32000):
        times = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            text, entries, used, _ = pack_digest("retry uploads", "all", candidates, budget, tokenizer, 400, LAYERS,
                                                 now=now)
            times.append((time.perf_counter() - started) * 1000)
        lines = text.split("\n")
        marker_lines = [line for line in lines if line.startswith("<<<")]
        header_sentence = next(line for line in lines if line.startswith("Text between <<<"))
        envelope = sum(tokenizer.count(line + "\n") for line in marker_lines) + tokenizer.count(header_sentence + "\n")
        per_entry = sum(tokenizer.count(line + "\n") for line in marker_lines) / max(1, len(entries))
        print(f"{budget:>7} {len(entries):>7} {used:>7} {envelope / used:>8.1%} {per_entry:>9.1f}"
              f" {statistics.median(times):>11.1f}")


if __name__ == "__main__":
    main()
