"""Tests for lib.measure.report: analyse and reanalyse a run, the committed run, the table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from measure_support import SIZES
from tolerance import assert_json_close

from lib import measure
from lib.measure import report
from lib.units import GB, KB, MB, ms, s, us


def _synthetic_raw(hidden, link, message, one_of, split_of, shard_of, rounds=3, link_sizes=SIZES):
    """A raw run whose every repetition equals the value the functions give (no noise)."""

    def stat(t):
        return {"median": t, "q1": t, "q3": t}

    raw = {
        "devices": 2,
        "message_bytes": message,
        "plan": {"name": "synthetic"},
        "clock": "shared",
        "link": [
            {"message_bytes": n, "median_s": float(link.time(n)), "samples_s": [float(link.time(n))] * rounds}
            for n in link_sizes
        ],
        "matched": {"median_s": float(link.time(message))},
        "points": [],
    }
    for h in hidden:
        times = {
            "one": one_of(h),
            "split": split_of(h),
            "whole_calib": one_of(h),
            "shard_calib": shard_of(h),
            "allreduce": float(link.time(message)),
        }
        raw["points"].append(
            {
                "hidden": h,
                **{name: stat(t) for name, t in times.items()},
                "max_abs_error": 1e-7,
                "samples_s": {name: [t] * rounds for name, t in times.items()},
            }
        )
    return raw


def test_analyse_recovers_a_consistent_synthetic_run():
    # Data built from the model itself: both predictions must match it and agree on break-even.
    link = measure.LinkFit(latency=0.3 * ms, bus_bandwidth=2 * GB / s, devices=2)
    message = 128 * KB
    hidden = [64, 128, 256, 512, 1024, 2048]
    overhead, eta_inf = 20 * us, 0.9
    shard = lambda h: overhead + 10 * us * h / (2 * eta_inf)  # noqa: E731
    raw = _synthetic_raw(
        hidden, link, message, lambda h: 10 * us * h, lambda h: shard(h) + float(link.time(message)), shard
    )
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
    raw = _synthetic_raw(
        [64, 128, 256, 512, 1024],
        link,
        128 * KB,
        lambda h: 10 * us * h,
        lambda h: 6 * us * h + 0.4 * ms,
        lambda h: 6 * us * h,
        rounds=9,
    )
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
    return {
        "summary": result["summary"],
        "sweep": result["sweep"],
        "machine": result["machine"],
        "held_out": result["held_out"],
        "fit": result["link"]["fit"],
        "bootstrap": result["bootstrap"],
    }


@pytest.fixture(scope="module")
def committed_run() -> tuple[dict, dict]:
    """The committed run as stored, and analysed again from its repetitions on this machine."""
    stored = json.loads(COMMITTED_RUN.read_text())
    return stored, json.loads(json.dumps(report.reanalyse(stored)))


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.stored
def test_the_committed_run_comparison_tolerates_rounding_and_nothing_more(committed_run):
    stored, again = committed_run
    parts = _committed_parts(again)

    def scale(factor):
        def change(result):
            result["summary"]["break_even_held_out_ci"][0] *= factor

        return change

    assert_json_close(_committed_parts(_perturbed(stored, scale(1 + 1e-14))), parts)  # last bits: the same
    for change in (
        scale(1 + 1e-6),  # a real change
        lambda r: r["summary"].__setitem__("points_over_threshold", r["summary"]["points_over_threshold"] + 1),
        lambda r: r["sweep"][0].__setitem__("hidden", r["sweep"][0]["hidden"] * 2),
        lambda r: r["machine"].__setitem__("clock", "per-rank"),
        lambda r: r["sweep"].pop(),
    ):
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
    raw = _synthetic_raw(
        [64, 128, 256, 512],
        link,
        128 * KB,
        lambda h: 10 * us * h,
        lambda h: 6 * us * h + 0.4 * ms,
        lambda h: 6 * us * h,
        rounds=5,
        link_sizes=[4 * KB, 1 * MB, 8 * MB],
    )
    spread = rng.uniform(0.0, 3.0)
    for row in raw["link"]:
        stretch = 1 + spread * rng.exponential(1.0, len(row["samples_s"]))
        if row["message_bytes"] < 8 * MB and rng.uniform() < 0.35:
            stretch[rng.uniform(size=stretch.size) < 0.6] *= rng.uniform(5, 40)  # stalls: it waits for a core
        row["samples_s"] = (np.array(row["samples_s"]) * stretch).tolist()
        row["median_s"] = float(np.median(row["samples_s"]))
    for point in raw["points"]:
        for step, values in point["samples_s"].items():
            point["samples_s"][step] = (np.array(values) * (1 + spread * rng.exponential(0.3, len(values)))).tolist()
            point[step] = measure.summarize(point["samples_s"][step])
    return raw


@pytest.mark.slow
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


def test_analyse_keeps_the_fields_readers_rely_on():
    link = measure.LinkFit(latency=0.3 * ms, bus_bandwidth=2 * GB / s, devices=2)
    raw = _synthetic_raw(
        [64, 128, 256, 512],
        link,
        128 * KB,
        lambda h: 10 * us * h,
        lambda h: 6 * us * h + 0.4 * ms,
        lambda h: 6 * us * h,
    )
    result = report.analyse(raw, resamples=10)
    for point in result["sweep"]:
        assert {"hidden", "measured_one_s", "measured_split_s", "predicted_split_s", "max_abs_error"} <= set(point)
    assert result["bootstrap"]["resamples"] == 10 and result["bootstrap"]["seed"] == 0


def test_a_held_out_break_even_never_reached_is_an_open_interval():
    # The split never wins: every resample puts the break-even beyond the sweep, written null.
    link = measure.LinkFit(latency=5 * ms, bus_bandwidth=2 * GB / s, devices=2)
    raw = _synthetic_raw(
        [64, 128, 256, 512],
        link,
        128 * KB,
        lambda h: 1 * us * h,
        lambda h: 0.5 * us * h + float(link.time(128 * KB)),
        lambda h: 0.5 * us * h,
    )
    summary = report.analyse(raw, resamples=10)["summary"]
    assert summary["break_even_measured_hidden"] is None
    assert summary["break_even_measured_ci"] == [None, None]
    assert report.format_interval(summary["break_even_measured_ci"]) == "beyond the sweep"
