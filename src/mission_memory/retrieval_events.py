"""Retrieval events: the typed log entry of one pull query, with who asked it and from where.

Every pull query is logged (docs/design.md §4): what was asked, the scope and filters, the token budget
and use, the records returned with their scores, what was omitted, and — for the
retrieval-correction signal (docs/design.md §6), which links a correction to the retrieval event it
follows — the session, the operator, the mission and the client (CLI, MCP server, hook, API).
Where the who and where come from is :mod:`mission_memory.query_origin`.
See docs/adr/0016-store-boundary-and-retrieval-events.md.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mission_memory.intake_redaction import redact_text

__all__ = ["Client", "NewRetrievalEvent", "RetrievalEvent"]


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

    model_config = ConfigDict(frozen=True, extra="forbid")

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
