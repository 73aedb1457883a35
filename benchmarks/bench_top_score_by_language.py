"""How likely the ranking says its best candidate is, per language, against how often it is right.

A calibrated score (docs/adr/0072) should read the same for a question and its translation. This
asks the ADR question sets of ``bench_ranking.py`` (``benchmarks/eval/``, stores ingested under
``--data-root`` by that benchmark) and splits the questions three ways: English; Ukrainian with a
BM25 hit (an English product name in the question, say); Ukrainian that shares no word with any
record (BM25 found nothing, docs/adr/0076). Per group and set: questions, how often the best
candidate of all kinds is a record of the target file, and the mean and median calibrated score of
that best candidate. ``--weights FILE`` scores with another calibration (a JSON object of feature
weights, as ``fit_calibration.py`` prints it) beside the shipped one, in the same run.

Usage::

    .venv/bin/python benchmarks/bench_top_score_by_language.py --data-root DATA_ROOT \\
        [--govuk-infrastructure DIR] [--log4brains PATH] [--weights old.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from mission_memory.retrieval.calibration import CALIBRATION, Calibration
from mission_memory.retrieval.query import rank_candidates
from mission_memory.retrieval.ranking import RankingParams

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_ranking import (  # noqa: E402
    LAYERS,
    add_source_arguments,
    eval_sources,
    ingested,
    log,
    prepared_set,
    set_questions,
)

GROUPS = ("en", "uk, BM25 hit", "uk, no BM25 hit")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-root", type=Path, required=True, help="bench_ranking.py's data root")
    add_source_arguments(parser)
    parser.add_argument("--weights", type=Path, default=None, help="JSON feature weights scored beside the shipped")
    args = parser.parse_args()
    models = {"shipped": CALIBRATION}
    if args.weights:
        models["--weights"] = Calibration(json.loads(args.weights.read_text(encoding="utf-8")), str(args.weights))
    rows: dict[tuple[str, str, str], list[tuple[bool, float]]] = {}
    for name, (source, sets) in eval_sources(args).items():
        if args.only and name not in args.only:
            continue
        if not source or (not Path(source).exists() and "://" not in source):
            log(f"{name}: no source, skipped")
            continue
        memory = ingested(name, source, args.data_root)
        try:
            for set_name in sets:
                if set_name == "replay":
                    continue
                label, questions = set_questions(args, name, set_name)
                log(f"{label}: {len(questions)} questions …")
                for prep in prepared_set(memory, questions, RankingParams()):
                    lexical = any(hits for by_kind in prep.lists.bm25.values() for hits in by_kind.values())
                    group = "en" if prep.question.lang == "en" else GROUPS[1] if lexical else GROUPS[2]
                    for model_name, model in models.items():
                        top = rank_candidates(prep.lists, LAYERS, RankingParams(), model)[0]
                        right = prep.paths.get(top.record_id) in prep.question.targets
                        rows.setdefault((model_name, label, group), []).append((right, top.score))
        finally:
            memory.close()
    print("| calibration | set | questions | best is the target | best's score, mean | median |")
    print("|---|---|---|---|---|---|")
    for model_name in models:
        for group in GROUPS:
            pooled: list[tuple[bool, float]] = []
            for (m, label, g), found in sorted(rows.items()):
                if m == model_name and g == group:
                    pooled += found
                    _row(model_name, f"{label} [{group}]", found)
            if pooled:
                _row(model_name, f"all [{group}]", pooled)


def _row(model: str, label: str, found: list[tuple[bool, float]]) -> None:
    scores: Any = np.array([s for _, s in found])
    print(f"| {model} | {label} | {len(found)} | {sum(r for r, _ in found)} | {scores.mean():.3f} | "
          f"{float(np.median(scores)):.3f} |")


if __name__ == "__main__":
    main()
