"""RRF fusion, superseded demotion, near-duplicate suppression and filter validation."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from mission_memory.errors import InputError
from mission_memory.records import Provenance, Record, RecordKind, SourceKind
from mission_memory.retrieval.filters import parse_filters, parse_scope
from mission_memory.retrieval.near_duplicates import suppress_near_duplicates
from mission_memory.retrieval.query_terms import query_terms
from mission_memory.retrieval.ranking import (
    Candidate,
    RankingParams,
    apply_priors,
    fuse,
)
from mission_memory.stores.base import Hit


def _decision(ref: str, **attributes: object) -> Record:
    return Record.build(
        kind=RecordKind.DECISION, title=ref, text=f"text of {ref}",
        provenance=Provenance(kind=SourceKind.ADR, ref=ref, uri="file:///x", mission="m",
                              time=datetime(2024, 1, 1, tzinfo=UTC)),
        attributes=dict(attributes),
    )


def test_a_record_ranked_first_by_both_retrievers_scores_one() -> None:
    fused = fuse([Hit("1", 0.9), Hit("2", 0.89)], [Hit("1", 12.0), Hit("3", 11.0)], RankingParams())
    assert fused[0].record_id == "1" and fused[0].score == pytest.approx(1.0)
    assert {c.record_id for c in fused} == {"1", "2", "3"}


def test_hits_far_below_the_best_are_cut_before_fusion() -> None:
    params = RankingParams(dense_window=0.05, bm25_ratio=0.5)
    fused = fuse([Hit("1", 0.90), Hit("2", 0.70)], [Hit("3", 10.0), Hit("4", 2.0)], params)
    assert {c.record_id for c in fused} == {"1", "3"}


def test_superseded_decisions_are_marked_and_demoted_below_their_successor() -> None:
    old = Candidate(record_id="1", score=0.9, record=_decision("0001.md", status="superseded", superseded_by=["0002"]))
    new = Candidate(record_id="2", score=0.6, record=_decision("0002.md", status="accepted"))
    ranked = apply_priors([old, new], RankingParams())
    assert [c.record_id for c in ranked] == ["2", "1"]
    assert ranked[1].superseded and not ranked[0].superseded


def test_near_duplicates_are_suppressed_by_text_and_by_vector() -> None:
    a = Candidate(record_id="1", score=0.9, record=_decision("a.md"))
    same_text = Candidate(record_id="2", score=0.8, record=Record.build(
        kind=RecordKind.DOC_CHUNK, title="copy", text="Text   of a.md",
        provenance=Provenance(kind=SourceKind.DOC, ref="copy.md", uri="file:///c", mission="m",
                              time=datetime(2024, 1, 1, tzinfo=UTC))))
    near = Candidate(record_id="3", score=0.7, record=_decision("c.md"))
    other = Candidate(record_id="4", score=0.6, record=_decision("d.md"))
    v = np.array([1.0, 0.0], dtype=np.float32)
    vectors = {"1": v, "3": np.array([0.999, 0.0447], dtype=np.float32), "4": np.array([0.0, 1.0], dtype=np.float32)}
    kept, dropped = suppress_near_duplicates([a, same_text, near, other], vectors, 0.97)
    assert [c.record_id for c in kept] == ["1", "4"] and dropped == 2


def test_filters_accept_dates_and_the_criticality_alias_and_reject_unknown_keys() -> None:
    f = parse_filters({"component": "api", "criticality": 0.5, "since": "2024-01-01", "until": "2024-12-31"})
    assert f.min_criticality == 0.5 and f.until is not None and f.until.hour == 23
    with pytest.raises(InputError, match="colour"):
        parse_filters({"colour": "red"})
    with pytest.raises(InputError, match="since"):
        parse_filters({"since": "2025-01-01", "until": "2024-01-01"})
    with pytest.raises(InputError, match=r"min_criticality|criticality"):
        parse_filters({"criticality": 3})
    with pytest.raises(InputError, match="scope 'everything'"):
        parse_scope("everything")


def test_query_terms_drop_stop_words_in_english_and_ukrainian() -> None:
    assert query_terms("How do we add the retries to the upload proxy?") == ["retries", "upload", "proxy"]
    assert query_terms("Як ми налаштуємо резервне копіювання для бази даних") == [
        "налаштуємо", "резервне", "копіювання", "бази", "даних"
    ]


def test_at_equal_relevance_a_more_critical_record_ranks_first() -> None:
    commit = Candidate(record_id="1", score=0.8, record=Record.build(
        kind=RecordKind.COMMIT, title="c", text="c", criticality=0.3,
        provenance=Provenance(kind=SourceKind.COMMIT, ref="abc", uri="file:///x", mission="m",
                              time=datetime(2024, 1, 1, tzinfo=UTC))))
    decision = Candidate(record_id="2", score=0.8, record=_decision("0002.md", status="accepted"))
    ranked = apply_priors([commit, decision], RankingParams())
    assert [c.record_id for c in ranked] == ["2", "1"]
    assert all(0.0 <= c.score <= 1.0 for c in ranked)


def test_priors_apply_to_every_candidate_before_any_is_cut() -> None:
    """A critical record ranked 50th by similarity is not cut before its priors lift it into the
    few times max_entries (10 × 4) that selection reads."""
    from mission_memory.records import Layer
    from mission_memory.retrieval.candidates import CandidateLists
    from mission_memory.retrieval.query import rank_candidates
    from mission_memory.stores.base import RecordPriors

    dense = [Hit(f"d{i}", 0.9 - i * 0.0001) for i in range(50)]
    priors = {h.record_id: RecordPriors(Layer.DOMAIN, RecordKind.DOC_CHUNK, False, 0.1, False) for h in dense}
    priors["d49"] = RecordPriors(Layer.DOMAIN, RecordKind.DOC_CHUNK, False, 1.0, False)
    lists = CandidateLists(dense={Layer.DOMAIN: {RecordKind.DOC_CHUNK: dense}}, bm25={}, critical={}, priors=priors)
    ranked = rank_candidates(lists, (Layer.DOMAIN,), RankingParams())
    assert len(ranked) == 50
    assert [c.record_id for c in ranked].index("d49") < 40  # last by similarity, in the head once criticality weighs in


def test_a_ranking_policy_can_take_candidates_by_criticality() -> None:
    from mission_memory.records import Layer
    from mission_memory.retrieval.candidates import CandidateLists
    from mission_memory.retrieval.query import rank_candidates
    from mission_memory.stores.base import RecordPriors

    prior = RecordPriors(Layer.DOMAIN, RecordKind.DOC_CHUNK, False, 0.5, False)
    lists = CandidateLists(
        dense={Layer.DOMAIN: {RecordKind.DOC_CHUNK: [Hit("similar", 0.9)]}}, bm25={},
        critical={Layer.DOMAIN: {RecordKind.DOC_CHUNK: [Hit("critical", 1.0)]}},
        priors={"similar": prior, "critical": prior},
    )
    ranked = rank_candidates(lists, (Layer.DOMAIN,), RankingParams(critical_candidates=5))
    assert {c.record_id for c in ranked} == {"similar", "critical"}
