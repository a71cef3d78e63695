"""Tests for lib.serving.plan: the planner's rows fit their devices, count prefill, meet targets, refuse bad input."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from serving_support import DEEPSEEK, H100

from lib import formats, serving, transformer
from lib.hardware import DEVICES
from lib.serving import Layout
from lib.transformer import PRESETS, ModelConfig
from lib.units import ms


def test_prefix_hits_lower_the_prefill_work_and_never_the_throughput():
    llama = PRESETS["llama-3-70b"]
    rates = [
        serving.plan(llama, "h100-sxm", 8, 256, 4096, 256, prefix_hit_rate=h)[-1].tokens_per_s for h in (0.0, 0.5, 0.9)
    ]
    assert rates[0] < rates[1] < rates[2]


def _implied_rates(config, row, prompt, output, hit, weight_format):
    """Per device: the FLOP/s and the bytes/s a row's throughput implies, counted by hand, not through lib."""
    parts = transformer.parameter_breakdown(config)
    active = parts.total(config.experts_per_token) - parts.embedding
    requests_per_s = row.tokens_per_s / output
    context = prompt + output / 2
    attention = 4 * config.layers * config.heads * config.head_dim
    # the prompt's last step samples the first output token, so output - 1 decode steps follow; the head scores
    # sampled tokens only, one per output token
    per_request = 2 * (active - parts.head) * (output - 1 + (1 - hit) * prompt) + 2 * parts.head * output
    per_request += attention * ((output - 1) * context + (1 - hit) * prompt * prompt / 2)
    flops = requests_per_s * per_request / row.devices
    # Every step of every replica reads each device's share of the linear weights at least once.
    steps_per_s = row.tokens_per_s / (row.batch * row.dp)
    linear = parts.total(config.experts_per_token) - parts.embedding - parts.head - parts.final_norm
    bytes_ = steps_per_s * linear * formats.weight_format(weight_format).bytes_per_weight / (row.tp * row.pp)
    return flops, bytes_


@settings(max_examples=60, deadline=None)
@given(
    key=st.sampled_from(["llama-3-8b", "llama-3-70b", "mistral-7b", "qwen2-7b", "mixtral-8x7b"]),
    device=st.sampled_from(sorted(DEVICES)),  # every catalogued device, with its own or a stand-in's kernels
    devices=st.sampled_from([1, 2, 4, 8, 16]),
    prompt=st.integers(128, 8192),
    output=st.integers(16, 2048),
    batch=st.integers(1, 2048),
    weight_format=st.sampled_from(sorted(formats.WEIGHT_FORMATS)),
    hit=st.sampled_from([0.0, 0.5]),
)
@pytest.mark.slow
def test_every_feasible_row_fits_the_peaks_of_its_devices(
    key, device, devices, prompt, output, batch, weight_format, hit
):
    config = PRESETS[key]
    prompt = min(prompt, config.context_length - output)  # a request the model accepts (plan refuses the rest)
    rows = serving.plan(
        config, device, devices, batch, prompt, output, weight_format=weight_format, prefix_hit_rate=hit
    )
    dev = DEVICES[device]
    peak = max(formats.compute_peak(dev, weight_format), dev.peak_flops)
    for row in rows:
        if not row.fits:
            continue
        flops, bytes_ = _implied_rates(config, row, prompt, output, hit, weight_format)
        assert flops <= peak * (1 + 1e-9), (row.name, flops / peak)
        assert bytes_ <= dev.memory_bandwidth * (1 + 1e-9), (row.name, bytes_ / dev.memory_bandwidth)
        assert row.memory_per_device <= row.usable_per_device <= dev.memory_bytes


