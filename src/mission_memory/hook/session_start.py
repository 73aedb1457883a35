"""Claude Code ``SessionStart`` hook: inject a pull digest for the session's repository (issue #3 item 7).

Registered by ``mission-memory hook install --session-start`` as::

    /abs/venv/bin/python -E /abs/.../mission_memory/hook/session_start.py [--data-dir DIR]

For ``SessionStart``, what a hook prints on stdout with exit code 0 is added to the session's
context. This hook reads the hook JSON on stdin (``session_id``, ``cwd``, ``source``, …), finds the
git top-level of ``cwd``, and pulls a digest from the mission named after that folder
(``Memory.query`` with ``filters={"mission": <folder name>}``, DESIGN.md §4). The printed text is at
most :data:`MAX_OUTPUT_CHARS` characters.

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
from pathlib import Path

__all__ = ["DEFAULT_TIME_LIMIT_S", "MAX_OUTPUT_CHARS", "TOKEN_BUDGET", "digest_for", "main"]

DEFAULT_TIME_LIMIT_S = 10.0
MAX_OUTPUT_CHARS = 9_500
TOKEN_BUDGET = 2_500
LOG_NAME = "logs/session-start-hook.log"


def _arg(argv: list[str], name: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg[len(name) + 1 :]
    return None


def _data_dir(argv: list[str]) -> Path:
    explicit = _arg(argv, "--data-dir")
    if explicit:
        return Path(explicit).expanduser()
    from mission_memory.hook.prompt_commit import default_data_dir

    return Path(default_data_dir())


def _log(data_dir: Path, message: str) -> None:
    try:
        path = data_dir / LOG_NAME
        path.parent.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"{stamp} pid={os.getpid()} {message[:2000]!s}\n".replace("\r", " "))
    except BaseException:  # noqa: BLE001, S110 - the log is best effort; the hook must exit 0
        pass


def truncate(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    """``text`` cut to at most ``limit`` characters at a line boundary, with a note when cut.

    A cut that would fall inside an excerpt's fence drops that whole entry instead, so the text
    never ends with stored text whose fence is left open (ADR 0021).
    """
    if len(text) <= limit:
        return text
    note = "\n\n[digest truncated]\n"
    cut = text.rfind("\n", 0, limit - len(note))
    head = text[: cut if cut > 0 else limit - len(note)]
    # Never leave an excerpt fence open (ADR 0021): drop the entry the limit fell inside.
    opened = head.rfind("<<<excerpt ")
    if opened > head.rfind("<<<end excerpt "):
        entry = head.rfind("\n### ", 0, opened)
        head = head[: entry if entry > 0 else opened].rstrip()
    return head + note


def digest_for(cwd: str, data_dir: Path, *, token_budget: int = TOKEN_BUDGET, session_id: str | None = None) -> str:
    """The text to inject for a session started in ``cwd``; ``""`` when there is nothing to say.

    Args:
        cwd: the session's working directory.
        data_dir: the mission-memory data dir holding ``memory.db``.
        token_budget: digest budget in tokens (2,500 tokens stays well below 10,000 characters).
        session_id: Claude Code's session id, logged with the retrieval event.

    Raises:
        MissionMemoryError: the store or the query failed (the caller logs it and prints nothing).
    """
    from mission_memory.hook.prompt_commit import resolve_checkout

    if not (data_dir / "memory.db").is_file():
        return ""
    repository, branch, _ = resolve_checkout(cwd)
    mission = Path(repository).name or repository
    task = f"Resume work on the {mission} repository" + (f", branch {branch}" if branch else "")
    task += ": the decisions in force and their rationale, recent changes, open questions."

    from mission_memory.api import Memory

    with Memory.open(data_dir=data_dir) as memory:
        if mission not in memory.store.missions():
            return ""  # this repository was never ingested: other missions' memory does not belong here
        digest = memory.query(task, scope="all", token_budget=token_budget, filters={"mission": mission},
                              client="hook", session_id=session_id)
    if not digest.entries:
        return ""
    header = f"# mission-memory: pull digest for {mission}\n\n"
    return truncate(header + digest.text.strip() + "\n")


def main(argv: list[str] | None = None) -> int:
    """Run the hook: print the digest, or nothing, within the time limit. Always returns 0."""
    args = sys.argv[1:] if argv is None else argv
    data_dir = Path(".")
    try:
        data_dir = _data_dir(args)
        limit = float(_arg(args, "--time-limit") or DEFAULT_TIME_LIMIT_S)
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
