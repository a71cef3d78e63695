"""Tests for lib.transformer.parallel: per-token communication, crossovers, decode bounds and TP degrees."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lib import transformer as tr
from lib.units import GB, MB, s, us


def test_article_worked_example():
    assert tr.tp_bytes_per_collective(8192, 2, 1, 4) == 2 * 0.75 * 8192 * 2 == 24_576
    cost = tr.tp_comm_per_token(
        tr.PRESETS["llama-2-70b"], devices=4, batch=1, bytes_per_element=2, latency=5 * us, bandwidth=400 * GB / s
    )
    assert cost.collectives == 160
    assert cost.bytes == 160 * 24_576
    assert abs(cost.bytes / MB - 3.9) < 0.05
    assert abs(cost.transfer_time / us - 10) < 0.5
    assert math.isclose(cost.latency_time, 800 * us)
    assert math.isclose(cost.total_time, cost.latency_time + cost.transfer_time)


def test_crossover_batch_balances_the_two_terms():
    config = tr.PRESETS["llama-2-70b"]
    batch = tr.tp_crossover_batch(config.hidden, 2, 4, 5 * us, 400 * GB / s)
    per_collective_transfer = tr.tp_bytes_per_collective(config.hidden, 2, 1, 4) * batch / (400 * GB / s)
    assert math.isclose(per_collective_transfer, 5 * us)
    assert tr.tp_crossover_batch(8192, 2, 1, 5 * us, 400 * GB / s) == math.inf


def test_crossover_batch_with_no_startup_is_zero():
    # No startup: the transfer term dominates at every batch, so 0 (not 0 * inf = NaN).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tr.tp_crossover_batch(8192, 2, 4, 0.0, math.inf) == 0
        assert tr.tp_crossover_batch(8192, 2, 4, 0.0, 400 * GB / s) == 0
        assert tr.tp_crossover_batch(8192, 2, 4, 5 * us, math.inf) == math.inf


@given(st.integers(1, 64), st.integers(1, 16), st.sampled_from([1, 2, 4]))
def test_comm_grows_linearly_with_batch(batch, k, b):
    config = tr.PRESETS["mistral-7b"]
    one = tr.tp_comm_per_token(config, k, 1, b, latency=1 * us, bandwidth=100 * GB / s)
    many = tr.tp_comm_per_token(config, k, batch, b, latency=1 * us, bandwidth=100 * GB / s)
    assert math.isclose(many.bytes, batch * one.bytes)
    assert many.latency_time == one.latency_time


def test_decode_bound():
    assert tr.decode_time_bound(100.0, 4, 25.0) == 1.0
    assert tr.decode_time_bound(100.0, 4, 25.0, communication=0.5) == 1.5
    np.testing.assert_allclose(tr.decode_time_bound(100.0, np.array([1, 2]), 25.0), [4.0, 2.0])


# Hand-checked by listing divisors: Llama-3 8B has 32 heads, 8 KV heads, ffn 14336 = 2**11 * 7;
# Qwen2 7B has 28 heads, 4 KV heads, ffn 18944 = 2**8 * 74 (28 does not divide it: 18944 / 28 = 676.57);
# Llama-2 13B has 40 heads and 40 KV heads, ffn 13824 = 2**9 * 27 (no factor 5).
@pytest.mark.parametrize(
    "key, replicate, expected",
    [
        ("llama-3-8b", False, [1, 2, 4, 8]),
        ("llama-3-8b", True, [1, 2, 4, 8, 16, 32]),
        ("qwen2-7b", False, [1, 2, 4]),
        ("qwen2-7b", True, [1, 2, 4]),
        ("llama-2-13b", False, [1, 2, 4, 8]),
        ("llama-2-13b", True, [1, 2, 4, 8]),
        ("llama-2-70b", True, [1, 2, 4, 8, 16, 32, 64]),
    ],
)
def test_valid_tp_degrees_hand_checked(key, replicate, expected):
    assert tr.valid_tp_degrees(tr.PRESETS[key], 64, replicate_kv=replicate) == expected


def test_valid_tp_degrees_need_the_mlp_to_split():
    # 8 heads and 8 KV heads allow 1, 2, 4, 8; an MLP of width 12 rules out 8.
    config = tr.ModelConfig("narrow", layers=1, hidden=8 * 4, heads=8, kv_heads=8, ffn_hidden=12, vocab=4)
    assert tr.valid_tp_degrees(config, 8) == [1, 2, 4]


@given(st.sampled_from(sorted(tr.PRESETS)), st.integers(1, 64))
def test_valid_degrees_divide_heads_and_mlp(key, top):
    config = tr.PRESETS[key]
    for k in tr.valid_tp_degrees(config, top, replicate_kv=True):
        assert config.heads % k == 0 and config.ffn_hidden % k == 0


def test_valid_tp_degrees_hand_made_config():
    # 12 heads, 3 KV heads, ffn 24: strict needs K | 12, K | 24 and K | 3 -> 1, 3.
    # replicated: K <= 3 must divide 3 -> 1, 3; K > 3 must divide 12 and 24 and be a multiple of 3 -> 6, 12.
    config = tr.ModelConfig("odd", layers=1, hidden=12 * 4, heads=12, kv_heads=3, ffn_hidden=24, vocab=4)
    assert tr.valid_tp_degrees(config, 16) == [1, 3]
    assert tr.valid_tp_degrees(config, 16, replicate_kv=True) == [1, 3, 6, 12]
    assert tr.valid_tp_degrees(config, 5, replicate_kv=True) == [1, 3]


@given(st.sampled_from(sorted(tr.PRESETS)), st.integers(1, 128))
def test_strict_degrees_are_a_subset_of_replicated(key, top):
    config = tr.PRESETS[key]
    strict = tr.valid_tp_degrees(config, top)
    replicated = tr.valid_tp_degrees(config, top, replicate_kv=True)
    assert set(strict) <= set(replicated)
    for k in replicated:
        assert config.heads % k == 0


def test_kv_heads_per_device_stops_shrinking():
    config = tr.PRESETS["llama-2-70b"]
    assert tr.kv_heads_per_device(config, 8) == 1.0
    assert tr.kv_heads_per_device(config, 16) == 1.0
    assert tr.kv_heads_per_device(config, 2) == 4.0


@pytest.mark.parametrize("k", [3, 5, 6, 12])
def test_kv_heads_per_device_refuses_uneven_degrees(k):
    # Llama-3 8B: 32 heads, 8 KV heads; none of these splits them into whole heads.
    with pytest.raises(ValueError, match="devices"):
        tr.kv_heads_per_device(tr.PRESETS["llama-3-8b"], k)


def test_shard_efficiency_falls_as_shards_shrink():
    widths = np.array([8192, 4096, 2048, 1024])
    eta = tr.shard_efficiency(widths, 1024)
    assert np.all(np.diff(eta) < 0)
    assert eta[-1] == 0.5


def test_comm_fields_have_the_shape_of_the_sweep():
    # A batch sweep: the count of collectives and their startups do not depend
    # on the batch, yet each field holds one value per batch size.
    config = tr.PRESETS["llama-2-70b"]
    batch = np.array([1, 8, 64])
    sweep = tr.tp_comm_per_token(config, 4, batch, 2, latency=5 * us, bandwidth=400 * GB / s)
    for name in ["collectives", "bytes", "latency_time", "transfer_time", "total_time"]:
        assert np.shape(getattr(sweep, name)) == (3,), name
    assert (sweep.collectives == 2 * config.layers).all()
    assert np.allclose(sweep.latency_time, 2 * config.layers * 5 * us)
    # A grid of devices (rows) by latency (columns).
    grid = tr.tp_comm_per_token(config, np.array([[1], [4]]), 1, 2, latency=np.array([1, 5]) * us)
    assert grid.collectives.shape == grid.bytes.shape == grid.transfer_time.shape == (2, 2)
    assert (grid.collectives[0] == 0).all() and (grid.bytes[0] == 0).all()


@pytest.mark.parametrize(
    "name, call",
    [
        ("devices", lambda: tr.tp_bytes_per_collective(8192, 2, 1, 0)),
        ("batch", lambda: tr.tp_bytes_per_collective(8192, 2, 1.5, 2)),
        ("bytes_per_element", lambda: tr.tp_bytes_per_collective(8192, -2, 1, 2)),
        ("latency", lambda: tr.tp_comm_per_token(tr.PRESETS["llama-3-8b"], 2, latency=-1.0)),
        ("bandwidth", lambda: tr.tp_comm_per_token(tr.PRESETS["llama-3-8b"], 2, bandwidth=0.0)),
        ("parameter_bytes", lambda: tr.decode_time_bound(float("nan"), 1, 1.0)),
        ("device_bandwidth", lambda: tr.decode_time_bound(1.0, 2, -1.0)),
        ("max_devices", lambda: tr.valid_tp_degrees(tr.PRESETS["llama-3-8b"], 0)),
        ("work_per_device", lambda: tr.shard_efficiency(0, 1)),
        ("layers", lambda: tr.ModelConfig("x", layers=0, hidden=8, heads=2, kv_heads=1, ffn_hidden=8, vocab=4)),
        ("kv_heads", lambda: tr.ModelConfig("x", layers=1, hidden=8, heads=4, kv_heads=3, ffn_hidden=8, vocab=4)),
        (
            "experts_per_token",
            lambda: tr.ModelConfig(
                "x", layers=1, hidden=8, heads=2, kv_heads=1, ffn_hidden=8, vocab=4, experts=2, experts_per_token=3
            ),
        ),
        ("devices", lambda: tr.kv_heads_per_device(tr.PRESETS["llama-3-8b"], 3)),
    ],
)
def test_bad_input_raises(name, call):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()


def test_error_names_the_parameter():
    with pytest.raises(ValueError, match="devices"):
        tr.tp_bytes_per_collective(8192, 2, 1, 0)
