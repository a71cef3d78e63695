"""How many bytes each device sends in a collective, and nccl-tests' bandwidth conventions.

Introduced in chapter 5 (collectives). ``n`` is the message size in bytes as
nccl-tests defines it (the full array being reduced or gathered), ``K`` the
number of devices. A ring all-reduce sends ``2 (K - 1) / K * n`` from every
device; an all-gather, a reduce-scatter and an all-to-all ``(K - 1) / K * n``:

>>> from lib.units import MB
>>> allreduce_bytes(4 * MB, 4) / MB
6.0
"""

from __future__ import annotations

from typing import Any

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
    "fraction_sent",
    "kind_name",
]

Number = Any  # a float or a numpy array of floats


def kind_name(kind: str) -> str:
    """A collective's name in the one spelling :data:`KINDS` uses.

    >>> kind_name("All-Reduce"), kind_name("reduce_scatter")
    ('allreduce', 'reducescatter')
    """
    name = str(kind).lower().replace("-", "").replace("_", "").replace(" ", "")
    if name not in KINDS:
        raise ValueError(f"kind must be one of {sorted(KINDS)}, got {kind!r}")
    return name


def _busbw_factor(kind: str, k: np.ndarray) -> np.ndarray:
    """nccl-tests' busbw factor (1 for broadcast and reduce, whatever ``K``)."""
    name = kind_name(kind)
    if name == "allreduce":
        return 2 * (k - 1) / k
    if name in ("allgather", "reducescatter", "alltoall"):
        return (k - 1) / k
    return np.ones_like(k)  # broadcast, reduce


def fraction_sent(kind: str, k: np.ndarray) -> np.ndarray:
    """Share of ``n`` each device sends: the busbw factor, but 0 for one device.

    >>> fraction_sent("allreduce", np.array([1.0, 2.0, 8.0])).tolist()
    [0.0, 1.0, 1.75]
    """
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
    return _checks.result(fraction_sent(kind, k) * n)


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
    return _checks.result(
        np.asarray(algorithm_bandwidth(message_bytes, seconds)) * np.asarray(busbw_factor(kind, devices))
    )
