"""Collectives: how many bytes each device sends, how long it takes, and a ring all-reduce.

Introduced in chapter 5 (collectives). ``n`` is the message size in bytes as
nccl-tests defines it (the full array being reduced or gathered), ``K`` the
number of devices. A ring all-reduce sends ``2 (K - 1) / K * n`` from every
device; an all-gather, a reduce-scatter and an all-to-all ``(K - 1) / K * n``:

>>> from lib.units import MB
>>> allreduce_bytes(4 * MB, 4) / MB
6.0

Two time models sit side by side. The per-collective form ``l + V / B``
charges one startup for the whole collective; the ring form charges
``2 (K - 1)`` steps of ``alpha + n / (K B)`` each:

>>> from lib.units import GB, s, us
>>> round(collective_time("allreduce", 4 * MB, 4, 5 * us, 100 * GB / s) / us, 1)
65.0
>>> round(ring_allreduce_time(4 * MB, 4, 5 * us, 100 * GB / s) / us, 1)
90.0

:func:`ring_allreduce` really moves numpy chunks between simulated devices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from lib import _checks

__all__ = [
    "KINDS",
    "allreduce_bytes",
    "allgather_bytes",
    "reduce_scatter_bytes",
    "all_to_all_bytes",
    "bytes_sent",
    "busbw_factor",
    "algorithm_bandwidth",
    "bus_bandwidth",
    "collective_time",
    "ring_allreduce_time",
    "crossover_message_bytes",
    "Transfer",
    "RingRun",
    "simulate_ring_allreduce",
    "ring_allreduce",
    "chunk_contributions",
]

Number = Any  # a float or a numpy array of floats


def _kind(kind: str) -> str:
    name = str(kind).lower().replace("-", "").replace("_", "").replace(" ", "")
    if name not in KINDS:
        raise ValueError(f"kind must be one of {sorted(KINDS)}, got {kind!r}")
    return name


def _busbw_factor(kind: str, k: np.ndarray) -> np.ndarray:
    """nccl-tests' busbw factor (1 for broadcast and reduce, whatever ``K``)."""
    name = _kind(kind)
    if name == "allreduce":
        return 2 * (k - 1) / k
    if name in ("allgather", "reducescatter", "alltoall"):
        return (k - 1) / k
    return np.ones_like(k)  # broadcast, reduce


def _fraction_sent(kind: str, k: np.ndarray) -> np.ndarray:
    """Share of ``n`` each device sends: the busbw factor, but 0 for one device."""
    return np.where(k > 1, _busbw_factor(kind, k), 0.0)


#: Collective names accepted by :func:`bus_bandwidth` (``"all-reduce"``,
#: ``"all_reduce"`` and ``"AllReduce"`` all mean ``"allreduce"``).
KINDS = frozenset({"allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce"})


def bytes_sent(kind: str, message_bytes: Number, devices: Number) -> float | np.ndarray:
    """Bytes each device sends in a bandwidth-optimal ``kind`` of ``message_bytes``.

    Zero for one device, whatever the kind: there is nobody to send to.

    >>> bytes_sent("all-gather", 800, 8)
    700.0
    >>> bytes_sent("broadcast", 800, 8), bytes_sent("broadcast", 800, 1)
    (800.0, 0.0)
    """
    n = _checks.nonnegative("message_bytes", message_bytes)
    k = _checks.count("devices", devices, minimum=1)
    return _checks.result(_fraction_sent(kind, k) * n)


def allreduce_bytes(message_bytes: Number, devices: Number) -> float | np.ndarray:
    """Ring all-reduce: ``2 (K - 1) / K * n`` bytes sent by each device.

    Half in the reduce-scatter, half in the all-gather; it approaches ``2 n``
    as ``K`` grows and is zero for one device.

    >>> allreduce_bytes(1000, [1, 2, 4, 8]).tolist()
    [0.0, 1000.0, 1500.0, 1750.0]
    """
    return bytes_sent("allreduce", message_bytes, devices)


