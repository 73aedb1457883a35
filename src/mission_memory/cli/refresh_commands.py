"""Push-refresh commands: ``refresh once``, ``refresh run --schedule CRON``, ``refresh status``.

Thin shell over :meth:`Memory.refresh_once` and :meth:`Memory.refresh_status` (docs/design.md §5):
flags choose the tracker and the repository, the core does the pass. ``run`` is the long-running
refresher process (its own container in ``compose.yaml``): one pass per cron firing, a failing pass
logged and the loop going on, SIGTERM stopping it between passes.
"""

import logging
import signal
import time
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from mission_memory.cli.opening import open_memory
from mission_memory.cli.output import console, err_console, print_json, reported_errors
from mission_memory.errors import ConfigError, InputError
from mission_memory.utc import parse_clock_flag

if TYPE_CHECKING:
    from mission_memory.config import Settings
    from mission_memory.trackers.base import Tracker

__all__ = ["app"]

app = typer.Typer(
    rich_markup_mode="markdown",
    help="Push mode: keep idle LONG-TERM tasks fresh (summary, tool-lineage delta, open questions).",
    no_args_is_help=True,
)


class TrackerKind(StrEnum):
    local = "local"
    plane = "plane"
    github = "github"


TrackerOption = Annotated[TrackerKind, typer.Option("--tracker", help="Where the tasks live.")]
TasksDirOption = Annotated[
    Path | None, typer.Option("--tasks-dir", help="Local tracker: folder of `<KEY>.md` task files.")
]
PlaneUrlOption = Annotated[
    str | None, typer.Option("--plane-url", help="Plane: base URL (key from MISSION_MEMORY_PLANE_API_KEY).")
]
PlaneWorkspaceOption = Annotated[str | None, typer.Option("--plane-workspace", help="Plane: workspace slug.")]
PlaneProjectOption = Annotated[str | None, typer.Option("--plane-project", help="Plane: project id.")]
GithubRepoOption = Annotated[
    str | None, typer.Option("--github-repo", help="GitHub: owner/name (token from MISSION_MEMORY_GITHUB_TOKEN).")
]
RepoOption = Annotated[Path | None, typer.Option("--repo", help="The mission's git repository.")]


def _check_repo_flag(repo: Path | None) -> None:
    """Refuse a ``--repo`` that is not a folder, naming the flag (the core names its own ``ingest path``)."""
    if repo is not None and not repo.is_dir():
        raise InputError(f"--repo {repo}: {'not a folder' if repo.exists() else 'no such folder'}")
LabelOption = Annotated[str | None, typer.Option("--label", help="Refresh label (default LONG-TERM).")]


def tracker_from_options(
    settings: "Settings",
    kind: TrackerKind,
    tasks_dir: Path | None,
    plane_url: str | None,
    plane_workspace: str | None,
    plane_project: str | None,
    github_repo: str | None,
) -> "Tracker":
    """The tracker the flags name; credentials and deadlines come from ``settings`` in the registry."""
    from mission_memory.trackers.registry import make_tracker

    match kind:
        case TrackerKind.local:
            if tasks_dir is None:
                raise ConfigError("--tracker local needs --tasks-dir (a folder of <KEY>.md task files)")
            return make_tracker("local", folder=tasks_dir)
        case TrackerKind.plane:
            missing = [flag for flag, value in (("--plane-url", plane_url), ("--plane-workspace", plane_workspace),
                                                ("--plane-project", plane_project)) if not value]
            if missing:
                raise ConfigError(f"--tracker plane needs {', '.join(missing)}")
            return make_tracker("plane", settings=settings, base_url=plane_url, workspace=plane_workspace,
                                project_id=plane_project)
        case TrackerKind.github:
            if not github_repo:
                raise ConfigError("--tracker github needs --github-repo owner/name")
            return make_tracker("github", settings=settings, repo=github_repo)


def _load_settings() -> "Settings":
    from mission_memory.config import load_settings

    return load_settings()


def _print_report(data: dict[str, Any]) -> None:
    console.print(f"Refresh pass at {data['now']} ({data['tracker']} tracker)")
    for item in data["refreshed"]:
        how = item["summarizer"] + (f" (fallback: {item['fallback_reason']})" if item["fallback_reason"] else "")
        console.print(f"  refreshed {item['task']}: {len(item['artifacts'])} artifacts, "
                      f"{item['commits']} commits, {item['comments']} comments, summary by {how}")
    for item in data["skipped"]:
        console.print(f"  skipped   {item['task']}: {item['reason']}, next due {item['next_due']}")
    for item in data["failed"]:
        console.print(f"  FAILED    {item['task']}: {item['error']}")
    if not (data["refreshed"] or data["skipped"] or data["failed"]):
        console.print("  no task carries the refresh label")
    budget = data["budget"]
    if budget["used_up"]:
        console.print(f"  pass budget of {budget['seconds']:g} s used up: {budget['llm_calls_skipped']} LLM calls "
                      "fell back to extractive at once (MISSION_MEMORY_REFRESH_PASS_BUDGET_SECONDS)")


_STOP_POLL_S = 0.2
"""How often a waiting refresher looks for a stop signal, in seconds."""

