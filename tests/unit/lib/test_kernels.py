"""Tests for lib.kernels: the committed GEMM measurements and the interpolation between them.

The pinned values are copied by hand from the sources (XLA's table entries,
DeepGEMM's and stas00's README rows), not from the CSV or the library. They
are compared with a relative tolerance of 1e-12: the interpolation returns a
measured value through a few float multiplications and divisions (efficiency
times peak), which round in the last bits and nowhere near 1e-12.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.formats import WEIGHT_FORMATS, compute_peak
from lib.hardware import DEVICES
from lib.kernels import NEIGHBOURS, gemm_efficiency, gemm_flops, gemm_rows, gemm_source

EXACT = 1e-12  # relative; see the module docstring

# --- the file ----------------------------------------------------------------


def test_rows_per_source():
    counts: dict[str, int] = {}
    for row in gemm_rows():
        counts[row["repository"] + ":" + row["path"]] = counts.get(row["repository"] + ":" + row["path"], 0) + 1
    assert counts == {
        "tensorflow/tensorflow:third_party/xla/xla/service/gpu/model/matmul_interpolator_data.h": 125,
        "tensorflow/tensorflow:third_party/xla/xla/backends/gpu/cost_model/matmul_interpolator_data.h": 250,
        "stas00/ml-engineering:compute/accelerator/README.md": 6,
        "deepseek-ai/DeepGEMM:README.md": 18,
    }


def test_every_row_is_cited_and_below_its_peak():
    for row in gemm_rows():
        assert row["device"] in DEVICES and row["format"] in ("bf16", "fp8")
        assert re.fullmatch(r"[0-9a-f]{40}", row["commit"]), row
        assert row["repository"] and row["path"] and row["entry"] and row["note"]
        assert 0 < row["flops"] <= compute_peak(row["device"], row["format"])


def test_xla_rows_quote_their_entry():
    for row in gemm_rows("h100-sxm", "bf16") + gemm_rows("b200"):
        if row["repository"] == "tensorflow/tensorflow":
            value = re.search(r"value: (\d+)\}$", row["entry"]).group(1)
            assert float(value) == pytest.approx(row["flops"], rel=EXACT)
            assert f"b: 1 m: {row['m']} n: {row['n']} k: {row['k']}" in row["entry"]


# --- pinned entries ------------------------------------------------------------


@pytest.mark.parametrize(
    ("device", "fmt", "shape", "flops"),
    [
        # XLA sm_90, entry {b: 1 m: 4096 n: 4096 k: 4096}, "bf16xbf16->bf16"
        ("h100-sxm", "bf16", (4096, 4096, 4096), 783328793548203),
        # XLA sm_90, entry {b: 1 m: 4096 n: 512 k: 512}
        ("h100-sxm", "bf16", (4096, 512, 512), 238821580071174),
        # XLA sm_90, entry {b: 1 m: 512 n: 256 k: 256}
        ("h100-sxm", "bf16", (512, 256, 256), 11459846994535),
        # XLA sm_100, entry {b: 1 m: 4096 n: 4096 k: 4096}, "f8e4m3fnxf8e4m3fn->bf16"
        ("b200", "fp8", (4096, 4096, 4096), 2764981863158106),
        # DeepGEMM README line 51: | 128 | 7168 | 16384 | 645 TFLOPS |
        ("h100-sxm", "fp8", (128, 7168, 16384), 645e12),
        # stas00's table, line 351: NVIDIA A100 SXM | 271.2 | ... | 1024x10240x5120
        ("a100-80gb", "bf16", (1024, 10240, 5120), 271.2e12),
    ],
)
def test_measured_shape_returns_the_measurement(device, fmt, shape, flops):
    assert gemm_flops(device, fmt, *shape) == pytest.approx(flops, rel=EXACT)


def test_every_row_of_every_interpolated_table_is_returned_at_its_shape():
    for device, fmt in [("h100-sxm", "bf16"), ("h100-sxm", "fp8"), ("b200", "bf16"), ("b200", "fp8")]:
        source = gemm_source(device, fmt)
        rows = [r for r in gemm_rows(device, fmt) if f"{r['repository']}@{r['commit']}:{r['path']}" in source.sources]
        assert len(rows) == source.rows
        got = gemm_flops(device, fmt, [r["m"] for r in rows], [r["n"] for r in rows], [r["k"] for r in rows])
        np.testing.assert_allclose(got, [r["flops"] for r in rows], rtol=EXACT)


def test_a_single_best_shape_gives_way_to_the_same_chips_larger_table():
    """The H200's one FP8 figure (stas00) is priced from the H100 SXM's DeepGEMM table, and agrees with it."""
    source = gemm_source("h200", "fp8")
    assert (source.table_device, source.rows) == ("h100-sxm", len(gemm_rows("h100-sxm", "fp8")) - 1)
    (row,) = gemm_rows("h200", "fp8")
    assert gemm_flops("h200", "fp8", row["m"], row["n"], row["k"]) == pytest.approx(row["flops"], rel=0.02)


def test_independent_source_agrees_on_hopper():
    """stas00's best shapes on an H100 (torch.matmul) against the XLA and DeepGEMM tables, within 10 %."""
    assert gemm_flops("h100-sxm", "bf16", 2048, 2048, 13312) == pytest.approx(794.5e12, rel=0.10)
    assert gemm_flops("h100-sxm", "fp8", 1024, 9216, 14336) == pytest.approx(1402.6e12, rel=0.10)


