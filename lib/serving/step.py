"""How long a serving step takes: decode with the prefill that steady state brings, across pipeline stages.

Introduced in chapter 7 (serving many users). A replica keeps ``B``
sequences running. Each step gives every one of them a token, and every
step carries the prefill of the prompts that replace the sequences that
finish: an engine with chunked prefill (vLLM V1 always runs one; Sarathi-
Serve) schedules the running sequences first and fills the rest of its
token budget with prompt chunks (``vllm/v1/core/sched/scheduler.py`` at
0.33.0: "First, schedule the RUNNING requests", then the waiting ones while
budget is left). A request of ``P`` prompt and ``O`` output tokens holds a
slot for ``O`` steps (the one that finishes its prompt, which samples its
first token, and ``O - 1`` decode steps), so in steady state ``B / O``
requests finish per step and as many prompts are computed: per step

    decode tokens  = B (O - 1) / O, each reading a cache of the mean context
    prefill tokens = B (1 - h) P / O, h the prefix-cache hit rate

With a prompt, :func:`decode_step` prices both in the same step; without one
it prices decode alone, as one batch timed by itself.

In a pipeline of ``pp`` stages an engine keeps up to ``pp`` microbatches in
flight, each a slice of the batch. A sequence's next token needs its previous
one to come back round, so with ``m`` microbatches the time per output token
is the longer of one trip round the loop and ``m`` passes of the slowest
stage:

    tpot = max(sum(stage) + hops, m x max(stage))

>>> from lib.transformer import PRESETS
>>> from lib.serving.layout import Cluster, Layout
>>> from lib.units import ms
>>> step = decode_step(PRESETS["llama-3-8b"], Cluster("h100-sxm"), Layout(), batch=1, context=1)
>>> round(step.tpot / ms, 2), step.bound
(8.5, 'memory')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks
from lib.collectives import send_time
from lib.serving.engine import Engine, configure
from lib.serving.layout import Cluster, Layout, check_layout
from lib.serving.operators import ACTIVATION_BYTES, StageWork, pass_work
from lib.transformer import ModelConfig

__all__ = ["stage_work", "hop_time", "DecodeStep", "decode_step", "prefill_time", "compute_bound_batch",
           "steady_prefill"]

Number = Any


def stage_work(config: ModelConfig, cluster: Cluster, layout: Layout, stage: int, tokens: Number, context: Number,
               prefill: bool = False, engine: Engine | None = None, **options: Any) -> StageWork:
    """The work of one device of pipeline stage ``stage``: a decode batch, or one whole prompt.

    Decode (``prefill=False``): ``tokens`` sequences each add one token and
    read ``context`` cached tokens, and each samples one. Prefill: one
    prompt of ``tokens`` tokens attends causally to itself, writes its KV
    cache and samples one token. ``options`` are :class:`Engine` fields
    (``weight_format``, ``allreduce``, ...). See
    :func:`lib.serving.operators.pass_work` for the general pass.
    """
    eng = configure(cluster.device, engine, **options)
    n = _checks.positive("tokens", tokens)
    if prefill:
        return pass_work(config, cluster, layout, stage, eng, prefill=n, prefill_context=(n + 1) / 2, sampled=1)
    return pass_work(config, cluster, layout, stage, eng, decode=n, context=context, sampled=n)


def hop_time(cluster: Cluster, layout: Layout, hop_bytes: Number) -> float | np.ndarray:
    """The pipeline hops of one pass through the slowest replica: a send of ``hop_bytes`` per stage boundary.

    A boundary inside a server uses its link, one between servers the
    network (:func:`lib.collectives.send_time`). Broadcasts over ``hop_bytes``.

    >>> from lib.units import KB, us
    >>> inside, across = (hop_time(Cluster("h100-sxm", devices_per_node=n), Layout(pp=2), 16 * KB) for n in (8, 1))
    >>> round(inside / us, 1), round(across / us, 1)
    (7.3, 9.9)
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


def steady_prefill(batch: Number, prompt_tokens: Number, output_tokens: Number,
                   prefix_hit_rate: Number = 0.0) -> tuple[Any, Any, Any]:
    """``(decode tokens, prefill tokens, prefill context)`` of one steady-state step of ``batch`` sequences.

    ``B (O - 1) / O`` decode tokens, ``B (1 - h) P / O`` prompt tokens, and
    the mean position a computed prompt token attends to, ``(h P + P + 1) / 2``
    (the cached prefix is not recomputed, but it is attended to).

    >>> steady_prefill(64, 1024, 256)
    (63.75, 256.0, 512.5)
    >>> steady_prefill(64, 1024, 256, prefix_hit_rate=0.5)[1:]
    (128.0, 768.5)
    """
    b = _checks.positive("batch", batch)
    p = _checks.count("prompt_tokens", prompt_tokens, minimum=1)
    o = _checks.count("output_tokens", output_tokens, minimum=1)
    h = _checks.nonnegative("prefix_hit_rate", prefix_hit_rate)
    if (h >= 1).any():
        raise ValueError(f"prefix_hit_rate must be in [0, 1), got {prefix_hit_rate!r}")
    return (_checks.result(b * (o - 1) / o), _checks.result(b * (1 - h) * p / o),
            _checks.result((h * p + p + 1) / 2))


