"""Number options: every float a command takes goes through :func:`mission_memory.config.finite_number`.

``--older-than-days nan``, ``--hours inf`` or ``--older-than-days 1e12`` is a usage error naming the option
(exit code 2), never a traceback from the clock's arithmetic further in (issue 37).
"""

from __future__ import annotations

from collections.abc import Callable

from mission_memory.errors import InputError

__all__ = ["number"]


def number(
    what: str, *, low: float | None = None, high: float | Callable[[], float] | None = None, unit: str = ""
) -> Callable[[str], float]:
    """A ``typer.Option(parser=...)`` reading a finite number within ``[low, high]``.

    Example: ``typer.Option(parser=number("--older-than-days", low=0, high=MAX_RETENTION_DAYS, unit="days"))``.
    The parser raises ``ValueError`` (typer reports it as an invalid value of the option). ``high`` may
    be a function, read when a value is parsed: the settings (and pydantic) stay unloaded for ``--help``.
    """
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"{what} must be a number, got {text!r}") from None
        from mission_memory.config import finite_number

        try:
            return finite_number(value, what, low=low, high=high() if callable(high) else high, unit=unit)
        except InputError as exc:
            raise ValueError(str(exc)) from None

    return parse
