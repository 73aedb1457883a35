"""Which alerts are open: an alert fires until a notification resolves it (docs/adr/0057).

Alertmanager, PagerDuty and Opsgenie notify an alert when it fires, again while it lasts, and once
when it resolves. The event rate counts arrivals (docs/adr/0022), so an alert that fired an hour ago
and still fires is not in the last window's count, yet it is what an incoming shift must see first.
This module keeps, per mission, the open alerts by fingerprint in the state store, updated by every
intake in the same order as the events' times: a firing notification opens (or refreshes) its
fingerprint's entry, a resolved one closes it. :func:`open_alerts` reads them as of a moment (those
started by then), for the timeline's "firing now" line and ``events firing``.

Every open alert is kept, however many are open (no newest-N cut: an outage with 50,000 open alerts
keeps the oldest too). The entries are spread over :data:`ALERT_BUCKETS` state values by a hash of
the fingerprint (keys ``alerts:000`` … ``alerts:3ff``), each changed by its own compare-and-set
(:func:`~mission_memory.stores.state_change.change_state`), so an intake rewrites only the buckets
its alerts fall in, and concurrent writers lose nothing (docs/adr/0091). A store written before
kept them all in one value (key ``alerts``): it is still read, and only shrinks — an alert of it that
notifies again moves to its bucket, one that resolves leaves it.

Events without a fingerprint (log lines, sensor reports) are point events: they are never open.

A silenced alert is open but not counted as firing: its source says so (Alertmanager's ``suppressed``
state, kept as the label ``suppressed``), or an operator silenced it (:func:`silence_alerts`, key
``silences``: per fingerprint, until when, why and by whom). An operator's silence expires by itself at
its end; :func:`unsilence_alerts` lifts it sooner. :func:`open_alerts` marks both and lists silenced
alerts after the firing ones; views count firing alerts with :func:`firing_only`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from mission_memory.errors import InputError
from mission_memory.operations.domain_events import DomainEvent, EventState
from mission_memory.records import Record, RecordKind, source_key_for
from mission_memory.stores.base import MemoryStore, StateStore
from mission_memory.stores.state_change import change_state
from mission_memory.utc import as_utc

__all__ = [
    "ALERTS_KEY",
    "ALERT_BUCKETS",
    "INSTANCE_LABELS",
    "MAX_SILENCE",
    "SILENCES_KEY",
    "OpenAlert",
    "acknowledge_alerts",
    "alert_instance",
    "alert_line",
    "alert_marks",
    "alert_record_ids",
    "alert_title",
    "alerts_key",
    "firing_only",
    "first_fired",
    "open_alerts",
    "silence_alerts",
    "unsilence_alerts",
    "update_open_alerts",
]

ALERTS_KEY = "alerts"
"""The state-store key (per mission) of the open alerts: ``alerts:<bucket>`` each hold some
(:func:`alerts_key`); ``alerts`` alone is the one value a store written before kept them all in."""
ALERT_BUCKETS = 1024
"""How many state values the open alerts of a mission are spread over, by a hash of the fingerprint.
Not a cap: a bucket holds any number. Every write redacts the whole value (the stores' last guard,
docs/adr/0053; about 0.25 ms per entry), so an intake costs about the entries of the buckets it
touches: at 50,000 open alerts a one-alert intake rewrites about 50 entries."""
SILENCES_KEY = "silences"
"""The state-store key (per mission) holding the operators' silences, by fingerprint."""
MAX_SILENCE = timedelta(days=30)
"""The longest silence an operator may set (a silence is for a maintenance window, not for ever)."""
SUPPRESSED_LABEL = "suppressed"
"""The label a source sets on an alert it reports as suppressed (silenced or inhibited at the source)."""

INSTANCE_LABELS = ("instance", "pod", "container", "job", "service", "node", "host", "deployment", "statefulset",
                   "daemonset", "namespace")
