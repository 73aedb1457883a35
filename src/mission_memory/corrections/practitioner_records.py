"""The practitioner record of one operator correction: its fields, its id, and the record it becomes.

docs/design.md §3 "Practitioner record" and §3.8 (docs/adr/0025): a correction is stored
as structured abstractions only — class, semantic category, component, outcome, a one-sentence
summary built from those fields (or written by the operator for an explicit correction), operator,
session, time, and the retrieval-correction label. No prompt text, diff text, tool input or
transcript content ever reaches a :class:`Correction`, so none can reach the store. Domain types
only, no I/O.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mission_memory.records import Provenance, Record, RecordKind, SourceKind
from mission_memory.utc import as_utc

__all__ = [
    "MAX_SUMMARY_CHARS",
    "Correction",
    "CorrectionLabel",
    "CorrectionSource",
    "Outcome",
    "RetrievalCaused",
    "correction_from_record",
    "correction_id_for",
    "practitioner_record",
    "summary_from_fields",
]

MAX_SUMMARY_CHARS = 300
"""A summary is one sentence: at most this many characters, on one line."""

_SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class Outcome(StrEnum):
    """What became of the agent's work the operator corrected (docs/design.md §3)."""

    ACCEPTED = "accepted"
    REJECTED = "rejected"
    MODIFIED = "modified"


class CorrectionSource(StrEnum):
    """Where a correction came from (docs/design.md §6): recorded explicitly, the prompt corpus, a transcript."""

    EXPLICIT = "explicit"
    PROMPT = "prompt"
    TRANSCRIPT = "transcript"


class RetrievalCaused(StrEnum):
    """The retrieval-correction label (docs/design.md §6, docs/adr/0024)."""

    TRUE = "true"
    FALSE = "false"
    UNKNOWN = "unknown"


