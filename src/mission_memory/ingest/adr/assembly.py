"""Assembling one `Decision` from an ADR's text: title and number, fields from front matter, preamble
lines and sections, the role texts, options, Y-statement, status, links and ids (docs/design.md §3).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from mission_memory.decisions import AdrFormat, Decision, DecisionStatus, RejectedAlternative
from mission_memory.fence import usable_name
from mission_memory.front_matter import split_front_matter
from mission_memory.ingest.adr.dates import _parse_date
from mission_memory.ingest.adr.finding import _NUMBER_PREFIX
from mission_memory.ingest.adr.front_matter import _read_front_matter
from mission_memory.ingest.adr.identifiers import _ids
from mission_memory.ingest.adr.options import _chosen_option, _option_key, _options, _rejected
from mission_memory.ingest.adr.plain_text import (
    _FENCED_BLOCK,
    _HTML_COMMENT,
    _REF_LINK_DEF,
    _clean_block,
    _plain,
    _split_list,
    _strip_emoji,
)
from mission_memory.ingest.adr.references import _link_refs, _number_ref, _refs_in
from mission_memory.ingest.adr.replacement import probable_supersedes
from mission_memory.ingest.adr.sections import (
    _headings_with_pseudo,
    _list_items,
    _own_text,
    _Section,
    _sections,
)
from mission_memory.ingest.adr.status import _status_from
from mission_memory.ingest.adr.vocabulary import (
    _FIELD_KEYS,
    _FIELD_LINE,
    _MAX_FIELD_LINE,
    _TABLE_ROW,
    _field_key,
    _heading_role,
    _normalise_heading,
)
from mission_memory.ingest.adr.y_statements import _y_statement
from mission_memory.ingest.documents import MarkdownHeading

__all__ = ["parse_adr"]

_TITLE_NUMBERING = re.compile(
    r"^\s*(?:(?:ADR|ARD|AD|decision|рішення)[\s\-_#]*(?P<n1>\d{1,5})\s*(?:[:.)\-—–]+\s*|\s+)"
    r"|#?(?P<n2>\d{1,5})\s*(?:[.:)]\s*|\s*[-—–]\s+|\s+(?=\D)))",
    re.IGNORECASE,
)


@dataclass
class _Draft:
    """Mutable accumulator while one ADR is parsed."""

    status_text: str | None = None
    date_text: str | None = None
    deciders: tuple[str, ...] = ()
    component: str | None = None
    tags: tuple[str, ...] = ()
    principles: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    superseded_by: tuple[str, ...] = ()
    amends: tuple[str, ...] = ()
    amended_by: tuple[str, ...] = ()
    related: tuple[str, ...] = ()
    title: str | None = None


def _apply_field(draft: _Draft, key: str, value: str, definitions: dict[str, str]) -> None:
    value = value.strip()
    if not value:
        return
    if key == "status" and draft.status_text is None:
        draft.status_text = value
    elif key == "date" and draft.date_text is None:
        draft.date_text = value
    elif key == "deciders" and not draft.deciders:
        draft.deciders = _split_list(value)
    elif key == "component" and draft.component is None:
        draft.component = usable_name(_plain(value).strip("[]\"'") or None)  # a bad name is left out
    elif key == "tags":
        draft.tags += _split_list(value)
    elif key == "principles":
        draft.principles += _split_list(value)
    elif key == "supersedes":
        draft.supersedes += tuple(_refs_in(value, definitions, loose=True))
    elif key == "superseded_by":
        draft.superseded_by += tuple(_refs_in(value, definitions, loose=True))
    elif key == "amends":
        draft.amends += tuple(_refs_in(value, definitions, loose=True))
    elif key == "amended_by":
        draft.amended_by += tuple(_refs_in(value, definitions, loose=True))
    elif key == "related":
        draft.related += tuple(_refs_in(value, definitions, loose=True))
    elif key == "title" and draft.title is None:
        draft.title = _plain(value)


def _title_from(heading: str) -> tuple[str, int | None]:
    plain = _plain(_strip_emoji(heading)).strip()
    match = _TITLE_NUMBERING.match(plain)
    if match:
        rest = plain[match.end() :].strip(" :.-—–")
        if rest:
            return rest, int(match.group("n1") or match.group("n2"))
    return plain, None


def _freeform(text: str, path: str, number: int | None, title: str) -> Decision:
    return Decision(
        number=number,
        title=title,
        status=None,
        status_text=None,
        decided_at=None,
        context=None,
        decision=None,
        rationale=None,
        consequences=None,
        considered_options=(),
        chosen_option=None,
        rejected_alternatives=(),
        supersedes=(),
        superseded_by=(),
        related=(),
        deciders=(),
        component=None,
        tags=(),
        principle_ids=(),
        task_ids=(),
        format=AdrFormat.FREEFORM,
        text=text,
    )


def _filename_title(path: str) -> tuple[str, int | None]:
    stem = PurePosixPath(path).stem or path or "untitled"
    match = _NUMBER_PREFIX.match(stem)
    number = int(match.group(1)) if match else None
    rest = stem[match.end() :] if match else stem
    words = " ".join(re.split(r"[-_\s]+", rest)).strip()
    return (words or stem), number


def _looks_binary(text: str) -> bool:
    if "\x00" in text:
        return True
    sample = text[:4096]
    if not sample:
        return False
    controls = sum(1 for char in sample if ord(char) < 32 and char not in "\n\r\t\f\v")
    return controls / len(sample) > 0.1 or sample.count("\ufffd") / len(sample) > 0.1


def parse_adr(text: str, path: str) -> Decision:
    """Parse one ADR's text into a `Decision`, taking what can be taken.

    Recognises Nygard (Title/Status/Context/Decision/Consequences), MADR 2.x-4.x (front matter or
    ``* Status:`` bullets; "Context and Problem Statement", "Considered Options", "Decision Outcome" with
    ``Chosen option: "X", because ...``, "Consequences", "Pros and Cons of the Options" whose "Bad, because"
    arguments become the rejected alternatives' reasons) and Y-statements ("In the context of ..., facing
    ..., we decided for ... and neglected ..., to achieve ..., accepting ..."), in English and Ukrainian
    section names, plus real-world variants (see the module docstring). The title comes from the first H1
    (numbering like "5. ", "ADR 5:", "ADR-0005 - " removed), else a leading heading, else front matter
    ``title``, else the file name; the number from the file name prefix, else the title.

    Args:
        text: the ADR's full text (decoded; CRLF tolerated).
        path: its repository-relative path (file name gives number and fallback title).

    Returns:
        The decision; format ``freeform`` with only the text, title and number when the text is empty,
        binary-looking or has no recognisable structure. Never raises on odd text.
    """
    file_title, file_number = _filename_title(path)
    if not text.strip() or _looks_binary(text):
        return _freeform(text, path, file_number, file_title)
    return _parse_markdown_adr(text, path, file_title, file_number)


def _read_title(
    lines: list[str], headings: list[MarkdownHeading], consumed: int
) -> tuple[str | None, int | None, int, int | None]:
    """(title, number in the title, first body line index, index of the title line or None)."""
    title_heading = next((h for h in headings if h.level == 1 and _heading_role(h.text) is None), None)
    first_content = next((i for i in range(consumed, len(lines)) if lines[i].strip()), None)
    if (
        title_heading is None
        and headings
        and headings[0].line == first_content
        and _heading_role(headings[0].text) is None
    ):
        title_heading = headings[0]  # a document opening with "## 33. Title"
    if title_heading is not None:
        title, number = _title_from(title_heading.text)
        return title, number, title_heading.end_line, title_heading.line
    if first_content is not None and re.match(r"^#\d+\.?\s+\S", lines[first_content]):
        title, number = _title_from(lines[first_content].lstrip("#"))  # "#25. Title", no space after "#"
        return title, number, first_content + 1, first_content
    return None, None, consumed, None


def _collect_fields(
    draft: _Draft,
    preamble: Sequence[str],
    sections: Sequence[_Section],
    definitions: dict[str, str],
) -> list[str]:
    """Fill ``draft`` from preamble field lines and Status/Date/Deciders sections; return the lines where
    supersede links may be written (status values, preamble prose, status and links sections)."""
    status_lines: list[str] = []
    for raw in preamble:
        row = _TABLE_ROW.match(raw) if len(raw) <= _MAX_FIELD_LINE else None
        line = f"{row.group(1)}: {row.group(2)}" if row else raw  # "| Status | Accepted |"
        field = _FIELD_LINE.match(line) if len(line) <= _MAX_FIELD_LINE else None
        key = _field_key(field.group("key")) if field else None
        if field is not None and key is not None:
            _apply_field(draft, key, field.group("value"), definitions)
            if key == "status":
                status_lines.append(field.group("value"))
        else:
            status_lines.append(line)  # prose like "This decision has been superseded by ..."
    for section in sections:
        value = _clean_block(section.body) or ""
        first_para = value.split("\n\n", 1)[0]
        heading_field = _FIELD_LINE.match(section.heading) if section.role is None else None
        heading_key = _field_key(heading_field.group("key")) if heading_field else None
        if heading_field is not None and heading_key is not None:  # "## Status: Accepted"
            _apply_field(draft, heading_key, heading_field.group("value"), definitions)
        if section.role == "status":
            _apply_field(draft, "status", _plain(first_para), definitions)
            status_lines.extend(value.split("\n"))
        elif section.role == "date":
            _apply_field(draft, "date", first_para, definitions)
        elif section.role == "deciders":
            items = _list_items(value.split("\n"))
            _apply_field(draft, "deciders", ", ".join(items) or first_para, definitions)
        elif section.role == "links":
            status_lines.extend(section.body)
    if draft.status_text is not None:
        status_lines.append(draft.status_text)
    return status_lines


def _role_text(by_role: dict[str, list[_Section]], role: str) -> str | None:
    """The text of the sections with ``role``; several are joined, each under its own heading."""
    found = [(section.heading, _own_text(section)) for section in by_role.get(role, [])]
    parts = [(heading, text) for heading, text in found if text]
    if len(parts) > 1:
        return "\n\n".join(f"{heading}:\n{text}" for heading, text in parts)
    return parts[0][1] if parts else None


def _decision_text(by_role: dict[str, list[_Section]]) -> str | None:
    text = _role_text(by_role, "decision") or _role_text(by_role, "decision_rationale")
    sections = by_role.get("decision", [])
    if sections and ":" in sections[0].heading:
        lead = sections[0].heading.split(":", 1)[1].strip()  # "## Decision: Use X"
        text = f"{lead}\n\n{text}" if text else lead
    return text


def _adr_format(
    front: dict[str, str],
    by_role: dict[str, list[_Section]],
    sections: Sequence[_Section],
    explicit_choice: bool,
    y_statement: bool,
    status_text: str | None,
) -> AdrFormat:
    madr = bool(
        front.keys() & {"status", "date", "deciders", "decision-makers", "consulted", "informed"}
        or by_role.get("outcome")
        or by_role.get("pros_cons")
        or any(_normalise_heading(s.heading) == "context and problem statement" for s in sections)
        or explicit_choice
    )
    if madr:
        return AdrFormat.MADR
    nygard = bool(
        by_role.get("decision")
        or by_role.get("decision_rationale")
        or by_role.get("status")
        or (by_role.get("context") and (status_text or by_role.get("consequences")))
    )
    if y_statement and not (by_role.get("context") and by_role.get("decision")):
        return AdrFormat.Y_STATEMENT
    return AdrFormat.NYGARD if nygard else AdrFormat.FREEFORM


def _parse_markdown_adr(text: str, path: str, file_title: str, file_number: int | None) -> Decision:
    normalised = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    lines = normalised.split("\n")
    front_body, consumed = split_front_matter(normalised)
    front = _read_front_matter(front_body, toml=normalised.startswith("+++")) if front_body is not None else {}
    definitions = {m.group(1).strip().lower(): m.group(2) for m in _REF_LINK_DEF.finditer(normalised)}
    draft = _Draft()
    for raw_key, value in front.items():
        key = _FIELD_KEYS.get(raw_key.replace("_", " ")) or _FIELD_KEYS.get(raw_key)
        if key is not None:
            _apply_field(draft, key, value, definitions)

    headings = _headings_with_pseudo(lines, consumed)
    title, title_number, body_start, title_line = _read_title(lines, headings, consumed)
    number = file_number if file_number is not None else title_number
    sections = _sections(lines, headings, title_line)
    first_section_line = next((h.line for h in headings if h.line >= body_start), len(lines))
    status_lines = _collect_fields(draft, lines[body_start:first_section_line], sections, definitions)
    by_role: dict[str, list[_Section]] = {}
    for section in sections:
        if section.role is not None:
            by_role.setdefault(section.role, []).append(section)

    supersedes = list(draft.supersedes)
    superseded_by = list(draft.superseded_by)
    amends = list(draft.amends)
    amended_by = list(draft.amended_by)
    for line in status_lines:
        links = _link_refs(line, definitions)
        supersedes.extend(links["of"])
        superseded_by.extend(links["by"])
        amends.extend(links["amends"])
        amended_by.extend(links["amended_by"])

    context = _role_text(by_role, "context")
    decision_text = _decision_text(by_role)
    outcome = _role_text(by_role, "outcome")
    rationale = _role_text(by_role, "rationale") or _role_text(by_role, "decision_rationale")
    consequences = _role_text(by_role, "consequences")
    considered, bodies = _options(by_role)
    chosen, because, explicit = _chosen_option(outcome, decision_text, considered)
    rejected = _rejected(chosen, considered, bodies, by_role)

    y = _y_statement(normalised)
    if y is not None:
        context = context or ", facing ".join(part for part in (y.get("context"), y.get("facing")) if part)
        decision_text = decision_text or outcome or y.get("decision")
        chosen = chosen or y.get("decision")
        rationale = rationale or because or "; ".join(p for p in (y.get("achieve"), y.get("because")) if p)
        consequences = consequences or y.get("accepting")
        neglected = [
            option.strip(" \"'«»“”")
            for option in re.split(r",\s*|\s+(?:and|or|та|і|або)\s+", y.get("neglected", ""))
        ]
        for option in filter(None, neglected):
            if all(_option_key(option) != _option_key(r.option) for r in rejected):
                rejected.append(RejectedAlternative(option, None))
        if neglected and any(neglected) and not considered:
            considered = [option for option in (chosen, *neglected) if option]

    status_text = _plain(_strip_emoji(draft.status_text)).strip() if draft.status_text else None
    status = _status_from(status_text) if status_text else None
    if status is None and superseded_by and not status_text:
        status = DecisionStatus.SUPERSEDED

    self_ref = _number_ref(str(number)) if number is not None else None
    all_refs = _refs_in(_FENCED_BLOCK.sub("\n", _HTML_COMMENT.sub(" ", normalised)), definitions, loose=False)
    supersedes_t = tuple(dict.fromkeys(r for r in supersedes if r and r != self_ref))
    superseded_by_t = tuple(dict.fromkeys(r for r in superseded_by if r and r != self_ref))
    amends_t = tuple(dict.fromkeys(r for r in amends if r and r != self_ref and r not in superseded_by_t))
    amended_by_t = tuple(dict.fromkeys(r for r in amended_by if r and r != self_ref and r not in superseded_by_t))
    linked = {*supersedes_t, *superseded_by_t, *amends_t, *amended_by_t}
    related = tuple(
        dict.fromkeys(r for r in (*draft.related, *all_refs) if r and r != self_ref and r not in linked)
    )
    prose = list(lines)
    if title_line is not None:  # the title without its own numbering: "Revert ADR 3 ..." names what it replaces
        prose[title_line] = title or ""
    for index, heading in enumerate(headings):
        if _heading_role(heading.text) in ("status", "links"):  # their links are stated ones
            end = next((h.line for h in headings[index + 1 :] if h.level <= heading.level), len(lines))
            prose[heading.line : end] = [""] * (end - heading.line)
    probable = tuple(
        r for r in probable_supersedes(prose[consumed:], number, definitions)
        if r not in linked and r not in supersedes_t and r != self_ref
    )
    id_lines = list(lines)
    if title_line is not None:
        id_lines[title_line] = ""
    principle_ids, task_ids = _ids("\n".join(id_lines))

    return Decision(
        number=number,
        title=title or draft.title or file_title,
        status=status,
        status_text=status_text or None,
        decided_at=_parse_date(draft.date_text) if draft.date_text else None,
        context=context or None,
        decision=decision_text or outcome or None,
        rationale=rationale or because or None,
        consequences=consequences or None,
        considered_options=tuple(considered),
        chosen_option=chosen or None,
        rejected_alternatives=tuple(rejected),
        supersedes=supersedes_t,
        superseded_by=superseded_by_t,
        related=related,
        deciders=draft.deciders,
        component=draft.component,
        tags=tuple(dict.fromkeys(draft.tags)),
        principle_ids=tuple(dict.fromkeys((*draft.principles, *principle_ids))),
        task_ids=task_ids,
        format=_adr_format(front, by_role, sections, explicit, y is not None, status_text),
        text=text,
        amends=amends_t,
        amended_by=amended_by_t,
        probably_supersedes=probable,
    )
