"""Architecture decision records: finding them among a repository's tracked files and parsing one ADR's
text into a `Decision` (DESIGN.md §3 "Decision record"; issue 2 item 5, "ADRs -> decision records"). Parses
Nygard, MADR 2.x-4.x and Y-statements, plus the variants real repositories write (bold ``**Date:**`` lines,
bullet ``* Status:`` lines, no status, emoji statuses, "What's proposed" / "Reasoning" / "Options considered"
headings, prose "This decision has been superseded by ..." lines, Ukrainian section names). The parser
takes what can be taken and never raises: odd input gives a freeform `Decision` that still holds the text.
Pure: text in, frozen dataclasses out; git, files and records are the caller's.
"""

from __future__ import annotations

import datetime
import re
import unicodedata
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from mission_memory.decisions import AdrFormat, Decision, DecisionStatus, RejectedAlternative
from mission_memory.ingest.documents import MarkdownHeading, find_markdown_headings, split_front_matter

__all__ = ["find_adr_paths", "is_adr_path", "parse_adr"]

# --------------------------------------------------------------------------------------------- finding

_ADR_DIR_NAMES = frozenset(
    {
        "adr",
        "adrs",
        "decisions",
        "architecture-decision-records",
        "architecture-decision-record",
        "architecture_decision_records",
        "architecture_decision_record",
    }
)
_MARKDOWN_SUFFIXES = (".md", ".markdown")
_NUMBERED_FILE = re.compile(r"^\d{3,4}[-_].+\.(?:md|markdown)$", re.IGNORECASE)
_NOT_A_RECORD = frozenset({"readme", "index", "_index", "toc", "summary", "_sidebar"})
_NUMBER_PREFIX = re.compile(r"^(?:adr[-_ ]?)?(\d{1,5})(?=[-_. ]|$)", re.IGNORECASE)


def _is_record_name(name: str) -> bool:
    """False for README / index / template files, which sit beside ADRs but are not decisions."""
    lowered = name.lower()
    if not lowered.endswith(_MARKDOWN_SUFFIXES):
        return False
    stem = lowered.rsplit(".", 1)[0]
    if stem in _NOT_A_RECORD:
        return False
    unnumbered = _NUMBER_PREFIX.sub("", stem).lstrip("-_. ")
    return not (
        unnumbered.startswith(("template", "adr-template", "adr_template"))
        or unnumbered.endswith(("-template", "_template"))
        or stem in ("template", "adr-template")
    )


def find_adr_paths(paths: Iterable[str]) -> list[str]:
    """Pick the ADRs out of a repository's tracked files.

    A path is an ADR when it is a Markdown file (``.md``, ``.markdown``) that is not a README, index or
    template file, and either lies at any depth under a folder named ``adr``, ``adrs``, ``decisions``,
    ``architecture-decision-records`` or ``architecture-decision-record`` (case-insensitive; this covers
    ``doc/adr``, ``docs/adr`` and ``docs/decisions``), or is a numbered ``NNN-title.md`` /
    ``NNNN-title.md`` file in a folder holding at least two such files (issue 2 item 5).

    Args:
        paths: repository-relative POSIX paths of tracked files.

    Returns:
        The ADR paths, sorted, without duplicates.
    """
    unique = sorted(set(paths))
    numbered_per_folder: dict[str, int] = {}
    for path in unique:
        folder, _, name = path.rpartition("/")
        if _NUMBERED_FILE.match(name):
            numbered_per_folder[folder] = numbered_per_folder.get(folder, 0) + 1
    found: list[str] = []
    for path in unique:
        folder, _, name = path.rpartition("/")
        if not _is_record_name(name):
            continue
        in_adr_folder = any(part.lower() in _ADR_DIR_NAMES for part in folder.split("/") if part)
        numbered = bool(_NUMBERED_FILE.match(name)) and numbered_per_folder.get(folder, 0) >= 2
        if in_adr_folder or numbered:
            found.append(path)
    return found


def is_adr_path(path: str, siblings: Collection[str] | None = None) -> bool:
    """Tell whether one path is an ADR, judged as `find_adr_paths` would among ``siblings``.

    Args:
        path: a repository-relative POSIX path.
        siblings: the other tracked paths (needed for the "folder of numbered files" rule); None judges
            the path by its folder name only.

    Returns:
        True when ``find_adr_paths`` would list ``path``.
    """
    return path in find_adr_paths([path, *(siblings or ())])


