"""Handover notes: what the outgoing operator leaves for the next shift, stored as workflow records.

A note is one of three things shift handovers carry (docs/design.md §6; ICS-201, SRE on-call handovers):
the running hypothesis, the next step, or a warning. It is written by the operator, not quoted from a
repository, but it still reaches the next agent only inside the brief's envelope (ADR 0021): anyone
who can run the CLI can write one. Its id is derived from the operator, the time and the text, so
recording the same note twice keeps one record.

A note stays **open** until its author or a successor closes it (ADR 0060): a later note that names
it in ``closes`` (``handover note --closes ID``) replaces it, and a note of kind ``resolved`` closes
what it names without opening anything. Reading a brief, acknowledging it, or a change of window
closes nothing: :func:`open_notes` is every note of the mission not closed by a later one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum

from mission_memory.capture.redaction import redacted_cut
from mission_memory.errors import InputError
from mission_memory.records import Provenance, Record, RecordKind, SourceKind
from mission_memory.stores.base import MemoryStore

__all__ = ["MAX_NOTE_CHARS", "NoteKind", "build_handover_note", "open_notes",
           "parse_note_kind", "resolve_closed_notes"]

MAX_NOTE_CHARS = 2_000
"""A note is a few sentences; longer text belongs in a decision record or the tracker."""

_CRITICALITY = {"warning": 0.8, "next-step": 0.7, "hypothesis": 0.6, "resolved": 0.3}
_SCAN_LIMIT = 5_000
_MIN_ID_PREFIX = 6



class NoteKind(StrEnum):
    """What a handover note says (docs/design.md §6: the running hypothesis, the next step, a warning)."""

    HYPOTHESIS = "hypothesis"
    NEXT_STEP = "next-step"
    WARNING = "warning"
    RESOLVED = "resolved"


def parse_note_kind(value: str | NoteKind) -> NoteKind:
    """A :class:`NoteKind` from text.

    Raises:
        InputError: ``value`` is not one of hypothesis, next-step, warning, resolved.
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
    closes: Sequence[str] = (),
) -> Record:
    """A ``handover_note`` workflow record (docs/design.md §6).

    Args:
        text: the note, 1 to :data:`MAX_NOTE_CHARS` characters after stripping.
        kind: ``hypothesis``, ``next-step`` or ``warning``.
        mission: the mission the note belongs to.
        operator: the outgoing operator who writes it.
        at: when it was written (timezone-aware, UTC).
        session_id: the agent session it was written in, if any.
        closes: note ids (``note_id``) this note closes, as :func:`resolve_closed_notes` gives them.

    Returns:
        The record; provenance ``handover`` with ref ``handover-note/<note id>``.

    Raises:
        InputError: empty or over-long text, an unknown kind, an empty mission, a naive time, or a
            ``resolved`` note that closes nothing.
    """
    note_kind = parse_note_kind(kind)
    if note_kind is NoteKind.RESOLVED and not closes:
        raise InputError("a resolved note closes an open note: name it with --closes ID (see the brief's note ids)")
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
    digest = hashlib.sha256("\x1f".join((operator or "", at.isoformat(), note_kind.value, body, *closes)).encode("utf-8"))
    note_id = digest.hexdigest()[:32]
    first_line = " ".join(body.split())
    # cut after redaction: a secret the cut would split is redacted whole, not stored as its head
    title = f"Handover {note_kind.value}: " + redacted_cut(first_line, 90)
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
        attributes={"note_id": note_id, "note_kind": note_kind.value, "session_id": session_id,
                    "closes": list(closes)},
        slot=note_id,
    )


def _notes(store: MemoryStore, mission: str, until: datetime | None) -> list[Record]:
    return store.records_of_kind([RecordKind.HANDOVER_NOTE.value], mission=mission, until=until, limit=_SCAN_LIMIT)


def _closed_ids(notes: Sequence[Record]) -> set[str]:
    return {str(c) for r in notes for c in (r.attributes.get("closes") or [])}


def open_notes(store: MemoryStore, mission: str, until: datetime | None = None) -> list[Record]:
    """The handover notes of ``mission`` open at ``until`` (None: now), newest first.

    Open: not of kind ``resolved`` and not named in the ``closes`` of a note written before ``until``.
    Any author's: a note left by an operator two shifts back is still open if nobody closed it.
    """
    notes = _notes(store, mission, until)
    closed = _closed_ids(notes)
    return [r for r in notes if r.attributes.get("note_kind") != NoteKind.RESOLVED.value
            and str(r.attributes.get("note_id")) not in closed]


def resolve_closed_notes(store: MemoryStore, mission: str, refs: Sequence[str]) -> list[str]:
    """The ``note_id`` of each open note of ``mission`` that ``refs`` name.

    A reference is a note id, a record id, or a prefix of either of at least six characters (the
    brief shows the first 12 of the note id).

    Raises:
        InputError: a reference names no open note, or more than one (the message says which).
    """
    notes = open_notes(store, mission)
    found: list[str] = []
    for ref in refs:
        key = ref.strip().lower().removeprefix("handover-note/")
        if len(key) < _MIN_ID_PREFIX:
            raise InputError(f"--closes {ref!r}: give at least {_MIN_ID_PREFIX} characters of the note's id")
        hits = {str(r.attributes.get("note_id")) for r in notes
                if str(r.attributes.get("note_id")).startswith(key) or r.id.startswith(key)}
        if not hits:
            raise InputError(f"--closes {ref!r} names no open handover note of mission {mission!r}"
                             " (closed already, or not a note id: the brief shows each open note's id)")
        if len(hits) > 1:
            raise InputError(f"--closes {ref!r} names {len(hits)} open notes; give more of the id")
        found.extend(hits)
    return list(dict.fromkeys(found))