@app.command()
def once(
    tracker: TrackerOption = TrackerKind.local,
    tasks_dir: TasksDirOption = None,
    plane_url: PlaneUrlOption = None,
    plane_workspace: PlaneWorkspaceOption = None,
    plane_project: PlaneProjectOption = None,
    github_repo: GithubRepoOption = None,
    repo: RepoOption = None,
    now: Annotated[str | None, typer.Option("--now", help="Run the pass as if at this ISO 8601 time.")] = None,
    label: LabelOption = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Run one refresh pass: refresh the due LONG-TERM tasks, skip the others, report failures."""
    with reported_errors():
        moment = parse_clock_flag(now, "--now") or datetime.now(UTC)
        settings = _load_settings()
        _check_repo_flag(repo)
        source = tracker_from_options(settings, tracker, tasks_dir, plane_url, plane_workspace, plane_project, github_repo)
        with open_memory(settings) as memory:
            report = memory.refresh_once(source, repo, moment, label=label)
    data = report.to_json()
    if json_output:
        print_json(data)
    else:
        _print_report(data)


@app.command()
def run(
    schedule: Annotated[str, typer.Option("--schedule", help="Cron expression in UTC, e.g. '*/30 * * * *'.")],
    tracker: TrackerOption = TrackerKind.local,
    tasks_dir: TasksDirOption = None,
    plane_url: PlaneUrlOption = None,
    plane_workspace: PlaneWorkspaceOption = None,
    plane_project: PlaneProjectOption = None,
    github_repo: GithubRepoOption = None,
    repo: RepoOption = None,
    label: LabelOption = None,
    max_passes: Annotated[int | None, typer.Option("--max-passes", help="Stop after this many passes.")] = None,
) -> None:
    """Run the refresher: one pass at every firing of the schedule, until SIGTERM or Ctrl-C."""
    from mission_memory.refresh.cron_loop import run_schedule

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # Signals received. A signal handler runs in the main thread between two bytecodes, possibly
    # inside a lock the main thread holds (Event.wait holds its Condition's lock while it re-arms),
    # so the handler only appends to a list, and waiting polls that list while it sleeps.
    stopping: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.append(signum)
        err_console.print(f"Received signal {signum}: stopping after the current pass.")

    def wait(seconds: float) -> bool:
        if seconds > 0 and not stopping:
            err_console.print(f"Next refresh pass in {seconds:.0f} s.")
        deadline = time.monotonic() + seconds
        while not stopping:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(left, _STOP_POLL_S))
        return True

    with reported_errors():
        settings = _load_settings()
        _check_repo_flag(repo)
        source = tracker_from_options(settings, tracker, tasks_dir, plane_url, plane_workspace, plane_project, github_repo)
        previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            with open_memory(settings) as memory:

                def one_pass(fire: datetime) -> None:
                    report = memory.refresh_once(source, repo, datetime.now(UTC), label=label)
                    _print_report(report.to_json())

                passes = run_schedule(schedule, one_pass, clock=lambda: datetime.now(UTC), wait=wait,
                                      max_passes=max_passes)
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
    err_console.print(f"Refresher stopped after {passes} passes.")


@app.command()
def status(
    now: Annotated[str | None, typer.Option("--now", help="Show the queue as of this ISO 8601 time.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Show the refresh queue (next due per task), the latest refreshes and LLM spend today vs the cap."""
    with reported_errors():
        moment = parse_clock_flag(now, "--now")
        with open_memory(_load_settings()) as memory:
            data = memory.refresh_status(now=moment)
    if json_output:
        print_json(data)
        return
    table = Table("task", "next due", "last refresh", "refreshes", "summary by", "last error",
                  title=f"Refresh queue at {data['now']}", title_justify="left")
    for item in data["queue"]:
        due = f"{item['next_due'][:16]}{' (due)' if item['due'] else ''}"
        table.add_row(item["task"], due, (item["last_refresh"] or "never")[:16], str(item["refreshes"]),
                      item["summarizer"] or "-", item["last_error"] or "")
    console.print(table)
    escalation = data.get("escalation")
    if escalation:
        sectors = ", ".join(f"{k} {v}" for k, v in escalation["escalating_sectors"].items())
        console.print(f"Escalation (degraded, α {escalation['alpha']:.2f}): sectors {sectors}; queue by criticality; "
                      f"forced due at the pass of {escalation['pass'][:16]}: {', '.join(escalation['forced_due']) or 'none'}",
                      markup=False)
    last_pass = data.get("last_pass")
    if last_pass:
        failed = last_pass.get("failed") or []
        console.print(f"Last pass at {str(last_pass.get('now'))[:16]} ({last_pass.get('tracker')} tracker): "
                      f"{last_pass.get('refreshed', 0)} refreshed, {last_pass.get('skipped', 0)} skipped, "
                      f"{len(failed)} failed", markup=False)
        for failure in failed:
            console.print(f"  failed: {failure.get('task')}: {failure.get('error')}", markup=False)
    for item in data["recent_refreshes"][:10]:
        note = f" (fallback: {item['fallback_reason']})" if item["fallback_reason"] else ""
        console.print(f"Refreshed {item['task']} at {item['time'][:16]} by {item['summarizer']}{note}")
    llm = data["llm"]
    model = llm["model"] if llm["configured"] else "not configured (extractive summaries)"
    console.print(f"LLM: {model} · spent {llm['spent_today']} of {llm['daily_cap']} tokens on {llm['day']}")
