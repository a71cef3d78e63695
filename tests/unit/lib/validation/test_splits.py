"""Tests for lib.validation.splits: the pre-registered calibration and held-out roles."""

from __future__ import annotations

from lib.validation import SPLITS, SYSTEMS, allreduce_roles, allreduce_sweep, decode_role, load_role, prefill_role
from lib.validation.families import rows_of
from lib.validation.schemas import BATCH_DATASETS, DECODE_DATASETS, LOAD_DATASETS, TTFT_DATASETS

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
    assert {f: s.goal for f, s in SPLITS.items()} == {"allreduce": 0.10, "decode": 0.10, "prefill": 0.15, "load": 0.15}
