"""Near-duplicate suppression that always keeps the newest of a pair (issue 12 item 1, ADR 0030).

Two candidates are near-duplicates when their normalised texts are equal or their unit vectors'
cosine similarity reaches a threshold (0.97 by default, :attr:`RankingParams.duplicate_cosine`).
Of such a pair the digest shows one entry, at the better one's place and score, and that entry is
the *newer* record: a current decision over a superseded one or over a copy of it of another kind,
else the later provenance time, so a refresh artifact or a re-written text never hides behind the
version it replaced. Only at equal age does relevance decide.

Domain events are near-duplicates also when they are repeats of one event (same source fingerprint,
or same type, sector and text template: :func:`~mission_memory.operations.event_groups.group_key_of_record`),
and of two events the *more critical* is kept whatever their ages: a newer routine repeat never
takes the place of a critical event (docs/adr/0057). The kept candidate counts the repeats merged
into it (:attr:`Candidate.repeats`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from mission_memory.operations.event_groups import group_key_of_record
from mission_memory.records import RecordKind
from mission_memory.retrieval.ranking import Candidate, is_superseded

__all__ = ["is_newer", "suppress_near_duplicates"]


def is_newer(a: Candidate, b: Candidate) -> bool:
    """True when ``a``'s record replaces ``b``'s as the current one of a near-duplicate pair.

    Of two domain events the more critical one replaces the other whatever their dates (docs/adr/0057);
    otherwise a current decision is newer than a superseded one whatever their dates, and than a
    record of another kind that repeats it (a document or template that copies an ADR's text is not
    the decision: adr-tools' ``src/init.md``, two years newer than its ADR 0001, took that ADR's
    place in the digest once decisions were embedded by three views, docs/adr/0075); then the later
    provenance time wins; records without one attached are never newer.
    """
    if a.record is None or b.record is None:
        return False
    both_events = a.record.kind is RecordKind.DOMAIN_EVENT and b.record.kind is RecordKind.DOMAIN_EVENT
    if both_events and a.record.criticality != b.record.criticality:  # never a less critical repeat instead
        return a.record.criticality > b.record.criticality
    a_old, b_old = a.superseded or is_superseded(a.record), b.superseded or is_superseded(b.record)
    if a_old != b_old:
        return b_old
    a_decision, b_decision = a.record.kind is RecordKind.DECISION, b.record.kind is RecordKind.DECISION
    if a_decision != b_decision and not (a_old or b_old):  # a current decision over its copy
        return a_decision
    return a.record.provenance.time > b.record.provenance.time


def _text_key(cand: Candidate) -> str:
    return " ".join((cand.record.text if cand.record else "").split()).lower()


def suppress_near_duplicates(
    candidates: Sequence[Candidate],
    vectors: Mapping[str, npt.NDArray[np.float32]],
    threshold: float,
    keep: int | None = None,
    exempt: frozenset[str] = frozenset(),
) -> tuple[list[Candidate], int]:
    """Drop candidates that repeat another, keeping the newest of each group at the best one's place.

    Args:
        candidates: best first, records attached.
        vectors: unit vectors by record id (candidates without one are compared by text only).
        threshold: cosine similarity at or above which two candidates are near-duplicates.
        keep: at most this many candidates are kept; the rest are still examined, so a newer
            duplicate further down replaces the older one kept.
        exempt: ids kept whatever they resemble (superseded decisions a task asks about by name
            or history, kept beside their successor on purpose); they replace nothing either.

    Returns:
        The kept candidates (best first; a replacing newer record takes the better score) and how
        many were dropped as duplicates.
    """
    limit = len(candidates) if keep is None else keep
    dim = next((v.shape[0] for v in vectors.values()), 0)
    matrix = np.zeros((max(limit, 1), dim), dtype=np.float32)
    has_vector = np.zeros(max(limit, 1), dtype=bool)
    kept: list[Candidate] = []
    texts: dict[str, int] = {}
    groups: dict[str, int] = {}
    dropped = 0
    for cand in candidates:
        if cand.record_id in exempt:
            if len(kept) < limit:
                kept.append(cand)
            continue
        key = _text_key(cand)
        vec = vectors.get(cand.record_id)
        twin = texts.get(key) if key else None
        group = group_key_of_record(cand.record) if cand.record is not None else None
        if twin is None and group is not None:
            twin = groups.get(group)
        if twin is None and vec is not None and kept and has_vector[: len(kept)].any():
            sims = matrix[: len(kept)] @ vec
            sims[~has_vector[: len(kept)]] = -2.0
            best = int(np.argmax(sims))
            if float(sims[best]) >= threshold:
                twin = best
        if twin is not None:
            dropped += 1
            older = kept[twin]
            merged = older.repeats + cand.repeats + 1
            if is_newer(cand, older):
                kept[twin] = replace(cand, score=max(cand.score, older.score), repeats=merged)
                old_key = _text_key(older)
                if old_key and texts.get(old_key) == twin:
                    del texts[old_key]
                if key:
                    texts[key] = twin
                if group is not None:
                    groups[group] = twin
                if vec is not None:
                    matrix[twin], has_vector[twin] = vec, True
            else:
                kept[twin] = replace(older, repeats=merged)
            continue
        if len(kept) >= limit:
            continue
        if key:
            texts[key] = len(kept)
        if group is not None:
            groups[group] = len(kept)
        if vec is not None:
            matrix[len(kept)], has_vector[len(kept)] = vec, True
        kept.append(cand)
    return kept, dropped
