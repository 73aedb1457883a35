"""The rotation brief: a shift handover built from memory, fenced, within a token budget (docs/design.md §6).

Nine sections (:class:`BriefSection`), in this order (ADR 0026; ICS-201 and SOC/SRE on-call handovers):

1. **Incident handover** — only while the mission is degraded: the escalation, the open alerts and
   the crisis timeline's lead (ADR 0040, 0061);
2. **Status** — the shift window, from → to, counts of decisions, corrections, open questions and
   tasks in progress;
3. **What to do first** — the open handover notes of the mission (warnings and next steps first)
   and the tasks in progress;
4. **Events recorded in the window** — the operational events operators recorded during the shift;
5. **Decisions taken in the window** — with rationale and rejected alternatives; then, in one
   compact entry, the decisions linked to the active work (ADR 0038);
6. **The predecessor's profile** — typical corrections by class and category, then the attention
   zones (:mod:`mission_memory.handover.profile`) ranked by corrections and recent activity
   (:mod:`mission_memory.handover.activity`), and the other active components in one line each;
7. **Open questions** — refresh artifacts' open questions, proposed decisions, unanswered tracker
   comments;
8. **Watch items** — failing or stale sources (refresh failures, memory behind the repository) and
   tasks with activity but no owner;
9. **Recently changed files** — the files ranked by recent activity, each with its latest commit,
   filling the budget the other sections leave (at least :data:`RECENT_FILES_SHARE` of it, ADR 0038).

Every entry carries its provenance. Everything quoted from repositories, trackers, events and notes
sits inside the digest's envelope (:func:`~mission_memory.retrieval.digest.open_marker`, ADR 0021);
outside it there is only text this module writes. The budget bounds the exact text returned, counted
by the project's tokenizer as digests are. Entries are taken round by round — every section's first
entry before any section's second — so a long decision list cannot crowd out the attention zones —
and the recently changed files take the room that is left, so the budget is spent, not wasted.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from mission_memory.decisions import DecisionAttributes
from mission_memory.errors import BudgetError, counted
from mission_memory.fence import (
    close_marker,
    fence_notice,
    neutralise_headings,
    neutralise_markers,
    new_nonce,
    open_marker,
)
from mission_memory.handover.activity import RecentActivity, rank_activity
from mission_memory.handover.incident import block_tokens, incident_block
from mission_memory.handover.notes import open_notes
from mission_memory.handover.profile import PredecessorProfile, build_profile
from mission_memory.handover.shift_window import ShiftWindow, work_by_operator
from mission_memory.ingest.tracked_tree import tracked_files
from mission_memory.records import AccessLevel, Record, RecordKind
from mission_memory.stores.base import MemoryStore
from mission_memory.teams.access_control import most_restricted
from mission_memory.tokens import Tokenizer

__all__ = [
    "DETAILED_FILES",
    "RECENT_FILES_SHARE",
    "BriefItem",
    "BriefSection",
    "RotationBrief",
    "collect_brief_items",
    "pack_brief",
]

RECENT_FILES_SHARE = 0.35
"""The share of the budget kept for the recently changed files while the other sections are packed;
they then also take whatever those leave (ADR 0038)."""

DETAILED_FILES = 15
"""The recently changed files listed with their counts, authors and latest commit; the rest of the
list gives path, commit count and date only, so the budget names about twice as many files (ADR 0060)."""

_SEPARATOR = "\n\n"
_MIN_ENTRY_TOKENS = 32
_SCAN_LIMIT = 2_000
_CLOSED_STATES = frozenset({"done", "closed", "completed", "cancelled", "canceled", "resolved", "merged"})
_NOTE_ORDER = {"warning": 0, "next-step": 1, "hypothesis": 2}


class BriefSection(StrEnum):
    """The brief's sections, in rendered order (ADR 0026)."""

    CRISIS = "Incident handover: an escalation is in progress"  # only while degraded (ADR 0040, 0061)
    STATUS = "Status"
    DO_FIRST = "What to do first"
    EVENTS = "Events recorded in the window"
    DECISIONS = "Decisions taken in the window"
    PROFILE = "The predecessor's profile"
    OPEN_QUESTIONS = "Open questions"
    WATCH = "Watch items"
    RECENT_FILES = "Recently changed files"


@dataclass(frozen=True)
class BriefItem:
    """One entry of the brief before packing.

    Attributes:
        section: where it goes.
        label: the heading written by mission-memory (never stored text).
        text: the quoted content with its provenance lines; rendered inside the envelope.
        refs: provenance references it rests on (commit shas, ADR paths, tracker keys, ``correction/…``).
        record_ids: ids of the records it quotes.
        max_tokens: cap on ``text``, in tokens.
        fill: a list that takes the room the other entries leave, cut at a line boundary
            (``max_tokens`` is then ignored).
        spine: kept before anything else but the status line (open handover notes, the incident
            block; ADR 0060): shown whole, else as ``short``, else listed as not shown.
        short: the condensed text a spine item falls back to when the budget cannot hold it whole.
        floor: the least a spine item that may never be left out shows (the incident line and every open
            alert, ADR 0090): priced with the header, so a budget that cannot hold it is refused.
        access_level: the most restricted access level of what it reveals beyond ``record_ids``
            (file paths, commit subjects and counts taken from commits, corrections it summarises):
            the archived brief is stamped with the most restricted level of both (issue: a brief
            archived ``internal`` named restricted files and commits).
    """

    section: BriefSection
    label: str
    text: str
    refs: tuple[str, ...] = ()
    record_ids: tuple[str, ...] = ()
    max_tokens: int = 220
    fill: bool = False
    spine: bool = False
    short: str = ""
    access_level: AccessLevel = AccessLevel.PUBLIC
    floor: str = ""

    def to_json(self, shown: str) -> dict[str, Any]:
        """The entry as ``mission-memory brief --json`` prints it (``shown``: the text after cutting)."""
        return {"section": self.section.value, "label": self.label, "text": shown, "refs": list(self.refs),
                "record_ids": list(self.record_ids)}


