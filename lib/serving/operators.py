"""One device's work in one forward pass of a pipeline stage, priced operator by operator.

Introduced in chapter 7 (serving many users). A forward pass is a sequence
of kernels, not one: the linear layers (the attention projections and the
MLP, or the experts), attention over the KV cache, and the output head that
turns the last hidden state into logits. Each kernel is limited by its own
side of the roofline (Williams et al. 2009), so the pass takes

    t = sum over operators of max(bytes / (eta_mem BW), FLOPs / (eta_flop peak))
        + the tensor-parallel all-reduces + the fixed costs

When the linear layers are compute-bound and attention is bandwidth-bound,
the two times add; a roofline taken over the whole pass would overlap them.

A pass carries ``decode`` sequences that each add one token after
``context`` cached ones, and ``prefill`` prompt tokens that each attend to
``prefill_context`` positions on average (a whole prompt of ``P`` tokens:
``(P + 1) / 2``, causal). ``sampled`` sequences take a token from the
output head. The linear layers run at the weight format's peak
(:func:`lib.formats.compute_peak`); attention and the output head at the
16-bit peak (the cache and the head are read in their own formats).

>>> from lib.transformer import PRESETS
>>> from lib.serving.layout import Cluster, Layout
>>> from lib.serving.engine import DISPATCH_BYTES, EXPERT_EXCHANGES, Engine
>>> work = pass_work(PRESETS["llama-3-8b"], Cluster("h100-sxm"), Layout(), 0, Engine().resolved("h100-sxm"),
...                  decode=64, context=2048, sampled=64)
>>> round(work.linear_time * 1e3, 2), round(work.attention_time * 1e3, 2), round(work.time * 1e3, 2)
(4.63, 5.7, 14.19)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks
from lib.collectives import best_collective_time
from lib.collectives.engine import engine_allreduce
from lib.experts import expert_imbalance
from lib.formats import UNQUANTISED_BYTES
from lib.serving.engine import DISPATCH_BYTES, EXPERT_EXCHANGES, Engine
from lib.serving.layout import Cluster, Layout, check_layout, stage_layers
from lib.serving.matmul import ATTENTION_EFFICIENCY, linear_compute_time, product_flops
from lib.serving.memory import _kv_bytes_per_layer, _per_device_layer
from lib.transformer import ModelConfig, parameter_breakdown

__all__ = [
    "ACTIVATION_BYTES",
    "expected_experts_touched",
    "Roofline",
    "StageWork",
    "pass_work",
    "tp_allreduce",
    "expert_exchange",
    "exchange_time",
]

Number = Any

#: Bytes per activation element on the wire and in the collectives (16-bit), whatever the weights use.
ACTIVATION_BYTES = 2


def expected_experts_touched(experts: Number, top_k: Number, tokens: Number) -> float | np.ndarray:
    """Distinct experts a layer reads, on average, when ``tokens`` tokens each pick ``top_k`` of ``experts``.

    Each expert is missed by one token with probability ``1 - k/E``, by all
    ``T`` of them with ``(1 - k/E)^T`` (routers spreading evenly), so

        touched = E (1 - (1 - k/E)^T)

    >>> round(expected_experts_touched(8, 2, 1), 2), round(expected_experts_touched(8, 2, 16), 2)
    (2.0, 7.92)
    """
    e = _checks.count("experts", experts, minimum=1)
    k = _checks.count("top_k", top_k, minimum=1)
    if (k > e).any():
        raise ValueError(f"top_k must be at most experts, got top_k={top_k!r}, experts={experts!r}")
    t = _checks.nonnegative("tokens", tokens)
    return _checks.result(e * (1 - (1 - k / e) ** t))


def _experts_read(config: ModelConfig, layout: Layout, tokens: np.ndarray) -> np.ndarray:
    """MLPs' worth of weights the busiest device reads per layer: whole experts or ``1/tp`` slices.

    Split by tensor parallelism, every device reads its ``1/tp`` slice of each
    touched expert. Placed whole (``expert_parallel``), the busiest device
    reads at least its even share of the touched experts, rounded up to a
    whole expert and at most the ``experts / tp`` it holds: one whole expert
    at batch 1, where tensor parallelism reads ``k / tp`` of one.
    """
    if config.experts == 1:
        return np.asarray(1.0 / layout.tp)
    touched = np.asarray(expected_experts_touched(config.experts, config.experts_per_token, tokens))
    if not layout.expert_parallel:
        return touched / layout.tp
    return np.minimum(config.experts / layout.tp, np.maximum(1.0, np.ceil(touched / layout.tp)))


@dataclass(frozen=True)
class Roofline:
    """One operator: the ``bytes`` it moves, the ``flops`` it does, and the time each side would take alone."""

    bytes: Any
    flops: Any
    memory_time: Any
    compute_time: Any

    @property
    def time(self) -> Any:
        """``max(memory_time, compute_time)``."""
        return _checks.result(np.maximum(self.memory_time, self.compute_time))


def _roofline(bytes_: Any, flops: Any, bandwidth: float, peak: float) -> Roofline:
    return Roofline(bytes_, flops, np.asarray(bytes_) / bandwidth, np.asarray(flops) / peak)


@dataclass(frozen=True)
class StageWork:
    """One device's work in one pipeline stage for one forward pass, in seconds, bytes and FLOPs.

    ``linear``, ``attention`` and ``head`` are the three operators
    (:class:`Roofline`); ``communication_time`` the tensor-parallel
    all-reduces; ``fixed_time`` the per-layer and per-step costs.
    ``read_bytes``, ``flops``, ``memory_time`` and ``compute_time`` are the
    operators' totals.
    """

    linear: Roofline
    attention: Roofline
    head: Roofline
    communication_time: Any
    fixed_time: Any

    @property
    def operators(self) -> tuple[Roofline, Roofline, Roofline]:
        """``(linear, attention, head)``."""
        return self.linear, self.attention, self.head

    @property
    def linear_time(self) -> Any:
        """The linear layers' roofline time."""
        return self.linear.time

    @property
    def attention_time(self) -> Any:
        """Attention's roofline time."""
        return self.attention.time

    @property
    def head_time(self) -> Any:
        """The output head's roofline time (0 except on the last stage)."""
        return self.head.time

    @property
    def read_bytes(self) -> Any:
        """Bytes all operators move."""
        return _checks.result(sum(np.asarray(op.bytes) for op in self.operators))

    @property
    def flops(self) -> Any:
        """FLOPs all operators do."""
        return _checks.result(sum(np.asarray(op.flops) for op in self.operators))

    @property
    def memory_time(self) -> Any:
        """Sum of the operators' memory sides."""
        return _checks.result(sum(np.asarray(op.memory_time) for op in self.operators))

    @property
    def compute_time(self) -> Any:
        """Sum of the operators' compute sides."""
        return _checks.result(sum(np.asarray(op.compute_time) for op in self.operators))

    @property
    def compute_bound_time(self) -> Any:
        """Time of the operators whose compute side is the longer: what more FLOP/s would shorten."""
        return _checks.result(
            sum(
                np.where(np.asarray(op.compute_time) > np.asarray(op.memory_time), np.asarray(op.time), 0.0)
                for op in self.operators
            )
        )

    @property
    def time(self) -> Any:
        """The operators' roofline times, plus the all-reduces and the fixed costs."""
        return _checks.result(
            sum(np.asarray(op.time) for op in self.operators)
            + np.asarray(self.communication_time)
            + np.asarray(self.fixed_time)
        )


