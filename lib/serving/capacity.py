"""Capacity under latency targets: the highest request rate a layout sustains while meeting TTFT and TPOT.

Introduced in chapter 9 (choosing a split). A deployment is asked for a
request rate, not a batch size. At a rate of ``lambda`` requests per second
a replica settles at the concurrency ``B`` where Little's law closes: each
request holds a slot for ``O`` steps of ``t(B)`` seconds, so

    B = lambda O t(B)                                                   (1)

with ``t(B)`` the steady-state step of :func:`lib.serving.decode_step`, the
prefill of ``lambda`` prompts per second included. Every running sequence
gets a token per step: **TPOT** is ``t(B)``. The number of requests in
service fluctuates like a Poisson count (an M/G/infinity system), so the
TPOT at quantile ``q`` is taken as ``t(B + z_q sqrt(B))``, with ``z_q`` the
normal quantile: an upper bound, since each request averages its ``O``
steps.

**TTFT** is set by the token budget. Decodes take ``d = B (O - 1) / O``
tokens of each step's ``max_num_batched_tokens``; prompt chunks share the
``R`` tokens left, first come, first served. A step that computes prompt
tokens takes ``t_busy = t(d, min(R, n))`` (:func:`lib.serving.loop_time`),
one that does not ``t_idle``, and the mean step ``t`` mixes the two
(:func:`lib.serving.step.prefill_lumps`). A prompt of ``n = (1 - h) P`` new
tokens needs ``S = (n / R) t_busy`` of the prefill "server", and the
prompts form an M/G/1 queue of utilisation ``rho = lambda E[S]``, whose
mean wait is Pollaczek-Khinchine's

    W = lambda E[S^2] / (2 (1 - rho))                                  (2)

with an exponential tail, ``P(wait > x) = rho exp(-rho x / W)``. Work is
done in whole steps: a new request first waits out the step in progress
(the renewal residual ``E[t^2] / (2 E[t])`` of the idle/busy mix), and its
first token comes at the end of the step that computes its last chunk (a
whole busy step at least, half a step of rounding on average after a
longer prompt), so ``TTFT = residual + W + t_busy max(1, n / R + 1/2)``.
Closed forms only: ``tests/unit/lib/serving/test_capacity.py`` holds them against :func:`lib.queueing.simulate_chunked`, which runs vLLM V1's
scheduler rules step by step.

**Capacity** is the largest ``lambda`` at which (1) has a solution within
the replica's limits (``max_num_seqs``, the KV cache at the mean context,
the token budget), ``rho < 1``, and every target holds. ``binding`` names
what stops it, one of :data:`BINDINGS`.

>>> from lib.transformer import PRESETS
>>> from lib.units import ms
>>> cap = capacity(PRESETS["llama-3-8b"], "h100-sxm", Layout(), 1024, 256, tpot_limit=20 * ms)
>>> round(cap.rate, 1), cap.binding, round(cap.load.tpot_quantile / ms, 1)
(17.7, 'TPOT target', 20.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lib import _checks
from lib.hardware import Device, Link
from lib.serving.engine import Engine, configure
from lib.serving.layout import Cluster, Layout, check_layout
from lib.serving.memory import check_context, kv_token_capacity
from lib.serving.step import DecodeStep, decode_step, loop_time
from lib.transformer import ModelConfig

__all__ = ["BINDINGS", "Workload", "Load", "Capacity", "capacity", "replica_load", "percentile_fraction"]

#: What can limit a layout's capacity, in the words :attr:`Capacity.binding` uses (see :func:`capacity`).
BINDINGS = (
    "weights memory",
    "KV memory",
    "sequences per replica",
    "prefill compute",
    "TTFT target",
    "TPOT target",
    "decode bandwidth",
    "communication",
)

_GRID = 48  # batch sizes at which the step time is priced, between 1 and the replica's limit
_DRAWS = 16  # stratified draws of each random part of a TTFT
_TOGETHER = 8  # prompts a busy step is priced with at most (the one waited for and up to 7 others)
_FIXED_POINT = 16  # iterations of the mean step's fixed point in _ttft
_BISECTIONS = 26  # halvings of the rate interval in capacity() at most
_PRECISION = 1e-5  # capacity() stops halving once the interval is this share of its upper end


@dataclass(frozen=True)
class Workload:
    """What the requests ask for: prompt and output lengths (one each, or samples of a distribution).

    The steady state uses the means; the prefill queue the second moment of
    the prompt's work; a running sequence holds, on average over its
    tokens, the context ``E[O (P + O / 2)] / E[O]``.

    >>> w = Workload([512, 1536], 256)
    >>> w.prompt, w.output, w.context
    (1024.0, 256.0, 1152.0)
    """

    prompt_tokens: Any
    output_tokens: Any
    prefix_hit_rate: float = 0.0
    prompts: np.ndarray = field(init=False, repr=False)
    outputs: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        prompts = np.atleast_1d(_checks.count("prompt_tokens", self.prompt_tokens, minimum=1)).astype(float)
        outputs = np.atleast_1d(_checks.count("output_tokens", self.output_tokens, minimum=1)).astype(float)
        if (
            prompts.ndim > 1
            or outputs.ndim > 1
            or (prompts.size > 1 and outputs.size > 1 and prompts.size != outputs.size)
        ):
            raise ValueError(
                f"prompt_tokens and output_tokens must be counts or samples of one length, got "
                f"shapes {prompts.shape} and {outputs.shape}"
            )
        hit = _checks.scalar("prefix_hit_rate", self.prefix_hit_rate, _checks.nonnegative)
        if hit >= 1:
            raise ValueError(f"prefix_hit_rate must be in [0, 1), got {self.prefix_hit_rate!r}")
        prompts, outputs = np.broadcast_arrays(prompts, outputs)
        object.__setattr__(self, "prefix_hit_rate", hit)
        object.__setattr__(self, "prompts", prompts)
        object.__setattr__(self, "outputs", outputs)

    @property
    def prompt(self) -> float:
        """Mean prompt length."""
        return float(self.prompts.mean())

    @property
    def output(self) -> float:
        """Mean output length."""
        return float(self.outputs.mean())

    @property
    def context(self) -> float:
        """The context a decode step reads on average, weighted by the steps each request decodes."""
        return float(np.mean(self.outputs * (self.prompts + self.outputs / 2)) / self.outputs.mean())

    @property
    def new_tokens(self) -> np.ndarray:
        """Prompt tokens each request needs computed: those not found in the prefix cache."""
        return np.maximum(1.0, np.ceil((1 - self.prefix_hit_rate) * self.prompts))


@dataclass(frozen=True)
class Load:
    """One replica at one request rate: the concurrency it settles at and what users see (seconds).

    ``tpot`` and ``ttft`` are means, ``*_quantile`` at ``quantile``;
    ``prefill_utilisation`` is the share of the token budget's room that
    prompt chunks use (``rho``); ``step`` is the steady-state step.
    """

    rate: float
    batch: float
    tpot: float
    tpot_quantile: float
    ttft: float
    ttft_quantile: float
    quantile: float
    prefill_utilisation: float
    step: DecodeStep | None


@dataclass(frozen=True)
class Capacity:
    """The highest request rate a layout carries within its targets, and what binds it.

    ``rate`` counts the whole layout (all ``dp`` replicas), ``rate_per_device``
    divides it by ``tp * pp * dp``; ``load`` is one replica at capacity
    (``None`` when nothing fits); ``max_batch`` the replica's concurrency
    limit and ``limit`` which of its three caps that is.
    """

    rate: float
    rate_per_device: float
    binding: str
    load: Load | None
    max_batch: float
    limit: str


class _Replica:
    """One replica's step time as a function of concurrency, priced once on a grid and interpolated."""

    def __init__(
        self,
        config: ModelConfig,
        cluster: Cluster,
        layout: Layout,
        workload: Workload,
        engine: Engine,
        prefill: bool = True,
    ) -> None:
        self.config, self.cluster, self.layout, self.workload, self.engine = config, cluster, layout, workload, engine
        self.prefill = prefill
        o, new = workload.output, float(workload.new_tokens.mean())
        per_request = (o - 1 + new) / o if prefill else 1.0  # tokens each running sequence asks of a step
        kv_tokens = kv_token_capacity(config, cluster.device, layout, engine)
        sequences, budget = engine.replica_limits(layout)
        caps = {
            "KV memory": kv_tokens / workload.context,
            "sequences per replica": float(sequences),
            "token budget": layout.pp * budget / per_request,
        }
        self.limit = min(caps, key=caps.get)
        self.max_batch = caps[self.limit]
        self.fits = kv_tokens > 0
        top = max(1.0, math.floor(self.max_batch))
        self.grid = np.unique(np.concatenate([[1.0], np.round(np.geomspace(1.0, top, _GRID)), [top]]))
        self.times = np.asarray(self.step_at(self.grid).tpot, dtype=float)
        if not prefill:
            return
        micro = np.ceil(self.grid / np.minimum(layout.pp, np.ceil(self.grid)))
        decodes = micro * (o - 1) / o
        self.room = np.maximum(1.0, budget - decodes)
        attended = (workload.prefix_hit_rate * workload.prompt + workload.prompt + 1) / 2
        self.idle = np.asarray(loop_time(config, cluster, layout, decodes, workload.context, engine=engine))
        # A busy step computing k prompts at once (those that arrived while the step before ran), k = 1..K.
        self.together = np.arange(1, _TOGETHER + 1)
        self.busy_k = np.stack(
            [
                np.asarray(
                    loop_time(
                        config,
                        cluster,
                        layout,
                        decodes,
                        workload.context,
                        np.minimum(self.room, k * new),
                        attended,
                        prompts=float(k),
                        engine=engine,
                    )
                )
                for k in self.together
            ],
            axis=-1,
        )
        self.busy = self.busy_k[:, 0]

    def step_at(self, batch: Any) -> DecodeStep:
        """The steady-state step at concurrency ``batch``: with the prefill of the prompts that replace finished
        requests, or without it in a decode pool (``prefill`` False)."""
        w = self.workload
        lengths = (int(round(w.prompt)), int(round(w.output))) if self.prefill else (None, None)
        return decode_step(
            self.config, self.cluster, self.layout, batch, w.context, *lengths, w.prefix_hit_rate, engine=self.engine
        )

    def step_time(self, batch: Any) -> np.ndarray:
        """The step time at concurrency ``batch`` (linear between the priced batches, flat below one)."""
        return np.interp(batch, self.grid, self.times)

    def highest_rate(self) -> float:
        """Requests per second at the concurrency limit: the rate the replica can never quite reach."""
        top = max(1.0, math.floor(self.max_batch))
        return top / (self.workload.output * float(self.step_time(top)))

    def states(self, rate: float) -> tuple[np.ndarray, np.ndarray, float] | None:
        """The stationary distribution of requests in the replica: ``(running, weights, queued)``.

        Every running sequence gets one token per step, so the batch is a
        processor-sharing server whose speed depends on how many share it: in
        state ``B`` requests leave at ``B / (O t(B))``. The birth-death chain
        has the product-form stationary law ``pi(B) ~ prod_j lambda O t(j) / j``
        (insensitive to the length distribution, as processor sharing is).
        Past the limit ``B_max`` requests queue for a slot and leave at
        ``B_max / (O t(B_max))``; ``queued`` is the mean queue. ``None`` when
        that queue is unstable.
        """
        o = self.workload.output
        top = int(max(1, math.floor(self.max_batch)))
        running = np.arange(0, top + 1, dtype=float)
        log_ratio = np.log(rate * o) + np.log(self.step_time(np.maximum(running[1:], 1.0))) - np.log(running[1:])
        log_pi = np.concatenate([[0.0], np.cumsum(log_ratio)])
        ratio = rate * o * float(self.step_time(top)) / top  # of the queue past the limit
        if ratio >= 1:
            return None
        weights = np.exp(log_pi - log_pi.max())
        tail = weights[-1] * ratio / (1 - ratio)  # mass of the queueing states
        queued = weights[-1] * ratio / (1 - ratio) ** 2  # their mean queue length, unnormalised
        total = weights.sum() + tail
        weights = weights / total
        weights[-1] += tail / total
        keep = weights > 1e-9 * weights.max()
        return running[keep], weights[keep] / weights[keep].sum(), queued / total

    def load(self, rate: float, quantile: float, ttft: bool = True) -> Load | None:
        """The replica at ``rate``: concurrency, TPOT and TTFT (means and quantiles), prefill utilisation.

        With ``ttft=False`` the TTFT fields are NaN (not computed: no target asks for them).
        """
        chain = self.states(rate)
        if chain is None:
            return None
        running, weights, queued = chain
        w = self.workload
        t = self.step_time(np.maximum(running, 1.0))
        batch = float(np.sum(weights * running))
        tokens = weights * np.maximum(running, 1e-30) / t  # tokens per second in each state
        tpot = float(np.sum(tokens * t) / tokens.sum())
        tpot_q = _weighted_quantile(t, tokens, quantile)
        if not self.prefill:  # a decode pool: the first token is not its
            return Load(rate, batch, tpot, tpot_q, math.nan, math.nan, quantile, 0.0, None)
        room = np.interp(running, self.grid, self.room)
        idle, busy = (np.interp(running, self.grid, x) for x in (self.idle, self.busy))
        busy_k = np.stack([np.interp(running, self.grid, self.busy_k[:, k]) for k in range(_TOGETHER)], axis=-1)
        service = busy[:, None] * w.new_tokens[None, :] / room[:, None]  # the prompt's share of busy steps
        rho = float(np.sum(weights * rate * service.mean(axis=1)))
        if rho >= 1:
            return Load(rate, batch, tpot, tpot_q, math.inf, math.inf, quantile, rho, None)
        if not ttft:
            return Load(rate, batch, tpot, tpot_q, math.nan, math.nan, quantile, rho, None)
        ttft, draws, chance = _ttft(rate, rho, idle, busy_k, room, service, w.new_tokens, weights)
        slot = queued / rate  # the wait for a free slot (Little)
        return Load(
            rate,
            batch,
            tpot,
            tpot_q,
            ttft + slot,
            _weighted_quantile(draws, chance, quantile) + slot,
            quantile,
            rho,
            None,
        )


