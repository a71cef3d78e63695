"""Collectives as NCCL prices them: algorithms, protocols, a tuner, in-network and two-level all-reduce.

Introduced in chapter 5 (section "What NCCL actually does"); the startup
model here is the one the whole book uses. NCCL estimates the time of a
collective for every pair of an **algorithm** (ring, tree, NVLS, NVLS-tree)
and a **protocol** (LL, LL128, Simple) as

    time = latency + n / algorithm_bandwidth
    latency = base(algorithm, protocol) + steps x hop(link class, algorithm, protocol)

and runs the pair with the least time. The constants come from NCCL 2.30.7's
``src/graph/tuning.cc`` (``baseLat``; the per-step ``hwLat`` table is
:data:`lib.hardware.HOP_LATENCY`). Each protocol trades latency for bandwidth:
LL sends 8 bytes of data in every 16 (half the bandwidth, the lowest
latency), LL128 120 in every 128 (NCCL counts 0.92), Simple all of them
after a heavier synchronisation.

>>> from lib.hardware import LINKS
>>> from lib.units import KB, MB, us
>>> nvlink = LINKS["nvlink4"]
>>> round(allreduce_cost(8 * 1024, 8, nvlink, "ring", "LL").latency / us, 1)
15.0
>>> tune_allreduce(8 * 1024, 8, nvlink).algorithm, tune_allreduce(256 * 2**20, 8, nvlink).algorithm
('ring', 'nvls')

What is simplified, against NCCL's own model: the bandwidth of a link comes
from :class:`lib.hardware.Link` (``nccl_bandwidth``) instead of NCCL's
topology search; the per-channel caps on LL128 and tree bandwidth, the tree's
size-dependent correction factors and the multi-node ring's "plateau" factor
are left out; the CPU is taken to be x86 from Intel (NCCL's multi-node LL
cap and network overhead depend on it). On one H100 server the estimates
stay within a few percent of NCCL's for every pair; chapter 11 compares them
with published measurements.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from lib import _checks
from lib.collectives.bytes import fraction_sent, kind_name
from lib.hardware import HOP_LATENCY, Link, link as lookup_link
from lib.units import GB, s, us

__all__ = ["ALGORITHMS", "PROTOCOLS", "BASE_LATENCY", "PROTOCOL_SHARE", "Cost", "Choice", "allreduce_cost", "tune_allreduce",
           "collective_cost", "best_collective_time", "send_time", "startup_time", "two_level_allreduce",
           "TwoLevel"]

Number = Any

#: NCCL's all-reduce algorithms modelled here (NCCL's Tree, Ring, NVLS and NVLSTree).
ALGORITHMS = ("ring", "tree", "nvls", "nvls_tree")
#: NCCL's protocols, from lowest latency to highest bandwidth.
PROTOCOLS = ("LL", "LL128", "Simple")

#: Base latency of one collective, ``BASE_LATENCY[algorithm][protocol]`` in seconds (``baseLat``).
BASE_LATENCY = {
    "ring": {"LL": 6.6 * us, "LL128": 14.0 * us, "Simple": 8.4 * us},
    "tree": {"LL": 6.8 * us, "LL128": 14.0 * us, "Simple": 8.4 * us},
    "nvls": {"LL": 0.0, "LL128": 0.0, "Simple": 0.0},
    "nvls_tree": {"LL": 0.0, "LL128": 0.0, "Simple": 0.0},
}

#: Share of the link's bus bandwidth each protocol keeps, ``PROTOCOL_SHARE[algorithm][protocol]``: on a ring
#: LL carries 8 data bytes in 16 (half) and LL128 counts 0.92; the tree keeps 0.92 for every protocol, then
#: LL / 3.8 and LL128 x 7/9 on one node (120/128 across nodes). NVLS has its own efficiency (``Link``).
PROTOCOL_SHARE = {
    "ring": {"LL": 0.5, "LL128": 0.92, "Simple": 1.0},
    "tree": {"LL": 0.92 / 3.8, "LL128": 0.92 * 7 / 9, "Simple": 0.92},
}
_RING_SHARE, _TREE_SHARE = PROTOCOL_SHARE["ring"], PROTOCOL_SHARE["tree"]
_TREE_LL128_MULTINODE = 0.92 * 120 / 128
#: NCCL's cap on LL bandwidth, GB/s (``llMaxBws``): per GPU generation on one node, 39 across Intel nodes.
_LL_CAP = {"nvlink3": 87.7 * GB / s, "nvlink4": 141.0 * GB / s, "nvlink5": 282.0 * GB / s}
_LL_CAP_ONE_NODE_OTHER = 87.7 * GB / s   # PCIe servers (Ampere and Ada GPUs)
_LL_CAP_MULTINODE = 39.0 * GB / s
_NET_OVERHEAD = 1.0 * us                 # per inter-node step, x3 for Simple (getNetOverhead, Intel x86)
_NVLS_CHANNELS = 8                       # NCCL's NVLS search on an H100: 8 channels of B / 9


@dataclass(frozen=True)
class Cost:
    """NCCL's estimate for one algorithm and protocol: ``time = latency + n / bandwidth``.

    ``bandwidth`` is the algorithm bandwidth (message bytes per second);
    times in seconds. Arrays when ``message_bytes`` was an array.
    """

    algorithm: str
    protocol: str
    latency: float
    bandwidth: float
    time: Any


@dataclass(frozen=True)
class Choice:
    """The tuner's pick for each message size, and every candidate it weighed.

    ``algorithm``, ``protocol``, ``time`` and ``latency`` (the chosen pair's
    latency term) are plain values for one size and arrays for a sweep;
    ``costs`` maps ``(algorithm, protocol)`` to its :class:`Cost`.
    """

    algorithm: Any
    protocol: Any
    time: Any
    latency: Any
    costs: dict


def _topology(devices: Number, nodes: int, link: Link | str, inter_link: Link | str | None,
              nics_per_node: int | None) -> tuple[int, int, Link, Link | None, int]:
    k = _checks.scalar_count("devices", devices, minimum=1)
    n = _checks.scalar_count("nodes", nodes, minimum=1)
    if k % n:
        raise ValueError(f"devices must be a multiple of nodes, got devices={k}, nodes={n}")
    intra = lookup_link(link)
    inter = None if inter_link is None else lookup_link(inter_link)
    if n > 1 and inter is None:
        raise ValueError(f"inter_link must name the link between nodes when nodes > 1, got nodes={n}")
    nics = k // n if nics_per_node is None else _checks.scalar_count("nics_per_node", nics_per_node, minimum=1)
    return k, n, intra, inter, nics


def _bus_bandwidth(intra: Link, inter: Link | None, nodes: int, nics: int) -> float:
    """Per-GPU bus bandwidth: the intra-node link, or all of a node's NICs if they are slower."""
    if nodes == 1:
        return intra.nccl_bandwidth
    return min(intra.nccl_bandwidth, nics * inter.nccl_bandwidth)