def allgather_bytes(message_bytes: Number, devices: Number) -> float | np.ndarray:
    """All-gather of a result of ``n`` bytes: ``(K - 1) / K * n`` sent per device.

    >>> allgather_bytes(1000, 4)
    750.0
    """
    return bytes_sent("allgather", message_bytes, devices)


def reduce_scatter_bytes(message_bytes: Number, devices: Number) -> float | np.ndarray:
    """Reduce-scatter of an input of ``n`` bytes: ``(K - 1) / K * n`` sent per device.

    >>> reduce_scatter_bytes(1000, 4)
    750.0
    """
    return bytes_sent("reducescatter", message_bytes, devices)


def all_to_all_bytes(message_bytes: Number, devices: Number) -> float | np.ndarray:
    """All-to-all of ``n`` bytes per device: ``(K - 1) / K * n`` leave each device.

    >>> all_to_all_bytes(1000, 4)
    750.0
    """
    return bytes_sent("alltoall", message_bytes, devices)


def busbw_factor(kind: str, devices: Number) -> float | np.ndarray:
    """nccl-tests' factor from algorithm bandwidth to bus bandwidth.

    ``2 (K - 1) / K`` for all-reduce; ``(K - 1) / K`` for all-gather,
    reduce-scatter and all-to-all; ``1`` for broadcast and reduce. Kept
    exactly as nccl-tests defines it, so broadcast and reduce keep ``1`` even
    for one device, where :func:`bytes_sent` is 0.

    >>> busbw_factor("allreduce", 8), busbw_factor("broadcast", 8)
    (1.75, 1.0)
    """
    k = _checks.count("devices", devices, minimum=1)
    return _checks.result(_busbw_factor(kind, k))


def algorithm_bandwidth(message_bytes: Number, seconds: Number) -> float | np.ndarray:
    """``algbw = n / t``: message size over the time the collective took.

    >>> algorithm_bandwidth(1e9, 0.5)
    2000000000.0
    """
    n = _checks.nonnegative("message_bytes", message_bytes)
    t = _checks.positive("seconds", seconds)
    return _checks.result(n / t)


def bus_bandwidth(kind: str, message_bytes: Number, seconds: Number, devices: Number) -> float | np.ndarray:
    """``busbw = algbw * factor``, comparable with a link's rated speed.

    >>> from lib.units import GB, s
    >>> bus_bandwidth("allreduce", 1 * GB, 0.01, 8) / (GB / s)
    175.0
    """
    return _checks.result(np.asarray(algorithm_bandwidth(message_bytes, seconds)) *
                          np.asarray(busbw_factor(kind, devices)))


def collective_time(kind: str, message_bytes: Number, devices: Number, latency: Number,
                    bandwidth: Number) -> float | np.ndarray:
    """Per-collective model: ``l + V / B`` with ``V`` the bytes each device sends.

    One startup ``latency`` for the whole collective. Zero for one device
    (nothing to exchange).

    >>> from lib.units import GB, KB, s, us
    >>> round(collective_time("allreduce", 32 * KB, 4, 5 * us, 400 * GB / s) / us, 3)
    5.12
    """
    k = _checks.count("devices", devices, minimum=1)
    volume = np.asarray(bytes_sent(kind, message_bytes, k))
    latency_ = _checks.nonnegative("latency", latency)
    bandwidth_ = _checks.positive("bandwidth", bandwidth, allow_inf=True)
    return _checks.result(np.where(k > 1, latency_ + volume / bandwidth_, 0.0))


def ring_allreduce_time(message_bytes: Number, devices: Number, alpha: Number,
                        bandwidth: Number) -> float | np.ndarray:
    """Ring model: ``2 (K - 1)`` steps, each ``alpha + n / (K B)``.

    Same bytes as the per-collective form, but a startup on every step.

    >>> from lib.units import GB, KB, s, us
    >>> round(ring_allreduce_time(32 * KB, 4, 5 * us, 400 * GB / s) / us, 3)
    30.12
    """
    n = _checks.nonnegative("message_bytes", message_bytes)
    k = _checks.count("devices", devices, minimum=1)
    alpha_ = _checks.nonnegative("alpha", alpha)
    bandwidth_ = _checks.positive("bandwidth", bandwidth, allow_inf=True)
    return _checks.result(2 * (k - 1) * (alpha_ + n / (k * bandwidth_)))


