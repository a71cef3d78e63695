"""Tests for lib.serving: memory, the per-operator roofline, the steady-state step, prefill, and the planner."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lib import formats, serving, transformer
from lib.hardware import DEVICES
from lib.serving import Cluster, Engine, Layout
from lib.transformer import PRESETS, ModelConfig
from lib.units import GB, GiB, MiB, ms, us

H100 = Cluster("h100-sxm")
#: An engine with nothing but the roofline: ideal fractions and no fixed costs, for hand-worked numbers.
IDEAL = dict(memory_efficiency=1.0, compute_efficiency=1.0, layer_overhead=0.0, step_overhead=0.0)


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
    assert serving.weight_bytes_per_device(config, Layout()) == 2 * transformer.parameter_count(config)


def test_an_8_bit_format_halves_the_linear_layers_but_not_the_tables():
    llama = PRESETS["llama-3-70b"]
    parts = transformer.parameter_breakdown(llama)
    tables = parts.embedding + parts.head + parts.final_norm
    linear = transformer.parameter_count(llama) - tables
    for name, b in (("fp8", 1.0), ("int8", 1 + 2 / 128), ("int4", 0.5 + 2 / 128)):
        assert serving.weight_bytes_per_device(llama, Layout(), name) == pytest.approx(linear * b + 2 * tables)


def test_stages_hold_embedding_first_and_head_last():
    llama = PRESETS["llama-3-8b"]
    parts = transformer.parameter_breakdown(llama)
    first, last = serving.stage_weight_bytes(llama, Layout(pp=2))
    assert first - last == pytest.approx(2 * (parts.embedding - parts.head - parts.final_norm))
    assert first + last == 2 * transformer.parameter_count(llama)


def test_memory_fit_by_hand():
    # vLLM 0.33.0 on an H100: 92 % of the 81,559 MiB the driver reports, less 1.79 GiB outside PyTorch (one GPU)
    # and 0.36 GiB of CUDA graphs; activations for its 8,192-token budget and 1,024 sampled sequences.
    llama = PRESETS["llama-3-8b"]
    fit = serving.memory_fit(llama, "h100-sxm", Layout(), sequences=10, context=4096)
    assert fit.usable == pytest.approx(math.floor(81559 * MiB * 0.92) - (1.79 + 0.36) * GiB)
    assert fit.activations == pytest.approx(serving.activation_bytes(llama, 8192, 1, 1024))
    assert fit.kv_cache == pytest.approx(10 * 4096 * 131_072)
    room = fit.usable - fit.weights - fit.activations
    assert fit.max_sequences == math.floor(room / (4096 * 131_072))
    assert fit.fits and fit.reason == ""
    crowded = serving.memory_fit(llama, "h100-sxm", Layout(), sequences=fit.max_sequences + 1, context=4096)
    assert not crowded.fits and "KV cache" in crowded.reason
    # An 8-bit cache holds twice the sequences in the same room.
    fp8 = serving.memory_fit(llama, "h100-sxm", Layout(), 1, 4096, kv_format="fp8")
    assert fp8.max_sequences == math.floor(room / (4096 * 131_072 / 2))


def test_the_catalogue_holds_what_the_driver_reports():
    # nvidia-smi's totals, in MiB: the L4 sold as 24GB has 23,034 MiB, not 24 GiB.
    assert DEVICES["l4"].memory_bytes == 23034 * MiB < 24 * GiB
    assert DEVICES["l40s"].memory_bytes == 46068 * MiB and DEVICES["h100-sxm"].memory_bytes == 81559 * MiB
    for device in DEVICES.values():
        assert device.memory_note and device.memory_label


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
    eager = serving.decode_step(llama, H100, Layout(), 1, context, memory_efficiency=1.0, compute_efficiency=1.0,
                                cuda_graphs=False)
    assert eager.tpot - graphs.tpot == pytest.approx(32 * serving.engine.EAGER_LAYER_LAUNCH)


def test_operators_add_where_a_whole_step_roofline_would_overlap_them():
    # At batch 512 and a 2,048-token context the linear layers are compute-bound and attention is bound by
    # the cache it reads: the step takes the sum of the two, not the larger.
    llama = PRESETS["llama-3-8b"]
    work = serving.stage_work(llama, H100, Layout(), 0, 512, 2048, **IDEAL)
    assert work.linear.compute_time > work.linear.memory_time
    assert work.attention.memory_time > work.attention.compute_time
    assert work.time == pytest.approx(work.linear.compute_time + work.attention.memory_time + work.head_time
                                      + work.communication_time)
    whole = max(work.memory_time, work.compute_time)
    assert work.time > 1.05 * whole


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["llama-3-8b", "mixtral-8x7b", "llama-3-70b"]), st.sampled_from([1, 2, 4, 8]),
       st.integers(1, 512), st.integers(1, 512), st.integers(0, 16384))
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
    steps = [serving.loop_time(llama, H100, Layout(), 64 * 255 / 256, 1152, 1024 * k, 512.5, **IDEAL)
             for k in range(8)]
    chances = [math.exp(-0.25) * 0.25**k / math.factorial(k) for k in range(8)]
    assert float(loaded.tpot) == pytest.approx(sum(p * t for p, t in zip(chances, steps)), rel=1e-6)
    # Smeared evenly over the steps instead, the same prefill would cost less: a compute-bound step with a
    # whole prompt takes longer than the memory-bound ones it replaces save.
    smeared = serving.loop_time(llama, H100, Layout(), 64 * 255 / 256, 1152, 256, 512.5, **IDEAL)
    assert float(loaded.tpot) > float(smeared)


def test_prefix_hits_lower_the_prefill_work_and_never_the_throughput():
    llama = PRESETS["llama-3-70b"]
    rates = [serving.plan(llama, "h100-sxm", 8, 256, 4096, 256, prefix_hit_rate=h)[-1].tokens_per_s
             for h in (0.0, 0.5, 0.9)]
    assert rates[0] < rates[1] < rates[2]


def _implied_rates(config, row, prompt, output, hit, weight_format):
    """Per device: the FLOP/s and the bytes/s a row's throughput implies, counted by hand, not through lib."""
    parts = transformer.parameter_breakdown(config)
    active = parts.total(config.experts_per_token) - parts.embedding
    requests_per_s = row.tokens_per_s / output
    context = prompt + output / 2
    attention = 4 * config.layers * config.heads * config.head_dim
    per_request = (2 * active * (output + (1 - hit) * prompt)
                   + attention * (output * context + (1 - hit) * prompt * prompt / 2))
    flops = requests_per_s * per_request / row.devices
    # Every step of every replica reads each device's share of the linear weights at least once.
    steps_per_s = row.tokens_per_s / (row.batch * row.dp)
    linear = (parts.total(config.experts_per_token) - parts.embedding - parts.head - parts.final_norm)
    bytes_ = steps_per_s * linear * formats.weight_format(weight_format).bytes_per_weight / (row.tp * row.pp)
    return flops, bytes_


