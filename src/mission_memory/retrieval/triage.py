"""Criticality triage in pull (docs/design.md §7): in degraded mode, rank by ``α · criticality + (1 − α) · sim``.

In normal mode pull ranks by similarity with a small fixed criticality prior, and this module does
nothing (the digest is byte for byte what it was without it). When the mission's escalation state
(:mod:`mission_memory.operations.escalation_state`) says degraded, two things change:

1. **the candidate set** — every *kind* of domain event of the flood (since one window before it
   began) joins the candidates by its best event, whatever its similarity, because the similarity
   cut-offs before the priors would otherwise drop an event worded unlike the query. Repeats of one
   event (same fingerprint, or same type, sector and text template; :mod:`~mission_memory.operations.event_groups`)
   are one kind, so a retry loop logging one error five thousand times takes one place. The kinds,
   their exact counts and first and last times come from one aggregate over the whole window in the
   store (:func:`~mission_memory.operations.event_groups.event_kinds`), so a flood of any size costs
   about the same and no event of it is left unread (docs/adr/0057, 0088);
2. **the score** — every candidate scores ``α · criticality(e) + (1 − α) · sim(q, e)``, where
   ``sim`` is the candidate's relevance from the two retrievers alone (reciprocal rank fusion of
   its dense and BM25 ranks, scaled to [0, 1]; 0 for an event only criticality brought in), and α
   comes from the event rate (docs/adr/0022). A superseded decision keeps its demotion.

The digest header then states the mode, α, the rate and the window. docs/adr/0037 records the choice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from mission_memory.fence import listed_name
from mission_memory.operations.alert_state import alert_record_ids, firing_only, open_alerts
from mission_memory.operations.escalation import CRITICAL_CRITICALITY, EscalationMode, EscalationState
from mission_memory.operations.escalation_state import current_state
from mission_memory.operations.event_groups import event_kinds, group_key_of_record, kind_members, kind_note
from mission_memory.records import Layer, RecordKind
from mission_memory.retrieval.candidates import CandidateLists
from mission_memory.retrieval.query_terms import term_words
from mission_memory.retrieval.ranking import Candidate, RankingParams
from mission_memory.stores.base import EventKind, Hit, MemoryStore, stored_mission_names
from mission_memory.stores.filters import SearchFilter, filter_columns, matches

__all__ = ["Triage", "names_alert", "names_title", "triage_for"]

TRIAGE_RECENCY_HALF_LIFE = timedelta(hours=6)
"""In degraded mode a domain event's triage score halves per this much age before the clock: a flood is
about now, and an event of last year (or dated year 1) must not take a current one's place (docs/adr/0058)."""

NAMED_ALERT_READ = 10
"""Best lexical domain-event hits read to find the alerts a question names (:func:`names_alert`)."""

