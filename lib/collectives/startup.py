"""Other collectives, pipeline hops and a two-level all-reduce under the book's startup model.

Introduced in chapter 5 (collectives). :mod:`lib.collectives.nccl` prices an
all-reduce as NCCL's tuner does; this module applies the same constants to
the rest: a ring-scheduled all-gather, reduce-scatter or all-to-all, one
point-to-point send (a pipeline hop), the startup of one collective alone,
and a two-level all-reduce across servers.

>>> from lib.units import us
>>> (startup_time("allreduce", [1, 2, 4, 8], "nvlink4") / us).round(1).tolist()
[0.0, 7.8, 10.2, 15.0]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from lib import _checks
from lib.collectives.bytes import bytes_sent, fraction_sent, kind_name
from lib.collectives.nccl import PROTOCOLS, Cost, _ring_bus, _ring_latency, _topology, tune_allreduce
from lib.hardware import Link
from lib.hardware import link as lookup_link

__all__ = ["collective_cost", "best_collective_time", "send_time", "startup_time", "TwoLevel", "two_level_allreduce"]

Number = Any


def collective_cost(
    kind: str,
    message_bytes: Number,
    devices: int,
    link: Link | str,
    protocol: str = "Simple",
    nodes: int = 1,
    inter_link: Link | str | None = None,
    nics_per_node: int | None = None,
) -> Cost:
    """A ring-scheduled collective under NCCL's startup model: ``base + steps x hop + V / B``.

    ``steps`` is ``2 (K - 1)`` for an all-reduce and ``K - 1`` for an
    all-gather, a reduce-scatter or an all-to-all; ``V`` the bytes each
    device sends (:func:`lib.collectives.bytes_sent`) and ``B`` the link's
    bandwidth as NCCL credits it, times the protocol's share.

    >>> from lib.units import MB, us
    >>> gather = collective_cost("allgather", 8 * MB, 8, "nvlink4")
    >>> reduce = collective_cost("allreduce", 8 * MB, 8, "nvlink4")
    >>> round(reduce.time / gather.time, 2)    # twice the bytes, twice the steps
    1.84
    """
    name = kind_name(kind)
    if name not in ("allreduce", "allgather", "reducescatter", "alltoall"):
        raise ValueError(f"kind must be an all-reduce, all-gather, reduce-scatter or all-to-all, got {kind!r}")
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    n = _checks.nonnegative("message_bytes", message_bytes)
    k, nodes_, intra, inter, nics = _topology(devices, nodes, link, inter_link, nics_per_node)
    latency = 0.0 if k == 1 else _ring_latency(2 if name == "allreduce" else 1, protocol, k, nodes_, intra, inter)
    bus = _ring_bus(protocol, intra, inter, nodes_, nics)
    share = fraction_sent(name, np.asarray(float(k)))
    time = latency + share * n / bus
    return Cost("ring", protocol, latency, bus / share if share else math.inf, _checks.result(time))


def best_collective_time(
    kind: str,
    message_bytes: Number,
    devices: int,
    link: Link | str,
    nodes: int = 1,
    inter_link: Link | str | None = None,
    nics_per_node: int | None = None,
) -> float | np.ndarray:
    """The least estimated time over NCCL's choices: the tuner for an all-reduce, the best protocol otherwise.

    >>> from lib.units import KB, us
    >>> round(best_collective_time("allreduce", 16 * KB, 4, "nvlink4") / us, 1)
    10.4
    """
    if kind_name(kind) == "allreduce":
        return tune_allreduce(message_bytes, devices, link, nodes, inter_link, nics_per_node).time
    times = [
        collective_cost(kind, message_bytes, devices, link, p, nodes, inter_link, nics_per_node).time for p in PROTOCOLS
    ]
    return _checks.result(np.min(np.stack([np.asarray(t, dtype=float) for t in times]), axis=0))


def send_time(message_bytes: Number, link: Link | str) -> float | np.ndarray:
    """One point-to-point transfer (a pipeline hop): one ring step, with its base latency, best protocol.

    An assumption: NCCL's tuner does not price send/receive; this prices it
    as the cheapest one-step ring collective over the same link.

    >>> from lib.units import KB, us
    >>> round(send_time(16 * KB, "ib-hdr") / us, 2)
    10.58
    """
    n = _checks.nonnegative("message_bytes", message_bytes)
    link_ = lookup_link(link)
    times = [_ring_latency(1, p, 2, 1, link_, None) + n / _ring_bus(p, link_, None, 1, 1) for p in PROTOCOLS]
    return _checks.result(np.min(np.stack(times), axis=0))


def startup_time(kind: str, devices: Number, link: Link | str, protocol: str = "LL") -> float | np.ndarray:
    """The book's startup model: ``base + steps x hop`` of a ring collective over ``devices`` in one node.

    For an all-reduce ``steps = 2 (K - 1)``; with LL on NVLink that is
    6.6 us + 2 (K - 1) x 0.6 us. Zero for one device. Broadcasts over ``devices``.

    >>> from lib.units import us
    >>> (startup_time("allreduce", [1, 2, 4, 8], "nvlink4") / us).round(1).tolist()
    [0.0, 7.8, 10.2, 15.0]
    """
    k = _checks.count("devices", devices, minimum=1)
    link_ = lookup_link(link)
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    steps_per_rank = 2 if kind_name(kind) == "allreduce" else 1
    return _checks.result(np.where(k > 1, _ring_latency(steps_per_rank, protocol, k, 1, link_, None), 0.0))


@dataclass(frozen=True)
class TwoLevel:
    """A two-level all-reduce and what each of its phases costs.

    Times in seconds; ``intra_bytes`` is what each device sends over the
    node's link (reduce-scatter plus all-gather), ``inter_bytes`` what each
    node's network ports carry together in the middle phase.
    """

    reduce_scatter: Any
    inter_allreduce: Any
    all_gather: Any
    intra_bytes: Any
    inter_bytes: Any

    @property
    def time(self) -> Any:
        """The three phases one after another.

        >>> from lib.units import MB, ms
        >>> cost = two_level_allreduce(256 * MB, nodes=4, per_node=8, link="nvlink4", inter_link="ib-ndr")
        >>> [round(t / ms, 3) for t in (cost.reduce_scatter, cost.inter_allreduce, cost.all_gather, cost.time)]
        [0.654, 1.052, 0.654, 2.361]
        """
        return _checks.result(
            np.asarray(self.reduce_scatter) + np.asarray(self.inter_allreduce) + np.asarray(self.all_gather)
        )


def two_level_allreduce(
    message_bytes: Number,
    nodes: int,
    per_node: int,
    link: Link | str,
    inter_link: Link | str,
    nics_per_node: int | None = None,
) -> TwoLevel:
    """Reduce-scatter inside each node, all-reduce across nodes on ``1/k`` of the data, all-gather inside.

    Each of the ``k = per_node`` devices ends the first phase owning a
    reduced ``n / k`` slice; the slices are all-reduced across the nodes in
    ``k`` parallel rings (one per device, through the node's ports), and an
    all-gather gives everyone the whole sum. Every phase uses the best
    protocol under :func:`collective_cost`.

    >>> from lib.units import MB
    >>> plan = two_level_allreduce(256 * MB, nodes=4, per_node=8, link="nvlink4", inter_link="ib-hdr", nics_per_node=1)
    >>> round(plan.intra_bytes / MB), round(plan.inter_bytes / MB)
    (448, 384)
    """
    n = _checks.nonnegative("message_bytes", message_bytes)
    nodes_ = _checks.scalar_count("nodes", nodes, minimum=1)
    k = _checks.scalar_count("per_node", per_node, minimum=1)
    nics = k if nics_per_node is None else _checks.scalar_count("nics_per_node", nics_per_node, minimum=1)
    intra, inter = lookup_link(link), lookup_link(inter_link)
    scatter = best_collective_time("reducescatter", n, k, intra)
    gather = best_collective_time("allgather", n, k, intra)
    # k slices of n / k cross the network at once; with fewer ports than devices they share them.
    shared = replace(inter, bandwidth=inter.bandwidth * min(nics, k) / k)
    middle = best_collective_time("allreduce", n / k, nodes_, shared)
    # Reduce-scatter and all-gather send what one all-reduce sends; the node's ports carry k slices of n / k.
    return TwoLevel(scatter, middle, gather, bytes_sent("allreduce", n, k), bytes_sent("allreduce", n, nodes_))
