"""Fit and cross-validate the relevance calibration (docs/adr/0072) on the project's evaluation sets.

Sets: the four ADR question sets and the shared corpus' history replay of ``bench_ranking.py``
(``benchmarks/eval/README.md``), and REALTALK's dialog evidence (``bench_dialog_recall.py``'s store,
built there first). For every question the pull's candidate search runs once; every fused candidate
of every kind, ranked as before calibration (fused per kind, priors applied), becomes one sample:

* features: :func:`~mission_memory.retrieval.calibration.candidate_features`;
* label (relevant = 1): for the ADR sets, a record of a target file (its decision record, its
  document chunks) or a commit that changed a target file; for the replay, a record of a target file
  (its commits are left out: the question is a commit's subject, and the replay scores documents);
  for REALTALK, an evidence turn.

Questions nothing answers (``--unanswerable-every``): every N-th REALTALK question asked of each
repository, and every ADR question asked of REALTALK's conversations; each of their candidates is
irrelevant. They count in the fit's second stage only (the listwise first stage needs a relevant
candidate), and together weigh as much as one set: without them a task the store knows nothing
about got the same probabilities as one it answers. For them the tables give the best candidate's
score per question (mean, 90th percentile, share at 0.3 or more), and the same for the other sets.

Sets are weighted equally (each set's samples sum to the same weight). Leave-one-set-out: for each
set the model is fitted on the others and scored on it — log loss, Brier score, expected calibration
error (ECE, ten equal-width bins) and, for the ADR sets, hit@1 / hit@3 of the target among decisions,
for REALTALK R@5 / R@10 of the ranking, beside the uncalibrated ranking (per-kind scores after the
criticality prior, read as if they were probabilities). The out-of-fold predictions of every set,
pooled, give the reliability table the ADR quotes. Last, the model is fitted on every set and its
weights printed as the Python literal that ``CALIBRATION`` holds.

Usage::

    .venv/bin/python benchmarks/fit_calibration.py --data-root /work/rankdata \\
        --govuk-infrastructure /work/rankdata/govuk-infrastructure \\
        --realtalk /work/.mirror/danny911kr+REALTALK/repo --dialog-store /work/dialogdata/store [--l2 1.0]

Prints tables to stdout; writes ``benchmarks/out/fit_calibration.json``.
"""

from __future__ import annotations

import argparse
import functools
import json
import pickle
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.records import Layer, RecordKind
from mission_memory.retrieval.calibration import (
    CALIBRATION,
    FEATURES,
    Calibration,
    candidate_features,
    fit_calibration,
    fit_listwise,
)
from mission_memory.retrieval.candidates import CandidateLists
from mission_memory.retrieval.query import fuse_per_kind, rank_candidates, search_candidates
from mission_memory.retrieval.ranking import Candidate, RankingParams, apply_priors
from mission_memory.retrieval.ranking_eval import (
    EvalQuestion,
    PreparedQuestion,
    score_ranking,
)
from mission_memory.stores.filters import QueryFilters, SearchFilter

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dialog_recall import conversation_files, evidence_ids, turns_of  # noqa: E402
from bench_ranking import (  # noqa: E402
    LAYERS,
    add_source_arguments,
    eval_sources,
    ingested,
    log,
    prepared_set,
    set_questions,
)

OUT = Path(__file__).resolve().parent / "out" / "fit_calibration.json"
_BINS = 10


