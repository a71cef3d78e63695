"""Tests for lib.serving.sizing: the fewest devices that carry a rate, and more devices never carry less."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib import serving
from lib.transformer import PRESETS
from lib.units import ms


@settings(max_examples=10, deadline=None)
@given(
    st.sampled_from(["llama-3-8b", "mistral-7b"]),
    st.sampled_from(["l4", "a100-80gb"]),
    st.integers(1, 6),
    st.integers(1, 3),
)
@pytest.mark.slow
def test_more_devices_never_lower_the_best_total_capacity(key, device, devices, extra):
    kwargs = dict(ttft_limit=0.5, tpot_limit=80 * ms)
    fewer = serving.best_capacity(PRESETS[key], device, devices, 512, 128, **kwargs)
    more = serving.best_capacity(PRESETS[key], device, devices + extra, 512, 128, **kwargs)
    assert (0 if fewer is None else fewer.capacity.rate) <= (0 if more is None else more.capacity.rate) * (1 + 1e-9)


# --- the closed form against the scheduler, step by step ----------------------------------------------------


@pytest.mark.slow
def test_sizing_finds_the_fewest_devices_and_one_fewer_fails():
    targets = dict(ttft_limit=1.0, tpot_limit=50 * ms, weight_format="fp8")
    plan = serving.size(PRESETS["llama-3-70b"], "h100-sxm", 20.0, 1024, 256, **targets)
    assert plan.capacity.rate >= 20.0 and plan.devices == plan.layout.devices
    # No layout of one device fewer carries 20 requests per second under the same model.
    fewer = plan.devices - 1
    best = serving.best_capacity(PRESETS["llama-3-70b"], "h100-sxm", fewer, 1024, 256, **targets)
    assert best is None or best.capacity.rate < 20.0


def test_sizing_refuses_requests_past_the_models_context():
    # Length samples: the longest request counts (8000 + 512 > 8192), though the mean (4256) fits.
    with pytest.raises(ValueError, match="the longest sample's prompt_tokens \\+ output_tokens = 8512 exceeds"):
        serving.size(PRESETS["llama-3-8b"], "h100-sxm", 5.0, [8000, 500], 512, tpot_limit=50 * ms)
    with pytest.raises(ValueError, match="= 20480 exceeds Llama-3 8B's context of 8192 tokens"):
        serving.best_capacity(PRESETS["llama-3-8b"], "h100-sxm", 8, 16384, 4096)


@pytest.mark.slow
def test_sizing_with_confidence_takes_at_least_the_devices_of_the_median_and_of_the_estimate():
    targets = dict(ttft_limit=1.0, tpot_limit=20 * ms, max_devices=16)
    answers = {
        p: serving.size(PRESETS["llama-3.1-8b"], "h100-sxm", 40.0, 1024, 256, confidence=p, **targets)
        for p in (None, 0.5, 0.9)
    }
    assert answers[None].devices <= answers[0.5].devices <= answers[0.9].devices
    assert answers[0.9].devices > answers[None].devices  # 0.56 x the estimate: more devices, not the same
    for p, answer in answers.items():
        assert answer.confidence == p
        # Each carries the rate once its estimate is scaled by the share held-out runs delivered that often.
        share = 1.0 if p is None else serving.capacity_ratio(p)
        assert answer.capacity.rate * share >= 40.0 * (1 - 1e-12)
