"""The extractive "what changed" summary covers its whole period (issue 12 item 5).

A real git repository with 55 commits over six weeks: a busy first two days of closely related
commits whose bodies hold bullet lines, then steady work, a decision record touched in week 3, a large
change in week 5 and, last, the commit that answers the task's open question. The summary must list
the most significant changes first, keep the latest, stay within its entry cap, reach past the first
days and never quote a body's bullet line as an event.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from mission_memory.ingest.git_history import GitRepository
from mission_memory.refresh.summarizers import ExtractiveSummarizer, SummaryMaterial
from mission_memory.trackers.base import Task, TaskComment
from tests.conftest import GitRepo

TASK = Task(
    key="OPS-7",
    title="Antivirus scan retries for uploads",
    description="Scans time out on field laptops; retry them with backoff and tell the operator when they keep failing.",
    labels=("LONG-TERM",),
    state="In Progress",
    url="https://plane.example/ops/7",
    created_at=datetime(2025, 1, 1, tzinfo=UTC),
    updated_at=datetime(2025, 2, 14, tzinfo=UTC),
)
START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)  # a Monday
LATEST = "OPS-7: notify the operator after the third failed antivirus scan retry"
ADR_SUBJECT = "Record the decision to cap scan retry backoff at ten minutes"
BIG_SUBJECT = "OPS-7: move antivirus scan retries to the shared job runner"
STEADY_WORK = (
    "log each antivirus scan timeout with the laptop id", "jitter the retry delay", "persist the retry queue on disk",
    "skip retries for files already quarantined", "count retries per upload in the metrics",
    "document the retry settings for field teams", "drop retries older than a day", "test backoff on a slow link",
)
BULLETS = ("- bump the scan retry queue version", "* tidy antivirus scan retry imports")


def _history(repo: GitRepo) -> None:
    """55 commits: 20 on the first two days, then 33 spread over six weeks, then the big one and the latest."""
    n = 0
    for day in range(2):
        for hour in range(10):
            n += 1
            when = START + timedelta(days=day, hours=hour)
            body = "\n".join(BULLETS) if n % 2 else "Scan retry queue tuning for antivirus scans."
            repo.commit(
                f"OPS-7: antivirus scan retry queue tweak {n}\n\n{body}", when.isoformat(),
                {f"scan/queue_{n % 3}.py": f"retry = {n}\n"},
            )
    for step in range(33):
        n += 1
        when = START + timedelta(days=3 + step, hours=14)
        if step == 12:
            repo.commit(ADR_SUBJECT, when.isoformat(), {"docs/adr/0007-cap-scan-retry-backoff.md": "# 7. Cap backoff\n"})
        else:
            topic = STEADY_WORK[step % len(STEADY_WORK)]
            repo.commit(f"OPS-7: {topic} ({n})", when.isoformat(), {f"scan/work_{step % 4}.py": f"x = {n}\n"})
    repo.commit(
        BIG_SUBJECT, (START + timedelta(days=37)).isoformat(),
        {f"jobs/runner_{i}.py": "".join(f"line {j}\n" for j in range(40)) for i in range(10)},
    )
    repo.commit(f"{LATEST}\n\n- add a notifier\n- wire it", (START + timedelta(days=39)).isoformat(),
                {"scan/notify.py": "notify = True\n"})


def _material(make_git_repo: Callable[[str], GitRepo]) -> SummaryMaterial:
    repo = make_git_repo("scans")
    _history(repo)
    commits = GitRepository(repo.root).commits()
    assert len(commits) == 55
    comment = TaskComment("c9", "taras", START + timedelta(days=20), "Should the operator be told when scans keep failing?")
    return SummaryMaterial(task=TASK, commits=commits, comments=[comment], since=START - timedelta(days=1))


def _bullets(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("- ")]


def test_summary_of_a_long_period_keeps_the_latest_change_within_the_entry_cap(
    make_git_repo: Callable[[str], GitRepo],
) -> None:
    result = ExtractiveSummarizer(max_sentences=8).summarize(_material(make_git_repo))
    bullets = _bullets(result.text)
    assert len(bullets) <= 8
    assert any(LATEST in line and line.endswith("(latest)") for line in bullets), result.text


def test_summary_reaches_past_the_busy_first_days(make_git_repo: Callable[[str], GitRepo]) -> None:
    result = ExtractiveSummarizer(max_sentences=8).summarize(_material(make_git_repo))
    dates = {datetime.fromisoformat(line[2:12]).date() for line in _bullets(result.text)}
    first_days = {START.date(), (START + timedelta(days=1)).date()}
    assert len(dates - first_days) >= 3, result.text
    weeks = {d.isocalendar()[1] for d in dates}
    assert len(weeks) >= 4, result.text
    assert "Period 2025-01-06 to 2025-02-14" in result.text


def test_summary_lists_decisions_touched_and_large_changes_first(make_git_repo: Callable[[str], GitRepo]) -> None:
    bullets = _bullets(ExtractiveSummarizer(max_sentences=8).summarize(_material(make_git_repo)).text)
    assert ADR_SUBJECT in bullets[0] and "docs/adr/0007-cap-scan-retry-backoff.md" in bullets[0]
    assert any(BIG_SUBJECT in line for line in bullets[:3]), bullets


def test_summary_never_quotes_commit_body_bullets_as_events(make_git_repo: Callable[[str], GitRepo]) -> None:
    text = ExtractiveSummarizer(max_sentences=8).summarize(_material(make_git_repo)).text
    for bullet in (*BULLETS, "- add a notifier", "- wire it"):
        assert bullet.lstrip("-* ") not in text


def test_a_short_period_with_bulleted_bodies_lists_commits_not_their_bullets(
    make_git_repo: Callable[[str], GitRepo],
) -> None:
    repo = make_git_repo("short")
    repo.commit("OPS-7: retry antivirus scans\n\n- add the retry queue\n- wire the scanner to it",
                "2025-03-03T10:00:00+00:00", {"scan/queue.py": "q = 1\n"})
    repo.commit("OPS-7: back off between scan retries\n\n* exponential delay\n* cap at ten minutes",
                "2025-03-04T10:00:00+00:00", {"scan/backoff.py": "b = 1\n"})
    material = SummaryMaterial(task=TASK, commits=GitRepository(repo.root).commits(), comments=[], since=None)
    bullets = _bullets(ExtractiveSummarizer(max_sentences=8).summarize(material).text)
    assert sorted(line.split(" · ")[2] for line in bullets) == [
        "OPS-7: back off between scan retries (latest)", "OPS-7: retry antivirus scans",
    ]