@settings(max_examples=60, deadline=None)
@given(key=st.sampled_from(["llama-3-8b", "llama-3-70b", "mistral-7b", "qwen2-7b", "mixtral-8x7b"]),
       device=st.sampled_from(["h100-sxm", "a100-80gb", "l40s", "l4"]), devices=st.sampled_from([1, 2, 4, 8, 16]),
       prompt=st.integers(128, 8192), output=st.integers(16, 2048), batch=st.integers(1, 2048),
       weight_format=st.sampled_from(sorted(formats.WEIGHT_FORMATS)), hit=st.sampled_from([0.0, 0.5]))
def test_every_feasible_row_fits_the_peaks_of_its_devices(key, device, devices, prompt, output, batch,
                                                         weight_format, hit):
    config = PRESETS[key]
    rows = serving.plan(config, device, devices, batch, prompt, output, weight_format=weight_format,
                        prefix_hit_rate=hit)
    dev = DEVICES[device]
    peak = max(formats.compute_peak(dev, weight_format), dev.peak_flops)
    for row in rows:
        if not row.fits:
            continue
        flops, bytes_ = _implied_rates(config, row, prompt, output, hit, weight_format)
        assert flops <= peak * (1 + 1e-9), (row.name, flops / peak)
        assert bytes_ <= dev.memory_bandwidth * (1 + 1e-9), (row.name, bytes_ / dev.memory_bandwidth)
        assert row.memory_per_device <= row.usable_per_device <= dev.memory_bytes


