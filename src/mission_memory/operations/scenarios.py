"""Seeded operations scenarios with ground truth, for the degraded-mode evaluation and the operations demo.

Two kinds of mission from the paper (docs/design.md §1, §7), each a deterministic function of a seed:

* :func:`uav_scenario` — a UAV situation centre: sectors with routine reports, then an escalation in
  one sector where shelling causes electronic-warfare jamming, which causes a lost link with part of a
  swarm, in Ukrainian and English, with the causes linked by id;
* :func:`service_estate_scenario` — a service estate: a dependency graph of services, and an outage
  at one service cascading to its dependents, emitted as the Prometheus Alertmanager webhook payloads
  a real estate would post (and as the events they map to);
* :func:`loghub_scenario` — real system logs: a labelled 2k sample of the loghub project (Zhu et al.,
  "Loghub: A Large Collection of System Log Datasets", ISSRE 2023; github.com/logpai/loghub), its log
  levels mapped to criticality by :data:`LOG_LEVEL_CRITICALITY` (docs/adr/0041).

Each :class:`Scenario` carries its ground truth: the flood intervals (where the true event rate per
window exceeds capacity), the critical events (criticality ≥ 0.8) and the cascade links, and a few
operator questions asked during the flood whose wording is unrelated to the critical events — what
similarity-only ranking misses and triage must not.
"""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from mission_memory.errors import InputError
from mission_memory.operations.domain_events import DomainEvent
from mission_memory.operations.escalation import CRITICAL_CRITICALITY, FloodPolicy
from mission_memory.operations.sources.alertmanager import events_from_alertmanager

__all__ = [
    "CRITICAL",
    "LOGHUB_DATASETS",
    "LOG_LEVEL_CRITICALITY",
    "Scenario",
    "loghub_scenario",
    "service_estate_scenario",
    "uav_scenario",
]

CRITICAL = CRITICAL_CRITICALITY
"""Events at or above this criticality are the ones triage must never drop
(:data:`~mission_memory.operations.escalation.CRITICAL_CRITICALITY`, the operations policy's)."""
_POLICY = FloodPolicy()
"""The default flood policy: the ground truth's thresholds per 10 minutes (ISA-18.2 defaults)."""

