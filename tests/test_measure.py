"""Tests of lib.measure: fits, predictions, and real ranks (no timing is asserted).

The distributed tests start real worker processes (gloo on 127.0.0.1), so
each takes a few seconds; they check numbers (the split equals the whole)
and clean endings (bad input refused, a failed, killed or hung rank ends
every process and leaves no child behind).
"""

from __future__ import annotations

import math
import socket
import subprocess
import sys

import numpy as np
import psutil
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib import measure
from lib.budget import Phase
from lib.measure import launch, model, report
from lib.units import GB, KB, MB, ms, s, us

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


def test_analyse_recovers_a_consistent_synthetic_run():
    # Data built from the model itself: the prediction must match it and agree on break-even.
    link = measure.LinkFit(latency=0.3 * ms, bus_bandwidth=2 * GB / s, devices=2)
    message = 128 * KB
    hidden = [64, 128, 256, 512, 1024, 2048]
    raw = {"devices": 2, "message_bytes": message, "plan": {"name": "synthetic"},
           "link": [{"message_bytes": n, "median_s": float(link.time(n))} for n in SIZES],
           "matched": {"median_s": float(link.time(message))}, "points": []}
    for h in hidden:
        one = 10 * us * h
        two = one / (2 * 0.9) + float(link.time(message))
        stat = lambda t: {"median": t, "q1": t, "q3": t}  # noqa: E731
        raw["points"].append({"hidden": h, "one": stat(one), "split": stat(two), "whole_calib": stat(one),
                              "shard_calib": stat(one / (2 * 0.9)), "max_abs_error": 1e-7})
    result = report.analyse(raw)
    for point in result["sweep"]:
        assert point["predicted_split_s"] == pytest.approx(point["measured_split_s"], rel=1e-9)
        assert point["efficiency"] == pytest.approx(0.9)
    summary = result["summary"]
    assert summary["break_even_step_gap"] == pytest.approx(0.0, abs=1e-9)
    assert summary["median_abs_error_all"] == pytest.approx(0.0, abs=1e-9)
    table = report.format_table(result)
    assert all(f"{h:>7}" in table for h in hidden)


def test_summarize_median_ignores_a_tail_the_mean_does_not():
    summary = measure.summarize([1.0] * 9 + [100.0])
    assert summary["median"] == 1.0 and summary["mean"] > 10


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
