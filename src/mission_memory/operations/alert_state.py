"""Which alerts are open: an alert fires until a notification resolves it (docs/adr/0057).

Alertmanager, PagerDuty and Opsgenie notify an alert when it fires, again while it lasts, and once
when it resolves. The event rate counts arrivals (docs/adr/0022), so an alert that fired an hour ago
and still fires is not in the last window's count, yet it is what an incoming shift must see first.
This module keeps, per mission, the open alerts by fingerprint in the state store (key ``alerts``),
updated by every intake in the same order as the events' times: a firing notification opens (or
refreshes) its fingerprint's entry, a resolved one closes it. :func:`open_alerts` reads them as of a
moment (those started by then), for the timeline's "firing now" line and ``events firing``.

Events without a fingerprint (log lines, sensor reports) are point events: they are never open.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mission_memory.errors import InputError
from mission_memory.operations.domain_events import DomainEvent, EventState
from mission_memory.records import RecordKind, source_key_for
from mission_memory.stores.base import MemoryStore, StateStore
from mission_memory.utc import as_utc

__all__ = ["ALERTS_KEY", "OpenAlert", "alert_line", "alert_record_ids", "alert_title", "open_alerts", "update_open_alerts"]

ALERTS_KEY = "alerts"
"""The state-store key (per mission) holding the open alerts."""

_MAX_OPEN = 5000  # a mission with more open alerts keeps the newest; the rest are older than any shift


@dataclass(frozen=True)
class OpenAlert:
    """An alert that has fired and not resolved.

    Attributes:
        fingerprint: the source's identity of the alert.
        event_id: the id of its latest stored notification (cite it as ``event:<id>``).
        since: when it started firing.
        last_notified: the time of its latest notification.
        type, sector: the alert's name and where it fires.
        criticality: the source's criticality.
        runbook_url: its runbook, if the source gave one.
        text: the first 300 characters of its latest notification's text (so it groups with its repeats).
        title: what the alert says, in a line (the source's ``title`` label, else the first line of its
            text): a PagerDuty incident's title, an Alertmanager alert's summary.
        instance: where exactly it fires (the ``instance`` label; "" when the source names none), so two
            alerts of one name on two hosts are two rows.
        status: the source's status (``triggered``, ``acknowledged``; "" when it says none).
        acknowledged_by: who acknowledged it ("" while nobody has); kept by later notifications that omit it.
        assignees: who it is assigned to, as the source names them.
    """

    fingerprint: str
    event_id: str
    since: datetime
    last_notified: datetime
    type: str
    sector: str
    criticality: float
    runbook_url: str | None = None
    text: str = ""
    title: str = ""
    instance: str = ""
    status: str = ""
    acknowledged_by: str = ""
    assignees: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (``events firing --json``)."""
        return {"fingerprint": self.fingerprint, "event_id": self.event_id, "since": self.since.isoformat(),
                "last_notified": self.last_notified.isoformat(), "type": self.type, "sector": self.sector,
                "criticality": self.criticality, "runbook_url": self.runbook_url, "title": self.title,
                "instance": self.instance, "status": self.status, "acknowledged_by": self.acknowledged_by,
                "assignees": list(self.assignees)}


def alert_line(a: OpenAlert) -> str:
    """One open alert on one line: since, criticality, name and title, instance, sector, who acknowledged it,
    who is assigned, its event and runbook (stored text, whitespace collapsed)."""
    def flat(value: str) -> str:
        return " ".join(value.split())

    title = flat(a.title) if a.title and flat(a.title) != flat(a.type) else ""
    ack = f"acknowledged by {flat(a.acknowledged_by)}" if a.acknowledged_by else (
        "acknowledged" if a.status == "acknowledged" else "not acknowledged")
    return (f"- {a.since:%Y-%m-%d %H:%M:%S} · {a.criticality:.2f} · {flat(a.type)}{': ' + title if title else ''}"
            f" · instance {flat(a.instance) or '-'} · sector {flat(a.sector)} · {ack}"
            f" · assigned {', '.join(flat(x) for x in a.assignees) or '-'} · event:{a.event_id}"
            f" · runbook {a.runbook_url or '-'}")