_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def names_title(task_words: set[str], title: str) -> bool:
    """Does a question name an alert by its title: at least half of the title's words, and at least two?

    Example: ``names_title({"checkout", "5xx", "eu", "prod"}, "Checkout 5xx above 20% in eu-prod-2")`` is True.
    """
    words = set(term_words(title))
    return len(words) >= 2 and len(words & task_words) >= max(2, (len(words) + 1) // 2)


def names_alert(task_words: set[str], alert_name: str) -> bool:
    """Does a question name an alert: its whole name (``higherrorrate``) or every word of it (``high error rate``)?

    Args:
        task_words: the question's words (:func:`~mission_memory.retrieval.query_terms.term_words`, lower case).
        alert_name: the alert's name, Alertmanager's ``alertname`` (``HighErrorRate``, ``disk_almost_full``).

    Example: ``names_alert({"higherrorrate", "checkout"}, "HighErrorRate")`` is True.
    """
    name = alert_name.strip()
    if not name:
        return False
    if name.lower() in task_words:
        return True
    words = [w.lower() for part in re.split(r"[\W_]+", name) for w in _CAMEL.findall(part)]
    return len(words) > 1 and all(w in task_words for w in words)


@dataclass(frozen=True)
class Triage:
    """The escalation pull answers under, and what it changes in ranking.

    Attributes:
        state: the escalation state used (the most degraded of the missions in question).
        mission: the mission it belongs to (None in normal mode).
    """

    state: EscalationState = field(default_factory=EscalationState)
    mission: str | None = None
    kinds: list[EventKind] = field(default_factory=list, compare=False)
    """Filled by :meth:`widen`: every kind of domain event of the flood's window, most critical first (exact)."""
    best_of: dict[str, EventKind] = field(default_factory=dict, compare=False)
    """Filled by :meth:`widen`: the record id of each kind's best event -> its kind."""
    window: list[datetime | None] = field(default_factory=lambda: [None, None], compare=False)
    """Filled by :meth:`widen`: the flood window the kinds were counted in, ``[from, to]`` (None: open)."""
    open_ids: set[str] = field(default_factory=set, compare=False)
    """Filled by :meth:`widen`: record ids of the open alerts' latest notifications (current whatever their age)."""
    repeat_of: dict[str, str] = field(default_factory=dict, compare=False)
    """Filled by :meth:`widen`: the record id of a candidate event that is not its kind's best -> the best's record id."""
    named: set[str] = field(default_factory=set, compare=False)
    """Filled by :meth:`widen`: record ids of alerts the question names (:func:`names_alert`), firing or resolved."""

    @property
    def degraded(self) -> bool:
        """True when ranking triages by criticality."""
        return self.state.mode is EscalationMode.DEGRADED

    def widen(self, store: MemoryStore, lists: CandidateLists, where: SearchFilter, task: str = "") -> CandidateLists:
        """Add the best event of every kind of the flood's window, and the alerts still firing, to the
        candidate lists (degraded mode only); note which similarity hits are repeats of a kind.

        An alert open at the assessment's clock (:func:`~mission_memory.operations.alert_state.open_alerts`)
        joins whatever its severity or start time, when it passes ``where``: it is current even when it
        started before the window (docs/adr/0057). The alerts among the best lexical
        domain-event hits whose name ``task`` names are noted for :meth:`rescore`.

        Args:
            store: where to read them.
            lists: step 1's :class:`~mission_memory.retrieval.candidates.CandidateLists`.
            where: the query's layers and filters; events are taken only when the domain layer is in scope.
            task: the question (its words find the alerts it names).
        """
        if not self.degraded or Layer.DOMAIN not in where.layers:
            return lists
        start = self.state.since or self.state.assessed_at
        recent = SearchFilter((Layer.DOMAIN,), where.filters)
        if start is not None:
            since = (start - self.state.window).replace(microsecond=0)  # named to the second, counted so
            if where.filters.since is None or where.filters.since < since:
                recent = SearchFilter((Layer.DOMAIN,), where.filters, since=since)
        until = self.state.assessed_at
        if until is not None and (recent.filters.until is None or recent.filters.until > until):
            recent = SearchFilter((Layer.DOMAIN,), recent.filters, until=until)  # nothing after the clock
        self.window[:] = [recent.filters.since, recent.filters.until]
        # every kind of the window, exact, aggregated in the store: no event is left unread (docs/adr/0088)
        kinds = event_kinds(store, recent)
        self.kinds[:] = kinds
        self.best_of.update({k.best_id: k for k in kinds})
        self._note_repeats(store, lists, {k.key: k.best_id for k in kinds})
        wanted = [k.best_id for k in kinds]
        firing = self._firing(store, where)
        self.open_ids.update(firing)
        wanted += [rid for rid in firing if rid not in self.best_of]
        score_of = {k.best_id: k.max_criticality for k in kinds}
        self._note_named(store, lists, task)
        priors = {**lists.priors, **store.priors_of([rid for rid in wanted if rid not in lists.priors])}
        events_hits = [Hit(record_id=rid, score=score_of.get(rid, priors[rid].criticality if rid in priors else 0.0))
                       for rid in wanted
                       if rid in priors and priors[rid].kind is RecordKind.DOMAIN_EVENT]
        if not events_hits:
            return lists
        critical = {layer: dict(by_kind) for layer, by_kind in lists.critical.items()}
        domain = critical.setdefault(Layer.DOMAIN, {})
        known = {h.record_id for h in domain.get(RecordKind.DOMAIN_EVENT, [])}
        domain[RecordKind.DOMAIN_EVENT] = domain.get(RecordKind.DOMAIN_EVENT, []) + [
            h for h in events_hits if h.record_id not in known
        ]
        return replace(lists, critical=critical, priors=priors)

    def _firing(self, store: MemoryStore, where: SearchFilter) -> list[str]:
        """Record ids of the mission's open alerts (latest notification) that pass ``where``, most critical first."""
        if self.mission is None:
            return []
        alerts = firing_only(open_alerts(store, self.mission, self.state.assessed_at))  # silenced ones are not firing
        ids = alert_record_ids(store, self.mission, alerts)
        records = store.get(list(ids.values()))
        return [ids[a.event_id] for a in alerts if a.event_id in ids and ids[a.event_id] in records
                and matches(where, filter_columns(records[ids[a.event_id]]))]

    def _note_repeats(self, store: MemoryStore, lists: CandidateLists, best_of_key: dict[str, str]) -> None:
        """Note which domain events among the similarity hits are repeats of a kind whose best event is another."""
        hits = {h.record_id for found in (lists.dense, lists.bm25)
                for h in found.get(Layer.DOMAIN, {}).get(RecordKind.DOMAIN_EVENT, []) if h.record_id not in self.best_of}
        for rid, record in store.get(list(hits)).items():
            best = best_of_key.get(group_key_of_record(record) or "")
            if best is not None and best != rid:
                self.repeat_of[rid] = best

    def _note_named(self, store: MemoryStore, lists: CandidateLists, task: str) -> None:
        """Note the alerts (events with a fingerprint) among the best lexical domain-event hits that ``task`` names."""
        words = set(term_words(task))
        if not words:
            return
        hits = lists.bm25.get(Layer.DOMAIN, {}).get(RecordKind.DOMAIN_EVENT, [])[:NAMED_ALERT_READ]
        for rid, record in store.get([h.record_id for h in hits]).items():
            a = record.attributes
            labels = a.get("labels")
            title = str(labels.get("title") or "") if isinstance(labels, dict) else ""
            if a.get("fingerprint") and (names_alert(words, str(a.get("event_type", ""))) or names_title(words, title)):
                self.named.add(rid)

    def annotate(self, candidates: Sequence[Candidate]) -> list[Candidate]:
        """Each candidate standing for a kind of repeated events gets the kind's exact :func:`~mission_memory.operations.event_groups.kind_note`
        and its members cited (:func:`~mission_memory.operations.event_groups.kind_members`), after :meth:`widen`."""
        out = []
        for cand in candidates:
            kind = self.best_of.get(cand.record_id)
            note = kind_note(kind) if kind is not None else ""
            out.append(replace(cand, group_note=note, group_members=kind_members(kind)) if kind is not None and note else cand)
        return out

    def footer_line(self, candidates: Sequence[Candidate]) -> str:
        """The digest footer's line saying, in numbers, what of the flood's window the entries stand for
        and what they leave out (degraded mode with events only; else ""). ``candidates``: the entries' candidates."""
        if not self.degraded or not self.kinds:
            return ""
        shown = {c.record_id for c in candidates}
        kept = [k for k in self.kinds if k.best_id in shown]
        left = [k for k in self.kinds if k.best_id not in shown]
        total = sum(k.count for k in self.kinds)
        folded = sum(k.count - 1 for k in kept)
        start = self.window[0]
        named = f" since {start.astimezone(UTC):%H:%M:%S}" if start is not None else ""
        line = (f"_Flood window{named}: {total} events of {len(self.kinds)} kinds, every one read; "
                f"{len(kept)} kinds shown, {folded} repeats counted in their kind's entry")
        if left:
            critical = [k for k in left if k.max_criticality >= CRITICAL_CRITICALITY]
            line += (f"; {len(left)} kinds ({sum(k.count for k in left)} events, highest criticality "
                     f"{max(k.max_criticality for k in left):.2f}, {len(critical)} of them critical) left out")
        else:
            line += "; no kind left out"
        return line + "._"

    def rescore(self, ranked: Sequence[Candidate], lists: CandidateLists, params: RankingParams) -> list[Candidate]:
        """Score every candidate ``α · criticality + (1 − α) · sim`` (degraded mode; else unchanged).

        An alert the question names (noted by :meth:`widen`) scores at least its ``sim``: a resolved alert
        has criticality 0, yet asked for by name it must not sink under every decision.

        A domain event's score is then multiplied by ``0.5 ** (age / TRIAGE_RECENCY_HALF_LIFE)``, its age
        counted from the assessment's clock (0 for events at or after it).

        Returns:
            The candidates, best first (ties by record id, as :func:`~mission_memory.retrieval.ranking.apply_priors`).
        """
        if not self.degraded:
            return list(ranked)
        alpha = self.state.alpha
        clock = self.state.assessed_at
        top = 2.0 / (params.rrf_k + 1)
        out = []
        for cand in ranked:
            if cand.record_id in self.repeat_of:
                continue  # a repeat: its kind's best event stands for it (docs/adr/0057, 0088)
            prior = lists.priors.get(cand.record_id)
            criticality = prior.criticality if prior is not None else (cand.record.criticality if cand.record else 0.0)
            rrf = sum(1.0 / (params.rrf_k + rank) for rank in (cand.dense_rank, cand.bm25_rank) if rank is not None)
            reach = top / 2 if cand.record_id in lists.unembedded else top  # no vector: one list (ADR 0063)
            similarity = min(1.0, rrf / reach)
            score = alpha * criticality + (1.0 - alpha) * similarity
            if cand.record_id in self.named:
                # the question names this alert: it ranks by its relevance at least, resolved or not
                score = max(score, similarity)
            if (prior is not None and prior.kind is RecordKind.DOMAIN_EVENT and clock is not None
                    and cand.record_id not in self.open_ids):  # an open alert is current, however old its start
                age = (clock - prior.time).total_seconds() if prior.time is not None else 0.0
                score *= 0.5 ** (max(0.0, age) / TRIAGE_RECENCY_HALF_LIFE.total_seconds())
            if cand.superseded:
                score *= params.superseded_factor
            out.append(replace(cand, score=score))
        out.sort(key=lambda c: (-c.score, c.record_id))
        return out

    def header_lines(self) -> tuple[str, ...]:
        """The digest header's escalation line (degraded mode only; normal mode adds nothing).

        The mission and sector names are stored text outside the fence: each is escaped
        (:func:`~mission_memory.fence.listed_name`, ADR 0054).
        """
        if not self.degraded:
            return ()
        s = self.state
        minutes = s.window.total_seconds() / 60
        since = f" since {s.since.astimezone(UTC):%Y-%m-%d %H:%M} UTC" if s.since else ""
        where = f" in mission {listed_name(self.mission)}" if self.mission else ""
        sectors = ", ".join(f"{listed_name(k) if k else 'no sector'} {v}"
                            for k, v in sorted(s.escalating_sectors.items(), key=lambda kv: -kv[1]))
        escalating = f" · escalating: {sectors}" if sectors else ""
        return (
            f"Mode: degraded{where}{since} · criticality triage, score = α·criticality + (1−α)·similarity "
            f"with α {s.alpha:.2f} · rate {s.rate} events per {minutes:g} min window{escalating}",
        )


def triage_for(store: MemoryStore, mission: str | None, now: datetime | None = None) -> Triage:
    """The triage pull uses: the escalation state of ``mission``, or the most degraded of every mission.

    Args:
        store: where the states are kept.
        mission: the query's mission filter, or None for every stored mission.
        now: the clock a stale state is brought up to date with (default: now).
    """
    clock = now or datetime.now(UTC)
    missions = [mission] if mission is not None else sorted(stored_mission_names(store))
    worst = Triage()
    for name in missions:
        state = current_state(store, name, clock)
        if state.mode is EscalationMode.DEGRADED and (not worst.degraded or state.alpha > worst.state.alpha):
            worst = Triage(state, name)
    return worst