@pytest.mark.parametrize("key,device,devices,weight_format", [
    ("mixtral-8x7b", "h100-sxm", 2, "bf16"), ("mixtral-8x7b", "h100-sxm", 8, "fp8"),
    ("mixtral-8x7b", "a100-80gb", 4, "bf16"), ("qwen3-235b-a22b", "h100-sxm", 8, "fp8"),
])
@pytest.mark.parametrize("batch", [8, 512])
def test_expert_and_attention_data_parallel_rows_fit_the_peaks(key, device, devices, weight_format, batch):
    config = PRESETS[key]
    rows = serving.plan(config, device, devices, batch, 1024, 256, weight_format=weight_format,
                        expert_parallel="all")
    dev = DEVICES[device]
    peak = max(formats.compute_peak(dev, weight_format), dev.peak_flops)
    assert any(row.attention_dp for row in rows) and (batch > 8 or any(row.fits for row in rows))
    for row in rows:
        if row.fits:
            flops, bytes_ = _implied_rates(config, row, 1024, 256, 0.0, weight_format)
            assert flops <= peak * (1 + 1e-9), (row.name, flops / peak)
            assert bytes_ <= dev.memory_bandwidth * (1 + 1e-9), (row.name, bytes_ / dev.memory_bandwidth)
            assert row.memory_per_device <= row.usable_per_device <= dev.memory_bytes


# --- formats -----------------------------------------------------------------------------------------

def test_fp8_doubles_the_compute_peak_on_hopper_and_moves_the_ridge():
    # FP8 W8A8 multiplies at the FP8 peak, twice the 16-bit one; the same bytes at the 16-bit peak (W8A16)
    # would turn compute-bound at half the batch. The ridge is (F / BW) b / 2.
    h100 = DEVICES["h100-sxm"]
    assert formats.compute_peak(h100, "fp8") == 2 * formats.compute_peak(h100, "bf16") == 2 * h100.peak_flops
    llama = PRESETS["llama-3-70b"]
    fp8 = serving.compute_bound_batch(llama, "h100-sxm", weight_format="fp8")
    bf16 = serving.compute_bound_batch(llama, "h100-sxm", weight_format="bf16")
    int8 = serving.compute_bound_batch(llama, "h100-sxm", weight_format="int8")     # W8A16: 1 + 2/128 bytes
    assert fp8 == pytest.approx(bf16, rel=1e-12)
    assert fp8 / int8 == pytest.approx(2 / (1 + 2 / 128), rel=1e-12)
    engine = serving.configure("h100-sxm")
    assert fp8 == pytest.approx(h100.ridge_intensity * engine.compute_efficiency / engine.memory_efficiency, rel=1e-9)
    # On an A100, without FP8 tensor cores, FP8 weights run as W8A16: the ridge halves.
    assert serving.compute_bound_batch(llama, "a100-80gb", weight_format="fp8") == pytest.approx(
        serving.compute_bound_batch(llama, "a100-80gb") / 2, rel=1e-12)


def test_every_peak_cites_a_datasheet():
    for slug, device in DEVICES.items():
        assert device.source and device.source_note, slug
        if device.fp8_flops:
            assert "FP8" in device.source_note, slug
            assert 1.99 < device.fp8_flops / device.peak_flops < 2.03, slug   # the L40S prints 733 and 362.05


# --- the planner --------------------------------------------------------------------------------

def _configs():
    heads = st.sampled_from([8, 16, 32])
    return st.builds(
        lambda layers, heads, group, width, ffn, experts: ModelConfig(
            "random", layers=layers, hidden=heads * width, heads=heads, kv_heads=heads // group,
            ffn_hidden=ffn, vocab=32000, experts=experts, experts_per_token=min(2, experts)),
        st.integers(2, 96), heads, st.sampled_from([1, 2, 4, 8]), st.sampled_from([64, 128]),
        st.sampled_from([2816, 11008, 14336, 28672]), st.sampled_from([1, 1, 8]))


@settings(max_examples=40, deadline=None)
@given(_configs(), st.sampled_from(sorted(DEVICES)), st.sampled_from([1, 2, 4, 8, 16]), st.integers(1, 256),
       st.integers(1, 8192), st.integers(1, 2048))
def test_plan_never_fits_what_exceeds_the_device(config, device, devices, batch, prompt, output):
    rows = serving.plan(config, device, devices, batch, prompt, output)
    valid = transformer.valid_tp_degrees(config, devices, replicate_kv=True)
    assert rows, "there is always at least tp = pp = 1"
    engine = serving.configure(device)
    for row in rows:
        assert row.tp in valid
        assert row.tp * row.pp * row.dp == devices
        if row.fits:
            assert row.memory_per_device <= row.usable_per_device <= DEVICES[device].memory_bytes
            assert row.batch <= engine.max_num_seqs
            assert row.reason == ""
        else:
            assert row.reason
        for value in (row.ttft, row.tpot, row.tokens_per_s, row.memory_per_device):
            assert math.isfinite(value) and value > 0


