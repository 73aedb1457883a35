"""An ADR's Markdown structure: headings (plus bold pseudo-headings naming a known role) cut into
sections with their nested subsections, and the top-level items of a list.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from mission_memory.ingest.adr.plain_text import _clean_block
from mission_memory.ingest.adr.vocabulary import _PSEUDO_HEADING, _heading_role
from mission_memory.ingest.documents import MarkdownHeading, find_markdown_headings

_LIST_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")


@dataclass(frozen=True)
class _Section:
    role: str | None
    heading: str
    level: int
    body: tuple[str, ...]  # lines up to the next heading of the same or a higher level, or a nested role
    sub: tuple[MarkdownHeading, ...]  # headings nested inside, with lines indexed into ``body``


def _headings_with_pseudo(lines: list[str], start: int) -> list[MarkdownHeading]:
    """Markdown headings plus bold pseudo-headings (``**Context**`` alone on a line) naming a known role."""
    headings = find_markdown_headings(lines, start)
    taken = {heading.line for heading in headings}
    in_fence = False
    for index in range(start, len(lines)):
        if re.match(r"^ {0,3}(`{3,}|~{3,})", lines[index]):
            in_fence = not in_fence
        if in_fence or index in taken:
            continue
        match = _PSEUDO_HEADING.match(lines[index])
        if match and _heading_role(match.group(1)) is not None:
            headings.append(MarkdownHeading(6, match.group(1).strip(), index, index + 1))
    return sorted(headings, key=lambda heading: heading.line)


def _sections(lines: list[str], headings: list[MarkdownHeading], skip: int | None) -> list[_Section]:
    sections: list[_Section] = []
    for position, heading in enumerate(headings):
        if heading.line == skip:
            continue
        role = _heading_role(heading.text)
        end = len(lines)
        nested: list[MarkdownHeading] = []
        for later in headings[position + 1 :]:
            if later.level <= heading.level or (role is not None and _heading_role(later.text) is not None):
                end = later.line
                break
            nested.append(later)
        offset = heading.end_line
        sub = tuple(
            MarkdownHeading(item.level, item.text, item.line - offset, item.end_line - offset)
            for item in nested
        )
        sections.append(_Section(role, heading.text, heading.level, tuple(lines[offset:end]), sub))
    return sections


def _own_text(section: _Section) -> str | None:
    return _clean_block(section.body)


def _list_items(lines: Sequence[str]) -> list[str]:
    """Top-level list items of a block (continuation lines joined)."""
    items: list[str] = []
    indent: int | None = None
    in_fence = False
    for line in lines:
        if re.match(r"^ {0,3}(`{3,}|~{3,})", line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        match = _LIST_ITEM.match(line)
        if match:
            depth = len(match.group(1).expandtabs(4))
            if indent is None or depth <= indent:
                indent = depth
                items.append(match.group(2).strip())
                continue
        if items and line.strip() and indent is not None and line.startswith(" " * (indent + 1)):
            if not _LIST_ITEM.match(line):
                items[-1] = f"{items[-1]} {line.strip()}"
        elif items and not line.strip():
            continue
        elif items and line.strip() and not match:
            indent = indent if indent is not None else 0
    return items


def _subsections(section: _Section) -> list[tuple[str, list[str]]]:
    """The shallowest nested headings of a section with their lines (their own nested headings included)."""
    if not section.sub:
        return []
    level = min(item.level for item in section.sub)
    tops = [item for item in section.sub if item.level == level]
    result: list[tuple[str, list[str]]] = []
    for index, top in enumerate(tops):
        end = tops[index + 1].line if index + 1 < len(tops) else len(section.body)
        result.append((top.text, list(section.body[top.end_line : end])))
    return result
