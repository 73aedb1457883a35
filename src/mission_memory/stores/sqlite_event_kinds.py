"""The SQLite store's per-kind minute summary of domain events, kept by triggers at intake (docs/adr/0095).

A flood's kinds, their exact counts and first and last times are read by every degraded pull
(triage and the crisis timeline). A ``GROUP BY`` over the window's records costs one index entry per
event: 0.4 s at 180,000 events. This module keeps, for each minute, each kind of domain event and each
combination of the columns a query filters on, one row of ``event_kind_minutes``: how many events, the
oldest and the newest (time, record id, provenance reference). Triggers on ``records`` keep it on every
write path (intake, re-sends, retention, salvage): an insert adds its event, a delete takes it away and
reads the minute's new oldest or newest from the records when it was one of them.

A query then reads:

* the whole minutes inside its time range from the summary (one row per kind, minute and filter values:
  the cost follows the kinds and the minutes the window spans, not its events);
* the partial minutes at the range's two ends from ``records`` itself (at most two minutes of events).

Both are folded per kind into :class:`~mission_memory.stores.base.EventKind`; the answer is the one the
``GROUP BY`` over every event gives. A minute is ``floor(time / 60)``, written the same way in SQL and
in Python (:func:`minute_sql`, :func:`whole_minutes`).
"""

from __future__ import annotations

import math
import sqlite3
from datetime import UTC, datetime
from typing import Any

from mission_memory.records import RecordKind
from mission_memory.stores.base import EventKind, sort_event_kinds
from mission_memory.stores.filters import SearchFilter
from mission_memory.stores.sqlite_filters import filter_sql

__all__ = [
    "EVENT_KIND_MINUTES_SQL",
    "EVENT_KIND_SECONDS_SQL",
    "MINUTE",
    "bucket_sql",
    "count_events_by_component",
    "event_kinds",
    "event_kinds_by_scan",
    "minute_sql",
]

MINUTE = 60.0
"""Seconds per summary row's span."""

_EVENT = RecordKind.DOMAIN_EVENT.value
_FILTERED = ("layer", "component", "operator", "access_level", "mission_type", "event_type", "criticality", "outcome")
"""The record columns a search filters on besides the mission and the time: each summary row holds one value of each."""


def bucket_sql(time: str, size: int) -> str:
    """SQL for ``floor(time / size)`` (SQLite 3.40 may lack ``floor``): the summary bucket of a time in seconds."""
    return f"(CAST({time} / {size} AS INTEGER) - ({time} < CAST({time} / {size} AS INTEGER) * {size}))"


def minute_sql(time: str) -> str:
    """SQL for ``floor(time / 60)``: the summary minute of a time in seconds."""
    return bucket_sql(time, 60)


def _kind(alias: str) -> str:
    return f"COALESCE({alias}.kind_key, 'record:' || {alias}.id)"


def _same_row(alias: str, table: str, column: str, size: int) -> str:
    """SQL: the summary row of ``table`` is the one of the record ``alias`` (NULLs equal: ``IS``)."""
    pairs = [f"{table}.mission = {alias}.mission", f"{table}.kind_key = {_kind(alias)}",
             f"{table}.{column} = {bucket_sql(alias + '.time', size)}"]
    return " AND ".join(pairs + [f"{table}.{c} IS {alias}.{c}" for c in _FILTERED])


def _members(table: str, column: str, size: int, order: str) -> str:
    """SQL: ``(time, id, ref)`` of the first record of the summary row of ``table`` in ``order``."""
    match = " AND ".join([f"r.{c} IS {table}.{c}" for c in _FILTERED])
    return (f"(SELECT r.time, r.id, r.ref FROM records r WHERE r.kind_key = {table}.kind_key AND r.mission = {table}.mission"
            f" AND r.kind = '{_EVENT}' AND r.time >= {table}.{column} * {size} - 1"
            f" AND r.time < {table}.{column} * {size} + {size + 1}"
            f" AND {bucket_sql('r.time', size)} = {table}.{column} AND {match} ORDER BY {order} LIMIT 1)")


