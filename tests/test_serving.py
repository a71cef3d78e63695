"""Tests for lib.serving: KV cache, memory fit, the decode roofline, prefill, and the planner."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lib import serving, transformer
from lib.hardware import DEVICES
from lib.serving import Cluster, Layout
from lib.transformer import PRESETS, ModelConfig
from lib.units import GB, GiB, ms

H100 = Cluster("h100-sxm")


# --- memory --------------------------------------------------------------------------------

def test_kv_cache_by_hand():
    # Llama-2 7B: 2 (K and V) x 32 layers x 32 KV heads x 128 wide x 2 bytes.
    assert serving.kv_cache_bytes(PRESETS["llama-2-7b"], 1) == 2 * 32 * 32 * 128 * 2 == 524_288
    # Llama-3 70B keeps 8 KV heads: 2 x 80 x 8 x 128 x 2 = 327,680 bytes per token.
    assert serving.kv_cache_bytes(PRESETS["llama-3-70b"], [1, 10]).tolist() == [327_680, 3_276_800]


def test_kv_per_device_follows_heads_and_stages():
    llama = PRESETS["llama-3-70b"]
    whole = serving.kv_cache_bytes(llama, 1)
    assert serving.kv_bytes_per_token_per_device(llama, Layout(tp=4)) == whole / 4
    assert serving.kv_bytes_per_token_per_device(llama, Layout(tp=8, pp=2)) == whole / 8 / 2
    assert serving.kv_bytes_per_token_per_device(llama, Layout(tp=16)) == whole / 8   # one replicated head


@pytest.mark.parametrize("key", sorted(PRESETS))
def test_one_device_holds_every_parameter(key):
    config = PRESETS[key]
    assert serving.weight_bytes_per_device(config, Layout(), 2) == 2 * transformer.parameter_count(config)


def test_stages_hold_embedding_first_and_head_last():
    llama = PRESETS["llama-3-8b"]
    parts = transformer.parameter_breakdown(llama)
    first, last = serving.stage_weight_bytes(llama, Layout(pp=2), 1)
    assert first - last == pytest.approx(parts.embedding - parts.head - parts.final_norm)
    assert first + last == transformer.parameter_count(llama)


def test_memory_fit_by_hand():
    llama = PRESETS["llama-3-8b"]
    fit = serving.memory_fit(llama, 80 * GiB, Layout(), sequences=10, context=4096, reserve=0.1, step_tokens=2048)
    assert fit.usable == pytest.approx(0.9 * 80 * GiB)
    assert fit.kv_cache == pytest.approx(10 * 4096 * 131_072)
    room = fit.usable - fit.weights - fit.activations
    assert fit.max_sequences == math.floor(room / (4096 * 131_072))
    assert fit.fits and fit.reason == ""
    crowded = serving.memory_fit(llama, 80 * GiB, Layout(), sequences=fit.max_sequences + 1, context=4096)
    assert not crowded.fits and "KV cache" in crowded.reason


# --- experts and the decode roofline --------------------------------------------------------

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


def test_mixtral_reads_almost_every_expert_at_batch_16():
    # The expert read-through: 7.92 of 8 experts per layer at B = 16, about 92.5 GB per step.
    mixtral = PRESETS["mixtral-8x7b"]
    one = serving.stage_work(mixtral, H100, Layout(), 0, tokens=1, context=0)
    sixteen = serving.stage_work(mixtral, H100, Layout(), 0, tokens=16, context=0)
    parts = transformer.parameter_breakdown(mixtral)
    no_table = 2 * (transformer.active_parameter_count(mixtral) - parts.embedding)   # 2 experts, no lookup table
    assert one.read_bytes == pytest.approx(no_table)
    assert sixteen.read_bytes / GB == pytest.approx(92.5, abs=1.0)


def test_batch_one_decode_reads_the_weights_but_not_the_embedding():
    llama = PRESETS["llama-3-8b"]
    parts = transformer.parameter_breakdown(llama)
    step = serving.decode_step(llama, H100, Layout(), batch=1, context=0)
    read = 2 * (transformer.parameter_count(llama) - parts.embedding)
    assert step.tpot == pytest.approx(read / DEVICES["h100-sxm"].memory_bandwidth)
    assert step.bound == "memory"


@settings(max_examples=40)
@given(st.sampled_from(["llama-3-8b", "mixtral-8x7b", "llama-3-70b"]), st.sampled_from([1, 2, 4, 8]),
       st.integers(1, 512), st.integers(1, 512), st.integers(0, 16384))
def test_a_larger_batch_never_lowers_the_step_time(key, tp, batch, extra, context):
    config = PRESETS[key]
    small = serving.decode_step(config, H100, Layout(tp=tp), batch, context)
    large = serving.decode_step(config, H100, Layout(tp=tp), batch + extra, context)
    assert large.tpot >= small.tpot * (1 - 1e-12)


def test_pipeline_decode_is_the_slower_of_the_loop_and_m_stages():
    llama = PRESETS["llama-3-70b"]
    step = serving.decode_step(llama, H100, Layout(pp=4), batch=8, context=1024)
    stages = np.array(step.stage_times)
    assert step.microbatches == 4
    assert step.tpot == pytest.approx(max(stages.sum() + step.hop_time, 4 * stages.max()))
    # Fewer sequences than stages: one sequence per microbatch, the rest of the loop idles.
    lonely = serving.decode_step(llama, H100, Layout(pp=4), batch=2, context=1024)
    assert lonely.microbatches == 2


def test_prefill_is_compute_bound_and_tp_shortens_it():
    llama = PRESETS["llama-3-70b"]
    work = serving.stage_work(llama, H100, Layout(tp=8), 0, tokens=4096, context=0, prefill=True)
    assert work.compute_time > work.memory_time
    times = [serving.prefill_time(llama, H100, Layout(tp=k), 4096) for k in (2, 4, 8)]
    assert times[0] > times[1] > times[2]


# --- the planner --------------------------------------------------------------------------------

def _configs():
    heads = st.sampled_from([8, 16, 32])
    return st.builds(
        lambda layers, heads, group, width, ffn, experts: ModelConfig(
            "random", layers=layers, hidden=heads * width, heads=heads, kv_heads=heads // group,
            ffn_hidden=ffn, vocab=32000, experts=experts, experts_per_token=min(2, experts)),
        st.integers(2, 96), heads, st.sampled_from([1, 2, 4, 8]), st.sampled_from([64, 128]),
        st.sampled_from([2816, 11008, 14336, 28672]), st.sampled_from([1, 1, 8]))


@settings(max_examples=40)
@given(_configs(), st.sampled_from(sorted(DEVICES)), st.sampled_from([1, 2, 4, 8, 16]), st.integers(1, 256),
       st.integers(1, 8192), st.integers(1, 2048))
def test_plan_never_fits_what_exceeds_the_device(config, device, devices, batch, prompt, output):
    rows = serving.plan(config, device, devices, batch, prompt, output)
    valid = transformer.valid_tp_degrees(config, devices, replicate_kv=True)
    assert rows, "there is always at least tp = pp = 1"
    for row in rows:
        assert row.tp in valid
        assert row.tp * row.pp * row.dp == devices
        if row.fits:
            assert row.memory_per_device <= row.usable_per_device <= DEVICES[device].memory_bytes
            assert row.reason == ""
        else:
            assert row.reason
        for value in (row.ttft, row.tpot, row.tokens_per_s, row.memory_per_device):
            assert math.isfinite(value) and value > 0


def test_plan_targets_and_cost():
    rows = serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 2, 32, 1024, 256, tpot_limit=5 * ms,
                        price_per_device_hour=2.0)
    for row in rows:
        assert row.meets_slo == (row.tpot <= 5 * ms)
        assert row.cost_per_million_tokens == pytest.approx(2.0 * 2 / 3600 / row.tokens_per_s * 1e6)
    chosen = serving.best(rows)
    assert chosen.fits and chosen.meets_slo
    assert all(chosen.tokens_per_s_per_device >= r.tokens_per_s_per_device for r in rows if r.fits and r.meets_slo)


def test_best_is_none_when_nothing_qualifies():
    rows = serving.plan(PRESETS["llama-3-70b"], "l4", 1, 1, 128, 128)
    assert not rows[0].fits and serving.best(rows) is None


@pytest.mark.parametrize("call, name", [
    (lambda: serving.kv_cache_bytes(PRESETS["llama-3-8b"], -1), "tokens"),
    (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 0, 1, 1, 1), "devices"),
    (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 12, 1, 1, 1), "devices"),
    (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 2, 1.5, 1, 1), "batch"),
    (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 2, 1, 0, 1), "prompt_tokens"),
    (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 2, 1, 1, 1, memory_efficiency=1.5),
     "memory_efficiency"),
    (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 2, 1, 1, 1, tpot_limit=0), "tpot_limit"),
    (lambda: serving.plan(PRESETS["llama-3-8b"], "tpu", 2, 1, 1, 1), "device"),
    (lambda: serving.memory_fit(PRESETS["llama-3-8b"], 80 * GiB, Layout(), 1, 1, reserve=1.0), "reserve"),
    (lambda: serving.expected_experts_touched(8, 9, 1), "top_k"),
    (lambda: serving.decode_step(PRESETS["llama-3-8b"], H100, Layout(tp=3), 1, 1), "tp"),
    (lambda: serving.decode_step(PRESETS["llama-3-8b"], H100, Layout(), float("nan"), 1), "batch"),
    (lambda: Layout(tp=0), "tp"),
    (lambda: serving.check_layout(PRESETS["llama-3-8b"], Layout(expert_parallel=True)), "expert_parallel"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# --- the ridge of the decode roofline (chapter 7) ---------------------------------------------------

@pytest.mark.parametrize("slug", sorted(DEVICES))
@pytest.mark.parametrize("b", [1, 2])
def test_ridge_batch_without_cache_is_ridge_intensity_times_half_b(slug, b):
    # No cache: F = 2 W / b per sequence, so compute = memory at B = I b / 2, whatever the model size.
    for key in ("llama-3-8b", "llama-3-70b"):
        ridge = serving.compute_bound_batch(PRESETS[key], slug, bytes_per_element=b)
        assert ridge == pytest.approx(DEVICES[slug].ridge_intensity * b / 2, rel=1e-12)


@pytest.mark.parametrize("context", [0, 256, 1024])
def test_ridge_batch_is_where_the_step_changes_side(context):
    llama = PRESETS["llama-3-70b"]
    ridge = serving.compute_bound_batch(llama, "h100-sxm", context=context)
    assert math.isfinite(ridge)
    below = serving.stage_work(llama, H100, Layout(), 0, math.floor(ridge), context)
    above = serving.stage_work(llama, H100, Layout(), 0, math.ceil(ridge) + 1, context)
    assert below.memory_time >= below.compute_time
    assert above.compute_time > above.memory_time


def test_ridge_batch_moves_out_and_then_never_comes():
    llama = PRESETS["llama-3-8b"]
    contexts = np.arange(0, 2049, 64)
    ridge = serving.compute_bound_batch(llama, "h100-sxm", context=contexts)
    finite = np.isfinite(ridge)
    assert np.all(np.diff(ridge[finite]) > 0)             # KV reads push it out
    assert finite[0] and not finite[-1]                    # and past some context it never comes
    assert np.all(finite[:np.argmin(finite)])              # a single switch
    # At a context past the switch, even a huge batch stays memory-bound.
    work = serving.stage_work(llama, H100, Layout(), 0, 1e6, 2048)
    assert work.memory_time > work.compute_time
    # 8-bit KV halves the cache bytes and brings the ridge back.
    assert math.isfinite(serving.compute_bound_batch(llama, "h100-sxm", context=256, kv_bytes_per_element=1))
    assert serving.compute_bound_batch(llama, "h100-sxm", context=256, kv_bytes_per_element=1) < \
        serving.compute_bound_batch(llama, "h100-sxm", context=256)


def test_ridge_batch_rejects_a_mixture_of_experts():
    with pytest.raises(ValueError, match="config"):
        serving.compute_bound_batch(PRESETS["mixtral-8x7b"], "h100-sxm")
    with pytest.raises(ValueError, match="tp"):
        serving.compute_bound_batch(PRESETS["llama-3-8b"], "h100-sxm", tp=3)
