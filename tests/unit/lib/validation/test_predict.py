"""Tests for lib.validation.predict: a row's prediction."""

from __future__ import annotations

import pytest

from lib.validation import load_published, predict_row


def test_a_prediction_is_affine_in_the_layer_cost_at_pp1():
    row = next(r for r in load_published("decode_argonne_vllm_a100") if r["tp"] == 2 and r["batch"] == 16)
    at = [predict_row(row, layer_overhead=o) for o in (0.0, 1e-4, 2e-4)]
    assert at[2] - at[1] == pytest.approx(at[1] - at[0], rel=1e-9) and at[1] > at[0]