@dataclass(frozen=True)
class RotationBrief:
    """A packed rotation brief (docs/design.md §6).

    Attributes:
        window: the shift it covers.
        counts: ``{"decisions", "corrections", "open_questions", "tasks_in_progress"}``.
        token_budget: the bound, in tokens; ``tokens_used`` never exceeds it.
        tokens_used: tokens of :attr:`text` (margin included).
        text: the Markdown brief.
        entries: ``(item, shown text)`` in rendered order.
        omitted: items left out for the budget.
        profile: the predecessor's profile the brief shows.
        archived_id: id of the ``handover_brief`` record archiving it ("" when not archived).
        retrieval_event_id: id of the retrieval event logging it ("" when not logged).
        acknowledged: ``{"operator", "time"}`` when the incoming operator acknowledged it.
        from_operator_known: False when the outgoing operator was named by the caller and memory
            holds nothing of theirs on the mission (a typo, most likely): such a brief is not archived,
            and its status line says so.
    """

    window: ShiftWindow
    counts: dict[str, int]
    token_budget: int
    tokens_used: int
    text: str
    entries: tuple[tuple[BriefItem, str], ...]
    omitted: int
    profile: PredecessorProfile
    archived_id: str = ""
    retrieval_event_id: str = ""
    acknowledged: dict[str, str] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    from_operator_known: bool = True

    def to_json(self) -> dict[str, Any]:
        """The brief as ``mission-memory brief --json`` prints it."""
        w = self.window
        return {
            "mission": w.mission,
            "from": w.from_operator,
            "for": w.to_operator,
            "since": w.since.isoformat(),
            "until": w.until.isoformat(),
            "counts": self.counts,
            "token_budget": self.token_budget,
            "tokens_used": self.tokens_used,
            "omitted": self.omitted,
            "archived_id": self.archived_id,
            "retrieval_event_id": self.retrieval_event_id,
            "acknowledged": self.acknowledged,
            "from_operator_known": self.from_operator_known,
            "entries": [item.to_json(shown) for item, shown in self.entries],
            "brief": self.text,
        }


# -- collecting ----------------------------------------------------------------------------------


def _one_line(text: str, limit: int = 200) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _source_line(record: Record) -> str:
    p = record.provenance
    ref = p.ref[:12] if p.kind.value == "commit" else p.ref
    return f"source: {p.kind.value} `{_one_line(ref)}` · {_one_line(p.uri)} · {p.time.date().isoformat()}"


def _is_open_task(record: Record) -> bool:
    state = str(record.attributes.get("state") or "").strip().lower()
    return state not in _CLOSED_STATES


def _note_items(notes: Sequence[Record]) -> list[BriefItem]:
    """One spine item per open note; a note its author left again with the same words (and kind) is
    shown once, the newest, naming the other ids (each stays open until closed)."""
    ordered = sorted(notes, key=lambda r: (_NOTE_ORDER.get(str(r.attributes.get("note_kind")), 3),
                                           -r.provenance.time.timestamp()))
    same: dict[tuple[str, str, str], list[Record]] = {}
    for r in ordered:
        same.setdefault((r.operator or "", str(r.attributes.get("note_kind")), " ".join(r.text.split())), []).append(r)
    items = []
    for r, *again in same.values():
        kind = str(r.attributes.get("note_kind", "note"))
        note_id = str(r.attributes.get("note_id") or r.id)[:12]
        also = "".join(f" · also left as id {str(o.attributes.get('note_id') or o.id)[:12]}"
                       f" ({o.provenance.time.strftime('%Y-%m-%d %H:%M')})" for o in again)
        by = (f"by {r.operator or 'unknown'}, {r.provenance.time.strftime('%Y-%m-%d %H:%M')} UTC · id {note_id}"
              f" · source: handover `handover-note/{note_id}`{also}")
        items.append(BriefItem(
            BriefSection.DO_FIRST, f"handover note ({kind}, open)", f"{r.text}\n{by}",
            (r.provenance.ref, *(o.provenance.ref for o in again)), (r.id, *(o.id for o in again)), 400, spine=True,
            short=f"[{kind}] {_one_line(r.text, 160)}\n{by}"))
    return items


def _task_items(tasks: Sequence[Record]) -> list[BriefItem]:
    items = []
    for r in tasks:
        a = r.attributes
        facts = [f"state: {a.get('state') or 'unknown'}", f"assignee: {a.get('assignee') or 'nobody'}"]
        if a.get("labels"):
            facts.append("labels: " + ", ".join(str(x) for x in a["labels"]))
        body = _one_line(r.text, 400)
        items.append(BriefItem(BriefSection.DO_FIRST, "task in progress",
                               f"{a.get('key') or ''} {r.title}".strip() + f"\n{' · '.join(facts)}\n{body}\n"
                               + _source_line(r), (str(a.get("key") or r.provenance.ref),), (r.id,), 160))
    return items


FIRING_ALERTS_SHOWN = 10
"""Open alerts the brief names one by one, most critical first, outside an incident (the rest are counted)."""


def _firing_alert_items(store: MemoryStore, mission: str, until: datetime) -> list[BriefItem]:
    """The alerts still firing at the end of the window, for a mission in normal mode (docs/adr/0057).

    While degraded, the incident block lists them (ADR 0061); otherwise a critical alert that fired
    before the window and never resolved appeared nowhere in the brief, though ``events firing``
    listed it. One entry, in "What to do first": type, sector, criticality, since when, the latest
    notification's event and the runbook; the text stays in the event record (the digest quotes it).
    """
    from mission_memory.operations.alert_state import alert_marks, alert_record_ids, firing_only, open_alerts

    firing = open_alerts(store, mission, until)  # firing first, then silenced ones (marked, not counted)
    if not firing:
        return []
    counted = len(firing_only(firing))
    shown = firing[:FIRING_ALERTS_SHOWN]
    ids = alert_record_ids(store, mission, shown)
    lines = []
    for a in shown:
        runbook = f" · runbook {_one_line(a.runbook_url, 200)}" if a.runbook_url else ""
        lines.append(f"- {_one_line(a.type, 80)} · {_one_line(a.sector, 60)} · criticality {a.criticality:.2f}"
                     f" · firing since {a.since.strftime('%Y-%m-%d %H:%M')} UTC, last {a.last_notified.strftime('%H:%M')}"
                     f" · event `{_one_line(a.event_id, 120)}`{runbook}{alert_marks(a)}")
    if len(firing) > len(shown):
        lines.append(f"- {len(firing) - len(shown)} more alerts firing, less critical than those above (not shown)")
    counts = f"{counted}, most critical first" if counted == len(firing) else \
        f"{counted} firing, {len(firing) - counted} silenced; most critical first, silenced last"
    return [BriefItem(BriefSection.DO_FIRST, f"alerts still firing ({counts})",
                      "\n".join(lines), tuple(f"event:{a.event_id}" for a in shown),
                      tuple(ids[a.event_id] for a in shown if a.event_id in ids), 300)]


