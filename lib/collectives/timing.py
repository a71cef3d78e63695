"""Two closed-form time models of a collective: one startup per collective, or one per ring step.

Introduced in chapter 5 (collectives). The per-collective form ``l + V / B``
charges one startup for the whole collective; the ring form charges
``2 (K - 1)`` steps of ``alpha + n / (K B)`` each. :mod:`lib.collectives.nccl`
joins them the way NCCL's tuner does: a base latency plus a latency per step.

>>> from lib.units import GB, MB, s, us
>>> round(collective_time("allreduce", 4 * MB, 4, 5 * us, 100 * GB / s) / us, 1)
65.0
>>> round(ring_allreduce_time(4 * MB, 4, 5 * us, 100 * GB / s) / us, 1)
90.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lib import _checks
from lib.collectives.bytes import bytes_sent, fraction_sent, kind_name

__all__ = ["collective_time", "ring_allreduce_time", "crossover_message_bytes"]

Number = Any  # a float or a numpy array of floats


def collective_time(
    kind: str, message_bytes: Number, devices: Number, latency: Number, bandwidth: Number
) -> float | np.ndarray:
    """Per-collective model: ``l + V / B`` with ``V`` the bytes each device sends.

    One startup ``latency`` for the whole collective. Zero for one device
    (nothing to exchange).

    >>> from lib.units import GB, KB, s, us
    >>> round(collective_time("allreduce", 32 * KB, 4, 5 * us, 400 * GB / s) / us, 3)
    5.12
    """
    k = _checks.count("devices", devices, minimum=1)
    volume = np.asarray(bytes_sent(kind, message_bytes, k))
    latency_ = _checks.nonnegative("latency", latency)
    bandwidth_ = _checks.positive("bandwidth", bandwidth, allow_inf=True)
    return _checks.result(np.where(k > 1, latency_ + volume / bandwidth_, 0.0))


def ring_allreduce_time(message_bytes: Number, devices: Number, alpha: Number, bandwidth: Number) -> float | np.ndarray:
    """Ring model: ``2 (K - 1)`` steps, each ``alpha + n / (K B)``.

    Same bytes as the per-collective form, but a startup on every step.

    >>> from lib.units import GB, KB, s, us
    >>> round(ring_allreduce_time(32 * KB, 4, 5 * us, 400 * GB / s) / us, 3)
    30.12
    """
    n = _checks.nonnegative("message_bytes", message_bytes)
    k = _checks.count("devices", devices, minimum=1)
    alpha_ = _checks.nonnegative("alpha", alpha)
    bandwidth_ = _checks.positive("bandwidth", bandwidth, allow_inf=True)
    return _checks.result(2 * (k - 1) * (alpha_ + n / (k * bandwidth_)))


def crossover_message_bytes(
    latency: Number, bandwidth: Number, devices: Number, kind: str = "allreduce", form: str = "collective"
) -> float | np.ndarray:
    """Message size at which the startup and transfer terms are equal.

    ``form="collective"``: ``l = V(n) / B``, so ``n = l B / factor``.
    ``form="ring"`` (all-reduce only): ``alpha = n / (K B)``, so ``n = alpha K B``.
    Below it the startup dominates, above it the bytes do. Infinite for one
    device (nothing is sent). Zero when ``latency`` is 0, even on an ideal
    link (infinite ``bandwidth``): with no startup the bytes always dominate.

    >>> from lib.units import GB, KB, s, us
    >>> round(crossover_message_bytes(5 * us, 400 * GB / s, 4) / KB, 1)
    1333.3
    >>> round(crossover_message_bytes(5 * us, 400 * GB / s, 4, form="ring") / KB, 1)
    8000.0
    >>> crossover_message_bytes(0.0, float("inf"), 4)
    0.0
    """
    latency_ = _checks.nonnegative("latency", latency)
    bandwidth_ = _checks.positive("bandwidth", bandwidth, allow_inf=True)
    k = _checks.count("devices", devices, minimum=1)
    # l B, taken as 0 when l = 0 so that an ideal link (B = inf) gives 0, not 0 * inf = NaN.
    startup_bytes = latency_ * np.where(latency_ > 0, bandwidth_, 0.0)
    if form == "collective":
        factor = fraction_sent(kind, k)
        size = np.where(factor > 0, startup_bytes / np.where(factor > 0, factor, 1), np.inf)
    elif form == "ring":
        if kind_name(kind) != "allreduce":
            raise ValueError(f"kind must be 'allreduce' for form='ring', got {kind!r}")
        size = np.where(k > 1, startup_bytes * k, np.inf)
    else:
        raise ValueError(f"form must be 'collective' or 'ring', got {form!r}")
    return _checks.result(size)
