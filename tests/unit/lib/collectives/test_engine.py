"""The engine's all-reduce (lib.collectives.engine): vLLM's cut-offs, NCCL elsewhere, and constants refitted."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from lib.collectives import engine, tune_allreduce
from lib.units import KB, KiB, MiB
from lib.validation.published import DATA_DIR


def test_tp8_decode_all_reduce_is_faster_than_ncclnccl_and_follows_the_cut_off():
    # 16 KB, the message of one token of a 8,192-wide model: vLLM's one-shot kernel, about 6 us, against
    # NCCL's ring with LL at about 15 us.
    one = engine.engine_allreduce(16 * KB, 8, "nvlink4")
    nccl = engine.engine_allreduce(16 * KB, 8, "nvlink4", allreduce="nccl")
    assert one.kernel == "one-shot" and nccl.kernel.startswith("nccl")
    assert one.time < nccl.time / 2
    assert nccl.time == pytest.approx(tune_allreduce(16 * KB, 8, "nvlink4").time)
    sizes = np.array([255 * KiB, 256 * KiB, 8 * MiB - 16, 8 * MiB])
    kinds = engine.engine_allreduce(sizes, 8, "nvlink4").kernel.tolist()
    assert kinds[:3] == ["one-shot", "two-shot", "two-shot"] and kinds[3].startswith("nccl")
    four = engine.engine_allreduce([511 * KiB, 512 * KiB], 4, "nvlink4").kernel.tolist()
    assert four == ["one-shot", "two-shot"]
    assert engine.engine_allreduce(4 * MiB, 2, "nvlink4").kernel == "one-shot"  # two GPUs: always one-shot


def test_pcie_groups_beyond_two_and_other_group_sizes_use_nccl():
    assert engine.engine_allreduce(16 * KB, 4, "pcie4").kernel.startswith("nccl")  # 4 x L4
    assert engine.engine_allreduce(16 * KB, 2, "pcie4").kernel == "one-shot"
    assert engine.engine_allreduce(16 * KB, 3, "nvlink4").kernel.startswith("nccl")
    assert engine.engine_allreduce(16 * KB, 16, "nvlink4", nodes=2, inter_link="ib-ndr").kernel.startswith("nccl")


def test_one_device_takes_no_time_and_bad_input_is_named():
    assert engine.engine_allreduce(16 * KB, 1, "nvlink4").time == 0
    with pytest.raises(ValueError, match="allreduce"):
        engine.engine_allreduce(16 * KB, 8, "nvlink4", allreduce="mpi")
    with pytest.raises(ValueError, match="message_bytes"):
        engine.engine_allreduce(-1.0, 8, "nvlink4")


def _measured():
    with (DATA_DIR / "allreduce_engine_h100_vllm.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    table = {}
    for row in rows:
        column = row["source_detail"].split("column ")[1].strip('"')
        table.setdefault(column, []).append((int(row["size_bytes"]), float(row["value"]) * 1e-3))
    return table


def _relative_fit(moved, seconds):
    """Least squares on relative errors of ``t = alpha + moved / B``: returns (alpha, B)."""
    weight = 1 / seconds
    (alpha, per_byte), *_ = np.linalg.lstsq(
        np.column_stack([weight, moved * weight]), np.ones_like(seconds), rcond=None
    )
    return alpha, 1 / per_byte


@pytest.mark.stored
@pytest.mark.parametrize("kernel, moved", [(engine.ONE_SHOT, lambda n: 3 * n), (engine.TWO_SHOT, lambda n: 1.5 * n)])
def test_the_kernel_constants_are_a_fit_to_vllms_benchmark(kernel, moved):
    # PR #24532's table on four H100s: one-shot moves (K - 1) n, two-shot 2 (K - 1) / K n per GPU.
    measured = _measured()["ca_1stage" if kernel is engine.ONE_SHOT else "ca_2stage"]
    sizes = np.array([size for size, _ in measured], dtype=float)
    seconds = np.array([t for _, t in measured])
    alpha, bandwidth = _relative_fit(moved(sizes), seconds)
    assert kernel.latency == pytest.approx(alpha, rel=0.01)
    assert kernel.link_share * 450e9 == pytest.approx(bandwidth, rel=0.01)
    predicted = engine._kernel_time(kernel, sizes, 4, engine.lookup_link("nvlink4"))
    assert np.max(np.abs(predicted / seconds - 1)) < 0.1
