"""The refresh pass: discover, measure, schedule, build three artifacts per due task, store them.

One pass (docs/design.md §5) with an injected clock ``now``:

1. list the tasks carrying the refresh label (a tracker failure fails the pass: nothing is written);
2. for each task, read its comments and compute its :class:`~mission_memory.refresh.signals.TaskActivity`
   since its last refresh;
3. :func:`~mission_memory.refresh.schedule.due_tasks` orders the due tasks, most active first;
4. for each due task, build the executive summary, the tool-lineage delta and the open questions,
   embed them, and store all three with ONE :meth:`RefreshStore.upsert` call (one transaction: a
   pass killed at any point leaves either all three artifacts of a task or none); then, after the
   artifacts, write the task's state (last refresh time, commit, last comment covered).

The repository is read "as of ``now``": the newest commit reachable from HEAD committed at or
before ``now`` is the pass's target, so ``--now`` replays a past pass faithfully.

Per-task state lives in the store (``ingest_state``, mission ``__refresh__``, key ``task:<KEY>``,
JSON), next to the LLM spend ledger, so the refresher is stateless between processes and
``mission-memory refresh status`` reads the same store. One task's failure — its comments cannot
be read, the summarizer raises — is recorded on that task (``last_error``) and the pass goes on:
that guard is the one place where any exception is caught (docs/design.md §11.5). Pull never depends on this
module, and this module never imports :mod:`mission_memory.api`: ``Memory.refresh_once`` hands it the
store (through the narrow :class:`~mission_memory.refresh.refresh_store.RefreshStore`), the embedder
and the settings. A pass has a wall-clock budget (:class:`~mission_memory.refresh.pass_budget.PassBudget`,
ADR 0019): once it is used up, the remaining LLM calls fall back to extractive at once and the report
says so.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from mission_memory.config import Settings
from mission_memory.embeddings import Embedder
from mission_memory.errors import MissionMemoryError
from mission_memory.ingest.access_levels import AccessRules
from mission_memory.ingest.git_history import Commit
from mission_memory.records import RecordKind, source_key_for
from mission_memory.refresh.artifacts import BuiltArtifacts, RepositoryAsOf, build_artifacts
from mission_memory.refresh.escalation_queue import EscalationPlan, plan_escalation
from mission_memory.refresh.ledger import REFRESH_MISSION, StoreSpendLedger
from mission_memory.refresh.pass_budget import PassBudget
from mission_memory.refresh.refresh_store import RefreshStore
from mission_memory.refresh.schedule import ActivitySignals, DueTask, due_tasks, refresh_interval
from mission_memory.refresh.signals import TaskActivity, activity_signals, commit_touches_task
from mission_memory.retrieval_events import RetrievalEvent
from mission_memory.stores.write_path import store_records
from mission_memory.trackers.base import Task, TaskComment, Tracker
from mission_memory.utc import as_utc

if TYPE_CHECKING:
    from mission_memory.refresh.summarizers import Summarizer

__all__ = [
    "RefreshReport",
    "TaskRefreshState",
    "make_summarizer",
    "refresh_once",
    "refresh_status",
]

log = logging.getLogger(__name__)

_TASKS_KEY = "tasks"
_LAST_PASS_KEY = "last_pass"
_ESCALATION_KEY = "escalation"
_HISTORY_KEY = "history"
_HISTORY_LENGTH = 20
_KEPT_ARTIFACT_IDS = 60
_RETRIEVAL_EVENTS_READ = 1000


class TaskRefreshState(BaseModel):
    """What the refresher remembers about one task (stored as JSON under ``task:<KEY>``).

    Attributes:
        key, title: the task.
        last_refresh: when its artifacts were last stored (the pass's clock), or None.
        last_commit: the repository commit the last refresh covered up to, or None.
        last_comment_time: creation time of the newest comment covered, or None.
        checked_at: when a pass last looked at the task.
        next_due: when it will next be due, as computed at ``checked_at``.
        signals: the activity signals at ``checked_at``.
        refreshes: how many refreshes stored artifacts.
        artifact_ids: ids of its latest artifacts (used to find pulls that returned them).
        last_artifacts: ``[{"id", "title", "artifact"}]`` of the last refresh.
        summarizer, fallback_reason: who wrote the last summary, and why the fallback was used.
        last_error, last_error_at: the last failure, cleared by the next successful refresh.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    title: str = ""
    last_refresh: datetime | None = None
    last_commit: str | None = None
    last_comment_time: datetime | None = None
    checked_at: datetime | None = None
    next_due: datetime | None = None
    signals: dict[str, Any] = Field(default_factory=dict)
    refreshes: int = 0
    artifact_ids: list[str] = Field(default_factory=list)
    last_artifacts: list[dict[str, str]] = Field(default_factory=list)
    summarizer: str | None = None
    fallback_reason: str | None = None
    last_error: str | None = None
    last_error_at: datetime | None = None


@dataclass
class RefreshReport:
    """The outcome of one pass.

    Attributes:
        now: the pass's clock.
        tracker: the tracker kind.
        refreshed: ``[{"task", "title", "artifacts": [{"id", "title", "artifact"}], "summarizer",
            "fallback_reason", "commits", "comments", "next_due", "priority"}]`` in the order
            refreshed (most active first).
        skipped: ``[{"task", "reason", "next_due"}]``.
        failed: ``[{"task", "error"}]``.
        budget_seconds: the pass's wall-clock budget, in seconds.
        budget_used_up: True when the budget ran out before the pass ended.
        llm_calls_skipped: LLM calls that fell back to extractive at once because the budget was used up.
    """

    now: datetime
    tracker: str
    refreshed: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)
    budget_seconds: float = 0.0
    budget_used_up: bool = False
    llm_calls_skipped: int = 0

    def to_json(self) -> dict[str, Any]:
        """The report as ``mission-memory refresh once --json`` prints it."""
        return {
            "now": self.now.isoformat(),
            "tracker": self.tracker,
            "refreshed": self.refreshed,
            "skipped": self.skipped,
            "failed": self.failed,
            "budget": {
                "seconds": self.budget_seconds,
                "used_up": self.budget_used_up,
                "llm_calls_skipped": self.llm_calls_skipped,
            },
        }


