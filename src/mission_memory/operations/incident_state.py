"""The stored incident of a mission: its lifecycle, and the fields an on-call operator sets (docs/adr/0091).

An incident is what teams using PagerDuty, incident.io or FireHydrant hand over: a severity level, a
status, a start, a commander, the next update time and the contingencies. This module owns its rules;
the incident is kept in the state store under the mission's ``incident`` key (a closed one is also
kept under ``incident:<id>`` when a later one opens), beside the open alerts
(:mod:`~mission_memory.operations.alert_state`) and the escalation state
(:mod:`~mission_memory.operations.escalation_state`), on every backend.

Lifecycle:

* **Opened** by the first critical alert (criticality ≥
  :data:`~mission_memory.operations.escalation.CRITICAL_CRITICALITY`) or by a flood (the mission
  degraded), at intake (:func:`sync_incident`), or by an operator (``incident open``). It starts at the
  earliest critical alert's start, the flood's start, or when the operator opened it; status
  ``investigating``. At most one incident of a mission is open.
* **Its alerts**: every alert open while it is open is its alert; each keeps its source's id
  (``pagerduty:<incident id>``, ``opsgenie:<alert id>``), who acknowledged it and who is assigned, and
  when it resolved.
* **Severity**: :func:`~mission_memory.operations.escalation.severity_level` of the most critical of
  its open alerts, never of the event rate: held as it was while none of its alerts is open (a flood
  without alerts keeps the level of the most critical event when it opened). The peak is kept too.
* **Closed** (status ``resolved``, with the time) when none of its alerts is open any more and the
  mission is not degraded — an incident an operator opened without any alert is closed by an operator
  only — or by an operator (``incident close``). Alerts that were its own do not open a new incident
  after an operator closed it; a critical alert that is not, or a new flood, does.

Every change is one compare-and-set of the stored value
(:meth:`~mission_memory.stores.base.StateStore.replace_state`), retried on a concurrent change, so two
processes setting fields at once lose nothing either acknowledged; each operator change is kept in
the incident's log with who made it and when. Operator text (title, commander, contingencies) is
untrusted: the brief quotes it inside its fence, the CLI escapes it for the terminal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from mission_memory.errors import InputError
from mission_memory.operations.alert_state import OpenAlert, firing_only, open_alerts
from mission_memory.operations.escalation import (
    CRITICAL_CRITICALITY,
    EscalationMode,
    EscalationState,
    severity_level,
)
from mission_memory.records import Layer, Record, RecordKind
from mission_memory.stores.base import MemoryStore, SearchFilter, StateStore
from mission_memory.stores.state_change import CHANGE_DEADLINE_S, change_state
from mission_memory.utc import as_utc

__all__ = [
    "FIELDS",
    "INCIDENT_KEY",
    "INCIDENT_RECORDS_SHOWN",
    "SEVERITIES",
    "STATUSES",
    "Incident",
    "IncidentAlert",
    "IncidentChange",
    "change_incident",
    "contingency_lines",
    "describe_incident",
    "incident_head",
    "incident_open_at",
    "incident_records",
    "list_incidents",
    "load_incident",
    "next_update_line",
    "next_update_time",
    "severity_by_hand",
    "source_line",
    "sync_incident",
]

INCIDENT_KEY = "incident"
"""The state-store key (per mission) holding the mission's latest incident, open or resolved."""

STATUSES = ("investigating", "identified", "monitoring", "resolved")
"""An incident's statuses, in the order an incident moves through them (``resolved`` closes it)."""

SEVERITIES = ("elevated", "high", "critical")
"""An incident's severity levels, lowest first (:func:`~mission_memory.operations.escalation.severity_level`)."""

FIELDS = ("open", "status", "severity", "commander", "next-update", "contingency", "close")
"""What :func:`change_incident` changes (the ``incident`` CLI commands, one each)."""

_MAX_TEXT = {"open": 300, "commander": 200, "contingency": 1000, "close": 1000}
"""The longest value of each text field, in characters."""

