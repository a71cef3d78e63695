"""The command that deploys a layout: a ``vllm serve`` line with the sizes, formats and limits the model assumed.

Introduced with the layout planner (chapter 9). A planner's answer is only
useful if it can be run. :func:`vllm_command` writes the line for vLLM's
OpenAI-compatible server (flag names and values as in vLLM 0.34.0's
``vllm serve``; :func:`lib.serving.engine_flags.check_command` checks a line
against that release's table, ``data/engines/vllm-0.34.0.json``):
``--tensor-parallel-size``, ``--pipeline-parallel-size``,
``--data-parallel-size``, ``--quantization fp8`` for FP8 weights (vLLM
quantises a 16-bit checkpoint when it loads it; an integer format needs a
GPTQ or AWQ checkpoint, which names its own method), ``--kv-cache-dtype``,
``--max-num-seqs`` and ``--max-num-batched-tokens`` (the limits the model's
scheduler assumed), ``--gpu-memory-utilization``, ``--enable-expert-parallel``
and ``--enforce-eager`` without CUDA graphs. With attention run
data-parallel (``adp`` layouts) the group's ``tp`` devices are vLLM's
data-parallel ranks (``--data-parallel-size tp --tensor-parallel-size 1``)
with the experts spread over all of them, each rank with its own scheduler
limits, and ``--all2all-backend`` names the expert exchange; the line is then
one group's, to be run ``dp`` times behind a load balancer.
:func:`parse_vllm_command` reads such a line back.

>>> from lib.serving.layout import Layout
>>> from lib.serving.engine import configure
>>> vllm_command("meta-llama/Llama-3.1-70B-Instruct", Layout(tp=4, dp=2), configure("h100-sxm", weight_format="fp8"))
'vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 --pipeline-parallel-size 1 --data-parallel-size 2 --quantization fp8 --kv-cache-dtype auto --max-num-seqs 1024 --max-num-batched-tokens 8192 --gpu-memory-utilization 0.92'
>>> vllm_command("deepseek-ai/DeepSeek-V3", Layout(8, 1, 1, True, True), configure("h200"))
'vllm serve deepseek-ai/DeepSeek-V3 --tensor-parallel-size 1 --pipeline-parallel-size 1 --data-parallel-size 8 --kv-cache-dtype auto --max-num-seqs 1024 --max-num-batched-tokens 8192 --gpu-memory-utilization 0.92 --enable-expert-parallel --all2all-backend allgather_reducescatter'
"""

from __future__ import annotations

import shlex

from lib.serving.engine import Engine
from lib.serving.layout import Layout

__all__ = ["QUANTIZATION", "ALL2ALL_BACKEND", "vllm_command", "parse_vllm_command"]

#: ``--quantization`` per weight format (``None``: no flag; the integer formats need a GPTQ checkpoint).
QUANTIZATION = {"bf16": None, "fp8": "fp8", "int8": "gptq", "int4": "gptq"}
#: ``--all2all-backend`` per expert exchange (:data:`lib.serving.engine.EXPERT_EXCHANGES`; vllm/config/parallel.py).
ALL2ALL_BACKEND = {"allgather_reducescatter": "allgather_reducescatter", "deepep": "deepep_low_latency"}


def vllm_command(model: str, layout: Layout, engine: Engine) -> str:
    """The ``vllm serve`` line for ``model`` laid out as ``layout`` with the resolved ``engine``."""
    if engine.max_num_seqs is None or engine.max_num_batched_tokens is None:
        raise ValueError("engine must be resolved for the device (Engine.resolved) to state its limits")
    tp, dp = (1, layout.tp) if layout.attention_dp else (layout.tp, layout.dp)
    words = [
        "vllm",
        "serve",
        model,
        "--tensor-parallel-size",
        str(tp),
        "--pipeline-parallel-size",
        str(layout.pp),
        "--data-parallel-size",
        str(dp),
    ]
    if QUANTIZATION[engine.weight_format]:
        words += ["--quantization", QUANTIZATION[engine.weight_format]]
    words += [
        "--kv-cache-dtype",
        "fp8" if engine.kv_format == "fp8" else "auto",
        "--max-num-seqs",
        str(engine.max_num_seqs),
        "--max-num-batched-tokens",
        str(engine.max_num_batched_tokens),
        "--gpu-memory-utilization",
        f"{engine.gpu_memory_utilization:g}",
    ]
    if layout.expert_parallel:
        words.append("--enable-expert-parallel")
    if layout.attention_dp:
        words += ["--all2all-backend", ALL2ALL_BACKEND[engine.expert_exchange]]
    if not engine.cuda_graphs:
        words.append("--enforce-eager")
    if engine.allreduce == "nccl":
        words.append("--disable-custom-all-reduce")
    return " ".join(shlex.quote(word) for word in words)


def parse_vllm_command(line: str) -> dict:
    """The model and the flags of a ``vllm serve`` line: ``{"model": ..., "tensor-parallel-size": "4", ...}``.

    A flag without a value maps to ``True``.

    >>> parse_vllm_command("vllm serve m --tensor-parallel-size 2 --enforce-eager")
    {'model': 'm', 'tensor-parallel-size': '2', 'enforce-eager': True}
    """
    words = shlex.split(line)
    if words[:2] != ["vllm", "serve"] or len(words) < 3:
        raise ValueError(f"line must start with 'vllm serve MODEL', got {line!r}")
    parsed: dict = {"model": words[2]}
    i = 3
    while i < len(words):
        flag = words[i]
        if not flag.startswith("--"):
            raise ValueError(f"line must hold --flags after the model, got {flag!r}")
        value = words[i + 1] if i + 1 < len(words) and not words[i + 1].startswith("--") else True
        parsed[flag[2:]] = value
        i += 2 if value is not True else 1
    return parsed
