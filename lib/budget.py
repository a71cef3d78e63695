"""The time budget of one work phase, whole on one device or split over K.

Introduced in chapter 2. A phase has serial time ``S`` that no split shortens
and divisible time ``C`` that K devices share at local efficiency ``eta``.
The split pays ``Q`` serialised transfers, each costing a startup ``l`` plus
``V`` bytes at bandwidth ``B``:

    T1 = S + C
    H  = Q (l + V / B)
    T2 = S + C / (K eta) + H

The base case of the book (chapter 2):

>>> from lib.units import GB, MB, ms, s
>>> base = Phase(serial=0.8 * ms, divisible=12 * ms, efficiency=0.8, transfers=4,
...              startup=0.03 * ms, transfer_bytes=2 * MB, bandwidth=10 * GB / s)
>>> round(base.one_device_time / ms, 6), round(base.split_time / ms, 6)
(12.8, 9.22)
>>> round(base.speedup, 3)
1.388

Every field may be a numpy array; the properties broadcast, so one Phase can
hold a whole sweep, and each property has the shape of the whole sweep even
where its formula leaves out the fields that vary:

>>> import numpy as np
>>> sweep = base.with_(divisible=np.array([6.0, 12.0, 24.0]) * ms)
>>> sweep.communication_time.shape
(3,)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from lib import _checks

__all__ = ["Phase"]

Number = Any  # a float or a numpy array of floats

_CHECKS = {
    "serial": _checks.nonnegative,
    "divisible": _checks.nonnegative,
    "efficiency": _checks.fraction,
    "transfers": _checks.count,
    "startup": _checks.nonnegative,
    "transfer_bytes": _checks.nonnegative,
    "bandwidth": lambda name, value: _checks.positive(name, value, allow_inf=True),
    "devices": lambda name, value: _checks.count(name, value, minimum=1),
}


@dataclass(frozen=True)
class Phase:
    """One phase of work and the cost of splitting it over ``devices``.

    Parameters
    ----------
    serial : float or array
        ``S``, seconds that stay on one device whatever the split.
    divisible : float or array
        ``C``, seconds of work on one device that the devices can share.
    efficiency : float or array
        ``eta`` in (0, 1]: how well each shard uses its device compared with
        the whole job on one device (communication excluded).
    transfers : int or array
        ``Q``, the number of serialised communications the split adds.
    startup : float or array
        ``l``, seconds of fixed cost per communication (latency).
    transfer_bytes : float or array
        ``V``, bytes on the critical path of each communication.
    bandwidth : float or array
        ``B``, effective bytes per second (``math.inf`` for an ideal link).
    devices : int or array
        ``K``, how many devices share the divisible work (at least 1).

    Raises
    ------
    ValueError
        If any value is NaN or out of its range; the message names it.

    >>> Phase(serial=0.0, divisible=1.0, efficiency=1.5)
    Traceback (most recent call last):
    ...
    ValueError: efficiency must be in (0, 1], got 1.5
    """

    serial: Number
    divisible: Number
    efficiency: Number = 1.0
    transfers: Number = 0
    startup: Number = 0.0
    transfer_bytes: Number = 0.0
    bandwidth: Number = math.inf
    devices: Number = 2

    def __post_init__(self) -> None:
        for field in fields(self):
            _CHECKS[field.name](field.name, getattr(self, field.name))

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the whole sweep: every field broadcast together; ``()`` for one phase.

        >>> Phase(serial=1.0, divisible=np.array([1.0, 2.0]), devices=np.array([[2], [4]])).shape
        (2, 2)
        """
        return np.broadcast_shapes(*(np.shape(getattr(self, field.name)) for field in fields(self)))

    def array(self, name: str) -> np.ndarray:
        """Field ``name`` as a float array of the sweep's :attr:`shape` (a read-only view).

        Arithmetic on these arrays gives one value per point of the sweep,
        even where a formula leaves out the fields that vary.

        >>> sweep = Phase(serial=1.0, divisible=np.array([1.0, 2.0]))
        >>> sweep.array("serial")
        array([1., 1.])
        >>> Phase(serial=1.0, divisible=2.0).array("devices")
        array(2.)
        """
        return np.broadcast_to(np.asarray(getattr(self, name), dtype=float), self.shape)

    def with_(self, **changes: Number) -> Phase:
        """A copy with some fields changed (validated again).

        >>> Phase(serial=1.0, divisible=2.0).with_(devices=4).devices
        4
        """
        return replace(self, **changes)

    @property
    def one_device_time(self) -> float | np.ndarray:
        """``T1 = S + C``: the whole phase on one device, in seconds."""
        return _checks.result(self.array("serial") + self.array("divisible"))

    @property
    def split_compute_time(self) -> float | np.ndarray:
        """``C / (K eta)``: each device's share of the divisible work, in seconds."""
        return _checks.result(self.array("divisible") / (self.array("devices") * self.array("efficiency")))

    @property
    def communication_time(self) -> float | np.ndarray:
        """``H = Q (l + V / B)``: time spent exchanging data, in seconds."""
        per_transfer = self.array("startup") + self.array("transfer_bytes") / self.array("bandwidth")
        return _checks.result(self.array("transfers") * per_transfer)

    @property
    def split_time(self) -> float | np.ndarray:
        """``T2 = S + C / (K eta) + H``: the phase split over K devices, in seconds."""
        return _checks.result(
            self.array("serial") + np.asarray(self.split_compute_time) + np.asarray(self.communication_time)
        )

    @property
    def speedup(self) -> float | np.ndarray:
        """``T1 / T2``; above 1 the split finishes sooner.

        Raises ``ValueError`` where both times are zero (nothing to compare).

        >>> Phase(serial=0.0, divisible=0.0).speedup
        Traceback (most recent call last):
        ...
        ValueError: speedup is undefined when split_time is 0 (serial, divisible and communication all zero)
        """
        split = np.asarray(self.split_time)
        if (split == 0).any():
            raise ValueError("speedup is undefined when split_time is 0 (serial, divisible and communication all zero)")
        return _checks.result(np.asarray(self.one_device_time) / split)

    @property
    def parallel_efficiency(self) -> float | np.ndarray:
        """Speedup per device, ``T1 / (K T2)``: 1 would be a perfect split."""
        return _checks.result(np.asarray(self.speedup) / self.array("devices"))

    @property
    def overlap_bound(self) -> float | np.ndarray:
        """``S + max(C / (K eta), H)``: the best T2 if communication hid entirely behind compute."""
        return _checks.result(
            self.array("serial") + np.maximum(np.asarray(self.split_compute_time), np.asarray(self.communication_time))
        )
