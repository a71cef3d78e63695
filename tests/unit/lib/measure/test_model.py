"""Tests of lib.measure: fits, predictions, and real ranks (no timing is asserted).

The distributed tests start real worker processes (gloo on 127.0.0.1), so
each takes a few seconds; they check numbers (the split equals the whole)
and clean endings (bad input refused, a failed, killed or hung rank ends
every process and leaves no child behind).
"""

from __future__ import annotations

import json
import math
import socket
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import psutil
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib import measure
from lib.budget import Phase
from lib.measure import launch, model, report
from lib.units import GB, KB, MB, ms, s, us
from tolerance import assert_json_close

SIZES = np.array([1 * KB, 16 * KB, 256 * KB, 4 * MB, 64 * MB])


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


@pytest.mark.parametrize("sizes, times, devices, word", [
    ([1 * KB], [1 * ms], 2, "at least two different sizes"),
    ([1 * KB, 2 * KB], [1 * ms], 2, "same length"),
    ([1 * KB, 2 * KB], [1 * ms, -1 * ms], 2, "seconds"),
    ([1 * KB, 2 * KB], [2 * ms, 1 * ms], 2, "grow"),
    ([1 * KB, 2 * KB], [1 * ms, 2 * ms], 1, "devices"),
    ([1 * KB, float("nan")], [1 * ms, 2 * ms], 2, "message_bytes"),
])
def test_fit_link_rejects_bad_input(sizes, times, devices, word):
    with pytest.raises(ValueError, match=word):
        measure.fit_link(sizes, times, devices=devices)


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
    phase = measure.predict_split(link, 128 * KB, one_s=[8 * ms, 16 * ms], efficiency=[0.8, 1.0],
                                  communication_s=measured)
    by_hand = np.array([8 * ms / (2 * 0.8), 16 * ms / 2]) + measured  # the fit's l and B play no part
    assert np.allclose(phase.split_time, by_hand, rtol=1e-12)
    with pytest.raises(ValueError, match="communication_s must be >= 0"):
        measure.predict_split(link, 0.0, one_s=1.0, efficiency=1.0, communication_s=-1.0)


def test_predict_split_caps_superlinear_efficiency():
    link = measure.LinkFit(latency=0.0, bus_bandwidth=1.0, devices=2)
    assert measure.predict_split(link, 0.0, one_s=1.0, efficiency=1.3).split_time == 0.5


@pytest.mark.parametrize("one, serial, word", [
    (1.0, 2.0, "serial_s must be <= one_s"),
    ([1.0, 4.0], [0.5, 5.0], "serial_s must be <= one_s, got serial_s 5.0 > one_s 4.0"),
    (float("inf"), 0.0, "one_s must be finite"),
    (1.0, float("inf"), "serial_s must be finite"),
])
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


@pytest.mark.parametrize("hidden, one, split, word", [
    ([100, 400, 200], [1.0, 1.0, 1.0], [2.0, 0.5, 0.5], "hidden must be 1 or more strictly increasing"),
    ([100, 100, 200], [1.0, 1.0, 1.0], [2.0, 0.5, 0.5], "hidden must be 1 or more strictly increasing"),
    ([], [], [], "hidden"),
    ([100, 200], [1.0], [2.0, 0.5], "same length, got 2, 1 and 2"),
    ([100, 200], [1.0, 1.0], [0.5], "same length, got 2, 2 and 1"),
])
def test_break_even_rejects_bad_sweeps(hidden, one, split, word):
    with pytest.raises(ValueError, match=word):
        measure.break_even_hidden(hidden, one, split)


def test_step_gap_counts_log_steps():
    assert model.step_gap([100, 200, 400, 800], 100, 800) == pytest.approx(3.0)
    assert model.step_gap([100, 200], None, 100) == math.inf
    assert model.step_gap([100, 200], 100, math.inf) == math.inf