RECORDED_EVENTS_SHOWN = 20
"""Events operators recorded in the window that the brief can show, one entry each, most critical first;
the rest are counted in one more entry."""


def _recorded_event_items(store: MemoryStore, window: ShiftWindow, skip: set[str]) -> list[BriefItem]:
    """The events an operator recorded in the window (the status line counts them as work), most
    critical then newest first, one entry each (so the budget, not a cut inside one entry, decides how
    many show, and the footer counts those left out): criticality, type, sector, who and when, and the
    provenance. Machine alerts (no operator) stay out: triage and the incident block show those."""
    recorded = [r for r in store.records_of_kind([RecordKind.DOMAIN_EVENT.value], mission=window.mission,
                                                 since=window.since, until=window.until, limit=_SCAN_LIMIT)
                if r.operator and r.id not in skip]
    recorded.sort(key=lambda r: (-_source_criticality(r), -r.provenance.time.timestamp()))
    items = []
    for r in recorded[:RECORDED_EVENTS_SHOWN]:
        a = r.attributes
        state = " · resolved" if a.get("state") == "resolved" else ""
        earlier = len(a.get("earlier_versions") or ())
        again = f" · replaces {counted(earlier, 'earlier version')}" if earlier else ""
        text = (f"[criticality {_source_criticality(r):.2f}{state} · {_one_line(str(a.get('event_type') or 'event'), 60)}"
                f" · {_one_line(r.component or 'no sector', 60)}] {_one_line(r.text, 300)}\n"
                f"by {r.operator}, {r.provenance.time.strftime('%Y-%m-%d %H:%M')} UTC{again}"
                f" · source: event `{_one_line(r.provenance.ref, 80)}`")
        items.append(BriefItem(BriefSection.EVENTS, f"event recorded ({_source_criticality(r):.2f})", text,
                               (r.provenance.ref,), (r.id,), 220))
    if len(recorded) > RECORDED_EVENTS_SHOWN:
        rest = len(recorded) - RECORDED_EVENTS_SHOWN
        items.append(BriefItem(BriefSection.EVENTS, "more events recorded",
                               f"{rest} more events recorded in the window, less critical than those above "
                               f"(a query of the mission since {window.since.date().isoformat()} lists them)",
                               (), (), 80))
    return items


def _source_criticality(r: Record) -> float:
    value = r.attributes.get("source_criticality")
    return float(value) if isinstance(value, (int, float)) else r.criticality


def _decision_text(r: Record) -> str:
    a = DecisionAttributes.read(r.attributes)
    lines = [r.title, f"Status: {a.status or 'not stated'}" + (f" · decided by {a.decided_by}" if a.decided_by else "")]
    if a.decision:
        lines.append("Decision: " + _one_line(a.decision, 600))
    if a.rationale:
        lines.append("Rationale: " + _one_line(a.rationale, 500))
    if a.rejected_alternatives:
        lines.append("Rejected: " + "; ".join(
            alt.option + (f" ({alt.reason})" if alt.reason else "") for alt in a.rejected_alternatives))
    if a.supersedes:
        lines.append("Supersedes: " + ", ".join(a.supersedes))
    if not a.rationale and a.context:
        lines.append("Context: " + _one_line(a.context, 400))
    lines.append(_source_line(r))
    return "\n".join(lines)


def _profile_items(profile: PredecessorProfile) -> list[BriefItem]:
    items = []
    if profile.patterns:
        lines = []
        for p in profile.patterns[:8]:
            outcomes = ", ".join(f"{k} {v}" for k, v in sorted(p.outcomes.items()))
            comps = f" · components: {', '.join(c + '/' for c in p.components[:4])}" if p.components else ""
            lines.append(f"- {p.correction_class} / {p.category}: {p.count} ({outcomes}){comps}"
                         f" · sources: {', '.join(p.refs[:3])}")
            lines.extend(f"  latest: \"{_one_line(summary, 160)}\"" for summary in p.summaries[:1])
        items.append(BriefItem(BriefSection.PROFILE, f"typical corrections ({profile.corrections} in the window)",
                               "\n".join(lines), tuple(r for p in profile.patterns for r in p.refs), (), 420,
                               access_level=most_restricted((p.access_level for p in profile.patterns[:8]),
                                                            AccessLevel.PUBLIC)))
    for zone in profile.zones:
        name = zone.component if zone.component == "(root)" else f"{zone.component}/"
        mine = f" ({zone.by_outgoing} by {profile.operator})" if profile.operator and zone.by_outgoing else ""
        lines = [f"Component {name}: {counted(zone.corrections, 'correction')}, {counted(zone.commits, 'recent commit')}{mine}"]
        if zone.files:
            lines.append("Files: " + ", ".join(zone.files))
        lines.extend(f"commit {sha[:12]} {_one_line(subject, 140)}" for sha, subject in zone.latest_commits)
        items.append(BriefItem(BriefSection.PROFILE, "attention zone", "\n".join(lines),
                               tuple(sha for sha, _ in zone.latest_commits), (), 200, access_level=zone.access_level))
    return items


def _other_components_item(activity: RecentActivity, shown: set[str]) -> list[BriefItem]:
    rest = [c for c in activity.components if c.component not in shown]
    if not rest:
        return []
    lines = []
    for c in rest:
        head = f"- {c.component if c.component == '(root)' else c.component + '/'}: {counted(c.commits, 'commit')}, {counted(c.files, 'file')}"
        if c.recent:  # its latest commit, merges last (activity.py), with date, author and subject
            sha, subject, author, when = c.recent[0]
            lines.append(f"{head}; latest {when.date().isoformat()} `{sha[:12]}` {author or 'unknown'}: {_one_line(subject, 100)}")
        else:
            lines.append(f"{head}, latest {c.last_time.date().isoformat()} `{c.last_sha[:12]}`")
    return [BriefItem(BriefSection.PROFILE, "other active components, by recent activity", "\n".join(lines),
                      tuple(c.last_sha for c in rest), (), 400,
                      access_level=most_restricted((c.access_level for c in rest), AccessLevel.PUBLIC))]


