"""How each published source is modelled: its engine settings, cluster and loop, fixed before any error is seen.

Introduced in chapter 11 (does the model hold?). A benchmark measures an
engine, not a roofline: its all-reduce, whether it replays a CUDA graph, how
many tokens one prefill step takes, how much memory it keeps. Each entry of
:data:`SOURCES` sets those :class:`lib.serving.Engine` fields for one file,
with the reason, so that a prediction differs between sources only where
the engines do. Fields a source does not state keep the book's defaults
(vLLM's). The fixed costs are not set here: they are measured or fitted on
TP 1 (:mod:`lib.validation.calibrate`).

>>> source("decode_gptfast_a100").settings["allreduce"]
'engine'
>>> engine_for(load_row("decode_ft_gpt20b_a100"), layer_overhead=1e-4).cuda_graphs
False
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lib.serving import Cluster, Engine, configure
from lib.validation.published import load_published

__all__ = ["Source", "SOURCES", "source", "engine_for", "cluster_for", "weight_format", "load_row"]

_GRAPHS_NCCL_FT = (
    "FasterTransformer's own C++ runtime launches every kernel from the CPU (no CUDA graph) and "
    "all-reduces with NCCL: its custom all-reduce is an option (enable_custom_all_reduce, default 0) "
    "the GPT guide does not switch on; the whole batch's context is one pass and the loop runs one "
    "step per output token (ParallelGpt.cc lines 1201-1202)"
)
_ARGONNE = (
    "Polaris node: 4 x A100-SXM4-40GB joined by NVLink (the vLLM job's PBS settings point at Polaris; the "
    "files do not name the variant); memory: 0.9 of the device, as both engines' defaults; a prefill step "
    "takes at most 8,192 tokens; a batch that does not fit runs in waves"
)


@dataclass(frozen=True)
class Source:
    """One file's modelling choices: device, cluster, :class:`Engine` fields, prefill budget and loop, and why."""

    engine: str
    device: str
    settings: dict[str, Any]
    why: str
    devices_per_node: int = 8
    inter_link: str | None = None
    budget: int | None = None
    loop_steps: int = -1
    memory_waves: bool = False
    async_scheduling: bool = False
    per_row: Callable[[dict], dict[str, Any]] | None = None


def _lmdeploy_batch(row: dict) -> dict[str, Any]:
    """LMDeploy's max_batch_size by model (benchmark_{7b,13b,20b,70b}.sh: 128, 128, 128, 256)."""
    return dict(max_num_seqs=256 if "70b" in row["model"] else 128)


def _sglang_vllm060(row: dict) -> dict[str, Any]:
    """Line 55 of the README: vLLM keeps 0.9 of the memory; SGLang 0.88 at TP 1 and 0.85 at TP 4, 0.88 offline."""
    if row["software"].startswith("vLLM"):
        return dict(max_num_seqs=256, gpu_memory_utilization=0.9)
    return dict(gpu_memory_utilization=0.88 if row["tp"] == 1 or row["request_rate"] == math.inf else 0.85)


def _datacrunch(row: dict) -> dict[str, Any]:
    """The 405B server's --mem-frac 0.87 (docker_dev_commands.txt)."""
    return dict(gpu_memory_utilization=0.87) if "405B" in row["model"] else {}


