"""A serving engine's scheduler step by step: decodes first, prompt chunks in the rest of a token budget.

Introduced in chapter 9 (choosing a split). vLLM V1 has no separate prefill
and decode phases: at every step its scheduler gives tokens to the requests
it is already running, then fills what is left of ``max_num_batched_tokens``
with chunks of waiting prompts, first come, first served
(``vllm/v1/core/sched/scheduler.py`` at version 0.33.0: "First, schedule the
RUNNING requests" at line 793, "Next, schedule the WAITING requests" at line
1049, each new prompt truncated to the remaining budget at line 1346). When
the KV cache has no room for a running request's next tokens, the request
admitted last is preempted: its blocks are freed, its computed tokens reset
to zero and it goes back to the head of the queue, to be recomputed (lines
914-980 and 1799-1843). :func:`simulate_chunked` runs exactly these rules on
a stream of requests; a step takes ``step_time(decodes, prefill_tokens)``
seconds, from the serving model.

Each request of ``P`` prompt tokens (``h P`` of them found in the prefix
cache and not recomputed) and ``O`` output tokens gets its first token at the
end of the step that computes the last chunk of its prompt, and one token
per step after that; it holds ``P + tokens so far`` tokens of KV cache.

Worked by hand: two 8-token prompts at 0 and one at 5 ms, 3 output tokens
each, a budget of 10 tokens, a step of 1 ms plus 1 ms per decode and 0.1 ms
per prompt token. Step 1 computes the first prompt and 2 tokens of the
second (2 ms); step 2 decodes the first and finishes the second prompt
(2.6 ms); step 3 decodes both (3 ms); step 4 decodes the second and computes
the third prompt, which arrived during step 3 (2.8 ms); two decode steps of
2 ms finish the third:

>>> arrivals = [0.0, 0.0, 0.005]
>>> out = simulate_chunked(arrivals, 8, 3, lambda d, p: 0.001 * (1 + d) + 1e-4 * p, token_budget=10, max_seqs=4)
>>> out.first_token.round(4).tolist(), out.finish.round(4).tolist()
([0.002, 0.0046, 0.0104], [0.0076, 0.0104, 0.0144])
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks
from lib.queueing.fcfs import _refuse, sorted_times

__all__ = ["ChunkedResult", "simulate_chunked"]


@dataclass(frozen=True)
class ChunkedResult:
    """What happened to each request (seconds, one value per request) and to each step.

    ``first_token`` and ``finish`` are absolute times; ``preemptions`` counts
    how often each request was preempted; ``step_decodes``,
    ``step_prefill`` and ``step_seconds`` describe every step.
    """

    arrival: np.ndarray
    first_token: np.ndarray
    finish: np.ndarray
    output_tokens: np.ndarray
    preemptions: np.ndarray
    step_decodes: np.ndarray
    step_prefill: np.ndarray
    step_seconds: np.ndarray

    @property
    def ttft(self) -> np.ndarray:
        """Time to first token of each request: ``first_token - arrival``."""
        return self.first_token - self.arrival

    @property
    def tpot(self) -> np.ndarray:
        """Time per output token after the first, per request with at least two tokens."""
        many = self.output_tokens > 1
        return (self.finish[many] - self.first_token[many]) / (self.output_tokens[many] - 1)

    @property
    def mean_running(self) -> float:
        """Sequences decoding per step, averaged over time."""
        return float(np.sum(self.step_decodes * self.step_seconds) / np.sum(self.step_seconds))


def _per_request(name: str, value: Any, count: int, minimum: int) -> np.ndarray:
    tokens = _checks.count(name, value, minimum=minimum)
    if tokens.ndim > 1 or (tokens.ndim == 1 and tokens.size != count):
        raise ValueError(f"{name} must be one count or one per request ({count}), got shape {tokens.shape}")
    return np.broadcast_to(tokens, (count,)).astype(np.int64)


class _Request:
    """One request's progress: tokens still to compute before its first token, tokens generated, KV held."""

    __slots__ = ("index", "to_compute", "generated", "kv", "preempted", "running")

    def __init__(self, index: int, to_compute: int) -> None:
        self.index, self.to_compute, self.generated, self.kv, self.preempted = index, to_compute, 0, 0, 0
        self.running = False


