"""An error's text as an agent is told it: in the tool's own terms, never as command-line advice (issue 36).

The core's messages are written for the command line, where most of them are read: they name the
flag to give (``give --mission``, ``--supersedes 'ADR-9': ...``) and the command to run (``run
`mission-memory ingest PATH```). An agent calling a tool has no command line, so the MCP server words
each tool error here before it answers: a flag becomes the tool's parameter of that name (``mission``,
``supersedes``, ``principles`` for ``--principle``; a query's filter is ``filters.since``), and a
``mission-memory`` command becomes what to ask an operator for.
"""

from __future__ import annotations

import re
from collections.abc import Collection

__all__ = ["for_agent"]

_COMMAND = re.compile(r"(?:run )?`mission-memory ([a-z][a-z-]*)[^`]*`")
_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)")
_ASK = {"ingest": "ask an operator to ingest the mission's repository"}
_ALL_MISSIONS = "all-missions"


def for_agent(message: str, parameters: Collection[str], filters: Collection[str] = ()) -> str:
    """``message`` with its command-line advice put in a tool's terms.

    Args:
        message: an error's text, as the CLI prints it.
        parameters: the tool's parameter names.
        filters: the fields of its ``filters`` parameter, if it has one (``--since`` is ``filters.since``).

    Returns:
        The text with each ``--flag`` named as the tool's parameter (``principles`` for
        ``--principle``; ``filters.mission "*"`` for ``--all-missions``; a flag the tool lacks is
        named as an operator's to set), and each ``mission-memory CMD`` command replaced by what to ask an operator for.
    """

    def command(match: re.Match[str]) -> str:
        return _ASK.get(match[1], f"ask an operator (a step of the command line: {match[1]})")

    def flag(match: re.Match[str]) -> str:
        name = match[1].replace("-", "_")
        if match[1] == _ALL_MISSIONS and "mission" in filters:
            return 'filters.mission "*"'
        for candidate in (name, name + "s"):
            if candidate in parameters:
                return candidate
            if candidate in filters:
                return f"filters.{candidate}"
        return f"the {name} (not a parameter of this tool: an operator sets it)"

    return _FLAG.sub(flag, _COMMAND.sub(command, message))
