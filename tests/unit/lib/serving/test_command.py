"""Tests for lib.serving.command: the vllm serve line states the row's sizes and formats."""

from __future__ import annotations

import pytest

from lib import serving
from lib.serving import Layout
from lib.transformer import PRESETS
from lib.units import ms


@pytest.mark.slow
def test_the_vllm_serve_line_states_the_rows_sizes_and_formats():
    rows = serving.plan(
        PRESETS["llama-3-70b"],
        "h100-sxm",
        8,
        64,
        1024,
        256,
        ttft_limit=1.0,
        tpot_limit=50 * ms,
        weight_format="fp8",
        kv_format="fp8",
    )
    chosen = serving.best(rows)
    engine = serving.configure("h100-sxm", weight_format="fp8", kv_format="fp8")
    line = serving.vllm_command(PRESETS["llama-3-70b"].hf_id, Layout(chosen.tp, chosen.pp, chosen.dp), engine)
    flags = serving.parse_vllm_command(line)
    assert flags["model"] == "meta-llama/Meta-Llama-3-70B-Instruct"
    assert (
        int(flags["tensor-parallel-size"]),
        int(flags["pipeline-parallel-size"]),
        int(flags["data-parallel-size"]),
    ) == (chosen.tp, chosen.pp, chosen.dp)
    assert flags["quantization"] == "fp8" and flags["kv-cache-dtype"] == "fp8"
    assert int(flags["max-num-seqs"]) == engine.max_num_seqs == 1024
    assert int(flags["max-num-batched-tokens"]) == engine.max_num_batched_tokens == 8192
