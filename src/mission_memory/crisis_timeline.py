"""The crisis timeline: what is escalating, what cascades, and how events link (DESIGN.md §7).

A rotation in the middle of an escalation needs the dynamics, not only the state: which sectors are
flooding and whether their rate is still rising, which events caused which, and where a chain of
consequences started. This module owns that structure, as a pure function of the events and the
clock; digests and the handover brief render it as their timeline section.

The cascade rule (docs/adr/0023):

1. **Stated causes win.** An event whose ``caused_by`` names an earlier known event is linked to it
   (basis ``caused_by``).
2. **Otherwise, same sector, different type, close in time.** An event with no stated cause is linked to
   the latest earlier event of the same sector whose type differs and whose criticality is at least
   ``min_cause_criticality``, if it happened at most ``proximity`` before (basis ``sector+time``).
   Events of the same type in a sector are repetitions, not consequences.
3. Links form cascades: connected chains, each reported from its root (the earliest event without an
   incoming link) with its members in time order.

Trends compare each sector's count in the current window with the window before it: ``rising`` when
it grew by more than 20 %, ``falling`` when it shrank by more than 20 %, else ``steady``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from mission_memory.domain_events import DomainEvent
from mission_memory.escalation import EscalationState

__all__ = ["Cascade", "CascadeLink", "CrisisTimeline", "SectorTrend", "build_crisis_timeline", "link_events"]

_TREND_BAND = 0.2


@dataclass(frozen=True)
class SectorTrend:
    """One sector's rate now and one window earlier (events per window), and the trend between them."""

    sector: str
    rate: int
    previous_rate: int
    trend: str
    escalating: bool


@dataclass(frozen=True)
class CascadeLink:
    """``effect_id`` followed from ``cause_id``; ``basis`` is ``caused_by`` or ``sector+time``."""

    cause_id: str
    effect_id: str
    basis: str


@dataclass(frozen=True)
class Cascade:
    """A chain of linked events from its root, members in time order."""

    root_id: str
    event_ids: tuple[str, ...]
    sectors: tuple[str, ...]
    start: datetime
    end: datetime
    max_criticality: float


@dataclass(frozen=True)
class CrisisTimeline:
    """The timeline section's content.

    Attributes:
        at: the clock's now.
        since: when the degraded mode began (None in normal mode).
        mode, alpha, rate, window: from the escalation state.
        sectors: each sector with events in the last two windows, escalating ones first, then by rate.
        cascades: chains with at least two events, most critical and then largest first.
        links: every link found (the cascades' edges).
    """

    at: datetime
    since: datetime | None
    mode: str
    alpha: float
    rate: int
    window: timedelta
    sectors: tuple[SectorTrend, ...]
    cascades: tuple[Cascade, ...]
    links: tuple[CascadeLink, ...]

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "at": self.at.isoformat(),
            "since": self.since.isoformat() if self.since else None,
            "mode": self.mode,
            "alpha": round(self.alpha, 4),
            "rate": self.rate,
            "window_s": self.window.total_seconds(),
            "sectors": [vars(s) for s in self.sectors],
            "cascades": [
                {**vars(c), "start": c.start.isoformat(), "end": c.end.isoformat(), "event_ids": list(c.event_ids),
                 "sectors": list(c.sectors)}
                for c in self.cascades
            ],
            "links": [vars(link) for link in self.links],
        }


