"""From calibrations to a prediction: the time budget filled with measured numbers.

Introduced in chapter 9 (measure it). The split MLP is one phase of the
book's time budget (chapter 2): ``C`` is the whole layer's time on one rank,
``eta`` the measured efficiency of a 1/K shard, and the one all-reduce costs
``l + V / B`` from the fitted link. :func:`predict_split` returns the
``lib.budget.Phase`` of every sweep point; :func:`break_even_hidden` finds
where a curve of split times crosses the single-rank times.

>>> from lib.measure.fit import LinkFit
>>> link = LinkFit(latency=1e-3, bus_bandwidth=1e9, devices=2)
>>> phase = predict_split(link, message_bytes=0, one_s=[1e-3, 8e-3], efficiency=[1.0, 1.0])
>>> [round(float(t) * 1e3, 3) for t in phase.split_time]
[1.5, 5.0]
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from lib import _checks
from lib.budget import Phase
from lib.measure.fit import LinkFit

__all__ = ["efficiency", "predict_split", "break_even_hidden", "step_gap"]

Number = Any  # a float or a numpy array of floats


def efficiency(whole_s: Number, shard_s: Number, devices: int) -> float | np.ndarray:
    """``eta = T_whole / (K T_shard)``: 1 when a 1/K shard takes exactly 1/K of the time.

    Values above 1 (a shard that fits a faster cache) are returned as they
    are; :func:`predict_split` caps them at 1 because the book's budget
    defines ``eta`` in (0, 1].

    >>> efficiency(10.0, 6.25, 2)
    0.8
    """
    whole = _checks.positive("whole_s", whole_s)
    part = _checks.positive("shard_s", shard_s)
    k = _checks.count("devices", devices, minimum=1)
    return _checks.result(whole / (k * part))


def predict_split(link: LinkFit, message_bytes: Number, one_s: Number, efficiency: Number,
                  serial_s: Number = 0.0, communication_s: Number | None = None) -> Phase:
    """The budget of the split layer: ``T2 = S + C / (K eta) + l + V / B``.

    With ``communication_s`` the all-reduce costs that measured time instead
    of the fitted ``l + V / B`` (``message_bytes`` is then unused).

    Parameters
    ----------
    link : LinkFit
        Calibrated latency and bus bandwidth (its ``devices`` is ``K``).
    message_bytes : float
        Size of the all-reduced output, in bytes.
    one_s : float or array
        Measured ``T1`` on one rank, in seconds; ``C = T1 - S``.
    efficiency : float or array
        Measured ``eta`` per point; values above 1 are capped at 1.
    serial_s : float or array
        ``S``, seconds that the split does not shorten (default 0).
    communication_s : float or array, optional
        Measured seconds of the one all-reduce per point, used as ``H``
        in place of the link fit's ``l + V / B``.

    Raises
    ------
    ValueError
        For bad values, or a ``serial_s`` larger than ``one_s`` (``S`` is
        part of ``T1``).

    >>> link = LinkFit(latency=0.0, bus_bandwidth=1.0, devices=2)
    >>> predict_split(link, 0, one_s=1.0, efficiency=1.0, serial_s=2.0)
    Traceback (most recent call last):
    ...
    ValueError: serial_s must be <= one_s, got serial_s 2.0 > one_s 1.0
    >>> float(predict_split(link, 0, one_s=4.0, efficiency=1.0, communication_s=0.5).split_time)
    2.5
    """
    one = _checks.positive("one_s", one_s)
    eta = np.minimum(_checks.positive("efficiency", efficiency), 1.0)
    serial = _checks.nonnegative("serial_s", serial_s)
    over = np.broadcast_arrays(serial, one)
    if (over[0] > over[1]).any():
        first = int(np.argmax(over[0] > over[1]))
        raise ValueError(f"serial_s must be <= one_s, got serial_s {float(over[0].flat[first])!r} "
                         f"> one_s {float(over[1].flat[first])!r}")
    if communication_s is not None:
        # The measured time is the whole cost of the one all-reduce: a startup with no bytes.
        return Phase(serial=serial, divisible=one - serial, efficiency=eta, transfers=1,
                     startup=_checks.nonnegative("communication_s", communication_s), devices=link.devices)
    return Phase(serial=serial, divisible=one - serial, efficiency=eta, transfers=1,
                 startup=link.latency, transfer_bytes=np.asarray(link.transfer_bytes(message_bytes)),
                 bandwidth=link.bus_bandwidth, devices=link.devices)


def _increasing(hidden: Sequence[float], minimum: int) -> np.ndarray:
    """``hidden`` as a flat positive array of at least ``minimum`` strictly increasing sizes."""
    h = _checks.positive("hidden", hidden).ravel()
    if h.size < minimum or (np.diff(h) <= 0).any():
        raise ValueError(f"hidden must be {minimum} or more strictly increasing sizes, got {h.tolist()}")
    return h


def break_even_hidden(hidden: Sequence[float], one_s: Sequence[float], split_s: Sequence[float]) -> float | None:
    """The hidden size past which the split stays faster, interpolated in log size.

    ``hidden`` must be strictly increasing (a sweep from small to large);
    ``one_s`` and ``split_s`` hold one time per size. Takes the first sweep
    point from which every larger size has ``split < one`` and interpolates
    the crossing of ``split - one`` between it and the point before,
    linearly in ``log(hidden)``. Returns ``hidden[0]``
    when the split wins everywhere and ``None`` when it never stays ahead.

    >>> round(break_even_hidden([100, 200, 400], [1.0, 2.0, 4.0], [2.0, 2.0, 3.0]), 6)
    200.0
    >>> break_even_hidden([100, 200], [1.0, 1.0], [2.0, 2.0]) is None
    True
    >>> break_even_hidden([200, 100], [1.0, 1.0], [2.0, 2.0])
    Traceback (most recent call last):
    ...
    ValueError: hidden must be 1 or more strictly increasing sizes, got [200.0, 100.0]
    """
    h = _increasing(hidden, minimum=1)
    one = _checks.nonnegative("one_s", one_s).ravel()
    split = _checks.nonnegative("split_s", split_s).ravel()
    if not h.size == one.size == split.size:
        raise ValueError("hidden, one_s and split_s must have the same length, "
                         f"got {h.size}, {one.size} and {split.size}")
    gap = split - one
    ahead = gap < 0
    if not ahead[-1]:
        return None
    start = int(np.flatnonzero(~ahead)[-1]) + 1 if (~ahead).any() else 0
    if start == 0:
        return float(h[0])
    lo, hi = np.log(h[start - 1]), np.log(h[start])
    fraction = gap[start - 1] / (gap[start - 1] - gap[start])
    return float(np.exp(lo + fraction * (hi - lo)))


def step_gap(hidden: Sequence[float], first: float | None, second: float | None) -> float:
    """How many sweep steps apart two break-even sizes are (log spacing).

    One step is the median ratio between neighbouring hidden sizes, so
    ``hidden`` needs at least two strictly increasing sizes. ``first`` and
    ``second`` are break-even sizes (> 0); ``None`` or ``inf`` marks a
    missing one, and the gap is then ``inf``.

    >>> step_gap([64, 128, 256, 512], 128, 512)
    2.0
    >>> step_gap([64, 128], None, 128)
    inf
    >>> step_gap([64], 64, 64)
    Traceback (most recent call last):
    ...
    ValueError: hidden must be 2 or more strictly increasing sizes, got [64.0]
    """
    h = _increasing(hidden, minimum=2)
    ends = [None if end is None else float(_checks.positive(name, end, allow_inf=True))
            for name, end in (("first", first), ("second", second))]
    if None in ends or math.inf in ends:
        return math.inf
    first, second = ends
    step = float(np.median(np.diff(np.log(h))))
    return float(abs(np.log(first) - np.log(second)) / step)