# ------------------------------------------------------------------------------------------ text helpers

_FENCED_BLOCK = re.compile(
    r"^ {0,3}(`{3,}+|~{3,}+)[^\n]*+\n.*?(?:^ {0,3}\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL
)
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_URL = re.compile(r"\b(?:https?|ftp)://[^\s)\]>]+")
_LINK = re.compile(r"\[([^\]\n]{0,500})\]\(\s*<?([^)\s>]{0,500})>?(?:\s+\"[^\"\n]{0,200}\")?\s*\)")
_REF_LINK_DEF = re.compile(r"^ {0,3}\[([^\]\n]{1,500})\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.MULTILINE)
_REF_LINK_USE = re.compile(r"\[([^\]\n]{1,500})\](?:\[([^\]\n]{0,500})\])?(?![(:])")
_EMPHASIS_MARKS = re.compile(r"(\*\*|__|\*|_|~~)(?=\S)([^\n]{1,300}?)(?<=\S)\1")
_ISO_DATE = re.compile(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})")
_DMY_DATE = re.compile(r"\b(\d{1,2})[./](\d{1,2})[./](\d{4})\b")
_NAMED_DATE_FORMATS = ("%d %B %Y", "%B %d %Y", "%d %b %Y", "%b %d %Y", "%B %Y")
_WORDY_DATE = re.compile(r"\b(\d{1,2}\s+[A-Za-z]{3,9},?\s+\d{4}|[A-Za-z]{3,9}\s+\d{1,2},?\s+\d{4})\b")


def _strip_emoji(text: str) -> str:
    kept = [
        char
        for char in text
        if unicodedata.category(char) not in ("So", "Sk", "Cs", "Co")
        and char not in "\ufe0f\ufe0e\u200d\u20e3"
    ]
    return "".join(kept)


def _plain(text: str) -> str:
    """Markdown inline formatting removed, links reduced to their text, whitespace collapsed."""
    text = _HTML_COMMENT.sub("", text)
    text = _LINK.sub(lambda m: m.group(1), text)
    text = re.sub(r"\[([^\]\n]{0,500})\]\[[^\]\n]{0,500}\]", r"\1", text)
    text = text.replace("`", "")
    for _ in range(3):  # nested emphasis, bounded
        stripped = _EMPHASIS_MARKS.sub(r"\2", text)
        if stripped == text:
            break
        text = stripped
    return " ".join(text.split())


def _clean_block(lines: Sequence[str]) -> str | None:
    text = _HTML_COMMENT.sub("", "\n".join(lines)).strip("\n")
    text = "\n".join(line.rstrip() for line in text.split("\n")).strip()
    return text or None


def _scan_text(text: str) -> str:
    """The text with code, HTML comments and URLs blanked, for id and reference scanning."""
    text = _FENCED_BLOCK.sub("\n", text)
    text = _HTML_COMMENT.sub(" ", text)
    text = _INLINE_CODE.sub(" ", text)
    return _URL.sub(" ", text)


_UK_MONTHS = {
    name: index
    for index, names in enumerate(
        [
            ("січня", "січень"),
            ("лютого", "лютий"),
            ("березня", "березень"),
            ("квітня", "квітень"),
            ("травня", "травень"),
            ("червня", "червень"),
            ("липня", "липень"),
            ("серпня", "серпень"),
            ("вересня", "вересень"),
            ("жовтня", "жовтень"),
            ("листопада", "листопад"),
            ("грудня", "грудень"),
        ],
        start=1,
    )
    for name in names
}
_UK_DATE = re.compile(r"\b(\d{1,2})\s+([а-яіїєґ]+)\s+(\d{4})", re.IGNORECASE)


def _parse_date(value: str) -> datetime.date | None:
    for match in _ISO_DATE.finditer(value):
        try:
            return datetime.date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
        except ValueError:
            continue
    for match in _DMY_DATE.finditer(value):
        try:
            return datetime.date(int(match.group(3)), int(match.group(2)), int(match.group(1)))
        except ValueError:
            continue
    for match in _UK_DATE.finditer(value):
        month = _UK_MONTHS.get(match.group(2).lower())
        if month is not None:
            try:
                return datetime.date(int(match.group(3)), month, int(match.group(1)))
            except ValueError:
                continue
    for match in _WORDY_DATE.finditer(value):
        candidate = match.group(1).replace(",", "")
        for fmt in _NAMED_DATE_FORMATS:
            try:
                return datetime.datetime.strptime(candidate, fmt).date()
            except ValueError:
                continue
    return None


