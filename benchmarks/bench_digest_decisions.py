"""The held-out measure on our own sets: is the ADR among the digest's first three decisions?

The outside evaluation of issue 12 asks ADR-topic questions through pull at budget 4,000 and counts
a hit when the ADR is among the first three decisions of the digest (after selection, stale
replacement and near-duplicate suppression, which ``bench_ranking.py`` does not run). This runs the
ADR-topic questions of ``benchmarks/eval/`` (those counted among decisions) through
``Memory.query`` on the stores ``bench_ranking.py`` ingested under ``--data-root``, once per ranking
and entry cap of :data:`WAYS` (docs/adr/0050, 0066, 0067, 0068, 0072), and prints hits per language, the
mean entries and tokens of the digests, how many of their document entries ingest marked generated,
and how many commits they show marked superseded by a later one.

Usage::

    nice .venv/bin/python benchmarks/bench_digest_decisions.py --data-root /tmp/rk [--budget 4000]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import mission_memory.retrieval.query as query_module
from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.retrieval.ranking import RankingParams

EVAL = Path(__file__).resolve().parent / "eval"
SETS = ("tdr-docs", "adr-tools", "log4brains", "govuk-infrastructure")
WAYS: dict[str, tuple[RankingParams, int | None]] = {
    "before": (RankingParams(per_kind_candidates=False, vector_feedback_docs=0, fold_sections=False,
                             generated_factor=1.0, replaced_commits=False, calibrated=False), 10),
    "uncalibrated": (RankingParams(calibrated=False), None),
    "today": (RankingParams(), None),
}
"""Each way's ranking and entry cap (None: the settings' default): per-layer candidates without feedback
at the 10-entry cap (before ADR 0050); ADRs 0066–0068 (sections folded, budget-driven digest,
boilerplate weighted down) with per-kind scores (before ADR 0072); today's defaults (one calibrated
scale, ADR 0072). The figures of the ways between (ADRs 0066, 0067) are in those ADRs."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-root", type=Path, required=True)
    parser.add_argument("--budget", type=int, default=4000)
    parser.add_argument("--only", action="append", default=[], help="set names to run (default: all)")
    args = parser.parse_args()
    original = query_module.tuned_params
    for name in SETS:
        if args.only and name not in args.only:
            continue
        data = args.data_root / f"data-{name}"
        if not data.exists():
            print(f"{name:22} skipped: {data} not found")
            continue
        lines = (EVAL / f"questions-{name}.jsonl").read_text(encoding="utf-8").splitlines()
        questions = [q for q in (json.loads(line) for line in lines if line.strip()) if q["among"] == "decision"]
        for label, (ranking, cap) in WAYS.items():
            memory = Memory.open(load_settings(data_dir=data, max_digest_entries=cap))
            def params(store: Any, base: RankingParams | None = None, ranking: RankingParams = ranking) -> RankingParams:
                return original(store, ranking)

            query_module.tuned_params = params  # what run_query calls for its defaults
            hits: dict[str, list[int]] = {}
            misses = []
            entries: list[int] = []
            used: list[int] = []
            documents = generated = replaced = 0
            for q in questions:
                digest = memory.query(q["question"], token_budget=args.budget, filters={"mission": name})
                entries.append(len(digest.entries))
                used.append(digest.tokens_used)
                documents += sum(1 for e in digest.entries if e.record.kind.value == "doc_chunk")
                generated += sum(1 for e in digest.entries if e.record.attributes.get("generated"))
                replaced += sum(1 for e in digest.entries if e.record.kind.value == "commit" and e.superseded)
                first = [e.record.provenance.ref.split("#", 1)[0] for e in digest.entries
                         if e.record.kind.value == "decision"][:3]
                ok = q["target"] in first
                tally = hits.setdefault(q["lang"], [0, 0])
                tally[0] += ok
                tally[1] += 1
                if not ok:
                    misses.append(q["id"])
            counts = "  ".join(f"{lang} {n}/{of}" for lang, (n, of) in sorted(hits.items()))
            mean = sum(entries) / len(entries) if entries else 0.0
            print(f"{name:22} {label:9} {counts}  entries {mean:.1f}  tokens {sum(used) / max(1, len(used)):.0f}"
                  f"  generated {generated}/{documents} documents  replaced commits {replaced}  misses {misses}",
                  flush=True)
            memory.close()
        query_module.tuned_params = original


if __name__ == "__main__":
    main()