def _recent_files_item(activity: RecentActivity, outgoing: str | None, incoming: str | None) -> list[BriefItem]:
    if not activity.files:
        return []
    lines = []
    for rank, f in enumerate(activity.files):
        if rank == DETAILED_FILES:
            lines.append("then, as path · commits · latest change:")
        if rank >= DETAILED_FILES:  # the path is what names the file; a third of the tokens (ADR 0060)
            lines.append(f"- {f.path} · {f.commits} · {f.last_time.date().isoformat()}")
            continue
        who = []
        if outgoing and f.by_outgoing:
            who.append(f"{f.by_outgoing} by {outgoing}")
        if incoming and f.by_incoming:
            who.append(f"{f.by_incoming} by {incoming}")
        lines.append(f"- {f.path}: {counted(f.commits, 'commit')}{' (' + ', '.join(who) + ')' if who else ''},"
                     f" latest {f.last_time.date().isoformat()} `{f.last_sha[:12]}`")
    if activity.older:
        lines.append("then files only older commits touched, newest first, as path · commits · latest change:")
        lines.extend(f"- {f.path} · {f.commits} · {f.last_time.date().isoformat()}" for f in activity.older)
    since = activity.oldest.date().isoformat() if activity.oldest else "?"
    return [BriefItem(BriefSection.RECENT_FILES,
                      f"files by recent activity ({activity.horizon} commits since {since}; ranked by ADR 0038)",
                      "\n".join(lines), tuple(f.last_sha for f in activity.files), (), 0, fill=True,
                      access_level=most_restricted((f.access_level for f in (*activity.files, *activity.older)),
                                                   AccessLevel.PUBLIC))]


def _recently_touched(when: datetime, window: ShiftWindow, activity: RecentActivity) -> bool:
    """Touched in the window, or by one of the mission's latest :data:`~mission_memory.handover.activity.RECENT_COMMITS`
    commits (ADR 0060): an ADR last edited years ago is not "linked to the active work" because the
    200-commit horizon still reaches it."""
    return when >= window.since or (activity.recent_since is not None and when >= activity.recent_since)


def _linked_decision_items(store: MemoryStore, window: ShiftWindow, activity: RecentActivity,
                           shown: set[str], hot_components: set[str]) -> list[BriefItem]:
    """Decisions linked to the active work (ADR 0038): ADRs whose file was recently touched
    (:func:`_recently_touched`), the decisions they reference (supersedes, superseded by, related),
    and decisions recorded for an active component."""
    decisions = store.records_of_kind([RecordKind.DECISION.value], mission=window.mission, until=window.until,
                                      limit=_SCAN_LIMIT)
    by_key: dict[str, Record] = {}
    for r in decisions:
        for key in (r.provenance.ref, str(r.attributes.get("path") or ""), r.title.split(":", 1)[0]):
            if key:
                by_key.setdefault(key.lower(), r)
    score: dict[str, float] = {}
    why: dict[str, str] = {}
    for r in decisions:
        path = str(r.attributes.get("path") or r.provenance.ref)
        f = activity.file(path)
        if f is not None and _recently_touched(f.last_time, window, activity):
            score[r.id] = max(score.get(r.id, 0.0), f.score)
            why.setdefault(r.id, f"changed {f.last_time.date().isoformat()} `{f.last_sha[:12]}`")
        elif not r.attributes.get("path") and r.component in hot_components:
            score[r.id] = max(score.get(r.id, 0.0), 0.1)
            why.setdefault(r.id, f"recorded for the active component {r.component}")
    for r in decisions:
        if r.id not in score:
            continue
        decision = DecisionAttributes.read(r.attributes)
        for link_kind, links in (("supersedes", decision.supersedes), ("superseded_by", decision.superseded_by),
                                 ("related", decision.related)):
            for ref in links:
                linked = by_key.get(str(ref).lower())
                if linked is not None and linked.id not in score:
                    score[linked.id] = score[r.id] / 2
                    why[linked.id] = f"{link_kind.replace('_', ' ')} link of {r.title.split(':', 1)[0]}"
    ranked = sorted((r for r in decisions if r.id in score and r.id not in shown
                     and str(r.attributes.get("status") or "").lower() != "proposed"),  # under open questions
                    key=lambda r: (-score[r.id], -r.provenance.time.timestamp(), r.id))
    if not ranked:
        return []
    lines = [f"- {_one_line(r.title, 120)} · {r.attributes.get('status') or 'status not stated'}"
             f" · `{_one_line(r.provenance.ref, 160)}` · {why[r.id]}" for r in ranked]
    return [BriefItem(BriefSection.DECISIONS, "decisions linked to the active work", "\n".join(lines),
                      tuple(r.provenance.ref for r in ranked), tuple(r.id for r in ranked), 500)]


def _question_count(artifact: Record) -> int:
    listed = sum(1 for line in artifact.text.splitlines() if line.lstrip().startswith(("- ", "* ")))
    return max(listed, 1)


def _current_proposal(r: Record, window: ShiftWindow, activity: RecentActivity) -> bool:
    """A proposed decision is a current open question when proposed in the window or its file was
    changed in it (ADR 0060); an ADR proposed years ago and never touched since is not."""
    if r.provenance.time >= window.since:
        return True
    f = activity.file(str(r.attributes.get("path") or r.provenance.ref))
    return f is not None and f.last_time >= window.since


