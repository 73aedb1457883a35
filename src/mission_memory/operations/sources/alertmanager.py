"""Prometheus Alertmanager webhooks: ``POST /alerts/alertmanager`` (``webhook_configs``, payload version 4).

Each alert of a payload becomes one event (:func:`events_from_alertmanager`), mapped by the setting
``MISSION_MEMORY_ALERTMANAGER_MAPPING`` (:class:`~mission_memory.config.AlertmanagerMapping`); its
sector is the first present of the labels ``MISSION_MEMORY_SECTOR_LABELS["alertmanager"]`` names, else
of the mapping's ``sector_labels``. ``PUT`` is accepted too: senders of the same shape (Grafana's
webhook contact point) may be set to send it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from mission_memory.config import AlertmanagerMapping
from mission_memory.errors import InputError
from mission_memory.operations.domain_events import (
    MAX_EVENT_TEXT_CHARS,
    DomainEvent,
    EventState,
    validation_problems,
)
from mission_memory.operations.sources import Source, body_json, one_line

if TYPE_CHECKING:
    from mission_memory.config import Settings

__all__ = ["SOURCE", "alertmanager_fingerprint", "events_from_alertmanager", "suppression"]

_ALERT_TIME_ZERO = "0001-01-01T00:00:00Z"

AlertExtras = Callable[[Mapping[str, Any]], Mapping[str, str]]
"""More labels read from one alert object (a sender's own fields: Grafana's dashboard and panel links)."""


def alertmanager_fingerprint(labels: Mapping[str, str]) -> str:
    """The fingerprint Alertmanager gives an alert with these labels: FNV-1a 64 over the sorted label
    names and values, each followed by the separator byte 0xff, as 16 hexadecimal digits (the
    ``labelSetToFingerprint`` of github.com/prometheus/common, ``model/signature.go``). Used for payloads
    of Alertmanager versions that do not send a ``fingerprint``."""
    digest = 0xCBF29CE484222325
    for name in sorted(labels):
        for part in (name, str(labels[name])):
            for byte in part.encode("utf-8") + b"\xff":
                digest = ((digest ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{digest:016x}"


def _object(value: Any, where: str, name: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"{where}: {name} must be an object of names to values, got {type(value).__name__}")
    return value


def suppression(status: Mapping[str, Any], where: str) -> str:
    """Why an alert of Alertmanager's API shape (``status`` an object) is suppressed, or ``""`` when it is not.

    Alertmanager's API (``GET /api/v2/alerts``, ``gettableAlert``) gives each alert ``status: {"state":
    "active" | "suppressed" | "unprocessed", "silencedBy": [silence ids], "inhibitedBy": [fingerprints]}``;
    a suppressed alert fires but notifies nobody (silenced, inhibited or muted).

    Raises:
        InputError: a state other than those three, or ids that are not a list.
    """
    state = str(status.get("state") or "active").lower()
    if state not in ("active", "suppressed", "unprocessed"):
        raise InputError(f"{where}: status.state {state!r} is none of active, suppressed, unprocessed")
    if state != "suppressed":
        return ""
    reasons = []
    for key, word in (("silencedBy", "silenced by"), ("inhibitedBy", "inhibited by")):
        ids = status.get(key) or []
        if not isinstance(ids, list):
            raise InputError(f"{where}: status.{key} must be a list of ids, got {type(ids).__name__}")
        if ids:
            reasons.append(f"{word} {', '.join(' '.join(str(i).split())[:80] for i in ids[:5])}"
                           + (f" (+{len(ids) - 5} more)" if len(ids) > 5 else ""))
    return "; ".join(reasons) or "suppressed in Alertmanager"


def events_from_alertmanager(
    payload: Any, mapping: AlertmanagerMapping | None = None, source: str = "alertmanager webhook", *,
    sector_labels: Sequence[str] | None = None, sender: str = "alertmanager", extras: AlertExtras | None = None,
) -> list[DomainEvent]:
    """Events from one Alertmanager webhook payload (``version`` 4, as ``webhook_configs`` posts it).

    Each alert becomes one event: ``alertname`` -> type, the first present of ``sector_labels``
    (default the mapping's: ``service``, then ``namespace`` …) -> sector, ``severity`` -> criticality,
    ``fingerprint`` (or, from versions that send none, :func:`alertmanager_fingerprint` of the labels)
    and the start time -> id (so a resolved notification replaces its firing event, and a later re-fire
    is a new event), ``status`` -> state. The time is ``startsAt`` in both states, so an all-clear adds
    nothing to the event rate; ``endsAt`` of a resolved alert -> ``ends_at``. The labels of
    ``kept_labels`` (instance, cluster, region …), the
    ``runbook_url`` annotation (or label) and ``generatorURL`` are kept. An alert in the API's shape
    (``status`` an object, ``state`` ``suppressed``) fires with the label ``suppressed`` saying why
    (:func:`suppression`): it is shown as silenced and not counted as firing.

    Args:
        payload: the decoded body.
        mapping: severity, text and kept labels (default :class:`~mission_memory.config.AlertmanagerMapping`).
        source: the name used in error messages.
        sector_labels: the labels tried for the sector (default ``mapping.sector_labels``).
        sender: the event's ``source`` prefix (``alertmanager/<receiver>``).
        extras: more labels read from each alert object (a sender's own fields).

    Raises:
        InputError: not an object with an ``alerts`` list, or an alert lacking what an event needs or
            with labels or annotations that are not objects; the message names the alert's index and the field.
    """
    mapping = mapping or AlertmanagerMapping()
    order = tuple(sector_labels) if sector_labels is not None else tuple(mapping.sector_labels)
    if not isinstance(payload, dict) or not isinstance(payload.get("alerts"), list):
        raise InputError(f"{source}: expected an Alertmanager webhook object with an 'alerts' list")
    common = _object(payload.get("commonLabels"), source, "commonLabels")
    common_annotations = _object(payload.get("commonAnnotations"), source, "commonAnnotations")
    receiver = str(payload.get("receiver") or "")
    events = []
    for index, alert in enumerate(payload["alerts"]):
        where = f"{source} alerts[{index}]"
        if not isinstance(alert, dict):
            raise InputError(f"{where}: expected an object")
        own = _object(alert.get("labels"), where, "labels")
        labels = {**common, **own}
        annotations = {**common_annotations, **_object(alert.get("annotations"), where, "annotations")}
        name = labels.get("alertname")
        starts = alert.get("startsAt")
        if not name:
            raise InputError(f"{where}: labels.alertname is missing")
        if not starts:
            raise InputError(f"{where}: startsAt is missing")
        fingerprint = str(alert.get("fingerprint") or "") or alertmanager_fingerprint(
            {str(k): str(v) for k, v in (own or labels).items()})
        raw_status = alert.get("status") or payload.get("status") or "firing"
        suppressed = suppression(raw_status, where) if isinstance(raw_status, dict) else ""
        status = "firing" if isinstance(raw_status, dict) else str(raw_status).lower()
        if status not in ("firing", "resolved"):
            raise InputError(f"{where}: status {status!r} is neither firing nor resolved")
        ends = alert.get("endsAt")
        ended = ends if status == "resolved" and ends and ends != _ALERT_TIME_ZERO else None
        sector = one_line(next((labels[k] for k in order if labels.get(k)), "unknown")) or "unknown"
        severity = str(labels.get("severity") or "").lower()
        texts = [str(annotations[k]).strip() for k in mapping.text_annotations if annotations.get(k)]
        text = "\n".join(t for t in texts if t) or f"{name} on {sector}"
        if status == "resolved":
            text = f"RESOLVED: {text}"
        runbook = annotations.get("runbook_url") or labels.get("runbook_url")
        generator = alert.get("generatorURL") or payload.get("externalURL")
        kept = {k: one_line(labels[k]) for k in mapping.kept_labels if labels.get(k)}
        more = {k: v for k, v in (extras(alert) if extras else {}).items() if v}
        try:
            events.append(
                DomainEvent(
                    id=f"{fingerprint}@{starts}",
                    time=starts,
                    sector=sector,
                    type=one_line(name),
                    criticality=mapping.severity_criticality.get(severity, mapping.default_criticality),
                    source=f"{sender}/{receiver}" if receiver else sender,
                    text=text[:MAX_EVENT_TEXT_CHARS],
                    state=EventState(status),
                    fingerprint=fingerprint,
                    labels=tuple(sorted({**kept, **more, **({"suppressed": suppressed} if suppressed else {})}.items())),
                    runbook_url=str(runbook) if runbook else None,
                    generator_url=str(generator) if generator else None,
                    ends_at=ended,
                )
            )
        except ValidationError as exc:
            raise InputError(f"{where}: {validation_problems(exc)}") from None
    return events


def _parse(body: bytes, settings: Settings) -> list[DomainEvent]:
    configured = settings.sector_labels.get(SOURCE.name)  # else the mapping's sector_labels
    return events_from_alertmanager(body_json(body, SOURCE.label), settings.alertmanager_mapping, SOURCE.label,
                                    sector_labels=configured)


SOURCE = Source(
    name="alertmanager", path="/alerts/alertmanager", parse=_parse, methods=("POST", "PUT"),
    sector_labels=tuple(AlertmanagerMapping().sector_labels), title="alertmanager webhook",
)
"""Prometheus Alertmanager's ``webhook_configs`` (its sector labels default to the mapping's)."""