# -- state --------------------------------------------------------------------------------------


def _load_state(store: RefreshStore, key: str) -> TaskRefreshState:
    raw = store.get_state(REFRESH_MISSION, f"task:{key}")
    if raw is None:
        return TaskRefreshState(key=key)
    return TaskRefreshState.model_validate_json(raw)


def _save_state(store: RefreshStore, state: TaskRefreshState) -> None:
    store.set_state(REFRESH_MISSION, f"task:{state.key}", state.model_dump_json())


def _load_json_list(store: RefreshStore, key: str) -> list[Any]:
    raw = store.get_state(REFRESH_MISSION, key)
    value = json.loads(raw) if raw else []
    return value if isinstance(value, list) else []


def _signals_json(signals: ActivitySignals) -> dict[str, Any]:
    return {
        "commits": signals.commits,
        "comments": signals.comments,
        "hours_since_last_pull": signals.hours_since_last_pull,
    }


# -- the pass -----------------------------------------------------------------------------------


def make_summarizer(
    settings: Settings,
    ledger: StoreSpendLedger,
    clock: Callable[[], datetime],
    budget: PassBudget | None = None,
) -> Summarizer:
    """The configured summarizer: chat-completions with an extractive fallback, or extractive alone.

    Args:
        settings: the LLM endpoint, model, key, daily cap, per-call deadline and the highest access
            level that may be sent (``llm_max_access``).
        ledger: where LLM spend is counted.
        clock: the pass's clock (its UTC date keys the ledger).
        budget: the pass budget LLM calls answer to, or None for none.
    """
    from mission_memory.refresh.summarizers import ChatCompletionsSummarizer, ExtractiveSummarizer

    extractive = ExtractiveSummarizer()
    if not settings.llm_configured:
        return extractive
    assert settings.llm_base_url is not None and settings.llm_model is not None
    return ChatCompletionsSummarizer(
        settings.llm_base_url, settings.llm_model, settings.llm_api_key, ledger, settings.llm_daily_token_cap,
        fallback=extractive, clock=clock, deadline_seconds=settings.llm_deadline_seconds, budget=budget,
        max_access=settings.llm_max_access,
    )