def _ll_cap(intra: Link, nodes: int) -> float:
    if nodes > 1 or intra.kind == "net":
        return _LL_CAP_MULTINODE
    return next((cap for slug, cap in _LL_CAP.items() if lookup_link(slug) == intra), _LL_CAP_ONE_NODE_OTHER)


def _hop(link_: Link, algorithm: str, protocol: str) -> float:
    return HOP_LATENCY[link_.kind][algorithm][protocol]


def _allreduce_latency(algorithm: str, protocol: str, k: int, nodes: int, intra: Link, inter: Link | None) -> float:
    base = BASE_LATENCY[algorithm][protocol]
    per_node = k // nodes
    if algorithm == "ring":
        steps, inter_steps = 2 * (k - 1), 2 * (nodes - 1)
        overhead = 0.0 if nodes == 1 else _NET_OVERHEAD * (3 if protocol == "Simple" else 1)
        intra_hop = max(_hop(intra, "ring", protocol), overhead)
        inter_hop = _hop(inter, "ring", protocol) if nodes > 1 else 0.0
        return base + (steps - inter_steps) * intra_hop + inter_steps * inter_hop
    levels = int(math.floor(math.log2(nodes)))
    inter_hop = _hop(inter, algorithm if per_node > 1 else "tree", protocol) if nodes > 1 else 0.0
    if algorithm == "tree":
        return base + 2 * ((per_node - 1) * _hop(intra, "tree", protocol) + levels * inter_hop)
    if algorithm == "nvls":
        return _hop(intra, "nvls", protocol)
    return base + _hop(intra, "nvls_tree", protocol) + 2 * levels * inter_hop  # nvls_tree


