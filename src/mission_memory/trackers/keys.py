"""Tracker keys named in free text: ``ABC-123`` style keys and ``#45`` issue numbers.

Shared by ingest (the keys a commit message names) and pull (the tasks a query names outright),
so that both read a key the same way.
"""

from __future__ import annotations

import re

__all__ = ["extract_tracker_keys"]

_TRACKER_KEY = re.compile(r"(?<![\w-])([A-Z][A-Z0-9]{1,9}-\d{1,7})(?![\w-])")
_ISSUE_NUMBER = re.compile(r"(?<![\w&#/])#(\d{1,7})\b")
_NOT_TRACKER_PREFIXES = frozenset({"ADR", "UTF", "ISO", "RFC", "SHA", "CVE", "PEP", "TLS", "SSL", "HTTP", "MD5", "AES"})


def extract_tracker_keys(text: str) -> list[str]:
    """Tracker keys named in ``text``: ``ABC-123`` style keys and ``#45`` issue numbers, in order, unique.

    Prefixes that are standards rather than trackers (``UTF-8``, ``ADR-12``, ``RFC-2119``…) are ignored.
    """
    keys: list[str] = []
    for match in _TRACKER_KEY.finditer(text):
        key = match.group(1)
        if key.split("-", 1)[0] not in _NOT_TRACKER_PREFIXES:
            keys.append(key)
    keys.extend(f"#{m.group(1)}" for m in _ISSUE_NUMBER.finditer(text))
    return list(dict.fromkeys(keys))