@dataclass(frozen=True)
class DecodeStep:
    """A step of one replica: per-stage times, hops, and what users and devices see.

    ``tpot`` is the time per output token of every sequence in the batch;
    ``tokens_per_s`` the replica's output rate; ``prefill_tokens`` the
    prompt tokens each step computes (0 without a prompt) and
    ``prefill_share`` the share of the step they cost; ``tokens_per_step``
    what the busiest microbatch asks of the token budget; ``bound`` names
    the side of the roofline that sets most of the slowest stage's time.
    """

    stage_times: tuple
    hop_time: Any
    microbatches: Any
    tpot: Any
    tokens_per_s: Any
    bound: Any
    prefill_tokens: Any
    prefill_share: Any
    tokens_per_step: Any


def _loop(times: list, hop: Any, m: Any) -> np.ndarray:
    stacked = np.stack(np.broadcast_arrays(*(np.asarray(t, dtype=float) for t in times)))
    return np.maximum(stacked.sum(axis=0) + hop, m * stacked.max(axis=0)), stacked


def decode_step(config: ModelConfig, cluster: Cluster, layout: Layout, batch: Number, context: Number,
                prompt_tokens: Number | None = None, output_tokens: Number | None = None,
                prefix_hit_rate: Number = 0.0, engine: Engine | None = None, **options: Any) -> DecodeStep:
    """One step of one replica carrying ``batch`` sequences whose caches hold ``context`` tokens on average.

    With ``prompt_tokens`` and ``output_tokens`` the step also carries the
    steady-state prefill of :func:`steady_prefill` (``prefix_hit_rate`` of
    each prompt found in the prefix cache); without them, decode alone.
    ``options`` are :class:`~lib.serving.engine.Engine` fields:
    ``weight_format``, ``kv_format``, ``allreduce``, ``cuda_graphs``, the
    efficiencies and fixed costs. The batch is cut into ``m = min(pp, batch)``
    microbatches; a stage's time is that of its busiest device for one
    microbatch. Broadcasts over ``batch``, ``context`` and the lengths.

    >>> from lib.transformer import PRESETS
    >>> from lib.serving.layout import Cluster, Layout
    >>> llama = PRESETS["llama-3-8b"]
    >>> alone = decode_step(llama, Cluster("h100-sxm"), Layout(), batch=64, context=1152)
    >>> loaded = decode_step(llama, Cluster("h100-sxm"), Layout(), 64, 1152, prompt_tokens=1024, output_tokens=256)
    >>> round(float(loaded.tpot / alone.tpot), 2), round(float(loaded.prefill_share), 2)
    (1.12, 0.11)
    """
    check_layout(config, layout)
    eng = configure(cluster.device, engine, **options)
    batch_ = _checks.positive("batch", batch)
    if (prompt_tokens is None) != (output_tokens is None):
        raise ValueError("prompt_tokens and output_tokens must be given together (steady state), or neither")
    m = np.minimum(layout.pp, np.ceil(batch_))
    micro = np.ceil(batch_ / m)
    if prompt_tokens is None:
        _checks.nonnegative("prefix_hit_rate", prefix_hit_rate)
        decode, prefill, prefill_context = micro, np.zeros_like(micro), np.zeros_like(micro)
    else:
        decode, prefill, prefill_context = steady_prefill(micro, prompt_tokens, output_tokens, prefix_hit_rate)
    hop = np.asarray(hop_time(cluster, layout, (np.asarray(decode) + prefill) * config.hidden * ACTIVATION_BYTES))
    works = [pass_work(config, cluster, layout, s, eng, decode, context, prefill, prefill_context, sampled=micro)
             for s in range(layout.pp)]
    tpot, stacked = _loop([w.time for w in works], hop, m)
    if prompt_tokens is None:
        share = np.zeros_like(tpot)
    else:
        alone = [pass_work(config, cluster, layout, s, eng, decode, context, sampled=micro).time
                 for s in range(layout.pp)]
        share = 1 - _loop(alone, np.asarray(hop_time(cluster, layout, np.asarray(decode) * config.hidden
                                                      * ACTIVATION_BYTES)), m)[0] / tpot
    slowest = works[int(np.argmax([np.max(t) for t in stacked]))]
    bound = np.where(2 * np.asarray(slowest.compute_bound_time) > np.asarray(slowest.time) - slowest.fixed_time
                     - slowest.communication_time, "compute", "memory")
    return DecodeStep(
        stage_times=tuple(_checks.result(t) for t in stacked),
        hop_time=_checks.result(hop),
        microbatches=_checks.result(m),
        tpot=_checks.result(tpot),
        tokens_per_s=_checks.result(batch_ / tpot),
        bound=str(bound) if bound.ndim == 0 else bound,
        prefill_tokens=_checks.result(m * np.asarray(prefill)),
        prefill_share=_checks.result(share),
        tokens_per_step=_checks.result(np.asarray(decode) + prefill),
    )


