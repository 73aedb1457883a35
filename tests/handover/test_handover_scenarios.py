"""Handover scenarios on the corpus' real repository (tests/corpora) (issue 23, ADRs 0060-0062).

The TDR documentation history (``tdr-docs.bundle``), cut to its latest 40 commits (a shallow
boundary, so the ingest stays small) and ingested for a few of its files: the observability work of
2026 and the removal of the Jenkins documentation on 2026-06-01. The operators are real people's
pseudonyms from the history plus alice, bob and carol who take the shift over.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mission_memory.api import Memory
from tests.handover.scenario import Corpus, recent_corpus

MISSION = "tdr-docs"
NOW = datetime(2026, 6, 15, 9, 0, tzinfo=UTC)
DELETED = ("manual/update-jenkins.md", "manual/reset-jenkins-builds.md", "manual/grafana-add-user.md",
           "network-diagrams/JENKINS.md", "manual/clear-jenkins-disk-space.md")
NOTES = (
    ("hypothesis", "The CloudWatch alarm noise comes from the muted-alarm schedule, not from the thresholds in ADR 39."),
    ("next-step", "Next: finish the upload and file checks sequence diagram and link it from observability-cloudwatch.md."),
    ("warning", "Do not delete the remaining Jenkins references in README.md until the Terraform jobs are migrated."),
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, corpora: Path) -> Iterator[Corpus]:
    corpus = recent_corpus(corpora / "tdr-docs.bundle", tmp_path_factory.mktemp("tdr-handover"), MISSION, 40, [
        "README.md", "architecture-decision-records/0039-observability.md", "manual/observability-cloudwatch.md",
        "manual/alerts/*.md"], once_per_run=tmp_path_factory)
    memory = corpus.memory
    yield corpus
    memory.close()


def _leave_notes(memory: Memory, operator: str, at: datetime) -> list[str]:
    return [memory.handover_note(text, kind, mission=MISSION, operator=operator, now=at + timedelta(minutes=i)).id
            for i, (kind, text) in enumerate(NOTES)]


EARLIER_NOTES = (
    ("warning", "The alarm muting in manual/observability-cloudwatch.md is per environment: mute staging, never prod."),
    ("next-step", "Review the TDR AWS environment page updated on 2026-06-05 against the account list."),
    ("hypothesis", "The ECR scan alerts in manual/alerts/ecr-scans.md fire on base images we no longer deploy."),
)


def test_every_open_note_survives_a_1500_token_brief_and_the_brief_says_how(corpus: Corpus) -> None:
    memory = corpus.memory
    for i, (kind, text) in enumerate(EARLIER_NOTES):  # left by the shift before, never closed
        memory.handover_note(text, kind, mission=MISSION, operator="Contributor 28", now=NOW - timedelta(days=3, minutes=i))
    _leave_notes(memory, "alice", NOW - timedelta(hours=3))
    for budget in (1500, 2500, 4000):
        brief = memory.rotation_brief(mission=MISSION, from_operator="alice", for_operator="carol", now=NOW,
                                      token_budget=budget, archive=False)
        assert brief.tokens_used <= budget
        for _, text in (*NOTES, *EARLIER_NOTES):
            assert text[:60] in brief.text, (budget, brief.text)
        assert "_Open handover notes: 6; all shown" in brief.text
        # the notes come first, before any decision, zone or file list
        headings = [line for line in brief.text.splitlines() if line.startswith("## ")]
        assert headings[:2] == ["## Status", "## What to do first"]


def test_a_read_only_operator_in_between_does_not_become_the_predecessor(
    corpus: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = corpus.memory
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "bob")
    now = datetime.now(UTC)  # retrieval events are logged at the real clock
    _leave_notes(memory, "alice", now - timedelta(hours=2))
    # bob only reads: a brief, an acknowledgement with a read-back, a query
    memory.rotation_brief(mission=MISSION, for_operator="bob")
    memory.acknowledge_brief(for_operator="bob", mission=MISSION)
    memory.query("How are CloudWatch alarms muted?", filters={"mission": MISSION}, session_id="bob-s")
    brief = memory.rotation_brief(mission=MISSION, for_operator="carol", archive=False)
    assert brief.window.from_operator == "alice"
    for _, text in NOTES:
        assert text[:60] in brief.text
    status = brief.entries[0][1]
    assert re.search(r"^- alice: \d+ notes", status, re.MULTILINE), status
    assert re.search(r"^- bob: no work; \d+ (query or brief|queries or briefs) read \(not work\)", status, re.MULTILINE), status
    assert "acknowledged by bob" in status


def test_the_next_brief_shows_whether_the_last_handover_was_acknowledged_and_its_read_back(corpus: Corpus) -> None:
    memory = corpus.memory
    now = NOW + timedelta(days=30)  # clear of the handovers the module's other tests leave around NOW, in any order
    _leave_notes(memory, "alice", now - timedelta(hours=3))  # alice's own work: this test needs no other test before it
    memory.rotation_brief(mission=MISSION, from_operator="alice", for_operator="dave", now=now - timedelta(hours=2))
    unread = memory.rotation_brief(mission=MISSION, from_operator="dave", for_operator="erin", now=now, archive=False)
    assert "last handover: alice → dave" in unread.entries[0][1] and "not acknowledged" in unread.entries[0][1]
    memory.acknowledge_brief(for_operator="dave", mission=MISSION, now=now - timedelta(hours=1),
                             read_back="I hold the sequence diagram; Jenkins references stay for now.")
    read = memory.rotation_brief(mission=MISSION, from_operator="dave", for_operator="erin", now=now, archive=False)
    assert "acknowledged by dave" in read.entries[0][1]
    assert "read-back: I hold the sequence diagram; Jenkins references stay for now." in read.entries[0][1]


def test_deleted_files_are_never_listed(corpus: Corpus) -> None:
    memory = corpus.memory
    brief = memory.rotation_brief(mission=MISSION, from_operator="Contributor 28", for_operator="carol", now=NOW,
                                  token_budget=6000, archive=False)
    assert "manual/observability-cloudwatch.md" in brief.text
    for path in DELETED:
        assert path not in brief.text


def test_a_note_stays_open_until_closed_not_until_read(corpus: Corpus) -> None:
    memory = corpus.memory
    ids = _leave_notes(memory, "alice", NOW - timedelta(hours=4))
    note_ids = [str(r.attributes["note_id"]) for r in memory.store.get(ids).values()]
    memory.rotation_brief(mission=MISSION, for_operator="bob", now=NOW - timedelta(hours=1))
    memory.acknowledge_brief(for_operator="bob", mission=MISSION, now=NOW - timedelta(minutes=55))
    still = memory.rotation_brief(mission=MISSION, from_operator="bob", for_operator="carol", now=NOW, archive=False)
    assert all(f"id {n[:12]}" in still.text for n in note_ids)  # bob read them; they are still open
    closed = str(memory.store.get([ids[1]])[ids[1]].attributes["note_id"])
    memory.handover_note("Sequence diagram merged in #236.", "resolved", mission=MISSION, operator="bob",
                         now=NOW - timedelta(minutes=30), closes=[closed[:12]])
    after = memory.rotation_brief(mission=MISSION, from_operator="bob", for_operator="carol", now=NOW, archive=False)
    assert f"id {closed[:12]}" not in after.text
    assert all(f"id {n[:12]}" in after.text for n in note_ids if n != closed)
    assert "Sequence diagram merged" not in after.text  # a resolved note closes, it is not itself open


def test_a_correction_after_an_unrelated_query_is_unknown_and_a_tree_folder_is_a_component(
    corpus: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = corpus.memory
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "alice")
    memory.query("How do I mute the CloudWatch alarms during a release?", filters={"mission": MISSION})
    assert not memory.store.has_component("load-testing")  # a folder of the tree no ingested record is charged to
    unrelated = memory.record_correction(
        correction_class="wrong-assumption", category="data", outcome="modified", mission=MISSION,
        summary="Load tests run against the integration environment, never against staging",
        component="load-testing")
    related = memory.record_correction(
        correction_class="missed-decision", category="ops", outcome="modified", mission=MISSION,
        summary="Muting an alarm needs the CloudWatch alarm name, not the SNS topic", component="manual")
    assert unrelated.label.retrieval_caused.value == "unknown" and unrelated.label.retrieval_event_id is None
    assert related.label.retrieval_caused.value in ("true", "false") and related.label.retrieval_event_id


def test_a_degraded_missions_brief_starts_with_the_distinct_still_firing_alerts_quoted(corpus: Corpus) -> None:
    memory = corpus.memory
    start = NOW - timedelta(minutes=6)
    lease = [{"id": f"hdfs-{i}", "time": start + timedelta(seconds=9 * i), "sector": "LeaseRenewer", "type": "E54",
              "criticality": 0.5, "source": "hadoop",
              "text": f"Failed to renew lease for [DFSClient_NONMAPREDUCE_1537864556_1] for {30 + 9 * i} seconds."
                      "  Will retry shortly ..."} for i in range(30)]
    address = [{"id": f"rm-{i}", "time": start + timedelta(seconds=20 * i + 3), "sector": "RMContainerAllocator",
                "type": "E4", "criticality": 0.5, "source": "hadoop",
                "text": f"Address change detected. Old: msra-sa-41/10.190.173.{170 + i}:8030 New: msra-sa-41:8030"}
               for i in range(12)]
    fatal = [{"id": "rm-fatal", "time": NOW - timedelta(minutes=1), "sector": "RMContainerAllocator", "type": "E12",
              "criticality": 1.0, "source": "hadoop",
              "text": "Error communicating with RM: Resource Manager doesn't recognize AttemptId:"
                      " application_1445144423722_0024"}]
    memory.record_events([*lease, *address, *fatal], MISSION, now=NOW - timedelta(seconds=30), embed=False)
    memory.handover_note("If the RM stays unreachable after 09:30 then fail the job over to the standby cluster.",
                         "warning", mission=MISSION, operator="alice", now=NOW - timedelta(minutes=2))
    memory.handover_note("Next check at 09:30: if the RM answers, restart the failed map attempts.", "next-step",
                         mission=MISSION, operator="alice", now=NOW - timedelta(minutes=1))
    # a note of the coding shift before the incident, about something else
    memory.handover_note("Next: link the sequence diagram from observability-cloudwatch.md.", "next-step",
                         mission=MISSION, operator="alice", now=NOW - timedelta(days=1))
    brief = memory.rotation_brief(mission=MISSION, from_operator="alice", for_operator="carol", now=NOW,
                                  token_budget=1500, archive=False)
    text = brief.text
    assert text.split("\n## ", 2)[1].startswith("Incident handover")
    block = next(shown for item, shown in brief.entries if item.section.name == "CRISIS")
    # log lines are recurring events, not alerts (issue 37): no alert is open
    assert "Severity: critical" in block and "Open alerts (0" in block
    assert re.search(r"Recurring log events \(not alerts\) since [\d:]+: 3 kinds, 43 events", block), block
    assert "E54 · LeaseRenewer · ×30" in block and "E4 · RMContainerAllocator · ×12" in block, block
    assert "Resource Manager doesn't recognize AttemptId" in block  # the FATAL line, quoted, first
    assert block.index("E12") < block.index("E54")
    # the contingencies and the next check are the incident's notes, in the block and nowhere else
    contingencies = block.split("Contingencies (if … then …):\n", 1)[1]
    assert "\n- If the RM stays unreachable after 09:30 then fail" in "\n" + contingencies
    for note in ("If the RM stays unreachable after 09:30 then fail the job over", "Next check at 09:30: if the RM"):
        assert text.count(note) == 1, note
    assert re.search(r"^Next check: 09:30 \(alice's next-step note [0-9a-f]{12} above", block, re.MULTILINE), block
    # the coding note is not the incident's: under "What to do first", not in the block
    assert "link the sequence diagram" not in block
    assert "link the sequence diagram" in text.split("## What to do first", 1)[1]
    # no cascade lines of the timeline, no id lists of repeats
    assert "→" not in block and "hdfs-3," not in text
    # the documentation's history is unrelated to the incident
    assert "## Recently changed files" not in text and "Component manual/" not in text
    assert "other active components" not in text
    assert brief.tokens_used <= 1500


def test_the_incident_block_is_condensed_by_grouping_and_never_cut_mid_list(corpus: Corpus) -> None:
    """A flood of 60 distinct log kinds at a budget that cannot quote them all: folded, counted, whole lines."""
    memory = corpus.memory
    start = NOW - timedelta(minutes=5)
    flood = [{"id": f"node-{k}-{i}", "time": start + timedelta(seconds=k * 4 + i), "sector": f"node-{k:02d}",
              "type": f"E{100 + k}", "criticality": 0.85 if k < 3 else 0.5, "source": "bgl",
              "text": f"instruction cache parity error corrected on node card {k} ({i} times)"}
             for k in range(60) for i in range(3)]
    memory.record_events(flood, "bgl", now=NOW - timedelta(seconds=10), embed=False)
    memory.handover_note("If the parity errors reach the link cards then drain midplane R02.", "warning",
                         mission="bgl", operator="alice", now=NOW - timedelta(minutes=1))
    for budget in (900, 1500):
        brief = memory.rotation_brief(mission="bgl", from_operator="alice", for_operator="carol", now=NOW,
                                      token_budget=budget, archive=False)
        block = next(shown for item, shown in brief.entries if item.section.name == "CRISIS")
        lines = block.splitlines()
        assert lines[0].startswith("Severity: high")
        assert re.search(r"Recurring log events \(not alerts\) since [\d:]+: 60 kinds, 180 events", block), block
        shown = [i for i, line in enumerate(lines) if re.match(r"- E\d+ · node-\d\d · ×3 ", line)]
        assert 0 < len(shown) < 60
        assert all(lines[i + 1].startswith('  "instruction cache parity error') for i in shown)  # each with its text
        assert lines[0:1] and f"- +{60 - len(shown)} more kinds, {3 * (60 - len(shown))} events" in block
        assert "If the parity errors reach the link cards then drain midplane R02." in block
        assert lines[-1].startswith("Next check: ")  # the block ends whole
        assert brief.tokens_used <= budget


def test_a_flood_of_events_does_not_hide_who_worked(corpus: Corpus) -> None:
    """2,100 log lines (more than one scan of records holds) after alice's notes: she still worked."""
    memory = corpus.memory
    start = NOW - timedelta(minutes=9)
    flood = [{"id": f"lease-{i}", "time": start + timedelta(seconds=i / 4), "sector": "LeaseRenewer", "type": "E44",
              "criticality": 0.5, "source": "hadoop",
              "text": f"Failed to renew lease for [DFSClient_NONMAPREDUCE_1537864556_1] for {30 + i} seconds."}
             for i in range(2_100)]
    memory.record_events(flood, "flooded", now=NOW - timedelta(seconds=20), embed=False)
    for i, (kind, text) in enumerate(NOTES):  # left two hours before the flood
        memory.handover_note(text, kind, mission="flooded", operator="alice", now=NOW - timedelta(hours=2, minutes=i))
    memory.handover_note("The lease renewals fail because the NameNode is unreachable.", "hypothesis",
                         mission="flooded", operator="bob", now=NOW - timedelta(minutes=1))
    brief = memory.rotation_brief(mission="flooded", from_operator="bob", for_operator="carol", now=NOW,
                                  archive=False)
    status = next(shown for item, shown in brief.entries if item.section.name == "STATUS")
    assert re.search(r"^- alice: 3 notes", status, re.MULTILINE), status
    assert re.search(r"^- bob: 1 note", status, re.MULTILINE), status
    assert memory.rotation_brief(mission="flooded", for_operator="carol", now=NOW, archive=False
                                 ).window.from_operator == "bob"