def _allreduce_bandwidth(algorithm: str, protocol: str, k: int, nodes: int, intra: Link, inter: Link | None,
                         nics: int) -> float:
    """Algorithm bandwidth (bytes of message per second), 0 where the pair cannot run."""
    if algorithm in ("nvls", "nvls_tree"):
        if protocol != "Simple" or intra.in_network_efficiency == 0 or k == 1:
            return 0.0
        if (algorithm == "nvls") != (nodes == 1):   # NVLS inside one node; NVLS-tree across nodes
            return 0.0
        c = _NVLS_CHANNELS
        bus = 2 * intra.in_network_efficiency * (c - 1) * intra.nccl_bandwidth / (c + 1)
        if nodes > 1:
            bus = min(bus, (2 if nodes <= 2 else 1) * nics * inter.nccl_bandwidth)
        return bus * k / (2 * (k - 1))
    bus = _bus_bandwidth(intra, inter, nodes, nics)
    if algorithm == "ring":
        bus = bus * _RING_SHARE[protocol]
        if protocol == "LL":
            bus = min(bus, _ll_cap(intra, nodes))
        return bus * k / (2 * (k - 1)) if k > 1 else math.inf
    share = _TREE_LL128_MULTINODE if (protocol == "LL128" and nodes > 1) else _TREE_SHARE[protocol]
    bus = bus * share
    if protocol == "LL":
        bus = min(bus, _ll_cap(intra, nodes))
    return 0.5 * bus