@pytest.mark.parametrize("hidden, first, second, word", [
    ([100], 100, 100, "hidden must be 2 or more strictly increasing"),
    ([100, 100, 200], 100, 200, "hidden must be 2 or more strictly increasing"),
    ([200, 100], 100, 200, "hidden must be 2 or more strictly increasing"),
    ([100, 200], 0.0, 200, "first must be > 0"),
    ([100, 200], 100, -1.0, "second must be > 0"),
    ([100, 200], float("nan"), 200, "first must not be NaN"),
])
def test_step_gap_rejects_bad_input(hidden, first, second, word):
    with pytest.raises(ValueError, match=word):
        model.step_gap(hidden, first, second)


def _synthetic_raw(hidden, link, message, one_of, split_of, shard_of, rounds=3, link_sizes=SIZES):
    """A raw run whose every repetition equals the value the functions give (no noise)."""
    def stat(t):
        return {"median": t, "q1": t, "q3": t}

    raw = {"devices": 2, "message_bytes": message, "plan": {"name": "synthetic"}, "clock": "shared",
           "link": [{"message_bytes": n, "median_s": float(link.time(n)), "samples_s": [float(link.time(n))] * rounds}
                    for n in link_sizes],
           "matched": {"median_s": float(link.time(message))}, "points": []}
    for h in hidden:
        times = {"one": one_of(h), "split": split_of(h), "whole_calib": one_of(h), "shard_calib": shard_of(h),
                 "allreduce": float(link.time(message))}
        raw["points"].append({"hidden": h, **{name: stat(t) for name, t in times.items()}, "max_abs_error": 1e-7,
                              "samples_s": {name: [t] * rounds for name, t in times.items()}})
    return raw


def test_analyse_recovers_a_consistent_synthetic_run():
    # Data built from the model itself: both predictions must match it and agree on break-even.
    link = measure.LinkFit(latency=0.3 * ms, bus_bandwidth=2 * GB / s, devices=2)
    message = 128 * KB
    hidden = [64, 128, 256, 512, 1024, 2048]
    overhead, eta_inf = 20 * us, 0.9
    shard = lambda h: overhead + 10 * us * h / (2 * eta_inf)  # noqa: E731
    raw = _synthetic_raw(hidden, link, message, lambda h: 10 * us * h,
                         lambda h: shard(h) + float(link.time(message)), shard)
    result = report.analyse(raw, resamples=50)
    for point in result["sweep"]:
        assert point["predicted_split_s"] == pytest.approx(point["measured_split_s"], rel=1e-9)
        assert point["predicted_split_held_out_s"] == pytest.approx(point["measured_split_s"], rel=1e-9)
        assert point["efficiency"] == pytest.approx(10 * us * point["hidden"] / (2 * shard(point["hidden"])))
        low, high = point["split_ci_s"]
        assert low == high == point["measured_split_s"]  # no noise, no width
    for fit in result["held_out"]["fits"]:
        assert fit["overhead_s"] == pytest.approx(overhead, rel=1e-6)
        assert fit["asymptote"] == pytest.approx(eta_inf, rel=1e-9)
    summary = result["summary"]
    assert summary["break_even_step_gap"] == pytest.approx(0.0, abs=1e-9)
    assert summary["break_even_step_gap_held_out"] == pytest.approx(0.0, abs=1e-9)
    assert summary["median_abs_error_all"] == pytest.approx(0.0, abs=1e-9)
    assert summary["median_abs_error_held_out_all"] == pytest.approx(0.0, abs=1e-9)
    assert summary["break_even_measured_ci"][0] == pytest.approx(summary["break_even_measured_hidden"])
    assert result["schema"] == report.SCHEMA == 2
    json.dumps(result, allow_nan=False)  # strict JSON: no NaN or Infinity anywhere
    table = report.format_table(result)
    assert all(f"{h:>7}" in table for h in hidden)


def test_reanalyse_reproduces_a_stored_run():
    link = measure.LinkFit(latency=0.3 * ms, bus_bandwidth=2 * GB / s, devices=2)
    rng = np.random.default_rng(2)
    raw = _synthetic_raw([64, 128, 256, 512, 1024], link, 128 * KB, lambda h: 10 * us * h,
                         lambda h: 6 * us * h + 0.4 * ms, lambda h: 6 * us * h, rounds=9)
    for point in raw["points"]:  # some noise, and summaries that agree with the samples
        for step, values in point["samples_s"].items():
            point["samples_s"][step] = (np.array(values) * rng.uniform(0.9, 1.1, len(values))).tolist()
            point[step] = measure.summarize(point["samples_s"][step])
    first = report.analyse(raw, {"cpu": "test"}, resamples=30, seed=4)
    again = report.reanalyse(json.loads(json.dumps(first)))
    assert again["summary"] == first["summary"]
    assert again["machine"] == first["machine"] and again["bootstrap"] == first["bootstrap"]