@dataclass(frozen=True)
class IncidentAlert:
    """One alert of the incident.

    Attributes:
        fingerprint: the source's identity of the alert (:class:`~mission_memory.operations.alert_state.OpenAlert`).
        event_id: its event (``pagerduty:<incident id>``, ``opsgenie:<alert id>``, ``alertmanager:…``):
            the source's own id is kept in it.
        type, title, instance, sector: as the alert says.
        criticality: its latest criticality.
        since: when it started firing.
        acknowledged_by: who acknowledged it ("" while nobody has).
        assignees: who it is assigned to.
        resolved_at: when the incident saw it resolved (None while it is open).
        number: the source's short number of it (a PagerDuty incident's number, an Opsgenie tinyId; "" if none).
        url: the source's page of it ("" if none).
    """

    fingerprint: str
    event_id: str
    type: str
    title: str
    instance: str
    sector: str
    criticality: float
    since: datetime
    acknowledged_by: str = ""
    assignees: tuple[str, ...] = ()
    resolved_at: datetime | None = None
    number: str = ""
    url: str = ""

    @classmethod
    def of(cls, alert: OpenAlert) -> IncidentAlert:
        """The incident's copy of an open alert."""
        return cls(alert.fingerprint, alert.event_id, alert.type, alert.title, alert.instance, alert.sector,
                   alert.criticality, alert.since, alert.acknowledged_by, alert.assignees, None, alert.number, alert.url)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form; :meth:`from_json` reads it back."""
        return {"fingerprint": self.fingerprint, "event_id": self.event_id, "type": self.type, "title": self.title,
                "instance": self.instance, "sector": self.sector, "criticality": self.criticality,
                "since": self.since.isoformat(), "acknowledged_by": self.acknowledged_by,
                "assignees": list(self.assignees),
                "resolved_at": self.resolved_at.isoformat() if self.resolved_at else None,
                "number": self.number, "url": self.url}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> IncidentAlert:
        """Read :meth:`to_json`'s form (raises KeyError, ValueError or TypeError when damaged)."""
        return cls(str(data["fingerprint"]), str(data["event_id"]), str(data["type"]), str(data.get("title") or ""),
                   str(data.get("instance") or ""), str(data.get("sector") or ""), float(data["criticality"]),
                   _time(data["since"]), str(data.get("acknowledged_by") or ""),
                   tuple(str(a) for a in data.get("assignees") or ()),
                   _time(data["resolved_at"]) if data.get("resolved_at") else None,
                   str(data.get("number") or ""), str(data.get("url") or ""))


@dataclass(frozen=True)
class IncidentChange:
    """One change of the incident, as its log keeps it: when, by whom, which field, to what."""

    time: datetime
    by: str
    field: str
    value: str

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"time": self.time.isoformat(), "by": self.by, "field": self.field, "value": self.value}


