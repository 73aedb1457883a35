"""Domain events: what operations missions stream into the domain layer (docs/design.md §3, §7).

An event is something that happened in a sector (or a service) at a time, with a type and a
criticality: shelling reported in sector North, a jamming burst, a lost link with part of a swarm, a
service's error rate above its objective. This module owns the event model, its validation and its
readers — JSON Lines and CSV files (standard input included) and Prometheus Alertmanager webhook
payloads — and the conversion of an event into a domain-layer record. Readers parse everything first
and raise one :class:`~mission_memory.errors.InputError` naming the source, the line and the field
before anything is stored, so a malformed batch stores nothing.

Event text is untrusted (it comes from sensors, people and other systems): it is stored as data and
fenced like every quoted record when a digest shows it.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from mission_memory.config import AlertmanagerMapping
from mission_memory.errors import InputError
from mission_memory.records import Provenance, Record, RecordKind, SourceKind
from mission_memory.stored_names import MAX_NAME_CHARS, name_problem
from mission_memory.utc import as_utc

__all__ = [
    "MAX_EVENT_BATCH_BYTES",
    "MAX_JSON_DEPTH",
    "AlertmanagerMapping",
    "DomainEvent",
    "EventState",
    "event_from_record",
    "event_record",
    "events_from_alertmanager",
    "events_from_objects",
    "load_json",
    "read_events_csv",
    "read_events_jsonl",
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


class EventState(StrEnum):
    """An alert's state; plain events are ``firing`` (they happened) for their whole life."""

    FIRING = "firing"
    RESOLVED = "resolved"


