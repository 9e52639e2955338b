"""Bootstrap intervals and paired significance tests: determinism and hand-computed cases."""

import numpy as np
import pytest

from rag.evaluation import bootstrap_ci, compare_paired, paired_bootstrap_test, paired_randomization_test, percentile

pytestmark = pytest.mark.unit

SCORES = [0.1, 0.4, 0.35, 0.8, 0.65, 0.2, 0.9, 0.5, 0.45, 0.3, 0.7, 0.05]


def test_the_same_seed_gives_the_same_interval_and_another_seed_another():
    first = bootstrap_ci(SCORES, seed=3)
    assert bootstrap_ci(SCORES, seed=3) == first
    assert bootstrap_ci(SCORES, seed=4) != first


def test_the_interval_brackets_the_mean_and_narrows_with_more_queries():
    low, high = bootstrap_ci(SCORES, seed=0)
    assert low < np.mean(SCORES) < high
    wide = high - low
    low, high = bootstrap_ci(SCORES * 20, seed=0)
    assert high - low < wide / 3


def test_the_interval_matches_a_percentile_bootstrap_computed_by_hand():
    rng = np.random.default_rng(11)
    data = np.asarray(SCORES)
    means = data[rng.integers(0, data.size, size=(500, data.size))].mean(axis=1)
    assert bootstrap_ci(SCORES, resamples=500, seed=11) == pytest.approx(tuple(np.quantile(means, [0.025, 0.975])))


def test_constant_or_single_scores_have_a_degenerate_interval_and_none_have_none():
    assert bootstrap_ci([0.5, 0.5, 0.5]) == (0.5, 0.5)
    assert bootstrap_ci([0.7]) == (0.7, 0.7)
    assert all(np.isnan(bound) for bound in bootstrap_ci([]))


def test_randomisation_test_on_three_equal_wins_is_exactly_two_of_eight_sign_flips():
    # Differences (1, 1, 1): of the 8 sign assignments only +++ and --- reach |mean| 1.
    assert paired_randomization_test([1, 1, 1], [0, 0, 0]) == pytest.approx(2 / 8)


def test_randomisation_test_counts_ties_at_the_observed_difference():
    # Differences (0.2, 0, 0.5), mean 0.2333: flips give |sum| 0.7 or 0.3, each twice over the
    # zero's sign; |sum| 0.7 (4 of 8) reaches the observed one.
    assert paired_randomization_test([0.5, 0.2, 0.9], [0.3, 0.2, 0.4]) == pytest.approx(4 / 8)


def test_identical_systems_have_p_value_one():
    assert paired_randomization_test(SCORES, SCORES) == 1.0
    result = paired_bootstrap_test(SCORES, SCORES)
    assert result["difference"] == 0.0 and result["p_value"] == 1.0


def test_a_consistent_improvement_over_many_queries_is_significant_and_reproducible():
    rng = np.random.default_rng(5)
    base = rng.uniform(0, 0.8, 60)
    better = base + rng.uniform(0.05, 0.2, 60)
    p = paired_randomization_test(better, base, permutations=5000, seed=1)
    assert p == pytest.approx(1 / 5001)
    assert paired_randomization_test(better, base, permutations=5000, seed=1) == p
    comparison = compare_paired(better.tolist(), base.tolist(), seed=2)
    assert comparison["difference"] == pytest.approx(float(np.mean(better - base)))
    assert 0 < comparison["ci"][0] < comparison["difference"] < comparison["ci"][1]
    assert comparison["p_bootstrap"] < 0.001 and comparison["p_randomization"] < 0.001
    assert compare_paired(better.tolist(), base.tolist(), seed=2) == comparison


def test_noise_alone_is_not_significant():
    rng = np.random.default_rng(8)
    a = rng.uniform(0, 1, 40)
    b = a + rng.normal(0, 0.05, 40)
    assert paired_randomization_test(a, b, seed=0) > 0.05
    assert paired_bootstrap_test(a, b, seed=0)["p_value"] > 0.05


def test_unpaired_lengths_are_refused():
    with pytest.raises(ValueError, match="same number of queries"):
        paired_randomization_test([1, 2], [1])


def test_percentile_interpolates_like_numpy():
    assert percentile([10, 20, 30, 40], 50) == 25.0
    assert percentile([10, 20, 30, 40], 95) == pytest.approx(38.5)