COMMITTED_RUN = Path(__file__).resolve().parents[4] / "data" / "measure_cpu_gloo.json"


def _committed_parts(result: dict) -> dict:
    """The parts of a run that follow from its repetitions (the command and date do not)."""
    return {"summary": result["summary"], "sweep": result["sweep"], "machine": result["machine"],
            "held_out": result["held_out"], "fit": result["link"]["fit"], "bootstrap": result["bootstrap"]}


@pytest.fixture(scope="module")
def committed_run() -> tuple[dict, dict]:
    """The committed run as stored, and analysed again from its repetitions on this machine."""
    stored = json.loads(COMMITTED_RUN.read_text())
    return stored, json.loads(json.dumps(report.reanalyse(stored)))


@pytest.mark.stored
def test_the_committed_run_is_what_the_analysis_gives(committed_run):
    """Chapter 10 quotes data/measure_cpu_gloo.json: its every interval and prediction must follow from its samples.

    Floats are compared within tests/tolerance.py's relative 1e-9: the bootstrap's sums and the fits run
    through numpy's SIMD kernels, which round the last bits differently on another CPU. Integers, strings
    and the layout of the JSON compare exactly.
    """
    stored, again = committed_run
    assert_json_close(_committed_parts(again), _committed_parts(stored))
    assert stored["machine"]["clock"] == "shared"
    assert all(low <= high for low, high in (p["held_out_error_ci"] for p in stored["sweep"]))


def _perturbed(result: dict, change) -> dict:
    copy = json.loads(json.dumps(result))
    change(copy)
    return copy


@pytest.mark.stored
def test_the_committed_run_comparison_tolerates_rounding_and_nothing_more(committed_run):
    stored, again = committed_run
    parts = _committed_parts(again)

    def scale(factor):
        def change(result):
            result["summary"]["break_even_held_out_ci"][0] *= factor
        return change

    assert_json_close(_committed_parts(_perturbed(stored, scale(1 + 1e-14))), parts)   # last bits: the same
    for change in (scale(1 + 1e-6),                                                     # a real change
                   lambda r: r["summary"].__setitem__("points_over_threshold",
                                                      r["summary"]["points_over_threshold"] + 1),
                   lambda r: r["sweep"][0].__setitem__("hidden", r["sweep"][0]["hidden"] * 2),
                   lambda r: r["machine"].__setitem__("clock", "per-rank"),
                   lambda r: r["sweep"].pop()):
        with pytest.raises(AssertionError):
            assert_json_close(_committed_parts(_perturbed(stored, change)), parts)


def _noisy_raw(seed: int) -> dict:
    """A synthetic run with multiplicative noise of up to a factor 4, like a busy 2-core machine.

    The link is a 0.3 ms, 2 GB/s line timed at the live run's three sizes (4 KB, 1 MB, 8 MB); each
    repetition is stretched by a random factor, and in about one run in three each of the two smaller
    sizes has most repetitions stalled, so that it can come out above a larger one.
    """
    rng = np.random.default_rng(seed)
    link = measure.LinkFit(latency=0.3 * ms, bus_bandwidth=2 * GB / s, devices=2)
    raw = _synthetic_raw([64, 128, 256, 512], link, 128 * KB, lambda h: 10 * us * h,
                         lambda h: 6 * us * h + 0.4 * ms, lambda h: 6 * us * h, rounds=5,
                         link_sizes=[4 * KB, 1 * MB, 8 * MB])
    spread = rng.uniform(0.0, 3.0)
    for row in raw["link"]:
        stretch = 1 + spread * rng.exponential(1.0, len(row["samples_s"]))
        if row["message_bytes"] < 8 * MB and rng.uniform() < 0.35:
            stretch[rng.uniform(size=stretch.size) < 0.6] *= rng.uniform(5, 40)   # stalls: it waits for a core
        row["samples_s"] = (np.array(row["samples_s"]) * stretch).tolist()
        row["median_s"] = float(np.median(row["samples_s"]))
    for point in raw["points"]:
        for step, values in point["samples_s"].items():
            point["samples_s"][step] = (np.array(values) * (1 + spread * rng.exponential(0.3, len(values)))).tolist()
            point[step] = measure.summarize(point["samples_s"][step])
    return raw


