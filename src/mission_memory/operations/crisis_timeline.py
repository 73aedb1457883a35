"""The crisis timeline: what is escalating, what cascades, and how events link (docs/design.md §7).

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

:func:`link_events` applies the rule to events; :func:`crisis_report` applies it to *kinds* of events
(:func:`link_kinds`, docs/adr/0095): every kind of the period, counted in the store over all its events,
is one node, dated at its first event and seen until its last, so a flood of repeats is one link of a
chain, no chain is longer than the number of distinct kinds, and nothing of the period is left unread.

Trends compare each sector's count in the current window with the window before it: ``rising`` when
it grew by more than 20 %, ``falling`` when it shrank by more than 20 %, else ``steady``.

:func:`crisis_report` reads what the section needs from the store (the kinds of events since the escalation
began, or two windows back; the decisions recorded since then and who took them; the open
questions), :func:`render_timeline` writes it within a token budget, dropping detail before
whole parts, and :func:`~mission_memory.retrieval.timeline_section.timeline_section` and :func:`crisis_brief_entries` hand it to the digest (a
section ahead of the layers, holding the event entries) and to the rotation brief (its first
section while the mission is degraded). Everything the timeline quotes from events and decisions is
untrusted: the digest fences it like any entry (docs/adr/0021), the brief fences every item.
docs/adr/0040 records the section's content, order and budget.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from mission_memory.decisions import DecisionAttributes
from mission_memory.errors import InputError, counted
from mission_memory.operations.alert_state import OpenAlert, firing_only, open_alerts
from mission_memory.operations.domain_events import DomainEvent, EventState, event_from_record
from mission_memory.operations.escalation import CRITICAL_CRITICALITY, EscalationMode, EscalationState
from mission_memory.operations.escalation_state import current_state
from mission_memory.operations.event_groups import event_kinds, kind_members
from mission_memory.operations.incident_state import (
    Incident,
    contingency_lines,
    incident_head,
    incident_open_at,
    next_update_line,
)
from mission_memory.records import Layer, Record, RecordKind, source_key_for
from mission_memory.stores.base import EventKind, MemoryStore
from mission_memory.stores.filters import SearchFilter
from mission_memory.tokens import Tokenizer

__all__ = [
    "CRITICAL_EVENT",
    "TIMELINE_SHARE",
    "TIMELINE_TITLE",
    "Cascade",
    "CascadeLink",
    "CrisisReport",
    "CrisisTimeline",
    "SectorTrend",
    "TimelineNote",
    "build_crisis_timeline",
    "crisis_brief_entries",
    "crisis_report",
    "link_events",
    "render_timeline",
]

TIMELINE_TITLE = "Crisis timeline"
"""The heading of the timeline section in digests and in the rotation brief."""

TIMELINE_SHARE = 0.5
"""Largest share of a digest's token budget the timeline's summary may take (the events' entries follow
within the rest); at most :data:`mission_memory.retrieval.timeline_section.MAX_TIMELINE_TOKENS`."""

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
    """A chain of linked events from its root, members in time order; ``start`` is its first event, ``end``
    its last (a kind's node counts to the kind's last event, not its first)."""

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


def link_kinds(
    nodes: Sequence[tuple[EventKind, DomainEvent]],
    *,
    proximity: timedelta = timedelta(minutes=5),
    min_cause_criticality: float = 0.5,
) -> list[CascadeLink]:
    """Links between kinds of events by the cascade rule (module docstring), each kind one node.

    A kind is a node whatever its count (docs/adr/0095): it appears at its first event and stays seen
    until its last, so a chain holds at most as many nodes as there are distinct kinds. A kind with no
    stated cause is linked to the kind of the same sector, another type and at least
    ``min_cause_criticality`` (its highest) that was seen last before it appeared (its last event, or
    the moment it appeared if that kind was still logging then), if at most ``proximity`` before.

    Args:
        nodes: each kind with its node event: the kind's best event with the time of the kind's first
            event, its highest criticality, and its stated causes written as the node ids of their kinds.
        proximity, min_cause_criticality: as :func:`link_events`.

    Returns:
        The links, cause and effect named by node ids, in the effects' order of appearance.
    """
    ordered = sorted(nodes, key=lambda n: (n[1].time, n[1].id))
    known = {e.id: e for _, e in ordered}
    by_sector: dict[str, list[tuple[EventKind, DomainEvent]]] = defaultdict(list)
    links: list[CascadeLink] = []
    for kind, event in ordered:
        stated = [c for c in event.caused_by if c in known and known[c].time <= event.time and c != event.id]
        if stated:
            links.extend(CascadeLink(c, event.id, "caused_by") for c in dict.fromkeys(stated))
        elif not event.caused_by:
            best: tuple[datetime, datetime, str] | None = None
            for earlier_kind, earlier in by_sector[event.sector]:
                seen = min(earlier_kind.last_seen, event.time)
                if (earlier.type == event.type or earlier.criticality < min_cause_criticality
                        or event.time - seen > proximity):
                    continue
                best = max(best or (seen, earlier.time, earlier.id), (seen, earlier.time, earlier.id))
            if best is not None:
                links.append(CascadeLink(best[2], event.id, "sector+time"))
        by_sector[event.sector].append((kind, event))
    return links


def _cascades(events: Sequence[DomainEvent], links: Sequence[CascadeLink],
              last_seen: Mapping[str, datetime] | None = None) -> list[Cascade]:
    """Connected chains of ``events`` by ``links``; a node standing for a kind ends at its kind's last event
    (``last_seen`` by node id), so a chain's span runs to the last event of its kinds."""
    last_seen = last_seen or {}
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
            end=max(max(last_seen.get(e.id, e.time), e.time) for e in members),
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


