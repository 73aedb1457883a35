"""The shift a rotation brief covers: who hands over to whom, and since when (docs/design.md §6).

Defaults where the caller names nothing (ADR 0026):

* the outgoing operator — the operator of the latest *work* on the mission by someone other than
  the incoming operator (ADR 0060): a record carrying an operator (handover notes, corrections,
  decisions recorded where they are taken, operational events), or a commit they authored, newest
  first whatever its kind. Queries and acknowledgements are not work: an operator who only read a
  brief, acknowledged it or asked memory does not take the shift over (issue 23: a read-only
  operator in between hid the real predecessor and their notes);
* the window's start — the first activity of the outgoing operator's latest *stretch* (activity
  with no gap of :data:`STRETCH_GAP` or more), but never less than :data:`MIN_WINDOW` before their
  last activity, so a one-commit stretch still shows the week around it; without a predecessor,
  :data:`MIN_WINDOW` before the mission's latest activity. When the incoming operator worked on the
  mission before, the window reaches back to their last activity ("what changed since you were
  last here"), at most :data:`MAX_CATCH_UP` before the predecessor's last activity;
* the window's end — now.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import datetime, timedelta

from mission_memory.decisions import DecisionAttributes
from mission_memory.errors import InputError
from mission_memory.records import Record, RecordKind
from mission_memory.stores.base import MemoryStore

__all__ = ["MAX_CATCH_UP", "MIN_WINDOW", "STRETCH_GAP", "ShiftWindow", "latest_operator", "operator_activity", "resolve_shift",
           "takes_over", "work_by_operator"]

STRETCH_GAP = timedelta(days=2)
"""A gap this long ends a stretch: the same gap that defines a rotation in the replay benchmark."""
MIN_WINDOW = timedelta(days=7)
"""The shortest window a brief covers, counted back from the predecessor's last activity."""
MAX_CATCH_UP = timedelta(days=30)
"""How far back the window reaches to the incoming operator's own last activity."""

_OPERATOR_KINDS = (RecordKind.HANDOVER_NOTE.value, RecordKind.CORRECTION_PATTERN.value, RecordKind.DECISION.value,
                   RecordKind.DOMAIN_EVENT.value)
_SCAN_LIMIT = 2_000


@dataclass(frozen=True)
class ShiftWindow:
    """One handover: the mission, who hands over to whom, and the window ``since`` <= t < ``until``.

    Attributes:
        mission: the mission.
        from_operator: the outgoing operator, or None when memory knows of none.
        to_operator: the incoming operator, or None when unknown.
        since, until: the window, timezone-aware UTC.
    """

    mission: str
    from_operator: str | None
    to_operator: str | None
    since: datetime
    until: datetime


def _decided_by(attributes: dict[str, object]) -> str | None:
    value = DecisionAttributes.read(attributes).decided_by
    return value if value and value != "agent" else None


def _operator_records(store: MemoryStore, mission: str, until: datetime) -> list[Record]:
    """The records that can name who worked, newest :data:`_SCAN_LIMIT` of *each* kind: a flood of
    operational events must not push the notes, corrections and decisions out of one shared limit."""
    return [r for kind in _OPERATOR_KINDS
            for r in store.records_of_kind([kind], mission=mission, until=until, limit=_SCAN_LIMIT)]


def operator_activity(store: MemoryStore, mission: str, operator: str, until: datetime) -> list[datetime]:
    """Times of ``operator``'s activity on ``mission`` before ``until``, newest first.

    Activity is a retrieval event they asked, a record about them (note, correction, recorded
    decision), or a commit they authored (matched on the author name commit records keep).
    """
    times = [e.time for e in store.retrieval_events_matching(operator=operator, mission=mission, until=until,
                                                               limit=_SCAN_LIMIT)]
    for record in _operator_records(store, mission, until):
        if record.operator == operator or _decided_by(record.attributes) == operator:
            times.append(record.provenance.time)
    for record in store.records_of_kind([RecordKind.COMMIT.value], mission=mission, until=until, limit=_SCAN_LIMIT):
        if record.attributes.get("author") == operator:
            times.append(record.provenance.time)
    return sorted(times, reverse=True)


def work_by_operator(store: MemoryStore, mission: str, until: datetime) -> list[tuple[datetime, str, str]]:
    """The work on ``mission`` before ``until`` that names who did it, newest first.

    Returns:
        ``[(time, operator, what)]`` with ``what`` one of ``note``, ``correction``, ``decision``,
        ``event`` (a record carrying an operator, or a decision's ``decided_by``) or ``commit`` (the
        commit record's author name). Retrieval events (queries, briefs read) are not work.
    """
    what_of = {RecordKind.HANDOVER_NOTE: "note", RecordKind.CORRECTION_PATTERN: "correction",
               RecordKind.DECISION: "decision", RecordKind.DOMAIN_EVENT: "event"}
    work: list[tuple[datetime, str, str]] = []
    for record in _operator_records(store, mission, until):
        who = record.operator or _decided_by(record.attributes)
        if who:
            work.append((record.provenance.time, who, what_of.get(record.kind, record.kind.value)))
    for record in store.records_of_kind([RecordKind.COMMIT.value], mission=mission, until=until, limit=_SCAN_LIMIT):
        author = record.attributes.get("author")
        if isinstance(author, str) and author:
            work.append((record.provenance.time, author, "commit"))
    work.sort(key=lambda w: w[0], reverse=True)
    return work


