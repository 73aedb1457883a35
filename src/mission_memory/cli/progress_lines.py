"""Progress as plain lines, for a long command whose output is not a terminal (redirected, piped, CI logs).

A rich progress bar draws nothing useful into a file, so an ingest redirected to a log was silent for
half an hour (issue 12 item 6). :class:`ProgressLines` takes the same ``progress(phase, done, total)``
callbacks as the bar and writes a line such as ``embed: 640/1178 (54%) · 21.3 records/s · ETA 25 s``
when a phase starts, every ``every_items`` items or ``every_seconds`` seconds (whichever comes first),
and when it completes. A one-step phase (``index``: ``0/1``, then ``1/1``) gets no rate, only its time. The rate and
ETA come from what the phase did after its first batch (:func:`observed_eta`): the first batch of an
ingest carries the embedder's start-up, so a rate that counted it made the first estimate of a
9-minute ingest 43 minutes (issue 34); until a second batch is done the line says ``ETA …``. The clock
is injected, so tests drive it without sleeping (ADR 0035).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from mission_memory.cli.output import err_console
from mission_memory.fence import terminal_safe

__all__ = ["ProgressLines", "format_eta", "observed_eta", "progress_display"]

_LABELS = {"read": "read files", "embed": "embed records", "index": "prepare search indexes"}


def format_eta(seconds: float) -> str:
    """``seconds`` as ``42 s``, ``3 min 05 s`` or ``1 h 02 min`` (negative counts as 0)."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def observed_eta(first: tuple[int, float] | None, done: int, total: int, now: float) -> tuple[float, float] | None:
    """``(rate, seconds left)`` of a phase at the rate it showed after its first batch, or None before
    there is such a rate.

    Args:
        first: ``(items done, clock seconds)`` when the phase's first batch completed (the first
            progress call with items done), or None when none has yet.
        done: items done now; total: items of the phase; now: the clock now (same clock as ``first``).

    Returns:
        Items per second over the batches since the first, and ``(total - done) / rate`` seconds;
        None while no batch after the first has completed (the first one's time includes start-up
        costs, the embedder's graph and the page cache, that the rest of the phase does not pay).
    """
    if first is None:
        return None
    first_done, first_time = first
    if done <= first_done or now <= first_time:
        return None
    rate = (done - first_done) / (now - first_time)
    return rate, max(0, total - done) / rate


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
        self._first_batch: dict[str, tuple[int, float]] = {}

    def __call__(self, phase: str, done: int, total: int) -> None:
        """Record progress of ``phase``: ``done`` of ``total`` items; print a line when one is due."""
        now = self.clock()
        if done > 0 and phase not in self._first_batch:
            self._first_batch[phase] = (done, now)
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
        if total > 1:  # a one-step phase (``index``) has no meaningful rate
            observed = observed_eta(self._first_batch.get(phase), done, total, now)
            if observed is not None:
                parts.append(f"{observed[0]:.1f}/s")
            if 0 < done < total:
                parts.append("ETA …" if observed is None else f"ETA {format_eta(observed[1])}")
        if total and done >= total:
            parts.append(f"done in {format_eta(elapsed)}")
        print(terminal_safe(" · ".join(parts)), file=self.stream, flush=True)


@contextmanager
def progress_display(enabled: bool) -> Iterator[Any]:
    """Progress on stderr, fed by ``progress(phase, done, total)`` callbacks: a rich bar with the time
    left (from the phase's rate after its first batch, :func:`observed_eta`) when stderr is a terminal, else
    :class:`ProgressLines` (ADR 0035).

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
        """The time left at the phase's rate after its first batch, as :class:`ProgressLines` gives it.

        rich's ``TimeRemainingColumn`` estimates from the samples of its last 30 s, so a phase whose
        batches take longer than that (64 records at 1.6 records/s) showed ``-:--:--`` for half an hour
        (issue 21); this one has an estimate from the second batch on (:func:`observed_eta`)."""

        def render(self, task: Task) -> Text:
            if task.finished or not task.total:
                return Text("")
            observed = observed_eta(task.fields.get("first_batch"), int(task.completed), int(task.total),
                                    task.get_time())
            if observed is None:
                return Text("ETA …", style="progress.remaining")
            return Text(f"ETA {format_eta(observed[1])}", style="progress.remaining")

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), PhaseEta())
    with Progress(*columns, console=err_console, transient=True) as bar:
        tasks: dict[str, Any] = {}

        def update(phase: str, done: int, total: int) -> None:
            label = {"read": "Reading files", "embed": "Embedding new records", "index": "Preparing search indexes"}.get(phase, phase)
            if phase not in tasks:
                tasks[phase] = bar.add_task(label, total=total)
            task = bar.tasks[[t.id for t in bar.tasks].index(tasks[phase])]
            if done > 0 and "first_batch" not in task.fields:
                bar.update(tasks[phase], first_batch=(done, bar.get_time()))
            bar.update(tasks[phase], completed=done, total=total)

        yield update
