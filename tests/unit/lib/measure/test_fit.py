"""Tests for lib.measure.fit: the link fit (latency and bus bandwidth) and the efficiency fit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from measure_support import SIZES

from lib import measure
from lib.units import GB, KB, MB, ms, s, us

# --- fit_link ---------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(latency=st.floats(1e-7, 1e-2), bandwidth=st.floats(1e7, 1e12), devices=st.integers(2, 64))
def test_fit_link_recovers_known_latency_and_bandwidth(latency, bandwidth, devices):
    sent = 2 * (devices - 1) / devices * SIZES  # ring all-reduce bytes per device, by hand
    times = latency + sent / bandwidth
    link = measure.fit_link(SIZES, times, devices=devices)
    assert math.isclose(link.bus_bandwidth, bandwidth, rel_tol=1e-6)
    assert math.isclose(link.latency, latency, rel_tol=1e-5, abs_tol=1e-12)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_fit_link_tolerates_one_percent_noise(seed):
    rng = np.random.default_rng(seed)
    times = (200 * us + SIZES / (2 * GB / s)) * (1 + 0.01 * rng.uniform(-1, 1, SIZES.size))
    link = measure.fit_link(SIZES, times, devices=2)
    assert abs(link.bus_bandwidth / (2 * GB / s) - 1) < 0.03
    assert abs(link.latency / (200 * us) - 1) < 0.05


def test_fit_link_two_points_matches_the_hand_solution():
    # Two points fix the line exactly: slope from the difference, latency from the rest.
    n1, n2, t1, t2 = 1 * MB, 9 * MB, 3 * ms, 7 * ms
    link = measure.fit_link([n1, n2], [t1, t2], devices=2)  # K = 2: V = n
    assert math.isclose(link.bus_bandwidth, (n2 - n1) / (t2 - t1))
    assert math.isclose(link.latency, t1 - n1 * (t2 - t1) / (n2 - n1))


def test_fit_link_clamps_negative_latency_to_zero():
    link = measure.fit_link([1 * MB, 2 * MB], [0.5 * ms, 1.5 * ms], devices=2)
    assert link.latency == 0.0 and link.bus_bandwidth > 0


def test_fit_link_on_the_published_table():
    table = measure.PUBLISHED_NCCL
    link = measure.fit_link(table["message_bytes"], table["seconds"], devices=table["devices"])
    # An independent fit of the same objective: a straight line t = b + a V with residuals
    # weighted by 1 / t (relative errors), V = 2 (K - 1) / K * n for a ring all-reduce.
    k = table["devices"]
    seconds = np.array(table["seconds"])
    sent = 2 * (k - 1) / k * np.array(table["message_bytes"], dtype=float)
    per_byte, latency = np.polyfit(sent, seconds, 1, w=1 / seconds)
    assert latency > 0  # no clamping involved, so both fits solve the same problem
    assert link.latency == pytest.approx(latency, rel=1e-9)
    assert link.bus_bandwidth == pytest.approx(1 / per_byte, rel=1e-9)


@pytest.mark.parametrize(
    "sizes, times, devices, word",
    [
        ([1 * KB], [1 * ms], 2, "at least two different sizes"),
        ([1 * KB, 2 * KB], [1 * ms], 2, "same length"),
        ([1 * KB, 2 * KB], [1 * ms, -1 * ms], 2, "seconds"),
        ([1 * KB, 2 * KB], [2 * ms, 1 * ms], 2, "grow"),
        ([1 * KB, 2 * KB], [1 * ms, 2 * ms], 1, "devices"),
        ([1 * KB, float("nan")], [1 * ms, 2 * ms], 2, "message_bytes"),
    ],
)
def test_fit_link_rejects_bad_input(sizes, times, devices, word):
    with pytest.raises(ValueError, match=word):
        measure.fit_link(sizes, times, devices=devices)


def test_a_link_that_does_not_grow_is_held_at_zero_per_byte_time():
    sizes, times = [1 * KB, 16 * KB, 1 * MB], [2 * ms, 1.5 * ms, 1 * ms]
    with pytest.raises(ValueError, match="seconds must grow with message_bytes"):
        measure.fit_link(sizes, times, devices=2)
    fit = measure.fit_link(sizes, times, devices=2, constrain=True)
    assert fit.constrained and fit.bus_bandwidth == math.inf
    # The best flat line on relative errors: minimise sum((a / t - 1)^2), so a = sum(1/t) / sum(1/t^2).
    t = np.array(times)
    assert fit.latency == pytest.approx(np.sum(1 / t) / np.sum(1 / t**2), rel=1e-12)
    assert float(fit.time(1 * MB)) == pytest.approx(fit.latency)
    good = measure.fit_link(sizes, [1 * ms, 1.2 * ms, 2 * ms], devices=2, constrain=True)
    assert not good.constrained and math.isfinite(good.bus_bandwidth)


def test_fit_efficiency_by_hand():
    # Shards of 1 ms and 3 ms layers take 0.6 ms and 1.6 ms: slope 0.5 = 1 / (K eta_inf) with K = 2,
    # so eta_inf = 1, and the fixed cost is 0.6 - 0.5 * 1 = 0.1 ms.
    fit = measure.fit_efficiency([1 * ms, 3 * ms], [0.6 * ms, 1.6 * ms], devices=2)
    assert fit.overhead == pytest.approx(0.1 * ms, rel=1e-9)
    assert fit.asymptote == pytest.approx(1.0, rel=1e-9)
    # eta at C = 1 ms: 1 / (2 * 0.6) = 5/6; at C = 9 ms: 9 / (2 * 4.6) = 45/46.
    assert fit.efficiency([1 * ms, 9 * ms]) == pytest.approx([5 / 6, 45 / 46], rel=1e-9)
    assert fit.shard_time(9 * ms) == pytest.approx(4.6 * ms, rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(overhead=st.floats(0.0, 1e-3), eta_inf=st.floats(0.3, 1.5), devices=st.integers(2, 8))
def test_fit_efficiency_recovers_known_parameters(overhead, eta_inf, devices):
    whole = np.array([0.1, 0.4, 1.6, 6.4, 25.6]) * ms
    fit = measure.fit_efficiency(whole, overhead + whole / (devices * eta_inf), devices)
    assert fit.asymptote == pytest.approx(eta_inf, rel=1e-6)
    assert fit.overhead == pytest.approx(overhead, rel=1e-5, abs=1e-12)


def test_fit_efficiency_clamps_a_negative_overhead_to_zero():
    # Shards that take *less* than a straight line through the origin would say: no negative cost.
    fit = measure.fit_efficiency([1 * ms, 2 * ms], [0.4 * ms, 0.9 * ms], devices=2)
    assert fit.overhead == 0.0 and fit.asymptote > 0


@pytest.mark.parametrize(
    "whole, shard, devices, word",
    [
        ([1 * ms], [0.5 * ms], 2, "at least two different times"),
        ([1 * ms, 2 * ms], [0.5 * ms], 2, "same length"),
        ([1 * ms, 2 * ms], [0.9 * ms, 0.5 * ms], 2, "must grow"),
        ([1 * ms, -2 * ms], [0.5 * ms, 1 * ms], 2, "whole_s must be > 0"),
        ([1 * ms, 2 * ms], [0.5 * ms, 1 * ms], 0, "devices must be >= 1"),
    ],
)
def test_fit_efficiency_rejects_bad_input(whole, shard, devices, word):
    with pytest.raises(ValueError, match=word):
        measure.fit_efficiency(whole, shard, devices)