def test_two_hundred_noisy_runs_never_fail_and_count_their_unphysical_resamples():
    unphysical_runs = constrained_runs = 0
    for seed in range(200):
        raw = _noisy_raw(seed)
        result = report.analyse(raw, resamples=40, seed=seed)
        counts = result["bootstrap"]["unphysical_fits"]
        assert set(counts) == {"link", "efficiency"}
        assert all(isinstance(n, int) and 0 <= n <= 40 for n in counts.values())
        json.dumps(result, allow_nan=False)
        fit = result["link"]["fit"]
        assert fit["constrained"] == (fit["bus_bandwidth_Bps"] is None)
        table = report.format_table(result)
        if fit["constrained"]:
            assert report.NOISY_LINK in table
        for kind, n in counts.items():
            if n:
                assert f"{n} of 40 bootstrap resamples drew {'link' if kind == 'link' else 'shard'} timings" in table
        assert all(np.isfinite(p["predicted_split_held_out_s"]) for p in result["sweep"])
        unphysical_runs += counts["link"] > 0
        constrained_runs += fit["constrained"]
    # The noise really reaches both cases: resamples that fail, and runs whose own medians do.
    assert unphysical_runs >= 20 and constrained_runs >= 5


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


def test_analyse_keeps_the_fields_readers_rely_on():
    link = measure.LinkFit(latency=0.3 * ms, bus_bandwidth=2 * GB / s, devices=2)
    raw = _synthetic_raw([64, 128, 256, 512], link, 128 * KB, lambda h: 10 * us * h, lambda h: 6 * us * h + 0.4 * ms,
                         lambda h: 6 * us * h)
    result = report.analyse(raw, resamples=10)
    for point in result["sweep"]:
        assert {"hidden", "measured_one_s", "measured_split_s", "predicted_split_s", "max_abs_error"} <= set(point)
    assert result["bootstrap"]["resamples"] == 10 and result["bootstrap"]["seed"] == 0


def test_a_held_out_break_even_never_reached_is_an_open_interval():
    # The split never wins: every resample puts the break-even beyond the sweep, written null.
    link = measure.LinkFit(latency=5 * ms, bus_bandwidth=2 * GB / s, devices=2)
    raw = _synthetic_raw([64, 128, 256, 512], link, 128 * KB, lambda h: 1 * us * h,
                         lambda h: 0.5 * us * h + float(link.time(128 * KB)), lambda h: 0.5 * us * h)
    summary = report.analyse(raw, resamples=10)["summary"]
    assert summary["break_even_measured_hidden"] is None
    assert summary["break_even_measured_ci"] == [None, None]
    assert report.format_interval(summary["break_even_measured_ci"]) == "beyond the sweep"


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


@pytest.mark.parametrize("values, level, word", [
    ([1.0, 2.0], 0.0, "level must be in"),
    ([1.0, 2.0], 1.01, "level must be in"),
    ([1.0, float("nan")], 0.9, "values must not be NaN"),
    ([], 0.9, "values must hold at least one value"),
])
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
    assert not np.array_equal(measure.bootstrap_medians(samples, 200, seed=7),
                              measure.bootstrap_medians(samples, 200, seed=8))
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


# --- held-out prediction --------------------------------------------------------------

@pytest.mark.parametrize("points, folds, expected", [
    (4, 2, [0, 1, 0, 1]),
    (5, 2, [0, 1, 0, 1, 0]),
    (6, 3, [0, 1, 2, 0, 1, 2]),
])
def test_alternate_folds_by_hand(points, folds, expected):
    assert measure.alternate_folds(points, folds).tolist() == expected