@pytest.mark.parametrize(
    "key,device,devices,weight_format",
    [
        ("mixtral-8x7b", "h100-sxm", 2, "bf16"),
        ("mixtral-8x7b", "h100-sxm", 8, "fp8"),
        ("mixtral-8x7b", "a100-80gb", 4, "bf16"),
        ("qwen3-235b-a22b", "h100-sxm", 8, "fp8"),
    ],
)
@pytest.mark.parametrize("batch", [8, 512])
def test_expert_and_attention_data_parallel_rows_fit_the_peaks(key, device, devices, weight_format, batch):
    config = PRESETS[key]
    rows = serving.plan(config, device, devices, batch, 1024, 256, weight_format=weight_format, expert_parallel="all")
    dev = DEVICES[device]
    peak = max(formats.compute_peak(dev, weight_format), dev.peak_flops)
    assert any(row.attention_dp for row in rows) and (batch > 8 or any(row.fits for row in rows))
    for row in rows:
        if row.fits:
            flops, bytes_ = _implied_rates(config, row, 1024, 256, 0.0, weight_format)
            assert flops <= peak * (1 + 1e-9), (row.name, flops / peak)
            assert bytes_ <= dev.memory_bandwidth * (1 + 1e-9), (row.name, bytes_ / dev.memory_bandwidth)
            assert row.memory_per_device <= row.usable_per_device <= dev.memory_bytes


# --- the planner --------------------------------------------------------------------------------


def _configs():
    heads = st.sampled_from([8, 16, 32])
    return st.builds(
        lambda layers, heads, group, width, ffn, experts: ModelConfig(
            "random",
            layers=layers,
            hidden=heads * width,
            heads=heads,
            kv_heads=heads // group,
            ffn_hidden=ffn,
            vocab=32000,
            experts=experts,
            experts_per_token=min(2, experts),
        ),
        st.integers(2, 96),
        heads,
        st.sampled_from([1, 2, 4, 8]),
        st.sampled_from([64, 128]),
        st.sampled_from([2816, 11008, 14336, 28672]),
        st.sampled_from([1, 1, 8]),
    )


@settings(max_examples=40, deadline=None)
@given(
    _configs(),
    st.sampled_from(sorted(DEVICES)),
    st.sampled_from([1, 2, 4, 8, 16]),
    st.integers(1, 256),
    st.integers(1, 8192),
    st.integers(1, 2048),
)
@pytest.mark.slow
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


@pytest.mark.slow
def test_plan_counts_prefill_in_the_throughput():
    # The same concurrency with a longer prompt: more prefill per step, lower throughput per device.
    llama = PRESETS["llama-3-70b"]
    short, long = (serving.plan(llama, "h100-sxm", 8, 128, prompt, 256)[-1] for prompt in (128, 4096))
    assert long.tokens_per_s_per_device < short.tokens_per_s_per_device
    assert long.prefill_share > short.prefill_share
    assert long.requests_per_s == pytest.approx(long.tokens_per_s / 256)


def test_plan_refuses_more_sequences_than_the_scheduler_runs():
    rows = serving.plan(PRESETS["llama-3-8b"], "a100-80gb", 1, 300, 128, 128)  # A100: max_num_seqs 256
    assert not rows[0].fits and "max_num_seqs = 256" in rows[0].reason
    allowed = serving.plan(
        PRESETS["llama-3-8b"], "a100-80gb", 1, 300, 128, 128, max_num_seqs=512, max_num_batched_tokens=8192
    )
    assert allowed[0].fits


def test_plan_targets_and_cost():
    rows = serving.plan(
        PRESETS["llama-3-8b"], "h100-sxm", 2, 32, 1024, 256, tpot_limit=10 * ms, price_per_device_hour=2.0
    )
    for row in rows:
        assert row.meets_slo == (row.tpot <= 10 * ms)
        assert row.cost_per_million_tokens == pytest.approx(2.0 * 2 / 3600 / row.tokens_per_s * 1e6)
    chosen = serving.best(rows)
    assert chosen.fits and chosen.meets_slo


