"""Closed forms for servers that take one request at a time (M/M/c), and a bracketed root finder.

Introduced in chapter 9 (choosing a split). Requests arrive as a Poisson
stream at ``rate`` (lambda, per second); each needs an exponential service
time with mean ``1 / service_rate`` (mu); ``servers`` (c) identical servers
share one first-come-first-served queue. The load is
``rho = lambda / (c mu)``; below 1 the queue settles.

* The chance that an arrival must wait is Erlang's C formula.
* The wait of those who wait is exponential with rate ``c mu - lambda``; the
  response time is that wait plus an exponential service, so its tail is

      P(T > t) = exp(-mu t) + C mu t exp(-min(mu, g) t) phi(|g - mu| t),
      g = c mu - lambda,  phi(x) = (1 - exp(-x)) / x,

  which for one server reduces to ``exp(-(mu - lambda) t)``: an M/M/1 response
  time is exponential with rate ``mu - lambda`` (Harchol-Balter 2013, ch. 14-15).

A split that is ``s`` times faster than one device is one server with
service rate ``s mu``; two replicas are two servers with ``mu`` each.

>>> round(mmc_mean_response(servers=1, rate=30.0, service_rate=80.0), 6)    # 1 / (mu - lambda)
0.02
>>> round(mmc_response_quantile(0.99, 1, 30.0, 80.0) / (math.log(100) / 50.0), 9)
1.0
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from lib import _checks

__all__ = [
    "bisect",
    "erlang_c",
    "mmc_mean_response",
    "mmc_response_survival",
    "mmc_response_quantile",
    "mean_response_crossover",
]

Number = Any


def bisect(f: Callable[[float], float], lo: float, hi: float, xtol: float = 0.0, max_iter: int = 400) -> float:
    """A root of ``f`` in ``[lo, hi]`` by bisection; ``f(lo)`` and ``f(hi)`` must differ in sign.

    Halves the bracket until it is no wider than ``xtol`` or, with the
    default ``xtol = 0``, until the midpoint is one of its ends (full float
    precision). Returns the end of the last bracket where ``f`` is closer to 0.

    >>> round(bisect(lambda x: x * x - 2, 0.0, 2.0), 12)
    1.414213562373
    >>> bisect(lambda x: x - 5, 0.0, 2.0)
    Traceback (most recent call last):
    ...
    ValueError: lo and hi must bracket a root (f changes sign), got f(0.0) = -5.0 and f(2.0) = -3.0
    """
    a = _checks.scalar("lo", lo)
    b = _checks.scalar("hi", hi)
    if not (math.isfinite(a) and math.isfinite(b)) or a >= b:
        raise ValueError(f"lo and hi must be finite with lo < hi, got lo={lo!r}, hi={hi!r}")
    tol = _checks.scalar("xtol", xtol, _checks.nonnegative)
    fa, fb = float(f(a)), float(f(b))
    if math.isnan(fa) or math.isnan(fb):
        raise ValueError(f"f must be a number at lo and hi, got f({a!r}) = {fa!r} and f({b!r}) = {fb!r}")
    if fa == 0.0:
        return a
    if fb == 0.0:
        return b
    if (fa > 0) == (fb > 0):
        raise ValueError(f"lo and hi must bracket a root (f changes sign), got f({a!r}) = {fa!r} and f({b!r}) = {fb!r}")
    for _ in range(_checks.scalar_count("max_iter", max_iter, minimum=1)):
        mid = a + (b - a) / 2
        if b - a <= tol or mid in (a, b):
            break
        fm = float(f(mid))
        if fm == 0.0:
            return mid
        if (fm > 0) == (fa > 0):
            a, fa = mid, fm
        else:
            b, fb = mid, fm
    return a if abs(fa) <= abs(fb) else b


def _queue(servers: int, rate: Number, service_rate: Number) -> tuple[int, np.ndarray, np.ndarray]:
    c = _checks.scalar_count("servers", servers, minimum=1)
    lam = _checks.positive("rate", rate)
    mu = _checks.positive("service_rate", service_rate)
    return c, lam, mu


def erlang_c(servers: int, rate: Number, service_rate: Number) -> float | np.ndarray:
    """Probability that an arrival finds all ``servers`` busy and waits (Erlang C); 1 at or above the limit.

    From Erlang's B formula by its recursion ``B_k = a B_{k-1} / (k + a B_{k-1})``
    with offered load ``a = lambda / mu``; then ``C = B / (1 - rho (1 - B))``.

    >>> round(erlang_c(1, 30.0, 80.0), 12)      # one server: the load itself
    0.375
    >>> round(erlang_c(2, 70.0, 50.0), 4)        # two servers: 2 rho^2 / (1 + rho), rho = 0.7
    0.5765
    >>> erlang_c(2, [50.0, 100.0, 120.0], 50.0).round(4).tolist()
    [0.3333, 1.0, 1.0]
    """
    c, lam, mu = _queue(servers, rate, service_rate)
    a = lam / mu
    rho = a / c
    b = np.ones_like(a)
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    with np.errstate(divide="ignore", invalid="ignore"):
        waits = b / (1 - rho * (1 - b))
    return _checks.result(np.where(rho >= 1, 1.0, waits))


def mmc_mean_response(servers: int, rate: Number, service_rate: Number) -> float | np.ndarray:
    """Mean response time (s): Erlang-C wait ``C / (c mu - lambda)`` plus the mean service ``1 / mu``.

    Infinite at or above the throughput limit ``c mu`` (the queue grows without end).

    >>> round(mmc_mean_response(2, 70.0, 50.0), 6)          # 1 / (mu (1 - rho^2)) with rho = 0.7
    0.039216
    >>> mmc_mean_response(1, [40.0, 80.0], 80.0).tolist()
    [0.025, inf]
    """
    c, lam, mu = _queue(servers, rate, service_rate)
    waits = np.asarray(erlang_c(c, lam, mu))
    with np.errstate(divide="ignore"):
        mean = np.where(lam < c * mu, waits / np.maximum(c * mu - lam, 0) + 1 / mu, math.inf)
    return _checks.result(mean)


def _phi(x: np.ndarray) -> np.ndarray:
    """``(1 - exp(-x)) / x`` for ``x >= 0``, 1 at 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, -np.expm1(-x) / np.where(x > 0, x, 1.0), 1.0)