def tp_allreduce(cluster: Cluster, tp: int, message: Number, allreduce: str = "engine") -> float | np.ndarray:
    """Time of one tensor-parallel all-reduce of ``message`` bytes, inside or across servers.

    >>> from lib.units import KB, us
    >>> [round(tp_allreduce(Cluster("h100-sxm"), 8, 16 * KB, a) / us, 1) for a in ("engine", "nccl")]
    [6.3, 15.2]
    """
    nodes = -(-tp // cluster.devices_per_node)
    return engine_allreduce(message, tp, cluster.link, nodes, cluster.inter_link, cluster.nics_per_node, allreduce).time


def pass_work(
    config: ModelConfig,
    cluster: Cluster,
    layout: Layout,
    stage: int,
    engine: Engine,
    decode: Number = 0,
    context: Number = 0,
    prefill: Number = 0,
    prefill_context: Number = 0,
    sampled: Number = 0,
    prompts: Number | None = None,
) -> StageWork:
    """The work of the busiest device of pipeline stage ``stage`` in one forward pass (see the module notes).

    ``engine`` must be resolved for the cluster's device
    (:meth:`lib.serving.engine.Engine.resolved`). The counts are the
    replica's. With attention run data-parallel (``layout.attention_dp``)
    its ``tp`` ranks share the decoding sequences evenly, but a prompt is
    one rank's: the ``prefill`` tokens belong to ``prompts`` whole prompts
    and the busiest rank computes ``ceil(prompts / tp)`` of them (``None``:
    spread evenly). Every count broadcasts.
    """
    check_layout(config, layout)
    counts = stage_layers(config.layers, layout.pp)
    if not 0 <= stage < len(counts):
        raise ValueError(f"stage must be in 0..{len(counts) - 1}, got {stage!r}")
    if engine.layer_overhead is None:
        raise ValueError("engine must be resolved for the device (Engine.resolved) before pricing a pass")
    decode_ = _checks.nonnegative("decode", decode)
    context_ = _checks.nonnegative("context", context)
    prefill_ = _checks.nonnegative("prefill", prefill)
    prefill_context_ = _checks.nonnegative("prefill_context", prefill_context)
    sampled_ = _checks.nonnegative("sampled", sampled)
    device = cluster.device
    parts = parameter_breakdown(config)
    tp, layers = layout.tp, counts[stage]
    last = stage == len(counts) - 1
    tokens = decode_ + prefill_
    own = 1.0 / tp if layout.attention_dp else 1.0  # the busiest rank's share of decodes
    prompt_own = own if prompts is None else _busiest_prompts(layout, prompts)
    heads = 1 if layout.attention_dp else tp  # how many ways the heads are split
    bandwidth = engine.memory_efficiency * device.memory_bandwidth
    flat = engine.compute_efficiency
    peak16 = (ATTENTION_EFFICIENCY if flat is None else flat) * device.peak_flops
    moe = config.moe_layers / config.layers

    dense = _per_device_layer(config, layout, experts=0)  # attention, shared and dense MLPs, router
    imbalance = (
        expert_imbalance(tokens, config.experts, config.experts_per_token, tp) if layout.expert_parallel else 1.0
    )
    routed = moe * config.experts_per_token * parts.mlp / tp * np.asarray(imbalance)
    weights = layers * (dense + moe * _experts_read(config, layout, tokens) * parts.mlp) * engine.weight_bytes
    attended = decode_ * own + prefill_ * prompt_own  # tokens whose attention the busiest rank runs
    excess = np.asarray(imbalance) if layout.expert_parallel else 1.0  # the busiest device's experts' extra rows
    rows = tokens * config.experts_per_token / config.experts * excess  # each expert's rows
    pairs = tokens * config.experts_per_token * (excess / tp if layout.expert_parallel else 1.0)
    linear_time = linear_compute_time(
        config, layout, device, engine.weight_format, attended, rows, pairs, engine.compute_efficiency
    )
    linear = Roofline(
        weights, 2 * layers * (attended * dense + tokens * routed), weights / bandwidth, layers * linear_time
    )

    kv_layer = _kv_bytes_per_layer(config, tp, engine.kv_bytes, not layout.attention_dp)
    cache = layers * kv_layer * (own * decode_ * (context_ + 1) + prompt_own * prefill_)  # read it, write new
    scores = (
        layers
        / heads
        * (
            own * config.attention_flops(True) * decode_ * context_
            + prompt_own * config.attention_flops(False) * prefill_ * prefill_context_
        )
    )
    attention = _roofline(cache, scores, bandwidth, peak16)

    vocab_split = 1 if layout.attention_dp else tp
    head_params = (parts.head or parts.embedding) / vocab_split if last else 0.0
    heads_sampled = sampled_ * (own if layout.attention_dp else 1.0)
    head_bytes = np.where(sampled_ > 0, head_params * UNQUANTISED_BYTES, 0.0)
    head_rate = product_flops(device, "bf16", heads_sampled, head_params / config.hidden, config.hidden, flat)
    head_flops = 2 * heads_sampled * head_params
    head = Roofline(head_bytes, head_flops, head_bytes / bandwidth, head_flops / head_rate)

    communication = np.where(tokens > 0, _communication(config, cluster, layout, engine, layers, tokens, attended), 0.0)
    fixed = layers * engine.layer_overhead + (engine.step_overhead if last else 0.0)
    shape = np.broadcast_shapes(*(np.shape(x) for x in (weights, cache, sampled_, communication, linear.flops)))

    def full(x: Any) -> Any:
        return _checks.result(np.broadcast_to(np.asarray(x, dtype=float), shape))

    def broadcast(op: Roofline) -> Roofline:
        return Roofline(full(op.bytes), full(op.flops), full(op.memory_time), full(op.compute_time))

    return StageWork(broadcast(linear), broadcast(attention), broadcast(head), full(communication), full(fixed))


def _busiest_prompts(layout: Layout, prompts: Number) -> np.ndarray:
    """Share of the prompt tokens on the busiest rank: ``ceil(prompts / tp) / prompts`` with attention run
    data-parallel (whole prompts on ranks), else 1."""
    n = _checks.nonnegative("prompts", prompts)
    if not layout.attention_dp:
        return np.ones_like(n)
    return np.where(n > 0, np.ceil(n / layout.tp - 1e-9) / np.maximum(n, 1e-300), 1.0 / layout.tp)


def _communication(
    config: ModelConfig,
    cluster: Cluster,
    layout: Layout,
    engine: Engine,
    layers: int,
    tokens: np.ndarray,
    busiest: np.ndarray,
) -> np.ndarray:
    """The collectives of one stage's pass.

    Tensor parallelism: two all-reduces per layer of all ``tokens``.
    Attention run data-parallel: none around attention, and two exchanges
    around each routed layer (``engine.expert_exchange``), in NCCL over the
    group's links:

    * ``"allgather_reducescatter"`` (vLLM 0.33.0's default): every rank
      gathers the group's hidden states (``all_gatherv``, each rank its own
      count: ``AgRsAll2AllManager`` in
      vllm/distributed/device_communicators/all2all.py), runs its own
      experts on all of them and reduce-scatters the outputs: each
      collective carries all ``tokens`` of the group, whatever ``top_k``.
    * ``"deepep"``: an all-to-all in which the busiest rank sends ``top_k``
      copies of its ``busiest`` tokens, ``hidden x top_k x``
      :data:`~lib.serving.engine.DISPATCH_BYTES` bytes each, and one back
      of ``hidden x top_k x 2`` bytes.

    The ranks wait for the busiest one at every exchange, which the
    attention terms of :func:`pass_work` price.
    """
    if not layout.attention_dp:
        message = tokens * config.hidden * ACTIVATION_BYTES
        return 2 * layers * np.asarray(tp_allreduce(cluster, layout.tp, message, engine.allreduce))
    per_layer = exchange_time(config, cluster, layout.tp, engine.expert_exchange, tokens, busiest)
    return layers * config.moe_layers / config.layers * per_layer


def exchange_time(
    config: ModelConfig, cluster: Cluster, group: int, exchange: str, tokens: Number, busiest: Number
) -> Any:
    """Seconds of one routed layer's two collectives (:func:`expert_exchange`) in a data-parallel-attention group
    of ``group`` ranks, in NCCL over the cluster's links (the network when the group spans servers).

    >>> from lib.transformer import PRESETS
    >>> one, two = (exchange_time(PRESETS["deepseek-v3"], Cluster("h200"), 8, "allgather_reducescatter", t, t)
    ...             for t in (64, 128))
    >>> bool(0 < one < two)
    True
    """
    nodes = -(-group // cluster.devices_per_node)
    inter = cluster.inter_link if nodes > 1 else None
    return sum(
        np.asarray(best_collective_time(kind, message, group, cluster.link, nodes, inter, cluster.nics_per_node))
        for kind, message in expert_exchange(config, exchange, tokens, busiest)
    )


def expert_exchange(
    config: ModelConfig, exchange: str, tokens: Number, busiest: Number
) -> tuple[tuple[str, Any], tuple[str, Any]]:
    """The two collectives around one routed layer, ``((kind, bytes), (kind, bytes))``, with attention run
    data-parallel: ``tokens`` in the group, ``busiest`` on its busiest rank (see :func:`_communication`).

    The bytes are the collective's message as :func:`lib.collectives.best_collective_time` takes it: the
    gathered result for an all-gather and a reduce-scatter, one rank's send buffer for an all-to-all.

    >>> from lib.transformer import PRESETS
    >>> expert_exchange(PRESETS["deepseek-v3"], "allgather_reducescatter", 64, 8)
    (('allgather', 917504.0), ('reducescatter', 917504.0))
    >>> [int(b) for _, b in expert_exchange(PRESETS["deepseek-v3"], "deepep", 64, 8)]  # 8 copies of 8 tokens
    [473088, 917504]
    """
    n = _checks.nonnegative("tokens", tokens)
    b = _checks.nonnegative("busiest", busiest)
    if exchange == "deepep":
        copies = b * config.experts_per_token * config.hidden
        dispatch, combine = copies * DISPATCH_BYTES, copies * ACTIVATION_BYTES
        return ("alltoall", _checks.result(dispatch)), ("alltoall", _checks.result(combine))
    if exchange == "allgather_reducescatter":
        gathered = _checks.result(n * config.hidden * ACTIVATION_BYTES)
        return ("allgather", gathered), ("reducescatter", gathered)
    raise ValueError(f"exchange must be one of {EXPERT_EXCHANGES}, got {exchange!r}")
