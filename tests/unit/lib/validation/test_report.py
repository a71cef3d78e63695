"""lib.validation: loading, the pre-registered splits, the fits that see only calibration rows, and the scores."""

from __future__ import annotations

import doctest
import math
from dataclasses import replace

import numpy as np
import pytest

import lib.validation.__main__ as cli
from lib.collectives import tune_allreduce
from lib.serving import Cluster, Layout, engine as serving_engine
from lib.transformer import PRESETS, parameter_count
from lib.validation import (GPT_20B, INTERNLM_20B, LLAMA_3_405B, MEGATRON_530B, SPLITS, SYSTEMS, UNMODELLED,
                            Workload, allreduce_roles, allreduce_sweep, batch_time, calibrate_line, calibrate_nccl,
                            calibrate_serving, capacity, decode_role, fit_overhead, load_published, load_role,
                            median_abs_error, model_config, open_loop_batch, predict_nccl, predict_row,
                            prefill_role, relative_error, rounding_error, scaled_link, score, summary,
                            validate_algorithms, validate_allreduce, validate_decode, validate_load,
                            validate_prefill, validations)
from lib.validation.families import rows_of
from lib.validation.schemas import BATCH_DATASETS, DECODE_DATASETS, LOAD_DATASETS, TTFT_DATASETS

A100 = Cluster("a100-80gb", inter_link="ib-hdr")


def test_load_published_types_and_refuses_unknown_names():
    rows = load_published("decode_gptfast_a100")
    oom = [r for r in rows if r["status"] == "OOM"]
    assert oom and all(r["value"] is None and r["value_si"] is None for r in oom)
    assert all(isinstance(r["tp"], int) and r["output_tokens"] is None for r in rows)
    offline = [r for r in load_published("serving_sglang_vllm060") if r["request_rate"] == math.inf]
    assert offline and all(r["concurrency"] is None for r in offline)
    rows[0]["value"] = -1.0                                    # a copy: the cached rows stay as printed
    assert load_published("decode_gptfast_a100")[0]["value"] != -1.0
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
def test_two_point_calibration_reproduces_both_end_points(name):
    sweep = allreduce_sweep(name)
    fit = calibrate_nccl(sweep)
    ends = predict_nccl(sweep.size[[0, -1]], name, sweep.gpus, fit.efficiency, fit.overhead).time
    assert ends == pytest.approx(sweep.time[[0, -1]], rel=1e-9)
    assert calibrate_line(sweep).time(sweep.size[-1], sweep.gpus) == pytest.approx(sweep.time[-1], rel=1e-9)


def test_errors_are_signed_and_medians_refuse_nothing():
    assert relative_error(1.2, 1.0) == pytest.approx(0.2) and relative_error(0.5, 1.0) == pytest.approx(-0.5)
    with pytest.raises(ValueError, match="measured"):
        relative_error(1.0, 0.0)
    with pytest.raises(ValueError, match="at least one"):
        median_abs_error([])


def test_model_shapes_match_their_names():
    assert parameter_count(GPT_20B) / 1e9 == pytest.approx(20.5, abs=0.3)
    assert parameter_count(MEGATRON_530B) / 1e9 == pytest.approx(530, abs=3)
    assert parameter_count(INTERNLM_20B) / 1e9 == pytest.approx(20, abs=0.5)
    assert parameter_count(LLAMA_3_405B) / 1e9 == pytest.approx(405, abs=3)
    assert model_config("meta-llama/Llama-3.3-70B-Instruct") is PRESETS["llama-3-70b"]
    with pytest.raises(ValueError, match="must start with a model"):
        model_config("Deci/DeciLM-7B")


# The splits: rules on a row's description, extrapolating.

def test_allreduce_held_out_sizes_are_four_doublings_below_the_calibration_regime():
    for name in SYSTEMS:
        sizes = allreduce_sweep(name).size
        roles, doublings = allreduce_roles(sizes)
        assert sizes[roles == "calibration"].min() == sizes.max() / 8
        assert (doublings[roles == "held-out"] >= 4 - 1e-9).all() and (roles == "held-out").any()
        assert ((doublings[roles == "gap"] > 0) & (doublings[roles == "gap"] < 4)).all()


