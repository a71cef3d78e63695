"""How precisely a run pins down its medians, its break-even size and its error: the bootstrap.

Introduced in chapter 10 (measure it). A run's headline numbers are medians
of repetitions, so they carry sampling noise: another run of the same length
would give slightly different medians, a slightly different link fit, and a
different break-even size. :func:`bootstrap_run` estimates that spread by
redoing the whole analysis on resampled repetitions. At each hidden size the
interleaved rounds are resampled as whole rounds (``T1``, ``T2`` and the
calibrations of one round stay together, as they shared that moment's
background load); each link size is resampled on its own. Each resample
refits the link (under the constraint that a byte takes no negative time:
see :func:`lib.measure.fit_link`), recalibrates the held-out efficiency models and link
latencies, and recomputes the predictions, the two break-even sizes and the
errors of the three predictions: held out with the link latency recalibrated in
the rounds, held out with the link as its own sweep fitted it, and
extrapolated from the cheap sizes.

On a noisy machine a resample can draw the small link size slower than
the large one, or a small shard slower than a large one. Its fit then finds
no per-byte (or per-second) cost; the slope is held at its physical bound,
zero, instead of ending the run, and the resample is counted in
``Replicates.unphysical`` so that a report can say how many there were. The intervals cover sampling noise between repetitions only. Conditions
that drift over minutes (another program starting) move every repetition of
a step together, and no resampling of those repetitions can see it.

>>> rng = np.random.default_rng(0)
>>> samples = [rng.normal(10.0, 1.0, 200).clip(0)]
>>> low, high = percentile_interval(bootstrap_medians(samples[0], 500, seed=1))
>>> bool(9.5 < low < 10.0 < high < 10.5)
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks
from lib.measure.fit import fit_link
from lib.measure.model import beyond_calibration, break_even_hidden, extrapolated_split, held_out_split
from lib.measure.stats import LEVEL, RESAMPLES, SEED, bootstrap_medians, median_abs_relative_error, percentile_interval

__all__ = ["POINT_STEPS", "Replicates", "bootstrap_run", "interval", "json_interval"]

#: The steps timed in each point's interleaved rounds, in the order the rows of its samples use.
POINT_STEPS = ("one", "split", "whole_calib", "shard_calib", "allreduce")


@dataclass(frozen=True)
class Replicates:
    """One value per bootstrap resample (rows) and, where it applies, per sweep point (columns).

    ``one``, ``split`` and ``held_out``: shape ``(resamples, points)``, the
    medians of ``T1`` and ``T2`` and the held-out prediction of ``T2``.
    ``break_even_measured`` and ``break_even_held_out``: shape
    ``(resamples,)``, ``inf`` where the split never stays ahead within the
    sweep; ``break_even_held_out_link`` the same for the held-out prediction
    with the link fit's own latency. ``error_held_out``: the median absolute relative error of the
    held-out prediction over the points in ``long`` (NaN-free; empty when no
    point is long); ``error_held_out_link`` the same for the held-out
    prediction with the link fit's own latency, and ``error_extrapolated``
    for the extrapolation from the ``calibrated`` points, over the long points
    it did not calibrate on. ``unphysical``: shape ``(resamples, 2)``, True where that
    resample's link fit (column 0) or one of its efficiency fits (column 1)
    had to be constrained.
    """

    one: np.ndarray
    split: np.ndarray
    held_out: np.ndarray
    break_even_measured: np.ndarray
    break_even_held_out: np.ndarray
    break_even_held_out_link: np.ndarray
    error_held_out: np.ndarray
    error_held_out_link: np.ndarray
    error_extrapolated: np.ndarray
    unphysical: np.ndarray


def _finite_or_inf(value: float | None) -> float:
    return math.inf if value is None else float(value)


def bootstrap_run(
    hidden: Sequence[float],
    link_sizes: Sequence[float],
    link_samples: Sequence[Sequence[float]],
    point_samples: Sequence[np.ndarray],
    devices: int,
    message_bytes: float,
    folds: Sequence[int],
    long: Sequence[bool],
    calibrated: Sequence[bool],
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Replicates:
    """Redo the analysis on ``resamples`` seeded bootstrap resamples of a run's repetitions.

    Parameters
    ----------
    hidden : array of int
        The sweep's hidden sizes, increasing.
    link_sizes, link_samples : arrays
        Message size of each link calibration (bytes) and its repetitions (seconds).
    point_samples : sequence of 2-D arrays
        Per hidden size, one row per step of :data:`POINT_STEPS` and one
        column per interleaved round (seconds).
    devices : int
        ``K``.
    message_bytes : float
        Bytes of the layer's all-reduce.
    folds : array of int
        Fold of each point for the held-out prediction.
    long : array of bool
        The points whose error enters the headline (measured ``T2`` at or
        above the threshold in the run itself, so every resample averages
        over the same points).
    calibrated : array of bool
        The points the extrapolation calibrates on (fixed by the run itself,
        :func:`lib.measure.model.extrapolated_split`).
    resamples : int
        Number of resamples (at least 1).
    seed : int
        Seed of the generator: the same run always gives the same intervals.

    Returns
    -------
    Replicates

    A run without noise resamples to itself:

    >>> from lib.units import ms
    >>> rounds = [np.array([[t], [t / 2 + 1.5 * ms], [t], [t / 2], [1.5 * ms]]).repeat(3, axis=1)
    ...           for t in (1 * ms, 2 * ms, 4 * ms, 8 * ms)]
    >>> reps = bootstrap_run([64, 128, 256, 512], [1e3, 1e6], [[1 * ms] * 3, [1.5 * ms] * 3], rounds, 2, 1e3,
    ...                      [0, 1, 0, 1], [False, False, True, True], [True, True, False, False], resamples=20)
    >>> round(float(reps.break_even_measured.min()), 6), round(float(reps.break_even_measured.max()), 6)
    (181.019336, 181.019336)
    """
    h = np.asarray(hidden, dtype=float)
    sizes = np.asarray(link_sizes, dtype=float)
    chosen = np.asarray(long, dtype=bool)
    count = _checks.scalar_count("resamples", resamples, minimum=1)
    if not len(point_samples) == h.size == chosen.size == len(folds) == len(calibrated):
        raise ValueError(
            "hidden, point_samples, folds, long and calibrated must have the same length, got "
            f"{h.size}, {len(point_samples)}, {len(folds)}, {chosen.size} and {len(calibrated)}"
        )
    far = beyond_calibration(chosen, calibrated)
    rng = np.random.default_rng(seed)
    link = np.stack([bootstrap_medians(row, count, rng) for row in link_samples])  # (sizes, resamples)
    medians = np.stack(
        [bootstrap_medians(np.asarray(rows, dtype=float), count, rng) for rows in point_samples]
    )  # (points, steps, resamples)
    one, split, whole, shard, allreduce = (
        medians[:, POINT_STEPS.index(step), :].T for step in ("one", "split", "whole_calib", "shard_calib", "allreduce")
    )
    held = np.empty_like(one)
    measured_be = np.empty(count)
    held_be, stated_be = np.empty(count), np.empty(count)
    error, error_link = (np.empty(count if chosen.any() else 0) for _ in range(2))
    error_far = np.empty(count if far.any() else 0)
    unphysical = np.zeros((count, 2), dtype=bool)
    for r in range(count):
        fit = fit_link(sizes, link[:, r], devices=devices, constrain=True)
        prediction = held_out_split(fit, message_bytes, one[r], whole[r], shard[r], folds, allreduce[r], h, True)
        unphysical[r] = fit.constrained, any(f.constrained for f in prediction.fits)
        held[r] = prediction.split_s
        measured_be[r] = _finite_or_inf(break_even_hidden(h, one[r], split[r]))
        held_be[r] = _finite_or_inf(break_even_hidden(h, one[r], held[r]))
        stated = held_out_split(fit, message_bytes, one[r], whole[r], shard[r], folds, constrain=True).split_s
        stated_be[r] = _finite_or_inf(break_even_hidden(h, one[r], stated))
        if chosen.any():
            error[r] = median_abs_relative_error(held[r, chosen], split[r, chosen])
            error_link[r] = median_abs_relative_error(stated[chosen], split[r, chosen])
        if far.any():
            extrapolated = extrapolated_split(
                fit, message_bytes, one[r], whole[r], shard[r], constrain=True, calibrated=calibrated
            ).split_s
            error_far[r] = median_abs_relative_error(extrapolated[far], split[r, far])
    return Replicates(
        one=one,
        split=split,
        held_out=held,
        break_even_measured=measured_be,
        break_even_held_out=held_be,
        break_even_held_out_link=stated_be,
        error_held_out=error,
        error_held_out_link=error_link,
        error_extrapolated=error_far,
        unphysical=unphysical,
    )


def interval(values: np.ndarray, level: float = LEVEL) -> tuple[float, float] | None:
    """The central ``level`` interval of replicates along axis 0 (or ``None`` when there are none).

    >>> interval(np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0], [4.0, 40.0], [5.0, 50.0]]), level=0.6)
    (array([ 2., 20.]), array([ 4., 40.]))
    >>> interval(np.array([]), level=0.9) is None
    True
    """
    array = np.asarray(values, dtype=float)
    if array.size == 0:
        return None
    if array.ndim == 1:
        return percentile_interval(array, level)
    pairs = [percentile_interval(column, level) for column in array.reshape(array.shape[0], -1).T]
    low, high = (np.array(side).reshape(array.shape[1:]) for side in zip(*pairs))
    return low, high


def json_interval(low: Any, high: Any) -> list[float | None]:
    """An interval as JSON: ``[low, high]`` with an infinite end written as ``null``.

    >>> json_interval(1.5, float("inf"))
    [1.5, None]
    """
    return [None if not math.isfinite(float(end)) else float(end) for end in (low, high)]
