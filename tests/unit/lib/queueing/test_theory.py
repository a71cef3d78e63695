"""Tests for lib.queueing.theory: the M/M/c closed forms, their crossovers and the root finder."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib import queueing

# --- closed forms (lib.queueing.theory) ------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.floats(0.05, 0.95), st.floats(0.1, 100.0))
def test_erlang_c_is_a_probability_and_one_server_gives_the_load(servers, rho, mu):
    rate = rho * servers * mu
    waits = queueing.erlang_c(servers, rate, mu)
    assert 0 < waits < 1
    if servers == 1:
        assert math.isclose(waits, rho, rel_tol=1e-12)
    if servers == 2:
        assert math.isclose(waits, 2 * rho**2 / (1 + rho), rel_tol=1e-12)
    # More servers at the same load: an arrival is less likely to wait.
    assert queueing.erlang_c(servers + 1, rho * (servers + 1) * mu, mu) < waits


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5), st.floats(0.05, 0.95), st.floats(0.1, 100.0), st.floats(0.5, 0.999))
def test_quantile_inverts_the_survival_and_the_mean_is_its_integral(servers, rho, mu, p):
    rate = rho * servers * mu
    t = queueing.mmc_response_quantile(p, servers, rate, mu)
    assert math.isclose(queueing.mmc_response_survival(t, servers, rate, mu), 1 - p, rel_tol=1e-9, abs_tol=1e-12)
    # The mean is the integral of the survival function (trapezoids on a fine grid).
    grid = np.linspace(0, queueing.mmc_response_quantile(0.999999, servers, rate, mu), 20_001)
    integral = np.trapezoid(queueing.mmc_response_survival(grid, servers, rate, mu), grid)
    assert math.isclose(integral, queueing.mmc_mean_response(servers, rate, mu), rel_tol=2e-3)


def test_one_server_response_is_exponential_with_rate_mu_minus_lambda():
    t = np.linspace(0, 1, 11)
    assert np.allclose(queueing.mmc_response_survival(t, 1, 30.0, 80.0), np.exp(-50.0 * t), rtol=1e-12)
    assert math.isclose(queueing.mmc_response_quantile(0.99, 1, 30.0, 80.0), math.log(100) / 50, rel_tol=1e-12)
    assert math.isclose(queueing.mmc_mean_response(1, 30.0, 80.0), 1 / 50, rel_tol=1e-12)


def test_wait_rate_equal_to_service_rate_has_no_cancellation():
    # c mu - lambda == mu: the two exponentials have the same rate; the tail is (1 + C mu t) exp(-mu t).
    mu, lam = 10.0, 10.0  # two servers: g = 2 mu - lambda = mu
    c_wait = queueing.erlang_c(2, lam, mu)
    t = np.array([0.05, 0.2, 1.0])
    assert np.allclose(
        queueing.mmc_response_survival(t, 2, lam, mu), (1 + c_wait * mu * t) * np.exp(-mu * t), rtol=1e-12
    )


@pytest.mark.parametrize("rho", [0.3, 0.5, 0.6])
def test_closed_forms_match_the_seeded_simulation_at_moderate_load(rho):
    mean_work, speedup = 0.02, 1.6
    rate = 2 * rho / mean_work
    reqs = queueing.poisson_requests(200_000, rate, mean_work, seed=21)
    for result, servers, mu in (
        (queueing.serve(reqs, 2), 2, 1 / mean_work),
        (queueing.serve(reqs, 1, speedup=speedup), 1, speedup / mean_work),
    ):
        assert math.isclose(result.mean_response, queueing.mmc_mean_response(servers, rate, mu), rel_tol=0.03)
        assert math.isclose(result.p99_response, queueing.mmc_response_quantile(0.99, servers, rate, mu), rel_tol=0.05)


def test_crossovers_by_root_finding():
    # Two replicas (M/M/2, rate mu each) against one split (M/M/1, rate s mu), load rho = lambda / (2 mu).
    s, mu = 1.76, 1.0
    mean_gap = lambda r: queueing.mmc_mean_response(2, 2 * r, mu) - queueing.mmc_mean_response(1, 2 * r, s * mu)  # noqa: E731
    tail_gap = lambda r: (  # noqa: E731
        queueing.mmc_response_quantile(0.99, 2, 2 * r, mu) - queueing.mmc_response_quantile(0.99, 1, 2 * r, s * mu)
    )
    mean_cross = queueing.bisect(mean_gap, 1e-6, s / 2)
    # Equal means: 1 / (1 - rho^2) = 1 / (s - 2 rho), so rho = 1 - sqrt(2 - s).
    assert math.isclose(mean_cross, 1 - math.sqrt(2 - s), rel_tol=1e-12)
    assert round(mean_cross, 2) == 0.51
    tail_cross = queueing.bisect(tail_gap, 1e-6, s / 2)
    assert 0.44 < tail_cross < 0.46 and tail_cross < mean_cross  # the tail turns first


def test_at_or_over_the_limit_everything_is_infinite_not_nan():
    assert queueing.erlang_c(2, [100.0, 150.0], 50.0).tolist() == [1.0, 1.0]
    assert queueing.mmc_mean_response(2, [100.0, 150.0], 50.0).tolist() == [math.inf, math.inf]
    assert queueing.mmc_response_quantile(0.99, 1, 80.0, 80.0) == math.inf
    assert queueing.mmc_response_survival(5.0, 1, 90.0, 80.0) == 1.0


def test_bisect_finds_roots_and_refuses_bad_brackets():
    assert queueing.bisect(math.cos, 0.0, 3.0) == pytest.approx(math.pi / 2, rel=1e-15)
    assert queueing.bisect(lambda x: x, 0.0, 1.0) == 0.0
    assert abs(queueing.bisect(lambda x: x**3 - 8, 0.0, 5.0, xtol=1e-3) - 2) <= 1e-3
    # An infinite value at one end still brackets (a queue past its limit).
    assert queueing.bisect(lambda x: 1.0 if x < 0.5 else -math.inf, 0.0, 1.0) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="bracket a root"):
        queueing.bisect(lambda x: x + 1, 0.0, 1.0)
    with pytest.raises(ValueError, match="lo < hi"):
        queueing.bisect(lambda x: x, 1.0, 0.0)
    with pytest.raises(ValueError, match="f must be a number"):
        queueing.bisect(lambda x: math.nan, 0.0, 1.0)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: queueing.erlang_c(0, 1.0, 1.0), "servers"),
        (lambda: queueing.erlang_c(1, -1.0, 1.0), "rate"),
        (lambda: queueing.mmc_mean_response(1, 1.0, 0.0), "service_rate"),
        (lambda: queueing.mmc_response_survival(-1.0, 1, 1.0, 2.0), "t must be >= 0"),
        (lambda: queueing.mmc_response_quantile(1.0, 1, 1.0, 2.0), "q must be below 1"),
        (lambda: queueing.mmc_response_quantile(0.0, 1, 1.0, 2.0), r"q must be in \(0, 1\]"),
    ],
)
def test_closed_forms_name_bad_parameters(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("speedup", [1.1, 1.5, 1.9])
def test_the_mean_response_crossover_is_where_the_two_means_meet(speedup):
    mu = 3.0

    def gap(rho):  # two replicas' mean response minus the faster server's
        return queueing.mmc_mean_response(2, 2 * rho * mu, mu) - queueing.mmc_mean_response(
            1, 2 * rho * mu, speedup * mu
        )

    crossover = queueing.mean_response_crossover(speedup)
    assert crossover == pytest.approx(queueing.bisect(gap, 1e-9, speedup / 2 - 1e-9), rel=1e-9)
    assert gap(crossover / 2) > 0 > gap((crossover + speedup / 2) / 2)


@pytest.mark.parametrize("speedup", [2.0, 3.0, 0.0, -1.0, float("nan")])
def test_the_mean_response_crossover_refuses_speedups_without_one(speedup):
    with pytest.raises(ValueError, match="speedup"):
        queueing.mean_response_crossover(speedup)
