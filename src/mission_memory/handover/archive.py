"""Archiving a rotation brief as a ``handover_brief`` workflow record (docs/design.md §6: "the brief is archived").

One record per shift: its slot is derived from the mission, the outgoing and incoming operators and
the window's start, so building the brief again for the same shift replaces the archived copy
instead of adding another (idempotent per window, from and for). The record's searchable text is
the shift's one-line summary (who handed over to whom, the window, the counts), so a pull naming the
shift or its operators finds it while a pull about anything the brief quotes finds the quoted
records themselves, not their copy; the brief as handed over is kept in the attribute ``brief``.
It is built only from memory's records, so it carries no more than they do (no prompt or
transcript text).
"""

from __future__ import annotations

import hashlib

from mission_memory.handover.brief import RotationBrief
from mission_memory.records import Provenance, Record, RecordKind, SourceKind

__all__ = ["brief_record", "shift_key"]


def shift_key(mission: str, from_operator: str | None, to_operator: str | None, since_iso: str) -> str:
    """The archive slot of one shift: 32 hex digits of SHA-256 over mission, from, for and window start."""
    raw = "\x1f".join((mission, from_operator or "", to_operator or "", since_iso))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]


def _summary(brief: RotationBrief) -> str:
    w, c = brief.window, brief.counts
    return (f"Shift handover from {w.from_operator or 'unknown'} to {w.to_operator or 'unknown'} on mission "
            f"{w.mission}, {w.since.date().isoformat()} to {w.until.date().isoformat()}: {c.get('decisions', 0)} "
            f"decisions, {c.get('corrections', 0)} corrections, {c.get('open_questions', 0)} open questions, "
            f"{c.get('tasks_in_progress', 0)} tasks in progress.")


def brief_record(brief: RotationBrief) -> Record:
    """The ``handover_brief`` record archiving ``brief``.

    Returns:
        A workflow record; provenance ``handover`` with ref ``handover-brief/<shift key>`` and the
        window's end as its time; ``operator`` is the incoming operator; criticality 0.2 (it repeats
        records memory holds); text: the shift's summary (who, when, counts), found by its words
        (BM25) at once and by meaning once the embedding queue or ``reindex`` gives it a vector;
        attribute ``brief``: the brief's text as handed over.
    """
    w = brief.window
    key = shift_key(w.mission, w.from_operator, w.to_operator, w.since.isoformat())
    return Record.build(
        kind=RecordKind.HANDOVER_BRIEF,
        title=f"Handover brief: {w.from_operator or 'unknown'} → {w.to_operator or 'unknown'}"
              f" ({w.since.date().isoformat()} → {w.until.date().isoformat()})",
        text=_summary(brief),
        provenance=Provenance(kind=SourceKind.HANDOVER, ref=f"handover-brief/{key}",
                              uri=f"mission-memory://handover-brief/{key}", mission=w.mission, time=w.until),
        criticality=0.2,
        operator=w.to_operator,
        attributes={
            "shift_key": key,
            "from_operator": w.from_operator,
            "to_operator": w.to_operator,
            "since": w.since.isoformat(),
            "until": w.until.isoformat(),
            "counts": brief.counts,
            "brief": brief.text,
            "token_budget": brief.token_budget,
            "tokens_used": brief.tokens_used,
            "refs": sorted({ref for item, _ in brief.entries for ref in item.refs}),
        },
        slot=key,
    )