def refresh_once(
    store: RefreshStore,
    embedder: Embedder,
    tracker: Tracker,
    repo_path: Path | None,
    now: datetime,
    settings: Settings,
    summarizer: Summarizer | None = None,
    *,
    label: str | None = None,
    mission: str | None = None,
    monotonic: Callable[[], float] = time.monotonic,
) -> RefreshReport:
    """Run one refresh pass as of ``now``.

    Args:
        store: where the artifacts and the refresher's state go (and retrieval events are read).
        embedder: embeds the artifacts (passages) before they are stored.
        tracker: where the tasks come from.
        repo_path: the mission's git repository (commits, tools, TODOs), or None for tasks only.
        now: the pass's clock; a naive datetime is taken as UTC.
        settings: the LLM endpoint, the refresh label, the pass budget and the LLM deadline.
        summarizer: overrides the one the settings configure (then the pass budget binds no LLM call).
        label: the refresh label; defaults to ``settings.refresh_label`` (``LONG-TERM``).
        mission: mission name of the artifacts; defaults to the repository folder's name (as
            ``mission-memory ingest`` names it), else ``push-refresh``.
        monotonic: the clock the pass budget is measured on.

    Returns:
        What was refreshed, skipped (not due) and failed (one entry per failing task).

    Raises:
        MissionMemoryError: the tracker cannot list tasks, the repository cannot be read, or the
            store cannot be written; per-task failures are reported, not raised.
    """
    now = as_utc(now)
    budget = PassBudget(settings.refresh_pass_budget_seconds, monotonic)
    repo = RepositoryAsOf(repo_path, now) if repo_path is not None else None
    mission = mission or (repo.git.root.name if repo is not None else "push-refresh")
    if summarizer is None:
        summarizer = make_summarizer(settings, StoreSpendLedger(store), lambda: now, budget)
    report = RefreshReport(now=now, tracker=tracker.kind, budget_seconds=budget.seconds)

    tasks = list({t.key: t for t in tracker.list_tasks(label or settings.refresh_label)}.values())
    for unreadable, reason in tracker.unreadable_items():  # a malformed task file fails alone
        log.warning("refresh skipped %s: %s", unreadable, reason)
        report.failed.append({"task": unreadable, "error": reason})
    events = store.retrieval_events(_RETRIEVAL_EVENTS_READ)
    states: dict[str, TaskRefreshState] = {}
    measured: dict[str, tuple[TaskActivity, list[TaskComment]]] = {}
    for task in tasks:
        try:
            states[task.key] = _load_state(store, task.key)
            measured[task.key] = _measure(store, tracker, task, states[task.key], repo, events, mission, now)
        except Exception as exc:  # noqa: BLE001 - per-task isolation (docs/design.md §11.5): record it, go on
            # An unreadable state is replaced by the error: the task is refreshed afresh next time.
            _record_failure(store, report, states.get(task.key, TaskRefreshState(key=task.key)), exc, now)

    candidates = [(key, states[key].last_refresh, a.signals) for key, (a, _) in measured.items()]
    plan = plan_escalation(store, mission, tasks, now)  # docs/design.md §7: push under escalation
    scheduled = due_tasks(candidates, now)
    forced = plan.forced(candidates, {d.task_key for d in scheduled}, now)
    due = plan.order(scheduled + forced)
    _record_escalation(store, plan, forced, now)
    due_keys = {d.task_key for d in due}
    for key, (activity, _) in measured.items():
        if key not in due_keys:
            report.skipped.append(_skip(store, states[key], activity, now))

    by_key = {t.key: t for t in tasks}
    rules = AccessRules(settings.access_paths)
    for item in due:
        task, state = by_key[item.task_key], states[item.task_key]
        activity, comments = measured[item.task_key]
        try:
            built = build_artifacts(
                store, task, last_refresh=state.last_refresh, last_commit=state.last_commit,
                activity=activity, comments=comments, repo=repo, summarizer=summarizer, mission=mission, now=now,
                access_rules=rules,
            )
            store_records(store, embedder, built.records, batch=None)  # one transaction
        except Exception as exc:  # noqa: BLE001 - per-task isolation (docs/design.md §11.5): record it, go on
            _record_failure(store, report, state, exc, now)
            continue
        report.refreshed.append(_after_store(store, task, state, activity, built, repo, now) | {
            "priority": round(item.priority, 4),
        } | plan.explain(item.task_key, item in forced))

    report.budget_used_up = budget.used_up
    report.llm_calls_skipped = budget.llm_calls_skipped
    if report.budget_used_up:
        log.warning("refresh pass budget of %g s used up: %d LLM calls fell back to extractive",
                    budget.seconds, budget.llm_calls_skipped)
    _remember_pass(store, report, [t.key for t in tasks])
    return report