#: FasterTransformer's two files: one engine, on the SuperPod's A100-80GB nodes joined by HDR InfiniBand.
_FT = Source(
    "FasterTransformer",
    "a100-80gb",
    dict(allreduce="nccl", cuda_graphs=False),
    _GRAPHS_NCCL_FT,
    inter_link="ib-hdr",
    loop_steps=0,
)
#: The modelling choices of every decode, batch, first-token and serving file.
SOURCES: dict[str, Source] = {
    "decode_ft_gpt20b_a100": _FT,
    "decode_ft_megatron530b_a100": _FT,
    "decode_gptfast_a100": Source(
        "gpt-fast",
        "a100-80gb",
        dict(allreduce="engine", cuda_graphs=True),
        "torch.compile(mode='reduce-overhead') replays each step as a CUDA graph, and ENABLE_INTRA_NODE_COMM=1 "
        "runs PyTorch's intra-node one- and two-shot all-reduce kernels, the family the engine all-reduce models; "
        "a 5-token prompt, then 199 decode steps (the CLI's 200 new tokens)",
    ),
    "decode_argonne_vllm_a100": Source(
        "vLLM",
        "a100-40gb",
        dict(allreduce="engine", cuda_graphs=True, gpu_memory_utilization=0.9, max_num_batched_tokens=8192),
        "vLLM's LLM class: CUDA graphs and its custom all-reduce by default. " + _ARGONNE,
        devices_per_node=4,
        budget=8192,
        memory_waves=True,
    ),
    "decode_argonne_trtllm_a100": Source(
        "TensorRT-LLM",
        "a100-40gb",
        dict(allreduce="engine", cuda_graphs=False, gpu_memory_utilization=0.9, max_num_batched_tokens=8192),
        "TensorRT-LLM 0.11 through ModelRunnerCpp (run_power.py line 326; no CUDA graph option passed), with its "
        "one- and two-shot all-reduce plugin for small messages. " + _ARGONNE,
        devices_per_node=4,
        budget=8192,
        memory_waves=True,
    ),
    "ttft_lmdeploy_a100": Source(
        "LMDeploy",
        "a100-80gb",
        dict(allreduce="nccl", cuda_graphs=False, max_num_batched_tokens=8192),
        "TurboMind (v0.1.0a1) launches its kernels from C++ without CUDA graphs and all-reduces with NCCL "
        "(ftNcclAllReduceSum, LlamaFfnLayer.cc line 116; enable_custom_all_reduce defaults to 0, "
        "LlamaTritonModel.cc line 47); a prompt of up to 2,048 tokens is one prefill step",
    ),
    "serving_lmdeploy_a100": Source(
        "LMDeploy",
        "a100-80gb",
        dict(allreduce="nccl", cuda_graphs=False),
        "TurboMind as in ttft_lmdeploy_a100; "
        "at most max_batch_size sequences (benchmark_{7b,13b,20b,70b}.sh: 128, 128, 128, 256)",
        per_row=_lmdeploy_batch,
    ),
    "serving_sglang_vllm060": Source(
        "SGLang v0.3.0 / vLLM v0.6.0",
        "a100-80gb",
        dict(allreduce="engine", cuda_graphs=True),
        "both replay CUDA graphs and run vLLM's custom all-reduce; vLLM 0.6.0 keeps at most 256 sequences (its "
        "default) and 0.9 of the memory, SGLang 0.88 at TP 1 and 0.85 at TP 4, set to 0.88 offline (README line "
        "55); the 8B rows ran on one A100 80G, the 70B rows on 4 x H100 80G (table headings)",
        per_row=_sglang_vllm060,
    ),
    "serving_sglang_h200_datacrunch": Source(
        "SGLang (December 2024)",
        "h200",
        dict(allreduce="engine", cuda_graphs=True),
        "SGLang with CUDA graphs and its custom all-reduce on H200s of one node; the 405B server sets "
        "--mem-frac 0.87 (docker_dev_commands.txt). The image is dev/latest of December 2024, after SGLang v0.4 "
        "(2024-12-04) made its overlap scheduler the default, so no CPU cost per step (assumed: the version is "
        "not recorded)",
        async_scheduling=True,
        per_row=_datacrunch,
    ),
}


def source(dataset: str) -> Source:
    """The :class:`Source` of ``dataset``."""
    if dataset not in SOURCES:
        raise ValueError(f"dataset must be one of {sorted(SOURCES)}, got {dataset!r}")
    return SOURCES[dataset]


def _device(row: dict, src: Source) -> str:
    return "h100-sxm" if "H100" in row["gpu"] else src.device


def cluster_for(row: dict) -> Cluster:
    """The :class:`lib.serving.Cluster` a row ran on."""
    src = source(row["dataset"])
    return Cluster(_device(row, src), devices_per_node=src.devices_per_node, inter_link=src.inter_link)


def weight_format(row: dict) -> str:
    """The weight format of a row: ``"int8"`` for int8 weights (W8A16), otherwise 16-bit."""
    return "int8" if row["precision"].startswith("int8") else "bf16"


def engine_for(row: dict, **fixed: Any) -> Engine:
    """The engine of ``row``, resolved for its device: the source's settings, the row's format, ``fixed`` costs.

    ``fixed`` takes ``layer_overhead`` and ``step_overhead`` (and any other
    :class:`Engine` field a caller holds fixed); a source's ``per_row`` rule
    adds the settings that differ between its rows (batch limit, memory).
    """
    src = source(row["dataset"])
    options = dict(src.settings, weight_format=weight_format(row))
    options.update(src.per_row(row) if src.per_row else {})
    options.update(fixed)
    return configure(_device(row, src), **options)


def load_row(dataset: str, index: int = 0) -> dict:
    """Row ``index`` of ``dataset`` (for examples and tests)."""
    return load_published(dataset)[index]
