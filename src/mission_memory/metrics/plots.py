"""PNG figures of the measurements: distributions of T and W, and instructions-file growth.

Figures are drawn with matplotlib's object API on an Agg canvas (no GUI backend, no global
pyplot state), so plotting works headless and in parallel tests. Reference lines mark the
paper's targets (docs/design.md §1: T' <= 10,000 tokens, W' <= 20%).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from mission_memory.errors import InputError
from mission_memory.metrics.instructions_growth import InstructionsGrowth
from mission_memory.metrics.session_metrics import SessionMetrics

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["TARGET_T_TOKENS", "TARGET_W_SHARE", "plot_instructions_growth", "plot_session_distributions"]

TARGET_T_TOKENS = 10_000
"""The paper's target initial context T' (tokens)."""

TARGET_W_SHARE = 0.20
"""The paper's target redundancy W'."""


def plot_session_distributions(metrics: Sequence[SessionMetrics], path: Path) -> Path:
    """Write histograms of T (tokens) and W (share) over sessions to a PNG file.

    Args:
        metrics: measured sessions (sessions without a T or W are left out of that panel).
        path: the PNG to write; its folder must exist.

    Returns:
        ``path``.

    Raises:
        InputError: the file cannot be written.
    """
    from statistics import median

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    t_values = [m.T for m in metrics if m.T is not None]
    w_values = [m.W for m in metrics if m.W is not None]
    figure = Figure(figsize=(10, 4), layout="constrained")
    FigureCanvasAgg(figure)
    t_axes, w_axes = figure.subplots(1, 2)
    t_axes.hist(t_values, bins=min(30, max(1, len(t_values))), color="#4c72b0")
    t_axes.axvline(TARGET_T_TOKENS, color="#c44e52", linestyle="--", label="target T' = 10,000")
    if t_values:
        t_axes.axvline(median(t_values), color="#333333", label=f"median {median(t_values):,.0f}")
    t_axes.set(title=f"T: first-call input tokens (N={len(t_values)})", xlabel="tokens", ylabel="sessions")
    w_axes.hist(w_values, bins=10, range=(0.0, 1.0), color="#55a868")
    w_axes.axvline(TARGET_W_SHARE, color="#c44e52", linestyle="--", label="target W' = 20%")
    if w_values:
        w_axes.axvline(median(w_values), color="#333333", label=f"median {median(w_values):.0%}")
    else:
        w_axes.text(
            0.5,
            0.5,
            "no session read files\nduring initialization",
            ha="center",
            va="center",
            transform=w_axes.transAxes,
        )
        w_axes.set_ylim(0, 1)
    w_axes.set(
        title=f"W: init reads never edited (N={len(w_values)})", xlabel="share of files", ylabel="sessions"
    )
    for axes in (t_axes, w_axes):
        axes.yaxis.set_major_locator(MaxNLocator(integer=True))
        axes.legend()
    return _save(figure, path)


def plot_instructions_growth(growth: InstructionsGrowth, path: Path) -> Path:
    """Write the instructions file's size over commit time with its least-squares line to a PNG.

    Args:
        growth: measured growth.
        path: the PNG to write; its folder must exist.

    Returns:
        ``path``.

    Raises:
        InputError: the file cannot be written.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    times = [v.time for v in growth.versions]
    x = cast(Any, times)  # matplotlib's date converter takes datetimes; its stubs say only numbers
    sizes = [v.chars for v in growth.versions]
    figure = Figure(figsize=(8, 4), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots()
    axes.plot(x, sizes, marker="o", linestyle="-", color="#4c72b0", label=growth.path)
    if growth.chars_per_day is not None and growth.intercept_chars is not None:
        start = times[0]
        fitted = [
            growth.intercept_chars + growth.chars_per_day * (t - start).total_seconds() / 86_400
            for t in times
        ]
        r2 = f", R² = {growth.r2:.2f}" if growth.r2 is not None else ""
        axes.plot(
            x, fitted, color="#c44e52", linestyle="--", label=f"{growth.chars_per_day:.1f} chars/day{r2}"
        )
    axes.set(title=f"{growth.path}: size at each commit", xlabel="commit time", ylabel="characters")
    axes.legend()
    figure.autofmt_xdate()
    return _save(figure, path)


def _save(figure: Figure, path: Path) -> Path:
    try:
        figure.savefig(path, format="png", dpi=110)
    except OSError as exc:
        raise InputError(f"plot file {str(path)!r} cannot be written: {exc.strerror or exc}") from exc
    return path