def test_best_is_none_when_nothing_qualifies():
    rows = serving.plan(PRESETS["llama-3-70b"], "l4", 1, 1, 128, 128)
    assert not rows[0].fits and serving.best(rows) is None


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: serving.kv_cache_bytes(PRESETS["llama-3-8b"], -1), "tokens"),
        (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 0, 1, 1, 1), "devices"),
        (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 12, 1, 1, 1), "devices"),
        (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 2, 1.5, 1, 1), "batch"),
        (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 2, 1, 0, 1), "prompt_tokens"),
        (
            lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 2, 1, 1, 1, memory_efficiency=1.5),
            "memory_efficiency",
        ),
        (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 2, 1, 1, 1, tpot_limit=0), "tpot_limit"),
        (lambda: serving.plan(PRESETS["llama-3-8b"], "tpu", 2, 1, 1, 1), "device"),
        (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 1, 1, 1, 1, weight_format="fp4"), "weight_format"),
        (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 1, 1, 1, 1, kv_format="int8"), "kv_format"),
        (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 1, 1, 1, 1, allreduce="mpi"), "allreduce"),
        (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 1, 1, 1, 1, prefix_hit_rate=1.0), "prefix_hit_rate"),
        (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 1, 1, 1, 1, prefix_hit_rate=-0.1), "prefix_hit_rate"),
        (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 1, 1, 1, 1, layer_overhead=-1e-6), "layer_overhead"),
        (
            lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 1, 1, 1, 1, step_overhead=float("nan")),
            "step_overhead",
        ),
        (lambda: serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 1, 1, 1, 1, bytes_per_element=1), "bytes_per_element"),
        (
            lambda: serving.decode_step(PRESETS["llama-3-8b"], H100, Layout(), 1, 1, weight_format="e5m2"),
            "weight_format",
        ),
        (lambda: serving.decode_step(PRESETS["llama-3-8b"], H100, Layout(), 1, 1, prompt_tokens=10), "prompt_tokens"),
        (
            lambda: serving.memory_fit(PRESETS["llama-3-8b"], "h100-sxm", Layout(), 1, 1, gpu_memory_utilization=1.5),
            "gpu_memory_utilization",
        ),
        (lambda: serving.expected_experts_touched(8, 9, 1), "top_k"),
        (lambda: serving.decode_step(PRESETS["llama-3-8b"], H100, Layout(tp=3), 1, 1), "tp"),
        (lambda: serving.decode_step(PRESETS["llama-3-8b"], H100, Layout(), float("nan"), 1), "batch"),
        (lambda: Layout(tp=0), "tp"),
        (lambda: serving.check_layout(PRESETS["llama-3-8b"], Layout(expert_parallel=True)), "expert_parallel"),
        (lambda: serving.compute_bound_batch(PRESETS["mixtral-8x7b"], "h100-sxm"), "config"),
        (lambda: serving.compute_bound_batch(PRESETS["llama-3-8b"], "h100-sxm", tp=3), "tp"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_plan_lists_attention_data_parallel_layouts_and_they_fit_where_tp_does():
    rows = serving.plan(DEEPSEEK, "h200", 16, 256, 1024, 256, expert_parallel="all", weight_format="fp8")
    names = {r.layout.name: r for r in rows}
    assert {"tp8-pp1-dp2", "ep8-pp1-dp2", "adp8-ep8-pp1-dp2", "adp16-ep16-pp1-dp1"} <= set(names)
    assert names["adp8-ep8-pp1-dp2"].fits and names["tp8-pp1-dp2"].fits
    assert not names["tp1-pp1-dp16"].fits


def test_a_plan_past_the_models_context_is_refused_naming_both_numbers():
    # Meta-Llama-3-8B-Instruct's config.json: max_position_embeddings 8192; a 16k-token RAG prompt cannot be served.
    llama3 = PRESETS["llama-3-8b"]
    with pytest.raises(ValueError) as refused:
        serving.plan(llama3, "h100-sxm", 8, 64, 16384, 4096)
    message = str(refused.value)
    assert "\n" not in message and "20480" in message and "8192" in message and llama3.name in message
    assert serving.plan(llama3, "h100-sxm", 8, 64, 8192 - 256, 256)  # exactly the context: served
    with pytest.raises(ValueError, match="8193 exceeds"):
        serving.plan(llama3, "h100-sxm", 8, 64, 8192 - 256, 257)
    # The same request on Llama 3.1 (131,072 tokens) and on a model of unknown context is planned.
    assert serving.plan(PRESETS["llama-3.1-8b"], "h100-sxm", 8, 64, 16384, 4096)
    unknown = ModelConfig("unknown", layers=2, hidden=64, heads=4, kv_heads=2, ffn_hidden=128, vocab=100)
    assert serving.plan(unknown, "h100-sxm", 1, 1, 200_000, 1000)
    with pytest.raises(ValueError, match="context of 8192 tokens"):  # with targets too (capacity)
        serving.plan(llama3, "h100-sxm", 8, 64, 16384, 4096, tpot_limit=50 * ms)


# --- ties go to the simpler layout ------------------------------------------------------------------------------

#: Three near-ties of the planner (issue 31's deployment questions): (preset, device, devices, batch, prompt,
#: output, options), the row that leads, the row to deploy, and the kinds of split the note names for each.
TIES = {
    "Llama 3.1 8B, 8 H100, chat targets": (
        ("llama-3.1-8b", "h100-sxm", 8, 64, 1024, 256, dict(ttft_limit=1000 * ms, tpot_limit=100 * ms)),
        "tp1-pp2-dp4",
        "tp1-pp1-dp8",
        "replicas, not replicas + pipeline",
    ),
    "Mixtral 8x7B, 2 H100, every expert layout": (
        (
            "mixtral-8x7b",
            "h100-sxm",
            2,
            64,
            256,
            256,
            dict(expert_parallel="all", ttft_limit=1000 * ms, tpot_limit=100 * ms),
        ),
        "adp2-ep2-pp1-dp1",
        "tp2-pp1-dp1",
        "tensor, not experts + attention data-parallel",
    ),
    "Llama 405B FP8, 8 H200, batch 256": (
        ("llama-3.1-405b", "h200", 8, 256, 1024, 256, dict(weight_format="fp8")),
        "tp4-pp1-dp2",
        "tp8-pp1-dp1",
        "tensor, not replicas + tensor",
    ),
}


@pytest.mark.parametrize("case", sorted(TIES))
def test_a_near_tie_goes_to_the_simpler_layout_and_the_note_says_why(case):
    (key, device, devices, batch, prompt, output, options), lead, simple, kinds = TIES[case]
    rows = serving.plan(PRESETS[key], device, devices, batch, prompt, output, **options)
    by_name = {row.name: row for row in rows}
    field = "requests_per_s_per_device" if "ttft_limit" in options else "tokens_per_s_per_device"
    ahead = getattr(by_name[lead], field) / getattr(by_name[simple], field) - 1
    assert 0 < ahead <= serving.TIE_BAND, ahead  # the leader is ahead, by less than the model's error
    assert serving.leader(rows).name == lead
    chosen = serving.best(rows)
    assert chosen.name == simple
    note = serving.tie_note(rows, chosen)
    assert note == (
        f"{lead} is {100 * ahead:.2f} % ahead, inside the model's 15 % error (chapter 11); {simple} is simpler: {kinds}"
    )
    assert serving.tie_note(rows, by_name[lead]) == ""


def test_a_lead_beyond_the_band_is_kept():
    # 405B INT4 on 8 L40S (PCIe, no NVLink) at 64 sequences of 1024 + 256: tp4-pp2 leads tp8 by ~33 %, far beyond
    # the 15 % band; no layout of fewer kinds is within it either, so the leader stays.
    rows = serving.plan(PRESETS["llama-3.1-405b"], "l40s", 8, 64, 1024, 256, weight_format="int4")
    by_name = {row.name: row for row in rows}
    assert by_name["tp4-pp2-dp1"].tokens_per_s_per_device > 1.15 * by_name["tp8-pp1-dp1"].tokens_per_s_per_device
    assert serving.best(rows).name == serving.leader(rows).name == "tp4-pp2-dp1"
    assert serving.tie_note(rows, serving.best(rows)) == ""


def test_a_tensor_group_across_servers_is_less_simple_than_a_pipeline_between_them():
    # 405B BF16 on two servers of 8 H100s: tp16 and tp8-pp2 both use two kinds of split once the group across the
    # servers counts as one, and vLLM's guide puts the pipeline between the servers.
    rows = serving.plan(PRESETS["llama-3.1-405b"], "h100-sxm", 16, 64, 1024, 256)
    tp16 = next(row for row in rows if row.name == "tp16-pp1-dp1")
    assert tp16.layout.splits(8) == ("tensor", "group across servers") and tp16.layout.splits() == ("tensor",)
    assert serving.best(rows, devices_per_node=8).name == "tp8-pp2-dp1"
    assert serving.best(rows, devices_per_node=16).name == "tp16-pp1-dp1"  # one server of 16: a plain group


def _row(template, layout: Layout, value: float, with_targets: bool, tpot: float):
    fields = dict(tp=layout.tp, pp=layout.pp, dp=layout.dp, expert_parallel=layout.expert_parallel)
    fields.update(attention_dp=layout.attention_dp, tpot=tpot, fits=True, meets_slo=True)
    if with_targets:
        fields.update(capacity=value * layout.devices, requests_per_s_per_device=value)
    else:
        fields.update(capacity=None, requests_per_s_per_device=None, tokens_per_s_per_device=value)
    return dataclasses.replace(template, **fields)


_SHAPES = [
    Layout(dp=8),
    Layout(tp=8),
    Layout(pp=8),
    Layout(tp=2, dp=4),
    Layout(tp=4, dp=2),
    Layout(pp=2, dp=4),
    Layout(tp=2, pp=4),
    Layout(tp=4, pp=2),
    Layout(tp=2, pp=2, dp=2),
    Layout(tp=8, expert_parallel=True),
    Layout(tp=8, expert_parallel=True, attention_dp=True),
    Layout(tp=4, dp=2, expert_parallel=True, attention_dp=True),
]


@settings(max_examples=100, deadline=None)
@given(
    picks=st.lists(
        st.tuples(st.sampled_from(range(len(_SHAPES))), st.floats(0, 100), st.floats(1e-3, 1e-1)),
        min_size=1,
        max_size=12,
        unique_by=lambda pick: pick[0],
    ),
    with_targets=st.booleans(),
)
def test_best_is_within_the_band_and_no_simpler_row_is(picks, with_targets):
    template = serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 1, 1, 128, 128)[0]
    rows = [_row(template, _SHAPES[i], value, with_targets, tpot) for i, value, tpot in picks]
    value = (lambda row: row.requests_per_s_per_device) if with_targets else (lambda row: row.tokens_per_s_per_device)
    qualifying = [row for row in rows if value(row) > 0 or not with_targets]
    chosen = serving.best(rows)
    if not qualifying:
        assert chosen is None and serving.tie_note(rows, chosen) == ""
        return
    top = max(value(row) for row in qualifying)
    band = [row for row in qualifying if top <= (1 + serving.TIE_BAND) * value(row)]
    assert chosen in band
    simplest = min(row.layout.simplicity(8) for row in band)
    assert chosen.layout.simplicity(8) == simplest
    assert value(chosen) == max(value(row) for row in band if row.layout.simplicity(8) == simplest)
    lead = serving.leader(rows)
    assert value(lead) == top
    assert (serving.tie_note(rows, chosen) == "") == (lead is chosen)


