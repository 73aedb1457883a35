"""Considered options of an ADR, the chosen one and the rejected alternatives with the reason each was
rejected (MADR "Considered Options", "Decision Outcome", "Pros and Cons of the Options").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mission_memory.decisions import RejectedAlternative
from mission_memory.ingest.adr.plain_text import _HTML_COMMENT, _URL, _plain
from mission_memory.ingest.adr.sections import _list_items, _own_text, _Section, _subsections
from mission_memory.ingest.adr.vocabulary import _normalise_heading
from mission_memory.ingest.documents import find_markdown_headings

_CHOSEN = re.compile(
    r"(?:chosen|selected)\s+option|обраний\s+варіант|вибраний\s+варіант|обрано\s+варіант", re.IGNORECASE
)
_OPTION_NUMBER_CHOICE = re.compile(
    r"\b(?:decided\s+(?:on|for)|chose|choose|chosen|selected|select|go(?:ing)?\s+with|went\s+with|"
    r"recommend(?:ed)?|prefer(?:red)?)\s+(?:the\s+)?option\s+(\d+)\b",
    re.IGNORECASE,
)
_PRO_CON_HEADINGS = re.compile(
    r"^(?:advantages?|disadvantages?|pros?|cons?|issues?|benefits?|drawbacks?|risks?|good|bad|neutral|"
    r"переваги|недоліки|ризики)\b",
    re.IGNORECASE,
)
_NEGATIVE_HEADINGS = re.compile(
    r"^(?:disadvantages?|cons?|issues?|drawbacks?|risks?|bad|недоліки|ризики)\b", re.IGNORECASE
)


def _option_title(raw: str) -> str:
    """An option's title from a list item or heading: the bold lead if any, URLs and numbering removed."""
    raw = _HTML_COMMENT.sub("", raw).strip()
    bold = re.match(r"^(?:\*\*|__)(.+?)(?:\*\*|__)", raw)
    text = bold.group(1) if bold else raw
    text = _plain(_URL.sub("", text))
    text = re.sub(r"\(\s*\)", "", text)
    text = re.sub(r"^(?:option|варіант)\s*\d+\s*[:.)\-—–]?\s*", "", text, flags=re.IGNORECASE)
    text = text.strip(" :-—–\"'«»“”")
    return " ".join(text.split())


def _option_key(text: str) -> str:
    key = re.sub(r"[^\w]", "", text.lower())
    return re.sub(r"^(?:use|using|the|a|an)+", "", key) or key


def _negative_reasons(lines: Sequence[str]) -> str | None:
    """'Bad, because ...' arguments, or the items under a Disadvantages / Issues / Cons subheading."""
    reasons = [
        _plain(re.sub(r"^(?:bad|погано)\s*,?\s*(?:because|бо|тому що)\s*", "", item, flags=re.IGNORECASE))
        for item in _list_items(lines)
        if re.match(r"^(?:\*\*|__)?(?:bad|погано)\b", item, re.IGNORECASE)
    ]
    if not reasons:
        headings = find_markdown_headings(list(lines))
        for index, heading in enumerate(headings):
            if _NEGATIVE_HEADINGS.match(_normalise_heading(heading.text)):
                end = headings[index + 1].line if index + 1 < len(headings) else len(lines)
                block = lines[heading.end_line : end]
                items = _list_items(block)
                reasons.extend(_plain(item) for item in items) if items else reasons.extend(
                    [_plain(" ".join(block))] if _plain(" ".join(block)) else []
                )
    reasons = [reason for reason in reasons if reason]
    return "; ".join(reasons) if reasons else None


def _first_paragraph(lines: Sequence[str]) -> str | None:
    """The first paragraph of a block that comes before any heading, as plain text."""
    paragraph: list[str] = []
    for line in lines:
        if re.match(r"^ {0,3}#{1,6}\s", line):
            break
        if not line.strip():
            if paragraph:
                break
            continue
        paragraph.append(line)
    return _plain(" ".join(paragraph)) or None


def _first_sentence(text: str) -> str:
    plain = _plain(text)
    match = re.match(r"(.+?[.!?])(?:\s|$)", plain)
    return (match.group(1) if match else plain)[:300]


