"""Tests for lib.attention_kernels: the committed decode-attention measurements and the rule between them.

The pinned times are copied by hand from the sources (nvbench's tables in JakeFlasher/benchmark_flash_attention
and the table of vLLM's pull request 2744), not from the CSV or the library. Efficiencies computed from them are
compared with a relative tolerance of 1e-12: the library does the same few multiplications and divisions, which
round in the last bits and nowhere near 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.attention_kernels import (
    TABLE_REPOSITORY,
    attention_rows,
    decode_attention_efficiency,
    efficiency_grid,
)
from lib.serving.engine import MEMORY_EFFICIENCY

EXACT = 1e-12  # relative; see the module docstring
A30_PEAK = 933e9  # nvbench's "Global Memory Bus Peak: 933 GB/sec" in every A30 file


def kv_bytes(batch: int, context: int, kv_heads: int, head_dim: int = 128) -> int:
    return 2 * batch * context * kv_heads * head_dim * 2


# --- the file ----------------------------------------------------------------


def test_rows_per_source():
    counts: dict[str, int] = {}
    for row in attention_rows():
        counts[row["repository"]] = counts.get(row["repository"], 0) + 1
    assert counts == {TABLE_REPOSITORY: 256, "TheRainstorm/attention_tests": 12, "vllm-project/vllm": 5}


def test_every_row_names_its_source():
    for row in attention_rows():
        assert row["entry"] and row["path"] and row["note"]
        assert row["commit"] == "" if row["repository"] == "vllm-project/vllm" else len(row["commit"]) == 40
        if row["repository"] == TABLE_REPOSITORY:
            assert row["entry"].startswith("line ") and f"{row['time']} {row['time_unit']}" in row["entry"]
            assert row["device"] == "a30" and row["peak_bandwidth_gbs"] == "933"


@pytest.mark.parametrize(
    ("path", "shape", "time"),
    [
        # results/benchmark-mistral-7b-1.md line 58: 1 sequence of 16384 tokens, 32 query and 4 KV heads
        ("results/benchmark-mistral-7b-1.md", (1, 16384, 32, 4), "384.243 us"),
        # results/benchmark-mqa-1.md line 58: 1 sequence of 16384 tokens, 32 query heads, 1 KV head
        ("results/benchmark-mqa-1.md", (1, 16384, 32, 1), "283.535 us"),
        # results/benchmark-batch-scaling-128.md line 57: 128 sequences of 8192 tokens, 32 and 32 heads
        ("results/benchmark-batch-scaling-128.md", (128, 8192, 32, 32), "19.565 ms"),
    ],
)
def test_pinned_rows_are_in_the_file_and_are_the_table_at_their_shape(path, shape, time):
    batch, context, q_heads, kv_heads = shape
    (row,) = [
        r
        for r in attention_rows("a30")
        if r["path"] == path and (r["batch"], r["context"], r["q_heads"], r["kv_heads"]) == shape
    ]
    assert f"{row['time']} {row['time_unit']}" == time
    value, unit = time.split()
    seconds = float(value) * {"us": 1e-6, "ms": 1e-3}[unit]
    measured = kv_bytes(batch, context, kv_heads) / seconds / A30_PEAK
    assert row["efficiency"] == pytest.approx(measured, rel=EXACT)
    # each is the only row of its cell, and the hull does not lift it
    assert decode_attention_efficiency(batch, context, kv_heads, ceiling=1.0) == pytest.approx(measured, rel=EXACT)


def test_the_a100_row_of_vllm_2744():
    # "1 | 37.541 | 29.602 | 27.675 | 1.07": batch 1, context 1024, 64 query and 8 KV heads, A100-40GB-PCIE
    (fa,) = [r for r in attention_rows("a100-40gb") if r["time"] == "27.675"]
    assert (fa["batch"], fa["context"], fa["q_heads"], fa["kv_heads"], fa["head_dim"]) == (1, 1024, 64, 8, 128)
    assert fa["efficiency"] == pytest.approx(kv_bytes(1, 1024, 8) / 27.675e-6 / 1555e9, rel=EXACT)
    # the A30 table, applied as a fraction of the A100's datasheet, agrees with it to 0.01
    assert abs(decode_attention_efficiency(1, 1024, 8, ceiling=1.0) - fa["efficiency"]) < 0.01


# --- the rule ----------------------------------------------------------------


def test_grid_axes():
    g = efficiency_grid()
    assert g["units"] == [1, 4, 8, 32, 64, 128, 256, 512, 1024, 2048, 4096]
    assert g["contexts"] == [32 * 2**i for i in range(10)]
    grid = np.array(g["grid"])
    assert (np.diff(grid, axis=0) >= 0).all() and (np.diff(grid, axis=1) >= 0).all()  # the hull
    assert grid[-1, -1] == grid[-1, -2]  # the one missing cell is held at its neighbour


def test_work_items_are_batch_times_kv_heads():
    assert decode_attention_efficiency(2, 1024, 16, 1.0) == decode_attention_efficiency(1, 1024, 32, 1.0)
    assert decode_attention_efficiency(8, 4096, 1, 1.0) == decode_attention_efficiency(1, 4096, 8, 1.0)


def test_interpolation_between_grid_points_and_edges():
    g = efficiency_grid()
    grid = np.array(g["grid"])
    at = decode_attention_efficiency
    # half-way in log2 between 32 and 64 work items, at a grid context: the mean of the two cells
    assert at(np.sqrt(32 * 64), 1024, 1, 1.0) == pytest.approx(0.5 * (grid[3, 5] + grid[4, 5]), rel=EXACT)
    # held outside the grid
    assert at(1, 65536, 8, 1.0) == at(1, 16384, 8, 1.0) == grid[2, -1]
    assert at(1, 1, 8, 1.0) == at(1, 32, 8, 1.0) == grid[2, 0]
    assert at(1024, 16384, 32, 1.0) == grid[-1, -1]


def test_capped_at_the_ceiling():
    assert decode_attention_efficiency(128, 8192, 32, ceiling=1.0) > MEMORY_EFFICIENCY
    assert decode_attention_efficiency(128, 8192, 32, ceiling=MEMORY_EFFICIENCY) == MEMORY_EFFICIENCY
    assert decode_attention_efficiency(1, 1024, 8, ceiling=MEMORY_EFFICIENCY) < 0.1


@settings(max_examples=60, deadline=None)
@given(
    st.floats(1, 512),
    st.floats(1, 65536),
    st.sampled_from([1, 2, 4, 8, 16, 32, 64]),
    st.floats(1.01, 4),
)
def test_monotone_in_batch_and_context(batch, context, kv_heads, factor):
    at = decode_attention_efficiency
    base = at(batch, context, kv_heads, MEMORY_EFFICIENCY)
    assert 0 < base <= MEMORY_EFFICIENCY
    assert at(batch * factor, context, kv_heads, MEMORY_EFFICIENCY) >= base - 1e-12
    assert at(batch, context * factor, kv_heads, MEMORY_EFFICIENCY) >= base - 1e-12


def test_arrays_broadcast():
    out = decode_attention_efficiency(np.array([[1], [64]]), np.array([256, 4096]), 8, ceiling=1.0)
    assert out.shape == (2, 2)
    assert out[0, 0] == decode_attention_efficiency(1, 256, 8, 1.0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"batch": 0}, "batch must be > 0, got 0"),
        ({"context": -1}, "context must be > 0, got -1"),
        ({"kv_heads": float("nan")}, "kv_heads"),
        ({"ceiling": 1.5}, "ceiling must be in (0, 1], got 1.5"),
    ],
)
def test_bad_input(kwargs, message):
    args = {"batch": 1, "context": 1024, "kv_heads": 8, "ceiling": 0.9} | kwargs
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        decode_attention_efficiency(**args)