def _measure(
    store: RefreshStore,
    tracker: Tracker,
    task: Task,
    state: TaskRefreshState,
    repo: RepositoryAsOf | None,
    events: Sequence[RetrievalEvent],
    mission: str,
    now: datetime,
) -> tuple[TaskActivity, list[TaskComment]]:
    """The task's activity since its last refresh, and all its comments up to ``now``."""
    comments = [c for c in tracker.list_comments(task) if c.created_at <= now]
    commits = repo.commits_after(state.last_commit) if repo is not None else []
    touching = [c for c in commits if commit_touches_task(c, task)]
    activity = activity_signals(
        task, commits=touching, comments=comments, comments_since=state.last_comment_time or state.last_refresh,
        retrieval_events=events, task_record_ids=_task_record_ids(store, state, touching, mission), now=now,
    )
    return activity, comments


def _skip(store: RefreshStore, state: TaskRefreshState, activity: TaskActivity, now: datetime) -> dict[str, Any]:
    """Record that a task is not due yet; return its ``skipped`` entry."""
    assert state.last_refresh is not None  # a never-refreshed task is always due
    next_due = state.last_refresh + refresh_interval(activity.signals)
    _save_state(store, state.model_copy(update={
        "checked_at": now, "next_due": next_due, "signals": _signals_json(activity.signals),
    }))
    return {"task": state.key, "reason": "not due", "next_due": next_due.isoformat()}


def _task_record_ids(
    store: RefreshStore, state: TaskRefreshState, commits: Sequence[Commit], mission: str
) -> list[str]:
    """Ids of the task's records: its recent artifacts and the ingested records of its commits."""
    ids = list(state.artifact_ids)
    keys = [source_key_for(mission, RecordKind.COMMIT, c.sha) for c in commits]
    if keys:
        ids.extend(store.ids_by_source_keys(keys).values())
    return ids


def _record_failure(
    store: RefreshStore, report: RefreshReport, state: TaskRefreshState, exc: BaseException, now: datetime
) -> None:
    message = str(exc) or type(exc).__name__
    if not isinstance(exc, MissionMemoryError):
        message = f"{type(exc).__name__}: {message}"
    log.warning("refresh of %s failed: %s", state.key, message)
    report.failed.append({"task": state.key, "error": message})
    with contextlib.suppress(MissionMemoryError):  # the store itself may be what failed
        _save_state(store, state.model_copy(update={"last_error": message, "last_error_at": now, "checked_at": now}))


def _after_store(
    store: RefreshStore,
    task: Task,
    state: TaskRefreshState,
    activity: TaskActivity,
    built: BuiltArtifacts,
    repo: RepositoryAsOf | None,
    now: datetime,
) -> dict[str, Any]:
    """Write the task's state after its artifacts are stored; return its report entry."""
    quiet = ActivitySignals(commits=0, comments=0, hours_since_last_pull=activity.signals.hours_since_last_pull)
    next_due = now + refresh_interval(quiet)
    artifacts = [
        {"id": r.id, "title": r.title, "artifact": str(r.attributes["artifact"])} for r in built.records
    ]
    newest_comment = max((c.created_at for c in activity.comments), default=None)
    _save_state(store, state.model_copy(update={
        "title": task.title,
        "last_refresh": now,
        "last_commit": (repo.target if repo is not None else None) or state.last_commit,
        "last_comment_time": newest_comment or state.last_comment_time,
        "checked_at": now,
        "next_due": next_due,
        "signals": _signals_json(activity.signals),
        "refreshes": state.refreshes + 1,
        "artifact_ids": ([a["id"] for a in artifacts] + state.artifact_ids)[:_KEPT_ARTIFACT_IDS],
        "last_artifacts": artifacts,
        "summarizer": built.summarizer,
        "fallback_reason": built.fallback_reason,
        "last_error": None,
        "last_error_at": None,
    }))
    return {
        "task": task.key,
        "title": task.title,
        "artifacts": artifacts,
        "summarizer": built.summarizer,
        "fallback_reason": built.fallback_reason,
        "commits": len(activity.commits),
        "comments": len(activity.comments),
        "next_due": next_due.isoformat(),
    }


