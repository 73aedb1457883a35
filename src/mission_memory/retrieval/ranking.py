"""Ranking pull candidates: relevance cut-offs, score fusion, priors, fitted weights (near-duplicates: ``near_duplicates``).

Before fusion each list is cut to what is plausibly relevant, so that a digest stops when the
relevant records are used up instead of filling its budget with noise: dense hits must lie within
``dense_window`` of the best cosine similarity, BM25 hits must reach ``bm25_ratio`` of the best
BM25 score.

The cut lists are then fused, per layer and record kind, by one of two functions
(:attr:`RankingParams.fusion`; ADR 0031 chose by measurement):

* ``convex`` (the default): a weighted sum of each list's score normalised within its cut, the
  cosine by its distance below the best (``1 − (best − cos) / dense_window``) and BM25 by the best
  BM25 score (Bruch, Gai and Ingber, "An Analysis of Fusion Functions for Hybrid Retrieval", ACM
  TOIS 2023). A rare, decisive term that gives one record a BM25 score far above the rest keeps
  that margin, where rank fusion would flatten it to one rank step.
* ``rrf``: weighted reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009),
  ``Σ_lists w / (k + rank(d))``.

Either way the fused score is divided by its maximum, so a record first in both lists scores 1.0.
A record stored without a vector of the query's model (an event the embedding queue has not reached)
cannot be in the dense list; its score is divided by the maximum of the lists that could hold it, so
it is ranked by its BM25 score instead of counting as last of the dense list (docs/adr/0063).
The list weights (and the function and ``k``) are what ``ranking tune`` fits on retrieval
corrections (ADR 0032); :func:`tuned_params` reads the adopted ones for pull.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

from mission_memory.decisions import DecisionAttributes
from mission_memory.records import Record, RecordKind
from mission_memory.stores.base import Hit, RecordPriors, StateStore

__all__ = [
    "BEFORE_PARAMS",
    "FUSIONS",
    "FUSION_STATE_KEY",
    "FUSION_STATE_MISSION",
    "Candidate",
    "FusionWeights",
    "RankingParams",
    "demote_boilerplate",
    "fold_sections",
    "fuse",
    "is_superseded",
    "tuned_params",
]


@dataclass(frozen=True)
class RankingParams:
    """Knobs of :func:`fuse`.

    Attributes:
        rrf_k: the RRF constant.
        dense_window: keep dense hits with cosine ≥ best − this.
        bm25_ratio: keep BM25 hits scoring ≥ this × the best BM25 score.
        superseded_factor: a superseded decision's score is multiplied by this.
        criticality_weight: a record's score is multiplied by ``1 + w × (criticality − 0.5)``,
            so at equal relevance an accepted decision (0.7) ranks above a commit (0.3). This is
            the normal-mode end of docs/design.md §7's ``a × criticality + (1 − a) × sim``, with a
            small fixed weight; degraded mode raises it.
        duplicate_cosine: two candidates with cosine ≥ this are near-duplicates.
        critical_candidates: also take this many of the most critical records matching the
            filters as a third rank list (criticality triage, docs/design.md §7); 0 in normal mode.
        dense_weight, bm25_weight: weights of the dense and the BM25 rank lists in the fusion
            (weighted RRF); fitted by ``ranking tune`` (ADR 0032).
        normalize_present: divide a kind's fused score by the best score the lists that kept
            anything could give, so a record first in the only list that found anything of its
            kind scores 1.0 (ADR 0031).
        fusion: ``rrf`` (weighted reciprocal rank fusion) or ``convex`` (weighted sum of each
            list's score normalised within its cut: cosine by the dense window, BM25 by the best).
        per_kind_candidates: the dense candidate search takes the best hits of each record kind
            of each layer, not of each layer, so a small kind (39 decisions) is not crowded out by
            a large one (669 commits) before the per-kind fusion sees it (docs/adr/0050).
        feedback_docs: for a task in another script than the records the dense search finds
            (a Ukrainian task, English records), run BM25 again with feedback terms from this
            many of the best dense hits (pseudo-relevance feedback,
            :mod:`~mission_memory.retrieval.relevance_feedback`); 0 turns it off (docs/adr/0050).
        feedback_terms: how many feedback terms are added.
        vector_feedback_docs: for a task in another script than the records the dense search
            finds, run the dense search again with the query vector moved toward the vectors of
            this many of the best dense hits (Rocchio feedback,
            :func:`~mission_memory.retrieval.relevance_feedback.rocchio_query`); 0 turns it off
            (docs/adr/0050).
        vector_feedback_weight: the weight β of their centroid against the query's 1.
        fold_sections: an ADR's document chunks compete as one unit with its decision record: the
            decision takes the best score of its own sections and the sections leave the ranking
            (:func:`fold_sections`, docs/adr/0066).
        generated_factor: a document chunk ingest marked as generated (terraform-docs tables,
            changelogs, lock files; attribute ``generated``) has its score multiplied by this
            (:func:`demote_boilerplate`, docs/adr/0068).
        replaced_commits: a commit that a later candidate commit reverted or overtook (an older
            bump of the same dependency) is multiplied by ``superseded_factor``, marked superseded,
            and ranks below its successor (docs/adr/0068).
        calibrated: after the priors, every kind's scores are mapped to one scale, the probability
            of relevance (:mod:`~mission_memory.retrieval.calibration`, docs/adr/0072).
    """

    rrf_k: int = 60
    dense_window: float = 0.045
    bm25_ratio: float = 0.35
    superseded_factor: float = 0.5
    criticality_weight: float = 0.3
    duplicate_cosine: float = 0.97
    critical_candidates: int = 0
    dense_weight: float = 1.0
    bm25_weight: float = 1.0
    normalize_present: bool = False
    fusion: str = "convex"
    per_kind_candidates: bool = True
    feedback_docs: int = 0
    feedback_terms: int = 10
    vector_feedback_docs: int = 10
    vector_feedback_weight: float = 0.3
    fold_sections: bool = True
    generated_factor: float = 0.25
    replaced_commits: bool = True
    calibrated: bool = True


BEFORE_PARAMS = RankingParams(rrf_k=60, dense_weight=1.0, bm25_weight=1.0, normalize_present=False, fusion="rrf",
                              per_kind_candidates=False, vector_feedback_docs=0,
                             fold_sections=False, generated_factor=1.0, replaced_commits=False,
                              calibrated=False)
"""The ranking as it was before ADR 0031 (plain RRF, k = 60), kept to measure against."""


FUSIONS = ("convex", "rrf")
"""The fusion functions :func:`fuse` knows (:attr:`RankingParams.fusion`)."""
FUSION_STATE_MISSION = "*"
"""State-store mission under which ``ranking tune``'s adopted weights are kept (they apply to every mission)."""
FUSION_STATE_KEY = "ranking.fusion_weights"


@dataclass(frozen=True)
class FusionWeights:
    """The fitted part of :class:`RankingParams`: the fusion function, the RRF constant and the list weights."""

    fusion: str
    rrf_k: int
    dense_weight: float
    bm25_weight: float

    @classmethod
    def of(cls, params: RankingParams) -> FusionWeights:
        """The fusion weights ``params`` holds."""
        return cls(params.fusion, params.rrf_k, params.dense_weight, params.bm25_weight)

    def applied_to(self, params: RankingParams) -> RankingParams:
        """``params`` with these weights."""
        return replace(
            params, fusion=self.fusion, rrf_k=self.rrf_k, dense_weight=self.dense_weight, bm25_weight=self.bm25_weight
        )


def tuned_params(store: StateStore, base: RankingParams | None = None) -> RankingParams:
    """The ranking parameters pull uses: ``base`` (the defaults) with the adopted weights, if any.

    A stored value that does not parse is ignored (the defaults apply), so a damaged state entry
    never stops pull.
    """
    params = base or RankingParams()
    raw = store.get_state(FUSION_STATE_MISSION, FUSION_STATE_KEY)
    if not raw:
        return params
    try:
        data = json.loads(raw)["weights"]
        weights = FusionWeights(
            str(data["fusion"]), int(data["rrf_k"]), float(data["dense_weight"]), float(data["bm25_weight"])
        )
    except (ValueError, KeyError, TypeError):
        return params
    if weights.fusion not in FUSIONS or weights.rrf_k < 1 or weights.dense_weight < 0 or weights.bm25_weight < 0:
        return params
    return weights.applied_to(params)


@dataclass(frozen=True)
class Candidate:
    """A record in the running for the digest, with how each retriever ranked it.

    Attributes:
        record_id: the record's id.
        score: fused relevance in [0, 1] (after demotion).
        dense_rank, bm25_rank: 1-based ranks, or None when that retriever did not keep it.
        cosine: cosine similarity to the query, or None.
        superseded: a decision that a later decision supersedes.
        record: the record, attached after fusion.
        repeats: near-duplicate candidates merged into this one (docs/adr/0030, 0057).
        group_note: for a domain event standing for a group of repeats, the group's count, first and
            last seen and highest criticality, as written by mission-memory (numbers and times only).
        group_members: for such an event, its group's members cited compactly (``the N from event:<a> to
            event:<b>``, :func:`~mission_memory.operations.event_groups.group_members`); quoted inside the fence.
        sections: for a decision, the record ids of its ADR's sections folded into it, best first
            (:func:`fold_sections`).
        section_excerpt: for such a decision, the heading and text of its best-matching section,
            shown in its entry after the decision itself (stored text; the digest fences it).
        kind_score: when ``score`` is calibrated (docs/adr/0072), the kind's score it was calibrated
            from (priors applied), so that a later demotion can act on it; else None.
    """

    record_id: str
    score: float
    dense_rank: int | None = None
    bm25_rank: int | None = None
    cosine: float | None = None
    superseded: bool = False
    record: Record | None = None
    repeats: int = 0
    group_note: str = ""
    group_members: str = ""
    sections: tuple[str, ...] = ()
    section_excerpt: str = ""
    kind_score: float | None = None


def _cut_dense(hits: Sequence[Hit], window: float) -> list[Hit]:
    if not hits:
        return []
    best = hits[0].score
    return [h for h in hits if h.score >= best - window]


def _cut_bm25(hits: Sequence[Hit], ratio: float) -> list[Hit]:
    if not hits:
        return []
    best = hits[0].score
    if best <= 0:
        return list(hits[:5])
    return [h for h in hits if h.score >= ratio * best]


def fuse(
    dense: Sequence[Hit], bm25: Sequence[Hit], params: RankingParams, critical: Sequence[Hit] = (),
    unembedded: Collection[str] = (),
) -> list[Candidate]:
    """Fuse one layer's dense and BM25 hits of one record kind (each best first) into candidates, best first.

    ``critical`` (most critical first, see :attr:`RankingParams.critical_candidates`) is a third
    rank list, taken whole, contributing like a rank list of weight 1; fused scores are capped at 1.
    ``unembedded`` names records that have no vector of the query's model: the dense list could not
    hold them, so their score is normalised without the dense weight (docs/adr/0063; an event
    without a vector that alone matches a query's unique token tied with an unrelated embedded one,
    issue 21). Scores are in [0, 1]; see the module docstring for the two fusion functions.
    """
    dense_kept = _cut_dense(dense, params.dense_window)
    bm25_kept = _cut_bm25(bm25, params.bm25_ratio)
    wd, wb = params.dense_weight, params.bm25_weight
    convex = params.fusion == "convex"
    unit = 1.0 if convex else 1.0 / (params.rrf_k + 1)  # what rank 1 of one list contributes per weight
    present = (wd * bool(dense_kept) + wb * bool(bm25_kept)) if params.normalize_present else (wd + wb)
    top = present * unit or 1.0
    top_unembedded = (wb * bool(bm25_kept) if params.normalize_present else wb) * unit or top
    acc: dict[str, dict[str, float | int]] = {}
    best_cosine = dense_kept[0].score if dense_kept else 0.0
    window = max(params.dense_window, 1e-6)
    for rank, hit in enumerate(dense_kept, start=1):
        slot = acc.setdefault(hit.record_id, {})
        slot["dense_rank"] = rank
        slot["cosine"] = hit.score
        part = 1.0 - (best_cosine - hit.score) / window if convex else 1.0 / (params.rrf_k + rank)
        slot["rrf"] = slot.get("rrf", 0.0) + wd * part
    best_bm25 = bm25_kept[0].score if bm25_kept else 0.0
    for rank, hit in enumerate(bm25_kept, start=1):
        slot = acc.setdefault(hit.record_id, {})
        slot["bm25_rank"] = rank
        part = (hit.score / best_bm25 if best_bm25 > 0 else 0.0) if convex else 1.0 / (params.rrf_k + rank)
        slot["rrf"] = slot.get("rrf", 0.0) + wb * part
    for rank, hit in enumerate(critical, start=1):
        slot = acc.setdefault(hit.record_id, {})
        slot["rrf"] = slot.get("rrf", 0.0) + unit * (params.rrf_k + 1) / (params.rrf_k + rank)
    out = [
        Candidate(
            record_id=record_id,
            score=min(1.0, float(slot["rrf"]) / (top_unembedded if record_id in unembedded else top)),
            dense_rank=int(slot["dense_rank"]) if "dense_rank" in slot else None,
            bm25_rank=int(slot["bm25_rank"]) if "bm25_rank" in slot else None,
            cosine=float(slot["cosine"]) if "cosine" in slot else None,
        )
        for record_id, slot in acc.items()
    ]
    out.sort(key=lambda c: (-c.score, c.record_id))
    return out


def is_superseded(record: Record) -> bool:
    """True for a decision whose status is superseded or that a later decision supersedes."""
    if record.kind is not RecordKind.DECISION:
        return False
    return DecisionAttributes.marks_superseded(record.attributes)


def apply_priors(
    candidates: Sequence[Candidate], params: RankingParams, priors: Mapping[str, RecordPriors] | None = None
) -> list[Candidate]:
    """Weight fused scores by record criticality, demote and mark superseded decisions; sort best first.

    Each candidate needs its ``record`` attached or its entry in ``priors`` (read before the
    records, so that priors apply to every candidate before any is cut). Scores stay in [0, 1]:
    they are divided by the largest criticality factor, never capped, so the fused order survives.
    """
    # Scale by the largest factor instead of capping at 1: a cap made every candidate of a critical
    # kind whose fused score came within a few percent of the best tie at 1.0, and ties fall back to
    # record-id order, which is arbitrary (ADR 0031).
    weight = params.criticality_weight
    ceiling = 1.0 + max(0.0, weight) * 0.5
    out = []
    for cand in candidates:
        if cand.record is not None:
            criticality, superseded = cand.record.criticality, is_superseded(cand.record)
        else:
            assert priors is not None and cand.record_id in priors
            criticality, superseded = priors[cand.record_id].criticality, priors[cand.record_id].superseded
        factor = 1.0 + weight * (criticality - 0.5)
        if superseded:
            factor *= params.superseded_factor
        # Built directly: dataclasses.replace inspects the fields on every call (a few hundred per pull).
        out.append(Candidate(cand.record_id, min(1.0, cand.score * factor / ceiling), cand.dense_rank,
                             cand.bm25_rank, cand.cosine, superseded, cand.record))
    out.sort(key=lambda c: (-c.score, c.record_id))
    return out


def fold_sections(
    ranked: Sequence[Candidate],
    decision_of: Mapping[str, str],
    absent: Mapping[str, bool],
    params: RankingParams,
) -> list[Candidate]:
    """One unit per decision: fold each ADR section (document chunk) into its file's decision record.

    An ADR file is ingested twice over: once as its decision record and once as document chunks of
    its sections. Ranked apart, a section that matches the task better than the decision's own text
    (its "Reasoning" against a question about the reasons) out-ranks the decision, and with a full
    digest the decision is dropped in favour of a piece of itself (docs/adr/0066). Here every chunk
    that ``decision_of`` maps to a decision leaves the list, and the decision takes the best score
    of itself and its sections (a section's score demoted by ``superseded_factor`` when the
    decision is superseded, so a superseded ADR does not climb back through its text). A decision
    that was not a candidate itself enters with its best section's score.

    Args:
        ranked: candidates after priors, best first (the order of :func:`apply_priors`).
        decision_of: document-chunk record id -> the record id of the decision of the same file.
        absent: the decisions named in ``decision_of`` that are not in ``ranked`` but may enter
            (they pass the query's filters), each with whether it is superseded; a decision neither
            ranked nor here is left out and its sections stay.
        params: ``superseded_factor`` is read.

    Returns:
        The candidates, best first (ties by record id); each decision carries the ids of the
        sections folded into it in :attr:`Candidate.sections`, best first.
    """
    if not decision_of:
        return list(ranked)
    present = {c.record_id: c for c in ranked}
    best: dict[str, float] = {}
    folded: dict[str, list[str]] = {}
    for cand in ranked:
        decision_id = decision_of.get(cand.record_id)
        if decision_id is None:
            continue
        if decision_id in present:
            superseded = present[decision_id].superseded
        elif decision_id in absent:
            superseded = absent[decision_id]
        else:
            continue
        score = cand.score * (params.superseded_factor if superseded else 1.0)
        best[decision_id] = max(best.get(decision_id, 0.0), score)
        folded.setdefault(decision_id, []).append(cand.record_id)
    gone = {rid for ids in folded.values() for rid in ids}
    out = []
    for cand in ranked:
        if cand.record_id in gone:
            continue
        if cand.record_id in best:
            cand = replace(cand, score=max(cand.score, best[cand.record_id]), sections=tuple(folded[cand.record_id]))
        out.append(cand)
    for decision_id, score in best.items():
        if decision_id not in present:
            out.append(Candidate(decision_id, score, superseded=absent[decision_id],
                                 sections=tuple(folded[decision_id])))
    out.sort(key=lambda c: (-c.score, c.record_id))
    return out


def demote_boilerplate(
    ranked: Sequence[Candidate], generated: AbstractSet[str], replaced: Mapping[str, str], params: RankingParams,
    scale: Callable[[Candidate, float], float] | None = None,
) -> list[Candidate]:
    """Weight down tool-written documents and commits a later one undid or overtook (docs/adr/0068).

    Args:
        ranked: candidates, best first.
        generated: ids of records ingest marked ``generated`` (:mod:`mission_memory.ingest.generated_documents`);
            their score is multiplied by ``params.generated_factor``.
        replaced: commit record id -> the id of the later commit that reverted or overtook it
            (:func:`~mission_memory.retrieval.commit_successors.replaced_commits`); such a commit is
            multiplied by ``superseded_factor`` (when ``params.replaced_commits``), marked superseded,
            and, when its successor is among ``ranked``, kept just below it.
        scale: the score of a candidate demoted by a factor (default: its score times the factor;
            for calibrated scores, :meth:`~mission_memory.retrieval.calibration.Calibration.demoted`,
            which applies the factor to the kind's score the probability came from).

    Returns:
        The candidates, best first (ties by record id).
    """
    if not generated and not (replaced and params.replaced_commits):
        return list(ranked)
    scaled = scale or (lambda cand, factor: cand.score * factor)
    scores = {c.record_id: c.score for c in ranked}
    out = []
    for cand in ranked:
        if cand.record_id in generated:
            cand = replace(cand, score=scaled(cand, params.generated_factor),
                           kind_score=None if cand.kind_score is None else cand.kind_score * params.generated_factor)
        successor = replaced.get(cand.record_id) if params.replaced_commits else None
        if successor is not None:
            score = scaled(cand, params.superseded_factor)
            if successor in scores:
                score = min(score, scores[successor] * 0.999)
            cand = replace(cand, score=score, superseded=True)
        out.append(cand)
    out.sort(key=lambda c: (-c.score, c.record_id))
    return out


def after_the_records_they_name(candidates: Sequence[Candidate]) -> list[Candidate]:
    """``candidates`` (best first) with each correction placed after every record it names that is among
    them, its score capped at theirs: a correction points to a record (``--expected ADR-2``) and is
    read after it, never above it (issue 36).

    A correction names records by source key (``named_source_keys``, kept when it is recorded) or by
    record id (``missed_record_ids``, from its label). Other candidates keep their order.
    """
    out = list(candidates)
    for cand in list(out):
        r = cand.record
        if r is None or r.kind is not RecordKind.CORRECTION_PATTERN:
            continue
        keys = set(r.attributes.get("named_source_keys") or ())
        ids = set(r.attributes.get("missed_record_ids") or ())
        named = [i for i, c in enumerate(out) if c is not cand and c.record is not None
                 and (c.record.source_key in keys or c.record_id in ids)]
        here = out.index(cand)
        if not named or max(named) < here:
            continue
        last = max(named)
        floor = min(out[i].score for i in named)
        out.pop(here)
        out.insert(last, replace(cand, score=min(cand.score, floor)))
    return out