class CorrectionLabel(BaseModel):
    """The label of one correction and the evidence for it.

    Attributes:
        retrieval_caused: ``true``: memory held a relevant record at the event's time that the digest
            left out or served only stale; ``false``: memory held nothing relevant, or served it;
            ``unknown``: no retrieval event precedes the correction, or the explicit correction
            follows its session's latest event without being about its task and names no record
            (ADR 0082; the event is then kept).
        retrieval_event_id: the retrieval event the correction follows, or None.
        retrieval_event_time: that event's time (UTC), or None.
        missed_record_ids: relevant records memory held but did not serve, or served only stale.
        served_record_ids: the records the event's digest served, in digest order.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    retrieval_caused: RetrievalCaused = RetrievalCaused.UNKNOWN
    retrieval_event_id: str | None = None
    retrieval_event_time: datetime | None = None
    missed_record_ids: tuple[str, ...] = ()
    served_record_ids: tuple[str, ...] = ()


class Correction(BaseModel):
    """One operator correction, as abstractions only (docs/design.md §3).

    Attributes:
        correction_id: 32 hex characters, stable: derived from the source, the session and the
            position or time of the correction (see :func:`correction_id_for`).
        correction_class: how the correction was made (``tool-rejected``, ``interruption``,
            ``redirecting-prompt``, ``edit-reworked``, ``prompt-correction``, or the operator's own
            class for an explicit one); a lower-case slug.
        category: the semantic category (``tests``, ``scope``, ``revert``, …); a lower-case slug.
        component: the affected component (a top-level folder the memory knows), or None.
        outcome: accepted, rejected or modified.
        summary: one sentence, built from the fields (or the operator's own for an explicit one).
        source: explicit, prompt or transcript.
        mission: the mission the correction belongs to.
        operator: the operator corrected/correcting, or None when unknown.
        session_id: the agent session, or None.
        time: when the correction happened (UTC).
        expected: record references the correction names (``--expected``): ids, paths, shas, ``ADR-N``;
            for a captured prompt, the ADRs and paths its words name that memory holds (ADR 0082).
        label: the retrieval-correction label.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    correction_id: str = Field(pattern=r"^[0-9a-f]{32}$")
    correction_class: str
    category: str
    component: str | None = None
    outcome: Outcome
    summary: str
    source: CorrectionSource
    mission: str = Field(min_length=1, max_length=200)
    operator: str | None = Field(default=None, max_length=200)
    session_id: str | None = Field(default=None, max_length=200)
    time: datetime
    expected: tuple[str, ...] = ()
    label: CorrectionLabel = Field(default_factory=CorrectionLabel)

    @field_validator("correction_class", "category")
    @classmethod
    def _slug(cls, value: str) -> str:
        if not _SLUG.match(value):
            raise ValueError(
                f"{value!r} is not a lower-case slug (letters, digits, '.', '_', '-'; at most 64 characters,"
                " starting with a letter or digit), e.g. 'wrong-approach'"
            )
        return value

    @field_validator("summary")
    @classmethod
    def _one_sentence(cls, value: str) -> str:
        text = value.strip()
        if not text:
            raise ValueError("the summary is empty: write one sentence saying what was corrected")
        if len(text) > MAX_SUMMARY_CHARS:
            raise ValueError(f"the summary has {len(text)} characters; one sentence of at most {MAX_SUMMARY_CHARS}")
        if _CONTROL.search(text):
            raise ValueError("the summary must be one line without control characters")
        return text

    @field_validator("component", "session_id", "operator", "mission")
    @classmethod
    def _printable(cls, value: str | None) -> str | None:
        if value is None:
            return None
        text = value.strip()
        if not text or _CONTROL.search(text):
            raise ValueError(f"{value!r} must be non-empty printable text on one line")
        return text

    @field_validator("expected")
    @classmethod
    def _refs(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        refs = tuple(dict.fromkeys(v.strip() for v in value))
        for ref in refs:
            if not ref or len(ref) > 500 or _CONTROL.search(ref):
                raise ValueError(f"{ref!r} is not a record reference (an id, a path, a commit sha or ADR-N)")
        return refs

    @field_validator("time")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return as_utc(value)

    def with_label(self, label: CorrectionLabel) -> Correction:
        """The same correction carrying ``label``."""
        return self.model_copy(update={"label": label})


def correction_id_for(source: CorrectionSource, session_id: str | None, anchor: str) -> str:
    """The stable id of a correction: 32 hex digits of SHA-256 over source, session and anchor.

    Args:
        source: where it came from.
        session_id: the session, or None.
        anchor: the correction's position in its source (a transcript record id, a prompt id) or,
            for an explicit correction, its time and fields.
    """
    digest = hashlib.sha256(f"{source.value}\0{session_id or ''}\0{anchor}".encode())
    return digest.hexdigest()[:32]


_CLASS_PHRASES = {
    "tool-rejected": "rejected a tool call",
    "interruption": "interrupted the agent",
    "redirecting-prompt": "redirected the agent",
    "edit-reworked": "had an agent edit reworked",
    "prompt-correction": "corrected the agent in a prompt",
}


def summary_from_fields(correction_class: str, category: str, component: str | None, outcome: Outcome) -> str:
    """The one-sentence summary of a derived correction, built from its fields only (docs/adr/0025).

    Example: ``Operator rejected a tool call (category tests) in src; outcome rejected.``
    """
    act = _CLASS_PHRASES.get(correction_class, f"made a {correction_class} correction")
    where = f" in {component}" if component else ""
    return f"Operator {act} (category {category}){where}; outcome {outcome.value}."


def practitioner_record(correction: Correction, named_source_keys: Sequence[str] = ()) -> Record:
    """The practitioner record of ``correction`` (shape: docs/design.md §3.8, docs/adr/0025).

    Title and text are the summary; the slot is the correction id, so re-recording the same
    correction is idempotent, and re-labelling it replaces the record under the same source key
    (a new record id, the same ``correction_id``). ``named_source_keys``: the source keys of the
    records its ``expected`` references name (stable across re-ingests, unlike record ids), kept so
    a digest ranks the correction after them (``named_source_keys``).
    """
    label = correction.label
    attributes: dict[str, Any] = {
        "correction_id": correction.correction_id,
        "correction_class": correction.correction_class,
        "category": correction.category,
        "outcome": correction.outcome.value,
        "source": correction.source.value,
        "session_id": correction.session_id,
        "retrieval_caused": label.retrieval_caused.value,
        "retrieval_event_id": label.retrieval_event_id,
        "retrieval_event_time": label.retrieval_event_time.isoformat() if label.retrieval_event_time else None,
        "expected": list(correction.expected),
        "missed_record_ids": list(label.missed_record_ids),
        "served_record_ids": list(label.served_record_ids),
        **({"named_source_keys": sorted(set(named_source_keys))} if named_source_keys else {}),
    }
    cid = correction.correction_id
    return Record.build(
        kind=RecordKind.CORRECTION_PATTERN,
        title=correction.summary,
        text=correction.summary,
        provenance=Provenance(
            kind=SourceKind.CORRECTION,
            ref=f"correction/{cid}",
            uri=f"mission-memory://correction/{cid}",
            mission=correction.mission,
            time=correction.time,
        ),
        component=correction.component,
        operator=correction.operator,
        attributes=attributes,
        slot=cid,
    )


def correction_from_record(record: Record) -> Correction:
    """Read a :class:`Correction` back from its practitioner record (the inverse of :func:`practitioner_record`)."""
    a = record.attributes
    event_time = a.get("retrieval_event_time")
    return Correction(
        correction_id=a["correction_id"],
        correction_class=a["correction_class"],
        category=a["category"],
        component=record.component,
        outcome=Outcome(a["outcome"]),
        summary=record.title,
        source=CorrectionSource(a["source"]),
        mission=record.provenance.mission,
        operator=record.operator,
        session_id=a.get("session_id"),
        time=record.provenance.time,
        expected=tuple(a.get("expected") or ()),
        label=CorrectionLabel(
            retrieval_caused=RetrievalCaused(a.get("retrieval_caused", "unknown")),
            retrieval_event_id=a.get("retrieval_event_id"),
            retrieval_event_time=datetime.fromisoformat(event_time) if event_time else None,
            missed_record_ids=tuple(a.get("missed_record_ids") or ()),
            served_record_ids=tuple(a.get("served_record_ids") or ()),
        ),
    )
