"""Principle ids (``P3``, ``PRIN-2``) and task ids (``ABC-12``, ``#34``) mentioned in an ADR outside
code and URLs (docs/design.md §3: decisions link to principles and tasks).
"""

from __future__ import annotations

import re

from mission_memory.ingest.adr.plain_text import _scan_text

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
