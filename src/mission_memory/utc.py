"""One rule for naive datetimes: a time without a zone is taken as UTC, and every time leaves as UTC.

Git, trackers, files and command-line flags hand over times with and without a zone; the store, the
filters and the refresh schedule compare them. Converting in one place keeps that comparison sound.
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["as_utc", "aware_clock", "parse_clock", "parse_clock_flag"]


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


def parse_clock(value: datetime | str, name: str = "now") -> datetime:
    """A clock given by a caller (``query --now``, the API's and the MCP tool's ``now``) as aware UTC.

    Args:
        value: a datetime, or ISO 8601 text (``2026-03-01T12:00:00Z``); naive is read as UTC.
        name: the argument's name, for the error message.

    Raises:
        InputError: text that is not an ISO 8601 time.
    """
    if isinstance(value, datetime):
        return as_utc(value)
    from mission_memory.errors import InputError

    try:
        return as_utc(datetime.fromisoformat(str(value).strip()))
    except ValueError:
        raise InputError(f"{name} {value!r} is not an ISO 8601 time (e.g. 2026-03-01T12:00:00Z)") from None


def parse_clock_flag(value: str | None, flag: str) -> datetime | None:
    """A command-line clock flag (``--now``, ``--time``, ``--since``) as aware UTC, or None when not given:
    :func:`parse_clock`, the one parser every clock flag of the CLI goes through.

    Raises:
        InputError: ``FLAG 'text' is not an ISO 8601 time (e.g. 2026-03-01T12:00:00Z)``.
    """
    return None if value is None else parse_clock(value, flag)


def aware_clock(now: datetime | None) -> datetime:
    """The escalation clock: ``now`` as given when it has a zone, the current UTC time when None.

    Unlike :func:`as_utc`, a naive ``now`` is refused, not read as UTC: an escalation replayed at a
    local time taken for UTC would be hours off.

    Raises:
        InputError: a naive ``now`` (the message names it and asks for UTC).
    """
    if now is None:
        return datetime.now(UTC)
    if now.tzinfo is None:
        from mission_memory.errors import InputError

        raise InputError(f"now={now.isoformat()} has no timezone: give the escalation clock in UTC")
    return now