def _options(by_role: dict[str, list[_Section]]) -> tuple[list[str], dict[str, list[str]]]:
    """(considered option titles, body lines per option title) from Options and Pros-and-Cons sections."""
    considered: list[str] = []
    bodies: dict[str, list[str]] = {}

    def add(title: str) -> None:
        if (
            title
            and title not in ("…", "...")
            and all(_option_key(title) != _option_key(o) for o in considered)
        ):
            considered.append(title)

    for section in by_role.get("options", []):
        items = _list_items(section.body[: section.sub[0].line] if section.sub else section.body)
        for item in items:
            add(_option_title(item))
        for heading, body in _subsections(section):
            norm = _normalise_heading(heading)
            if _PRO_CON_HEADINGS.match(norm) or re.match(r"^options?\s+for\b", norm):
                continue
            add(_option_title(heading))
            bodies[_option_title(heading)] = body
    for section in by_role.get("pros_cons", []):
        for heading, body in _subsections(section):
            add(_option_title(heading))
            bodies[_option_title(heading)] = body
    return considered, bodies


def _chosen_option(
    outcome: str | None, decision: str | None, considered: Sequence[str]
) -> tuple[str | None, str | None, bool]:
    """(chosen option, its "because ..." justification, whether the ADR states the choice explicitly).

    Explicit: MADR's ``Chosen option: "X", because ...``. Inferred, when options were listed: "decided on
    Option 2", or the one option named in the decision's first sentence.
    """
    source = outcome or decision or ""
    match = _CHOSEN.search(source)
    by_key = {_option_key(option): option for option in considered}
    if match:
        after = _plain(source[match.end() :]).lstrip(" :")
        quoted = re.match(r"^[\"“«„']([^\"”»“']+)[\"”»“']", after)
        if quoted:
            chosen, rest = quoted.group(1).strip(), after[quoted.end() :]
        else:
            head = re.split(r",?\s+(?:because|тому що|оскільки|бо)\b|,\s", after, maxsplit=1)[0]
            chosen, rest = head.strip(" ."), after[len(head) :]
        reason = re.match(r"^\s*,?\s*(?:because|тому що|оскільки|бо)\s+(.+)", rest, re.IGNORECASE | re.DOTALL)
        because = reason.group(1).strip() if reason else None
        return by_key.get(_option_key(chosen), chosen) or None, because, True
    if not considered or not source:
        return None, None, False
    numbered = _OPTION_NUMBER_CHOICE.search(source)
    if numbered and 1 <= int(numbered.group(1)) <= len(considered):
        return considered[int(numbered.group(1)) - 1], None, False
    lead = _option_key(_first_sentence(source))
    hits = [option for option in considered if len(_option_key(option)) >= 4 and _option_key(option) in lead]
    return (hits[0], None, False) if len(hits) == 1 else (None, None, False)


def _rejected(
    chosen: str | None,
    considered: Sequence[str],
    bodies: dict[str, list[str]],
    by_role: dict[str, list[_Section]],
) -> list[RejectedAlternative]:
    """Options not chosen (reasons from "Bad, because" / Disadvantages), plus "Other options" sections."""
    rejected: list[RejectedAlternative] = []

    def add(option: str, reason: str | None) -> None:
        if option and all(_option_key(option) != _option_key(r.option) for r in rejected):
            rejected.append(RejectedAlternative(option, reason))

    if chosen is not None and any(_option_key(chosen) == _option_key(o) for o in considered):
        for option in considered:
            if _option_key(option) != _option_key(chosen):
                lines = next((b for t, b in bodies.items() if _option_key(t) == _option_key(option)), None)
                add(option, _negative_reasons(lines) if lines else None)
    for section in by_role.get("rejected", []):
        subs = [
            (h, b) for h, b in _subsections(section) if not _PRO_CON_HEADINGS.match(_normalise_heading(h))
        ]
        for heading, lines in subs:
            add(_option_title(heading), _negative_reasons(lines) or _first_paragraph(lines))
        body_text = _own_text(section) if not subs else None
        if body_text is None:
            continue
        items = _list_items(section.body)
        if items and len(items) == len([line for line in section.body if line.strip()]):
            for item in items:  # a plain list of rejected option titles
                add(_option_title(item), None)
        else:  # prose: the first sentence names the option, the rest says why not
            lead = _first_sentence(body_text)
            add(lead, _plain(body_text)[len(lead) :].strip() or None)
    return rejected