def test_decode_calibrates_on_tp1_only_and_holds_out_every_other_degree():
    rows = rows_of(DECODE_DATASETS + BATCH_DATASETS)
    roles = [decode_role(r) for r in rows]
    assert {r["tp"] * r["pp"] for r, (role, _, _) in zip(rows, roles) if role == "calibration"} == {1}
    assert all(role != "calibration" for r, (role, _, _) in zip(rows, roles) if r["tp"] > 1)
    held = [r for r, (role, _, _) in zip(rows, roles) if role == "held-out"]
    assert all(r["tp"] * r["pp"] > 1 for r in held)
    assert {r["model"].split(" (")[0] for r in held} >= {"Megatron-530B", "meta-llama/Llama-2-70b-hf"}


def test_prefill_and_load_calibrate_on_one_engine_at_tp1():
    ttft = [(r, prefill_role(r)[0]) for r in rows_of(TTFT_DATASETS)]
    assert {r["tp"] for r, role in ttft if role == "calibration"} == {1}
    assert {r["tp"] for r, role in ttft if role == "held-out"} == {2, 4}
    load = [(r, load_role(r)[0]) for r in rows_of(LOAD_DATASETS)]
    cal = [r for r, role in load if role == "calibration"]
    assert {(r["dataset"], r["tp"], r["gpu"]) for r in cal} == {("serving_lmdeploy_a100", 1, "A100-80G")}
    assert {r["dataset"] for r, role in load if role == "held-out"} == set(LOAD_DATASETS)


def test_every_split_names_its_goal():
    assert {f: s.goal for f, s in SPLITS.items()} == {"allreduce": 0.10, "decode": 0.10, "prefill": 0.15,
                                                      "load": 0.15}


# The fits see only calibration rows.

def _without_held_out(v, rows):
    held = {(r["dataset"], r["measured"], r["tp"], r["quantity"], r["batch"], r["input_tokens"])
            for r in v.records if r["role"] == "held-out"}
    kept = [r for r in rows if (r["dataset"], r["value_si"] if r["quantity"] != "decode_rate" else 1 / r["value_si"],
                                r["tp"], r["quantity"], r["batch"], r["input_tokens"]) not in held]
    assert len(kept) < len(rows)
    return kept


@pytest.mark.parametrize("family, datasets, run", [
    ("decode", DECODE_DATASETS + BATCH_DATASETS, validate_decode),
    ("prefill", TTFT_DATASETS, validate_prefill),
    ("load", LOAD_DATASETS, validate_load),
])
def test_removing_every_held_out_row_leaves_every_fitted_constant_unchanged(family, datasets, run):
    rows = [r for r in rows_of(datasets) if r["value_si"]]
    full = validations()[family]
    reduced = run(_without_held_out(full, rows))
    assert reduced.constants.keys() == full.constants.keys()
    for name, value in full.constants.items():
        assert reduced.constants[name] == pytest.approx(value, rel=1e-12), name
    assert not any(r["role"] == "held-out" for r in reduced.records)


@pytest.mark.parametrize("role_key", ["role", "post_hoc_role"])
def test_removing_held_out_sizes_leaves_the_allreduce_constants_unchanged(role_key):
    full = validations()["allreduce"]
    sweeps = {}
    for name in SYSTEMS:
        sweep = allreduce_sweep(name)
        keep = np.array([r[role_key] != "held-out" for r in full.records if r["dataset"] == name])
        sweeps[name] = replace(sweep, size=sweep.size[keep], time=sweep.time[keep], derived=sweep.derived[keep])
    reduced = validate_allreduce(sweeps).constants
    prefix = "efficiency." if role_key == "role" else ""
    for name, value in full.constants.items():
        if name.startswith(prefix):
            assert reduced[name] == pytest.approx(value, rel=1e-12), name


def test_the_constant_check_can_fail_a_calibration_row_moves_a_constant():
    rows = rows_of(TTFT_DATASETS)
    cal = next(i for i, r in enumerate(rows) if prefill_role(r)[0] == "calibration" and r["input_tokens"] == 1)
    moved = [dict(r, value_si=2 * r["value_si"]) if i == cal else r for i, r in enumerate(rows)]
    assert validate_prefill(moved).constants["layer_overhead.LMDeploy"] != pytest.approx(
        validations()["prefill"].constants["layer_overhead.LMDeploy"], rel=1e-6)


# The engine defaults, refitted from data/published.

