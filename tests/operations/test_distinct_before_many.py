"""Distinct before many (issue 24 item 1): a flood of one repeated error does not crowd out the few distinct
critical events beside it, and near-duplicate suppression never keeps a less critical repeat in place of a
more critical event.

The flood has the shape of loghub's Hadoop MapReduce sample of a network failure (a 2 s retry loop logging
"ERROR IN CONTACTING RM." beside two FATAL task exits and two distinct errors written once each); the texts
are written here after that log's templates, the data itself is not copied. Real SQLite file, the real
embedder; times relative to the real clock because pull assesses at the real now."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from mission_memory.api import Memory
from mission_memory.operations.domain_events import DomainEvent, event_record
from mission_memory.operations.event_groups import event_template, group_events
from mission_memory.retrieval.near_duplicates import suppress_near_duplicates
from mission_memory.retrieval.ranking import Candidate

QUESTION = "Which containers were assigned to the reduce tasks?"


def _ev(i: str, when: datetime, type_: str, sector: str, criticality: float, text: str) -> dict[str, Any]:
    return {"id": i, "time": when.isoformat(), "type": type_, "sector": sector, "criticality": criticality,
            "source": "hadoop-mrappmaster", "text": text}


def hadoop_network_failure(now: datetime) -> tuple[list[dict[str, Any]], dict[str, set[str]]]:
    """The flood, and the ids of each distinct critical kind (4 kinds; one of them repeated 70 times)."""
    events: list[dict[str, Any]] = []
    kinds: dict[str, set[str]] = {"rm": set(), "fatal": set(), "history": set(), "thread": set()}
    start = now - timedelta(minutes=4)
    for n in range(70):  # the retry loop: one error every 2 s up to now
        i = f"hadoop-rm-{n}"
        events.append(_ev(i, start + timedelta(seconds=2 * n + 100), "E38", "RMContainerAllocator", 0.8,
                          "ERROR IN CONTACTING RM."))
        kinds["rm"].add(i)
    for n, attempt in enumerate(("m_000002_0", "m_000001_0")):
        i = f"hadoop-fatal-{n}"
        events.append(_ev(i, start + timedelta(seconds=120 + 2 * n), "E101", "TaskAttemptListenerImpl", 0.95,
                          f"Task: attempt_1445144423722_0020_{attempt} - exited : java.net.NoRouteToHostException: "
                          "No Route to Host from MININT-FNANLI5/127.0.0.1 to msra-sa-41:8030 failed on socket timeout"))
        kinds["fatal"].add(i)
    events.append(_ev("hadoop-history", start + timedelta(seconds=121), "E40", "JobHistoryEventHandler", 0.8,
                      "Error writing History Event: org.apache.hadoop.mapreduce.jobhistory."
                      "TaskAttemptUnsuccessfulCompletion@6f3b2d1a"))
    kinds["history"].add("hadoop-history")
    events.append(_ev("hadoop-thread", start + timedelta(seconds=121), "E108", "YarnUncaughtExceptionHandler", 0.8,
                      "Thread Thread[eventHandlingThread,5,main] threw an Exception."))
    kinds["thread"].add("hadoop-thread")
    for n in range(60):  # warnings of the same failure (retries of the connection)
        events.append(_ev(f"hadoop-warn-{n}", start + timedelta(seconds=4 * n), "E10", "LeaseRenewer", 0.5,
                          f"Address change detected. Old: msra-sa-41/10.190.173.{170 + n % 3}:8030 New: msra-sa-41:8030"))
    return events, kinds


def _cited(text: str, event_id: str) -> bool:
    return re.search(re.escape(f"event:{event_id}") + r"(?![\w@:.+-])", text) is not None


@pytest.mark.parametrize("budget", [2000, 8000])
def test_every_distinct_critical_kind_of_a_repeated_error_flood_is_cited(budget: int) -> None:
    now = datetime.now(UTC)
    events, kinds = hadoop_network_failure(now)
    with Memory.open(event_mission="hadoop") as memory:
        state = memory.record_events(events, embed=False).escalation
        assert state.mode.value == "degraded"
        digest = memory.query(QUESTION, filters={"mission": "hadoop"}, token_budget=budget)
    missed = [kind for kind, ids in kinds.items() if not any(_cited(digest.text, i) for i in ids)]
    assert missed == []
    # one entry for the repeated error, not a page of copies
    rm_entries = [e for e in digest.entries if str(e.record.attributes.get("event_id", "")).startswith("hadoop-rm-")]
    assert len(rm_entries) <= 1
    # the group's count is shown with it
    assert re.search(r"×\s?70\b|70×|70 times", digest.text)


def test_near_duplicate_suppression_keeps_the_more_critical_of_two_repeats() -> None:
    t = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    older = event_record(DomainEvent(id="a", time=t, sector="east", type="link", criticality=0.9,
                                     text="Lost link with relay 4"), "m")
    newer = event_record(DomainEvent(id="b", time=t + timedelta(minutes=1), sector="east", type="link",
                                     criticality=0.3, text="Lost link with relay 4"), "m")
    kept, dropped = suppress_near_duplicates(
        [Candidate(older.id, 0.9, record=older), Candidate(newer.id, 0.3, record=newer)], {}, 0.97)
    assert dropped == 1
    assert [c.record_id for c in kept] == [older.id]
    assert kept[0].score == 0.9


def test_repeats_differing_in_numbers_ids_hex_ips_and_paths_share_one_template() -> None:
    a = "Task attempt_1445_0020_m_000002_0 exited: no route from 10.0.0.7:8030 to /var/lib/yarn/nm-1 (0x7f3a9c)"
    b = "Task attempt_1445_0020_m_000001_0 exited: no route from 10.0.0.9:8031 to /var/lib/yarn/nm-2 (0x7f3a9d)"
    assert event_template(a) == event_template(b)
    assert event_template("Lost link with 3 of 8 drones") != event_template("Lost contact with 3 of 8 drones")


def test_groups_carry_count_first_and_last_seen_and_the_highest_criticality() -> None:
    t = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    events = [DomainEvent(id=f"e{n}", time=t + timedelta(seconds=n), sector="s", type="x",
                          criticality=0.95 if n == 3 else 0.4, text=f"disk {n} full on node-{n}") for n in range(6)]
    events.append(DomainEvent(id="other", time=t, sector="s", type="y", criticality=0.2, text="distinct"))
    groups = group_events(events)
    assert [(g.count, g.max_criticality, g.first_seen, g.last_seen) for g in groups] == [
        (6, 0.95, t, t + timedelta(seconds=5)), (1, 0.2, t, t)]
    assert groups[0].representative.id == "e3"


@pytest.mark.parametrize("budget", [2000, 8000])
def test_a_group_of_repeats_cites_its_members_first_to_last_with_their_count(budget: int) -> None:
    """The timeline's line for the retry loop names fewer ids than the loop logged; it then cites all of
    them compactly, ``the 70 from event:<oldest> to event:<newest>``, so each repeat is cited (docs/adr/0057)."""
    now = datetime.now(UTC)
    events, kinds = hadoop_network_failure(now)
    with Memory.open(event_mission="hadoop") as memory:
        memory.record_events(events, embed=False)
        digest = memory.query(QUESTION, filters={"mission": "hadoop"}, token_budget=budget)
    claims = re.findall(r"the (\d+) from event:([^\s)]+) to event:([^\s)]+)", digest.text)
    assert ("70", "hadoop-rm-0", "hadoop-rm-69") in claims
    named = {i for i in kinds["rm"] if _cited(digest.text, i)}
    assert len(named) < 70  # the ids alone would leave repeats uncited
    # the entry standing for the loop, when there is one, cites the same members inside its fence
    for entry in digest.entries:
        if str(entry.record.attributes.get("event_id", "")).startswith("hadoop-rm-"):
            block = digest.text.split(f"source: event `event:{entry.record.attributes['event_id']}`")[1]
            assert block.split("<<<end excerpt")[0].count("repeats: the 70 from event:hadoop-rm-0 to event:hadoop-rm-69") == 1


def test_a_distinct_critical_event_older_than_the_newest_2000_keeps_its_timeline_line() -> None:
    """The window's critical kinds are counted in the store over every event, so a distinct kind logged
    before the last 2,000 lines keeps its line (docs/adr/0057, 0088); the cascades link kinds over the
    whole period, with no reading limit to state (docs/adr/0095)."""
    now = datetime.now(UTC)
    early = now - timedelta(minutes=8)
    events = [_ev("disk-full", early, "E7", "DataNode", 0.9, "Disk /data/3 failed: read-only file system")]
    step = timedelta(minutes=7) / 2100
    for n in range(2100):  # after it: a retry loop and its chatter, 2,100 lines
        when = early + timedelta(seconds=30) + n * step
        if n % 4 == 0:
            events.append(_ev(f"rm-{n}", when, "E38", "RMContainerAllocator", 0.8, "ERROR IN CONTACTING RM."))
        else:
            events.append(_ev(f"info-{n}", when, "E2", "RMContainerAllocator", 0.2, f"Assigned container_{n} to attempt_{n}"))
    with Memory.open(event_mission="hadoop") as memory:
        for start in range(0, len(events), 500):
            memory.record_events(events[start:start + 500], embed=False, now=now)
        digest = memory.query(QUESTION, filters={"mission": "hadoop"}, token_budget=4000, timeline=True)
    timeline = digest.text.split("## Crisis timeline")[1].split("<<<end excerpt 0")[0]
    assert "newest 2000" not in timeline and "every event of the period counted" in timeline
    assert re.search(r"- E7 · DataNode · 0\.90 · \d\d:\d\d:\d\d: event:disk-full", timeline)