@dataclass
class SetSamples:
    """One evaluation set's samples: per question, the features and labels of its fused candidates."""

    name: str
    features: list[npt.NDArray[np.float64]]
    labels: list[npt.NDArray[np.float64]]
    uncalibrated: list[npt.NDArray[np.float64]]
    prepared: list[PreparedQuestion]
    lists: list[CandidateLists]
    wanted: list[set[str]]
    evidence: list[int]
    candidates: list[list[Candidate]] = field(default_factory=list)
    unanswerable: bool = False

    def stacked(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        return np.vstack(self.features), np.concatenate(self.labels)

    def add(self, kept: list[Candidate], lists: CandidateLists, labels: list[float]) -> None:
        """One question's fused candidates, their labels and the lists they came from (the features
        follow from them: :meth:`refresh_features`)."""
        self.candidates.append(kept)
        self.labels.append(np.array(labels, dtype=np.float64))
        self.uncalibrated.append(np.array([c.score for c in kept]))
        self.lists.append(lists)

    def refresh_features(self) -> None:
        """Compute the features from the kept candidates (so a cache stays valid when a feature is added)."""
        self.features = [candidate_features(c, lists) for c, lists in zip(self.candidates, self.lists, strict=True)]


def _uncalibrated(lists: CandidateLists) -> list[Candidate]:
    """The candidates as ranked before calibration: fused per kind, priors applied (what calibration maps)."""
    before = replace(RankingParams(), calibrated=False)
    return apply_priors(fuse_per_kind(lists, LAYERS, before), before, lists.priors)


def adr_samples(name: str, memory: Memory, questions: list[Any]) -> SetSamples:
    """Samples of an ADR question set or a replay set (labels from the target paths)."""
    prepared = prepared_set(memory, questions, RankingParams())
    out = SetSamples(name, [], [], [], prepared, [], [], [])
    for prep in prepared:
        fused = _uncalibrated(prep.lists)
        commits = memory.store.get([c.record_id for c in fused
                                    if (p := prep.lists.priors.get(c.record_id)) and p.kind is RecordKind.COMMIT])
        own = prep.question.id.removeprefix("replay-") if prep.question.id.startswith("replay-") else None
        targets = set(prep.question.targets)
        labels = []
        keep = []
        for i, cand in enumerate(fused):
            commit = commits.get(cand.record_id)
            if commit is not None:
                if own is not None:
                    continue  # the replay scores documents only; its commits are not what it asks about
                relevant = bool(targets & set(commit.attributes.get("files") or ()))
            else:
                relevant = prep.paths.get(cand.record_id) in targets
            labels.append(1.0 if relevant else 0.0)
            keep.append(i)
        out.add([fused[i] for i in keep], prep.lists, labels)
        out.wanted.append(set())
        out.evidence.append(0)
    return out


def dialog_samples(store_dir: Path, realtalk: Path, every: int) -> SetSamples:
    """Samples of REALTALK (labels: the evidence turns), every ``every``-th question."""
    memory = Memory.open(load_settings(data_dir=store_dir))
    out = SetSamples("realtalk", [], [], [], [], [], [], [])
    try:
        asked = 0
        for name, conv in conversation_files(realtalk):
            stored = {t["dia_id"] for t in turns_of(conv)}
            where = SearchFilter((Layer.DOMAIN,), QueryFilters(mission=name))
            for q in [q for q in conv.get("qa", []) if q.get("evidence")][::every]:
                known = {f"{name}:{e}" for e in evidence_ids(q["evidence"]) if e in stored}
                if not known:
                    continue
                lists = search_candidates(memory.store, memory.embedder, q["question"], where, RankingParams())
                fused = _uncalibrated(lists)
                records = memory.store.get([c.record_id for c in fused])
                wanted = {rid for rid, r in records.items() if r.attributes.get("event_id") in known}
                out.add(fused, lists, [1.0 if c.record_id in wanted else 0.0 for c in fused])
                out.wanted.append(wanted)
                out.evidence.append(len(known))
                asked += 1
            log(f"realtalk {name}: {asked} questions so far")
    finally:
        memory.close()
    return out


def dialog_questions(realtalk: Path, every: int) -> list[EvalQuestion]:
    """Every ``every``-th REALTALK question, as questions no repository answers (no targets)."""
    asked = [q["question"] for _, conv in conversation_files(realtalk) for q in conv.get("qa", [])
             if str(q.get("question") or "").strip()]
    return [EvalQuestion(f"realtalk-{i}", text, "en", ()) for i, text in enumerate(asked[::every])]


def unanswerable_samples(name: str, memory: Memory, questions: list[EvalQuestion]) -> SetSamples:
    """Samples of questions from another domain asked of a repository's store: every candidate irrelevant.

    Without them every question of the fit has an answer in its store, and nothing teaches the
    model that the best candidate of a task the store knows nothing about is unlikely to be relevant.
    """
    out = SetSamples(name, [], [], [], [], [], [], [], unanswerable=True)
    for prep in prepared_set(memory, questions, RankingParams()):
        fused = _uncalibrated(prep.lists)
        out.add(fused, prep.lists, [0.0] * len(fused))
        out.wanted.append(set())
        out.evidence.append(0)
    return out


def unanswerable_dialog_samples(store_dir: Path, realtalk: Path, questions: list[EvalQuestion]) -> SetSamples:
    """The ADR questions asked of REALTALK's conversations (one conversation each, in turn): no turn answers."""
    memory = Memory.open(load_settings(data_dir=store_dir))
    out = SetSamples("unanswerable/realtalk", [], [], [], [], [], [], [], unanswerable=True)
    try:
        names = [name for name, _ in conversation_files(realtalk)]
        for i, question in enumerate(questions):
            where = SearchFilter((Layer.DOMAIN,), QueryFilters(mission=names[i % len(names)]))
            lists = search_candidates(memory.store, memory.embedder, question.question, where, RankingParams())
            fused = _uncalibrated(lists)
            out.add(fused, lists, [0.0] * len(fused))
            out.wanted.append(set())
            out.evidence.append(0)
    finally:
        memory.close()
    return out


def top_scores(s: SetSamples, model: Calibration | None) -> dict[str, float]:
    """The best candidate's score per question with ``model`` (None: uncalibrated): mean, 90th
    percentile, and the share of questions whose best scores 0.3 or more."""
    best = np.array([float(model.probabilities(x).max()) if model is not None else float(u.max())
                     for x, u in zip(s.features, s.uncalibrated, strict=True) if len(u)])
    if not len(best):
        return {}
    return {"top mean": round(float(best.mean()), 3), "top p90": round(float(np.quantile(best, 0.9)), 3),
            "top ≥ 0.3 %": round(100 * float((best >= 0.3).mean()), 1)}


def _fit(sets: list[SetSamples], method: str, l2: float, set_weights: dict[str, float] | None = None,
         dropped: tuple[str, ...] = ()) -> Calibration:
    """The model fitted on ``sets``, each set weighted equally unless ``set_weights`` names it (within a
    set, each question equally for ``listwise``, each sample for ``pointwise``)."""
    xs, ys, groups, ws, group_weights = [], [], [], [], []
    unanswerable = sum(1 for s in sets if s.unanswerable)
    for s in sets:
        for x, y in zip(s.features, s.labels, strict=True):
            xs.append(x)
            ys.append(y)
            groups.append(np.full(len(y), len(group_weights), dtype=np.int64))
            share = (set_weights or {}).get(s.name, 1.0 / unanswerable if s.unanswerable else 1.0)
            ws.append(np.full(len(y), share / sum(len(v) for v in s.labels)))
            group_weights.append(share / len(s.labels))
    x, y = np.vstack(xs), np.concatenate(ys)
    if dropped:
        x[:, [FEATURES.index(name) for name in dropped]] = 0.0  # a zero column keeps a zero weight
    if method == "pointwise":
        w = np.concatenate(ws)
        return fit_calibration(x, y, w * len(y) / w.sum(), l2=l2)
    g = np.array(group_weights)
    return fit_listwise(x, y, np.concatenate(groups), g * len(g) / g.sum(), l2=l2)


def calibration_figures(p: npt.NDArray[np.float64], y: npt.NDArray[np.float64]) -> dict[str, float]:
    """Log loss, Brier score and expected calibration error (ten equal-width bins) of predictions ``p``."""
    q = np.clip(p, 1e-6, 1 - 1e-6)
    bins = np.minimum((p * _BINS).astype(int), _BINS - 1)
    ece = sum(abs(float(p[bins == b].mean()) - float(y[bins == b].mean())) * float((bins == b).mean())
              for b in range(_BINS) if (bins == b).any())
    return {
        "log_loss": round(float(-(y * np.log(q) + (1 - y) * np.log(1 - q)).mean()), 4),
        "brier": round(float(((p - y) ** 2).mean()), 4),
        "ece": round(ece, 4),
        "positives": int(y.sum()),
        "samples": len(y),
    }


def reliability(p: npt.NDArray[np.float64], y: npt.NDArray[np.float64]) -> list[dict[str, float]]:
    """Per bin of predicted probability: how many samples, their mean prediction, the observed relevant rate."""
    bins = np.minimum((p * _BINS).astype(int), _BINS - 1)
    return [{"bin": f"{b / _BINS:.1f}–{(b + 1) / _BINS:.1f}", "n": int((bins == b).sum()),
             "predicted": round(float(p[bins == b].mean()), 3), "observed": round(float(y[bins == b].mean()), 3)}
            for b in range(_BINS) if (bins == b).any()]


def ranking_figures(s: SetSamples, model: Calibration | None) -> dict[str, float]:
    """hit@1 / hit@3 among decisions (ADR sets) or R@5 / R@10 (REALTALK) of the ranking with ``model``
    (None: the uncalibrated ranking)."""
    params = RankingParams() if model is not None else replace(RankingParams(), calibrated=False)
    if s.unanswerable:
        return top_scores(s, model)
    if s.prepared:
        rank = functools.partial(rank_candidates, calibration=model) if model is not None else rank_candidates
        score = score_ranking(s.prepared, LAYERS, params, rank=rank)  # type: ignore[arg-type]
        return {"hit@1": round(100 * score.hit1, 1), "hit@3": round(100 * score.hit3, 1),
                "in-top-10": round(100 * score.in_digest, 1)}
    recalls: dict[int, list[float]] = {5: [], 10: []}
    for lists, relevant, total in zip(s.lists, s.wanted, s.evidence, strict=True):
        ranked = rank_candidates(lists, (Layer.DOMAIN,), params, model) if model is not None else \
            rank_candidates(lists, (Layer.DOMAIN,), params)
        for k in recalls:
            recalls[k].append(len(relevant & {c.record_id for c in ranked[:k]}) / total)
    return {f"R@{k}": round(100 * float(np.mean(v)), 1) for k, v in recalls.items()}


def score_shipped(sets: list[SetSamples]) -> None:
    """Print each set's calibration and ranking figures under the shipped weights (no fit)."""
    print("shipped weights (CALIBRATION), per set:")
    print("| set | samples | relevant | log loss | Brier | ECE | ranking / best scores |")
    print("|---|---|---|---|---|---|---|")
    for s in sets:
        x, y = s.stacked()
        figures = calibration_figures(CALIBRATION.probabilities(x), y)
        ranked = ranking_figures(s, CALIBRATION)
        if not s.unanswerable:
            ranked = {**ranked, **top_scores(s, CALIBRATION)}
        else:
            ranked = top_scores(s, CALIBRATION)
        print(f"| {s.name} | {figures['samples']} | {figures['positives']} | {figures['log_loss']} | "
              f"{figures['brier']} | {figures['ece']} | {', '.join(f'{k} {v}' for k, v in ranked.items())} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-root", type=Path, required=True, help="bench_ranking.py's data root")
    add_source_arguments(parser)
    parser.add_argument("--realtalk", type=Path, default=None, help="REALTALK checkout or clone (skipped if absent)")
    parser.add_argument("--dialog-store", type=Path, default=None, help="bench_dialog_recall.py's DATA_ROOT/store")
    parser.add_argument("--dialog-every", type=int, default=1, help="use every N-th REALTALK question")
    parser.add_argument("--unanswerable-every", type=int, default=12,
                        help="ask every N-th REALTALK question of each repository, and every ADR question of"
                             " REALTALK, as questions nothing answers (0: none)")
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--cache", type=Path, default=None,
                        help="keep the samples in this file and read them from it on later runs (the feature"
                             " code must not have changed in between)")
    parser.add_argument("--method", choices=("listwise", "pointwise"), default="listwise",
                        help="listwise ranking then Platt scaling (default), or one pointwise logistic fit")
    parser.add_argument("--drop", default="", help="comma-separated features left out of the model (weight 0)")
    parser.add_argument("--set-weight", action="append", default=[],
                        help="NAME=W: weigh that set W times (default 1 each)")
    parser.add_argument("--shipped", action="store_true",
                        help="score the shipped weights (CALIBRATION) on every set instead of fitting: after a"
                             " change to what is embedded, whether the weights still say the probability")
    args = parser.parse_args()
    set_weights = {k: float(v) for k, _, v in (w.partition("=") for w in args.set_weight)}
    dropped = tuple(name for name in args.drop.split(",") if name)
    unknown = [name for name in dropped if name not in FEATURES]
    if unknown:
        raise SystemExit(f"--drop: no feature named {', '.join(unknown)} (features: {', '.join(FEATURES)})")
    started = time.perf_counter()
    sources = eval_sources(args)
    sets: list[SetSamples] = []
    adr_questions: list[EvalQuestion] = []
    if args.cache and args.cache.exists():
        sets = pickle.loads(args.cache.read_bytes())
        log(f"samples read from {args.cache}")
    for name, (source, set_names) in sources.items() if not sets else ():
        if args.only and name not in args.only:
            continue
        if not Path(source).exists():
            log(f"skipping {name}: {source} not found")
            continue
        memory = ingested(name, source, args.data_root)
        try:
            for set_name in set_names:
                label, questions = set_questions(args, name, set_name)
                log(f"{label}: {len(questions)} questions …")
                sets.append(adr_samples(label, memory, questions))
                if set_name != "replay":
                    adr_questions.extend(questions)
            if args.realtalk and args.unanswerable_every:
                questions = dialog_questions(args.realtalk, args.unanswerable_every)
                log(f"unanswerable/{name}: {len(questions)} REALTALK questions …")
                sets.append(unanswerable_samples(f"unanswerable/{name}", memory, questions))
        finally:
            memory.close()
    if args.realtalk and args.dialog_store and (args.dialog_store / "memory.db").exists() \
            and not any(s.name == "realtalk" for s in sets):
        sets.append(dialog_samples(args.dialog_store, args.realtalk, args.dialog_every))
        if args.unanswerable_every and adr_questions:
            log(f"unanswerable/realtalk: {len(adr_questions)} ADR questions …")
            sets.append(unanswerable_dialog_samples(args.dialog_store, args.realtalk, adr_questions))
    for loaded in sets:
        loaded.refresh_features()
    if args.cache and not args.cache.exists():
        args.cache.write_bytes(pickle.dumps(sets))

    if args.shipped:
        score_shipped(sets)
        return
    result: dict[str, Any] = {"l2": args.l2, "method": args.method, "set_weights": set_weights,
                              "dropped": dropped, "sets": {}}
    pooled_p, pooled_y, pooled_before = [], [], []
    print(f"leave-one-set-out ({args.method}, l2 = {args.l2}): each set scored by the model fitted on the others")
    print("| held-out set | samples | relevant | log loss | Brier | ECE | uncalibrated ECE | ranking, calibrated"
          " | ranking, uncalibrated |")
    print("|---|---|---|---|---|---|---|---|---|")
    for held in sets:
        model = _fit([s for s in sets if s is not held], args.method, args.l2, set_weights, dropped)
        hx, hy = held.stacked()
        p = model.probabilities(hx)
        before = np.concatenate(held.uncalibrated)
        pooled_p.append(p)
        pooled_y.append(hy)
        pooled_before.append(before)
        figures, plain = calibration_figures(p, hy), calibration_figures(before, hy)
        ranked, unranked = ranking_figures(held, model), ranking_figures(held, None)
        if not held.unanswerable:
            ranked, unranked = {**ranked, **top_scores(held, model)}, {**unranked, **top_scores(held, None)}
        result["sets"][held.name] = {"calibrated": figures, "uncalibrated": plain, "ranking": ranked,
                                     "ranking_uncalibrated": unranked, "weights": dict(model.weights)}
        print(f"| {held.name} | {figures['samples']} | {figures['positives']} | {figures['log_loss']} | "
              f"{figures['brier']} | {figures['ece']} | {plain['ece']} | "
              f"{', '.join(f'{k} {v}' for k, v in ranked.items())} | "
              f"{', '.join(f'{k} {v}' for k, v in unranked.items())} |")
    answered = [i for i, s in enumerate(sets) if not s.unanswerable]
    if len(answered) < len(sets):
        p_ans, y_ans = np.concatenate([pooled_p[i] for i in answered]), np.concatenate([pooled_y[i] for i in answered])
        result["answered_out_of_fold"] = {"calibrated": calibration_figures(p_ans, y_ans),
                                          "reliability": reliability(p_ans, y_ans)}
        print("\nout-of-fold reliability, the answered sets pooled:")
        print("| bin | n | mean predicted | observed |")
        print("|---|---|---|---|")
        for row in result["answered_out_of_fold"]["reliability"]:
            print(f"| {row['bin']} | {row['n']} | {row['predicted']} | {row['observed']} |")
    p_all, y_all, b_all = np.concatenate(pooled_p), np.concatenate(pooled_y), np.concatenate(pooled_before)
    result["pooled_out_of_fold"] = {"calibrated": calibration_figures(p_all, y_all),
                                    "uncalibrated": calibration_figures(b_all, y_all),
                                    "reliability": reliability(p_all, y_all),
                                    "reliability_uncalibrated": reliability(b_all, y_all)}
    print("\nout-of-fold reliability, all sets pooled: predicted probability against the observed relevant share")
    print("| bin | n | mean predicted | observed | uncalibrated: n | mean score | observed |")
    print("|---|---|---|---|---|---|---|")
    plain_bins = {r["bin"]: r for r in result["pooled_out_of_fold"]["reliability_uncalibrated"]}
    for row in result["pooled_out_of_fold"]["reliability"]:
        other = plain_bins.get(row["bin"], {"n": 0, "predicted": "", "observed": ""})
        print(f"| {row['bin']} | {row['n']} | {row['predicted']} | {row['observed']} | {other['n']} | "
              f"{other['predicted']} | {other['observed']} |")
    for b, other in plain_bins.items():
        if b not in {r["bin"] for r in result["pooled_out_of_fold"]["reliability"]}:
            print(f"| {b} | 0 | | | {other['n']} | {other['predicted']} | {other['observed']} |")
    final = _fit(sets, args.method, args.l2, set_weights, dropped)
    result["final_weights"] = dict(final.weights)
    print("\nthe model fitted on every set, per set (in sample):")
    for s in sets:
        figures = ranking_figures(s, final)
        result["sets"][s.name]["ranking_final_in_sample"] = figures
        print(f"  {s.name}: {', '.join(f'{k} {v}' for k, v in figures.items())}")
    result["seconds"] = round(time.perf_counter() - started, 1)
    print(f"\nfitted on every set ({', '.join(s.name for s in sets)}), l2 = {args.l2}:")
    print(json.dumps(dict(final.weights), indent=4))
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