# -- reading and rendering the timeline section -------------------------------------------------------


@dataclass(frozen=True)
class TimelineNote:
    """A decision or an open question the timeline lists.

    Attributes:
        time: when it was recorded.
        text: its title, on one line (untrusted: rendered inside the fence).
        by: who took the decision (``decided_by``, the ADR's deciders, or the record's operator), "" if unknown.
        ref: its provenance reference.
        record_id: the record's id.
    """

    time: datetime
    text: str
    by: str
    ref: str
    record_id: str


@dataclass(frozen=True)
class CrisisReport:
    """Everything the timeline section shows for one mission at one moment.

    Attributes:
        mission: the mission.
        timeline: sectors, cascades and links (:func:`build_crisis_timeline`).
        events: one node event per kind of the period (its best event, dated at the kind's first event,
            at its highest criticality; :func:`link_kinds`), by event id.
        record_ids: the record id of each node's best event.
        start: the start of the period read (the escalation's start minus two windows, or two
            windows before ``at`` in normal mode).
        decided_since: where decisions are read from: one window before the degraded mode began (the
            window whose count crossed capacity), or ``start`` in normal mode.
        decisions: decisions recorded since then, oldest first.
        open_questions: proposed decisions and unanswered tracker comments of the mission, newest first.
        firing: the alerts open at ``at`` (fired, not resolved), whenever they started (docs/adr/0057); silenced
            ones left out (not firing; ``events firing`` and the brief list them, marked).
        critical: every kind of critical event of the window (criticality ≥
            :data:`~mission_memory.operations.escalation.CRITICAL_CRITICALITY`, not resolved), counted in the
            store over all its events, with its best event; most critical, then latest first (docs/adr/0088).
        incident: the mission's stored incident when open at ``at`` (docs/adr/0095): the timeline's second
            line gives its status, commander, next update and contingencies.
    """

    mission: str
    timeline: CrisisTimeline
    events: Mapping[str, DomainEvent]
    record_ids: Mapping[str, str]
    start: datetime
    decided_since: datetime | None = None
    decisions: tuple[TimelineNote, ...] = ()
    open_questions: tuple[TimelineNote, ...] = ()
    firing: tuple[OpenAlert, ...] = ()
    critical: tuple[tuple[EventKind, DomainEvent], ...] = ()
    incident: Incident | None = None
    kinds: Mapping[str, EventKind] = field(default_factory=dict)
    """The kind of each node event, by event id (its count and last time for the chain's lines)."""

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form: the timeline, the decisions and open questions."""
        def note(n: TimelineNote) -> dict[str, Any]:
            return {"time": n.time.isoformat(), "text": n.text, "by": n.by, "ref": n.ref, "record_id": n.record_id}

        return {
            "mission": self.mission, "start": self.start.isoformat(),
            **self.timeline.to_json(),
            "decisions": [note(n) for n in self.decisions],
            "open_questions": [note(n) for n in self.open_questions],
        }


def _decider(record: Record) -> str:
    return DecisionAttributes.read(record.attributes).decider or record.operator or ""


def crisis_report(
    store: MemoryStore,
    mission: str,
    state: EscalationState,
    at: datetime,
    *,
    proximity: timedelta = timedelta(minutes=5),
) -> CrisisReport:
    """Read the timeline of ``mission`` at ``at`` from ``store``.

    Args:
        store: where the events, decisions and open questions are.
        mission: the mission.
        state: its escalation state at ``at`` (its ``since`` sets where the escalation began).
        at: the clock's now (timezone-aware).
        proximity: the cascade rule's proximity (docs/adr/0023).

    Raises:
        InputError: ``at`` is naive.
        BackendUnavailable: the store cannot be read.
    """
    if at.tzinfo is None:
        raise InputError("the timeline clock must be timezone-aware")
    degraded = state.mode is EscalationMode.DEGRADED and state.since is not None
    began = state.since if degraded and state.since is not None else at
    start = min(began, at) - 2 * state.window
    # every kind of the period, exact, from the store: one node per kind, whatever its count (docs/adr/0095)
    period = SearchFilter((Layer.DOMAIN,), mission=mission, since=start, until=at)
    nodes = _kind_nodes(store, mission, event_kinds(store, period))
    events = {e.id: e for _, e in nodes}
    record_ids = {e.id: k.best_id for k, e in nodes}
    sectors = _exact_sectors(store, mission, state, at)
    links = link_kinds(nodes, proximity=proximity)
    timeline = CrisisTimeline(
        at=at, since=state.since if degraded else None, mode=state.mode.value, alpha=state.alpha, rate=state.rate,
        window=state.window, sectors=sectors, cascades=tuple(_cascades(list(events.values()), links, {e.id: k.last_seen for k, e in nodes})),
        links=tuple(links))
    critical = _critical_kinds(store, mission, state, at)
    # The escalation began with the window whose count crossed capacity, one window before the switch.
    decided_since = began - state.window if degraded else start
    decisions = [
        TimelineNote(r.provenance.time, " ".join(r.title.split()), _decider(r), r.provenance.ref, r.id)
        for r in store.records_of_kind([RecordKind.DECISION.value], mission=mission, since=decided_since,
                                       until=at + timedelta(microseconds=1), limit=50)
        if (DecisionAttributes.read(r.attributes).status or "").lower() != "proposed"
    ]
    questions = [
        TimelineNote(r.provenance.time, " ".join(r.title.split()), _decider(r), r.provenance.ref, r.id)
        for r in store.records_of_kind([RecordKind.DECISION.value], mission=mission,
                                       until=at + timedelta(microseconds=1), limit=200)
        if (DecisionAttributes.read(r.attributes).status or "").lower() == "proposed"
    ][:10]
    questions += [
        TimelineNote(r.provenance.time, " ".join(r.text.split())[:300], str(r.attributes.get("author") or ""),
                     r.provenance.uri, r.id)
        for r in store.records_of_kind([RecordKind.COMMENT.value], mission=mission, since=decided_since,
                                       until=at + timedelta(microseconds=1), limit=200)
        if r.attributes.get("answered") is False
    ][:10]
    return CrisisReport(
        mission=mission, timeline=timeline, events=events, record_ids=record_ids, start=start, decided_since=decided_since,
        decisions=tuple(sorted(decisions, key=lambda n: (n.time, n.ref))), open_questions=tuple(questions),
        firing=tuple(firing_only(open_alerts(store, mission, at))), critical=critical, kinds={e.id: k for k, e in nodes},
        incident=incident_open_at(store, mission, at),
    )


def _kind_nodes(store: MemoryStore, mission: str,
                kinds: Sequence[EventKind]) -> list[tuple[EventKind, DomainEvent]]:
    """Each kind with its node event (:func:`link_kinds`): its best event read from the store, dated at the
    kind's first event, at the kind's highest criticality, its stated causes written as their kinds' nodes."""
    records = store.get([k.best_id for k in kinds])
    best: list[tuple[EventKind, DomainEvent]] = []
    for kind in kinds:
        record = records.get(kind.best_id)
        if record is None:
            continue
        try:
            best.append((kind, event_from_record(record)))
        except InputError:
            continue  # a damaged record does not hide the rest of the timeline
    node_of_key = {k.key: e.id for k, e in best}
    causes = sorted({c for _, e in best for c in e.caused_by})
    slots = store.ids_by_source_keys([source_key_for(mission, RecordKind.DOMAIN_EVENT, f"event:{c}") for c in causes])
    cause_records = store.get(list(slots.values()))
    node_of_cause: dict[str, str] = {}
    for cause in causes:
        record = cause_records.get(slots.get(source_key_for(mission, RecordKind.DOMAIN_EVENT, f"event:{cause}"), ""))
        stored = record.attributes.get("kind_key") if record is not None else None
        key = stored if isinstance(stored, str) and stored else f"record:{record.id}" if record is not None else None
        if key is not None and key in node_of_key:
            node_of_cause[cause] = node_of_key[key]
    return [(kind, event.model_copy(update={
        "time": kind.first_seen, "criticality": kind.max_criticality,
        "caused_by": tuple(c for c in dict.fromkeys(node_of_cause.get(c, c) for c in event.caused_by) if c != event.id)}))
        for kind, event in best]


