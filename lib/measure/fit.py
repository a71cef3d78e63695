"""Fitting straight lines to timings: the link ``t(n) = l + V(n) / B`` and the shard ``s + C / (K eta_inf)``.

Introduced in chapter 10 (measure it). ``n`` is the message size in bytes as
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

:func:`fit_efficiency` fits the same kind of line to a shard's time against
the whole layer's: a fixed cost per shard plus a share of the work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks, collectives

__all__ = ["LinkFit", "fit_link", "EfficiencyFit", "fit_efficiency", "PUBLISHED_NCCL"]

Number = Any  # a float or a numpy array of floats


@dataclass(frozen=True)
class LinkFit:
    """A fitted link: per-collective ``latency`` (s) and ``bus_bandwidth`` (B/s).

    ``residuals`` holds ``(fitted - measured) / measured`` for every point the
    fit used, so a reader sees where the straight line misses. ``constrained``
    is True when the times did not grow with the size, so the fit held the
    per-byte time at its physical bound, zero (``bus_bandwidth`` infinite):
    the sweep was too noisy to show a bandwidth.

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
    constrained: bool = False

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
        return collectives.collective_time(self.kind, message_bytes, self.devices, self.latency, self.bus_bandwidth)

    def as_dict(self) -> dict[str, Any]:
        """The fit as plain JSON-ready values (SI units in the key names; an infinite bandwidth is ``None``).

        >>> LinkFit(latency=1e-3, bus_bandwidth=float("inf"), devices=2, constrained=True).as_dict()["bus_bandwidth_Bps"] is None
        True
        """
        bandwidth = self.bus_bandwidth if np.isfinite(self.bus_bandwidth) else None
        return {
            "latency_s": self.latency,
            "bus_bandwidth_Bps": bandwidth,
            "constrained": self.constrained,
            "devices": self.devices,
            "kind": self.kind,
            "residuals": list(self.residuals),
        }


def fit_link(
    message_bytes: Number, seconds: Number, devices: int, kind: str = "allreduce", constrain: bool = False
) -> LinkFit:
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
    constrain : bool
        What to do when the times do not grow with the size (a noisy sweep:
        the small message came out slower than the large one). False raises a
        ValueError; True fits under the physical constraint that a byte
        costs no negative time: the per-byte time is held at zero, the
        bandwidth is infinite and the fit says ``constrained=True``. The
        bootstrap and :func:`lib.measure.analyse` use True, so that one noisy
        resample never ends a run.

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
    >>> fit_link([4e3, 1e6], [2e-3, 1e-3], devices=2)
    Traceback (most recent call last):
    ...
    ValueError: seconds must grow with message_bytes to fit a bandwidth; got slope -1.004e-09 s/byte (constrain=True holds it at 0)
    >>> noisy = fit_link([4e3, 1e6], [2e-3, 1e-3], devices=2, constrain=True)
    >>> noisy.constrained, noisy.bus_bandwidth, round(noisy.latency * 1e3, 4)
    (True, inf, 1.2)
    """
    sizes = _checks.nonnegative("message_bytes", message_bytes).ravel()
    times = _checks.positive("seconds", seconds).ravel()
    _checks.count("devices", devices, minimum=2)
    if sizes.shape != times.shape:
        raise ValueError(f"message_bytes and seconds must have the same length, got {sizes.size} and {times.size}")
    if np.unique(sizes).size < 2:
        raise ValueError(f"message_bytes must hold at least two different sizes, got {np.unique(sizes).tolist()}")
    volume = np.asarray(collectives.bytes_sent(kind, sizes, devices), dtype=float)
    latency, per_byte = _relative_line(volume, times)
    if per_byte > 0:
        return LinkFit(
            latency=latency,
            bus_bandwidth=float(1.0 / per_byte),
            devices=int(devices),
            kind=str(kind),
            residuals=_residuals(latency + volume * per_byte, times),
        )
    if not constrain:
        raise ValueError(
            "seconds must grow with message_bytes to fit a bandwidth; "
            f"got slope {per_byte:.4g} s/byte (constrain=True holds it at 0)"
        )
    flat = _flat_line(times)
    return LinkFit(
        latency=flat,
        bus_bandwidth=np.inf,
        devices=int(devices),
        kind=str(kind),
        residuals=_residuals(np.full_like(times, flat), times),
        constrained=True,
    )


def _relative_line(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Intercept ``a >= 0`` and slope ``b`` of ``y = a + b x``, least squares on relative errors.

    Each point is weighted by ``1 / y``; a negative intercept is clamped to
    zero and the slope refitted through the origin.

    >>> [round(v, 9) for v in _relative_line(np.array([1.0, 3.0]), np.array([3.0, 7.0]))]
    [1.0, 2.0]
    """
    weight = 1.0 / y
    (intercept, slope), *_ = np.linalg.lstsq(np.column_stack([weight, x * weight]), np.ones_like(y), rcond=None)
    if intercept < 0:
        intercept = 0.0
        slope = np.sum(x * weight**2 * y) / np.sum((x * weight) ** 2)
    return float(intercept), float(slope)


def _flat_line(y: np.ndarray) -> float:
    """The intercept of ``y = a`` (slope held at 0), least squares on relative errors: ``sum(1/y) / sum(1/y^2)``.

    >>> round(_flat_line(np.array([1.0, 2.0])), 6)
    1.2
    """
    return float(np.sum(1.0 / y) / np.sum(1.0 / y**2))


def _residuals(fitted: np.ndarray, measured: np.ndarray) -> tuple[float, ...]:
    return tuple(float(r) for r in (fitted - measured) / measured)


