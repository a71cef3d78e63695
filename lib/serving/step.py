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
from lib.serving.layout import Cluster, Layout, check_layout, stage_layers
from lib.serving.operators import ACTIVATION_BYTES, StageWork, pass_work
from lib.transformer import ModelConfig

__all__ = [
    "stage_work",
    "hop_time",
    "DecodeStep",
    "decode_step",
    "prefill_time",
    "compute_bound_batch",
    "steady_prefill",
    "prefill_lumps",
    "loop_time",
]

Number = Any


def stage_work(
    config: ModelConfig,
    cluster: Cluster,
    layout: Layout,
    stage: int,
    tokens: Number,
    context: Number,
    prefill: bool = False,
    engine: Engine | None = None,
    **options: Any,
) -> StageWork:
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
    # Replicas placed alike cross the same links: price each distinct sequence of links once.
    patterns = dict.fromkeys(tuple(_hop_links(cluster, layout, r)) for r in range(layout.dp))
    per_pattern = [
        sum((np.asarray(send_time(hop_bytes, link)) for link in links), np.zeros_like(hop_bytes)) for links in patterns
    ]
    return _checks.result(np.max(np.stack(per_pattern), axis=0))


def _hop_links(cluster: Cluster, layout: Layout, replica: int) -> list:
    """The link each pipeline boundary of one replica crosses: inside a server or between two."""
    first = replica * layout.tp * layout.pp
    links = []
    for boundary in range(layout.pp - 1):
        sender = first + (boundary + 1) * layout.tp - 1
        receiver = first + (boundary + 1) * layout.tp
        links.append(cluster.link if cluster.node(sender) == cluster.node(receiver) else cluster.inter_link)
    return links


def steady_prefill(
    batch: Number, prompt_tokens: Number, output_tokens: Number, prefix_hit_rate: Number = 0.0
) -> tuple[Any, Any, Any]:
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
    return (_checks.result(b * (o - 1) / o), _checks.result(b * (1 - h) * p / o), _checks.result((h * p + p + 1) / 2))


