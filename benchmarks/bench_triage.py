"""Degraded mode evaluated on scenarios and real logs: similarity-only ranking beside criticality triage.

Issue 10 item 6 (docs/design.md §7). For each dataset — the seeded UAV situation centre and service estate
(:mod:`mission_memory.operations.scenarios`, with ground truth), and loghub's labelled 2k samples of real system
logs (Zookeeper and BGL by default) — the events are replayed into a fresh embedded store in their own
time order, through ``Memory.record_events`` with the clock set to each batch's time (batches of at
most 10 events within 10 s of scenario time; one Alertmanager payload at a time for the service
estate). The escalation is assessed at each batch and once a minute of scenario time while the window
still holds events (as pull re-assesses a stale state on read). During each ground-truth flood an
operator question worded unlike the critical events is asked every 2 minutes of scenario time (from
one minute in), in time order with the assessments and after every event up to its time is stored,
with both rankings on the same stored state and the same candidate lists:

* **similarity** — the pull pipeline's steps with no triage (normal-mode ranking);
* **triage** — the same steps as ``run_query`` runs them in degraded mode: the most critical recent
  events join the candidates, ``α · criticality + (1 − α) · sim``, the crisis timeline section first.

Hadoop is loghub's MapReduce sample of a real network failure (a retry loop logging one error 147 times
beside two FATAL task exits and a few distinct errors): the repeated-error flood of issue 24. The service
estate is an Alertmanager fire / re-notify / resolve sequence. Besides critical events, each pull counts
the *distinct critical kinds* of its window (repeats grouped by type, sector and text template, as the
product groups them, docs/adr/0057) and how many of them the digest cites none of.

Printed, in one run: per dataset, how long after each flood starts and ends the mode switches; ingest
throughput during floods (events/s of ``record_events``, vectors deferred) and the embedding rate of
the catch-up; then per ranking: critical events (criticality ≥ 0.8) of the last window missing from
the digest (the false-negative rate; goal 0), pull p50/p95 and digest tokens. Pulls run back to back
in one process with the rankings alternating, so their times compare; absolute times on a shared
machine are indicative only (the load average is printed).

Usage::

    .venv/bin/python benchmarks/bench_triage.py [--budgets 2000,8000] [--seed 0]
        [--loghub DIR] [--loghub-sets Hadoop,Zookeeper,BGL] [--loghub-limit 2000] [--only uav,service-estate,loghub]

``--loghub DIR`` is a loghub checkout (``git clone --depth 1 https://github.com/logpai/loghub``) or
its bare git directory; without it the loghub rows are skipped with that hint. The loghub data is
read, never copied into this repository. Works in temporary data dirs; nothing else is written.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from mission_memory.api import Memory
from mission_memory.fence import new_nonce
from mission_memory.operations.domain_events import DomainEvent
from mission_memory.operations.escalation import EscalationMode
from mission_memory.operations.event_groups import group_events, group_key
from mission_memory.operations.scenarios import (
    LOGHUB_DATASETS,
    Scenario,
    loghub_scenario,
    service_estate_scenario,
    uav_scenario,
)
from mission_memory.records import RecordKind
from mission_memory.retrieval.digest import pack_digest
from mission_memory.retrieval.filters import QueryFilters, Scope, layers_in_scope
from mission_memory.retrieval.query import rank_candidates, search_candidates, select_candidates
from mission_memory.retrieval.ranking import RankingParams
from mission_memory.retrieval.timeline_section import digest_sections
from mission_memory.retrieval.triage import Triage, triage_for
from mission_memory.stores.filters import SearchFilter

WINDOW = timedelta(minutes=10)
ASK_EVERY = timedelta(minutes=2)
GRID = timedelta(minutes=1)


@dataclass
class RankingFigures:
    """One ranking's figures over a dataset's flood pulls."""

    pulls: int = 0
    critical: int = 0
    missed: int = 0
    missed_entries: int = 0
    kinds: int = 0
    kinds_missed: int = 0
    missed_groups: int = 0
    group_citations: int = 0
    contradicted: int = 0
    ms: list[float] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)


@dataclass
class DatasetFigures:
    """One dataset's figures."""

    name: str
    events: int
    critical: int
    floods: int
    on_lags: list[float] = field(default_factory=list)
    off_lags: list[float] = field(default_factory=list)
    missed_floods: int = 0
    flood_events: int = 0
    flood_ingest_s: float = 0.0
    embedded: int = 0
    embed_s: float = 0.0
    rankings: dict[str, RankingFigures] = field(default_factory=dict)


