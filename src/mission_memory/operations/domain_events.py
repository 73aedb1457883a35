"""Domain events: what operations missions stream into the domain layer (docs/design.md §3, §7).

An event is something that happened in a sector (or a service) at a time, with a type and a
criticality: shelling reported in sector North, a jamming burst, a lost link with part of a swarm, a
service's error rate above its objective. This module owns the event model, its validation and its
readers of JSON Lines and CSV (files, standard input, posted bodies) and the conversion of an event into a domain-layer record. Readers parse everything first
and raise one :class:`~mission_memory.errors.InputError` naming the source, the line and the field
before anything is stored, so a malformed batch stores nothing. Webhook payloads of alerting services
are read by their own modules in :mod:`mission_memory.operations.sources`.

Event text is untrusted (it comes from sensors, people and other systems): it is stored as data and
fenced like every quoted record when a digest shows it.
"""

from __future__ import annotations

import csv
import io
import json
import math
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from mission_memory.errors import InputError
from mission_memory.fence import MAX_NAME_CHARS, escape_control_characters, name_problem
from mission_memory.operations.event_template import kind_key
from mission_memory.records import EVENT_TITLE_HEAD_CHARS, Provenance, Record, RecordKind, SourceKind
from mission_memory.utc import as_utc

__all__ = [
    "EARLIER_VERSIONS_KEPT",
    "MAX_EVENT_BATCH_BYTES",
    "MAX_EVENT_TEXT_CHARS",
    "MAX_JSON_DEPTH",
    "DomainEvent",
    "EventState",
    "batch_too_large",
    "check_event_times",
    "event_from_record",
    "event_record",
    "event_version",
    "events_from_objects",
    "load_json",
    "no_events",
    "read_events_csv",
    "read_events_jsonl",
    "validation_problems",
    "version_id",
]

MAX_EVENT_BATCH_BYTES = 5_000_000
"""Largest batch (file, request body) accepted at once, in bytes."""

MAX_EVENT_TEXT_CHARS = 20_000
"""Longest event text, in characters (a log excerpt, not a log file)."""

