"""The one error tree of mission-memory.

::

    MissionMemoryError            base; every error the package raises on purpose
    ├── ConfigError               a setting is missing or invalid
    ├── InputError                user input (a path, a file, a query, a filter) is malformed
    ├── BackendUnavailable        a backend (SQLite file, git, embedder, HTTP peer) cannot be used
    ├── NotFound                  a named thing (record, session, prompt) does not exist
    └── BudgetError               a token budget is too small to hold even the digest header

Shells map the tree at one place each: the CLI prints ``Error: <message>`` on stderr and exits 1,
the MCP server raises ``ToolError``, the prompt hook logs and exits 0. A dependency's exceptions
are translated at one boundary per backend (``raise BackendUnavailable(...) from exc``).
"""

from __future__ import annotations

__all__ = [
    "BackendUnavailable",
    "BudgetError",
    "ConfigError",
    "InputError",
    "MissionMemoryError",
    "NotFound",
]


class MissionMemoryError(Exception):
    """Base class of every error mission-memory raises on purpose."""


class ConfigError(MissionMemoryError):
    """A setting is missing or has an invalid value."""


class InputError(MissionMemoryError):
    """User input is malformed; the message names the input and what is wrong."""


class BackendUnavailable(MissionMemoryError):
    """A backend (database file, git, embedder, HTTP peer) cannot be used right now."""


class NotFound(MissionMemoryError):
    """A named thing does not exist."""


class BudgetError(MissionMemoryError):
    """A token budget is too small to hold even the digest's header."""
