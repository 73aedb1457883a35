"""YAML and TOML files under documentation folders (user stories, specs, requirements) read as documents.

Issue 12 item 6: a project that writes its user stories or specs in YAML or TOML documents in them as
much as in Markdown. This module owns which such files count as documentation (a ``.yaml``, ``.yml`` or
``.toml`` file with a documentation folder among its parent folders, see :data:`DOCUMENTATION_FOLDERS`)
and how one becomes chunks: one :class:`~mission_memory.ingest.documents.DocumentChunk` per top-level
key of a mapping, or per item of a top-level list, rendered as readable indented ``key: value`` text, with
``path#key`` (or ``path#<item id>``) as its anchor. YAML is read with PyYAML's ``safe_load_all`` (no
object construction), TOML with the standard library's ``tomllib``. A file that does not parse raises
:class:`StructuredDocumentError` naming the file, the format and the parser's line; the caller skips it
and reports why. Pure: text in, chunks out.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from datetime import date, datetime, time
from pathlib import PurePosixPath
from typing import Any

import yaml

from mission_memory.errors import InputError
from mission_memory.front_matter import load_all_text_yaml
from mission_memory.ingest.documents import DocumentChunk, github_anchor

__all__ = [
    "DOCUMENTATION_FOLDERS",
    "STRUCTURED_SUFFIXES",
    "StructuredDocumentError",
    "is_structured_document",
    "split_structured_document",
]

STRUCTURED_SUFFIXES = (".yaml", ".yml", ".toml")
"""Suffixes of structured documents (lower case, with the dot)."""

DOCUMENTATION_FOLDERS = frozenset({
    "doc", "docs", "documentation", "spec", "specs", "specification", "specifications", "stories",
    "user-stories", "user_stories", "userstories", "requirements", "product", "design", "rfc", "rfcs",
    "features", "adr", "adrs", "decisions",
})
"""Folder names (any depth, compared in lower case) whose YAML/TOML files are documentation."""

_ITEM_NAME_KEYS = ("id", "key", "name", "title", "story", "summary")
_MAX_CHUNK_CHARS = 2400


class StructuredDocumentError(InputError):
    """A YAML or TOML document that does not parse.

    Attributes:
        reason: ``invalid-yaml`` or ``invalid-toml`` (what an ingest report counts by).
        detail: the parser's message, with the line and column it names.
    """

    def __init__(self, path: str, reason: str, detail: str) -> None:
        super().__init__(f"{path}: {reason}: {detail}")
        self.reason = reason
        self.detail = detail


def is_structured_document(path: str) -> bool:
    """True when ``path`` (repository-relative, POSIX) is a YAML/TOML file inside a documentation folder."""
    pure = PurePosixPath(path)
    if pure.suffix.lower() not in STRUCTURED_SUFFIXES:
        return False
    return any(part.lower() in DOCUMENTATION_FOLDERS for part in pure.parts[:-1])


def _scalar(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return " ".join(str(value).split()) if "\n" not in str(value) else str(value).strip()


def _render(value: Any, indent: int = 0) -> Iterator[str]:
    """Readable lines for a parsed value: ``key: value``, nested keys indented, list items as ``- ``."""
    pad = "  " * indent
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict | list) and item:
                yield f"{pad}{key}:"
                yield from _render(item, indent + 1)
            else:
                yield from _labelled(f"{pad}{key}: ", _scalar(item) if not isinstance(item, dict | list) else "(empty)", pad)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict | list) and item:
                lines = list(_render(item, indent + 1))
                yield f"{pad}- {lines[0].lstrip()}"
                yield from lines[1:]
            else:
                yield from _labelled(f"{pad}- ", _scalar(item) if not isinstance(item, dict | list) else "(empty)", pad)
    else:
        yield from _labelled(pad, _scalar(value), pad)


def _labelled(label: str, text: str, pad: str) -> Iterator[str]:
    first, *rest = text.split("\n") or [""]
    yield f"{label}{first}"
    for line in rest:
        yield f"{pad}  {line}"


def _item_name(item: Any, index: int) -> str:
    if isinstance(item, dict):
        for key in _ITEM_NAME_KEYS:
            value = item.get(key)
            if isinstance(value, str | int) and str(value).strip():
                return " ".join(str(value).split())[:120]
    elif isinstance(item, str | int | float) and str(item).strip():
        return " ".join(str(item).split())[:80]
    return f"item {index + 1}"


def _parse(text: str, path: str) -> list[Any]:
    """The file's documents (a YAML stream may hold several), or StructuredDocumentError."""
    if PurePosixPath(path).suffix.lower() == ".toml":
        try:
            return [tomllib.loads(text)]
        except tomllib.TOMLDecodeError as exc:
            raise StructuredDocumentError(path, "invalid-toml", str(exc)) from exc
    try:
        return [doc for doc in load_all_text_yaml(text) if doc is not None]
    except yaml.YAMLError as exc:
        detail = " ".join(str(exc).split())
        raise StructuredDocumentError(path, "invalid-yaml", detail) from exc


def split_structured_document(text: str, path: str) -> list[DocumentChunk]:
    """Split a YAML or TOML document into one chunk per top-level key (mapping) or item (list).

    Each chunk's text starts with a line naming the file and the key (``user-stories.yaml › login``)
    and goes on with the value rendered as indented ``key: value`` lines, cut at 2,400 characters; its
    anchor is the key's GitHub-style anchor (``path#login``), its heading path ``(key,)``. A list item is
    named by its ``id``, ``key``, ``name``, ``title``, ``story`` or ``summary`` field, else ``item N``.
    A scalar document is one chunk titled by the file's stem. Several YAML documents in one file
    (``---``) are split in turn. Repeated anchors get ``-1``, ``-2`` suffixes.

    Args:
        text: the file's text (already decoded).
        path: the repository-relative path; its suffix picks YAML or TOML.

    Returns:
        Chunks in document order; empty for an empty document.

    Raises:
        StructuredDocumentError: the text is not valid YAML / TOML (the message names ``path`` and the
            parser's line and column); nothing is returned for the file.
    """
    stem = PurePosixPath(path).stem or path
    name = PurePosixPath(path).name
    chunks: list[DocumentChunk] = []
    seen: dict[str, int] = {}
    for document in _parse(text, path):
        if isinstance(document, dict):
            entries = [(str(key), value) for key, value in document.items()]
        elif isinstance(document, list):
            entries = [(_item_name(item, i), item) for i, item in enumerate(document)]
        else:
            entries = [(stem, document)]
        for key, value in entries:
            base = github_anchor(key) or "item"
            count = seen.get(base, 0)
            seen[base] = count + 1
            anchor = base if count == 0 else f"{base}-{count}"
            body = "\n".join(_render(value))
            chunk_text = f"{name} › {key}\n\n{body}".strip()
            if len(chunk_text) > _MAX_CHUNK_CHARS:
                chunk_text = chunk_text[: _MAX_CHUNK_CHARS - 4].rstrip() + "\n[…]"
            chunks.append(DocumentChunk(key, (key,), anchor, chunk_text, 1))
    return chunks