def _batches(scenario: Scenario) -> Iterator[list[DomainEvent]]:
    if scenario.kind == "service-estate":
        for event in scenario.events:  # one webhook payload, one alert, as Alertmanager posts them
            yield [event]
        return
    batch: list[DomainEvent] = []
    for event in scenario.events:
        if batch and (len(batch) >= 10 or _arrival(event) - _arrival(batch[0]) > timedelta(seconds=10)):
            yield batch
            batch = []
        batch.append(event)
    if batch:
        yield batch


def _arrival(event: DomainEvent) -> datetime:
    """When a notification arrives: a resolved alert at its end, anything else at its time."""
    return event.ends_at or event.time


def _in_flood(moment: datetime, floods: Sequence[tuple[datetime, datetime]]) -> bool:
    return any(start <= moment <= end for start, end in floods)


def _pct(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _cited(text: str, event_id: str) -> bool:
    """Whether the digest cites ``event:<id>`` (an entry's source line or a timeline line), as a whole id."""
    return re.search(re.escape(f"event:{event_id}") + r"(?![\w@:.+-])", text) is not None


_MEMBERS = re.compile(r"the (\d+) from event:([^\s)]+) to event:([^\s)]+)")


def _cited_as_members(text: str, stored: dict[str, DomainEvent], recent_critical: set[str]) -> tuple[set[str], int, int]:
    """The critical events a digest cites as a group's members, and how many such citations it makes and how
    many of them the stored events contradict.

    A group is cited as ``the N from event:<A> to event:<B>`` (``group_members``, docs/adr/0057). The
    citation covers the stored events of A's kind (type, sector and text template) from A to B by time,
    then id; it counts only when N is their number, all of them or those of them that are critical,
    firing and in the window; a citation whose N is neither is counted as contradicted and cites nothing
    beyond A and B.
    """
    covered: set[str] = set()
    claims = contradicted = 0
    for n, first, last in _MEMBERS.findall(text):
        claims += 1
        a, b = stored.get(first), stored.get(last)
        if a is None or b is None:
            contradicted += 1
            continue
        key = group_key(a)
        low, high = (a.time, a.id), (b.time, b.id)
        between = {e.id for e in stored.values() if low <= (e.time, e.id) <= high and group_key(e) == key}
        if int(n) in (len(between), len(between & recent_critical)):
            covered |= between & recent_critical
        else:
            contradicted += 1
    return covered, claims, contradicted


def _pull(memory: Memory, scenario: Scenario, question: str, at: datetime, budget: int, triaged: bool,
          recent_critical: set[str], kinds: Sequence[frozenset[str]],
          stored: dict[str, DomainEvent]) -> tuple[float, int, int, int, int, int, int, int]:
    """One pull at scenario time ``at``.

    Returns:
        ``(ms, tokens, missing, missing from the entries, kinds missing, missing counting group citations,
        group citations, group citations contradicted)``: critical events of the window the digest does not
        cite by id at all (neither as an entry nor in the timeline), those not among its entries, distinct
        critical kinds (groups of repeats, docs/adr/0057) none of whose events is cited, and critical events
        cited neither by id nor as members of a group (:func:`_cited_as_members`).
    """
    started = time.perf_counter()
    store, params = memory.store, RankingParams()
    layers = layers_in_scope(Scope.ALL)
    where = SearchFilter(layers, QueryFilters(mission=scenario.mission))
    triage = triage_for(store, scenario.mission, now=at) if triaged else Triage()
    lists = triage.widen(store, search_candidates(store, memory.embedder, question, where, params), where)
    ranked = triage.rescore(rank_candidates(lists, layers, params), lists, params)
    candidates, _ = select_candidates(store, memory.embedder.model_id, question, where, ranked, params,
                                      memory.settings.max_digest_entries)
    candidates = triage.annotate(candidates)
    nonce = new_nonce()
    sections = digest_sections(store, degraded_mission=triage.mission if triage.degraded else None,
                               asked_mission=scenario.mission, layers=layers, requested=False, nonce=nonce,
                               tokenizer=memory.tokenizer, token_budget=budget, now=at) if triaged else None
    text, entries, tokens, _omitted = pack_digest(
        question, "all", candidates, budget, memory.tokenizer, memory.settings.max_entry_tokens, layers, now=at,
        sections=sections, nonce=nonce, header_lines=triage.header_lines(),
    )
    ms = (time.perf_counter() - started) * 1000
    shown = {str(e.record.attributes.get("event_id")) for e in entries if e.record.kind is RecordKind.DOMAIN_EVENT}
    cited = {i for i in recent_critical if _cited(text, i)}
    members, claims, contradicted = _cited_as_members(text, stored, recent_critical)
    return (ms, tokens, len(recent_critical - cited), len(recent_critical - shown),
            sum(1 for kind in kinds if not kind & cited), len(recent_critical - cited - members), claims, contradicted)


def evaluate(scenario: Scenario, budgets: Sequence[int], embed: bool = True) -> DatasetFigures:
    """Replay ``scenario`` into a fresh store and measure both rankings during its floods.

    ``embed=False`` leaves the events without vectors (as while the embedding queue lags a flood):
    similarity is then BM25 alone for events.
    """
    figures = DatasetFigures(scenario.mission, len(scenario.events), len(scenario.critical_ids), len(scenario.floods))
    figures.rankings = {f"{name} {b}": RankingFigures() for b in budgets for name in ("similarity", "triage")}
    by_time = sorted(scenario.events, key=_arrival)
    modes: list[tuple[datetime, EscalationMode]] = []
    with tempfile.TemporaryDirectory() as tmp, Memory.open(data_dir=Path(tmp), event_mission=scenario.mission) as memory:
        memory.embedder.embed_passages(["warm up"])
        asked = 0
        last_assessed: datetime | None = None
        next_ask = {start: start + ASK_EVERY / 2 for start, _ in scenario.floods}

        def pull_at(at: datetime) -> None:
            nonlocal asked
            asked += 1
            began = time.perf_counter()
            figures.embedded += memory.embed_pending() if embed else 0
            figures.embed_s += time.perf_counter() - began
            # one event per id as the store keeps it at ``at``; an alert resolved by then is no longer critical
            latest = {e.id: e for e in by_time if _arrival(e) <= at}
            recent = {i for i, e in latest.items() if at - WINDOW < e.time <= at and i in scenario.critical_ids
                      and e.state.value == "firing"}
            stored = dict(latest)
            latest = {i: e for i, e in latest.items() if i in recent}
            kinds = [frozenset(e.id for e in g.events) for g in group_events(latest.values())]
            question = scenario.questions[asked % len(scenario.questions)][1]
            order = ("triage", "similarity") if asked % 2 else ("similarity", "triage")
            for budget, ranking in ((b, name) for b in budgets for name in order):
                ms, tokens, missed, missed_entries, kinds_missed, missed_groups, claims, contradicted = _pull(
                    memory, scenario, question, at, budget, ranking == "triage", recent, kinds, stored)
                r = figures.rankings[f"{ranking} {budget}"]
                r.pulls += 1
                r.ms.append(ms)
                r.tokens.append(tokens)
                r.critical += len(recent)
                r.missed += missed
                r.missed_entries += missed_entries
                r.kinds += len(kinds)
                r.kinds_missed += kinds_missed
                r.missed_groups += missed_groups
                r.group_citations += claims
                r.contradicted += contradicted

        def advance(moment: datetime) -> None:
            """Assessments on the minute grid and flood questions strictly before ``moment``, in time order."""
            agenda: list[tuple[datetime, int]] = []
            if last_assessed is not None:
                tick = last_assessed + GRID
                while tick < min(moment, last_assessed + WINDOW + GRID):
                    agenda.append((tick, 0))
                    tick += GRID
            for start, end in scenario.floods:
                while next_ask[start] < moment and next_ask[start] <= end:
                    agenda.append((next_ask[start], 1))
                    next_ask[start] += ASK_EVERY
            for at, kind in sorted(agenda):
                if kind == 0:
                    modes.append((at, memory.escalation_status(now=at).mode))
                else:
                    pull_at(at)

        for batch in _batches(scenario):
            at = max(_arrival(e) for e in batch)
            advance(min(_arrival(e) for e in batch))  # every event up to a question's time is stored before it
            began = time.perf_counter()
            report = memory.record_events(batch, scenario.mission, now=at, embed=False)
            spent = time.perf_counter() - began
            if _in_flood(at, scenario.floods):
                figures.flood_events += len(batch)
                figures.flood_ingest_s += spent
            modes.append((at, report.escalation.mode))
            last_assessed = at
        advance(_arrival(by_time[-1]) + WINDOW + GRID)
    for start, end in scenario.floods:
        on = next((t for t, m in modes if t >= start and m is EscalationMode.DEGRADED), None)
        if on is None or on > end:
            figures.missed_floods += 1
            continue
        figures.on_lags.append((on - start).total_seconds())
        off = next((t for t, m in modes if t > end and m is EscalationMode.NORMAL), None)
        if off is not None:
            figures.off_lags.append((off - end).total_seconds())
    return figures


def _loghub_text(root: Path, path: str) -> str:
    if (root / path).is_file():
        return (root / path).read_text(encoding="utf-8")
    return subprocess.run(["git", "--git-dir", str(root), "show", f"HEAD:{path}"], capture_output=True, text=True,
                          check=True, timeout=120).stdout


def _lags(values: Sequence[float]) -> str:
    if not values:
        return "–"
    return f"{_pct(values, 0.5):.0f} / {max(values):.0f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--budgets", default="2000,8000", help="digest token budgets, comma-separated (8000: the default)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated scenarios")
    parser.add_argument("--loghub", type=Path, default=None,
                        help="a loghub checkout or bare git dir (git clone --depth 1 https://github.com/logpai/loghub)")
    parser.add_argument("--loghub-sets", default="Hadoop,Zookeeper,BGL", help=f"comma-separated, of: {', '.join(LOGHUB_DATASETS)}")
    parser.add_argument("--loghub-limit", type=int, default=2000, help="lines read per loghub sample")
    parser.add_argument("--only", default="uav,service-estate,loghub", help="kinds of dataset to run, comma-separated")
    parser.add_argument("--no-embed", action="store_true",
                        help="leave events without vectors (the embedding queue lagging the flood): quicker")
    args = parser.parse_args()
    only = {k.strip() for k in args.only.split(",") if k.strip()}

    scenarios = [s for s in (uav_scenario(args.seed), service_estate_scenario(args.seed)) if s.kind in only]
    if "loghub" not in only:
        pass
    elif args.loghub is None:
        print("loghub: skipped (no --loghub DIR; get it with `git clone --depth 1 https://github.com/logpai/loghub` "
              "and pass --loghub loghub)")
    else:
        for name in [s.strip() for s in args.loghub_sets.split(",") if s.strip()]:
            scenarios.append(loghub_scenario(name, _loghub_text(args.loghub, LOGHUB_DATASETS[name][0]),
                                             limit=args.loghub_limit))
    load = os.getloadavg()
    print(f"load average at start: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores; "
          f"budgets {args.budgets} tokens; questions every {ASK_EVERY.total_seconds() / 60:g} min of each flood")
    results = []
    for scenario in scenarios:
        print(f"… {scenario.mission}: {len(scenario.events)} events, {len(scenario.floods)} floods", flush=True)
        results.append(evaluate(scenario, [int(b) for b in args.budgets.split(",") if b.strip()],
                                embed=not args.no_embed))

    print()
    print("Detection and intake (lags: median / max, from the ground-truth flood start or end to the switch)")
    print(f"{'dataset':22} {'events':>6} {'crit':>5} {'floods':>6} {'missed':>6} {'on lag':>12} {'off lag':>12} "
          f"{'ingest ev/s':>11} {'embed rec/s':>11}")
    for f in results:
        ingest = f.flood_events / f.flood_ingest_s if f.flood_ingest_s else float("nan")
        embed = f.embedded / f.embed_s if f.embed_s else float("nan")
        print(f"{f.name:22} {f.events:>6} {f.critical:>5} {f.floods:>6} {f.missed_floods:>6} {_lags(f.on_lags):>12} "
              f"{_lags(f.off_lags):>12} {ingest:>11.0f} {embed:>11.1f}")
    print()
    print("Ranking during floods (critical = criticality ≥ 0.8 in the last 10 min at each pull; missed = not cited by")
    print("the digest with its event:<id> provenance, as an entry or a timeline line; FN rate = missed / critical;")
    print("not an entry = missing from the entries alone; kinds = distinct critical kinds of the window, repeats")
    print("grouped by type, sector and text template; kinds missed = kinds none of whose events is cited;")
    print("with groups = missed counting a group's members as cited where the digest cites them as `the N from")
    print("event:A to event:B` and N agrees with the stored events; groups = such citations, bad = contradicted)")
    print(f"{'dataset':22} {'ranking, budget':16} {'pulls':>5} {'kinds':>5} {'missed':>6} {'kind FN':>7} {'critical':>8} "
          f"{'missed':>6} {'FN rate':>7} {'with groups':>11} {'FN rate':>7} {'groups':>6} {'bad':>4} {'not an entry':>12} "
          f"{'p50 ms':>7} {'p95 ms':>7} {'tokens mean':>11} {'max':>5}")
    for f in results:
        for name, r in f.rankings.items():
            rate = r.missed / r.critical if r.critical else 0.0
            group_rate = r.missed_groups / r.critical if r.critical else 0.0
            kind_rate = r.kinds_missed / r.kinds if r.kinds else 0.0
            mean_tokens = sum(r.tokens) / len(r.tokens) if r.tokens else float("nan")
            print(f"{f.name:22} {name:16} {r.pulls:>5} {r.kinds:>5} {r.kinds_missed:>6} {kind_rate:>7.1%} {r.critical:>8} "
                  f"{r.missed:>6} {rate:>7.1%} {r.missed_groups:>11} {group_rate:>7.1%} {r.group_citations:>6} "
                  f"{r.contradicted:>4} {r.missed_entries:>12} "
                  f"{_pct(r.ms, .5):>7.0f} {_pct(r.ms, .95):>7.0f} {mean_tokens:>11.0f} {max(r.tokens, default=0):>5}")
    load = os.getloadavg()
    print(f"\nload average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")


if __name__ == "__main__":
    main()
