"""Domain events for the operations tests: plain dicts as a file, a request or ``record_events`` takes them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def event(i: int, when: datetime, *, sector: str = "east", criticality: float = 0.2,
          type_: str = "telemetry", text: str | None = None, **extra: Any) -> dict[str, Any]:
    """One event with a distinct id and text."""
    return {
        "id": f"ev-{i}", "time": when.isoformat(), "sector": sector, "type": type_,
        "criticality": criticality, "source": "test-post",
        "text": text or f"Routine heartbeat number {i} from relay station {i % 7} in sector {sector}.",
        **extra,
    }


def burst(count: int, end: datetime, spread: timedelta = timedelta(minutes=5), start_index: int = 0,
          **kwargs: Any) -> list[dict[str, Any]]:
    """``count`` events evenly spread over ``spread`` ending at ``end`` (the newest at ``end``)."""
    step = spread / max(count, 1)
    return [event(start_index + i, end - i * step, **kwargs) for i in range(count)]
