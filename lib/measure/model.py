"""From calibrations to a prediction: the time budget filled with measured numbers.

Introduced in chapter 10 (measure it). The split MLP is one phase of the
book's time budget (chapter 2): ``C`` is the whole layer's time on one rank,
``eta`` the measured efficiency of a 1/K shard, and the one all-reduce costs
``l + V / B`` from the fitted link. :func:`predict_split` returns the
``lib.budget.Phase`` of every sweep point; :func:`break_even_hidden` finds
where a curve of split times crosses the single-rank times.

:func:`predict_split` with ``eta`` measured at the same size only checks that
the parts add up (additivity). :func:`held_out_split` makes a genuine
prediction: the sweep is cut into alternating folds (:func:`alternate_folds`),
and each size's ``T2`` is predicted from an efficiency model fitted on the
*other* fold's sizes, so no timing of the shard or of the split at that size
is used. :func:`extrapolated_split` predicts further still: the efficiency
model sees only the sizes that are cheap to time on one rank, and every
larger size is predicted from them.

>>> from lib.measure.fit import LinkFit
>>> link = LinkFit(latency=1e-3, bus_bandwidth=1e9, devices=2)
>>> phase = predict_split(link, message_bytes=0, one_s=[1e-3, 8e-3], efficiency=[1.0, 1.0])
>>> [round(float(t) * 1e3, 3) for t in phase.split_time]
[1.5, 5.0]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks
from lib.budget import Phase
from lib.measure.fit import EfficiencyFit, LinkFit, fit_efficiency

__all__ = [
    "efficiency",
    "predict_split",
    "break_even_hidden",
    "step_gap",
    "alternate_folds",
    "HeldOut",
    "held_out_split",
    "Extrapolated",
    "extrapolated_split",
    "beyond_calibration",
    "CHEAP_S",
]

Number = Any  # a float or a numpy array of floats

#: The extrapolating split's rule, fixed before the committed run was measured (chapter 10's exercise
#: "interpolate or extrapolate?"): calibrate on the sizes whose one-rank time is below this (seconds).
CHEAP_S = 2e-3


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


def predict_split(
    link: LinkFit,
    message_bytes: Number,
    one_s: Number,
    efficiency: Number,
    serial_s: Number = 0.0,
    communication_s: Number | None = None,
) -> Phase:
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
        raise ValueError(
            f"serial_s must be <= one_s, got serial_s {float(over[0].flat[first])!r} "
            f"> one_s {float(over[1].flat[first])!r}"
        )
    if communication_s is not None:
        # The measured time is the whole cost of the one all-reduce: a startup with no bytes.
        return Phase(
            serial=serial,
            divisible=one - serial,
            efficiency=eta,
            transfers=1,
            startup=_checks.nonnegative("communication_s", communication_s),
            devices=link.devices,
        )
    return Phase(
        serial=serial,
        divisible=one - serial,
        efficiency=eta,
        transfers=1,
        startup=link.latency,
        transfer_bytes=np.asarray(link.transfer_bytes(message_bytes)),
        bandwidth=link.bus_bandwidth,
        devices=link.devices,
    )


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
        raise ValueError(
            f"hidden, one_s and split_s must have the same length, got {h.size}, {one.size} and {split.size}"
        )
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
    ends = [
        None if end is None else float(_checks.positive(name, end, allow_inf=True))
        for name, end in (("first", first), ("second", second))
    ]
    if None in ends or math.inf in ends:
        return math.inf
    first, second = ends
    step = float(np.median(np.diff(np.log(h))))
    return float(abs(np.log(first) - np.log(second)) / step)


def alternate_folds(points: int, folds: int = 2) -> np.ndarray:
    """Fold number of each sweep point: ``0, 1, 0, 1, ...`` (``i mod folds``).

    Alternating folds keep every fold spread over the whole sweep, so a
    point is predicted from sizes on both sides of it (apart from the two
    ends). Every fold needs at least two points, the least that fixes a
    two-parameter fit.

    >>> alternate_folds(5).tolist()
    [0, 1, 0, 1, 0]
    >>> alternate_folds(7, folds=3).tolist()
    [0, 1, 2, 0, 1, 2, 0]
    >>> alternate_folds(3)
    Traceback (most recent call last):
    ...
    ValueError: points must be >= 4 (two per fold for 2 folds), got 3
    """
    k = _checks.scalar_count("folds", folds, minimum=2)
    n = _checks.scalar_count("points", points, minimum=0)
    if n < 2 * k:
        raise ValueError(f"points must be >= {2 * k} (two per fold for {k} folds), got {n}")
    return np.arange(n) % k


@dataclass(frozen=True)
class HeldOut:
    """Held-out predictions per point (``split_s``, ``efficiency``, link ``latency``) and each fold's fit.

    ``fits[f]`` was fitted on every fold but ``f`` and predicts fold ``f``'s
    points; ``latency`` (seconds) is the link latency each point was
    predicted with.
    """

    split_s: np.ndarray
    efficiency: np.ndarray
    latency: np.ndarray
    fits: tuple[EfficiencyFit, ...]


def held_out_split(
    link: LinkFit,
    message_bytes: float,
    one_s: Sequence[float],
    whole_s: Sequence[float],
    shard_s: Sequence[float],
    folds: Sequence[int],
    allreduce_s: Sequence[float] | None = None,
    hidden: Sequence[float] | None = None,
    constrain: bool = False,
) -> HeldOut:
    """Predict every point's ``T2`` from calibrations that never saw that point.

    For each fold ``f``, :func:`lib.measure.fit.fit_efficiency` fits
    ``T_shard = s + T_whole / (K eta_inf)`` to the shard calibrations of the
    points *outside* ``f``; each point of ``f`` is then predicted with the
    budget, :func:`predict_split`, from its own one-rank time ``one_s`` (the
    ``C`` a reader times before deciding to split), the model's ``eta(C)``
    and the link ``l + V / B``.

    With ``allreduce_s`` (the all-reduce of the layer's message timed at each
    point among its other steps) and ``hidden``, the link keeps its
    bandwidth ``B`` but its latency follows the size of the layer: at each
    point outside ``f`` the latency is ``allreduce_s - V / B``, and a point of
    ``f`` gets the value interpolated linearly in ``log(hidden)`` between its
    neighbours outside ``f`` (the nearest one beyond the ends of the sweep),
    never below 0.

    Parameters
    ----------
    link : LinkFit
        The link, calibrated apart from the sweep.
    message_bytes : float
        Bytes of the layer's all-reduce.
    one_s, whole_s, shard_s : array of float
        Per point: ``T1``, and the whole and shard calibrations (seconds).
    folds : array of int
        Fold number per point (:func:`alternate_folds`), every fold used.
    allreduce_s : array of float, optional
        Per point, the all-reduce of ``message_bytes`` timed among its steps.
    hidden : array of float, optional
        The hidden sizes, strictly increasing (needed with ``allreduce_s``).
    constrain : bool
        Passed to :func:`lib.measure.fit.fit_efficiency`: hold a fold's slope
        at zero instead of raising when its shard times do not grow.

    A run built from the model itself (``s`` = 0.1 ms, ``eta_inf`` = 0.9, a
    0.5 ms link) is predicted exactly at every point:

    >>> from lib.units import ms
    >>> link = LinkFit(latency=0.5 * ms, bus_bandwidth=1e30, devices=2)
    >>> one = np.array([1, 2, 4, 8]) * ms
    >>> shard = 0.1 * ms + one / (2 * 0.9)
    >>> result = held_out_split(link, 0.0, one, one, shard, alternate_folds(4))
    >>> [round(float(t / ms), 6) for t in result.split_s]
    [1.155556, 1.711111, 2.822222, 5.044444]

    All-reduces that took 0.6, 0.8, 0.7 and 0.9 ms among the steps of sizes
    64, 128, 256 and 512: size 128 gets the mean of its neighbours 64 and 256
    (halfway in log size), 0.65 ms; size 512, past the last size of fold 0,
    gets 256's 0.7 ms:

    >>> timed = np.array([0.6, 0.8, 0.7, 0.9]) * ms
    >>> result = held_out_split(link, 0.0, one, one, shard, alternate_folds(4), timed, [64, 128, 256, 512])
    >>> [round(float(l / ms), 6) for l in result.latency]
    [0.8, 0.65, 0.85, 0.7]
    """
    one = _checks.positive("one_s", one_s).ravel()
    whole = _checks.positive("whole_s", whole_s).ravel()
    shard = _checks.positive("shard_s", shard_s).ravel()
    fold = np.asarray(_checks.count("folds", folds), dtype=int).ravel()
    timed = None if allreduce_s is None else _checks.positive("allreduce_s", allreduce_s).ravel()
    if timed is not None and hidden is None:
        raise ValueError("hidden must be given with allreduce_s, to interpolate the latency in size")
    log_h = None if timed is None else np.log(_increasing(hidden, minimum=1))
    sizes = [one.size, whole.size, shard.size, fold.size] + ([] if timed is None else [timed.size, log_h.size])
    if len(set(sizes)) != 1:
        raise ValueError(
            "one_s, whole_s, shard_s, folds (and allreduce_s, hidden) must have the same length, "
            f"got {', '.join(str(n) for n in sizes)}"
        )
    if not np.array_equal(np.unique(fold), np.arange(fold.max() + 1)):
        raise ValueError(f"folds must number the folds 0, 1, ... with none empty, got {fold.tolist()}")
    transfer = float(link.transfer_bytes(message_bytes)) / link.bus_bandwidth
    latency = np.full(one.shape, float(link.latency))
    eta = np.empty_like(one)
    fits = []
    for f in range(int(fold.max()) + 1):
        mine, others = fold == f, fold != f
        fit = fit_efficiency(whole[others], shard[others], link.devices, constrain)
        eta[mine] = fit.efficiency(one[mine])
        if timed is not None:
            latency[mine] = np.maximum(0.0, np.interp(log_h[mine], log_h[others], timed[others]) - transfer)
        fits.append(fit)
    split = np.atleast_1d(predict_split(link, message_bytes, one, eta, communication_s=latency + transfer).split_time)
    return HeldOut(split_s=split, efficiency=eta, latency=latency, fits=tuple(fits))


@dataclass(frozen=True)
class Extrapolated:
    """A prediction of every point's ``T2`` (``split_s``) from the ``calibrated`` points alone, and their ``fit``."""

    split_s: np.ndarray
    calibrated: np.ndarray
    fit: EfficiencyFit