def _exact_sectors(store: MemoryStore, mission: str, state: EscalationState, at: datetime) -> tuple[SectorTrend, ...]:
    """Each sector's events in this window and the one before, counted in the store, with its trend."""
    kinds = [RecordKind.DOMAIN_EVENT.value]
    now = store.count_by_component(kinds, mission=mission, after=at - state.window, through=at)
    before = store.count_by_component(kinds, mission=mission, after=at - 2 * state.window, through=at - state.window)
    sectors = [SectorTrend(s, now.get(s, 0), before.get(s, 0), _trend(now.get(s, 0), before.get(s, 0)),
                           s in state.escalating_sectors) for s in set(now) | set(before)]
    return tuple(sorted(sectors, key=lambda s: (not s.escalating, -s.rate, s.sector)))


def _critical_kinds(store: MemoryStore, mission: str, state: EscalationState,
                    at: datetime) -> tuple[tuple[EventKind, DomainEvent], ...]:
    """Every kind of critical event of the window ending at ``at``, exact, each with its best event."""
    where = SearchFilter((Layer.DOMAIN,), mission=mission, min_criticality=CRITICAL_CRITICALITY,
                         since=at - state.window, until=at)
    kinds = [k for k in event_kinds(store, where) if k.last_seen > at - state.window]
    records = store.get([k.best_id for k in kinds])
    out = []
    for kind in kinds:
        record = records.get(kind.best_id)
        if record is None:
            continue
        try:
            out.append((kind, event_from_record(record)))
        except InputError:
            continue  # a damaged record does not hide the other kinds
    return tuple(out)


