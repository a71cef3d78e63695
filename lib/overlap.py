"""Hiding communication behind computation by splitting the work into chunks.

Introduced in chapter 4. The divisible work of a split phase is cut into
``n`` equal chunks. Each device computes chunk ``i`` and then sends its
result; while chunk ``i`` travels, the device already computes chunk ``i+1``.
Every chunk still pays all ``Q`` startups, but carries only ``V / n`` bytes
per transfer:

    a = C / (K eta n)                (compute per chunk)
    b = Q (l + V / (n B))            (communication per chunk)
    T2(n) = S + a + b + (n - 1) max(a, b)

With one chunk this is the sequential split time of :mod:`lib.budget`; as
``n`` grows it approaches the overlap bound ``S + max(C/(K eta), H)`` only
if startups are free. Otherwise the ``n Q l`` of extra startups wins in the
end, and there is a best ``n``.

>>> from lib.experiment import BASE
>>> from lib.units import ms
>>> round(chunked_split_time(BASE, 1) / ms, 4), round(BASE.split_time / ms, 4)
(9.22, 9.22)
>>> round(chunked_split_time(BASE, 4) / ms, 4)
8.62
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, NamedTuple

import numpy as np

from lib import _checks
from lib.budget import Phase

__all__ = [
    "chunk_compute_time",
    "chunk_communication_time",
    "chunked_split_time",
    "best_chunks",
    "ChunkSchedule",
    "chunked_schedule",
]

Number = Any  # a float or a numpy array of floats


def _chunks(chunks: Number) -> np.ndarray:
    return _checks.count("chunks", chunks, minimum=1)


def chunk_compute_time(phase: Phase, chunks: Number) -> float | np.ndarray:
    """``a = C / (K eta n)``: one chunk of one device's share, in seconds.

    >>> from lib.experiment import BASE
    >>> from lib.units import ms
    >>> round(chunk_compute_time(BASE, 4) / ms, 6)
    1.875
    >>> chunk_compute_time(BASE, 0)
    Traceback (most recent call last):
    ...
    ValueError: chunks must be >= 1, got 0
    """
    return _checks.result(np.asarray(phase.split_compute_time) / _chunks(chunks))


def chunk_communication_time(phase: Phase, chunks: Number) -> float | np.ndarray:
    """``b = Q (l + V / (n B))``: the transfers that follow one chunk, in seconds.

    Each chunk pays every startup ``l`` again but moves a ``1/n`` share of
    the bytes, so the total over all chunks is ``H + (n - 1) Q l``.

    >>> from lib.experiment import BASE
    >>> from lib.units import ms
    >>> round(chunk_communication_time(BASE, 4) / ms, 6)
    0.32
    """
    share = phase.array("transfer_bytes") / _chunks(chunks)
    return phase.with_(transfer_bytes=share).communication_time


def chunked_split_time(phase: Phase, chunks: Number) -> float | np.ndarray:
    """``T2(n) = S + a + b + (n - 1) max(a, b)``, in seconds.

    The first chunk's compute and the last chunk's communication are always
    exposed; in between, the slower of the two lanes sets the pace.

    >>> from lib.experiment import BASE
    >>> from lib.units import GB, ms, s
    >>> slow = BASE.with_(bandwidth=1 * GB / s)
    >>> [round(chunked_split_time(slow, n) / ms, 4) for n in (1, 8)]
    [16.42, 10.6975]
    """
    n = _chunks(chunks)
    a = np.asarray(chunk_compute_time(phase, n))
    b = np.asarray(chunk_communication_time(phase, n))
    return _checks.result(phase.array("serial") + a + b + (n - 1) * np.maximum(a, b))


def best_chunks(phase: Phase) -> float | np.ndarray:
    """The whole number of chunks that makes :func:`chunked_split_time` smallest.

    Write ``X = C/(K eta)``, ``Y = Q l`` and ``Z = Q V / B``. While compute
    is the slower lane (``n <= (X - Z) / Y``) the time falls with ``n``;
    after that it is ``X/n + n Y + Z``, smallest at ``n = sqrt(X / Y)``. The
    best whole ``n`` is next to the larger of the two. Returns ``math.inf``
    where more chunks always help (free startups, and both compute and bytes
    to overlap), and 1
    where chunking cannot help at all. Ties go to the smaller count.

    >>> from lib.experiment import BASE
    >>> from lib.units import GB, s
    >>> best_chunks(BASE), best_chunks(BASE.with_(bandwidth=1 * GB / s))
    (55.0, 8.0)
    >>> best_chunks(BASE.with_(startup=0.0))
    inf
    """
    x = np.asarray(phase.split_compute_time)
    y = np.asarray(phase.with_(transfer_bytes=0.0).communication_time)  # the startups' share of H
    z = np.asarray(phase.with_(startup=0.0).communication_time)  # the bytes' share of H
    free = (y == 0) & (z > 0) & (x > 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        safe_y = np.where(y > 0, y, 1.0)
        crossing = np.where(y > 0, (x - z) / safe_y, 1.0)
        vertex = np.where(y > 0, np.sqrt(x / safe_y), 1.0)
    target = np.maximum(np.maximum(crossing, vertex), 1.0)
    # Startups so small that the best count overflows a float: more always helps.
    free = free | ~np.isfinite(target)
    target = np.where(np.isfinite(target), target, 1.0)
    low = np.floor(target)
    high = low + 1
    pick = np.where(
        np.asarray(chunked_split_time(phase, high)) < np.asarray(chunked_split_time(phase, low)),
        high,
        low,
    )
    return _checks.result(np.where(free, np.inf, pick))


class ChunkSchedule(NamedTuple):
    """When each lane of one device is busy, as ``(start, duration)`` pairs in seconds."""

    serial: tuple[float, float]
    compute: list[tuple[float, float]]
    communication: list[tuple[float, float]]
    makespan: float


def chunked_schedule(phase: Phase, chunks: int) -> ChunkSchedule:
    """Simulate one device chunk by chunk (a scalar phase only).

    Compute runs back to back after the serial part; each chunk's transfers
    start when both its compute and the previous chunk's transfers are done.
    This event-by-event simulation is independent of the closed form in
    :func:`chunked_split_time`, and agrees with it.

    >>> from lib.experiment import BASE
    >>> from lib.units import ms
    >>> plan = chunked_schedule(BASE, 2)
    >>> [round(start / ms, 2) for start, _ in plan.communication]
    [4.55, 8.3]
    >>> round(plan.makespan / ms, 2)
    8.82
    """
    n = _checks.scalar_count("chunks", chunks, minimum=1)
    for field in fields(phase):  # one phase, not a sweep
        _checks.scalar(f"phase.{field.name}", getattr(phase, field.name))
    a = float(chunk_compute_time(phase, n))
    b = float(chunk_communication_time(phase, n))
    serial = float(phase.serial)
    compute, communication = [], []
    compute_end = serial
    link_free = serial
    for _ in range(n):
        compute.append((compute_end, a))
        compute_end += a
        start = max(compute_end, link_free)
        communication.append((start, b))
        link_free = start + b
    return ChunkSchedule((0.0, serial), compute, communication, link_free)