def _open_question_items(store: MemoryStore, window: ShiftWindow,
                         activity: RecentActivity) -> tuple[list[BriefItem], int]:
    items: list[BriefItem] = []
    count = 0
    latest_per_task: dict[str, Record] = {}
    for r in store.records_of_kind([RecordKind.REFRESH_ARTIFACT.value], mission=window.mission,
                                   until=window.until, limit=_SCAN_LIMIT):
        if r.attributes.get("artifact") != "open_questions":
            continue
        latest_per_task.setdefault(str(r.attributes.get("task") or r.provenance.ref), r)
    for r in latest_per_task.values():
        if r.text.startswith("No open questions"):
            continue
        count += _question_count(r)
        items.append(BriefItem(BriefSection.OPEN_QUESTIONS, "open questions (refresh artifact)",
                               f"{r.title}\n{r.text}\n{_source_line(r)}", (r.provenance.ref,), (r.id,), 220))
    for r in store.records_of_kind([RecordKind.DECISION.value], mission=window.mission, until=window.until,
                                   limit=_SCAN_LIMIT):
        if str(r.attributes.get("status") or "").lower() == "proposed" and _current_proposal(r, window, activity):
            count += 1
            items.append(BriefItem(BriefSection.OPEN_QUESTIONS, "proposed decision", _decision_text(r),
                                   (r.provenance.ref,), (r.id,), 160))
    for r in store.records_of_kind([RecordKind.COMMENT.value], mission=window.mission, until=window.until,
                                   limit=_SCAN_LIMIT):
        if r.attributes.get("answered") is False:
            count += 1
            a = r.attributes
            items.append(BriefItem(
                BriefSection.OPEN_QUESTIONS, "unanswered tracker comment",
                f"on {a.get('issue_key') or '?'} by {a.get('author') or 'unknown'}: {_one_line(r.text, 500)}\n"
                + _source_line(r), (r.provenance.uri,), (r.id,), 120))
    return items, count


def _refresh_watch_items(store: MemoryStore) -> list[BriefItem]:
    from mission_memory.refresh.ledger import REFRESH_MISSION

    items = []
    raw = store.get_state(REFRESH_MISSION, "last_pass")
    last_pass = json.loads(raw) if raw else None
    failed_tasks: set[str] = set()
    if isinstance(last_pass, dict):
        for failure in last_pass.get("failed") or []:
            if isinstance(failure, dict):
                failed_tasks.add(str(failure.get("task")))
                items.append(BriefItem(
                    BriefSection.WATCH, "refresh failure",
                    f"refresh pass of {last_pass.get('now', '?')} ({last_pass.get('tracker', '?')} tracker): "
                    f"{failure.get('task')}: {_one_line(str(failure.get('error')), 300)}\n"
                    "source: refresh state `last_pass`", ("refresh:last_pass",), (), 100))
    return items


def _unowned_task_items(store: MemoryStore, window: ShiftWindow) -> list[BriefItem]:
    comments_on: dict[str, int] = defaultdict(int)
    for c in store.records_of_kind([RecordKind.COMMENT.value], mission=window.mission, since=window.since,
                                   until=window.until, limit=_SCAN_LIMIT):
        comments_on[str(c.attributes.get("issue_key") or "")] += 1
    items = []
    for r in store.records_of_kind([RecordKind.ISSUE.value], mission=window.mission, until=window.until,
                                   limit=_SCAN_LIMIT):
        a = r.attributes
        key = str(a.get("key") or "")
        active = window.since <= r.provenance.time < window.until or comments_on.get(key, 0) > 0
        if active and not a.get("assignee") and _is_open_task(r):
            items.append(BriefItem(
                BriefSection.WATCH, "task with activity but no owner",
                f"{key} {r.title}".strip() + f"\nstate: {a.get('state') or 'unknown'} · "
                f"{counted(comments_on.get(key, 0), 'comment')} in the window\n{_source_line(r)}", (key or r.provenance.ref,),
                (r.id,), 100))
    return items


def collect_brief_items(
    store: MemoryStore,
    window: ShiftWindow,
    *,
    extra_watch: Sequence[BriefItem] = (),
    tokenizer: Tokenizer | None = None,
    from_operator_known: bool = True,
    token_budget: int | None = None,
) -> tuple[list[BriefItem], dict[str, int], PredecessorProfile]:
    """Read the brief's entries for ``window`` from ``store`` (docs/design.md §6, ADR 0026).

    Args:
        store: the memory's store.
        window: the shift (mission, from → to, since/until).
        extra_watch: watch items the caller found outside the store (e.g. memory behind the repository).
        tokenizer: condenses the incident block while the mission is degraded (None: no incident block).
        from_operator_known: False when memory holds nothing of the named outgoing operator on the
            mission: the status line says so (and that the brief is not archived).
        token_budget: the brief's budget; above 2,500 tokens the incident block grows with it
            (:func:`~mission_memory.handover.incident.block_tokens`). None: the default cap.

    Returns:
        ``(items, counts, profile)``: items in section order, best first within a section; counts
        as :attr:`RotationBrief.counts`; the predecessor's profile.
    """
    m, since, until = window.mission, window.since, window.until
    notes = open_notes(store, m, until)
    tasks = [r for r in store.records_of_kind([RecordKind.ISSUE.value], mission=m, until=until, limit=_SCAN_LIMIT)
             if r.attributes.get("in_progress") is True and _is_open_task(r)]
    decisions = store.records_of_kind([RecordKind.DECISION.value], mission=m, since=since, until=until, limit=200)
    corrections = store.records_of_kind([RecordKind.CORRECTION_PATTERN.value], mission=m,
                                        operator=window.from_operator, since=since, until=until, limit=_SCAN_LIMIT)
    history = store.records_of_kind([RecordKind.COMMIT.value], mission=m, until=until, limit=_SCAN_LIMIT)
    commits = [c for c in history if c.provenance.time >= since]
    tree = tracked_files(store, m)
    activity = rank_activity(history, window_commits=len(commits), outgoing=window.from_operator,
                             incoming=window.to_operator, exists=None if tree is None else tree.__contains__)
    cap = block_tokens(token_budget)
    incident = incident_block(store, m, until, notes, tokenizer, cap) if tokenizer is not None else None
    if incident is not None:
        activity = _only_affected(activity, incident.sectors)
    profile = build_profile(window.from_operator, corrections, activity)
    questions, question_count = _open_question_items(store, window, activity)
    taken = [r for r in decisions if str(r.attributes.get("status") or "").lower() != "proposed"]
    counts = {"decisions": len(taken), "corrections": len(corrections), "open_questions": question_count,
              "tasks_in_progress": len(tasks), "open_notes": len(notes)}

    status = BriefItem(
        BriefSection.STATUS,
        f"status · window {since.date().isoformat()} → {until.date().isoformat()} · {counted(counts['decisions'], 'decision')}"
        f" · {counted(counts['corrections'], 'correction')} · {counted(counts['open_questions'], 'open question')}"
        f" · {counted(counts['tasks_in_progress'], 'task')} in progress · {counted(len(commits), 'commit')}"
        f" · {counted(len(notes), 'open note')}",
        f"mission: {m}\nfrom: {window.from_operator or 'unknown (no earlier operator in memory)'}"
        + ("" if from_operator_known else
           " (memory holds nothing from this operator on the mission: no queries, corrections, decisions"
           " or notes; check the name. This brief is not archived.)")
        + "\n"
        f"to: {window.to_operator or 'unknown'}\nwindow: {since.isoformat()} → {until.isoformat()}\n"
        + _who_did_what(store, window) + _last_handover(store, window),
        max_tokens=260,
    )
    in_block = set(incident.note_ids) if incident is not None else set()
    items = [status, *_note_items([r for r in notes if r.id not in in_block]), *_task_items(tasks)]
    if incident is None:  # while degraded the incident block lists what is firing
        items += _firing_alert_items(store, m, until)
    if incident is not None:
        items.append(BriefItem(BriefSection.CRISIS, "incident: severity, still firing, decisions, next steps",
                               incident.text, incident.refs, incident.record_ids, cap, spine=True, short=incident.short,
                               floor=incident.floor))
    items += _recorded_event_items(store, window, set(incident.record_ids) if incident is not None else set())
    items += [BriefItem(BriefSection.DECISIONS, "decision", _decision_text(r), (r.provenance.ref,), (r.id,), 200)
              for r in taken]
    zoned = {z.component for z in profile.zones}
    items += _linked_decision_items(store, window, activity, {r.id for r in taken}, zoned)
    items += _profile_items(profile)
    items += _other_components_item(activity, zoned)
    items += questions
    items += [*extra_watch, *_refresh_watch_items(store), *_unowned_task_items(store, window)]
    items += _recent_files_item(activity, window.from_operator, window.to_operator)
    return items, counts, profile