def prefill_time(config: ModelConfig, cluster: Cluster, layout: Layout, prompt_tokens: Number,
                 prefix_hit_rate: Number = 0.0, engine: Engine | None = None, **options: Any) -> float | np.ndarray:
    """Time to first token for one prompt on an idle replica, chunked by the engine's token budget.

    The ``(1 - h) P`` tokens not found in the prefix cache are computed in
    chunks of at most ``max_num_batched_tokens``, each one engine step. The
    chunks flow through the pipeline one behind the other, so with ``n``
    chunks it takes ``n x max(stage) + (sum(stage) - max(stage))`` plus the
    hops, and the first token is sampled after the last chunk.

    >>> from lib.transformer import PRESETS
    >>> from lib.serving.layout import Cluster, Layout
    >>> from lib.units import ms
    >>> llama = PRESETS["llama-3-70b"]
    >>> [round(prefill_time(llama, Cluster("h100-sxm"), Layout(tp=k), 2048) / ms) for k in (2, 8)]
    [217, 81]
    """
    check_layout(config, layout)
    eng = configure(cluster.device, engine, **options)
    p = _checks.count("prompt_tokens", prompt_tokens, minimum=1)
    h = _checks.nonnegative("prefix_hit_rate", prefix_hit_rate)
    if (h >= 1).any():
        raise ValueError(f"prefix_hit_rate must be in [0, 1), got {prefix_hit_rate!r}")
    computed = np.maximum(1.0, np.ceil((1 - h) * p))
    chunks = np.ceil(computed / eng.max_num_batched_tokens)
    chunk = computed / chunks
    context = (h * p + p + 1) / 2
    stages = [np.asarray(pass_work(config, cluster, layout, s, eng, prefill=chunk, prefill_context=context).time)
              for s in range(layout.pp)]
    last = layout.pp - 1
    sample = (np.asarray(pass_work(config, cluster, layout, last, eng, sampled=1.0).head_time))
    stacked = np.stack(np.broadcast_arrays(*stages))
    total = chunks * stacked.max(axis=0) + stacked.sum(axis=0) - stacked.max(axis=0) + sample
    return _checks.result(total + np.asarray(hop_time(cluster, layout, chunk * config.hidden * ACTIVATION_BYTES)))


def compute_bound_batch(config: ModelConfig, device: object, tp: int = 1, engine: Engine | None = None,
                        **options: Any) -> float | np.ndarray:
    """The batch at which a decode step's linear layers take as long to compute as to read: their ridge.

    The linear layers read their ``W = P_w b`` bytes once per step and do
    ``2 P_w`` FLOPs per sequence; with the achieved bandwidth ``BW`` and the
    format's achieved peak ``F`` they turn compute-bound at

        B_ridge = (F / BW) x b / 2

    whatever the context: attention, a separate kernel, reads each
    sequence's cache and never turns compute-bound in decode (it does about
    ``4 heads / kv_heads`` FLOPs per cached byte). FP8 halves ``b`` and
    doubles ``F``, so the ridge stays; W8A16 halves ``b`` at the 16-bit
    peak and halves the ridge. Dense models only (a mixture of experts
    reads more experts as the batch grows).

    >>> from lib.transformer import PRESETS
    >>> llama = PRESETS["llama-3-70b"]
    >>> [round(compute_bound_batch(llama, "h100-sxm", weight_format=f)) for f in ("bf16", "fp8", "int8")]
    [246, 246, 125]
    """
    if config.experts > 1:
        raise ValueError(f"config must be a dense model (a mixture of experts reads more experts as the batch "
                         f"grows; see expected_experts_touched), got {config.name} with {config.experts} experts")
    cluster, layout = Cluster(device), Layout(tp=tp)
    check_layout(config, layout)
    eng = configure(cluster.device, engine, **options)
    one = pass_work(config, cluster, layout, 0, eng, decode=1.0).linear
    return float(one.memory_time / one.compute_time)