# --- between the measurements ------------------------------------------------


def test_sweep_between_two_measured_shapes_stays_between_them():
    m = np.arange(2048, 4097, 16)
    flops = gemm_flops("h100-sxm", "bf16", m, 4096, 4096)
    low, high = 753643516181744, 783328793548203  # XLA sm_90 {2048, 4096, 4096} and {4096, 4096, 4096}
    assert flops[0] == pytest.approx(low, rel=EXACT) and flops[-1] == pytest.approx(high, rel=EXACT)
    assert np.all(np.diff(flops) >= -EXACT * high)
    assert np.all((flops >= low * (1 - EXACT)) & (flops <= high * (1 + EXACT)))


def test_below_the_grid_the_edge_efficiency_holds():
    m = np.arange(1, 257)
    flops = gemm_flops("h100-sxm", "bf16", m, 4096, 4096)
    np.testing.assert_allclose(flops, 412026793553338, rtol=EXACT)  # XLA sm_90 {256, 4096, 4096}
    small = gemm_flops("h100-sxm", "bf16", 256, np.array([16, 64, 256]), 4096)
    np.testing.assert_allclose(small, gemm_flops("h100-sxm", "bf16", 256, 256, 4096), rtol=EXACT)


def test_array_arguments_broadcast_like_scalars():
    m = np.array([[1], [64], [300]])
    n = np.array([512, 14336])
    got = gemm_flops("b200", "int4", m, n, 4096)
    assert got.shape == (3, 2)
    assert got[2, 1] == gemm_flops("b200", "int4", 300, 14336, 4096)
    assert isinstance(gemm_flops("b200", "int4", 300, 14336, 4096), float)


sizes = st.integers(min_value=1, max_value=1 << 17)
pairs = st.sampled_from([(d, f) for d in DEVICES for f in WEIGHT_FORMATS])


@settings(max_examples=300, deadline=None)
@given(pair=pairs, m=sizes, n=sizes, k=sizes)
def test_never_above_the_peak(pair, m, n, k):
    device, fmt = pair
    efficiency = gemm_efficiency(device, fmt, m, n, k)
    assert 0 < efficiency <= 1
    assert gemm_flops(device, fmt, m, n, k) <= compute_peak(device, fmt)


@settings(max_examples=300, deadline=None)
@given(pair=pairs, shape=st.tuples(sizes, sizes, sizes), axis=st.integers(0, 2), factor=st.integers(1, 64))
def test_non_decreasing_in_each_dimension(pair, shape, axis, factor):
    larger = list(shape)
    larger[axis] *= factor
    before, after = gemm_efficiency(*pair, *shape), gemm_efficiency(*pair, *larger)
    assert after >= before * (1 - EXACT)


# --- stand-ins -------------------------------------------------------------------


def test_every_device_and_format_has_a_table():
    for device in DEVICES:
        for fmt in WEIGHT_FORMATS:
            source = gemm_source(device, fmt)
            assert source.rows >= 1 and source.rule in ("grid", "points") and source.sources