"""The labels an alert's instance is read from, most specific first: ``instance`` as it is, else the
first present of the others named by their label (``checkout-7d9f-x2 (pod)``); Kubernetes alerts such
as KubePodCrashLooping carry a pod and no instance."""

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
        links: the source's links for it (dashboard, panel, silence …), as ``(name, url)`` pairs: its
            labels ending ``_url``, the suffix dropped.
        silenced: why it is silenced ("" while it fires): the source's suppression, or an operator's
            silence reason.
        silenced_until: when an operator's silence ends (None: not silenced by an operator).
        silenced_by: the operator who silenced it ("" if none).
        number: the source's short number of it (the ``incident`` label: a PagerDuty incident's number,
            an Opsgenie alert's tinyId; "" when the source gave none).
        url: the source's page of it (the event's ``generator_url``: a PagerDuty incident's page).
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
    links: tuple[tuple[str, str], ...] = ()
    silenced: str = ""
    silenced_until: datetime | None = None
    silenced_by: str = ""
    number: str = ""
    url: str = ""

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (``events firing --json``)."""
        return {"links": dict(self.links), "silenced": self.silenced,
                "silenced_until": self.silenced_until.isoformat() if self.silenced_until else None,
                "silenced_by": self.silenced_by, "fingerprint": self.fingerprint, "event_id": self.event_id, "since": self.since.isoformat(),
                "last_notified": self.last_notified.isoformat(), "type": self.type, "sector": self.sector,
                "criticality": self.criticality, "runbook_url": self.runbook_url, "title": self.title,
                "instance": self.instance, "status": self.status, "acknowledged_by": self.acknowledged_by,
                "assignees": list(self.assignees), "number": self.number, "url": self.url}


def _flat(value: str) -> str:
    return " ".join(value.split())


def alert_marks(a: OpenAlert) -> str:
    """What follows an open alert's line: `` · SILENCED …`` when it is silenced, `` · links name url, …``
    when its source gave links; "" otherwise (stored text, whitespace collapsed)."""
    marks = ""
    if a.silenced:
        until = f" until {a.silenced_until:%Y-%m-%d %H:%M} UTC" if a.silenced_until else ""
        by = f" by {_flat(a.silenced_by)}" if a.silenced_by else ""
        marks += f" · SILENCED{until}{by} ({_flat(a.silenced)[:200]})"
    if a.links:
        marks += " · links " + ", ".join(f"{_flat(name)} {_flat(url)}" for name, url in a.links)
    return marks


def firing_only(alerts: Sequence[OpenAlert]) -> list[OpenAlert]:
    """The alerts of ``alerts`` that fire: silenced ones are open but not counted as firing."""
    return [a for a in alerts if not a.silenced]


def alert_line(a: OpenAlert) -> str:
    """One open alert on one line: since, criticality, name and title, instance, sector, who acknowledged it,
    who is assigned, its event and runbook, then :func:`alert_marks` (stored text, whitespace collapsed)."""
    flat = _flat

    title = flat(a.title) if a.title and flat(a.title) != flat(a.type) else ""
    ack = f"acknowledged by {flat(a.acknowledged_by)}" if a.acknowledged_by else (
        "acknowledged" if a.status == "acknowledged" else "not acknowledged")
    return (f"- {a.since:%Y-%m-%d %H:%M:%S} · {a.criticality:.2f} · {flat(a.type)}{': ' + title if title else ''}"
            f" · instance {flat(a.instance) or '-'} · sector {flat(a.sector)} · {ack}"
            f" · assigned {', '.join(flat(x) for x in a.assignees) or '-'} · event:{a.event_id}"
            f" · runbook {a.runbook_url or '-'}{alert_marks(a)}")


def first_fired(record: Record) -> datetime:
    """When the alert a domain-event record holds started firing: its first trigger, the earliest time among
    the record's notification and the earlier versions it keeps (docs/adr/0078, the first is always kept).

    The one rule of an alert's start: :func:`update_open_alerts` keeps the earliest notification's time
    as an open alert's ``since`` the same way, so the digest's "firing since" and ``events firing`` agree
    (a PagerDuty acknowledgement whose ``created_at`` is later than the trigger's does not move it).
    """
    times = [record.provenance.time]
    for version in record.attributes.get("earlier_versions") or ():
        try:
            times.append(as_utc(datetime.fromisoformat(str(version["time"]))))
        except (KeyError, TypeError, ValueError):
            continue  # a damaged version does not hide the others
    return min(times)


def alert_title(event: DomainEvent) -> str:
    """An alert's title in one line: its ``title`` label, else the first line of its text (``RESOLVED: `` dropped)."""
    labels = dict(event.labels)
    line = labels.get("title") or next((x for x in event.text.splitlines() if x.strip()), event.type)
    return " ".join(line.removeprefix("RESOLVED: ").split())[:200]


def _load(store: StateStore, mission: str, key: str) -> dict[str, dict[str, Any]]:
    return _parse_state(mission, key, store.get_state(mission, key))


def _parse_state(mission: str, key: str, raw: str | None) -> dict[str, dict[str, Any]]:
    if raw is None:
        return {}
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise InputError(f"mission {mission!r}: stored {key} are not readable ({exc})") from None
    if not isinstance(data, dict):
        raise InputError(f"mission {mission!r}: stored {key} are not an object")
    return data


def alerts_key(fingerprint: str) -> str:
    """The state key of the bucket holding the open alert ``fingerprint``: ``alerts:`` and three hex digits,
    a BLAKE2b hash of it modulo :data:`ALERT_BUCKETS` (the same in every process and release)."""
    digest = int.from_bytes(hashlib.blake2b(fingerprint.encode("utf-8"), digest_size=4).digest(), "big")
    return f"{ALERTS_KEY}:{digest % ALERT_BUCKETS:03x}"


def _stored_alerts(store: StateStore, mission: str) -> dict[str, dict[str, Any]]:
    """Every open alert's entry, by fingerprint: the buckets over the one value a store written before kept."""
    legacy: dict[str, dict[str, Any]] = {}
    out: dict[str, dict[str, Any]] = {}
    for _, key, value in store.state_items(mission):
        if key == ALERTS_KEY:
            legacy = _parse_state(mission, key, value)
        elif key.startswith(ALERTS_KEY + ":"):
            out.update(_parse_state(mission, key, value))
    return {**legacy, **out} if legacy else out


def _entry(event: DomainEvent, known: dict[str, Any] | None) -> dict[str, Any]:
    """The open-alert entry of a firing notification, ``known`` its entry before (kept: start, acknowledger)."""
    since = event.time if known is None else min(event.time, as_utc(datetime.fromisoformat(known["since"])))
    labels = dict(event.labels)
    status = labels.get("status", "")
    acked = labels.get("acknowledged_by") or (
        str((known or {}).get("acknowledged_by") or "") if status in ("", "acknowledged") else "")
    return {"event_id": event.id, "since": since.isoformat(), "last": event.time.isoformat(),
            "type": event.type, "sector": event.sector, "criticality": event.criticality,
            "runbook_url": event.runbook_url, "text": event.text[:300], "title": alert_title(event),
            "instance": alert_instance(labels), "status": status, "acknowledged_by": acked,
            "assignees": [a.strip() for a in labels.get("assignees", "").split(",") if a.strip()],
            "links": {k.removesuffix("_url"): v for k, v in sorted(labels.items()) if k.endswith("_url") and v},
            "suppressed": labels.get(SUPPRESSED_LABEL, ""), "number": labels.get("incident", ""),
            "url": event.generator_url or ""}


def update_open_alerts(store: StateStore, mission: str, events: Sequence[DomainEvent]) -> int:
    """Open or close the alerts of ``events`` (those with a fingerprint), in time order; store the result.

    Each bucket the alerts fall in (:func:`alerts_key`) is changed by one compare-and-set, retried on a
    concurrent change; every open alert is kept, however many.

    Returns:
        How many alerts are open afterwards.

    Raises:
        InputError: a stored value is not readable.
        BackendUnavailable: the store cannot be written, or a bucket kept changing under other writers.
    """
    alerts = sorted((e for e in events if e.fingerprint), key=lambda e: (e.ends_at or e.time, e.id))
    if not alerts:
        return len(_stored_alerts(store, mission))
    legacy = _parse_state(mission, ALERTS_KEY, store.get_state(mission, ALERTS_KEY))
    by_bucket: dict[str, list[DomainEvent]] = {}
    for event in alerts:
        by_bucket.setdefault(alerts_key(str(event.fingerprint)), []).append(event)

    def applied(bucket: list[DomainEvent]) -> Callable[[str | None], str]:
        def with_alerts(raw: str | None) -> str:
            state = _parse_state(mission, ALERTS_KEY, raw)
            for event in bucket:
                fp = str(event.fingerprint)
                if event.state is EventState.RESOLVED:
                    state.pop(fp, None)
                else:
                    state[fp] = _entry(event, state.get(fp) or legacy.get(fp))
            return json.dumps(state, sort_keys=True)
        return with_alerts

    for key in sorted(by_bucket):
        change_state(store, mission, key, applied(by_bucket[key]), what="the open alerts")
    moved = {str(e.fingerprint) for e in alerts} & set(legacy)
    if moved:  # the one value of a store written before only shrinks: its alerts now live in their buckets

        def without_moved(raw: str | None) -> str | None:
            old = _parse_state(mission, ALERTS_KEY, raw)
            kept = {fp: entry for fp, entry in old.items() if fp not in moved}
            return json.dumps(kept, sort_keys=True) if len(kept) < len(old) else None

        change_state(store, mission, ALERTS_KEY, without_moved, what="the open alerts")
    return len(_stored_alerts(store, mission))


def alert_instance(labels: Mapping[str, str]) -> str:
    """What an alert fires on, from its labels by :data:`INSTANCE_LABELS`: the ``instance`` label as
    it is, else the most specific other label present with its name (``worker (container)``), else ""."""
    for name in INSTANCE_LABELS:
        value = str(labels.get(name) or "").strip()
        if value:
            return value if name == "instance" else f"{value} ({name})"
    return ""


def open_alerts(store: StateStore, mission: str, at: datetime | None = None) -> list[OpenAlert]:
    """The open alerts of ``mission`` (those started by ``at`` when given): firing ones first, then
    silenced ones (marked, with the operator's silences in force at ``at``, default now), each group
    most critical then newest first.

    Raises:
        InputError: the stored value is not readable.
    """
    clock = at or datetime.now(UTC)
    silences = {fp: s for fp, s in _load(store, mission, SILENCES_KEY).items() if _until(s) > clock}
    out = []
    for fp, entry in _stored_alerts(store, mission).items():
        try:
            alert = OpenAlert(
                fingerprint=fp, event_id=str(entry["event_id"]), since=as_utc(datetime.fromisoformat(entry["since"])),
                last_notified=as_utc(datetime.fromisoformat(entry["last"])), type=str(entry["type"]),
                sector=str(entry["sector"]), criticality=float(entry["criticality"]),
                runbook_url=entry.get("runbook_url") or None, text=str(entry.get("text") or ""),
                title=str(entry.get("title") or entry.get("type") or ""), instance=str(entry.get("instance") or ""),
                status=str(entry.get("status") or ""), acknowledged_by=str(entry.get("acknowledged_by") or ""),
                assignees=tuple(str(a) for a in entry.get("assignees") or ()),
                links=tuple((str(k), str(v)) for k, v in (entry.get("links") or {}).items()),
                number=str(entry.get("number") or ""), url=str(entry.get("url") or ""),
                **_silence_fields(str(entry.get("suppressed") or ""), silences.get(fp)),
            )
        except (KeyError, ValueError, TypeError, AttributeError):
            continue  # a damaged entry does not hide the others
        if at is None or alert.since <= at:
            out.append(alert)
    out.sort(key=lambda a: (bool(a.silenced), -a.criticality, -a.since.timestamp(), a.fingerprint))
    return out


def _until(silence: dict[str, Any]) -> datetime:
    try:
        return as_utc(datetime.fromisoformat(str(silence["until"])))
    except (KeyError, ValueError, TypeError):
        return datetime.min.replace(tzinfo=UTC)  # a damaged silence silences nothing


def _silence_fields(suppressed: str, silence: dict[str, Any] | None) -> dict[str, Any]:
    if silence is not None:  # the operator's silence says until when and why
        return {"silenced": str(silence.get("reason") or "silenced") + (f"; {suppressed}" if suppressed else ""),
                "silenced_until": _until(silence), "silenced_by": str(silence.get("by") or "")}
    return {"silenced": suppressed}


def _matching(alerts: Sequence[OpenAlert], alert: str) -> list[OpenAlert]:
    wanted = " ".join(alert.split())
    return [a for a in alerts if wanted in (a.fingerprint, a.event_id, a.type) or wanted == _flat(a.title)]


def _named_open(store: StateStore, mission: str, alert: str, at: datetime) -> list[OpenAlert]:
    """The open alerts ``alert`` names (:func:`_matching`), or an error naming the open ones."""
    alerts = _matching(open_alerts(store, mission, at), alert)
    if not alerts:
        names = sorted({a.type for a in open_alerts(store, mission, at)})
        raise InputError(f"no open alert of mission {mission!r} is {alert!r} (a fingerprint, event id, name or title; "
                         f"open: {', '.join(names[:20]) or 'none'})")
    return alerts


def acknowledge_alerts(store: StateStore, mission: str, alert: str, *, by: str, at: datetime) -> list[dict[str, Any]]:
    """Record that operator ``by`` acknowledged the open alerts ``alert`` names, whatever their source.

    Alertmanager and Grafana send no acknowledgement; PagerDuty and Opsgenie do, and theirs overwrite
    this one when they come. Each alert's bucket (:func:`alerts_key`) is changed by one compare-and-set
    (:func:`~mission_memory.stores.state_change.change_state`), so acknowledgements and intakes of
    several processes at once are all kept; later notifications of the alert keep the acknowledgement
    (:func:`_entry`) until the source reports a status other than acknowledged, or the alert resolves.

    Args:
        store: the state store.
        mission: the mission.
        alert: which alerts: every open alert whose fingerprint, event id, name (type) or title it equals.
        by: the operator acknowledging (a name checked by :func:`~mission_memory.fence.check_name`).
        at: now (timezone-aware).

    Returns:
        One ``{"fingerprint", "type", "title", "by", "at"}`` per acknowledged alert.

    Raises:
        InputError: no open alert matches (the message names the open ones), or a blank or bad name.
        BackendUnavailable: the store cannot be written, or a bucket kept changing under other writers.
    """
    from mission_memory.fence import check_name

    if not by.strip():
        raise InputError("acknowledging an alert needs the operator's name (--operator or MISSION_MEMORY_OPERATOR)")
    by = check_name(by.strip(), "operator")
    alerts = _named_open(store, mission, alert, at)
    legacy = _parse_state(mission, ALERTS_KEY, store.get_state(mission, ALERTS_KEY))
    by_bucket: dict[str, set[str]] = {}
    for a in alerts:
        by_bucket.setdefault(alerts_key(a.fingerprint), set()).add(a.fingerprint)

    def acked(fingerprints: set[str]) -> Callable[[str | None], str | None]:
        def with_ack(raw: str | None) -> str | None:
            state = _parse_state(mission, ALERTS_KEY, raw)
            changed = False
            for fp in sorted(fingerprints):
                entry = state.get(fp) or legacy.get(fp)
                if entry is not None and (entry.get("acknowledged_by") != by or fp not in state):
                    state[fp] = {**entry, "acknowledged_by": by}
                    changed = True
            return json.dumps(state, sort_keys=True) if changed else None
        return with_ack

    for key in sorted(by_bucket):
        change_state(store, mission, key, acked(by_bucket[key]), what="the open alerts")
    moved = {a.fingerprint for a in alerts} & set(legacy)
    if moved:  # as update_open_alerts does: the one value of a store written before only shrinks

        def without_moved(raw: str | None) -> str | None:
            old = _parse_state(mission, ALERTS_KEY, raw)
            kept = {fp: entry for fp, entry in old.items() if fp not in moved}
            return json.dumps(kept, sort_keys=True) if len(kept) < len(old) else None

        change_state(store, mission, ALERTS_KEY, without_moved, what="the open alerts")
    return [{"fingerprint": a.fingerprint, "type": a.type, "title": a.title, "by": by, "at": at.isoformat()}
            for a in alerts]


def silence_alerts(store: StateStore, mission: str, alert: str, *, until: datetime, reason: str, by: str,
                   at: datetime) -> list[dict[str, Any]]:
    """Silence the open alerts ``alert`` names (a fingerprint, an event id, an alert name or title) until ``until``.

    A silenced alert stays open and listed, marked, but is not counted as firing; the silence is kept by
    fingerprint (later notifications of the alert stay silenced) and expires by itself at ``until``.

    Args:
        store: the state store.
        mission: the mission.
        alert: which alerts: every open alert whose fingerprint, event id, name (type) or title it equals.
        until: the silence's end, after ``at`` and at most :data:`MAX_SILENCE` later.
        reason: why (required, shown with the alert).
        by: the operator silencing it.
        at: now.

    Returns:
        One ``{"fingerprint", "type", "title", "until", "reason", "by"}`` per silenced alert.

    Raises:
        InputError: no open alert matches (the message names the open ones), a blank reason, or an end
            not after ``at`` or more than :data:`MAX_SILENCE` after it.
    """
    if not reason.strip():
        raise InputError("a silence needs a reason (--reason): the next shift reads it")
    if not at < until <= at + MAX_SILENCE:
        raise InputError(f"a silence ends after now and at most {MAX_SILENCE.days} days later; got {until.isoformat()}")
    alerts = _named_open(store, mission, alert, at)
    silence = {"until": until.isoformat(), "reason": " ".join(reason.split())[:500], "by": by, "since": at.isoformat()}

    def with_silences(raw: str | None) -> str:
        silences = {fp: s for fp, s in _parse_state(mission, SILENCES_KEY, raw).items() if _until(s) > at}
        silences.update({a.fingerprint: dict(silence) for a in alerts})
        return json.dumps(silences, sort_keys=True)

    change_state(store, mission, SILENCES_KEY, with_silences, what="the silences")
    return [{"fingerprint": a.fingerprint, "type": a.type, "title": a.title, **silence} for a in alerts]


def unsilence_alerts(store: StateStore, mission: str, alert: str) -> list[dict[str, Any]]:
    """Lift the operators' silences of the alerts ``alert`` names (as :func:`silence_alerts` matches them).

    Returns:
        The silences lifted, ``{"fingerprint", "until", "reason", "by", …}`` each (none when none matched).

    Raises:
        InputError: the stored value is not readable.
    """
    matched = {a.fingerprint for a in _matching(open_alerts(store, mission, datetime.max.replace(tzinfo=UTC)), alert)}
    lifted: list[dict[str, Any]] = []

    def without(raw: str | None) -> str | None:
        silences = _parse_state(mission, SILENCES_KEY, raw)
        names = matched | ({alert.strip()} & set(silences))
        lifted[:] = [{"fingerprint": fp, **silences.pop(fp)} for fp in sorted(names) if fp in silences]
        return json.dumps(silences, sort_keys=True) if lifted else None

    change_state(store, mission, SILENCES_KEY, without, what="the silences")
    return lifted


def alert_record_ids(store: MemoryStore, mission: str, alerts: Sequence[OpenAlert]) -> dict[str, str]:
    """The stored record of each alert's latest notification, as ``{event_id: record id}`` (those stored)."""
    keys = {source_key_for(mission, RecordKind.DOMAIN_EVENT, f"event:{a.event_id}"): a.event_id for a in alerts}
    return {keys[key]: rid for key, rid in store.ids_by_source_keys(sorted(keys)).items()}
