"""The principle registry, the mission's "constitution" (docs/design.md §3 "Principle registry"; issue 2 item 5,
"a principle registry (e.g. PRINCIPLES.md or docs/principles/) -> principles that decisions link to"). The
module owns finding registry files, parsing them into `Principle` values (one per heading of a registry
file, or one per file of a principles folder) and linking a `Decision` to the principles it rests on. Pure:
text in, frozen dataclasses out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath

from mission_memory.capture.redaction import redacted_cut
from mission_memory.decisions import Decision, Principle
from mission_memory.front_matter import split_front_matter
from mission_memory.ingest.documents import (
    MarkdownHeading,
    find_markdown_headings,
    github_anchor,
)

__all__ = ["find_principle_paths", "link_principles", "parse_principles"]

_SKIPPED_NAMES = frozenset({"readme", "index", "_index", "template"})
_ID_HEADING = re.compile(
    r"^\s*(?:principle|принцип)?\s*(?P<id>PRIN[-\s]?\d+|PR[-\s]?\d+|P[-\s]?\d+)\b\s*[:.)\-—–]*\s*(?P<title>.*)$",
    re.IGNORECASE,
)
_NUMBER_HEADING = re.compile(
    r"^\s*(?:principle|принцип)?\s*(?P<number>\d{1,4})\s*[:.)\-—–]+\s*(?P<title>.+)$", re.IGNORECASE
)
_FIELD = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?\s*(?P<key>[^\W\d_][\w' ]{1,25}?)\s*(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*"
    r"(?P<value>.*?)\s*$"
)
_FIELD_NAMES = {
    "statement": "statement",
    "principle": "statement",
    "твердження": "statement",
    "положення": "statement",
    "формулювання": "statement",
    "rationale": "rationale",
    "why": "rationale",
    "reasoning": "rationale",
    "обґрунтування": "rationale",
    "обгрунтування": "rationale",
    "version": "version",
    "версія": "version",
    "status": "status",
    "статус": "status",
    "id": "id",
    "title": "title",
    "назва": "title",
}
_MARKUP = re.compile(r"(\*\*|__|`)")


def find_principle_paths(paths: Iterable[str]) -> list[str]:
    """Pick the principle registry files out of a repository's tracked files.

    ``PRINCIPLES.md`` (any case, any depth) and Markdown files directly inside a folder named
    ``principles`` (``docs/principles/*.md``, ``principles/*.md``), except README / index / template files.

    Args:
        paths: repository-relative POSIX paths of tracked files.

    Returns:
        The registry paths, sorted, without duplicates.
    """
    found: list[str] = []
    for path in sorted(set(paths)):
        pure = PurePosixPath(path)
        suffix = pure.suffix.lower()
        if suffix not in (".md", ".markdown"):
            continue
        stem = pure.stem.lower()
        if stem == "principles" or (pure.parent.name.lower() == "principles" and stem not in _SKIPPED_NAMES):
            found.append(path)
    return found


def _plain(text: str) -> str:
    text = re.sub(r"\[([^\]\n]{0,500})\]\([^)\n]{0,500}\)", r"\1", text)
    return " ".join(_MARKUP.sub("", text).split())


def _normalise_id(raw: str) -> str:
    return re.sub(r"[\s\-_]", "", raw).upper()


def _split_heading(text: str) -> tuple[str | None, str]:
    """(id as written or derived from a number, title) of a principle heading."""
    plain = _plain(text)
    match = _ID_HEADING.match(plain)
    if match:
        raw_id = re.sub(r"\s+", "-", match.group("id").strip()).upper()
        return raw_id, match.group("title").strip() or raw_id
    numbered = _NUMBER_HEADING.match(plain)
    if numbered:
        return f"P{int(numbered.group('number'))}", numbered.group("title").strip()
    return None, plain


def _fields_and_paragraphs(lines: Sequence[str]) -> tuple[dict[str, str], list[str], dict[str, str]]:
    """(fields written as ``Key: value``, paragraphs that are not fields, subsection texts by field name)."""
    fields: dict[str, str] = {}
    paragraphs: list[str] = []
    subsections: dict[str, str] = {}
    headings = find_markdown_headings(list(lines))
    first_heading = headings[0].line if headings else len(lines)
    current: list[str] = []
    current_field: str | None = None
    for line in [*lines[:first_heading], ""]:
        field = _FIELD.match(line) if len(line) <= 400 else None
        name = _FIELD_NAMES.get(field.group("key").strip().lower()) if field else None
        if field is not None and name is not None:
            if current:
                paragraphs.append(" ".join(current))
                current = []
            fields[name] = field.group("value")
            current_field = name
        elif not line.strip():
            if current:
                paragraphs.append(" ".join(current))
                current = []
            current_field = None
        elif current_field is not None:
            fields[current_field] = f"{fields[current_field]} {line.strip()}".strip()
        else:
            current.append(line.strip())
    for index, heading in enumerate(headings):
        name = _FIELD_NAMES.get(_plain(heading.text).strip(" :").lower())
        if name is None:
            continue
        end = next((h.line for h in headings[index + 1 :] if h.level <= heading.level), len(lines))
        body = "\n".join(lines[heading.end_line : end]).strip()
        if body:
            subsections.setdefault(name, body)
    return fields, paragraphs, subsections


def _principle(principle_id: str, title: str, body: Sequence[str], text: str) -> Principle | None:
    fields, paragraphs, subsections = _fields_and_paragraphs(body)
    statement = _plain(fields.get("statement") or subsections.get("statement") or "")
    if not statement:
        statement = _plain(paragraphs[0]) if paragraphs else ""
    statement = statement or title
    rationale = _plain(fields.get("rationale") or subsections.get("rationale") or "") or None
    if not title and not statement:
        return None
    return Principle(
        id=_plain(fields["id"]) if fields.get("id") else principle_id,
        title=title or redacted_cut(statement, 80, ""),
        statement=statement,
        rationale=rationale,
        version=_plain(fields["version"]) or None if fields.get("version") else None,
        status=_plain(fields["status"]) or None if fields.get("status") else None,
        text=text.strip(),
    )


def _principle_headings(headings: Sequence[MarkdownHeading]) -> list[MarkdownHeading]:
    """The headings that each open one principle of a registry file."""
    candidates = [h for h in headings if _FIELD_NAMES.get(_plain(h.text).strip(" :").lower()) is None]
    with_ids = [h for h in candidates if _split_heading(h.text)[0] is not None]
    if with_ids:
        level = min(h.level for h in with_ids)
        return [h for h in candidates if h.level == level]
    levels = sorted({h.level for h in candidates})
    for level in levels:
        at_level = [h for h in candidates if h.level == level]
        if len(at_level) >= 2 or level == levels[-1]:
            return at_level
    return []


def parse_principles(text: str, path: str) -> list[Principle]:
    """Parse a principle registry file.

    A file inside a ``principles/`` folder (other than ``PRINCIPLES.md``) is one principle: id from front
    matter ``id``, the H1 (``# P3: Title``) or the file name (``p3-foo.md`` -> "P3"), else the file stem.
    Any other file is a registry with one principle per heading at the level that carries ids
    (``## P1: Title``, ``## P-2 — Title``, ``## 3. Title`` -> "P3"), or, with no ids anywhere, at the
    shallowest level holding two or more headings (``## Title`` -> id = the heading's anchor slug).
    Statement: a ``Statement:`` field (or subheading), else the first paragraph; rationale: a
    ``Rationale:`` field or subheading; version and status from ``Version:`` / ``Status:`` fields. English
    and Ukrainian field names.

    Args:
        text: the file's text (decoded).
        path: its repository-relative path.

    Returns:
        Principles in file order; empty when none can be found. Never raises on odd text.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    front_body, consumed = split_front_matter(text)
    front: dict[str, str] = {}
    for line in (front_body or "").split("\n"):
        key, sep, value = line.partition(":")
        if sep and key.strip():
            front[key.strip().lower()] = value.strip().strip("\"'")
    headings = find_markdown_headings(lines, consumed)
    pure = PurePosixPath(path)
    if pure.parent.name.lower() == "principles" and pure.stem.lower() != "principles":
        title_heading = next((h for h in headings if h.level == 1), headings[0] if headings else None)
        heading_id, title = _split_heading(title_heading.text) if title_heading else (None, "")
        file_id = re.match(r"^(prin|pr|p)[-_]?(\d+)", pure.stem, re.IGNORECASE)
        principle_id = (
            front.get("id")
            or heading_id
            or (f"{file_id.group(1).upper()}{file_id.group(2)}" if file_id else None)
            or pure.stem
        )
        title = front.get("title") or title or pure.stem
        body_start = title_heading.end_line if title_heading else consumed
        found = _principle(principle_id, title, lines[body_start:], text)
        return [found] if found else []
    principles: list[Principle] = []
    starts = _principle_headings(headings)
    seen: dict[str, int] = {}
    for index, heading in enumerate(starts):
        end = next(
            (h.line for h in headings if h.line > heading.line and h.level <= heading.level), len(lines)
        )
        if index + 1 < len(starts):
            end = min(end, starts[index + 1].line)
        heading_id, title = _split_heading(heading.text)
        principle_id = heading_id or github_anchor(title) or f"principle-{index + 1}"
        count = seen.get(principle_id, 0)
        seen[principle_id] = count + 1
        if count:
            principle_id = f"{principle_id}-{count}"
        found = _principle(
            principle_id, title, lines[heading.end_line : end], "\n".join(lines[heading.line : end])
        )
        if found is not None:
            principles.append(found)
    return principles


def link_principles(decision: Decision, principles: Sequence[Principle]) -> tuple[str, ...]:
    """The ids of the principles a decision rests on.

    A principle is linked when the decision's ``principle_ids`` name its id (compared without case,
    hyphens or spaces, so "P-1" matches "P1"), or its text mentions the principle's id or exact title as
    whole words, case-insensitively.

    Args:
        decision: a parsed decision.
        principles: the mission's principles.

    Returns:
        Principle ids as the registry writes them, in registry order, without duplicates.
    """
    named = {_normalise_id(pid) for pid in decision.principle_ids}
    haystack = decision.text.lower()
    linked: list[str] = []
    for principle in principles:
        hit = _normalise_id(principle.id) in named
        for needle in (principle.title, principle.id):
            needle = needle.strip().lower()
            if not hit and len(needle) >= 3:
                hit = re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", haystack) is not None
        if hit and principle.id not in linked:
            linked.append(principle.id)
    return tuple(linked)
