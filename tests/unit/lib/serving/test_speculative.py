"""Tests for lib.serving.speculative: the expected accepted tokens, the verification step, and its break-even."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from serving_support import H100

from lib.serving import Layout
from lib.serving.engine import COMPUTE_EFFICIENCY
from lib.serving.speculative import break_even_batch, expected_tokens, simulate_tokens, speculative_step
from lib.serving.step import compute_bound_batch, loop_time
from lib.transformer import PRESETS

LLAMA70 = PRESETS["llama-3-70b"]


def test_expected_tokens_by_hand():
    # alpha 0.5, gamma 2: 1 + 0.5 + 0.25 = 1.75 tokens per round.
    assert expected_tokens(0.5, 2) == pytest.approx(1.75)
    assert expected_tokens(0.0, 7) == 1.0
    assert expected_tokens(1.0, 3) == 4.0
    assert np.allclose(expected_tokens(np.array([0.0, 0.5, 1.0]), 2), [1.0, 1.75, 3.0])


@pytest.mark.parametrize("alpha,gamma", [(0.3, 2), (0.6, 4), (0.9, 5)])
def test_expected_tokens_is_the_mean_of_the_exact_count(alpha, gamma):
    tokens = simulate_tokens(alpha, gamma, 40_000, seed=3)
    standard_error = tokens.std() / np.sqrt(tokens.size)
    assert abs(tokens.mean() - expected_tokens(alpha, gamma)) < 4 * standard_error


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([1, 8, 64, 256]), st.integers(1, 6), st.floats(0.05, 3.0))
def test_speculation_never_helps_when_nothing_is_accepted(batch, gamma, head_layers):
    step = speculative_step(LLAMA70, H100, Layout(tp=4), batch, 1152, 0.0, gamma, head_layers=head_layers)
    assert step.speedup < 1
    assert step.tpot > step.plain_tpot


def test_the_verification_step_is_the_roofline_with_gamma_plus_one_tokens():
    step = speculative_step(LLAMA70, H100, Layout(tp=4), 16, 1152, 0.7, 3, head_layers=1)
    verify = loop_time(LLAMA70, H100, Layout(tp=4), 16, 1152, 16 * 3, 1152, 16 * 4)
    assert step.verify == pytest.approx(verify, rel=1e-12)
    assert step.draft == pytest.approx(3 * step.plain_tpot / LLAMA70.layers, rel=1e-12)
    assert step.tpot == pytest.approx((step.verify + step.draft) / expected_tokens(0.7, 3), rel=1e-12)


def test_a_draft_model_costs_its_own_decode_steps():
    small = PRESETS["llama-3-8b"]
    step = speculative_step(LLAMA70, H100, Layout(tp=4), 8, 1152, 0.7, 4, draft=small)
    assert step.draft == pytest.approx(4 * loop_time(small, H100, Layout(tp=4), 8, 1152), rel=1e-12)


@pytest.mark.parametrize("alpha,gamma", [(0.6, 2), (0.8, 4)])
def test_the_gain_never_rises_with_batch_once_compute_bound(alpha, gamma):
    # At one efficiency for every shape: measured kernels grow more efficient with the rows, which can lift the
    # gain a little past the ridge (test_the_gain_falls_past_the_ridge_with_measured_kernels).
    batches = np.unique(np.round(np.geomspace(1, 2048, 60)))
    layout = Layout(tp=4)
    flat = dict(compute_efficiency=COMPUTE_EFFICIENCY)
    step = speculative_step(LLAMA70, H100, layout, batches, 1152, alpha, gamma, head_layers=1, **flat)
    ridge = compute_bound_batch(LLAMA70, "h100-sxm", tp=4, **flat)
    past = batches >= ridge / (gamma + 1)
    assert past.sum() > 5
    assert np.all(np.diff(np.asarray(step.speedup)[past]) <= 1e-12)


def test_the_gain_falls_past_the_ridge_with_measured_kernels():
    batches = np.unique(np.round(np.geomspace(1, 2048, 60)))
    step = speculative_step(LLAMA70, H100, Layout(tp=4), batches, 1152, 0.6, 2, head_layers=1)
    ridge = compute_bound_batch(LLAMA70, "h100-sxm", tp=4)
    gain = np.asarray(step.speedup)
    assert gain[batches >= 4 * ridge].max() < gain[batches <= ridge / 3].min()


def test_break_even_matches_the_simulated_rounds():
    # Speed-up from simulated acceptances crosses 1 where the closed form says (within the batch grid).
    alpha, gamma = 0.7, 3
    layout = Layout(tp=4)
    predicted = break_even_batch(LLAMA70, H100, layout, 1152, alpha, gamma, head_layers=1)
    tokens = simulate_tokens(alpha, gamma, 50_000, seed=11).mean()
    batches = np.unique(np.round(np.geomspace(1, 4096, 400)))
    step = speculative_step(LLAMA70, H100, layout, batches, 1152, alpha, gamma, head_layers=1)
    simulated = np.asarray(step.plain_tpot) * tokens / (np.asarray(step.verify) + np.asarray(step.draft))
    crossing = batches[np.nonzero(simulated <= 1)[0][0]]
    assert np.isfinite(predicted)
    assert crossing == pytest.approx(predicted, rel=0.05)


def test_speculation_helps_most_at_batch_one():
    step = speculative_step(LLAMA70, H100, Layout(tp=4), np.array([1.0, 64.0, 512.0]), 1152, 0.8, 4, head_layers=1)
    speedup = np.asarray(step.speedup)
    assert speedup[0] > 2.5 and speedup[0] > speedup[1] > speedup[2]


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: expected_tokens(1.5, 3), "acceptance"),
        (lambda: expected_tokens(-0.1, 3), "acceptance"),
        (lambda: expected_tokens(0.5, -1), "draft_tokens"),
        (lambda: simulate_tokens(0.5, 3, 0), "rounds"),
        (lambda: speculative_step(LLAMA70, H100, Layout(tp=4), 1, 100, 0.5, 0, head_layers=1), "draft_tokens"),
        (lambda: speculative_step(LLAMA70, H100, Layout(tp=4), 1, 100, 0.5, 2), "draft or head_layers"),
        (lambda: speculative_step(LLAMA70, H100, Layout(tp=4), 1, 100, 0.5, 2, head_layers=-1), "head_layers"),
        (lambda: speculative_step(LLAMA70, H100, Layout(tp=4), 0, 100, 0.5, 2, head_layers=1), "batch"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
