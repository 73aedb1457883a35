"""PagerDuty v3 webhooks: ``POST /alerts/pagerduty``.

PagerDuty (developer.pagerduty.com, "Webhooks v3 Overview") posts one ``{"event": {...}}`` per
request, ``event.event_type`` such as ``incident.triggered``, ``incident.acknowledged``,
``incident.escalated``, ``incident.priority_updated``, ``incident.resolved``; for ``incident.*`` types
``event.data`` is the incident (``id``, ``status``, ``incident_key``, ``created_at``, ``title``,
``service.summary``, ``urgency``, ``priority.summary``, ``html_url``). One incident is one event
(id ``pagerduty:<incident id>``): each notification replaces the stored one, ``incident.resolved``
resolves it. Other event types (``service.updated``, notes, responders) carry no incident state and
are accepted without storing anything. Criticality: priority ``P1``…``P5``
(:data:`~mission_memory.operations.sources.PRIORITY_CRITICALITY`), else urgency ``high`` 0.9 / ``low`` 0.5.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from mission_memory.errors import InputError
from mission_memory.operations.domain_events import (
    MAX_EVENT_TEXT_CHARS,
    DomainEvent,
    EventState,
    validation_problems,
)
from mission_memory.operations.sources import PRIORITY_CRITICALITY, Source, body_json, one_line

if TYPE_CHECKING:
    from mission_memory.config import Settings

__all__ = ["SOURCE", "events_from_pagerduty"]

_URGENCY = {"high": 0.9, "low": 0.5}


def events_from_pagerduty(payload: Any, source: str = "pagerduty webhook") -> list[DomainEvent]:
    """The event of one PagerDuty v3 webhook payload (none for event types without incident state).

    Raises:
        InputError: not ``{"event": {...}}``, or an incident event lacking its id, status or creation
            time; the message names the field.
    """
    if not isinstance(payload, dict) or not isinstance(payload.get("event"), dict):
        raise InputError(f"{source}: expected a PagerDuty v3 webhook object with an 'event' object")
    event = payload["event"]
    kind = one_line(event.get("event_type"))
    if not kind:
        raise InputError(f"{source}: event.event_type is missing")
    if not kind.startswith("incident.") or event.get("resource_type", "incident") != "incident":
        return []
    data = event.get("data")
    if not isinstance(data, dict):
        raise InputError(f"{source}: event.data must be an object (the incident)")
    if data.get("type", "incident") != "incident":
        return []  # notes, responders, status updates: no incident state of their own
    incident = one_line(data.get("id"))
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
    level = one_line((priority or {}).get("summary")).lower()
    criticality = PRIORITY_CRITICALITY.get(level, _URGENCY.get(one_line(data.get("urgency")).lower(), 0.5))
    resolved = kind == "incident.resolved" or one_line(data.get("status")).lower() == "resolved"
    title = one_line(data.get("title")) or f"PagerDuty incident {incident}"
    status = one_line(data.get("status")) or kind.removeprefix("incident.")
    assignees = [one_line(a.get("summary")) for a in data.get("assignees") or () if isinstance(a, dict) and a.get("summary")]
    agent = event.get("agent") if isinstance(event.get("agent"), dict) else {}
    acknowledgers = [one_line((a.get("acknowledger") or {}).get("summary")) for a in data.get("acknowledgements") or ()
                     if isinstance(a, dict) and isinstance(a.get("acknowledger"), dict)]
    if kind == "incident.acknowledged" and agent.get("type") == "user_reference" and agent.get("summary"):
        acknowledgers.append(one_line(agent["summary"]))
    labels = {"title": title[:500], "status": status, "incident": one_line(data.get("number")) or incident,
              "assignees": ", ".join(dict.fromkeys(assignees)), "acknowledged_by": ", ".join(dict.fromkeys(acknowledgers))}
    text = f"{'RESOLVED: ' if resolved else ''}{title} (PagerDuty {status}" + (f", {level.upper()}" if level else "") + ")"
    try:
        return [DomainEvent(
            id=f"pagerduty:{incident}",
            time=created,
            sector=one_line((service or {}).get("summary")) or "unknown",
            type="PagerDutyIncident",
            criticality=criticality,
            source="pagerduty",
            text=text[:MAX_EVENT_TEXT_CHARS],
            state=EventState.RESOLVED if resolved else EventState.FIRING,
            fingerprint=one_line(data.get("incident_key")) or f"pagerduty:{incident}",
            labels=tuple((k, v) for k, v in sorted(labels.items()) if v),
            generator_url=one_line(data.get("html_url")) or None,
            ends_at=event.get("occurred_at") if resolved else None,
        )]
    except ValidationError as exc:
        raise InputError(f"{source}: {validation_problems(exc)}") from None


def _parse(body: bytes, settings: Settings) -> list[DomainEvent]:
    return events_from_pagerduty(body_json(body, SOURCE.label), SOURCE.label)


SOURCE = Source(name="pagerduty", path="/alerts/pagerduty", parse=_parse,
                sector_labels=("service",), title="pagerduty webhook")
"""PagerDuty's v3 webhook subscriptions."""
