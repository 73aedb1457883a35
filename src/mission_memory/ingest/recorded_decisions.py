"""Decisions recorded where they are taken: a DECISION record made from what an operator (or the agent)
states at the moment of deciding, optionally written out as a MADR file so the repository stays the
canonical source (docs/design.md §3 "decisions recorded by the agent"; issue 13 item 4; docs/adr/0028).

The module owns four things: checking the statement (:func:`parse_rejected`, :func:`check_statement`),
the MADR text a recorded decision is written as (:func:`madr_text`, :func:`next_adr_path`), storing the
record and marking the decision it supersedes (:func:`record_decision`), and keeping recorded decisions
alive across a later ``ingest`` of the repository (:func:`reconcile_recorded`): a decision written with
``--write-adr`` is stored under the same source key the ingest of that file produces, so re-ingesting
recognises it; its ``decided_by`` and ``session_id`` are carried over onto the ingested record, and a
recorded supersession keeps its target marked superseded however often the target's file is re-read.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from mission_memory.capture.redaction import redact_text, redact_value
from mission_memory.decisions import DecisionAttributes, DecisionStatus, RejectedAlternative
from mission_memory.embeddings import Embedder
from mission_memory.errors import InputError
from mission_memory.fence import check_mission_name, check_name
from mission_memory.mission_scope import stored_mission_for
from mission_memory.records import AccessLevel, Provenance, Record, RecordKind, SourceKind, record_id_for
from mission_memory.retrieval_events import process_session_id, resolve_operator
from mission_memory.stores.base import MemoryStore
from mission_memory.stores.filters import ACCESS_ORDER
from mission_memory.stores.write_path import store_records

if TYPE_CHECKING:
    from mission_memory.teams.access_control import AccessContext

__all__ = [
    "AGENT",
    "DecisionStatement",
    "RecordedDecision",
    "check_statement",
    "madr_text",
    "next_adr_path",
    "parse_rejected",
    "reconcile_recorded",
    "record_decision",
    "record_decision_request",
    "resolve_decision_ref",
    "slugify",
    "survives_ingest",
]

AGENT = "agent"
"""``decided_by`` of a decision the agent took on its own (``mission-memory decide --by agent``)."""

RECORDED_ATTRIBUTES = ("decided_by", "session_id", "recorded")
"""Attributes a recorded decision carries beyond those ingest/adr produces (docs/prompts interface)."""

_RECORDABLE_STATUSES = (DecisionStatus.ACCEPTED, DecisionStatus.PROPOSED)
_CRITICALITY = {DecisionStatus.ACCEPTED: 0.7, DecisionStatus.PROPOSED: 0.6}
_SUPERSEDED_CRITICALITY = 0.3  # as ingest/repository gives a superseded ADR
_MAX_TITLE = 200
_MAX_FIELD = 20_000
_MAX_SLUG = 60
_MAX_REGISTRY_BYTES = 1_000_000  # as ingest's default max_file_bytes
_NUMBERED = re.compile(r"^(\d{1,5})[-_]")
_REF_NUMBER = re.compile(r"^(?:adr)?[\s\-_#]*0*(\d{1,5})$", re.IGNORECASE)


@dataclass(frozen=True)
class DecisionStatement:
    """What the one deciding states: the fields of a decision record (docs/design.md §3), checked.

    Attributes:
        title: one line, never empty.
        decision: what was decided.
        rationale: why.
        rejected: the options not chosen, each with why (``"option: why"`` on the command line).
        context: the situation that forced the decision, or None.
        principles: principle ids it rests on (``P1``, ``PRIN-3``).
        component: the component it concerns, or None.
        tasks: tracker keys (``OPS-12``, ``#45``).
        supersedes: a reference to the decision it replaces (ADR number, path, ``decision/<slug>``,
            record id), or None.
        status: ``accepted`` or ``proposed``.
    """

    title: str
    decision: str
    rationale: str
    rejected: tuple[RejectedAlternative, ...] = ()
    context: str | None = None
    principles: tuple[str, ...] = ()
    component: str | None = None
    tasks: tuple[str, ...] = ()
    supersedes: str | None = None
    status: DecisionStatus = DecisionStatus.ACCEPTED


@dataclass(frozen=True)
class RecordedDecision:
    """What :func:`record_decision` did.

    Attributes:
        record: the stored decision record.
        adr_path: the MADR file written, or None.
        superseded: the records marked superseded by this decision (as stored afterwards).
        added: False when the same decision was already stored (recording is idempotent).
    """

    record: Record
    adr_path: Path | None = None
    superseded: tuple[Record, ...] = field(default_factory=tuple)
    added: bool = True

    def to_json(self) -> dict[str, Any]:
        """The outcome as ``mission-memory decide --json`` prints it."""
        r = self.record
        a = DecisionAttributes.read(r.attributes)
        return {
            "id": r.id,
            "ref": r.provenance.ref,
            "source_key": r.source_key,
            "title": r.title,
            "mission": r.provenance.mission,
            "status": a.status,
            "decided_by": a.decided_by,
            "session_id": a.session_id,
            "adr_path": str(self.adr_path) if self.adr_path is not None else None,
            "supersedes": list(a.supersedes),
            "superseded_records": [s.id for s in self.superseded],
            "added": self.added,
        }


# --------------------------------------------------------------------------------------------- input


def parse_rejected(text: str) -> RejectedAlternative:
    """One rejected alternative from ``"option: why it was rejected"``.

    Args:
        text: the option and the reason, separated by the first ``:`` (the reason may hold more colons).

    Returns:
        The alternative, both parts stripped.

    Raises:
        InputError: no ``:``, or an empty option or reason (the message quotes the input).
    """
    option, colon, reason = text.partition(":")
    if not colon or not option.strip() or not reason.strip():
        raise InputError(
            f"--rejected {text!r} must read 'option: why it was rejected' (an option, a colon, a reason)"
        )
    return RejectedAlternative(" ".join(option.split()), reason.strip())


def _status(value: str | DecisionStatus) -> DecisionStatus:
    try:
        status = DecisionStatus(str(value).strip().lower())
    except ValueError:
        status = None
    if status not in _RECORDABLE_STATUSES:
        raise InputError(f"--status {value!r} must be one of: accepted, proposed")
    assert status is not None
    return status


def check_statement(
    title: str,
    decision: str,
    rationale: str,
    rejected: Sequence[str | RejectedAlternative] = (),
    *,
    context: str | None = None,
    principles: Sequence[str] = (),
    component: str | None = None,
    tasks: Sequence[str] = (),
    supersedes: str | None = None,
    status: str | DecisionStatus = DecisionStatus.ACCEPTED,
) -> DecisionStatement:
    """Check and normalise what the one deciding states, before anything is stored or written.

    Raises:
        InputError: an empty title, decision or rationale; a title over 200 characters or with a line
            break; a field over 20,000 characters; a malformed ``--rejected``; a status other than
            accepted or proposed; an empty principle, task or supersedes reference.
    """
    clean_title = " ".join(title.split())
    if not clean_title:
        raise InputError("the decision's title is empty: give it as the first argument of `decide`")
    if "\n" in title.strip() or len(clean_title) > _MAX_TITLE:
        raise InputError(f"the decision's title must be one line of at most {_MAX_TITLE} characters")
    texts = {"--decision": decision, "--rationale": rationale, "--context": context or ""}
    for flag, value in texts.items():
        if flag != "--context" and not value.strip():
            raise InputError(f"{flag} is empty: a recorded decision states what was decided and why")
        if len(value) > _MAX_FIELD:
            raise InputError(f"{flag} is {len(value):,} characters long; at most {_MAX_FIELD:,} are kept")
    alternatives = tuple(a if isinstance(a, RejectedAlternative) else parse_rejected(a) for a in rejected)
    for flag, values in (("--principle", principles), ("--task", tasks)):
        if any(not v.strip() for v in values):
            raise InputError(f"{flag} is given an empty value")
    if supersedes is not None and not supersedes.strip():
        raise InputError("--supersedes is given an empty reference")
    if component and component.strip():
        check_name(component.strip(), "component")  # a stored name (ADR 0054): listed, filtered on, printed
    return DecisionStatement(
        title=clean_title,
        decision=decision.strip(),
        rationale=rationale.strip(),
        rejected=alternatives,
        context=context.strip() if context and context.strip() else None,
        principles=tuple(dict.fromkeys(p.strip() for p in principles)),
        component=component.strip() if component and component.strip() else None,
        tasks=tuple(dict.fromkeys(t.strip() for t in tasks)),
        supersedes=supersedes.strip() if supersedes else None,
        status=_status(status),
    )


def slugify(title: str) -> str:
    """A file-name slug of ``title``: lower case, ASCII letters and digits joined by ``-``, at most 60.

    Non-Latin titles (Ukrainian) keep their letters (lower-cased), so two Ukrainian titles do not
    collapse onto one empty slug; ``decision`` when nothing is left.
    """
    text = unicodedata.normalize("NFKC", title).lower()
    words = re.findall(r"\w+", text)
    slug = "-".join(w.replace("_", "-") for w in words).strip("-")
    while len(slug) > _MAX_SLUG and "-" in slug:
        slug = slug.rsplit("-", 1)[0]
    return slug[:_MAX_SLUG] or "decision"


# ---------------------------------------------------------------------------------------- references


def _number_of(ref: str) -> int | None:
    match = _REF_NUMBER.match(ref.strip())
    return int(match.group(1)) if match else None


def _label_of(record: Record) -> str:
    """How other decisions name ``record`` in supersedes / superseded_by: ``0003`` or its reference."""
    number = DecisionAttributes.read(record.attributes).number
    return f"{number:04d}" if number is not None else record.provenance.ref


def resolve_decision_ref(store: MemoryStore, mission: str, ref: str) -> Record:
    """The stored decision of ``mission`` that ``ref`` names.

    Args:
        ref: an ADR number (``3``, ``0003``, ``ADR-0003``), an ADR path (``docs/adr/0003-x.md``), a
            recorded decision's reference (``decision/<slug>``, or just ``<slug>``), or a record id.

    Raises:
        InputError: no decision or several decisions of the mission match; the message lists the
            references that are stored.
    """
    decisions = store.records_of_kind([RecordKind.DECISION.value], mission=mission, limit=100_000)
    wanted = ref.strip()
    number = _number_of(wanted)
    matches = [
        r for r in decisions
        if wanted in (r.id, r.provenance.ref, DecisionAttributes.read(r.attributes).path)
        or r.provenance.ref == f"decision/{wanted}"
        or (number is not None and DecisionAttributes.read(r.attributes).number == number)
    ]
    if len(matches) == 1:
        return matches[0]
    if not matches and not decisions:
        missions = ", ".join(sorted(store.missions())) or "none yet"
        raise InputError(
            f"--supersedes {ref!r}: mission {mission!r} holds no decisions (missions: {missions}; "
            "give --mission, or run from the mission's repository)"
        )
    if not matches:
        known = ", ".join(sorted({_label_of(r) for r in decisions})[:30])
        raise InputError(
            f"--supersedes {ref!r}: no decision of mission {mission!r} has that number, path, reference "
            f"or id (stored: {known})"
        )
    shown = ", ".join(sorted(r.provenance.ref for r in matches))
    raise InputError(f"--supersedes {ref!r} names several decisions of mission {mission!r} ({shown}); give a path")


# ---------------------------------------------------------------------------------------------- MADR


def next_adr_path(folder: Path, title: str) -> Path:
    """``folder/NNNN-<slug>.md`` with the next number after the highest ``NNNN-`` file there (0001 first)."""
    numbers = [
        int(m.group(1)) for p in (folder.iterdir() if folder.is_dir() else ()) if (m := _NUMBERED.match(p.name))
    ]
    return folder / f"{max(numbers, default=0) + 1:04d}-{slugify(title)}.md"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def madr_text(
    statement: DecisionStatement,
    *,
    decided_on: date,
    deciders: str,
    supersedes: str | None = None,
) -> str:
    """The decision as a MADR 4 file: front matter (status, date, deciders, component, principles,
    tasks, supersedes), context, considered options, the outcome (``Chosen option: "<title>", because
    <rationale>`` and a ``### Decision`` subsection), and the rejected options as "Bad, because ..."
    (adr.github.io/madr). ``ingest`` parses it back into the same fields (tested).

    Args:
        statement: the checked statement.
        decided_on: the front matter's date.
        deciders: the operator, or ``agent``.
        supersedes: the superseded decision's label (``0003`` or its reference), or None.
    """
    s = statement
    front = [f"status: {s.status.value}", f"date: {decided_on.isoformat()}", f"deciders: {_one_line(deciders)}"]
    if s.component:
        front.append(f"component: {_one_line(s.component)}")
    if s.principles:
        front.append(f"principles: {', '.join(s.principles)}")
    if s.tasks:
        front.append(f"tasks: {', '.join(s.tasks)}")
    if supersedes:
        front.append(f"supersedes: {json.dumps(supersedes)}")  # quoted: YAML 1.1 reads 0020 as octal
    lines = ["---", *front, "---", "", f"# {s.title}", ""]
    lines += ["## Context and Problem Statement", "", s.context or s.title, ""]
    lines += ["## Considered Options", "", f"* {s.title}", *(f"* {a.option}" for a in s.rejected), ""]
    # The ADR parser ends a quoted option at an ASCII quote or apostrophe (Ukrainian "п'ять"): the
    # chosen-option line uses typographic ones, which it maps back onto the considered option's title.
    quoted = s.title.replace("'", "\u2019").replace('"', "\u2033")
    lines += [
        "## Decision Outcome", "", f'Chosen option: "{quoted}", because {_one_line(s.rationale)}', "",
        "### Decision", "", s.decision, "",
    ]
    if s.rejected:
        lines += ["## Pros and Cons of the Options", ""]
        for alternative in s.rejected:
            lines += [f"### {alternative.option}", "", f"* Bad, because {_one_line(alternative.reason or '')}", ""]
    return "\n".join(lines).rstrip() + "\n"


# ----------------------------------------------------------------------------------------- recording


def _merged(first: Sequence[str], second: Sequence[str]) -> tuple[str, ...]:
    """The references of ``first`` then those of ``second`` not in it."""
    return tuple(dict.fromkeys([*first, *second]))


def _with_attributes(record: Record, attributes: DecisionAttributes, criticality: float | None = None) -> Record:
    """``record`` with new decision attributes (and criticality), its content-derived id recomputed."""
    level = record.criticality if criticality is None else criticality
    stored = redact_value(attributes.as_dict())  # merged references and notes are stored text too (docs/adr/0053)
    new_id = record_id_for(record.source_key, record.title, record.text, stored, level, record.component)
    return record.model_copy(update={"attributes": stored, "criticality": level, "id": new_id})


def _mark_superseded(target: Record, by_label: str) -> Record:
    attributes = DecisionAttributes.read(target.attributes)
    later = sorted({*attributes.superseded_by, by_label})
    status = "superseded" if attributes.status in (None, "accepted", "proposed") else attributes.status
    marked = replace(attributes, superseded_by=tuple(later), status=status)
    return _with_attributes(target, marked, min(target.criticality, _SUPERSEDED_CRITICALITY))


def _recorded_record(
    statement: DecisionStatement, mission: str, decided_by: str, session_id: str | None, now: datetime,
    supersedes_label: str | None,
) -> Record:
    s = statement
    slug = slugify(s.title)
    ref = f"decision/{slug}"
    attributes = DecisionAttributes(
        status=s.status.value,
        status_text=s.status.value,
        decided_at=now.date().isoformat(),
        context=s.context,
        decision=s.decision,
        rationale=s.rationale,
        considered_options=(s.title, *(a.option for a in s.rejected)),
        chosen_option=s.title,
        rejected_alternatives=tuple(s.rejected),
        supersedes=(supersedes_label,) if supersedes_label else (),
        deciders=(decided_by,),
        principle_ids=tuple(s.principles),
        task_ids=tuple(s.tasks),
        format="recorded",
        decided_by=decided_by,
        session_id=session_id,
        recorded=True,
    )
    text = madr_text(s, decided_on=now.date(), deciders=decided_by, supersedes=supersedes_label)
    return Record.build(
        kind=RecordKind.DECISION,
        title=s.title,
        text=text,
        provenance=Provenance(
            kind=SourceKind.DECISION, ref=ref, uri=f"mission-memory://decision/{quote(mission, safe='')}/{quote(slug)}",
            mission=mission, time=now,
        ),
        criticality=_CRITICALITY[s.status],
        component=s.component,
        attributes=attributes.as_dict(),
    )


def _adr_record(
    statement: DecisionStatement, folder: Path, mission: str | None, decided_by: str, session_id: str | None,
    now: datetime, supersedes_label: str | None,
) -> tuple[Record, Path, str]:
    """Write the MADR file and build the record ingest would build for it; ``(record, path, mission)``."""
    from mission_memory.ingest.adr import is_adr_path, parse_adr
    from mission_memory.ingest.decision_records import decision_records
    from mission_memory.ingest.file_reading import read_inside
    from mission_memory.ingest.git_history import GitRepository
    from mission_memory.ingest.principles import find_principle_paths, parse_principles
    from mission_memory.ingest.source import RepositorySource

    folder = folder.expanduser().resolve()
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--write-adr {folder} is a file; give the folder the ADRs live in")
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not GitRepository.is_git_work_tree(probe):
        raise InputError(
            f"--write-adr {folder} is not inside a git work tree: the MADR file belongs in the mission's repository"
        )
    source = RepositorySource(probe)
    root = source.root
    path = next_adr_path(folder, statement.title)
    rel = path.relative_to(root).as_posix()
    files = source.files()
    if not is_adr_path(rel, files):
        raise InputError(
            f"--write-adr {folder}: ingest does not read ADRs from there (use a folder named adr, adrs or "
            "decisions, or one that already holds numbered NNNN-title.md files)"
        )
    # Only an ADR number survives the parser's reading of a front-matter reference ("decision/keep-30-days"
    # would read as ADR 0030); another label is kept as an attribute, which re-ingest carries over.
    in_file = supersedes_label if supersedes_label and re.fullmatch(r"\d{4}", supersedes_label) else None
    # the file lands in the mission's repository: it holds no secret either (docs/adr/0053)
    text = redact_text(madr_text(statement, decided_on=now.date(), deciders=decided_by, supersedes=in_file))
    folder.mkdir(parents=True, exist_ok=True)
    with path.open("x", encoding="utf-8") as handle:  # never overwrite an ADR someone else just wrote
        handle.write(text)
    mission = mission or root.name
    principles = []
    for principle_path in find_principle_paths(files):
        read = read_inside(root, principle_path, _MAX_REGISTRY_BYTES)
        try:
            if read.data is not None:
                principles.extend(parse_principles(read.data.decode("utf-8-sig"), principle_path))
        except UnicodeDecodeError:
            continue  # ingest skips an unreadable registry too
    [built] = decision_records(source, mission, [(rel, parse_adr(text, rel))], principles, None, [])
    attributes = replace(
        DecisionAttributes.read(built.attributes), decided_by=decided_by, session_id=session_id, recorded=True
    )
    if supersedes_label:
        attributes = replace(attributes, supersedes=_merged(attributes.supersedes, [supersedes_label]))
    provenance = Provenance(
        kind=SourceKind.DECISION, ref=rel, uri=source.uri(rel), mission=mission, time=built.provenance.time,
    )
    record = _with_attributes(built.model_copy(update={"provenance": provenance}), attributes)
    return record, path, mission


def record_decision(
    store: MemoryStore,
    embedder: Embedder,
    statement: DecisionStatement,
    *,
    mission: str,
    decided_by: str,
    session_id: str | None,
    write_adr: Path | None = None,
    now: datetime | None = None,
    access_level: AccessLevel | None = None,
) -> RecordedDecision:
    """Store a decision where it is taken, mark the one it supersedes, optionally write it as MADR.

    The decision's access level is ``access_level`` when the recorder sets one; otherwise the most
    restricted of its own (from ingest's path rules with ``write_adr``, else ``internal``) and of
    the records it supersedes or cites (its principles and tracker tasks, in its mission): a
    decision superseding a restricted ADR restates it, so it is restricted too (docs/adr/0055).

    Everything is checked before anything is written: an unknown ``supersedes`` reference, a
    ``write_adr`` folder outside a git work tree or not read by ingest raise before the file or the
    record exists. The record and the superseded one are written in one upsert.

    Args:
        store, embedder: where the record goes and what embeds it.
        statement: from :func:`check_statement`.
        mission: the mission; with ``write_adr`` it defaults (when empty) to the repository's folder
            name, as ``ingest`` names it.
        decided_by: the operator, or :data:`AGENT`.
        session_id: the session the decision was taken in (provenance).
        write_adr: a folder of the mission's repository to write ``NNNN-<slug>.md`` into.
        now: the decision time (default: now, UTC).
        access_level: the level the recorder sets (None: inherited, see above).

    Returns:
        The stored record (source key ``<mission>:decision:decision/<slug>``, or the ADR path with
        ``write_adr``), the file written, the records marked superseded.

    Raises:
        InputError: see above; also a ``decided_by`` that is empty.
    """
    if not decided_by.strip():
        raise InputError("decided_by is empty: name the operator, or 'agent'")
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    target: Record | None = None
    if statement.supersedes is not None:
        scope_mission = mission or _write_adr_mission(write_adr)
        target = resolve_decision_ref(store, scope_mission, statement.supersedes)
    label = _label_of(target) if target is not None else None
    adr_path: Path | None = None
    if write_adr is not None:
        record, adr_path, mission = _adr_record(
            statement, write_adr, mission or None, decided_by, session_id, moment, label
        )
    else:
        if not mission:
            raise InputError("a recorded decision needs a mission (--mission)")
        record = _recorded_record(statement, mission, decided_by, session_id, moment, label)
    if access_level is not None:
        level = access_level
    else:
        cited = _cited_records(store, record.provenance.mission, statement)
        levels = [record.access_level, *(r.access_level for r in (target, *cited) if r is not None)]
        level = max(levels, key=lambda lv: ACCESS_ORDER.index(lv.value))
    if level is not record.access_level:
        record = record.model_copy(update={"access_level": level})
    superseded = (_mark_superseded(target, _label_of(record)),) if target is not None else ()
    batch = [record, *superseded]
    stored = store_records(store, embedder, batch, batch=None)
    added = record.id not in stored.outcome.unchanged
    return RecordedDecision(record=record, adr_path=adr_path, superseded=superseded, added=added)


def record_decision_request(
    store: MemoryStore,
    embedder: Callable[[], Embedder],
    title: str,
    *,
    decision: str,
    rationale: str,
    rejected: Sequence[str | RejectedAlternative] = (),
    context: str | None = None,
    principles: Sequence[str] = (),
    component: str | None = None,
    tasks: Sequence[str] = (),
    supersedes: str | None = None,
    status: str = "accepted",
    mission: str | None = None,
    session_id: str | None = None,
    by_agent: bool = False,
    write_adr: str | Path | None = None,
    now: datetime | None = None,
    access: AccessContext | None = None,
    access_level: AccessLevel | str | None = None,
) -> RecordedDecision:
    """The rules of ``Memory.record_decision``: check a decision as a caller states it, choose its
    mission and who decided it, then :func:`record_decision`.

    The mission given must obey the name rule (ADR 0054) and be stored, as ``handover note`` asks: a
    typo would otherwise start a mission no brief or query of the next shift looks at. Without one, it
    is the only stored mission, else the working directory's stored mission
    (:func:`~mission_memory.mission_scope.stored_mission_for`); with ``write_adr`` and no mission, the
    repository the folder lies in. ``decided_by`` is :data:`AGENT` with ``by_agent``, else the operator
    (``access``'s on a team server, else :func:`~mission_memory.retrieval_events.resolve_operator` near
    the ``write_adr`` folder, else ``"unknown operator"``).

    Args:
        store: the store as the caller may see it (with ``access``, the access-scoped view), so
            ``supersedes`` and the stored missions are only those they may read.
        embedder: gives the embedder; called only once the request is checked (it may load a model).
        title, decision, rationale, rejected, context, principles, component, tasks, supersedes, status:
            the statement, checked by :func:`check_statement`; a rejected option is ``"option: why"``.
        mission: the mission, or None (see above).
        session_id: the session taken in (default: this process's, :func:`~mission_memory.retrieval_events.process_session_id`).
        by_agent: the agent decided on its own.
        write_adr: a folder of the mission's repository to write the decision into as MADR.
        now: the decision time (default: now).
        access: who records on a team server (None: the local user).
        access_level: ``public``, ``internal``, ``restricted`` or ``confidential`` (None: inherited,
            see :func:`record_decision`).

    Returns:
        The :class:`RecordedDecision`.

    Raises:
        InputError: an unknown access level; an empty title, decision or rationale; a bad rejected option
            or status; a mission that breaks the name rule or is not stored, or none chosen; an unknown
            ``supersedes``; a ``write_adr`` folder outside a git work tree or not read by ingest.
        AccessDenied: ``access`` does not cover the mission.
    """
    level = None
    if access_level is not None:
        try:
            level = AccessLevel(access_level)
        except ValueError:
            known = ", ".join(v.value for v in AccessLevel)
            raise InputError(f"access level {access_level!r} is not one of: {known}") from None
    statement = check_statement(
        title, decision, rationale, rejected, context=context, principles=principles,
        component=component, tasks=tasks, supersedes=supersedes, status=status,
    )
    folder = Path(write_adr) if write_adr is not None else None
    if mission is not None:
        mission = stored_mission_for(check_mission_name(mission, "mission"), store.missions())
    elif folder is None:
        mission = stored_mission_for(None, store.missions())
    near = folder if folder is not None and folder.is_dir() else None
    decided_by = AGENT if by_agent else (resolve_operator(near) or "unknown operator")
    if access is not None:
        access.check_mission(mission)
        decided_by = AGENT if by_agent else access.operator
    return record_decision(
        store, embedder(), statement, mission=mission or "", decided_by=decided_by,
        session_id=session_id or process_session_id(), write_adr=folder, now=now, access_level=level,
    )


def _cited_records(store: MemoryStore, mission: str, statement: DecisionStatement) -> list[Record]:
    """The principle and tracker-task records of ``mission`` that ``statement`` cites by id or key."""
    cited: list[Record] = []
    if statement.principles:
        wanted = {p.casefold() for p in statement.principles}
        cited += [r for r in store.records_of_kind([RecordKind.PRINCIPLE.value], mission=mission, limit=10_000)
                  if str(r.attributes.get("principle_id", "")).casefold() in wanted]
    if statement.tasks:
        keys = {t.casefold() for t in statement.tasks}
        cited += [r for r in store.records_of_kind([RecordKind.ISSUE.value], mission=mission, limit=10_000)
                  if str(r.attributes.get("key", "")).casefold() in keys]
    return cited


def _write_adr_mission(folder: Path | None) -> str:
    """The mission ``ingest`` gives the repository holding ``folder`` (its root folder's name)."""
    from mission_memory.ingest.git_history import GitRepository

    if folder is None:
        raise InputError("a recorded decision needs a mission (--mission)")
    probe = folder.expanduser().resolve()
    while not probe.exists():
        probe = probe.parent
    if not GitRepository.is_git_work_tree(probe):
        raise InputError(
            f"--write-adr {folder} is not inside a git work tree: the MADR file belongs in the mission's repository"
        )
    return GitRepository(probe).root.name


# ------------------------------------------------------------------------------------------ re-ingest


def _path_of(record: Record) -> str | None:
    return DecisionAttributes.read(record.attributes).path


def survives_ingest(record: Record, root: Path) -> bool:
    """Whether an ingest of the repository at ``root`` must keep ``record`` although no file produced it.

    True for a recorded decision (``recorded`` set by :func:`record_decision`) that names no file, or
    whose MADR file is still on disk under ``root`` (written but not committed yet); False for every
    other record, and for a recorded decision whose file was removed. The ingest asks it twice: when it
    reconciles what it read (:func:`reconcile_recorded`) and again for each record it is about to delete,
    inside the deleting transaction, so a decision recorded while it ran is kept (docs/adr/0056).
    """
    if record.kind is not RecordKind.DECISION or not DecisionAttributes.read(record.attributes).recorded:
        return False
    path = _path_of(record)
    return path is None or (root / path).is_file()


def reconcile_recorded(
    store: MemoryStore, mission: str, root: Path, records: Sequence[Record]
) -> tuple[list[Record], list[str]]:
    """Decision records from a repository ingest, reconciled with the decisions recorded in ``mission``.

    * A parsed ADR stored under the same source key by ``decide --write-adr`` keeps ``decided_by``,
      ``session_id`` and ``recorded`` (so the record's id matches and re-ingest adds nothing).
    * A decision that a recorded decision supersedes is marked superseded (``superseded_by`` gets the
      recorder's label, an accepted or unstated status becomes ``superseded``), as ingest marks an ADR
      another ADR supersedes, so pull demotes it the same way whichever way the supersession came.

    Args:
        store: read for the recorded decisions of ``mission``.
        mission: the mission being ingested.
        root: the repository root being ingested (a recorded ADR whose file is still on disk but not
            yet committed is kept).
        records: the records the ingest built (any kinds; only decisions are changed).

    Returns:
        ``(records, keep)``: the records, decisions reconciled; and the source keys of recorded
        decisions that no file produced but that must survive the ingest's removal of vanished files.
    """
    recorded = [
        r for r in store.records_of_kind([RecordKind.DECISION.value], mission=mission, limit=100_000)
        if DecisionAttributes.read(r.attributes).recorded
    ]
    if not recorded:
        return list(records), []
    by_key = {r.source_key: r for r in recorded}
    produced = {r.source_key for r in records}
    keep = [r.source_key for r in recorded if r.source_key not in produced and survives_ingest(r, root)]
    merged: list[Record] = []
    for record in records:
        earlier = by_key.get(record.source_key) if record.kind is RecordKind.DECISION else None
        if earlier is not None:
            was = DecisionAttributes.read(earlier.attributes)
            now = DecisionAttributes.read(record.attributes)
            record = _with_attributes(record, replace(
                now, decided_by=was.decided_by, session_id=was.session_id, recorded=was.recorded,
                supersedes=_merged(now.supersedes, was.supersedes),
            ))
        merged.append(record)
    supersessions = [
        (str(ref), _label_of(r))
        for r in recorded
        if r.source_key in keep or r.source_key in produced
        for ref in DecisionAttributes.read(r.attributes).supersedes
    ]
    out: list[Record] = []
    for record in merged:
        if record.kind is RecordKind.DECISION:
            for ref, by_label in supersessions:
                if ref in (_label_of(record), record.provenance.ref) and by_label != _label_of(record):
                    record = _mark_superseded(record, by_label)
        out.append(record)
    return out, keep
