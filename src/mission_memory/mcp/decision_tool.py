"""The MCP write tool ``record_decision``: an agent records a decision where it is taken (issue 13 item 4;
docs/adr/0028). Not on the default server, which exposes exactly one tool, ``workflow_memory_query``:
:func:`add_decision_tool` registers it on a server built by
:func:`~mission_memory.mcp.server.build_server` only when the operator opted in to write tools
(``serve --write-tools``, wired by the server's owner). The tool parses its arguments, calls
:meth:`Memory.record_decision` in a worker thread and answers with the outcome as JSON; package errors
become ``ToolError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, ConfigDict, Field

from mission_memory.decisions import RejectedAlternative
from mission_memory.errors import MissionMemoryError, user_message
from mission_memory.mcp.served_memory import ServedMemory, mcp_session_id  # read at registration

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from mission_memory.teams.access_control import AccessContext

__all__ = [
    "DECISION_TOOL_DESCRIPTION",
    "DECISION_TOOL_NAME",
    "DecisionToolArguments",
    "add_decision_tool",
    "decision_tool_schema",
]

DECISION_TOOL_NAME = "record_decision"
DECISION_TOOL_DESCRIPTION = (
    "Record a decision taken in this session, with why and which alternatives were rejected, in the "
    "mission's memory so later sessions and the next operator find it. decided_by is 'agent' unless "
    "decided_by='operator' (the operator stated it). Use supersedes to name the decision it replaces "
    "(an ADR number such as 0003, an ADR path, or decision/<slug>)."
)


_ACCESS_LEVEL_HELP = (
    "Who may read it: public, internal, restricted or secret. Default: the most restricted level of the "
    "decision it supersedes and the principles and tasks it cites (internal when they are all lower)."
)


class RejectedArg(BaseModel):
    """One rejected alternative."""

    model_config = ConfigDict(extra="forbid")

    option: str = Field(description="The option that was not chosen.", min_length=1)
    why: str = Field(description="Why it was rejected.", min_length=1)


class DecisionToolArguments(BaseModel):
    """The arguments of ``record_decision`` (the fields of ``mission-memory decide``)."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(description="The decision's title, one line.", min_length=1)
    decision: str = Field(description="What was decided.", min_length=1)
    rationale: str = Field(description="Why.", min_length=1)
    rejected: list[RejectedArg] = Field(default_factory=list, description="Alternatives not chosen, each with why.")
    context: str | None = Field(default=None, description="The situation that forced the decision.")
    principles: list[str] = Field(default_factory=list, description="Principle ids it rests on (P1, PRIN-3).")
    component: str | None = Field(default=None, description="The component it concerns.")
    tasks: list[str] = Field(default_factory=list, description="Tracker keys it belongs to (OPS-12, #45).")
    supersedes: str | None = Field(default=None, description="The decision it replaces.")
    status: Literal["accepted", "proposed"] = Field(default="accepted", description="accepted or proposed.")
    decided_by: Literal["agent", "operator"] = Field(default="agent", description="Who took the decision.")
    access_level: Literal["public", "internal", "restricted", "secret"] | None = Field(
        default=None, description=_ACCESS_LEVEL_HELP,
    )


class DecisionRecorded(BaseModel):
    """``record_decision``'s answer: the fields of ``mission-memory decide --json`` (its structured content)."""

    id: str = Field(description="The decision record's id.")
    ref: str = Field(description="Its reference (decision/<slug> or the ADR file written).")
    source_key: str = Field(description="Its source key (mission:decision:ref).")
    title: str = Field(description="Its title.")
    mission: str = Field(description="The mission it was recorded in.")
    status: str | None = Field(description="accepted or proposed.")
    decided_by: str | None = Field(description="agent, or the operator.")
    session_id: str | None = Field(description="The session it was taken in.")
    adr_path: str | None = Field(description="The ADR file written, if any.")
    supersedes: list[str] = Field(description="What it supersedes.")
    superseded_records: list[str] = Field(description="Ids of the records it superseded.")
    added: bool = Field(description="False when the same decision was already recorded.")


def decision_tool_schema() -> dict[str, Any]:
    """The JSON Schema of the tool's arguments: the same names, types and defaults as the tool
    :func:`add_decision_tool` registers (a test holds the two together)."""
    return DecisionToolArguments.model_json_schema()


def add_decision_tool(
    server: MCPServer[ServedMemory], access_of: Callable[[Context[Any, Any]], AccessContext | None] = lambda _: None,
    default_mission: str | None = None,
) -> None:
    """Register ``record_decision`` on ``server`` (a server from ``build_server``).

    Call it only when write tools are enabled; the server's lifespan provides the memory.
    ``access_of`` gives the calling operator's access context (a team server, ADR 0045).
    ``default_mission`` is the mission decisions are recorded in: the server's (``serve --mission``,
    or over stdio the project's), never the folder the server process happens to run in; None: the
    caller's only mission when their token is scoped to one, else the mission ``decide`` and
    ``handover note`` default to (the only stored one, else the working directory's when stored;
    docs/adr/0055). :meth:`Memory.record_decision` applies the same checks as ``decide``: a mission
    that breaks the name rule or is not stored is a ``ToolError`` naming it.
    """

    @server.tool(name=DECISION_TOOL_NAME, description=DECISION_TOOL_DESCRIPTION)
    async def record_decision(
        title: Annotated[str, Field(description="The decision's title, one line.")],
        decision: Annotated[str, Field(description="What was decided.")],
        rationale: Annotated[str, Field(description="Why.")],
        ctx: Context[ServedMemory, Any],
        rejected: Annotated[
            list[RejectedArg] | None, Field(description="Alternatives not chosen, each with why.")
        ] = None,
        context: Annotated[str | None, Field(description="The situation that forced the decision.")] = None,
        principles: Annotated[list[str] | None, Field(description="Principle ids it rests on.")] = None,
        component: Annotated[str | None, Field(description="The component it concerns.")] = None,
        tasks: Annotated[list[str] | None, Field(description="Tracker keys it belongs to.")] = None,
        supersedes: Annotated[str | None, Field(description="The decision it replaces.")] = None,
        status: Annotated[Literal["accepted", "proposed"], Field(description="accepted or proposed.")] = "accepted",
        decided_by: Annotated[Literal["agent", "operator"], Field(description="Who took the decision.")] = "agent",
        access_level: Annotated[
            Literal["public", "internal", "restricted", "secret"] | None, Field(description=_ACCESS_LEVEL_HELP)
        ] = None,
    ) -> DecisionRecorded:
        memory = ctx.request_context.lifespan_context.usable()
        session_id = mcp_session_id(ctx)
        alternatives = [RejectedAlternative(r.option, r.why) for r in rejected or []]
        access = access_of(ctx)
        mission = default_mission
        if mission is None and access is not None and len(access.missions) == 1:
            mission = next(iter(access.missions))

        def run() -> DecisionRecorded:
            outcome = memory.record_decision(
                title, decision=decision, rationale=rationale, rejected=alternatives, context=context,
                principles=principles or [], component=component, tasks=tasks or [], supersedes=supersedes,
                status=status, mission=mission, session_id=session_id, by_agent=decided_by == "agent",
                access=access, access_level=access_level,
            )
            return DecisionRecorded.model_validate(outcome.to_json())

        try:
            return await anyio.to_thread.run_sync(run)
        except MissionMemoryError as exc:
            raise ToolError(user_message(exc)) from exc
