"""Tests for lib.queueing.batching: continuous batching, simulated and estimated."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from queueing_support import most_at_once

from lib import queueing

# --- continuous batching (lib.queueing.batching) ----------------------------------------------

STEPS = 0.004 + 0.0001 * np.arange(64)  # 4 ms for one sequence, 0.1 ms more per extra one


@settings(max_examples=30, deadline=None)
@given(
    st.integers(1, 300),
    st.floats(0.5, 200.0),
    st.integers(0, 2**31),
    st.integers(2, 40),
    st.integers(1, 64),
    st.floats(0.0, 0.02),
)
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


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: queueing.simulate_batching([0.0, 1.0], 1, STEPS, 0.0), "output_tokens must be >= 2"),
        (lambda: queueing.simulate_batching([0.0, 1.0], [3, 4, 5], STEPS, 0.0), r"output_tokens must be one count"),
        (lambda: queueing.simulate_batching([1.0, 0.0], 3, STEPS, 0.0), "arrivals must be non-decreasing"),
        (lambda: queueing.simulate_batching([0.0], 3, [0.01, 0.0], 0.0), "step_times must be > 0"),
        (lambda: queueing.simulate_batching([0.0], 3, [0.01], 0.0, max_batch=2), "max_batch must be at most"),
        (lambda: queueing.simulate_batching([0.0], 3, [0.01], -1.0), "prefill_time must be >= 0"),
        (lambda: queueing.batching_estimate(0.0, 3, [0.01], 0.0), "rate must be > 0"),
        (lambda: queueing.throughput_limit(1, [0.01], 0.0), "output_tokens must be >= 2"),
    ],
)
def test_batching_names_bad_parameters(call, match):
    with pytest.raises(ValueError, match=match):
        call()
