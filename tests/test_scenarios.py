"""Seeded operations scenarios: deterministic, consistent ground truth, real Alertmanager payloads."""

from __future__ import annotations

from datetime import timedelta

from mission_memory.operations.escalation import (
    EscalationMode,
    EscalationState,
    FloodPolicy,
    assess_escalation,
    event_rates,
)
from mission_memory.operations.scenarios import CRITICAL, Scenario, service_estate_scenario, uav_scenario
from mission_memory.operations.sources.alertmanager import events_from_alertmanager


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


def test_alerts_of_one_service_keep_distinct_ids_so_none_overwrites_another() -> None:
    scenario = service_estate_scenario(0)
    firing = [e for e in scenario.events if e.state.value == "firing"]
    keys = {(e.type, e.sector, e.time) for e in firing}
    assert len({e.id for e in firing}) == len(keys) == len(firing)
    by_id = {e.id: e for e in firing}
    assert all(by_id[i].type == "HighErrorRate" or by_id[i].type == "ServiceDown"
               for i in scenario.critical_ids if by_id[i].sector != "postgres" or by_id[i].type != "DiskUsageHigh")


def test_a_flood_ends_when_events_leave_the_window_not_at_the_last_busy_event() -> None:
    from mission_memory.operations.domain_events import DomainEvent
    from mission_memory.operations.scenarios import _flood_intervals

    t0 = uav_scenario(0).events[0].time
    burst = [DomainEvent(id=f"e{i}", time=t0 + timedelta(seconds=10 * i), sector="s", type="t", criticality=0.5, text="x")
             for i in range(12)]
    [(start, end)] = _flood_intervals(burst, timedelta(minutes=10), 10, 5)
    assert start == t0 + timedelta(seconds=100)  # the 11th event
    assert end == t0 + timedelta(seconds=70 + 600)  # the 8th leaves the window: 4 remain


LOGHUB_SAMPLE = """LineId,Date,Time,Level,Node,Component,Id,Content,EventId,EventTemplate
1,2015-07-29,"17:41:44,747",INFO,QuorumPeer[myid=1]/0,0:0:0:0:0:0:0:2181:FastLeaderElection,774,Notification time out: 3200,E31,Notification time out: <*>
2,2015-07-29,"17:41:45,100",WARN,QuorumPeer[myid=2]/0,188978561024:QuorumCnxManager$SendWorker,679,Interrupted while waiting for message on queue,E51,Interrupted while waiting for message on queue
3,2015-07-29,"17:41:46,000",ERROR,QuorumPeer[myid=2]/0,3888:QuorumCnxManager$Listener,493,Unexpected exception causing shutdown,E9,Unexpected exception causing shutdown
4,2015-07-29,"17:41:47,000",FATAL,QuorumPeer[myid=3]/0,3888:QuorumCnxManager$Listener,493,Unexpected exception causing shutdown,E9,Unexpected exception causing shutdown
"""


def test_a_loghub_sample_becomes_events_with_levels_mapped_to_criticality() -> None:
    import pytest

    from mission_memory.errors import InputError
    from mission_memory.operations.scenarios import LOG_LEVEL_CRITICALITY, loghub_scenario

    scenario = loghub_scenario("Zookeeper", LOGHUB_SAMPLE)
    by_id = {e.id: e for e in scenario.events}
    assert [by_id[f"Zookeeper-{i}"].criticality for i in (1, 2, 3, 4)] == [0.2, 0.5, 0.8, 0.95]
    assert scenario.critical_ids == {"Zookeeper-3", "Zookeeper-4"}
    assert by_id["Zookeeper-2"].sector == "QuorumPeer[myid=2]" and by_id["Zookeeper-2"].type == "E51"
    assert by_id["Zookeeper-1"].time.isoformat() == "2015-07-29T17:41:44.747000+00:00"
    assert scenario.floods == () and scenario.mission == "loghub-zookeeper"
    assert LOG_LEVEL_CRITICALITY["error"] >= CRITICAL > LOG_LEVEL_CRITICALITY["warn"]
    assert len(loghub_scenario("Zookeeper", LOGHUB_SAMPLE, limit=2).events) == 2
    with pytest.raises(InputError, match="'Syslog' is not supported"):
        loghub_scenario("Syslog", LOGHUB_SAMPLE)
    with pytest.raises(InputError, match="Zookeeper line 1: cannot read 'Date'"):
        loghub_scenario("Zookeeper", "LineId,Time,Level,Content\n1,17:41:44,INFO,x\n")
