"""Running the ``git`` command for mission-memory: one place that starts git in a repository, bounds it
with a total timeout, and translates every way it can fail into the package's error tree, naming the
repository and the failed command (issue 8 item 5). Ingest, refresh, metrics and the prompt corpus all run
git through here; only the stdlib-only capture hook keeps its own (docs/design.md §8: it must stay light).

Output is bytes (`run_git`) or text decoded as UTF-8 with replacement (`run_git_text`). Paths in git's
output are not quoted (``core.quotepath=off``), so non-ASCII file names arrive as written.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Literal, overload

from mission_memory.errors import BackendUnavailable, InputError, MissionMemoryError

__all__ = ["DEFAULT_GIT_TIMEOUT", "run_git", "run_git_text"]

DEFAULT_GIT_TIMEOUT = 300.0
"""Seconds one git command may take in total before it is stopped and reported as unavailable."""

_SHOWN_COMMAND = 160  # characters of the command line quoted in an error


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Kill git's whole process group and reap it, so nothing it started lingers after a timeout."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):  # gone already, or no process groups
        process.kill()
    process.communicate()


def _command_text(args: tuple[str, ...]) -> str:
    text = " ".join(("git", *args))
    return text if len(text) <= _SHOWN_COMMAND else text[: _SHOWN_COMMAND - 1] + "…"


@overload
def run_git(
    repo: Path, *args: str, stdin: bytes | None = ..., bare: bool = ..., check: Literal[True] = ...,
    timeout: float = ..., failure: type[MissionMemoryError] = ...,
) -> bytes: ...


@overload
def run_git(
    repo: Path, *args: str, stdin: bytes | None = ..., bare: bool = ..., check: bool,
    timeout: float = ..., failure: type[MissionMemoryError] = ...,
) -> bytes | None: ...


def run_git(
    repo: Path,
    *args: str,
    stdin: bytes | None = None,
    bare: bool = False,
    check: bool = True,
    timeout: float = DEFAULT_GIT_TIMEOUT,
    failure: type[MissionMemoryError] = BackendUnavailable,
) -> bytes | None:
    """Run ``git ARGS`` in a repository and return its standard output.

    Args:
        repo: the work tree (any folder inside it) git runs in, or with ``bare`` the git directory
            itself (passed as ``--git-dir``).
        *args: git's arguments, e.g. ``("log", "--format=%H")``.
        stdin: bytes fed to git's standard input (``cat-file --batch``, ``hash-object --stdin``).
        bare: treat ``repo`` as a git directory rather than a work tree.
        check: when False, a non-zero exit returns None instead of raising (for questions such as
            ``merge-base --is-ancestor`` whose answer is the exit status).
        timeout: total seconds git may run, in seconds.
        failure: the error class a non-zero exit raises; callers whose failures mean bad user input
            (a path that is not a repository) pass `InputError`.

    Returns:
        git's standard output (bytes), or None when git exited non-zero and ``check`` is False.

    Raises:
        InputError: ``repo`` is not an existing folder.
        BackendUnavailable: git is not installed, cannot be started, or ran past ``timeout``.
        MissionMemoryError: (the ``failure`` class, `BackendUnavailable` by default) git exited
            non-zero and ``check`` is True; the message names the command, the repository and git's
            first ``fatal:`` / ``error:`` line (else its last line).
    """
    if not repo.is_dir():
        raise InputError(f"repository path {repo} is not a folder")
    command = ["git", "-c", "core.quotepath=off"]
    command += ["--git-dir", str(repo), *args] if bare else list(args)
    try:
        process = subprocess.Popen(
            command,
            cwd=None if bare else repo,
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # so a timeout can stop git and whatever it started (hooks, aliases)
        )
    except FileNotFoundError as exc:
        raise BackendUnavailable("the git command is not installed") from exc
    except OSError as exc:
        raise BackendUnavailable(f"{_command_text(args)} could not start in {repo}: {exc}") from exc
    try:
        stdout, stderr = process.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        _stop(process)
        raise BackendUnavailable(f"{_command_text(args)} in {repo} did not finish within {timeout:g} s") from exc
    if process.returncode != 0:
        if not check:
            return None
        lines = stderr.decode("utf-8", "replace").strip().splitlines()
        reasons = [line for line in lines if line.startswith(("fatal:", "error:"))] or lines[-1:]
        detail = reasons[0] if reasons else f"exit status {process.returncode}"
        raise failure(f"{_command_text(args)} failed in {repo}: {detail}")
    return stdout


@overload
def run_git_text(
    repo: Path, *args: str, stdin: bytes | None = ..., bare: bool = ..., check: Literal[True] = ...,
    timeout: float = ..., failure: type[MissionMemoryError] = ...,
) -> str: ...


@overload
def run_git_text(
    repo: Path, *args: str, stdin: bytes | None = ..., bare: bool = ..., check: bool,
    timeout: float = ..., failure: type[MissionMemoryError] = ...,
) -> str | None: ...


def run_git_text(
    repo: Path,
    *args: str,
    stdin: bytes | None = None,
    bare: bool = False,
    check: bool = True,
    timeout: float = DEFAULT_GIT_TIMEOUT,
    failure: type[MissionMemoryError] = BackendUnavailable,
) -> str | None:
    """`run_git`, with the output decoded as UTF-8 (undecodable bytes become U+FFFD).

    Returns:
        git's standard output as text, or None when git exited non-zero and ``check`` is False.

    Raises:
        See `run_git`.
    """
    out = run_git(repo, *args, stdin=stdin, bare=bare, check=check, timeout=timeout, failure=failure)
    return None if out is None else out.decode("utf-8", "replace")
