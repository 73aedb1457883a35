"""Who asks a pull query and from where: the operator and the session of a retrieval event.

* operator — ``MISSION_MEMORY_OPERATOR`` when set; else ``git config user.email`` of the mission's
  repository (for the CLI, the MCP server and the hook: the repository of the working directory);
  else the OS user name.
* session — the session id the client gives (Claude Code's ``session_id`` in a hook's stdin JSON,
  the MCP session id of a streamable-HTTP connection); else one id per process, so the queries
  of one CLI run, one stdio MCP server or one script still group together.

docs/design.md §6 links every correction to the retrieval event it follows; these two fields make the
link possible. See docs/adr/0016-store-boundary-and-retrieval-events.md.
"""

from __future__ import annotations

import functools
import getpass
import os
import subprocess
import uuid
from pathlib import Path

__all__ = ["OPERATOR_ENV", "process_session_id", "resolve_operator"]

OPERATOR_ENV = "MISSION_MEMORY_OPERATOR"
_GIT_TIMEOUT_S = 2.0


def resolve_operator(repository: Path | None = None) -> str | None:
    """The operator a query is logged under.

    Args:
        repository: the mission's repository (default: the working directory).

    Returns:
        ``$MISSION_MEMORY_OPERATOR``, else git ``user.email`` there, else the OS user, else None
        (also when the e-mail or the user name breaks the name rule of :mod:`mission_memory.stored_names`).

    Raises:
        ConfigError: ``$MISSION_MEMORY_OPERATOR`` breaks the name rule (a newline, a zero-width character …).
    """
    explicit = os.environ.get(OPERATOR_ENV, "").strip()
    if explicit:
        from mission_memory.errors import ConfigError
        from mission_memory.stored_names import name_problem

        problem = name_problem(explicit)
        if problem is not None:  # the operator is a stored name, printed in briefs (ADR 0054)
            raise ConfigError(f"{OPERATOR_ENV} {problem}; set it to one line of printable text")
        return explicit
    found = _git_email(str((repository or Path.cwd()).resolve())) or _os_user()
    if found is not None:
        from mission_memory.stored_names import name_problem

        return None if name_problem(found) is not None else found
    return None


@functools.lru_cache(maxsize=16)
def _git_email(folder: str) -> str | None:
    """``git config user.email`` as seen from ``folder`` (repository, global or system config)."""
    try:
        done = subprocess.run(
            ["git", "-C", folder, "config", "user.email"],
            capture_output=True, text=True, timeout=_GIT_TIMEOUT_S, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    email = done.stdout.strip()
    return email if done.returncode == 0 and email else None


def _os_user() -> str | None:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return None


@functools.lru_cache(maxsize=1)
def process_session_id() -> str:
    """One id for this process's queries when the client gives no session id (32 hex characters)."""
    return uuid.uuid4().hex
