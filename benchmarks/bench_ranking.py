"""Ranking quality on real repositories: the ADR-topic sets, the history replay, rankings side by side.

Sets (``benchmarks/eval/README.md``): the corpus repository's (tests/corpora/tdr-docs.bundle) ADR-topic questions and its history replay
(commit subject -> the Markdown files it touched), ``npryce/adr-tools`` (vendored as
``benchmarks/eval/adr-tools.bundle``) and ``thomvaill/log4brains`` (cloned from ``--log4brains``, a
git URL or path; skipped when absent) and ``alphagov/govuk-infrastructure`` (``--govuk-infrastructure``,
a git URL or path, by default a clone already at ``DATA_ROOT/govuk-infrastructure``; skipped when
absent; see ``benchmarks/eval/README.md`` for how the one measured was prepared). Each repository is cloned, ingested once with the real
embedder into ``--data-root`` (kept, and reused when already there), every question's candidate
search runs once per distinct candidate-search setting (``per_kind_candidates``,
``critical_candidates``, ``feedback_docs``, ``feedback_terms``, and with per-kind candidates
``dense_window``), and then every ranking below is scored on its setting's candidate lists:

* ``before``: the ranking as it was (plain RRF, k = 60, equal weights, fused per record kind, dense
  candidates cut per layer);
* ``after``: today's defaults (:class:`mission_memory.retrieval.ranking.RankingParams`);
* extra variants named with ``--variant name:field=value,field=value`` (any RankingParams field).

Metrics per set: hit@1 / hit@3 of the target among decisions (or documents), MRR, current-before-old
on the questions that name an older record, recall@10 of the final ranking against the exact dense
ranking; and for the sets that ask about one target in English and in Ukrainian, the share of those
pairs whose first three decisions are the same records (``language_agreement``, ADR 0071). Also a
leave-one-set-out check of the fitted weights (ADR 0032) when ``--cross-validate``.

Usage::

    .venv/bin/python benchmarks/bench_ranking.py [--data-root /tmp/rk] [--replay-limit 0]
        [--log4brains /work/.mirror/thomvaill+log4brains/repo] [--govuk-infrastructure DIR]
        [--variant k20:rrf_k=20] [--json]

Prints one table per set to stdout; writes ``benchmarks/out/bench_ranking.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.records import Layer
from mission_memory.retrieval.candidates import CandidateLists
from mission_memory.retrieval.query import rank_candidates
from mission_memory.retrieval.ranking import BEFORE_PARAMS, Candidate, RankingParams, fuse
from mission_memory.retrieval.ranking_eval import (
    ExactDense,
    LanguageAgreement,
    PreparedQuestion,
    language_agreement,
    load_questions,
    prepare_question,
    replay_questions,
    score_ranking,
)

HERE = Path(__file__).resolve().parent

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.corpus import corpus_path  # noqa: E402  (the corpora of tests/corpora, one helper)

EVAL = HERE / "eval"
OUT_DIR = HERE / "out"
LAYERS = (Layer.DOMAIN, Layer.WORKFLOW, Layer.PRACTITIONER)


def rank_before(lists: CandidateLists, layers: Any, params: RankingParams) -> list[Candidate]:
    """The rank step as it was before ADR 0031: RRF per kind, then priors capped at 1.0."""
    fused: list[Candidate] = []
    for layer in layers:
        dense, bm25 = lists.dense.get(layer, {}), lists.bm25.get(layer, {})
        for kind in dense.keys() | bm25.keys():
            fused.extend(fuse(dense.get(kind, []), bm25.get(kind, []), params))
    out = []
    for cand in fused:
        prior = lists.priors[cand.record_id]
        factor = 1.0 + params.criticality_weight * (prior.criticality - 0.5)
        if prior.superseded:
            factor *= params.superseded_factor
        out.append(dataclasses.replace(cand, superseded=prior.superseded, score=min(1.0, cand.score * factor)))
    out.sort(key=lambda c: (-c.score, c.record_id))
    return out


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def ingested(name: str, source: str, data_root: Path) -> Memory:
    """Clone ``source`` under ``data_root`` and ingest it (once; a store already there is reused)."""
    repo, data = data_root / name, data_root / f"data-{name}"
    if not repo.exists():
        subprocess.run(["git", "clone", "-q", source, str(repo)], check=True)
    memory = Memory.open(load_settings(data_dir=data))
    if name not in memory.store.missions():
        log(f"ingesting {name} …")
        started = time.perf_counter()
        memory.ingest_repository(repo, mission=name)
        log(f"  {name}: {time.perf_counter() - started:.0f} s")
    return memory


def candidate_key(params: RankingParams) -> tuple[Any, ...]:
    """The RankingParams fields the candidate search reads: rankings that differ in them get their own lists."""
    return (params.per_kind_candidates, params.critical_candidates, params.feedback_docs, params.feedback_terms,
            params.dense_window if params.per_kind_candidates else None, params.vector_feedback_docs,
            params.vector_feedback_weight)


def prepared_set(memory: Memory, questions: list[Any], params: RankingParams) -> list[PreparedQuestion]:
    bare = {rid for rid, prior in memory.store.priors_of([r.id for b in memory.store.iterate() for r in b]).items()
            if prior.bare_merge}
    exact = ExactDense(memory.store, memory.embedder.model_id, exclude=bare)
    return [prepare_question(memory.store, memory.embedder, q, LAYERS, exact, params) for q in questions]


def parse_variant(text: str) -> tuple[str, RankingParams]:
    name, _, fields = text.partition(":")
    values: dict[str, Any] = {}
    types = {f.name: f.type for f in dataclasses.fields(RankingParams)}
    for item in filter(None, fields.split(",")):
        key, _, raw = item.partition("=")
        if key not in types:
            raise SystemExit(f"--variant {text!r}: RankingParams has no field {key!r}")
        kind = str(types[key])
        if "bool" in kind:
            values[key] = raw.strip().lower() in ("1", "true", "yes", "on")
        else:
            values[key] = raw if "str" in kind else (float(raw) if "." in raw else int(raw))
    return name, dataclasses.replace(RankingParams(), **values)


def add_source_arguments(parser: argparse.ArgumentParser) -> None:
    """The options naming where the evaluation repositories come from (shared by ``fit_calibration.py``)."""
    parser.add_argument("--bundle", default=str(corpus_path("tdr-docs.bundle")))
    parser.add_argument("--log4brains", default="/work/.mirror/thomvaill+log4brains/repo")
    parser.add_argument("--govuk-infrastructure", default="",
                        help="git URL or path of alphagov/govuk-infrastructure (default: DATA_ROOT/govuk-infrastructure)")
    parser.add_argument("--replay-limit", type=int, default=0, help="evenly spaced sample of the replay (0 = all)")
    parser.add_argument("--only", action="append", default=[], help="repository names to run (default: all)")


def eval_sources(args: argparse.Namespace) -> dict[str, tuple[str, list[str]]]:
    """Repository name -> (git URL or path, its question sets: file names under ``eval/`` or ``replay``)."""
    return {
        "tdr-docs": (args.bundle, ["questions-tdr-docs.jsonl", "replay"]),
        "adr-tools": (str(EVAL / "adr-tools.bundle"), ["questions-adr-tools.jsonl"]),
        "log4brains": (args.log4brains, ["questions-log4brains.jsonl"]),
        "govuk-infrastructure": (
            args.govuk_infrastructure or str(args.data_root / "govuk-infrastructure"),
            ["questions-govuk-infrastructure.jsonl"],
        ),
    }


def set_questions(args: argparse.Namespace, name: str, set_name: str) -> tuple[str, list[Any]]:
    """One question set of repository ``name``: its label (``repo/set``) and its questions."""
    questions = (replay_questions(args.data_root / name, args.replay_limit)
                 if set_name == "replay" else load_questions(EVAL / set_name))
    return f"{name}/{set_name.removeprefix('questions-').removesuffix('.jsonl')}", questions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-root", type=Path, default=Path("/tmp/mission-memory-bench-ranking"))
    add_source_arguments(parser)
    parser.add_argument("--variant", action="append", default=[], help="name:field=value,... (RankingParams)")
    parser.add_argument("--show-misses", action="store_true", help="list the questions 'after' misses at @3")
    args = parser.parse_args()
    args.data_root.mkdir(parents=True, exist_ok=True)

    rankings = {"before": BEFORE_PARAMS, "after": RankingParams()}
    rankings.update(parse_variant(v) for v in args.variant)
    sources = eval_sources(args)
    results: dict[str, dict[str, Any]] = {}
    parity: dict[str, dict[str, LanguageAgreement]] = {}
    rank_ms: dict[str, list[float]] = {}
    for name, (source, sets) in sources.items():
        if args.only and name not in args.only:
            continue
        if not Path(source).exists():
            log(f"skipping {name}: {source} not found")
            continue
        memory = ingested(name, source, args.data_root)
        try:
            for set_name in sets:
                label, questions = set_questions(args, name, set_name)
                log(f"{label}: searching {len(questions)} questions …")
                searched = {
                    key: prepared_set(memory, questions, p)
                    for key, p in {candidate_key(p): p for p in reversed(rankings.values())}.items()
                }
                prepared = searched[candidate_key(rankings["after"])]
                for lang in ("all", "en", "uk"):
                    if lang != "all" and len({p.question.lang for p in prepared}) == 1:
                        continue
                    key = label if lang == "all" else f"{label} [{lang}]"
                    results[key] = {}
                    for r, p in rankings.items():
                        subset = [q for q in searched[candidate_key(p)] if lang == "all" or q.question.lang == lang]
                        if not subset:
                            continue
                        started = time.perf_counter()
                        results[key][r] = score_ranking(
                            subset, LAYERS, p, rank=rank_before if r == "before" else rank_candidates
                        )
                        if lang == "all":
                            rank_ms.setdefault(r, []).append((time.perf_counter() - started) * 1000 / len(subset))
                for r, p in rankings.items():
                    agreement = language_agreement(
                        searched[candidate_key(p)], LAYERS, p, rank=rank_before if r == "before" else rank_candidates
                    )
                    if agreement.pairs:
                        parity.setdefault(label, {})[r] = agreement
                if args.show_misses:
                    for pair in parity.get(label, {}).get("after", LanguageAgreement(0, 0, 0.0, 0, ())).disagreeing:
                        log(f"  en/uk first three decisions differ (after): {pair[0]} / {pair[1]}")
                    after = results[label]["after"].ranks
                    before = results[label]["before"].ranks
                    for p in prepared:
                        rank = after[p.question.id]
                        if rank is None or rank > 3:
                            log(f"  miss {p.question.id}: after {rank}, before {before[p.question.id]}: "
                                f"{p.question.question}")
        finally:
            memory.close()

    columns = ["n", "hit@1", "hit@3", "MRR", "in-digest", "current>old", "recall@10"]
    print(f"{'set':34} {'ranking':10} " + " ".join(f"{c:>11}" for c in columns))
    for key, by_ranking in results.items():
        for ranking, score in by_ranking.items():
            row = score.as_row()
            print(f"{key:34} {ranking:10} " + " ".join(f"{row[c]!s:>11}" for c in columns))
    if parity:
        print("\nEnglish/Ukrainian parity: pairs of questions on one target whose first three decisions are"
              " the same records (docs/adr/0071)")
        pcols = ["pairs", "en=uk@3", "agree%", "overlap%", "both-hit"]
        print(f"{'set':34} {'ranking':10} " + " ".join(f"{c:>9}" for c in pcols))
        for key, by_ranking_p in parity.items():
            for ranking, agreement in by_ranking_p.items():
                prow = agreement.as_row()
                print(f"{key:34} {ranking:10} " + " ".join(f"{prow[c]!s:>9}" for c in pcols))
    print("rank step (fusion + priors + scoring), ms per question, mean over sets: "
          + ", ".join(f"{r} {sum(v) / len(v):.2f}" for r, v in rank_ms.items()))
    OUT_DIR.mkdir(exist_ok=True)
    out = {
        key: {r: {**s.as_row(), "ranks": s.ranks} for r, s in by.items()} for key, by in results.items()
    }
    out["_parity"] = {  # type: ignore[assignment]
        key: {r: {**a.as_row(), "disagreeing": a.disagreeing} for r, a in by.items()} for key, by in parity.items()
    }
    out["_rankings"] = {r: dataclasses.asdict(p) for r, p in rankings.items()}  # type: ignore[assignment]
    (OUT_DIR / "bench_ranking.json").write_text(json.dumps(out, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
