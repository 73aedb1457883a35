"""What an MCP tool call is served from: the open memory (or why it cannot be used) and the caller's session."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from mission_memory.api import Memory
from mission_memory.errors import MissionMemoryError, user_message

__all__ = ["ServedMemory", "mcp_session_id", "open_served"]


@dataclass
class ServedMemory:
    """What the server's lifespan holds: the open memory, or why it could not be used.

    Attributes:
        memory: the open memory; ``None`` when opening or checking it failed.
        problem: the error to answer every tool call with, in that case.
        session_id: 32 hex digits made when the server starts: the session of a connection that
            names none (stdio, an in-process client: the lifespan runs once per such connection).
    """

    memory: Memory | None
    problem: MissionMemoryError | None = None
    session_id: str = field(default_factory=lambda: uuid.uuid4().hex)

    def usable(self) -> Memory:
        """The memory.

        Raises:
            ToolError: the store could not be opened or is damaged (the message is the CLI's).
        """
        if self.memory is None:
            assert self.problem is not None
            raise ToolError(f"{user_message(self.problem)} (restart the server once it is fixed)")
        return self.memory


def open_served(factory: Callable[[], Memory]) -> ServedMemory:
    """Open the memory and check the store file, keeping a failure as the answer to every call."""
    try:
        memory = factory()
    except MissionMemoryError as exc:
        return ServedMemory(None, exc)
    try:
        memory.store.ensure_sound()
    except MissionMemoryError as exc:
        memory.close()
        return ServedMemory(None, exc)
    return ServedMemory(memory)


def mcp_session_id(ctx: Context[Any, Any]) -> str | None:
    """The session of the calling connection, logged with its queries and given to its corrections.

    Over streamable HTTP its ``Mcp-Session-Id`` (None on a stateless server, which has no sessions);
    over stdio or an in-process client, where a server run serves one connection, that run's
    :attr:`ServedMemory.session_id`, so a correction recorded on a connection links to the queries
    of that connection (ADR 0082).
    """
    request = getattr(ctx.request_context, "request", None)
    if request is None:
        served = ctx.request_context.lifespan_context
        return served.session_id if isinstance(served, ServedMemory) else None
    headers = getattr(request, "headers", None)
    value = headers.get("mcp-session-id") if headers is not None else None
    return str(value) if value else None
