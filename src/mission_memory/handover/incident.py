"""The incident block: what an incoming on-call operator reads first while a mission is degraded.

The order is that of incident handovers (I-PASS; the ICS-201 incident briefing; SRE on-call handover
templates), ADR 0061:

1. **Severity and what is affected** — the escalation's mode, since when, the event rate, the
   highest criticality still firing, the affected sectors with their counts;
2. **Still firing** — distinct alerts, grouped by type, sector and normalised text (digits and hex
   runs folded, so "block blk_123 lost" and "block blk_456 lost" are one alert), each with its
   count, first and last seen, highest criticality and one quoted text; the most critical first;
3. **Decisions taken** — since the escalation began, with who took them;
4. **Hypothesis and next step** — the open handover notes of those kinds;
5. **Contingencies** — open notes that say "if X then Y" (or "if X, Y");
6. **The next check** — an open next-step note that names a time, else a line saying none is set.

The block is built with the project's tokenizer and condensed by grouping: when it does not fit
its cap, quoted texts are shortened first, then the least critical groups are folded into one
counted line ("+N more distinct alerts, M events"). A list is never cut in the middle.
Everything quoted (event text, sectors, types, notes, decision titles) is rendered by the brief
inside its envelope (ADR 0021). Built on :func:`~mission_memory.operations.crisis_timeline.crisis_report`;
the repeated-event grouping here is the brief's own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from mission_memory.operations.crisis_timeline import crisis_report
from mission_memory.operations.domain_events import DomainEvent, EventState
from mission_memory.operations.escalation import EscalationMode
from mission_memory.operations.escalation_state import current_state
from mission_memory.records import Record
from mission_memory.stores.base import MemoryStore
from mission_memory.tokens import Tokenizer

__all__ = ["AlertGroup", "IncidentBlock", "about_incident", "group_alerts", "incident_block", "normalised_text"]

_DIGITS = re.compile(r"(?:0x)?[0-9a-f]*\d[0-9a-f]*", re.IGNORECASE)
_IF_THEN = re.compile(r"\bif\b.+(\bthen\b|,)", re.IGNORECASE | re.DOTALL)
_TIME = re.compile(r"\b(?:[01]?\d|2[0-3]):[0-5]\d\b|\bnext (?:check|update)\b|\bin \d+ ?(?:min|minutes|h|hours)\b",
                   re.IGNORECASE)
_QUOTE_CHARS = (160, 80, 40)


def normalised_text(text: str) -> str:
    """``text`` with case, whitespace and every run holding a digit (numbers, ids, hex) folded to ``#``."""
    return " ".join(_DIGITS.sub("#", text.lower()).split())


@dataclass(frozen=True)
class AlertGroup:
    """Repeats of one alert: same type, sector and normalised text.

    Attributes:
        type, sector: as the events state them.
        count: events in the group.
        first, last: the earliest and latest event times (UTC).
        criticality: the highest criticality in the group, in [0, 1].
        text: the latest event's text (quoted).
        firing: whether the latest event of the group is still firing (not ``resolved``).
        event_ids: the events, newest first.
    """

    type: str
    sector: str
    count: int
    first: datetime
    last: datetime
    criticality: float
    text: str
    firing: bool
    event_ids: tuple[str, ...]


def group_alerts(events: Sequence[DomainEvent]) -> list[AlertGroup]:
    """Group ``events`` by (type, sector, normalised text); most critical first, then most frequent, latest."""
    groups: dict[tuple[str, str, str], list[DomainEvent]] = {}
    for ev in events:
        groups.setdefault((ev.type, ev.sector, normalised_text(ev.text)), []).append(ev)
    out = []
    for (kind, sector, _), evs in groups.items():
        evs.sort(key=lambda e: (e.time, e.id), reverse=True)
        out.append(AlertGroup(kind, sector, len(evs), evs[-1].time, evs[0].time, max(e.criticality for e in evs),
                              evs[0].text, evs[0].state is not EventState.RESOLVED, tuple(e.id for e in evs)))
    out.sort(key=lambda g: (-g.criticality, -g.count, -g.last.timestamp(), g.type, g.sector))
    return out


@dataclass(frozen=True)
class IncidentBlock:
    """The rendered block and what it rests on.

    Attributes:
        text: the block (plain lines; the brief fences it).
        short: the same block condensed to about a third of the cap (the brief's floor).
        refs: ``event:<id>`` of each group shown, and the decisions' references.
        record_ids: the records of those events and decisions.
        sectors: the affected sectors (the brief keeps commit history of other components out).
        groups: all alert groups, shown or folded.
        note_ids: the open handover notes the block quotes (in both forms); the brief does not
            repeat them under "What to do first".
    """

    text: str
    short: str
    refs: tuple[str, ...]
    record_ids: tuple[str, ...]
    sectors: tuple[str, ...]
    groups: tuple[AlertGroup, ...]
    note_ids: tuple[str, ...] = ()


