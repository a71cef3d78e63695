"""Tests for lib.budget (the time budget of chapter 2) and the units it uses.

Expected values are derived by hand in the comments, from the formulas
T1 = S + C, H = Q (l + V / B), T2 = S + C / (K eta) + H, not copied from
the code's own output.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import phase_strategies
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from lib import units
from lib.budget import Phase
from lib.experiment import BASE
from lib.units import GB, MB, Gbit, GiB, ms, s

FIELDS = ["serial", "divisible", "efficiency", "transfers", "startup", "transfer_bytes", "bandwidth", "devices"]


def base_phase(**changes):
    values = dict(
        serial=0.8 * ms,
        divisible=12 * ms,
        efficiency=0.8,
        transfers=4,
        startup=0.03 * ms,
        transfer_bytes=2 * MB,
        bandwidth=10 * GB / s,
        devices=2,
    )
    values.update(changes)
    return Phase(**values)


# --- units ---------------------------------------------------------------


def test_units_are_si_multiples():
    assert units.s == 1 and ms == 1e-3 and units.us == 1e-6 and units.ns == 1e-9
    assert MB == 10**6 and GB == 10**9 and units.TB == 10**12
    assert GiB == 2**30 and units.MiB == 2**20 and units.KiB == 1024
    assert Gbit == pytest.approx(GB / 8)


def test_transfer_time_in_three_kinds_of_gigabyte():
    # 2e6 bytes at 1e10 bytes/s = 2e-4 s; a GiB is 1.073741824 GB; a Gbit is GB / 8.
    assert 2 * MB / (10 * GB / s) == pytest.approx(0.2 * ms)
    assert 2 * MB / (10 * GiB / s) == pytest.approx(0.2 * ms / 1.073741824)
    assert 2 * MB / (10 * Gbit / s) == pytest.approx(1.6 * ms)


# --- the base case of chapter 2 ---------------------------------------------


def test_experiment_base_is_the_chapter_base_case():
    assert BASE == base_phase()


def test_base_case_numbers():
    phase = base_phase()
    # H = 4 * (0.03 + 0.2) ms = 0.92 ms; C / (K eta) = 12 / 1.6 = 7.5 ms.
    assert phase.communication_time == pytest.approx(0.92 * ms)
    assert phase.split_compute_time == pytest.approx(7.5 * ms)
    assert phase.one_device_time == pytest.approx(12.8 * ms)
    # T2 = 0.8 + 7.5 + 0.92 = 9.22 ms.
    assert phase.split_time == pytest.approx(9.22 * ms)
    assert phase.speedup == pytest.approx(12.8 / 9.22)
    assert round(phase.speedup, 3) == 1.388
    assert round(phase.parallel_efficiency, 3) == 0.694
    # Overlap bound: 0.8 + max(7.5, 0.92) = 8.3 ms.
    assert phase.overlap_bound == pytest.approx(8.3 * ms)


def test_long_serial_case():
    # S = 100 ms: T1 = 112 ms, T2 = 100 + 7.5 + 0.92 = 108.42 ms.
    phase = base_phase(serial=100 * ms)
    assert phase.one_device_time == pytest.approx(112 * ms)
    assert phase.split_time == pytest.approx(108.42 * ms)
    assert round(phase.speedup, 3) == 1.033


def test_results_are_plain_floats_for_scalar_inputs():
    phase = base_phase()
    for name in [
        "one_device_time",
        "split_compute_time",
        "communication_time",
        "split_time",
        "speedup",
        "parallel_efficiency",
        "overlap_bound",
    ]:
        assert type(getattr(phase, name)) is float, name


def test_phase_is_frozen_and_with_revalidates():
    phase = base_phase()
    with pytest.raises(dataclasses.FrozenInstanceError):
        phase.serial = 1.0
    assert phase.with_(devices=4).devices == 4
    with pytest.raises(ValueError, match="devices"):
        phase.with_(devices=0)


def test_one_device_without_communication_is_no_split():
    phase = base_phase(devices=1, efficiency=1.0, transfers=0)
    assert phase.split_time == pytest.approx(phase.one_device_time)
    assert phase.speedup == pytest.approx(1.0)


def test_infinite_bandwidth_leaves_startups():
    # Only the four startups remain: 4 * 0.03 ms.
    assert base_phase(bandwidth=math.inf).communication_time == pytest.approx(0.12 * ms)


def test_speedup_undefined_when_nothing_takes_time():
    with pytest.raises(ValueError, match="split_time is 0"):
        Phase(serial=0.0, divisible=0.0).speedup  # noqa: B018 (the property raises)


# --- properties -------------------------------------------------------------

times = phase_strategies.zero_or_between(0.0, 10.0, phase_strategies.SHORTEST_TIME)
efficiencies = st.floats(0.01, 1.0)
counts = st.integers(0, 64)
device_counts = st.integers(1, 64)
sizes = phase_strategies.zero_or_between(0.0, 1e10, phase_strategies.SMALLEST_MESSAGE)
bandwidths = st.floats(1e3, 1e13)


@st.composite
def phases(draw):
    return Phase(
        serial=draw(times),
        divisible=draw(times),
        efficiency=draw(efficiencies),
        transfers=draw(counts),
        startup=draw(times),
        transfer_bytes=draw(sizes),
        bandwidth=draw(bandwidths),
        devices=draw(device_counts),
    )


@settings(deadline=None, max_examples=300)
@given(phases())
def test_budget_identities(phase):
    S, C, eta = phase.serial, phase.divisible, phase.efficiency
    Q, l, V, B, K = phase.transfers, phase.startup, phase.transfer_bytes, phase.bandwidth, phase.devices  # noqa: E741 (the book's l)
    assert phase.one_device_time == pytest.approx(S + C)
    assert phase.split_compute_time == pytest.approx(C / (K * eta))
    assert phase.communication_time == pytest.approx(Q * (l + V / B))
    split = S + C / (K * eta) + Q * (l + V / B)
    assert phase.split_time == pytest.approx(split)
    assume(split > 0)
    assert phase.speedup == pytest.approx((S + C) / split)
    assert phase.parallel_efficiency == pytest.approx((S + C) / (K * split))


@settings(deadline=None, max_examples=300)
@given(phases())
def test_speedup_never_beats_k_eta_or_one(phase):
    # T1 / T2 <= (S + C) / (S + C / (K eta)) <= max(1, K eta).
    assume(phase.split_time > 0)
    limit = max(1.0, phase.devices * phase.efficiency)
    assert phase.speedup <= limit * (1 + 1e-12)


@settings(deadline=None, max_examples=300)
@given(phases())
def test_overlap_bound_lies_between_half_and_whole_split(phase):
    # S + max(a, b) <= S + a + b and S + max(a, b) >= S + (a + b) / 2.
    assert phase.overlap_bound <= phase.split_time * (1 + 1e-12)
    assert phase.overlap_bound >= (phase.split_time + phase.serial) / 2 * (1 - 1e-12)


@settings(deadline=None, max_examples=200)
@given(phases(), st.floats(1.0, 100.0))
def test_more_bandwidth_never_slows_the_split(phase, factor):
    faster = phase.with_(bandwidth=phase.bandwidth * factor)
    assert faster.split_time <= phase.split_time * (1 + 1e-12)
    assert faster.one_device_time == phase.one_device_time


@settings(deadline=None, max_examples=200)
@given(phases(), st.integers(1, 10))
def test_more_transfers_never_speed_the_split(phase, extra):
    assert phase.with_(transfers=phase.transfers + extra).split_time >= phase.split_time


@settings(deadline=None, max_examples=100)
@given(
    st.lists(
        st.tuples(times, times, efficiencies, counts, times, sizes, bandwidths, device_counts), min_size=1, max_size=8
    )
)
def test_arrays_broadcast_like_scalars_elementwise(rows):
    columns = [np.array(column) for column in zip(*rows)]
    swept = Phase(*columns)
    for i, row in enumerate(rows):
        single = Phase(*row)
        for name in ["one_device_time", "split_compute_time", "communication_time", "split_time", "overlap_bound"]:
            assert np.asarray(getattr(swept, name))[i] == pytest.approx(getattr(single, name)), name


def test_scalar_and_array_fields_broadcast_together():
    K = np.arange(1, 9)
    swept = base_phase(devices=K)
    assert swept.split_time.shape == (8,)
    for k, t2 in zip(K, swept.split_time):
        assert t2 == pytest.approx(base_phase(devices=int(k)).split_time)
    grid = base_phase(divisible=np.array([[1.0], [12.0]]) * ms, bandwidth=np.array([1, 10, 50]) * GB / s)
    assert grid.split_time.shape == (2, 3)
    # Slow link at C = 12 ms: H = 4 (0.03 + 2) = 8.12 ms, T2 = 0.8 + 7.5 + 8.12 = 16.42 ms.
    assert grid.split_time[1, 0] == pytest.approx(16.42 * ms)


PROPERTIES = [
    "one_device_time",
    "split_compute_time",
    "communication_time",
    "split_time",
    "speedup",
    "parallel_efficiency",
    "overlap_bound",
]


@pytest.mark.parametrize("field", FIELDS)
def test_every_property_has_the_shape_of_the_whole_sweep(field):
    # A sweep over any one field gives one value per point, even from a formula
    # that leaves that field out (H does not depend on C, T1 not on K).
    values = {"transfers": [1, 4, 9], "devices": [1, 2, 8], "efficiency": [0.5, 0.8, 1.0]}
    if field in values:
        sweep = np.array(values[field])
    else:
        sweep = np.array([0.5, 1.0, 2.0]) * getattr(BASE, field)
    swept = BASE.with_(**{field: sweep})
    assert swept.shape == (3,)
    for name in PROPERTIES:
        result = getattr(swept, name)
        assert np.shape(result) == (3,), name
        for i in range(3):
            assert result[i] == pytest.approx(getattr(BASE.with_(**{field: sweep[i]}), name)), name


def test_array_is_the_field_over_the_whole_sweep():
    grid = BASE.with_(divisible=np.array([[1.0], [12.0]]) * ms, bandwidth=np.array([1, 10, 50]) * GB / s)
    assert grid.shape == (2, 3)
    assert grid.array("serial").shape == (2, 3)
    assert (grid.array("serial") == 0.8 * ms).all()
    assert (grid.array("bandwidth")[1] == np.array([1, 10, 50]) * GB / s).all()
    assert BASE.shape == () and BASE.array("transfers") == 4.0
    assert isinstance(BASE.communication_time, float)


# --- bad input ----------------------------------------------------------------

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    "field, value",
    [
        ("serial", -1 * ms),
        ("serial", NAN),
        ("serial", INF),
        ("divisible", -1e-9),
        ("divisible", NAN),
        ("divisible", INF),
        ("efficiency", 0.0),
        ("efficiency", 1.01),
        ("efficiency", -0.5),
        ("efficiency", NAN),
        ("efficiency", INF),
        ("transfers", -1),
        ("transfers", 1.5),
        ("transfers", NAN),
        ("transfers", INF),
        ("startup", -0.03 * ms),
        ("startup", NAN),
        ("startup", INF),
        ("transfer_bytes", -1.0),
        ("transfer_bytes", NAN),
        ("transfer_bytes", INF),
        ("bandwidth", 0.0),
        ("bandwidth", -10 * GB / s),
        ("bandwidth", NAN),
        ("devices", 0),
        ("devices", -2),
        ("devices", 1.5),
        ("devices", NAN),
        ("devices", INF),
        ("serial", "fast"),
    ],
)
def test_bad_values_raise_naming_the_parameter(field, value):
    with pytest.raises(ValueError, match=f"^{field} "):
        base_phase(**{field: value})


@pytest.mark.parametrize(
    "field, values",
    [
        ("devices", [2, 0, 4]),
        ("efficiency", [0.8, 1.2]),
        ("bandwidth", [10 * GB / s, 0.0]),
        ("serial", [0.0, NAN]),
        ("transfers", [4, 2.5]),
    ],
)
def test_one_bad_element_in_an_array_is_enough(field, values):
    with pytest.raises(ValueError, match=f"^{field} "):
        base_phase(**{field: np.array(values)})


def test_error_message_shows_the_value():
    with pytest.raises(ValueError, match=r"efficiency must be in \(0, 1\], got 1.5"):
        base_phase(efficiency=1.5)
    with pytest.raises(ValueError, match="devices must be >= 1, got 0"):
        base_phase(devices=0)


def test_all_fields_are_checked():
    assert [f.name for f in dataclasses.fields(Phase)] == FIELDS
