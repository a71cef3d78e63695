"""Tests for lib.serving.engine_flags: the committed flag tables, and the lines lib.serving.command writes."""

from __future__ import annotations

import itertools

import pytest

from lib.serving import Layout, sglang_command, vllm_command
from lib.serving.command import ALL2ALL_BACKEND, MOE_A2A_BACKEND, QUANTIZATION, SGLANG_KV_CACHE_DTYPE
from lib.serving.engine import EXPERT_EXCHANGES, configure
from lib.serving.engine_flags import ENGINE_VERSIONS, check_command, flag_table

LAYOUTS = [
    Layout(1, 1, 1),  # one device
    Layout(4, 1, 2),  # dense, tensor x data parallel
    Layout(2, 2, 1),  # tensor x pipeline
    Layout(8, 1, 1, True, False),  # MoE, experts over the TP group
    Layout(8, 1, 2, True, False),  # MoE, expert parallel over TP x DP
    Layout(8, 1, 1, True, True),  # attention data parallel (adp)
    Layout(4, 2, 2, True, True),  # adp with pipeline stages and replicas
]
ENGINES = [
    dict(weight_format=weights, kv_format=kv, allreduce=allreduce, cuda_graphs=graphs, expert_exchange=exchange)
    for weights, kv, allreduce, graphs, exchange in itertools.product(
        ("bf16", "fp8", "int8", "int4"), ("bf16", "fp8"), ("engine", "nccl"), (True, False), EXPERT_EXCHANGES
    )
]


def test_the_tables_name_their_release_and_wheel():
    for engine, version in ENGINE_VERSIONS.items():
        table = flag_table(engine)
        assert (table["engine"], table["version"]) == (engine, version)
        assert table["wheel"].startswith(f"{engine}-{version}-") and table["wheel"].endswith(".whl")
        assert len(table["sha256"]) == 64 and int(table["sha256"], 16) >= 0
        assert table["sources"] and len(table["flags"]) > 100


@pytest.mark.parametrize("layout", LAYOUTS, ids=repr)
def test_every_line_the_commands_write_passes_the_committed_table(layout):
    for options in ENGINES:
        for device in ("h100-sxm", "h200", "a100-80gb"):
            for command in (vllm_command, sglang_command):
                deployment = command("org/model", layout, configure(device, **options), 4096)
                for line in deployment.lines:
                    assert check_command(line, deployment.engine) == [], line


def test_the_values_command_emits_are_the_tables():
    flags = flag_table("vllm")["flags"]
    for value in filter(None, QUANTIZATION.values()):
        assert value in flags["--quantization"]["known_values"]
    for value in ALL2ALL_BACKEND.values():
        assert value in flags["--all2all-backend"]["choices"]
    sglang = flag_table("sglang")["flags"]
    for value in filter(None, QUANTIZATION.values()):
        assert value in sglang["--quantization"]["choices"]
    assert set(MOE_A2A_BACKEND.values()) <= set(sglang["--moe-a2a-backend"]["choices"])
    assert set(SGLANG_KV_CACHE_DTYPE.values()) <= set(sglang["--kv-cache-dtype"]["choices"])
    assert {"auto", "fp8"} <= set(flags["--kv-cache-dtype"]["known_values"])
    for name in ("--enable-expert-parallel", "--enforce-eager", "--disable-custom-all-reduce"):
        assert flags[name]["takes_value"] is False


def test_a_bad_line_gets_problems_naming_each_flag():
    line = "vllm serve m --tensor-parallel-sise 2 --all2all-backend deepep --max-num-seqs many --quantization"
    problems = check_command(line, "vllm")
    assert len(problems) == 4, problems
    assert problems[0].startswith("--tensor-parallel-sise: unknown flag")
    assert problems[1].startswith("--all2all-backend: 'deepep' is not one of its choices")
    assert problems[2] == "--max-num-seqs: 'many' is not an integer"
    assert problems[3] == "--quantization: missing its value"


def test_aliases_negations_and_spellings_are_accepted():
    line = (
        "vllm serve m -tp 2 --no-enforce-eager --max_num_seqs 8 --compilation-config.mode 3 --max-num-batched-tokens 8K"
    )
    assert check_command(line, "vllm") == []
    line = "python -m sglang.launch_server --model-path m --tensor-parallel-size 2 --dp-size=2 --quantization fp8"
    assert check_command(line, "sglang") == []
    assert check_command("python -m sglang.launch_server --tp-size 2 --quantization fp9", "sglang") == [
        "--quantization: 'fp9' is not one of its choices "
        + str(flag_table("sglang")["flags"]["--quantization"]["choices"])
    ]


def test_a_line_for_another_engine_or_an_unknown_release_is_refused():
    assert check_command("vllm serve m", "sglang")[0].startswith("the line must start with")
    with pytest.raises(ValueError, match="no flag table"):
        flag_table("vllm", "0.1.0")
    with pytest.raises(ValueError, match="engine must be one of"):
        flag_table("trtllm")
