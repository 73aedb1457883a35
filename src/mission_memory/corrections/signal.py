"""The retrieval-correction signal: link a correction to the retrieval event it follows, and label it.

docs/design.md §6 and docs/adr/0024, 0062, 0082. A correction follows a retrieval event within the
link window before it (setting ``correction_link_window_minutes``): one of its session when it has a
session (an explicit one: only of its session), else of the same operator and mission; an explicit
correction prefers the event whose task it is about (:func:`preceding_event`). The label:

* ``unknown`` — no event precedes the correction, or an explicit correction follows its session's
  latest event without being about its task and names no record;
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
from mission_memory.records import Layer, Record, RecordKind, source_key_for
from mission_memory.retrieval.ranking import is_superseded
from mission_memory.retrieval_events import RetrievalEvent
from mission_memory.stores.base import MemoryStore
from mission_memory.stores.filters import QueryFilters, SearchFilter

__all__ = [
    "RELEVANT_LAYERS",
    "label_correction",
    "preceding_event",
    "relevant_records",
    "resolve_reference",
    "resolve_references",
]

RELEVANT_LAYERS = (Layer.DOMAIN, Layer.WORKFLOW)
"""Layers a correction's relevant record may live in (a practitioner record is never the missed context)."""

_TOPIC_CANDIDATES = 20
_ADR = re.compile(r"^(?:ADR[\s\-_#]*)?0*(\d{1,5})$", re.IGNORECASE)  # ADR-0005, ADR 5, 0005 (as --supersedes)
_HEX = re.compile(r"^[0-9a-f]{7,40}$")


_LINK_CANDIDATES = 20


def preceding_event(store: MemoryStore, correction: Correction, window: timedelta) -> RetrievalEvent | None:
    """The retrieval event ``correction`` follows, or None (ADR 0024, amended by ADR 0062 and ADR 0082).

    Candidates are the events within ``window`` before the correction, newest first; handover briefs
    (scope ``handover``) are not tasks a correction corrects.

    * An explicit correction with a session follows an event of that session only, never another
      session's: the newest it is about
      (:func:`~mission_memory.corrections.topic_link.topic_related`: its component named in the
      query, or a content word shared with its summary), else the session's newest (ADR 0082; its
      label then rests on the records it names, :func:`label_correction`). The session has no
      event in the window: None.
    * An explicit correction without a session follows the newest event of the same operator on the
      same mission that it is about; none such: None (ADR 0062).
    * A derived correction (prompt, transcript) follows the newest event of its session, else of
      the same operator on the same mission.
    """
    since = correction.time - window
    in_session = _candidates(store.retrieval_events_matching(
        session_id=correction.session_id, since=since, until=correction.time, limit=_LINK_CANDIDATES
    )) if correction.session_id else []
    explicit = correction.source is CorrectionSource.EXPLICIT
    if explicit and correction.session_id:
        about = next((e for e in in_session if _about(correction, e)), None)
        return about or (in_session[0] if in_session else None)
    if in_session and not explicit:
        return in_session[0]
    by_operator = _candidates(store.retrieval_events_matching(
        operator=correction.operator, mission=correction.mission, since=since, until=correction.time,
        limit=_LINK_CANDIDATES,
    )) if correction.operator is not None else []
    if not explicit:
        return by_operator[0] if by_operator else None
    return next((e for e in by_operator if _about(correction, e)), None)


def _candidates(events: Sequence[RetrievalEvent]) -> list[RetrievalEvent]:
    return [e for e in events if e.scope != "handover"]


def _about(correction: Correction, event: RetrievalEvent) -> bool:
    return topic_related(correction.summary, correction.component, event.query)


def resolve_references(store: MemoryStore, mission: str, refs: Sequence[str]) -> dict[str, list[str]]:
    """Record ids by reference, for the references a correction names (``--expected``).

    A reference is a record id (32 hex), a provenance reference of ``mission`` (a path, a path#anchor,
    a commit sha or its prefix of 7+ hex digits), or ``ADR-N`` / ``ADR 0005`` / ``0005``.

    Raises:
        InputError: a reference names no stored record (the message says which forms are accepted).
    """
    resolved: dict[str, list[str]] = {}
    for ref in refs:
        ids = resolve_reference(store, mission, ref)
        if not ids:
            raise InputError(
                f"expected {ref!r} names no record stored in mission {mission!r}: give a record id, a path as"
                " ingested (docs/adr/0002-x.md), a commit sha, or an ADR as ADR-N or its number"
            )
        resolved[ref] = ids
    return resolved


def resolve_reference(store: MemoryStore, mission: str, ref: str) -> list[str]:
    """The ids of the records ``ref`` names in ``mission`` (forms as for :func:`resolve_references`);
    empty when it names none (nothing is raised)."""
    if store.get([ref]):
        return [ref]
    keys = [source_key_for(mission, kind, ref) for kind in RecordKind if kind is not RecordKind.CORRECTION_PATTERN]
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
        The named records (``expected``; a reference that names no stored record any more is passed
        over) dated no later than the event; else the records of the correction's component and
        mission dated no later than the event whose similarity with the topic reaches
        ``threshold``, most similar first.
    """
    if correction.expected:
        ids = [rid for ref in correction.expected for rid in resolve_reference(store, correction.mission, ref)]
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

    An explicit correction that follows its session's latest event without being about its task
    (:func:`preceding_event`) is labelled by the records it names; naming none, it is ``unknown``
    with the event kept: the similarity rule would measure it against records that query never
    asked for (ADR 0062, ADR 0082).

    Returns:
        The label, the event, the records the digest served, and the relevant records it missed
        (left out, or served only stale).
    """
    event = preceding_event(store, correction, window)
    if event is None:
        return CorrectionLabel(retrieval_caused=RetrievalCaused.UNKNOWN)
    served = tuple(event.record_ids)
    if correction.source is CorrectionSource.EXPLICIT and not correction.expected and not _about(correction, event):
        return CorrectionLabel(retrieval_caused=RetrievalCaused.UNKNOWN, retrieval_event_id=event.id,
                               retrieval_event_time=event.time, served_record_ids=served)
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
