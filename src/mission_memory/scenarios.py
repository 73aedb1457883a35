"""Seeded operations scenarios with ground truth, for the degraded-mode evaluation and the operations demo.

Two kinds of mission from the paper (DESIGN.md §1, §7), each a deterministic function of a seed:

* :func:`uav_scenario` — a UAV situation centre: sectors with routine reports, then an escalation in
  one sector where shelling causes electronic-warfare jamming, which causes a lost link with part of a
  swarm, in Ukrainian and English, with the causes linked by id;
* :func:`service_estate_scenario` — a service estate: a dependency graph of services, and an outage
  at one service cascading to its dependents, emitted as the Prometheus Alertmanager webhook payloads
  a real estate would post (and as the events they map to).

Each :class:`Scenario` carries its ground truth: the flood intervals (where the true event rate per
window exceeds capacity), the critical events (criticality ≥ 0.8) and the cascade links, and a few
operator questions asked during the flood whose wording is unrelated to the critical events — what
similarity-only ranking misses and triage must not.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from mission_memory.domain_events import DomainEvent, events_from_alertmanager

__all__ = ["CRITICAL", "Scenario", "service_estate_scenario", "uav_scenario"]

CRITICAL = 0.8
"""Events at or above this criticality are the ones triage must never drop (the issue's threshold)."""

_START = datetime(2026, 3, 1, 6, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Scenario:
    """A generated mission timeline with its ground truth.

    Attributes:
        mission: the mission name its records are filed under.
        kind: ``uav`` or ``service-estate``.
        events: the event stream in arrival order (for the service estate a resolved notification
            follows its firing one under the same id: storing it replaces the firing event).
        floods: ``(start, end)`` of each flood: from the first event that puts the window's count above
            capacity to the time its window count last exceeds the release level.
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
    """Ground truth floods: the same hysteresis as :mod:`mission_memory.escalation`, evaluated at each event."""
    times = sorted(e.time for e in events)
    floods: list[tuple[datetime, datetime]] = []
    start: datetime | None = None
    last_high: datetime | None = None
    left = 0
    for right, now in enumerate(times):
        while times[left] <= now - window:
            left += 1
        count = right - left + 1
        if start is None and count > capacity:
            start, last_high = now, now
        elif start is not None:
            if count >= release:
                last_high = now
            else:
                floods.append((start, last_high or start))
                start = None
    if start is not None:
        floods.append((start, last_high or start))
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
    capacity: float = 10.0,
    release: float = 5.0,
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
    capacity: float = 10.0,
    release: float = 5.0,
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
            fingerprint = f"{name[:4].lower()}{seed:02d}{service}"
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
    floods = _flood_intervals(firing_events, timedelta(minutes=10), capacity, release)
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
