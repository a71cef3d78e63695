"""The layout planner: every way to split a model over a cluster, whether it fits, and how fast it serves.

Introduced in chapter 7 (serving many users) and used by chapter 9
(choosing a split) and the planner page. :func:`plan` returns one
:class:`PlanRow` per valid layout; :func:`leader` is the row that serves the
most per device (capacity under the targets, or tokens per second), and
:func:`best` the simplest layout within the model's error of it.

>>> from lib.transformer import PRESETS
>>> rows = plan(PRESETS["llama-3-70b"], "h100-sxm", devices=8, batch=64, prompt_tokens=1024, output_tokens=256)
>>> [row.name for row in rows if row.fits][:3]
['tp1-pp4-dp2', 'tp1-pp8-dp1', 'tp2-pp2-dp2']
>>> best(rows).name
'tp8-pp1-dp1'

Real traffic mixes lengths: give samples of them instead (one per request,
as :func:`lib.serving.capacity` takes them). These three have the same means
as above, but the long requests hold more of the cache while they run:

>>> mixed = plan(PRESETS["llama-3-70b"], "h100-sxm", 8, 64, [256, 1024, 1792], [64, 256, 448])
>>> rows[-1].max_batch, mixed[-1].max_batch
(1068, 776)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks
from lib.hardware import Device, Link
from lib.serving.capacity import Workload, capacity
from lib.serving.engine import Engine, configure
from lib.serving.layout import Cluster, Layout, layouts
from lib.serving.memory import check_context, memory_fit
from lib.serving.step import decode_step, prefill_time
from lib.transformer import ModelConfig

__all__ = ["mean_context", "PlanRow", "plan", "TIE_BAND", "leader", "best", "tie_note", "FrontierPoint", "frontier"]


@dataclass(frozen=True)
class PlanRow:
    """One layout of :func:`plan`, in SI units (bytes, seconds, tokens per second).

    ``batch`` is the busiest replica's share of the sequences, ``max_batch``
    how many sequences of the full context (with samples of lengths, the mean
    held context of :func:`plan`) a replica could hold in memory;
    ``tokens_per_s`` counts the output tokens of the whole cluster in steady
    state, every step carrying the prefill of the prompts that replace
    finished sequences (``prefill_share`` of its time); ``requests_per_s`` is
    that divided by the (mean) output length. ``reason`` says in words why a layout
    does not fit or misses a target ("" if neither).
    """

    tp: int
    pp: int
    dp: int
    expert_parallel: bool
    attention_dp: bool
    fits: bool
    meets_slo: bool
    reason: str
    weights_per_device: float
    kv_per_device: float
    activations_per_device: float
    memory_per_device: float
    usable_per_device: float
    batch: int
    max_batch: int
    ttft: float
    tpot: float
    tokens_per_s: float
    tokens_per_s_per_device: float
    tokens_per_s_per_user: float
    requests_per_s: float
    prefill_share: float
    bound: str
    cost_per_million_tokens: float | None
    capacity: float | None = None
    requests_per_s_per_device: float | None = None
    binding: str | None = None
    capacity_ttft: float | None = None
    capacity_tpot: float | None = None

    @property
    def name(self) -> str:
        """``"tp{T}-pp{P}-dp{D}"``, or ``"ep{T}-..."`` with expert parallelism (:attr:`Layout.name`)."""
        return self.layout.name

    @property
    def layout(self) -> Layout:
        """The row's :class:`Layout`."""
        return Layout(self.tp, self.pp, self.dp, self.expert_parallel, self.attention_dp)

    @property
    def devices(self) -> int:
        """``tp * pp * dp``."""
        return self.tp * self.pp * self.dp


def mean_context(prompt_tokens: float, output_tokens: float) -> float:
    """The context a decode step reads on average over a generation: ``prompt + output / 2``.

    The KV cache grows by one token per step, from ``prompt`` to
    ``prompt + output``; :func:`plan` prices every step at this mean.

    >>> mean_context(1024, 256)
    1152.0
    """
    prompt = _checks.scalar("prompt_tokens", prompt_tokens, _checks.nonnegative)
    return prompt + _checks.scalar("output_tokens", output_tokens, _checks.nonnegative) / 2


def _limit(name: str, value: float | None) -> float | None:
    return None if value is None else _checks.scalar(name, value, _checks.positive)


