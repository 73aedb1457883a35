"""The relevance calibration: its fit, its features, and what its scores mean on a real store (docs/adr/0072)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.records import Layer, RecordKind
from mission_memory.retrieval.calibration import (
    CALIBRATION,
    FEATURES,
    Calibration,
    calibrate,
    candidate_features,
    fit_calibration,
    fit_listwise,
)
from mission_memory.retrieval.candidates import CandidateLists
from mission_memory.retrieval.query import fuse_per_kind
from mission_memory.retrieval.ranking import Candidate, RankingParams
from mission_memory.stores.base import Hit, RecordPriors
from tests.conftest import GitRepo


def _synthetic(rng: np.random.Generator, truth: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.zeros((n, len(FEATURES)))
    x[:, FEATURES.index("intercept")] = 1.0
    x[:, FEATURES.index("score")] = rng.uniform(0, 1, n)
    x[:, FEATURES.index("kind_cosine_gap")] = rng.uniform(0, 1, n)
    y = (rng.uniform(0, 1, n) < 1 / (1 + np.exp(-x @ truth))).astype(float)
    return x, y


def _truth() -> np.ndarray:
    truth = np.zeros(len(FEATURES))
    truth[FEATURES.index("intercept")] = -2.0
    truth[FEATURES.index("score")] = 3.0
    truth[FEATURES.index("kind_cosine_gap")] = -2.5
    return truth


def test_the_pointwise_fit_recovers_the_weights_that_generated_the_labels() -> None:
    x, y = _synthetic(np.random.default_rng(7), _truth(), 40_000)
    assert np.abs(fit_calibration(x, y, l2=0.01).vector() - _truth()).max() < 0.2


def test_the_listwise_fit_ranks_like_the_generating_model_and_its_probabilities_are_calibrated() -> None:
    rng = np.random.default_rng(11)
    x, y = _synthetic(rng, _truth(), 40_000)
    groups = np.repeat(np.arange(400), 100)
    model = fit_listwise(x, y, groups, l2=0.01)
    fitted = model.vector()
    # the ranking stage is identified up to scale; the Platt stage sets the scale and the intercept
    ratio = fitted[FEATURES.index("kind_cosine_gap")] / fitted[FEATURES.index("score")]
    assert ratio == pytest.approx(-2.5 / 3.0, abs=0.15)
    p = model.probabilities(x)
    for lo in (0.0, 0.2, 0.4):
        band = (p >= lo) & (p < lo + 0.2)
        assert abs(float(p[band].mean()) - float(y[band].mean())) < 0.05


def test_the_listwise_fit_learns_from_queries_nothing_answers_how_unlikely_a_poor_match_is() -> None:
    # Every query of the first fit had an answer, so the best candidate of a query the store knows
    # nothing about scored like the best of one it answers. The query's best cosine is constant
    # within a query: only the second stage, which also sees the unanswered queries, can weigh it.
    rng = np.random.default_rng(5)
    rows, labels, groups = [], [], []
    for g in range(600):
        answered = g % 2 == 0
        x = np.zeros((50, len(FEATURES)))
        x[:, FEATURES.index("intercept")] = 1.0
        x[:, FEATURES.index("score")] = rng.uniform(0, 1, 50)
        x[:, FEATURES.index("query_best_cosine")] = rng.uniform(0.5, 1.0) if answered else rng.uniform(0.0, 0.5)
        y = np.zeros(50)
        if answered:
            y[int(np.argmax(x[:, FEATURES.index("score")]))] = 1.0
        rows.append(x)
        labels.append(y)
        groups.append(np.full(50, g))
    x, y = np.vstack(rows), np.concatenate(labels)
    model = fit_listwise(x, y, np.concatenate(groups), l2=0.01)
    assert model.weights["query_best_cosine"] > 1.0
    best_of = [model.probabilities(r).max() for r in rows]
    assert float(np.mean(best_of[1::2])) < 0.1 and float(np.mean(best_of[0::2])) > 0.4
    # the first stage still orders candidates within a query by their score alone
    assert model.preserves_kind_order()


def test_the_fits_refuse_labels_of_one_class_and_wrong_shapes() -> None:
    x = np.ones((10, len(FEATURES)))
    with pytest.raises(ValueError, match="relevant"):
        fit_calibration(x, np.zeros(10))
    with pytest.raises(ValueError, match="features must be"):
        fit_calibration(np.ones((10, 3)), np.r_[np.zeros(5), np.ones(5)])
    with pytest.raises(ValueError, match="no query"):
        fit_listwise(x, np.zeros(10), np.zeros(10, dtype=np.int64))


def _lists() -> CandidateLists:
    priors = {
        "d1": RecordPriors(Layer.WORKFLOW, RecordKind.DECISION, False, 0.7, False),
        "d2": RecordPriors(Layer.WORKFLOW, RecordKind.DECISION, False, 0.7, False),
        "c1": RecordPriors(Layer.WORKFLOW, RecordKind.COMMIT, False, 0.3, False),
        "e1": RecordPriors(Layer.DOMAIN, RecordKind.DOMAIN_EVENT, False, 0.5, False),
    }
    return CandidateLists(
        dense={Layer.WORKFLOW: {RecordKind.DECISION: [Hit("d1", 0.88), Hit("d2", 0.86)],
                                RecordKind.COMMIT: [Hit("c1", 0.83)]}},
        bm25={Layer.WORKFLOW: {RecordKind.COMMIT: [Hit("c1", 12.0)]},
              Layer.DOMAIN: {RecordKind.DOMAIN_EVENT: [Hit("e1", 6.0)]}},
        critical={}, priors=priors, unembedded=frozenset({"e1"}),
    )


def _candidates() -> list[Candidate]:
    return [Candidate("d1", 1.0, dense_rank=1, cosine=0.88), Candidate("d2", 0.6, dense_rank=2, cosine=0.86),
            Candidate("c1", 1.0, 1, 1, cosine=0.83), Candidate("e1", 1.0, bm25_rank=1)]


def test_features_describe_each_kind_against_the_best_of_all_kinds() -> None:
    x = candidate_features(_candidates(), _lists())
    column = {name: x[:, i] for i, name in enumerate(FEATURES)}
    assert list(column["score"]) == [1.0, 0.6, 1.0, 1.0]
    # the decisions' best is the best of all kinds; the commits' best lies 0.05 below it
    assert list(column["kind_cosine_gap"][:3]) == pytest.approx([0.0, 0.0, 0.5])
    assert column["kind_best_cosine"][0] == pytest.approx((0.88 - 0.7) / 0.3)
    # no decision matched a query word; the commits hold the best BM25 score, the events half of it
    assert list(column["kind_bm25_share"]) == [0.0, 0.0, 1.0, 0.5]
    # events have no dense hit at all (the one here still waits for its vector)
    assert column["kind_cosine_gap"][3] == 1.0 and column["kind_best_cosine"][3] == 0.0
    # within one kind only the candidate's own score differs, so calibration keeps the kind's order
    assert list(x[0] - x[1]) == [0.4 if n == "score" else 0.0 for n in FEATURES]


def test_when_bm25_found_nothing_at_all_the_best_dense_hit_of_each_kind_scores_one() -> None:
    lexical = _lists()
    absent = replace(lexical, bm25={})
    # with nothing from BM25 anywhere, the dense list alone decides the kind's score (docs/adr/0076) ...
    params = RankingParams()
    by_id = {c.record_id: c.score for c in fuse_per_kind(absent, (Layer.WORKFLOW,), params)}
    assert by_id["d1"] == 1.0 and by_id["c1"] == 1.0
    # ... and with BM25 matching another kind, a kind it did not match keeps the dense weight's share
    by_id = {c.record_id: c.score for c in fuse_per_kind(lexical, (Layer.WORKFLOW,), params)}
    assert by_id["d1"] == pytest.approx(params.dense_weight / (params.dense_weight + params.bm25_weight))


def test_calibrated_candidates_are_probabilities_sorted_best_first_in_each_kinds_order() -> None:
    model = Calibration({"intercept": -2.0, "score": 3.0, "kind_cosine_gap": -3.0})
    out = calibrate(_candidates(), _lists(), model)
    assert [c.record_id for c in out if c.record_id.startswith("d")] == ["d1", "d2"]
    assert out[0].record_id == "d1" and out[0].score == pytest.approx(1 / (1 + np.exp(-1.0)))
    assert all(0.0 < c.score < 1.0 for c in out) and model.preserves_kind_order()
    assert out[0].kind_score == 1.0


def test_a_demotion_acts_on_the_kind_score_a_probability_came_from() -> None:
    model = Calibration({"intercept": -2.0, "score": 3.0})
    [cand] = calibrate([Candidate("d1", 0.9, dense_rank=1, cosine=0.88)], _lists(), model)
    assert model.demoted(cand, 0.25) == pytest.approx(1 / (1 + np.exp(-(-2.0 + 3.0 * 0.9 * 0.25))))
    assert model.demoted(Candidate("x", 0.4), 0.5) == pytest.approx(0.2)  # not calibrated: the score itself


def test_the_shipped_model_was_fitted_and_keeps_each_kinds_order() -> None:
    assert "fit_calibration.py" in CALIBRATION.source
    assert set(CALIBRATION.weights) == set(FEATURES)
    assert CALIBRATION.preserves_kind_order()


ADR = """# 4. Store uploaded files in S3 with object versioning

