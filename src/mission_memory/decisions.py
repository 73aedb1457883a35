"""Decision and principle domain types: what an architecture decision record and a principle registry entry
say, as parsed from their text, before they become workflow-layer records (docs/design.md §3, "Decision record"
and "Principle registry"). The module owns only the shapes and their closed vocabularies (`DecisionStatus`,
`AdrFormat`); parsing lives in `mission_memory.ingest.adr` and `mission_memory.ingest.principles`, storage
elsewhere. No I/O happens here.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["AdrFormat", "Decision", "DecisionStatus", "Principle", "RejectedAlternative"]


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