def _held_context(workload: Workload) -> int:
    """The full context ``P + O`` a running sequence holds at its end, averaged over the sequences in flight.

    A sequence stays in the batch for its ``O`` decode steps, so the ones in
    flight are drawn in proportion to their output: ``E[O (P + O)] / E[O]``,
    rounded up to whole tokens. For one length it is ``P + O``.
    """
    prompts, outputs = workload.prompts, workload.outputs  # sums of whole numbers: exact, then one rounding
    return math.ceil(float(np.sum(outputs * (prompts + outputs)) / np.sum(outputs)))


def _scheduler_reason(per_replica: int, tokens: float, engine: Engine, layout: Layout) -> str:
    """Why the scheduler cannot hold ``per_replica`` sequences in steady state ("" if it can)."""
    seqs, budget = engine.replica_limits(layout)
    if per_replica > seqs:
        return (
            f"{per_replica} sequences per replica are more than the scheduler runs at once "
            f"(max_num_seqs = {engine.max_num_seqs}{' per rank' if layout.attention_dp else ''})"
        )
    if tokens > budget:
        return (
            f"each step needs {tokens:,.0f} tokens (decodes and the prompts that replace finished "
            f"sequences), more than the token budget (max_num_batched_tokens = {engine.max_num_batched_tokens:,}"
            f"{' per rank' if layout.attention_dp else ''})"
        )
    return ""