def _only_affected(activity: RecentActivity, sectors: Sequence[str]) -> RecentActivity:
    """The activity of the components an incident's sectors name (ADR 0061); the rest stays out."""
    names = [" ".join(s.lower().split()) for s in sectors]

    def affected(component: str) -> bool:
        c = component.lower()
        return component != "(root)" and any(c in s or s in c for s in names if s)

    return RecentActivity(tuple(f for f in activity.files if affected(f.component)),
                          tuple(c for c in activity.components if affected(c.component)), activity.horizon,
                          activity.oldest, activity.recent_since, tuple(f for f in activity.older if affected(f.component)))


def _who_did_what(store: MemoryStore, window: ShiftWindow) -> str:
    """One line per operator active in the window: their work by kind, and queries (which are not work)."""
    done: dict[str, dict[str, int]] = {}
    for when, who, what in work_by_operator(store, window.mission, window.until):
        if when >= window.since:
            done.setdefault(who, {})[what] = done.setdefault(who, {}).get(what, 0) + 1
    asked: dict[str, int] = {}
    for event in store.retrieval_events_matching(mission=window.mission, since=window.since, until=window.until,
                                                 limit=_SCAN_LIMIT):
        if event.operator:
            asked[event.operator] = asked.get(event.operator, 0) + 1
    if not done and not asked:
        return "in the window: no recorded work\n"
    lines = ["in the window:"]
    for who in sorted(set(done) | set(asked), key=lambda w: (-sum(done.get(w, {}).values()), w)):
        work = ", ".join(counted(n, what) for what, n in sorted(done.get(who, {}).items(), key=lambda kv: -kv[1]))
        reads = (f"{asked[who]} {'query or brief' if asked[who] == 1 else 'queries or briefs'} read (not work)"
                 if who in asked else "")
        lines.append(f"- {who}: " + (work or "no work") + (f"; {reads}" if reads else ""))
    return "\n".join(lines) + "\n"


def _last_handover(store: MemoryStore, window: ShiftWindow) -> str:
    """Whether the previous handover on the mission was acknowledged, with its read-back (ADR 0060)."""
    from mission_memory.handover.acknowledgement import acknowledgement_of
    from mission_memory.teams.access_control import AccessScopedStore

    siblings: list[str] = []
    # a lower clearance does not see every archived brief (a brief takes the level of what it shows)
    seen = " that your clearance shows" if isinstance(store, AccessScopedStore) else ""
    last = f"last handover: none archived on this mission before this shift{seen}\n"
    for r in store.records_of_kind([RecordKind.HANDOVER_BRIEF.value], mission=window.mission, until=window.until,
                                   limit=20):
        a = r.attributes
        if (a.get("from_operator"), a.get("to_operator")) == (window.from_operator, window.to_operator):
            continue  # an earlier build of this same handover (its default window moves with the clock)
        ack = acknowledgement_of(store, window.mission, str(a.get("shift_key")))
        shift = f"{a.get('from_operator') or 'unknown'} → {a.get('to_operator') or 'unknown'} ({r.provenance.time.date().isoformat()})"
        if ack is None:
            read = f"{shift}, not acknowledged"
        else:
            back = f"; read-back: {_one_line(ack['read_back'], 300)}" if ack.get("read_back") else "; no read-back"
            read = f"{shift}, acknowledged by {ack.get('operator') or 'unknown'} at {ack.get('time')}{back}"
        if a.get("from_operator") == window.from_operator and r.provenance.time >= window.since:
            # a brief of this same outgoing shift built for someone else (a supervisor, a third reader):
            # not a link of the handover chain, so named apart
            if len(siblings) < 3:
                siblings.append(read)
            continue
        last = f"last handover: {read}\n"
        break
    return last + "".join(f"also briefed: {read}\n" for read in siblings)


# -- packing -----------------------------------------------------------------------------------


def _header(budget: int, nonce: str) -> str:
    return (
        f"# Mission memory handover brief\nScope: handover · budget {budget} tokens\n" + fence_notice(nonce)
    )


def _block(index: int, item: BriefItem, text: str, nonce: str) -> str:
    return (f"### {index}. {item.label}\n{open_marker(index, nonce)}\n{neutralise_headings(neutralise_markers(text))}\n"
            f"{close_marker(index, nonce)}")


