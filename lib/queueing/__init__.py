"""Queues of requests: one at a time (M/M/c, simulated and in closed form) and continuous batching.

Introduced in chapter 9 (choosing a split). One module per topic, all re-exported here:

* :mod:`lib.queueing.fcfs`: Poisson requests and servers that take one request at a time;
* :mod:`lib.queueing.theory`: the M/M/1 and M/M/c closed forms (Erlang C, mean, tail, quantiles)
  and :func:`bisect`, the bracketed root finder the book uses for crossovers;
* :mod:`lib.queueing.batching`: a continuous-batching server, simulated and estimated by Little's law;
* :mod:`lib.queueing.chunked`: vLLM V1's scheduler step by step: decodes first, prompt chunks in the rest
  of a token budget, preemption when the KV cache is full.

>>> reqs = poisson_requests(count=20_000, rate=30.0, mean_work=0.02, seed=3)
>>> simulated = serve(reqs, servers=1, speedup=1.6).mean_response
>>> abs(simulated / mmc_mean_response(1, 30.0, 1.6 / 0.02) - 1) < 0.05
True
"""

from lib.queueing.batching import (
    BatchingEstimate,
    BatchingResult,
    batching_estimate,
    simulate_batching,
    throughput_limit,
)
from lib.queueing.chunked import ChunkedResult, simulate_chunked
from lib.queueing.fcfs import QueueResult, Requests, poisson_arrivals, poisson_requests, serve
from lib.queueing.theory import (
    bisect,
    erlang_c,
    mean_response_crossover,
    mmc_mean_response,
    mmc_response_quantile,
    mmc_response_survival,
)

__all__ = [
    "Requests",
    "poisson_arrivals",
    "poisson_requests",
    "QueueResult",
    "serve",
    "bisect",
    "erlang_c",
    "mmc_mean_response",
    "mmc_response_survival",
    "mmc_response_quantile",
    "mean_response_crossover",
    "ChunkedResult",
    "simulate_chunked",
    "BatchingResult",
    "simulate_batching",
    "BatchingEstimate",
    "batching_estimate",
    "throughput_limit",
]
