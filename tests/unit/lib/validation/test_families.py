"""Tests for lib.validation.families: the fits of each family see only calibration rows."""

from __future__ import annotations

import pytest

from lib.validation import prefill_role, validate_decode, validate_load, validate_prefill, validations
from lib.validation.families import rows_of
from lib.validation.schemas import BATCH_DATASETS, DECODE_DATASETS, LOAD_DATASETS, TTFT_DATASETS

# The fits see only calibration rows.


def _without_held_out(v, rows):
    held = {
        (r["dataset"], r["measured"], r["tp"], r["quantity"], r["batch"], r["input_tokens"])
        for r in v.records
        if r["role"] == "held-out"
    }
    kept = [
        r
        for r in rows
        if (
            r["dataset"],
            r["value_si"] if r["quantity"] != "decode_rate" else 1 / r["value_si"],
            r["tp"],
            r["quantity"],
            r["batch"],
            r["input_tokens"],
        )
        not in held
    ]
    assert len(kept) < len(rows)
    return kept


@pytest.mark.parametrize(
    "family, datasets, run",
    [
        ("decode", DECODE_DATASETS + BATCH_DATASETS, validate_decode),
        ("prefill", TTFT_DATASETS, validate_prefill),
        ("load", LOAD_DATASETS, validate_load),
    ],
)
@pytest.mark.slow
def test_removing_every_held_out_row_leaves_every_fitted_constant_unchanged(family, datasets, run):
    rows = [r for r in rows_of(datasets) if r["value_si"]]
    full = validations()[family]
    reduced = run(_without_held_out(full, rows))
    assert reduced.constants.keys() == full.constants.keys()
    for name, value in full.constants.items():
        assert reduced.constants[name] == pytest.approx(value, rel=1e-12), name
    assert not any(r["role"] == "held-out" for r in reduced.records)


@pytest.mark.slow
def test_the_constant_check_can_fail_a_calibration_row_moves_a_constant():
    rows = rows_of(TTFT_DATASETS)
    cal = next(i for i, r in enumerate(rows) if prefill_role(r)[0] == "calibration" and r["input_tokens"] == 1)
    moved = [dict(r, value_si=2 * r["value_si"]) if i == cal else r for i, r in enumerate(rows)]
    assert validate_prefill(moved).constants["layer_overhead.LMDeploy"] != pytest.approx(
        validations()["prefill"].constants["layer_overhead.LMDeploy"], rel=1e-6
    )
