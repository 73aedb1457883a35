"""Progress as plain lines, for a long command whose output is not a terminal (redirected, piped, CI logs).

A rich progress bar draws nothing useful into a file, so an ingest redirected to a log was silent for
half an hour (issue 12 item 6). :class:`ProgressLines` takes the same ``progress(phase, done, total)``
callbacks as the bar and writes a line such as ``embed: 640/1178 (54%) · 21.3 records/s · ETA 25 s``
when a phase starts, every ``every_items`` items or ``every_seconds`` seconds (whichever comes first),
and when it completes. A one-step phase (``index``: ``0/1``, then ``1/1``) gets no rate, only its time. The rate and ETA come from the phase's own start, so a slow read phase does not
skew the embedding estimate. The clock is injected, so tests drive it without sleeping (ADR 0035).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from mission_memory.cli.output import err_console

__all__ = ["ProgressLines", "format_eta", "progress_display"]

_LABELS = {"read": "read files", "embed": "embed records", "index": "prepare search indexes"}


def format_eta(seconds: float) -> str:
    """``seconds`` as ``42 s``, ``3 min 05 s`` or ``1 h 02 min`` (negative counts as 0)."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


class ProgressLines:
    """A ``progress(phase, done, total)`` callback that prints plain progress lines.

    Args:
        stream: where lines go (stderr in the CLI, so ``--json`` on stdout stays clean).
        every_items: print at least every this many items (≥ 1).
        every_seconds: and at least every this many seconds of the clock.
        clock: seconds, monotonic; ``time.monotonic`` by default.
    """

    def __init__(
        self,
        stream: TextIO,
        *,
        every_items: int = 256,
        every_seconds: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.every_items = max(1, every_items)
        self.every_seconds = every_seconds
        self.clock = clock
        self._started: dict[str, float] = {}
        self._last: dict[str, tuple[int, float]] = {}

    def __call__(self, phase: str, done: int, total: int) -> None:
        """Record progress of ``phase``: ``done`` of ``total`` items; print a line when one is due."""
        now = self.clock()
        if phase not in self._started:
            self._started[phase] = now
            self._last[phase] = (done, now)
            self._write(phase, done, total, now)
            return
        last_done, last_time = self._last[phase]
        finished = done >= total and last_done < total
        if finished or done - last_done >= self.every_items or now - last_time >= self.every_seconds:
            self._last[phase] = (done, now)
            self._write(phase, done, total, now)

    def _write(self, phase: str, done: int, total: int, now: float) -> None:
        label = _LABELS.get(phase, phase)
        share = f" ({100 * done // total}%)" if total else ""
        elapsed = now - self._started[phase]
        parts = [f"{label}: {done}/{total}{share}"]
        if done and elapsed > 0 and total > 1:  # a one-step phase (``index``) has no meaningful rate
            rate = done / elapsed
            parts.append(f"{rate:.1f}/s")
            if done < total:
                parts.append(f"ETA {format_eta((total - done) / rate)}")
        if total and done >= total:
            parts.append(f"done in {format_eta(elapsed)}")
        print(" · ".join(parts), file=self.stream, flush=True)


@contextmanager
def progress_display(enabled: bool) -> Iterator[Any]:
    """Progress on stderr, fed by ``progress(phase, done, total)`` callbacks: a rich bar with the time
    left (from the phase's rate since it started, so from its first batch on) when stderr is a terminal, else :class:`ProgressLines` (ADR 0035).

    Args:
        enabled: False yields None (``--json`` runs print nothing but their result).

    Yields:
        The ``progress(phase, done, total)`` callback, or None when not ``enabled``.
    """
    if not enabled:
        yield None
        return
    if not err_console.is_terminal:
        yield ProgressLines(sys.stderr)
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        Task,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.text import Text

    class PhaseEta(ProgressColumn):
        """The time left at the phase's own rate since it started, as :class:`ProgressLines` gives it.

        rich's ``TimeRemainingColumn`` estimates from the samples of its last 30 s, so a phase whose
        batches take longer than that (64 records at 1.6 records/s) showed ``-:--:--`` for half an hour
        (issue 21); this one has an estimate from the first batch on."""

        def render(self, task: Task) -> Text:
            elapsed = task.elapsed or 0.0
            if task.finished or not task.total:
                return Text("")
            if not task.completed or elapsed <= 0:
                return Text("ETA …", style="progress.remaining")
            rate = task.completed / elapsed
            return Text(f"ETA {format_eta((task.total - task.completed) / rate)}", style="progress.remaining")

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), PhaseEta())
    with Progress(*columns, console=err_console, transient=True) as bar:
        tasks: dict[str, Any] = {}

        def update(phase: str, done: int, total: int) -> None:
            label = {"read": "Reading files", "embed": "Embedding new records", "index": "Preparing search indexes"}.get(phase, phase)
            if phase not in tasks:
                tasks[phase] = bar.add_task(label, total=total)
            bar.update(tasks[phase], completed=done, total=total)

        yield update
