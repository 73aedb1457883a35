"""One relevance scale across record kinds: fused scores calibrated to a probability of relevance (docs/adr/0072).

Fusion runs per record kind (:func:`~mission_memory.retrieval.ranking.fuse`), and each kind's best
candidate scores near 1.0 whatever its absolute match: the best commit of an unrelated history and
the ADR that decides the task both start at the top of their kind. Ranked together on those scores,
a digest cannot say which kind's best is better, and its scores do not separate the relevant from
the unrelated (issue 25: 0.92 and 0.46 recurred; an unrelated table scored 0.83).

Here a logistic model (Platt scaling, "Probabilistic outputs for support vector machines", 1999,
with features) maps every candidate to the probability that the record is relevant to the task,
from its kind's score and from features that compare its kind across kinds in this query: how well
the kind's best matched (its cosine), how far below the best of all kinds, and the kind's best BM25
score as a share of the best of all kinds (:func:`candidate_features`). Those are constant within a
kind, so each kind keeps its order (the per-kind fusion, its cut-offs and priors are what ADRs
0031–0068 measured), and calibration decides how kinds interleave. The coefficients
in :data:`CALIBRATION` were fitted by ``benchmarks/fit_calibration.py`` on the project's evaluation
sets (four ADR question sets, the shared corpus' history replay and REALTALK's dialog evidence,
and questions nothing answers, so that a query nothing matched well scores low: docs/adr/0073),
with leave-one-set-out cross-validation for the figures ADRs 0072 and 0073 state.

Every kind shares the weights: a kind the sets have no labels for (corrections, principles, issues,
handover notes) is placed by the same evidence as the rest.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mission_memory.records import LAYER_OF_KIND, RecordKind
from mission_memory.retrieval.candidates import CandidateLists
from mission_memory.retrieval.ranking import Candidate

__all__ = [
    "CALIBRATION",
    "FEATURES",
    "QUERY_FEATURES",
    "Calibration",
    "calibrate",
    "candidate_features",
    "fit_calibration",
    "fit_listwise",
]

FEATURES = (
    "intercept",
    "score",
    "kind_best_cosine",
    "kind_cosine_gap",
    "kind_bm25_share",
    "query_best_cosine",
)
"""The columns of :func:`candidate_features`, in order: one per candidate (``score``), three that
describe its kind in this query and one that describes the query (see there). Kind offsets of
their own were measured and left out (docs/adr/0072): fitted to which kind the evaluation sets' answers happen to be, they moved every
query's kinds apart the same way and lost targets from the first ten."""

QUERY_FEATURES = ("intercept", "query_best_cosine")
"""The columns of :data:`FEATURES` that are the same for every candidate of a query: they cannot
order one query's candidates, only say how likely any of them is to be relevant, so
:func:`fit_listwise` fits them in its second, pointwise stage, which also sees the questions that
nothing in the store answers."""

_GAP_SCALE = 0.1
"""A kind's best cosine below the best cosine of all kinds is divided by this and clipped to [0, 1]
(e5 cosines of related texts lie within about 0.1 of each other)."""
_COSINE_FLOOR = 0.7
"""Cosines are given as ``max(0, cosine − this) / (1 − this)``: e5-small places even unrelated
texts above 0.7, so the informative range is what lies above it."""


@dataclass(frozen=True)
class Calibration:
    """A fitted logistic model over :data:`FEATURES`.

    Attributes:
        weights: one coefficient per feature name of :data:`FEATURES` (a missing name counts 0).
        source: how the weights were obtained (set names, command), for the record.
    """

    weights: Mapping[str, float]
    source: str = ""

    def vector(self) -> npt.NDArray[np.float64]:
        """The weights as an array aligned with :data:`FEATURES`."""
        return np.array([float(self.weights.get(name, 0.0)) for name in FEATURES], dtype=np.float64)

    def probabilities(self, features: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """P(relevant) in (0, 1) for each row of ``features`` (shape ``(n, len(FEATURES))``)."""
        logits = features @ self.vector()
        return 1.0 / (1.0 + np.exp(-np.clip(logits, -30.0, 30.0)))

    def demoted(self, cand: Candidate, factor: float) -> float:
        """The calibrated score ``cand`` would have had if its kind's score were ``factor`` times lower.

        A demotion (generated documents × 0.25, replaced commits × 0.5, docs/adr/0068) acts on the
        kind's score, where ADR 0068 measured it: multiplying the probability instead would barely
        move a record whose probability is already low. Without a :attr:`Candidate.kind_score`
        the score itself is multiplied.
        """
        if cand.kind_score is None:
            return cand.score * factor
        p = min(max(cand.score, 1e-12), 1 - 1e-12)
        logit = math.log(p / (1 - p)) + float(self.weights.get("score", 0.0)) * cand.kind_score * (factor - 1.0)
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, logit))))

    def preserves_kind_order(self) -> bool:
        """Whether the slope on a candidate's score is positive, so that calibration keeps each kind's order."""
        return float(self.weights.get("score", 0.0)) > 0


