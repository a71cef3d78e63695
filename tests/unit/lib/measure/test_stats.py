"""Tests for lib.measure.stats: summaries, errors, bootstrap medians and percentile intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lib import measure
from lib.measure.stats import median_abs_error, relative_error


def test_summarize_median_ignores_a_tail_the_mean_does_not():
    summary = measure.summarize([1.0] * 9 + [100.0])
    assert summary["median"] == 1.0 and summary["mean"] > 10


# --- bootstrap intervals -------------------------------------------------------------


def test_percentile_interval_by_order_statistics():
    # 20 sorted values, 90 %: drop floor(20 * 0.05) = 1 value at each end.
    assert measure.percentile_interval(np.arange(20.0, 0.0, -1.0), level=0.9) == (2.0, 19.0)
    # 10 values, 80 %: the 2nd and the 9th.
    assert measure.percentile_interval(np.arange(1.0, 11.0), level=0.8) == (2.0, 9.0)
    # level 1 keeps the extremes; infinity (no break-even in a resample) is an end like any other.
    assert measure.percentile_interval([3.0, 1.0, math.inf], level=1.0) == (1.0, math.inf)


@pytest.mark.parametrize(
    "values, level, word",
    [
        ([1.0, 2.0], 0.0, "level must be in"),
        ([1.0, 2.0], 1.01, "level must be in"),
        ([1.0, float("nan")], 0.9, "values must not be NaN"),
        ([], 0.9, "values must hold at least one value"),
    ],
)
def test_percentile_interval_rejects_bad_input(values, level, word):
    with pytest.raises(ValueError, match=word):
        measure.percentile_interval(values, level)


def test_bootstrap_medians_of_two_values_follow_the_hand_count():
    # [1, 3] resamples to [1,1], [1,3], [3,1], [3,3] with equal chance: medians 1, 2, 2, 3.
    medians = measure.bootstrap_medians([1.0, 3.0], resamples=20000, seed=3)
    shares = [np.mean(medians == m) for m in (1.0, 2.0, 3.0)]
    assert set(np.unique(medians)) == {1.0, 2.0, 3.0}
    assert shares == pytest.approx([0.25, 0.5, 0.25], abs=0.02)


def test_bootstrap_is_seeded():
    samples = np.random.default_rng(5).exponential(1.0, 101)
    first, again = (measure.bootstrap_medians(samples, 200, seed=7) for _ in range(2))
    assert np.array_equal(first, again)
    assert not np.array_equal(
        measure.bootstrap_medians(samples, 200, seed=7), measure.bootstrap_medians(samples, 200, seed=8)
    )
    assert measure.median_interval(samples, seed=7) == measure.median_interval(samples, seed=7)


def test_bootstrap_resamples_the_rows_of_a_round_together():
    # Two steps timed in the same rounds: resampling whole rounds keeps them paired, so two
    # identical rows give identical medians in every resample (independent draws would not).
    rounds = np.array([[1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 2.0, 3.0, 4.0, 5.0]])
    medians = measure.bootstrap_medians(rounds, resamples=300, seed=0)
    assert medians.shape == (2, 300)
    assert np.array_equal(medians[0], medians[1])
    assert len(np.unique(medians[0])) > 1


def test_median_interval_brackets_the_median_and_narrows_with_more_repetitions():
    rng = np.random.default_rng(11)
    few, many = rng.normal(10.0, 1.0, 25), rng.normal(10.0, 1.0, 2500)
    low_few, high_few = measure.median_interval(few)
    low_many, high_many = measure.median_interval(many)
    assert low_few <= np.median(few) <= high_few and low_many <= np.median(many) <= high_many
    assert high_many - low_many < (high_few - low_few) / 3  # about 1 / sqrt(100) as wide


def test_bootstrap_rejects_bad_input():
    with pytest.raises(ValueError, match="resamples must be >= 1"):
        measure.bootstrap_medians([1.0], resamples=0)
    with pytest.raises(ValueError, match="samples must be >= 0"):
        measure.bootstrap_medians([1.0, -1.0])
    with pytest.raises(ValueError, match="samples must be 1-D or 2-D"):
        measure.bootstrap_medians(np.ones((2, 2, 2)))


def test_errors_are_signed_and_medians_refuse_nothing():
    assert relative_error(1.2, 1.0) == pytest.approx(0.2) and relative_error(0.5, 1.0) == pytest.approx(-0.5)
    with pytest.raises(ValueError, match="measured"):
        relative_error(1.0, 0.0)
    with pytest.raises(ValueError, match="at least one"):
        median_abs_error([])