def crossover_message_bytes(latency: Number, bandwidth: Number, devices: Number, kind: str = "allreduce",
                            form: str = "collective") -> float | np.ndarray:
    """Message size at which the startup and transfer terms are equal.

    ``form="collective"``: ``l = V(n) / B``, so ``n = l B / factor``.
    ``form="ring"`` (all-reduce only): ``alpha = n / (K B)``, so ``n = alpha K B``.
    Below it the startup dominates, above it the bytes do. Infinite for one
    device (nothing is sent). Zero when ``latency`` is 0, even on an ideal
    link (infinite ``bandwidth``): with no startup the bytes always dominate.

    >>> from lib.units import GB, KB, s, us
    >>> round(crossover_message_bytes(5 * us, 400 * GB / s, 4) / KB, 1)
    1333.3
    >>> round(crossover_message_bytes(5 * us, 400 * GB / s, 4, form="ring") / KB, 1)
    8000.0
    >>> crossover_message_bytes(0.0, float("inf"), 4)
    0.0
    """
    latency_ = _checks.nonnegative("latency", latency)
    bandwidth_ = _checks.positive("bandwidth", bandwidth, allow_inf=True)
    k = _checks.count("devices", devices, minimum=1)
    # l B, taken as 0 when l = 0 so that an ideal link (B = inf) gives 0, not 0 * inf = NaN.
    startup_bytes = latency_ * np.where(latency_ > 0, bandwidth_, 0.0)
    if form == "collective":
        factor = _fraction_sent(kind, k)
        size = np.where(factor > 0, startup_bytes / np.where(factor > 0, factor, 1), np.inf)
    elif form == "ring":
        if _kind(kind) != "allreduce":
            raise ValueError(f"kind must be 'allreduce' for form='ring', got {kind!r}")
        size = np.where(k > 1, startup_bytes * k, np.inf)
    else:
        raise ValueError(f"form must be 'collective' or 'ring', got {form!r}")
    return _checks.result(size)


@dataclass(frozen=True)
class Transfer:
    """One chunk sent from one simulated device to the next during a ring all-reduce.

    ``step`` counts from 0 over both phases; ``phase`` is ``"reduce-scatter"``
    or ``"all-gather"``; ``chunk`` indexes the K chunks of the array.
    """

    step: int
    phase: str
    sender: int
    receiver: int
    chunk: int
    nbytes: int


@dataclass(frozen=True)
class RingRun:
    """Everything a simulated ring all-reduce did.

    ``results`` (one array per device), ``bytes_sent_per_device`` (int array)
    and ``transfers``: the record of who sent which chunk at which step.
    """

    results: list
    bytes_sent_per_device: np.ndarray
    transfers: tuple

    @property
    def steps(self) -> int:
        """Number of ring steps, ``2 (K - 1)``."""
        return 1 + max((t.step for t in self.transfers), default=-1)


