"""Collectives: how many bytes each device sends, how long it takes, and how NCCL chooses.

Introduced in chapter 5 (collectives). One module per topic, all re-exported here:

* :mod:`lib.collectives.bytes`: bytes each device sends, nccl-tests' algbw and busbw;
* :mod:`lib.collectives.timing`: the closed-form ``l + V / B`` and ring models;
* :mod:`lib.collectives.nccl`: NCCL's algorithms, protocols and tuner for an all-reduce
  (the book's startup model), in-network reduction included;
* :mod:`lib.collectives.engine`: the all-reduce a serving engine runs (vLLM's one- and two-shot
  kernels on NVLink, NCCL elsewhere);
* :mod:`lib.collectives.startup`: the same model for other collectives, pipeline
  hops, one collective's startup, and a two-level all-reduce;
* :mod:`lib.collectives.ring`: a ring all-reduce that moves real numpy chunks.

>>> from lib.units import MB
>>> allreduce_bytes(4 * MB, 4) / MB
6.0
"""

from lib.collectives.bytes import (
    KINDS,
    algorithm_bandwidth,
    all_to_all_bytes,
    allgather_bytes,
    allreduce_bytes,
    bus_bandwidth,
    busbw_factor,
    bytes_sent,
    reduce_scatter_bytes,
)
from lib.collectives.engine import ALLREDUCE_CHOICES, EngineAllReduce, engine_allreduce, kernel_for
from lib.collectives.nccl import (
    ALGORITHMS,
    BASE_LATENCY,
    PROTOCOL_SHARE,
    PROTOCOLS,
    Choice,
    Cost,
    allreduce_cost,
    tune_allreduce,
    tuning_constants,
)
from lib.collectives.ring import RingRun, Transfer, chunk_contributions, ring_allreduce, simulate_ring_allreduce
from lib.collectives.startup import (
    TwoLevel,
    best_collective_time,
    collective_cost,
    send_time,
    startup_time,
    two_level_allreduce,
)
from lib.collectives.timing import collective_time, crossover_message_bytes, ring_allreduce_time

__all__ = [
    "KINDS",
    "allreduce_bytes",
    "allgather_bytes",
    "reduce_scatter_bytes",
    "all_to_all_bytes",
    "bytes_sent",
    "busbw_factor",
    "algorithm_bandwidth",
    "bus_bandwidth",
    "collective_time",
    "ring_allreduce_time",
    "crossover_message_bytes",
    "ALGORITHMS",
    "PROTOCOLS",
    "BASE_LATENCY",
    "PROTOCOL_SHARE",
    "Cost",
    "Choice",
    "allreduce_cost",
    "tune_allreduce",
    "collective_cost",
    "best_collective_time",
    "send_time",
    "startup_time",
    "TwoLevel",
    "two_level_allreduce",
    "tuning_constants",
    "ALLREDUCE_CHOICES",
    "EngineAllReduce",
    "engine_allreduce",
    "kernel_for",
    "Transfer",
    "RingRun",
    "simulate_ring_allreduce",
    "ring_allreduce",
    "chunk_contributions",
]
