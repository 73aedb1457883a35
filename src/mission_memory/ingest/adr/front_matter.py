"""Front matter of an ADR (MADR 3.x+ puts status, date and deciders there) read into flat
``{key: text}`` fields: YAML (``---``) with PyYAML's safe loader keeping numbers as written
(``supersedes: 0020`` stays ``0020``, not the octal 16: `ingest.yaml_scalars`), TOML (``+++``) with `tomllib`. A
template's placeholders (``status: {proposed | rejected | ...}``) or a hand-edited block that is not
valid YAML fall back to a tolerant ``key: value`` line reader, so such an ADR still yields its fields.
"""

from __future__ import annotations

import datetime
import re
import tomllib
from typing import Any

import yaml

from mission_memory.front_matter import load_text_yaml


def _as_text(value: Any) -> str:
    """A parsed front matter value as the text the field readers expect: lists joined with ", ",
    mappings flattened to their keys and values, dates in ISO 8601."""
    if isinstance(value, list | tuple):
        return ", ".join(text for text in (_as_text(item) for item in value) if text)
    if isinstance(value, dict):
        return " ".join(
            f"{key} {_as_text(item)}".strip() if item is not None else str(key) for key, item in value.items()
        )
    if isinstance(value, datetime.date):
        return value.isoformat()
    return "" if value is None else str(value).strip()


def _read_front_matter(body: str, toml: bool = False) -> dict[str, str]:
    """Front matter as ``{lower-case key: text}``.

    Args:
        body: the block between the front matter delimiters.
        toml: the block was fenced with ``+++`` (TOML) rather than ``---`` (YAML).

    Returns:
        One text per top-level key (see `_as_text`); keys whose value is empty are left out.
    """
    try:
        parsed: Any = tomllib.loads(body) if toml else load_text_yaml(body)
    except (yaml.YAMLError, tomllib.TOMLDecodeError, ValueError):
        parsed = None
    if not isinstance(parsed, dict) or any(isinstance(value, dict) for value in parsed.values()):
        return _read_front_matter_loosely(body)  # not a mapping, or a placeholder read as a nested one
    fields = {str(key).strip().lower(): _as_text(value) for key, value in parsed.items()}
    return {key: value for key, value in fields.items() if value}


def _read_front_matter_loosely(body: str) -> dict[str, str]:
    """A tolerant ``key: value`` reader for front matter that is not valid YAML.

    Handles quoted scalars, flow lists (``[a, b]``), block lists (``- a`` lines under a key, joined with
    ", ") and ``#`` comments; nested mappings are flattened to their text. MADR templates need it: their
    ``{proposed | rejected | ...}`` placeholders are not valid YAML (or parse as a nested mapping).
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