Date: 2024-03-02

## Status

Accepted

## Context

Uploaded records must survive an accidental overwrite or deletion by a user or by a faulty job.

## Decision

We keep every uploaded file in one S3 bucket with object versioning turned on, and expire old versions
after ninety days.

## Consequences

Restoring a file means reading its previous version; storage costs grow with the number of overwrites.
"""


@pytest.fixture
def store_with_adrs(make_git_repo: Callable[[str], GitRepo], tmp_path: Path) -> Memory:
    repo = make_git_repo("uploads")
    repo.commit("Record the storage decision for uploads", "2024-03-02T10:00:00+00:00",
                {"docs/adr/0004-store-uploads-in-versioned-s3.md": ADR,
                 "docs/operations.md": "# Operations\n\nThe service runs on two containers behind a load balancer.\n"})
    repo.commit("Fix the typo in the load balancer health check path", "2024-03-05T10:00:00+00:00",
                {"deploy/health.txt": "/healthz\n"})
    memory = Memory.open(load_settings(data_dir=tmp_path / "data"))
    memory.ingest_repository(repo.root, mission="uploads")
    return memory


def test_a_task_nothing_answers_scores_low_and_the_one_an_adr_answers_scores_high(store_with_adrs: Memory) -> None:
    # Issue 25: per-kind scores put every kind's best near 1.0 whatever it matched, so scores did not
    # separate the relevant from the unrelated. Calibrated, they estimate the chance of relevance.
    memory = store_with_adrs
    unrelated = memory.query("How long should sourdough bread proof before baking?", token_budget=2000)
    answered = memory.query("How do we keep uploaded files safe from being overwritten by mistake?", token_budget=2000)
    best = answered.entries[0]
    assert best.record.kind is RecordKind.DECISION and "versioning" in best.record.title.lower()
    assert best.score >= 0.4
    assert max((e.score for e in unrelated.entries), default=0.0) < 0.15


@pytest.mark.parametrize("task", [
    "Which typo font should the bakery menu use?",
    "How long should sourdough bread proof before the health inspection?",
])
def test_a_task_that_shares_one_word_with_the_store_still_scores_low(store_with_adrs: Memory, task: str) -> None:
    # Every kind's features were measured against the query's own best, so one weak word in common
    # ("typo", "health") made that record its kind's and the query's best and scored it 0.41–0.43.
    scores = [e.score for e in store_with_adrs.query(task, token_budget=2000).entries]
    assert max(scores, default=0.0) < 0.15


def test_a_task_on_another_subject_scores_well_below_the_task_the_adr_answers(store_with_adrs: Memory) -> None:
    # "versioning" is the ADR's own subject, but a recipe book is not what it decides: 0.53 against the
    # answered task's 0.58 before; the query's best cosine now says how well anything matched at all.
    off = store_with_adrs.query("Plan the versioning of our recipe book for the bakery", token_budget=2000)
    answered = store_with_adrs.query("How do we keep uploaded files safe from being overwritten by mistake?",
                                     token_budget=2000)
    assert off.entries[0].score < 0.3 and answered.entries[0].score > off.entries[0].score + 0.2


def test_a_kind_crowded_out_of_a_full_bm25_list_counts_the_lists_floor_not_zero() -> None:
    # govuk-infrastructure govi-11: a Ukrainian question matched only "AWS"; 60 commits filled the
    # workflow layer's BM25 list, decisions counted 0, and the ADR fell from 4th of all kinds to 56th.
    full = replace(_lists(), bm25_floor={Layer.WORKFLOW: 9.0})
    share = FEATURES.index("kind_bm25_share")
    assert candidate_features(_candidates(), _lists())[0, share] == 0.0
    assert candidate_features(_candidates(), full)[0, share] == pytest.approx(9.0 / 12.0)
