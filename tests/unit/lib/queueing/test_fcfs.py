"""Tests for lib.queueing: conservation, determinism and textbook queueing results."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib import queueing


def most_at_once(starts, ends) -> int:
    """Most intervals ``[start, end)`` open at one time; one ending at ``t`` closes before one starting at ``t``.

    >>> most_at_once([0, 1, 1], [1, 2, 3])
    2
    """
    events = sorted([(t, 1) for t in starts] + [(t, -1) for t in ends])
    held = peak = 0
    for _, step in events:
        held += step
        peak = max(peak, held)
    return peak


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 400), st.floats(0.1, 100.0), st.floats(0.001, 1.0), st.integers(0, 2**31),
       st.floats(0.0, 3.0), st.integers(1, 4), st.floats(0.5, 4.0))
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


@pytest.mark.parametrize("call,name", [
    (lambda: queueing.poisson_requests(0, 1.0, 1.0), "count"),
    (lambda: queueing.poisson_requests(2.5, 1.0, 1.0), "count"),
    (lambda: queueing.poisson_requests(10, -1.0, 1.0), "rate"),
    (lambda: queueing.poisson_requests(10, 1.0, 0.0), "mean_work"),
    (lambda: queueing.poisson_requests(10, 1.0, 1.0, cv=-1), "cv"),
    (lambda: queueing.serve(queueing.poisson_requests(3, 1.0, 1.0), servers=0), "servers"),
    (lambda: queueing.serve(queueing.poisson_requests(3, 1.0, 1.0), speedup=0), "speedup"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("call,name", [
    (lambda: queueing.poisson_requests([5, 10], 1.0, 1.0), "count"),
    (lambda: queueing.poisson_requests(10, [1.0, 2.0], 1.0), "rate"),
    (lambda: queueing.serve(queueing.poisson_requests(3, 1.0, 1.0), servers=[1, 2]), "servers"),
    (lambda: queueing.serve(queueing.poisson_requests(3, 1.0, 1.0), speedup=[1.0, 2.0]), "speedup"),
])
def test_sweeps_are_refused_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"{name} must be a scalar .*not an array"):
        call()


@pytest.mark.parametrize("call,name", [
    (lambda: queueing.poisson_requests(10, math.inf, 1.0), "rate"),
    (lambda: queueing.poisson_requests(10, 1.0, math.inf), "mean_work"),
    (lambda: queueing.serve(queueing.poisson_requests(3, 1.0, 1.0), speedup=math.inf), "speedup"),
])
def test_infinite_rates_and_speedups_are_refused(call, name):
    with pytest.raises(ValueError, match=rf"{name} must be finite, got inf"):
        call()


@pytest.mark.parametrize("arrivals,work,match", [
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
])
def test_bad_requests_name_the_field_and_value(arrivals, work, match):
    with pytest.raises(ValueError, match=match):
        queueing.Requests(arrivals, work)


def test_requests_store_float_arrays_and_accept_ties():
    # Two requests arriving at the same instant are in order; lists become float arrays.
    reqs = queueing.Requests([0, 0, 3], [1, 0, 2])
    assert reqs.arrivals.dtype == float and reqs.work.dtype == float
    # One server: 0 -> 1, the empty request at 1, then the third arrives at 3 and ends at 5.
    assert queueing.serve(reqs).finishes.tolist() == [1.0, 1.0, 5.0]


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
    mu, lam = 10.0, 10.0                        # two servers: g = 2 mu - lambda = mu
    c_wait = queueing.erlang_c(2, lam, mu)
    t = np.array([0.05, 0.2, 1.0])
    assert np.allclose(queueing.mmc_response_survival(t, 2, lam, mu), (1 + c_wait * mu * t) * np.exp(-mu * t),
                       rtol=1e-12)


@pytest.mark.parametrize("rho", [0.3, 0.5, 0.6])
def test_closed_forms_match_the_seeded_simulation_at_moderate_load(rho):
    mean_work, speedup = 0.02, 1.6
    rate = 2 * rho / mean_work
    reqs = queueing.poisson_requests(200_000, rate, mean_work, seed=21)
    for result, servers, mu in ((queueing.serve(reqs, 2), 2, 1 / mean_work),
                                (queueing.serve(reqs, 1, speedup=speedup), 1, speedup / mean_work)):
        assert math.isclose(result.mean_response, queueing.mmc_mean_response(servers, rate, mu), rel_tol=0.03)
        assert math.isclose(result.p99_response, queueing.mmc_response_quantile(0.99, servers, rate, mu), rel_tol=0.05)


def test_crossovers_by_root_finding():
    # Two replicas (M/M/2, rate mu each) against one split (M/M/1, rate s mu), load rho = lambda / (2 mu).
    s, mu = 1.76, 1.0
    mean_gap = lambda r: queueing.mmc_mean_response(2, 2 * r, mu) - queueing.mmc_mean_response(1, 2 * r, s * mu)  # noqa: E731
    tail_gap = lambda r: (queueing.mmc_response_quantile(0.99, 2, 2 * r, mu)  # noqa: E731
                          - queueing.mmc_response_quantile(0.99, 1, 2 * r, s * mu))
    mean_cross = queueing.bisect(mean_gap, 1e-6, s / 2)
    # Equal means: 1 / (1 - rho^2) = 1 / (s - 2 rho), so rho = 1 - sqrt(2 - s).
    assert math.isclose(mean_cross, 1 - math.sqrt(2 - s), rel_tol=1e-12)
    assert round(mean_cross, 2) == 0.51
    tail_cross = queueing.bisect(tail_gap, 1e-6, s / 2)
    assert 0.44 < tail_cross < 0.46 and tail_cross < mean_cross      # the tail turns first


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


@pytest.mark.parametrize("call,match", [
    (lambda: queueing.erlang_c(0, 1.0, 1.0), "servers"),
    (lambda: queueing.erlang_c(1, -1.0, 1.0), "rate"),
    (lambda: queueing.mmc_mean_response(1, 1.0, 0.0), "service_rate"),
    (lambda: queueing.mmc_response_survival(-1.0, 1, 1.0, 2.0), "t must be >= 0"),
    (lambda: queueing.mmc_response_quantile(1.0, 1, 1.0, 2.0), "q must be below 1"),
    (lambda: queueing.mmc_response_quantile(0.0, 1, 1.0, 2.0), r"q must be in \(0, 1\]"),
])
def test_closed_forms_name_bad_parameters(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# --- continuous batching (lib.queueing.batching) ----------------------------------------------

STEPS = 0.004 + 0.0001 * np.arange(64)          # 4 ms for one sequence, 0.1 ms more per extra one


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 300), st.floats(0.5, 200.0), st.integers(0, 2**31), st.integers(2, 40), st.integers(1, 64),
       st.floats(0.0, 0.02))
def test_batching_serves_everyone_within_the_batch_limit(count, rate, seed, tokens, max_batch, prefill):
    arrivals = queueing.poisson_arrivals(count, rate, seed=seed)
    out = queueing.simulate_batching(arrivals, tokens, STEPS, prefill, max_batch=max_batch)
    assert np.all(out.admitted >= out.arrivals) and np.all(out.first_tokens >= out.admitted)
    assert np.all(out.finishes > out.first_tokens)
    # A prefill step takes prefill_time for each request admitted with it.
    took = out.first_tokens - out.admitted
    assert np.allclose(took, np.round(took / prefill) * prefill) if prefill > 0 else np.all(took == 0)
    # First come, first served: admitted in arrival order.
    assert np.all(np.diff(out.admitted) >= 0)
    # Never more than max_batch sequences between admission and finish.
    assert most_at_once(out.admitted, out.finishes) <= max_batch
    # Every output token after the first takes at least a one-sequence step.
    assert np.all(out.tpot >= STEPS[0] * (1 - 1e-9))
    # The running area is exactly the time each sequence spends between first token and finish.
    assert math.isclose(out.running_area, float((out.finishes - out.first_tokens).sum()), rel_tol=1e-9)
    assert out.batch_sum == count * (tokens - 1)


def test_batching_by_hand():
    out = queueing.simulate_batching([0.0, 0.0, 0.5], 3, [1.0, 1.5], prefill_time=0.25)
    assert out.admitted.tolist() == [0.0, 0.0, 3.5]
    assert out.finishes.tolist() == [3.5, 3.5, 5.75]
    assert out.decode_steps == 4 and out.mean_batch == 6 / 4
    # A lone request: its prefill, then n_out - 1 one-sequence steps.
    alone = queueing.simulate_batching([2.0], 5, [0.01, 0.02], prefill_time=0.1)
    assert alone.ttft.tolist() == pytest.approx([0.1]) and alone.tpot.tolist() == pytest.approx([0.01])
    # One slot: requests are served one after another, as a one-at-a-time server would.
    serial = queueing.simulate_batching([0.0, 0.0], 3, [1.0], prefill_time=0.0, max_batch=1)
    assert serial.finishes.tolist() == [2.0, 4.0]


@pytest.mark.parametrize("share,tolerance", [(0.2, 0.02), (0.5, 0.03), (0.8, 0.05)])
def test_littles_law_estimate_matches_the_seeded_simulation(share, tolerance):
    # Near the limit the estimate runs low: step(mean N) understates the mean of step(N) (Jensen).
    tokens, prefill = 100, 0.005
    limit = queueing.throughput_limit(tokens, STEPS, prefill)
    rate = share * limit
    est = queueing.batching_estimate(rate, tokens, STEPS, prefill)
    out = queueing.simulate_batching(queueing.poisson_arrivals(6000, rate, seed=5), tokens, STEPS, prefill)
    settled = slice(600, None)
    assert math.isclose(out.tpot[settled].mean(), est.tpot, rel_tol=tolerance)
    assert math.isclose(out.mean_running, est.running, rel_tol=tolerance + 0.03)
    assert est.prefill_share == pytest.approx(rate * prefill)


def test_estimate_is_the_smallest_fixed_point_and_infinite_past_the_limit():
    tokens, prefill = 100, 0.005
    limit = queueing.throughput_limit(tokens, STEPS, prefill)
    n = np.arange(1, 65)
    assert limit == pytest.approx(max(n / (n * prefill + (tokens - 1) * STEPS)))
    rates = np.array([0.1, 0.5, 0.9, 0.999, 1.0, 1.2]) * limit
    est = queueing.batching_estimate(rates, tokens, STEPS, prefill)
    finite = np.isfinite(est.tpot)
    assert finite.tolist() == [True, True, True, True, False, False]
    assert est.stable.tolist() == finite.tolist()
    # The fixed point holds where it exists, and TPOT grows with the rate.
    step = np.interp(est.running[finite] + 1, n, STEPS)
    lam = rates[finite]
    assert np.allclose(est.running[finite] * (1 - lam * prefill), lam * (tokens - 1) * step, rtol=1e-9)
    assert np.all(np.diff(est.tpot[finite]) > 0)


def test_past_the_limit_the_queue_grows():
    tokens, prefill = 50, 0.002
    limit = queueing.throughput_limit(tokens, STEPS, prefill)
    out = queueing.simulate_batching(queueing.poisson_arrivals(4000, 1.3 * limit, seed=9), tokens, STEPS, prefill)
    wait = out.admitted - out.arrivals
    assert wait[-400:].mean() > 10 * max(wait[:400].mean(), 1e-3)


@pytest.mark.parametrize("call,match", [
    (lambda: queueing.simulate_batching([0.0, 1.0], 1, STEPS, 0.0), "output_tokens must be >= 2"),
    (lambda: queueing.simulate_batching([0.0, 1.0], [3, 4, 5], STEPS, 0.0), r"output_tokens must be one count"),
    (lambda: queueing.simulate_batching([1.0, 0.0], 3, STEPS, 0.0), "arrivals must be non-decreasing"),
    (lambda: queueing.simulate_batching([0.0], 3, [0.01, 0.0], 0.0), "step_times must be > 0"),
    (lambda: queueing.simulate_batching([0.0], 3, [0.01], 0.0, max_batch=2), "max_batch must be at most"),
    (lambda: queueing.simulate_batching([0.0], 3, [0.01], -1.0), "prefill_time must be >= 0"),
    (lambda: queueing.batching_estimate(0.0, 3, [0.01], 0.0), "rate must be > 0"),
    (lambda: queueing.throughput_limit(1, [0.01], 0.0), "output_tokens must be >= 2"),
])
def test_batching_names_bad_parameters(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("speedup", [1.1, 1.5, 1.9])
def test_the_mean_response_crossover_is_where_the_two_means_meet(speedup):
    mu = 3.0

    def gap(rho):  # two replicas' mean response minus the faster server's
        return (queueing.mmc_mean_response(2, 2 * rho * mu, mu)
                - queueing.mmc_mean_response(1, 2 * rho * mu, speedup * mu))

    crossover = queueing.mean_response_crossover(speedup)
    assert crossover == pytest.approx(queueing.bisect(gap, 1e-9, speedup / 2 - 1e-9), rel=1e-9)
    assert gap(crossover / 2) > 0 > gap((crossover + speedup / 2) / 2)


@pytest.mark.parametrize("speedup", [2.0, 3.0, 0.0, -1.0, float("nan")])
def test_the_mean_response_crossover_refuses_speedups_without_one(speedup):
    with pytest.raises(ValueError, match="speedup"):
        queueing.mean_response_crossover(speedup)