def alert_title(event: DomainEvent) -> str:
    """An alert's title in one line: its ``title`` label, else the first line of its text (``RESOLVED: `` dropped)."""
    labels = dict(event.labels)
    line = labels.get("title") or next((x for x in event.text.splitlines() if x.strip()), event.type)
    return " ".join(line.removeprefix("RESOLVED: ").split())[:200]


def _load(store: StateStore, mission: str) -> dict[str, dict[str, Any]]:
    raw = store.get_state(mission, ALERTS_KEY)
    if raw is None:
        return {}
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise InputError(f"mission {mission!r}: stored open alerts are not readable ({exc})") from None
    if not isinstance(data, dict):
        raise InputError(f"mission {mission!r}: stored open alerts are not an object")
    return data


def update_open_alerts(store: StateStore, mission: str, events: Sequence[DomainEvent]) -> int:
    """Open or close the alerts of ``events`` (those with a fingerprint), in time order; store the result.

    Returns:
        How many alerts are open afterwards.

    Raises:
        InputError: the stored value is not readable.
    """
    alerts = [e for e in events if e.fingerprint]
    if not alerts:
        return len(_load(store, mission))
    state = _load(store, mission)
    for event in sorted(alerts, key=lambda e: (e.ends_at or e.time, e.id)):
        fp = str(event.fingerprint)
        if event.state is EventState.RESOLVED:
            state.pop(fp, None)
            continue
        known = state.get(fp)
        since = event.time if known is None else min(event.time, as_utc(datetime.fromisoformat(known["since"])))
        labels = dict(event.labels)
        status = labels.get("status", "")
        acked = labels.get("acknowledged_by") or (
            str((known or {}).get("acknowledged_by") or "") if status in ("", "acknowledged") else "")
        state[fp] = {"event_id": event.id, "since": since.isoformat(), "last": event.time.isoformat(),
                     "type": event.type, "sector": event.sector, "criticality": event.criticality,
                     "runbook_url": event.runbook_url, "text": event.text[:300], "title": alert_title(event),
                     "instance": labels.get("instance", ""), "status": status, "acknowledged_by": acked,
                     "assignees": [a.strip() for a in labels.get("assignees", "").split(",") if a.strip()]}
    if len(state) > _MAX_OPEN:
        state = dict(sorted(state.items(), key=lambda kv: kv[1]["last"], reverse=True)[:_MAX_OPEN])
    store.set_state(mission, ALERTS_KEY, json.dumps(state, sort_keys=True))
    return len(state)


def open_alerts(store: StateStore, mission: str, at: datetime | None = None) -> list[OpenAlert]:
    """The open alerts of ``mission`` (those started by ``at`` when given), most critical then newest first.

    Raises:
        InputError: the stored value is not readable.
    """
    out = []
    for fp, entry in _load(store, mission).items():
        try:
            alert = OpenAlert(
                fingerprint=fp, event_id=str(entry["event_id"]), since=as_utc(datetime.fromisoformat(entry["since"])),
                last_notified=as_utc(datetime.fromisoformat(entry["last"])), type=str(entry["type"]),
                sector=str(entry["sector"]), criticality=float(entry["criticality"]),
                runbook_url=entry.get("runbook_url") or None, text=str(entry.get("text") or ""),
                title=str(entry.get("title") or entry.get("type") or ""), instance=str(entry.get("instance") or ""),
                status=str(entry.get("status") or ""), acknowledged_by=str(entry.get("acknowledged_by") or ""),
                assignees=tuple(str(a) for a in entry.get("assignees") or ()),
            )
        except (KeyError, ValueError, TypeError):
            continue  # a damaged entry does not hide the others
        if at is None or alert.since <= at:
            out.append(alert)
    out.sort(key=lambda a: (-a.criticality, -a.since.timestamp(), a.fingerprint))
    return out


def alert_record_ids(store: MemoryStore, mission: str, alerts: Sequence[OpenAlert]) -> dict[str, str]:
    """The stored record of each alert's latest notification, as ``{event_id: record id}`` (those stored)."""
    keys = {source_key_for(mission, RecordKind.DOMAIN_EVENT, f"event:{a.event_id}"): a.event_id for a in alerts}
    return {keys[key]: rid for key, rid in store.ids_by_source_keys(sorted(keys)).items()}
