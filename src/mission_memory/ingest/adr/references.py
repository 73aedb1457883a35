"""References from one decision to others: links and mentions (``ADR-12``, ``0012-x.md``) and the
supersede relations written on a line ("Superseded by ...", "Замінено ...").
"""

from __future__ import annotations

import re

from mission_memory.ingest.adr.plain_text import _LINK, _REF_LINK_USE, _URL, _plain

_ADR_MENTION = re.compile(r"\bADR[\s\-_#]*0*(\d{1,5})\b", re.IGNORECASE)
_ADR_FILE = re.compile(r"(?:^|/)(?:adr[-_]?)?(\d{1,5})[-_][^/]*\.(?:md|markdown)$", re.IGNORECASE)
_DECISION_NUMBER_TEXT = re.compile(r"^\s*(?:ADR|decision|рішення)?[\s\-_#]*0*(\d{1,5})\b", re.IGNORECASE)


def _number_ref(number: str) -> str:
    return f"{int(number):04d}"


def _link_ref(label: str, target: str) -> str | None:
    """The reference a Markdown link makes to another decision, or None when it is not one."""
    file_match = _ADR_FILE.search(target.split("#", 1)[0])
    if file_match and not target.startswith(("http://", "https://")):
        return _number_ref(file_match.group(1))
    mention = _ADR_MENTION.search(label)
    if mention and not target.startswith(("http://", "https://")):
        return _number_ref(mention.group(1))
    return None


def _refs_in(segment: str, definitions: dict[str, str], loose: bool) -> list[str]:
    """References to decisions in a piece of text.

    ``loose`` (used after "supersedes" / "superseded by") also accepts links to anything, bare numbers
    ("#12", "0012") and bare file names, keeping the target as written when it names no number.
    """
    refs: list[str] = []

    def inline(match: re.Match[str]) -> str:
        label, target = match.group(1), match.group(2)
        ref = _link_ref(label, target)
        if ref is None and loose:
            number = _DECISION_NUMBER_TEXT.match(_plain(label))
            ref = _number_ref(number.group(1)) if number else (target or label).strip()
        if ref:
            refs.append(ref)
        return " "

    def reference(match: re.Match[str]) -> str:
        target = definitions.get((match.group(2) or match.group(1)).strip().lower())
        ref = _link_ref(match.group(1), target) if target is not None else None
        if ref is None:
            return match.group(0)
        refs.append(ref)
        return " "

    consumed = _LINK.sub(inline, segment)
    consumed = _REF_LINK_USE.sub(reference, consumed)
    consumed = _URL.sub(" ", consumed)
    for match in _ADR_MENTION.finditer(consumed):
        before = consumed[max(0, match.start() - 12) : match.start()]
        if re.search(r"\b[A-Z]{2,}[\s\-]*$", before):
            continue  # another series' ADR, e.g. "DDT ADR-011"
        refs.append(_number_ref(match.group(1)))
    for match in re.finditer(r"(?<![\w/])(\d{3,5})[-_][\w\-]+\.(?:md|markdown)\b", consumed):
        refs.append(_number_ref(match.group(1)))
    if loose and not refs:
        bare = re.search(r"(?:#|\b)0*(\d{1,5})\b", _plain(consumed))
        if bare:
            refs.append(_number_ref(bare.group(1)))
    return refs


_SUPERSEDED_BY = re.compile(
    r"\b(?:super[sc]{1,3}e{1,2}ded|replaced|obsoleted|deprecated)\s+by\b|\bdeprecated\s+in\s+favou?r\s+of\b"
    r"|\bremplacée?\s+par\b|\bзамінен[оеаий]\w*",
    re.IGNORECASE,
)  # "Superceded by" and "Superceeded by" are misspellings real ADRs carry (issue 34)
_SUPERSEDES = re.compile(r"\b(?:super[sc]{1,3}edes|replaces|obsoletes)\b|\bзамінює\b", re.IGNORECASE)
_AMENDED_BY = re.compile(r"\bamended\s+by\b", re.IGNORECASE)
_AMENDS = re.compile(
    r"\bamends\b|\b(?:in\s+part|partly|partially)\s+super[sc]{1,3}edes\b"
    r"|\bsuper[sc]{1,3}edes\s+(?:some\s+aspects|some\s+parts?|parts?)\s+of\b",
    re.IGNORECASE,
)  # a decision superseded in part stays in force: the later one amends it


def _supersede_refs(line: str, definitions: dict[str, str]) -> tuple[list[str], list[str]]:
    """(supersedes, superseded_by) named on one line."""
    links = _link_refs(line, definitions)
    return links["of"], links["by"]


def _link_refs(line: str, definitions: dict[str, str]) -> dict[str, list[str]]:
    """The decisions one line names after each relation word: ``of`` (supersedes), ``by`` (superseded
    by, replaced by, obsoleted by, deprecated in favour of), ``amends`` and ``amended_by``; each
    relation's references run to the next relation word or the end of the line."""
    found: dict[str, list[str]] = {"of": [], "by": [], "amends": [], "amended_by": []}
    matches = sorted(
        [(m.start(), m.end(), "by") for m in _SUPERSEDED_BY.finditer(line)]
        + [(m.start(), m.end(), "of") for m in _SUPERSEDES.finditer(line)]
        + [(m.start(), m.end(), "amended_by") for m in _AMENDED_BY.finditer(line)]
        + [(m.start(), m.end(), "amends") for m in _AMENDS.finditer(line)]
    )
    kept: list[tuple[int, int, str]] = []
    for match in sorted(matches, key=lambda m: (m[0], -m[1])):
        if not kept or match[0] >= kept[-1][1]:  # "in part supersedes" is one relation, not two
            kept.append(match)
    for index, (_, end, kind) in enumerate(kept):
        stop = kept[index + 1][0] if index + 1 < len(kept) else len(line)
        found[kind].extend(_refs_in(line[end:stop].strip(" :,.;-—"), definitions, loose=True))
    return found
