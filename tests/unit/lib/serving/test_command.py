"""Tests for lib.serving.command: every vLLM and SGLang line passes its engine's flag table and builds the layout.

The layout is read back from the lines with each engine's own meaning of its
flags, written here independently of lib.serving.command: vLLM 0.34.0
(``docs/serving/data_parallel_deployment.md``: with a mixture of experts,
``--data-parallel-size`` ranks with ``--enable-expert-parallel`` are one
expert group, i.e. attention data parallelism; for a dense model they are
replicas) and SGLang 0.5.23 (``--enable-dp-attention`` with ``--dp-size``
equal to ``--tp-size``; otherwise ``--dp-size`` replicas of ``--tp-size`` x
``--pp-size`` devices; ``--ep-size`` equal to ``--tp-size`` places whole
experts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from lib import serving
from lib.serving import Layout, check_layout
from lib.serving.command import (
    Deployment,
    parse_sglang_command,
    parse_vllm_command,
    quantized_checkpoint,
    sglang_command,
    vllm_command,
)
from lib.serving.engine import configure
from lib.serving.engine_flags import ENGINE_VERSIONS, check_command
from lib.transformer import PRESETS

PER_NODE = 8


def _preset(*names):
    """The first preset of ``names`` that exists (the Llama 3.1 presets may be named either way)."""
    return next(PRESETS[name] for name in names if name in PRESETS)


# The published context (max_position_embeddings of each repository's config.json): Llama 3.1 131,072;
# Mixtral 8x7B v0.1 32,768; DeepSeek-V3 163,840.
LLAMA8 = (_preset("llama-3.1-8b", "llama-3-8b"), 131072)
LLAMA70 = (_preset("llama-3.1-70b", "llama-3-70b"), 131072)
MIXTRAL = (PRESETS["mixtral-8x7b"], 32768)
DEEPSEEK = (PRESETS["deepseek-v3"], 163840)


@dataclass(frozen=True)
class Scenario:
    model: tuple
    device: str
    layout: Layout
    weights: str
    prompt: int
    output: int
    kv: str = "bf16"
    exchange: str = "allgather_reducescatter"


SCENARIOS = {
    "llama8-1gpu-bf16": Scenario(LLAMA8, "h100-sxm", Layout(1, 1, 1), "bf16", 1024, 256),
    "llama8-8gpu-long-rag": Scenario(LLAMA8, "h100-sxm", Layout(1, 1, 8), "bf16", 16000, 512),
    "llama8-16gpu-replicas-2-servers": Scenario(LLAMA8, "h100-sxm", Layout(1, 1, 16), "fp8", 2048, 256, "fp8"),
    "llama70-4gpu-fp8": Scenario(LLAMA70, "h100-sxm", Layout(4, 1, 1), "fp8", 1024, 256, "fp8"),
    "llama70-8gpu-int4": Scenario(LLAMA70, "h100-sxm", Layout(2, 1, 4), "int4", 4096, 1024),
    "llama70-16gpu-tp8-pp2-2-servers": Scenario(LLAMA70, "h100-sxm", Layout(8, 2, 1), "bf16", 100000, 2000),
    "mixtral-2gpu-tp2": Scenario(MIXTRAL, "h100-sxm", Layout(2, 1, 1), "bf16", 1024, 256),
    "mixtral-8gpu-ep-replicas-int4": Scenario(MIXTRAL, "a100-80gb", Layout(2, 1, 4, True), "int4", 30000, 2000),
    "deepseek-8gpu-attention-dp": Scenario(DEEPSEEK, "h200", Layout(8, 1, 1, True, True), "fp8", 32000, 1000),
    "deepseek-16gpu-attention-dp-2-servers": Scenario(
        DEEPSEEK, "h200", Layout(16, 1, 1, True, True), "fp8", 4096, 1024, "fp8", "deepep"
    ),
}


def _engine(s: Scenario):
    return configure(s.device, weight_format=s.weights, kv_format=s.kv, expert_exchange=s.exchange)


def _deployments(s: Scenario) -> list[Deployment]:
    config, context = s.model
    engine, length = _engine(s), s.prompt + s.output
    moe = config.experts > 1
    return [
        vllm_command(config.hf_id, s.layout, engine, length, context_length=context, mixture_of_experts=moe),
        sglang_command(config.hf_id, s.layout, engine, length, context_length=context),
    ]


def _servers_of_a_copy(flags_per_line: list[dict], key: str) -> int:
    """The servers one copy spans, checked: each line names its rank and the total the same way."""
    if len(flags_per_line) == 1:
        assert key not in flags_per_line[0]
        return 1
    for rank, flags in enumerate(flags_per_line):
        assert int(flags.get("node-rank", rank)) == rank
        assert int(flags.get(key, len(flags_per_line))) == len(flags_per_line)
    return len(flags_per_line)


def _vllm_layout(d: Deployment, moe: bool):
    """(tp, pp, dp, expert_parallel, attention_dp, servers per copy, per-rank limits) as vLLM reads the lines."""
    lines = [parse_vllm_command(line) for line in d.lines]
    first = lines[0]
    tp, pp, ranks = (int(first[k]) for k in ("tensor-parallel-size", "pipeline-parallel-size", "data-parallel-size"))
    ep = first.get("enable-expert-parallel") is True
    for rank, flags in enumerate(lines):
        assert (flags.get("headless") is True) == (rank > 0)
    if "data-parallel-size-local" in first:  # one data-parallel group over several servers
        assert sum(int(f["data-parallel-size-local"]) for f in lines) == ranks
        assert [int(f.get("data-parallel-start-rank", 0)) for f in lines] == [
            sum(int(f["data-parallel-size-local"]) for f in lines[:r]) for r in range(len(lines))
        ]
        servers = len(lines)
    else:
        servers = _servers_of_a_copy(lines, "nnodes")
    adp = moe and ranks > 1  # a mixture's DP ranks are one expert group: attention data parallelism
    if adp:
        assert ep and tp == 1, "attention DP is modelled with experts spread over the ranks"
        return ranks, pp, d.copies, True, True, servers, ranks
    return tp, pp, ranks * d.copies, ep, False, servers, 1


def _sglang_layout(d: Deployment):
    lines = [parse_sglang_command(line) for line in d.lines]
    first = lines[0]
    tp, pp, dp = (int(first[k]) for k in ("tp-size", "pp-size", "dp-size"))
    ep = int(first.get("ep-size", 1))
    assert ep in (1, tp)
    servers = _servers_of_a_copy(lines, "nnodes")
    if len(lines) > 1:
        assert len({f["dist-init-addr"] for f in lines}) == 1
    if first.get("enable-dp-attention") is True:
        assert dp == tp and ep == tp
        return tp, pp, d.copies, True, True, servers, dp
    return tp, pp, dp * d.copies, ep == tp and tp > 1, False, servers, 1


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_line_passes_its_table_sets_the_context_and_builds_the_layout(name):
    s = SCENARIOS[name]
    config, _ = s.model
    check_layout(config, s.layout)
    engine, length = _engine(s), s.prompt + s.output
    want = (s.layout.tp, s.layout.pp, s.layout.dp, s.layout.expert_parallel, s.layout.attention_dp)
    servers = math.ceil(s.layout.tp * s.layout.pp / PER_NODE)
    vllm, sglang = _deployments(s)
    for deployment in (vllm, sglang):
        assert deployment.version == ENGINE_VERSIONS[deployment.engine]
        for line in deployment.lines:
            assert check_command(line, deployment.engine, deployment.version) == [], line
    *got, servers_vllm, ranks = _vllm_layout(vllm, config.experts > 1)
    assert tuple(got) == want and servers_vllm == servers, vllm.text
    for flags in map(parse_vllm_command, vllm.lines):
        assert int(flags["max-model-len"]) == length
        assert int(flags["max-num-seqs"]) == engine.max_num_seqs  # vLLM's limits are per DP rank
        assert flags["model"] == quantized_checkpoint(config.hf_id, s.weights)
    *got, servers_sglang, ranks = _sglang_layout(sglang)
    assert tuple(got) == want and servers_sglang == servers, sglang.text
    for flags in map(parse_sglang_command, sglang.lines):
        assert int(flags["context-length"]) == length
        # Under DP attention SGLang divides both limits among its DP ranks; each rank gets vLLM's per-rank limit.
        assert int(flags["max-running-requests"]) == engine.max_num_seqs * ranks
        assert int(flags["chunked-prefill-size"]) == engine.max_num_batched_tokens * ranks
        assert flags["model-path"] == quantized_checkpoint(config.hf_id, s.weights)
    for deployment in (vllm, sglang):  # the devices the lines start are the layout's
        assert deployment.copies >= 1 and (deployment.copies > 1) == ("behind a load balancer" in deployment.note)
        assert (deployment.servers > 1) == ("HEAD_NODE_IP" in deployment.text)


def test_a_mixtures_plain_replicas_are_separate_vllm_servers_but_a_dense_models_share_one():
    engine = configure("h100-sxm")
    moe = vllm_command("org/moe", Layout(2, 1, 4), engine, 2048, mixture_of_experts=True)
    assert moe.copies == 4 and parse_vllm_command(moe.lines[0])["data-parallel-size"] == "1"
    assert "expert layers one group" in moe.note
    dense = vllm_command("org/dense", Layout(2, 1, 4), engine, 2048)
    assert dense.copies == 1 and parse_vllm_command(dense.lines[0])["data-parallel-size"] == "4" and not dense.note
    sglang = sglang_command("org/moe", Layout(2, 1, 4), engine, 2048)
    assert sglang.copies == 1 and parse_sglang_command(sglang.lines[0])["dp-size"] == "4"


@pytest.mark.parametrize("weights", ["int4", "int8"])
def test_integer_weights_never_print_a_quantization_flag_with_the_16_bit_repository(weights):
    config = LLAMA70[0]
    engine = configure("h100-sxm", weight_format=weights)
    vllm = vllm_command(config.hf_id, Layout(4), engine, 2048)
    sglang = sglang_command(config.hf_id, Layout(4), engine, 2048)
    for deployment, flags in (
        (vllm, parse_vllm_command(vllm.lines[0])),
        (sglang, parse_sglang_command(sglang.lines[0])),
    ):
        model = flags.pop("model", None) or flags.pop("model-path")
        assert "quantization" not in flags and "gptq" not in str(flags).lower(), deployment.text
        assert model != config.hf_id and model.endswith(f"-GPTQ-Int{weights[3:]}"), model
        assert config.hf_id in deployment.note and f"W{weights[3:]}A16" in deployment.note
    assert parse_vllm_command(vllm_command(config.hf_id, Layout(4), configure("h100-sxm", weight_format="fp8"), 2048)
                              .lines[0])["quantization"] == "fp8"  # fmt: skip


def test_past_the_models_context_the_command_is_refused_naming_both_numbers():
    engine = configure("h100-sxm")
    for command in (vllm_command, sglang_command):
        with pytest.raises(ValueError, match=r"max_model_len=16896 .* context_length=8192"):
            command("meta-llama/Meta-Llama-3-8B-Instruct", Layout(), engine, 16384 + 512, context_length=8192)
        assert command("m", Layout(), engine, 8192, context_length=8192).lines  # exactly the context is fine
    with pytest.raises(ValueError, match="max_model_len"):
        vllm_command("m", Layout(), engine, 0)


def test_a_layout_that_does_not_split_over_whole_servers_is_refused():
    with pytest.raises(ValueError, match="do not split evenly"):
        vllm_command("m", Layout(3, 3, 1), configure("h100-sxm"), 1024)


@pytest.mark.slow
def test_the_planners_best_row_deploys_as_planned():
    config = LLAMA70[0]
    rows = serving.plan(config, "h100-sxm", 8, 64, 1024, 256, weight_format="fp8", kv_format="fp8")
    chosen = serving.best(rows)
    engine = configure("h100-sxm", weight_format="fp8", kv_format="fp8")
    deployment = vllm_command(config.hf_id, chosen.layout, engine, 1280)
    tp, pp, dp, *_ = _vllm_layout(deployment, moe=False)
    assert (tp, pp, dp) == (chosen.tp, chosen.pp, chosen.dp)
