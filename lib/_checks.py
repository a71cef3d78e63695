"""Input validation shared by every module: one clear error per bad value.

Each check takes the parameter's public name and its value (a number or an
array), raises ``ValueError`` naming both when any element is bad, and returns
the value as a float array for the arithmetic that follows.

>>> nonnegative("serial", 0.5)
array(0.5)
>>> nonnegative("serial", -1.0)
Traceback (most recent call last):
...
ValueError: serial must be >= 0, got -1.0
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["as_float", "nonnegative", "positive", "fraction", "count", "scalar", "scalar_count", "result"]


def _describe(value: Any) -> str:
    array = np.asarray(value)
    return repr(array.item()) if array.ndim == 0 else f"array with values {array!r}"


def as_float(name: str, value: Any) -> np.ndarray:
    """Return ``value`` as a float array, refusing NaN and non-numbers."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if np.isnan(array).any():
        raise ValueError(f"{name} must not be NaN, got {_describe(value)}")
    return array


def nonnegative(name: str, value: Any) -> np.ndarray:
    """A finite time or size that may be zero but not negative."""
    array = as_float(name, value)
    if (array < 0).any():
        raise ValueError(f"{name} must be >= 0, got {_describe(value)}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite, got {_describe(value)}")
    return array


def positive(name: str, value: Any, allow_inf: bool = False) -> np.ndarray:
    """A strictly positive finite quantity; ``allow_inf`` admits infinity (an ideal link).

    >>> positive("bandwidth", float("inf"), allow_inf=True)
    array(inf)
    >>> positive("rate", float("inf"))
    Traceback (most recent call last):
    ...
    ValueError: rate must be finite, got inf
    """
    array = as_float(name, value)
    if (array <= 0).any():
        raise ValueError(f"{name} must be > 0, got {_describe(value)}")
    if not allow_inf and not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite, got {_describe(value)}")
    return array


def fraction(name: str, value: Any) -> np.ndarray:
    """An efficiency: a number in the half-open interval (0, 1]."""
    array = as_float(name, value)
    if ((array <= 0) | (array > 1)).any():
        raise ValueError(f"{name} must be in (0, 1], got {_describe(value)}")
    return array


def count(name: str, value: Any, minimum: int = 0) -> np.ndarray:
    """A whole number of things (devices, transfers, stages) >= ``minimum``."""
    array = as_float(name, value)
    if not np.isfinite(array).all() or (array != np.round(array)).any():
        raise ValueError(f"{name} must be a whole number, got {_describe(value)}")
    if (array < minimum).any():
        raise ValueError(f"{name} must be >= {minimum}, got {_describe(value)}")
    return array


def _single(name: str, value: Any, array: np.ndarray, what: str) -> np.ndarray:
    """``array`` if it holds one value; otherwise a ValueError naming ``name`` and ``value``."""
    if array.ndim != 0:
        raise ValueError(f"{name} must be a scalar (a single {what}, not an array), got {value!r}")
    return array


def scalar(name: str, value: Any, check: Callable[[str, Any], np.ndarray] = as_float) -> float:
    """One number, not an array: ``check(name, value)`` as a plain float.

    For parameters that a sweep cannot vary (a simulation's settings).

    >>> scalar("hop", 0.5, nonnegative)
    0.5
    >>> scalar("hop", [0.5, 1.0], nonnegative)
    Traceback (most recent call last):
    ...
    ValueError: hop must be a scalar (a single number, not an array), got [0.5, 1.0]
    """
    return float(_single(name, value, check(name, value), "number"))


def scalar_count(name: str, value: Any, minimum: int = 0) -> int:
    """One whole number >= ``minimum``, not an array, as a plain int.

    >>> scalar_count("servers", 2.0, minimum=1)
    2
    >>> scalar_count("servers", 0, minimum=1)
    Traceback (most recent call last):
    ...
    ValueError: servers must be >= 1, got 0
    >>> scalar_count("servers", [1, 2], minimum=1)
    Traceback (most recent call last):
    ...
    ValueError: servers must be a scalar (a single whole number, not an array), got [1, 2]
    """
    if type(value) is int:  # the common case, checked without numpy
        if value < minimum:
            raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
        return value
    return int(_single(name, value, count(name, value, minimum), "whole number"))


def result(value: np.ndarray) -> float | np.ndarray:
    """A 0-d array back to a plain float; arrays stay arrays."""
    array = np.asarray(value, dtype=float)
    return float(array) if array.ndim == 0 else array