def simulate_ring_allreduce(arrays: Sequence[Any]) -> RingRun:
    """Sum ``arrays`` (one per device) with a ring, recording every transfer.

    The flattened array is cut into ``K`` chunks (``numpy.array_split``, so
    any length works). Reduce-scatter: in step ``s`` device ``i`` sends chunk
    ``(i - s) mod K`` to device ``i + 1``, which adds it to its own copy;
    after ``K - 1`` steps device ``i`` owns the finished chunk ``(i + 1) mod K``.
    All-gather: in step ``s`` device ``i`` forwards chunk ``(i + 1 - s) mod K``,
    which the receiver stores. All devices send at once in each step.

    >>> run = simulate_ring_allreduce([[1, 2, 3], [10, 20, 30], [100, 200, 300]])
    >>> [r.tolist() for r in run.results]
    [[111, 222, 333], [111, 222, 333], [111, 222, 333]]
    >>> run.steps, run.transfers[0]
    (4, Transfer(step=0, phase='reduce-scatter', sender=0, receiver=1, chunk=0, nbytes=8))
    """
    if isinstance(arrays, np.ndarray) and arrays.ndim == 0:
        raise ValueError(f"arrays must be a sequence of arrays, got {arrays!r}")
    buffers = [np.asarray(a) for a in arrays]
    if not buffers:
        raise ValueError("arrays must hold at least one array, got an empty sequence")
    shape, dtype = buffers[0].shape, np.result_type(*buffers)
    for i, b in enumerate(buffers):
        if b.shape != shape:
            raise ValueError(f"arrays must all have shape {shape}, got shape {b.shape} for device {i}")
        if not np.issubdtype(b.dtype, np.number) or (np.issubdtype(b.dtype, np.floating) and np.isnan(b).any()):
            raise ValueError(f"arrays must be numeric without NaN, got {b.dtype} for device {i}")
    k = len(buffers)
    chunks = [np.array_split(b.astype(dtype).ravel(), k) for b in buffers]
    sent = np.zeros(k, dtype=np.int64)
    transfers: list[Transfer] = []
    step = 0
    for phase in ("reduce-scatter", "all-gather"):
        for s in range(k - 1):
            offset = -s if phase == "reduce-scatter" else 1 - s
            outgoing = [(i, (i + offset) % k, chunks[i][(i + offset) % k].copy()) for i in range(k)]
            for sender, c, payload in outgoing:
                receiver = (sender + 1) % k
                if phase == "reduce-scatter":
                    chunks[receiver][c] = chunks[receiver][c] + payload
                else:
                    chunks[receiver][c] = payload
                sent[sender] += payload.nbytes
                transfers.append(Transfer(step, phase, sender, receiver, c, int(payload.nbytes)))
            step += 1
    results = [np.concatenate(c).reshape(shape) for c in chunks]
    return RingRun(results=results, bytes_sent_per_device=sent, transfers=tuple(transfers))


def ring_allreduce(arrays: Sequence[Any]) -> tuple[list, np.ndarray]:
    """Ring all-reduce of one array per simulated device.

    Returns ``(results, bytes_sent_per_device)``: every device's copy of the
    sum and how many bytes each device sent (they total ``2 (K - 1) n``).
    See :func:`simulate_ring_allreduce` for the step-by-step record.

    >>> results, sent = ring_allreduce([np.ones(8), 2 * np.ones(8)])
    >>> results[1].tolist() == [3.0] * 8, sent.tolist()
    (True, [64, 64])
    """
    run = simulate_ring_allreduce(arrays)
    return run.results, run.bytes_sent_per_device


def chunk_contributions(run: RingRun, devices: int) -> np.ndarray:
    """How many devices' inputs each chunk on each device holds, after each step.

    Rebuilt from ``run.transfers`` alone: start with 1 everywhere; a
    reduce-scatter transfer adds the sender's count to the receiver's, an
    all-gather transfer copies it. Returns shape ``(steps + 1, K, K)``
    indexed ``[step, device, chunk]``.

    ``devices`` must be the number of devices in ``run``.

    >>> run = simulate_ring_allreduce([np.zeros(4)] * 4)
    >>> int(chunk_contributions(run, 4)[-1].min())
    4
    """
    k = int(_checks.count("devices", devices, minimum=1))
    if k != len(run.results):
        raise ValueError(f"devices must equal the number of devices in run ({len(run.results)}), got {k}")
    counts = np.ones((run.steps + 1, k, k), dtype=int)
    for step in range(run.steps):
        before = counts[step].copy()
        counts[step + 1] = before
        for t in run.transfers:
            if t.step != step:
                continue
            if t.phase == "reduce-scatter":
                counts[step + 1, t.receiver, t.chunk] = before[t.receiver, t.chunk] + before[t.sender, t.chunk]
            else:
                counts[step + 1, t.receiver, t.chunk] = before[t.sender, t.chunk]
    return counts