def _footer(included: int, omitted: int) -> str:
    if included == 0:
        return "_Nothing to hand over: memory holds no activity for this mission._"
    entries = counted(included, "entry", "entries")
    if omitted == 0:
        return f"_{entries}; nothing omitted._"
    return f"_{entries}; {omitted} more omitted to stay within the token budget._"


def _spine_statement(spine: Sequence[BriefItem], left_out: Sequence[BriefItem], form: str, floor_whole: int,
                     floor_short: int) -> str:
    """The line under "What to do first" saying how the open notes are shown and from which budget."""
    notes = [i for i in spine if i.section is BriefSection.DO_FIRST]
    if not notes:
        return ""
    dropped = [i for i in left_out if i.section is BriefSection.DO_FIRST]
    head = f"_Open handover notes: {sum(len(i.refs) or 1 for i in notes)}; "
    if dropped:
        ids = ", ".join(r.removeprefix("handover-note/")[:12] for i in dropped for r in i.refs)
        return (head + f"{sum(len(i.refs) or 1 for i in dropped)} not shown at this budget (ids {ids}): the"
                f" mission's handover notes list prints them; every note fits, condensed, from a budget of {floor_short} tokens._")
    if form == "whole":
        return head + f"all shown whole (whole from a budget of {floor_whole} tokens, condensed from {floor_short})._"
    return (head + f"all shown condensed to their first line (whole from a budget of {floor_whole} tokens):"
            " the mission's handover notes list prints them whole._")


def _round_robin(items: Sequence[BriefItem]) -> list[BriefItem]:
    by_section: dict[BriefSection, list[BriefItem]] = defaultdict(list)
    for item in items:
        by_section[item.section].append(item)
    order: list[BriefItem] = []
    depth = max((len(v) for v in by_section.values()), default=0)
    for rank in range(depth):
        for section in BriefSection:
            queue = by_section.get(section, [])
            if rank < len(queue):
                order.append(queue[rank])
    return order


def _cut_lines(text: str, room: int, tokenizer: Tokenizer) -> str:
    """The longest prefix of whole lines of ``text`` within ``room`` tokens ("" when not even one fits)."""
    lines = text.splitlines()
    low, high = 0, len(lines)
    while low < high:
        mid = (low + high + 1) // 2
        if tokenizer.count("\n".join(lines[:mid])) <= room:
            low = mid
        else:
            high = mid - 1
    return "\n".join(lines[:low])


