"""Domain events as they are: ``POST /events``, JSON Lines (or one JSON array) of event objects.

The body is read by :func:`~mission_memory.operations.domain_events.read_events_jsonl`; each object
names its own sector.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mission_memory.operations.domain_events import DomainEvent, no_events, read_events_jsonl
from mission_memory.operations.sources import Source

if TYPE_CHECKING:
    from mission_memory.config import Settings

__all__ = ["SOURCE"]


def _parse(body: bytes, settings: Settings) -> list[DomainEvent]:
    events = read_events_jsonl(body, "request body")
    if not events:
        raise no_events("request body")
    return events


SOURCE = Source(name="events", path="/events", parse=_parse, title="request body")
"""Generic domain events in JSON Lines or a JSON array."""
