"""lib.validation: loading, calibration and the held-out designs of chapter 11."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lib.collectives import tune_allreduce
from lib.serving import Cluster, Layout, decode_step
from lib.transformer import PRESETS, parameter_count
from lib.validation import (GPT_20B, MEGATRON_530B, SYSTEMS, UNMODELLED, allreduce_sweep, calibrate_line,
                            calibrate_nccl, context_time, fit_efficiencies, load_published, median_abs_error,
                            model_config, predict_nccl, relative_error, request_terms, request_time, rounding_error,
                            scaled_link, summary, token_terms, token_time, validate_allreduce, validate_decode)

A100 = Cluster("a100-80gb", inter_link="ib-hdr")


def test_load_published_types_and_refuses_unknown_names():
    rows = load_published("decode_gptfast_a100")
    oom = [r for r in rows if r["status"] == "OOM"]
    assert oom and all(r["value"] is None and r["value_si"] is None for r in oom)
    assert all(isinstance(r["tp"], int) and r["output_tokens"] is None for r in rows)
    with pytest.raises(ValueError, match="name must be one of"):
        load_published("../README")


def test_sweep_derives_time_from_busbw_where_no_time_is_printed():
    sweep = allreduce_sweep("allreduce_h200_8gpu_mle")
    assert sweep.derived.all() and not sweep.dropped
    # 16 GiB at 482.26 GB/s busbw on 8 GPUs: time = n * 2 * 7 / 8 / busbw.
    assert sweep.time[-1] == pytest.approx(16 * 2**30 * 1.75 / 482.26e9, rel=1e-12)
    printed = allreduce_sweep("allreduce_a100_8gpu_mle")
    assert not printed.derived.any() and printed.time[0] == pytest.approx(43.83e-6)


def test_coarse_figures_are_dropped_and_the_threshold_is_checked():
    assert allreduce_sweep("allreduce_b200_32gpu_mle", max_rounding=0.2).dropped == (32768,)
    with pytest.raises(ValueError, match="max_rounding"):
        allreduce_sweep("allreduce_b200_32gpu_mle", max_rounding=0.0)
    assert rounding_error("12.5") == pytest.approx(0.05 / 12.5)
    with pytest.raises(ValueError, match="printed"):
        rounding_error("OOM")


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
def test_calibration_reproduces_both_end_points(name):
    sweep = allreduce_sweep(name)
    fit = calibrate_nccl(sweep)
    ends = predict_nccl(sweep.size[[0, -1]], name, sweep.gpus, fit.efficiency, fit.overhead).time
    assert ends == pytest.approx(sweep.time[[0, -1]], rel=1e-9)
    line = calibrate_line(sweep)
    assert line.time(sweep.size[-1], sweep.gpus) == pytest.approx(sweep.time[-1], rel=1e-9)


def test_errors_are_signed_and_medians_refuse_nothing():
    assert relative_error(1.2, 1.0) == pytest.approx(0.2) and relative_error(0.5, 1.0) == pytest.approx(-0.5)
    with pytest.raises(ValueError, match="measured"):
        relative_error(1.0, 0.0)
    with pytest.raises(ValueError, match="at least one"):
        median_abs_error([])


def test_model_shapes_match_their_names():
    assert parameter_count(GPT_20B) / 1e9 == pytest.approx(20.5, abs=0.3)
    assert parameter_count(MEGATRON_530B) / 1e9 == pytest.approx(530, abs=3)
    assert model_config("Llama-3.1-8B") is PRESETS["llama-3-8b"]
    with pytest.raises(ValueError, match="must start with one of"):
        model_config("GPT-4")


@settings(max_examples=25)
@given(st.floats(0.05, 1.0), st.floats(0.05, 1.0), st.floats(0.0, 2e-4), st.sampled_from([1, 2, 8]),
       st.sampled_from([1, 16, 256]))
def test_terms_reproduce_the_full_model(em, ec, overhead, tp, batch):
    """The fitting shortcut (terms at efficiency 1, then scaled) is the model itself, for pp = 1."""
    terms = request_terms(GPT_20B, A100, tp, batch, 60, 20)
    from lib.validation.decode import _stack
    shortcut = float(_stack([terms]).time(em, ec, overhead)[0])
    full = request_time(GPT_20B, A100, Layout(tp=tp), batch, 60, 20, memory_efficiency=em, compute_efficiency=ec,
                        layer_overhead=overhead)
    assert shortcut == pytest.approx(full, rel=1e-9)
    step = token_terms(PRESETS["llama-2-7b"], A100, tp, batch, 100)
    assert float(_stack([step]).time(em, ec)[0]) == pytest.approx(
        token_time(PRESETS["llama-2-7b"], A100, Layout(tp=tp), batch, 100, memory_efficiency=em,
                   compute_efficiency=ec), rel=1e-9)


def test_token_time_is_the_serving_models_step():
    step = decode_step(PRESETS["llama-2-7b"], A100, Layout(tp=2), 4, 300, memory_efficiency=0.7)
    assert token_time(PRESETS["llama-2-7b"], A100, Layout(tp=2), 4, 300, memory_efficiency=0.7) == step.tpot
    with pytest.raises(ValueError, match="layer_overhead"):
        token_time(PRESETS["llama-2-7b"], A100, Layout(), 1, 10, layer_overhead=-1e-6)


def test_pipelined_context_overlaps_microbatches():
    layout = Layout(tp=8, pp=3)
    serial = sum(context_time(MEGATRON_530B, A100, Layout(tp=8, pp=3), 1, 128) for _ in range(3))
    assert context_time(MEGATRON_530B, A100, layout, 3, 128) < serial
    assert context_time(MEGATRON_530B, A100, layout, 3, 128) > context_time(MEGATRON_530B, A100, layout, 1, 128)


def test_fit_recovers_efficiencies_it_was_given():
    shapes = [(1, b, n, o) for b in (1, 8, 64, 256) for n, o in ((20, 8), (200, 200))]
    terms = [request_terms(GPT_20B, A100, *s) for s in shapes]
    truth = [request_time(GPT_20B, A100, Layout(tp=tp), b, n, o, memory_efficiency=0.6, compute_efficiency=0.45)
             for tp, b, n, o in shapes]
    fit = fit_efficiencies(terms, truth)
    assert fit.memory_efficiency == pytest.approx(0.6, rel=0.01)
    assert fit.compute_efficiency == pytest.approx(0.45, rel=0.01)
    assert fit.rms_log_error < 0.01
    with pytest.raises(ValueError, match="one time per terms entry"):
        fit_efficiencies(terms, truth[:-1])
    with pytest.raises(ValueError, match="at least one figure"):
        fit_efficiencies([], [])


def test_allreduce_design_holds_out_every_inner_size():
    records = validate_allreduce()
    for name in SYSTEMS:
        mine = [r for r in records if r["dataset"] == name]
        roles = [r["role"] for r in mine]
        assert roles[0] == roles[-1] == "calibration" and set(roles[1:-1]) == {"held-out"}
        assert [abs(r["calibrated_error"]) < 1e-9 for r in (mine[0], mine[-1])] == [True, True]


def test_decode_design_calibrates_on_one_gpu_only():
    records = validate_decode()
    assert {r["tp"] for r in records if r["role"] == "calibration"} == {1}
    assert all(r["role"] == "held-out" for r in records if r["dataset"] == "decode_ft_megatron530b_a100")
    assert {r["layer_overhead"] for r in records} == {0.0}
    extended = validate_decode(overhead=True)
    assert {r["tp"] for r in extended if r["role"] == "calibration"} == {1, 8}


def test_summary_reports_every_median():
    s = summary()
    assert s["allreduce_held_out"] > 100 and s["decode_held_out"] > 100
    for key in ("allreduce_calibrated", "allreduce_line", "allreduce_as_is", "decode", "decode_with_overhead"):
        assert 0 < s[key] < 1 and not math.isnan(s[key])
