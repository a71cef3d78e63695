"""Tests for lib.serving.matmul: a layer's matrix products on one device, and their time by measured throughput."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.formats import compute_peak
from lib.kernels import gemm_flops
from lib.serving import Layout
from lib.serving.matmul import layer_products, linear_compute_time, product_flops
from lib.serving.memory import _per_device_layer
from lib.transformer import PRESETS, parameter_breakdown

LAYOUTS = [Layout(), Layout(tp=2), Layout(tp=8), Layout(tp=4, expert_parallel=True), Layout(8, 1, 1, True, True)]


def _valid(config, layout):
    if layout.expert_parallel and (config.experts == 1 or config.experts % layout.tp):
        return False
    return config.heads % layout.tp == 0


SPLITS = [
    (key, layout)
    for key in ("llama-3-8b", "llama-3-70b", "qwen2-7b", "mixtral-8x7b", "deepseek-v3")
    for layout in LAYOUTS
    if _valid(PRESETS[key], layout)  # the layouts the planner accepts for the model
]


@pytest.mark.parametrize("key,layout", SPLITS, ids=lambda value: getattr(value, "name", value))
def test_the_products_hold_every_weight_of_the_layer_but_the_norms(key, layout):
    config = PRESETS[key]
    parts = parameter_breakdown(config)
    products = layer_products(config, layout)
    shared = sum(p.n * p.k * p.share for p in products if not p.routed)
    expected = _per_device_layer(config, layout, experts=0) - parts.norms
    assert expected - config.hidden < shared <= expected * (1 + 1e-12)  # biases under one output feature dropped
    routed = [p for p in products if p.routed]
    split = 1 if layout.expert_parallel else layout.tp
    moe = config.moe_layers / config.layers
    assert sum(p.n * p.k for p in routed) == pytest.approx(parts.mlp / split, rel=1e-12)
    assert all(p.share == moe for p in routed)


def test_a_llama_layer_runs_four_fused_products_per_device():
    config = PRESETS["llama-3-70b"]  # 64 query heads, 8 KV heads of 128, d = 8192, f = 28672
    got = {p.name: (p.n, p.k) for p in layer_products(config, Layout(tp=4))}
    assert got == {
        "qkv": ((64 / 4 + 2 * 2) * 128, 8192),
        "output": (8192, 64 * 128 / 4),
        "gate-up": (2 * 28672 / 4, 8192),
        "down": (8192, 28672 / 4),
    }


def test_one_efficiency_prices_every_product_at_that_share_of_peak():
    config = PRESETS["llama-3-70b"]
    tokens = np.array([1.0, 64.0, 4096.0])
    flops = 2 * tokens * sum(p.n * p.k * p.share for p in layer_products(config, Layout(tp=2)))
    got = linear_compute_time(config, Layout(tp=2), "h100-sxm", "fp8", tokens, tokens, tokens, efficiency=0.6)
    np.testing.assert_allclose(got, flops / (0.6 * compute_peak("h100-sxm", "fp8")), rtol=1e-12)


def test_a_product_at_a_measured_shape_runs_at_the_measurement():
    # XLA sm_90, entry {b: 1 m: 4096 n: 4096 k: 4096}: 783328793548203 FLOP/s
    assert product_flops("h100-sxm", "bf16", 4096, 4096, 4096) == pytest.approx(783328793548203, rel=1e-12)
    # DeepGEMM README: | 128 | 7168 | 16384 | 645 TFLOPS | (H800, filed under h100-sxm)
    assert product_flops("h100-sxm", "fp8", 128, 7168, 16384) == pytest.approx(645e12, rel=1e-12)


def test_each_expert_is_priced_at_its_own_rows():
    config = PRESETS["mixtral-8x7b"]  # 8 experts, top 2
    layout = Layout(tp=2)
    tokens = 512.0
    rows = tokens * 2 / 8
    got = linear_compute_time(config, layout, "h100-sxm", "bf16", 0.0, rows, tokens * 2)
    want = sum(
        2 * tokens * 2 * p.n * p.k / gemm_flops("h100-sxm", "bf16", rows, round(p.n), round(p.k))
        for p in layer_products(config, layout)
        if p.routed
    )
    assert got == pytest.approx(want, rel=1e-12)
    dense_rows = linear_compute_time(config, layout, "h100-sxm", "bf16", 0.0, tokens * 2, tokens * 2)
    assert got > dense_rows  # the same work on a quarter of the rows each runs less efficiently


@settings(max_examples=80, deadline=None)
@given(
    key=st.sampled_from(["llama-3-8b", "llama-3-70b", "mixtral-8x7b", "qwen2-7b"]),
    device=st.sampled_from(["h100-sxm", "h200", "b200", "a100-80gb", "l40s", "l4", "a10g", "h100-pcie"]),
    fmt=st.sampled_from(["bf16", "fp8", "int8", "int4"]),
    tokens=st.one_of(st.just(0.0), st.floats(1e-3, 1e5)),
)
def test_the_products_never_run_above_the_peak(key, device, fmt, tokens):
    config = PRESETS[key]
    products = layer_products(config, Layout())
    flops = 2 * tokens * sum(p.n * p.k * p.share for p in products if not p.routed)
    rows = tokens * config.experts_per_token / config.experts
    flops += 2 * tokens * config.experts_per_token * sum(p.n * p.k * p.share for p in products if p.routed)
    seconds = linear_compute_time(config, Layout(), device, fmt, tokens, rows, tokens * config.experts_per_token)
    assert seconds >= 0 and np.isfinite(seconds)
    assert flops <= seconds * compute_peak(device, fmt) * (1 + 1e-12)
