"""Robust summaries of repeated timings: medians, quartiles and tails.

Introduced in chapter 9 (measure it). A timing experiment repeats one
operation many times; the median says what a typical repetition costs, the
interquartile range (IQR) how much repetitions disagree, and the upper
percentiles how bad the slow ones get. A mean mixes all three:

>>> summary = summarize([1.0, 1.0, 1.0, 1.0, 11.0])
>>> summary["median"], summary["mean"]
(1.0, 3.0)
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from lib import _checks

__all__ = ["summarize", "relative_error", "median_abs_relative_error"]


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


def median_abs_relative_error(predicted: Any, measured: Any) -> float:
    """The median of ``|predicted - measured| / measured`` over paired points.

    >>> round(median_abs_relative_error([1.1, 2.0, 2.4], [1.0, 2.0, 3.0]), 12)
    0.1
    """
    errors = np.abs(np.atleast_1d(relative_error(predicted, measured)))
    if errors.size == 0:
        raise ValueError("measured must hold at least one value, got 0")
    return float(np.median(errors))
