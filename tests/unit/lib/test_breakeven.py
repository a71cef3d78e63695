"""Tests for lib.breakeven: the figures of chapter 3 and the properties behind them.

Expected values are derived by hand from the source article's arithmetic
(H = 4 (0.03 ms + 2 MB / 10 GB/s) = 0.92 ms, saving 1 - 1/(2 * 0.8) = 0.375),
not copied from the library's output.
"""

from __future__ import annotations

import math

import numpy as np
import phase_strategies
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from lib.breakeven import break_even_divisible, min_bandwidth, min_efficiency, saving_fraction
from lib.experiment import BASE
from lib.units import GB, MB, ms, s

H_BASE = 4 * (0.03 * ms + 2 * MB / (10 * GB / s))  # 0.92 ms


# --- the chapter's numbers -------------------------------------------------


def test_base_communication_and_saving():
    assert BASE.communication_time == pytest.approx(0.92 * ms)
    assert saving_fraction(BASE) == pytest.approx(0.375)


def test_break_even_base_case():
    assert break_even_divisible(BASE) / ms == pytest.approx(0.92 / 0.375)
    assert break_even_divisible(BASE) / ms == pytest.approx(2.45333, abs=5e-6)


def test_small_job_is_slower_split():
    small = BASE.with_(divisible=1 * ms)
    assert small.one_device_time / ms == pytest.approx(1.8)
    assert small.split_time / ms == pytest.approx(0.8 + 1 / 1.6 + 0.92)  # 2.345
    assert small.split_time / ms == pytest.approx(2.345)
    assert small.split_time > small.one_device_time


@pytest.mark.parametrize("efficiency", [0.5, 0.3, 0.01])
def test_no_speedup_when_k_eta_at_most_one(efficiency):
    phase = BASE.with_(efficiency=efficiency)
    assert break_even_divisible(phase) == math.inf
    for work in (1 * ms, 1 * s, 1e4 * s):
        longer = phase.with_(divisible=work)
        assert longer.split_time > longer.one_device_time


def test_one_device_never_breaks_even():
    assert break_even_divisible(BASE.with_(devices=1, efficiency=1.0)) == math.inf


@pytest.mark.parametrize(
    "bandwidth, transfer_ms, split_ms",
    [(1, 2.0, 16.42), (50, 0.04, 8.58)],
)
def test_bandwidth_sweep(bandwidth, transfer_ms, split_ms):
    phase = BASE.with_(bandwidth=bandwidth * GB / s)
    assert phase.communication_time / ms == pytest.approx(4 * (0.03 + transfer_ms))
    assert phase.split_time / ms == pytest.approx(split_ms)


def test_infinite_bandwidth_leaves_startup_floor():
    ideal = BASE.with_(bandwidth=math.inf)
    assert ideal.communication_time / ms == pytest.approx(4 * 0.03)
    assert ideal.split_time / ms == pytest.approx(0.8 + 7.5 + 0.12)
    assert break_even_divisible(ideal) / ms == pytest.approx(0.12 / 0.375)


def test_min_bandwidth_base_case():
    time_left_per_transfer = (12 * ms * 0.375 - 4 * 0.03 * ms) / 4
    assert time_left_per_transfer == pytest.approx(0.001095)
    assert min_bandwidth(BASE) / (GB / s) == pytest.approx(0.002 / 0.001095)
    assert min_bandwidth(BASE) / (GB / s) == pytest.approx(1.82648, abs=5e-6)


def test_min_efficiency_base_and_small_job():
    assert min_efficiency(BASE) == pytest.approx(12 / (2 * (12 - 0.92)))
    assert min_efficiency(BASE) == pytest.approx(0.54152, abs=5e-6)
    assert min_efficiency(BASE.with_(divisible=1 * ms)) == pytest.approx(6.25)


def test_inf_where_no_finite_value_exists():
    # Startups alone (4 x 0.3 ms) exceed the 0.375 ms saved on 1 ms of work.
    startup_bound = BASE.with_(divisible=1 * ms, startup=0.3 * ms)
    assert min_bandwidth(startup_bound) == math.inf
    assert min_bandwidth(BASE.with_(efficiency=0.5)) == math.inf
    # Work no larger than the communication: no efficiency can help.
    assert min_efficiency(BASE.with_(divisible=0.92 * ms)) == math.inf
    assert min_efficiency(BASE.with_(divisible=0.5 * ms)) == math.inf


def test_zero_where_nothing_travels():
    no_bytes = BASE.with_(transfer_bytes=0.0)
    assert min_bandwidth(no_bytes) == 0.0
    assert break_even_divisible(BASE.with_(transfers=0)) == 0.0