@dataclass(frozen=True)
class Incident:
    """A mission's incident.

    Attributes:
        id: ``INC-<start as YYYYMMDD-HHMMSS>`` (UTC).
        mission: the mission.
        title: what it is about (the operator's title, else the opening alert's title; "" for a flood).
        opened_by: ``alert``, ``flood`` or ``operator``.
        started: when it began (timezone-aware).
        status: one of :data:`STATUSES`.
        severity: ``critical``, ``high`` or ``elevated`` (:func:`~mission_memory.operations.escalation.severity_level`).
        peak_severity: the highest severity it has had.
        commander: the incident commander ("" until set).
        next_update: when the next status update is due (None until set).
        contingencies: the "if X then Y" plans, as ``(text, by, time)``, in the order set.
        alerts: its alerts, the open ones first by criticality.
        resolved_at: when it closed (None while open).
        closed_by: why or by whom it closed ("" while open).
        log: every change, oldest first.
        source: the source's record of the alert that opened it, when its source keeps its own ids
            (:attr:`~mission_memory.operations.sources.Source.record_noun`): ``(("name", <source>), ("id",
            "Q1INC42"), ("number", "42"), ("url", …))``.
        severity_set: the level an operator set by hand ("" if none); while alerts of the incident are
            open, :attr:`severity` is the higher of it and theirs.
        severity_set_by: who set it ("" if nobody).
        severity_set_at: when (None if never).
    """

    id: str
    mission: str
    title: str
    opened_by: str
    started: datetime
    status: str = "investigating"
    severity: str = "elevated"
    peak_severity: str = "elevated"
    commander: str = ""
    next_update: datetime | None = None
    contingencies: tuple[tuple[str, str, datetime], ...] = ()
    alerts: tuple[IncidentAlert, ...] = ()
    resolved_at: datetime | None = None
    closed_by: str = ""
    log: tuple[IncidentChange, ...] = field(default=())
    source: tuple[tuple[str, str], ...] = ()
    severity_set: str = ""
    severity_set_by: str = ""
    severity_set_at: datetime | None = None

    @property
    def is_open(self) -> bool:
        """Whether it is still open (not resolved)."""
        return self.resolved_at is None

    @property
    def open_alerts(self) -> tuple[IncidentAlert, ...]:
        """Its alerts still open, most critical first."""
        return tuple(a for a in self.alerts if a.resolved_at is None)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (``incident show --json``); :func:`load_incident` reads it back."""
        return {
            "id": self.id, "mission": self.mission, "title": self.title, "opened_by": self.opened_by,
            "started": self.started.isoformat(), "status": self.status, "severity": self.severity,
            "peak_severity": self.peak_severity, "commander": self.commander,
            "next_update": self.next_update.isoformat() if self.next_update else None,
            "contingencies": [{"text": t, "by": b, "time": w.isoformat()} for t, b, w in self.contingencies],
            "alerts": [a.to_json() for a in self.alerts],
            "resolved_at": self.resolved_at.isoformat() if self.resolved_at else None,
            "closed_by": self.closed_by, "log": [c.to_json() for c in self.log],
            "source": dict(self.source) or None, "severity_set": self.severity_set,
            "severity_set_by": self.severity_set_by,
            "severity_set_at": self.severity_set_at.isoformat() if self.severity_set_at else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Incident:
        """Read :meth:`to_json`'s form (raises KeyError, ValueError or TypeError when damaged)."""
        return cls(
            id=str(data["id"]), mission=str(data["mission"]), title=str(data.get("title") or ""),
            opened_by=str(data["opened_by"]), started=_time(data["started"]), status=str(data["status"]),
            severity=str(data["severity"]), peak_severity=str(data.get("peak_severity") or data["severity"]),
            commander=str(data.get("commander") or ""),
            next_update=_time(data["next_update"]) if data.get("next_update") else None,
            contingencies=tuple((str(c["text"]), str(c.get("by") or ""), _time(c["time"]))
                                for c in data.get("contingencies") or ()),
            alerts=tuple(IncidentAlert.from_json(a) for a in data.get("alerts") or ()),
            resolved_at=_time(data["resolved_at"]) if data.get("resolved_at") else None,
            closed_by=str(data.get("closed_by") or ""),
            log=tuple(IncidentChange(_time(c["time"]), str(c.get("by") or ""), str(c["field"]), str(c.get("value") or ""))
                      for c in data.get("log") or ()),
            source=tuple((str(k), str(v)) for k, v in (data.get("source") or {}).items()),
            severity_set=str(data.get("severity_set") or ""), severity_set_by=str(data.get("severity_set_by") or ""),
            severity_set_at=_time(data["severity_set_at"]) if data.get("severity_set_at") else None,
        )


def _time(value: Any) -> datetime:
    return as_utc(datetime.fromisoformat(str(value)))


_SEVERITY_RANK = {"elevated": 0, "high": 1, "critical": 2}


def _higher(a: str, b: str) -> str:
    return a if _SEVERITY_RANK.get(a, 0) >= _SEVERITY_RANK.get(b, 0) else b


def _parse(mission: str, raw: str | None) -> Incident | None:
    if raw is None:
        return None
    try:
        return Incident.from_json(json.loads(raw))
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"mission {mission!r}: the stored incident is not readable ({exc})") from None


