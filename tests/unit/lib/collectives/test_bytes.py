"""Tests for lib.collectives.bytes: bytes each device sends, nccl-tests' busbw factors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lib import collectives as col
from lib.units import GB

# --- byte counts and nccl-tests factors -------------------------------------------------


def test_allreduce_bytes_by_hand():
    # K = 4, n = 1200: each device sends 3 chunks of 300 in each of two phases = 1800.
    assert col.allreduce_bytes(1200, 4) == 1800
    assert col.allreduce_bytes(1200, 1) == 0


@pytest.mark.parametrize("fn", [col.allgather_bytes, col.reduce_scatter_bytes, col.all_to_all_bytes])
def test_one_phase_collectives_send_k_minus_one_chunks(fn):
    assert fn(1200, 4) == 900  # 3 of 4 chunks of 300
    assert fn(1200, 1) == 0


# nccl-tests doc/PERFORMANCE.md: allreduce 2(n-1)/n, reducescatter/allgather/alltoall (n-1)/n,
# broadcast/reduce 1 (n = ranks). Written out here independently of the code.
@pytest.mark.parametrize(
    "kind, k, factor",
    [
        ("allreduce", 2, 1.0),
        ("allreduce", 8, 14 / 8),
        ("all-reduce", 4, 1.5),
        ("allgather", 8, 7 / 8),
        ("reduce_scatter", 4, 0.75),
        ("alltoall", 2, 0.5),
        ("broadcast", 8, 1.0),
        ("reduce", 16, 1.0),
    ],
)
def test_busbw_factors_match_nccl_tests(kind, k, factor):
    assert math.isclose(col.busbw_factor(kind, k), factor)
    # busbw = (size / time) * factor
    assert math.isclose(col.bus_bandwidth(kind, 2 * GB, 0.1, k), 20 * GB * factor)


def test_bus_bandwidth_broadcasts():
    out = col.bus_bandwidth("allreduce", 1 * GB, np.array([0.1, 0.2]), 2)
    np.testing.assert_allclose(out, [10 * GB, 5 * GB])


def test_broadcast_sends_the_whole_message_from_two_devices_up():
    # A pipelined broadcast or reduce passes all n bytes along; one device passes nothing.
    np.testing.assert_allclose(col.bytes_sent("broadcast", 100, [1, 2, 8]), [0, 100, 100])
    np.testing.assert_allclose(col.bytes_sent("reduce", 100, [1, 2, 8]), [0, 100, 100])
    # The nccl-tests busbw factor stays 1 even for one device (documented departure).
    assert col.busbw_factor("broadcast", 1) == 1


# --- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, call",
    [
        ("message_bytes", lambda: col.allreduce_bytes(-1, 2)),
        ("devices", lambda: col.allreduce_bytes(10, 0)),
        ("devices", lambda: col.allreduce_bytes(10, 2.5)),
        ("message_bytes", lambda: col.allgather_bytes(float("nan"), 2)),
        ("kind", lambda: col.bus_bandwidth("gossip", 10, 1, 2)),
        ("seconds", lambda: col.bus_bandwidth("allreduce", 10, 0, 2)),
        ("latency", lambda: col.collective_time("allreduce", 10, 2, -1e-6, 1e9)),
        ("bandwidth", lambda: col.ring_allreduce_time(10, 2, 1e-6, 0)),
        ("form", lambda: col.crossover_message_bytes(1e-6, 1e9, 4, form="tree")),
        ("kind", lambda: col.crossover_message_bytes(1e-6, 1e9, 4, kind="allgather", form="ring")),
        ("arrays", lambda: col.ring_allreduce([])),
        ("arrays", lambda: col.ring_allreduce([np.ones(3), np.ones(4)])),
        ("arrays", lambda: col.ring_allreduce([np.array([1.0, np.nan]), np.ones(2)])),
        ("devices", lambda: col.chunk_contributions(col.simulate_ring_allreduce([np.ones(4)] * 4), 3)),
        ("devices", lambda: col.chunk_contributions(col.simulate_ring_allreduce([np.ones(4)] * 4), 5)),
    ],
)
def test_bad_input_raises(name, call):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()