_START = datetime(2026, 3, 1, 6, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Scenario:
    """A generated mission timeline with its ground truth.

    Attributes:
        mission: the mission name its records are filed under.
        kind: ``uav`` or ``service-estate``.
        events: the event stream in arrival order (for the service estate a resolved notification
            follows its firing one under the same id: storing it replaces the firing event).
        floods: ``(start, end)`` of each flood: from the event that puts the window's count above
            capacity to the moment the window's count falls below the release level (events leave
            the window one window length after they happened).
        critical_ids: ids of events with criticality ≥ :data:`CRITICAL`.
        cascades: ``(cause id, effect id)`` links.
        questions: ``(time, question)`` an operator asks during the scenario.
        webhooks: for the service estate, the Alertmanager payloads in posting order (empty otherwise).
    """

    mission: str
    kind: str
    events: tuple[DomainEvent, ...]
    floods: tuple[tuple[datetime, datetime], ...]
    critical_ids: frozenset[str]
    cascades: tuple[tuple[str, str], ...]
    questions: tuple[tuple[datetime, str], ...]
    webhooks: tuple[dict[str, Any], ...] = field(default=())


_ROUTINE_UK = (
    ("recon", "Розвідка: рух техніки не виявлено, спостереження триває.", 0.15),
    ("status", "Пост {n}: зв'язок стабільний, заряд акумуляторів {p}%.", 0.1),
    ("logistics", "Доставлено {n} комплектів батарей для БпЛА.", 0.2),
    ("weather", "Вітер {n} м/с, видимість добра, польоти дозволено.", 0.1),
)
_ROUTINE_EN = (
    ("recon", "Recon: no vehicle movement detected, observation continues.", 0.15),
    ("status", "Post {n}: link stable, battery at {p}%.", 0.1),
    ("maintenance", "Drone {n} returned for propeller replacement.", 0.25),
)
_ESCALATION = (
    ("shelling", 0.9, "Обстріл позиції {n} у секторі {s}, є поранені.", "Shelling of position {n} in sector {s}, casualties reported."),
    ("ew_jamming", 0.7, "Придушення GPS на частоті 1575 МГц у секторі {s}.", "GPS jamming on 1575 MHz in sector {s}."),
    ("lost_link", 0.85, "Втрачено зв'язок з {n} із 8 дронів рою {r}.", "Lost link with {n} of 8 drones of swarm {r}."),
    ("artillery_spotted", 0.6, "Виявлено позицію артилерії противника, сектор {s}.", "Enemy artillery position spotted in sector {s}."),
)


def _flood_intervals(events: Sequence[DomainEvent], window: timedelta, capacity: float, release: float) -> tuple[tuple[datetime, datetime], ...]:
    """Ground truth floods: the same hysteresis as :mod:`mission_memory.operations.escalation`, in continuous time.

    The count of the window ``(t − window, t]`` changes only when an event arrives (a flood can
    start then) or when one leaves the window (it can end then), so both kinds of moment are
    examined: a flood starts at the arrival that takes the count above ``capacity`` and ends at the
    first moment after it that the count is below ``release``. One event per id (the store keeps one).
    """
    times = sorted({e.id: e.time for e in events}.values())
    moments = sorted({*times, *(t + window for t in times)})
    floods: list[tuple[datetime, datetime]] = []
    start: datetime | None = None
    left = right = 0
    for now in moments:
        while right < len(times) and times[right] <= now:
            right += 1
        while left < right and times[left] <= now - window:
            left += 1
        count = right - left
        if start is None and count > capacity:
            start = now
        elif start is not None and count < release:
            floods.append((start, now))
            start = None
    if start is not None:
        floods.append((start, moments[-1]))
    return tuple(floods)


def uav_scenario(
    seed: int = 0,
    *,
    sectors: Sequence[str] = ("Північ", "Схід", "Південь"),
    hours: float = 6.0,
    flood_sector: str | None = None,
    flood_after: timedelta = timedelta(hours=2),
    flood_length: timedelta = timedelta(minutes=40),
    flood_rate_per_10min: int = 35,
    capacity: float = _POLICY.capacity,
    release: float = _POLICY.release,
) -> Scenario:
    """A UAV situation centre's shift: routine reports, then an escalation cascade in one sector.

    Args:
        seed: the random seed; the same seed gives the same scenario.
        sectors: the sectors watched.
        hours: the scenario's length.
        flood_sector: where the escalation happens (default: the first sector).
        flood_after: when it starts, from the scenario's start (06:00 UTC, 1 March 2026).
        flood_length: how long the burst lasts.
        flood_rate_per_10min: events per 10 minutes during the burst (all sectors).
        capacity, release: flood thresholds per 10 minutes for the ground truth (ISA-18.2 defaults).
    """
    rng = random.Random(seed)
    sector_x = flood_sector or sectors[0]
    events: list[DomainEvent] = []
    cascades: list[tuple[str, str]] = []
    end = _START + timedelta(hours=hours)
    moment = _START
    n = 0
    while True:  # routine background: about two reports per 10 minutes across the sectors
        moment += timedelta(seconds=rng.expovariate(1 / 300))
        if moment >= end:
            break
        n += 1
        if rng.random() < 0.6:
            kind, text, crit = rng.choice(_ROUTINE_UK)
        else:
            kind, text, crit = rng.choice(_ROUTINE_EN)
        events.append(DomainEvent(
            id=f"uav-{seed}-{n:05d}", time=moment, sector=rng.choice(list(sectors)), type=kind,
            criticality=crit, source=f"post-{rng.randint(1, 12)}",
            text=text.format(n=rng.randint(1, 40), p=rng.randint(20, 100)),
        ))
    burst_start = _START + flood_after
    gap = timedelta(minutes=10) / flood_rate_per_10min
    chain: dict[str, str] = {}
    t = burst_start
    while t < burst_start + flood_length:
        n += 1
        kind, crit, uk, en = rng.choices(_ESCALATION, weights=(3, 3, 2, 2))[0]
        language_uk = rng.random() < 0.5
        event_id = f"uav-{seed}-{n:05d}"
        cause = {"ew_jamming": chain.get("shelling"), "lost_link": chain.get("ew_jamming")}.get(kind)
        events.append(DomainEvent(
            id=event_id, time=t, sector=sector_x, type=kind, criticality=crit,
            source=rng.choice(("post-3", "sensor-ew-2", "uav-ops")),
            text=(uk if language_uk else en).format(n=rng.randint(1, 7), s=sector_x, r=rng.choice("ABC")),
            caused_by=(cause,) if cause else (), unit=f"рій {rng.choice('ABC')}" if kind == "lost_link" else None,
        ))
        if cause:
            cascades.append((cause, event_id))
        chain[kind] = event_id
        t += gap * rng.uniform(0.6, 1.4)
    events.sort(key=lambda e: (e.time, e.id))
    floods = _flood_intervals(events, timedelta(minutes=10), capacity, release)
    middle = burst_start + flood_length / 2
    questions = (
        (middle, "Яка погода для польотів і чи доставлені батареї?"),
        (middle, "Which drones are due for maintenance today?"),
        (middle + timedelta(minutes=5), "Summarise the recon reports from the southern posts."),
    )
    return Scenario(
        mission=f"uav-centre-{seed}", kind="uav", events=tuple(events), floods=floods,
        critical_ids=frozenset(e.id for e in events if e.criticality >= CRITICAL),
        cascades=tuple(cascades), questions=questions,
    )


# service -> the services it depends on
_ESTATE: dict[str, tuple[str, ...]] = {
    "postgres": (),
    "redis": (),
    "auth": ("postgres", "redis"),
    "catalog": ("postgres",),
    "payments": ("postgres", "auth"),
    "api-gateway": ("auth", "catalog"),
    "checkout": ("api-gateway", "payments"),
    "notifications": ("redis",),
}


def _dependents(root: str) -> list[tuple[str, str, int]]:
    """``(service, the service it depends on that failed first, depth)`` breadth-first from ``root``."""
    order: list[tuple[str, str, int]] = []
    frontier = [(root, 0)]
    seen = {root}
    while frontier:
        current, depth = frontier.pop(0)
        for service, needs in _ESTATE.items():
            if current in needs and service not in seen:
                seen.add(service)
                order.append((service, current, depth + 1))
                frontier.append((service, depth + 1))
    return order


def _alert(status: str, name: str, service: str, severity: str, summary: str, starts: datetime,
           ends: datetime | None, fingerprint: str) -> dict[str, Any]:
    return {
        "status": status,
        "labels": {"alertname": name, "service": service, "severity": severity, "namespace": "prod"},
        "annotations": {"summary": summary},
        "startsAt": starts.isoformat().replace("+00:00", "Z"),
        "endsAt": ends.isoformat().replace("+00:00", "Z") if ends else "0001-01-01T00:00:00Z",
        "generatorURL": f"http://prometheus.internal/graph?g0.expr={name}",
        "fingerprint": fingerprint,
    }


def service_estate_scenario(
    seed: int = 0,
    *,
    root: str = "postgres",
    hours: float = 4.0,
    outage_after: timedelta = timedelta(hours=1, minutes=30),
    outage_length: timedelta = timedelta(minutes=45),
    capacity: float = _POLICY.capacity,
    release: float = _POLICY.release,
) -> Scenario:
    """A service estate: low-rate warnings, then an outage of ``root`` cascading to its dependents.

    The outage fires ``ServiceDown`` at the root, then ``HighErrorRate`` and ``HighLatency`` at each
    dependent in breadth-first order with small delays, re-notified while it lasts (Alertmanager's
    ``repeat_interval`` behaviour, here every 2–4 minutes per alert group with per-instance alerts),
    and resolves everything at the end. Payloads are grouped as Alertmanager would post them.
    """
    rng = random.Random(seed)
    webhooks: list[tuple[datetime, dict[str, Any]]] = []
    end = _START + timedelta(hours=hours)
    t = _START
    n = 0
    while True:  # background: a warning about every 15 minutes somewhere
        t += timedelta(seconds=rng.expovariate(1 / 900))
        if t >= end:
            break
        n += 1
        service = rng.choice(list(_ESTATE))
        name = rng.choice(("DiskUsageHigh", "CertificateExpiresSoon", "PodRestarted"))
        alert = _alert("firing", name, service, rng.choice(("warning", "info")), f"{name} on {service}", t, None,
                       f"bg{seed:02d}{n:06d}")
        webhooks.append((t, {"version": "4", "status": "firing", "receiver": "mission-memory", "alerts": [alert]}))
    start = _START + outage_after
    cascades: list[tuple[str, str]] = []
    root_fp = f"root{seed:02d}{root}"
    root_alert = _alert("firing", "ServiceDown", root, "critical", f"{root} is down: connection refused on :5432",
                        start, None, root_fp)
    firing: list[tuple[datetime, dict[str, Any], str | None]] = [(start, root_alert, None)]
    first_id = {root: f"{root_fp}@{root_alert['startsAt']}"}
    for service, cause, depth in _dependents(root):
        at = start + timedelta(seconds=45 * depth + rng.randint(5, 40))
        for name, severity, summary in (
            ("HighErrorRate", "critical", f"{service} 5xx above 20% (upstream {cause} failing)"),
            ("HighLatency", "warning", f"{service} p99 latency above 2 s"),
        ):
            fingerprint = f"{name.lower()}{seed:02d}{service}"
            alert = _alert("firing", name, service, severity, summary, at, None, fingerprint)
            firing.append((at, alert, first_id[cause]))
            first_id.setdefault(service, f"{fingerprint}@{alert['startsAt']}")
            if name == "HighErrorRate":
                cascades.append((first_id[cause], f"{fingerprint}@{alert['startsAt']}"))
    outage_end = start + outage_length
    for at, alert, _ in firing:  # notifications and re-notifications of per-instance alerts while it lasts
        notify = at
        instance = 0
        while notify < outage_end:
            fingerprint = alert["fingerprint"] if instance == 0 else f"{alert['fingerprint']}i{instance}"
            copy = dict(alert, fingerprint=fingerprint, startsAt=notify.isoformat().replace("+00:00", "Z"))
            webhooks.append((notify, {"version": "4", "status": "firing", "receiver": "mission-memory", "alerts": [copy]}))
            notify += timedelta(seconds=rng.randint(120, 240))
            instance += 1
    for _, alert, _ in firing:
        closed = outage_end + timedelta(seconds=rng.randint(30, 300))
        resolved = dict(alert, status="resolved", endsAt=closed.isoformat().replace("+00:00", "Z"))
        webhooks.append((closed, {"version": "4", "status": "resolved", "receiver": "mission-memory", "alerts": [resolved]}))
    webhooks.sort(key=lambda item: item[0])
    causes = {effect: cause for cause, effect in cascades}
    stream = [
        e.model_copy(update={"caused_by": (causes[e.id],)}) if e.id in causes else e
        for _, payload in webhooks
        for e in events_from_alertmanager(payload)
    ]
    firing_events = [e for e in stream if e.state.value == "firing"]
    # A resolved notification replaces its firing event and keeps its start time (docs/adr/0057): an all-clear
    # adds nothing to the count, as the store keeps it.
    floods = _flood_intervals(stream, timedelta(minutes=10), capacity, release)
    middle = start + outage_length / 2
    questions = (
        (middle, "When does the TLS certificate of the notifications service expire?"),
        (middle, "Why did the catalog pods restart yesterday?"),
    )
    return Scenario(
        mission=f"service-estate-{seed}", kind="service-estate", events=tuple(stream), floods=floods,
        critical_ids=frozenset(e.id for e in firing_events if e.criticality >= CRITICAL),
        cascades=tuple(cascades), questions=questions, webhooks=tuple(p for _, p in webhooks),
    )


LOG_LEVEL_CRITICALITY: Mapping[str, float] = {
    "fatal": 0.95, "severe": 0.9, "critical": 0.9, "failure": 0.9, "error": 0.8,
    "warn": 0.5, "warning": 0.5, "notice": 0.3, "info": 0.2, "debug": 0.1, "trace": 0.1,
}
"""Log level -> criticality (docs/adr/0041): the syslog severities (RFC 5424) in order, with the two the
issue's triage must never drop — FATAL/SEVERE/CRITICAL (the process or node is lost) and ERROR (an
operation failed) — at or above :data:`CRITICAL`, WARN in the middle, INFO and below as routine."""


def _sector_of(dataset: str, row: Mapping[str, str]) -> str:
    if dataset == "BGL":  # a Blue Gene/L midplane, R02-M1 of R02-M1-N0-C:J12-U11
        return "-".join(row.get("Node", "").split("-")[:2]) or "unknown"
    if dataset == "Zookeeper":  # the quorum peer, QuorumPeer[myid=1] of QuorumPeer[myid=1]/0
        return row.get("Node", "").split("/")[0] or "unknown"
    component = row.get("Component", "") or "unknown"
    return component.rsplit(".", 1)[-1].rsplit(":", 1)[-1] or component


def _time_of(dataset: str, row: Mapping[str, str]) -> datetime:
    if dataset == "BGL":
        return datetime.fromtimestamp(int(row["Timestamp"]), UTC)
    if dataset == "HDFS":  # Date 081109, Time 203615
        return datetime.strptime(row["Date"] + row["Time"].zfill(6), "%y%m%d%H%M%S").replace(tzinfo=UTC)
    clock = row["Time"].replace(",", ".")
    return datetime.fromisoformat(f"{row['Date']}T{clock}").replace(tzinfo=UTC)


LOGHUB_DATASETS: Mapping[str, tuple[str, str]] = {
    "Zookeeper": ("Zookeeper/Zookeeper_2k.log_structured.csv", "When was the last snapshot of the data tree written?"),
    "BGL": ("BGL/BGL_2k.log_structured.csv", "How many instruction cache parity errors were corrected on the node cards?"),
    "Hadoop": ("Hadoop/Hadoop_2k.log_structured.csv", "Which containers were assigned to the reduce tasks?"),
    "HDFS": ("HDFS/HDFS_2k.log_structured.csv", "Which blocks were added to the namesystem?"),
    "OpenStack": ("OpenStack/OpenStack_2k.log_structured.csv", "How long did the image cache scan take?"),
}
"""Supported loghub samples: their path in the loghub repository, and an operator question worded
unlike their errors (what similarity-only ranking answers while the errors pile up)."""


def loghub_scenario(
    dataset: str,
    structured_csv: str,
    *,
    limit: int | None = None,
    capacity: float = _POLICY.capacity,
    release: float = _POLICY.release,
) -> Scenario:
    """Events from a loghub ``*_2k.log_structured.csv`` sample, with flood ground truth and questions.

    Each line becomes an event: id ``<dataset>-<LineId>``, its timestamp (UTC), sector the node or
    component (BGL: the midplane; Zookeeper: the quorum peer; others: the logging class), type the
    template id (``EventId``: repetitions of one template are one type), criticality from the
    ``Level`` column by :data:`LOG_LEVEL_CRITICALITY` (0.5 when absent or unknown), text the message.
    Questions: the dataset's question, asked in the middle of each of its three longest floods.

    Args:
        dataset: a key of :data:`LOGHUB_DATASETS`.
        structured_csv: the CSV's text.
        limit: read at most this many lines (None: all).
        capacity, release: flood thresholds per 10 minutes for the ground truth.

    Raises:
        InputError: an unknown dataset, or a CSV without the columns the dataset needs (named).
    """
    if dataset not in LOGHUB_DATASETS:
        raise InputError(f"loghub dataset {dataset!r} is not supported (supported: {', '.join(LOGHUB_DATASETS)})")
    rows = list(csv.DictReader(io.StringIO(structured_csv)))
    if limit is not None:
        rows = rows[:limit]
    events = []
    for row in rows:
        try:
            level = (row.get("Level") or "").strip().lower()
            events.append(DomainEvent(
                id=f"{dataset}-{row['LineId']}", time=_time_of(dataset, row), sector=_sector_of(dataset, row),
                type=row.get("EventId") or "log", criticality=LOG_LEVEL_CRITICALITY.get(level, 0.5),
                source=f"loghub/{dataset}", text=(row.get("Content") or "").strip() or "(empty log line)",
            ))
        except (KeyError, ValueError) as exc:
            raise InputError(f"loghub {dataset} line {row.get('LineId', '?')}: cannot read {exc}") from None
    events.sort(key=lambda e: (e.time, e.id))
    floods = _flood_intervals(events, timedelta(minutes=10), capacity, release)
    longest = sorted(floods, key=lambda f: f[1] - f[0], reverse=True)[:3]
    question = LOGHUB_DATASETS[dataset][1]
    return Scenario(
        mission=f"loghub-{dataset.lower()}", kind="loghub", events=tuple(events), floods=floods,
        critical_ids=frozenset(e.id for e in events if e.criticality >= CRITICAL),
        cascades=(), questions=tuple(sorted((start + (end - start) / 2, question) for start, end in longest)),
    )