def test_results_are_plain_floats_for_scalars():
    for value in (break_even_divisible(BASE), min_bandwidth(BASE), min_efficiency(BASE)):
        assert type(value) is float


# --- properties ------------------------------------------------------------

phases = phase_strategies.phases(min_divisible=1e-6, min_transfers=1, min_bytes=1.0)
margins = st.floats(min_value=1e-3, max_value=10.0)


@settings(max_examples=300)
@given(phase=phases, work=st.floats(min_value=1e-7, max_value=10.0))
def test_split_faster_exactly_above_break_even(phase, work):
    assume(phase.devices * phase.efficiency > 1.0 + 1e-9)
    threshold = break_even_divisible(phase)
    assume(phase.communication_time > 1e-9)
    assume(abs(work / threshold - 1) > 1e-3)  # stay away from the tie
    trial = phase.with_(divisible=work)
    assert (trial.split_time < trial.one_device_time) == (work > threshold)


@settings(max_examples=300)
@given(phase=phases, margin=margins)
def test_bandwidth_just_above_minimum_is_faster(phase, margin):
    needed = min_bandwidth(phase)
    assume(0 < needed < math.inf)
    assume(phase.communication_time > 1e-9)
    step = min(margin, 0.5) * 1e-2
    above = phase.with_(bandwidth=needed * (1 + step))
    below = phase.with_(bandwidth=needed * (1 - step))
    assert above.split_time < above.one_device_time
    assert below.split_time > below.one_device_time


@settings(max_examples=200)
@given(phase=phases)
def test_infinite_min_bandwidth_means_even_ideal_link_loses(phase):
    assume(min_bandwidth(phase) == math.inf)
    ideal = phase.with_(bandwidth=math.inf)
    assert ideal.split_time >= ideal.one_device_time


@settings(max_examples=300)
@given(phase=phases, margin=margins)
def test_min_efficiency_consistency(phase, margin):
    needed = min_efficiency(phase)
    step = min(margin, 0.5) * 1e-2
    if needed <= 1 / (1 + step):
        above = phase.with_(efficiency=min(1.0, needed * (1 + step)))
        assert above.split_time < above.one_device_time
        below = phase.with_(efficiency=needed * (1 - step))
        assert below.split_time > below.one_device_time
        # At exactly the minimum efficiency, the phase sits on its break-even.
        at = phase.with_(efficiency=needed)
        assert at.split_time == pytest.approx(at.one_device_time, rel=1e-9)
        if saving_fraction(at) > 1e-4:  # else C* = H / saving is ill-conditioned
            assert break_even_divisible(at) == pytest.approx(phase.divisible, rel=1e-6)
    else:
        perfect = phase.with_(efficiency=1.0)
        assert perfect.split_time >= perfect.one_device_time * (1 - 1e-12)


@settings(max_examples=200)
@given(phase=phases)
def test_overlap_bound_never_above_split_time(phase):
    assert phase.overlap_bound <= phase.split_time
    assert phase.overlap_bound >= phase.serial + phase.communication_time - 1e-15
    assert phase.overlap_bound >= phase.serial + phase.split_compute_time - 1e-15


# --- arrays ----------------------------------------------------------------


def test_arrays_broadcast_like_scalars():
    work = np.array([[0.5], [2.0], [12.0]]) * ms
    bandwidth = np.array([0.5, 1.0, 10.0, math.inf]) * GB / s
    efficiency = np.array([[0.4], [0.8], [1.0]])
    sweep = BASE.with_(divisible=work, bandwidth=bandwidth, efficiency=efficiency)
    for function in (break_even_divisible, min_bandwidth, min_efficiency):
        grid = function(sweep)
        assert grid.shape == (3, 4)
        for i in range(3):
            for j in range(4):
                single = BASE.with_(divisible=work[i, 0], bandwidth=bandwidth[j], efficiency=efficiency[i, 0])
                assert grid[i, j] == pytest.approx(function(single))
    assert not np.isnan(break_even_divisible(sweep)).any()
    assert (break_even_divisible(sweep)[0] == math.inf).all()  # K eta = 0.8


def test_overlap_bound_broadcasts():
    sweep = BASE.with_(bandwidth=np.array([1.0, 10.0, 50.0]) * GB / s)
    np.testing.assert_allclose(sweep.overlap_bound / ms, [0.8 + 8.12, 0.8 + 7.5, 0.8 + 7.5])


def test_bad_phase_is_rejected_before_thresholds():
    with pytest.raises(ValueError, match="efficiency"):
        break_even_divisible(BASE.with_(efficiency=0.0))
    with pytest.raises(ValueError, match="bandwidth"):
        min_bandwidth(BASE.with_(bandwidth=0.0))