def link_events(
    events: Sequence[DomainEvent],
    *,
    proximity: timedelta = timedelta(minutes=5),
    min_cause_criticality: float = 0.5,
) -> list[CascadeLink]:
    """Links between events by the cascade rule (module docstring), in the effects' time order.

    Args:
        events: the events to link; order does not matter.
        proximity: how far back a same-sector cause may lie, for events with no stated cause.
        min_cause_criticality: an inferred cause must be at least this critical (routine reports
            cause nothing).
    """
    ordered = sorted(events, key=lambda e: (e.time, e.id))
    known = {e.id: e for e in ordered}
    latest_by_sector: dict[str, list[DomainEvent]] = defaultdict(list)
    links: list[CascadeLink] = []
    for event in ordered:
        stated = [c for c in event.caused_by if c in known and known[c].time <= event.time and c != event.id]
        if stated:
            links.extend(CascadeLink(c, event.id, "caused_by") for c in stated)
        elif not event.caused_by:
            for earlier in reversed(latest_by_sector[event.sector]):
                if event.time - earlier.time > proximity:
                    break
                if earlier.type != event.type and earlier.criticality >= min_cause_criticality:
                    links.append(CascadeLink(earlier.id, event.id, "sector+time"))
                    break
        latest_by_sector[event.sector].append(event)
    return links


def _cascades(events: Sequence[DomainEvent], links: Sequence[CascadeLink]) -> list[Cascade]:
    by_id = {e.id: e for e in events}
    parent: dict[str, str] = {e.id: e.id for e in events}

    def root(node: str) -> str:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for link in links:
        a, b = root(link.cause_id), root(link.effect_id)
        if a != b:
            first, second = sorted((a, b), key=lambda n: (by_id[n].time, n))
            parent[second] = first
    groups: dict[str, list[DomainEvent]] = defaultdict(list)
    for event in events:
        groups[root(event.id)].append(event)
    cascades = []
    for members in groups.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda e: (e.time, e.id))
        cascades.append(Cascade(
            root_id=members[0].id,
            event_ids=tuple(e.id for e in members),
            sectors=tuple(dict.fromkeys(e.sector for e in members)),
            start=members[0].time,
            end=members[-1].time,
            max_criticality=max(e.criticality for e in members),
        ))
    cascades.sort(key=lambda c: (-c.max_criticality, -len(c.event_ids), c.start))
    return cascades


def _trend(rate: int, previous: int) -> str:
    if rate > previous * (1 + _TREND_BAND) and rate > previous:
        return "rising"
    if rate < previous * (1 - _TREND_BAND):
        return "falling"
    return "steady"


def build_crisis_timeline(
    events: Sequence[DomainEvent],
    state: EscalationState,
    at: datetime,
    *,
    proximity: timedelta = timedelta(minutes=5),
    lookback: timedelta | None = None,
) -> CrisisTimeline:
    """The timeline at ``at`` from the events up to then.

    Args:
        events: the mission's events (later ones are ignored).
        state: the escalation state at ``at`` (its window sets the rate windows).
        at: the clock's now.
        proximity: see :func:`link_events`.
        lookback: how far back cascades are searched: from the start of the degraded mode, or by
            default two windows before it (or before ``at`` in normal mode).
    """
    window = state.window
    since = state.since if state.mode.value == "degraded" else None
    start = (since or at) - (lookback if lookback is not None else 2 * window)
    recent = [e for e in events if start <= e.time <= at]
    now_counts: dict[str, int] = defaultdict(int)
    before_counts: dict[str, int] = defaultdict(int)
    for event in events:
        if at - window < event.time <= at:
            now_counts[event.sector] += 1
        elif at - 2 * window < event.time <= at - window:
            before_counts[event.sector] += 1
    sectors = [
        SectorTrend(s, now_counts.get(s, 0), before_counts.get(s, 0), _trend(now_counts.get(s, 0), before_counts.get(s, 0)),
                    s in state.escalating_sectors)
        for s in set(now_counts) | set(before_counts)
    ]
    sectors.sort(key=lambda s: (not s.escalating, -s.rate, s.sector))
    links = link_events(recent, proximity=proximity)
    return CrisisTimeline(
        at=at, since=since, mode=state.mode.value, alpha=state.alpha, rate=state.rate, window=window,
        sectors=tuple(sectors), cascades=tuple(_cascades(recent, links)), links=tuple(links),
    )
