"""Tests for lib.measure.model: the predicted split, break-even, and the held-out and extrapolated predictions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib import measure
from lib.budget import Phase
from lib.measure import model
from lib.units import GB, KB, MB, ms, s

# --- prediction and break-even -----------------------------------------------


def test_predict_split_is_the_book_budget():
    link = measure.LinkFit(latency=0.2 * ms, bus_bandwidth=1 * GB / s, devices=2)
    phase = measure.predict_split(link, 128 * KB, one_s=8 * ms, efficiency=0.8)
    by_hand = 8 * ms / (2 * 0.8) + 0.2 * ms + 128 * KB / (1 * GB / s)  # K = 2: V = n
    assert isinstance(phase, Phase)
    assert math.isclose(phase.split_time, by_hand)


def test_predict_split_with_a_measured_all_reduce_replaces_the_link_time():
    link = measure.LinkFit(latency=0.2 * ms, bus_bandwidth=1 * GB / s, devices=2)
    measured = np.array([0.3 * ms, 2.5 * ms])
    phase = measure.predict_split(
        link, 128 * KB, one_s=[8 * ms, 16 * ms], efficiency=[0.8, 1.0], communication_s=measured
    )
    by_hand = np.array([8 * ms / (2 * 0.8), 16 * ms / 2]) + measured  # the fit's l and B play no part
    assert np.allclose(phase.split_time, by_hand, rtol=1e-12)
    with pytest.raises(ValueError, match="communication_s must be >= 0"):
        measure.predict_split(link, 0.0, one_s=1.0, efficiency=1.0, communication_s=-1.0)


def test_predict_split_caps_superlinear_efficiency():
    link = measure.LinkFit(latency=0.0, bus_bandwidth=1.0, devices=2)
    assert measure.predict_split(link, 0.0, one_s=1.0, efficiency=1.3).split_time == 0.5


@pytest.mark.parametrize(
    "one, serial, word",
    [
        (1.0, 2.0, "serial_s must be <= one_s"),
        ([1.0, 4.0], [0.5, 5.0], "serial_s must be <= one_s, got serial_s 5.0 > one_s 4.0"),
        (float("inf"), 0.0, "one_s must be finite"),
        (1.0, float("inf"), "serial_s must be finite"),
    ],
)
def test_predict_split_names_the_callers_parameters(one, serial, word):
    link = measure.LinkFit(latency=0.0, bus_bandwidth=1.0, devices=2)
    with pytest.raises(ValueError, match=word):
        measure.predict_split(link, 0.0, one_s=one, efficiency=1.0, serial_s=serial)


@settings(max_examples=60, deadline=None)
@given(per_hidden=st.floats(1e-8, 1e-5), cost=st.floats(1e-5, 1e-2))
def test_break_even_lies_where_the_curves_cross(per_hidden, cost):
    hidden = 64 * 2.0 ** np.arange(12)
    one = per_hidden * hidden
    split = one / 2 + cost  # exact crossing at 2 cost / per_hidden
    found = measure.break_even_hidden(hidden, one, split)
    exact = 2 * cost / per_hidden
    if exact >= hidden[-1]:
        assert found is None
    elif exact <= hidden[0]:
        assert found == hidden[0]
    else:
        below = hidden[hidden < exact].max()
        above = hidden[hidden > exact].min()
        assert below <= found <= above


@pytest.mark.parametrize(
    "hidden, one, split, word",
    [
        ([100, 400, 200], [1.0, 1.0, 1.0], [2.0, 0.5, 0.5], "hidden must be 1 or more strictly increasing"),
        ([100, 100, 200], [1.0, 1.0, 1.0], [2.0, 0.5, 0.5], "hidden must be 1 or more strictly increasing"),
        ([], [], [], "hidden"),
        ([100, 200], [1.0], [2.0, 0.5], "same length, got 2, 1 and 2"),
        ([100, 200], [1.0, 1.0], [0.5], "same length, got 2, 2 and 1"),
    ],
)
def test_break_even_rejects_bad_sweeps(hidden, one, split, word):
    with pytest.raises(ValueError, match=word):
        measure.break_even_hidden(hidden, one, split)


def test_step_gap_counts_log_steps():
    assert model.step_gap([100, 200, 400, 800], 100, 800) == pytest.approx(3.0)
    assert model.step_gap([100, 200], None, 100) == math.inf
    assert model.step_gap([100, 200], 100, math.inf) == math.inf


@pytest.mark.parametrize(
    "hidden, first, second, word",
    [
        ([100], 100, 100, "hidden must be 2 or more strictly increasing"),
        ([100, 100, 200], 100, 200, "hidden must be 2 or more strictly increasing"),
        ([200, 100], 100, 200, "hidden must be 2 or more strictly increasing"),
        ([100, 200], 0.0, 200, "first must be > 0"),
        ([100, 200], 100, -1.0, "second must be > 0"),
        ([100, 200], float("nan"), 200, "first must not be NaN"),
    ],
)
def test_step_gap_rejects_bad_input(hidden, first, second, word):
    with pytest.raises(ValueError, match=word):
        model.step_gap(hidden, first, second)


# --- held-out prediction --------------------------------------------------------------


@pytest.mark.parametrize(
    "points, folds, expected",
    [
        (4, 2, [0, 1, 0, 1]),
        (5, 2, [0, 1, 0, 1, 0]),
        (6, 3, [0, 1, 2, 0, 1, 2]),
    ],
)
def test_alternate_folds_by_hand(points, folds, expected):
    assert measure.alternate_folds(points, folds).tolist() == expected


@pytest.mark.parametrize(
    "points, folds, word",
    [
        (3, 2, "points must be >= 4"),
        (5, 3, "points must be >= 6"),
        (8, 1, "folds must be >= 2"),
        (4.5, 2, "points must be a whole number"),
    ],
)
def test_alternate_folds_rejects_bad_input(points, folds, word):
    with pytest.raises(ValueError, match=word):
        measure.alternate_folds(points, folds)


def test_held_out_split_by_hand():
    # Four sizes, folds 0 1 0 1. Fold 0 (points 0, 2) is predicted from points 1 and 3, and back.
    link = measure.LinkFit(latency=0.5 * ms, bus_bandwidth=1e30, devices=2)  # H = 0.5 ms
    one = np.array([1.0, 2.0, 4.0, 8.0]) * ms
    shard = np.array([0.5, 1.2, 2.1, 4.0]) * ms
    result = measure.held_out_split(link, 0.0, one, one, shard, measure.alternate_folds(4))
    # Fold 0's model from (2, 1.2) and (8, 4.0): slope 2.8/6, overhead 1.2 - 2 * 2.8/6 = 0.2667 ms.
    slope0, overhead0 = 2.8 / 6, 1.2 - 2 * 2.8 / 6
    # Fold 1's model from (1, 0.5) and (4, 2.1): slope 1.6/3, overhead 0.5 - 1.6/3 < 0, clamped to 0,
    # then the slope through the origin, weighted by 1 / t^2: (sum x / y) / (sum x^2 / y^2).
    x, y = np.array([1.0, 4.0]), np.array([0.5, 2.1])
    slope1 = np.sum(x / y) / np.sum(x**2 / y**2)
    by_hand = np.array([overhead0 + slope0 * 1, slope1 * 2, overhead0 + slope0 * 4, slope1 * 8]) * ms + 0.5 * ms
    assert result.split_s == pytest.approx(by_hand, rel=1e-9)
    assert result.fits[0].overhead == pytest.approx(overhead0 * ms, rel=1e-9)
    assert result.fits[1].overhead == 0.0


def test_held_out_split_never_uses_a_points_own_shard_time():
    link = measure.LinkFit(latency=0.2 * ms, bus_bandwidth=2 * GB / s, devices=2)
    one = np.array([0.5, 1, 2, 4, 8, 16]) * ms
    shard = 0.05 * ms + one / 1.8
    folds = measure.alternate_folds(6)
    base = measure.held_out_split(link, 128 * KB, one, one, shard, folds).split_s
    changed = shard.copy()
    changed[2] *= 3  # a wild shard timing at point 2 (fold 0)
    moved = measure.held_out_split(link, 128 * KB, one, one, changed, folds).split_s
    assert np.array_equal(moved[folds == 0], base[folds == 0])  # fold 0 is predicted from fold 1 only
    assert not np.allclose(moved[folds == 1], base[folds == 1])  # while fold 1's model saw it


def test_held_out_link_latency_is_interpolated_from_the_other_fold():
    # B = 1 GB/s and n = 100 KB, so V / B = 0.1 ms (K = 2: V = n). Sizes 100, 200, 400, 800, 1600.
    # Fold 0 = 100, 400, 1600; fold 1 = 200, 800. Size 400 lies halfway (in log size) between 200 and 800,
    # whose all-reduces took 1.1 and 1.5 ms: 1.3 ms, latency 1.2 ms. Sizes 100 and 1600 lie beyond fold 1's
    # ends and take 200's and 800's values. Size 200 lies halfway between 100 and 400: (0.5 + 9.0) / 2.
    link = measure.LinkFit(latency=0.2 * ms, bus_bandwidth=1 * GB / s, devices=2)
    hidden = [100, 200, 400, 800, 1600]
    one = np.array([1.0, 2.0, 4.0, 8.0, 16.0]) * ms
    timed = np.array([0.5, 1.1, 9.0, 1.5, 0.7]) * ms  # size 400's own all-reduce is wild: it must not matter
    result = measure.held_out_split(link, 100 * KB, one, one, one / 2, measure.alternate_folds(5), timed, hidden)
    by_hand = np.array([1.1 - 0.1, (0.5 + 9.0) / 2 - 0.1, 1.3 - 0.1, (9.0 + 0.7) / 2 - 0.1, 1.5 - 0.1]) * ms
    assert result.latency == pytest.approx(by_hand, rel=1e-9)
    assert result.split_s[2] == pytest.approx(2.0 * ms + 1.3 * ms, rel=1e-9)  # C / (K eta) + l + V / B


def test_held_out_link_latency_never_goes_below_zero_and_needs_the_sizes():
    link = measure.LinkFit(latency=0.2 * ms, bus_bandwidth=1 * GB / s, devices=2)
    one = np.array([1.0, 2.0, 4.0, 8.0]) * ms
    fast = np.full(4, 0.05 * ms)  # faster than V / B = 0.1 ms alone
    result = measure.held_out_split(
        link, 100 * KB, one, one, one / 2, measure.alternate_folds(4), fast, [64, 128, 256, 512]
    )
    assert result.latency.tolist() == [0.0] * 4
    with pytest.raises(ValueError, match="hidden must be given with allreduce_s"):
        measure.held_out_split(link, 100 * KB, one, one, one / 2, measure.alternate_folds(4), fast)


def test_held_out_split_refuses_an_empty_fold():
    link = measure.LinkFit(latency=0.0, bus_bandwidth=1.0, devices=2)
    with pytest.raises(ValueError, match="none empty"):
        measure.held_out_split(link, 0.0, [1.0, 2, 3, 4], [1.0, 2, 3, 4], [0.5, 1, 1.5, 2], [0, 2, 0, 2])


def test_held_out_split_rejects_mismatched_lengths():
    link = measure.LinkFit(latency=0.0, bus_bandwidth=1.0, devices=2)
    with pytest.raises(ValueError, match="same length, got 4, 4, 4, 3"):
        measure.held_out_split(link, 0.0, [1.0] * 4, [1.0, 2, 3, 4], [1.0, 2, 3, 4], [0, 1, 0])


def test_extrapolated_split_by_hand():
    # Cheap sizes (one-rank time below 2 ms): 0.5 and 1 ms, with shard times 0.35 and 0.6 ms. The line through
    # them, T_shard = s + T_whole / (K eta_inf), has slope 0.5 per ms and s = 0.1 ms, so eta_inf = 1 (K = 2).
    # A 2 MB message on a 1 GB/s bus link of 0.2 ms latency (K = 2: V = n): l + V / B = 0.2 + 2 = 2.2 ms.
    link = measure.LinkFit(latency=0.2 * ms, bus_bandwidth=1 * GB / s, devices=2)
    one = np.array([0.5, 1.0, 4.0, 8.0]) * ms
    shard = np.array([0.35, 0.6, 5.0, 9.0]) * ms  # the large sizes are far off the line: they must not matter
    result = measure.extrapolated_split(link, 2 * MB, one, one, shard)
    assert result.calibrated.tolist() == [True, True, False, False]
    assert result.fit.overhead == pytest.approx(0.1 * ms, rel=1e-9)
    assert result.fit.asymptote == pytest.approx(1.0, rel=1e-9)
    by_hand = np.array([0.1 + 0.25 + 2.2, 0.1 + 0.5 + 2.2, 0.1 + 2.0 + 2.2, 0.1 + 4.0 + 2.2]) * ms
    assert result.split_s == pytest.approx(by_hand, rel=1e-9)


@pytest.mark.parametrize(
    "kwargs, word",
    [({"cheap_s": 0.0}, "cheap_s"), ({"cheap_s": 0.6 * ms}, "cheap_s"), ({"calibrated": [True, False]}, "calibrated")],
)
def test_extrapolated_split_rejects_bad_input(kwargs, word):
    link = measure.LinkFit(latency=0.2 * ms, bus_bandwidth=1 * GB / s, devices=2)
    one = np.array([0.5, 1.0, 4.0, 8.0]) * ms
    with pytest.raises(ValueError, match=word):
        measure.extrapolated_split(link, 0.0, one, one, one / 2, **kwargs)


@given(st.lists(st.floats(0.5, 3.0), min_size=6, max_size=6), st.integers(0, 5))
@settings(max_examples=50, deadline=None)
def test_no_scored_point_enters_a_fit(factors, point):
    """Removing (here: scrambling) a scored point's timings leaves every prediction of the other points as it was.

    The folds' models never see their own fold; the extrapolation's model never sees a size at or beyond 2 ms.
    """
    link = measure.LinkFit(latency=0.2 * ms, bus_bandwidth=2 * GB / s, devices=2)
    one = np.array([0.5, 1, 1.5, 4, 8, 16]) * ms
    shard = 0.05 * ms + one / 1.8 * np.array([1.0, 1.1, 0.95, 1.05, 1.0, 0.9])
    folds = measure.alternate_folds(6)
    changed = shard.copy()
    changed[point] *= factors[point]
    base = measure.held_out_split(link, 128 * KB, one, one, shard, folds, constrain=True)
    moved = measure.held_out_split(link, 128 * KB, one, one, changed, folds, constrain=True)
    same = folds == folds[point]
    assert moved.split_s[same] == pytest.approx(base.split_s[same], rel=1e-12)
    assert moved.fits[folds[point]].asymptote == pytest.approx(base.fits[folds[point]].asymptote, rel=1e-12)
    base = measure.extrapolated_split(link, 128 * KB, one, one, shard, constrain=True)
    moved = measure.extrapolated_split(link, 128 * KB, one, one, changed, constrain=True)
    if not base.calibrated[point]:
        assert moved.split_s == pytest.approx(base.split_s, rel=1e-12)
        assert [moved.fit.overhead, moved.fit.asymptote] == pytest.approx(
            [base.fit.overhead, base.fit.asymptote], rel=1e-12
        )


def test_every_plan_can_be_cut_into_two_folds():
    from lib.measure import protocol

    for plan in protocol.PLANS.values():
        sizes = np.array(plan.hidden)
        assert sizes.size >= 4 and (np.diff(sizes) > 0).all(), plan.name
        assert len(measure.alternate_folds(sizes.size)) == sizes.size