def test_stand_in_rules():
    assert gemm_source("h100-sxm", "bf16").reason == "the device's own measurements"
    h200 = gemm_source("h200", "bf16")
    assert (h200.table_device, h200.table_format) == ("h100-sxm", "bf16") and "H200 is the same" in h200.reason
    a100 = gemm_source("a100-80gb", "fp8")
    assert a100.table_format == "bf16" and a100.reason.startswith("no FP8 tensor cores")
    assert gemm_source("h100-sxm", "int4").table_format == "bf16"
    assert "dequantised" in gemm_source("h100-sxm", "int4").reason
    l4 = gemm_source("l4", "fp8")
    assert (l4.table_device, l4.table_format) == ("a100-80gb", "bf16") and "its 16-bit one" in l4.reason
    assert set(NEIGHBOURS) | {"a100-80gb", "h100-sxm", "b200"} == set(DEVICES)


def test_a_stand_in_carries_the_fraction_of_peak_to_the_device():
    shape = (512, 4096, 4096)
    assert gemm_efficiency("h100-pcie", "bf16", *shape) == gemm_efficiency("h100-sxm", "bf16", *shape)
    ratio = gemm_flops("h100-pcie", "bf16", *shape) / gemm_flops("h100-sxm", "bf16", *shape)
    assert ratio == pytest.approx(DEVICES["h100-pcie"].peak_flops / DEVICES["h100-sxm"].peak_flops, rel=EXACT)


def test_a_device_outside_the_catalogue_borrows_the_h100_sxms_fractions_at_its_own_peak():
    mine = dataclasses.replace(DEVICES["l40s"], name="my accelerator", peak_flops=500e12, fp8_flops=1000e12)
    for fmt, compute in (("bf16", "bf16"), ("fp8", "fp8"), ("int4", "bf16")):
        source = gemm_source(mine, fmt)
        assert (source.device, source.table_device, source.table_format) == ("my accelerator", "h100-sxm", compute)
        assert "not in the catalogue" in source.reason
        assert gemm_efficiency(mine, fmt, 512, 8192, 8192) == gemm_efficiency("h100-sxm", fmt, 512, 8192, 8192)
        assert gemm_flops(mine, fmt, 512, 8192, 8192) == pytest.approx(
            gemm_efficiency("h100-sxm", fmt, 512, 8192, 8192) * compute_peak(mine, fmt), rel=EXACT
        )
    assert gemm_source(dataclasses.replace(DEVICES["l40s"]), "bf16").table_device == "a100-80gb"  # equal: catalogued


# --- bad input -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("h100-sxm", "bf16", 0, 4096, 4096), "m must be >= 1, got 0"),
        (("h100-sxm", "bf16", 8, 2.5, 4096), "n must be a whole number, got 2.5"),
        (("h100-sxm", "bf16", 8, 4096, float("nan")), "k must not be NaN, got nan"),
        (("h100-sxm", "bf16", [1, -2], 4096, 4096), "m must be >= 1, got array with values array([ 1, -2])"),
        (("tpu-v5", "bf16", 8, 4096, 4096), "device must be one of [.*] or a Device, got 'tpu-v5'"),
        (("h100-sxm", "fp4", 8, 4096, 4096), "fmt must be one of ['bf16', 'fp8', 'int4', 'int8'], got 'fp4'"),
        ((["h100-sxm"], "bf16", 8, 4096, 4096), "device must be one of [.*] or a Device, got ['h100-sxm']"),
    ],
)
def test_bad_input_names_the_parameter_and_value(args, message):
    pattern = re.escape(message).replace(re.escape("[.*]"), r"\[.*\]")
    with pytest.raises(ValueError, match=pattern):
        gemm_flops(*args)


@pytest.mark.parametrize("fmt", ["bf16", "fp8"])
def test_many_repeated_shapes_price_as_each_alone(fmt):
    rows = np.tile([1, 64, 300, 5000], 2000)[:, None]  # 8,000 shapes, eight distinct: priced once each
    n = np.array([[4096, 14336]])
    many = gemm_efficiency("h100-sxm", fmt, rows, n, 4096)
    alone = [[gemm_efficiency("h100-sxm", fmt, int(m), int(w), 4096) for w in n[0]] for m in rows[:4, 0]]
    assert many.shape == (8000, 2)
    np.testing.assert_array_equal(many[:4], alone)
    np.testing.assert_array_equal(many, np.tile(many[:4], (2000, 1)))
