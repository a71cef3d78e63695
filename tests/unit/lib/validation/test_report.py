"""Tests for lib.validation.report: the scores, the summary, the all-reduce validation and the algorithm logs."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from lib.validation import (
    SYSTEMS,
    allreduce_sweep,
    score,
    summary,
    validate_algorithms,
    validate_allreduce,
    validations,
)


@pytest.mark.slow
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


# Scores and the report.


def test_score_gives_medians_p90s_and_intervals_around_them():
    s = score(np.linspace(-0.5, 0.5, 101))
    assert s.n == 101 and s.median == pytest.approx(0.25) and s.p90 == pytest.approx(0.45)
    assert s.median_interval[0] <= s.median <= s.median_interval[1]
    assert s.p90_interval[0] <= s.p90 <= s.p90_interval[1]
    for bad in ([], [0.1, float("nan")]):
        with pytest.raises(ValueError, match="errors"):
            score(bad)


@pytest.mark.slow
def test_summary_scores_every_family_on_held_out_figures():
    s = summary()
    assert set(s) == {
        "allreduce",
        "allreduce_band",
        "allreduce_post_hoc",
        "allreduce_floor_band",
        "decode",
        "decode_ft_gptfast",
        "prefill",
        "load",
    }
    for key, value in s.items():
        assert value.n >= 10 and 0 < value.median < value.p90 < 5 and not math.isnan(value.median), key


def test_algorithm_logs_are_compared_with_nothing_fitted():
    records = validate_algorithms()
    default = [r for r in records if r["selection"] == "NCCL default"]
    assert {(r["gpus"], r["logged"]) for r in default} == {(2, "ring"), (4, "ring"), (6, "nvls")}
    forced = [r for r in records if r["selection"].startswith("NCCL_ALGO=")]
    assert forced and all(r["agrees"] for r in forced)  # the model runs what was forced
