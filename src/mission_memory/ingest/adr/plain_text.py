"""Markdown inline text reduced to plain text for ADR parsing: emphasis, links, inline code, HTML
comments and emoji removed; code, comments and URLs blanked for reference and id scanning.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

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


def _split_list(value: str) -> tuple[str, ...]:
    value = value.strip().strip("[]{}")
    items = [_plain(item).strip(" \"'") for item in re.split(r"[,;]|\s+\|\s+", value)]
    return tuple(dict.fromkeys(item for item in items if item))
