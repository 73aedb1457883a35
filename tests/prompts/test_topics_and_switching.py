"""Topic distributions and cross-project switching on a corpus the test builds through the hook code."""

from __future__ import annotations

from datetime import timedelta

from mission_memory.prompts.switching import switching_stats
from mission_memory.prompts.topics import prompt_terms, topic_distribution, week_of


def test_ukrainian_word_forms_count_as_one_topic():
    stems = [next(iter(prompt_terms(text))) for text in ("тест", "тести", "тестів", "тестами")]
    assert len(set(stems)) == 1


def test_topics_per_week_on_a_built_corpus(capture, corpus):
    # week 2025-W10: three prompts about tests, one about the digest; week 2025-W11: two about the digest
    capture("2025-03-03T09:00:00+00:00", "Виправ тести для хука")
    capture("2025-03-04T09:00:00+00:00", "Тести знову падають")
    capture("2025-03-05T09:00:00+00:00", "Add more tests for the hook")
    capture("2025-03-06T09:00:00+00:00", "Shorten the digest")
    capture("2025-03-10T09:00:00+00:00", "The digest is too long")
    capture("2025-03-11T09:00:00+00:00", "digest ranking again")
    prompts = [(p.timestamp, p.prompt) for p in corpus.prompts()]

    dist = topic_distribution(prompts, top=3)

    assert [w.week for w in dist.weeks] == ["2025-W10", "2025-W11"]
    assert dist.totals["digest"] == 3
    w10, w11 = dist.weeks
    assert w10.prompts == 4 and w11.prompts == 2
    assert w10.counts["digest"] == 1 and w11.counts["digest"] == 2 and w11.shares["digest"] == 1.0
    tests_topic = next(t for t in dist.topics if t.startswith("тест"))
    assert w10.counts[tests_topic] == 2  # Ukrainian forms grouped; English "tests" is its own term
    assert dist.as_dict()["topics"] == dist.topics


def test_week_labels_follow_iso_weeks():
    from datetime import datetime

    assert week_of(datetime(2025, 1, 1)) == "2025-W01"
    assert week_of(datetime(2024, 12, 30)) == "2025-W01"


def test_switching_on_a_built_corpus(capture, corpus):
    t = "2025-03-03T09:{:02d}:00+00:00"
    capture(t.format(0), "a1", cwd="/src/alpha")
    capture(t.format(10), "a2", cwd="/src/alpha")
    capture(t.format(20), "b1", cwd="/src/beta", session="s-2")
    capture(t.format(25), "a3", cwd="/src/alpha")
    capture("2025-03-03T13:00:00+00:00", "b2", cwd="/src/beta", session="s-2")  # after an idle gap
    capture("2025-03-03T13:05:00+00:00", "b3", cwd="/src/beta", session="s-2")
    stream = [(p.timestamp, p.repository) for p in corpus.prompts()]

    stats = switching_stats(stream, idle_gap=timedelta(minutes=30))

    assert stats.repositories == ["/src/alpha", "/src/beta"]
    assert stats.transitions == {
        ("/src/alpha", "/src/alpha"): 1,
        ("/src/alpha", "/src/beta"): 2,
        ("/src/beta", "/src/alpha"): 1,
        ("/src/beta", "/src/beta"): 1,
    }
    assert stats.switches == 3 and stats.switch_rate == 0.6
    alpha, beta = stats.dwell
    # alpha: 09:00-09:20 (until beta starts) and 09:25 alone before the idle gap -> 20 min + 0
    assert (alpha.visits, alpha.prompts, alpha.total_seconds) == (2, 3, 1200.0)
    # beta: 09:20-09:25 (until alpha resumes) and 13:00-13:05 -> 5 min + 5 min
    assert (beta.visits, beta.prompts, beta.total_seconds, beta.median_seconds) == (2, 3, 600.0, 300.0)
    assert stats.matrix() == [[1, 2], [1, 1]]


def test_switching_of_an_empty_or_single_prompt_stream():
    assert switching_stats([]).switch_rate == 0.0
    from datetime import UTC, datetime

    one = switching_stats([(datetime(2025, 1, 1, tzinfo=UTC), "/r")])
    assert (one.switches, one.switch_rate, one.dwell[0].visits) == (0, 0.0, 1)


def test_redaction_markers_are_not_topics(capture, corpus):
    """The hook stores ``[REDACTED:token]`` for a secret; ``prompts topics`` listed "redacted" and "token"
    as a week's top topics."""
    capture("2025-03-03T09:00:00+00:00", "Deploy with the key ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")
    capture("2025-03-04T09:00:00+00:00", "Rotate the deploy password=hunter2-Secret-99")
    prompts = [(p.timestamp, p.prompt) for p in corpus.prompts()]
    assert any("[REDACTED:" in text for _, text in prompts)  # stored redacted by the hook
    dist = topic_distribution(prompts, top=10)
    assert "deploy" in dist.topics
    assert not {"redacted", "assignment", "token", "github"} & set(dist.topics), dist.topics  # the markers' words
