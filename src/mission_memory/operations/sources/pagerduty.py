"""PagerDuty v3 webhooks: ``POST /alerts/pagerduty``, signed with ``X-PagerDuty-Signature``.

PagerDuty (developer.pagerduty.com, "Webhooks v3 Overview") posts one ``{"event": {...}}`` per
request, ``event.event_type`` such as ``incident.triggered``, ``incident.acknowledged``,
``incident.escalated``, ``incident.priority_updated``, ``incident.resolved``; for ``incident.*`` types
``event.data`` is the incident (``id``, ``status``, ``incident_key``, ``created_at``, ``title``,
``service.summary``, ``urgency``, ``priority.summary``, ``html_url``). One incident is one event
(id ``pagerduty:<incident id>``): each notification replaces the stored one, ``incident.resolved``
resolves it. Other event types (``service.updated``, notes, responders) carry no incident state and
are accepted without storing anything. Criticality: priority ``P1``…``P5``
(:data:`~mission_memory.operations.sources.PRIORITY_CRITICALITY`), else urgency ``high`` 0.9 / ``low`` 0.5.

Authenticity (developer.pagerduty.com, "Verifying Signatures"): each request carries
``X-PagerDuty-Signature``, one or more ``v1=<hex>`` separated by commas (several while a secret is
rotated), each the HMAC-SHA256 of the raw body keyed with a subscription's secret. With signing
secrets configured for this source (``MISSION_MEMORY_RECEIVER_AUTH``), a request none of whose
signatures matches one of them is refused (:func:`signature_problem`).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
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
    from mission_memory.config import ReceiverAuth, Settings

__all__ = ["SIGNATURE_HEADER", "SOURCE", "events_from_pagerduty", "signature_problem"]

SIGNATURE_HEADER = "x-pagerduty-signature"
"""The header PagerDuty signs its v3 webhooks in (lower case, as Starlette gives headers)."""

_URGENCY = {"high": 0.9, "low": 0.5}


def events_from_pagerduty(payload: Any, source: str = "pagerduty webhook",
                          sector_labels: Sequence[str] = ("service",)) -> list[DomainEvent]:
    """The event of one PagerDuty v3 webhook payload (none for event types without incident state).

    The sector is the first present of ``sector_labels`` among the incident's ``service``,
    ``escalation_policy`` and ``team`` (its first team), by their summaries; else ``unknown``.

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
            sector=first_label(_sector_labels(data), sector_labels),
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


def _sector_labels(incident: Mapping[str, Any]) -> dict[str, str]:
    def summary(value: Any) -> str:
        return one_line(value.get("summary")) if isinstance(value, dict) else ""

    teams = incident.get("teams")
    return {"service": summary(incident.get("service")), "escalation_policy": summary(incident.get("escalation_policy")),
            "team": summary(teams[0]) if isinstance(teams, list) and teams else ""}


def signature_problem(headers: Mapping[str, str], body: bytes, auth: ReceiverAuth) -> str | None:
    """Why a request is not signed by one of ``auth.signing_secrets``, or None when it is.

    Every ``v1=`` signature of the header is compared (in constant time) with the HMAC-SHA256 of the raw
    body under every configured secret; one match is enough. Signatures of other versions are ignored.
    The message never repeats a signature or a secret.
    """
    sent = [part.strip()[3:] for part in headers.get(SIGNATURE_HEADER, "").split(",") if part.strip().startswith("v1=")]
    if not sent:
        return f"the request carries no v1 signature in {SIGNATURE_HEADER}"
    for secret in auth.signing_secrets:
        expected = hmac.new(secret.get_secret_value().encode("utf-8"), body, hashlib.sha256).hexdigest()
        if any(hmac.compare_digest(expected.encode("ascii"), s.lower().encode("utf-8")) for s in sent):
            return None
    return f"no signature in {SIGNATURE_HEADER} matches a configured signing secret"


def _parse(body: bytes, settings: Settings) -> list[DomainEvent]:
    return events_from_pagerduty(body_json(body, SOURCE.label), SOURCE.label, sector_labels(settings, SOURCE))


SOURCE = Source(name="pagerduty", record_noun="PagerDuty incident", path="/alerts/pagerduty", parse=_parse, verify=signature_problem,
                sector_labels=("service", "team", "escalation_policy"), title="pagerduty webhook")
"""PagerDuty's v3 webhook subscriptions."""