def plan(
    config: ModelConfig,
    device: Device | str,
    devices: int,
    batch: int,
    prompt_tokens: Any,
    output_tokens: Any,
    *,
    devices_per_node: int = 8,
    link: Link | str | None = None,
    inter_link: Link | str | None = None,
    nics_per_node: int | None = None,
    prefix_hit_rate: float = 0.0,
    expert_parallel: bool | str = False,
    ttft_limit: float | None = None,
    tpot_limit: float | None = None,
    percentile: float = 0.9,
    price_per_device_hour: float | None = None,
    engine: Engine | None = None,
    capacities: bool = True,
    **options: Any,
) -> list[PlanRow]:
    """Every layout of ``config`` on ``devices`` devices serving ``batch`` concurrent sequences in steady state.

    Parameters
    ----------
    config : ModelConfig
        The model (a :data:`lib.transformer.PRESETS` entry or your own).
    device : Device or str
        A :data:`lib.hardware.DEVICES` slug or a :class:`~lib.hardware.Device`.
    devices : int
        Devices in the cluster; every layout uses all of them (``tp * pp * dp``).
    batch : int
        Sequences in flight across the cluster; each of the ``dp`` replicas
        takes ``ceil(batch / dp)`` (the busiest one sets the pace).
    prompt_tokens, output_tokens : int or array of int
        Prompt and generated length of every request, or samples of them
        (equal-length arrays, one entry per request, or one side a single
        length), as :func:`lib.serving.capacity` takes them
        (:class:`lib.serving.capacity.Workload`). For one length, memory is
        sized for the full ``prompt + output`` context; a step reads the
        average context over the generation, ``prompt + output / 2``, and
        carries the prefill of the prompts that replace finished sequences
        (:func:`lib.serving.step.steady_prefill`); TTFT is that prompt's on
        an idle replica. Past the model's ``context_length`` the plan is
        refused (:func:`lib.serving.memory.check_context`).

        With samples, the capacity under the targets takes the whole sample
        (the prefill queue sees every prompt's work). The steady-state
        columns price one step with one length, and use the sample's means
        as :class:`~lib.serving.capacity.Workload` and the capacity's own
        steady state do: the step carries the rounded mean prompt and output
        and reads ``Workload.context`` (the mean context weighted by the
        steps each request decodes), TTFT is the rounded mean prompt's (so
        ``meets_slo`` judges the mean request; the capacity judges the
        targets' percentile over the sample), and
        ``requests_per_s`` divides by the mean output. The mean, because over
        many requests a steady state's tokens and steps add up to the average
        request's (the request rate is the token rate over the mean output),
        and because a row must agree with its own capacity, whose steady
        state uses the same means. Memory holds each sequence at its
        full context averaged over the sequences in flight, ``E[O (P + O)] /
        E[O]`` rounded up (one length: ``P + O``). The refusal past the
        model's context counts the longest request, as the engine's
        ``max_model_len`` must.
    devices_per_node, link, inter_link, nics_per_node
        Servers of ``devices_per_node`` devices joined inside by ``link`` and
        between by ``nics_per_node`` ports of ``inter_link`` each; by default
        the device's own link and reference network
        (:class:`lib.serving.layout.Cluster`).
    prefix_hit_rate : float
        Share of each prompt found in the prefix cache, in [0, 1): it is not
        computed again.
    expert_parallel : bool, "both" or "all"
        For a mixture of experts, place whole experts on the tensor-parallel
        devices (vLLM's ``--enable-expert-parallel``); ``"both"`` lists the
        expert-parallel layouts beside the tensor-parallel ones, ``"all"``
        adds attention run data-parallel beside the experts
        (:func:`lib.serving.layout.layouts`).
    ttft_limit, tpot_limit : float, optional
        Latency targets in seconds at ``percentile`` (0.9: p90). Rows whose
        fixed-concurrency TTFT (an idle replica's) or TPOT misses one have
        ``meets_slo`` False; with a target, every row also gets its capacity
        under the targets and :func:`best` ranks by capacity per device.
    price_per_device_hour : float, optional
        Gives ``cost_per_million_tokens`` (same currency).
    engine : Engine, optional
        The serving engine's settings (:class:`lib.serving.engine.Engine`);
        ``options`` change single fields of it: ``weight_format``,
        ``kv_format``, ``allreduce``, ``cuda_graphs``, ``max_num_seqs``,
        ``max_num_batched_tokens``, the efficiencies and fixed costs.
    capacities : bool
        False leaves each row's capacity under the targets out (``None``),
        as :func:`frontier` does: it reads only the steady state, at many
        batches, and a capacity does not depend on the batch.

    Returns
    -------
    list of PlanRow
        Ordered by ``tp``, then ``pp``. Layouts whose tensor-parallel group
        would straddle servers unevenly (:meth:`Cluster.holds_group`) are left
        out. A layout fits when memory holds its sequences and the scheduler
        can run them: at most ``max_num_seqs`` per replica, and each step's
        tokens within ``max_num_batched_tokens``.
    """
    cluster = Cluster(device, devices_per_node, link, inter_link, nics_per_node)
    eng = configure(cluster.device, engine, **options)
    n = _checks.scalar_count("devices", devices, minimum=1)
    if n > cluster.devices_per_node and n % cluster.devices_per_node:
        raise ValueError(f"devices must fill whole servers of {cluster.devices_per_node} devices, got {n}")
    total_batch = _checks.scalar_count("batch", batch, minimum=1)
    if np.ndim(prompt_tokens) == 0 and np.ndim(output_tokens) == 0:  # one length each
        prompt = _checks.scalar_count("prompt_tokens", prompt_tokens, minimum=1)
        output = _checks.scalar_count("output_tokens", output_tokens, minimum=1)
        check_context(config, prompt, output)
        context, held, per_request, lengths = mean_context(prompt, output), prompt + output, output, (prompt, output)
    else:  # samples: the means for the steady state (see the docstring), the whole sample for the capacity
        workload = Workload(prompt_tokens, output_tokens)
        check_context(config, workload.prompts, workload.outputs)
        prompt, output = int(round(workload.prompt)), int(round(workload.output))
        context, held, per_request = workload.context, _held_context(workload), workload.output
        lengths = (workload.prompts, workload.outputs)
    hit = _checks.scalar("prefix_hit_rate", prefix_hit_rate, _checks.nonnegative)
    if hit >= 1:
        raise ValueError(f"prefix_hit_rate must be in [0, 1), got {prefix_hit_rate!r}")
    ttft_max, tpot_max = _limit("ttft_limit", ttft_limit), _limit("tpot_limit", tpot_limit)
    price = (
        None
        if price_per_device_hour is None
        else _checks.scalar("price_per_device_hour", price_per_device_hour, _checks.nonnegative)
    )
    rows = []
    for layout in layouts(config, n, expert_parallel):
        if not cluster.holds_group(layout.tp):
            continue
        per_replica = math.ceil(total_batch / layout.dp)
        fit = memory_fit(config, cluster.device, layout, per_replica, held, eng)
        step = decode_step(config, cluster, layout, per_replica, context, prompt, output, hit, engine=eng)
        ttft = float(prefill_time(config, cluster, layout, prompt, hit, engine=eng))
        tokens_per_s = total_batch / float(step.tpot)
        misses = []
        if ttft_max is not None and ttft > ttft_max:
            misses.append(f"time to first token {ttft * 1e3:.0f} ms is over the {ttft_max * 1e3:.0f} ms target")
        if tpot_max is not None and step.tpot > tpot_max:
            misses.append(f"time per output token {step.tpot * 1e3:.1f} ms is over the {tpot_max * 1e3:.1f} ms target")
        scheduler = _scheduler_reason(per_replica, float(step.tokens_per_step), eng, layout)
        reason = fit.reason or scheduler or "; ".join(misses)
        cost = None if price is None else price * n / 3600 / tokens_per_s * 1e6
        under = (
            None
            if (ttft_max is None and tpot_max is None) or not capacities
            else capacity(
                config,
                cluster.device,
                layout,
                *lengths,
                ttft_limit=ttft_max,
                tpot_limit=tpot_max,
                percentile=percentile,
                prefix_hit_rate=hit,
                devices_per_node=cluster.devices_per_node,
                link=cluster.link,
                inter_link=cluster.inter_link,
                nics_per_node=cluster.nics_per_node,
                engine=eng,
            )
        )
        rows.append(
            PlanRow(
                tp=layout.tp,
                pp=layout.pp,
                dp=layout.dp,
                expert_parallel=layout.expert_parallel,
                attention_dp=layout.attention_dp,
                fits=fit.fits and not scheduler,
                meets_slo=not misses,
                reason=reason,
                weights_per_device=fit.weights,
                kv_per_device=fit.kv_cache,
                activations_per_device=fit.activations,
                memory_per_device=fit.total,
                usable_per_device=fit.usable,
                batch=per_replica,
                max_batch=fit.max_sequences,
                ttft=ttft,
                tpot=float(step.tpot),
                tokens_per_s=float(tokens_per_s),
                tokens_per_s_per_device=float(tokens_per_s / n),
                tokens_per_s_per_user=float(1 / step.tpot),
                requests_per_s=float(tokens_per_s / per_request),
                prefill_share=float(step.prefill_share),
                bound=str(step.bound),
                cost_per_million_tokens=cost,
                **(
                    {}
                    if under is None
                    else dict(
                        capacity=under.rate,
                        requests_per_s_per_device=under.rate_per_device,
                        binding=under.binding,
                        capacity_ttft=None if under.load is None else under.load.ttft_quantile,
                        capacity_tpot=None if under.load is None else under.load.tpot_quantile,
                    )
                ),
            )
        )
    return rows


