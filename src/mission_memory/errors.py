"""The one error tree of mission-memory.

::

    MissionMemoryError            base; every error the package raises on purpose
    ├── ConfigError               a setting is missing or invalid
    ├── InputError                user input (a path, a file, a query, a filter) is malformed
    │   └── AccessDenied          an operator token does not allow the request (a mission outside it)
    ├── BackendUnavailable        a backend (SQLite file, git, embedder, HTTP peer) cannot be used
    ├── NotFound                  a named thing (record, session, prompt) does not exist
    └── BudgetError               a token budget is too small to hold even the digest header

Shells map the tree at one place each: the CLI prints ``Error: <message>`` on stderr and exits 1,
the MCP server raises ``ToolError``, the prompt hook logs and exits 0. A dependency's exceptions
are translated at one boundary per backend (``raise BackendUnavailable(...) from exc``).

Messages (and every count shown anywhere: digests, briefs, listings) word a count with :func:`counted`,
so "1 alert", never "1 alerts".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = [
    "MAX_MESSAGE_CHARS",
    "AccessDenied",
    "BackendUnavailable",
    "BudgetError",
    "ConfigError",
    "InputError",
    "MissionMemoryError",
    "NotFound",
    "StoreDamaged",
    "counted",
    "listed_problems",
    "user_message",
]


class MissionMemoryError(Exception):
    """Base class of every error mission-memory raises on purpose."""


class ConfigError(MissionMemoryError):
    """A setting is missing or has an invalid value."""


class InputError(MissionMemoryError):
    """User input is malformed; the message names the input and what is wrong."""


class AccessDenied(InputError):
    """The caller's operator token does not allow the request (a mission outside its scope, ADR 0045).

    An :class:`InputError`, so every shell that reports bad input reports it; the HTTP receivers
    answer it with 403 instead of 400.
    """


class BackendUnavailable(MissionMemoryError):
    """A backend (database file, git, embedder, HTTP peer) cannot be used right now."""


class StoreDamaged(BackendUnavailable):
    """The store's file is damaged (malformed, truncated, empty): refused by every command, with what
    would be lost and how to save what is readable (docs/adr/0055)."""


class NotFound(MissionMemoryError):
    """A named thing does not exist."""


class BudgetError(MissionMemoryError):
    """A token budget is too small to hold even the digest's (or brief's) fixed part.

    Args:
        budget: the budget given, in tokens.
        needed: what the fixed part takes, in tokens.
        fixed_part: what that part is, e.g. ``"the digest header"``.
        parameter: how the caller named the budget (``token_budget``, the core's and the MCP tool's
            parameter; the CLI re-words it as ``--budget`` with :meth:`for_parameter`).

    The message reads ``token_budget 10 is too small for the digest header (115 tokens)``.
    """

    def __init__(self, budget: int, needed: int, fixed_part: str, parameter: str = "token_budget") -> None:
        self.budget, self.needed, self.fixed_part, self.parameter = budget, needed, fixed_part, parameter
        super().__init__(f"{parameter} {budget} is too small for {fixed_part} ({needed} tokens)")

    def for_parameter(self, parameter: str) -> BudgetError:
        """The same error naming the budget as ``parameter`` (``--budget`` on the command line)."""
        return BudgetError(self.budget, self.needed, self.fixed_part, parameter)


_PYDANTIC_HELP = re.compile(r"\n?[ \t]*For further information visit https?://errors\.pydantic\.dev/\S*")


MAX_MESSAGE_CHARS = 2000
"""Longest error text shown (a tool error goes into the model's context: 100,000 unknown filter keys
once made a 4.8 MB answer)."""

_SHOWN_PROBLEMS = 5
_PROBLEM_CHARS = 200


def listed_problems(problems: Sequence[str], shown: int = _SHOWN_PROBLEMS) -> str:
    """``problems`` joined with ``; `` for one message: the first ``shown``, each clipped to 200
    characters, then how many more (``…; and 99,995 more problems``)."""
    clipped = [p if len(p) <= _PROBLEM_CHARS else p[: _PROBLEM_CHARS - 1] + "…" for p in problems[:shown]]
    rest = len(problems) - shown
    more = f"; and {counted(rest, 'more problem', thousands=True)}" if rest > 0 else ""
    return "; ".join(clipped) + more


def user_message(exc: BaseException) -> str:
    """The text of ``exc`` as a user or a model should see it, at most :data:`MAX_MESSAGE_CHARS` characters.

    Pydantic appends ``For further information visit https://errors.pydantic.dev/...`` to each
    problem of a ``ValidationError``; that line helps a library author, not the person or the model
    reading the error, so it is removed wherever an error is shown (the CLI, the MCP server). A
    longer text is cut, saying how much was left out.
    """
    text = _PYDANTIC_HELP.sub("", str(exc)).strip()
    if len(text) > MAX_MESSAGE_CHARS:
        text = f"{text[: MAX_MESSAGE_CHARS - 60]}… ({len(text) - MAX_MESSAGE_CHARS + 60:,} more characters left out)"
    return text


def counted(count: int, noun: str, plural: str | None = None, *, thousands: bool = False) -> str:
    """``count`` and ``noun``, the noun in the singular for exactly one, else in the plural.

    Args:
        count: how many.
        noun: the singular (``alert``).
        plural: the plural when it is not ``noun + "s"`` (``entries``).
        thousands: write the count with thousands separators (``12,000``).

    Returns:
        ``"1 alert"``, ``"0 alerts"``, ``"2 entries"``.
    """
    number = f"{count:,}" if thousands else f"{count}"
    return f"{number} {noun if count == 1 else (plural or noun + 's')}"