_COLUMNS = ", ".join(_FILTERED)


def _summary_sql(table: str, column: str, size: int, index: str, trigger: str) -> str:
    """The summary table of buckets of ``size`` seconds, its index, its two triggers and its backfill."""
    same_new, same_old = _same_row("new", table, column, size), _same_row("old", table, column, size)
    first, last = _members(table, column, size, "r.time, r.id"), _members(table, column, size, "r.time DESC, r.id DESC")
    return f"""
CREATE TABLE IF NOT EXISTS {table} (
    mission TEXT NOT NULL, kind_key TEXT NOT NULL, {column} INTEGER NOT NULL,
    layer TEXT NOT NULL, component TEXT, operator TEXT, access_level TEXT, mission_type TEXT, event_type TEXT,
    criticality REAL NOT NULL, outcome TEXT,
    count INTEGER NOT NULL,
    first_time REAL, first_id TEXT, first_ref TEXT,
    last_time REAL, last_id TEXT, last_ref TEXT
);
CREATE INDEX IF NOT EXISTS {table}_window ON {table} ({index});
CREATE TRIGGER IF NOT EXISTS {trigger}_ai AFTER INSERT ON records WHEN new.kind = '{_EVENT}' BEGIN
    INSERT INTO {table} (mission, kind_key, {column}, {_COLUMNS}, count,
                         first_time, first_id, first_ref, last_time, last_id, last_ref)
    SELECT new.mission, {_kind('new')}, {bucket_sql('new.time', size)}, {', '.join('new.' + c for c in _FILTERED)}, 0,
           new.time, new.id, new.ref, new.time, new.id, new.ref
    WHERE NOT EXISTS (SELECT 1 FROM {table} WHERE {same_new});
    UPDATE {table} SET count = count + 1,
        first_time = CASE WHEN (new.time, new.id) < (first_time, first_id) THEN new.time ELSE first_time END,
        first_id = CASE WHEN (new.time, new.id) < (first_time, first_id) THEN new.id ELSE first_id END,
        first_ref = CASE WHEN (new.time, new.id) < (first_time, first_id) THEN new.ref ELSE first_ref END,
        last_time = CASE WHEN (new.time, new.id) > (last_time, last_id) THEN new.time ELSE last_time END,
        last_id = CASE WHEN (new.time, new.id) > (last_time, last_id) THEN new.id ELSE last_id END,
        last_ref = CASE WHEN (new.time, new.id) > (last_time, last_id) THEN new.ref ELSE last_ref END
    WHERE {same_new};
END;
CREATE TRIGGER IF NOT EXISTS {trigger}_ad AFTER DELETE ON records WHEN old.kind = '{_EVENT}' BEGIN
    UPDATE {table} SET count = count - 1 WHERE {same_old};
    DELETE FROM {table} WHERE {same_old} AND count <= 0;
    UPDATE {table} SET (first_time, first_id, first_ref) = {first} WHERE {same_old} AND first_id = old.id;
    UPDATE {table} SET (last_time, last_id, last_ref) = {last} WHERE {same_old} AND last_id = old.id;
END;
INSERT INTO {table} (mission, kind_key, {column}, {_COLUMNS}, count, first_time, last_time)
SELECT r.mission, {_kind('r')}, {bucket_sql('r.time', size)} AS b, {', '.join('r.' + c for c in _FILTERED)}, count(*),
       min(r.time), max(r.time)
FROM records r WHERE r.kind = '{_EVENT}'
GROUP BY r.mission, {_kind('r')}, b, {', '.join('r.' + c for c in _FILTERED)};
UPDATE {table} SET (first_time, first_id, first_ref) = (
    SELECT r.time, r.id, r.ref FROM records r WHERE r.id = substr({table}.kind_key, 8))
WHERE kind_key LIKE 'record:%';
UPDATE {table} SET (last_time, last_id, last_ref) = (first_time, first_id, first_ref) WHERE kind_key LIKE 'record:%';
UPDATE {table} SET (first_time, first_id, first_ref) = {first} WHERE kind_key NOT LIKE 'record:%';
UPDATE {table} SET (last_time, last_id, last_ref) = {last} WHERE kind_key NOT LIKE 'record:%';
"""