def load_incident(store: StateStore, mission: str) -> Incident | None:
    """The mission's latest incident, open or resolved (None when it never had one).

    Raises:
        InputError: the stored value is not readable (the message names the mission).
    """
    return _parse(mission, store.get_state(mission, INCIDENT_KEY))


def incident_open_at(store: StateStore, mission: str, at: datetime) -> Incident | None:
    """The mission's incident if it is open at ``at`` (started by then and not resolved by then), for the
    views that read it (the brief's incident block, the crisis timeline). A stored incident that is not
    readable reads as None there: it never hides the open alerts; ``incident`` names the damage."""
    try:
        incident = load_incident(store, mission)
    except InputError:
        return None
    if incident is None or incident.started > at or (incident.resolved_at is not None and incident.resolved_at <= at):
        return None
    return incident


def _update(store: StateStore, mission: str, change: Callable[[Incident | None], Incident | None]) -> Incident | None:
    """Apply ``change`` to the stored incident by compare-and-set, retried while another writer changed it
    first (:func:`~mission_memory.stores.state_change.change_state`, for at most :data:`CHANGE_DEADLINE_S`).
    ``change`` returning None (or the same incident) writes nothing. Returns the incident as stored afterwards."""

    def on_stored(raw: str | None) -> str | None:
        current = _parse(mission, raw)
        new = change(current)
        if new is None or new == current:
            return None
        if current is not None and not current.is_open and new.id != current.id:
            # the closed one stays readable under its own key (its id names one start: same value each time)
            store.set_state(mission, f"{INCIDENT_KEY}:{current.id}", raw or "")
        return json.dumps(new.to_json(), sort_keys=True)

    change_state(store, mission, INCIDENT_KEY, on_stored, what="the incident", deadline_s=CHANGE_DEADLINE_S)
    return load_incident(store, mission)


def list_incidents(store: StateStore, mission: str) -> list[Incident]:
    """Every incident of ``mission`` kept in the store, open and resolved, newest start first: the latest
    (key ``incident``) and the earlier ones (``incident:<id>``, kept when the next opened). One that is not
    readable is skipped (``incident`` names the damage of the latest).

    Raises:
        BackendUnavailable: the store cannot be read.
    """
    found: dict[str, Incident] = {}
    latest: Incident | None = None
    for _, key, value in store.state_items(mission):
        if key != INCIDENT_KEY and not key.startswith(INCIDENT_KEY + ":"):
            continue
        try:
            incident = _parse(mission, value)
        except InputError:
            continue  # one damaged incident does not hide the others
        if incident is None:
            continue
        if key == INCIDENT_KEY:
            latest = incident
        else:
            found.setdefault(incident.id, incident)
    if latest is not None:
        found[latest.id] = latest  # the latest value of an incident wins over its copy
    return sorted(found.values(), key=lambda i: (i.started, i.id), reverse=True)


def _new_id(started: datetime) -> str:
    return f"INC-{started.astimezone(UTC):%Y%m%d-%H%M%S}"


def _with_alerts(incident: Incident, alerts: Sequence[OpenAlert], at: datetime) -> Incident:
    """``incident`` with ``alerts`` (every open alert of the mission) as its open alerts: new ones linked,
    linked ones refreshed, linked ones no longer open marked resolved at ``at``; severity from the open ones."""
    by_fp = {a.fingerprint: a for a in alerts}
    kept: list[IncidentAlert] = []
    for known in incident.alerts:
        now_open = by_fp.pop(known.fingerprint, None)
        if now_open is not None:
            kept.append(IncidentAlert.of(now_open))
        else:
            kept.append(known if known.resolved_at else replace(known, resolved_at=at))
    kept += [IncidentAlert.of(a) for a in by_fp.values()]
    kept.sort(key=lambda a: (a.resolved_at is not None, -a.criticality, a.since, a.fingerprint))
    firing = {a.fingerprint for a in firing_only(alerts)}  # a silenced alert is open but sets no severity
    still_open = [a for a in kept if a.resolved_at is None and a.fingerprint in firing]
    severity = (_higher(severity_level(max(a.criticality for a in still_open)), incident.severity_set or "elevated")
                if still_open else incident.severity)  # an operator may raise it, never below its open alerts
    return replace(incident, alerts=tuple(kept), severity=severity, peak_severity=_higher(incident.peak_severity, severity))