def _split_list(value: str) -> tuple[str, ...]:
    value = value.strip().strip("[]{}")
    items = [_plain(item).strip(" \"'") for item in re.split(r"[,;]|\s+\|\s+", value)]
    return tuple(dict.fromkeys(item for item in items if item))


# ---------------------------------------------------------------------------------------- front matter


def _read_front_matter(body: str) -> dict[str, str]:
    """A tolerant ``key: value`` reader for YAML-ish front matter.

    Handles quoted scalars, flow lists (``[a, b]``), block lists (``- a`` lines under a key, joined with
    ", ") and ``#`` comments; nested mappings are flattened to their text. No PyYAML: MADR front matter is
    flat, and a template's ``{proposed | rejected | ...}`` placeholders are not valid YAML anyway.
    """
    fields: dict[str, str] = {}
    current: str | None = None
    for raw in body.split("\n"):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = re.match(r"^\s*-\s+(.*)$", line)
        if item and current is not None:
            value = item.group(1).strip().strip("\"'")
            fields[current] = f"{fields[current]}, {value}" if fields[current] else value
            continue
        pair = re.match(r"^([A-Za-z\u0400-\u04FF][\w\u0400-\u04FF \-]*?)\s*:\s*(.*)$", line)
        if pair and not line.startswith((" ", "\t")):
            current = pair.group(1).strip().lower()
            value = re.sub(r"\s+#.*$", "", pair.group(2)).strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            fields[current] = value
        elif current is not None:
            fields[current] = f"{fields[current]} {line.strip()}".strip()
    return fields


# ---------------------------------------------------------------------------------------------- fields

_FIELD_LINE = re.compile(
    r"^\s*+(?:[-*+]\s+)?(?:\*\*|__)?\s*+(?P<key>[^\W\d_][\w' \-]{0,30}?)\s*(?:\*\*|__)?\s*:\s*(?:\*\*|__)?"
    r"\s*(?P<value>.*?)\s*$"
)
_TABLE_ROW = re.compile(r"^\s*\|\s*([^|\n]{1,40}?)\s*\|\s*([^|\n]*?)\s*\|?\s*$")
_MAX_FIELD_LINE = 400  # characters; longer lines are prose, and the field pattern stays linear on them
_FIELD_KEYS: dict[str, str] = {
    "status": "status",
    "статус": "status",
    "date": "date",
    "decision date": "date",
    "date decided": "date",
    "decided": "date",
    "decided on": "date",
    "last updated": "date",
    "дата": "date",
    "дата рішення": "date",
    "deciders": "deciders",
    "decision-makers": "deciders",
    "decision makers": "deciders",
    "decided by": "deciders",
    "approvers": "deciders",
    "ухвалили": "deciders",
    "учасники рішення": "deciders",
    "consulted": "consulted",
    "informed": "informed",
    "component": "component",
    "components": "component",
    "компонент": "component",
    "tags": "tags",
    "labels": "tags",
    "теги": "tags",
    "principles": "principles",
    "принципи": "principles",
    "supersedes": "supersedes",
    "replaces": "supersedes",
    "superseded by": "superseded_by",
    "superseded-by": "superseded_by",
    "replaced by": "superseded_by",
    "related": "related",
    "related decisions": "related",
    "title": "title",
    "technical story": "story",
    "user story": "story",
}


def _field_key(raw: str) -> str | None:
    return _FIELD_KEYS.get(" ".join(_strip_emoji(raw).lower().split()))


# ------------------------------------------------------------------------------------------- sections

