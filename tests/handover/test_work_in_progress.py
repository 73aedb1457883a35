"""The work in progress in words (issue 23 item 3, ADR 0060) on the corpus' real repository (tests/corpora).

The TDR documentation history cut to its latest 150 commits (a shallow boundary), so the activity
horizon reaches back to 2024 and holds ADRs whose status is not stated and that nobody touched for
years (ADR-0034, last changed 2024-09) beside the ADR of the 2026 observability work (ADR-0039), and
the merge commits of GitHub pull requests beside the commits they bring in.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.records import Provenance, Record, RecordKind, SourceKind
from tests.conftest import GitRepo
from tests.handover.scenario import Corpus, recent_corpus

MISSION = "tdr-docs"
NOW = datetime(2026, 6, 15, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, corpora: Path) -> Iterator[Corpus]:
    corpus = recent_corpus(corpora / "tdr-docs.bundle", tmp_path_factory.mktemp("tdr-work"), MISSION, 150, [
        "README.md", "architecture-decision-records/0034-metadata-validation.md",
        "architecture-decision-records/0037-disable-inactive-keycloak-users.md",
        "architecture-decision-records/0038-egress-control.md", "architecture-decision-records/0039-observability.md",
        "manual/observability-cloudwatch.md"], once_per_run=tmp_path_factory)
    memory = corpus.memory
    memory.handover_note("Next: finish the upload and file checks sequence diagram.", "next-step", mission=MISSION,
                         operator="alice", now=NOW - timedelta(hours=2))
    yield corpus
    memory.close()


def _brief(corpus: Corpus, budget: int = 6000, **kwargs: object) -> str:
    brief = corpus.memory.rotation_brief(mission=MISSION, from_operator="alice", for_operator="bob", now=NOW,
                                         token_budget=budget, archive=False, **kwargs)  # type: ignore[arg-type]
    return brief.text


def _entry(text: str, label: str) -> str:
    start = text.index(f". {label}\n")
    return text[start: text.index("<<<end excerpt", start)]


def test_decisions_linked_to_the_work_are_the_recently_touched_ones_not_every_adr_of_the_horizon(
    corpus: Corpus,
) -> None:
    linked = _entry(_brief(corpus), "decisions linked to the active work")
    assert "ADR-0039: Observability" in linked  # the 2026 observability work
    assert "ADR-0038: Egress Control" in linked  # changed 2025-11-27, within the latest 40 commits
    # last changed 2024-09-12, status not stated: older than the window and the latest 40 commits
    assert "ADR-0034" not in linked, linked


def test_zones_show_the_commits_a_merge_brought_in_with_author_and_subject(corpus: Corpus) -> None:
    text = _brief(corpus)
    zone = _entry(text, "attention zone")
    commits = [line for line in zone.splitlines() if line.startswith("commit ")]
    assert commits, zone
    for line in commits:
        assert re.match(r"commit [0-9a-f]{12} \d{4}-\d\d-\d\d Contributor \d+: \S", line), line
        assert ": Merge pull request" not in line and ": Merge branch" not in line, zone
    others = _entry(text, "other active components, by recent activity")
    for line in others.splitlines()[2:]:
        if line.startswith("- "):
            assert re.search(r"`[0-9a-f]{12}` Contributor \d+: \S", line), line


def test_every_listed_file_still_exists_in_the_tree(corpus: Corpus) -> None:
    text = _brief(corpus, budget=8000)
    tree = set(subprocess.run(["git", "ls-files"], cwd=corpus.repo, capture_output=True, text=True,
                              check=True).stdout.split("\n"))
    listed = re.findall(r"^- ([^\s:]+\.\w+)(?:: \d+ commits?| · \d+ · )", text, re.MULTILINE)
    assert len(listed) > 20
    assert [p for p in listed if p not in tree] == []
    # the Jenkins pages removed on 2026-06-01, though touched by the horizon, are not named
    assert "manual/update-jenkins.md" not in text and "network-diagrams/JENKINS.md" not in text


def test_a_rebuilt_brief_does_not_report_its_own_earlier_build_as_the_last_handover(corpus: Corpus) -> None:
    memory = corpus.memory
    memory.rotation_brief(mission=MISSION, from_operator="alice", for_operator="bob", now=NOW - timedelta(hours=1))
    # alice works on after bob's first read: the window, counted from her latest work, moves
    memory.handover_note("Warning: the CloudWatch dashboards of staging are not yet in Terraform.", "warning",
                         mission=MISSION, operator="alice", now=NOW - timedelta(minutes=30))
    again = memory.rotation_brief(mission=MISSION, from_operator="alice", for_operator="bob", now=NOW, archive=False)
    status = again.entries[0][1]
    assert "last handover: alice → bob" not in status, status  # the same handover, its window moved with the clock
    other = memory.rotation_brief(mission=MISSION, from_operator="bob", for_operator="carol", now=NOW, archive=False)
    assert "last handover: alice → bob" in other.entries[0][1] and "not acknowledged" in other.entries[0][1]


def test_corrections_with_their_summary_and_tasks_in_progress_with_their_owners(corpus: Corpus) -> None:
    memory = corpus.memory
    memory.record_correction(correction_class="wrong-assumption", category="ops", outcome="modified",
                             mission=MISSION, operator="alice", time=NOW - timedelta(hours=3),
                             summary="Muting an alarm needs the CloudWatch alarm name, not the SNS topic",
                             component="manual")
    url = "https://tracker.example/tdr/TDRD-1058"
    memory.store.upsert_records([Record.build(
        kind=RecordKind.ISSUE, title="Upload step sequence diagram", text="Draw the upload and file checks sequence.",
        provenance=Provenance(kind=SourceKind.ISSUE, ref="TDRD-1058", uri=url, mission=MISSION,
                              time=NOW - timedelta(days=1)),
        attributes={"tracker": "local", "key": "TDRD-1058", "state": "in progress", "labels": ["docs"],
                    "assignee": "alice", "url": url, "in_progress": True})])
    text = _brief(corpus)
    assert 'latest: "Muting an alarm needs the CloudWatch alarm name, not the SNS topic"' in text
    task = _entry(text, "task in progress")
    assert "TDRD-1058 Upload step sequence diagram" in task and "assignee: alice" in task


def test_a_repository_that_is_one_folder_gets_zones_one_level_down(make_git_repo) -> None:  # type: ignore[no-untyped-def]
    repo: GitRepo = make_git_repo("estate")
    repo.git("config", "user.name", "alice")
    for day in range(1, 9):
        repo.commit(f"Tune the VPC module, step {day}", f"2026-05-{day:02d}T10:00:00+00:00",
                    {"terraform/modules/vpc/main.tf": f"# step {day}\n",
                     "terraform/projects/app/main.tf" if day % 4 == 0 else "terraform/modules/vpc/vars.tf": f"{day}\n"})
    with Memory.open() as memory:
        memory.ingest_repository(repo.root, mission="estate")
        memory.handover_note("Next: plan the VPC change in staging.", "next-step", mission="estate", operator="alice",
                             now=datetime(2026, 5, 9, tzinfo=UTC))
        text = memory.rotation_brief(mission="estate", from_operator="alice", for_operator="bob",
                                     now=datetime(2026, 5, 10, tzinfo=UTC), archive=False).text
    assert "Component terraform/modules/" in text
    assert "Component terraform/: " not in text  # the whole repository says nothing about where the work is