def _flood_criticality(store: MemoryStore, mission: str, state: EscalationState, at: datetime) -> float:
    """The criticality of the most critical event of the flood's window (read once, when it opens an incident)."""
    since = (state.since or at) - state.window
    hits = store.most_critical(SearchFilter((Layer.DOMAIN,), mission=mission, since=since, until=at), 1)
    found = store.get([h.record_id for h in hits])
    return max((r.criticality for r in found.values()), default=0.0)


def sync_incident(store: MemoryStore, mission: str, state: EscalationState, at: datetime) -> Incident | None:
    """Bring the mission's incident up to date after an intake: open one on the first critical alert or
    a flood, link the open alerts, derive the severity from them, close it when none is open and the
    flood is over. Does nothing on a read-only store.

    Args:
        store: the store (its open alerts and incident are read and written).
        mission: the mission.
        state: the escalation state just assessed.
        at: the intake's clock (timezone-aware): when a change was seen.

    Returns:
        The incident as stored afterwards (None when the mission never had one).

    Raises:
        InputError: the stored incident or open alerts are not readable.
        BackendUnavailable: the store cannot be written.
    """
    if store.read_only:
        return load_incident(store, mission)
    alerts = open_alerts(store, mission)
    degraded = state.mode is EscalationMode.DEGRADED

    def change(current: Incident | None) -> Incident | None:
        if current is not None and current.is_open:
            updated = _with_alerts(current, alerts, at)
            ever_alerted = bool(updated.alerts) or updated.opened_by != "operator"
            if ever_alerted and not updated.open_alerts and not degraded:
                return _closed(updated, at, "system", "its alerts resolved and the event rate is normal")
            return updated
        closed_own = {a.fingerprint for a in current.alerts} if current else set()
        critical = [a for a in firing_only(alerts)
                    if a.criticality >= CRITICAL_CRITICALITY and a.fingerprint not in closed_own]
        flood_after = degraded and (current is None or current.resolved_at is None
                                    or (state.since is not None and state.since > current.resolved_at))
        if critical:
            first = min(critical, key=lambda a: (a.since, -a.criticality))
            opened = Incident(id=_new_id(first.since), mission=mission, title=first.title or first.type,
                              opened_by="alert", started=first.since, source=_source_of(first))
            why = f"alert {first.type} ({first.criticality:.2f}) event:{first.event_id}"
        elif flood_after:
            started = state.since or at
            top = _flood_criticality(store, mission, state, at)
            level = severity_level(top)
            opened = Incident(id=_new_id(started), mission=mission, title="", opened_by="flood",
                              started=started, severity=level, peak_severity=level)
            why = f"flood: {state.rate} events in {int(state.window.total_seconds() // 60)} min"
        else:
            return None
        opened = _with_alerts(opened, [a for a in alerts if a.fingerprint not in closed_own], at)
        return replace(opened, log=(IncidentChange(at, "system", "open", why),))

    return _update(store, mission, change)


def _record_nouns() -> dict[str, str]:
    """The sources whose event ids carry their own record's id (``<source>:<id>``), by name, with the noun
    they give it (:attr:`~mission_memory.operations.sources.Source.record_noun`)."""
    from mission_memory.operations.sources import sources

    return {s.name: s.record_noun for s in sources() if s.record_noun}


def _source_of(alert: OpenAlert) -> tuple[tuple[str, str], ...]:
    """The source's record of ``alert`` when its source keeps one: name, id, number, url."""
    name, _, own = alert.event_id.partition(":")
    if name not in _record_nouns() or not own:
        return ()
    return (("name", name), ("id", own), ("number", alert.number), ("url", alert.url))


