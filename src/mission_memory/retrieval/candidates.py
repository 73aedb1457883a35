"""The candidate lists of a pull's first step, shared by the query steps, triage and the ranking evaluation."""

from __future__ import annotations

from dataclasses import dataclass, field

from mission_memory.records import Layer, RecordKind
from mission_memory.stores.base import Hit, RecordPriors

__all__ = ["CandidateLists"]


@dataclass(frozen=True)
class CandidateLists:
    """Step 1's output: every retriever's hits, by layer and record kind, and the records' priors.

    Attributes:
        dense, bm25: hits best first, per layer, per record kind (bare merge commits removed).
        critical: the most critical records matching the filters, per layer and kind (empty
            unless :attr:`RankingParams.critical_candidates` asks for them).
        priors: :class:`RecordPriors` of every record in the lists.
        unembedded: ids of BM25 hits that have no vector of the query's model (fusion ranks them by
            their BM25 score alone, docs/adr/0063).
        decision_of: ADR sections among the candidates (document-chunk id) -> the decision record
            of the same file, when known before ranking (the ranking evaluation reads it; pull folds
            sections after reading its best candidates, docs/adr/0066). Empty: no folding here.
        generated, replaced: ids of generated documents and commit id -> successor id
            (docs/adr/0068), likewise known before ranking only in the ranking evaluation.
        bm25_floor: for each layer whose BM25 search returned as many hits as it asks for (so that
            more matched), the lowest BM25 score among them: a kind with no hit in that list may
            still match, up to this score (the calibration reads it, docs/adr/0072).
    """

    dense: dict[Layer, dict[RecordKind, list[Hit]]]
    bm25: dict[Layer, dict[RecordKind, list[Hit]]]
    critical: dict[Layer, dict[RecordKind, list[Hit]]]
    priors: dict[str, RecordPriors]
    unembedded: frozenset[str] = frozenset()
    decision_of: dict[str, str] = field(default_factory=dict)
    generated: frozenset[str] = frozenset()
    replaced: dict[str, str] = field(default_factory=dict)
    bm25_floor: dict[Layer, float] = field(default_factory=dict)
