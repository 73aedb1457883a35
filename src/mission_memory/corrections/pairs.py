"""Retrieval-correction pairs: "retrieved X, should have served Y", as JSON Lines for training a retriever.

docs/design.md §6 ("a dataset of retrieved X, corrected Y pairs") in the shape docs/design.md §6.3
fixes: one object per retrieval-caused correction, ``{"correction_id", "event_id", "time",
"mission", "query", "retrieved", "missed", "correction_class", "category"}``. ``time`` is the
correction's time (ISO 8601, UTC); ``query`` is the retrieval event's task; ``retrieved`` the record
ids the digest served, in digest order; ``missed`` those it should have served. Read by
``mission-memory ranking tune``.

Amended (ADR 0062): each pair also carries ``retrieved_records`` and ``missed_records``, one object per
record the reading store can see — ``{"id", "kind", "title", "ref"}`` (``ref`` the provenance
reference: path, commit sha, tracker key) — so a pair can train or tune a retriever without a second
lookup; a record outside the caller's clearance is left out of these lists (its id stays in
``retrieved``/``missed``, which carry ids only, as before).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import timedelta
from typing import Any

from mission_memory.corrections.practitioner_records import Correction, RetrievalCaused
from mission_memory.records import Record
from mission_memory.retrieval_events import RetrievalEvent
from mission_memory.stores.base import MemoryStore

__all__ = ["correction_pairs", "pairs_jsonl"]


def _event(store: MemoryStore, correction: Correction) -> RetrievalEvent | None:
    label = correction.label
    if label.retrieval_event_id is None or label.retrieval_event_time is None:
        return None
    moment = label.retrieval_event_time
    around = store.retrieval_events_matching(
        since=moment - timedelta(milliseconds=1), until=moment + timedelta(milliseconds=1), limit=1000
    )
    return next((e for e in around if e.id == label.retrieval_event_id), None)


def correction_pairs(store: MemoryStore, corrections: Iterable[Correction]) -> Iterator[dict[str, Any]]:
    """One pair per retrieval-caused correction whose retrieval event is still stored, in the order given."""
    for correction in corrections:
        if correction.label.retrieval_caused is not RetrievalCaused.TRUE or not correction.label.missed_record_ids:
            continue
        event = _event(store, correction)
        if event is None:
            continue
        retrieved, missed = list(event.record_ids), list(correction.label.missed_record_ids)
        records = store.get(list(dict.fromkeys(retrieved + missed)))

        def described(ids: list[str], records: dict[str, Record] = records) -> list[dict[str, str]]:
            return [{"id": r, "kind": records[r].kind.value, "title": records[r].title,
                     "ref": records[r].provenance.ref} for r in ids if r in records]

        yield {
            "correction_id": correction.correction_id,
            "event_id": event.id,
            "time": correction.time.isoformat(),
            "mission": correction.mission,
            "query": event.query,
            "retrieved": list(event.record_ids),
            "missed": list(correction.label.missed_record_ids),
            "correction_class": correction.correction_class,
            "category": correction.category,
            "retrieved_records": described(retrieved),
            "missed_records": described(missed),
        }


def pairs_jsonl(pairs: Iterable[dict[str, Any]]) -> str:
    """The pairs as JSON Lines (UTF-8 text, one object per line, a newline after each)."""
    return "".join(json.dumps(pair, ensure_ascii=False, sort_keys=False) + "\n" for pair in pairs)
