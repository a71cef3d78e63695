"""Fitting a link model ``t(n) = l + V(n) / B`` to measured collective timings.

Introduced in chapter 9 (measure it). ``n`` is the message size in bytes as
nccl-tests counts it, ``V(n)`` the bytes each device sends for that
collective (``2 (K - 1) / K * n`` for an all-reduce, from
:func:`lib.collectives.bytes_sent`), ``l`` the per-collective latency and
``B`` the bus bandwidth. :func:`fit_link` finds ``l`` and ``B`` from any
table of (size, time) pairs, weighting every point by its relative error so
that microsecond and second timings count alike:

>>> from lib.units import MB, GB, s, us
>>> sizes = [1 * MB, 4 * MB, 16 * MB]
>>> times = [50 * us + allreduce / (10 * GB / s) for allreduce in (1 * MB, 4 * MB, 16 * MB)]
>>> link = fit_link(sizes, times, devices=2)
>>> round(link.latency / us, 3), round(link.bus_bandwidth / (GB / s), 3)
(50.0, 10.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks, collectives

__all__ = ["LinkFit", "fit_link", "PUBLISHED_NCCL"]

Number = Any  # a float or a numpy array of floats


@dataclass(frozen=True)
class LinkFit:
    """A fitted link: per-collective ``latency`` (s) and ``bus_bandwidth`` (B/s).

    ``residuals`` holds ``(fitted - measured) / measured`` for every point the
    fit used, so a reader sees where the straight line misses.

    >>> from lib.units import KB, us
    >>> link = LinkFit(latency=1e-4, bus_bandwidth=1e9, devices=2, kind="allreduce")
    >>> round(link.time(100 * KB) / us, 6)
    200.0
    """

    latency: float
    bus_bandwidth: float
    devices: int
    kind: str = "allreduce"
    residuals: tuple[float, ...] = ()

    def transfer_bytes(self, message_bytes: Number) -> float | np.ndarray:
        """``V(n)``: bytes each device sends for a message of ``message_bytes``.

        >>> LinkFit(latency=0.0, bus_bandwidth=1.0, devices=4).transfer_bytes(100.0)
        150.0
        """
        return collectives.bytes_sent(self.kind, message_bytes, self.devices)

    def time(self, message_bytes: Number) -> float | np.ndarray:
        """``l + V(n) / B``: the predicted seconds of one collective.

        >>> LinkFit(latency=1.0, bus_bandwidth=2.0, devices=2).time([0.0, 4.0])
        array([1., 3.])
        """
        return collectives.collective_time(self.kind, message_bytes, self.devices,
                                           self.latency, self.bus_bandwidth)

    def as_dict(self) -> dict[str, Any]:
        """The fit as plain JSON-ready values (SI units in the key names)."""
        return {"latency_s": self.latency, "bus_bandwidth_Bps": self.bus_bandwidth,
                "devices": self.devices, "kind": self.kind, "residuals": list(self.residuals)}


def fit_link(message_bytes: Number, seconds: Number, devices: int, kind: str = "allreduce") -> LinkFit:
    """Fit ``t = l + V(n) / B`` to timings of one collective over several sizes.

    Parameters
    ----------
    message_bytes : array of float
        Message sizes ``n`` in bytes (nccl-tests' "size" column), at least two
        different ones.
    seconds : array of float
        One time per size, in seconds (a median of repetitions, ideally).
    devices : int
        ``K``, the number of ranks that took part (at least 2).
    kind : str
        The collective: ``"allreduce"`` (default), ``"allgather"``,
        ``"reducescatter"``, ``"alltoall"``, ``"broadcast"`` or ``"reduce"``.

    Returns
    -------
    LinkFit
        ``latency`` (s, never negative) and ``bus_bandwidth`` (bytes/s).

    Raises
    ------
    ValueError
        On mismatched lengths, fewer than two sizes, bad values, or times that
        do not grow with size (no bandwidth can be fitted).

    The fit minimises relative errors (each point weighted by ``1 / t``); a
    negative intercept is clamped to zero and the slope refitted.

    >>> fit_link([1e6, 1e6], [1e-3, 1e-3], devices=2)
    Traceback (most recent call last):
    ...
    ValueError: message_bytes must hold at least two different sizes, got [1000000.0]
    >>> fit_link([1e3, 1e6], [1e-3, 1e-3], devices=1)
    Traceback (most recent call last):
    ...
    ValueError: devices must be >= 2, got 1
    """
    sizes = _checks.nonnegative("message_bytes", message_bytes).ravel()
    times = _checks.positive("seconds", seconds).ravel()
    _checks.count("devices", devices, minimum=2)
    if sizes.shape != times.shape:
        raise ValueError(f"message_bytes and seconds must have the same length, got {sizes.size} and {times.size}")
    if np.unique(sizes).size < 2:
        raise ValueError(f"message_bytes must hold at least two different sizes, got {np.unique(sizes).tolist()}")
    volume = np.asarray(collectives.bytes_sent(kind, sizes, devices), dtype=float)
    weight = 1.0 / times
    design = np.column_stack([weight, volume * weight])
    (latency, per_byte), *_ = np.linalg.lstsq(design, np.ones_like(times), rcond=None)
    if latency < 0:
        latency = 0.0
        per_byte = float(np.sum(volume * weight**2 * times) / np.sum((volume * weight) ** 2))
    if not per_byte > 0:
        raise ValueError("seconds must grow with message_bytes to fit a bandwidth; "
                         f"got slope {per_byte!r} s/byte")
    fitted = latency + volume * per_byte
    return LinkFit(latency=float(latency), bus_bandwidth=float(1.0 / per_byte), devices=int(devices),
                   kind=str(kind), residuals=tuple(float(r) for r in (fitted - times) / times))


#: A small published table of NCCL all-reduce timings, for fitting by hand:
#: nccl-tests ``all_reduce_perf`` between two machines with one V100 each,
#: NCCL 2.4.7 over TCP sockets (no InfiniBand), out-of-place times. Sizes in
#: bytes, times in seconds (the table printed milliseconds).
PUBLISHED_NCCL = {
    "source": "winter2019ncclsockets",
    "description": "2 x V100 (one per machine), NCCL 2.4.7 over TCP sockets, all_reduce_perf out-of-place",
    "devices": 2,
    "kind": "allreduce",
    "message_bytes": [1048576, 2097152, 4194304, 8388608, 16777216],
    "seconds": [2.059e-3, 3.047e-3, 5.074e-3, 7.145e-3, 17.616e-3],
}
