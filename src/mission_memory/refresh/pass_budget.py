"""``PassBudget``: the wall-clock budget of one refresh pass (ADR 0019).

A pass over many tasks against a hanging LLM endpoint used to cost two full timeouts per task. The
budget (``MISSION_MEMORY_REFRESH_PASS_BUDGET_SECONDS``) starts with the pass; an LLM call gets at most
the time left, and once none is left every remaining LLM call of the pass falls back to the extractive
summarizer at once. The budget counts those skipped calls, and the pass report carries them.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["BUDGET_SETTING", "PassBudget"]

BUDGET_SETTING = "MISSION_MEMORY_REFRESH_PASS_BUDGET_SECONDS"


class PassBudget:
    """Seconds one refresh pass may spend, measured on a monotonic clock from its creation.

    Args:
        seconds: the budget (> 0).
        clock: monotonic seconds; :func:`time.monotonic` unless a test injects another.

    Attributes:
        seconds: the budget.
        llm_calls_skipped: LLM calls that fell back to extractive because the budget was used up.
    """

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._started = clock()
        self.llm_calls_skipped = 0

    def remaining(self) -> float:
        """Seconds left, never below 0."""
        return max(0.0, self.seconds - (self._clock() - self._started))

    @property
    def used_up(self) -> bool:
        """True once no time is left."""
        return self.remaining() <= 0.0

    def skip_reason(self) -> str:
        """Why an LLM call was skipped, for the artifact's fallback note."""
        return f"the refresh pass budget of {self.seconds:g} s ({BUDGET_SETTING}) is used up"
