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
from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks
from lib.hardware import HOP_LATENCY, Link
from lib.hardware import link as lookup_link
from lib.units import GB, s, us

__all__ = [
    "ALGORITHMS",
    "PROTOCOLS",
    "BASE_LATENCY",
    "PROTOCOL_SHARE",
    "Cost",
    "Choice",
    "allreduce_cost",
    "tune_allreduce",
    "tuning_constants",
]

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
_LL_CAP_ONE_NODE_OTHER = 87.7 * GB / s  # PCIe servers (Ampere and Ada GPUs)
_LL_CAP_MULTINODE = 39.0 * GB / s
_NET_OVERHEAD = 1.0 * us  # per inter-node step, x3 for Simple (getNetOverhead, Intel x86)
_NVLS_CHANNELS = 8  # NCCL's NVLS search on an H100: 8 channels of B / 9


def tuning_constants() -> dict:
    """The tuner's constants beyond :data:`BASE_LATENCY` and :data:`PROTOCOL_SHARE`, in SI units.

    For code that prices collectives elsewhere from the same numbers (the
    planner page evaluates :func:`tune_allreduce` in the browser):
    ``ll_cap`` (LL's bandwidth cap on one node, by link slug),
    ``ll_cap_one_node_other`` (one node of any other link),
    ``ll_cap_multinode``, ``net_overhead`` (per inter-node step, three times
    that with Simple), ``nvls_channels`` and ``tree_ll128_multinode`` (the
    tree's LL128 share across nodes). A copy: changing it changes nothing here.

    >>> constants = tuning_constants()
    >>> round(constants["ll_cap"]["nvlink4"] / 1e9), round(constants["net_overhead"] / us), constants["nvls_channels"]
    (141, 1, 8)
    """
    return {
        "ll_cap": dict(_LL_CAP),
        "ll_cap_one_node_other": _LL_CAP_ONE_NODE_OTHER,
        "ll_cap_multinode": _LL_CAP_MULTINODE,
        "net_overhead": _NET_OVERHEAD,
        "nvls_channels": _NVLS_CHANNELS,
        "tree_ll128_multinode": _TREE_LL128_MULTINODE,
    }


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


def _topology(
    devices: Number, nodes: int, link: Link | str, inter_link: Link | str | None, nics_per_node: int | None
) -> tuple[int, int, Link, Link | None, int]:
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


def _ring_latency(steps_per_rank: int, protocol: str, k: Number, nodes: int, intra: Link, inter: Link | None) -> Any:
    """``base + steps x hop`` of a ring over ``k`` ranks: ``steps_per_rank x (K - 1)`` steps, of which
    ``steps_per_rank x (nodes - 1)`` cross the network. ``k`` may be an array (one node)."""
    inter_steps = steps_per_rank * (nodes - 1)
    overhead = 0.0 if nodes == 1 else _NET_OVERHEAD * (3 if protocol == "Simple" else 1)
    intra_hop = max(_hop(intra, "ring", protocol), overhead)
    inter_hop = _hop(inter, "ring", protocol) if nodes > 1 else 0.0
    return (
        BASE_LATENCY["ring"][protocol] + (steps_per_rank * (k - 1) - inter_steps) * intra_hop + inter_steps * inter_hop
    )


def _ring_bus(protocol: str, intra: Link, inter: Link | None, nodes: int, nics: int) -> float:
    """Bus bandwidth of a ring with ``protocol``: its share of the link, LL under NCCL's cap."""
    bus = _bus_bandwidth(intra, inter, nodes, nics) * _RING_SHARE[protocol]
    return min(bus, _ll_cap(intra, nodes)) if protocol == "LL" else bus


def _allreduce_latency(algorithm: str, protocol: str, k: int, nodes: int, intra: Link, inter: Link | None) -> float:
    if algorithm == "ring":
        return _ring_latency(2, protocol, k, nodes, intra, inter)
    base = BASE_LATENCY[algorithm][protocol]
    per_node = k // nodes
    levels = int(math.floor(math.log2(nodes)))
    inter_hop = _hop(inter, algorithm if per_node > 1 else "tree", protocol) if nodes > 1 else 0.0
    if algorithm == "tree":
        return base + 2 * ((per_node - 1) * _hop(intra, "tree", protocol) + levels * inter_hop)
    if algorithm == "nvls":
        return _hop(intra, "nvls", protocol)
    return base + _hop(intra, "nvls_tree", protocol) + 2 * levels * inter_hop  # nvls_tree


