"""The retrieval-correction signal: link a correction to the retrieval event it follows, and label it.

docs/design.md §6 and docs/adr/0024. A correction follows the latest retrieval event of its session
before it; without one, the latest event of the same operator and mission within the link window
(setting ``correction_link_window_minutes``). The label:

* ``unknown`` — no event precedes the correction;
* ``true`` — at the event's time memory held a record relevant to the correction that the digest
  left out, or the digest served only stale (superseded) relevant records;
* ``false`` — memory held nothing relevant then, or the digest served it.

"Relevant" is the record the correction names (``expected``: a record id, a provenance reference such
as a path or a commit sha, or ``ADR-N``); else a domain or workflow record of the correction's
component (when it has one) whose cosine similarity with the correction's topic reaches the relevance
threshold (setting ``correction_relevance_threshold``; its precision is measured in ADR 0024). The
topic is the operator's summary for an explicit correction, and the task of the retrieval event for a
derived one (its summary is built from fields and says nothing of the topic). "Held at the event's
time" is read from provenance time: a record whose source is dated after the event does not count
(a record ingested after the event but dated before it does; the store keeps no ingest time in its
protocol).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import timedelta

from mission_memory.corrections.practitioner_records import (
    Correction,
    CorrectionLabel,
    CorrectionSource,
    RetrievalCaused,
)
from mission_memory.corrections.topic_link import topic_related
from mission_memory.decisions import DecisionAttributes
from mission_memory.embeddings import Embedder
from mission_memory.errors import InputError
from mission_memory.records import Layer, Record, RecordKind
from mission_memory.retrieval.ranking import is_superseded
from mission_memory.retrieval_events import RetrievalEvent
from mission_memory.stores.base import MemoryStore
from mission_memory.stores.filters import QueryFilters, SearchFilter

__all__ = ["RELEVANT_LAYERS", "label_correction", "preceding_event", "relevant_records", "resolve_references"]

RELEVANT_LAYERS = (Layer.DOMAIN, Layer.WORKFLOW)
"""Layers a correction's relevant record may live in (a practitioner record is never the missed context)."""

_TOPIC_CANDIDATES = 20
_ADR = re.compile(r"^(?:ADR[\s\-_#]*)?0*(\d{1,5})$", re.IGNORECASE)  # ADR-0005, ADR 5, 0005 (as --supersedes)
_HEX = re.compile(r"^[0-9a-f]{7,40}$")


_LINK_CANDIDATES = 20


def preceding_event(store: MemoryStore, correction: Correction, window: timedelta) -> RetrievalEvent | None:
    """The retrieval event ``correction`` follows, or None (ADR 0024, amended by ADR 0062).

    Candidates are the events within ``window`` before the correction: its session's first (newest
    first), then the same operator's on the same mission. A derived correction (prompt, transcript)
    follows the newest candidate of its session. An explicit correction follows the newest candidate
    whose task it is about (:func:`~mission_memory.corrections.topic_link.topic_related`: its
    component named in the query, or a content word shared with its summary); none such: None, and
    the label is ``unknown``. Handover briefs (scope ``handover``) are not tasks a correction corrects.
    """
    since = correction.time - window
    candidates: list[RetrievalEvent] = []
    if correction.session_id:
        candidates += store.retrieval_events_matching(
            session_id=correction.session_id, since=since, until=correction.time, limit=_LINK_CANDIDATES
        )
    if correction.operator is not None:
        candidates += store.retrieval_events_matching(
            operator=correction.operator, mission=correction.mission, since=since, until=correction.time,
            limit=_LINK_CANDIDATES,
        )
    seen: set[str] = set()
    ordered = []
    for event in candidates:
        if event.id not in seen and event.scope != "handover":
            seen.add(event.id)
            ordered.append(event)
    if correction.source is not CorrectionSource.EXPLICIT:
        in_session = [e for e in ordered if correction.session_id and e.session_id == correction.session_id]
        pool = in_session or ordered
        return pool[0] if pool else None
    for event in ordered:
        if topic_related(correction.summary, correction.component, event.query):
            return event
    return None


