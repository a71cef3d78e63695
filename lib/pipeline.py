"""Pipeline parallelism: the bubble formulas, the decode loop, and an event simulation.

Introduced in chapter 8 (pipeline bubbles). ``S`` stages each hold a block
of consecutive layers; a batch cut into ``m`` microbatches flows through
them in order. While the pipeline fills and drains some stages wait, and
the idle share of the run (GPipe's bubble, Huang et al. 2019) is

    bubble_fraction = (S - 1) / (m + S - 1)

Interleaved schedules (Narayanan et al. 2021) quote the bubble instead as
idle time over useful time, which with ``v`` chunks per device is

    bubble_ratio = (S - 1) / (v m)

>>> round(bubble_fraction(4, 1), 4), round(bubble_fraction(4, 8), 4)
(0.75, 0.2727)

:func:`simulate_pipeline` does not use either formula: it schedules every
(microbatch, stage) task on its device and measures the result.

>>> schedule = simulate_pipeline([1.0, 1.0, 1.0, 1.0], microbatches=8)
>>> schedule.makespan, round(schedule.bubble_fraction, 4)
(11.0, 0.2727)

Those formulas hold where a smaller slice of work is proportionally
quicker (training, prefill). In decode every sequence makes one pass per
token and must come back round before its next; a stage's time is mostly
the reading of its weights, whatever the slice carries. Engines therefore
keep ``m = min(S, B)`` microbatches, each a slice of the running batch of
``B`` sequences (:func:`split_batch`), and each sequence gets a token every

    loop_time = max(sum(t) + hops, m max(t))

(:func:`loop_time`), which the simulator reproduces in its steady state
(:attr:`Schedule.time_per_token`).

>>> split_batch(20, 4), split_batch(20, 4, per_sequence=True)
((4, 5), (20, 1))
>>> loop_time([5.0, 5.0, 5.0, 5.0], microbatches=20)
100.0
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from lib import _checks

__all__ = ["bubble_fraction", "bubble_ratio", "split_batch", "loop_time", "Interval", "Schedule", "simulate_pipeline"]


def bubble_fraction(stages: Any, microbatches: Any) -> float | np.ndarray:
    """Idle share of a pipeline run with equal stages: ``(S - 1) / (m + S - 1)``.

    Parameters
    ----------
    stages : int or array
        ``S``, the number of pipeline stages (devices), at least 1.
    microbatches : int or array
        ``m``, the number of microbatches in flight, at least 1.

    Returns
    -------
    float or array
        The fraction of stage-time spent idle, between 0 and 1.

    Raises
    ------
    ValueError
        If either count is fractional, NaN or below 1.

    >>> round(bubble_fraction(4, 32), 4)
    0.0857
    >>> bubble_fraction(1, 5)
    0.0
    >>> bubble_fraction(4, 0)
    Traceback (most recent call last):
    ...
    ValueError: microbatches must be >= 1, got 0
    """
    s = _checks.count("stages", stages, minimum=1)
    m = _checks.count("microbatches", microbatches, minimum=1)
    return _checks.result((s - 1) / (m + s - 1))


def bubble_ratio(stages: Any, microbatches: Any, chunks: Any = 1) -> float | np.ndarray:
    """Idle time over useful time: ``(S - 1) / (v m)``.

    This is the measure Megatron-LM reports for interleaved schedules, where
    each device holds ``v`` non-adjacent chunks of layers. It is *not* the
    fraction of :func:`bubble_fraction`: the two are linked by
    ``fraction = ratio / (1 + ratio)`` (for ``v = 1``), and the ratio can
    exceed 1.

    Parameters
    ----------
    stages : int or array
        ``S``, pipeline devices, at least 1.
    microbatches : int or array
        ``m``, microbatches, at least 1.
    chunks : int or array
        ``v``, layer chunks per device (1 is the plain schedule).

    >>> bubble_ratio(4, 1)
    3.0
    >>> bubble_ratio(4, 8, chunks=2)
    0.1875
    """
    s = _checks.count("stages", stages, minimum=1)
    m = _checks.count("microbatches", microbatches, minimum=1)
    v = _checks.count("chunks", chunks, minimum=1)
    return _checks.result((s - 1) / (v * m))


def split_batch(batch: int, stages: int, per_sequence: bool = False) -> tuple[int, int]:
    """How a decode engine cuts ``B`` running sequences into microbatches: ``(m, b)``.

    With batches inside microbatches (the default, as Orca's scheduler does)
    there are ``m = min(S, B)`` microbatches of ``b = ceil(B / m)``
    sequences; the busiest slice sets the pace, so every slice is taken to
    be that size. (:func:`lib.serving.decode_step` prices the average slice
    ``B / m`` instead: its batches are steady-state averages, not counts.) With
    ``per_sequence=True`` every sequence is a microbatch of its own:
    ``(B, 1)``.

    Parameters
    ----------
    batch : int
        ``B``, sequences being decoded together, at least 1.
    stages : int
        ``S``, pipeline stages, at least 1.
    per_sequence : bool
        One sequence per microbatch instead of a slice of the batch.

    Returns
    -------
    tuple of int
        ``(microbatches, sequences per microbatch)``.

    >>> split_batch(64, 4), split_batch(3, 4), split_batch(10, 4)
    ((4, 16), (3, 1), (4, 3))
    >>> split_batch(0, 4)
    Traceback (most recent call last):
    ...
    ValueError: batch must be >= 1, got 0
    """
    b = _checks.scalar_count("batch", batch, minimum=1)
    s = _checks.scalar_count("stages", stages, minimum=1)
    if per_sequence:
        return b, 1
    m = min(s, b)
    return m, -(-b // m)


def loop_time(
    stage_times: Sequence[float], microbatches: int, hop: float = 0.0, return_hop: float | None = None
) -> float:
    """Seconds between two tokens of one sequence in a decode loop that has settled.

    A microbatch needs one trip round the loop, ``sum(t) + (S - 1) h +
    h_return``; a device needs ``m t_d`` to serve all ``m`` microbatches
    once. Whichever is longer sets the pace:

        loop_time = max(sum(t) + (S - 1) h + h_return, m max(t))

    It is the time per output token of :func:`lib.serving.decode_step`
    (which leaves out the return of the sampled tokens: ``return_hop=0``)
    and equals :attr:`Schedule.time_per_token` of the plain schedule
    (``chunks=1``) exactly.

    Parameters
    ----------
    stage_times : sequence of float
        Seconds stage ``d`` needs for one microbatch, each > 0.
    microbatches : int
        ``m``, microbatches circulating, at least 1.
    hop : float
        Seconds per hand-over between consecutive stages, >= 0.
    return_hop : float, optional
        Seconds from the last stage back to the first; ``hop`` if omitted.

    >>> loop_time([5.0, 5.0, 5.0, 5.0], 4)          # the loop and the stages are both busy
    20.0
    >>> loop_time([5.0, 5.0, 5.0, 5.0], 2, hop=0.5)  # half the stages wait
    22.0
    >>> loop_time([5.0, 5.0, 5.0, 6.0], 4)          # the slowest stage sets the pace
    24.0
    """
    times = _stage_times(stage_times)
    m = _checks.scalar_count("microbatches", microbatches, minimum=1)
    h, back = _hops(hop, return_hop)
    return max(sum(times) + (len(times) - 1) * h + back, m * max(times))


class Interval(NamedTuple):
    """One task on one device: busy from ``start`` to ``end`` (seconds)."""

    start: float
    end: float
    microbatch: int
    chunk: int
    token: int


@dataclass(frozen=True)
class Schedule:
    """The result of :func:`simulate_pipeline`.

    Attributes
    ----------
    stage_times : tuple of float
        Seconds each device spends on one microbatch (all its chunks).
    microbatches, chunks, tokens : int
        What was simulated.
    hop : float
        Seconds added on every hand-over between consecutive stages.
    return_hop : float
        Seconds from the last stage back to the first between two passes.
    intervals : tuple of tuple of Interval
        ``intervals[d]`` lists device ``d``'s busy intervals in time order.
    finish_times : tuple of float
        When each microbatch left the last stage for the last time.
    """

    stage_times: tuple[float, ...]
    microbatches: int
    chunks: int
    tokens: int
    hop: float
    intervals: tuple[tuple[Interval, ...], ...]
    finish_times: tuple[float, ...]
    return_hop: float = 0.0

    @property
    def stages(self) -> int:
        """``S``, the number of devices."""
        return len(self.stage_times)

    @property
    def makespan(self) -> float:
        """Seconds from the first task's start to the last task's end."""
        return max(self.finish_times)

    @property
    def busy_times(self) -> tuple[float, ...]:
        """Seconds each device spent working."""
        return tuple(sum(i.end - i.start for i in row) for row in self.intervals)

    @property
    def bubble_fraction(self) -> float:
        """Share of device-time (``S`` times the makespan) spent idle."""
        return 1.0 - sum(self.busy_times) / (self.stages * self.makespan)

    @property
    def first_latency(self) -> float:
        """Seconds until the first microbatch is done: what one request waits."""
        return self.finish_times[0]

    @property
    def time_per_token(self) -> float:
        """Mean seconds between two consecutive passes of one microbatch (the decode loop's pace).

        Measured from the end of each microbatch's first pass to the end of
        its last, divided by ``tokens - 1``, and averaged over microbatches;
        it leaves out the first pass, which starts from an empty pipeline.

        >>> simulate_pipeline([5.0] * 4, 20, tokens=8).time_per_token
        100.0
        >>> simulate_pipeline([5.0] * 4, 1).time_per_token
        Traceback (most recent call last):
        ...
        ValueError: tokens must be >= 2 for a time per token, got 1
        """
        if self.tokens < 2:
            raise ValueError(f"tokens must be >= 2 for a time per token, got {self.tokens}")
        done = {(i.microbatch, i.token): i.end for i in self.intervals[-1] if i.chunk == self.chunks - 1}
        last = self.tokens - 1
        return sum(done[j, last] - done[j, 0] for j in range(self.microbatches)) / (self.microbatches * last)


def _hops(hop: Any, return_hop: Any) -> tuple[float, float]:
    """The checked hop between stages and the hop back from the last stage (the same unless given)."""
    h = _checks.scalar("hop", hop, _checks.nonnegative)
    return h, h if return_hop is None else _checks.scalar("return_hop", return_hop, _checks.nonnegative)


def _stage_times(stage_times: Any) -> tuple[float, ...]:
    array = _checks.positive("stage_times", stage_times)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"stage_times must be a non-empty list of seconds, got {stage_times!r}")
    return tuple(float(t) for t in array)


def simulate_pipeline(
    stage_times: Sequence[float],
    microbatches: int,
    hop: float = 0.0,
    chunks: int = 1,
    tokens: int = 1,
    return_hop: float | None = None,
) -> Schedule:
    """Schedule a forward-only (inference) pipeline event by event.

    Each device runs one task at a time, never pre-empted. A microbatch
    visits the layer chunks in order: with ``chunks = v`` the model is cut
    into ``v S`` chunks and device ``d`` holds chunks ``d, d + S, ...``
    (the interleaved placement), each costing ``stage_times[d] / v``. Every
    hand-over from one chunk to the next costs ``hop`` seconds of delay (it
    occupies no device). With ``tokens > 1`` each microbatch makes that many
    passes, one per generated token, and a pass may only start once the
    previous one has left the last stage and hopped back (``return_hop``,
    by default ``hop``): the decode loop.

    A device that becomes free starts the waiting task that became ready
    first (ties: lower microbatch, then earlier token, then earlier chunk).

    Parameters
    ----------
    stage_times : sequence of float
        Seconds device ``d`` needs for one microbatch (all its chunks); at
        least one value, each > 0.
    microbatches : int
        ``m``, microbatches (or concurrent requests), at least 1.
    hop : float
        Seconds per hand-over between chunks, >= 0.
    chunks : int
        ``v``, layer chunks per device; 1 is the plain schedule.
    tokens : int
        Passes per microbatch (decode steps); 1 is a single forward pass.
    return_hop : float, optional
        Seconds from the last chunk back to the first between passes, >= 0;
        ``hop`` if omitted.

    Returns
    -------
    Schedule

    Raises
    ------
    ValueError
        For an empty or negative ``stage_times``, a negative ``hop`` or
        ``return_hop``, or a fractional or non-positive count; the message
        names the parameter.

    Equal stages reproduce ``(m + S - 1) t``; unequal ones
    ``sum(t) + (m - 1) max(t)``:

    >>> simulate_pipeline([2.0, 2.0, 2.0], microbatches=4).makespan
    12.0
    >>> simulate_pipeline([1.0, 3.0, 2.0], microbatches=4).makespan
    15.0
    >>> simulate_pipeline([], microbatches=4)
    Traceback (most recent call last):
    ...
    ValueError: stage_times must be a non-empty list of seconds, got []
    """
    times = _stage_times(stage_times)
    m = _checks.scalar_count("microbatches", microbatches, minimum=1)
    v = _checks.scalar_count("chunks", chunks, minimum=1)
    n = _checks.scalar_count("tokens", tokens, minimum=1)
    h, back = _hops(hop, return_hop)
    s = len(times)
    last = v * s - 1  # index of the last chunk in visiting order

    # Per device: a heap of ready tasks keyed by (ready, microbatch, token, chunk).
    ready: list[list[tuple[float, int, int, int]]] = [[] for _ in range(s)]
    free = [0.0] * s
    intervals: list[list[Interval]] = [[] for _ in range(s)]
    finish = [0.0] * m
    for j in range(m):
        heapq.heappush(ready[0], (0.0, j, 0, 0))
    remaining = m * n * (last + 1)
    while remaining:
        # The device whose next task can start soonest goes first.
        best = None
        for d in range(s):
            if ready[d]:
                start = max(free[d], ready[d][0][0])
                if best is None or start < best[0]:
                    best = (start, d)
        start, d = best
        _, j, r, k = heapq.heappop(ready[d])
        end = start + times[d] / v
        free[d] = end
        intervals[d].append(Interval(start, end, j, k // s, r))
        remaining -= 1
        if k < last:
            heapq.heappush(ready[(k + 1) % s], (end + h, j, r, k + 1))
        elif r + 1 < n:
            heapq.heappush(ready[0], (end + back, j, r + 1, 0))
        else:
            finish[j] = end
    return Schedule(times, m, v, n, h, tuple(tuple(row) for row in intervals), tuple(finish), back)
