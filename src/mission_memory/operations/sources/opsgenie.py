"""Opsgenie webhooks: ``POST /alerts/opsgenie`` (the Webhook integration's alert action data).

Opsgenie (docs.opsgenie.com, "Webhook Integration", alert action data) posts ``{"action": "Create" |
"Close" | "Acknowledge" | …, "alert": {"alertId", "message", "alias", "entity", "tags", "createdAt"
(ms), "priority", "description", "details"}, "source": {...}, "integrationName"}``. One alert is one
event (id ``opsgenie:<alertId>``), fingerprint its ``alias`` (Opsgenie's de-duplication key);
``Close`` and ``Delete`` resolve it. Criticality: priority ``P1``…``P5``
(:data:`~mission_memory.operations.sources.PRIORITY_CRITICALITY`). Opsgenie signs nothing: protect the
route with HTTP basic auth (``MISSION_MEMORY_RECEIVER_AUTH``), which its webhook integration can send.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from mission_memory.errors import InputError
from mission_memory.operations.domain_events import (
    MAX_EVENT_TEXT_CHARS,
    DomainEvent,
    EventState,
    validation_problems,
)
from mission_memory.operations.sources import (
    PRIORITY_CRITICALITY,
    Source,
    body_json,
    first_label,
    one_line,
    sector_labels,
)

if TYPE_CHECKING:
    from mission_memory.config import Settings

__all__ = ["SOURCE", "events_from_opsgenie"]

_CLOSING = {"close", "delete"}


def _epoch(value: Any, where: str) -> datetime:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where} must be a number of milliseconds since 1970, got {type(value).__name__}")
    number = float(value)
    if number > 1e17:  # nanoseconds (Opsgenie's updatedAt)
        number /= 1e6
    try:
        return datetime.fromtimestamp(number / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        raise InputError(f"{where} is out of range: {value!r}") from None


def events_from_opsgenie(payload: Any, source: str = "opsgenie webhook",
                         sector_labels: Sequence[str] = ("entity", "tag")) -> list[DomainEvent]:
    """The event of one Opsgenie webhook payload (alert action data).

    The sector is the first present of ``sector_labels`` among the alert's ``details`` keys, its
    ``entity`` and its first tag (``tag``); else ``unknown``.

    Raises:
        InputError: not ``{"action": …, "alert": {...}}``, or an alert without ``alertId``, ``message``
            or ``createdAt``, or with tags or details of the wrong shape; the message names the field.
    """
    if not isinstance(payload, dict) or not isinstance(payload.get("alert"), dict):
        raise InputError(f"{source}: expected an Opsgenie webhook object with an 'alert' object")
    action = one_line(payload.get("action"))
    if not action:
        raise InputError(f"{source}: action is missing")
    alert = payload["alert"]
    alert_id = one_line(alert.get("alertId"))
    message = str(alert.get("message") or "").strip()
    if not alert_id:
        raise InputError(f"{source}: alert.alertId is missing")
    if not message:
        raise InputError(f"{source}: alert.message is missing")
    if "createdAt" not in alert:
        raise InputError(f"{source}: alert.createdAt is missing")
    created = _epoch(alert["createdAt"], f"{source}: alert.createdAt")
    tags = alert.get("tags") or []
    if not isinstance(tags, list):
        raise InputError(f"{source}: alert.tags must be a list, got {type(tags).__name__}")
    details = alert.get("details") or {}
    if not isinstance(details, dict):
        raise InputError(f"{source}: alert.details must be an object, got {type(details).__name__}")
    closing = action.lower() in _CLOSING
    level = one_line(alert.get("priority")).lower()
    description = str(alert.get("description") or "").strip()
    text = ("RESOLVED: " if closing else "") + message + (f"\n{description}" if description else "")
    runbook = details.get("runbook_url") or details.get("runbook")
    ended = _epoch(alert["updatedAt"], f"{source}: alert.updatedAt") if closing and "updatedAt" in alert else None
    try:
        return [DomainEvent(
            id=f"opsgenie:{alert_id}",
            time=created,
            sector=first_label({**{str(k): v for k, v in details.items()}, "entity": alert.get("entity"),
                                "tag": tags[0] if tags else None}, sector_labels),
            type=one_line(details.get("alertname")) or "OpsgenieAlert",
            criticality=PRIORITY_CRITICALITY.get(level, 0.5),
            source=f"opsgenie/{one_line(payload.get('integrationName'))}" if payload.get("integrationName") else "opsgenie",
            text=text[:MAX_EVENT_TEXT_CHARS],
            state=EventState.RESOLVED if closing else EventState.FIRING,
            fingerprint=one_line(alert.get("alias")) or f"opsgenie:{alert_id}",
            labels=tuple(sorted({
                **{str(k): one_line(v) for k, v in details.items()
                   if k in ("instance", "cluster", "region", "service", "env") and one_line(v)},
                "title": one_line(message.splitlines()[0])[:500],
                **({"status": "acknowledged", "acknowledged_by": one_line(alert.get("username"))}
                   if action.lower() == "acknowledge" and one_line(alert.get("username")) else {}),
                **({"assignees": one_line(alert.get("owner"))} if one_line(alert.get("owner")) else {}),
                **({"incident": one_line(alert.get("tinyId"))} if one_line(alert.get("tinyId")) else {}),
            }.items())),
            runbook_url=one_line(runbook) or None,
            ends_at=ended,
        )]
    except ValidationError as exc:
        raise InputError(f"{source}: {validation_problems(exc)}") from None


def _parse(body: bytes, settings: Settings) -> list[DomainEvent]:
    return events_from_opsgenie(body_json(body, SOURCE.label), SOURCE.label, sector_labels(settings, SOURCE))


SOURCE = Source(name="opsgenie", record_noun="Opsgenie alert", path="/alerts/opsgenie", parse=_parse, sector_labels=("entity", "tag"),
                title="opsgenie webhook")
"""Opsgenie's Webhook integration."""