def source_line(incident: Incident) -> str:
    """The source's record of the incident in a few words (``<record noun> #42 (Q1INC42) https://…``);
    "" when no source record opened it. Whitespace-collapsed, not escaped."""
    source = dict(incident.source)
    noun = _record_nouns().get(source.get("name", ""))
    if not noun:
        return ""
    number = f" #{_flat(source['number'], 40)}" if source.get("number") else ""
    url = f" {_flat(source['url'], 300)}" if source.get("url") else ""
    return f"{noun}{number} ({_flat(source.get('id', ''), 120)}){url}"


def _closed(incident: Incident, at: datetime, by: str, why: str) -> Incident:
    return replace(incident, status="resolved", resolved_at=at, closed_by=why if by == "system" else f"{by}: {why}",
                   log=(*incident.log, IncidentChange(at, by, "close", why)))


def _text(field_name: str, value: str) -> str:
    text = value.strip()
    if not text:
        raise InputError(f"incident {field_name}: the value is blank")
    limit = _MAX_TEXT[field_name]
    if len(text) > limit:
        raise InputError(f"incident {field_name}: {len(text)} characters, at most {limit}")
    return text


_CLOCK = re.compile(r"^(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)$")
_IN = re.compile(r"^\+?(?P<n>\d{1,4})\s*(?P<unit>m|min|mins|minutes|h|hr|hours?)$", re.IGNORECASE)


def next_update_time(value: str, now: datetime) -> datetime:
    """When the next update is due, from what an operator types: ``HH:MM`` (UTC; the next such time after
    ``now``), ``30m`` / ``+30m`` / ``2h`` (from ``now``), or an ISO 8601 date and time (UTC when it
    names no offset).

    Raises:
        InputError: none of those forms, or a time before ``now`` (the message quotes the value).
    """
    text = value.strip()
    if m := _CLOCK.match(text):
        due = now.astimezone(UTC).replace(hour=int(m["h"]), minute=int(m["m"]), second=0, microsecond=0)
        return due if due > now else due + timedelta(days=1)
    if m := _IN.match(text):
        n = int(m["n"])
        if n == 0:
            raise InputError(f"incident next-update {value!r}: the time is now; give a later one")
        return now + (timedelta(hours=n) if m["unit"].lower().startswith("h") else timedelta(minutes=n))
    try:
        due = as_utc(datetime.fromisoformat(text))
    except ValueError:
        raise InputError(f"incident next-update {value!r}: expected HH:MM (UTC), 30m, 2h, or an ISO 8601 time") from None
    if due <= now:
        raise InputError(f"incident next-update {value!r}: {due:%Y-%m-%d %H:%M} UTC has passed; give a later time")
    return due


