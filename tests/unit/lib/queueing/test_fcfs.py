"""Tests for lib.queueing.fcfs: first-come first-served queues, conservation, determinism and M/M/c results."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from queueing_support import most_at_once

from lib import queueing


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 400),
    st.floats(0.1, 100.0),
    st.floats(0.001, 1.0),
    st.integers(0, 2**31),
    st.floats(0.0, 3.0),
    st.integers(1, 4),
    st.floats(0.5, 4.0),
)
def test_every_request_is_served_once(count, rate, mean_work, seed, cv, servers, speedup):
    reqs = queueing.poisson_requests(count, rate, mean_work, seed=seed, cv=cv)
    out = queueing.serve(reqs, servers=servers, speedup=speedup)
    assert out.completed == len(reqs) == count
    assert np.all(out.starts >= out.arrivals)
    assert np.allclose(out.finishes - out.starts, reqs.work / speedup)
    # First come, first served: service starts in arrival order.
    assert np.all(np.diff(out.starts) >= 0)
    # Never more than `servers` requests in service at once.
    assert most_at_once(out.starts, out.finishes) <= servers


def test_seeded_streams_repeat():
    a = queueing.poisson_requests(100, 5.0, 0.1, seed=4)
    b = queueing.poisson_requests(100, 5.0, 0.1, seed=4)
    c = queueing.poisson_requests(100, 5.0, 0.1, seed=5)
    assert np.array_equal(a.arrivals, b.arrivals) and np.array_equal(a.work, b.work)
    assert not np.array_equal(a.arrivals, c.arrivals)
    assert queueing.serve(a, 2).p99_response == queueing.serve(b, 2).p99_response


def test_mm1_matches_theory():
    # M/M/1: response time is exponential with rate mu - lambda (Harchol-Balter 2013, ch. 13).
    lam, mean_work, speedup = 30.0, 0.02, 1.6
    mu = speedup / mean_work
    out = queueing.serve(queueing.poisson_requests(200_000, lam, mean_work, seed=11), servers=1, speedup=speedup)
    assert math.isclose(out.mean_response, 1 / (mu - lam), rel_tol=0.05)
    assert math.isclose(out.p99_response, math.log(100) / (mu - lam), rel_tol=0.08)
    assert math.isclose(out.utilisation, lam / mu, rel_tol=0.03)


def test_mm2_matches_theory():
    # M/M/2: mean response 1 / (mu (1 - rho^2)) with rho = lambda / (2 mu).
    lam, mean_work = 70.0, 0.02
    mu = 1 / mean_work
    rho = lam / (2 * mu)
    out = queueing.serve(queueing.poisson_requests(200_000, lam, mean_work, seed=12), servers=2)
    assert math.isclose(out.mean_response, 1 / (mu * (1 - rho**2)), rel_tol=0.05)


def test_empty_system_response_is_the_service_time():
    reqs = queueing.Requests(np.array([0.0, 10.0, 20.0]), np.array([1.0, 2.0, 3.0]))
    assert queueing.serve(reqs, 1, speedup=2.0).response.tolist() == [0.5, 1.0, 1.5]


def test_gamma_work_has_requested_mean_and_spread():
    reqs = queueing.poisson_requests(100_000, 1.0, 0.5, seed=2, cv=2.0)
    assert math.isclose(reqs.work.mean(), 0.5, rel_tol=0.03)
    assert math.isclose(reqs.work.std() / reqs.work.mean(), 2.0, rel_tol=0.05)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: queueing.poisson_requests(0, 1.0, 1.0), "count"),
        (lambda: queueing.poisson_requests(2.5, 1.0, 1.0), "count"),
        (lambda: queueing.poisson_requests(10, -1.0, 1.0), "rate"),
        (lambda: queueing.poisson_requests(10, 1.0, 0.0), "mean_work"),
        (lambda: queueing.poisson_requests(10, 1.0, 1.0, cv=-1), "cv"),
        (lambda: queueing.serve(queueing.poisson_requests(3, 1.0, 1.0), servers=0), "servers"),
        (lambda: queueing.serve(queueing.poisson_requests(3, 1.0, 1.0), speedup=0), "speedup"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: queueing.poisson_requests([5, 10], 1.0, 1.0), "count"),
        (lambda: queueing.poisson_requests(10, [1.0, 2.0], 1.0), "rate"),
        (lambda: queueing.serve(queueing.poisson_requests(3, 1.0, 1.0), servers=[1, 2]), "servers"),
        (lambda: queueing.serve(queueing.poisson_requests(3, 1.0, 1.0), speedup=[1.0, 2.0]), "speedup"),
    ],
)
def test_sweeps_are_refused_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"{name} must be a scalar .*not an array"):
        call()


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: queueing.poisson_requests(10, math.inf, 1.0), "rate"),
        (lambda: queueing.poisson_requests(10, 1.0, math.inf), "mean_work"),
        (lambda: queueing.serve(queueing.poisson_requests(3, 1.0, 1.0), speedup=math.inf), "speedup"),
    ],
)
def test_infinite_rates_and_speedups_are_refused(call, name):
    with pytest.raises(ValueError, match=rf"{name} must be finite, got inf"):
        call()


@pytest.mark.parametrize(
    "arrivals,work,match",
    [
        ([0.0, 1.0, 2.0], [1.0, 1.0], r"arrivals and work must have the same length, got 3 arrivals and 2"),
        ([0.0, 1.0], [1.0, float("nan")], r"work must not be NaN"),
        ([0.0, float("nan")], [1.0, 1.0], r"arrivals must not be NaN"),
        ([0.0, math.inf], [1.0, 1.0], r"arrivals must be finite, got inf at index 1"),
        ([0.0, 1.0], [1.0, math.inf], r"work must be finite, got inf at index 1"),
        ([0.0, 1.0], [1.0, -0.5], r"work must be >= 0, got -0.5 at index 1"),
        ([0.0, 2.0, 1.0], [1.0, 1.0, 1.0], r"arrivals must be non-decreasing \(sorted\), got 1.0 at index 2"),
        ([[0.0, 1.0]], [[1.0, 1.0]], r"arrivals must be a 1-D array, got shape \(1, 2\)"),
        (0.0, [1.0], r"arrivals must be a 1-D array, got shape \(\)"),
        ([], [], r"arrivals must hold at least one request"),
        (["soon"], [1.0], r"arrivals must be a number"),
    ],
)
def test_bad_requests_name_the_field_and_value(arrivals, work, match):
    with pytest.raises(ValueError, match=match):
        queueing.Requests(arrivals, work)


def test_requests_store_float_arrays_and_accept_ties():
    # Two requests arriving at the same instant are in order; lists become float arrays.
    reqs = queueing.Requests([0, 0, 3], [1, 0, 2])
    assert reqs.arrivals.dtype == float and reqs.work.dtype == float
    # One server: 0 -> 1, the empty request at 1, then the third arrives at 3 and ends at 5.
    assert queueing.serve(reqs).finishes.tolist() == [1.0, 1.0, 5.0]
