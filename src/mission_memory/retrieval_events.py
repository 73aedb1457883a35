"""Retrieval events: the typed log entry of one pull query, with who asked it and from where.

Every pull query is logged (docs/design.md §4): what was asked, the scope and filters, the token budget
and use, the records returned with their scores, what was omitted, and — for the
retrieval-correction signal (docs/design.md §6), which links a correction to the retrieval event it
follows — the session, the operator, the mission and the client (CLI, MCP server, hook, API).
See docs/adr/0016-store-boundary-and-retrieval-events.md.

Who asks and from where (:func:`resolve_operator`, :func:`process_session_id`):

* operator — ``MISSION_MEMORY_OPERATOR`` when set; else ``user.email`` of the mission's repository's
  git config, then the user's global git config; else the OS user name. This is the prompt hook's
  rule (:func:`mission_memory.capture.prompt_commit.resolve_operator`), applied to the checkout that
  holds the given folder, so a captured prompt and the query after it name the same operator.
* session — the session id the client gives (Claude Code's ``session_id`` in a hook's stdin JSON,
  the MCP session id of a streamable-HTTP connection); else one id per process, so the queries
  of one CLI run, one stdio MCP server or one script still group together.

docs/design.md §6 links every correction to the retrieval event it follows; these two fields make the
link possible.
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mission_memory.capture.redaction import redact_text
from mission_memory.config import OPERATOR_ENV

__all__ = ["OPERATOR_ENV", "Client", "NewRetrievalEvent", "RetrievalEvent", "process_session_id", "resolve_operator"]



def resolve_operator(repository: Path | None = None) -> str | None:
    """The operator a query is logged under: the prompt hook's rule, read from this process's environment.

    Args:
        repository: a folder of the mission's repository (default: the working directory); the
            checkout holding it is found by walking up to ``.git``.

    Returns:
        ``$MISSION_MEMORY_OPERATOR``, else git ``user.email`` there, else the OS user, else None
        (also when the e-mail or the user name breaks the name rule of :mod:`mission_memory.fence`).

    Raises:
        ConfigError: ``$MISSION_MEMORY_OPERATOR`` breaks the name rule (a newline, a zero-width character …).
    """
    from mission_memory.capture.prompt_commit import resolve_checkout
    from mission_memory.capture.prompt_commit import resolve_operator as operator_rule
    from mission_memory.config import environment_variable, operator_setting
    from mission_memory.errors import ConfigError
    from mission_memory.fence import name_problem

    explicit = operator_setting()
    if explicit:
        problem = name_problem(explicit)
        if problem is not None:  # the operator is a stored name, printed in briefs (ADR 0054)
            raise ConfigError(f"{OPERATOR_ENV} {problem}; set it to one line of printable text")
        return explicit
    top, _, _ = resolve_checkout(str((repository or Path.cwd()).resolve()))
    found = operator_rule(top, environment_variable)
    return None if found is None or name_problem(found) is not None else found


@functools.lru_cache(maxsize=1)
def process_session_id() -> str:
    """One id for this process's queries when the client gives no session id (32 hex characters)."""
    return uuid.uuid4().hex


class Client(StrEnum):
    """The shell a query came through."""

    CLI = "cli"
    MCP = "mcp"
    HOOK = "hook"
    API = "api"


class NewRetrievalEvent(BaseModel):
    """A retrieval event before the store gives it an id and a time.

    Attributes:
        query: the task description, as queried, through the redaction pass (docs/adr/0053): the
            event is written to disk and exported, so a secret pasted into a query is not kept.
        scope: ``all``, ``domain``, ``workflow`` or ``practitioner``.
        filters: the filters that were set, JSON-ready.
        token_budget, tokens_used: the digest's bound and size, in tokens.
        record_ids, scores: the records in the digest, best first, with their relevance in [0, 1].
        omitted: relevant records left out for the budget.
        duration_ms: time to answer, in milliseconds.
        model_id: the embedding model used.
        session_id: the agent session (Claude Code's ``session_id``, or a per-process id); None
            for events logged before sessions were recorded.
        operator: who asked (``MISSION_MEMORY_OPERATOR``, git ``user.email``, or the OS user).
        mission: the mission asked about: the ``mission`` filter, else the one mission all returned
            records belong to; None when they span several (an equality key for linking corrections).
        client: the shell the query came through; None for events logged before clients were recorded.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    query: str
    scope: str
    filters: dict[str, Any] = Field(default_factory=dict)
    token_budget: int = Field(ge=1)
    tokens_used: int = Field(ge=0)
    record_ids: tuple[str, ...] = ()
    scores: tuple[float, ...] = ()
    omitted: int = Field(default=0, ge=0)
    duration_ms: float = Field(default=0.0, ge=0.0)
    model_id: str
    session_id: str | None = None
    operator: str | None = None
    mission: str | None = None
    client: Client | None = None

    @field_validator("query")
    @classmethod
    def _redacted_query(cls, query: str) -> str:
        return redact_text(query)


class RetrievalEvent(NewRetrievalEvent):
    """A stored retrieval event.

    Attributes:
        id: the event id (32 hex characters).
        time: when it was logged (UTC).
    """

    id: str
    time: datetime

    @classmethod
    def from_table_row(cls, columns: Sequence[str], row: Sequence[Any]) -> RetrievalEvent:
        """The event a SQL table row holds (SQLite and PostgreSQL store alike): ``filters``,
        ``record_ids`` and ``scores`` as JSON text, ``time`` as POSIX seconds (UTC).

        Raises:
            ValueError: ``columns`` and ``row`` differ in length, or a JSON column does not parse.
            pydantic.ValidationError: the row does not make a valid event.
        """
        item = dict(zip(columns, row, strict=True))
        for key in ("filters", "record_ids", "scores"):
            item[key] = json.loads(item[key])
        item["time"] = datetime.fromtimestamp(item["time"], tz=UTC)
        return cls.model_validate(item)