#: How far ahead the leading row may be of a simpler one and still count as a tie: 15 %, chapter 11's
#: held-out median |e| of the decode model (15.4 % over 554 published figures, TP 1 calibrating TP > 1 and
#: other models: ``lib.validation.report.summary()["decode"].median``), the smallest of its held-out medians
#: (prefill 18.6 %, throughput under load 24.6 %). A lead inside it is a lead the model cannot vouch for.
TIE_BAND = 0.15


def _ranked(rows: list[PlanRow]) -> tuple[list[PlanRow], Any]:
    """The rows :func:`best` chooses among and the figure it ranks them by (higher is better)."""
    if any(row.capacity is not None for row in rows):
        return [row for row in rows if row.requests_per_s_per_device], lambda row: row.requests_per_s_per_device
    return [row for row in rows if row.fits and row.meets_slo], lambda row: row.tokens_per_s_per_device


def leader(rows: list[PlanRow]) -> PlanRow | None:
    """The row with the most capacity per device under the targets, or without targets the most tokens per
    second per device among the rows that fit; ties go to the lower time per output token. ``None`` if no row
    qualifies. :func:`best` starts from it.
    """
    candidates, value = _ranked(rows)
    return min(candidates, key=lambda row: (-value(row), row.tpot), default=None)


def best(rows: list[PlanRow], devices_per_node: int = 8) -> PlanRow | None:
    """The row to deploy: the simplest among those within :data:`TIE_BAND` of the :func:`leader`.

    With targets (rows that carry a ``capacity``) the rows are ranked by
    ``requests_per_s_per_device`` above zero; without, by
    ``tokens_per_s_per_device`` among the rows that fit and meet the targets.
    Every row the leader is at most ``TIE_BAND`` ahead of (``lead <= (1 +
    TIE_BAND) * row``) ties with it, and the tie goes to the simplest layout
    (:meth:`lib.serving.layout.Layout.simplicity` on servers of
    ``devices_per_node``: fewer kinds of split; replicas, then tensor,
    pipeline, a group across servers, experts, attention data-parallel),
    then to the more capacity, then to the lower time per output token.
    ``None`` if no row qualifies. :func:`tie_note` says why in words when
    the answer is not the leader.

    >>> from lib.transformer import PRESETS
    >>> rows = plan(PRESETS["llama-3-8b"], "h100-sxm", 8, 64, 1024, 256)
    >>> leader(rows).name, best(rows).name
    ('tp4-pp1-dp2', 'tp8-pp1-dp1')
    """
    candidates, value = _ranked(rows)
    if not candidates:
        return None
    top = max(value(row) for row in candidates)
    tied = [row for row in candidates if top <= (1 + TIE_BAND) * value(row)]
    return min(tied, key=lambda row: (row.layout.simplicity(devices_per_node), -value(row), row.tpot))


