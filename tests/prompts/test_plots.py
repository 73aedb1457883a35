"""PNG plots of topics over time and of the switching matrix."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from mission_memory.prompts.plots import plot_switching_matrix, plot_topics_over_time
from mission_memory.prompts.switching import switching_stats
from mission_memory.prompts.topics import topic_distribution

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_topics_plot_is_a_png(tmp_path):
    start = datetime(2025, 3, 3, tzinfo=UTC)
    prompts = [
        (start + timedelta(days=3 * i), text) for i, text in enumerate(["тести хука", "digest 🚀", "тести"])
    ]
    path = plot_topics_over_time(topic_distribution(prompts), tmp_path / "out" / "topics.png")
    assert path.read_bytes().startswith(PNG_MAGIC)


def test_switching_plot_is_a_png(tmp_path):
    start = datetime(2025, 3, 3, tzinfo=UTC)
    stream = [
        (start + timedelta(minutes=i), repo) for i, repo in enumerate(["альфа", "beta", "альфа", "gamma"])
    ]
    path = plot_switching_matrix(switching_stats(stream), tmp_path / "switching.png")
    assert path.read_bytes().startswith(PNG_MAGIC)


def test_plots_of_an_empty_corpus_still_render(tmp_path):
    assert plot_topics_over_time(topic_distribution([]), tmp_path / "t.png").is_file()
    assert plot_switching_matrix(switching_stats([]), tmp_path / "s.png").is_file()
