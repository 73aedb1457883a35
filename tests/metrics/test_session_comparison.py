"""Comparing two groups of sessions on T, K, W and rounds."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mission_memory.errors import InputError
from mission_memory.metrics.session_comparison import compare_session_groups
from mission_memory.metrics.session_metrics import SessionMetrics
from mission_memory.metrics.stats import hedges_g

BASE = SessionMetrics(
    session_id="s",
    path="/x/s.jsonl",
    subagent_paths=(),
    start=None,
    end=None,
    T=0,
    K=0,
    W=None,
    init_ended_by_edit=True,
    api_calls=1,
    subagent_api_calls=0,
    input_tokens=0,
    cache_read_input_tokens=0,
    output_tokens=0,
    rounds=0,
    init_files_read=(),
    files_read=(),
    files_edited=(),
)


def group(values: list[tuple[int, int, float | None, int]]) -> list[SessionMetrics]:
    return [
        replace(BASE, session_id=f"s{i}", T=t, K=k, W=w, rounds=r) for i, (t, k, w, r) in enumerate(values)
    ]


WITHOUT_MEMORY = group([(30000, 14, 0.6, 7), (28000, 20, 0.7, 9), (35000, 9, None, 6), (31000, 25, 0.5, 10)])
WITH_MEMORY = group([(9000, 3, 0.2, 4), (11000, 2, 0.1, 3), (10000, 4, 0.25, 5)])


def test_each_metric_gets_both_distributions_relative_change_and_hedges_g() -> None:
    comparison = compare_session_groups(WITH_MEMORY, WITHOUT_MEMORY, label_a="memory", label_b="baseline")
    by_name = {m.metric: m for m in comparison.metrics}
    assert list(by_name) == ["T", "K", "W", "rounds"]
    t = by_name["T"]
    assert (t.a.median, t.b.median) == (10000.0, 30500.0)
    assert t.median_change == pytest.approx(10000 / 30500 - 1)
    assert t.hedges_g is not None
    assert t.hedges_g.g == pytest.approx(hedges_g([9000, 11000, 10000], [30000, 28000, 35000, 31000]).g)
    assert t.hedges_g.g < 0
    assert by_name["W"].b.n == 3  # the session without a W is left out


def test_bootstrap_difference_of_medians_is_reproducible() -> None:
    first = compare_session_groups(WITH_MEMORY, WITHOUT_MEMORY, seed=5, n_resamples=500)
    second = compare_session_groups(WITH_MEMORY, WITHOUT_MEMORY, seed=5, n_resamples=500)
    assert first == second
    assert first.metrics[0].median_difference is not None
    assert first.metrics[0].median_difference.estimate == pytest.approx(10000 - 30500)


def test_a_metric_without_spread_has_no_effect_size_rather_than_an_error() -> None:
    same = group([(100, 1, None, 2), (100, 1, None, 2)])
    comparison = compare_session_groups(same, same)
    assert all(m.hedges_g is None for m in comparison.metrics)
    w = next(m for m in comparison.metrics if m.metric == "W")
    assert w.median_difference is None


def test_an_empty_group_is_an_input_error() -> None:
    with pytest.raises(InputError, match="both groups"):
        compare_session_groups([], WITH_MEMORY)


def test_comparison_json_names_groups_and_metrics() -> None:
    payload = compare_session_groups(
        WITH_MEMORY, WITHOUT_MEMORY, label_a="memory", label_b="baseline"
    ).to_dict()
    assert payload["a"] == {"label": "memory", "N": 3}
    assert set(payload["metrics"]) == {"T", "K", "W", "rounds"}
    assert {"g", "low", "high"} <= set(payload["metrics"]["rounds"]["hedges_g"])
