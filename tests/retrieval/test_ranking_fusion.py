"""Fusion and priors keep the order the retrievers agree on (ADR 0031)."""

from __future__ import annotations

from datetime import UTC, datetime

from mission_memory.records import Provenance, Record, RecordKind, SourceKind
from mission_memory.retrieval.ranking import BEFORE_PARAMS, Candidate, RankingParams, apply_priors, fuse
from mission_memory.stores.base import Hit


def _decision(ref: str) -> Record:
    return Record.build(
        kind=RecordKind.DECISION, title=ref, text=f"text of {ref}", criticality=0.7,
        provenance=Provenance(kind=SourceKind.ADR, ref=ref, uri="file:///x", mission="m",
                              time=datetime(2024, 1, 1, tzinfo=UTC)),
        attributes={"status": "accepted"},
    )


def test_priors_keep_the_fused_order_of_two_critical_records_near_the_top() -> None:
    """An accepted decision's criticality lifts its score; two such decisions fused at 0.99 and
    0.96 must not both be capped to 1.0 and then ordered by record id."""
    best = Candidate(record_id="b-best", score=0.99, record=_decision("0002.md"))
    second = Candidate(record_id="a-second", score=0.96, record=_decision("0001.md"))
    ranked = apply_priors([second, best], RankingParams())
    assert [c.record_id for c in ranked] == ["b-best", "a-second"]
    assert ranked[0].score > ranked[1].score
    assert all(0.0 <= c.score <= 1.0 for c in ranked)


def test_a_rare_decisive_term_bm25_ranks_far_ahead_lifts_its_record_above_near_identical_ones() -> None:
    """Issue 12's "kOps" case: six cluster decisions within 0.02 cosine of each other; the EKS
    decision is seventh by cosine but BM25 puts it first by a wide margin (the rare term). Rank
    fusion with k = 60 flattens that margin to one rank step; score fusion keeps it."""
    dense = [Hit(rid, cos) for rid, cos in
             [("a", 0.860), ("b", 0.858), ("c", 0.856), ("d", 0.853), ("e", 0.850), ("f", 0.847), ("eks", 0.845)]]
    bm25 = [Hit("eks", 10.0), Hit("a", 4.0), Hit("b", 3.9), Hit("c", 3.8)]
    assert fuse(dense, bm25, BEFORE_PARAMS)[0].record_id != "eks"
    fused = fuse(dense, bm25, RankingParams())
    assert fused[0].record_id == "eks"
    assert all(0.0 <= c.score <= 1.0 for c in fused)


def test_convex_fusion_scores_a_record_first_in_both_lists_one_and_tolerates_a_zero_window() -> None:
    fused = fuse([Hit("x", 0.9), Hit("y", 0.89)], [Hit("x", 5.0), Hit("y", 2.0)], RankingParams(dense_window=0.0))
    assert fused[0].record_id == "x" and fused[0].score == 1.0
