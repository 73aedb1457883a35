"""PNG plots of the prompt corpus: topics over time and the cross-project switching matrix.

Drawn with matplotlib's object API on the Agg canvas (``Figure`` + ``savefig``), so no GUI backend
and no global ``pyplot`` state are involved. Missing-glyph warnings (an emoji in a topic or a
repository name) are silenced: a plot never fails because a font lacks a character.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from mission_memory.prompts.switching import SwitchingStats
from mission_memory.prompts.topics import TopicDistribution

__all__ = ["plot_switching_matrix", "plot_topics_over_time"]


def _save(figure: object, path: Path) -> Path:
    from matplotlib.figure import Figure

    assert isinstance(figure, Figure)
    path.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*[Gg]lyph.*missing.*")
        figure.savefig(path, format="png", dpi=120, bbox_inches="tight")
    return path


def plot_topics_over_time(distribution: TopicDistribution, path: Path) -> Path:
    """Line chart of each topic's weekly share of prompts; returns ``path`` (a PNG file).

    Args:
        distribution: from :func:`mission_memory.prompts.topics.topic_distribution`.
        path: output file; parent folders are created.
    """
    from matplotlib.figure import Figure

    figure = Figure(figsize=(10, 5))
    axes = figure.add_subplot()
    weeks = [w.week for w in distribution.weeks]
    for topic in distribution.topics:
        axes.plot(weeks, [w.shares[topic] for w in distribution.weeks], marker="o", label=topic)
    axes.set_xlabel("ISO week")
    axes.set_ylabel("share of the week's prompts")
    axes.set_ylim(0, 1)
    axes.set_title("Prompt topics over time")
    if distribution.topics:
        axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    axes.tick_params(axis="x", labelrotation=45)
    return _save(figure, path)


def plot_switching_matrix(stats: SwitchingStats, path: Path, *, names: list[str] | None = None) -> Path:
    """Heat map of transition counts between repositories (rows: from, columns: to); returns ``path``.

    Args:
        stats: from :func:`mission_memory.prompts.switching.switching_stats`.
        path: output file; parent folders are created.
        names: axis labels in :attr:`SwitchingStats.repositories` order (default: the repositories).
    """
    from matplotlib.figure import Figure

    labels = names or stats.repositories
    matrix = stats.matrix()
    size = max(4.0, 1.0 + 0.6 * len(labels))
    figure = Figure(figsize=(size + 1.5, size))
    axes = figure.add_subplot()
    image = axes.imshow(matrix or [[0]], cmap="Blues")
    figure.colorbar(image, ax=axes, label="transitions")
    axes.set_xticks(range(len(labels)), labels, rotation=45, ha="right")
    axes.set_yticks(range(len(labels)), labels)
    axes.set_xlabel("to repository")
    axes.set_ylabel("from repository")
    axes.set_title(f"Cross-project switching (switch rate {stats.switch_rate:.0%})")
    peak = max((max(row) for row in matrix), default=0)
    for i, row in enumerate(matrix):
        for j, count in enumerate(row):
            color = "white" if peak and count > peak / 2 else "black"
            axes.text(j, i, str(count), ha="center", va="center", color=color, fontsize="small")
    return _save(figure, path)
