"""A plot of a mission's event rate against its flood thresholds (``escalation status --plot rate.png``).

The rate is the count of the sliding window ``(t − window, t]`` (docs/adr/0022), sampled every ``step``
from the store's event times; the plot draws it as a step line with the flood start (capacity) and end
(release) thresholds as horizontal lines, and shades where the mode was degraded by the same hysteresis.
Drawn with matplotlib's non-interactive Agg backend (no display needed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from mission_memory.errors import InputError
from mission_memory.operations.escalation_state import window_rates
from mission_memory.stores.base import MemoryStore

__all__ = ["RateSeries", "plot_event_rate", "rate_series"]


@dataclass(frozen=True)
class RateSeries:
    """Window counts sampled over time.

    Attributes:
        mission: the mission.
        times: the sample times (UTC).
        counts: events in the window ending at each time.
        window: the window length.
        capacity: the flood start threshold (events per window), release: the flood end threshold.
    """

    mission: str
    times: tuple[datetime, ...]
    counts: tuple[int, ...]
    window: timedelta
    capacity: float
    release: float

    def degraded(self) -> list[bool]:
        """The mode at each sample by the hysteresis of docs/adr/0022 (True: degraded)."""
        out, on = [], False
        for count in self.counts:
            on = count > self.capacity if not on else count >= self.release
            out.append(on)
        return out


def rate_series(store: MemoryStore, mission: str, start: datetime, end: datetime, window: timedelta,
                capacity: float, release: float, samples: int = 240) -> RateSeries:
    """Sample the window count of ``mission`` at ``samples`` moments from ``start`` to ``end``.

    Raises:
        InputError: ``end`` not after ``start``, or a naive time.
    """
    if start.tzinfo is None or end.tzinfo is None:
        raise InputError("the plot's times must be timezone-aware")
    if end <= start:
        raise InputError(f"the plot's end {end.isoformat()} is not after its start {start.isoformat()}")
    step = (end - start) / max(1, samples - 1)
    times = tuple(start + i * step for i in range(samples))
    counts = tuple(window_rates(store, mission, t, window).total for t in times)
    return RateSeries(mission, times, counts, window, capacity, release)


def plot_event_rate(series: RateSeries, path: Path, events: Sequence[datetime] = ()) -> Path:
    """Draw ``series`` to ``path`` (PNG, or any format matplotlib infers from the suffix); return the path.

    Raises:
        InputError: the file cannot be written (the message names it).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    minutes = series.window.total_seconds() / 60
    # matplotlib takes datetimes; its stubs want arrays, so hand them over as days since 1970 (its date unit)
    days = [t.timestamp() / 86400 for t in series.times]
    figure, axes = plt.subplots(figsize=(10, 4), dpi=100)
    try:
        axes.step(days, series.counts, where="post", label=f"events per {minutes:g} min window")
        axes.axhline(series.capacity, color="tab:red", linestyle="--", label=f"flood starts above {series.capacity:g}")
        axes.axhline(series.release, color="tab:green", linestyle=":", label=f"flood ends below {series.release:g}")
        degraded = series.degraded()
        axes.fill_between(days, 0, max([*series.counts, series.capacity]) * 1.05, where=degraded,
                          step="post", color="tab:red", alpha=0.08, label="degraded mode")
        axes.set_title(f"Event rate · mission {series.mission}")
        axes.set_xlabel("time (UTC)")
        axes.set_ylabel("events in the window")
        axes.legend(loc="upper left", fontsize="small")
        axes.xaxis_date()
        figure.autofmt_xdate()
        figure.tight_layout()
        try:
            figure.savefig(path)
        except OSError as exc:
            raise InputError(f"cannot write the plot to {path}: {exc.strerror or exc}") from None
    finally:
        plt.close(figure)
    return path
