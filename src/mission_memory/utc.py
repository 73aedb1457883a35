"""One rule for naive datetimes: a time without a zone is taken as UTC, and every time leaves as UTC.

Git, trackers, files and command-line flags hand over times with and without a zone; the store, the
filters and the refresh schedule compare them. Converting in one place keeps that comparison sound.
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["as_utc"]


def as_utc(moment: datetime) -> datetime:
    """The same instant as an aware UTC datetime.

    Args:
        moment: aware (any zone) or naive; a naive value is read as UTC, not as local time, because the
            sources that omit the zone (SQLite text, ISO strings from trackers, ``--since 2025-03-01``)
            mean UTC.

    Returns:
        An aware datetime with ``tzinfo=UTC``.
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