def candidate_features(candidates: Sequence[Candidate], lists: CandidateLists) -> npt.NDArray[np.float64]:
    """The calibration features of ranked candidates, one row per candidate (columns :data:`FEATURES`).

    Per candidate there is one feature of its own, its ``score`` (its kind's fused score after the
    priors, :func:`~mission_memory.retrieval.ranking.apply_priors`). Everything else describes its
    *kind* in this query, against every kind: how well the kind's best dense hit matched (its
    cosine), how far that lies below the best cosine of all kinds, and the kind's best BM25 score as
    a share of the best of all kinds (BM25 lists are cut per layer: a kind with no hit in a full list
    counts that list's lowest score, :attr:`CandidateLists.bm25_floor`, which it may reach). One
    feature describes the query: the best cosine of all kinds (:data:`QUERY_FEATURES`), which says
    how well anything in the store matched at all. Within one kind of one query those are
    constant, so calibration keeps each kind's order (when
    :meth:`Calibration.preserves_kind_order`) and only decides how kinds interleave, and how high a
    kind's best stands when nothing of that kind matches well.

    Args:
        candidates: ranked candidates, ``score`` in [0, 1].
        lists: the candidate lists they came from (each record's kind in :attr:`CandidateLists.priors`).
    """
    best_of_kind: dict[RecordKind, float] = {}
    for by_kind in lists.dense.values():
        for found, hits in by_kind.items():
            if hits:
                best_of_kind[found] = max(best_of_kind.get(found, -1.0), hits[0].score)
    bm25_of_kind: dict[RecordKind, float] = {}
    for by_kind in lists.bm25.values():
        for found, hits in by_kind.items():
            if hits:
                bm25_of_kind[found] = max(bm25_of_kind.get(found, 0.0), hits[0].score)
    best_cosine = max(best_of_kind.values(), default=0.0)
    best_bm25 = max(bm25_of_kind.values(), default=0.0)
    index = {name: i for i, name in enumerate(FEATURES)}
    out = np.zeros((len(candidates), len(FEATURES)), dtype=np.float64)
    out[:, index["intercept"]] = 1.0
    if best_of_kind:
        out[:, index["query_best_cosine"]] = max(0.0, best_cosine - _COSINE_FLOOR) / (1.0 - _COSINE_FLOOR)
    kind_rows: dict[RecordKind | None, dict[str, float]] = {}
    for row, cand in enumerate(candidates):
        prior = lists.priors.get(cand.record_id)
        kind: RecordKind | None = prior.kind if prior is not None else None
        if kind not in kind_rows:
            values: dict[str, float] = {"kind_cosine_gap": 1.0}
            if kind is not None and kind in best_of_kind:
                values["kind_best_cosine"] = max(0.0, best_of_kind[kind] - _COSINE_FLOOR) / (1.0 - _COSINE_FLOOR)
                values["kind_cosine_gap"] = min(1.0, max(0.0, (best_cosine - best_of_kind[kind]) / _GAP_SCALE))
            if kind is not None and best_bm25 > 0:
                # BM25 lists are per layer: a kind crowded out of a full list may match up to its floor
                matched = bm25_of_kind.get(kind, lists.bm25_floor.get(LAYER_OF_KIND[kind], 0.0))
                values["kind_bm25_share"] = matched / best_bm25
            kind_rows[kind] = values
        for name, value in kind_rows[kind].items():
            out[row, index[name]] = value
        out[row, index["score"]] = cand.score
    return out


def calibrate(candidates: Sequence[Candidate], lists: CandidateLists, calibration: Calibration) -> list[Candidate]:
    """``candidates`` with their score replaced by the calibrated probability of relevance, best first.

    Args:
        candidates: ranked candidates of every kind (scores per kind, priors applied).
        lists: the candidate lists they came from (:func:`candidate_features`).
        calibration: the model (:data:`CALIBRATION` in pull).

    Returns:
        New candidates (every other field kept, :attr:`Candidate.kind_score` set to the score they had),
        scores in (0, 1), sorted best first (ties by record id).
    """
    if not candidates:
        return []
    probabilities = calibration.probabilities(candidate_features(candidates, lists))
    out = [Candidate(c.record_id, float(p), c.dense_rank, c.bm25_rank, c.cosine, c.superseded, c.record,
                     kind_score=c.score)
           for c, p in zip(candidates, probabilities, strict=True)]
    out.sort(key=lambda c: (-c.score, c.record_id))
    return out


