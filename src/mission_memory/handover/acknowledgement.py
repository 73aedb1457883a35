"""The incoming operator's acknowledgement of a rotation brief (docs/design.md §6, ICS-201 practice).

An acknowledgement is kept in the store's state under the brief's mission, key
``handover_ack:<shift key>``, as JSON ``{"operator", "time", "brief_id"}``: the archived brief record
stays content-derived and unchanged, and re-building the brief for the same shift keeps the
acknowledgement.
"""

from __future__ import annotations

import json
from datetime import datetime

from mission_memory.capture.redaction import redact_text
from mission_memory.errors import InputError
from mission_memory.records import Record, RecordKind
from mission_memory.stores.base import MemoryStore

__all__ = ["MAX_READ_BACK_CHARS", "Acknowledgement", "acknowledge", "acknowledgement_of", "latest_brief_for"]

Acknowledgement = dict[str, str]
"""``{"operator", "time" (ISO 8601 UTC), "brief_id", "shift_key", "mission"}`` and, when given, ``"read_back"``."""


def _key(shift_key: str) -> str:
    return f"handover_ack:{shift_key}"


def acknowledgement_of(store: MemoryStore, mission: str, shift_key: str) -> Acknowledgement | None:
    """The acknowledgement of the brief archived under ``shift_key``, or None."""
    raw = store.get_state(mission, _key(shift_key))
    value = json.loads(raw) if raw else None
    return value if isinstance(value, dict) else None


def latest_brief_for(store: MemoryStore, operator: str | None, mission: str | None) -> Record:
    """The newest archived brief handed to ``operator`` (on ``mission`` when given).

    Raises:
        InputError: ``mission`` is not stored, or no brief was archived for that operator (and mission).
    """
    if mission is not None and mission not in store.missions():
        from mission_memory.mission_scope import unknown_mission

        raise unknown_mission(mission, store.missions())
    briefs = store.records_of_kind([RecordKind.HANDOVER_BRIEF.value], mission=mission, operator=operator, limit=1)
    if not briefs:
        where = f" on mission {mission!r}" if mission else ""
        raise InputError(f"no handover brief was built for operator {operator!r}{where}: run `mission-memory brief` first")
    return briefs[0]


MAX_READ_BACK_CHARS = 300
"""A read-back is one line: what the incoming operator understood they now hold (I-PASS "synthesis")."""


def acknowledge(store: MemoryStore, brief: Record, operator: str | None, at: datetime,
                read_back: str | None = None) -> Acknowledgement:
    """Record that ``operator`` read ``brief`` at ``at``; acknowledging again keeps the first time.

    Args:
        read_back: the incoming operator's one-line read-back, kept as written but for secrets
            (redacted, :func:`~mission_memory.capture.redaction.redact_text`; it reaches the next
            brief inside its envelope); None or blank: none.

    Raises:
        InputError: ``brief`` is not an archived handover brief; the read-back has several lines or
            more than :data:`MAX_READ_BACK_CHARS` characters.
    """
    if brief.kind is not RecordKind.HANDOVER_BRIEF:
        raise InputError(f"record {brief.id} is a {brief.kind.value}, not a handover brief")
    said = redact_text((read_back or "").strip())  # as every intake: no secret is kept or shown again
    if "\n" in said or len(said) > MAX_READ_BACK_CHARS:
        raise InputError(f"the read-back is one line of at most {MAX_READ_BACK_CHARS} characters"
                         f" (got {len(said)} characters, {said.count(chr(10)) + 1} lines)")
    mission = brief.provenance.mission
    shift_key = str(brief.attributes.get("shift_key"))
    earlier = acknowledgement_of(store, mission, shift_key)
    if earlier is not None and earlier.get("operator") == (operator or ""):
        if said and not earlier.get("read_back"):
            earlier = {**earlier, "read_back": said}
            store.set_state(mission, _key(shift_key), json.dumps(earlier))
        return earlier
    ack: Acknowledgement = {"operator": operator or "", "time": at.isoformat(), "brief_id": brief.id,
                            "shift_key": shift_key, "mission": mission}
    if said:
        ack["read_back"] = said
    store.set_state(mission, _key(shift_key), json.dumps(ack))
    return ack
