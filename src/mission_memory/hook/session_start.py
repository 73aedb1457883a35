"""Claude Code ``SessionStart`` hook: inject what the starting operator needs (issue #3 item 7, issue #13 item 7).

Registered by ``mission-memory hook install --session-start`` as::

    /abs/venv/bin/python -E /abs/.../mission_memory/hook/session_start.py [--data-dir DIR]

For ``SessionStart``, what a hook prints on stdout with exit code 0 is added to the session's
context. This hook reads the hook JSON on stdin (``session_id``, ``cwd``, ``source``, …), finds the
git top-level of ``cwd`` and the mission named after that folder, and knows who is starting (ADR 0027):

* on a rotation — someone else worked on the mission since the operator was last active there, or it
  is the operator's first session there (:func:`~mission_memory.handover.shift_window.takes_over`,
  handover's predecessor rule, ADR 0060: reading a brief or asking memory is not work) — it injects
  the rotation brief (``Memory.rotation_brief``, docs/design.md §6);
* otherwise a task-focused digest: a pull query (``Memory.query``, docs/design.md §4) built from the
  current branch, the latest commits and the tasks in progress. Those come from the repository
  and the tracker, so the digest's ``Task:`` line shows a fixed description instead of them.

The printed text is at most :data:`MAX_OUTPUT_CHARS`
characters, and both start with the line ``# mission-memory: pull digest for <mission>``.

It fails open like the prompt hook: a hard time limit (:data:`DEFAULT_TIME_LIMIT_S`, below the
installed ``timeout``) after which the process exits 0 with nothing printed; any error, an empty
store or an empty digest also prints nothing and exits 0. Problems go to
``<data dir>/logs/session-start-hook.log``. The store is never created from here: with no
``memory.db`` in the data dir the hook does nothing.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from mission_memory.capture.prompt_commit import command_option
from mission_memory.stores.private_files import DATA_FILE_MODE, make_data_folder

if TYPE_CHECKING:
    from mission_memory.api import Memory

__all__ = ["DEFAULT_TIME_LIMIT_S", "MAX_OUTPUT_CHARS", "TOKEN_BUDGET", "digest_for", "main"]

DEFAULT_TIME_LIMIT_S = 10.0
MAX_OUTPUT_CHARS = 9_500
TOKEN_BUDGET = 2_500
LOG_NAME = "logs/session-start-hook.log"


def _data_dir(argv: list[str]) -> Path:
    explicit = command_option(argv, "--data-dir")
    if explicit:
        return Path(explicit).expanduser()
    from mission_memory.capture.prompt_commit import default_data_dir

    return Path(default_data_dir())


def _log(data_dir: Path, message: str) -> None:
    try:
        path = data_dir / LOG_NAME
        make_data_folder(path.parent)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, DATA_FILE_MODE)
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            handle.write(f"{stamp} pid={os.getpid()} {message[:2000]!s}\n".replace("\r", " "))
    except BaseException:  # noqa: BLE001, S110 - the log is best effort; the hook must exit 0
        pass


def truncate(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    """``text`` cut to at most ``limit`` characters at a line boundary, with a note when cut, never
    inside an excerpt's fence (:func:`~mission_memory.fence.cut_outside_fences`)."""
    from mission_memory.fence import cut_outside_fences

    return cut_outside_fences(text, limit)


_FOCUS_TASK_LINE = "Task: continue the current branch's work (its latest commits and the tasks in progress)."


def _focus_query(repository: str, branch: str | None, memory: Memory, mission: str) -> str:
    """The pull query of a task-focused session start: branch, latest commit subjects, tasks in progress."""
    from mission_memory.git_runner import run_git_text
    from mission_memory.records import RecordKind

    subjects = (run_git_text(Path(repository), "log", "-5", "--no-merges", "--format=%s", check=False) or "").split("\n")
    tasks = [r.title for r in memory.store.records_of_kind([RecordKind.ISSUE.value], mission=mission, limit=200)
             if r.attributes.get("in_progress") is True][:5]
    parts = [f"Continue work on branch {branch}" if branch else "Continue the current work"]
    parts += [s.strip() for s in subjects if s.strip()]
    parts += tasks
    return ". ".join(parts)[:2000]


