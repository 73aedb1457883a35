"""Decision and principle domain types: what an architecture decision record and a principle registry entry
say, as parsed from their text, before they become workflow-layer records (docs/design.md §3, "Decision record"
and "Principle registry"). The module owns only the shapes and their closed vocabularies (`DecisionStatus`,
`AdrFormat`); parsing lives in `mission_memory.ingest.adr` and `mission_memory.ingest.principles`, storage
elsewhere. No I/O happens here.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

__all__ = ["AdrFormat", "Decision", "DecisionAttributes", "DecisionStatus", "Principle", "RejectedAlternative"]


class DecisionStatus(StrEnum):
    """Lifecycle status of a decision (docs/design.md §3; the statuses Nygard and MADR use)."""

    PROPOSED = "proposed"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    DEPRECATED = "deprecated"
    SUPERSEDED = "superseded"


class AdrFormat(StrEnum):
    """The template an ADR was recognised as.

    ``nygard``: Michael Nygard's Title/Status/Context/Decision/Consequences (2011) and its many variants;
    ``madr``: Markdown Any/Architectural Decision Records 2.x-4.x (adr.github.io/madr);
    ``y_statement``: Zdun et al.'s "In the context of ..., facing ..., we decided for ..." sentence;
    ``freeform``: none of these; only the text, a title and what fields could be found.
    """

    NYGARD = "nygard"
    MADR = "madr"
    Y_STATEMENT = "y_statement"
    FREEFORM = "freeform"


@dataclass(frozen=True)
class RejectedAlternative:
    """An option that was considered and not chosen.

    Attributes:
        option: the option's title as written (Markdown emphasis removed).
        reason: why it was rejected (MADR "Bad, because ..." arguments joined with "; ", a
            "Disadvantages" list, or a Y-statement's neglected option has none), or None when not stated.
    """

    option: str
    reason: str | None


@dataclass(frozen=True)
class Decision:
    """One decision as parsed from an ADR's text (docs/design.md §3 decision record, minus provenance).

    References to other decisions (``supersedes``, ``superseded_by``, ``related``) are ADR numbers as
    zero-padded 4-digit strings ("0005") when the reference names a number, else the link target or text
    as written. Text fields hold Markdown as written in the source section, stripped of surrounding blank
    lines; None means the ADR does not state it.

    Attributes:
        number: the ADR number from the file name prefix or the title, or None.
        title: the title without its numbering ("Use Terraform"), never empty.
        status: the status mapped onto `DecisionStatus`, or None when the ADR states none.
        status_text: the status as written (emoji removed), e.g. "Accepted (2024-01-02)".
        decided_at: the decision date (calendar date, no time zone), or None.
        context: context / problem statement.
        decision: what was decided (Nygard "Decision", MADR "Decision Outcome").
        rationale: why ("Rationale", "Reasoning", the "because ..." of MADR's chosen option, or a
            Y-statement's "to achieve ...").
        consequences: consequences (positive and negative joined).
        considered_options: option titles, in the order written.
        chosen_option: the chosen option's title, or None when it cannot be told.
        rejected_alternatives: the options not chosen, with reasons where stated.
        supersedes: decisions this one replaces.
        superseded_by: decisions that replace this one.
        related: other decisions referenced in the text.
        deciders: people or roles who decided (MADR "deciders" / "decision-makers").
        component: the component the decision concerns, when a field names it.
        tags: tags from front matter or a "Tags:" field.
        principle_ids: principle ids the text mentions ("P-1", "PRIN-3") or front matter lists.
        task_ids: tracker keys mentioned ("ABC-123", "#45").
        format: the template recognised.
        text: the full original text.
        amends: decisions this one amends (changes in part; they stay in force).
        amended_by: decisions that amend this one ("Amended by ADR-21"); this one stays in force.
        probably_supersedes: earlier decisions this one names while saying it replaces, reverses or
            fixes what they decided, without a "Supersedes" line (docs/adr/0086): a probable link,
            shown as such, never a stated one.
    """

    number: int | None
    title: str
    status: DecisionStatus | None
    status_text: str | None
    decided_at: datetime.date | None
    context: str | None
    decision: str | None
    rationale: str | None
    consequences: str | None
    considered_options: tuple[str, ...]
    chosen_option: str | None
    rejected_alternatives: tuple[RejectedAlternative, ...]
    supersedes: tuple[str, ...]
    superseded_by: tuple[str, ...]
    related: tuple[str, ...]
    deciders: tuple[str, ...]
    component: str | None
    tags: tuple[str, ...]
    principle_ids: tuple[str, ...]
    task_ids: tuple[str, ...]
    format: AdrFormat
    text: str
    amends: tuple[str, ...] = ()
    amended_by: tuple[str, ...] = ()
    probably_supersedes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Principle:
    """One entry of the principle registry, the mission's "constitution" (docs/design.md §3).

    Attributes:
        id: the principle id as written ("P1", "P-2", "PRIN-3") or derived ("P4" from "4. Title", or a
            slug of the title when the heading carries no number).
        title: the title without its id prefix.
        statement: the principle itself (a "Statement:" field or the first paragraph).
        rationale: why it holds, when a "Rationale" field or subheading gives it.
        version: a "Version:" field as written, or None.
        status: a "Status:" field as written ("active", "draft"), or None.
        text: the principle's full text (its heading and body).
    """

    id: str
    title: str
    statement: str
    rationale: str | None
    version: str | None
    status: str | None
    text: str


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _texts(value: Any) -> tuple[str, ...]:
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value if v is not None)
    return ()


@dataclass(frozen=True)
class DecisionAttributes:
    """The structured fields of a decision record (workflow layer), as stored in ``Record.attributes``.

    One model for every writer (repository ingest, ``ingest.decision_records``; recorded decisions,
    ``ingest.recorded_decisions``) and every reader (digest excerpts, the rotation brief, staleness,
    ranking, the crisis timeline, the correction signal). :meth:`as_dict` writes the stored mapping
    (its keys are the field names; ``decided_by``, ``session_id`` and ``recorded`` only for recorded
    decisions, ``mission_type`` only when set), so record ids, which hash the mapping, do not change;
    :meth:`read` reads a stored mapping leniently (a missing or mistyped field is its default), so a
    store written by any earlier version reads.

    Attributes:
        number: the ADR number, or None (recorded decisions, unnumbered ADRs).
        status: the lifecycle status (a :class:`DecisionStatus` value; ``superseded`` once a later
            decision supersedes it), or None when not stated.
        status_text: the status line as written.
        decided_at: the decision date, ISO 8601, or None.
        context, decision, rationale, consequences: the sections' text (each bounded), or None.
        considered_options: option titles; chosen_option: the chosen one.
        rejected_alternatives: ``(option, reason)`` pairs.
        supersedes, superseded_by, related: references to other decisions (ADR numbers as
            ``"0012"`` or labels).
        deciders: who decided, as written; principle_ids, task_ids, tags: links and labels.
        format: the ADR template (:class:`AdrFormat` value) or ``recorded``.
        path: the repository-relative file, or None for a decision recorded without a file.
        decided_by: the operator (or ``agent``) who recorded it; session_id: their session;
            recorded: True for a decision recorded through ``decide`` / ``record_decision``.
        mission_type: the mission's type, when the ingest named one.
        amends, amended_by: decisions this one amends / that amend it (stated; both stay in force).
        probably_supersedes, probably_superseded_by: probable replacement links read from an ADR's
            prose (docs/adr/0086): the earlier decision is demoted and shown as probably superseded,
            its status stays as written. These four are stored only when not empty, so the ids of
            decision records without them do not change.
    """

    number: int | None = None
    status: str | None = None
    status_text: str | None = None
    decided_at: str | None = None
    context: str | None = None
    decision: str | None = None
    rationale: str | None = None
    consequences: str | None = None
    considered_options: tuple[str, ...] = ()
    chosen_option: str | None = None
    rejected_alternatives: tuple[RejectedAlternative, ...] = ()
    supersedes: tuple[str, ...] = ()
    superseded_by: tuple[str, ...] = ()
    related: tuple[str, ...] = ()
    deciders: tuple[str, ...] = ()
    principle_ids: tuple[str, ...] = ()
    task_ids: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    format: str | None = None
    path: str | None = None
    decided_by: str | None = None
    session_id: str | None = None
    recorded: bool = False
    mission_type: str | None = None
    amends: tuple[str, ...] = ()
    amended_by: tuple[str, ...] = ()
    probably_supersedes: tuple[str, ...] = ()
    probably_superseded_by: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Stored keys this model does not name, kept so a rewrite loses nothing."""

    @classmethod
    def read(cls, attributes: Mapping[str, Any]) -> DecisionAttributes:
        """The decision fields of a stored attributes mapping; never raises."""
        number = attributes.get("number")
        rejected = tuple(
            RejectedAlternative(str(a.get("option") or ""), _text(a.get("reason")))
            for a in attributes.get("rejected_alternatives") or ()
            if isinstance(a, Mapping)
        )
        known = {f.name for f in fields(cls)}
        return cls(
            number=number if isinstance(number, int) and not isinstance(number, bool) else None,
            status=_text(attributes.get("status")),
            status_text=_text(attributes.get("status_text")),
            decided_at=_text(attributes.get("decided_at")),
            context=_text(attributes.get("context")),
            decision=_text(attributes.get("decision")),
            rationale=_text(attributes.get("rationale")),
            consequences=_text(attributes.get("consequences")),
            considered_options=_texts(attributes.get("considered_options")),
            chosen_option=_text(attributes.get("chosen_option")),
            rejected_alternatives=rejected,
            supersedes=_texts(attributes.get("supersedes")),
            superseded_by=_texts(attributes.get("superseded_by")),
            related=_texts(attributes.get("related")),
            deciders=_texts(attributes.get("deciders")),
            principle_ids=_texts(attributes.get("principle_ids")),
            task_ids=_texts(attributes.get("task_ids")),
            tags=_texts(attributes.get("tags")),
            format=_text(attributes.get("format")),
            path=_text(attributes.get("path")),
            decided_by=_text(attributes.get("decided_by")),
            session_id=_text(attributes.get("session_id")),
            recorded=attributes.get("recorded") is True,
            mission_type=_text(attributes.get("mission_type")),
            amends=_texts(attributes.get("amends")),
            amended_by=_texts(attributes.get("amended_by")),
            probably_supersedes=_texts(attributes.get("probably_supersedes")),
            probably_superseded_by=_texts(attributes.get("probably_superseded_by")),
            extra={k: v for k, v in attributes.items() if k not in known},
        )

    def as_dict(self) -> dict[str, Any]:
        """The stored mapping: every field by name (lists for sequences, ``{"option", "reason"}`` for
        rejected alternatives); the recorded-decision fields only when :attr:`recorded`, ``mission_type``
        only when set; then :attr:`extra`."""
        out: dict[str, Any] = {
            "number": self.number,
            "status": self.status,
            "status_text": self.status_text,
            "decided_at": self.decided_at,
            "context": self.context,
            "decision": self.decision,
            "rationale": self.rationale,
            "consequences": self.consequences,
            "considered_options": list(self.considered_options),
            "chosen_option": self.chosen_option,
            "rejected_alternatives": [{"option": a.option, "reason": a.reason} for a in self.rejected_alternatives],
            "supersedes": list(self.supersedes),
            "superseded_by": list(self.superseded_by),
            "related": list(self.related),
            "deciders": list(self.deciders),
            "principle_ids": list(self.principle_ids),
            "task_ids": list(self.task_ids),
            "tags": list(self.tags),
            "format": self.format,
            "path": self.path,
        }
        if self.recorded:
            out.update(decided_by=self.decided_by, session_id=self.session_id, recorded=True)
        if self.mission_type:
            out["mission_type"] = self.mission_type
        for key, links in (("amends", self.amends), ("amended_by", self.amended_by),
                           ("probably_supersedes", self.probably_supersedes),
                           ("probably_superseded_by", self.probably_superseded_by)):
            if links:
                out[key] = list(links)
        out.update({k: v for k, v in self.extra.items() if k not in out})
        return out

    @property
    def is_superseded(self) -> bool:
        """The status says superseded, or a later decision names this one, stated or probably
        (docs/adr/0086): ranking demotes it and the digest marks it."""
        return (self.status == DecisionStatus.SUPERSEDED.value or bool(self.superseded_by)
                or bool(self.probably_superseded_by))

    @property
    def only_probably_superseded(self) -> bool:
        """Superseded only by a probable link read from a later ADR's prose, nothing stated."""
        return bool(self.probably_superseded_by) and not (
            self.status == DecisionStatus.SUPERSEDED.value or self.superseded_by
        )

    @staticmethod
    def marks_superseded(attributes: Mapping[str, Any]) -> bool:
        """:attr:`is_superseded` of a stored mapping, reading only its three fields (pull asks it of every
        candidate, so it skips building the whole model)."""
        return (attributes.get("status") == DecisionStatus.SUPERSEDED.value
                or bool(_texts(attributes.get("superseded_by")))
                or bool(_texts(attributes.get("probably_superseded_by"))))

    @property
    def decider(self) -> str | None:
        """Who decided: the recorder, else the deciders as written, else None."""
        if self.decided_by:
            return self.decided_by
        return ", ".join(self.deciders) if self.deciders else None
