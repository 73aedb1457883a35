"""HTTP receivers for domain events on the streamable-HTTP server: one route per event source.

Every source of :mod:`mission_memory.operations.sources` (Alertmanager, PagerDuty, Opsgenie, JSON
Lines events …) is served on its own path and methods beside ``/mcp`` (registered by
:func:`~mission_memory.mcp.server.build_server`), all by :func:`receive`: this module names no source.

All take ``?mission=NAME`` (default: the server's ``--mission``, else its event mission; it obeys
the name rule of :mod:`mission_memory.fence`) and answer ``200`` with the intake report as JSON. A
mission that is not stored and is one typo from a stored one (``shpo``, ``Shop`` beside ``shop``) is
``400`` naming the stored ones, nothing stored, unless the request says ``&new_mission=1``.

Before the body is read, a request gets the ``/mcp`` route's own DNS-rebinding protection (the SDK's
``TransportSecurityMiddleware`` with the settings the server runs ``/mcp`` with: on loopback, ``421``
for a foreign ``Host`` and ``403`` for a foreign ``Origin``), and a body that is not declared JSON
is refused with ``415``: a web page can send a ``text/plain``, form or multipart POST to loopback
without the browser asking first (a CORS "simple request"), never an ``application/json`` one
(ADR 0054). JSON nested deeper than :data:`~mission_memory.operations.domain_events.MAX_JSON_DEPTH`
levels is ``400``. A body larger than :data:`~mission_memory.operations.domain_events.MAX_EVENT_BATCH_BYTES` is
refused with ``413`` before it is read in full; broken JSON or an invalid event with ``400`` naming
the alert or line and the field; on a team server, a mission outside the posting token's missions with
``403`` (ADR 0045); a request failing its source's configured auth (``MISSION_MEMORY_RECEIVER_AUTH``:
HTTP basic credentials compared in constant time, or the source's own signature such as PagerDuty's)
with ``401``, checked on the raw body before it is parsed; a store that cannot be written with ``503``. In each refused case nothing is stored. The write runs in a worker thread (``anyio.to_thread``), like the MCP tool.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mission_memory.errors import AccessDenied, InputError, MissionMemoryError, user_message
from mission_memory.operations.domain_events import MAX_EVENT_BATCH_BYTES
from mission_memory.operations.sources import JSON_MEDIA_TYPES, Source, auth_problem, receiver_auth

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings

    from mission_memory.api import Memory
    from mission_memory.teams.access_control import AccessContext

__all__ = ["JSON_CONTENT_TYPES", "receive"]

JSON_CONTENT_TYPES = JSON_MEDIA_TYPES
"""Media types the JSON receivers accept (parameters such as ``charset`` aside); any other is ``415``."""


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


async def _refused(request: Request, security: TransportSecuritySettings | None, source: Source) -> Response | None:
    """The answer to a request from a foreign page or of a non-JSON type (nothing is read or stored), or None."""
    from mcp.server.transport_security import TransportSecurityMiddleware

    # is_post=False: the SDK would accept application/json only; the media types are checked below.
    foreign = await TransportSecurityMiddleware(security).validate_request(request, is_post=False)
    if foreign is not None:
        return foreign
    declared = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if declared not in source.media_types:
        shown = f"Content-Type {declared!r}" if declared else "no Content-Type"
        return _error(415, f"{source.label}: {shown[:100]} is not accepted: send {' or '.join(source.media_types[:2])}; "
                           "nothing was stored")
    return None


async def receive(
    request: Request, source: Source, memory_of: Callable[[], Memory], access: AccessContext | None = None,
    security: TransportSecuritySettings | None = None, default_mission: str | None = None,
) -> Response:
    """Handle one request to ``source``'s route (see the module docstring).

    Args:
        request: the request.
        source: the event source the route serves.
        memory_of: where the served memory is (raises MissionMemoryError while it is not usable).
        access: the posting token's operator (None: the local user).
        security: the ``/mcp`` route's Host/Origin settings (None: no Host/Origin check, as the SDK).
        default_mission: the mission of a request that names none.
    """
    refused = await _refused(request, security, source)
    if refused is not None:
        return refused
    try:
        body = await _body(request)
    except _TooLarge as exc:
        return _error(
            413, f"{source.label}: the body ({exc.args[0]:,} bytes or more) is larger than the "
            f"{MAX_EVENT_BATCH_BYTES:,} bytes accepted in one batch; nothing was stored",
        )
    mission = request.query_params.get("mission") or default_mission or None
    new_mission = request.query_params.get("new_mission", "").strip().lower() in ("1", "true", "yes")
    try:
        memory = memory_of()
        auth = receiver_auth(memory.settings, source)
        problem = auth_problem(source, auth, request.headers, body)
        if problem is not None:
            challenge = {"WWW-Authenticate": 'Basic realm="mission-memory"'} if auth and auth.basic_auth else {}
            return JSONResponse({"error": f"{source.label}: {problem}; nothing was stored"}, status_code=401,
                                headers=challenge)
        events = source.parse(body, memory.settings)
        report = await anyio.to_thread.run_sync(
            lambda: memory.record_events(events, mission, access=access, refuse_typo=not new_mission))
    except AccessDenied as exc:
        return _error(403, f"{user_message(exc)}; nothing was stored")
    except InputError as exc:
        return _error(400, f"{user_message(exc)}; nothing was stored")
    except MissionMemoryError as exc:
        return _error(503, user_message(exc))
    return JSONResponse(report.to_json())