def _poisson(mean: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Poisson probabilities of ``counts`` (last axis) at ``mean``, the last count taking the tail."""
    k = counts.astype(float)
    m = np.maximum(np.asarray(mean, dtype=float)[..., None], 1e-300)
    pmf = np.exp(k * np.log(m) - m - np.cumsum(np.log(np.maximum(k, 1))))
    pmf[..., -1] = np.maximum(0.0, 1 - pmf[..., :-1].sum(axis=-1))
    return pmf


def _ttft(
    rate: float,
    rho: float,
    idle: np.ndarray,
    busy_k: np.ndarray,
    room: np.ndarray,
    service: np.ndarray,
    new_tokens: np.ndarray,
    weights: np.ndarray,
) -> tuple[float, np.ndarray, np.ndarray]:
    """Mean TTFT and its distribution, ``(mean, draws, weights)``, over the states an arrival sees (PASTA).

    Prompts shorter than the budget's room are served like a gated queue:
    a step computes every prompt that arrived while the step before it ran.
    A step with ``N`` prompts takes ``len(N)`` (``idle`` for none,
    ``busy_k`` for one to :data:`_TOGETHER`), and ``N`` is Poisson with mean
    ``lambda m``, ``m`` the mean step, a fixed point. A new prompt lands in a
    step chosen with probability proportional to its length, waits out the
    rest of it (a uniform share), and is computed in the next step together
    with the Poisson(``lambda len``) others that arrived during it. Prompts
    of at least a whole budget fill steps of their own and queue as an M/G/1
    (Pollaczek-Khinchine, exponential tail), ``service`` each. Stratified
    draws give the quantiles without a random number generator.
    """
    counts = np.arange(_TOGETHER + 1)
    lengths = np.concatenate([idle[:, None], busy_k], axis=1)  # (states, N = 0..K)
    mean = idle.copy()
    for _ in range(_FIXED_POINT):  # m = E[len(N)], N ~ Poisson(lambda m)
        mean = np.sum(_poisson(rate * mean, counts) * lengths, axis=1)
    current = _poisson(rate * mean, counts) * lengths  # length-biased choice of the step in progress
    current = current / current.sum(axis=1, keepdims=True)
    u = (np.arange(_DRAWS) + 0.5) / _DRAWS
    next_step = np.sum(_poisson(rate * lengths, counts[:-1]) * lengths[:, None, 1:], axis=-1)  # (states, N)
    gated = u[None, None, :] * lengths[:, :, None] + next_step[:, :, None]  # (states, N, u)
    gated_chance = np.broadcast_to(weights[:, None, None] * current[:, :, None] / _DRAWS, gated.shape)
    wait = rate * np.mean(service**2, axis=1) / (2 * (1 - rho))
    queue = np.where(
        u[None, :] < 1 - rho,
        0.0,
        -(wait[:, None] / max(rho, 1e-300)) * np.log(np.maximum((1 - u[None, :]) / max(rho, 1e-300), 1e-300)),
    )
    n = float(new_tokens.mean())
    filled = busy_k[:, :1] * (0.5 + n / room[:, None] + 0.5) + queue  # (states, u)
    filled_chance = np.broadcast_to(weights[:, None] / _DRAWS, filled.shape)
    long_ = n >= room  # (states,)
    draws = np.concatenate([gated[~long_].ravel(), filled[long_].ravel()])
    chance = np.concatenate([gated_chance[~long_].ravel(), filled_chance[long_].ravel()])
    return float(np.sum(draws * chance) / np.sum(chance)), draws, chance


def _weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """The ``q`` quantile of ``values`` drawn with probabilities proportional to ``weights``."""
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(np.asarray(weights, dtype=float)[order])
    index = min(int(np.searchsorted(cumulative, q * cumulative[-1])), len(order) - 1)
    return float(np.asarray(values, dtype=float)[order][index])


def _meets(load: Load | None, ttft_limit: float | None, tpot_limit: float | None) -> bool:
    if load is None or load.ttft == math.inf:
        return False
    return (ttft_limit is None or load.ttft_quantile <= ttft_limit) and (
        tpot_limit is None or load.tpot_quantile <= tpot_limit
    )


def _binding(replica: _Replica, beyond: Load | None, ttft_limit: float | None) -> str:
    """The word of :data:`BINDINGS` for what fails just above the capacity (``beyond``: the load past it)."""
    if beyond is None:  # the concurrency limit is reached first
        return {"KV memory": "KV memory", "token budget": "prefill compute"}.get(replica.limit, "sequences per replica")
    if beyond.ttft == math.inf:
        return "prefill compute"
    if ttft_limit is not None and beyond.ttft_quantile > ttft_limit:
        return "TTFT target"
    step = replica.step_at(max(1.0, beyond.batch))
    work = step.stage_works[int(np.argmax([float(t) for t in step.stage_times]))]
    memory = sum(float(op.time) for op in work.operators if float(op.memory_time) >= float(op.compute_time))
    shares = {
        "decode bandwidth": memory,
        "communication": float(work.communication_time) + float(step.hop_time) / replica.layout.pp,
        "TPOT target": float(work.compute_bound_time) + float(work.fixed_time),
    }
    return max(shares, key=shares.get)


def replica_load(
    config: ModelConfig,
    cluster: Cluster,
    layout: Layout,
    rate: float,
    workload: Workload,
    quantile: float = 0.9,
    engine: Engine | None = None,
    **options: Any,
) -> Load | None:
    """One replica of ``layout`` at ``rate`` requests per second (``None`` if it cannot carry them).

    >>> from lib.transformer import PRESETS
    >>> load = replica_load(PRESETS["llama-3-8b"], Cluster("h100-sxm"), Layout(), 10.0, Workload(1024, 256))
    >>> round(load.batch), round(load.prefill_utilisation, 2)
    (31, 0.03)
    """
    check_layout(config, layout)
    eng = configure(cluster.device, engine, **options)
    return _Replica(config, cluster, layout, workload, eng).load(
        _checks.scalar("rate", rate, _checks.positive), _quantile(quantile)
    )


def percentile_fraction(value: float, name: str = "percentile") -> float:
    """A percentile as the front ends take it, as the fraction :func:`capacity` takes: 0.9 and 90 are both p90.

    A value in (0, 1) is already a fraction; one in [1, 100) is a percent
    and is divided by 100 (so 1 is p1, not p100). Anything else (0, 100 and
    above, negative, NaN, infinite) raises a ``ValueError`` naming ``name``.
    ``python -m lib.serving --percentile`` and the planner page's field both
    read their value through this rule.

    >>> percentile_fraction(0.9), percentile_fraction(90), percentile_fraction(50)
    (0.9, 0.9, 0.5)
    >>> percentile_fraction(100, "--percentile")
    Traceback (most recent call last):
    ...
    ValueError: --percentile must be a fraction in (0, 1) or a percent in [1, 100) (0.9 or 90 for p90), got 100
    """
    q = _checks.scalar(name, value)
    if 0 < q < 1:
        return q
    if 1 <= q < 100:
        return q / 100
    raise ValueError(f"{name} must be a fraction in (0, 1) or a percent in [1, 100) (0.9 or 90 for p90), got {value!r}")


def _quantile(value: float) -> float:
    q = _checks.scalar("percentile", value, _checks.positive)
    if q >= 1:
        raise ValueError(f"percentile must be in (0, 1) (0.9 for p90), got {value!r}")
    return q


def capacity(
    config: ModelConfig,
    device: Device | str,
    layout: Layout,
    prompt_tokens: Any,
    output_tokens: Any,
    *,
    ttft_limit: float | None = None,
    tpot_limit: float | None = None,
    percentile: float = 0.9,
    prefix_hit_rate: float = 0.0,
    devices_per_node: int = 8,
    link: Link | str | None = None,
    inter_link: Link | str | None = None,
    nics_per_node: int | None = None,
    engine: Engine | None = None,
    prefill: bool = True,
    **options: Any,
) -> Capacity:
    """The highest request rate ``layout`` sustains with TTFT and TPOT at ``percentile`` within their limits.

    ``prompt_tokens`` and ``output_tokens`` are lengths or samples of them
    (:class:`Workload`), refused past the model's context (the longest
    request counts); ``ttft_limit`` and ``tpot_limit`` are seconds or
    ``None`` (no target). The cluster keywords are :class:`Cluster`'s,
    ``options`` :class:`~lib.serving.engine.Engine` fields. ``prefill``
    False prices a decode pool (:mod:`lib.serving.disagg`): its requests
    arrive with their KV cache computed elsewhere, so its steps carry no
    prompts and it has no TTFT of its own. ``binding`` is, in this order of
    checks:

    * ``"weights memory"``: the weights and activations do not fit;
    * ``"TTFT target"`` or ``"TPOT target"``: a target is missed even as the
      rate goes to zero, or it is what fails first as the rate grows;
    * ``"KV memory"`` or ``"sequences per replica"``: the replica's
      concurrency limit is reached first (the KV cache at the mean
      context, or ``max_num_seqs`` and the token budget);
    * ``"prefill compute"``: the prompt chunks fill the budget's room first;
    * ``"decode bandwidth"`` or ``"communication"``: the TPOT target binds
      and the step's memory-bound operators, or its all-reduces and hops, are
      most of its time.
    """
    cluster = Cluster(device, devices_per_node, link, inter_link, nics_per_node)
    check_layout(config, layout)
    eng = configure(cluster.device, engine, **options)
    workload = Workload(prompt_tokens, output_tokens, prefix_hit_rate)
    check_context(config, workload.prompts, workload.outputs)
    q = _quantile(percentile)
    ttft_max = None if ttft_limit is None else _checks.scalar("ttft_limit", ttft_limit, _checks.positive)
    tpot_max = None if tpot_limit is None else _checks.scalar("tpot_limit", tpot_limit, _checks.positive)
    if not prefill and ttft_max is not None:
        raise ValueError(f"ttft_limit must be None for a decode pool (prefill=False), got {ttft_limit!r}")
    n = layout.devices
    replica = _Replica(config, cluster, layout, workload, eng, bool(prefill))
    if not replica.fits or replica.max_batch < 1:
        word = "weights memory" if not replica.fits else replica.limit
        return Capacity(
            0.0, 0.0, word if word in BINDINGS else "sequences per replica", None, replica.max_batch, replica.limit
        )
    highest = replica.highest_rate()
    idle = replica.load(highest * 1e-9, q, ttft_max is not None)
    if not _meets(idle, ttft_max, tpot_max):
        word = (
            "TTFT target"
            if (idle is not None and ttft_max is not None and idle.ttft_quantile > ttft_max)
            else "TPOT target"
        )
        return Capacity(0.0, 0.0, word, idle, replica.max_batch, replica.limit)
    lo, hi = 0.0, highest  # the queue for a slot is unstable at ``highest``
    if ttft_max is None and tpot_max is None:  # no target: the supremum of the stable rates
        lo = hi = highest
    need = ttft_max is not None
    for _ in range(0 if lo == hi else _BISECTIONS):
        if hi - lo <= _PRECISION * hi:  # a rate known to 1e-5: far inside the model's own error
            break
        mid = (lo + hi) / 2
        if _meets(replica.load(mid, q, need), ttft_max, tpot_max):
            lo = mid
        else:
            hi = mid
    rate = lo
    at = replica.load(rate * (1 - 1e-9), q)
    beyond = replica.load(hi * (1 + 1e-9), q)
    word = _binding(replica, beyond, ttft_max)
    total = rate * layout.dp
    return Capacity(total, total / n, word, at, replica.max_batch, replica.limit)
