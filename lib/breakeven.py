"""When does the split pay? The thresholds hidden in the time budget.

Introduced in chapter 3. Setting ``T2 < T1`` and cancelling the serial time
``S`` leaves *saved compute > added communication*:

    C (1 - 1/(K eta)) > H

Solved for each unknown in turn it gives the smallest divisible work, the
smallest bandwidth and the smallest efficiency at which splitting wins. Each
function returns ``math.inf`` where no finite value works (``min_efficiency``
may also return a finite value above 1, which means "impossible even with
perfect shards"). A threshold leaves out the field it solves for, but built
from :meth:`Phase.array` it still has one value per point of a sweep over
that field.

>>> from lib.budget import Phase
>>> from lib.units import GB, MB, ms, s
>>> base = Phase(serial=0.8 * ms, divisible=12 * ms, efficiency=0.8, transfers=4,
...              startup=0.03 * ms, transfer_bytes=2 * MB, bandwidth=10 * GB / s)
>>> round(break_even_divisible(base) / ms, 5)
2.45333
>>> round(min_bandwidth(base) / (GB / s), 5)
1.82648
>>> round(min_efficiency(base), 5)
0.54152
"""

from __future__ import annotations

import numpy as np

from lib import _checks
from lib.budget import Phase

__all__ = ["saving_fraction", "break_even_divisible", "min_bandwidth", "min_efficiency"]


def saving_fraction(phase: Phase) -> float | np.ndarray:
    """``1 - 1/(K eta)``: the share of divisible time the split saves.

    Zero or negative means the devices together are no faster than one.

    >>> saving_fraction(Phase(serial=0.0, divisible=1.0, efficiency=0.8))
    0.375
    """
    return _checks.result(1 - 1 / (phase.array("devices") * phase.array("efficiency")))


def break_even_divisible(phase: Phase) -> float | np.ndarray:
    """``C* = H / (1 - 1/(K eta))``: the divisible time at which T1 = T2.

    Splitting is faster exactly when ``divisible > C*``. Where
    ``K eta <= 1`` no amount of work pays and the result is ``inf``.

    >>> break_even_divisible(Phase(serial=0.0, divisible=1.0, efficiency=0.5, transfers=1, startup=1e-3))
    inf
    """
    saving = np.asarray(saving_fraction(phase))
    cost = np.asarray(phase.communication_time)
    with np.errstate(divide="ignore", invalid="ignore"):
        threshold = np.where(saving > 0, cost / np.where(saving > 0, saving, 1.0), np.inf)
    return _checks.result(threshold)


def min_bandwidth(phase: Phase) -> float | np.ndarray:
    """The bandwidth above which the split is faster, in bytes per second.

    With ``D = (C (1 - 1/(K eta)) - Q l) / Q`` the time left for each
    transfer's bytes once startups are paid, ``B_min = V / D``. Where
    ``D <= 0`` startup alone eats the saving and the result is ``inf``;
    where nothing needs to travel it is 0.

    >>> min_bandwidth(Phase(serial=0.0, divisible=1.0, efficiency=1.0, transfers=1, startup=0.6))
    inf

    A sweep over the bandwidth itself gets one (equal) answer per point:

    >>> min_bandwidth(Phase(serial=0.0, divisible=1.0, transfers=1, transfer_bytes=1.0,
    ...                     bandwidth=np.array([1.0, 2.0])))
    array([2., 2.])
    """
    margin = phase.array("divisible") * np.asarray(saving_fraction(phase)) - (
        phase.array("transfers") * phase.array("startup")
    )
    volume = phase.array("transfers") * phase.array("transfer_bytes")
    with np.errstate(divide="ignore", invalid="ignore"):
        needed = np.where(volume > 0, volume / np.where(margin > 0, margin, 1.0), 0.0)
    return _checks.result(np.where(margin > 0, needed, np.inf))


def min_efficiency(phase: Phase) -> float | np.ndarray:
    """The efficiency above which the split is faster: ``C / (K (C - H))``.

    Ignores ``phase.efficiency``. A value above 1 is the honest answer
    "impossible even with perfect shards"; where ``C <= H`` it is ``inf``.

    >>> from lib.units import ms
    >>> round(min_efficiency(Phase(serial=0.0, divisible=1 * ms, transfers=4, startup=0.23 * ms)), 2)
    6.25
    """
    divisible = phase.array("divisible")
    margin = divisible - np.asarray(phase.communication_time)
    with np.errstate(divide="ignore", invalid="ignore"):
        needed = divisible / (phase.array("devices") * np.where(margin > 0, margin, 1.0))
    return _checks.result(np.where(margin > 0, needed, np.inf))
