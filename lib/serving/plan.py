"""The layout planner: every way to split a model over a cluster, whether it fits, and how fast it serves.

Introduced in chapter 7 (serving many users) and used by chapter 9
(choosing a split) and the planner page. :func:`plan` returns one
:class:`PlanRow` per valid layout; :func:`best` picks the row that serves the
most tokens per second per device among those that fit and meet the
latency targets.

>>> from lib.transformer import PRESETS
>>> rows = plan(PRESETS["llama-3-70b"], "h100-sxm", devices=8, batch=64, prompt_tokens=1024, output_tokens=256)
>>> [row.name for row in rows if row.fits][:3]
['tp1-pp2-dp4', 'tp1-pp4-dp2', 'tp1-pp8-dp1']
>>> best(rows).name
'tp8-pp1-dp1'
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lib import _checks
from lib.hardware import Device, Link, SLOW_LINK
from lib.serving.layout import Cluster, Layout, layouts
from lib.serving.memory import memory_fit
from lib.serving.step import decode_step, prefill_time
from lib.transformer import ModelConfig

__all__ = ["mean_context", "PlanRow", "plan", "best", "FrontierPoint", "frontier"]


@dataclass(frozen=True)
class PlanRow:
    """One layout of :func:`plan`, in SI units (bytes, seconds, tokens per second).

    ``batch`` is the busiest replica's share of the sequences, ``max_batch``
    how many sequences of the full context a replica could hold;
    ``tokens_per_s`` counts the whole cluster; ``reason`` says in words why a
    layout does not fit or misses a target ("" if neither).
    """

    tp: int
    pp: int
    dp: int
    expert_parallel: bool
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
    bound: str
    cost_per_million_tokens: float | None

    @property
    def name(self) -> str:
        """``"tp{T}-pp{P}-dp{D}"``."""
        return f"tp{self.tp}-pp{self.pp}-dp{self.dp}"

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


def plan(config: ModelConfig, device: Device | str, devices: int, batch: int, prompt_tokens: int,
         output_tokens: int, *, devices_per_node: int = 8, link: Link | str | None = None,
         inter_link: Link | str = SLOW_LINK, nics_per_node: int | None = None, bytes_per_element: float = 2,
         kv_bytes_per_element: float | None = None, memory_efficiency: float = 1.0,
         compute_efficiency: float = 1.0, reserve: float = 0.10, step_tokens: int = 2048,
         expert_parallel: bool = False, ttft_limit: float | None = None, tpot_limit: float | None = None,
         price_per_device_hour: float | None = None) -> list[PlanRow]:
    """Every layout of ``config`` on ``devices`` devices serving ``batch`` concurrent sequences.

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
    prompt_tokens, output_tokens : int
        Prompt and generated length of every sequence. Memory is sized for
        the full ``prompt + output`` context; decode speed for the average
        context over the generation, ``prompt + output / 2``.
    devices_per_node, link, inter_link, nics_per_node
        Servers of ``devices_per_node`` devices joined inside by ``link``
        (the device's own by default) and between by ``nics_per_node`` ports
        of ``inter_link`` each; see :class:`lib.serving.layout.Cluster`.
    bytes_per_element, kv_bytes_per_element : float
        Bytes per weight and per KV-cache element (2 for 16-bit, 1 for 8-bit).
    memory_efficiency, compute_efficiency : float
        Shares of peak memory bandwidth and FLOP/s reached, in (0, 1]; 1 is
        the ideal bound.
    reserve, step_tokens
        The engine's reserved share of memory and the largest step in tokens
        (sizing activations); see :func:`lib.serving.memory.memory_fit`.
    expert_parallel : bool
        For a mixture of experts, place whole experts on the tensor-parallel
        devices (vLLM's ``--enable-expert-parallel``).
    ttft_limit, tpot_limit : float, optional
        Latency targets in seconds; rows that miss one have ``meets_slo`` False.
    price_per_device_hour : float, optional
        Gives ``cost_per_million_tokens`` (same currency).

    Returns
    -------
    list of PlanRow
        Ordered by ``tp``, then ``pp``. Layouts whose tensor-parallel group
        would straddle servers unevenly (:meth:`Cluster.holds_group`) are left
        out.
    """
    cluster = Cluster(device, devices_per_node, link, inter_link, nics_per_node)
    n = _checks.scalar_count("devices", devices, minimum=1)
    if n > cluster.devices_per_node and n % cluster.devices_per_node:
        raise ValueError(f"devices must fill whole servers of {cluster.devices_per_node} devices, got {n}")
    total_batch = _checks.scalar_count("batch", batch, minimum=1)
    prompt = _checks.scalar_count("prompt_tokens", prompt_tokens, minimum=1)
    output = _checks.scalar_count("output_tokens", output_tokens, minimum=1)
    ttft_max, tpot_max = _limit("ttft_limit", ttft_limit), _limit("tpot_limit", tpot_limit)
    price = None if price_per_device_hour is None else _checks.scalar("price_per_device_hour",
                                                                         price_per_device_hour, _checks.nonnegative)
    speed = dict(bytes_per_element=bytes_per_element, kv_bytes_per_element=kv_bytes_per_element,
                 memory_efficiency=memory_efficiency, compute_efficiency=compute_efficiency)
    rows = []
    for layout in layouts(config, n, expert_parallel):
        if not cluster.holds_group(layout.tp):
            continue
        per_replica = math.ceil(total_batch / layout.dp)
        fit = memory_fit(config, cluster.device.memory_bytes, layout, per_replica, prompt + output,
                         bytes_per_element, kv_bytes_per_element, reserve, step_tokens)
        step = decode_step(config, cluster, layout, per_replica, mean_context(prompt, output), **speed)
        ttft = float(prefill_time(config, cluster, layout, prompt, **speed))
        tokens_per_s = total_batch / step.tpot
        misses = []
        if ttft_max is not None and ttft > ttft_max:
            misses.append(f"time to first token {ttft * 1e3:.0f} ms is over the {ttft_max * 1e3:.0f} ms target")
        if tpot_max is not None and step.tpot > tpot_max:
            misses.append(f"time per output token {step.tpot * 1e3:.1f} ms is over the {tpot_max * 1e3:.1f} ms "
                          "target")
        reason = fit.reason or "; ".join(misses)
        cost = None if price is None else price * n / 3600 / tokens_per_s * 1e6
        rows.append(PlanRow(
            tp=layout.tp, pp=layout.pp, dp=layout.dp, expert_parallel=layout.expert_parallel,
            fits=fit.fits, meets_slo=not misses, reason=reason,
            weights_per_device=fit.weights, kv_per_device=fit.kv_cache, activations_per_device=fit.activations,
            memory_per_device=fit.total, usable_per_device=fit.usable,
            batch=per_replica, max_batch=fit.max_sequences,
            ttft=ttft, tpot=float(step.tpot), tokens_per_s=float(tokens_per_s),
            tokens_per_s_per_device=float(tokens_per_s / n), tokens_per_s_per_user=float(1 / step.tpot),
            bound=str(step.bound), cost_per_million_tokens=cost,
        ))
    return rows


def best(rows: list[PlanRow]) -> PlanRow | None:
    """The row with the most tokens per second per device among those that fit and meet the targets.

    Ties go to the lower time per output token. ``None`` if no row qualifies.
    """
    ok = [row for row in rows if row.fits and row.meets_slo]
    return min(ok, key=lambda row: (-row.tokens_per_s_per_device, row.tpot), default=None)


def _dominates(q: "FrontierPoint", p: "FrontierPoint") -> bool:
    """``q`` is at least as good as ``p`` for users and devices, and better for one of them."""
    at_least = q.tokens_per_s_per_user >= p.tokens_per_s_per_user and q.tokens_per_s_per_device >= p.tokens_per_s_per_device
    better = q.tokens_per_s_per_user > p.tokens_per_s_per_user or q.tokens_per_s_per_device > p.tokens_per_s_per_device
    return at_least and better


@dataclass(frozen=True)
class FrontierPoint:
    """One layout at one batch: what each user and each device gets (tokens per second)."""

    name: str
    batch: int
    tokens_per_s_per_user: float
    tokens_per_s_per_device: float


def frontier(config: ModelConfig, device: Device | str, devices: int, prompt_tokens: int, output_tokens: int,
             batches=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024), **options) -> tuple[list, list]:
    """Every fitting (layout, batch) point, and the Pareto frontier among them.

    A point is on the frontier if no other point gives both more tokens per
    second to each user and more per device. ``options`` go to :func:`plan`.
    Returns ``(points, front)``, the front sorted by tokens per second per user.

    >>> from lib.transformer import PRESETS
    >>> points, front = frontier(PRESETS["llama-3-8b"], "h100-sxm", 2, 512, 128, batches=(1, 64))
    >>> [(p.name, p.batch) for p in front]
    [('tp2-pp1-dp1', 64), ('tp2-pp1-dp1', 1)]
    """
    points = []
    for batch in batches:
        for row in plan(config, device, devices, batch, prompt_tokens, output_tokens, **options):
            if row.fits and row.meets_slo:
                points.append(FrontierPoint(row.name, batch, row.tokens_per_s_per_user, row.tokens_per_s_per_device))
    front = [p for p in points if not any(_dominates(q, p) for q in points)]
    return points, sorted(front, key=lambda p: p.tokens_per_s_per_user)
