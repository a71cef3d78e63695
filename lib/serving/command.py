"""The commands that deploy a layout: ``vllm serve`` and SGLang ``launch_server`` lines that build what was modelled.

Introduced with the layout planner (chapter 9). A planner's answer is only
useful if it can be run and builds the layout that was priced.
:func:`vllm_command` and :func:`sglang_command` each return a
:class:`Deployment`: the lines of one server (one line per machine when a copy
spans several), how many independent copies to run behind a load balancer,
and a note saying what the lines cannot. Flag names and values are those of
vLLM 0.34.0's ``vllm serve`` and SGLang 0.5.23's
``python -m sglang.launch_server``; :func:`lib.serving.engine_flags.check_command`
checks every line against the tables read from those wheels
(``data/engines/``). The semantics below were read in the engines' sources:

* **Context length.** ``--max-model-len`` (vLLM) and ``--context-length``
  (SGLang) are set to the longest request, prompt plus output tokens, as
  given, not rounded: both engines take any integer up to the model's own
  context (vLLM ``vllm/config/model.py``, SGLang ``ModelConfig``), page the
  cache in blocks of 16 tokens (vLLM) or single tokens (SGLang) whatever the
  limit, and vLLM's start-up check asks for the cache of one sequence of that
  length, so the exact need is the tightest value that admits every modelled
  request. Past the model's context (``context_length``) the command is
  refused.
* **Replicas.** vLLM's ``--data-parallel-size`` runs each rank as its own
  engine; for a dense model the ranks are independent and share one API
  front end (vLLM ``vllm/v1/engine/core.py``, ``run_engine_core``: "Non-MoE
  DP ranks are completely independent, so treat like DP=1"), but for a
  mixture of experts they become ``DPEngineCoreProc`` ranks whose expert
  layers form one group of ``dp x tp`` with forward passes kept in step
  (``docs/serving/data_parallel_deployment.md``). The plain replicas of a
  mixture are therefore separate vLLM servers (``copies``). SGLang's
  ``--dp-size`` without ``--enable-dp-attention`` launches each rank as its
  own tensor-parallel group with its own scheduler
  (``python/sglang/srt/managers/data_parallel_controller.py``,
  ``launch_tensor_parallel_group``), independent for any model. Replicas
  share one line while they fit one server; beyond it each server (or each
  multi-server replica) is a copy.
* **Attention data parallelism with expert parallelism** (``attention_dp``)
  is one engine group: vLLM ``--data-parallel-size tp --tensor-parallel-size
  1 --enable-expert-parallel`` with ``--all2all-backend``; SGLang
  ``--tp-size tp --dp-size tp --enable-dp-attention --ep-size tp`` with
  ``--moe-a2a-backend`` (``none``: tokens gathered and reduce-scattered over
  the group; ``deepep``, which sets ``ep_size`` to ``tp_size`` itself:
  ``python/sglang/srt/arg_groups/moe_hook.py``). Under DP attention SGLang
  divides ``--chunked-prefill-size`` (``arg_groups/parallel_hook.py``,
  ``handle_data_parallelism``) and ``--max-running-requests`` by ``dp_size``
  among its ranks, so both are written as the group's totals; vLLM's
  ``--max-num-seqs`` and ``--max-num-batched-tokens`` are per rank.
  Expert parallelism inside a tensor-parallel group is vLLM
  ``--enable-expert-parallel`` and SGLang ``--ep-size tp``
  (``arg_groups/fields/parallel.py``).
* **Weights.** FP8 weights are quantised when a 16-bit checkpoint loads
  (``--quantization fp8`` in both). INT8 and INT4 weights need a quantised
  checkpoint (GPTQ or AWQ, W8A16 or W4A16): no ``--quantization`` flag, so the
  engine reads the method from the checkpoint's ``quantization_config`` and
  picks its kernel (vLLM ``vllm/model_executor/layers/quantization/gptq_marlin.py``,
  ``GPTQMarlinConfig.override_quantization_method``: Marlin unless the user
  forces ``gptq``). The line names a placeholder repository
  (:func:`quantized_checkpoint`) and the note says so.
* **Several servers per copy** (``tp x pp`` above ``devices_per_node``):
  vLLM's multiprocessing form, ``--nnodes N --node-rank R --master-addr``
  with ``--headless`` on all but the first (``docs/serving/parallelism_scaling.md``,
  "Running vLLM with MultiProcessing"); for an attention-DP group vLLM's
  multi-node data parallel form, ``--data-parallel-size-local``,
  ``--data-parallel-start-rank``, ``--data-parallel-address``,
  ``--data-parallel-rpc-port`` and ``--headless``
  (``docs/serving/data_parallel_deployment.md``); SGLang ``--nnodes N
  --node-rank R --dist-init-addr HOST:PORT`` on every server.

The engine's scheduler limits (:class:`lib.serving.engine.Engine`) become
``--max-num-seqs``/``--max-running-requests``,
``--max-num-batched-tokens``/``--chunked-prefill-size`` and
``--gpu-memory-utilization``/``--mem-fraction-static`` (SGLang's fraction
excludes the activations that vLLM's includes; the same number is written);
no CUDA graphs is ``--enforce-eager``/``--disable-cuda-graph``; NCCL's own
all-reduce is ``--disable-custom-all-reduce`` in both.

>>> from lib.serving.layout import Layout
>>> from lib.serving.engine import configure
>>> fp8 = configure("h100-sxm", weight_format="fp8")
>>> print(vllm_command("meta-llama/Llama-3.1-70B-Instruct", Layout(tp=4, dp=2), fp8, 1280).text)
vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 --pipeline-parallel-size 1 --data-parallel-size 2 --quantization fp8 --kv-cache-dtype auto --max-num-seqs 1024 --max-num-batched-tokens 8192 --gpu-memory-utilization 0.92 --max-model-len 1280
>>> deepseek = vllm_command("deepseek-ai/DeepSeek-V3", Layout(8, 1, 2, True, True), configure("h200"), 4096)
>>> deepseek.lines[0].split(" --")[1:4], deepseek.copies
(['tensor-parallel-size 1', 'pipeline-parallel-size 1', 'data-parallel-size 8'], 2)
>>> sglang_command("deepseek-ai/DeepSeek-V3", Layout(8, 1, 1, True, True), configure("h200"), 4096).lines[0][:137]
'python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --pp-size 1 --dp-size 8 --enable-dp-attention --ep-size 8'
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from lib import _checks
from lib.serving.engine import Engine
from lib.serving.engine_flags import ENGINE_VERSIONS
from lib.serving.layout import Layout

__all__ = [
    "QUANTIZATION",
    "CHECKPOINT_SUFFIX",
    "ALL2ALL_BACKEND",
    "MOE_A2A_BACKEND",
    "SGLANG_KV_CACHE_DTYPE",
    "HEAD_ADDRESS",
    "DATA_PARALLEL_RPC_PORT",
    "DIST_INIT_PORT",
    "Deployment",
    "quantized_checkpoint",
    "vllm_command",
    "sglang_command",
    "parse_vllm_command",
    "parse_sglang_command",
]

#: ``--quantization`` per weight format, the same in both engines (``None``: no flag; the integer formats are read
#: from a quantised checkpoint's ``quantization_config``).
QUANTIZATION = {"bf16": None, "fp8": "fp8", "int8": None, "int4": None}
#: The suffix of the placeholder repository an integer format needs (GPTQ W8A16 / W4A16, as Qwen names its own).
CHECKPOINT_SUFFIX = {"int8": "GPTQ-Int8", "int4": "GPTQ-Int4"}
#: vLLM ``--all2all-backend`` per expert exchange (:data:`lib.serving.engine.EXPERT_EXCHANGES`; vllm/config/parallel.py).
ALL2ALL_BACKEND = {"allgather_reducescatter": "allgather_reducescatter", "deepep": "deepep_low_latency"}
#: SGLang ``--moe-a2a-backend`` per expert exchange (``none``: gathered and reduce-scattered over the DP group).
MOE_A2A_BACKEND = {"allgather_reducescatter": "none", "deepep": "deepep"}
#: SGLang ``--kv-cache-dtype`` per cache format (its choices: auto, fp8_e4m3, fp8_e5m2, bf16, ...).
SGLANG_KV_CACHE_DTYPE = {"bf16": "auto", "fp8": "fp8_e4m3"}
#: The placeholder for the first server's address in multi-server lines.
HEAD_ADDRESS = "HEAD_NODE_IP"
#: vLLM's ``--data-parallel-rpc-port`` (the port docs/serving/data_parallel_deployment.md uses).
DATA_PARALLEL_RPC_PORT = 13345
#: The port of SGLang's ``--dist-init-addr`` (the one SGLang's multi-node examples use).
DIST_INIT_PORT = 20000


@dataclass(frozen=True)
class Deployment:
    """How to start one layout with one engine: ``lines`` (one per server of a copy) run as ``copies`` copies.

    ``copies`` independent copies of the lines go behind a load balancer;
    ``note`` says why, and what else the lines need (a quantised checkpoint,
    the first server's address). :attr:`text` is what a shell reader gets.
    """

    engine: str
    version: str
    lines: tuple[str, ...]
    copies: int = 1
    note: str = ""

    @property
    def servers(self) -> int:
        """Servers one copy spans (one line each)."""
        return len(self.lines)

    @property
    def text(self) -> str:
        """The lines, each multi-server line after a ``# server R of N`` comment, then the note as a comment.

        >>> print(Deployment("vllm", "0.34.0", ("vllm serve m", "vllm serve m --headless"), 2, "Two copies.").text)
        # server 0 of 2
        vllm serve m
        # server 1 of 2
        vllm serve m --headless
        # Two copies.
        """
        out = []
        for rank, line in enumerate(self.lines):
            if len(self.lines) > 1:
                out.append(f"# server {rank} of {len(self.lines)}")
            out.append(line)
        if self.note:
            out.append(f"# {self.note}")
        return "\n".join(out)


def quantized_checkpoint(model: str, weight_format: str) -> str:
    """The repository to serve for ``weight_format``: ``model`` itself, or a placeholder for a GPTQ checkpoint of it.

    >>> quantized_checkpoint("meta-llama/Llama-3.1-70B-Instruct", "int4")
    'YOUR-ORG/Llama-3.1-70B-Instruct-GPTQ-Int4'
    >>> quantized_checkpoint("meta-llama/Llama-3.1-70B-Instruct", "fp8")
    'meta-llama/Llama-3.1-70B-Instruct'
    """
    if weight_format not in CHECKPOINT_SUFFIX:
        return model
    return f"YOUR-ORG/{model.rstrip('/').split('/')[-1]}-{CHECKPOINT_SUFFIX[weight_format]}"


@dataclass(frozen=True)
class _Placement:
    """One copy's shape: ``line_dp`` replicas (or DP ranks) on one line, ``servers`` lines, ``copies`` copies."""

    line_dp: int
    servers: int
    copies: int
    why: str


def _placement(layout: Layout, devices_per_node: int, shared_replicas: bool) -> _Placement:
    group = layout.tp * layout.pp  # the devices of one replica (of one attention-DP group)
    if group > devices_per_node:
        servers = -(-group // devices_per_node)
        if group % servers:
            raise ValueError(
                f"layout {layout.name} puts {group} devices in a replica, which do not split evenly over "
                f"{servers} servers of devices_per_node={devices_per_node}"
            )
        return _Placement(1, servers, layout.dp, "each copy on its own servers")
    if layout.attention_dp:
        return _Placement(1, 1, layout.dp, "each attention-data-parallel group is one engine")
    if not shared_replicas:
        return _Placement(1, 1, layout.dp, "")
    fit = max(k for k in range(1, layout.dp + 1) if layout.dp % k == 0 and k * group <= devices_per_node)
    return _Placement(fit, 1, layout.dp // fit, "one server's replicas per copy")


def _check_context(max_model_len: int, context_length: int) -> int:
    max_model_len = _checks.scalar_count("max_model_len", max_model_len, minimum=1)
    context_length = _checks.scalar_count("context_length", context_length, minimum=0)
    if context_length and max_model_len > context_length:
        raise ValueError(
            f"max_model_len={max_model_len} (the longest prompt plus output, in tokens) exceeds the model's "
            f"context_length={context_length}"
        )
    return max_model_len


def _check_engine(engine: Engine) -> None:
    if engine.max_num_seqs is None or engine.max_num_batched_tokens is None:
        raise ValueError("engine must be resolved for the device (Engine.resolved) to state its limits")


def _note(place: _Placement, engine: Engine, model: str, reason: str, name: str) -> str:
    parts = []
    if place.copies > 1:
        parts.append(
            f"Run {place.copies} copies of {'these lines' if place.servers > 1 else 'this line'}, each on its own "
            f"devices, behind a load balancer ({reason or place.why})."
        )
    if place.servers > 1:
        parts.append(
            f"One copy spans {place.servers} servers: run line R on server R, with {HEAD_ADDRESS} the address of "
            "server 0."
        )
    if engine.weight_format in CHECKPOINT_SUFFIX:
        bits = engine.weight_format[3:]
        parts.append(
            f"{engine.weight_format.upper()} weights need a quantized checkpoint of {model} (GPTQ or AWQ, W{bits}A16) "
            f"in place of {quantized_checkpoint(model, engine.weight_format)}; {name} reads the method from its "
            "quantization_config and picks the kernel (Marlin)."
        )
    return " ".join(parts)


def vllm_command(
    model: str,
    layout: Layout,
    engine: Engine,
    max_model_len: int,
    *,
    context_length: int = 0,
    mixture_of_experts: bool | None = None,
    devices_per_node: int = 8,
) -> Deployment:
    """The ``vllm serve`` lines for ``model`` laid out as ``layout`` with the resolved ``engine``.

    ``max_model_len`` is the longest request (prompt plus output tokens);
    with ``context_length`` (the model's, 0 when unknown) a longer one is
    refused. ``mixture_of_experts`` (default: whether ``layout`` places
    experts) decides whether plain replicas may share a line.

    >>> from lib.serving.engine import configure
    >>> moe = vllm_command("org/moe", Layout(4, 1, 2, True), configure("h100-sxm"), 2048)
    >>> moe.copies, "--data-parallel-size 1" in moe.lines[0], moe.note.split(" (")[0]
    (2, True, 'Run 2 copies of this line, each on its own devices, behind a load balancer')
    >>> vllm_command("org/m", Layout(), configure("h100-sxm"), 9000, context_length=8192)
    Traceback (most recent call last):
    ...
    ValueError: max_model_len=9000 (the longest prompt plus output, in tokens) exceeds the model's context_length=8192
    """
    _check_engine(engine)
    max_model_len = _check_context(max_model_len, context_length)
    moe = layout.expert_parallel if mixture_of_experts is None else bool(mixture_of_experts)
    place = _placement(layout, devices_per_node, shared_replicas=not moe)
    tp, dp = (1, layout.tp) if layout.attention_dp else (layout.tp, place.line_dp)
    base = ["vllm", "serve", quantized_checkpoint(model, engine.weight_format)]
    base += ["--tensor-parallel-size", str(tp), "--pipeline-parallel-size", str(layout.pp)]
    base += ["--data-parallel-size", str(dp)]
    if QUANTIZATION[engine.weight_format]:
        base += ["--quantization", QUANTIZATION[engine.weight_format]]
    base += [
        "--kv-cache-dtype",
        "fp8" if engine.kv_format == "fp8" else "auto",
        "--max-num-seqs",
        str(engine.max_num_seqs),
        "--max-num-batched-tokens",
        str(engine.max_num_batched_tokens),
        "--gpu-memory-utilization",
        f"{engine.gpu_memory_utilization:g}",
        "--max-model-len",
        str(max_model_len),
    ]
    if layout.expert_parallel:
        base.append("--enable-expert-parallel")
    if layout.attention_dp:
        base += ["--all2all-backend", ALL2ALL_BACKEND[engine.expert_exchange]]
    if not engine.cuda_graphs:
        base.append("--enforce-eager")
    if engine.allreduce == "nccl":
        base.append("--disable-custom-all-reduce")
    lines = []
    for rank in range(place.servers):
        words = list(base)
        if place.servers > 1 and layout.attention_dp:
            local = layout.tp // place.servers
            if layout.tp % place.servers:
                raise ValueError(
                    f"layout {layout.name}: {layout.tp} data-parallel ranks do not split evenly over {place.servers} "
                    "servers"
                )
            words += ["--data-parallel-size-local", str(local)]
            if rank:
                words += ["--data-parallel-start-rank", str(rank * local)]
            words += ["--data-parallel-address", HEAD_ADDRESS, "--data-parallel-rpc-port", str(DATA_PARALLEL_RPC_PORT)]
        elif place.servers > 1:
            words += ["--nnodes", str(place.servers), "--node-rank", str(rank), "--master-addr", HEAD_ADDRESS]
        if rank:
            words.append("--headless")
        lines.append(" ".join(shlex.quote(word) for word in words))
    reason = (
        "vLLM's --data-parallel-size would make a mixture's expert layers one group across the replicas, with "
        "forward passes in step"
        if moe and not layout.attention_dp and layout.dp > 1 and place.servers == 1
        else ""
    )
    return Deployment(
        "vllm", ENGINE_VERSIONS["vllm"], tuple(lines), place.copies, _note(place, engine, model, reason, "vLLM")
    )


def sglang_command(
    model: str,
    layout: Layout,
    engine: Engine,
    max_model_len: int,
    *,
    context_length: int = 0,
    devices_per_node: int = 8,
) -> Deployment:
    """The ``python -m sglang.launch_server`` lines for ``model`` laid out as ``layout`` with the resolved ``engine``.

    Arguments as :func:`vllm_command`; SGLang's plain ``--dp-size`` replicas
    are independent for any model, so they share a line while they fit one
    server.

    >>> from lib.serving.engine import configure
    >>> line = sglang_command("org/m", Layout(2, 1, 4), configure("h100-sxm", kv_format="fp8"), 2048).lines[0]
    >>> line.split(" --")[2:5], "--kv-cache-dtype fp8_e4m3" in line, "--context-length 2048" in line
    (['tp-size 2', 'pp-size 1', 'dp-size 4'], True, True)
    """
    _check_engine(engine)
    max_model_len = _check_context(max_model_len, context_length)
    place = _placement(layout, devices_per_node, shared_replicas=True)
    ranks = layout.tp if layout.attention_dp else 1  # SGLang divides the two limits below among its DP ranks
    words = ["python", "-m", "sglang.launch_server", "--model-path", quantized_checkpoint(model, engine.weight_format)]
    words += ["--tp-size", str(layout.tp), "--pp-size", str(layout.pp)]
    words += ["--dp-size", str(layout.tp if layout.attention_dp else place.line_dp)]
    if layout.attention_dp:
        words.append("--enable-dp-attention")
    if layout.expert_parallel:
        words += ["--ep-size", str(layout.tp)]
    if layout.attention_dp:
        words += ["--moe-a2a-backend", MOE_A2A_BACKEND[engine.expert_exchange]]
    if QUANTIZATION[engine.weight_format]:
        words += ["--quantization", QUANTIZATION[engine.weight_format]]
    words += [
        "--kv-cache-dtype",
        SGLANG_KV_CACHE_DTYPE[engine.kv_format],
        "--max-running-requests",
        str(engine.max_num_seqs * ranks),
        "--chunked-prefill-size",
        str(engine.max_num_batched_tokens * ranks),
        "--mem-fraction-static",
        f"{engine.gpu_memory_utilization:g}",
        "--context-length",
        str(max_model_len),
    ]
    if not engine.cuda_graphs:
        words.append("--disable-cuda-graph")
    if engine.allreduce == "nccl":
        words.append("--disable-custom-all-reduce")
    lines = []
    for rank in range(place.servers):
        more = []
        if place.servers > 1:
            more = ["--nnodes", str(place.servers), "--node-rank", str(rank)]
            more += ["--dist-init-addr", f"{HEAD_ADDRESS}:{DIST_INIT_PORT}"]
        lines.append(" ".join(shlex.quote(word) for word in words + more))
    return Deployment(
        "sglang", ENGINE_VERSIONS["sglang"], tuple(lines), place.copies, _note(place, engine, model, "", "SGLang")
    )


def _parse(words: list[str], parsed: dict) -> dict:
    i = 0
    while i < len(words):
        flag = words[i]
        if not flag.startswith("--"):
            raise ValueError(f"line must hold --flags after the model, got {flag!r}")
        value = words[i + 1] if i + 1 < len(words) and not words[i + 1].startswith("--") else True
        parsed[flag[2:]] = value
        i += 2 if value is not True else 1
    return parsed


def parse_vllm_command(line: str) -> dict:
    """The model and the flags of a ``vllm serve`` line: ``{"model": ..., "tensor-parallel-size": "4", ...}``.

    A flag without a value maps to ``True``.

    >>> parse_vllm_command("vllm serve m --tensor-parallel-size 2 --enforce-eager")
    {'model': 'm', 'tensor-parallel-size': '2', 'enforce-eager': True}
    """
    words = shlex.split(line)
    if words[:2] != ["vllm", "serve"] or len(words) < 3:
        raise ValueError(f"line must start with 'vllm serve MODEL', got {line!r}")
    return _parse(words[3:], {"model": words[2]})


def parse_sglang_command(line: str) -> dict:
    """The flags of a ``python -m sglang.launch_server`` line: ``{"model-path": ..., "tp-size": "4", ...}``.

    >>> parse_sglang_command("python -m sglang.launch_server --model-path m --tp-size 2 --enable-dp-attention")
    {'model-path': 'm', 'tp-size': '2', 'enable-dp-attention': True}
    """
    words = shlex.split(line)
    if words[:3] != ["python", "-m", "sglang.launch_server"]:
        raise ValueError(f"line must start with 'python -m sglang.launch_server', got {line!r}")
    return _parse(words[3:], {})