@pytest.mark.parametrize("points, folds, word", [
    (3, 2, "points must be >= 4"),
    (5, 3, "points must be >= 6"),
    (8, 1, "folds must be >= 2"),
    (4.5, 2, "points must be a whole number"),
])
def test_alternate_folds_rejects_bad_input(points, folds, word):
    with pytest.raises(ValueError, match=word):
        measure.alternate_folds(points, folds)


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


@pytest.mark.parametrize("whole, shard, devices, word", [
    ([1 * ms], [0.5 * ms], 2, "at least two different times"),
    ([1 * ms, 2 * ms], [0.5 * ms], 2, "same length"),
    ([1 * ms, 2 * ms], [0.9 * ms, 0.5 * ms], 2, "must grow"),
    ([1 * ms, -2 * ms], [0.5 * ms, 1 * ms], 2, "whole_s must be > 0"),
    ([1 * ms, 2 * ms], [0.5 * ms, 1 * ms], 0, "devices must be >= 1"),
])
def test_fit_efficiency_rejects_bad_input(whole, shard, devices, word):
    with pytest.raises(ValueError, match=word):
        measure.fit_efficiency(whole, shard, devices)


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
    result = measure.held_out_split(link, 100 * KB, one, one, one / 2, measure.alternate_folds(4), fast,
                                    [64, 128, 256, 512])
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
    shard = np.array([0.35, 0.6, 5.0, 9.0]) * ms     # the large sizes are far off the line: they must not matter
    result = measure.extrapolated_split(link, 2 * MB, one, one, shard)
    assert result.calibrated.tolist() == [True, True, False, False]
    assert result.fit.overhead == pytest.approx(0.1 * ms, rel=1e-9)
    assert result.fit.asymptote == pytest.approx(1.0, rel=1e-9)
    by_hand = np.array([0.1 + 0.25 + 2.2, 0.1 + 0.5 + 2.2, 0.1 + 2.0 + 2.2, 0.1 + 4.0 + 2.2]) * ms
    assert result.split_s == pytest.approx(by_hand, rel=1e-9)


@pytest.mark.parametrize("kwargs, word", [({"cheap_s": 0.0}, "cheap_s"), ({"cheap_s": 0.6 * ms}, "cheap_s"),
                                          ({"calibrated": [True, False]}, "calibrated")])
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
        assert [moved.fit.overhead, moved.fit.asymptote] == pytest.approx([base.fit.overhead, base.fit.asymptote],
                                                                          rel=1e-12)


def test_every_plan_can_be_cut_into_two_folds():
    from lib.measure import protocol

    for plan in protocol.PLANS.values():
        sizes = np.array(plan.hidden)
        assert sizes.size >= 4 and (np.diff(sizes) > 0).all(), plan.name
        assert len(measure.alternate_folds(sizes.size)) == sizes.size


# --- machine load ----------------------------------------------------------------------

def test_load_between_by_hand_and_without_psutil():
    from lib.measure.load import load_between

    first = {"wall_s": 10.0, "machine_busy_s": 100.0, "loadavg": [1.0, 1.0, 1.0]}
    last = {"wall_s": 14.0, "machine_busy_s": 106.0, "loadavg": [2.0, 1.0, 1.0]}
    load = load_between(first, last, ranks_cpu_s=4.0, cores=4)  # 6 busy s over 4 s; ranks 4 s
    assert (load["machine_busy_cores"], load["ranks_busy_cores"], load["other_busy_cores"]) == (1.5, 1.0, 0.5)
    assert load["cpu_percent"] == 37.5 and load["loadavg_end"] == [2.0, 1.0, 1.0]
    blind = load_between({"wall_s": 0.0, "machine_busy_s": None}, {"wall_s": 2.0, "machine_busy_s": None}, 1.0, 2)
    assert blind["other_busy_cores"] is None and blind["ranks_busy_cores"] == 0.5


