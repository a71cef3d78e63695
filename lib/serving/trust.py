"""How far to trust a capacity: ranges and confident sizing from chapter 11's held-out errors.

Introduced in chapter 11 (does the model hold?), which predicts published
engine runs that no constant was fitted on. For each such figure the
*capacity ratio* is what the engine delivered over what the model
predicted (:func:`lib.validation.capacity_ratios`): measured over predicted
for a rate, predicted over measured for a time, on the assumption that a
step or a token that takes longer than predicted leaves proportionally less
capacity. A ratio below 1 means the model was optimistic.

:data:`CAPACITY_RATIOS` holds the ratios' quantiles at :data:`LEVELS` for
two regimes, each from the family of runs that measures it:

* ``"load"``: a capacity under latency targets, from the load family
  (engines serving at a request rate or a concurrency: vLLM, SGLang,
  LMDeploy, TensorRT-LLM; 39 held-out figures);
* ``"decode"``: the most a layout carries without targets, at its largest
  batch, from the decode family (request latencies and decode rates at a
  fixed batch; 554 held-out figures).

The prefill family's 10 held-out first-token times are too few for the
tails of a 90 % range and give no regime of their own.

A capacity ``c`` is met or beaten, with confidence ``p``, by
``c * capacity_ratio(p)``, the ``1 - p`` quantile of the ratios: the
fraction of held-out runs that delivered at least that share of their
prediction. Between two levels the quantile is interpolated linearly, and
``p`` is kept within ``[0.05, 0.95]``: 39 figures say nothing of rarer
tails. ``tests/unit/lib/serving/test_trust.py`` recomputes the table from
:func:`lib.validation.validations`.

>>> round(capacity_ratio(0.5), 3), round(capacity_ratio(0.9), 3)
(0.855, 0.557)
>>> [round(x, 1) for x in capacity_interval(20.0)]
[10.6, 26.7]
>>> regime(ttft_limit=None, tpot_limit=0.05)
'load'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lib import _checks
from lib.serving.capacity import percentile_fraction

__all__ = [
    "LEVELS",
    "CAPACITY_RATIOS",
    "HELD_OUT",
    "INTERVAL_LEVEL",
    "regime",
    "check_confidence",
    "capacity_ratio",
    "capacity_interval",
]

#: The quantile levels of :data:`CAPACITY_RATIOS`: 5 % to 95 % in steps of 5 %.
LEVELS = tuple(round(0.05 * i, 2) for i in range(1, 20))

#: Quantiles, at :data:`LEVELS`, of the held-out capacity ratios (delivered over predicted), by regime, to four
#: significant digits: ``np.quantile(lib.validation.capacity_ratios(validations()[regime]), LEVELS)``.
CAPACITY_RATIOS = {
    "load": (
        0.5277,
        0.5572,
        0.5949,
        0.6554,
        0.7227,
        0.7502,
        0.7731,
        0.7961,
        0.8159,
        0.8548,
        0.899,
        0.9136,
        0.9516,
        0.9758,
        1.015,
        1.091,
        1.207,
        1.279,
        1.335,
    ),  # fmt: skip
    "decode": (
        0.6461,
        0.7131,
        0.7421,
        0.7659,
        0.7831,
        0.796,
        0.8152,
        0.8283,
        0.8406,
        0.854,
        0.8689,
        0.8837,
        0.8954,
        0.9109,
        0.9279,
        0.9472,
        0.9623,
        0.994,
        1.026,
    ),  # fmt: skip
}

#: How many held-out figures each regime's quantiles come from.
HELD_OUT = {"load": 39, "decode": 554}

#: The probability the ranges the planner prints cover: from the 5 % to the 95 % quantile.
INTERVAL_LEVEL = 0.9


def regime(ttft_limit: Any = None, tpot_limit: Any = None) -> str:
    """The regime of a capacity: ``"load"`` under a latency target, ``"decode"`` (the largest batch) without."""
    return "decode" if ttft_limit is None and tpot_limit is None else "load"


def _ratio_at(level: float, name: str) -> float:
    return float(np.interp(level, LEVELS, CAPACITY_RATIOS[name]))


def _check_regime(name: Any) -> str:
    if name not in CAPACITY_RATIOS:
        raise ValueError(f"regime must be one of {sorted(CAPACITY_RATIOS)}, got {name!r}")
    return name


def check_confidence(value: Any, name: str = "confidence") -> float:
    """``value`` as a probability from 0.05 to 0.95, read as the front ends read a percentile (0.9 or 90).

    >>> check_confidence(90), check_confidence(0.5)
    (0.9, 0.5)
    >>> check_confidence(0.99, "--confidence")
    Traceback (most recent call last):
    ...
    ValueError: --confidence must be from 0.05 to 0.95 (5 to 95 %): chapter 11's held-out errors say nothing of rarer tails, got 0.99
    """
    p = percentile_fraction(value, name)
    if not LEVELS[0] - 1e-12 <= p <= LEVELS[-1] + 1e-12:
        raise ValueError(
            f"{name} must be from {LEVELS[0]} to {LEVELS[-1]} (5 to 95 %): chapter 11's held-out errors say "
            f"nothing of rarer tails, got {value!r}"
        )
    return p


def capacity_ratio(confidence: float, regime: str = "load") -> float:
    """The share of a predicted capacity delivered with probability ``confidence`` (:func:`check_confidence`)."""
    return _ratio_at(1 - check_confidence(confidence), _check_regime(regime))


def capacity_interval(value: float, regime: str = "load", level: float = INTERVAL_LEVEL) -> tuple[float, float]:
    """The range that holds the delivered capacity with probability ``level``, for a predicted ``value``.

    >>> capacity_interval(10.0, "decode", 0.5)
    (7.831, 9.279)
    """
    v = _checks.scalar("value", value, _checks.nonnegative)
    width = _checks.scalar("level", level)
    widest = LEVELS[-1] - LEVELS[0]
    if not 0 < width <= widest + 1e-12:
        raise ValueError(f"level must be in (0, {widest:g}] (the table's outermost quantiles), got {level!r}")
    name = _check_regime(regime)
    return v * _ratio_at((1 - width) / 2, name), v * _ratio_at((1 + width) / 2, name)
