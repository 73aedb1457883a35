"""Seeded operations scenarios: deterministic, consistent ground truth, real Alertmanager payloads."""

from __future__ import annotations

from datetime import timedelta

from mission_memory.domain_events import events_from_alertmanager
from mission_memory.escalation import (
    EscalationMode,
    EscalationState,
    FloodPolicy,
    assess_escalation,
    event_rates,
)
from mission_memory.scenarios import CRITICAL, Scenario, service_estate_scenario, uav_scenario


def replay_modes(scenario: Scenario) -> list[tuple[object, EscalationMode]]:
    """Assess escalation at each arriving firing event, as the store would on ingest."""
    policy = FloodPolicy()
    state = EscalationState()
    firing = [e for e in scenario.events if e.state.value == "firing"]
    modes = []
    for i, event in enumerate(firing):
        rates = event_rates(((e.time, e.sector) for e in firing[: i + 1]), event.time, policy.window)
        state = assess_escalation(state, rates, policy)
        modes.append((event.time, state.mode))
    return modes


def test_the_same_seed_gives_the_same_scenario_and_another_seed_another() -> None:
    assert uav_scenario(7) == uav_scenario(7)
    assert uav_scenario(7).events != uav_scenario(8).events
    assert service_estate_scenario(3) == service_estate_scenario(3)


def test_the_uav_flood_of_ground_truth_is_the_one_escalation_detects() -> None:
    scenario = uav_scenario(11)
    assert len(scenario.floods) == 1
    start, end = scenario.floods[0]
    degraded = [t for t, mode in replay_modes(scenario) if mode is EscalationMode.DEGRADED]
    assert degraded[0] == start and degraded[-1] <= end + timedelta(minutes=10)
    assert timedelta(minutes=30) <= end - start <= timedelta(minutes=60)


def test_uav_cascades_link_shelling_to_jamming_to_lost_link_in_both_languages() -> None:
    scenario = uav_scenario(2)
    by_id = {e.id: e for e in scenario.events}
    pairs = {(by_id[c].type, by_id[e].type) for c, e in scenario.cascades}
    assert pairs == {("shelling", "ew_jamming"), ("ew_jamming", "lost_link")}
    assert all(by_id[c].time < by_id[e].time for c, e in scenario.cascades)
    texts = " ".join(e.text for e in scenario.events)
    assert "Обстріл" in texts and "Shelling" in texts
    assert scenario.critical_ids == {e.id for e in scenario.events if e.criticality >= CRITICAL}
    assert scenario.critical_ids and all(by_id[i].type in ("shelling", "lost_link") for i in scenario.critical_ids)


def test_the_service_outage_cascades_down_the_dependency_graph_as_alertmanager_payloads() -> None:
    scenario = service_estate_scenario(5)
    assert scenario.webhooks and all(p["version"] == "4" and p["alerts"] for p in scenario.webhooks)
    reparsed = [e.id for p in scenario.webhooks for e in events_from_alertmanager(p)]
    assert reparsed == [e.id for e in scenario.events]
    by_id = {e.id: e for e in scenario.events if e.state.value == "firing"}
    links = {(by_id[c].sector, by_id[e].sector) for c, e in scenario.cascades}
    assert ("postgres", "auth") in links and ("postgres", "catalog") in links
    assert all(by_id[c].time <= by_id[e].time for c, e in scenario.cascades)
    resolved = [e for e in scenario.events if e.state.value == "resolved"]
    assert resolved and {e.id for e in resolved} <= {e.id for e in scenario.events if e.state.value == "firing"}
    assert len(scenario.floods) == 1


def test_flood_questions_are_asked_inside_the_flood() -> None:
    for scenario in (uav_scenario(1), service_estate_scenario(1)):
        start, end = scenario.floods[0]
        assert all(start <= t <= end for t, _ in scenario.questions)