def _hm(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _severity(criticality: float) -> str:
    return "critical" if criticality >= 0.9 else "high" if criticality >= 0.8 else "elevated"


def _flat(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _clock(moment: datetime, day: datetime) -> str:
    """``HH:MM:SS`` on the brief's own day (the severity line gives the date), else the date too."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%H:%M:%S") if moment.date() == day.astimezone(UTC).date() else _hm(moment)


def _render(head: list[str], groups: Sequence[AlertGroup], tail: list[str], shown: int, quote: int,
            day: datetime) -> str:
    lines = list(head)
    firing = [g for g in groups if g.firing]
    lines.append(f"Still firing: {len(firing)} distinct alert{'' if len(firing) == 1 else 's'},"
                 f" {sum(g.count for g in firing)} events")
    for rank, g in enumerate(firing[:shown]):
        lines.append(f"- {g.type} · {g.sector} · ×{g.count} · first {_clock(g.first, day)} · last {_clock(g.last, day)}"
                     f" · max {g.criticality:.2f} · event:{g.event_ids[0]}")
        # the most critical alert keeps its words (the FATAL line) when the others are shortened
        lines.append(f"  \"{_flat(g.text, max(quote, _QUOTE_CHARS[0]) if rank == 0 else quote)}\"")
    rest = firing[shown:]
    if rest:
        types = ", ".join(dict.fromkeys(g.type for g in rest[:6]))
        lines.append(f"- +{len(rest)} more distinct alerts, {sum(g.count for g in rest)} events"
                     f" (max {max(g.criticality for g in rest):.2f}; types {types})")
    resolved = [g for g in groups if not g.firing]
    if resolved:
        lines.append(f"Resolved since the escalation began: {len(resolved)} alerts, {sum(g.count for g in resolved)} events")
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
                   max_tokens: int = 900) -> IncidentBlock | None:
    """The incident block of ``mission`` at ``at`` when it is degraded (None in normal mode).

    Args:
        store: the memory's store.
        mission: the mission.
        at: the brief's now (timezone-aware).
        notes: the open handover notes (hypotheses, next steps, contingencies come from them).
        tokenizer: counts the block; the block is condensed to ``max_tokens``.
        max_tokens: the cap on the block's text, in tokens.
    """
    state = current_state(store, mission, at)
    if state.mode is not EscalationMode.DEGRADED:
        return None
    report = crisis_report(store, mission, state, at)
    events = [e for e in report.events.values() if e.time <= at]
    groups = group_alerts(events)
    firing = [g for g in groups if g.firing]
    top = max((g.criticality for g in firing), default=0.0)
    by_sector: dict[str, int] = {}
    for g in firing:
        by_sector[g.sector] = by_sector.get(g.sector, 0) + g.count
    sectors = sorted(by_sector, key=lambda s: (-by_sector[s], s))
    since = _hm(state.since) + " UTC" if state.since else "now"
    head = [
        f"Severity: {_severity(top)} (highest criticality still firing {top:.2f}); degraded since {since};"
        f" {state.rate} events in the last {int(state.window.total_seconds() // 60)} minutes",
        "Affected: " + (", ".join(f"{s} ({by_sector[s]} events)" for s in sectors[:8])
                        + (f", +{len(sectors) - 8} more sectors" if len(sectors) > 8 else "") if sectors else "no sector named"),
    ]
    decided = ["Decisions taken since the escalation began:"]
    decided += ([f"- {_hm(n.time)} {n.text} · by {n.by or 'unknown'} · `{n.ref}`" for n in report.decisions[-8:]]
                or ["- none recorded"])
    began = (state.since or at) - state.window
    names = [*sectors, *(g.type for g in firing)]
    mine = [r for r in notes if about_incident(r, began, names)]

    def tail(limit: int) -> tuple[list[str], list[str]]:
        hypo_next, contingencies, next_check, shown = _note_lines(mine, limit)
        lines = [*decided, "Hypothesis and next step (open handover notes about the incident, not repeated below):", *(hypo_next or ["- none left"]),
                 "Contingencies (if … then …):", *(contingencies or ["- none left"]),
                 "Next check: " + (next_check or "not set: agree the next update time at the handover")]
        return lines, shown

    def fit(cap: int, lines: list[str]) -> str:
        """Shorter quotes first, then fewer groups shown (the least critical folded into one counted
        line); the note lines are never dropped."""
        for shown in range(min(len(firing), 12), -1, -1):
            for quote in _QUOTE_CHARS:
                text = _render(head, groups, lines, shown, quote, at)
                if tokenizer.count(text) <= cap:
                    return text
        return _render(head, groups, lines, 0, 40, at)

    whole_tail, note_ids = tail(240)
    text = fit(max_tokens, whole_tail)
    # The condensed form keeps the alerts, the decisions and its notes, each note cut to one line.
    short = fit(max(max_tokens // 2, 160), tail(100)[0])
    refs = [f"event:{g.event_ids[0]}" for g in firing[:12]] + [n.ref for n in report.decisions]
    ids = [report.record_ids[g.event_ids[0]] for g in firing[:12] if g.event_ids[0] in report.record_ids]
    ids += [n.record_id for n in report.decisions]
    return IncidentBlock(text, short, tuple(dict.fromkeys(refs)), tuple(dict.fromkeys(ids)), tuple(sectors),
                         tuple(groups), tuple(note_ids))
