"""Domain events as CSV: ``POST /events/csv``, a header row naming event fields, one event a row.

The body is read by :func:`~mission_memory.operations.domain_events.read_events_csv` (as ``feed``
reads a CSV file): ``caused_by`` ids separated by ``;`` or ``|``, empty cells of optional fields
absent. Only ``text/csv`` is accepted: unlike ``text/plain``, a web page cannot POST it cross-site
without the browser asking first (ADR 0054).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mission_memory.operations.domain_events import DomainEvent, no_events, read_events_csv
from mission_memory.operations.sources import Source

if TYPE_CHECKING:
    from mission_memory.config import Settings

__all__ = ["SOURCE"]


def _parse(body: bytes, settings: Settings) -> list[DomainEvent]:
    events = read_events_csv(body, "request body")
    if not events:
        raise no_events("request body")
    return events


SOURCE = Source(name="events_csv", path="/events/csv", parse=_parse, media_types=("text/csv",),
                title="csv request body")
"""Generic domain events in CSV."""
