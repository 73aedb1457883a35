"""Front matter of an ADR (MADR 3.x+ puts status, date and deciders there) read into flat
``{key: text}`` fields.
"""

from __future__ import annotations

import re


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