@pytest.mark.slow
@pytest.mark.slow
def test_the_band_is_chapter_11s_held_out_decode_error():
    from lib.validation.report import summary

    scores = summary()
    assert serving.TIE_BAND == pytest.approx(scores["decode"].median, abs=0.005)
    # rounded to a whole percent: never more than half a percent above the smallest of the three errors
    assert serving.TIE_BAND <= min(scores[key].median for key in ("decode", "prefill", "load")) + 0.005


# --- samples of lengths -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options", [{}, pytest.param(dict(ttft_limit=500 * ms, tpot_limit=20 * ms), marks=pytest.mark.slow)]
)
def test_a_sample_of_one_length_plans_exactly_as_that_length(options):
    llama = PRESETS["llama-3-8b"]
    one = serving.plan(llama, "h100-sxm", 2, 32, 1024, 256, **options)
    sample = serving.plan(llama, "h100-sxm", 2, 32, [1024] * 3, [256] * 3, **options)
    half = serving.plan(llama, "h100-sxm", 2, 32, [1024] * 3, 256, **options)  # one side a single length
    assert sample == one and half == one


def test_a_mixed_sample_holds_its_long_requests_in_memory_and_prices_its_means():
    llama = PRESETS["llama-3-8b"]
    prompts, outputs = [256, 1024, 1792], [64, 256, 448]  # means 1024 and 256
    (mixed,) = serving.plan(llama, "h100-sxm", 1, 32, prompts, outputs)
    (even,) = serving.plan(llama, "h100-sxm", 1, 32, 1024, 256)
    # memory: each sequence at its full context, weighted by the steps it stays, E[O (P + O)] / E[O] = 1760
    held = sum(o * (p + o) for p, o in zip(prompts, outputs)) / sum(outputs)
    assert held == 1760
    fit = serving.memory_fit(llama, "h100-sxm", Layout(), 32, 1760)
    assert (mixed.kv_per_device, mixed.max_batch) == (fit.kv_cache, fit.max_sequences)
    assert mixed.max_batch < even.max_batch
    # the step: the means, and the context weighted by the steps each request decodes (Workload.context)
    workload = serving.Workload(prompts, outputs)
    step = serving.decode_step(llama, H100, Layout(), 32, workload.context, 1024, 256)
    assert mixed.tpot == float(step.tpot) and workload.context > 1152 and mixed.tpot > even.tpot
    assert mixed.ttft == even.ttft  # the mean prompt's, as the capacity's prefill steps are priced
    assert mixed.requests_per_s == pytest.approx(mixed.tokens_per_s / 256)


