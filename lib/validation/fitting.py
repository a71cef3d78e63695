"""One-dimensional least squares for chapter 11's fits: a refined grid, and fixed costs that enter linearly.

Introduced in chapter 11 (does the model hold?). Every constant chapter 11
fits is one number at a time, on a log error (a prediction off by a factor
of 2 counts the same either way). A prediction is affine in a fixed cost
(each pass costs ``L o`` more), so :func:`fit_overhead` evaluates every
figure at two values of it and minimises the squared log error of the line
exactly, on a grid refined around its best point.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lib import _checks

__all__ = ["minimise", "fit_overhead"]


def minimise(loss: Callable[[np.ndarray], np.ndarray], lo: float, hi: float, log: bool) -> float:
    """The point of ``[lo, hi]`` with the smallest ``loss(grid)``: a 41-point grid, refined five times around its best.

    ``loss`` maps an array of candidates to an array of losses; ``log``
    spaces the grid geometrically (``lo`` must then be positive).

    >>> round(minimise(lambda x: (x - 0.3) ** 2, 0.0, 1.0, log=False), 9)
    0.3
    """
    for _ in range(6):
        grid = np.geomspace(lo, hi, 41) if log else np.linspace(lo, hi, 41)
        i = int(np.argmin(loss(grid)))
        lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    return float(grid[i])


def fit_overhead(predict: Callable[[float], Any], measured: Any, upper: float = 2e-3) -> float:
    """The fixed cost ``o`` in ``[0, upper]`` minimising ``sum(log(predict(o) / measured)^2)``.

    ``predict(o)`` returns one prediction per measured figure; it must be
    affine in ``o`` (checked at three points), so two evaluations give it
    everywhere.

    >>> fit_overhead(lambda o: np.array([1.0, 2.0]) + o * np.array([100.0, 100.0]), [1.1, 2.1])
    0.001
    """
    m = _checks.positive("measured", measured)
    at0 = np.asarray(predict(0.0), dtype=float)
    probe = upper / 2
    slope = (np.asarray(predict(probe), dtype=float) - at0) / probe
    check = np.asarray(predict(upper), dtype=float)
    if not np.allclose(check, at0 + upper * slope, rtol=1e-9, atol=0.0):
        raise ValueError("predict must be affine in the fixed cost (a pipelined layout is not)")
    if at0.shape != m.shape:
        raise ValueError(f"measured must hold one figure per prediction ({at0.size}), got shape {m.shape}")
    best = minimise(lambda o: np.sum(np.log((at0 + o[:, None] * slope) / m) ** 2, axis=1), 0.0, upper, log=False)
    return round(best, 12)