MAX_JSON_DEPTH = 32
"""Deepest nesting of arrays and objects accepted in posted JSON (an Alertmanager payload is 4 deep)."""


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` (decoded JSON) nests arrays and objects more than ``limit`` levels deep; iterative."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def load_json(text: str, where: str) -> Any:
    """``text`` decoded as JSON, or a clear error: not JSON, or nested deeper than :data:`MAX_JSON_DEPTH`.

    The standard decoder recurses once per level, so a body of ``[[[[…`` a few thousand deep ends
    in ``RecursionError``; that, and anything deeper than the limit, is bad input, not a crash.

    Args:
        text: the JSON text.
        where: what it is, for the message (``alertmanager webhook: the body``).

    Raises:
        InputError: ``<where> is not valid JSON (…)`` or ``<where> nests JSON deeper than 32 levels``.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise InputError(f"{where} nests JSON deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as exc:  # JSONDecodeError, and an integer literal past Python's digit limit
        raise InputError(f"{where} is not valid JSON ({str(exc)[:200]})") from None
    if _deeper_than(value, MAX_JSON_DEPTH):
        raise InputError(f"{where} nests JSON deeper than {MAX_JSON_DEPTH} levels")
    return value


EARLIEST_EVENT_TIME = datetime(1970, 1, 1, tzinfo=UTC)
"""Events dated before this are refused (Alertmanager's zero time is year 1)."""



_MAX_SOURCE_CHARS = 500


class EventState(StrEnum):
    """An alert's state; plain events are ``firing`` (they happened) for their whole life."""

    FIRING = "firing"
    RESOLVED = "resolved"


class DomainEvent(BaseModel):
    """One domain event.

    Attributes:
        id: stable id from the source (an Alertmanager fingerprint and start, a sensor's message id);
            the same id later replaces the stored version, which its record keeps (docs/adr/0078).
        time: when it happened, timezone-aware (a naive time is read as UTC).
        sector: the sector, area or service it concerns.
        type: what kind of event it is (``shelling``, ``ew_jamming``, ``HighErrorRate``).
        criticality: in [0, 1]; the triage weight in degraded mode (docs/design.md §7).
        source: who or what reported it (a post, a sensor, ``alertmanager``).
        text: the report in natural language, English or Ukrainian.
        caused_by: ids of the events that caused this one (cascades).
        unit: the unit involved, if any.
        operator: the operator who recorded it, if any.
        state: ``firing`` or ``resolved``; a resolved event leaves the critical set (its record's
            criticality is 0, the source's criticality kept beside it; docs/adr/0057).
        fingerprint: the source's identity of the alert (Alertmanager's fingerprint, a PagerDuty
            incident key, an Opsgenie alias): notifications sharing it are repeats of one alert.
        labels: labels an on-call engineer needs (instance, cluster, region …), as ``(name, value)`` pairs;
            a JSON object is accepted.
        runbook_url: the runbook to follow, shown with the alert.
        generator_url: where the alert came from (Prometheus graph, incident page).
        ends_at: when the alert resolved (None while firing); ``time`` stays its start.

    ``id``, ``sector``, ``type``, ``unit``, ``operator`` and the ids of ``caused_by`` obey the name
    rule (:mod:`mission_memory.fence`): one line of printable text, at most 200 characters.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    time: datetime
    sector: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    type: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    criticality: float = Field(ge=0.0, le=1.0)
    source: str = Field(default="unknown", min_length=1, max_length=_MAX_SOURCE_CHARS)
    text: str = Field(min_length=1, max_length=MAX_EVENT_TEXT_CHARS)
    caused_by: tuple[str, ...] = ()
    unit: str | None = None
    operator: str | None = None
    state: EventState = EventState.FIRING
    fingerprint: str | None = Field(default=None, min_length=1, max_length=200)
    labels: tuple[tuple[str, str], ...] = ()
    runbook_url: str | None = Field(default=None, max_length=2000)
    generator_url: str | None = Field(default=None, max_length=2000)
    ends_at: datetime | None = None

    @field_validator("time")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        moment = as_utc(value)
        if moment < EARLIEST_EVENT_TIME:
            raise ValueError(f"{moment.isoformat()} is before 1970: not a real event time (an unset time?)")
        return moment

    @field_validator("criticality", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        # true is not 1.0 and "0.9" is not a number: say so instead of converting (CSV converts its cells first)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"must be a number in [0, 1], got {type(value).__name__} {value!r}")
        if math.isnan(value) or math.isinf(value):
            raise ValueError(f"must be a number in [0, 1], got {value!r}")
        return value

    @field_validator("text", "source", mode="before")
    @classmethod
    def _control_characters_escaped(cls, value: Any, info: ValidationInfo) -> Any:
        """A control character (ESC of an ANSI colour a sender left in an alert's summary) is stored as its
        visible escape, never refused: the sender cannot fix it and the page would be lost
        (:func:`~mission_memory.fence.escape_control_characters`; idempotent). A text that fitted the field's
        length before its escapes is cut to it after them (a page is not lost to its colour codes either)."""
        if not isinstance(value, str):
            return value
        longest = MAX_EVENT_TEXT_CHARS if info.field_name == "text" else _MAX_SOURCE_CHARS
        escaped = escape_control_characters(value)
        return escaped[:longest] if len(value) <= longest else escaped

    @field_validator("ends_at")
    @classmethod
    def _utc_end(cls, value: datetime | None) -> datetime | None:
        return as_utc(value) if value is not None else None

    @field_validator("labels", mode="before")
    @classmethod
    def _label_pairs(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            return tuple(sorted((str(k), str(v)) for k, v in value.items()))
        return value

    @property
    def duration(self) -> timedelta | None:
        """How long a resolved alert fired (None while firing or for a plain event)."""
        return self.ends_at - self.time if self.ends_at is not None else None

    @field_validator("id", "sector", "type", "source", "text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()

    @field_validator("id", "sector", "type", "unit", "operator")
    @classmethod
    def _a_name(cls, value: str | None, info: ValidationInfo) -> str | None:
        """The id, sector, type, unit and operator are names: printed in headings, on one line (ADR 0054).

        An event read back from the store (validation context ``{"stored": True}``) keeps the names
        an older version accepted; they are escaped wherever they are printed.
        """
        if value is None:
            return None
        problem = None if _stored(info) else name_problem(value.strip())
        if problem is not None:
            raise ValueError(problem)
        return value.strip()

    @field_validator("caused_by")
    @classmethod
    def _ids(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        for item in () if _stored(info) else value:
            problem = name_problem(item)
            if problem is not None:
                raise ValueError(f"event id {item!r} {problem}")
        return value


def _stored(info: ValidationInfo) -> bool:
    return isinstance(info.context, dict) and bool(info.context.get("stored"))


EARLIER_VERSIONS_KEPT = 20
"""Earlier versions one event record keeps: the first report and the newest 19 before the current one;
the ones between are counted in ``earlier_versions_omitted`` (a sender re-sending an id with a changing
value must not grow one record without bound)."""


def event_version(event: DomainEvent) -> dict[str, Any]:
    """What an earlier version of an event said, as kept in its record's ``earlier_versions`` (ADR 0078).

    Returns:
        ``{"time", "criticality", "state", "type", "sector", "text", "operator"}``; ``time`` in ISO 8601,
        ``criticality`` the source's (a resolved version keeps what it was sent with).
    """
    return {"time": event.time.isoformat(), "criticality": event.criticality, "state": event.state.value,
            "type": event.type, "sector": event.sector, "text": event.text, "operator": event.operator}


def event_record(event: DomainEvent, mission: str, earlier: Sequence[Mapping[str, Any]] = (),
                 omitted: int = 0) -> Record:
    """The domain-layer record of an event: one slot per event id, so a later version replaces it.

    The record's title is ``[<type>] <sector> @ <instance>: <first line of the text>`` (`` @ <instance>``
    when the ``instance`` label is set: so a question naming the host finds it), its component the sector
    (so ``--component`` filters by sector), its criticality the event's, its provenance ``event:<id>`` at
    the event's time.

    Args:
        event: the current version.
        mission: its mission.
        earlier: the versions it replaces, oldest first (:func:`event_version` of each; ADR 0078):
            kept in the attribute ``earlier_versions``, with ``version_id``, the id the record would
            have without them (an identical re-send compares equal to it and changes nothing).
        omitted: earlier versions left out between the first kept and the rest (attribute
            ``earlier_versions_omitted``).
    """
    plain = _event_record(event, mission)
    if not earlier:
        return plain
    history: dict[str, Any] = {"earlier_versions": [dict(v) for v in earlier], "version_id": plain.id}
    if omitted:
        history["earlier_versions_omitted"] = omitted
    return _event_record(event, mission, history)


def version_id(record: Record) -> str:
    """The id of ``record``'s current version alone (its id when it keeps no earlier version)."""
    return str(record.attributes.get("version_id") or record.id)


def _event_record(event: DomainEvent, mission: str, history: Mapping[str, Any] | None = None) -> Record:
    first_line = event.text.splitlines()[0][:EVENT_TITLE_HEAD_CHARS]
    # where exactly it fires is part of what it is: searched (BM25 reads the title) and shown in the heading
    instance = " ".join(dict(event.labels).get("instance", "").split())[:120]
    return Record.build(
        kind=RecordKind.DOMAIN_EVENT,
        title=f"[{event.type}] {event.sector}{' @ ' + instance if instance else ''}: {first_line}",
        text=event.text,
        provenance=Provenance(
            kind=SourceKind.EVENT,
            ref=f"event:{event.id}",
            uri=f"urn:mission-memory:{mission}:event:{event.id}",
            mission=mission,
            time=event.time,
        ),
        # A resolved event leaves the critical set: triage, the most-critical read and the timeline
        # see 0; the source's criticality is kept beside it (docs/adr/0057).
        criticality=0.0 if event.state is EventState.RESOLVED else event.criticality,
        component=event.sector,
        operator=event.operator,
        attributes={
            "event_id": event.id,
            "sector": event.sector,
            "event_type": event.type,
            "source": event.source,
            "caused_by": list(event.caused_by),
            "unit": event.unit,
            "state": event.state.value,
            "source_criticality": event.criticality,
            "kind_key": kind_key(event.type, event.sector, event.text, event.fingerprint),
            **({"fingerprint": event.fingerprint} if event.fingerprint else {}),
            **({"labels": dict(event.labels)} if event.labels else {}),
            **({"runbook_url": event.runbook_url} if event.runbook_url else {}),
            **({"generator_url": event.generator_url} if event.generator_url else {}),
            **({"ends_at": event.ends_at.isoformat()} if event.ends_at else {}),
            **(history or {}),
        },
        slot=f"event:{event.id}",
    )


_READ_EVENTS: OrderedDict[tuple[str, datetime, str | None], DomainEvent] = OrderedDict()
_READ_EVENTS_LOCK = threading.Lock()
READ_EVENTS_KEPT = 10_000
"""Events read back from records kept in memory, least recently used dropped first (1–2 KB each: five
missions' crisis timelines of 2,000 events fit)."""


def event_from_record(record: Record) -> DomainEvent:
    """The event a domain-event record was made from (the inverse of :func:`event_record`).

    A degraded pull reads the same flood's events again at every question (triage's groups, the crisis
    timeline, docs/adr/0057), and validating them costs about 0.1 ms each. A record's id is derived
    from its content (its text, attributes, criticality and sector, :func:`~mission_memory.records.record_id_for`),
    so the event made from it is kept, keyed by the id and the two fields outside it (the time and the
    operator), and read again from memory: at most :data:`READ_EVENTS_KEPT`, least recently used dropped.
    The events are frozen, so sharing one between callers is safe.

    Args:
        record: a record of kind ``domain_event``.

    Raises:
        InputError: ``record`` is of another kind, or its stored attributes no longer make a valid event.
    """
    if record.kind is not RecordKind.DOMAIN_EVENT:
        raise InputError(f"record {record.id} is a {record.kind.value}, not a domain event")
    key = (record.id, record.provenance.time, record.operator)
    with _READ_EVENTS_LOCK:
        known = _READ_EVENTS.get(key)
        if known is not None:
            _READ_EVENTS.move_to_end(key)
            return known
    event = _validated_event(record)
    with _READ_EVENTS_LOCK:
        _READ_EVENTS[key] = event
        while len(_READ_EVENTS) > READ_EVENTS_KEPT:
            _READ_EVENTS.popitem(last=False)
    return event


def _validated_event(record: Record) -> DomainEvent:
    a = record.attributes
    try:
        return DomainEvent.model_validate(dict(
            id=str(a.get("event_id") or record.provenance.ref.removeprefix("event:")),
            time=record.provenance.time,
            sector=str(a.get("sector") or record.component or "unknown"),
            type=str(a.get("event_type") or "event"),
            criticality=float(a["source_criticality"]) if isinstance(a.get("source_criticality"), (int, float))
            else record.criticality,
            source=str(a.get("source") or "unknown"),
            text=record.text,
            caused_by=tuple(str(c) for c in a.get("caused_by") or ()),
            unit=a.get("unit"),
            operator=record.operator,
            state=EventState(a.get("state") or EventState.FIRING.value),
            fingerprint=a.get("fingerprint") or None,
            labels=a.get("labels") or (),
            runbook_url=a.get("runbook_url") or None,
            generator_url=a.get("generator_url") or None,
            ends_at=a.get("ends_at") or None,
        ), context={"stored": True})
    except (ValidationError, ValueError) as exc:
        raise InputError(f"record {record.id}: stored event attributes are not a valid event ({exc})") from None


def validation_problems(exc: ValidationError) -> str:
    """A validation error as ``field: message`` pairs, without pydantic's help links."""
    parts = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"]) or "event"
        message = err["msg"]
        if err["type"] == "missing":
            message = "is missing"
        elif err["type"] == "extra_forbidden":
            message = "is not a known field (known: " + ", ".join(DomainEvent.model_fields) + ")"
        parts.append(f"{field} {message}" if err["type"] in ("missing", "extra_forbidden") else f"{field}: {message}")
    return "; ".join(parts)


def batch_too_large(source: str, size: int | None) -> InputError:
    """The error for a batch above :data:`MAX_EVENT_BATCH_BYTES`: ``size`` is its real size in bytes
    (a file's, from its stat), or None for a stream read no further than one byte past the limit,
    whose size is not known (it says "more than")."""
    if size is None:
        return InputError(f"{source}: more than {MAX_EVENT_BATCH_BYTES:,} bytes (the most accepted in one batch); "
                          "split it into smaller batches")
    return InputError(f"{source}: {size:,} bytes is larger than the {MAX_EVENT_BATCH_BYTES:,} bytes accepted in "
                      "one batch; split it into smaller files")


def _check_size(data: str | bytes, source: str) -> str:
    size = len(data.encode("utf-8")) if isinstance(data, str) else len(data)
    if size > MAX_EVENT_BATCH_BYTES:
        raise batch_too_large(source, size)
    if isinstance(data, bytes):
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{source}: not UTF-8 text ({exc})") from None
    return data


def no_events(source: str) -> InputError:
    """The error for a batch holding no event (an empty file or body, blank lines, ``[]``, a CSV header
    alone): ``feed`` and ``POST /events`` refuse it alike instead of answering "received 0".

    Args:
        source: the batch's name in the message (a path, ``<stdin>``, ``request body``).
    """
    return InputError(f"{source} holds no events (give JSON Lines, a JSON array or CSV with at least one event)")


def read_events_jsonl(data: str | bytes, source: str = "<stdin>") -> list[DomainEvent]:
    """Events from JSON Lines (one JSON object per line; blank lines are skipped), or from one JSON
    array of event objects when the content starts with ``[``.

    Args:
        data: the file's content.
        source: the name used in error messages (a path, ``<stdin>``).

    Raises:
        InputError: too large, not UTF-8, a line that is not a JSON object (or nests deeper than
            :data:`MAX_JSON_DEPTH`), or an invalid event; the message names the source, the line
            (the item of an array) and every bad field.
    """
    text = _check_size(data, source)
    if text.lstrip().startswith("["):
        return _events_of_array(load_json(text, source), source)
    events = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{source} line {number}: not valid JSON ({exc.msg}; column {exc.colno})") from None
        except (RecursionError, ValueError):
            raw = load_json(line, f"{source} line {number}")  # raises the clear error
        if _deeper_than(raw, MAX_JSON_DEPTH):
            raise InputError(f"{source} line {number} nests JSON deeper than {MAX_JSON_DEPTH} levels")
        events.append(_event_of(raw, f"{source} line {number}"))
    return events


def _events_of_array(raw: Any, source: str) -> list[DomainEvent]:
    if not isinstance(raw, list):
        raise InputError(f"{source}: expected a JSON array of event objects, got {type(raw).__name__}")
    return [_event_of(item, f"{source} item {number}") for number, item in enumerate(raw, start=1)]


def _event_of(item: Any, where: str, expected: str = "a JSON object") -> DomainEvent:
    """One decoded object validated as an event, or an error naming ``where`` and every bad field."""
    if not isinstance(item, Mapping):
        raise InputError(f"{where}: expected {expected}, got {type(item).__name__}")
    try:
        return DomainEvent.model_validate(dict(item))
    except ValidationError as exc:
        raise InputError(f"{where}: {validation_problems(exc)}") from None


def check_event_times(events: Sequence[DomainEvent], clock: datetime, max_future_skew: timedelta,
                      source: str = "events") -> None:
    """Refuse events dated more than ``max_future_skew`` after ``clock`` (docs/adr/0058).

    Raises:
        InputError: naming the first such event's index and id, its time and the clock.
    """
    limit = clock + max_future_skew
    for index, event in enumerate(events):
        for name, moment in (("time", event.time), ("ends_at", event.ends_at)):
            if moment is None or moment <= limit:
                continue
            raise InputError(
                f"{source}[{index}] (id {event.id!r}): {name} {moment.isoformat()} is more than "
                f"{max_future_skew.total_seconds():g} s after the clock {clock.isoformat()}; a sender's clock or a "
                "wrong year? (setting MISSION_MEMORY_EVENT_MAX_FUTURE_SKEW_S)"
            )


def events_from_objects(items: Sequence[Any], source: str = "events") -> list[DomainEvent]:
    """Events from already-decoded objects (mappings or :class:`DomainEvent`), all validated first.

    Args:
        items: mappings of :class:`DomainEvent` fields, or events.
        source: the name used in error messages.

    Raises:
        InputError: an item that is not an object or not a valid event; the message names the
            item's index and every bad field.
    """
    return [item if isinstance(item, DomainEvent) else _event_of(item, f"{source}[{index}]", "an object")
            for index, item in enumerate(items)]


def read_events_csv(data: str | bytes, source: str = "<stdin>") -> list[DomainEvent]:
    """Events from CSV with a header row naming :class:`DomainEvent` fields.

    ``caused_by`` holds ids separated by ``;`` or ``|``; empty cells of optional fields are absent.

    Raises:
        InputError: too large, not UTF-8, no header, an unknown column, or an invalid row; the
            message names the source, the line and every bad field.
    """
    text = _check_size(data, source)
    # strict: an unterminated quote is an error, not a cell that swallows the rest of the file.
    reader = csv.DictReader(io.StringIO(text), strict=True)
    try:
        return _csv_events(reader, source)
    except csv.Error as exc:
        raise InputError(f"{source} line {reader.line_num + 1}: not valid CSV ({exc}; a quoted cell is never closed?)") from None


def _csv_events(reader: csv.DictReader[str], source: str) -> list[DomainEvent]:
    if not reader.fieldnames:
        raise InputError(f"{source}: empty CSV (a header row naming the fields is needed)")
    unknown = [name for name in reader.fieldnames if name not in DomainEvent.model_fields]
    if unknown:
        raise InputError(
            f"{source} line 1: unknown column {unknown[0]!r} (known: {', '.join(DomainEvent.model_fields)})"
        )
    events = []
    for row in reader:
        clean: dict[str, Any] = {k: v for k, v in row.items() if k is not None and v not in (None, "")}
        if None in row:
            raise InputError(f"{source} line {reader.line_num}: more cells than header columns")
        if "caused_by" in clean:
            clean["caused_by"] = [p.strip() for p in clean["caused_by"].replace("|", ";").split(";") if p.strip()]
        if "criticality" in clean:
            try:
                clean["criticality"] = float(clean["criticality"])
            except ValueError:
                raise InputError(f"{source} line {reader.line_num}: criticality {clean['criticality']!r} "
                                 "is not a number in [0, 1]") from None
        try:
            events.append(DomainEvent.model_validate(clean))
        except ValidationError as exc:
            raise InputError(f"{source} line {reader.line_num}: {validation_problems(exc)}") from None
    return events