def pack_brief(
    items: Sequence[BriefItem],
    token_budget: int,
    tokenizer: Tokenizer,
    *,
    nonce: str | None = None,
) -> tuple[str, list[tuple[BriefItem, str]], int, int]:
    """Render ``items`` as a fenced Markdown brief of at most ``token_budget`` tokens.

    The status line is always kept (it is priced with the header). The spine follows (ADR 0060): the
    incident block and the open notes, whole when all fit; else the notes condensed and sharing one
    entry (one heading and one pair of envelope markers for all of them), the block whole while it
    fits beside them; else as many condensed notes as fit, the others listed by id. An item with a floor (an
    open incident: its line and every open alert, one line each; ADR 0090) is never left out: whole, else
    condensed, else its floor, which is priced with the header. The other items are considered
    round by round (each section's first, then each section's second, …) within the budget less
    what *fill* items need whole, at most :data:`RECENT_FILES_SHARE` of it; one that does not fit whole is
    cut to the room left when at least 32 tokens of it fit. Fill items (the recently changed files)
    then take the room that is left, cut at a line boundary. The whole text is counted again at the
    end and the last-taken entries dropped (a fill item loses lines first) until it fits, so the
    bound holds for the exact text, envelope markers included (as :func:`~mission_memory.retrieval.digest.pack_digest`).

    Args:
        items: in section order, best first within a section.
        token_budget: the bound, in tokens (the tokenizer's safety margin included).
        tokenizer: the project's tokenizer.
        nonce: the envelope nonce (default: fresh); fixed only in tests.

    Returns:
        ``(text, entries, tokens_used, omitted)``; entries as ``(item, shown text)`` in rendered order.

    Raises:
        BudgetError: the budget cannot hold the header, the status line, the closing line and the floor of
            an open incident; it names the budget they need.
    """
    nonce = nonce or new_nonce()
    header = _header(token_budget, nonce)
    sep = tokenizer.count(_SEPARATOR)
    n = len(items)
    widest = max(n, 1)
    fixed = tokenizer.count(header) + sep + max(tokenizer.count(_footer(n, n)), tokenizer.count(_footer(0, 0)))
    section_cost = {s: tokenizer.count(f"## {s.value}") + sep for s in BriefSection}
    # The status line is always shown: it is priced with the header.
    taken: list[tuple[BriefItem, str]] = []
    opened: set[BriefSection] = set()
    for item in items:
        if item.section is BriefSection.STATUS:
            text = tokenizer.truncate(item.text, item.max_tokens)
            fixed += tokenizer.count(_block(widest, item, text, nonce)) + sep
            fixed += 0 if item.section in opened else section_cost[item.section]
            opened.add(item.section)
            taken.append((item, text))
    # The spine (the incident block, the open handover notes) comes next: whole, else condensed,
    # else listed as not shown, before any other entry is considered (ADR 0060).
    section_rank = {s: i for i, s in enumerate(BriefSection)}
    spine = sorted((i for i in items if i.spine and i.section is not BriefSection.STATUS),
                   key=lambda i: section_rank[i.section])  # the incident block, then the notes
    statement_room = max(tokenizer.count(_spine_statement(spine, left, "whole", 99_999, 99_999))
                         for left in ([], spine)) + sep
    fixed += statement_room if spine else 0

    def spine_cost(item: BriefItem, text: str) -> int:
        return tokenizer.count(_block(widest, item, text, nonce)) + sep

    # An item with a floor (the open incident) is never left out: its floor is priced with the header.
    floors = [i for i in spine if i.floor]
    floor_room = (sum(spine_cost(i, i.floor) for i in floors)
                  + sum(section_cost[s] for s in {i.section for i in floors} - opened))
    if fixed + floor_room > token_budget:
        raise BudgetError(
            token_budget, fixed + floor_room,
            "the brief's header and status line"
            + (" and the line saying how the open handover notes are shown" if spine else "")
            + (", and the open incident's line with every open alert (one line each)" if floors else ""),
        )

    whole = sum(spine_cost(i, i.text) for i in spine) + sum(section_cost[s] for s in {i.section for i in spine})
    short = sum(spine_cost(i, i.short or i.text) for i in spine) + sum(section_cost[s] for s in {i.section for i in spine})
    floor_whole, floor_short = fixed + whole, fixed + short
    form = "whole" if floor_whole <= token_budget else "condensed"
    position = {id(item): i for i, item in enumerate(items)}
    notes = [i for i in spine if i.section is BriefSection.DO_FIRST]
    if form == "condensed" and len(notes) > 1:
        # Condensed, the notes share one fenced entry: one heading and one pair of markers instead of
        # one per note, so more notes fit a small budget (ADR 0060).
        merged = BriefItem(BriefSection.DO_FIRST, f"open handover notes, condensed ({len(notes)})",
                           "\n".join(i.short or i.text for i in notes), tuple(r for i in notes for r in i.refs),
                           tuple(r for i in notes for r in i.record_ids), 0, spine=True)
        saved = sum(spine_cost(i, i.short or i.text) for i in notes) - spine_cost(merged, merged.text)
        if saved > 0:
            spine = [*(i for i in spine if i.section is not BriefSection.DO_FIRST), merged]
            position[id(merged)] = position[id(notes[0])]
            floor_short -= saved
    # Condensed, the notes go short first; the incident block stays whole while it fits with them.
    incident_whole = form == "whole" or floor_short + sum(
        spine_cost(i, i.text) - spine_cost(i, i.short or i.text)
        for i in spine if i.section is BriefSection.CRISIS) <= token_budget
    left_out: list[BriefItem] = []
    merged_notes = 0  # notes held by the one condensed notes entry, when it is shown
    for item in spine:
        whole_here = form == "whole" or (item.section is BriefSection.CRISIS and incident_whole)
        text = item.text if whole_here else (item.short or item.text)
        extra = 0 if item.section in opened else section_cost[item.section]
        merged_here = item.section is BriefSection.DO_FIRST and item not in notes
        keep = len(notes) if merged_here else 1
        while merged_here and keep > 1 and fixed + spine_cost(item, text) + extra > token_budget:
            keep -= 1  # the merged notes: as many whole notes as fit, the rest listed by id
            text = "\n".join(i.short or i.text for i in notes[:keep])
        if merged_here and keep < len(notes):
            item = replace(item, label=f"open handover notes, condensed ({keep} of {len(notes)})",
                           refs=tuple(r for i in notes[:keep] for r in i.refs),
                           record_ids=tuple(r for i in notes[:keep] for r in i.record_ids))
            position[id(item)] = position[id(notes[0])]
            left_out.extend(notes[keep:])
        cost = spine_cost(item, text)
        for fallback in (item.short, item.floor) if item.floor else ():
            if fixed + cost + extra <= token_budget:
                break
            if fallback:  # the incident condensed, else its floor, which the budget was checked to hold
                text, cost = fallback, spine_cost(item, fallback)
        if fixed + cost + extra > token_budget:
            left_out.extend(notes[:keep] if merged_here else [item])
            continue
        merged_notes = keep if merged_here else merged_notes
        fixed += cost + extra
        opened.add(item.section)
        taken.append((item, text))
    statement = _spine_statement(spine, left_out, form, floor_whole, floor_short) if spine else ""
    kept_spine = len(taken)
    used = fixed
    fills = [i for i in items if i.fill and i.section is not BriefSection.STATUS]
    needed = sum(tokenizer.count(_block(widest, i, i.text, nonce)) + sep + section_cost[i.section] for i in fills)
    reserve = min(int(token_budget * RECENT_FILES_SHARE), needed)  # no more than the list needs whole
    for limit, queue in ((token_budget - reserve, _round_robin([i for i in items if i.section is not BriefSection.STATUS
                                                                and not i.fill and not i.spine])),
                         (token_budget, fills)):
        for item in queue:
            text = item.text if item.fill else tokenizer.truncate(item.text, item.max_tokens)
            extra = 0 if item.section in opened else section_cost[item.section]
            cost = tokenizer.count(_block(widest, item, text, nonce)) + sep
            if used + cost + extra > limit:
                frame = tokenizer.count(_block(widest, item, "", nonce)) + sep
                room = limit - used - extra - frame - 2
                if room < _MIN_ENTRY_TOKENS:
                    continue
                text = _cut_lines(text, room, tokenizer) if item.fill else tokenizer.truncate(text, room)
                cost = tokenizer.count(_block(widest, item, text, nonce)) + sep
                if not text or used + cost + extra > limit:
                    continue
            used += cost + extra
            opened.add(item.section)
            taken.append((item, text))
    rank = {s: i for i, s in enumerate(BriefSection)}
    while True:
        ordered = sorted(taken, key=lambda e: (rank[e[0].section], position[id(e[0])]))
        parts = [header]
        current: BriefSection | None = None
        for i, (item, text) in enumerate(ordered, start=1):
            if item.section is not current:
                parts.append(f"## {item.section.value}")
                if item.section is BriefSection.DO_FIRST and statement:
                    parts.append(statement)
                current = item.section
            parts.append(_block(i, item, text, nonce))
        if statement and BriefSection.DO_FIRST not in {item.section for item, _ in ordered}:
            parts.append(f"## {BriefSection.DO_FIRST.value}")
            parts.append(statement)
        omitted = n - len(ordered) - max(merged_notes - 1, 0)  # items not shown; a merged entry holds several
        parts.append(_footer(len(ordered), omitted))
        rendered = _SEPARATOR.join(parts)
        tokens = tokenizer.count(rendered)
        if tokens <= token_budget or len(taken) <= kept_spine:
            return rendered, ordered, tokens, omitted
        last, last_text = taken[-1]
        shorter = "\n".join(last_text.splitlines()[:-max(1, (tokens - token_budget) // 8)]) if last.fill else ""
        if shorter:
            taken[-1] = (last, shorter)
        else:
            taken.pop()
