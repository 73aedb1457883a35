"""The text a short domain event is embedded by: the event itself after the event before it in its sector.

A short dialog turn or event ("Lisbon, definitely.", "resolved", "same again at 14:05") says little
on its own: what it is about is in the turn before it. So the vector of an event whose text is
shorter than :data:`SHORT_TEXT_CHARS` is computed from the previous event of the same mission and
sector (a conversation, a service), cut to :data:`CONTEXT_CHARS`, followed by the event's own
passage text; a longer event says what it is about and is embedded alone (given context too, it
drew the questions about the turn before it: REALTALK dense R@5 fell 47.2 -> 41.2 when every turn
was embedded after its predecessor, docs/adr/0070). Only the vector sees the context: the record's
title and text — what BM25 indexes and what a digest shows — stay the event alone.

The previous event is looked up when the vector is made (by the embedding queue and ``reindex``),
not when the event is stored, so the record and its content-derived id do not depend on what else
was stored before it. It is the newest event of the same mission and component whose time is before
the event's (equal times: the one stored first), at most :data:`CONTEXT_HORIZON` before it. An event
stored before its predecessor keeps the vector it was given until ``reindex`` (docs/adr/0070).

Measured on REALTALK (Lee et al., 2025; ``benchmarks/bench_dialog_recall.py``); the figures and the
variants tried are in docs/adr/0070. The idea of embedding a short unit with its neighbourhood is
that of contextual retrieval (Anthropic, "Introducing Contextual Retrieval", 2024) and of
context-window chunk expansion in conversational memory.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import timedelta

from mission_memory.records import Record, RecordKind
from mission_memory.stores.base import MemoryStore

__all__ = [
    "CONTEXT_CHARS",
    "CONTEXT_HORIZON",
    "SHORT_TEXT_CHARS",
    "contextual_passages",
    "embedded_with_context",
    "previous_events",
]

SHORT_TEXT_CHARS = 50
"""Events whose text is shorter than this many characters (``"Speaker: "`` included) are embedded
after their previous event; a third of REALTALK's turns (docs/adr/0070)."""

CONTEXT_CHARS = 400
"""Characters of the previous event's text put before an event's own passage (about 100 e5 tokens)."""

CONTEXT_HORIZON = timedelta(days=7)
"""How far back the previous event may lie; an older one is another conversation, not context."""

_EVENT = RecordKind.DOMAIN_EVENT.value
_READ_LIMIT = 20_000


def embedded_with_context(record: Record) -> bool:
    """True when ``record``'s vector is (or, once embedded, will be) made with its previous event's text:
    a domain event shorter than :data:`SHORT_TEXT_CHARS`. Such a vector is close to its predecessor's,
    so it says nothing about whether the two records repeat each other (near-duplicate suppression
    compares them by text instead, docs/adr/0070)."""
    return record.kind is RecordKind.DOMAIN_EVENT and len(record.text.strip()) < SHORT_TEXT_CHARS


def previous_events(store: MemoryStore, records: Sequence[Record]) -> dict[str, Record]:
    """The previous event of each domain-event record: same mission and component, earlier time.

    Every domain event of ``records`` is looked up, short or not (:func:`contextual_passages` picks
    the short ones).

    One store read per mission in ``records`` (events of the mission between the earliest event's
    time minus :data:`CONTEXT_HORIZON` and the latest's), so a batch costs a few reads however many
    events it holds.

    Args:
        store: the store the records are in.
        records: any records; those that are not domain events get no entry.

    Returns:
        ``{record id: previous event record}`` for the events that have one.

    Raises:
        BackendUnavailable: the store cannot be read.
    """
    by_mission: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        if record.kind is RecordKind.DOMAIN_EVENT:
            by_mission[record.provenance.mission].append(record)
    out: dict[str, Record] = {}
    for mission, events in by_mission.items():
        earliest = min(e.provenance.time for e in events)
        latest = max(e.provenance.time for e in events)
        # newest first, equal times newest-stored first; `until` is exclusive, so reach just past `latest`
        around = store.records_of_kind(
            [_EVENT], mission=mission, since=earliest - CONTEXT_HORIZON,
            until=latest + timedelta(microseconds=1), limit=_READ_LIMIT,
        )
        position = {r.id: i for i, r in enumerate(around)}
        for event in events:
            start = position.get(event.id)
            if start is None:  # not stored (deleted meanwhile) or beyond the read limit
                continue
            for older in around[start + 1 :]:
                if older.provenance.time < event.provenance.time - CONTEXT_HORIZON:
                    break
                if older.component == event.component:
                    out[event.id] = older
                    break
    return out


def contextual_passages(
    store: MemoryStore, records: Sequence[Record], passage: Callable[[Record], str] | None = None
) -> list[str]:
    """The texts ``records`` are embedded by, row-aligned: a short event's previous event, then its passage.

    Args:
        store: the store the records are in (read for the previous events).
        records: the records about to be embedded, of any kind.
        passage: the passage text of one record (default :attr:`Record.embedding_text`); records
            that are not domain events, events of :data:`SHORT_TEXT_CHARS` or more and events
            without a previous one are embedded by it alone.

    Returns:
        One text per record, in order: ``"<previous event's text, cut>\\n<passage>"`` for a short
        event with a previous event, ``passage(record)`` otherwise.

    Raises:
        BackendUnavailable: the store cannot be read.
    """
    text_of = passage or (lambda r: r.embedding_text)
    short = [r for r in records if embedded_with_context(r)]
    previous = previous_events(store, short) if short else {}
    out = []
    for record in records:
        own = text_of(record)
        before = previous.get(record.id)
        out.append(f"{_cut(before.text, CONTEXT_CHARS)}\n{own}" if before is not None else own)
    return out


def _cut(text: str, limit: int) -> str:
    """The last ``limit`` characters of ``text`` (the end of the previous turn is what the next answers),
    starting at a word."""
    text = text.strip()
    if len(text) <= limit:
        return text
    tail = text[-limit:]
    space = tail.find(" ")
    return tail[space + 1 :] if 0 <= space < limit // 2 else tail