def latest_operator(store: MemoryStore, mission: str, until: datetime, *, other_than: str | None) -> str | None:
    """The operator of the latest work on ``mission`` before ``until`` who is not ``other_than``.

    Work is what :func:`work_by_operator` lists (notes, corrections, decisions, events, commits),
    compared by time whatever its kind; only when the mission holds no such work is the latest other
    operator of a retrieval event taken (a mission queried but never worked on).
    """
    for _, who, _ in work_by_operator(store, mission, until):
        if who != other_than:
            return who
    for event in store.retrieval_events_matching(mission=mission, until=until, limit=_SCAN_LIMIT):
        if event.operator and event.operator != other_than:
            return event.operator
    return None


def takes_over(
    store: MemoryStore, mission: str, operator: str | None, now: datetime, *, session_id: str | None = None
) -> bool:
    """Whether ``operator`` starting a session on ``mission`` takes a shift over (the SessionStart hook's
    rotation, ADR 0027), by this module's predecessor rule (ADR 0060: the last other operator who *worked*).

    True when ``operator`` has no activity on the mission yet (their first session there), or when
    someone else's latest work is newer than ``operator``'s latest activity (a query or brief they
    read, or work of their own). An operator who only read briefs or asked memory hands nothing
    over. The starting session's own retrieval events (``session_id``, e.g. after ``/clear``) are not
    the operator's activity: the session started without having read anything yet.

    Args:
        store: the memory's store.
        mission: the mission (stored).
        operator: who is starting (None: unknown, so any other operator's work counts as handed over).
        now: the clock (timezone-aware).
        session_id: the starting session's id.
    """
    work = work_by_operator(store, mission, now)
    handed = next((when for when, who, _ in work if who != operator), None)
    own = [when for when, who, _ in work if who == operator]
    if operator is not None:
        own += [e.time for e in store.retrieval_events_matching(operator=operator, mission=mission, until=now,
                                                                limit=_SCAN_LIMIT)
                if session_id is None or e.session_id != session_id]
    if not own:
        return operator is not None or handed is not None
    return handed is not None and handed > max(own)


def _mission_latest(store: MemoryStore, mission: str, until: datetime) -> datetime | None:
    kinds = [RecordKind.COMMIT.value, RecordKind.DECISION.value, RecordKind.HANDOVER_NOTE.value,
             RecordKind.ISSUE.value, RecordKind.COMMENT.value, RecordKind.CORRECTION_PATTERN.value]
    newest = store.records_of_kind(kinds, mission=mission, until=until, limit=1)
    return newest[0].provenance.time if newest else None


def resolve_shift(
    store: MemoryStore,
    mission: str,
    *,
    now: datetime,
    from_operator: str | None = None,
    to_operator: str | None = None,
    since: datetime | None = None,
) -> ShiftWindow:
    """The shift a brief covers, with the defaults of this module's docstring.

    Args:
        store: the memory's store.
        mission: the mission (must be stored).
        now: the window's end (timezone-aware).
        from_operator, to_operator: who hands over to whom; ``from_operator`` defaults to the latest
            other operator on the mission.
        since: the window's start; defaults as described above.

    Raises:
        InputError: ``since`` is not before ``now``, or either time is naive.
    """
    if now.tzinfo is None or (since is not None and since.tzinfo is None):
        raise InputError("the shift window's times must carry a timezone (use e.g. 2025-05-01T09:00:00Z)")
    predecessor = from_operator or latest_operator(store, mission, now, other_than=to_operator)
    if since is None:
        activity = operator_activity(store, mission, predecessor, now) if predecessor else []
        if activity:
            start = activity[0]
            for later, earlier in itertools.pairwise(activity):
                if later - earlier >= STRETCH_GAP:
                    break
                start = earlier
            since = min(start, activity[0] - MIN_WINDOW)
            last = activity[0]
        else:
            latest = _mission_latest(store, mission, now)
            last = latest or now
            since = last - MIN_WINDOW
        own = operator_activity(store, mission, to_operator, now) if to_operator else []
        if own:
            since = min(since, max(own[0], last - MAX_CATCH_UP))
    if since >= now:
        raise InputError(f"since ({since.isoformat()}) is not before the window's end ({now.isoformat()})")
    return ShiftWindow(mission, predecessor, to_operator, since, now)
