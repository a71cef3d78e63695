"""Tests for lib.tp_block: the tensor-parallel block against the unsplit one."""

from __future__ import annotations

import numpy as np
import pytest

from lib import tp_block

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