@pytest.mark.stored
def test_refitting_gives_the_engine_defaults():
    cal = calibrate_serving()
    assert cal.memory_efficiency == pytest.approx(serving_engine.MEMORY_EFFICIENCY, rel=1e-9)   # a ratio
    assert cal.compute_efficiency == pytest.approx(serving_engine.COMPUTE_EFFICIENCY, abs=0.01)
    assert cal.layer_overhead == pytest.approx(serving_engine.LAYER_OVERHEAD, abs=2e-6)       # seconds
    assert cal.slope_pairs == 4 and cal.overhead_rows == 15 and cal.overhead_rms_log_error < 0.05


def test_fit_overhead_recovers_a_cost_and_refuses_what_is_not_affine():
    truth = np.array([1.0, 2.0, 3.0]) + 150e-6 * np.array([1e3, 2e3, 5e3])
    o = fit_overhead(lambda c: np.array([1.0, 2.0, 3.0]) + c * np.array([1e3, 2e3, 5e3]), truth)
    assert o == pytest.approx(150e-6, rel=1e-6)
    with pytest.raises(ValueError, match="affine"):
        fit_overhead(lambda c: np.array([1.0 + c * c * 1e6]), [1.0])


def test_a_prediction_is_affine_in_the_layer_cost_at_pp1():
    row = next(r for r in load_published("decode_argonne_vllm_a100") if r["tp"] == 2 and r["batch"] == 16)
    at = [predict_row(row, layer_overhead=o) for o in (0.0, 1e-4, 2e-4)]
    assert at[2] - at[1] == pytest.approx(at[1] - at[0], rel=1e-9) and at[1] > at[0]


# The request models.

def test_a_batch_that_does_not_fit_runs_in_waves_and_a_model_that_does_not_fit_raises():
    engine = serving_engine.Engine(gpu_memory_utilization=0.9).resolved("a100-40gb")
    cluster, llama = Cluster("a100-40gb", devices_per_node=4), PRESETS["llama-2-7b"]
    one = batch_time(llama, cluster, Layout(), engine, 8, 2048, 2048, 8192, memory_waves=True)
    many = batch_time(llama, cluster, Layout(), engine, 64, 2048, 2048, 8192, memory_waves=True)
    assert many > 4 * one
    with pytest.raises(ValueError, match="does not fit"):
        batch_time(PRESETS["llama-2-70b"], cluster, Layout(), engine, 1, 128, 128, memory_waves=True)


def test_open_loop_batch_grows_with_the_rate_until_the_capacity():
    engine = serving_engine.Engine().resolved("a100-80gb")
    args, load = (PRESETS["llama-3-8b"], Cluster("a100-80gb"), Layout(), engine), Workload(220, 190)
    batches = [open_loop_batch(*args, load, rate) for rate in (0.5, 2, 8, 1e4)]
    assert batches == sorted(batches) and batches[-1] == capacity(*args, load) and batches[0] >= 1
    with pytest.raises(ValueError, match="rate"):
        open_loop_batch(*args, load, 0.0)


# Scores and the report.

def test_score_gives_medians_p90s_and_intervals_around_them():
    s = score(np.linspace(-0.5, 0.5, 101))
    assert s.n == 101 and s.median == pytest.approx(0.25) and s.p90 == pytest.approx(0.45)
    assert s.median_interval[0] <= s.median <= s.median_interval[1]
    assert s.p90_interval[0] <= s.p90 <= s.p90_interval[1]
    for bad in ([], [0.1, float("nan")]):
        with pytest.raises(ValueError, match="errors"):
            score(bad)


def test_summary_scores_every_family_on_held_out_figures():
    s = summary()
    assert set(s) == {"allreduce", "allreduce_band", "allreduce_post_hoc", "decode", "decode_ft_gptfast", "prefill",
                      "load"}
    for key, value in s.items():
        assert value.n >= 10 and 0 < value.median < value.p90 < 5 and not math.isnan(value.median), key


def test_algorithm_logs_are_compared_with_nothing_fitted():
    records = validate_algorithms()
    default = [r for r in records if r["selection"] == "NCCL default"]
    assert {(r["gpus"], r["logged"]) for r in default} == {(2, "ring"), (4, "ring"), (6, "nvls")}
    forced = [r for r in records if r["selection"].startswith("NCCL_ALGO=")]
    assert forced and all(r["agrees"] for r in forced)        # the model runs what was forced


def test_the_command_line_doctest_runs():
    result = doctest.testmod(cli, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 1 and result.failed == 0