EVENT_KIND_MINUTES_SQL = _summary_sql("event_kind_minutes", "minute", 60, "mission, minute, kind_key", "records_event_kind")
"""Migration ``0006_event_kind_minutes``: the minute table, its index, the two triggers, and the summary of the
events already stored (a record without a kind key is a kind of its own, ``record:<id>``)."""

EVENT_KIND_SECONDS_SQL = _summary_sql("event_kind_seconds", "second", 1, "mission, kind_key, second",
                                      "records_event_kind_seconds")
"""Migration ``0007_event_kind_seconds``: the same per second, read for a minute that straddles a query's
time bound, so only one second's events of a kind are read from the records at each bound."""


# A kind's running fold: count, first, last, highest criticality, best (crit, time, id), oldest and newest (time, id, ref)
_Fold = tuple[int, float, float, float, tuple[float, float, str], tuple[float, str, str], tuple[float, str, str]]
_Level = tuple[str, str, int]
_MINUTES: _Level = ("event_kind_minutes", "minute", 60)
_SECONDS: _Level = ("event_kind_seconds", "second", 1)


def _row_sql(level: _Level) -> str:
    return (f"kind_key, {level[1]}, count, criticality, first_time, first_id, first_ref, last_time, last_id, last_ref, "
            f"{_COLUMNS}, mission")


def _merge(into: dict[str, _Fold], key: str, part: _Fold) -> None:
    seen = into.get(key)
    if seen is None:
        into[key] = part
        return
    into[key] = (seen[0] + part[0], min(seen[1], part[1]), max(seen[2], part[2]), max(seen[3], part[3]),
                 max(seen[4], part[4]), min(seen[5], part[5]), max(seen[6], part[6]))


def _minute_rows(conn: sqlite3.Connection, where: SearchFilter | None, mission: str | None,
                 low: float | None, high: float | None) -> list[tuple[Any, ...]]:
    """The minute rows passing ``where`` (its time bounds excepted; or of ``mission``) whose minute may hold a
    time in [``low``, ``high``] (a minute of margin each side: each row's own first and last times decide)."""
    if where is not None:
        clauses, params = filter_sql(SearchFilter(where.layers, where.filters.model_copy(
            update={"since": None, "until": None})), alias="event_kind_minutes")
    else:
        clauses, params = [], []
        if mission is not None:
            clauses.append("event_kind_minutes.mission = ?")
            params.append(mission)
    if low is not None:
        clauses.append("event_kind_minutes.minute >= ?")
        params.append(math.floor(low / MINUTE) - 1)
    if high is not None:
        clauses.append("event_kind_minutes.minute <= ?")
        params.append(math.floor(high / MINUTE) + 1)
    sql_where = " AND ".join(clauses) or "1"
    return conn.execute(f"SELECT {_row_sql(_MINUTES)} FROM event_kind_minutes WHERE {sql_where}", params).fetchall()


