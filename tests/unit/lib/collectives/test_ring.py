"""Tests for lib.collectives (byte counts, nccl-tests factors, time models, ring simulator)
and lib.tp_block (the tensor-parallel block against the unsplit one)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lib import collectives as col
from lib import tp_block
from lib.units import GB, MB, s, us


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
@pytest.mark.parametrize("kind, k, factor", [
    ("allreduce", 2, 1.0), ("allreduce", 8, 14 / 8), ("all-reduce", 4, 1.5),
    ("allgather", 8, 7 / 8), ("reduce_scatter", 4, 0.75), ("alltoall", 2, 0.5),
    ("broadcast", 8, 1.0), ("reduce", 16, 1.0),
])
def test_busbw_factors_match_nccl_tests(kind, k, factor):
    assert math.isclose(col.busbw_factor(kind, k), factor)
    # busbw = (size / time) * factor
    assert math.isclose(col.bus_bandwidth(kind, 2 * GB, 0.1, k), 20 * GB * factor)


def test_bus_bandwidth_broadcasts():
    out = col.bus_bandwidth("allreduce", 1 * GB, np.array([0.1, 0.2]), 2)
    np.testing.assert_allclose(out, [10 * GB, 5 * GB])


# --- time models --------------------------------------------------------------------------

def test_two_forms_share_the_bandwidth_term():
    n, k, a, bw = 64 * MB, 8, 5 * us, 100 * GB / s
    per_collective = col.collective_time("allreduce", n, k, a, bw)
    ring = col.ring_allreduce_time(n, k, a, bw)
    # Subtract the startup terms: l once, versus 2 (K - 1) alpha.
    assert math.isclose(per_collective - a, ring - 2 * (k - 1) * a)
    assert math.isclose(per_collective - a, 2 * 7 / 8 * n / bw)


@given(st.floats(1e-7, 1e-4), st.floats(1e9, 1e12), st.integers(2, 64))
def test_crossover_equalises_the_terms(latency, bandwidth, k):
    n = col.crossover_message_bytes(latency, bandwidth, k)
    assert math.isclose(col.allreduce_bytes(n, k) / bandwidth, latency, rel_tol=1e-9)
    m = col.crossover_message_bytes(latency, bandwidth, k, form="ring")
    assert math.isclose(m / (k * bandwidth), latency, rel_tol=1e-9)


def test_single_device_costs_nothing():
    assert col.collective_time("allreduce", 1 * MB, 1, 5 * us, 1 * GB / s) == 0
    assert col.ring_allreduce_time(1 * MB, 1, 5 * us, 1 * GB / s) == 0
    assert col.crossover_message_bytes(5 * us, 1 * GB / s, 1) == math.inf


@pytest.mark.parametrize("kind", sorted(col.KINDS))
def test_one_device_sends_nothing_whatever_the_kind(kind):
    assert col.bytes_sent(kind, 100, 1) == 0
    assert col.collective_time(kind, 100, 1, 5 * us, 1 * GB / s) == 0
    assert col.crossover_message_bytes(5 * us, 1 * GB / s, 1, kind=kind) == math.inf


def test_broadcast_sends_the_whole_message_from_two_devices_up():
    # A pipelined broadcast or reduce passes all n bytes along; one device passes nothing.
    np.testing.assert_allclose(col.bytes_sent("broadcast", 100, [1, 2, 8]), [0, 100, 100])
    np.testing.assert_allclose(col.bytes_sent("reduce", 100, [1, 2, 8]), [0, 100, 100])
    # The nccl-tests busbw factor stays 1 even for one device (documented departure).
    assert col.busbw_factor("broadcast", 1) == 1


@pytest.mark.parametrize("form", ["collective", "ring"])
def test_crossover_with_no_startup_is_zero_even_on_an_ideal_link(form):
    # No startup cost: the transfer term dominates every message, so the crossover is 0 (not NaN).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert col.crossover_message_bytes(0.0, math.inf, 4, form=form) == 0
        assert col.crossover_message_bytes(0.0, 1 * GB / s, 4, form=form) == 0
        out = col.crossover_message_bytes(np.array([0.0, 5 * us]), math.inf, 4, form=form)
    # With a startup but an ideal link the startup always dominates: infinite crossover.
    assert out.tolist() == [0.0, math.inf]


# --- the ring simulator -------------------------------------------------------------------

@pytest.mark.parametrize("k", [2, 3, 5, 8])
@pytest.mark.parametrize("length", [40, 41, 7, 3])
def test_ring_allreduce_gives_every_device_the_sum(k, length):
    rng = np.random.default_rng(k * 100 + length)
    arrays = [rng.standard_normal(length) for _ in range(k)]
    results, sent = col.ring_allreduce(arrays)
    expected = np.sum(arrays, axis=0)
    assert len(results) == k
    for r in results:
        np.testing.assert_allclose(r, expected, rtol=1e-12, atol=1e-12)
    assert int(sent.sum()) == 2 * (k - 1) * length * 8


@pytest.mark.parametrize("k", [2, 3, 5, 8])
def test_ring_allreduce_integers_exact_and_shape_kept(k):
    arrays = [np.arange(6 * 5, dtype=np.int32).reshape(6, 5) * (i + 1) for i in range(k)]
    results, sent = col.ring_allreduce(arrays)
    expected = np.arange(30, dtype=np.int32).reshape(6, 5) * (k * (k + 1) // 2)
    for r in results:
        assert r.shape == (6, 5) and r.dtype == np.int32
        assert np.array_equal(r, expected)
    assert int(sent.sum()) == 2 * (k - 1) * 30 * 4


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 9), st.integers(1, 50), st.integers(0, 2**31))
def test_ring_allreduce_property(k, length, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.integers(-1000, 1000, size=length) for _ in range(k)]
    results, sent = col.ring_allreduce(arrays)
    for r in results:
        assert np.array_equal(r, np.sum(arrays, axis=0))
    assert int(sent.sum()) == 2 * (k - 1) * length * 8
    # Divisible lengths: every device sends the same 2 (K - 1) / K * n bytes.
    if length % k == 0:
        assert set(sent.tolist()) == {int(col.allreduce_bytes(length * 8, k))}


def test_ring_record_follows_the_ring():
    k = 4
    run = col.simulate_ring_allreduce([np.arange(8.0) for _ in range(k)])
    assert run.steps == 2 * (k - 1)
    assert len(run.transfers) == k * 2 * (k - 1)
    for t in run.transfers:
        assert t.receiver == (t.sender + 1) % k
        assert t.phase == ("reduce-scatter" if t.step < k - 1 else "all-gather")
    # Each step every device sends exactly once, and no two send the same chunk.
    for step in range(run.steps):
        this = [t for t in run.transfers if t.step == step]
        assert sorted(t.sender for t in this) == list(range(k))
        assert len({t.chunk for t in this}) == k


def test_contributions_end_full():
    k = 5
    run = col.simulate_ring_allreduce([np.ones(10)] * k)
    counts = col.chunk_contributions(run, k)
    assert counts.shape == (2 * (k - 1) + 1, k, k)
    assert (counts[0] == 1).all()
    # After the reduce-scatter each device owns one complete chunk.
    assert sorted((counts[k - 1] == k).sum(axis=1).tolist()) == [1] * k
    assert (counts[-1] == k).all()


def test_single_device_ring_is_a_copy():
    results, sent = col.ring_allreduce([np.array([1.0, 2.0])])
    assert results[0].tolist() == [1.0, 2.0] and sent.tolist() == [0]


# --- bad input ----------------------------------------------------------------------------

@pytest.mark.parametrize("name, call", [
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
])
def test_bad_input_raises(name, call):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()


# --- the tensor-parallel block ------------------------------------------------------------

@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("kv_heads", [4, 2])
def test_tp_block_matches_unsplit(k, kv_heads):
    w = tp_block.random_block(hidden=64, heads=4, kv_heads=kv_heads, ffn_hidden=96, seed=k + kv_heads)
    x = np.random.default_rng(7).standard_normal((5, 64))
    whole = tp_block.block_forward(x, w)
    run = tp_block.tp_block_forward(x, w, k)
    np.testing.assert_allclose(run.output, whole, rtol=1e-10, atol=1e-10)
    assert run.allreduces == (2 if k > 1 else 0)
    # Each all-reduce moves 2 (K - 1) / K of a (5 x 64) float64 array from each device.
    per_allreduce = 2 * (k - 1) / k * 5 * 64 * 8
    np.testing.assert_allclose(run.bytes_sent_per_device, 2 * per_allreduce)


def test_tp_block_partials_are_not_the_answer():
    # Without the all-reduce a device would hold a wrong (partial) result: the test can fail.
    w = tp_block.random_block(hidden=32, heads=4, kv_heads=2, ffn_hidden=64, seed=3)
    x = np.random.default_rng(0).standard_normal((2, 32))
    h = tp_block._rmsnorm(x, w.norm1)
    partial = tp_block._attention_partial(h, w, range(0, 2))
    full = tp_block._attention_partial(h, w, range(0, 4))
    assert not np.allclose(partial, full)


def test_tp_block_bad_input():
    w = tp_block.random_block(hidden=32, heads=4, kv_heads=2, ffn_hidden=64)
    with pytest.raises(ValueError, match="devices"):
        tp_block.tp_block_forward(np.ones((1, 32)), w, 3)
    with pytest.raises(ValueError, match="x must have shape"):
        tp_block.block_forward(np.ones((1, 31)), w)
    with pytest.raises(ValueError):
        tp_block.random_block(hidden=30, heads=4, kv_heads=2, ffn_hidden=8)
