"""Escalation: event rates over a sliding window, flood detection with hysteresis, and the triage weight α.

docs/design.md §7: when events come faster than the operators on duty can process them, pull ranking moves
from similarity to criticality triage, ``score(e) = α · criticality(e) + (1 − α) · sim(q, e)``. This
module owns the three numbers that decision rests on, as pure functions of event times (the clock is
an argument, so replays and tests choose it):

* the **rate**: events in the window ``(now − window, now]``, per mission and per sector;
* the **mode**, with hysteresis as in alarm management (ANSI/ISA-18.2, EEMUA 191): a flood starts
  when the rate exceeds ``flood_start`` events per window per operator on duty (default 10 per
  10 minutes) and ends only when it falls below ``flood_end`` (default 5), so a rate hovering near one
  threshold does not flap;
* **α = max(0, 1 − C / r)** with capacity ``C = flood_start × operators on duty``: 0 up to capacity,
  rising monotonically towards 1 as the rate ``r`` grows. Its reading: ``(1 − α) · r = C``, the share of
  attention left to relevance shrinks exactly as the excess over capacity grows. α depends on the
  rate alone; the mode adds the memory of the flood (a subsiding flood keeps the degraded mode, with α
  back at 0, until the rate falls below ``flood_end``). docs/adr/0022 records the choice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from mission_memory.errors import InputError

__all__ = [
    "CRITICAL_CRITICALITY",
    "SEVERE_CRITICALITY",
    "EscalationMode",
    "EscalationState",
    "FloodPolicy",
    "RateSnapshot",
    "assess_escalation",
    "event_rates",
    "severity_level",
    "triage_alpha",
]


CRITICAL_CRITICALITY = 0.8
"""An event or alert at or above this criticality is critical: triage, the crisis timeline and the
digest never drop it silently, and the first critical alert opens an incident (docs/adr/0057)."""


SEVERE_CRITICALITY = 0.9
"""At or above this criticality a critical event or alert is the most severe level (a P1 or P2 page)."""


def severity_level(criticality: float) -> str:
    """An incident's severity level from the highest criticality among its open alerts (or, with none open,
    its window's events): ``critical`` from :data:`SEVERE_CRITICALITY`, ``high`` from
    :data:`CRITICAL_CRITICALITY`, else ``elevated``."""
    return "critical" if criticality >= SEVERE_CRITICALITY else "high" if criticality >= CRITICAL_CRITICALITY else "elevated"


class EscalationMode(StrEnum):
    """Whether ranking runs as usual or triages by criticality (docs/design.md §7)."""

    NORMAL = "normal"
    DEGRADED = "degraded"


@dataclass(frozen=True)
class FloodPolicy:
    """When a flood starts and ends, per operator on duty (ANSI/ISA-18.2 defaults).

    Attributes:
        window: the sliding window over which events are counted.
        flood_start: events per window per operator above which a flood starts.
        flood_end: events per window per operator below which a flood ends (< ``flood_start``).
        operators_on_duty: how many operators share the load (≥ 1).

    Raises:
        InputError: a non-positive window or count, or ``flood_end`` ≥ ``flood_start``.
    """

    window: timedelta = timedelta(minutes=10)
    flood_start: float = 10.0
    flood_end: float = 5.0
    operators_on_duty: int = 1

    def __post_init__(self) -> None:
        if self.window <= timedelta(0):
            raise InputError(f"escalation window must be positive, got {self.window}")
        if self.operators_on_duty < 1:
            raise InputError(f"operators on duty must be at least 1, got {self.operators_on_duty}")
        if not 0 < self.flood_end < self.flood_start:
            raise InputError(
                f"flood thresholds need 0 < end < start, got start {self.flood_start:g}, end {self.flood_end:g} "
                "(events per window per operator)"
            )

    @property
    def capacity(self) -> float:
        """Events per window the operators on duty can process: ``flood_start × operators_on_duty``."""
        return self.flood_start * self.operators_on_duty

    @property
    def release(self) -> float:
        """Events per window below which a flood ends: ``flood_end × operators_on_duty``."""
        return self.flood_end * self.operators_on_duty


@dataclass(frozen=True)
class RateSnapshot:
    """Events counted in ``(at − window, at]``.

    Attributes:
        at: the end of the window (the clock's now).
        window: its length.
        total: events of the mission in the window.
        by_sector: events per sector in the window (events without a sector under ``""``).
    """

    at: datetime
    window: timedelta
    total: int
    by_sector: Mapping[str, int] = field(default_factory=dict)


def event_rates(events: Iterable[tuple[datetime, str | None]], at: datetime, window: timedelta) -> RateSnapshot:
    """Count events in the window ``(at − window, at]``, in total and per sector.

    Args:
        events: ``(time, sector)`` pairs, timezone-aware; order does not matter.
        at: the end of the window (timezone-aware).
        window: the window's length.

    Raises:
        InputError: a naive time (it could not be compared with the clock).
    """
    if at.tzinfo is None:
        raise InputError("the escalation clock must be timezone-aware")
    start = at - window
    by_sector: Counter[str] = Counter()
    for moment, sector in events:
        if moment.tzinfo is None:
            raise InputError(f"event time {moment.isoformat()} has no timezone")
        if start < moment <= at:
            by_sector[sector or ""] += 1
    return RateSnapshot(at=at, window=window, total=sum(by_sector.values()), by_sector=dict(by_sector))


def triage_alpha(rate: float, capacity: float) -> float:
    """α = max(0, 1 − capacity / rate): 0 up to capacity, rising monotonically towards 1.

    Args:
        rate: events per window.
        capacity: events per window the operators on duty can process (> 0).

    Returns:
        α in [0, 1).
    """
    if capacity <= 0:
        raise InputError(f"capacity must be positive, got {capacity:g}")
    return 0.0 if rate <= capacity else 1.0 - capacity / rate


@dataclass(frozen=True)
class EscalationState:
    """The mode of a mission (and of each sector) after an assessment.

    Attributes:
        mode: normal or degraded (mission-wide).
        since: when the mode last changed (None: never since tracking began).
        alpha: the triage weight for the mission's rate, in [0, 1).
        rate: the mission's events in the window.
        window: the window's length.
        escalating_sectors: sectors in their own flood, with their rates: a sector is what one
            operator watches, so it floods on the per-operator thresholds, with the same hysteresis.
        sector_since: when each escalating sector's flood began.
        assessed_at: the clock of the assessment (None: never assessed).
    """

    mode: EscalationMode = EscalationMode.NORMAL
    since: datetime | None = None
    alpha: float = 0.0
    rate: int = 0
    window: timedelta = timedelta(minutes=10)
    escalating_sectors: Mapping[str, int] = field(default_factory=dict)
    sector_since: Mapping[str, datetime] = field(default_factory=dict)
    assessed_at: datetime | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (times ISO 8601, the window in seconds); :meth:`from_json` reads it back."""
        return {
            "mode": self.mode.value,
            "since": self.since.isoformat() if self.since else None,
            "alpha": round(self.alpha, 4),
            "rate": self.rate,
            "window_s": self.window.total_seconds(),
            "escalating_sectors": dict(self.escalating_sectors),
            "sector_since": {k: v.isoformat() for k, v in self.sector_since.items()},
            "assessed_at": self.assessed_at.isoformat() if self.assessed_at else None,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EscalationState:
        """The state :meth:`to_json` wrote (as the state store keeps it).

        Raises:
            InputError: a field is missing or has the wrong shape.
        """
        try:
            return cls(
                mode=EscalationMode(data["mode"]),
                since=datetime.fromisoformat(data["since"]) if data.get("since") else None,
                alpha=float(data["alpha"]),
                rate=int(data["rate"]),
                window=timedelta(seconds=float(data["window_s"])),
                escalating_sectors={str(k): int(v) for k, v in data.get("escalating_sectors", {}).items()},
                sector_since={str(k): datetime.fromisoformat(v) for k, v in data.get("sector_since", {}).items()},
                assessed_at=datetime.fromisoformat(data["assessed_at"]) if data.get("assessed_at") else None,
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"stored escalation state is not readable ({type(exc).__name__}: {exc})") from None


def _flooding(was: bool, rate: float, policy: FloodPolicy) -> bool:
    """Hysteresis: a flood starts above capacity and ends only below the release level."""
    return rate >= policy.release if was else rate > policy.capacity


def assess_escalation(previous: EscalationState, rates: RateSnapshot, policy: FloodPolicy) -> EscalationState:
    """The next state from the previous one and the current window's counts.

    Args:
        previous: the state from the last assessment (``EscalationState()`` at first).
        rates: the current counts (see :func:`event_rates`).
        policy: thresholds and operators on duty.

    Returns:
        The new state; ``since`` moves only when the mode changes.
    """
    degraded = _flooding(previous.mode is EscalationMode.DEGRADED, rates.total, policy)
    mode = EscalationMode.DEGRADED if degraded else EscalationMode.NORMAL
    since = rates.at if mode is not previous.mode else previous.since
    # A sector is what one operator watches: it floods on the per-operator thresholds alone.
    one_operator = FloodPolicy(policy.window, policy.flood_start, policy.flood_end, 1)
    sectors: dict[str, int] = {}
    sector_since: dict[str, datetime] = {}
    for sector in sorted(set(rates.by_sector) | set(previous.escalating_sectors)):
        count = rates.by_sector.get(sector, 0)
        if _flooding(sector in previous.escalating_sectors, count, one_operator):
            sectors[sector] = count
            sector_since[sector] = previous.sector_since.get(sector, rates.at)
    return EscalationState(
        mode=mode,
        since=since,
        alpha=triage_alpha(rates.total, policy.capacity),
        rate=rates.total,
        window=rates.window,
        escalating_sectors=sectors,
        sector_since=sector_since,
        assessed_at=rates.at,
    )