def _second_rows(conn: sqlite3.Connection, minute_row: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """The second rows of one minute row (same mission, kind and filter values)."""
    start = int(minute_row[1]) * 60
    match = " AND ".join(f"{c} IS ?" for c in _FILTERED)
    return conn.execute(
        f"SELECT {_row_sql(_SECONDS)} FROM event_kind_seconds WHERE mission = ? AND kind_key = ? AND second >= ?"
        f" AND second < ? AND {match}", [minute_row[18], minute_row[0], start, start + 60, *minute_row[10:18]]).fetchall()


def _place(row: tuple[Any, ...], low: float | None, low_open: bool, high: float | None) -> str:
    """``whole`` when every event of the summary row is in the range, ``none`` when none is, else ``part``."""
    first, last = float(row[4]), float(row[7])

    def above(t: float) -> bool:
        return low is None or (t > low if low_open else t >= low)

    def below(t: float) -> bool:
        return high is None or t <= high

    if above(first) and below(last):
        return "whole"
    if not above(last) or not below(first):
        return "none"
    return "part"


def _row_records(row: tuple[Any, ...], level: _Level, low: float | None, low_open: bool,
                 high: float | None) -> tuple[str, list[Any]]:
    """SQL over ``records r`` (and its parameters): the events of the second row ``row`` within the range."""
    key, bucket, size = str(row[0]), int(row[1]), level[2]
    clauses = [f"r.kind = '{_EVENT}'", "r.mission = ?", "r.time >= ?", "r.time < ?", f"{bucket_sql('r.time', size)} = ?"]
    params: list[Any] = [row[18], bucket * size - 1, bucket * size + size + 1, bucket]
    if key.startswith("record:"):
        clauses.append("r.id = ?")
        params.append(key.removeprefix("record:"))
    else:
        clauses.append("r.kind_key = ?")
        params.append(key)
    for column, value in zip(_FILTERED, row[10:18], strict=True):
        clauses.append(f"r.{column} IS ?")
        params.append(value)
    if low is not None:
        clauses.append(f"r.time {'>' if low_open else '>='} ?")
        params.append(low)
    if high is not None:
        clauses.append("r.time <= ?")
        params.append(high)
    return " AND ".join(clauses), params


def _whole(row: tuple[Any, ...]) -> _Fold:
    top, t0, t1 = float(row[3]), float(row[4]), float(row[7])
    return (int(row[2]), t0, t1, top, (top, t1, str(row[8])), (t0, str(row[5]), str(row[6])),
            (t1, str(row[8]), str(row[9])))


def _parts(conn: sqlite3.Connection, minute_row: tuple[Any, ...], low: float | None, low_open: bool,
           high: float | None) -> list[tuple[tuple[Any, ...], str]]:
    """The second rows of a minute row straddling a bound, each ``whole`` or ``part`` (``none`` left out)."""
    out = []
    for row in _second_rows(conn, minute_row):
        place = _place(row, low, low_open, high)
        if place != "none":
            out.append((row, place))
    return out


def _fold_part(conn: sqlite3.Connection, row: tuple[Any, ...], low: float | None, high: float | None) -> _Fold | None:
    """The fold of a second row's events within [``low``, ``high``], read from the records."""
    top = float(row[3])
    sql, params = _row_records(row, _SECONDS, low, False, high)
    count = conn.execute(f"SELECT count(*) FROM records r WHERE {sql}", params).fetchone()[0]
    if not count:
        return None
    t0, id0, ref0 = conn.execute(f"SELECT r.time, r.id, r.ref FROM records r WHERE {sql} ORDER BY r.time, r.id LIMIT 1",
                                 params).fetchone()
    t1, id1, ref1 = conn.execute(f"SELECT r.time, r.id, r.ref FROM records r WHERE {sql}"
                                 " ORDER BY r.time DESC, r.id DESC LIMIT 1", params).fetchone()
    return (int(count), float(t0), float(t1), top, (top, float(t1), str(id1)), (float(t0), str(id0), str(ref0)),
            (float(t1), str(id1), str(ref1)))


def event_kinds(conn: sqlite3.Connection, where: SearchFilter) -> list[EventKind]:
    """Every kind of domain event passing ``where``, exact: each minute row wholly inside the time range as
    kept; for a minute straddling a bound, its second rows inside as kept and the one second straddling the
    bound read from the records.

    Returns:
        The kinds in :func:`~mission_memory.stores.base.sort_event_kinds` order.
    """
    f = where.filters
    low = f.since.timestamp() if f.since is not None else None
    high = f.until.timestamp() if f.until is not None else None
    out: dict[str, _Fold] = {}
    for row in _minute_rows(conn, where, None, low, high):
        place = _place(row, low, False, high)
        if place == "whole":
            _merge(out, str(row[0]), _whole(row))
        elif place == "part":
            for second, second_place in _parts(conn, row, low, False, high):
                part = _whole(second) if second_place == "whole" else _fold_part(conn, second, low, high)
                if part is not None:
                    _merge(out, str(row[0]), part)
    return sort_event_kinds(
        EventKind(key=key, count=n, first_seen=datetime.fromtimestamp(t0, UTC), last_seen=datetime.fromtimestamp(t1, UTC),
                  max_criticality=top, best_id=best[2], oldest_ref=oldest[2], newest_ref=newest[2])
        for key, (n, t0, t1, top, best, oldest, newest) in out.items()
    )


def count_events_by_component(conn: sqlite3.Connection, mission: str | None, after: float, through: float) -> dict[str, int]:
    """Domain events with time in (``after``, ``through``] per component ("" for none), exact: the minute rows
    inside the range as kept; in a minute straddling a bound, its second rows, the straddling second counted
    in the records."""
    out: dict[str, int] = {}

    def add(row: tuple[Any, ...], n: int) -> None:
        if n:
            component = "" if row[11] is None else str(row[11])
            out[component] = out.get(component, 0) + n

    for row in _minute_rows(conn, None, mission, after, through):
        place = _place(row, after, True, through)
        if place == "whole":
            add(row, int(row[2]))
        elif place == "part":
            for second, second_place in _parts(conn, row, after, True, through):
                if second_place == "whole":
                    add(second, int(second[2]))
                else:
                    sql, params = _row_records(second, _SECONDS, after, True, through)
                    add(second, int(conn.execute(f"SELECT count(*) FROM records r WHERE {sql}", params).fetchone()[0]))
    return out


def event_kinds_by_scan(conn: sqlite3.Connection, where: SearchFilter) -> list[EventKind]:
    """:func:`event_kinds` for a file without the summaries (a read-only store of an older schema, which
    cannot be migrated): one ``GROUP BY`` over the records passing ``where``, the kind key read from the
    attributes, then three lookups per kind of more than one event. Same answer, one row read per event."""
    clauses, params = filter_sql(where, alias="r")
    clauses.append("r.kind = ?")
    params.append(_EVENT)
    sql_where = " AND ".join(clauses)
    key_sql = "COALESCE(json_extract(r.attributes, '$.kind_key'), 'record:' || r.id)"
    out = []
    for key, count, first, last, top, some_id, some_ref in conn.execute(
            f"SELECT {key_sql} AS k, count(*), min(r.time), max(r.time), max(r.criticality), min(r.id), min(r.ref)"
            f" FROM records r WHERE {sql_where} GROUP BY k", params).fetchall():
        best, oldest, newest = some_id, some_ref, some_ref
        if count > 1:
            one = f" FROM records r WHERE {key_sql} = ? AND {sql_where} ORDER BY"
            best = conn.execute(f"SELECT r.id{one} r.criticality DESC, r.time DESC, r.id DESC LIMIT 1",
                                (key, *params)).fetchone()[0]
            oldest = conn.execute(f"SELECT r.ref{one} r.time, r.id LIMIT 1", (key, *params)).fetchone()[0]
            newest = conn.execute(f"SELECT r.ref{one} r.time DESC, r.id DESC LIMIT 1", (key, *params)).fetchone()[0]
        out.append(EventKind(key=str(key), count=int(count), first_seen=datetime.fromtimestamp(first, UTC),
                             last_seen=datetime.fromtimestamp(last, UTC), max_criticality=float(top),
                             best_id=str(best), oldest_ref=str(oldest), newest_ref=str(newest)))
    return sort_event_kinds(out)
