"""Expert parallelism: a seeded top-k router, the expert slot limit and dropped tokens.

Introduced in chapter 9 (choosing a split). A mixture-of-experts layer sends
each token to the ``k`` experts its router scores highest. With the experts
spread over devices, tokens travel to them in an all-to-all, and because the
routing depends on the data some experts get more than their share. An
expert accepts at most

    slot limit = ceil(capacity_factor * tokens * k / experts)

token slots per step; the rest are dropped (they skip the expert and pass on
through the residual connection). The book calls this the expert slot limit
and keeps "capacity" for memory; the Switch Transformer and GShard papers call
it the expert capacity, and its multiplier the capacity factor, which is why
the functions and fields keep those names (:func:`expert_slot_limit` and
:attr:`Routing.slot_limit` are the book's names for the same numbers).

>>> r = simulate_router(tokens=1024, experts=8, top_k=2, capacity_factor=1.25, seed=0)
>>> r.routed + r.dropped == r.slots == 2048
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from lib import _checks

__all__ = [
    "route",
    "expert_capacity",
    "expert_slot_limit",
    "Routing",
    "dispatch",
    "simulate_router",
    "load_imbalance",
    "dispatch_bytes",
    "expected_max_normal",
    "expert_imbalance",
]


def route(tokens: int, experts: int, top_k: int = 2, seed: int = 0, skew: float = 0.0) -> np.ndarray:
    """Choose ``top_k`` distinct experts for each of ``tokens`` random tokens.

    The router's scores are standard normal noise per (token, expert) plus
    ``skew`` times a per-expert popularity drawn once from the same seed:
    ``skew = 0`` is a router that spreads tokens evenly on average, larger
    values mimic a router that favours some experts, as untrained or
    unbalanced routers do.

    Parameters
    ----------
    tokens, experts, top_k : int
        Tokens in the step, experts in the layer, experts per token
        (``1 <= top_k <= experts``).
    seed : int
        Seed of :func:`numpy.random.default_rng`; the same seed gives the
        same routing.
    skew : float
        >= 0, how strongly the router prefers some experts.

    Returns
    -------
    numpy.ndarray of int, shape (tokens, top_k)
        Column 0 holds each token's first choice, column 1 its second, ...

    >>> route(4, experts=8, top_k=2, seed=1).shape
    (4, 2)
    >>> bool((route(6, 8, 2, seed=3) == route(6, 8, 2, seed=3)).all())
    True
    """
    t = _checks.scalar_count("tokens", tokens, minimum=1)
    e = _checks.scalar_count("experts", experts, minimum=1)
    k = _checks.scalar_count("top_k", top_k, minimum=1)
    if k > e:
        raise ValueError(f"top_k must be <= experts ({e}), got {top_k!r}")
    bias = _checks.scalar("skew", skew, _checks.nonnegative)
    rng = np.random.default_rng(seed)
    popularity = rng.standard_normal(e)
    scores = rng.standard_normal((t, e)) + bias * popularity
    return np.argsort(-scores, axis=1, kind="stable")[:, :k]


def expert_capacity(tokens: int, experts: int, top_k: int, capacity_factor: float) -> int:
    """Token slots one expert accepts per step: ``ceil(f * tokens * k / E)``.

    >>> expert_capacity(1024, 8, 2, 1.0)
    256
    >>> expert_capacity(1024, 8, 2, 1.25)
    320
    """
    t = _checks.scalar_count("tokens", tokens, minimum=1)
    e = _checks.scalar_count("experts", experts, minimum=1)
    k = _checks.scalar_count("top_k", top_k, minimum=1)
    f = _checks.scalar("capacity_factor", capacity_factor, _checks.positive)
    return math.ceil(round(f * t * k / e, 9))


def expert_slot_limit(tokens: int, experts: int, top_k: int, capacity_factor: float) -> int:
    """The book's name for :func:`expert_capacity`: token slots one expert accepts per step.

    >>> expert_slot_limit(1024, 8, 2, 1.25) == expert_capacity(1024, 8, 2, 1.25) == 320
    True
    """
    return expert_capacity(tokens, experts, top_k, capacity_factor)


def load_imbalance(load: Any) -> float:
    """Busiest expert's load over the mean load (1 is perfectly even).

    >>> load_imbalance([3, 1, 2, 2])
    1.5
    """
    array = _checks.nonnegative("load", load)
    if array.ndim != 1 or array.size == 0 or array.sum() == 0:
        raise ValueError(f"load must be a non-empty list with a positive total, got {load!r}")
    return float(array.max() / array.mean())


@dataclass(frozen=True)
class Routing:
    """Where a step's token slots went.

    Attributes
    ----------
    assignments : numpy.ndarray, shape (tokens, top_k)
        Expert chosen for each slot.
    kept : numpy.ndarray of bool, same shape
        Whether the expert accepted that slot.
    experts, capacity : int
        Experts in the layer; slots each accepts.
    """

    assignments: np.ndarray
    kept: np.ndarray
    experts: int
    capacity: int

    @property
    def slot_limit(self) -> int:
        """The book's name for ``capacity``: slots each expert accepts per step.

        >>> routing = dispatch([[0], [0], [0], [1]], experts=2, capacity=2)
        >>> routing.slot_limit == routing.capacity == 2
        True
        """
        return self.capacity

    @property
    def slots(self) -> int:
        """Token slots asked for: tokens times ``top_k``."""
        return int(self.assignments.size)

    @property
    def load(self) -> np.ndarray:
        """Slots each expert was asked to take."""
        return np.bincount(self.assignments.ravel(), minlength=self.experts)

    @property
    def accepted(self) -> np.ndarray:
        """Slots each expert took (at most ``capacity``)."""
        return np.bincount(self.assignments[self.kept], minlength=self.experts)

    @property
    def routed(self) -> int:
        """Slots that reached their expert."""
        return int(self.kept.sum())

    @property
    def dropped(self) -> int:
        """Slots turned away because their expert was full."""
        return self.slots - self.routed

    @property
    def drop_fraction(self) -> float:
        """Dropped slots over all slots."""
        return self.dropped / self.slots

    @property
    def imbalance(self) -> float:
        """:func:`load_imbalance` of the requested load."""
        return load_imbalance(self.load)


def dispatch(assignments: Any, experts: int, capacity: int) -> Routing:
    """Apply an expert capacity: first choices first, then in token order.

    Slots are offered to their experts in order of choice rank (all first
    choices before any second choice, as GShard does) and, within a rank, in
    token order; an expert takes slots until it holds ``capacity``.

    >>> r = dispatch([[0, 1], [0, 1], [0, 2]], experts=3, capacity=2)
    >>> r.accepted.tolist(), r.dropped
    ([2, 2, 1], 1)
    >>> r.kept.tolist()
    [[True, True], [True, True], [False, True]]
    """
    a = np.asarray(assignments)
    e = _checks.scalar_count("experts", experts, minimum=1)
    c = _checks.scalar_count("capacity", capacity, minimum=0)
    if a.ndim != 2 or a.size == 0 or not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"assignments must be a non-empty 2-D array of expert indices, got {assignments!r}")
    if a.min() < 0 or a.max() >= e:
        raise ValueError(f"assignments must lie in [0, {e}), got values {a.min()}..{a.max()}")
    flat = a.T.ravel()  # rank-major order: every first choice, then every second ...
    order = np.argsort(flat, kind="stable")
    first = np.searchsorted(flat[order], np.arange(e))
    position = np.empty(flat.size, dtype=int)
    position[order] = np.arange(flat.size) - first[flat[order]]
    kept = (position < c).reshape(a.shape[1], a.shape[0]).T
    return Routing(a.copy(), kept, e, c)


def simulate_router(
    tokens: int, experts: int, top_k: int = 2, capacity_factor: float = 1.25, seed: int = 0, skew: float = 0.0
) -> Routing:
    """:func:`route` then :func:`dispatch` at :func:`expert_capacity`.

    >>> r = simulate_router(512, 8, top_k=1, capacity_factor=1.0, seed=2, skew=1.0)
    >>> r.imbalance > 1 and r.dropped > 0
    True
    """
    a = route(tokens, experts, top_k, seed=seed, skew=skew)
    return dispatch(a, experts, expert_capacity(tokens, experts, top_k, capacity_factor))


def dispatch_bytes(routing: Routing, devices: int, hidden: int, bytes_per_element: float) -> np.ndarray:
    """Bytes each device sends in the dispatch all-to-all.

    Tokens are split into ``devices`` contiguous blocks (each device holds
    its own part of the batch) and experts likewise (device ``d`` holds
    experts ``d E / D`` onwards). Each accepted slot whose expert lives on
    another device sends one activation of ``hidden`` elements; the return
    trip (combine) costs the same again.

    >>> r = dispatch([[0], [1], [1], [0]], experts=2, capacity=4)
    >>> dispatch_bytes(r, devices=2, hidden=4, bytes_per_element=2).tolist()
    [8.0, 8.0]
    """
    d = _checks.scalar_count("devices", devices, minimum=1)
    h = _checks.scalar_count("hidden", hidden, minimum=1)
    b = _checks.scalar("bytes_per_element", bytes_per_element, _checks.positive)
    if routing.experts % d:
        raise ValueError(f"devices must divide experts ({routing.experts}), got {devices!r}")
    t = routing.assignments.shape[0]
    source = (np.arange(t) * d // t)[:, None].repeat(routing.assignments.shape[1], axis=1)
    target = routing.assignments * d // routing.experts
    leaving = routing.kept & (source != target)
    return np.bincount(source[leaving], minlength=d).astype(float) * h * b


@lru_cache(maxsize=64)
def expected_max_normal(n: int) -> float:
    """Expected largest of ``n`` independent standard normal draws.

    ``E[max] = integral of x n phi(x) Phi(x)^(n-1) dx``, by the trapezoid rule
    on [-10, 10] (the tails beyond hold less than 1e-20 of the mass).

    >>> expected_max_normal(1), round(expected_max_normal(2), 4), round(expected_max_normal(8), 4)
    (0.0, 0.5642, 1.4236)
    """
    m = _checks.scalar_count("n", n, minimum=1)
    if m == 1:
        return 0.0
    x = np.linspace(-10.0, 10.0, 4001)
    density = np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    below = 0.5 * (1 + np.array([math.erf(v / math.sqrt(2)) for v in x]))
    f = x * m * density * below ** (m - 1)
    return float(np.sum((f[1:] + f[:-1]) / 2 * np.diff(x)))


def expert_imbalance(tokens: Any, experts: Any, top_k: Any, devices: Any) -> float | np.ndarray:
    """Expected slots on the busiest of ``devices`` over the mean, with experts placed whole and routed evenly.

    Each device holds ``E/D`` of the experts. A token's ``k`` distinct
    choices put a hypergeometric number of slots on one device, of mean
    ``k/D`` and variance ``v = k (1/D)(1 - 1/D)(E - k)/(E - 1)``; over ``T``
    tokens a device's load is close to normal with mean ``T k/D`` and
    variance ``T v``, and the busiest of ``D`` such devices is about
    ``m_D`` standard deviations above the mean (:func:`expected_max_normal`):

        imbalance = 1 + m_D sqrt(T v) / (T k / D)

    capped at the most one device can take, ``D min(k, E/D) / k``. It falls
    as ``1/sqrt(T)``: a large batch spreads evenly, a small one does not, so
    the busiest device sets the pace of an expert-parallel step. This is a
    router that favours no expert on average (balanced by an auxiliary loss
    or a bias, as trained routers are); a skewed router is worse, see
    :func:`simulate_router`. Every argument broadcasts; ``tokens = 0``
    gives 1.

    >>> round(expert_imbalance(4096, 256, 8, 8), 3), round(expert_imbalance(1, 256, 8, 8), 2)
    (1.021, 2.31)
    >>> float(expert_imbalance(1000, 8, 2, 1))
    1.0
    """
    t = _checks.nonnegative("tokens", tokens)
    e = _checks.count("experts", experts, minimum=1)
    k = _checks.count("top_k", top_k, minimum=1)
    d = _checks.count("devices", devices, minimum=1)
    if (k > e).any() or (e % d).any():
        raise ValueError(
            f"top_k must be at most experts and devices must divide experts, got top_k={top_k!r}, "
            f"experts={experts!r}, devices={devices!r}"
        )
    share = 1.0 / d
    variance = k * share * (1 - share) * np.where(e > 1, (e - k) / np.maximum(e - 1, 1), 0.0)
    spread = np.vectorize(expected_max_normal, otypes=[float])(d.astype(int))
    with np.errstate(divide="ignore", invalid="ignore"):
        above = np.where(t > 0, spread * np.sqrt(variance / np.maximum(t, 1e-300)) / (k * share), 0.0)
    return _checks.result(np.minimum(1 + above, d * np.minimum(k, e / d) / k))
