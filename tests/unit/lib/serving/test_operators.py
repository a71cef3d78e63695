"""Tests for lib.serving.operators: experts touched, one pass's work, the expert exchange."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from serving_support import DEEPSEEK

from lib import experts, serving, transformer
from lib.collectives import best_collective_time
from lib.serving import Cluster, Layout
from lib.serving.engine import DISPATCH_BYTES, configure
from lib.serving.operators import expert_exchange, pass_work

H200 = Cluster("h200")


def test_a_prompt_is_one_ranks_attention():
    adp = Layout(8, 1, 1, True, True)
    engine = configure("h200", weight_format="fp8").resolved("h200")
    spread = pass_work(DEEPSEEK, H200, adp, 0, engine, prefill=1024, prefill_context=512.5)
    one = pass_work(DEEPSEEK, H200, adp, 0, engine, prefill=1024, prefill_context=512.5, prompts=1)
    eight = pass_work(DEEPSEEK, H200, adp, 0, engine, prefill=8 * 128, prefill_context=64.5, prompts=8)
    assert one.attention.flops == pytest.approx(8 * spread.attention.flops, rel=1e-9)
    assert eight.attention.flops == pytest.approx(
        pass_work(DEEPSEEK, H200, adp, 0, engine, prefill=1024, prefill_context=64.5).attention.flops, rel=1e-9
    )
    # Tensor parallelism splits every prompt over the heads: prompts changes nothing.
    tp = Layout(8, 1, 1, True, False)
    assert pass_work(
        DEEPSEEK, H200, tp, 0, engine, prefill=1024, prefill_context=512.5, prompts=1
    ).time == pytest.approx(
        pass_work(DEEPSEEK, H200, tp, 0, engine, prefill=1024, prefill_context=512.5).time, rel=1e-12
    )


def test_the_exchange_is_priced_as_its_collectives_on_routed_layers_only():
    adp = Layout(8, 1, 1, True, True)
    for exchange in serving.engine.EXPERT_EXCHANGES:
        engine = configure("h200", expert_exchange=exchange).resolved("h200")
        work = pass_work(DEEPSEEK, H200, adp, 0, engine, decode=64, context=1000)
        busiest = 64 / 8
        per_layer = sum(
            best_collective_time(kind, size, 8, H200.link)
            for kind, size in expert_exchange(DEEPSEEK, exchange, 64, busiest)
        )
        assert work.communication_time == pytest.approx(DEEPSEEK.moe_layers * per_layer, rel=1e-9)
    # A dense model has no routed layers to exchange around.
    assert DEEPSEEK.moe_layers == 58


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([1, 2, 4, 6, 8]), st.floats(1, 4096), st.floats(0.125, 512))
def test_dispatch_bytes_scale_with_top_k_and_gathers_do_not(top_k, tokens, busiest):
    one = dataclasses.replace(DEEPSEEK, experts_per_token=1)
    k = dataclasses.replace(DEEPSEEK, experts_per_token=top_k)
    (_, dispatch1), (_, combine1) = expert_exchange(one, "deepep", tokens, busiest)
    (_, dispatch), (_, combine) = expert_exchange(k, "deepep", tokens, busiest)
    assert dispatch == pytest.approx(top_k * dispatch1, rel=1e-12)
    assert combine == pytest.approx(top_k * combine1, rel=1e-12)
    assert dispatch1 == pytest.approx(busiest * DEEPSEEK.hidden * DISPATCH_BYTES, rel=1e-12)
    assert expert_exchange(k, "allgather_reducescatter", tokens, busiest) == expert_exchange(
        one, "allgather_reducescatter", tokens, busiest
    )


def test_the_busiest_device_pays_the_imbalance():
    ep = Layout(8, 1, 1, True, False)
    engine = configure("h200", **dict(memory_efficiency=1.0, compute_efficiency=1.0)).resolved("h200")
    for tokens in (1, 64, 4096):
        work = pass_work(DEEPSEEK, H200, ep, 0, engine, prefill=tokens, prefill_context=1)
        tp = pass_work(DEEPSEEK, H200, Layout(8), 0, engine, prefill=tokens, prefill_context=1)
        # The same FLOPs but for the routed share, which the busiest of 8 devices does times the imbalance.
        parts = transformer.parameter_breakdown(DEEPSEEK)
        routed = 2 * tokens * DEEPSEEK.moe_layers * DEEPSEEK.experts_per_token * parts.mlp / 8
        factor = experts.expert_imbalance(tokens, 256, 8, 8)
        assert work.linear.flops - tp.linear.flops == pytest.approx(routed * (factor - 1), rel=1e-6)


def test_a_large_batch_reads_most_of_deepseeks_experts_but_sixteen_tokens_do_not():
    touched = serving.expected_experts_touched(256, 8, np.array([16, 256]))
    assert touched[0] / 256 == pytest.approx(0.40, abs=0.02)
    assert touched[1] / 256 > 0.99


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: configure("h200", expert_exchange="nccl"), "expert_exchange"),
        (lambda: expert_exchange(DEEPSEEK, "pplx", 1, 1), "exchange"),
        (lambda: expert_exchange(DEEPSEEK, "deepep", -1, 1), "tokens"),
        (
            lambda: pass_work(
                DEEPSEEK,
                H200,
                Layout(8, 1, 1, True, True),
                0,
                configure("h200").resolved("h200"),
                prefill=8,
                prompts=-1,
            ),
            "prompts",
        ),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# --- the per-operator roofline ------------------------------------------------------------------


def test_expected_experts_touched():
    assert serving.expected_experts_touched(8, 2, 1) == pytest.approx(2.0)
    assert serving.expected_experts_touched(8, 2, 16) == pytest.approx(8 * (1 - 0.75**16))
    assert serving.expected_experts_touched(8, 2, 0) == 0


@given(st.integers(1, 64), st.integers(1, 8), st.floats(0, 1e5))
def test_experts_touched_stays_between_top_k_and_all(experts, k, tokens):
    k = min(k, experts)
    touched = serving.expected_experts_touched(experts, k, tokens)
    assert 0 <= touched <= experts + 1e-9
    if tokens >= 1:
        assert touched >= k - 1e-9