class DomainEvent(BaseModel):
    """One domain event.

    Attributes:
        id: stable id from the source (an Alertmanager fingerprint and start, a sensor's message id);
            the same id later replaces the stored event (a resolved alert replaces its firing one).
        time: when it happened, timezone-aware (a naive time is read as UTC).
        sector: the sector, area or service it concerns.
        type: what kind of event it is (``shelling``, ``ew_jamming``, ``HighErrorRate``).
        criticality: in [0, 1]; the triage weight in degraded mode (docs/design.md §7).
        source: who or what reported it (a post, a sensor, ``alertmanager``).
        text: the report in natural language, English or Ukrainian.
        caused_by: ids of the events that caused this one (cascades).
        unit: the unit involved, if any.
        operator: the operator who recorded it, if any.
        state: ``firing`` or ``resolved``.

    ``id``, ``sector``, ``type``, ``unit``, ``operator`` and the ids of ``caused_by`` obey the name
    rule (:mod:`mission_memory.stored_names`): one line of printable text, at most 200 characters.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    time: datetime
    sector: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    type: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    criticality: float = Field(ge=0.0, le=1.0)
    source: str = Field(default="unknown", min_length=1, max_length=500)
    text: str = Field(min_length=1, max_length=MAX_EVENT_TEXT_CHARS)
    caused_by: tuple[str, ...] = ()
    unit: str | None = None
    operator: str | None = None
    state: EventState = EventState.FIRING

    @field_validator("time")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return as_utc(value)

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


def event_record(event: DomainEvent, mission: str) -> Record:
    """The domain-layer record of an event: one slot per event id, so an update replaces it.

    The record's component is the sector (so ``--component`` filters by sector), its criticality the
    event's, its provenance ``event:<id>`` at the event's time.
    """
    first_line = event.text.splitlines()[0][:120]
    return Record.build(
        kind=RecordKind.DOMAIN_EVENT,
        title=f"[{event.type}] {event.sector}: {first_line}",
        text=event.text,
        provenance=Provenance(
            kind=SourceKind.EVENT,
            ref=f"event:{event.id}",
            uri=f"urn:mission-memory:{mission}:event:{event.id}",
            mission=mission,
            time=event.time,
        ),
        criticality=event.criticality,
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
        },
        slot=f"event:{event.id}",
    )


def event_from_record(record: Record) -> DomainEvent:
    """The event a domain-event record was made from (the inverse of :func:`event_record`).

    Args:
        record: a record of kind ``domain_event``.

    Raises:
        InputError: ``record`` is of another kind, or its stored attributes no longer make a valid event.
    """
    if record.kind is not RecordKind.DOMAIN_EVENT:
        raise InputError(f"record {record.id} is a {record.kind.value}, not a domain event")
    a = record.attributes
    try:
        return DomainEvent.model_validate(dict(
            id=str(a.get("event_id") or record.provenance.ref.removeprefix("event:")),
            time=record.provenance.time,
            sector=str(a.get("sector") or record.component or "unknown"),
            type=str(a.get("event_type") or "event"),
            criticality=record.criticality,
            source=str(a.get("source") or "unknown"),
            text=record.text,
            caused_by=tuple(str(c) for c in a.get("caused_by") or ()),
            unit=a.get("unit"),
            operator=record.operator,
            state=EventState(a.get("state") or EventState.FIRING.value),
        ), context={"stored": True})
    except (ValidationError, ValueError) as exc:
        raise InputError(f"record {record.id}: stored event attributes are not a valid event ({exc})") from None


def _problems(exc: ValidationError) -> str:
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


def _check_size(data: str | bytes, source: str) -> str:
    size = len(data.encode("utf-8")) if isinstance(data, str) else len(data)
    if size > MAX_EVENT_BATCH_BYTES:
        raise InputError(
            f"{source}: {size:,} bytes is larger than the {MAX_EVENT_BATCH_BYTES:,} bytes accepted in one batch; "
            "split it into smaller files"
        )
    if isinstance(data, bytes):
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{source}: not UTF-8 text ({exc})") from None
    return data


def read_events_jsonl(data: str | bytes, source: str = "<stdin>") -> list[DomainEvent]:
    """Events from JSON Lines: one JSON object per line; blank lines are skipped.

    Args:
        data: the file's content.
        source: the name used in error messages (a path, ``<stdin>``).

    Raises:
        InputError: too large, not UTF-8, a line that is not a JSON object (or nests deeper than
            :data:`MAX_JSON_DEPTH`), or an invalid event; the message names the source, the line
            and every bad field.
    """
    text = _check_size(data, source)
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
        if not isinstance(raw, dict):
            raise InputError(f"{source} line {number}: expected a JSON object, got {type(raw).__name__}")
        try:
            events.append(DomainEvent.model_validate(raw))
        except ValidationError as exc:
            raise InputError(f"{source} line {number}: {_problems(exc)}") from None
    return events


def events_from_objects(items: Sequence[Any], source: str = "events") -> list[DomainEvent]:
    """Events from already-decoded objects (mappings or :class:`DomainEvent`), all validated first.

    Args:
        items: mappings of :class:`DomainEvent` fields, or events.
        source: the name used in error messages.

    Raises:
        InputError: an item that is not an object or not a valid event; the message names the
            item's index and every bad field.
    """
    events = []
    for index, item in enumerate(items):
        if isinstance(item, DomainEvent):
            events.append(item)
            continue
        if not isinstance(item, Mapping):
            raise InputError(f"{source}[{index}]: expected an object, got {type(item).__name__}")
        try:
            events.append(DomainEvent.model_validate(dict(item)))
        except ValidationError as exc:
            raise InputError(f"{source}[{index}]: {_problems(exc)}") from None
    return events


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
        try:
            events.append(DomainEvent.model_validate(clean))
        except ValidationError as exc:
            raise InputError(f"{source} line {reader.line_num}: {_problems(exc)}") from None
    return events


_ALERT_TIME_ZERO = "0001-01-01T00:00:00Z"


def events_from_alertmanager(
    payload: Any, mapping: AlertmanagerMapping | None = None, source: str = "alertmanager webhook"
) -> list[DomainEvent]:
    """Events from one Alertmanager webhook payload (``version`` 4, as ``webhook_configs`` posts it).

    Each alert becomes one event: ``alertname`` -> type, the first present of ``sector_labels``
    (``service``, then ``namespace`` …) -> sector, ``severity`` -> criticality, ``fingerprint`` and the
    start time -> id (so a resolved notification replaces its firing event, and a later re-fire is a
    new event), ``status`` -> state; the time is ``startsAt`` while firing and ``endsAt`` once resolved.

    Raises:
        InputError: not an object with an ``alerts`` list, or an alert lacking what an event needs;
            the message names the alert's index and the field.
    """
    mapping = mapping or AlertmanagerMapping()
    if not isinstance(payload, dict) or not isinstance(payload.get("alerts"), list):
        raise InputError(f"{source}: expected an Alertmanager webhook object with an 'alerts' list")
    common_raw = payload.get("commonLabels")
    common: dict[str, Any] = common_raw if isinstance(common_raw, dict) else {}
    receiver = str(payload.get("receiver") or "")
    events = []
    for index, alert in enumerate(payload["alerts"]):
        where = f"{source} alerts[{index}]"
        if not isinstance(alert, dict):
            raise InputError(f"{where}: expected an object")
        own_labels = alert.get("labels") or {}
        annotations = alert.get("annotations") or {}
        if not isinstance(own_labels, dict) or not isinstance(annotations, dict):
            raise InputError(f"{where}: labels and annotations must be objects")
        labels = {**common, **own_labels}
        name = labels.get("alertname")
        fingerprint = alert.get("fingerprint")
        starts = alert.get("startsAt")
        if not name:
            raise InputError(f"{where}: labels.alertname is missing")
        if not fingerprint:
            raise InputError(f"{where}: fingerprint is missing")
        if not starts:
            raise InputError(f"{where}: startsAt is missing")
        status = str(alert.get("status") or payload.get("status") or "firing").lower()
        if status not in ("firing", "resolved"):
            raise InputError(f"{where}: status {status!r} is neither firing nor resolved")
        ends = alert.get("endsAt")
        moment = ends if status == "resolved" and ends and ends != _ALERT_TIME_ZERO else starts
        sector = next((str(labels[k]) for k in mapping.sector_labels if labels.get(k)), "unknown")
        severity = str(labels.get("severity") or "").lower()
        texts = [str(annotations[k]).strip() for k in mapping.text_annotations if annotations.get(k)]
        text = "\n".join(t for t in texts if t) or f"{name} on {sector}"
        if status == "resolved":
            text = f"RESOLVED: {text}"
        try:
            events.append(
                DomainEvent(
                    id=f"{fingerprint}@{starts}",
                    time=moment,
                    sector=sector,
                    type=str(name),
                    criticality=mapping.severity_criticality.get(severity, mapping.default_criticality),
                    source=f"alertmanager/{receiver}" if receiver else "alertmanager",
                    text=text[:MAX_EVENT_TEXT_CHARS],
                    state=EventState(status),
                )
            )
        except ValidationError as exc:
            raise InputError(f"{where}: {_problems(exc)}") from None
    return events
