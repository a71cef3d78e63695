"""Tests for lib.serving.trust: its table is chapter 11's held-out errors, and its ranges and confidences behave."""

from __future__ import annotations

import numpy as np
import pytest

from lib.serving import trust
from lib.validation import capacity_ratios, validations


@pytest.mark.parametrize("regime", sorted(trust.CAPACITY_RATIOS))
def test_the_table_is_chapter_11s_held_out_capacity_ratios(regime):
    ratios = capacity_ratios(validations()[regime])
    assert ratios.size == trust.HELD_OUT[regime]
    want = np.quantile(ratios, trust.LEVELS)
    # Four significant digits: within half a unit of the fourth.
    np.testing.assert_allclose(trust.CAPACITY_RATIOS[regime], want, rtol=5e-4)


def test_capacity_ratios_read_a_time_and_a_rate_the_right_way_round():
    records = (
        dict(role="held-out", error=0.25, quantity="tpot"),  # predicted 25 % longer than measured: room to spare
        dict(role="held-out", error=0.25, quantity="output_throughput"),  # predicted 25 % more than delivered
        dict(role="calibration", error=5.0, quantity="tpot"),  # never scored
    )
    from lib.validation import Validation

    ratios = capacity_ratios(Validation("load", records, {}))
    np.testing.assert_allclose(ratios, [1.25, 0.8])


def test_more_confidence_promises_less_and_the_range_holds_the_median():
    for regime in trust.CAPACITY_RATIOS:
        shares = [trust.capacity_ratio(p, regime) for p in np.linspace(0.05, 0.95, 37)]
        assert all(a >= b for a, b in zip(shares, shares[1:])), regime
        low, high = trust.capacity_interval(10.0, regime)
        assert low < 10 * trust.capacity_ratio(0.5, regime) < high
        assert low == pytest.approx(10 * trust.CAPACITY_RATIOS[regime][0])
        assert high == pytest.approx(10 * trust.CAPACITY_RATIOS[regime][-1])
    # The model is optimistic at the median in both regimes (chapter 11): the median share is below 1.
    assert trust.capacity_ratio(0.5, "load") < 1 and trust.capacity_ratio(0.5, "decode") < 1


def test_a_percent_reads_as_its_fraction_and_a_rarer_tail_is_refused():
    assert trust.capacity_ratio(90) == trust.capacity_ratio(0.9)
    for bad in (0.99, 0.01, 96, 100, float("nan"), -1):
        with pytest.raises(ValueError, match="confidence"):
            trust.capacity_ratio(bad)
    with pytest.raises(ValueError, match="regime must be one of \\['decode', 'load'\\], got 'prefill'"):
        trust.capacity_interval(1.0, "prefill")
    with pytest.raises(ValueError, match="level"):
        trust.capacity_interval(1.0, "load", 0.99)


def test_the_regime_is_load_under_any_target():
    assert trust.regime() == "decode"
    assert trust.regime(ttft_limit=1.0) == trust.regime(tpot_limit=0.05) == "load"