_SECTION_ROLES: dict[str, str] = {
    # Nygard / MADR / common English headings
    "status": "status",
    "date": "date",
    "deciders": "deciders",
    "context": "context",
    "context and problem statement": "context",
    "problem statement": "context",
    "problem": "context",
    "background": "context",
    "context and problem": "context",
    "decision": "decision",
    "decisions": "decision",
    "the decision": "decision",
    "what's proposed": "decision",
    "whats proposed": "decision",
    "what is proposed": "decision",
    "proposal": "decision",
    "proposed solution": "decision",
    "proposed decision": "decision",
    "solution": "decision",
    "decision outcome": "outcome",
    "outcome": "outcome",
    "decision and reasoning": "decision_rationale",
    "decision and rationale": "decision_rationale",
    "rationale": "rationale",
    "reasoning": "rationale",
    "justification": "rationale",
    "reasons": "rationale",
    "why": "rationale",
    "consequences": "consequences",
    "positive consequences": "consequences",
    "negative consequences": "consequences",
    "implications": "consequences",
    "considered options": "options",
    "options considered": "options",
    "options": "options",
    "alternatives considered": "options",
    "considered alternatives": "options",
    "other options considered": "rejected",
    "other options": "rejected",
    "alternatives": "rejected",
    "rejected alternatives": "rejected",
    "rejected options": "rejected",
    "pros and cons of the options": "pros_cons",
    "pros and cons": "pros_cons",
    "decision drivers": "drivers",
    "links": "links",
    "related decisions": "links",
    "related": "links",
    # Ukrainian
    "статус": "status",
    "статус рішення": "status",
    "дата": "date",
    "контекст": "context",
    "контекст і постановка проблеми": "context",
    "контекст та постановка проблеми": "context",
    "контекст і проблема": "context",
    "постановка проблеми": "context",
    "передумови": "context",
    "рішення": "decision",
    "ухвалене рішення": "decision",
    "прийняте рішення": "decision",
    "результат рішення": "outcome",
    "обґрунтування": "rationale",
    "обгрунтування": "rationale",
    "наслідки": "consequences",
    "позитивні наслідки": "consequences",
    "негативні наслідки": "consequences",
    "розглянуті варіанти": "options",
    "розглянуті альтернативи": "options",
    "варіанти": "options",
    "відхилені варіанти": "rejected",
    "відхилені альтернативи": "rejected",
    "інші розглянуті варіанти": "rejected",
    "альтернативи": "rejected",
    "переваги та недоліки варіантів": "pros_cons",
    "переваги і недоліки варіантів": "pros_cons",
    "чинники рішення": "drivers",
    "пов'язані рішення": "links",
    "посилання": "links",
}
_ROLE_PREFIXES: tuple[tuple[str, str], ...] = (
    ("other options considered", "rejected"),
    ("options considered", "options"),
    ("considered options", "options"),
    ("decision outcome", "outcome"),
    ("decision:", "decision"),
    ("рішення:", "decision"),
)
_PSEUDO_HEADING = re.compile(r"^\s*(?:\*\*|__)([^*_\n]{2,40}?):?(?:\*\*|__):?\s*$")


def _normalise_heading(text: str) -> str:
    text = _plain(_strip_emoji(text)).lower().replace("’", "'").replace("ʼ", "'")
    text = re.sub(r"^(?:\d+(?:\.\d+)*[.)]?|[ivx]+\.)\s+", "", text)
    return " ".join(text.strip(" :.-—–").split())


def _heading_role(text: str) -> str | None:
    norm = _normalise_heading(text)
    role = _SECTION_ROLES.get(norm)
    if role is not None:
        return role
    for prefix, prefixed_role in _ROLE_PREFIXES:
        if norm.startswith(prefix):
            return prefixed_role
    return None


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


# ------------------------------------------------------------------------------------------ references

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


_SUPERSEDED_BY = re.compile(r"\b(?:superseded|replaced)\s+by\b|\bзамінен[оеаий]\w*", re.IGNORECASE)
_SUPERSEDES = re.compile(r"\b(?:supersedes|replaces)\b|\bзамінює\b", re.IGNORECASE)


def _supersede_refs(line: str, definitions: dict[str, str]) -> tuple[list[str], list[str]]:
    """(supersedes, superseded_by) named on one line."""
    supersedes: list[str] = []
    superseded_by: list[str] = []
    matches = sorted(
        [(m.start(), m.end(), "by") for m in _SUPERSEDED_BY.finditer(line)]
        + [(m.start(), m.end(), "of") for m in _SUPERSEDES.finditer(line)]
    )
    for index, (_, end, kind) in enumerate(matches):
        stop = matches[index + 1][0] if index + 1 < len(matches) else len(line)
        refs = _refs_in(line[end:stop].strip(" :,.;-—"), definitions, loose=True)
        (superseded_by if kind == "by" else supersedes).extend(refs)
    return supersedes, superseded_by


# ---------------------------------------------------------------------------------------------- status

