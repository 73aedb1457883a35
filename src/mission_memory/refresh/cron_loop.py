"""``run_schedule``: the long-running refresher loop, one pass per firing of a cron expression.

The clock and the wait are injected (``refresh run`` gives the wall clock and a wait that SIGTERM
interrupts), so the loop is tested without sleeping. A pass is whatever callable the shell gives;
this module knows nothing of trackers or stores.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from mission_memory.errors import InputError, MissionMemoryError
from mission_memory.utc import as_utc

__all__ = ["run_schedule"]

log = logging.getLogger(__name__)


def run_schedule(
    schedule: str,
    run_pass: Callable[[datetime], object],
    *,
    clock: Callable[[], datetime],
    wait: Callable[[float], bool],
    max_passes: int | None = None,
) -> int:
    """Run ``run_pass`` at every firing of the cron expression ``schedule`` until told to stop.

    The next firing is computed from the clock after each pass, so a pass longer than the period
    skips the firings it overlapped instead of running back to back. A pass raising a
    :class:`MissionMemoryError` (tracker unreachable, store busy) is logged and the loop goes on.

    Args:
        schedule: a 5-field cron expression (``*/30 * * * *``), in UTC.
        run_pass: one pass, given the firing time.
        clock: the current time (timezone-aware).
        wait: sleeps up to the given seconds; returns True when the loop must stop (SIGTERM).
        max_passes: stop after this many passes (None: never).

    Returns:
        How many passes ran.

    Raises:
        InputError: ``schedule`` is not a valid cron expression.
    """
    from croniter import croniter  # type: ignore[import-untyped]

    if not croniter.is_valid(schedule):
        raise InputError(f"--schedule {schedule!r} is not a valid cron expression (e.g. '*/30 * * * *')")
    passes = 0
    while max_passes is None or passes < max_passes:
        start = as_utc(clock())
        fire: datetime = croniter(schedule, start).get_next(datetime)
        if wait(max(0.0, (fire - start).total_seconds())):
            break
        try:
            run_pass(fire)
        except MissionMemoryError as exc:
            log.error("refresh pass at %s failed: %s", fire.isoformat(), exc)
        passes += 1
    return passes

