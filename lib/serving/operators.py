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
>>> from lib.serving.engine import Engine
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
from lib.collectives.engine import engine_allreduce
from lib.formats import UNQUANTISED_BYTES
from lib.serving.engine import Engine
from lib.serving.layout import Cluster, Layout, check_layout, stage_layers
from lib.serving.memory import _kv_bytes_per_layer, _per_device_layer
from lib.transformer import ModelConfig, parameter_breakdown

__all__ = ["ACTIVATION_BYTES", "expected_experts_touched", "Roofline", "StageWork", "pass_work", "tp_allreduce"]

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
        return _checks.result(sum(np.where(np.asarray(op.compute_time) > np.asarray(op.memory_time),
                                           np.asarray(op.time), 0.0) for op in self.operators))

    @property
    def time(self) -> Any:
        """The operators' roofline times, plus the all-reduces and the fixed costs."""
        return _checks.result(sum(np.asarray(op.time) for op in self.operators) + np.asarray(self.communication_time)
                              + np.asarray(self.fixed_time))


def tp_allreduce(cluster: Cluster, tp: int, message: Number, allreduce: str = "engine") -> float | np.ndarray:
    """Time of one tensor-parallel all-reduce of ``message`` bytes, inside or across servers.

    >>> from lib.units import KB, us
    >>> [round(tp_allreduce(Cluster("h100-sxm"), 8, 16 * KB, a) / us, 1) for a in ("engine", "nccl")]
    [6.3, 15.2]
    """
    nodes = -(-tp // cluster.devices_per_node)
    return engine_allreduce(message, tp, cluster.link, nodes, cluster.inter_link, cluster.nics_per_node,
                            allreduce).time


def pass_work(config: ModelConfig, cluster: Cluster, layout: Layout, stage: int, engine: Engine, decode: Number = 0,
              context: Number = 0, prefill: Number = 0, prefill_context: Number = 0,
              sampled: Number = 0) -> StageWork:
    """The work of one device of pipeline stage ``stage`` in one forward pass (see the module notes).

    ``engine`` must be resolved for the cluster's device
    (:meth:`lib.serving.engine.Engine.resolved`). Every count broadcasts.
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
    bandwidth = engine.memory_efficiency * device.memory_bandwidth
    peak16 = engine.compute_efficiency * device.peak_flops

    dense = _per_device_layer(config, layout, experts=0)
    active = _per_device_layer(config, layout, experts=config.experts_per_token)
    weights = layers * (dense + _experts_read(config, layout, tokens) * parts.mlp) * engine.weight_bytes
    linear = _roofline(weights, 2 * tokens * layers * active, bandwidth, engine.linear_peak(device))

    kv_layer = _kv_bytes_per_layer(config, tp, engine.kv_bytes)
    q_width = config.heads * config.head_dim / tp
    cache = layers * kv_layer * (decode_ * context_ + tokens)             # read the cache, write the new tokens
    scores = 4 * q_width * layers * (decode_ * context_ + prefill_ * prefill_context_)
    attention = _roofline(cache, scores, bandwidth, peak16)

    head_params = (parts.head or parts.embedding) / tp if last else 0.0
    head = _roofline(np.where(sampled_ > 0, head_params * UNQUANTISED_BYTES, 0.0), 2 * sampled_ * head_params,
                     bandwidth, peak16)

    message = tokens * config.hidden * ACTIVATION_BYTES
    communication = np.where(tokens > 0, 2 * layers * np.asarray(tp_allreduce(cluster, tp, message,
                                                                              engine.allreduce)), 0.0)
    fixed = layers * engine.layer_overhead + (engine.step_overhead if last else 0.0)
    shape = np.broadcast_shapes(*(np.shape(x) for x in (weights, cache, sampled_, communication)))

    def full(x: Any) -> Any:
        return _checks.result(np.broadcast_to(np.asarray(x, dtype=float), shape))

    def spread(op: Roofline) -> Roofline:
        return Roofline(full(op.bytes), full(op.flops), full(op.memory_time), full(op.compute_time))

    return StageWork(spread(linear), spread(attention), spread(head), full(communication), full(fixed))
