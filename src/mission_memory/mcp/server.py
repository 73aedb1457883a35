"""The MCP server: exactly one tool, ``workflow_memory_query``, over the official ``mcp`` SDK v2.

The server's lifespan owns the :class:`~mission_memory.api.Memory` (opened when the server starts,
closed when it stops). The tool runs the synchronous core in a worker thread
(``anyio.to_thread``) and turns the package's errors into ``ToolError``, which reaches the model as
a tool error rather than as a successful answer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from mission_memory import __version__
from mission_memory.api import Memory
from mission_memory.errors import MissionMemoryError
from mission_memory.retrieval.filters import QueryFilters
from mission_memory.retrieval_events import Client

__all__ = ["TOOL_DESCRIPTION", "build_server", "run_server"]

TOOL_DESCRIPTION = (
    "Search the mission's memory (architecture decisions with their rationale and rejected "
    "alternatives, commit history, documentation, operator correction patterns) for what is relevant "
    "to a task, and return a digest that fits in token_budget tokens. Each entry gives its relevance "
    "score, age and provenance (commit sha or file path#heading). Call it at the start of a task and "
    "whenever the task changes direction. Superseded decisions are marked [SUPERSEDED]."
)

FiltersArg = Annotated[
    QueryFilters | None,
    Field(
        description=(
            "Optional restrictions: component (a top-level folder such as 'docs'), criticality "
            "(minimum, 0..1; decisions are 0.6-0.7, commits 0.3-0.4, documents 0.4-0.5), since / until "
            "(ISO 8601 date or time), mission, mission_type, outcome (accepted|rejected|modified), "
            "operator, max_access (public|internal|restricted|secret: the reader's clearance)."
        )
    ),
]


def build_server(memory_factory: Callable[[], Memory] | None = None) -> MCPServer[Memory]:
    """Make the MCP server.

    Args:
        memory_factory: opens the memory when the server starts; default ``Memory.open()``
            (settings from ``MISSION_MEMORY_*`` variables).
    """
    factory = memory_factory or Memory.open

    @asynccontextmanager
    async def lifespan(_server: MCPServer[Memory]) -> AsyncIterator[Memory]:
        memory = factory()
        try:
            yield memory
        finally:
            memory.close()

    server: MCPServer[Memory] = MCPServer(
        name="mission-memory",
        version=__version__,
        instructions=(
            "Long-term memory of this mission. Before planning a task, call workflow_memory_query with "
            "the task description to learn the decisions, history and documents that bear on it."
        ),
        lifespan=lifespan,
    )

    @server.tool(name="workflow_memory_query", description=TOOL_DESCRIPTION)
    async def workflow_memory_query(
        task_description: Annotated[str, Field(description="The task or situation in natural language.")],
        ctx: Context[Memory, Any],
        scope: Annotated[
            Literal["all", "domain", "workflow", "practitioner"], Field(description="Memory layers to search.")
        ] = "all",
        token_budget: Annotated[int, Field(description="Upper bound on the digest's size, in tokens.", ge=1)] = 8000,
        filters: FiltersArg = None,
    ) -> str:
        memory = ctx.request_context.lifespan_context
        session_id = _session_id(ctx)

        def run() -> str:
            return memory.query(
                task_description, scope=scope, token_budget=token_budget, filters=filters,
                client=Client.MCP, session_id=session_id,
            ).text

        try:
            return await anyio.to_thread.run_sync(run)
        except MissionMemoryError as exc:
            raise ToolError(str(exc)) from exc

    return server


def _session_id(ctx: Context[Memory, Any]) -> str | None:
    """The streamable-HTTP session id of the calling connection (``Mcp-Session-Id``); None on stdio."""
    request = getattr(ctx.request_context, "request", None)
    headers = getattr(request, "headers", None)
    value = headers.get("mcp-session-id") if headers is not None else None
    return str(value) if value else None


def run_server(transport: str, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Run the server on ``stdio`` or ``http`` (streamable HTTP at ``http://HOST:PORT/mcp``)."""
    server = build_server()
    if transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=host, port=port)
