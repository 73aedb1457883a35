"""Events from the webhooks of incident-management services: PagerDuty (v3 webhooks) and Opsgenie.

Alertmanager and Grafana post Prometheus-style alerts (:func:`~mission_memory.operations.domain_events.events_from_alertmanager`);
on-call teams often route them through PagerDuty or Opsgenie, which post their own shapes:

* **PagerDuty v3** (developer.pagerduty.com, "Webhooks v3 Overview"): one ``{"event": {...}}`` per
  request, ``event.event_type`` such as ``incident.triggered``, ``incident.acknowledged``,
  ``incident.escalated``, ``incident.priority_updated``, ``incident.resolved``; for ``incident.*`` types
  ``event.data`` is the incident (``id``, ``status``, ``incident_key``, ``created_at``, ``title``,
  ``service.summary``, ``urgency``, ``priority.summary``, ``html_url``). One incident is one event
  (id ``pagerduty:<incident id>``): each notification replaces the stored one, ``incident.resolved``
  resolves it. Other event types (``service.updated``, notes, responders) carry no incident state and
  are accepted without storing anything.
* **Opsgenie** (docs.opsgenie.com, "Webhook Integration", alert action data): ``{"action": "Create" |
  "Close" | "Acknowledge" | …, "alert": {"alertId", "message", "alias", "entity", "tags", "createdAt"
  (ms), "priority", "description", "details"}, "source": {...}, "integrationName"}``. One alert is one
  event (id ``opsgenie:<alertId>``), fingerprint its ``alias`` (Opsgenie's de-duplication key);
  ``Close`` and ``Delete`` resolve it.

Criticality: PagerDuty priority ``P1``…``P5`` (else urgency ``high`` 0.9 / ``low`` 0.5), Opsgenie
priority ``P1``…``P5``, by :data:`PRIORITY_CRITICALITY`. Everything the services send is untrusted text,
stored as data and fenced when shown. Errors name the field: :class:`~mission_memory.errors.InputError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from mission_memory.errors import InputError
from mission_memory.operations.domain_events import MAX_EVENT_TEXT_CHARS, DomainEvent, EventState

__all__ = ["PRIORITY_CRITICALITY", "events_from_opsgenie", "events_from_pagerduty"]

PRIORITY_CRITICALITY: Mapping[str, float] = {"p1": 0.95, "p2": 0.9, "p3": 0.7, "p4": 0.5, "p5": 0.3}
"""Incident priority -> criticality: P1 and P2 are pages an on-call engineer must not miss (≥ 0.8)."""

_URGENCY = {"high": 0.9, "low": 0.5}


def _text(value: Any) -> str:
    return " ".join(str(value).split()) if value is not None else ""


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'event'}: {e['msg']}" for e in exc.errors())


def events_from_pagerduty(payload: Any, source: str = "pagerduty webhook") -> list[DomainEvent]:
    """The event of one PagerDuty v3 webhook payload (none for event types without incident state).

    Raises:
        InputError: not ``{"event": {...}}``, or an incident event lacking its id, status or creation
            time; the message names the field.
    """
    if not isinstance(payload, dict) or not isinstance(payload.get("event"), dict):
        raise InputError(f"{source}: expected a PagerDuty v3 webhook object with an 'event' object")
    event = payload["event"]
    kind = _text(event.get("event_type"))
    if not kind:
        raise InputError(f"{source}: event.event_type is missing")
    if not kind.startswith("incident.") or event.get("resource_type", "incident") != "incident":
        return []
    data = event.get("data")
    if not isinstance(data, dict):
        raise InputError(f"{source}: event.data must be an object (the incident)")
    if data.get("type", "incident") != "incident":
        return []  # notes, responders, status updates: no incident state of their own
    incident = _text(data.get("id"))
    created = data.get("created_at")
    if not incident:
        raise InputError(f"{source}: event.data.id is missing")
    if not created:
        raise InputError(f"{source}: event.data.created_at is missing")
    service = data.get("service")
    priority = data.get("priority")
    if service is not None and not isinstance(service, dict):
        raise InputError(f"{source}: event.data.service must be an object")
    if priority is not None and not isinstance(priority, dict):
        raise InputError(f"{source}: event.data.priority must be an object")
    level = _text((priority or {}).get("summary")).lower()
    criticality = PRIORITY_CRITICALITY.get(level, _URGENCY.get(_text(data.get("urgency")).lower(), 0.5))
    resolved = kind == "incident.resolved" or _text(data.get("status")).lower() == "resolved"
    title = _text(data.get("title")) or f"PagerDuty incident {incident}"
    status = _text(data.get("status")) or kind.removeprefix("incident.")
    assignees = [_text(a.get("summary")) for a in data.get("assignees") or () if isinstance(a, dict) and a.get("summary")]
    agent = event.get("agent") if isinstance(event.get("agent"), dict) else {}
    acknowledgers = [_text((a.get("acknowledger") or {}).get("summary")) for a in data.get("acknowledgements") or ()
                     if isinstance(a, dict) and isinstance(a.get("acknowledger"), dict)]
    if kind == "incident.acknowledged" and agent.get("type") == "user_reference" and agent.get("summary"):
        acknowledgers.append(_text(agent["summary"]))
    labels = {"title": title[:500], "status": status, "incident": _text(data.get("number")) or incident,
              "assignees": ", ".join(dict.fromkeys(assignees)), "acknowledged_by": ", ".join(dict.fromkeys(acknowledgers))}
    text = f"{'RESOLVED: ' if resolved else ''}{title} (PagerDuty {status}" + (f", {level.upper()}" if level else "") + ")"
    try:
        return [DomainEvent(
            id=f"pagerduty:{incident}",
            time=created,
            sector=_text((service or {}).get("summary")) or "unknown",
            type="PagerDutyIncident",
            criticality=criticality,
            source="pagerduty",
            text=text[:MAX_EVENT_TEXT_CHARS],
            state=EventState.RESOLVED if resolved else EventState.FIRING,
            fingerprint=_text(data.get("incident_key")) or f"pagerduty:{incident}",
            labels=tuple((k, v) for k, v in sorted(labels.items()) if v),
            generator_url=_text(data.get("html_url")) or None,
            ends_at=event.get("occurred_at") if resolved else None,
        )]
    except ValidationError as exc:
        raise InputError(f"{source}: {_problems(exc)}") from None


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


def events_from_opsgenie(payload: Any, source: str = "opsgenie webhook") -> list[DomainEvent]:
    """The event of one Opsgenie webhook payload (alert action data).

    Raises:
        InputError: not ``{"action": …, "alert": {...}}``, or an alert without ``alertId``, ``message``
            or ``createdAt``, or with tags or details of the wrong shape; the message names the field.
    """
    if not isinstance(payload, dict) or not isinstance(payload.get("alert"), dict):
        raise InputError(f"{source}: expected an Opsgenie webhook object with an 'alert' object")
    action = _text(payload.get("action"))
    if not action:
        raise InputError(f"{source}: action is missing")
    alert = payload["alert"]
    alert_id = _text(alert.get("alertId"))
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
    level = _text(alert.get("priority")).lower()
    description = str(alert.get("description") or "").strip()
    text = ("RESOLVED: " if closing else "") + message + (f"\n{description}" if description else "")
    runbook = details.get("runbook_url") or details.get("runbook")
    ended = _epoch(alert["updatedAt"], f"{source}: alert.updatedAt") if closing and "updatedAt" in alert else None
    try:
        return [DomainEvent(
            id=f"opsgenie:{alert_id}",
            time=created,
            sector=_text(alert.get("entity")) or (_text(tags[0]) if tags else "") or "unknown",
            type=_text(details.get("alertname")) or "OpsgenieAlert",
            criticality=PRIORITY_CRITICALITY.get(level, 0.5),
            source=f"opsgenie/{_text(payload.get('integrationName'))}" if payload.get("integrationName") else "opsgenie",
            text=text[:MAX_EVENT_TEXT_CHARS],
            state=EventState.RESOLVED if closing else EventState.FIRING,
            fingerprint=_text(alert.get("alias")) or f"opsgenie:{alert_id}",
            labels=tuple(sorted({
                **{str(k): _text(v) for k, v in details.items()
                   if k in ("instance", "cluster", "region", "service", "env") and _text(v)},
                "title": _text(message.splitlines()[0])[:500],
                **({"status": "acknowledged", "acknowledged_by": _text(alert.get("username"))}
                   if action.lower() == "acknowledge" and _text(alert.get("username")) else {}),
                **({"assignees": _text(alert.get("owner"))} if _text(alert.get("owner")) else {}),
            }.items())),
            runbook_url=_text(runbook) or None,
            ends_at=ended,
        )]
    except ValidationError as exc:
        raise InputError(f"{source}: {_problems(exc)}") from None