def _allreduce_bandwidth(
    algorithm: str, protocol: str, k: int, nodes: int, intra: Link, inter: Link | None, nics: int
) -> float:
    """Algorithm bandwidth (bytes of message per second), 0 where the pair cannot run; ``k > 1``."""
    if algorithm in ("nvls", "nvls_tree"):
        if protocol != "Simple" or intra.in_network_efficiency == 0:
            return 0.0
        if (algorithm == "nvls") != (nodes == 1):  # NVLS inside one node; NVLS-tree across nodes
            return 0.0
        c = _NVLS_CHANNELS
        bus = 2 * intra.in_network_efficiency * (c - 1) * intra.nccl_bandwidth / (c + 1)
        if nodes > 1:
            bus = min(bus, (2 if nodes <= 2 else 1) * nics * inter.nccl_bandwidth)
        return bus * k / (2 * (k - 1))
    if algorithm == "ring":
        return _ring_bus(protocol, intra, inter, nodes, nics) * k / (2 * (k - 1))
    bus = _bus_bandwidth(intra, inter, nodes, nics)
    share = _TREE_LL128_MULTINODE if (protocol == "LL128" and nodes > 1) else _TREE_SHARE[protocol]
    bus = bus * share
    if protocol == "LL":
        bus = min(bus, _ll_cap(intra, nodes))
    return 0.5 * bus


def allreduce_cost(
    message_bytes: Number,
    devices: int,
    link: Link | str,
    algorithm: str = "ring",
    protocol: str = "Simple",
    nodes: int = 1,
    inter_link: Link | str | None = None,
    nics_per_node: int | None = None,
) -> Cost:
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
    _check_algorithms((algorithm,))
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    n = _checks.nonnegative("message_bytes", message_bytes)
    return _pair_cost(n, algorithm, protocol, *_topology(devices, nodes, link, inter_link, nics_per_node))


def _check_algorithms(algorithms: tuple[str, ...]) -> None:
    for algorithm in algorithms:
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")


def _pair_cost(
    n: np.ndarray, algorithm: str, protocol: str, k: int, nodes: int, intra: Link, inter: Link | None, nics: int
) -> Cost:
    """:func:`allreduce_cost` once its arguments are checked (``_topology``'s tuple)."""
    if k == 1:
        return Cost(algorithm, protocol, 0.0, math.inf, _checks.result(np.zeros_like(n)))
    bandwidth = _allreduce_bandwidth(algorithm, protocol, k, nodes, intra, inter, nics)
    latency = _allreduce_latency(algorithm, protocol, k, nodes, intra, inter)
    time = np.full_like(n, np.inf) if bandwidth == 0 else latency + n / bandwidth
    return Cost(algorithm, protocol, latency, bandwidth, _checks.result(time))


def tune_allreduce(
    message_bytes: Number,
    devices: int,
    link: Link | str,
    nodes: int = 1,
    inter_link: Link | str | None = None,
    nics_per_node: int | None = None,
    algorithms: tuple[str, ...] = ALGORITHMS,
) -> Choice:
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
    _check_algorithms(tuple(algorithms))
    topology = _topology(devices, nodes, link, inter_link, nics_per_node)
    costs = {(a, p): _pair_cost(n, a, p, *topology) for a in algorithms for p in PROTOCOLS}
    pairs = list(costs)
    table = np.stack([np.broadcast_to(np.asarray(costs[pair].time, dtype=float), n.shape) for pair in pairs])
    best = np.argmin(table, axis=0)  # argmin keeps the first of equal times
    algorithm = np.array([pairs[i][0] for i in best.ravel()]).reshape(best.shape)
    protocol = np.array([pairs[i][1] for i in best.ravel()]).reshape(best.shape)
    time = np.take_along_axis(table, best[None], axis=0)[0]
    latency = np.array([costs[pairs[i]].latency for i in best.ravel()]).reshape(best.shape)
    if n.ndim == 0:
        return Choice(str(algorithm), str(protocol), float(time), float(latency), costs)
    return Choice(algorithm, protocol, time, latency, costs)