def change_incident(store: StateStore, mission: str, what: str, value: str, *, by: str, at: datetime) -> Incident:
    """Apply one operator change to the mission's incident and store it (one compare-and-set, retried).

    Args:
        store: the store.
        mission: the mission.
        what: one of :data:`FIELDS`: ``open`` (value: the title; refused while one is open), ``status``
            (one of :data:`STATUSES`; ``resolved`` closes it), ``severity`` (one of :data:`SEVERITIES`, set
            by hand: refused below the level its open alerts derive while any is open), ``commander``, ``next-update``
            (:func:`next_update_time`), ``contingency`` (appended), ``close`` (value: why).
        value: the new value.
        by: the operator making the change (kept in the incident's log).
        at: when (timezone-aware).

    Returns:
        The incident as stored afterwards.

    Raises:
        InputError: an unknown field, status or severity, a severity below its open alerts', a blank or
            over-long value, a bad time, no open incident (except for ``open``), or one already open for
            ``open``; the message names the value.
        BackendUnavailable: the store cannot be written, or kept changing for :data:`CHANGE_DEADLINE_S`.
    """
    if what not in FIELDS:
        raise InputError(f"incident: unknown field {what!r}; one of {', '.join(FIELDS)}")
    if what == "status":
        value = value.strip().lower()
        if value not in STATUSES:
            raise InputError(f"incident status {value!r}: one of {', '.join(STATUSES)}")
    elif what == "severity":
        value = value.strip().lower()
        if value not in SEVERITIES:
            raise InputError(f"incident severity {value!r}: one of {', '.join(SEVERITIES)}")
    elif what == "next-update":
        value = next_update_time(value, at).isoformat()
    elif what == "close":
        value = value.strip() or "closed by the operator"
        if len(value) > _MAX_TEXT["close"]:
            raise InputError(f"incident close: {len(value)} characters, at most {_MAX_TEXT['close']}")
    else:
        value = _text(what, value)
    firing = {a.fingerprint: a for a in firing_only(open_alerts(store, mission))} if what == "severity" else {}

    def change(current: Incident | None) -> Incident:
        if what == "open":
            if current is not None and current.is_open:
                raise InputError(f"incident {current.id} of mission {mission!r} is open since "
                                 f"{current.started:%Y-%m-%d %H:%M} UTC; close it first (incident close)")
            return Incident(id=_new_id(at), mission=mission, title=value, opened_by="operator", started=at,
                            log=(IncidentChange(at, by, "open", value),))
        if current is None or not current.is_open:
            raise InputError(f"mission {mission!r} has no open incident"
                             + (f" ({current.id} resolved at {current.resolved_at:%Y-%m-%d %H:%M} UTC)"
                                if current is not None and current.resolved_at else "")
                             + "; open one with: incident open \"<title>\"")
        if what == "close" or (what == "status" and value == "resolved"):
            return _closed(current, at, by, value if what == "close" else "status set to resolved")
        logged = (*current.log, IncidentChange(at, by, what, value))
        if what == "status":
            return replace(current, status=value, log=logged)
        if what == "severity":
            held = [firing[a.fingerprint] for a in current.open_alerts if a.fingerprint in firing]
            if held:
                top = max(held, key=lambda a: a.criticality)
                derived = severity_level(top.criticality)
                if _SEVERITY_RANK[value] < _SEVERITY_RANK[derived]:
                    raise InputError(f"incident severity {value!r}: its open alerts hold it at {derived} (highest "
                                     f"open alert {top.criticality:.2f}, {top.type}); set it lower once they resolve")
            return replace(current, severity=value, peak_severity=_higher(current.peak_severity, value),
                           severity_set=value, severity_set_by=by, severity_set_at=at, log=logged)
        if what == "commander":
            return replace(current, commander=value, log=logged)
        if what == "next-update":
            return replace(current, next_update=_time(value), log=logged)
        return replace(current, contingencies=(*current.contingencies, (value, by, at)), log=logged)

    stored = _update(store, mission, change)
    assert stored is not None  # every branch of change writes an incident or raises
    return stored


INCIDENT_RECORDS_SHOWN = 500
"""The newest notes and decisions :func:`incident_records` returns; it says when there were more."""


def incident_records(store: MemoryStore, incident: Incident, at: datetime) -> tuple[list[Record], bool]:
    """The incident's notes and decisions: the mission's handover notes and decisions recorded while it was
    open (from its start to its close, or to ``at``), oldest first, the newest
    :data:`INCIDENT_RECORDS_SHOWN`; and whether there were more."""
    until = (incident.resolved_at or at) + timedelta(microseconds=1)
    records = store.records_of_kind([RecordKind.HANDOVER_NOTE.value, RecordKind.DECISION.value],
                                    mission=incident.mission, since=incident.started, until=until,
                                    limit=INCIDENT_RECORDS_SHOWN + 1)
    more = len(records) > INCIDENT_RECORDS_SHOWN
    return sorted(records[:INCIDENT_RECORDS_SHOWN], key=lambda r: (r.provenance.time, r.id)), more