@pytest.mark.slow
def test_a_sample_with_targets_gets_the_capacity_of_the_whole_sample():
    llama = PRESETS["llama-3-8b"]
    prompts, outputs = [1024] * 4, [32, 32, 32, 928]  # output mean 256: one long answer in four
    targets = dict(ttft_limit=200 * ms, tpot_limit=30 * ms)
    rows = serving.plan(llama, "h100-sxm", 2, 32, prompts, outputs, **targets)
    for row in rows:
        want = serving.capacity(llama, "h100-sxm", row.layout, prompts, outputs, **targets)
        assert (row.capacity, row.binding) == (want.rate, want.binding), row.name
    even = serving.plan(llama, "h100-sxm", 2, 32, 1024, 256, **targets)
    # the long answers run at long contexts: every layout carries less than at the mean lengths
    assert all(row.capacity < same.capacity for row, same in zip(rows, even))


def test_a_sample_is_refused_by_its_longest_request_and_bad_samples_name_their_parameter():
    llama3 = PRESETS["llama-3-8b"]  # 8,192 tokens
    with pytest.raises(ValueError, match="longest sample's prompt_tokens \\+ output_tokens = 8256 exceeds"):
        serving.plan(llama3, "h100-sxm", 1, 8, [512, 8000], [128, 256])  # the mean request would fit
    assert serving.plan(llama3, "h100-sxm", 1, 8, [512, 7936], [128, 256])  # exactly the context: served
    with pytest.raises(ValueError, match="prompt_tokens and output_tokens .* shapes \\(2,\\) and \\(3,\\)"):
        serving.plan(llama3, "h100-sxm", 1, 8, [512, 1024], [128, 256, 64])
    with pytest.raises(ValueError, match="output_tokens must be >= 1, got .*128, +0"):
        serving.plan(llama3, "h100-sxm", 1, 8, [512, 1024], [128, 0])
    with pytest.raises(ValueError, match="prompt_tokens must be a whole number"):
        serving.plan(llama3, "h100-sxm", 1, 8, [512.5, 1024], 128)


def test_the_frontier_takes_a_sample():
    llama = PRESETS["llama-3-8b"]
    points, front = serving.frontier(llama, "h100-sxm", 1, [256, 1792], [64, 448], batches=(1, 64))
    rows = {b: serving.plan(llama, "h100-sxm", 1, b, [256, 1792], [64, 448])[0] for b in (1, 64)}
    assert [(p.batch, p.tokens_per_s_per_device) for p in points] == [
        (b, row.tokens_per_s_per_device) for b, row in rows.items()
    ]
    assert front


def test_capacities_false_leaves_only_the_capacity_out():
    llama = PRESETS["llama-3-8b"]
    targets = dict(ttft_limit=1.0, tpot_limit=0.05)
    full = serving.plan(llama, "h100-sxm", 2, 32, 1024, 256, **targets)
    bare = serving.plan(llama, "h100-sxm", 2, 32, 1024, 256, capacities=False, **targets)
    assert all(row.capacity is not None for row in full)
    gone = dict(capacity=None, requests_per_s_per_device=None, binding=None, capacity_ttft=None, capacity_tpot=None)
    assert [dataclasses.replace(row, **gone) for row in full] == bare
