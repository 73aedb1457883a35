"""The incident block: what an incoming on-call operator reads first while an incident is open.

The block shows while the mission's stored incident is open
(:mod:`~mission_memory.operations.incident_state`, docs/adr/0091), and, for a store whose incident was
never synced, while the mission is degraded (a flood) or a critical alert is open (criticality ≥
:data:`~mission_memory.operations.escalation.CRITICAL_CRITICALITY`): a P1 page still open after the
event rate fell is still an incident. The order is that of incident handovers (I-PASS; the
ICS-201 incident briefing; SRE on-call handover templates), ADR 0061:

1. **Severity and what is affected** — the stored incident's severity (else that of the open alerts; never
   of the event rate: :func:`~mission_memory.operations.escalation.severity_level`), the escalation's mode
   and the events of the last window counted in the store; the stored incident's id, title, status,
   start and commander; the affected sectors with their counts;
2. **Open alerts** — every alert a receiver opened and none resolved
   (:mod:`~mission_memory.operations.alert_state`), most critical first, each with its title, instance,
   sector, start, who acknowledged it, who is assigned, its event and runbook. They are never folded:
   whatever the budget, an incoming operator sees every open alert by name;
3. **Recurring log events (not alerts)** — the window's kinds of events without an alert lifecycle
   (log lines, sensor reports), counted in the store over all their events, most critical first, with
   one quoted text each; folded into one counted line when room is short;
4. **Decisions taken** — since the escalation began, with who took them;
5. **Hypothesis and next step** — the open handover notes of those kinds;
6. **Contingencies** — those set on the incident (``incident contingency``), then open notes that say
   "if X then Y" (or "if X, Y");
7. **The next check** — the incident's next update time (``incident next-update``; how long until it, or
   how overdue), else an open next-step note that names a time, else a line saying none is set.

When the block does not fit its cap, quoted texts are shortened first, then the least critical
recurring kinds are folded into one counted line; alert lines and note lines are never dropped.
Everything quoted (event text, titles, sectors, types, notes, decision titles) is rendered by the
brief inside its envelope (ADR 0021).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from mission_memory.errors import InputError, counted
from mission_memory.operations.alert_state import (
    OpenAlert,
    alert_marks,
    alert_record_ids,
    firing_only,
    open_alerts,
)
from mission_memory.operations.crisis_timeline import crisis_report
from mission_memory.operations.domain_events import DomainEvent, event_from_record
from mission_memory.operations.escalation import CRITICAL_CRITICALITY, EscalationMode, severity_level
from mission_memory.operations.escalation_state import current_state
from mission_memory.operations.event_groups import event_kinds
from mission_memory.operations.incident_state import (
    Incident,
    contingency_lines,
    incident_head,
    incident_open_at,
    next_update_line,
    severity_by_hand,
)
from mission_memory.records import Layer, Record, RecordKind
from mission_memory.stores.base import EventKind, MemoryStore
from mission_memory.stores.filters import SearchFilter
from mission_memory.tokens import Tokenizer

__all__ = ["BLOCK_GROWS_FROM", "BLOCK_TOKENS", "IncidentBlock", "RecurringKind", "about_incident", "block_tokens",
           "incident_block"]

_IF_THEN = re.compile(r"\bif\b.+(\bthen\b|,)", re.IGNORECASE | re.DOTALL)
_TIME = re.compile(r"\b(?:[01]?\d|2[0-3]):[0-5]\d\b|\bnext (?:check|update)\b|\bin \d+ ?(?:min|minutes|h|hours)\b",
                   re.IGNORECASE)
_QUOTE_CHARS = (160, 80, 40, 0)
"""Quote lengths tried, longest first; 0: only the most critical kind keeps a quote."""
_RECURRING_SHOWN = 8
"""Recurring kinds the block shows at most at its default cap (900 tokens); a larger cap shows more."""
_TOKENS_PER_KIND = 110
"""About what one recurring kind's lines take with its quote: a cap of ``n`` tokens shows at most
``max(_RECURRING_SHOWN, n // _TOKENS_PER_KIND)`` kinds (the tokenizer decides how many fit)."""
BLOCK_TOKENS = 900
"""The incident block's cap at briefs of up to :data:`BLOCK_GROWS_FROM` tokens."""
BLOCK_GROWS_FROM = 2500
"""Above this brief budget the block's cap grows by half of the extra tokens: a larger budget shows more
recurring kinds and longer quotes, each counted (:func:`block_tokens`)."""


def block_tokens(budget: int | None) -> int:
    """The incident block's cap, in tokens, for a brief of ``budget`` tokens (None: the default cap):
    :data:`BLOCK_TOKENS`, plus half of what the budget has above :data:`BLOCK_GROWS_FROM`."""
    return BLOCK_TOKENS + max(0, (budget or 0) - BLOCK_GROWS_FROM) // 2


@dataclass(frozen=True)
class RecurringKind:
    """A kind of event without an alert lifecycle (a log template, a sensor report) recurring in the window.

    Attributes:
        kind: its counts over every event of the window (:class:`~mission_memory.stores.base.EventKind`).
        event: its best event (the most critical, newest among equals).
    """

    kind: EventKind
    event: DomainEvent


@dataclass(frozen=True)
class IncidentBlock:
    """The rendered block and what it rests on.

    Attributes:
        text: the block (plain lines; the brief fences it).
        short: the same block condensed to about half the cap; every open alert kept.
        floor: the least the brief shows of an open incident, whatever its budget: the severity line, the
            stored incident's line and every open alert, one condensed line each (ADR 0090, 0091); a budget
            that cannot hold it is refused, naming the budget it needs.
        refs: ``event:<id>`` of each open alert and recurring kind shown, and the decisions' references.
        record_ids: the records of those events and decisions.
        sectors: the affected sectors (the brief keeps commit history of other components out).
        alerts: every open alert, most critical first.
        recurring: the window's recurring kinds read, most critical first.
        note_ids: the open handover notes the block quotes (in both forms); the brief does not
            repeat them under "What to do first".
    """

    text: str
    short: str
    refs: tuple[str, ...]
    record_ids: tuple[str, ...]
    sectors: tuple[str, ...]
    alerts: tuple[OpenAlert, ...]
    recurring: tuple[RecurringKind, ...] = ()
    note_ids: tuple[str, ...] = ()
    floor: str = ""


def _hm(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _flat(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _clock(moment: datetime, day: datetime) -> str:
    """``HH:MM:SS`` on the brief's own day (the severity line gives the date), else the date too."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%H:%M:%S") if moment.date() == day.astimezone(UTC).date() else _hm(moment)


def _alert_lines(alerts: Sequence[OpenAlert], day: datetime, quote: int) -> list[str]:
    lines = [f"Open alerts ({len(alerts)}, most critical first; from receivers, open until resolved):"]
    if not alerts:
        lines.append("- none open")
    for a in alerts:
        title = _flat(a.title, max(quote, 80)) if a.title and _flat(a.title, 999) != _flat(a.type, 999) else ""
        ack = f"acknowledged by {_flat(a.acknowledged_by, 80)}" if a.acknowledged_by else (
            "acknowledged" if a.status == "acknowledged" else "not acknowledged")
        assigned = ", ".join(_flat(x, 60) for x in a.assignees) or "nobody"
        runbook = f" · runbook {a.runbook_url}" if a.runbook_url else ""
        lines.append(f"- {_flat(a.type, 80)}{': ' + title if title else ''} · instance {_flat(a.instance, 80) or '-'}"
                     f" · {_flat(a.sector, 80)} · {a.criticality:.2f} · since {_clock(a.since, day)} · {ack}"
                     f" · assigned {assigned} · event:{a.event_id}{runbook}{alert_marks(a)}")
    return lines


FLOOR_EACH_MAX = 40
"""Up to this many open alerts, the floor gives each its own line; above it, alerts are grouped."""

FLOOR_GROUPS_MAX = 30
"""Above :data:`FLOOR_EACH_MAX` open alerts, at most this many groups (name and sector) get a line; the
rest are one line counting them, so the floor stays about 40 lines however large the outage."""


def _floor_lines(alerts: Sequence[OpenAlert], day: datetime) -> list[str]:
    """Every open alert counted on condensed lines: one line each (type, instance, sector, criticality,
    start, acknowledged or not) up to :data:`FLOOR_EACH_MAX`; above it grouped by name and sector, most
    critical groups first, ``×`` each group's count, the rest counted on one last line."""
    if len(alerts) <= FLOOR_EACH_MAX:
        lines = [f"Open alerts ({len(alerts)}, most critical first; condensed, one line each):"]
        if not alerts:
            lines.append("- none open")
        for a in alerts:
            ack = "acked" if a.acknowledged_by or a.status == "acknowledged" else "not acked"
            lines.append(f"- {_flat(a.type, 60)} · {_flat(a.instance, 40) or '-'} · {_flat(a.sector, 40)}"
                         f" · {a.criticality:.2f} · since {_clock(a.since, day)} · {ack}")
        return lines
    groups: dict[tuple[str, str], list[OpenAlert]] = {}
    for a in alerts:  # most critical first already: each group's first member is its most critical
        groups.setdefault((a.type, a.sector), []).append(a)
    ranked = sorted(groups.values(), key=lambda g: (-g[0].criticality, -len(g), g[0].type, g[0].sector))
    lines = [f"Open alerts ({len(alerts)}, most critical first; grouped by name and sector):"]
    for group in ranked[:FLOOR_GROUPS_MAX]:
        first, acked = group[0], sum(1 for a in group if a.acknowledged_by or a.status == "acknowledged")
        start = min(a.since for a in group)
        examples = ", ".join(_flat(a.instance, 40) for a in group[:2] if a.instance)
        more = f" +{len(group) - 2} more" if len(group) > 2 and examples else ""
        lines.append(f"- {_flat(first.type, 60)} ×{len(group)} · {_flat(first.sector, 40)} · max {first.criticality:.2f}"
                     f" · since {_clock(start, day)} · {acked} acked" + (f" · {examples}{more}" if examples else ""))
    rest = [a for group in ranked[FLOOR_GROUPS_MAX:] for a in group]
    if rest:
        names = sorted({a.type for a in rest})
        lines.append(f"- other alerts ×{len(rest)} · {len(names)} names ({', '.join(_flat(n, 40) for n in names[:5])}"
                     f"{', …' if len(names) > 5 else ''}) · max {max(a.criticality for a in rest):.2f}")
    return lines


def _render(head: list[str], alerts: Sequence[OpenAlert], recurring: Sequence[RecurringKind], total: tuple[int, int],
            tail: list[str], shown: int, quote: int, day: datetime, since: datetime | None = None) -> str:
    lines = [*head, *_alert_lines(alerts, day, quote)]
    kinds, events = total
    if kinds:
        window = f"since {since.astimezone(UTC):%H:%M:%S}" if since is not None else "in the window"
        lines.append(f"Recurring log events (not alerts) {window}: {counted(kinds, 'kind')}, {counted(events, 'event')}; most critical first:")
    for rank, r in enumerate(recurring[:shown]):
        k, e = r.kind, r.event
        span = f"×{k.count} {_clock(k.first_seen, day)}–{_clock(k.last_seen, day)}" if k.count > 1 else \
            f"once at {_clock(k.last_seen, day)}"
        lines.append(f"- {_flat(e.type, 80)} · {_flat(e.sector, 80)} · {span} · max {k.max_criticality:.2f} · event:{e.id}")
        # the most critical kind keeps its words (the FATAL line) when the others are shortened
        if rank == 0 or quote:
            lines.append(f"  \"{_flat(e.text, max(quote, _QUOTE_CHARS[0]) if rank == 0 else quote)}\"")
    rest_kinds = kinds - min(shown, len(recurring))
    if rest_kinds > 0:
        rest_events = events - sum(r.kind.count for r in recurring[:shown])
        lines.append(f"- +{counted(rest_kinds, 'more kind')}, {counted(rest_events, 'event')}")
    return "\n".join(lines + tail)


def about_incident(note: Record, began: datetime, names: Sequence[str]) -> bool:
    """Whether a handover note belongs in the incident block (ADR 0061, amended).

    A note is about the incident when it was written since the escalation began (one window before
    the switch to degraded, as the crisis report counts it), or when it names an affected sector or
    an alert type still firing, as the events spell it (whole word, case kept: a sector ``Client``
    is not the word "client" of a coding note). Other open notes (a coding shift's
    warning left before the flood) stay under "What to do first" and out of the block.
    """
    if note.provenance.time >= began:
        return True
    return any(re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", note.text) for n in names if len(n) >= 2)


def _note_lines(notes: Sequence[Record], limit: int) -> tuple[list[str], list[str], str, list[str]]:
    """``(hypothesis and next-step lines, contingency lines, next check, record ids shown)``; each note once."""
    hypo_next, contingencies, shown = [], [], []
    next_check = ""
    for r in notes:
        kind = str(r.attributes.get("note_kind"))
        body = _flat(r.text, limit)
        who = r.operator or "unknown"
        note_id = str(r.attributes.get("note_id") or r.id)[:12]
        if _IF_THEN.search(r.text):
            contingencies.append(f"- {body} ({kind}, {who}, id {note_id})")
        elif kind in ("hypothesis", "next-step"):
            hypo_next.append(f"- {kind}: {body} ({who}, id {note_id})")
        else:
            continue
        shown.append(r.id)
        times = [m.group(0) for m in _TIME.finditer(r.text)]
        if kind == "next-step" and not next_check and times:
            phrase = next((t for t in times if any(c.isdigit() for c in t)), "as the note says")
            next_check = f"{phrase} ({who}'s next-step note {note_id} above, of {_hm(r.provenance.time)} UTC)"
    return hypo_next, contingencies, next_check, shown


def incident_block(store: MemoryStore, mission: str, at: datetime, notes: Sequence[Record], tokenizer: Tokenizer,
                   max_tokens: int = BLOCK_TOKENS) -> IncidentBlock | None:
    """The incident block of ``mission`` at ``at`` while an incident is open: the mission degraded, or a
    critical alert open (None otherwise).

    Args:
        store: the memory's store.
        mission: the mission.
        at: the brief's now (timezone-aware).
        notes: the open handover notes (hypotheses, next steps, contingencies come from them).
        tokenizer: counts the block; the block is condensed to ``max_tokens``.
        max_tokens: the cap on the block's text, in tokens (the open alerts are kept whatever it is).
    """
    state = current_state(store, mission, at)
    degraded = state.mode is EscalationMode.DEGRADED
    alerts = open_alerts(store, mission, at)
    stored = incident_open_at(store, mission, at)
    firing = firing_only(alerts)  # a silenced alert is listed, marked, but opens nothing and sets no severity
    if stored is None and not degraded and not any(a.criticality >= CRITICAL_CRITICALITY for a in firing):
        return None
    report = crisis_report(store, mission, state, at)
    window_start = at - state.window
    began = (state.since if degraded and state.since else at) - state.window
    # whole seconds: the window is named to the second, and counts what it names (issue: counts name their windows)
    recurring_since = min(began, window_start).replace(microsecond=0)
    recurring, total = _recurring(store, mission, recurring_since, at)
    by_sector = {k: v for k, v in store.count_by_component([RecordKind.DOMAIN_EVENT.value], mission=mission,
                                                          after=window_start, through=at).items() if v}
    rate = sum(by_sector.values())
    sectors = sorted(by_sector, key=lambda s: (-by_sector[s], s))
    for a in alerts:  # an alert's sector is affected while it is open, whatever the window's count
        if a.sector not in sectors:
            sectors.append(a.sector)
    window_minutes = state.window.total_seconds() / 60
    silenced = f", {len(alerts) - len(firing)} silenced" if len(firing) < len(alerts) else ""
    if firing:
        top = firing[0].criticality
        why = (f"highest open alert {top:.2f}; {counted(len(firing), 'alert')} open, "
               f"{sum(1 for a in firing if a.criticality >= CRITICAL_CRITICALITY)} critical{silenced}")
    else:
        top = max((r.kind.max_criticality for r in recurring), default=0.0)
        why = (f"no alert open{silenced}; the incident's level, held" if stored is not None
               else f"no alert open{silenced}; the window's most critical event {top:.2f}")
    mode = (f"degraded since {_hm(state.since)} UTC" if degraded and state.since else
            "degraded" if degraded else "event rate normal")
    level = stored.severity if stored is not None else severity_level(top)  # the stored one holds (ADR 0091)
    hand = f", {severity_by_hand(stored, at)}" if stored is not None and severity_by_hand(stored, at) else ""
    head = [
        f"Severity: {level}{hand} ({why}); {mode}; {counted(rate, 'event')} in the {window_minutes:g} min to {at.astimezone(UTC):%H:%M:%S}",
        *([incident_head(stored, severity=False, day=at)] if stored is not None and _set_by_someone(stored) else []),
        # the same window as the rate above, named; a sector listed for an open alert alone says so
        f"Affected (events in the same {window_minutes:g} min): "
        + (", ".join(f"{s} ({by_sector[s]})" if s in by_sector else f"{s} (open alert, 0 in the window)"
                     for s in sectors[:8])
                        + (f", +{len(sectors) - 8} more sectors" if len(sectors) > 8 else "") if sectors else "no sector named"),
    ]
    decided = ["Decisions taken since the escalation began:"]
    decided += ([f"- {_hm(n.time)} {n.text} · by {n.by or 'unknown'} · `{n.ref}`" for n in report.decisions[-8:]]
                or ["- none recorded"])
    names = [*sectors, *(a.type for a in alerts)]
    mine = [r for r in notes if about_incident(r, began, names)]

    def tail(limit: int) -> tuple[list[str], list[str]]:
        hypo_next, contingencies, next_check, shown = _note_lines(mine, limit)
        if stored is not None:  # what the operators set on the incident comes first (ADR 0091)
            contingencies = [*contingency_lines(stored, at), *contingencies]
            next_check = next_update_line(stored, at, at) or next_check
        lines = [*decided, "Hypothesis and next step (open handover notes about the incident, not repeated below):", *(hypo_next or ["- none left"]),
                 "Contingencies (if … then …):", *(contingencies or ["- none left"]),
                 "Next check: " + (next_check or "not set: agree the next update time at the handover")]
        return lines, shown

    def fit(cap: int, lines: list[str]) -> str:
        """As many recurring kinds as fit (at most ``max(_RECURRING_SHOWN, cap // _TOKENS_PER_KIND)``), each
        with the longest quote that fits; the rest folded into one counted line. The open alerts and the
        note lines are never dropped."""
        most = min(len(recurring), max(_RECURRING_SHOWN, cap // _TOKENS_PER_KIND))
        whole = _render(head, alerts, recurring, total, lines, most, _QUOTE_CHARS[0], at, recurring_since)
        if tokenizer.count(whole) <= cap:  # the usual case: everything it may show fits, one count
            return whole
        smallest = _render(head, alerts, recurring, total, lines, 0, 0, at, recurring_since)
        if tokenizer.count(smallest) > cap:  # thousands of open alerts: no longer form fits either (the floor groups them)
            return smallest
        fits, over = 0, most + 1
        while over - fits > 1:  # the most kinds that fit without quotes (more kinds never take fewer tokens)
            mid = (fits + over) // 2
            if tokenizer.count(_render(head, alerts, recurring, total, lines, mid, 0, at, recurring_since)) <= cap:
                fits = mid
            else:
                over = mid
        for quote in _QUOTE_CHARS:  # then the longest quotes that still fit beside them
            text = _render(head, alerts, recurring, total, lines, fits, quote, at, recurring_since)
            if tokenizer.count(text) <= cap:
                return text
        return smallest

    whole_tail, note_ids = tail(240)
    text = fit(max_tokens, whole_tail)
    # The condensed form keeps every open alert, the decisions and its notes, each note cut to one line.
    short = fit(max(max_tokens // 2, 160), tail(100)[0])
    floor = "\n".join([*head[:-1], *_floor_lines(alerts, at)])  # the "Affected" line is the first to go
    alert_ids = alert_record_ids(store, mission, alerts)
    most = max(_RECURRING_SHOWN, max_tokens // _TOKENS_PER_KIND)
    refs = ([f"event:{a.event_id}" for a in alerts] + [f"event:{r.event.id}" for r in recurring[:most]]
            + [n.ref for n in report.decisions])
    ids = [alert_ids[a.event_id] for a in alerts if a.event_id in alert_ids]
    ids += [r.kind.best_id for r in recurring[:most]] + [n.record_id for n in report.decisions]
    return IncidentBlock(text, short, tuple(dict.fromkeys(refs)), tuple(dict.fromkeys(ids)), tuple(sectors),
                         tuple(alerts), tuple(recurring), tuple(note_ids), floor)


def _set_by_someone(incident: Incident) -> bool:
    """Whether the incident's line says more than the severity line: an alert or an operator opened it, or an
    operator set a field. A flood's incident nobody has touched is the severity line's "degraded since"."""
    return incident.opened_by != "flood" or any(change.by != "system" for change in incident.log)


def _recurring(store: MemoryStore, mission: str, since: datetime, at: datetime) -> tuple[list[RecurringKind], tuple[int, int]]:
    """The window's kinds of events that are not alerts (their best event has no fingerprint), most critical
    first, and ``(kinds, events)`` of them, counted in the store over every event (docs/adr/0088)."""
    kinds = event_kinds(store, SearchFilter((Layer.DOMAIN,), mission=mission, since=since, until=at))
    records = store.get([k.best_id for k in kinds])
    out: list[RecurringKind] = []
    for kind in kinds:
        record = records.get(kind.best_id)
        if record is None or record.attributes.get("fingerprint"):
            continue  # an alert: listed with the open alerts while it is open
        try:
            out.append(RecurringKind(kind, event_from_record(record)))
        except InputError:
            continue  # a damaged record does not hide the other kinds
    return out, (len(out), sum(r.kind.count for r in out))