def simulate_chunked(
    arrivals: Any,
    prompt_tokens: Any,
    output_tokens: Any,
    step_time: Callable[[int, int], float],
    token_budget: int,
    max_seqs: int,
    kv_tokens: float = math.inf,
    prefix_hit_rate: float = 0.0,
) -> ChunkedResult:
    """Serve ``arrivals`` with vLLM V1's scheduler rules until every request has finished.

    Parameters
    ----------
    arrivals : array of float
        Arrival times, sorted (s).
    prompt_tokens, output_tokens : int or array of int
        Per request (or one for all); ``output_tokens`` at least 1.
    step_time : callable
        ``step_time(decodes, prefill_tokens)`` in seconds, for a step that
        advances ``decodes`` running sequences by one token and computes
        ``prefill_tokens`` prompt tokens.
    token_budget, max_seqs : int
        ``max_num_batched_tokens`` and ``max_num_seqs``.
    kv_tokens : float
        Tokens the KV cache holds over all running requests (``inf``: no limit).
    prefix_hit_rate : float
        Share of each prompt found in the prefix cache, in [0, 1).
    """
    times = sorted_times("arrivals", arrivals)
    n = times.size
    prompts = _per_request("prompt_tokens", prompt_tokens, n, 1)
    outputs = _per_request("output_tokens", output_tokens, n, 1)
    budget = _checks.scalar_count("token_budget", token_budget, minimum=1)
    seqs = _checks.scalar_count("max_seqs", max_seqs, minimum=1)
    capacity = _checks.scalar("kv_tokens", kv_tokens, lambda name, v: _checks.positive(name, v, allow_inf=True))
    hit = _checks.scalar("prefix_hit_rate", prefix_hit_rate, _checks.nonnegative)
    if hit >= 1:
        raise ValueError(f"prefix_hit_rate must be in [0, 1), got {prefix_hit_rate!r}")
    need = prompts + outputs
    _refuse(
        "prompt_tokens",
        prompts.astype(float),
        need > capacity,
        f"small enough that prompt + output fits the KV cache of {capacity:g} tokens",
    )
    cached = np.floor(hit * prompts).astype(np.int64)
    first = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    preempted = np.zeros(n, dtype=np.int64)
    waiting: deque[_Request] = deque()
    running: list[_Request] = []
    decodes_log, prefill_log, seconds_log = [], [], []
    clock, arrived, done, used = 0.0, 0, 0, 0
    while done < n:
        while arrived < n and times[arrived] <= clock:
            waiting.append(_Request(arrived, int(prompts[arrived] - cached[arrived])))
            arrived += 1
        if not running and not waiting:
            clock = float(times[arrived])
            continue
        left, scheduled, was_preempted = budget, [], False
        for request in list(running):  # pass 1: the running requests, oldest first
            if not request.running:
                continue
            tokens = min(request.to_compute, left) if request.to_compute else 1
            while used + tokens > capacity:  # no room: preempt the newest, recompute it later
                victim = running.pop()
                used -= victim.kv
                victim.to_compute = int(prompts[victim.index] - cached[victim.index]) + victim.generated
                victim.kv, victim.preempted, victim.running = 0, victim.preempted + 1, False
                waiting.appendleft(victim)
                was_preempted = True
                if victim is request:
                    break
            if not request.running:
                break
            used += tokens
            request.kv += tokens
            scheduled.append((request, tokens))
            left -= tokens
            if left == 0:
                break
        if not was_preempted:  # pass 2: waiting prompts fill the budget left
            while left > 0 and waiting and len(running) < seqs:
                request = waiting[0]
                tokens = min(request.to_compute, left)
                if used + tokens + int(cached[request.index]) > capacity:
                    break
                waiting.popleft()
                if request.kv == 0:
                    request.kv = int(cached[request.index])  # the prefix found in the cache
                    used += request.kv
                request.running = True
                running.append(request)
                used += tokens
                request.kv += tokens
                scheduled.append((request, tokens))
                left -= tokens
        if not scheduled:  # nothing fits until a new arrival changes things
            clock = float(times[arrived]) if arrived < n else clock
            continue
        decodes = sum(1 for request, tokens in scheduled if not request.to_compute)
        seconds = float(step_time(decodes, len(scheduled) and sum(t for r, t in scheduled if r.to_compute)))
        clock += seconds
        decodes_log.append(decodes)
        prefill_log.append(sum(t for r, t in scheduled if r.to_compute))
        seconds_log.append(seconds)
        finished = False
        for request, tokens in scheduled:
            if request.to_compute:
                request.to_compute -= tokens
                if request.to_compute:
                    continue  # more chunks to go: no token yet
            request.generated += 1
            if np.isnan(first[request.index]):
                first[request.index] = clock
            if request.generated >= outputs[request.index]:
                finish[request.index] = clock
                preempted[request.index] = request.preempted
                request.running, finished = False, True
                used -= request.kv
                done += 1
        if finished:
            running = [request for request in running if request.running]
    return ChunkedResult(
        times, first, finish, outputs, preempted, np.array(decodes_log), np.array(prefill_log), np.array(seconds_log)
    )
