"""Statistics checked against scipy and hand-computed reference values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from mission_memory.errors import InputError
from mission_memory.metrics.stats import (
    bootstrap_ci,
    bootstrap_difference_ci,
    describe,
    hedges_correction,
    hedges_g,
    pearson_r,
)

ROUNDS_ROTATION = [7.0, 9.0, 4.0, 12.0, 8.0, 10.0, 6.0, 11.0, 9.0, 5.0, 13.0, 8.0]
ROUNDS_SAME_OPERATOR = [3.0, 5.0, 4.0, 2.0, 6.0, 4.0, 3.0, 5.0, 7.0, 4.0]


def test_describe_gives_median_mean_sample_sd_and_linear_percentiles() -> None:
    dist = describe([float(v) for v in range(1, 11)])
    assert (dist.n, dist.median, dist.mean) == (10, 5.5, 5.5)
    assert dist.sd == pytest.approx(3.0276503540974917)
    assert (dist.p10, dist.p90) == (pytest.approx(1.9), pytest.approx(9.1))
    assert (dist.min, dist.max) == (1.0, 10.0)


def test_describe_of_one_value_has_no_sd() -> None:
    dist = describe([4.0])
    assert (dist.median, dist.sd) == (4.0, None)


def test_hedges_g_is_cohens_d_from_scipys_t_times_the_exact_gamma_correction() -> None:
    a, b = ROUNDS_ROTATION, ROUNDS_SAME_OPERATOR
    n_a, n_b = len(a), len(b)
    t = stats.ttest_ind(a, b).statistic
    d = t * math.sqrt(1 / n_a + 1 / n_b)
    df = n_a + n_b - 2
    j = special.gamma(df / 2) / (math.sqrt(df / 2) * special.gamma((df - 1) / 2))
    effect = hedges_g(a, b)
    assert effect.d == pytest.approx(d, rel=1e-12)
    assert effect.g == pytest.approx(j * d, rel=1e-12)
    se = math.sqrt((n_a + n_b) / (n_a * n_b) + effect.g**2 / (2 * (n_a + n_b)))
    z = stats.norm.ppf(0.975)
    assert (effect.low, effect.high) == (pytest.approx(effect.g - z * se), pytest.approx(effect.g + z * se))


def test_hedges_correction_matches_the_familiar_approximation_for_moderate_samples() -> None:
    for df in (20, 60):
        assert hedges_correction(df) == pytest.approx(1 - 3 / (4 * df - 1), abs=2e-4)
    assert hedges_correction(10) == pytest.approx(0.9228, abs=1e-4)  # Hedges (1981), table of J(df)
    assert hedges_correction(2) == pytest.approx(0.5641895835477563)  # Γ(1)/(1·Γ(1/2)) = 1/√π


def test_hedges_g_is_positive_when_group_a_is_larger_and_flips_sign_when_swapped() -> None:
    forward = hedges_g(ROUNDS_ROTATION, ROUNDS_SAME_OPERATOR)
    backward = hedges_g(ROUNDS_SAME_OPERATOR, ROUNDS_ROTATION)
    assert forward.g > 0
    assert backward.g == pytest.approx(-forward.g)


def test_hedges_g_needs_two_values_per_group_and_some_spread() -> None:
    with pytest.raises(InputError, match="at least 2 values per group"):
        hedges_g([1.0], [1.0, 2.0])
    with pytest.raises(InputError, match="zero spread"):
        hedges_g([1.0, 1.0], [1.0, 1.0])


def test_pearson_r_and_its_fisher_z_interval_match_scipy() -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(size=40)
    y = -0.6 * x + rng.normal(scale=0.8, size=40)
    reference = stats.pearsonr(x, y)
    interval = reference.confidence_interval(confidence_level=0.9)
    mine = pearson_r(list(x), list(y), confidence=0.9)
    assert mine.r == pytest.approx(reference.statistic, rel=1e-12)
    assert (mine.low, mine.high) == (
        pytest.approx(interval.low, rel=1e-9),
        pytest.approx(interval.high, rel=1e-9),
    )


def test_pearson_r_of_a_perfect_line_has_a_collapsed_interval_and_no_warning() -> None:
    corr = pearson_r([1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0])
    assert (corr.r, corr.low, corr.high) == (1.0, 1.0, 1.0)


def test_pearson_r_rejects_unpaired_short_or_constant_input() -> None:
    with pytest.raises(InputError, match="paired"):
        pearson_r([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0])
    with pytest.raises(InputError, match="at least 4 pairs"):
        pearson_r([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    with pytest.raises(InputError, match="constant"):
        pearson_r([1.0, 1.0, 1.0, 1.0], [1.0, 2.0, 3.0, 4.0])


def test_bootstrap_interval_is_reproducible_with_the_same_seed() -> None:
    values = [float(v) for v in (3, 9, 14, 14, 20, 31, 40, 61, 0, 2)]
    assert bootstrap_ci(values, seed=3) == bootstrap_ci(values, seed=3)
    assert bootstrap_ci(values, seed=3).estimate == 14.0


def test_bootstrap_interval_of_the_mean_agrees_with_scipys_percentile_bootstrap() -> None:
    rng = np.random.default_rng(11)
    values = rng.normal(30_000, 7_600, size=60)
    reference = stats.bootstrap(
        (values,), np.mean, method="percentile", n_resamples=20_000, random_state=np.random.default_rng(1)
    ).confidence_interval
    mine = bootstrap_ci(list(values), lambda rows: rows.mean(axis=1), n_resamples=20_000, seed=2)
    assert mine.estimate == pytest.approx(values.mean())
    assert mine.low == pytest.approx(reference.low, abs=150)
    assert mine.high == pytest.approx(reference.high, abs=150)


def test_bootstrap_difference_interval_covers_a_clear_shift_and_excludes_zero() -> None:
    interval = bootstrap_difference_ci(ROUNDS_ROTATION, ROUNDS_SAME_OPERATOR, seed=0)
    assert interval.estimate == pytest.approx(np.median(ROUNDS_ROTATION) - np.median(ROUNDS_SAME_OPERATOR))
    assert 0 < interval.low <= interval.estimate <= interval.high


def test_confidence_outside_zero_one_is_an_input_error() -> None:
    with pytest.raises(InputError, match="confidence"):
        hedges_g(ROUNDS_ROTATION, ROUNDS_SAME_OPERATOR, confidence=95)
