"""The ``--tracker`` part of ``mission-memory ingest``: a tracker's tasks and comments into the workflow
layer (issue 13 item 5). Thin shell over :meth:`Memory.ingest_tracker`: the flags choose the tracker as
``refresh`` does (``--tasks-dir``, ``--plane-url/--plane-workspace/--plane-project``, ``--github-repo``),
the core reads and stores.
"""

from pathlib import Path
from typing import TYPE_CHECKING, cast

from mission_memory.cli.opening import open_memory
from mission_memory.cli.output import console, print_json, reported_errors
from mission_memory.cli.refresh_commands import TrackerKind, tracker_from_options
from mission_memory.errors import InputError

if TYPE_CHECKING:
    from mission_memory.trackers.base import TaskHistory

__all__ = ["ingest_tracker_items"]


def ingest_tracker_items(
    path: Path | None,
    mission: str | None,
    json_output: bool,
    tracker: TrackerKind | None,
    tasks_dir: Path | None,
    plane_url: str | None,
    plane_workspace: str | None,
    plane_project: str | None,
    github_repo: str | None,
) -> None:
    """Run ``ingest --tracker KIND``: make the tracker, ingest its items, print the report.

    Raises (as ``Error: ...``, exit 1):
        InputError: neither PATH nor ``--tracker``, or both.
        ConfigError: the tracker's options are missing or wrong.
        BackendUnavailable: the tracker cannot be reached within its deadline.
    """
    from mission_memory.config import load_settings

    with reported_errors():
        if tracker is None:
            raise InputError("ingest needs PATH (a repository or folder) or --tracker plane|github|local")
        if path is not None:
            raise InputError(
                f"give PATH ({path}) or --tracker {tracker.value}, not both: run `ingest PATH` and "
                f"`ingest --tracker {tracker.value}` one after the other"
            )
        settings = load_settings()
        source = tracker_from_options(settings, tracker, tasks_dir, plane_url, plane_workspace, plane_project, github_repo)
        with open_memory(settings) as memory:
            # The three shipped trackers implement TaskHistory (listing every task, not only labelled ones).
            report = memory.ingest_tracker(cast("TaskHistory", source), mission=mission)
    data = report.to_json()
    if json_output:
        print_json(data)
        return
    console.print(f"Ingested {data['tracker']} as mission '{data['mission']}'"
                  + (f" (tasks updated since {data['since']})" if data["since"] else ""), markup=False)
    for kind in ("issue", "comment"):
        console.print(f"  {kind}: {data['added'].get(kind, 0)} added, {data['updated'].get(kind, 0)} updated, "
                      f"{data['unchanged'].get(kind, 0)} unchanged")
    for item in data["unreadable"]:
        console.print(f"  unreadable {item['item']}: {item['reason']}", markup=False)
    console.print(f"{data['tasks']} tasks, {data['comments']} comments read · {data['embedded']} records embedded")
