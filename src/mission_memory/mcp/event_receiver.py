"""HTTP receivers for domain events on the streamable-HTTP server: Alertmanager webhooks and JSON Lines.

Two Starlette routes beside ``/mcp`` (registered by :func:`~mission_memory.mcp.server.build_server`):

* ``POST /alerts/alertmanager`` — a Prometheus Alertmanager webhook (``webhook_configs``, payload
  version 4), mapped by :func:`~mission_memory.operations.domain_events.events_from_alertmanager` with the
  configured :class:`~mission_memory.operations.domain_events.AlertmanagerMapping`;
* ``POST /alerts/pagerduty`` — a PagerDuty v3 webhook, and ``POST /alerts/opsgenie`` — an Opsgenie
  webhook, mapped by :mod:`~mission_memory.operations.incident_webhooks`;
* ``POST /events`` — JSON Lines of :class:`~mission_memory.operations.domain_events.DomainEvent` objects.

All take ``?mission=NAME`` (default: the server's event mission) and answer ``200`` with the intake
report as JSON. A body larger than :data:`~mission_memory.operations.domain_events.MAX_EVENT_BATCH_BYTES` is
refused with ``413`` before it is read in full; broken JSON or an invalid event with ``400`` naming
the alert or line and the field; on a team server, a mission outside the posting token's missions with
``403`` (ADR 0045); a store that cannot be written with ``503``. In each refused case nothing is stored. The write runs in a worker thread (``anyio.to_thread``), like the MCP tool.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mission_memory.errors import AccessDenied, InputError, MissionMemoryError, user_message
from mission_memory.operations.domain_events import (
    MAX_EVENT_BATCH_BYTES,
    DomainEvent,
    events_from_alertmanager,
    read_events_jsonl,
)
from mission_memory.operations.incident_webhooks import events_from_opsgenie, events_from_pagerduty

if TYPE_CHECKING:
    from mission_memory.api import Memory
    from mission_memory.teams.access_control import AccessContext

__all__ = [
    "ALERTMANAGER_PATH",
    "EVENTS_PATH",
    "OPSGENIE_PATH",
    "PAGERDUTY_PATH",
    "receive_alertmanager",
    "receive_jsonl",
    "receive_opsgenie",
    "receive_pagerduty",
]

ALERTMANAGER_PATH = "/alerts/alertmanager"
PAGERDUTY_PATH = "/alerts/pagerduty"
OPSGENIE_PATH = "/alerts/opsgenie"
EVENTS_PATH = "/events"


class _TooLarge(Exception):
    pass


async def _body(request: Request) -> bytes:
    """The request body, refused (``_TooLarge``) past the batch limit without reading the rest."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_EVENT_BATCH_BYTES:
        raise _TooLarge(int(declared))
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_EVENT_BATCH_BYTES:
            raise _TooLarge(len(body))
    return bytes(body)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _receive(
    request: Request, memory_of: Callable[[], Memory], parse: Callable[[bytes, Memory], list[DomainEvent]], source: str,
    access: AccessContext | None,
) -> Response:
    try:
        body = await _body(request)
    except _TooLarge as exc:
        return _error(
            413, f"{source}: the body ({exc.args[0]:,} bytes or more) is larger than the "
            f"{MAX_EVENT_BATCH_BYTES:,} bytes accepted in one batch; nothing was stored",
        )
    mission = request.query_params.get("mission") or None
    try:
        memory = memory_of()
        events = parse(body, memory)
        report = await anyio.to_thread.run_sync(lambda: memory.record_events(events, mission, access=access))
    except AccessDenied as exc:
        return _error(403, f"{user_message(exc)}; nothing was stored")
    except InputError as exc:
        return _error(400, f"{user_message(exc)}; nothing was stored")
    except MissionMemoryError as exc:
        return _error(503, user_message(exc))
    return JSONResponse(report.to_json())


def _json(body: bytes, source: str) -> object:
    try:
        return json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{source}: the body is not valid JSON ({exc})") from None


def _alertmanager(body: bytes, memory: Memory) -> list[DomainEvent]:
    source = "alertmanager webhook"
    return events_from_alertmanager(_json(body, source), memory.settings.alertmanager_mapping, source)


async def receive_pagerduty(
    request: Request, memory_of: Callable[[], Memory], access: AccessContext | None = None
) -> Response:
    """Handle ``POST /alerts/pagerduty``: a PagerDuty v3 webhook (see the module docstring)."""
    source = "pagerduty webhook"
    return await _receive(request, memory_of, lambda body, _m: events_from_pagerduty(_json(body, source), source),
                          source, access)


async def receive_opsgenie(
    request: Request, memory_of: Callable[[], Memory], access: AccessContext | None = None
) -> Response:
    """Handle ``POST /alerts/opsgenie``: an Opsgenie webhook (see the module docstring)."""
    source = "opsgenie webhook"
    return await _receive(request, memory_of, lambda body, _m: events_from_opsgenie(_json(body, source), source),
                          source, access)


async def receive_alertmanager(
    request: Request, memory_of: Callable[[], Memory], access: AccessContext | None = None
) -> Response:
    """Handle ``POST /alerts/alertmanager`` (see the module docstring); ``access``: the posting token's operator."""
    return await _receive(request, memory_of, _alertmanager, "alertmanager webhook", access)


async def receive_jsonl(
    request: Request, memory_of: Callable[[], Memory], access: AccessContext | None = None
) -> Response:
    """Handle ``POST /events``: JSON Lines of domain events (see the module docstring); ``access`` as above."""
    return await _receive(
        request, memory_of, lambda body, _m: read_events_jsonl(body, "request body"), "request body", access
    )