def allreduce_cost(message_bytes: Number, devices: int, link: Link | str, algorithm: str = "ring",
                   protocol: str = "Simple", nodes: int = 1, inter_link: Link | str | None = None,
                   nics_per_node: int | None = None) -> Cost:
    """NCCL's estimate of one all-reduce of ``message_bytes`` for one algorithm and protocol.

    Parameters
    ----------
    message_bytes : float or array
        ``n``, the size of the array being reduced, in bytes.
    devices : int
        ``K``, ranks in total (``nodes`` times the devices of one node).
    link : Link or str
        The link inside a node (a :data:`lib.hardware.LINKS` slug or a :class:`~lib.hardware.Link`).
    algorithm, protocol : str
        One of :data:`ALGORITHMS` and :data:`PROTOCOLS`.
    nodes : int
        Nodes the ranks are spread over, evenly.
    inter_link : Link or str, optional
        The network port between nodes; required when ``nodes > 1``.
    nics_per_node : int, optional
        Network ports per node; by default one per device, as in NVIDIA's
        8-GPU servers.

    Returns
    -------
    Cost
        ``time`` is infinite where NCCL cannot run the pair (NVLS without an
        NVSwitch that reduces, NVLS with LL, NVLS-tree on one node).

    >>> from lib.units import MB, us
    >>> cost = allreduce_cost(1 * MB, 8, "nvlink4", "nvls")
    >>> round(cost.latency / us), round(cost.bandwidth / 1e9)
    (25, 272)
    >>> allreduce_cost(1 * MB, 8, "nvlink3", "nvls").time
    inf
    >>> allreduce_cost(1 * MB, 8, "nvlink4", "mesh")
    Traceback (most recent call last):
    ...
    ValueError: algorithm must be one of ('ring', 'tree', 'nvls', 'nvls_tree'), got 'mesh'
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    n = _checks.nonnegative("message_bytes", message_bytes)
    k, nodes_, intra, inter, nics = _topology(devices, nodes, link, inter_link, nics_per_node)
    if k == 1:
        return Cost(algorithm, protocol, 0.0, math.inf, _checks.result(np.zeros_like(n)))
    bandwidth = _allreduce_bandwidth(algorithm, protocol, k, nodes_, intra, inter, nics)
    latency = _allreduce_latency(algorithm, protocol, k, nodes_, intra, inter)
    time = np.full_like(n, np.inf) if bandwidth == 0 else latency + n / bandwidth
    return Cost(algorithm, protocol, latency, bandwidth, _checks.result(time))


def tune_allreduce(message_bytes: Number, devices: int, link: Link | str, nodes: int = 1,
                   inter_link: Link | str | None = None, nics_per_node: int | None = None,
                   algorithms: tuple[str, ...] = ALGORITHMS) -> Choice:
    """The pair NCCL's tuner would run for each message size: the least estimated time.

    Ties go to the earlier algorithm, then the earlier protocol, as in NCCL.
    ``algorithms`` restricts the choice (``NCCL_ALGO``).

    >>> from lib.units import KB, MB, us
    >>> choice = tune_allreduce([8 * KB, 1 * MB, 256 * MB], 8, "nvlink4")
    >>> list(zip(choice.algorithm.tolist(), choice.protocol.tolist()))
    [('ring', 'LL'), ('ring', 'LL'), ('nvls', 'Simple')]
    >>> tune_allreduce(256 * MB, 8, "nvlink4", algorithms=("ring", "tree")).protocol
    'Simple'
    """
    n = _checks.nonnegative("message_bytes", message_bytes)
    costs = {(a, p): allreduce_cost(n, devices, link, a, p, nodes, inter_link, nics_per_node)
             for a in algorithms for p in PROTOCOLS}
    pairs = list(costs)
    table = np.stack([np.broadcast_to(np.asarray(costs[pair].time, dtype=float), n.shape) for pair in pairs])
    best = np.argmin(table, axis=0)   # argmin keeps the first of equal times
    algorithm = np.array([pairs[i][0] for i in best.ravel()]).reshape(best.shape)
    protocol = np.array([pairs[i][1] for i in best.ravel()]).reshape(best.shape)
    time = np.take_along_axis(table, best[None], axis=0)[0]
    latency = np.array([costs[pairs[i]].latency for i in best.ravel()]).reshape(best.shape)
    if n.ndim == 0:
        return Choice(str(algorithm), str(protocol), float(time), float(latency), costs)
    return Choice(algorithm, protocol, time, latency, costs)


def collective_cost(kind: str, message_bytes: Number, devices: int, link: Link | str, protocol: str = "Simple",
                    nodes: int = 1, inter_link: Link | str | None = None,
                    nics_per_node: int | None = None) -> Cost:
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
    steps_per_hop = 2 if name == "allreduce" else 1
    base = BASE_LATENCY["ring"][protocol]
    inter_steps = steps_per_hop * (nodes_ - 1)
    overhead = 0.0 if nodes_ == 1 else _NET_OVERHEAD * (3 if protocol == "Simple" else 1)
    intra_hop = max(_hop(intra, "ring", protocol), overhead)
    inter_hop = _hop(inter, "ring", protocol) if nodes_ > 1 else 0.0
    latency = 0.0 if k == 1 else base + (steps_per_hop * (k - 1) - inter_steps) * intra_hop + inter_steps * inter_hop
    bus = _bus_bandwidth(intra, inter, nodes_, nics) * _RING_SHARE[protocol]
    if protocol == "LL":
        bus = min(bus, _ll_cap(intra, nodes_))
    sent = np.asarray(fraction_sent(name, np.asarray(float(k)))) * n
    return Cost("ring", protocol, latency, bus, _checks.result(latency + sent / bus))


def best_collective_time(kind: str, message_bytes: Number, devices: int, link: Link | str, nodes: int = 1,
                         inter_link: Link | str | None = None, nics_per_node: int | None = None) -> float | np.ndarray:
    """The least estimated time over NCCL's choices: the tuner for an all-reduce, the best protocol otherwise.

    >>> from lib.units import KB, us
    >>> round(best_collective_time("allreduce", 16 * KB, 4, "nvlink4") / us, 1)
    10.4
    """
    if kind_name(kind) == "allreduce":
        return tune_allreduce(message_bytes, devices, link, nodes, inter_link, nics_per_node).time
    times = [collective_cost(kind, message_bytes, devices, link, p, nodes, inter_link, nics_per_node).time
             for p in PROTOCOLS]
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
    times = []
    for p in PROTOCOLS:
        bandwidth = link_.nccl_bandwidth * _RING_SHARE[p]
        times.append(BASE_LATENCY["ring"][p] + _hop(link_, "ring", p) + n / bandwidth)
    return _checks.result(np.min(np.stack(times), axis=0))


def startup_time(kind: str, devices: Number, link: Link | str, protocol: str = "LL",
                 algorithm: str = "ring") -> float | np.ndarray:
    """The book's startup model: ``base + steps x hop`` for one collective over ``devices`` in one node.

    For a ring all-reduce ``steps = 2 (K - 1)``; with LL on NVLink that is
    6.6 us + 2 (K - 1) x 0.6 us. Zero for one device. Broadcasts over ``devices``.

    >>> from lib.units import us
    >>> (startup_time("allreduce", [1, 2, 4, 8], "nvlink4") / us).round(1).tolist()
    [0.0, 7.8, 10.2, 15.0]
    """
    k = _checks.count("devices", devices, minimum=1)
    link_ = lookup_link(link)
    if algorithm not in ("ring", "tree"):
        raise ValueError(f"algorithm must be 'ring' or 'tree' for a startup time, got {algorithm!r}")
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    steps = (2 if kind_name(kind) == "allreduce" else 1) * (k - 1)
    return _checks.result(np.where(k > 1, BASE_LATENCY[algorithm][protocol] + steps * _hop(link_, algorithm, protocol),
                                   0.0))


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
        """The three phases one after another."""
        return _checks.result(np.asarray(self.reduce_scatter) + np.asarray(self.inter_allreduce)
                              + np.asarray(self.all_gather))


def two_level_allreduce(message_bytes: Number, nodes: int, per_node: int, link: Link | str,
                        inter_link: Link | str, nics_per_node: int | None = None) -> TwoLevel:
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
    intra_bytes = 2 * fraction_sent("allgather", np.asarray(float(k))) * n
    inter_bytes = k * fraction_sent("allreduce", np.asarray(float(nodes_))) * n / k
    return TwoLevel(scatter, middle, gather, _checks.result(intra_bytes), _checks.result(inter_bytes))