def digest_for(cwd: str, data_dir: Path, *, token_budget: int = TOKEN_BUDGET, session_id: str | None = None) -> str:
    """The text to inject for a session started in ``cwd``; ``""`` when there is nothing to say.

    The rotation brief on a rotation, else a task-focused digest (see the module docstring, ADR 0027).

    Args:
        cwd: the session's working directory.
        data_dir: the mission-memory data dir holding ``memory.db``.
        token_budget: budget in tokens (2,500 tokens stays well below 10,000 characters).
        session_id: Claude Code's session id, logged with the retrieval event.

    Raises:
        MissionMemoryError: the store or the query failed (the caller logs it and prints nothing).
    """
    from mission_memory.capture.prompt_commit import resolve_checkout

    if not (data_dir / "memory.db").is_file():
        return ""
    from mission_memory.mission_scope import mission_here

    repository, branch, _ = resolve_checkout(cwd)
    mission = mission_here(cwd)

    from mission_memory.api import Memory
    from mission_memory.handover.shift_window import takes_over
    from mission_memory.retrieval_events import resolve_operator

    with Memory.open(data_dir=data_dir) as memory:
        if mission not in memory.store.missions():
            return ""  # this repository was never ingested: other missions' memory does not belong here
        operator = resolve_operator(Path(repository))
        if takes_over(memory.store, mission, operator, datetime.now(UTC), session_id=session_id):
            brief = memory.rotation_brief(mission=mission, for_operator=operator, token_budget=token_budget,
                                          repository=repository, client="hook", session_id=session_id,
                                          embed_archived=False)  # the queue's next catch-up embeds it
            lead = ("Session start after an operator change: the rotation brief of this mission "
                    "(the operator acknowledges it once they have read it).")
            return truncate(f"# mission-memory: pull digest for {mission}\n\n{lead}\n\n{brief.text.strip()}\n")
        task = _focus_query(repository, branch, memory, mission)
        # Leave room for the fixed Task line that replaces the query built from repository text.
        digest = memory.query(task, scope="all", token_budget=max(token_budget - 40, 1), filters={"mission": mission},
                              client="hook", session_id=session_id)
    if not digest.entries:
        return ""
    lines = digest.text.strip().split("\n")
    text = "\n".join(_FOCUS_TASK_LINE if line.startswith("Task: ") and i < 3 else line for i, line in enumerate(lines))
    lead = "Session start by the same operator as the last session: a digest focused on the current work."
    return truncate(f"# mission-memory: pull digest for {mission}\n\n{lead}\n\n{text}\n")


def main(argv: list[str] | None = None) -> int:
    """Run the hook: print the digest, or nothing, within the time limit. Always returns 0."""
    args = sys.argv[1:] if argv is None else argv
    data_dir = Path(".")
    try:
        data_dir = _data_dir(args)
        limit = float(command_option(args, "--time-limit") or DEFAULT_TIME_LIMIT_S)
        raw = sys.stdin.buffer.read() if sys.stdin is not None else b""
        import json

        payload = json.loads(raw.decode("utf-8", "replace")) if raw.strip() else {}
        cwd = payload.get("cwd") if isinstance(payload, dict) else None
        cwd = cwd if isinstance(cwd, str) and cwd else os.getcwd()
        session = payload.get("session_id") if isinstance(payload, dict) else None
        session_id = session if isinstance(session, str) and session else None
    except BaseException as exc:  # noqa: BLE001 - fail open
        _log(data_dir, f"bad hook input: {type(exc).__name__}: {exc}")
        return 0

    result: list[str] = []

    def work() -> None:
        try:
            result.append(digest_for(cwd, data_dir, session_id=session_id))
        except BaseException as exc:  # noqa: BLE001 - fail open: log, print nothing
            _log(data_dir, f"digest failed: {type(exc).__name__}: {exc}")

    worker = threading.Thread(target=work, name="session-start-digest", daemon=True)
    worker.start()
    worker.join(limit)
    if worker.is_alive():
        _log(data_dir, f"time limit of {limit:g} s reached; nothing injected")
        return 0
    if result and result[0]:
        try:
            sys.stdout.write(result[0])
            sys.stdout.flush()
        except BaseException as exc:  # noqa: BLE001
            _log(data_dir, f"cannot write the digest: {exc}")
    return 0


if __name__ == "__main__":
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        del sys.path[0]  # run by path: import the package, not this folder's modules as top-level ones
    try:
        main()
    finally:
        os._exit(0)  # also ends a worker still running past the time limit