_STATUS_WORDS: tuple[tuple[str, DecisionStatus], ...] = (
    (r"superseded|replaced|заміщен|замінен", DecisionStatus.SUPERSEDED),
    (r"deprecated|obsolete|retired|withdrawn|застар|скасован", DecisionStatus.DEPRECATED),
    (r"rejected|declined|refused|відхилен", DecisionStatus.REJECTED),
    (
        r"accepted|approved|adopted|agreed|decided|implemented|done|active|final|прийнят|ухвален|затверджен|чинн",
        DecisionStatus.ACCEPTED,
    ),
    (
        (
            r"proposed|proposal|draft|in review|under review|under discussion|open|pending|wip|in progress|"
            r"запропонован|пропозиці|чернетк|на розгляді|обговорен"
        ),
        DecisionStatus.PROPOSED,
    ),
)


def _status_from(text: str) -> DecisionStatus | None:
    lowered = text.lower()
    best: tuple[int, DecisionStatus] | None = None
    for pattern, status in _STATUS_WORDS:
        match = re.search(rf"(?<!\w)(?:{pattern})", lowered)
        if match and (best is None or match.start() < best[0]):
            best = (match.start(), status)
    return best[1] if best else None


# --------------------------------------------------------------------------------------------- options

_LIST_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")
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


# ---------------------------------------------------------------------------------------- Y-statements


@dataclass(frozen=True)
class _YPhrases:
    """The connecting phrases of a Y-statement in one language (Zdun et al., "Sustainable architectural
    design decisions", 2013)."""

    opening: re.Pattern[str]
    facing: re.Pattern[str]
    decided: re.Pattern[str]
    neglected: re.Pattern[str]
    achieve: re.Pattern[str]
    accepting: re.Pattern[str]
    because: re.Pattern[str]


_Y_LANGUAGES = (
    _YPhrases(
        opening=re.compile(r"\bin the context of\s+", re.IGNORECASE),
        facing=re.compile(r",?\s*facing\s+", re.IGNORECASE),
        decided=re.compile(r",?\s*we\s+(?:decided|chose)\s+(?:for|on|to)?\s*", re.IGNORECASE),
        neglected=re.compile(r",?\s+and\s+(?:neglected|against)\s+", re.IGNORECASE),
        achieve=re.compile(r",?\s*to\s+achieve\s+", re.IGNORECASE),
        accepting=re.compile(r",?\s*accepting\s+(?:that\s+)?", re.IGNORECASE),
        because=re.compile(r",?\s+because\s+", re.IGNORECASE),
    ),
    _YPhrases(
        opening=re.compile(r"(?<!\w)у\s+контексті\s+", re.IGNORECASE),
        facing=re.compile(r",\s*(?:зіткнувшись|стикаючись)\s+(?:з|із)\s+", re.IGNORECASE),
        decided=re.compile(r",?\s*ми\s+(?:вирішили|обрали)\s+", re.IGNORECASE),
        neglected=re.compile(r",?\s+(?:і|та)\s+(?:відхилили|знехтували)\s+", re.IGNORECASE),
        achieve=re.compile(r",?\s*щоб\s+(?:досягти|забезпечити)\s+", re.IGNORECASE),
        accepting=re.compile(r",?\s*(?:погоджуючись|приймаючи)\s+(?:на\s+|що\s+)?", re.IGNORECASE),
        because=re.compile(r",?\s+(?:тому що|бо)\s+", re.IGNORECASE),
    ),
)
_Y_WINDOW = 3000  # characters a Y-statement may span from its opening phrase
_Y_ATTEMPTS = 10  # opening phrases tried per language; bounds the work on hostile text
_SENTENCE_END = re.compile(r"\.(?:\s|$)")


