"""Tests for lib.validation.allreduce: scaled links, NCCL's predictions and their two-point calibration."""

from __future__ import annotations

import numpy as np
import pytest

from lib.collectives import tune_allreduce
from lib.validation import (
    SYSTEMS,
    UNMODELLED,
    allreduce_sweep,
    calibrate_line,
    calibrate_nccl,
    predict_nccl,
    scaled_link,
)


def test_scaled_link_scales_only_what_nccl_credits():
    link = scaled_link("nvlink3", 0.5)
    assert link.bandwidth == 300e9 and link.nccl_bandwidth == pytest.approx(120e9)
    with pytest.raises(ValueError, match="factor"):
        scaled_link("nvlink3", -1)


def test_uncalibrated_prediction_is_nccls_tuner():
    sizes = np.array([8.0, 1e6, 1e9])
    assert np.allclose(predict_nccl(sizes, "allreduce_a100_8gpu_mle").time, tune_allreduce(sizes, 8, "nvlink3").time)
    with pytest.raises(ValueError, match="not modelled"):
        predict_nccl(sizes, "allreduce_h100_16gpu_gcp_a3mega")
    assert set(SYSTEMS).isdisjoint(UNMODELLED)


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_two_point_calibration_reproduces_both_end_points(name):
    sweep = allreduce_sweep(name)
    fit = calibrate_nccl(sweep)
    ends = predict_nccl(sweep.size[[0, -1]], name, sweep.gpus, fit.efficiency, fit.overhead).time
    assert ends == pytest.approx(sweep.time[[0, -1]], rel=1e-9)
    assert calibrate_line(sweep).time(sweep.size[-1], sweep.gpus) == pytest.approx(sweep.time[-1], rel=1e-9)