def _newton(
    objective: Callable[[npt.NDArray[np.float64]], float],
    derivatives: Callable[[npt.NDArray[np.float64]], tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]],
    beta: npt.NDArray[np.float64],
    iterations: int,
) -> npt.NDArray[np.float64]:
    """Minimise a convex ``objective`` from ``beta`` by Newton steps (``derivatives`` gives the gradient
    and the Hessian), each halved until the objective does not rise: a full step can overshoot where
    the curvature is tiny. Stops after ``iterations`` steps, or when a step moves no weight by 1e-8."""
    current = objective(beta)
    for _ in range(iterations):
        gradient, hessian = derivatives(beta)
        step = np.linalg.solve(hessian, gradient)
        scale = 1.0
        while scale > 1e-6:
            trial = beta - scale * step
            value = objective(trial)
            if value <= current:
                break
            scale /= 2
        else:
            break
        beta, current = trial, value
        if float(np.abs(scale * step).max()) < 1e-8:
            break
    return beta


def fit_calibration(
    features: npt.NDArray[np.float64],
    labels: npt.NDArray[np.float64],
    sample_weights: npt.NDArray[np.float64] | None = None,
    l2: float = 1.0,
    iterations: int = 50,
) -> Calibration:
    """Fit :data:`FEATURES`' logistic weights by Newton's method (IRLS, with backtracking) and an L2 penalty.

    The intercept is not penalised; every other weight is, so a feature the data say little about
    stays near 0.

    Args:
        features: shape ``(n, len(FEATURES))`` (rows of :func:`candidate_features`).
        labels: shape ``(n,)``, 1.0 for a relevant candidate, 0.0 otherwise.
        sample_weights: shape ``(n,)``, non-negative (default all 1).
        l2: the penalty's strength λ in ``Σ w·logloss + λ/2 · |β|²``.
        iterations: at most this many Newton steps (it stops once the step is below 1e-8).

    Raises:
        ValueError: shapes disagree, or the labels hold no positive or no negative.
    """
    n, d = features.shape
    if d != len(FEATURES) or labels.shape != (n,):
        raise ValueError(f"features must be (n, {len(FEATURES)}) and labels (n,), got {features.shape}, {labels.shape}")
    if not (labels.min() < 0.5 < labels.max()):
        raise ValueError("the labels need at least one relevant and one irrelevant candidate")
    weights = np.ones(n) if sample_weights is None else sample_weights.astype(np.float64)
    penalty = np.full(d, l2)
    penalty[FEATURES.index("intercept")] = 0.0
    beta = np.zeros(d)
    beta[0] = math.log(float(np.average(labels, weights=weights)) / (1 - float(np.average(labels, weights=weights))))

    def objective(b: npt.NDArray[np.float64]) -> float:
        z = features @ b
        # log(1 + e^z) − y·z, computed stably
        return float(np.sum(weights * (np.logaddexp(0.0, z) - labels * z)) + 0.5 * np.sum(penalty * b * b))

    def derivatives(b: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        p = 1.0 / (1.0 + np.exp(-np.clip(features @ b, -30.0, 30.0)))
        gradient = features.T @ (weights * (p - labels)) + penalty * b
        return gradient, (features * (weights * p * (1 - p))[:, None]).T @ features + np.diag(penalty + 1e-9)

    beta = _newton(objective, derivatives, beta, iterations)
    return Calibration({name: round(float(b), 4) for name, b in zip(FEATURES, beta, strict=True)})


def fit_listwise(
    features: npt.NDArray[np.float64],
    labels: npt.NDArray[np.float64],
    groups: npt.NDArray[np.int64],
    group_weights: npt.NDArray[np.float64] | None = None,
    l2: float = 1.0,
    iterations: int = 50,
) -> Calibration:
    """Fit a ranking over :data:`FEATURES` per query (listwise softmax), then scale it to probabilities.

    Pointwise fitting pools every query's candidates, so the sets whose relevant records are of one
    kind pull every query's kinds apart the same way. Here the first stage learns how candidates of
    one query compare (ListNet's top-one softmax cross-entropy, Cao et al., ICML 2007: for each query
    ``−mean over its relevant candidates of log softmax(X·β)``), so each query counts once; the
    second stage, Platt scaling extended by the :data:`QUERY_FEATURES` (``P = σ(a · X·β + c · q)``,
    ``q`` the intercept and the query's best cosine, fitted pointwise over every query's rows, those of
    queries nothing answers included), turns that score into a probability without changing any
    order within a query: the first stage cannot see what is constant within a query, and only the
    second learns how unlikely the best candidate of a poorly matched query is. The result is one
    linear model, like :func:`fit_calibration`'s.

    Args:
        features: shape ``(n, len(FEATURES))``.
        labels: shape ``(n,)``, 1.0 relevant, 0.0 not.
        groups: shape ``(n,)``, the query each row belongs to (rows of one query need not be adjacent;
            a query with no relevant row counts in the second stage only).
        group_weights: one weight per distinct value of ``groups``, in sorted order of the values
            (default all 1); the Platt stage weighs each row by its query's weight over its row count.
        l2: penalty strength of the first stage (the intercept is not used there: it is constant
            within a query).
        iterations: Newton steps per stage at most.

    Raises:
        ValueError: shapes disagree, or no query has a relevant candidate.
    """
    n, d = features.shape
    if d != len(FEATURES) or labels.shape != (n,) or groups.shape != (n,):
        raise ValueError(f"features must be (n, {len(FEATURES)}), labels and groups (n,); got "
                         f"{features.shape}, {labels.shape}, {groups.shape}")
    keys, inverse = np.unique(groups, return_inverse=True)
    weights_of = np.ones(len(keys)) if group_weights is None else np.asarray(group_weights, dtype=np.float64)
    members = [np.flatnonzero(inverse == g) for g in range(len(keys))]
    usable = [(rows, float(weights_of[g])) for g, rows in enumerate(members) if labels[rows].max() > 0.5]
    if not usable:
        raise ValueError("no query has a relevant candidate")
    per_query = [FEATURES.index(name) for name in QUERY_FEATURES]
    penalty = np.full(d, l2)
    penalty[per_query] = 1e6  # constant within a query: kept at 0 here, fitted by the second stage

    def objective(b: npt.NDArray[np.float64]) -> float:
        total = 0.5 * float(np.sum(penalty * b * b))
        for rows, w in usable:
            z = features[rows] @ b
            y = labels[rows] / labels[rows].sum()
            total += w * float(np.logaddexp.reduce(z) - y @ z)
        return total

    def derivatives(b: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        gradient = penalty * b
        hessian = np.diag(penalty)
        for rows, w in usable:
            x = features[rows]
            z = x @ b
            p = np.exp(z - np.logaddexp.reduce(z))
            y = labels[rows] / labels[rows].sum()
            gradient = gradient + w * (x.T @ (p - y))
            mean = x.T @ p
            hessian = hessian + w * ((x * p[:, None]).T @ x - np.outer(mean, mean))
        return gradient, hessian

    beta = _newton(objective, derivatives, np.zeros(d), iterations)
    beta[per_query] = 0.0
    row_weights = np.zeros(n)
    for g, rows in enumerate(members):
        row_weights[rows] = weights_of[g] / len(rows)
    row_weights *= n / row_weights.sum()
    # Platt stage: σ(a · X·β + the per-query columns' own weights), over every query's rows
    second = np.zeros((n, d))
    second[:, per_query] = features[:, per_query]
    score_column = FEATURES.index("score")  # any column outside QUERY_FEATURES will do
    second[:, score_column] = features @ beta
    platt = fit_calibration(second, labels, row_weights, l2=0.0, iterations=iterations).vector()
    combined = float(platt[score_column]) * beta
    combined[per_query] += platt[per_query]
    return Calibration({name: round(float(c), 4) for name, c in zip(FEATURES, combined, strict=True)})


CALIBRATION = Calibration(
    weights={
        "intercept": -11.8186,
        "score": 5.1518,
        "kind_best_cosine": 0.9302,
        "kind_cosine_gap": -1.5077,
        "kind_bm25_share": 1.1463,
        "query_best_cosine": 8.7563,
    },
    source=(
        "benchmarks/fit_calibration.py --method listwise --l2 1.0 on tdr-docs (ADR questions and history "
        "replay), adr-tools, log4brains, govuk-infrastructure and REALTALK, each set weighted equally, and"
        " questions nothing answers (REALTALK's asked of each repository, the ADR questions asked of REALTALK),"
        " together weighted as one set"
    ),
)
"""The model pull uses (docs/adr/0072, 0073, 0076): fitted by ``benchmarks/fit_calibration.py`` on
stores whose decisions are embedded by three views (docs/adr/0075), every set weighted equally; its
leave-one-set-out figures are in ADR 0076."""