def _y_parts(flat: str, start: int, phrases: _YPhrases) -> dict[str, str] | None:
    """Walk one Y-statement's phrases in order from ``start`` (linear time, no backtracking)."""
    window = flat[start : start + _Y_WINDOW]
    marks: list[tuple[str, re.Match[str]]] = []
    position = 0
    for name, pattern in (
        ("facing", phrases.facing),
        ("decision", phrases.decided),
        ("achieve", phrases.achieve),
        ("accepting", phrases.accepting),
    ):
        match = pattern.search(window, position)
        if match is None:
            return None
        marks.append((name, match))
        position = match.end()
    end_match = _SENTENCE_END.search(window, position)
    end = end_match.start() if end_match else len(window)
    parts = {"context": window[: marks[0][1].start()]}
    for index, (name, match) in enumerate(marks):
        stop = marks[index + 1][1].start() if index + 1 < len(marks) else end
        parts[name] = window[match.end() : stop]
    neglected = phrases.neglected.search(parts["decision"])
    if neglected:
        parts["neglected"] = parts["decision"][neglected.end() :]
        parts["decision"] = parts["decision"][: neglected.start()]
    because = phrases.because.search(parts["accepting"])
    if because:
        parts["because"] = parts["accepting"][because.end() :]
        parts["accepting"] = parts["accepting"][: because.start()]
    cleaned = {key: value.strip(" ,\"'«»“”") for key, value in parts.items()}
    return cleaned if all(cleaned.get(key) for key in ("context", "decision")) else None


def _y_statement(text: str) -> dict[str, str] | None:
    """The parts of the first Y-statement in the text (English or Ukrainian), or None.

    Keys: context, facing, decision, neglected (optional), achieve, accepting, because (optional).
    """
    flat = _plain(_FENCED_BLOCK.sub(" ", text))
    for phrases in _Y_LANGUAGES:
        for attempt, opening in enumerate(phrases.opening.finditer(flat)):
            if attempt >= _Y_ATTEMPTS:
                break
            parts = _y_parts(flat, opening.end(), phrases)
            if parts is not None:
                return parts
    return None


# -------------------------------------------------------------------------------------------- ids

_PRINCIPLE_ID = re.compile(r"(?<![\w\-])(PRIN-\d+|P-\d+|P\d{1,4})(?![\w\-])")
_TASK_KEY = re.compile(r"(?<![\w\-/#.])([A-Z][A-Z0-9]{1,9}-\d{1,7})(?![\w\-])")
_TASK_HASH = re.compile(r"(?<![\w&/#\]])#(\d{1,6})\b(?![.\-]\d)")
_NOT_TASK_PREFIXES = frozenset(
    {
        "ADR",
        "PRIN",
        "UTF",
        "SHA",
        "ISO",
        "RFC",
        "AES",
        "RSA",
        "TLS",
        "SSL",
        "HTTP",
        "CVE",
        "CWE",
        "PEP",
        "ECMA",
        "ES",
        "IEC",
        "IEEE",
        "EN",
        "DIN",
        "MD",
        "GPT",
        "OWASP",
        "NIST",
        "SP",
        "CRC",
        "UTC",
        "GMT",
        "ANSI",
        "X",
        "PKCS",
        "HMAC",
        "IPV",
        "WCAG",
        "FIPS",
        "ASCII",
        "DDT",
    }
)


def _ids(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(principle ids, task ids) mentioned outside code and URLs."""
    scan = _scan_text(text)
    scan = re.sub(r"^ {0,6}#{1,6}(?=\s)", " ", scan, flags=re.MULTILINE)
    principles = tuple(dict.fromkeys(match.group(1) for match in _PRINCIPLE_ID.finditer(scan)))
    tasks: list[str] = []
    for match in _TASK_KEY.finditer(scan):
        key = match.group(1)
        if key.split("-", 1)[0] in _NOT_TASK_PREFIXES or key in principles:
            continue
        tasks.append(key)
    tasks.extend(f"#{match.group(1)}" for match in _TASK_HASH.finditer(scan))
    return principles, tuple(dict.fromkeys(tasks))


# ------------------------------------------------------------------------------------------------ parse

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
        draft.component = _plain(value).strip("[]\"'") or None
    elif key == "tags":
        draft.tags += _split_list(value)
    elif key == "principles":
        draft.principles += _split_list(value)
    elif key == "supersedes":
        draft.supersedes += tuple(_refs_in(value, definitions, loose=True))
    elif key == "superseded_by":
        draft.superseded_by += tuple(_refs_in(value, definitions, loose=True))
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
    front = _read_front_matter(front_body) if front_body is not None else {}
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
    for line in status_lines:
        of, by = _supersede_refs(line, definitions)
        supersedes.extend(of)
        superseded_by.extend(by)

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
    linked = {*supersedes_t, *superseded_by_t}
    related = tuple(
        dict.fromkeys(r for r in (*draft.related, *all_refs) if r and r != self_ref and r not in linked)
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
    )
