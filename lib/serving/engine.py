"""How the serving engine runs: number formats, its all-reduce, fixed costs, scheduler limits and memory reserve.

Introduced in chapter 7 (serving many users). The roofline of a step says
what the hardware allows; an engine adds what it does around it. Every knob
is a field of :class:`Engine`, with a default that names its mechanism and
its source:

* **Formats** (:mod:`lib.formats`): ``weight_format`` and ``kv_format``.
* **All-reduce** (:mod:`lib.collectives.engine`): ``"engine"`` runs vLLM's
  one- and two-shot kernels where vLLM would, ``"nccl"`` always NCCL.
* **Expert exchange** with attention run data-parallel
  (:data:`EXPERT_EXCHANGES`): ``"allgather_reducescatter"``, vLLM 0.33.0's
  default (``all2all_backend`` in ``vllm/config/parallel.py``), gathers every
  token to every rank and reduce-scatters the outputs; ``"deepep"``
  dispatches each token only to its ``top_k`` experts' ranks and combines
  the results back (DeepEP's kernels, used by SGLang's and vLLM's wide
  expert parallelism), in FP8 one way and 16 bits the other.
* **Achieved fractions of the peaks**: ``memory_efficiency``, the share of
  the datasheet bandwidth a step's kernels reach. Matrix products run at the
  throughput measured for their device, format and shape
  (:mod:`lib.serving.matmul`, :mod:`lib.kernels`); ``compute_efficiency``
  set to a number prices every product at that one fraction of the peak
  instead (the book's earlier model, chapter 11's baseline).
* **Fixed costs**: ``layer_overhead`` per layer and forward pass (the short
  kernels the roofline does not see: norms, rotary embedding, activation,
  residual adds, and each kernel's launch and tail) and ``step_overhead`` per
  engine step (sampling, input preparation, the part of scheduling that
  runs on the critical path).
* **Scheduler limits**: ``max_num_seqs`` sequences per replica and a token
  budget of ``max_num_batched_tokens`` per step, by default vLLM 0.33.0's
  for its OpenAI server (``vllm/engine/arg_utils.py``, ``get_batch_defaults``,
  lines 2940-3039): 16,384 tokens and 1,024 sequences on GPUs of 160 GiB
  or more, 8,192 and 1,024 on other GPUs of 70 GiB or more except the A100
  (excluded by name: "Setting large max_num_batched_tokens for A100 reduces
  throughput", PR #17885), and 2,048 and 256 on all others.
* **Memory**: vLLM takes ``gpu_memory_utilization`` = 0.92 of the device
  (``vllm/config/cache.py``, lines 215-224, version 0.33.0) and from that
  leaves room for memory outside PyTorch's allocator (CUDA context, NCCL
  and all-reduce buffers: :data:`NON_TORCH_BYTES`) and for the captured
  CUDA graphs (:data:`CUDA_GRAPH_BYTES`).

Where the defaults of the achieved fractions and fixed costs come from
(chapter 11 refits them, on one-GPU rows only, and a test checks that the
refit gives these values):

* ``memory_efficiency`` 0.90 is **measured**: BabelStream's copy kernel moves
  1,400 GB/s on an A100-SXM4-40GB of Argonne's Polaris (ALCF beginners'
  guide, ``polaris/02_profiling.md``, line 213), against the 1,555 GB/s of
  the datasheet. It is taken to hold on every device.
* ``compute_efficiency`` is ``None`` (the measured GEMM tables). Its
  single-fraction value :data:`COMPUTE_EFFICIENCY` 0.75 is **fitted** to
  LMDeploy's first-token latencies on one A100-80G: the rise from a
  128-token to a 2,048-token prompt, which removes every per-request cost,
  for Llama-2 7B and 13B (:func:`lib.validation.calibrate_serving` gives
  0.752 with this module's per-operator roofline, attention FLOPs
  included).
* ``layer_overhead`` 110 us (CUDA graphs on) is **fitted** to vLLM's
  batch-1 latencies on one A100-40GB (Argonne's LLM-Inference-Bench:
  Llama-2 7B, Llama-3 8B, Mistral 7B, 128 to 2,048 tokens in and out)
  given the two fractions above. Without CUDA graphs each layer also pays
  its kernels' launches (:data:`EAGER_LAYER_LAUNCH`).
* ``step_overhead`` is 0: vLLM V1, SGLang and TensorRT-LLM schedule the next
  step while the GPU runs this one (asynchronous or overlap scheduling), so
  their CPU work stays off the critical path; set it for an engine that
  does not.

>>> engine = Engine(weight_format="fp8").resolved("h100-sxm")
>>> engine.max_num_seqs, engine.max_num_batched_tokens, engine.weight_bytes
(1024, 8192, 1.0)
>>> Engine().resolved("a100-80gb").max_num_batched_tokens
2048
>>> Engine(kv_format="int4")
Traceback (most recent call last):
...
ValueError: kv_format must be one of ['bf16', 'fp8'], got 'int4'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from lib import _checks
from lib.collectives.engine import ALLREDUCE_CHOICES
from lib.formats import kv_bytes
from lib.formats import weight_format as lookup_format
from lib.hardware import DEVICES, Device
from lib.hardware import device as lookup_device
from lib.units import B, GiB, ms, s, us

__all__ = [
    "Engine",
    "configure",
    "EXPERT_EXCHANGES",
    "DISPATCH_BYTES",
    "STREAM_COPY_A100_40GB",
    "MEMORY_EFFICIENCY",
    "COMPUTE_EFFICIENCY",
    "LAYER_OVERHEAD",
    "STEP_OVERHEAD",
    "EAGER_LAYER_LAUNCH",
    "GPU_MEMORY_UTILIZATION",
    "NON_TORCH_BYTES",
    "CUDA_GRAPH_BYTES",
    "SCHEDULER_TIERS",
    "scheduler_limits",
]

#: How the ranks of an attention-data-parallel group exchange tokens with the experts (see the module notes).
EXPERT_EXCHANGES = ("allgather_reducescatter", "deepep")
#: Bytes per element of a DeepEP dispatch: FP8 with one 32-bit scale per 128 values ("FP8 dispatching and BF16
#: combining", DeepEP's docs/legacy.md); the combine moves 16-bit values.
DISPATCH_BYTES = 1 + 4 / 128
#: BabelStream's copy rate on an A100-SXM4-40GB of Polaris (``MBytes/sec`` 1400256.415, alcf_beginners_guide).
STREAM_COPY_A100_40GB = 1400256.415e6 * B / s
#: Share of the datasheet memory bandwidth the kernels reach: measured (see the module notes).
MEMORY_EFFICIENCY = STREAM_COPY_A100_40GB / DEVICES["a100-40gb"].memory_bandwidth
#: The single share of the tensor-core peak of the book's earlier model, for every matrix product (fitted on one
#: GPU, chapter 11); ``Engine(compute_efficiency=COMPUTE_EFFICIENCY)`` prices with it.
COMPUTE_EFFICIENCY = 0.75
#: Seconds per layer and forward pass under CUDA graphs (fitted on one GPU, chapter 11).
LAYER_OVERHEAD = 110 * us
#: Seconds per engine step on the critical path (0: asynchronous scheduling hides the CPU's work).
STEP_OVERHEAD = 0.0
#: Extra seconds per layer without CUDA graphs: each of the layer's kernels launched from the CPU. Llama-3.1 8B
#: on one H100 takes 8.4 ms per decode step eager and 5.1 ms with a CUDA graph (cloudai_cudagraphs), 3.3 ms over
#: 32 layers.
EAGER_LAYER_LAUNCH = (8.4 - 5.1) * ms / 32
#: vLLM 0.33.0's default share of device memory it manages (``--gpu-memory-utilization``).
GPU_MEMORY_UTILIZATION = 0.92
#: Memory outside PyTorch's allocator: CUDA context, cuBLAS workspace, and from two GPUs up NCCL's and the
#: custom all-reduce's buffers. vLLM's memory profiler logged 1.79 GiB for Llama-3 8B on one H100 and 3.58 GiB at
#: TP 2 (vllm_memory_profiling, PR #10511).
NON_TORCH_BYTES = {1: 1.79 * GiB, 2: 3.58 * GiB}
#: vLLM 0.33.0's scheduler defaults by device (see the module notes): ``(least memory in bytes, a name
#: that excludes a device when its lower-cased name holds it, (max_num_seqs, max_num_batched_tokens))``,
#: tried in order; the last tier takes every device.
SCHEDULER_TIERS = ((160 * GiB, "", (1024, 16384)), (70 * GiB, "a100", (1024, 8192)), (0.0, "", (256, 2048)))
#: Memory of the captured CUDA graphs ("Estimated CUDA graph memory: 0.36 GiB total" in a vLLM 0.27 log).
CUDA_GRAPH_BYTES = 0.36 * GiB


def scheduler_limits(device: Device | str) -> tuple[int, int]:
    """``(max_num_seqs, max_num_batched_tokens)``: vLLM 0.33.0's OpenAI-server defaults for ``device``.

    >>> [scheduler_limits(d) for d in ("b200", "h200", "a100-80gb", "l4")]
    [(1024, 16384), (1024, 8192), (256, 2048), (256, 2048)]
    """
    dev = lookup_device(device)
    for least, excluded, limits in SCHEDULER_TIERS:
        if dev.memory_bytes >= least and not (excluded and excluded in dev.name.lower()):
            return limits
    raise AssertionError("the last tier of SCHEDULER_TIERS takes every device")


@dataclass(frozen=True)
class Engine:
    """The serving engine's settings; ``None`` fields take the defaults of :meth:`resolved`.

    Every field is checked when the engine is made: an unknown format or
    all-reduce, an efficiency outside (0, 1], a negative cost or a limit
    below 1 raises a ValueError naming it. ``compute_efficiency`` ``None``
    prices matrix products by the measured GEMM tables (see the module notes).
    """

    weight_format: str = "bf16"
    kv_format: str = "bf16"
    allreduce: str = "engine"
    expert_exchange: str = "allgather_reducescatter"
    cuda_graphs: bool = True
    memory_efficiency: float = MEMORY_EFFICIENCY
    compute_efficiency: float | None = None
    layer_overhead: float | None = None
    step_overhead: float = STEP_OVERHEAD
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    gpu_memory_utilization: float = GPU_MEMORY_UTILIZATION

    def __post_init__(self) -> None:
        lookup_format(self.weight_format)
        kv_bytes(self.kv_format)
        if self.allreduce not in ALLREDUCE_CHOICES:
            raise ValueError(f"allreduce must be one of {ALLREDUCE_CHOICES}, got {self.allreduce!r}")
        if self.expert_exchange not in EXPERT_EXCHANGES:
            raise ValueError(f"expert_exchange must be one of {EXPERT_EXCHANGES}, got {self.expert_exchange!r}")
        if not isinstance(self.cuda_graphs, bool):
            raise ValueError(f"cuda_graphs must be True or False, got {self.cuda_graphs!r}")
        for name in ("memory_efficiency", "compute_efficiency", "gpu_memory_utilization"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, _checks.scalar(name, getattr(self, name), _checks.fraction))
        for name in ("layer_overhead", "step_overhead"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, _checks.scalar(name, getattr(self, name), _checks.nonnegative))
        for name in ("max_num_seqs", "max_num_batched_tokens"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, _checks.scalar_count(name, getattr(self, name), minimum=1))

    def resolved(self, device: Device | str) -> Engine:
        """This engine with every ``None`` filled in for ``device``: the scheduler limits and the layer cost."""
        seqs, tokens = scheduler_limits(device)
        layer = LAYER_OVERHEAD + (0.0 if self.cuda_graphs else EAGER_LAYER_LAUNCH)
        return replace(
            self,
            layer_overhead=layer if self.layer_overhead is None else self.layer_overhead,
            max_num_seqs=seqs if self.max_num_seqs is None else self.max_num_seqs,
            max_num_batched_tokens=tokens if self.max_num_batched_tokens is None else self.max_num_batched_tokens,
        )

    def replica_limits(self, layout: Any) -> tuple[int, int]:
        """``(sequences, tokens per step)`` one replica of ``layout`` schedules at most.

        With attention run data-parallel every device of the group is an engine
        rank with its own scheduler (vLLM's ``--data-parallel-size``, SGLang's
        DP attention), so the group's limits are ``tp`` times one rank's.
        """
        ranks = layout.tp if getattr(layout, "attention_dp", False) else 1
        return ranks * self.max_num_seqs, ranks * self.max_num_batched_tokens

    @property
    def weight_bytes(self) -> float:
        """Bytes per weight of the linear layers (scales included)."""
        return lookup_format(self.weight_format).bytes_per_weight

    @property
    def kv_bytes(self) -> float:
        """Bytes per cached key or value number."""
        return kv_bytes(self.kv_format)

    def reserved_bytes(self, tp: int) -> float:
        """Bytes of a device that hold neither weights, activations nor cache: non-torch memory and CUDA graphs."""
        non_torch = NON_TORCH_BYTES[1] if tp == 1 else NON_TORCH_BYTES[2]
        return non_torch + (CUDA_GRAPH_BYTES if self.cuda_graphs else 0.0)

    def usable_bytes(self, device: Device | str, tp: int) -> float:
        """Bytes vLLM lets weights, activations and cache use: ``gpu_memory_utilization`` of it, less the reserve."""
        return math.floor(lookup_device(device).memory_bytes * self.gpu_memory_utilization) - self.reserved_bytes(tp)


def configure(device: Device | str, engine: Engine | None = None, **options) -> Engine:
    """``engine`` (the defaults if ``None``) with the :class:`Engine` fields in ``options`` changed, resolved.

    >>> configure("h100-sxm", weight_format="fp8", max_num_seqs=64).max_num_seqs
    64
    >>> configure("h100-sxm", bytes_per_element=1)
    Traceback (most recent call last):
    ...
    ValueError: bytes_per_element is not an engine setting; the settings are ['allreduce', 'compute_efficiency', 'cuda_graphs', 'expert_exchange', 'gpu_memory_utilization', 'kv_format', 'layer_overhead', 'max_num_batched_tokens', 'max_num_seqs', 'memory_efficiency', 'step_overhead', 'weight_format']
    """
    base = Engine() if engine is None else engine
    fields = list(Engine.__dataclass_fields__)
    for name in options:
        if name not in fields:
            raise ValueError(f"{name} is not an engine setting; the settings are {sorted(fields)}")
    if options:
        base = replace(base, **options)
    return base.resolved(device)
