"""Tests for lib.collectives.ring: a ring all-reduce that moves real numpy chunks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib import collectives as col

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