def extrapolated_split(
    link: LinkFit,
    message_bytes: float,
    one_s: Sequence[float],
    whole_s: Sequence[float],
    shard_s: Sequence[float],
    cheap_s: float = CHEAP_S,
    constrain: bool = False,
    calibrated: Sequence[bool] | None = None,
) -> Extrapolated:
    """Predict ``T2`` at every size from the efficiency model of the cheap sizes only, with the link ``l + V / B``.

    A reader who owns one device can time small shards cheaply; the sizes
    with a one-rank calibration ``whole_s`` below ``cheap_s`` are the
    ``calibrated`` ones. :func:`lib.measure.fit.fit_efficiency` fits them,
    and :func:`predict_split` prices every size with that model's ``eta(T1)``
    and the link as calibrated in its own sweep: nothing timed at or near a
    larger size enters, so the larger sizes are an extrapolation. A given
    ``calibrated`` mask replaces the rule (a bootstrap resample keeps the
    run's own points).

    A run built from the model itself is extrapolated exactly:

    >>> from lib.units import ms
    >>> link = LinkFit(latency=0.5 * ms, bus_bandwidth=1e30, devices=2)
    >>> one = np.array([0.5, 1, 4, 8]) * ms
    >>> result = extrapolated_split(link, 0.0, one, one, 0.1 * ms + one / (2 * 0.9))
    >>> result.calibrated.tolist(), [round(float(t / ms), 6) for t in result.split_s]
    ([True, True, False, False], [0.877778, 1.155556, 2.822222, 5.044444])
    >>> extrapolated_split(link, 0.0, one, one, one / 2, cheap_s=0.7 * ms)
    Traceback (most recent call last):
    ...
    ValueError: cheap_s must leave at least 2 calibration points (one-rank time below 0.0007 s), got 1
    """
    one = _checks.positive("one_s", one_s).ravel()
    whole = _checks.positive("whole_s", whole_s).ravel()
    shard = _checks.positive("shard_s", shard_s).ravel()
    limit = float(_checks.positive("cheap_s", cheap_s))
    if not one.size == whole.size == shard.size:
        raise ValueError(
            f"one_s, whole_s and shard_s must have the same length, got {one.size}, {whole.size} and {shard.size}"
        )
    cheap = whole < limit if calibrated is None else np.asarray(calibrated, dtype=bool).ravel()
    if cheap.size != one.size:
        raise ValueError(f"calibrated must have one entry per point ({one.size}), got {cheap.size}")
    if cheap.sum() < 2:
        raise ValueError(
            f"cheap_s must leave at least 2 calibration points (one-rank time below {limit:g} s), "
            f"got {int(cheap.sum())}"
        )
    fit = fit_efficiency(whole[cheap], shard[cheap], link.devices, constrain)
    split = np.atleast_1d(predict_split(link, message_bytes, one, fit.efficiency(one)).split_time)
    return Extrapolated(split_s=split, calibrated=cheap, fit=fit)


def beyond_calibration(scored: Sequence[bool], calibrated: Sequence[bool]) -> np.ndarray:
    """The ``scored`` points an extrapolation from the ``calibrated`` ones is judged on: those it did not see.

    No point at all when fewer than two calibrate (:func:`extrapolated_split` cannot fit on them).

    >>> beyond_calibration([False, True, True, True], [True, True, False, False]).tolist()
    [False, False, True, True]
    >>> beyond_calibration([True, True], [True, False]).tolist()
    [False, False]
    """
    seen = np.asarray(calibrated, dtype=bool)
    judged = np.asarray(scored, dtype=bool)
    return judged & ~seen if seen.sum() >= 2 else np.zeros_like(judged)