def _hm(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%H:%M:%S")


def _event_line(event: DomainEvent, link: CascadeLink | None, kind: EventKind | None = None) -> str:
    basis = "" if link is None else (
        f" ← {'stated' if link.basis == 'caused_by' else 'inferred'} from event:{link.cause_id}"
    )
    resolved = ""
    if event.state is EventState.RESOLVED:
        resolved = f" · RESOLVED {_hm(event.ends_at)}" if event.ends_at else " · RESOLVED"
    repeats = f" · ×{kind.count} to {_hm(kind.last_seen)} ({kind_members(kind)})" if kind and kind.count > 1 else ""
    return (f"{_hm(event.time)} {' '.join(event.type.split())} · {' '.join(event.sector.split())} · "
            f"{event.criticality:.2f}{resolved}{repeats} · event:{event.id}{basis}")


def _open_event(alert: OpenAlert) -> DomainEvent:
    """An open alert as the event the timeline lists (its latest notification's id, its start time)."""
    return DomainEvent(id=alert.event_id, time=alert.since, sector=alert.sector, type=alert.type,
                       criticality=alert.criticality, text=alert.text or f"{alert.type} firing",
                       fingerprint=alert.fingerprint, runbook_url=alert.runbook_url)


CRITICAL_EVENT = CRITICAL_CRITICALITY
"""Events at or above this criticality are listed in the timeline, one line per kind of repeats, most
critical then latest first (:data:`~mission_memory.operations.escalation.CRITICAL_CRITICALITY`; docs/adr/0057)."""


def _timeline_lines(
    report: CrisisReport, sectors: int, cascades: int, members: int, notes: int, critical: int, ids: int
) -> list[str]:
    t = report.timeline
    minutes = t.window.total_seconds() / 60
    lines: list[str] = []
    if t.since is not None:
        lines.append(f"Escalation: degraded since {t.since.astimezone(UTC):%Y-%m-%d %H:%M} UTC · α {t.alpha:.2f} · "
                     f"{counted(t.rate, 'event')} in the {minutes:g} min window to {t.at.astimezone(UTC):%H:%M} UTC")
    else:
        lines.append(f"Escalation: {t.mode} · {counted(t.rate, 'event')} in the {minutes:g} min window to "
                     f"{t.at.astimezone(UTC):%Y-%m-%d %H:%M} UTC (timeline on request)")
    if report.incident is not None:  # the stored incident, as the operators set it (docs/adr/0095)
        i = report.incident
        lines.append(f"{incident_head(i, day=t.at)} · next update {next_update_line(i, t.at, t.at) or 'not set'}")
        lines += [f"  contingency {line}" for line in contingency_lines(i, t.at)]
    if report.firing:
        critical_open = [a for a in report.firing if a.criticality >= CRITICAL_EVENT]
        older = [a for a in report.firing if a.since <= t.at - t.window]
        lines.append(f"Firing now: {counted(len(report.firing), 'alert')} open ({len(critical_open)} critical), "
                     f"{len(older)} of them started before this window; resolved alerts are not counted")
    lines.append(f"What is escalating (events per {minutes:g} min: this window / the one before · trend; "
                 "event lines: time type · sector · criticality · provenance):")
    if not t.sectors:
        lines.append("- no events in the last two windows")
    for trend in t.sectors[:sectors]:
        flag = " · FLOODING" if trend.escalating else ""
        lines.append(f"- {' '.join(trend.sector.split())}: {trend.rate} / {trend.previous_rate} · {trend.trend}{flag}")
    if len(t.sectors) > sectors:
        lines.append(f"- … {len(t.sectors) - sectors} more sectors")
    # Critical alerts still firing that started before the window are current too (docs/adr/0057).
    in_window = {e.id for _, e in report.critical}
    open_before = [_open_event(a) for a in report.firing
                   if a.criticality >= CRITICAL_EVENT and a.event_id not in in_window and a.since <= t.at - t.window]
    urgent = [*((k.count, k.max_criticality, k.first_seen, k.last_seen, e, kind_members(k)) for k, e in report.critical),
              *((1, e.criticality, e.time, e.time, e, "") for e in open_before)]
    urgent.sort(key=lambda u: (-u[1], -u[3].timestamp()))
    if urgent:  # docs/adr/0057, 0088: every distinct kind, counted over all its events, before any repeat
        lines.append(f"Critical events of this window and alerts still firing (criticality ≥ {CRITICAL_EVENT:g}; "
                     f"{sum(u[0] for u in urgent)} in {counted(len(urgent), 'distinct kind')}, repeats grouped; most critical, "
                     "then latest first):")
        for count, top, first, last, rep, all_of in urgent[:critical]:
            span = f" · ×{count} {_hm(first)}–{_hm(last)}" if count > 1 else f" · {_hm(rep.time)}"
            runbook = f" · runbook {rep.runbook_url}" if rep.runbook_url else ""
            lines.append(f"- {' '.join(rep.type.split())} · {' '.join(rep.sector.split())} · {top:.2f}{span}: "
                         f"event:{rep.id}" + (f" ({all_of})" if count > 1 else "") + runbook)
        if len(urgent) > critical:
            rest = urgent[critical:]
            lines.append(f"- … {counted(len(rest), 'more kind')} ({counted(sum(u[0] for u in rest), 'event')}), less critical or older")
    # The critical alerts are listed above with the window's critical events; the others still firing are
    # named here, whatever their severity (docs/adr/0057). They go before the critical kinds when room is short.
    below = [a for a in report.firing if a.criticality < CRITICAL_EVENT]
    shown_below = below[: 2 * notes]
    for alert in shown_below:
        runbook = f" · runbook {alert.runbook_url}" if alert.runbook_url else ""
        lines.append(f"- also firing: {' '.join(alert.type.split())} · {' '.join(alert.sector.split())} · "
                     f"{alert.criticality:.2f} · since {_hm(alert.since)}: event:{alert.event_id}{runbook}")
    if len(below) > len(shown_below):
        lines.append(f"- … {len(below) - len(shown_below)} more alerts firing below criticality {CRITICAL_EVENT:g}")
    stated = sum(1 for link in t.links if link.basis == "caused_by")
    lines.append(f"What cascades ({counted(len(t.cascades), 'chain')}; links found: {stated} stated by the source, "
                 f"{len(t.links) - stated} inferred from sector, type and time; each kind of event one link in a "
                 "chain, every event of the period counted):")
    if not t.cascades:
        lines.append("- no linked events")
    incoming = {link.effect_id: link for link in t.links}
    for number, cascade in enumerate(t.cascades[:cascades], start=1):
        events = sum(report.kinds[e].count if e in report.kinds else 1 for e in cascade.event_ids)
        lines.append(f"{number}. from event:{cascade.root_id} · {counted(len(cascade.event_ids), 'kind')}, {counted(events, 'event')} · "
                     f"{_hm(cascade.start)}–{_hm(cascade.end)} · sectors {', '.join(' '.join(s.split()) for s in cascade.sectors)}"
                     f" · max criticality {cascade.max_criticality:.2f}")
        shown = cascade.event_ids[:members]
        for event_id in shown:
            lines.append("   " + _event_line(report.events[event_id], incoming.get(event_id), report.kinds.get(event_id)))
        if len(cascade.event_ids) > members:
            lines.append(f"   … {len(cascade.event_ids) - members} more kinds in this chain")
    if len(t.cascades) > cascades:
        lines.append(f"… {len(t.cascades) - cascades} more chains")
    began = f"{(report.decided_since or report.start).astimezone(UTC):%Y-%m-%d %H:%M} UTC"
    lines.append(f"Decisions taken since {began} ({len(report.decisions)}):")
    for n in report.decisions[-notes:] if notes else ():
        lines.append(f"- {_hm(n.time)} {n.text} · by {n.by or 'not recorded'} · {n.ref}")
    if not report.decisions:
        lines.append("- none recorded")
    lines.append(f"Open questions ({len(report.open_questions)}):")
    for n in report.open_questions[:notes]:
        lines.append(f"- {n.text} · {n.ref}")
    if not report.open_questions:
        lines.append("- none recorded")
    return lines


# (sectors, chains, members per chain, decisions and questions, critical kinds, ids cited per kind), most
# detailed first: chain members go first, then chains, sectors and notes, then the ids of repeats, and the
# window's distinct critical kinds last (triage must not drop them; docs/adr/0040, 0057).
_DETAIL_LEVELS = ((8, 5, 8, 5, 40, 40), (6, 3, 4, 3, 40, 40), (4, 2, 3, 3, 40, 40), (3, 1, 2, 2, 40, 40),
                  (3, 1, 1, 1, 40, 40), (2, 0, 0, 1, 40, 40), (1, 0, 0, 0, 40, 40), (1, 0, 0, 0, 40, 20),
                  (1, 0, 0, 0, 40, 10), (1, 0, 0, 0, 40, 5), (1, 0, 0, 0, 40, 2), (1, 0, 0, 0, 40, 1),
                  (1, 0, 0, 0, 32, 1), (1, 0, 0, 0, 26, 1), (1, 0, 0, 0, 20, 1), (1, 0, 0, 0, 14, 1),
                  (1, 0, 0, 0, 8, 1), (1, 0, 0, 0, 3, 1))


def render_timeline(report: CrisisReport, tokenizer: Tokenizer, max_tokens: int) -> str:
    """The timeline as plain lines of at most ``max_tokens`` tokens (unfenced: the caller fences it).

    Order (docs/adr/0040): the escalation line; what is escalating (sectors, rates now and one window
    before, trend, flooding or not; then the window's critical events still firing, one line per group of repeats with its count and span,
    most critical then latest first; docs/adr/0057); what cascades (chains from their roots, each event with its time,
    type, sector, criticality, ``event:<id>`` provenance and the link that brought it in, stated or
    inferred); decisions taken since the escalation began and by whom; open questions. When the whole
    does not fit, fewer sectors, chains, chain members and notes are shown before the text is cut.
    """
    text = ""
    for level in _DETAIL_LEVELS:
        text = "\n".join(_timeline_lines(report, *level))
        if tokenizer.count(text) <= max_tokens:
            return text
    return tokenizer.truncate(text, max_tokens)


def crisis_brief_entries(
    store: MemoryStore, mission: str, at: datetime, tokenizer: Tokenizer | None = None, max_tokens: int = 600
) -> list[tuple[str, str, tuple[str, ...], tuple[str, ...]]]:
    """The rotation brief's timeline entry, when ``mission`` is degraded at ``at`` (none otherwise).

    Returns:
        ``[(label, text, refs, record_ids)]``: one entry whose text is the rendered timeline
        (the brief fences it), whose refs are the ``event:<id>`` of the cascades' roots and the
        decisions' references, and whose record ids are theirs; ``[]`` in normal mode.
    """
    state = current_state(store, mission, at)
    if state.mode is not EscalationMode.DEGRADED:
        return []
    report = crisis_report(store, mission, state, at)
    text = (render_timeline(report, tokenizer, max_tokens) if tokenizer is not None
            else "\n".join(_timeline_lines(report, *_DETAIL_LEVELS[0])))
    roots = [c.root_id for c in report.timeline.cascades]
    refs = tuple([f"event:{r}" for r in roots] + [n.ref for n in report.decisions])
    ids = tuple([report.record_ids[r] for r in roots if r in report.record_ids] + [n.record_id for n in report.decisions])
    since = f"{state.since.astimezone(UTC):%Y-%m-%d %H:%M} UTC" if state.since else "now"
    return [(f"escalation in progress since {since} · α {state.alpha:.2f} · rate {state.rate} per window", text, refs, ids)]