def resolve_references(store: MemoryStore, mission: str, refs: Sequence[str]) -> dict[str, list[str]]:
    """Record ids by reference, for the references a correction names (``--expected``).

    A reference is a record id (32 hex), a provenance reference of ``mission`` (a path, a path#anchor,
    a commit sha or its prefix of 7+ hex digits), or ``ADR-N`` / ``ADR 0005`` / ``0005``.

    Raises:
        InputError: a reference names no stored record (the message says which forms are accepted).
    """
    resolved: dict[str, list[str]] = {}
    for ref in refs:
        ids = _resolve(store, mission, ref)
        if not ids:
            raise InputError(
                f"expected {ref!r} names no record stored in mission {mission!r}: give a record id, a path as"
                " ingested (docs/adr/0002-x.md), a commit sha, or an ADR as ADR-N or its number"
            )
        resolved[ref] = ids
    return resolved


def _resolve(store: MemoryStore, mission: str, ref: str) -> list[str]:
    if store.get([ref]):
        return [ref]
    keys = [f"{mission}:{kind.value}:{ref}" for kind in RecordKind if kind is not RecordKind.CORRECTION_PATTERN]
    by_key = store.ids_by_source_keys(keys)
    if by_key:
        return sorted(by_key.values())
    where = SearchFilter(RELEVANT_LAYERS, mission=mission)
    adr = _ADR.match(ref)
    if adr:
        number = int(adr.group(1))
        ids = store.phrase_search([f"adr {number:04d}"], where, 10, title_only=True)
        return [
            rid for rid, record in store.get(ids).items()
            if record.kind is RecordKind.DECISION and DecisionAttributes.read(record.attributes).number == number
        ]
    if _HEX.match(ref.lower()):
        commits = store.records_of_kind([RecordKind.COMMIT.value], mission=mission, limit=100_000)
        return [r.id for r in commits if r.provenance.ref.startswith(ref.lower())]
    return []


def relevant_records(
    store: MemoryStore,
    embedder: Embedder,
    correction: Correction,
    event: RetrievalEvent,
    threshold: float,
) -> list[Record]:
    """The records relevant to ``correction`` that memory held at ``event``'s time.

    Args:
        threshold: the cosine similarity a record needs with the correction's topic (when the
            correction names no record), in [-1, 1].

    Returns:
        The named records (``expected``) dated no later than the event; else the records of the
        correction's component and mission dated no later than the event whose similarity with
        the topic reaches ``threshold``, most similar first.
    """
    if correction.expected:
        ids = [rid for found in resolve_references(store, correction.mission, correction.expected).values() for rid in found]
        records = store.get(list(dict.fromkeys(ids)))
        return [records[r] for r in dict.fromkeys(ids) if r in records and records[r].provenance.time <= event.time]
    topic = correction.summary if correction.source is CorrectionSource.EXPLICIT else event.query
    where = SearchFilter(
        RELEVANT_LAYERS,
        QueryFilters(mission=correction.mission, component=correction.component, until=event.time),
    )
    hits = store.dense_search_by_layer(embedder.embed_query(topic), embedder.model_id, where, _TOPIC_CANDIDATES)
    best = sorted((h for layer_hits in hits.values() for h in layer_hits), key=lambda h: -h.score)
    ids = [h.record_id for h in best if h.score >= threshold]
    records = store.get(ids)
    return [records[r] for r in ids if r in records]


def label_correction(
    store: MemoryStore,
    embedder: Embedder,
    correction: Correction,
    *,
    window: timedelta,
    threshold: float,
) -> CorrectionLabel:
    """Link ``correction`` to the retrieval event it follows and label it (see the module docstring).

    Returns:
        The label, the event, the records the digest served, and the relevant records it missed
        (left out, or served only stale).
    """
    event = preceding_event(store, correction, window)
    if event is None:
        return CorrectionLabel(retrieval_caused=RetrievalCaused.UNKNOWN)
    served = tuple(event.record_ids)
    relevant = relevant_records(store, embedder, correction, event, threshold)
    current = [r.id for r in relevant if not is_superseded(r)]
    missed = [rid for rid in current if rid not in served]
    served_relevant = [r for r in relevant if r.id in served]
    if not missed and served_relevant and all(is_superseded(r) for r in served_relevant):
        missed = [r.id for r in served_relevant]  # the digest served only stale context
    return CorrectionLabel(
        retrieval_caused=RetrievalCaused.TRUE if missed else RetrievalCaused.FALSE,
        retrieval_event_id=event.id,
        retrieval_event_time=event.time,
        missed_record_ids=tuple(missed),
        served_record_ids=served,
    )