def test_plan_counts_prefill_in_the_throughput():
    # The same concurrency with a longer prompt: more prefill per step, lower throughput per device.
    llama = PRESETS["llama-3-70b"]
    short, long = (serving.plan(llama, "h100-sxm", 8, 128, prompt, 256)[-1] for prompt in (128, 4096))
    assert long.tokens_per_s_per_device < short.tokens_per_s_per_device
    assert long.prefill_share > short.prefill_share
    assert long.requests_per_s == pytest.approx(long.tokens_per_s / 256)


def test_plan_refuses_more_sequences_than_the_scheduler_runs():
    rows = serving.plan(PRESETS["llama-3-8b"], "a100-80gb", 1, 300, 128, 128)       # A100: max_num_seqs 256
    assert not rows[0].fits and "max_num_seqs = 256" in rows[0].reason
    allowed = serving.plan(PRESETS["llama-3-8b"], "a100-80gb", 1, 300, 128, 128, max_num_seqs=512,
                           max_num_batched_tokens=8192)
    assert allowed[0].fits


def test_plan_targets_and_cost():
    rows = serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 2, 32, 1024, 256, tpot_limit=10 * ms,
                        price_per_device_hour=2.0)
    for row in rows:
        assert row.meets_slo == (row.tpot <= 10 * ms)
        assert row.cost_per_million_tokens == pytest.approx(2.0 * 2 / 3600 / row.tokens_per_s * 1e6)
    chosen = serving.best(rows)
    assert chosen.fits and chosen.meets_slo


def test_best_is_none_when_nothing_qualifies():
    rows = serving.plan(PRESETS["llama-3-70b"], "l4", 1, 1, 128, 128)
    assert not rows[0].fits and serving.best(rows) is None


def test_inter_node_links_follow_the_generation():
    assert Cluster("a100-80gb").inter_link.name.startswith("InfiniBand HDR")
    assert Cluster("h100-sxm").inter_link.name.startswith("InfiniBand NDR")
    assert Cluster("h200").nics_per_node == 8 and Cluster("l4").nics_per_node == 1


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
    (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 1, 1, 1, 1, weight_format="fp4"), "weight_format"),
    (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 1, 1, 1, 1, kv_format="int8"), "kv_format"),
    (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 1, 1, 1, 1, allreduce="mpi"), "allreduce"),
    (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 1, 1, 1, 1, prefix_hit_rate=1.0), "prefix_hit_rate"),
    (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 1, 1, 1, 1, prefix_hit_rate=-0.1),
     "prefix_hit_rate"),
    (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 1, 1, 1, 1, layer_overhead=-1e-6), "layer_overhead"),
    (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 1, 1, 1, 1, step_overhead=float("nan")),
     "step_overhead"),
    (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 1, 1, 1, 1, bytes_per_element=1), "bytes_per_element"),
    (lambda: serving.decode_step(PRESETS["llama-3-8b"], H100, Layout(), 1, 1, weight_format="e5m2"),
     "weight_format"),
    (lambda: serving.decode_step(PRESETS["llama-3-8b"], H100, Layout(), 1, 1, prompt_tokens=10), "prompt_tokens"),
    (lambda: serving.memory_fit(PRESETS["llama-3-8b"], "h100-sxm", Layout(), 1, 1, gpu_memory_utilization=1.5),
     "gpu_memory_utilization"),
    (lambda: serving.expected_experts_touched(8, 9, 1), "top_k"),
    (lambda: serving.decode_step(PRESETS["llama-3-8b"], H100, Layout(tp=3), 1, 1), "tp"),
    (lambda: serving.decode_step(PRESETS["llama-3-8b"], H100, Layout(), float("nan"), 1), "batch"),
    (lambda: Layout(tp=0), "tp"),
    (lambda: serving.check_layout(PRESETS["llama-3-8b"], Layout(expert_parallel=True)), "expert_parallel"),
    (lambda: serving.compute_bound_batch(PRESETS["mixtral-8x7b"], "h100-sxm"), "config"),
    (lambda: serving.compute_bound_batch(PRESETS["llama-3-8b"], "h100-sxm", tp=3), "tp"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
