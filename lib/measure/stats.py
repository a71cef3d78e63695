"""Robust summaries of repeated timings: medians, quartiles, tails and bootstrap intervals.

Introduced in chapter 10 (measure it). A timing experiment repeats one
operation many times; the median says what a typical repetition costs, the
interquartile range (IQR) how much repetitions disagree, and the upper
percentiles how bad the slow ones get. A mean mixes all three:

>>> summary = summarize([1.0, 1.0, 1.0, 1.0, 11.0])
>>> summary["median"], summary["mean"]
(1.0, 3.0)

How precisely a median of ``n`` repetitions is known is a different question
from how widely the repetitions spread. :func:`bootstrap_medians` answers it
by resampling the repetitions with replacement (the bootstrap) and
:func:`percentile_interval` reads an interval off the resampled medians:

>>> percentile_interval(bootstrap_medians([2.0, 2.0, 2.0], resamples=50, seed=0))
(2.0, 2.0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from lib import _checks

__all__ = [
    "summarize",
    "relative_error",
    "median_abs_error",
    "median_abs_relative_error",
    "bootstrap_medians",
    "percentile_interval",
    "median_interval",
    "LEVEL",
    "RESAMPLES",
    "SEED",
]

#: Resamples, seed and level of every bootstrap interval in chapter 10 (measure it).
RESAMPLES, SEED, LEVEL = 1000, 0, 0.95


def summarize(samples: Sequence[float] | np.ndarray) -> dict[str, float]:
    """Median, quartiles, tails and mean of repeated timings, in their own unit.

    Parameters
    ----------
    samples : sequence of float
        One value per repetition (seconds, usually); at least one, none
        negative or NaN.

    Returns
    -------
    dict
        ``n``, ``median``, ``q1``, ``q3``, ``iqr``, ``p10``, ``p90``,
        ``p99``, ``mean``, ``min`` and ``max``.

    >>> s = summarize([4.0, 1.0, 3.0, 2.0])
    >>> s["median"], s["q1"], s["q3"], s["iqr"]
    (2.5, 1.75, 3.25, 1.5)
    >>> summarize([])
    Traceback (most recent call last):
    ...
    ValueError: samples must hold at least one value, got 0
    """
    values = _checks.nonnegative("samples", np.asarray(samples, dtype=float)).ravel()
    if values.size == 0:
        raise ValueError("samples must hold at least one value, got 0")
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    p10, p90, p99 = np.percentile(values, [10, 90, 99])
    return {
        "n": int(values.size),
        "median": float(median),
        "q1": float(q1),
        "q3": float(q3),
        "iqr": float(q3 - q1),
        "p10": float(p10),
        "p90": float(p90),
        "p99": float(p99),
        "mean": float(values.mean()),
        "min": float(values.min()),
        "max": float(values.max()),
    }


def relative_error(predicted: Any, measured: Any) -> float | np.ndarray:
    """``(predicted - measured) / measured``: positive when the model overestimates.

    >>> relative_error(11.0, 10.0)
    0.1
    >>> relative_error(1.0, 0.0)
    Traceback (most recent call last):
    ...
    ValueError: measured must be > 0, got 0.0
    """
    guess = _checks.nonnegative("predicted", predicted)
    truth = _checks.positive("measured", measured)
    return _checks.result((guess - truth) / truth)


def median_abs_error(errors: Any) -> float:
    """The median of ``|error|`` over a set of relative errors (a float).

    >>> median_abs_error([-0.3, 0.1, 0.05])
    0.1
    """
    e = _checks.as_float("errors", errors)
    if e.size == 0:
        raise ValueError("errors must hold at least one value, got an empty array")
    return float(np.median(np.abs(e)))


def median_abs_relative_error(predicted: Any, measured: Any) -> float:
    """The median of ``|predicted - measured| / measured`` over paired points.

    >>> round(median_abs_relative_error([1.1, 2.0, 2.4], [1.0, 2.0, 3.0]), 12)
    0.1
    """
    return median_abs_error(relative_error(predicted, measured))


def bootstrap_medians(
    samples: Sequence[float] | np.ndarray, resamples: int = RESAMPLES, seed: int | np.random.Generator = SEED
) -> np.ndarray:
    """Medians of ``resamples`` bootstrap resamples of ``samples``, drawn with a seeded generator.

    ``samples`` holds one value per repetition. A 2-D array holds several
    quantities timed in the same rounds (one row each, one column per
    round): whole columns are resampled together, so quantities that shared
    a round's background load stay paired. Returns shape ``(resamples,)``
    for 1-D input, ``(rows, resamples)`` for 2-D.

    Parameters
    ----------
    samples : array of float
        At least one repetition; none negative or NaN.
    resamples : int
        How many resamples (at least 1).
    seed : int or numpy.random.Generator
        The seed, so that the same data give the same interval.

    Two repetitions ``[1, 3]`` resample to ``[1, 1]``, ``[1, 3]``, ``[3, 1]``
    or ``[3, 3]``, with medians 1, 2, 2 and 3:

    >>> sorted(set(bootstrap_medians([1.0, 3.0], resamples=200, seed=1).tolist()))
    [1.0, 2.0, 3.0]
    >>> bootstrap_medians([], resamples=10)
    Traceback (most recent call last):
    ...
    ValueError: samples must hold at least one repetition, got 0
    """
    values = _checks.nonnegative("samples", np.asarray(samples, dtype=float))
    if values.ndim not in (1, 2):
        raise ValueError(f"samples must be 1-D or 2-D, got {values.ndim} dimensions")
    if values.shape[-1] == 0:
        raise ValueError("samples must hold at least one repetition, got 0")
    count = _checks.scalar_count("resamples", resamples, minimum=1)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    rounds = rng.integers(0, values.shape[-1], size=(count, values.shape[-1]))
    return np.median(values[..., rounds], axis=-1)


def percentile_interval(values: Sequence[float] | np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The central ``level`` interval of ``values`` (bootstrap replicates), by order statistics.

    With the values sorted, ``v[0] <= ... <= v[m - 1]`` and ``a = 1 - level``,
    the interval is ``v[floor(m a / 2)]`` to ``v[ceil(m (1 - a / 2)) - 1]``.
    Infinite values are allowed (a break-even size beyond the sweep in some
    replicates) and come back as ``inf``; NaN is refused.

    >>> percentile_interval(range(1, 21), level=0.9)
    (2.0, 19.0)
    >>> percentile_interval([1.0, float("inf"), 2.0, 3.0], level=0.5)
    (2.0, 3.0)
    >>> percentile_interval([1.0, 2.0], level=1.5)
    Traceback (most recent call last):
    ...
    ValueError: level must be in (0, 1], got 1.5
    """
    ordered = np.sort(_checks.as_float("values", values).ravel())
    tail = 1.0 - float(_checks.fraction("level", level))
    if ordered.size == 0:
        raise ValueError("values must hold at least one value, got 0")
    low = math.floor(round(ordered.size * tail / 2, 9))
    high = math.ceil(round(ordered.size * (1 - tail / 2), 9)) - 1
    return float(ordered[min(low, high)]), float(ordered[high])


def median_interval(
    samples: Sequence[float] | np.ndarray,
    level: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int | np.random.Generator = SEED,
) -> tuple[float, float]:
    """A seeded bootstrap ``level`` confidence interval for the median of ``samples``.

    >>> median_interval([5.0] * 7)
    (5.0, 5.0)
    """
    return percentile_interval(bootstrap_medians(samples, resamples, seed), level)