def _flat(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _when(moment: datetime, day: datetime | None = None) -> str:
    moment = moment.astimezone(UTC)
    return f"{moment:%H:%M} UTC" if day is not None and moment.date() == day.astimezone(UTC).date() else \
        f"{moment:%Y-%m-%d %H:%M} UTC"


def _due(due: datetime, at: datetime, day: datetime | None) -> str:
    minutes = int((due - at).total_seconds() // 60)
    return (f"{_when(due, day)} (in {minutes} min)" if minutes >= 0 else
            f"{_when(due, day)} (OVERDUE by {-minutes} min: give the update now)")


def incident_head(incident: Incident, *, severity: bool = True, day: datetime | None = None) -> str:
    """The incident in one line: id, title, status, severity and peak (unless ``severity`` is False: the
    brief gives it on its own line) and whether it was set by hand, start and what opened it, the
    commander, the source's incident (:func:`source_line`), and when it resolved. Times on ``day``'s date
    are given as ``HH:MM`` (the brief's own day); a closed incident's severity is labelled "at close".
    Whitespace-collapsed, not escaped."""
    at_close = "" if incident.is_open else " at close"  # a closed incident has no current severity
    hand = severity_by_hand(incident, day)
    level = (f" · severity{at_close} {incident.severity}" + (f" (peak {incident.peak_severity})"
             if incident.peak_severity != incident.severity else "") + (f" ({hand})" if hand else "")) if severity else ""
    return (f"Incident {incident.id}" + (f": {_flat(incident.title)}" if incident.title else "")
            + f" · status {incident.status}{level} · since {_when(incident.started, day)} ({incident.opened_by})"
            + " · commander " + (_flat(incident.commander, 200) if incident.commander else "not set")
            + (f" · {source_line(incident)}" if incident.source else "")
            + (f" · resolved at {_when(incident.resolved_at, day)}" if incident.resolved_at else ""))


def severity_by_hand(incident: Incident, day: datetime | None = None) -> str:
    """``set by hand by <who> at <when>`` while the incident's severity is the level an operator set ("" else)."""
    if not incident.severity_set or incident.severity != incident.severity_set or incident.severity_set_at is None:
        return ""
    return f"set by hand by {_flat(incident.severity_set_by, 80) or 'unknown'} at {_when(incident.severity_set_at, day)}"


def next_update_line(incident: Incident, at: datetime, day: datetime | None = None) -> str:
    """When the next update is due and how long until it at ``at`` (or how overdue it is); "" when not set;
    for a closed incident, that none is due ("none: it closed at …"), whatever was set while it was open.
    A time on ``day``'s date is given as ``HH:MM``."""
    if incident.resolved_at is not None:
        return f"none: it closed at {_when(incident.resolved_at, day)}"
    return _due(incident.next_update, at, day) if incident.next_update else ""


def contingency_lines(incident: Incident, day: datetime | None = None) -> list[str]:
    """One line per contingency, in the order set, with who set it and when (``HH:MM`` on ``day``'s date)."""
    return [f"- {_flat(text, 1000)} ({_flat(by, 80) or 'unknown'}, {_when(when, day)})"
            for text, by, when in incident.contingencies]


def describe_incident(incident: Incident, at: datetime) -> list[str]:
    """The whole incident in lines (``incident show``): :func:`incident_head`, the next update, the
    contingencies, why it closed, and every alert it has had with the source's id, who acknowledged and
    who is assigned. Text is whitespace-collapsed, not escaped: callers fence it and escape it for the terminal."""
    lines = [incident_head(incident),
             "Next update: " + (next_update_line(incident, at) or "not set: agree it at the handover (`incident next-update HH:MM`)"),
             f"Contingencies ({len(incident.contingencies)}):",
             *(contingency_lines(incident) or ["- none set (`incident contingency \"if X then Y\"`)"])]
    if incident.closed_by:
        lines.append(f"Closed: {_flat(incident.closed_by)}")
    lines.append(f"Its alerts ({len(incident.open_alerts)} open of {len(incident.alerts)}):")
    for a in incident.alerts:
        state_of = "open" if a.resolved_at is None else f"resolved {_when(a.resolved_at)}"
        ack = f"acknowledged by {_flat(a.acknowledged_by, 80)}" if a.acknowledged_by else "not acknowledged"
        lines.append(f"- {state_of} · {_flat(a.type, 80)}: {_flat(a.title, 160)} · instance {_flat(a.instance, 80) or '-'}"
                     f" · {a.criticality:.2f} · since {_when(a.since)} · {ack}"
                     f" · assigned {', '.join(_flat(x, 60) for x in a.assignees) or 'nobody'} · event:{a.event_id}")
    return lines
