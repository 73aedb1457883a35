"""Documentation files (Markdown, reStructuredText, plain text) split into heading-scoped chunks for the
domain layer (docs/design.md §3; issue 2 item 5, "documentation ... split on headings with a size cap; provenance
= path#heading"). The module owns the document structure: front matter delimiters, Markdown headings
(found by markdown-it-py, a CommonMark parser, so code, lists, quotes and HTML blocks never split a
document), reStructuredText section titles, GitHub-style heading anchors, and the size cap. It is pure:
text in, frozen dataclasses out; reading files and making records is the caller's job. See ADR 0018 for
the parts that stay hand-written.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from markdown_it import MarkdownIt
from markdown_it.token import Token

from mission_memory.front_matter import split_front_matter

__all__ = [
    "DOCUMENT_SUFFIXES",
    "DocumentChunk",
    "MarkdownHeading",
    "find_markdown_headings",
    "github_anchor",
    "split_document",
]

DOCUMENT_SUFFIXES = (".md", ".markdown", ".rst", ".txt")
"""File suffixes `split_document` understands (lower case, with the dot)."""

_MIN_MAX_CHARS = 40
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_RST_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}\s*$")
_BLANK = re.compile(r"^\s*$")
_ATX_START = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")


@dataclass(frozen=True)
class DocumentChunk:
    """One retrievable piece of a document: a section (or part of one) with its heading context.

    Attributes:
        title: the section heading as written, or the file stem for the preamble; parts after the first
            of an oversized section carry a " (part N)" suffix.
        heading_path: the headings from the outermost down to this one (H1 > H2 > ...); empty for the
            preamble and for plain text.
        anchor: the GitHub-style anchor of the heading ("" for the preamble and plain text), unique in
            the file (-1, -2 suffixes for repeats), so ``path#anchor`` resolves on GitHub.
        text: the chunk text, starting with its heading line so it stands alone; at most ``max_chars``.
        start_line: 1-based line in the original file where the chunk's own content starts.
    """

    title: str
    heading_path: tuple[str, ...]
    anchor: str
    text: str
    start_line: int


@dataclass(frozen=True)
class MarkdownHeading:
    """A Markdown heading found outside code fences.

    Attributes:
        level: 1-6.
        text: the heading text without markers or closing hashes.
        line: 0-based index of the first line of the heading (the text line for setext headings).
        end_line: 0-based index of the line after the heading (2 lines for setext headings).
    """

    level: int
    text: str
    line: int
    end_line: int


def _block_parser() -> MarkdownIt:
    """CommonMark with GitHub's pipe tables, block level only: headings are found by markdown-it-py and
    inline parsing (emphasis, links) is skipped, which keeps a multi-megabyte document to a fraction of a
    second."""
    return MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])


_MARKDOWN = _block_parser()


def find_markdown_headings(lines: Sequence[str], start: int = 0) -> list[MarkdownHeading]:
    """List the ATX (``## Title``) and setext (``Title`` over ``===`` / ``---``) headings of Markdown lines.

    Parsed as CommonMark (with GitHub tables) by markdown-it-py: lines inside fenced or indented code,
    HTML blocks, lists and block quotes are never section headings, so shell comments in code do not split
    a document; a setext heading may span several lines (its text joined with spaces).

    Args:
        lines: the document's lines (no line terminators).
        start: index of the first line to look at (e.g. after front matter, which CommonMark would
            otherwise read as a thematic break and a heading).

    Returns:
        Top-level headings in document order.
    """
    body = list(lines[start:])
    tokens = _MARKDOWN.parse("\n".join(body))
    rows = _table_rows_read_as_headings(tokens, body)
    while rows:  # each pass escapes at least one line, so this ends
        for row in dict.fromkeys(rows):
            body[row] = body[row].replace("#", "\\#", 1)
        tokens = _MARKDOWN.parse("\n".join(body))
        rows = _table_rows_read_as_headings(tokens, body)
    headings: list[MarkdownHeading] = []
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or token.level != 0 or token.map is None:
            continue
        inline = tokens[index + 1]
        text = " ".join(inline.content.split("\n")).strip()
        headings.append(MarkdownHeading(int(token.tag[1]), text, token.map[0] + start, token.map[1] + start))
    return headings


def _table_rows_read_as_headings(tokens: Sequence[Token], lines: Sequence[str]) -> list[int]:
    """Lines CommonMark reads as ATX headings that continue a pipe table (``# 443 | TLS`` right under its
    rows): GitHub's table extension ends a table at such a line, but writers mean a row, and read as
    a heading it would cut the section (a "Decision" that ends in a table fragment, issue 34)."""
    rows: list[int] = []
    table_end: int | None = None
    for index, token in enumerate(tokens):
        if token.level != 0 or token.map is None:
            continue
        if token.type == "table_open":
            table_end = token.map[1]
        elif token.type == "heading_open" and token.map[0] == table_end and "|" in lines[token.map[0]]:
            if token.markup.startswith("#") and tokens[index + 1].content.strip():
                rows.append(token.map[0])
                table_end = token.map[1]  # the next row continues the same table
                for later in range(token.map[1], len(lines)):  # the rest of the table, up to a blank line,
                    if not lines[later].strip():             # in this pass: one re-parse per table
                        break
                    if "|" in lines[later] and _ATX_START.match(lines[later]):
                        rows.append(later)
        elif token.type not in ("table_close",):
            table_end = None if token.type.endswith("_open") else table_end
    return rows


_INLINE_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)|!?\[([^\]]*)\]\[[^\]]*\]")
_INLINE_CODE = re.compile(r"`+([^`]*)`+")
_STRONG = re.compile(r"(\*\*|__)(.+?)\1")
_EMPHASIS = re.compile(r"(?<![\w*])[*_](?=\S)(.+?)(?<=\S)[*_](?![\w*])")
_HTML_TAG = re.compile(r"<[^>]{1,200}>")


def _plain_heading(text: str) -> str:
    text = _INLINE_LINK.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2) or "", text)
    text = _INLINE_CODE.sub(r"\1", text)
    text = _STRONG.sub(r"\2", text)
    text = _EMPHASIS.sub(r"\1", text)
    return _HTML_TAG.sub("", text)


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens.

    Letters, marks and digits of any script are kept (a Cyrillic heading keeps its Cyrillic), as are
    ``_`` and ``-``; emoji and other punctuation are dropped. Repeats are not numbered here (see
    `split_document`).

    Args:
        heading: the heading text as written (inline Markdown is rendered to plain text first).

    Returns:
        The anchor without ``#``; may be "" for a heading of punctuation only.
    """
    kept = []
    for char in _plain_heading(heading).strip().lower():
        category = unicodedata.category(char)
        if category[0] in "LMN" or category == "Pc" or char == "-":
            kept.append(char)
        elif char == " ":
            kept.append("-")
    return "".join(kept)


@dataclass(frozen=True)
class _Section:
    level: int
    title: str | None
    heading_lines: list[str]
    body: list[str]
    body_start: int  # 0-based index of the first body line
    start: int  # 0-based index of the heading (or body for the preamble)


def _markdown_sections(text: str) -> list[_Section]:
    lines = text.split("\n")
    _, consumed = split_front_matter(text)
    headings = find_markdown_headings(lines, consumed)
    sections: list[_Section] = []
    first = headings[0].line if headings else len(lines)
    sections.append(_Section(0, None, [], lines[consumed:first], consumed, consumed))
    for index, heading in enumerate(headings):
        end = headings[index + 1].line if index + 1 < len(headings) else len(lines)
        sections.append(
            _Section(
                heading.level,
                heading.text,
                lines[heading.line : heading.end_line],
                lines[heading.end_line : end],
                heading.end_line,
                heading.line,
            )
        )
    return sections


def _rst_sections(text: str) -> list[_Section]:
    lines = text.split("\n")
    styles: list[tuple[str, bool]] = []
    found: list[tuple[int, int, int, str]] = []  # (start, end, level, title)
    index = 0
    while index < len(lines):
        line = lines[index]
        over = _RST_ADORNMENT.match(line)
        if (
            over
            and index + 2 < len(lines)
            and lines[index + 1].strip()
            and _RST_ADORNMENT.match(lines[index + 2])
            and lines[index + 2].strip()[0] == over.group(1)
        ):
            style = (over.group(1), True)
            if style not in styles:
                styles.append(style)
            found.append((index, index + 3, styles.index(style) + 1, lines[index + 1].strip()))
            index += 3
            continue
        if (
            line.strip()
            and not line[0].isspace()
            and not _RST_ADORNMENT.match(line)
            and index + 1 < len(lines)
            and (under := _RST_ADORNMENT.match(lines[index + 1]))
            and len(lines[index + 1].rstrip()) >= min(len(line.rstrip()), 3)
            and (index == 0 or not lines[index - 1].strip() or (found and found[-1][1] == index))
        ):
            style = (under.group(1), False)
            if style not in styles:
                styles.append(style)
            found.append((index, index + 2, styles.index(style) + 1, line.strip()))
            index += 2
            continue
        index += 1
    first = found[0][0] if found else len(lines)
    sections = [_Section(0, None, [], lines[:first], 0, 0)]
    for position, (start, end, level, title) in enumerate(found):
        stop = found[position + 1][0] if position + 1 < len(found) else len(lines)
        sections.append(_Section(min(level, 6), title, lines[start:end], lines[end:stop], end, start))
    return sections


def _blocks(lines: Sequence[str], first_line: int) -> list[tuple[int, str]]:
    """Group lines into blank-line separated blocks, keeping fenced code together; (1-based line, text)."""
    blocks: list[tuple[int, str]] = []
    current: list[str] = []
    current_start = first_line
    fence: str | None = None
    for offset, line in enumerate(lines):
        fence_match = _FENCE.match(line)
        if fence_match:
            fence = (
                None
                if fence is not None and fence_match.group(1)[0] == fence[0]
                else (fence if fence is not None else fence_match.group(1))
            )
        if not line.strip() and fence is None:
            if current:
                blocks.append((current_start, "\n".join(current)))
                current = []
            continue
        if not current:
            current_start = first_line + offset
        current.append(line)
    if current:
        blocks.append((current_start, "\n".join(current)))
    return blocks


def _hard_split(block: str, limit: int) -> list[str]:
    """Cut a block longer than ``limit`` at line breaks, else spaces, else anywhere; linear in its length
    (a 20 MB paragraph is walked by index, never re-copied)."""
    pieces: list[str] = []
    start, size = 0, len(block)
    while size - start > limit:
        cut = block.rfind("\n", start, start + limit + 1)
        if cut - start <= limit // 2:
            cut = block.rfind(" ", start, start + limit + 1)
        if cut - start <= limit // 2:
            cut = start + limit
        piece = block[start:cut].rstrip()
        if piece:
            pieces.append(piece)
        start = cut
        while start < size and block[start].isspace():
            start += 1
    if start < size:
        pieces.append(block[start:])
    return pieces


def _pack(
    blocks: list[tuple[int, str]], lead: str, repeat: str, max_chars: int, first_line: int
) -> list[tuple[int, str]]:
    """Pack blocks into parts of at most ``max_chars``: part 1 starts with ``lead`` (the heading lines),
    later parts with ``repeat`` (the section's own heading line, "" when too long). Returns
    (1-based start line, text) per part."""
    pieces: list[tuple[int, str]] = []
    prefix = lead if len(lead) <= max_chars // 2 else ""
    if len(repeat) > max_chars // 3:
        repeat = ""
    room = max_chars - max(len(repeat), len(prefix)) - 2
    if not prefix:
        pieces.extend((first_line, piece) for piece in _hard_split(lead, room))
    for start, block in blocks:
        pieces.extend((start, piece) for piece in _hard_split(block, room))
    parts: list[tuple[int, str]] = []
    current, current_start, has_body = prefix, first_line, False
    for start, piece in pieces:
        joined = f"{current}\n\n{piece}" if current else piece
        if len(joined) <= max_chars:
            current, has_body = joined, True
            continue
        parts.append((current_start, current))
        current = f"{repeat}\n\n{piece}" if repeat else piece
        current_start = start
    if current and (has_body or not parts):
        parts.append((current_start, current))
    return parts


def split_document(text: str, path: str, max_chars: int = 2400) -> list[DocumentChunk]:
    """Split a document into heading-scoped chunks of at most ``max_chars`` characters.

    Markdown (``.md``, ``.markdown``): ATX and setext headings outside fenced code and front matter;
    reStructuredText (``.rst``): underlined or over-and-underlined section titles, levels in order of
    first appearance; anything else: plain text, blank-line paragraphs grouped up to the cap. A section
    with no body is not emitted alone: its heading line leads the next chunk (and, being an ancestor,
    stays in its heading path). An oversized section is split on paragraph boundaries (then lines, then
    characters) into parts sharing heading path and anchor, titled "Heading (part 2)" and so on; every
    part repeats the heading line when it fits in a third of the cap.

    Args:
        text: the document's text (already decoded).
        path: the repository-relative path; its suffix picks the syntax and its stem titles the preamble.
        max_chars: the size cap per chunk, in characters (not tokens); at least 40.

    Returns:
        Chunks in document order; empty for a blank document.

    Raises:
        ValueError: ``max_chars`` is below 40.
    """
    if max_chars < _MIN_MAX_CHARS:
        raise ValueError(f"max_chars must be at least {_MIN_MAX_CHARS}, got {max_chars} for {path!r}")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    pure = PurePosixPath(path)
    suffix = pure.suffix.lower()
    stem = pure.stem or pure.name or path
    if suffix in (".md", ".markdown", ".mdx"):
        sections = _markdown_sections(text)
    elif suffix == ".rst":
        sections = _rst_sections(text)
    else:
        sections = [_Section(0, None, [], text.split("\n"), 0, 0)]
    chunks: list[DocumentChunk] = []
    stack: list[tuple[int, str]] = []
    seen_anchors: dict[str, int] = {}
    pending: list[tuple[int, str]] = []  # heading lines of empty sections waiting for the next body
    for section in sections:
        path_titles: tuple[str, ...] = ()
        if section.title is None:
            base_title, anchor = stem, ""
        else:
            while stack and stack[-1][0] >= section.level:
                stack.pop()
            stack.append((section.level, section.title))
            base = github_anchor(section.title)
            count = seen_anchors.get(base, 0)
            seen_anchors[base] = count + 1
            anchor = base if count == 0 else f"{base}-{count}"
            base_title, path_titles = section.title, tuple(title for _, title in stack)
        body_blocks = _blocks(section.body, section.body_start + 1)
        head_text = "\n".join(section.heading_lines).strip()
        if not body_blocks:
            if head_text:
                pending.append((section.start + 1, head_text))
            continue
        lead = "\n\n".join([line for _, line in pending] + ([head_text] if head_text else []))
        first_line = pending[0][0] if pending else section.start + 1
        pending = []
        parts = _pack(body_blocks, lead, head_text, max_chars, first_line)
        for number, (start, part_text) in enumerate(parts, start=1):
            title = base_title if number == 1 else f"{base_title} (part {number})"
            chunks.append(
                DocumentChunk(title, path_titles, anchor, part_text, first_line if number == 1 else start)
            )
    if pending:
        # trailing headings with no body anywhere after them: keep them rather than lose the text
        title = stack[-1][1] if stack else stem
        anchor_base = github_anchor(title)
        count = seen_anchors.get(anchor_base, 1) - 1
        anchor = anchor_base if count <= 0 else f"{anchor_base}-{count}"
        head = "\n\n".join(line for _, line in pending)[:max_chars]
        chunks.append(DocumentChunk(title, tuple(t for _, t in stack), anchor, head, pending[0][0]))
    return chunks
