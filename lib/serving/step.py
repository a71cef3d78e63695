"""How long a serving step takes: a roofline per pipeline stage, plus the collectives and hops.

Introduced in chapter 7 (serving many users). One forward pass on one device
must read bytes (weights, KV cache) and do FLOPs; it takes at least

    max(bytes / (eta_mem BW), flops / (eta_flop peak))

(the roofline of Williams et al. 2009), plus the tensor-parallel all-reduces,
which wait for each other. A decode step carries one token per sequence;
weights are read once however many sequences share the step, which is why
batching pays until the FLOPs catch up. A prefill carries a whole prompt and
is compute-bound.

In a pipeline of ``pp`` stages an engine keeps up to ``pp`` microbatches in
flight, each a slice of the batch. A sequence's next token needs its previous
one to come back round, so with ``m`` microbatches the time per output token
is the longer of one trip round the loop and ``m`` passes of the slowest
stage:

    tpot = max(sum(stage) + hops, m x max(stage))

Efficiencies default to 1, which gives the ideal bound; calibrate them
against a measurement of your own engine.

>>> from lib.transformer import PRESETS
>>> from lib.serving.layout import Cluster, Layout
>>> from lib.units import ms
>>> step = decode_step(PRESETS["llama-3-8b"], Cluster("h100-sxm"), Layout(), batch=1, context=1)
>>> round(step.tpot / ms, 2), step.bound
(4.48, 'memory')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks
from lib.collectives import send_time, tune_allreduce
from lib.serving.layout import Cluster, Layout, check_layout, stage_layers
from lib.serving.memory import _kv_bytes_per_layer, _per_device_layer
from lib.transformer import ModelConfig, parameter_breakdown

__all__ = ["expected_experts_touched", "StageWork", "stage_work", "hop_time", "DecodeStep", "decode_step",
           "prefill_time", "compute_bound_batch", "ACTIVATION_BYTES"]

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
class StageWork:
    """One device's work in one pipeline stage for one forward pass.

    ``read_bytes`` and ``flops`` feed the roofline; ``memory_time`` and
    ``compute_time`` are its two sides; ``communication_time`` the
    tensor-parallel all-reduces. Each is a float or an array over the sweep.
    """

    read_bytes: Any
    flops: Any
    memory_time: Any
    compute_time: Any
    communication_time: Any

    @property
    def time(self) -> Any:
        """``max(memory_time, compute_time) + communication_time``."""
        return _checks.result(np.maximum(self.memory_time, self.compute_time) + np.asarray(self.communication_time))


def _tp_allreduce(cluster: Cluster, tp: int, message: np.ndarray) -> np.ndarray:
    """Time of one tensor-parallel all-reduce of ``message`` bytes, NCCL's tuner, inside or across nodes."""
    nodes = -(-tp // cluster.devices_per_node)
    return np.asarray(tune_allreduce(message, tp, cluster.link, nodes, cluster.inter_link, cluster.nics_per_node).time)


def stage_work(config: ModelConfig, cluster: Cluster, layout: Layout, stage: int, tokens: Number, context: Number,
               prefill: bool = False, bytes_per_element: Number = 2, kv_bytes_per_element: Number | None = None,
               memory_efficiency: Number = 1.0, compute_efficiency: Number = 1.0) -> StageWork:
    """The roofline work of one device of pipeline stage ``stage`` in one forward pass.

    Decode (``prefill=False``): ``tokens`` sequences each add one token and
    read ``context`` cached tokens. Prefill: one prompt of ``tokens`` tokens
    attends causally to itself and writes its KV cache. Weights read are
    those the pass touches: not the embedding table (a lookup), only the
    experts the step's tokens are routed to.
    """
    check_layout(config, layout)
    counts = stage_layers(config.layers, layout.pp)
    if not 0 <= stage < len(counts):
        raise ValueError(f"stage must be in 0..{len(counts) - 1}, got {stage!r}")
    n = _checks.positive("tokens", tokens)
    ctx = _checks.nonnegative("context", context)
    b = _checks.positive("bytes_per_element", bytes_per_element)
    kv_b = b if kv_bytes_per_element is None else _checks.positive("kv_bytes_per_element", kv_bytes_per_element)
    eta_mem = _checks.fraction("memory_efficiency", memory_efficiency)
    eta_flop = _checks.fraction("compute_efficiency", compute_efficiency)
    device = cluster.device
    parts = parameter_breakdown(config)
    tp, layers = layout.tp, counts[stage]
    last = stage == len(counts) - 1

    dense = _per_device_layer(config, layout, experts=0)
    head = (parts.head or parts.embedding) / tp if last else 0.0
    weights_read = (layers * (dense + _experts_read(config, layout, n) * parts.mlp) + head) * b

    kv_token = _kv_bytes_per_layer(config, tp, kv_b) * layers
    q_width = config.heads * config.head_dim / tp
    active_linear = _per_device_layer(config, layout, experts=config.experts_per_token)
    if prefill:
        kv_traffic = n * kv_token                                  # written once
        attention_flops = 4 * q_width * n * (n + 1) / 2 * layers   # causal: token i sees i tokens
        head_tokens = 1.0                                          # logits only for the last position
    else:
        kv_traffic = n * ctx * kv_token                            # every sequence reads its whole cache
        attention_flops = 4 * q_width * n * ctx * layers
        head_tokens = n
    flops = 2 * n * layers * active_linear + attention_flops + 2 * head_tokens * head
    read = weights_read + kv_traffic
    message = n * config.hidden * ACTIVATION_BYTES
    communication = 2 * layers * _tp_allreduce(cluster, tp, np.asarray(message, dtype=float))
    shape = np.broadcast_shapes(np.shape(read), np.shape(flops), np.shape(communication))
    return StageWork(
        read_bytes=_checks.result(np.broadcast_to(read, shape)),
        flops=_checks.result(np.broadcast_to(flops, shape)),
        memory_time=_checks.result(np.broadcast_to(read / (eta_mem * device.memory_bandwidth), shape)),
        compute_time=_checks.result(np.broadcast_to(flops / (eta_flop * device.peak_flops), shape)),
        communication_time=_checks.result(np.broadcast_to(communication, shape)),
    )


def hop_time(cluster: Cluster, layout: Layout, hop_bytes: Number) -> float | np.ndarray:
    """The pipeline hops of one pass through the slowest replica: a send of ``hop_bytes`` per stage boundary.

    A boundary inside a server uses its link, one between servers the
    network (:func:`lib.collectives.send_time`). Broadcasts over ``hop_bytes``.

    >>> from lib.units import KB, us
    >>> inside, across = (hop_time(Cluster("h100-sxm", devices_per_node=n), Layout(pp=2), 16 * KB) for n in (8, 1))
    >>> round(inside / us, 1), round(across / us, 1)
    (7.3, 10.6)
    """
    hop_bytes = _checks.nonnegative("hop_bytes", hop_bytes)
    per_replica = [sum((np.asarray(send_time(hop_bytes, link)) for link in _hop_links(cluster, layout, r)),
                       np.zeros_like(hop_bytes)) for r in range(layout.dp)]
    return _checks.result(np.max(np.stack(per_replica), axis=0))


def _hop_links(cluster: Cluster, layout: Layout, replica: int) -> list:
    """The link each pipeline boundary of one replica crosses: inside a server or between two."""
    first = replica * layout.tp * layout.pp
    links = []
    for boundary in range(layout.pp - 1):
        sender = first + (boundary + 1) * layout.tp - 1
        receiver = first + (boundary + 1) * layout.tp
        links.append(cluster.link if cluster.node(sender) == cluster.node(receiver) else cluster.inter_link)
    return links


@dataclass(frozen=True)
class DecodeStep:
    """A decode step of one replica: per-stage times, hops, and what users and devices see.

    ``tpot`` is the time per output token of every sequence in the batch;
    ``tokens_per_s`` the replica's output rate; ``bound`` names the side of
    the roofline that sets the slowest stage's time.
    """

    stage_times: tuple
    hop_time: Any
    microbatches: Any
    tpot: Any
    tokens_per_s: Any
    bound: Any


def decode_step(config: ModelConfig, cluster: Cluster, layout: Layout, batch: Number, context: Number,
                bytes_per_element: Number = 2, kv_bytes_per_element: Number | None = None,
                memory_efficiency: Number = 1.0, compute_efficiency: Number = 1.0) -> DecodeStep:
    """One decode step of one replica carrying ``batch`` sequences with ``context`` tokens each.

    The batch is cut into ``m = min(pp, batch)`` microbatches; a stage's time
    is that of its busiest device for one microbatch. Broadcasts over
    ``batch`` and ``context``.

    >>> from lib.transformer import PRESETS
    >>> from lib.serving.layout import Cluster, Layout
    >>> llama = PRESETS["llama-3-8b"]
    >>> one, many = (decode_step(llama, Cluster("h100-sxm"), Layout(), batch=b, context=2048) for b in (1, 64))
    >>> round(many.tpot / one.tpot, 2)          # 64 times the tokens for about twice the time
    2.11
    """
    check_layout(config, layout)
    batch_ = _checks.count("batch", batch, minimum=1)
    m = np.minimum(layout.pp, batch_)
    micro = np.ceil(batch_ / m)
    works = [stage_work(config, cluster, layout, s, micro, context, False, bytes_per_element, kv_bytes_per_element,
                        memory_efficiency, compute_efficiency) for s in range(layout.pp)]
    times = [np.asarray(w.time, dtype=float) for w in works]
    hop = np.asarray(hop_time(cluster, layout, micro * config.hidden * ACTIVATION_BYTES))
    stacked = np.stack(np.broadcast_arrays(*times))
    tpot = np.maximum(stacked.sum(axis=0) + hop, m * stacked.max(axis=0))
    slowest = works[int(np.argmax([np.max(t) for t in times]))]
    bound = np.where(np.asarray(slowest.compute_time) > np.asarray(slowest.memory_time), "compute", "memory")
    return DecodeStep(
        stage_times=tuple(_checks.result(t) for t in times),
        hop_time=_checks.result(hop),
        microbatches=_checks.result(m),
        tpot=_checks.result(tpot),
        tokens_per_s=_checks.result(batch_ / tpot),
        bound=str(bound) if bound.ndim == 0 else bound,
    )


def prefill_time(config: ModelConfig, cluster: Cluster, layout: Layout, prompt_tokens: Number,
                 bytes_per_element: Number = 2, kv_bytes_per_element: Number | None = None,
                 memory_efficiency: Number = 1.0, compute_efficiency: Number = 1.0) -> float | np.ndarray:
    """Time to first token for one prompt on an idle replica: every stage in turn, plus the hops.

    The prompt crosses every stage once (no queueing, no other work in the
    step); each stage's tensor-parallel all-reduces carry the whole prompt's
    activations.

    >>> from lib.transformer import PRESETS
    >>> from lib.serving.layout import Cluster, Layout
    >>> from lib.units import ms
    >>> llama = PRESETS["llama-3-70b"]
    >>> [round(prefill_time(llama, Cluster("h100-sxm"), Layout(tp=k), 2048) / ms) for k in (2, 8)]
    [160, 60]
    """
    check_layout(config, layout)
    n = _checks.positive("prompt_tokens", prompt_tokens)
    total = sum(np.asarray(stage_work(config, cluster, layout, s, n, 0, True, bytes_per_element,
                                      kv_bytes_per_element, memory_efficiency, compute_efficiency).time)
                for s in range(layout.pp))
    return _checks.result(total + np.asarray(hop_time(cluster, layout, n * config.hidden * ACTIVATION_BYTES)))


def compute_bound_batch(config: ModelConfig, device: object, context: Number = 0, tp: int = 1,
                        bytes_per_element: Number = 2,
                        kv_bytes_per_element: Number | None = None) -> float | np.ndarray:
    """The batch at which a decode step's FLOPs take as long as its memory reads: the ridge of the roofline.

    A decode step of ``B`` sequences on one device reads the weights once
    (``W`` bytes) plus each sequence's cache (``c kappa`` bytes) and does
    ``F`` FLOPs per sequence. With ``I = peak_flops / memory_bandwidth`` the
    two sides of the roofline are equal at

        B_ridge = W / (F / I - c kappa)

    and never (``inf``) once ``c kappa >= F / I``: each added sequence then
    brings more bytes than the device can compute on in the same time, and
    the step stays memory-bound at any batch. With no cache (``context=0``)
    ``F = 2 W / b`` and ``B_ridge = I b / 2``. The roofline only: the
    tensor-parallel all-reduces add time but change neither side. Dense
    models only (a mixture of experts reads more experts as the batch grows;
    see :func:`expected_experts_touched`). Broadcasts over ``context``.

    Parameters
    ----------
    config : ModelConfig
        A dense model.
    device : Device or str
        A :data:`lib.hardware.DEVICES` slug or a :class:`~lib.hardware.Device`.
    context : int or array
        Tokens already in each sequence's cache.
    tp : int
        Tensor-parallel degree of the replica (the ridge barely moves with it).
    bytes_per_element, kv_bytes_per_element : float
        Bytes per weight and per cached number (the cache defaults to the weights').

    Returns
    -------
    float or ndarray
        Sequences per step (not rounded); ``inf`` where no batch is compute-bound.

    >>> from lib.transformer import PRESETS
    >>> llama = PRESETS["llama-3-70b"]
    >>> round(compute_bound_batch(llama, "h100-sxm"), 1)                  # the ridge intensity at b = 2
    295.4
    >>> compute_bound_batch(llama, "h100-sxm", context=[512, 1024, 4096]).round().tolist()   # KV reads move it
    [452.0, 964.0, inf]
    """
    if config.experts > 1:
        raise ValueError(f"config must be a dense model (a mixture of experts reads more experts as the batch "
                         f"grows; see expected_experts_touched), got {config.name} with {config.experts} experts")
    cluster, layout = Cluster(device), Layout(tp=tp)
    one, two = (stage_work(config, cluster, layout, 0, n, context, False, bytes_per_element, kv_bytes_per_element)
                for n in (1.0, 2.0))
    per_sequence_memory = np.asarray(two.memory_time) - np.asarray(one.memory_time)     # c kappa / BW
    weights_memory = np.asarray(one.memory_time) - per_sequence_memory                  # W / BW
    gap = np.asarray(one.compute_time) - per_sequence_memory                             # F / peak - c kappa / BW
    ridge = np.where(gap > 0, weights_memory / np.where(gap > 0, gap, 1.0), np.inf)
    return _checks.result(ridge)
