"""A continuous-batching server under random arrivals: a seeded simulation and a Little's-law estimate.

Introduced in chapter 9 (choosing a split). Serving engines do not take one
request at a time: they batch at the level of the decode step (Orca, Yu et
al. 2022; vLLM, Kwon et al. 2023). Every step advances every running
sequence by one token, and a step with ``n`` sequences takes
``step_times[n - 1]`` seconds (from the roofline, e.g.
``lib.serving.decode_step(..., batch=np.arange(1, B + 1), ...).tpot``).

The server here works in turns, first come, first served:

1. if requests wait and fewer than ``max_batch`` sequences run, admit as many
   as fit and run their prefills back to back (``prefill_time`` each); a
   prefill yields the request's first token;
2. one decode step for every running sequence; a request is done after
   ``output_tokens - 1`` decode steps.

While ``N`` sequences are in their decode phase on average, a sequence
shares its steps with itself and about ``N`` others (for a Poisson-like
count the size-biased mean ``E[N^2] / E[N]`` is ``N + 1``), so a step takes
about ``step(N + 1)`` (at most ``step(max_batch)``); prefills take a share
``lambda T_pre`` of the time, so the time per output token is
``step(N + 1) / (1 - lambda T_pre)``, and Little's law (N = lambda x time in
decode) closes the loop:

    N = lambda (n_out - 1) step(N + 1) / (1 - lambda T_pre)

The smallest solution is the estimate (:func:`batching_estimate`); none
exists at or above the throughput limit
``max over n of n / (n T_pre + (n_out - 1) step(n))`` (:func:`throughput_limit`).

>>> steps = 0.004 + 0.0001 * np.arange(64)           # 4 ms for one sequence, +0.1 ms per extra one
>>> out = simulate_batching(poisson_arrivals(3000, 40.0, seed=1), 100, steps, prefill_time=0.005)
>>> est = batching_estimate(40.0, 100, steps, prefill_time=0.005)
>>> round(est.tpot * 1e3, 2), bool(abs(out.tpot.mean() / est.tpot - 1) < 0.05)
(9.9, True)
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks
from lib.queueing.fcfs import (
    _refuse,
    poisson_arrivals,  # noqa: F401 (for the doctests)
    sorted_times,
    times_array,
)
from lib.queueing.theory import bisect

__all__ = ["BatchingResult", "simulate_batching", "BatchingEstimate", "batching_estimate", "throughput_limit"]

Number = Any


def _steps(step_times: Any, max_batch: int | None) -> tuple[np.ndarray, int]:
    """Validated step times (s, all > 0) and the batch limit they cover."""
    steps = times_array("step_times", step_times)
    _refuse("step_times", steps, steps <= 0, "> 0")
    if max_batch is None:
        return steps, int(steps.size)
    limit = _checks.scalar_count("max_batch", max_batch, minimum=1)
    if limit > steps.size:
        raise ValueError(
            f"max_batch must be at most len(step_times) = {steps.size} (one time per batch size), got {limit}"
        )
    return steps, limit


def _outputs(output_tokens: Any, count: int) -> np.ndarray:
    """Output tokens per request as ints >= 2 (a prefill token and at least one decode step)."""
    tokens = _checks.count("output_tokens", output_tokens, minimum=2)
    if tokens.ndim > 1 or (tokens.ndim == 1 and tokens.size != count):
        raise ValueError(f"output_tokens must be one count or one per request ({count}), got shape {tokens.shape}")
    return np.broadcast_to(tokens, (count,)).astype(np.int64)


@dataclass(frozen=True)
class BatchingResult:
    """What happened to each request in :func:`simulate_batching` (seconds; one value per request).

    ``admitted`` is when its prefill began, ``first_tokens`` when it ended
    (the first output token), ``finishes`` the end of its last decode step.
    ``running_area`` is the integral over time of the sequences between
    their first token and their finish (sequence-seconds); ``batch_sum`` the
    sum over decode steps of the sequences each carried.
    """

    arrivals: np.ndarray
    admitted: np.ndarray
    first_tokens: np.ndarray
    finishes: np.ndarray
    output_tokens: np.ndarray
    max_batch: int
    prefill_busy: float
    decode_busy: float
    decode_steps: int
    batch_sum: int
    running_area: float

    @property
    def ttft(self) -> np.ndarray:
        """Time to first token per request: queueing, waiting for the step under way, and its prefill."""
        return self.first_tokens - self.arrivals

    @property
    def tpot(self) -> np.ndarray:
        """Time per output token per request, after the first: ``(finish - first token) / (n_out - 1)``."""
        return (self.finishes - self.first_tokens) / (self.output_tokens - 1)

    @property
    def response(self) -> np.ndarray:
        """Seconds from arrival to the last token, per request."""
        return self.finishes - self.arrivals

    @property
    def duration(self) -> float:
        """Seconds from the first arrival to the last finish."""
        return float(self.finishes.max() - self.arrivals.min())

    @property
    def mean_running(self) -> float:
        """Time-average number of sequences in their decode phase (Little's law: rate x decode time)."""
        return self.running_area / self.duration

    @property
    def mean_batch(self) -> float:
        """Average sequences per decode step."""
        return self.batch_sum / self.decode_steps

    @property
    def busy_share(self) -> float:
        """Share of the duration spent in prefills or decode steps."""
        return (self.prefill_busy + self.decode_busy) / self.duration

    @property
    def tokens_per_s(self) -> float:
        """Output tokens per second over the run."""
        return float(self.output_tokens.sum() / self.duration)


def simulate_batching(
    arrivals: Any, output_tokens: Any, step_times: Any, prefill_time: float, max_batch: int | None = None
) -> BatchingResult:
    """Serve requests arriving at ``arrivals`` (s, sorted) on one continuous-batching server.

    Parameters
    ----------
    arrivals : array of float
        Arrival times, non-decreasing (e.g. :func:`poisson_arrivals`).
    output_tokens : int or array of int
        Tokens each request generates, >= 2: the prefill yields the first,
        each decode step one more.
    step_times : array of float
        ``step_times[n - 1]``: seconds of a decode step carrying ``n`` sequences.
    prefill_time : float
        Seconds of one request's prefill; prefills admitted together run back to back.
    max_batch : int, optional
        Most sequences running at once (what memory holds); default ``len(step_times)``.

    >>> out = simulate_batching([0.0, 0.0, 0.5], 3, [1.0, 1.5], prefill_time=0.25)
    >>> out.first_tokens.tolist(), out.finishes.tolist()      # two admitted at 0; the third joins at 3.5
    ([0.5, 0.5, 3.75], [3.5, 3.5, 5.75])
    >>> out.tpot.tolist()
    [1.5, 1.5, 1.0]
    """
    arrive = sorted_times("arrivals", arrivals)
    n = arrive.size
    tokens = _outputs(output_tokens, n)
    steps, limit = _steps(step_times, max_batch)
    prefill = _checks.scalar("prefill_time", prefill_time, _checks.nonnegative)

    admitted, first, finish = np.empty(n), np.empty(n), np.empty(n)
    ends: dict[int, list[int]] = {}
    waiting: deque[int] = deque()
    t = prefill_busy = decode_busy = area = 0.0
    step_no = batch_sum = running = done = i = 0
    arrive_list, token_list, step_list = arrive.tolist(), tokens.tolist(), steps.tolist()
    while done < n:
        while i < n and arrive_list[i] <= t:
            waiting.append(i)
            i += 1
        if running == 0 and not waiting:
            t = arrive_list[i]  # idle until the next arrival
            continue
        k = min(len(waiting), limit - running)
        if k:
            length = k * prefill
            area += running * length  # sequences already decoding wait through the prefills
            batch = [waiting.popleft() for _ in range(k)]
            admitted[batch] = t
            t += length
            prefill_busy += length
            first[batch] = t
            for j in batch:
                ends.setdefault(step_no + token_list[j] - 1, []).append(j)
            running += k
        if running:
            length = step_list[running - 1]
            area += running * length
            t += length
            decode_busy += length
            batch_sum += running
            step_no += 1
            for j in ends.pop(step_no, ()):
                finish[j] = t
                running -= 1
                done += 1
    return BatchingResult(
        arrive, admitted, first, finish, tokens, limit, prefill_busy, decode_busy, step_no, batch_sum, area
    )


def _step_curve(steps: np.ndarray, limit: int):
    """``step(x)``: the step time at a mean of ``x`` sequences, linear between whole batches, flat outside 1..limit."""
    grid = np.arange(1, limit + 1, dtype=float)
    table = steps[:limit]
    return lambda x: np.interp(x, grid, table)


def throughput_limit(output_tokens: int, step_times: Any, prefill_time: float, max_batch: int | None = None) -> float:
    """Highest arrival rate (requests/s) the server sustains: ``max_n n / (n T_pre + (n_out - 1) step(n))``.

    At ``n`` sequences a request costs its prefill plus ``n_out - 1`` steps
    shared with ``n - 1`` others; the best ``n`` is usually ``max_batch``.

    >>> throughput_limit(101, [0.01, 0.012], prefill_time=0.0)          # 2 sequences per 12 ms step, 100 steps each
    1.6666666666666667
    """
    out = _checks.scalar_count("output_tokens", output_tokens, minimum=2)
    steps, limit = _steps(step_times, max_batch)
    prefill = _checks.scalar("prefill_time", prefill_time, _checks.nonnegative)
    n = np.arange(1, limit + 1)
    return float(np.max(n / (n * prefill + (out - 1) * steps[:limit])))


@dataclass(frozen=True)
class BatchingEstimate:
    """The Little's-law estimate of a continuous-batching server at ``rate`` requests/s.

    ``running``: mean sequences in their decode phase; ``tpot``: mean time
    per output token (s); ``prefill_share``: share of time spent in
    prefills; ``limit``: the throughput limit. Above it ``running`` and
    ``tpot`` are infinite. Floats, or arrays shaped like ``rate``.
    """

    rate: Any
    running: Any
    tpot: Any
    prefill_share: Any
    limit: float

    @property
    def stable(self) -> Any:
        """True where the estimate is finite: the rate is below the throughput limit."""
        return np.isfinite(self.tpot)


def batching_estimate(
    rate: Number, output_tokens: int, step_times: Any, prefill_time: float, max_batch: int | None = None
) -> BatchingEstimate:
    """Mean sequences in decode ``N`` and time per output token at ``rate``, from the fixed point above.

    ``N`` is the smallest solution of
    ``N (1 - lambda T_pre) = lambda (n_out - 1) step(N + 1)``: found on the
    whole batches first, then by :func:`~lib.queueing.theory.bisect` between
    them. Where there is none (at or past the throughput limit), ``N`` and
    ``tpot`` are infinite. Broadcasts over ``rate``.

    >>> est = batching_estimate([10.0, 20.0], 101, [0.01, 0.012], prefill_time=0.0)
    >>> est.running.tolist(), est.tpot.tolist()       # the limit is 2 / (100 x 12 ms) = 1.67 requests/s
    ([inf, inf], [inf, inf])
    >>> est = batching_estimate(0.5, 101, [0.01, 0.012], 0.0)     # N = 0.5 x 100 x step(N + 1)
    >>> round(float(est.running), 6), round(float(est.tpot) * 1e3, 6)
    (0.555556, 11.111111)
    """
    lam = _checks.positive("rate", rate)
    out = _checks.scalar_count("output_tokens", output_tokens, minimum=2)
    steps, limit = _steps(step_times, max_batch)
    prefill = _checks.scalar("prefill_time", prefill_time, _checks.nonnegative)
    cap = throughput_limit(out, steps, prefill, limit)
    step = _step_curve(steps, limit)
    whole = np.arange(0, limit + 1, dtype=float)
    running, tpot = np.full(lam.shape, np.inf), np.full(lam.shape, np.inf)
    for index in np.ndindex(lam.shape):
        l_ = float(lam[index])
        if l_ >= cap:
            continue
        gap = lambda x: float(x * (1 - l_ * prefill) - l_ * (out - 1) * step(x + 1))  # noqa: E731, B023
        above = whole * (1 - l_ * prefill) - l_ * (out - 1) * step(whole + 1) >= 0
        if not above.any():
            continue
        first = int(np.argmax(above))
        n = bisect(gap, whole[first - 1], whole[first])
        running[index] = n
        tpot[index] = float(step(n + 1)) / (1 - l_ * prefill)
    return BatchingEstimate(
        _checks.result(lam), _checks.result(running), _checks.result(tpot), _checks.result(lam * prefill), cap
    )
