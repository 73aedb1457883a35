"""The crisis timeline: sector trends, the cascade rule (stated causes, then sector and time), chains."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from mission_memory.operations.crisis_timeline import build_crisis_timeline, link_events
from mission_memory.operations.domain_events import DomainEvent
from mission_memory.operations.escalation import EscalationState, FloodPolicy, assess_escalation, event_rates
from mission_memory.operations.scenarios import uav_scenario

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def event(eid: str, minute: float, sector: str, kind: str, crit: float, causes: tuple[str, ...] = ()) -> DomainEvent:
    return DomainEvent(id=eid, time=T0 + timedelta(minutes=minute), sector=sector, type=kind, criticality=crit,
                       text=f"{kind} in {sector}", caused_by=causes)


def test_stated_causes_win_and_unstated_ones_are_inferred_in_the_same_sector_close_in_time() -> None:
    events = [
        event("a", 0, "North", "shelling", 0.9),
        event("b", 2, "North", "ew_jamming", 0.7),            # inferred from a: same sector, new type, 2 min
        event("c", 3, "North", "lost_link", 0.85, ("b",)),    # stated
        event("d", 4, "North", "lost_link", 0.85),            # inferred from b? no: c is later, same type -> skip to b
        event("e", 4.5, "South", "recon", 0.1),               # another sector: nothing
        event("f", 20, "North", "weather", 0.1),              # too late after every possible cause
        event("g", 21, "North", "status", 0.1),               # cause f is routine (criticality < 0.5)
    ]
    links = {(link.cause_id, link.effect_id, link.basis) for link in link_events(events)}
    assert links == {("a", "b", "sector+time"), ("b", "c", "caused_by"), ("b", "d", "sector+time")}


def test_a_stated_cause_that_is_unknown_is_not_replaced_by_a_guess() -> None:
    events = [event("a", 0, "North", "shelling", 0.9), event("b", 1, "North", "ew_jamming", 0.7, ("zzz",))]
    assert link_events(events) == []


def test_the_timeline_of_a_flood_shows_the_rising_sector_first_and_its_cascades() -> None:
    scenario = uav_scenario(4)
    flood_start, _ = scenario.floods[0]
    at = flood_start + timedelta(minutes=15)
    policy = FloodPolicy()
    state = EscalationState()
    for moment in (flood_start, at):
        seen = [e for e in scenario.events if e.time <= moment]
        state = assess_escalation(state, event_rates(((e.time, e.sector) for e in seen), moment, policy.window), policy)
    timeline = build_crisis_timeline([e for e in scenario.events if e.time <= at], state, at)

    assert timeline.mode == "degraded" and timeline.since == flood_start
    top = timeline.sectors[0]
    assert top.sector == "Північ" and top.escalating and top.rate > 10
    assert timeline.cascades
    by_id = {e.id: e for e in scenario.events}
    first = timeline.cascades[0]
    assert first.max_criticality >= 0.85 and by_id[first.root_id].sector == "Північ"
    stated = {(c, e) for c, e in scenario.cascades}
    assert stated & {(link.cause_id, link.effect_id) for link in timeline.links}
    assert timeline.to_json()["cascades"][0]["root_id"] == first.root_id


def test_after_the_flood_the_sector_trend_is_falling() -> None:
    scenario = uav_scenario(4)
    _, flood_end = scenario.floods[0]
    at = flood_end + timedelta(minutes=2)  # the flood ends as its last burst leaves the window
    policy = FloodPolicy()
    seen = [e for e in scenario.events if e.time <= at]
    state = assess_escalation(EscalationState(), event_rates(((e.time, e.sector) for e in seen), at, policy.window), policy)
    timeline = build_crisis_timeline(seen, state, at)
    north = next(s for s in timeline.sectors if s.sector == "Північ")
    assert north.trend == "falling"
    assert timeline.mode == "normal" and timeline.since is None


def test_the_rendered_timeline_keeps_the_windows_critical_events_longest_as_the_budget_shrinks() -> None:
    from mission_memory.api import Memory
    from mission_memory.operations.crisis_timeline import crisis_report, render_timeline

    flood = [event(f"s{i}", i * 0.25, "north", "shelling" if i % 2 else "lost_link", 0.9 if i % 2 else 0.85)
             for i in range(30)] + [event(f"r{i}", i * 0.3, "east", "status", 0.1) for i in range(10)]
    at = T0 + timedelta(minutes=8)
    with Memory.open(event_mission="ops") as memory:
        state = memory.record_events(flood, now=at, embed=False).escalation
        report = crisis_report(memory.store, "ops", state, at)
        tokenizer = memory.tokenizer
    roomy = render_timeline(report, tokenizer, 4000)
    # every event cited: each kind by its best event and its members from the oldest to the newest
    assert "the 15 from event:s1 to event:s29" in roomy and "the 15 from event:s0 to event:s28" in roomy
    # repeats grouped (docs/adr/0057, 0088): one line per kind, most critical first, exact count and span
    assert "30 in 2 distinct kinds" in roomy
    assert "- shelling · north · 0.90 · ×15 12:00:15–12:07:15: event:s29 (the 15 from event:s1 to event:s29)" in roomy
    assert roomy.index("- shelling · north") < roomy.index("- lost_link · north · 0.85 · ×15")
    assert "- north: 30 / 0 · rising · FLOODING" in roomy and "- east: 10 / 0 · rising" in roomy
    tight = render_timeline(report, tokenizer, 400)
    assert tokenizer.count(tight) <= 400
    # chain members, chains, sectors, then the ids of repeats give way before any distinct critical kind
    assert "event:s29" in tight and "event:s28" in tight
    # the members are still cited, from the oldest to the newest
    assert "event:s29 (the 15 from event:s1 to event:s29)" in tight
    tiny = render_timeline(report, tokenizer, 150)
    assert tokenizer.count(tiny) <= 150 and tiny.startswith("Escalation: degraded since")