@dataclass(frozen=True)
class EfficiencyFit:
    """A shard's time as a fixed cost plus a share of the work: ``T_shard = s + C / (K eta_inf)``.

    ``overhead`` is ``s`` (seconds a shard pays whatever its size: launching
    its operations, the ranks' skew after the barrier), ``asymptote`` is
    ``eta_inf``, the efficiency that large layers approach, and ``devices``
    is ``K``. The efficiency at a one-rank time ``C`` follows as
    ``eta(C) = C / (K T_shard(C))``: low for small layers, where ``s``
    weighs, and close to ``eta_inf`` for large ones. ``residuals`` holds
    ``(fitted - measured) / measured`` for every shard time the fit used.
    ``constrained`` is True when the shard times did not grow with the whole
    and the fit held the per-second slope at zero (``asymptote`` infinite):
    the calibrations were too noisy to show how a shard scales.

    >>> from lib.units import ms
    >>> fit = EfficiencyFit(overhead=0.1 * ms, asymptote=1.0, devices=2)
    >>> round(fit.shard_time(1 * ms) / ms, 6), round(float(fit.efficiency(1 * ms)), 6)
    (0.6, 0.833333)
    """

    overhead: float
    asymptote: float
    devices: int
    residuals: tuple[float, ...] = ()
    constrained: bool = False

    def shard_time(self, one_s: Number) -> float | np.ndarray:
        """``s + C / (K eta_inf)``: seconds of one ``1/K`` shard of a layer that takes ``one_s`` whole."""
        work = _checks.positive("one_s", one_s)
        return _checks.result(self.overhead + work / (self.devices * self.asymptote))

    def efficiency(self, one_s: Number) -> float | np.ndarray:
        """``eta(C) = C / (K T_shard(C))`` for a layer that takes ``one_s`` on one rank.

        >>> EfficiencyFit(overhead=0.0, asymptote=0.9, devices=2).efficiency([1.0, 2.0])
        array([0.9, 0.9])
        """
        work = _checks.positive("one_s", one_s)
        return _checks.result(work / (self.devices * self.shard_time(work)))

    def as_dict(self) -> dict[str, Any]:
        """The fit as plain JSON-ready values (an infinite asymptote is ``None``)."""
        asymptote = self.asymptote if np.isfinite(self.asymptote) else None
        return {
            "overhead_s": self.overhead,
            "asymptote": asymptote,
            "constrained": self.constrained,
            "devices": self.devices,
            "residuals": list(self.residuals),
        }


def fit_efficiency(whole_s: Number, shard_s: Number, devices: int, constrain: bool = False) -> EfficiencyFit:
    """Fit ``T_shard = s + T_whole / (K eta_inf)`` to shard and whole timings at several sizes.

    Parameters
    ----------
    whole_s : array of float
        The whole layer's time on one rank at each size, in seconds.
    shard_s : array of float
        The time of a ``1/K`` shard at the same sizes (all ranks at once, no
        communication), in seconds.
    devices : int
        ``K`` (at least 1).
    constrain : bool
        As in :func:`fit_link`: shard times that do not grow with the whole
        raise a ValueError, or with True get the slope held at zero (an
        infinite ``asymptote``, ``constrained=True``).

    Returns
    -------
    EfficiencyFit
        ``overhead`` ``s`` (seconds, never negative) and ``asymptote``
        ``eta_inf``; the fit minimises relative errors, like :func:`fit_link`.

    Raises
    ------
    ValueError
        On mismatched lengths, fewer than two different whole times, bad
        values, or shard times that do not grow with the whole.

    Two points fix the line: a shard of a 1 ms layer takes 0.6 ms and of a
    3 ms layer 1.6 ms, so each extra millisecond of work adds 0.5 ms
    (``eta_inf = 1`` for ``K = 2``) on top of 0.1 ms:

    >>> from lib.units import ms
    >>> fit = fit_efficiency([1 * ms, 3 * ms], [0.6 * ms, 1.6 * ms], devices=2)
    >>> round(fit.overhead / ms, 9), round(fit.asymptote, 9)
    (0.1, 1.0)
    >>> fit_efficiency([1 * ms, 1 * ms], [0.6 * ms, 0.7 * ms], devices=2)
    Traceback (most recent call last):
    ...
    ValueError: whole_s must hold at least two different times, got [0.001]
    """
    whole = _checks.positive("whole_s", whole_s).ravel()
    shard = _checks.positive("shard_s", shard_s).ravel()
    k = int(_checks.scalar_count("devices", devices, minimum=1))
    if whole.shape != shard.shape:
        raise ValueError(f"whole_s and shard_s must have the same length, got {whole.size} and {shard.size}")
    if np.unique(whole).size < 2:
        raise ValueError(f"whole_s must hold at least two different times, got {np.unique(whole).tolist()}")
    overhead, per_second = _relative_line(whole, shard)
    if per_second > 0:
        return EfficiencyFit(
            overhead=overhead,
            asymptote=float(1.0 / (k * per_second)),
            devices=k,
            residuals=_residuals(overhead + whole * per_second, shard),
        )
    if not constrain:
        raise ValueError(
            f"shard_s must grow with whole_s to fit an efficiency; got slope {per_second:.4g} "
            "(constrain=True holds it at 0)"
        )
    flat = _flat_line(shard)
    return EfficiencyFit(
        overhead=flat,
        asymptote=np.inf,
        devices=k,
        residuals=_residuals(np.full_like(shard, flat), shard),
        constrained=True,
    )


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