def tie_note(rows: list[PlanRow], chosen: PlanRow | None, devices_per_node: int = 8) -> str:
    """One line on why ``chosen`` (what :func:`best` returned) is not the :func:`leader`; "" when it is.

    >>> from lib.transformer import PRESETS
    >>> rows = plan(PRESETS["llama-3-8b"], "h100-sxm", 8, 64, 1024, 256)
    >>> print(tie_note(rows, best(rows)))
    tp4-pp1-dp2 is 5.11 % ahead, inside the model's 15 % error (chapter 11); tp8-pp1-dp1 is simpler: tensor, not replicas + tensor
    >>> tie_note(rows, leader(rows))
    ''
    """
    top = leader(rows)
    if chosen is None or top is None or top.name == chosen.name:
        return ""
    _, value = _ranked(rows)
    ahead = 100 * (value(top) / value(chosen) - 1)

    def words(row: PlanRow) -> str:
        return " + ".join(row.layout.splits(devices_per_node)) or "one device"

    return (
        f"{top.name} is {ahead:.2f} % ahead, inside the model's {100 * TIE_BAND:.0f} % error (chapter 11); "
        f"{chosen.name} is simpler: {words(chosen)}, not {words(top)}"
    )


def _dominates(q: FrontierPoint, p: FrontierPoint) -> bool:
    """``q`` is at least as good as ``p`` for users and devices, and better for one of them."""
    at_least = (
        q.tokens_per_s_per_user >= p.tokens_per_s_per_user and q.tokens_per_s_per_device >= p.tokens_per_s_per_device
    )
    better = q.tokens_per_s_per_user > p.tokens_per_s_per_user or q.tokens_per_s_per_device > p.tokens_per_s_per_device
    return at_least and better


@dataclass(frozen=True)
class FrontierPoint:
    """One layout at one batch: what each user and each device gets (tokens per second)."""

    name: str
    batch: int
    tokens_per_s_per_user: float
    tokens_per_s_per_device: float


def frontier(
    config: ModelConfig,
    device: Device | str,
    devices: int,
    prompt_tokens: Any,
    output_tokens: Any,
    batches=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024),
    **options,
) -> tuple[list, list]:
    """Every fitting (layout, batch) point, and the Pareto frontier among them.

    A point is on the frontier if no other point gives both more tokens per
    second to each user and more per device. ``prompt_tokens`` and
    ``output_tokens`` are lengths or samples of them, and ``options`` go to
    :func:`plan`.
    Returns ``(points, front)``, the front sorted by tokens per second per user.

    >>> from lib.transformer import PRESETS
    >>> points, front = frontier(PRESETS["llama-3-8b"], "h100-sxm", 2, 512, 128, batches=(1, 64))
    >>> [(p.name, p.batch) for p in front]
    [('tp2-pp1-dp1', 64), ('tp2-pp1-dp1', 1)]
    """
    points = []
    for batch in batches:
        for row in plan(config, device, devices, batch, prompt_tokens, output_tokens, capacities=False, **options):
            if row.fits and row.meets_slo:
                points.append(FrontierPoint(row.name, batch, row.tokens_per_s_per_user, row.tokens_per_s_per_device))
    front = [p for p in points if not any(_dominates(q, p) for q in points)]
    return points, sorted(front, key=lambda p: p.tokens_per_s_per_user)
