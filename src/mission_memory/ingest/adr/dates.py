"""Decision dates as ADRs write them: ISO (``2024-03-05``), day-first (``05.03.2024``), English month
names (``5 March 2024``, ``March 5, 2024``) and Ukrainian month names (``5 березня 2024``).
"""

from __future__ import annotations

import datetime
import re

_ISO_DATE = re.compile(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})")
_DMY_DATE = re.compile(r"\b(\d{1,2})[./](\d{1,2})[./](\d{4})\b")
_NAMED_DATE_FORMATS = ("%d %B %Y", "%B %d %Y", "%d %b %Y", "%b %d %Y", "%B %Y")
_WORDY_DATE = re.compile(r"\b(\d{1,2}\s+[A-Za-z]{3,9},?\s+\d{4}|[A-Za-z]{3,9}\s+\d{1,2},?\s+\d{4})\b")


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
