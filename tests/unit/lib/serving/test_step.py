"""Tests for lib.serving.step: the per-operator roofline of a stage, the decode step, steady-state prefill."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from serving_support import H100, IDEAL

from lib import formats, serving, transformer
from lib.hardware import DEVICES
from lib.serving import Layout
from lib.serving.engine import COMPUTE_EFFICIENCY
from lib.transformer import PRESETS
from lib.units import GB, us

#: An engine with nothing but the roofline: ideal fractions and no fixed costs, for hand-worked numbers.


def test_mixtral_reads_almost_every_expert_at_batch_16():
    # The expert read-through: 7.92 of 8 experts per layer at B = 16, about 92.5 GB of linear weights.
    mixtral = PRESETS["mixtral-8x7b"]
    one = serving.stage_work(mixtral, H100, Layout(), 0, tokens=1, context=0, **IDEAL)
    sixteen = serving.stage_work(mixtral, H100, Layout(), 0, tokens=16, context=0, **IDEAL)
    parts = transformer.parameter_breakdown(mixtral)
    linear = 2 * (transformer.active_parameter_count(mixtral) - parts.embedding - parts.head - parts.final_norm)
    assert one.linear.bytes == pytest.approx(linear)
    assert sixteen.linear.bytes / GB == pytest.approx(92.5 - 0.26, abs=1.0)


def test_batch_one_decode_by_hand():
    # One H100, no fixed costs, ideal fractions: the step reads every weight once but the input table (a
    # lookup) and the final norm (4,096 numbers, left out), reads its cache in each of the 32 layers and
    # writes one token's keys and values; nothing is compute-bound.
    llama = PRESETS["llama-3-8b"]
    parts = transformer.parameter_breakdown(llama)
    context = 1000
    step = serving.decode_step(llama, H100, Layout(), batch=1, context=context, **IDEAL)
    read = 2 * (transformer.parameter_count(llama) - parts.embedding - parts.final_norm) + (context + 1) * 131_072
    assert step.tpot == pytest.approx(read / DEVICES["h100-sxm"].memory_bandwidth, rel=1e-9)
    assert step.bound == "memory"
    # The fixed costs add exactly: 32 layers x 110 us with CUDA graphs, plus the eager launches without.
    graphs = serving.decode_step(llama, H100, Layout(), 1, context, memory_efficiency=1.0, compute_efficiency=1.0)
    assert graphs.tpot - step.tpot == pytest.approx(32 * 110 * us)
    eager = serving.decode_step(
        llama, H100, Layout(), 1, context, memory_efficiency=1.0, compute_efficiency=1.0, cuda_graphs=False
    )
    assert eager.tpot - graphs.tpot == pytest.approx(32 * serving.engine.EAGER_LAYER_LAUNCH)


def test_operators_add_where_a_whole_step_roofline_would_overlap_them():
    # At batch 512 and a 2,048-token context the linear layers are compute-bound and attention is bound by
    # the cache it reads: the step takes the sum of the two, not the larger.
    llama = PRESETS["llama-3-8b"]
    work = serving.stage_work(llama, H100, Layout(), 0, 512, 2048, **IDEAL)
    assert work.linear.compute_time > work.linear.memory_time
    assert work.attention.memory_time > work.attention.compute_time
    assert work.time == pytest.approx(
        work.linear.compute_time + work.attention.memory_time + work.head_time + work.communication_time
    )
    whole = max(work.memory_time, work.compute_time)
    assert work.time > 1.05 * whole


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["llama-3-8b", "mixtral-8x7b", "llama-3-70b"]),
    st.sampled_from([1, 2, 4, 8]),
    st.integers(1, 512),
    st.integers(1, 512),
    st.integers(0, 16384),
)
def test_a_larger_batch_never_lowers_the_step_time(key, tp, batch, extra, context):
    # With NCCL alone. The engine's all-reduce may lower it: vLLM hands messages of 8 MiB and more from its
    # two-shot kernel to NCCL, which is faster there (test_the_engine_cut_off_can_lower_the_step_time).
    config = PRESETS[key]
    small = serving.decode_step(config, H100, Layout(tp=tp), batch, context, allreduce="nccl")
    large = serving.decode_step(config, H100, Layout(tp=tp), batch + extra, context, allreduce="nccl")
    assert large.tpot >= small.tpot * (1 - 1e-12)


def test_the_engine_cut_off_can_lower_the_step_time():
    # Llama-3 70B on TP 4: 465 tokens all-reduce 7.3 MiB with the two-shot kernel, 512 tokens 8 MiB with NCCL.
    config, layout = PRESETS["llama-3-70b"], Layout(tp=4)
    below, at = (serving.decode_step(config, H100, layout, batch, 0) for batch in (465, 512))
    assert at.tpot < below.tpot
    nccl = [serving.decode_step(config, H100, layout, batch, 0, allreduce="nccl") for batch in (465, 512)]
    assert nccl[1].tpot > nccl[0].tpot


def test_pipeline_decode_is_the_slower_of_the_loop_and_m_stages():
    llama = PRESETS["llama-3-70b"]
    step = serving.decode_step(llama, H100, Layout(pp=4), batch=8, context=1024)
    stages = np.array(step.stage_times)
    assert step.microbatches == 4
    assert step.tpot == pytest.approx(max(stages.sum() + step.hop_time, 4 * stages.max()))
    lonely = serving.decode_step(llama, H100, Layout(pp=4), batch=2, context=1024)
    assert lonely.microbatches == 2


# --- steady state: every step carries prefill --------------------------------------------------------


def test_steady_state_prefill_by_hand():
    # 64 sequences of 1,024 + 256 tokens: 64 / 256 = 0.25 prompts finish their prefill per step, 256 prompt
    # tokens; a quarter of the prompts found in the prefix cache leaves 192.
    decode, prefill, context = serving.steady_prefill(64, 1024, 256, 0.25)
    assert decode == pytest.approx(64 * 255 / 256) and prefill == pytest.approx(192)
    assert context == pytest.approx((256 + 1024 + 1) / 2)
    llama = PRESETS["llama-3-8b"]
    alone = serving.decode_step(llama, H100, Layout(), 64, 1152, **IDEAL)
    loaded = serving.decode_step(llama, H100, Layout(), 64, 1152, 1024, 256, **IDEAL)
    assert loaded.prefill_tokens == pytest.approx(256)
    assert loaded.tpot > alone.tpot and 0 < loaded.prefill_share < 1
    # Prompts come whole: a step computes k prompts of 1,024 tokens, k Poisson of mean 0.25, and the mean step
    # is the Poisson mix of those steps, each priced by loop_time.
    steps = [serving.loop_time(llama, H100, Layout(), 64 * 255 / 256, 1152, 1024 * k, 512.5, **IDEAL) for k in range(8)]
    chances = [math.exp(-0.25) * 0.25**k / math.factorial(k) for k in range(8)]
    assert float(loaded.tpot) == pytest.approx(sum(p * t for p, t in zip(chances, steps)), rel=1e-6)
    # Smeared evenly over the steps instead, the same prefill would cost less: a compute-bound step with a
    # whole prompt takes longer than the memory-bound ones it replaces save.
    smeared = serving.loop_time(llama, H100, Layout(), 64 * 255 / 256, 1152, 256, 512.5, **IDEAL)
    assert float(loaded.tpot) > float(smeared)


# --- formats -----------------------------------------------------------------------------------------


def test_fp8_doubles_the_compute_peak_on_hopper_and_moves_the_ridge():
    # FP8 W8A8 multiplies at the FP8 peak, twice the 16-bit one; the same bytes at the 16-bit peak (W8A16)
    # would turn compute-bound at half the batch. At one efficiency the ridge is (F / BW) b / 2.
    h100 = DEVICES["h100-sxm"]
    assert formats.compute_peak(h100, "fp8") == 2 * formats.compute_peak(h100, "bf16") == 2 * h100.peak_flops
    llama = PRESETS["llama-3-70b"]
    flat = dict(compute_efficiency=COMPUTE_EFFICIENCY)
    fp8 = serving.compute_bound_batch(llama, "h100-sxm", weight_format="fp8", **flat)
    bf16 = serving.compute_bound_batch(llama, "h100-sxm", weight_format="bf16", **flat)
    int8 = serving.compute_bound_batch(llama, "h100-sxm", weight_format="int8", **flat)  # W8A16: 1 + 2/128 bytes
    assert fp8 == pytest.approx(bf16, rel=1e-6)  # found on a grid of 1,201 batches, interpolated
    assert fp8 / int8 == pytest.approx(2 / (1 + 2 / 128), rel=1e-6)
    engine = serving.configure("h100-sxm", **flat)
    # The products leave out the norms' weights, which the bytes count: 2 d of 855 million numbers a layer.
    ridge = h100.ridge_intensity * engine.compute_efficiency / engine.memory_efficiency
    assert fp8 == pytest.approx(ridge, rel=1e-4)
    # On an A100, without FP8 tensor cores, FP8 weights run as W8A16: the ridge halves.
    assert serving.compute_bound_batch(llama, "a100-80gb", weight_format="fp8", **flat) == pytest.approx(
        serving.compute_bound_batch(llama, "a100-80gb", **flat) / 2, rel=1e-6
    )


def test_measured_kernels_put_the_ridge_where_the_product_outlasts_its_weight_reads():
    # DeepGEMM's FP8 kernels reach 206-336 TFLOP/s on 64 rows (10-17 % of 1,979), XLA's BF16 ones 42 % on 256:
    # with measured kernels FP8 turns compute-bound at fewer sequences than BF16, and W8A16 at half of BF16.
    llama = PRESETS["llama-3-70b"]
    fp8, bf16, int8 = (serving.compute_bound_batch(llama, "h100-sxm", weight_format=f) for f in ("fp8", "bf16", "int8"))
    assert fp8 < bf16
    assert int8 == pytest.approx(bf16 / 2 * (1 + 2 / 128), rel=1e-2)  # the same table, fewer bytes to read
    engine = serving.configure("h100-sxm", weight_format="fp8")
    for batch, bound in ((fp8 / 1.2, False), (fp8 * 1.2, True)):
        linear = serving.pass_work(llama, H100, Layout(), 0, engine, decode=batch).linear
        assert (linear.compute_time > linear.memory_time) == bound