@dataclass(frozen=True)
class DecodeStep:
    """A step of one replica: per-stage times, hops, and what users and devices see.

    ``tpot`` is the time per output token of every sequence in the batch;
    ``tokens_per_s`` the replica's output rate; ``prefill_tokens`` the
    prompt tokens each step computes (0 without a prompt) and
    ``prefill_share`` the share of the step they cost; ``tokens_per_step``
    what the busiest microbatch asks of the token budget; ``bound`` names
    the side of the roofline that sets most of the slowest stage's time;
    ``stage_works`` holds each stage's :class:`~lib.serving.operators.StageWork`.
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
    stage_works: tuple = ()


def _loop(times: list, hop: Any, m: Any) -> np.ndarray:
    stacked = np.stack(np.broadcast_arrays(*(np.asarray(t, dtype=float) for t in times)))
    return np.maximum(stacked.sum(axis=0) + hop, m * stacked.max(axis=0)), stacked


def _pass(
    config: ModelConfig,
    cluster: Cluster,
    layout: Layout,
    engine: Engine,
    m: Any,
    decode: Any,
    context: Any,
    prefill: Any,
    prefill_context: Any,
    sampled: Any,
    prompts: Any = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list]:
    """One trip round the pipeline with every microbatch carrying the same work: (tpot, stages, hops, works)."""
    hop = np.asarray(hop_time(cluster, layout, (np.asarray(decode) + prefill) * config.hidden * ACTIVATION_BYTES))
    works = _stage_works(
        config, cluster, layout, engine, decode, context, prefill, prefill_context, sampled, prompts=prompts
    )
    tpot, stacked = _loop([w.time for w in works], hop, m)
    return tpot, stacked, hop, works


def _stage_works(
    config: ModelConfig, cluster: Cluster, layout: Layout, engine: Engine, *work: Any, prompts: Any = None
) -> list:
    """The work of every stage; stages with the same layers (and not the last, which holds the head) share one.
    ``prompts`` as in :func:`~lib.serving.operators.pass_work`."""
    counts = stage_layers(config.layers, layout.pp)
    cache: dict = {}
    works = []
    for s, layers in enumerate(counts):
        key = (layers, s == 0, s == len(counts) - 1)
        if key not in cache:
            cache[key] = pass_work(config, cluster, layout, s, engine, *work, prompts=prompts)
        works.append(cache[key])
    return works


#: Prompts per step up to which the number of prompts a step computes is treated as a Poisson count.
_LUMPS = 16


def prefill_lumps(decode: Any, prompts_per_step: Any, new_tokens: Any, budget: int) -> tuple[np.ndarray, np.ndarray]:
    """The prompt tokens a step computes, as a distribution: ``(tokens, weights)``, support on the first axis.

    Prompts come whole, not smeared over steps. With ``R = budget - decode``
    tokens of room and ``n`` new tokens per prompt: a prompt of ``n >= R``
    fills whole steps, so a share ``rho = mu n / R`` of the steps carries
    ``R`` prompt tokens and the rest none; shorter prompts arrive as a
    Poisson count ``K`` of mean ``mu`` per step and a step computes
    ``min(K n, R)``; what a full step cuts off runs in the next steps (as
    vLLM V1's scheduler carries a cut prompt's remaining chunk), so weight
    moves from the steps below ``R`` to full ones until the mean is the
    demand ``min(mu n, R)``. The counts from :data:`_LUMPS` up are one lump
    at their conditional mean ``E[K | K >= L]``, so the mean count stays exact.

    >>> tokens, weights = prefill_lumps(60.0, 0.25, 1024, 8192)
    >>> [round(float(x)) for x in tokens[:3]], [round(float(w), 3) for w in weights[:3]]
    ([0, 1024, 2048], [0.779, 0.195, 0.024])
    >>> tokens, weights = prefill_lumps(60.0, 0.25, 16384, 8192)     # a prompt of two budgets
    >>> float(tokens[0]), float(tokens[-1]), round(float(weights[-1]), 3)
    (0.0, 8132.0, 0.504)
    """
    d = np.asarray(decode, dtype=float)
    mu = np.asarray(prompts_per_step, dtype=float)
    n = np.asarray(new_tokens, dtype=float)
    room = np.maximum(1.0, budget - d)
    k = np.arange(_LUMPS + 1).reshape((-1,) + (1,) * np.broadcast(d, mu, n).ndim)
    pmf = np.exp(k * np.log(np.maximum(mu, 1e-300)) - mu - np.cumsum(np.log(np.maximum(k, 1)), axis=0))
    pmf[0] = np.exp(-mu)
    pmf[-1] = np.maximum(0.0, 1 - pmf[:-1].sum(axis=0))
    below = np.sum(k[:-1] * pmf[:-1], axis=0)
    tail = np.where(pmf[-1] > 1e-12, (mu - below) / np.maximum(pmf[-1], 1e-300), _LUMPS)
    count = np.where(k == _LUMPS, np.maximum(_LUMPS, tail), k)
    long_ = n >= room
    busy = np.minimum(1.0, mu * n / room)
    two = np.where(k == 0, 1 - busy, np.where(k == _LUMPS, busy, 0.0))
    short = np.minimum(count * n, room)
    full = short >= room
    # What a full step cuts off runs in later steps: weight moves from the steps below the room to full ones
    # until the mean is the demand min(mu n, R), so no prompt token is lost.
    low_mass, full_mass = np.sum(np.where(full, 0.0, pmf), axis=0), np.sum(np.where(full, pmf, 0.0), axis=0)
    gap = room * low_mass - np.sum(np.where(full, 0.0, pmf * short), axis=0)
    keep = np.minimum(1.0, (room - np.minimum(mu * n, room)) / np.maximum(gap, 1e-300))
    keep = np.where((gap > 0) & (full_mass > 1e-12), keep, 1.0)
    spilled = pmf * np.where(full, 1 + (1 - keep) * low_mass / np.maximum(full_mass, 1e-300), keep)
    weights = np.where(long_, two, spilled)
    tokens = np.where(long_, np.where(k == _LUMPS, room, 0.0), short)
    shape = np.broadcast_shapes(tokens.shape, weights.shape)
    return np.broadcast_to(tokens, shape), np.broadcast_to(weights, shape)


def decode_step(
    config: ModelConfig,
    cluster: Cluster,
    layout: Layout,
    batch: Number,
    context: Number,
    prompt_tokens: Number | None = None,
    output_tokens: Number | None = None,
    prefix_hit_rate: Number = 0.0,
    engine: Engine | None = None,
    **options: Any,
) -> DecodeStep:
    """One step of one replica carrying ``batch`` sequences whose caches hold ``context`` tokens on average.

    With ``prompt_tokens`` and ``output_tokens`` the step also carries the
    steady-state prefill of :func:`steady_prefill` (``prefix_hit_rate`` of
    each prompt found in the prefix cache), in lumps of whole prompts
    (:func:`prefill_lumps`): ``tpot`` is the mean step over that mix, a
    step with a prompt taking longer than one without. Without a prompt,
    decode alone. ``options`` are :class:`~lib.serving.engine.Engine`
    fields: ``weight_format``, ``kv_format``, ``allreduce``, ``cuda_graphs``,
    the efficiencies and fixed costs. The batch is cut into
    ``m = min(pp, batch)`` microbatches; a stage's time is that of its
    busiest device for one microbatch. Broadcasts over ``batch``,
    ``context`` and the lengths.

    >>> from lib.transformer import PRESETS
    >>> from lib.serving.layout import Cluster, Layout
    >>> llama = PRESETS["llama-3-8b"]
    >>> alone = decode_step(llama, Cluster("h100-sxm"), Layout(), batch=64, context=1152)
    >>> loaded = decode_step(llama, Cluster("h100-sxm"), Layout(), 64, 1152, prompt_tokens=1024, output_tokens=256)
    >>> round(float(loaded.tpot / alone.tpot), 2), round(float(loaded.prefill_share), 2)
    (1.35, 0.26)
    """
    check_layout(config, layout)
    eng = configure(cluster.device, engine, **options)
    batch_ = _checks.positive("batch", batch)
    if (prompt_tokens is None) != (output_tokens is None):
        raise ValueError("prompt_tokens and output_tokens must be given together (steady state), or neither")
    m = np.minimum(layout.pp, np.ceil(batch_))
    micro = batch_ / m  # an average slice: steady states hold fractional batches
    if prompt_tokens is None:
        _checks.nonnegative("prefix_hit_rate", prefix_hit_rate)
        tpot, stacked, hop, works = _pass(config, cluster, layout, eng, m, micro, context, 0.0, 0.0, micro)
        share, prefill_mean, demand = np.zeros_like(tpot), np.zeros_like(tpot), micro
    else:
        decode, mean, prefill_context = steady_prefill(micro, prompt_tokens, output_tokens, prefix_hit_rate)
        per_prompt = np.maximum(1.0, np.ceil((1 - np.asarray(prefix_hit_rate)) * np.asarray(prompt_tokens)))
        lumps, weights = prefill_lumps(
            decode, micro / np.asarray(output_tokens), per_prompt, eng.replica_limits(layout)[1]
        )
        # Every lump's pass, and the pass without a prompt, in one evaluation along a new first axis (a lump of
        # no weight priced at no prompt tokens).
        tpot = np.zeros(np.broadcast_shapes(np.shape(micro), np.shape(context), lumps.shape[1:]))
        priced = np.where(weights > 0, lumps, 0.0).reshape(
            (len(lumps),) + (1,) * (tpot.ndim + 1 - lumps.ndim) + lumps.shape[1:]
        )
        tokens = np.concatenate([priced, np.zeros((1,) + priced.shape[1:])])
        times = _pass(
            config, cluster, layout, eng, m, decode, context, tokens, prefill_context, micro, tokens / per_prompt
        )[0]
        for lump_time, weight in zip(times[:-1], weights):
            tpot = tpot + weight * lump_time
        mean_tokens = np.sum(lumps * weights, axis=0)
        _, stacked, hop, works = _pass(
            config,
            cluster,
            layout,
            eng,
            m,
            decode,
            context,
            mean_tokens,
            prefill_context,
            micro,
            mean_tokens / per_prompt,
        )
        share = 1 - times[-1] / tpot
        prefill_mean, demand = mean_tokens, np.asarray(decode) + mean
    slowest = works[int(np.argmax([np.max(t) for t in stacked]))]
    bound = np.where(
        2 * np.asarray(slowest.compute_bound_time)
        > np.asarray(slowest.time) - slowest.fixed_time - slowest.communication_time,
        "compute",
        "memory",
    )
    return DecodeStep(
        stage_times=tuple(_checks.result(t) for t in stacked),
        hop_time=_checks.result(hop),
        microbatches=_checks.result(m),
        tpot=_checks.result(tpot),
        tokens_per_s=_checks.result(batch_ / tpot),
        bound=str(bound) if bound.ndim == 0 else bound,
        prefill_tokens=_checks.result(m * np.asarray(prefill_mean)),
        prefill_share=_checks.result(share),
        tokens_per_step=_checks.result(demand),
        stage_works=tuple(works),
    )


def loop_time(
    config: ModelConfig,
    cluster: Cluster,
    layout: Layout,
    decode: Number,
    context: Number,
    prefill: Number = 0.0,
    prefill_context: Number = 0.0,
    sampled: Number | None = None,
    prompts: Number | None = None,
    engine: Engine | None = None,
    **options: Any,
) -> float | np.ndarray:
    """The time of one step (one trip round the pipeline) in which each microbatch decodes ``decode``
    sequences and computes ``prefill`` prompt tokens: one point of the mixture :func:`decode_step` averages.
    ``sampled`` positions take logits from the output head (by default one per decoding sequence);
    ``prompts`` says how many whole prompts the prefill tokens belong to (see
    :func:`~lib.serving.operators.pass_work`).

    >>> from lib.transformer import PRESETS
    >>> from lib.serving.layout import Cluster, Layout
    >>> from lib.units import ms
    >>> llama = PRESETS["llama-3-8b"]
    >>> [round(loop_time(llama, Cluster("h100-sxm"), Layout(), 64, 1152, p, 512.5) / ms, 1) for p in (0, 1024)]
    [11.7, 27.6]
    """
    check_layout(config, layout)
    eng = configure(cluster.device, engine, **options)
    d = _checks.nonnegative("decode", decode)
    m = np.minimum(layout.pp, np.maximum(1.0, np.ceil(d)))
    heads = np.maximum(d, 1.0) if sampled is None else _checks.nonnegative("sampled", sampled)
    return _checks.result(
        _pass(config, cluster, layout, eng, m, d, context, prefill, prefill_context, heads, prompts)[0]
    )


def prefill_time(
    config: ModelConfig,
    cluster: Cluster,
    layout: Layout,
    prompt_tokens: Number,
    prefix_hit_rate: Number = 0.0,
    engine: Engine | None = None,
    **options: Any,
) -> float | np.ndarray:
    """Time to first token for one prompt on an idle replica, chunked by the engine's token budget.

    The ``(1 - h) P`` tokens not found in the prefix cache are computed in
    chunks of at most ``max_num_batched_tokens``, each one engine step. The
    chunks flow through the pipeline one behind the other, so with ``n``
    chunks it takes ``n x max(stage) + (sum(stage) - max(stage))`` plus the
    hops, and the first token is sampled after the last chunk. With
    attention run data-parallel the prompt is one rank's: that rank
    computes its attention alone.

    >>> from lib.transformer import PRESETS
    >>> from lib.serving.layout import Cluster, Layout
    >>> from lib.units import ms
    >>> llama = PRESETS["llama-3-70b"]
    >>> [round(prefill_time(llama, Cluster("h100-sxm"), Layout(tp=k), 2048) / ms) for k in (2, 8)]
    [214, 82]
    """
    check_layout(config, layout)
    eng = configure(cluster.device, engine, **options)
    p = _checks.count("prompt_tokens", prompt_tokens, minimum=1)
    h = _checks.nonnegative("prefix_hit_rate", prefix_hit_rate)
    if (h >= 1).any():
        raise ValueError(f"prefix_hit_rate must be in [0, 1), got {prefix_hit_rate!r}")
    computed = np.maximum(1.0, np.ceil((1 - h) * p))
    chunks = np.ceil(computed / eng.max_num_batched_tokens)  # one prompt runs on one rank
    chunk = computed / chunks
    context = (h * p + p + 1) / 2
    works = _stage_works(config, cluster, layout, eng, 0.0, 0.0, chunk, context, 0.0, prompts=1.0)
    stages = [np.asarray(w.time) for w in works]
    last = layout.pp - 1
    sample = np.asarray(pass_work(config, cluster, layout, last, eng, sampled=1.0).head_time)
    stacked = np.stack(np.broadcast_arrays(*stages))
    total = chunks * stacked.max(axis=0) + stacked.sum(axis=0) - stacked.max(axis=0) + sample
    return _checks.result(total + np.asarray(hop_time(cluster, layout, chunk * config.hidden * ACTIVATION_BYTES)))


def compute_bound_batch(
    config: ModelConfig, device: object, tp: int = 1, engine: Engine | None = None, **options: Any
) -> float | np.ndarray:
    """The batch at which a decode step's linear layers take as long to compute as to read: their ridge.

    The linear layers read their ``W = P_w b`` bytes once per step and do
    ``2 P_w`` FLOPs per sequence; with the achieved bandwidth ``BW`` and an
    achieved throughput ``F`` they turn compute-bound at

        B_ridge = (F / BW) x b / 2

    whatever the context: attention, a separate kernel, reads each
    sequence's cache and never turns compute-bound in decode (it does about
    ``4 heads / kv_heads`` FLOPs per cached byte). ``F`` is measured per
    shape (:mod:`lib.serving.matmul`) and grows with the batch, so the ridge
    is found where the two times cross. At one efficiency for every shape
    (``compute_efficiency`` set) FP8 would halve ``b`` and double ``F`` and
    leave the ridge where it was; DeepGEMM's FP8 kernels reach 10-17 % of
    their peak on 64 rows (slower than their weight reads at
    ``memory_efficiency``), XLA's BF16 ones 42 % on 256, so FP8 turns
    compute-bound at fewer sequences. W8A16
    halves ``b`` at the 16-bit throughput and halves the ridge. Dense models
    only (a mixture of experts reads more experts as the batch grows).

    >>> from lib.transformer import PRESETS
    >>> llama = PRESETS["llama-3-70b"]
    >>> [round(compute_bound_batch(llama, "h100-sxm", weight_format=f)) for f in ("bf16", "fp8", "int8")]
    [137, 56, 69]
    >>> [round(compute_bound_batch(llama, "h100-sxm", weight_format=f, compute_efficiency=0.75)) for f in ("bf16", "fp8")]
    [246, 246]
    """
    if config.experts > 1:
        raise ValueError(
            f"config must be a dense model (a mixture of experts reads more experts as the batch "
            f"grows; see expected_experts_touched), got {config.name} with {config.experts} experts"
        )
    cluster, layout = Cluster(device), Layout(tp=tp)
    check_layout(config, layout)
    eng = configure(cluster.device, engine, **options)
    batches = np.geomspace(1.0, float(1 << 20), 1201)
    linear = pass_work(config, cluster, layout, 0, eng, decode=batches).linear
    gap = np.maximum.accumulate(np.log(linear.compute_time / linear.memory_time))
    if gap[-1] < 0:
        raise ValueError(f"the linear layers of {config.name} stay memory-bound up to {batches[-1]:.0f} sequences")
    return float(np.exp(np.interp(0.0, gap, np.log(batches))))