def _remember_pass(store: RefreshStore, report: RefreshReport, keys: list[str]) -> None:
    # The queue is the tasks of the latest pass: a task that lost its label leaves it.
    store.set_state(REFRESH_MISSION, _TASKS_KEY, json.dumps(list(dict.fromkeys(keys))))
    summary = {
        "now": report.now.isoformat(), "tracker": report.tracker, "refreshed": len(report.refreshed),
        "skipped": len(report.skipped), "failed": report.failed, "budget": report.to_json()["budget"],
    }
    store.set_state(REFRESH_MISSION, _LAST_PASS_KEY, json.dumps(summary))
    if report.refreshed:
        history = [
            {"task": e["task"], "time": report.now.isoformat(), "summarizer": e["summarizer"],
             "fallback_reason": e["fallback_reason"], "artifacts": len(e["artifacts"])}
            for e in report.refreshed
        ] + _load_json_list(store, _HISTORY_KEY)
        store.set_state(REFRESH_MISSION, _HISTORY_KEY, json.dumps(history[:_HISTORY_LENGTH]))


# -- status -------------------------------------------------------------------------------------------


def _record_escalation(store: RefreshStore, plan: EscalationPlan, forced: list[DueTask], now: datetime) -> None:
    """Keep what the escalation did to this pass for ``refresh status`` (nothing in normal mode)."""
    value = {**plan.to_json(), "pass": now.isoformat(), "forced_due": [d.task_key for d in forced]}
    store.set_state(REFRESH_MISSION, _ESCALATION_KEY, json.dumps(value if plan.degraded else None))


def refresh_status(store: RefreshStore, settings: Settings, now: datetime | None = None) -> dict[str, Any]:
    """The refresher as ``mission-memory refresh status`` shows it.

    Args:
        store: where the refresher keeps its state.
        settings: the LLM model and daily cap shown.
        now: the time the queue is shown at (default: now); a naive datetime is taken as UTC.

    Returns:
        ``{"now", "queue": [{"task", "title", "next_due", "due", "last_refresh", "refreshes",
        "summarizer", "fallback_reason", "last_error", "signals"}] (soonest due first),
        "recent_refreshes": [{"task", "time", "summarizer", "fallback_reason", "artifacts"}],
        "last_pass": {"now", "tracker", "refreshed", "skipped", "failed", "budget"} | None,
        "escalation": the last pass's escalation (mode, α, rate, escalating sectors, linked tasks with
        their criticality, tasks forced due) while degraded, else None (refresh/escalation_queue.py),
        "llm": {"configured", "model", "day", "spent_today", "daily_cap", "remaining"}}``.
    """
    now = as_utc(now or datetime.now(UTC))
    queue = []
    for key in _load_json_list(store, _TASKS_KEY):
        state = _load_state(store, str(key))
        next_due = state.next_due or now
        queue.append({
            "task": state.key,
            "title": state.title,
            "next_due": next_due.isoformat(),
            "due": next_due <= now,
            "last_refresh": state.last_refresh.isoformat() if state.last_refresh else None,
            "refreshes": state.refreshes,
            "summarizer": state.summarizer,
            "fallback_reason": state.fallback_reason,
            "last_error": state.last_error,
            "signals": state.signals,
        })
    queue.sort(key=lambda item: (item["next_due"], item["task"]))
    last_pass_raw = store.get_state(REFRESH_MISSION, _LAST_PASS_KEY)
    spent = StoreSpendLedger(store).spent_on(now.date())
    return {
        "now": now.isoformat(),
        "queue": queue,
        "recent_refreshes": _load_json_list(store, _HISTORY_KEY),
        "last_pass": json.loads(last_pass_raw) if last_pass_raw else None,
        "escalation": json.loads(store.get_state(REFRESH_MISSION, _ESCALATION_KEY) or "null"),
        "llm": {
            "configured": settings.llm_configured,
            "model": settings.llm_model,
            "day": now.date().isoformat(),
            "spent_today": spent,
            "daily_cap": settings.llm_daily_token_cap,
            "remaining": max(0, settings.llm_daily_token_cap - spent),
        },
    }