def test_steal_and_clock_are_recorded_between_snapshots():
    from lib.measure.load import combine_loads, load_between, snapshot

    first = {"wall_s": 0.0, "machine_busy_s": 10.0, "steal_s": 1.0, "cpu_mhz": 2600.0}
    last = {"wall_s": 4.0, "machine_busy_s": 14.0, "steal_s": 3.0, "cpu_mhz": 2400.0}
    load = load_between(first, last, ranks_cpu_s=2.0, cores=2)   # 2 s stolen over 4 s: half a core
    assert load["steal_cores"] == 0.5 and load["cpu_mhz_end"] == 2400.0
    assert load_between({"wall_s": 0.0}, {"wall_s": 1.0}, 0.0, 2)["steal_cores"] is None
    quiet = dict(load, wall_s=4.0, steal_cores=0.0)
    assert combine_loads([load, quiet])["steal_cores"] == 0.25
    now = snapshot()
    assert now["steal_s"] is None or now["steal_s"] >= 0
    assert now["cpu_mhz"] is None or now["cpu_mhz"] > 0


def test_the_machine_description_records_the_cpu_topology():
    from lib.measure.protocol import TOPOLOGY_FIELDS, machine_description

    description = machine_description("gloo", 2, 1)
    assert set(description["topology"]) <= set(TOPOLOGY_FIELDS)
    if shutil.which("lscpu"):
        assert {"Socket(s)", "Core(s) per socket", "Thread(s) per core"} <= set(description["topology"])


# --- launcher: bad input --------------------------------------------------------

def test_one_device_is_refused_naming_devices():
    with pytest.raises(ValueError, match="devices"):
        measure.run(devices=1)


def test_more_devices_than_cores_is_refused_naming_devices():
    too_many = launch.available_cores() + 1
    with pytest.raises(ValueError, match="devices must be <="):
        launch.resolve_backend(too_many, "gloo")


@pytest.mark.parametrize("devices", ["1", str(launch.available_cores() + 1)])
def test_cli_refuses_bad_devices(tmp_path, devices):
    done = subprocess.run([sys.executable, "-m", "lib.measure", "--devices", devices, "--backend", "gloo",
                           "--json", str(tmp_path / "out.json")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "devices" in done.stderr
    assert not (tmp_path / "out.json").exists()


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="backend"):
        launch.resolve_backend(2, "mpi", cores=2, gpus=0)


# --- launcher: real ranks ---------------------------------------------------------

def _children() -> set[int]:
    return {child.pid for child in psutil.Process().children(recursive=True)}


def test_split_mlp_equals_whole_on_two_ranks():
    before = _children()
    result = measure.check_split(devices=2, hidden=64, backend="gloo", timeout=120)
    assert result["devices"] == 2 and result["shape"] == [4, 16]
    assert result["max_abs_error"] < 1e-5
    assert _children() <= before


@pytest.mark.parametrize("mode", ["kill", "exit"])
def test_failed_rank_ends_every_process(mode):
    before = _children()
    with pytest.raises(measure.MeasureError, match="rank 1 of 2"):
        measure.check_split(devices=2, backend="gloo", timeout=120, fault={"rank": 1, "mode": mode})
    survivors = _children() - before
    assert not survivors, f"orphan processes: {survivors}"


def test_a_taken_port_is_retried_once_on_a_fresh_one(monkeypatch):
    # Another program listens on the first port handed out, as if it grabbed it after free_port().
    before = _children()
    ports = []
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        fresh = launch.free_port

        def handed_out() -> int:
            ports.append(taken if not ports else fresh())
            return ports[-1]

        monkeypatch.setattr(launch, "free_port", handed_out)
        result = measure.check_split(devices=2, hidden=64, backend="gloo", timeout=120)
    assert result["max_abs_error"] < 1e-5
    assert len(ports) == 2 and ports[0] == taken != ports[1]
    assert _children() <= before


def test_a_port_taken_twice_fails_with_the_ranks_error(monkeypatch):
    before = _children()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        monkeypatch.setattr(launch, "free_port", lambda: squatter.getsockname()[1])
        with pytest.raises(measure.MeasureError, match="rank 0 of 2"):
            measure.check_split(devices=2, backend="gloo", timeout=120)
    assert _children() <= before


def test_hung_rank_ends_every_process_after_the_timeout():
    before = _children()
    with pytest.raises(measure.MeasureError, match="timeout"):
        measure.check_split(devices=2, backend="gloo", timeout=15, fault={"rank": 1, "mode": "hang"})
    survivors = _children() - before
    assert not survivors, f"orphan processes: {survivors}"
