"""Handover notes: what the outgoing operator leaves for the next shift, stored as workflow records.

A note is one of three things shift handovers carry (docs/design.md §6; ICS-201, SRE on-call handovers):
the running hypothesis, the next step, or a warning. It is written by the operator, not quoted from a
repository, but it still reaches the next agent only inside the brief's envelope (ADR 0021): anyone
who can run the CLI can write one. Its id is derived from the operator, the time and the text, so
recording the same note twice keeps one record.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from enum import StrEnum

from mission_memory.errors import InputError
from mission_memory.records import Provenance, Record, RecordKind, SourceKind

__all__ = ["MAX_NOTE_CHARS", "NoteKind", "build_handover_note", "parse_note_kind"]

MAX_NOTE_CHARS = 2_000
"""A note is a few sentences; longer text belongs in a decision record or the tracker."""

_CRITICALITY = {"warning": 0.8, "next-step": 0.7, "hypothesis": 0.6}


class NoteKind(StrEnum):
    """What a handover note says (docs/design.md §6: the running hypothesis, the next step, a warning)."""

    HYPOTHESIS = "hypothesis"
    NEXT_STEP = "next-step"
    WARNING = "warning"


def parse_note_kind(value: str | NoteKind) -> NoteKind:
    """A :class:`NoteKind` from text.

    Raises:
        InputError: ``value`` is not one of hypothesis, next-step, warning.
    """
    if isinstance(value, NoteKind):
        return value
    try:
        return NoteKind(value.strip().lower().replace("_", "-"))
    except ValueError:
        raise InputError(
            f"note kind {value!r} is not one of: {', '.join(k.value for k in NoteKind)}"
        ) from None


def build_handover_note(
    text: str,
    kind: str | NoteKind,
    *,
    mission: str,
    operator: str | None,
    at: datetime,
    session_id: str | None = None,
) -> Record:
    """A ``handover_note`` workflow record (docs/design.md §6).

    Args:
        text: the note, 1 to :data:`MAX_NOTE_CHARS` characters after stripping.
        kind: ``hypothesis``, ``next-step`` or ``warning``.
        mission: the mission the note belongs to.
        operator: the outgoing operator who writes it.
        at: when it was written (timezone-aware, UTC).
        session_id: the agent session it was written in, if any.

    Returns:
        The record; provenance ``handover`` with ref ``handover-note/<note id>``.

    Raises:
        InputError: empty or over-long text, an unknown kind, an empty mission or a naive time.
    """
    note_kind = parse_note_kind(kind)
    body = text.strip()
    if not body:
        raise InputError("the handover note is empty: say the hypothesis, the next step or the warning")
    if len(body) > MAX_NOTE_CHARS:
        raise InputError(
            f"the handover note has {len(body)} characters, more than {MAX_NOTE_CHARS}: keep it to a few"
            " sentences and record a decision (`mission-memory decide`) for the long form"
        )
    if not mission.strip():
        raise InputError("mission is empty: name the mission the note belongs to")
    if at.tzinfo is None:
        raise InputError(f"note time {at.isoformat()} has no timezone")
    digest = hashlib.sha256("\x1f".join((operator or "", at.isoformat(), note_kind.value, body)).encode("utf-8"))
    note_id = digest.hexdigest()[:32]
    first_line = " ".join(body.split())
    title = f"Handover {note_kind.value}: " + (first_line if len(first_line) <= 90 else first_line[:89] + "…")
    return Record.build(
        kind=RecordKind.HANDOVER_NOTE,
        title=title,
        text=body,
        provenance=Provenance(
            kind=SourceKind.HANDOVER, ref=f"handover-note/{note_id}",
            uri=f"mission-memory://handover-note/{note_id}", mission=mission, time=at,
        ),
        criticality=_CRITICALITY[note_kind.value],
        operator=operator,
        attributes={"note_id": note_id, "note_kind": note_kind.value, "session_id": session_id},
        slot=note_id,
    )