def mmc_response_survival(t: Number, servers: int, rate: Number, service_rate: Number) -> float | np.ndarray:
    """``P(T > t)``: the share of requests whose response time exceeds ``t`` seconds.

    The response is an exponential service (rate ``mu``) plus, with
    probability C, an exponential wait (rate ``g = c mu - lambda``); see the
    module notes. 1 at or above the throughput limit.

    >>> round(mmc_response_survival(0.05, 1, 30.0, 80.0), 12) == round(float(np.exp(-50.0 * 0.05)), 12)
    True
    >>> mmc_response_survival([0.0, 1.0], 2, 100.0, 50.0).tolist()
    [1.0, 1.0]
    """
    time = _checks.nonnegative("t", t)
    c, lam, mu = _queue(servers, rate, service_rate)
    waits = np.asarray(erlang_c(c, lam, mu))
    g = np.maximum(c * mu - lam, 0.0)
    tail = np.exp(-mu * time) + waits * mu * time * np.exp(-np.minimum(mu, g) * time) * _phi(np.abs(g - mu) * time)
    return _checks.result(np.where(lam < c * mu, np.minimum(tail, 1.0), 1.0))


def mmc_response_quantile(q: float, servers: int, rate: Number, service_rate: Number) -> float | np.ndarray:
    """The ``q``-quantile of the response time (s), by :func:`bisect` on :func:`mmc_response_survival`.

    ``q`` is a fraction in (0, 1): 0.99 gives the 99th percentile. Broadcasts
    over ``rate`` and ``service_rate``; infinite at or above the throughput limit.

    >>> round(mmc_response_quantile(0.99, 1, 30.0, 80.0), 6)       # ln(100) / (mu - lambda)
    0.092103
    >>> mmc_response_quantile(0.5, 2, [50.0, 100.0], 50.0).round(5).tolist()
    [0.01949, inf]
    """
    p = _checks.scalar("q", q, _checks.fraction)
    if p >= 1:
        raise ValueError(f"q must be below 1 (a quantile; 0.99 for the 99th percentile), got {q!r}")
    c, lam, mu = _queue(servers, rate, service_rate)
    lam, mu = np.broadcast_arrays(lam, mu)
    out = np.empty(lam.shape)
    for index in np.ndindex(lam.shape):
        l_, m_ = float(lam[index]), float(mu[index])
        if l_ >= c * m_:
            out[index] = math.inf
            continue
        excess = lambda x: float(mmc_response_survival(x, c, l_, m_)) - (1 - p)  # noqa: E731, B023
        hi = 1 / m_
        while excess(hi) > 0:
            hi *= 2
        out[index] = bisect(excess, 0.0, hi)
    return _checks.result(out)


def mean_response_crossover(speedup: float) -> float:
    """Load above which two replicas beat one server ``speedup`` times faster on the mean response.

    Two M/M/1 servers of rate ``mu`` sharing one queue (M/M/2) against one of
    rate ``s mu``, both offered ``lambda = 2 rho mu``. Their means
    ``1 / (mu (1 - rho^2))`` and ``1 / (mu (s - 2 rho))`` are equal where
    ``rho^2 - 2 rho + s - 1 = 0``, so the crossover is ``1 - sqrt(2 - s)``:
    zero when ``s <= 1`` (the replicas win at every load). From ``s = 2`` on,
    the faster server wins at every load, so there is no crossover.

    >>> round(mean_response_crossover(1.75), 6)               # 1 - sqrt(0.25)
    0.5
    >>> mean_response_crossover(0.9)
    0.0
    >>> mean_response_crossover(2.0)
    Traceback (most recent call last):
    ...
    ValueError: speedup must be below 2 (from 2 on the faster server wins the mean at every load), got 2.0
    """
    s = _checks.scalar("speedup", speedup, _checks.positive)
    if s >= 2:
        raise ValueError(
            f"speedup must be below 2 (from 2 on the faster server wins the mean at every load), got {speedup!r}"
        )
    return max(0.0, 1.0 - math.sqrt(2.0 - s))
