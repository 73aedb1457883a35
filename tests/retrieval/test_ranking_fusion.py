"""Fusion and priors keep the order the retrievers agree on (ADR 0031)."""

from __future__ import annotations

from datetime import UTC, datetime

from mission_memory.records import Provenance, Record, RecordKind, SourceKind
from mission_memory.retrieval.ranking import Candidate, RankingParams, apply_priors


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
