"""Requests that arrive at random, and servers that take them one at a time, first come, first served.

Introduced in chapter 9 (choosing a split). Requests arrive at random (a
Poisson stream) and each carries some work: the seconds one device would
need for it. A pool of ``servers`` identical servers takes them first come,
first served; a server that is ``speedup`` times faster than one device
finishes a request in ``work / speedup``. Two replicas are
``serve(requests, servers=2)``; one model split over the same two devices is
``serve(requests, servers=1, speedup=s)`` with the split's speedup ``s``
(at most 2). See Harchol-Balter (2013) for the theory behind the shapes, and
:mod:`lib.queueing.theory` for the closed forms.

>>> reqs = poisson_requests(count=2000, rate=50.0, mean_work=0.02, seed=0)
>>> two = serve(reqs, servers=2)
>>> split = serve(reqs, servers=1, speedup=1.6)
>>> two.completed == split.completed == 2000
True
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from lib import _checks

__all__ = ["Requests", "poisson_arrivals", "poisson_requests", "QueueResult", "serve"]


def _refuse(name: str, values: np.ndarray, bad: np.ndarray, rule: str) -> None:
    """Raise a ValueError naming ``name``, the first bad value and its index."""
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{name} must be {rule}, got {float(values[i])!r} at index {i}")


def times_array(name: str, value: object) -> np.ndarray:
    """``value`` as a finite, non-empty 1-D float array, or a ValueError naming ``name``.

    >>> times_array("arrivals", [0, 1.5]).tolist()
    [0.0, 1.5]
    >>> times_array("arrivals", [[0.0]])
    Traceback (most recent call last):
    ...
    ValueError: arrivals must be a 1-D array, got shape (1, 1)
    """
    array = _checks.as_float(name, value)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {array.shape}")
    _refuse(name, array, ~np.isfinite(array), "finite")
    if array.size == 0:
        raise ValueError(f"{name} must hold at least one request, got an empty array")
    return array


def sorted_times(name: str, value: object) -> np.ndarray:
    """:func:`times_array` that also refuses times going backwards."""
    array = times_array(name, value)
    backwards = np.concatenate([[False], np.diff(array) < 0])
    _refuse(name, array, backwards, "non-decreasing (sorted)")
    return array


@dataclass(frozen=True)
class Requests:
    """A stream of requests: arrival times (sorted, s) and work (s on one device).

    Both are stored as 1-D float arrays of the same, non-zero length; times
    must be finite, work must be >= 0 and arrivals must not go backwards
    (first come, first served serves them in the given order).

    >>> len(Requests([0.0, 1.0], [0.5, 0.5]))
    2
    >>> Requests([1.0, 0.0], [0.5, 0.5])
    Traceback (most recent call last):
    ...
    ValueError: arrivals must be non-decreasing (sorted), got 0.0 at index 1
    """

    arrivals: np.ndarray
    work: np.ndarray

    def __post_init__(self) -> None:
        arrivals = times_array("arrivals", self.arrivals)
        work = times_array("work", self.work)
        _refuse("work", work, work < 0, ">= 0")
        if arrivals.size != work.size:
            raise ValueError(
                f"arrivals and work must have the same length, got {arrivals.size} arrivals and {work.size} work values"
            )
        arrivals = sorted_times("arrivals", arrivals)
        object.__setattr__(self, "arrivals", arrivals)
        object.__setattr__(self, "work", work)

    def __len__(self) -> int:
        return int(self.arrivals.size)


def poisson_arrivals(count: int, rate: float, seed: int = 0) -> np.ndarray:
    """``count`` arrival times (s) of a Poisson stream at ``rate`` per second, seeded.

    The gaps are exponential with mean ``1 / rate``; the first arrival comes
    after one gap. :func:`poisson_requests` with the same seed has the same
    arrivals.

    >>> poisson_arrivals(3, rate=2.0, seed=1).round(3).tolist()
    [0.537, 0.691, 3.378]
    >>> bool((poisson_arrivals(50, 2.0, seed=1) == poisson_requests(50, 2.0, 1.0, seed=1).arrivals).all())
    True
    """
    n = _checks.scalar_count("count", count, minimum=1)
    lam = _checks.scalar("rate", rate, _checks.positive)
    return np.cumsum(np.random.default_rng(seed).exponential(1.0 / lam, n))


def poisson_requests(count: int, rate: float, mean_work: float, seed: int = 0, cv: float = 1.0) -> Requests:
    """``count`` requests arriving at ``rate`` per second, Poisson, seeded.

    Work per request is gamma distributed with mean ``mean_work`` seconds and
    coefficient of variation ``cv`` (1: exponential; 0, or below 1e-6: every
    request the same; above 1: a few long requests among many short ones).

    >>> r = poisson_requests(5, rate=10.0, mean_work=0.1, seed=1, cv=0.0)
    >>> len(r), r.work.tolist()
    (5, [0.1, 0.1, 0.1, 0.1, 0.1])
    >>> bool(np.all(np.diff(r.arrivals) >= 0))
    True
    """
    n = _checks.scalar_count("count", count, minimum=1)
    lam = _checks.scalar("rate", rate, _checks.positive)
    mean = _checks.scalar("mean_work", mean_work, _checks.positive)
    spread = _checks.scalar("cv", cv, _checks.nonnegative)
    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(1.0 / lam, n))
    if spread < 1e-6:  # narrower than that, a gamma is the mean to within rounding
        work = np.full(n, mean)
    else:
        shape = 1.0 / spread**2
        work = rng.gamma(shape, mean / shape, n)
    return Requests(arrivals, work)


@dataclass(frozen=True)
class QueueResult:
    """What happened to each request in :func:`serve`.

    Attributes
    ----------
    arrivals, starts, finishes : numpy.ndarray
        Seconds, one value per request.
    servers : int
    speedup : float
    """

    arrivals: np.ndarray
    starts: np.ndarray
    finishes: np.ndarray
    servers: int
    speedup: float

    @property
    def completed(self) -> int:
        """Requests that finished (all of them: nothing is lost)."""
        return int(np.isfinite(self.finishes).sum())

    @property
    def response(self) -> np.ndarray:
        """Seconds from arrival to finish, per request."""
        return self.finishes - self.arrivals

    @property
    def wait(self) -> np.ndarray:
        """Seconds spent queueing before service began."""
        return self.starts - self.arrivals

    @property
    def mean_response(self) -> float:
        """The mean response time in seconds."""
        return float(self.response.mean())

    @property
    def p99_response(self) -> float:
        """The 99th percentile of the response time."""
        return float(np.percentile(self.response, 99))

    @property
    def utilisation(self) -> float:
        """Busy share of the servers between the first arrival and the last finish."""
        busy = (self.finishes - self.starts).sum()
        return float(busy / (self.servers * (self.finishes.max() - self.arrivals.min())))


def serve(requests: Requests, servers: int = 1, speedup: float = 1.0) -> QueueResult:
    """First come, first served on ``servers`` servers of the given ``speedup``.

    Each request goes to the server that frees up first and takes
    ``work / speedup`` seconds there.

    >>> r = Requests(np.array([0.0, 0.0, 1.0]), np.array([2.0, 2.0, 2.0]))
    >>> serve(r, servers=1).finishes.tolist()
    [2.0, 4.0, 6.0]
    >>> serve(r, servers=2).finishes.tolist()
    [2.0, 2.0, 4.0]
    >>> serve(r, servers=1, speedup=2.0).finishes.tolist()
    [1.0, 2.0, 3.0]
    """
    c = _checks.scalar_count("servers", servers, minimum=1)
    k = _checks.scalar("speedup", speedup, _checks.positive)
    arrivals = requests.arrivals
    service = requests.work / k
    free = [0.0] * c
    starts = np.empty_like(arrivals)
    for i, (arrival, length) in enumerate(zip(arrivals.tolist(), service.tolist())):
        start = max(arrival, free[0])
        starts[i] = start
        heapq.heapreplace(free, start + length)
    return QueueResult(arrivals, starts, starts + service, c, k)
