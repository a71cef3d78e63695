"""Tests for the package lib.serving (__main__.py): the command line sizes and reads a config.json."""

from __future__ import annotations

import json

import pytest
from serving_support import QWEN25_32B

from lib import serving
from lib.transformer import PRESETS
from lib.units import ms


@pytest.mark.slow
def test_the_command_line_sizes_for_a_rate_as_size_does(capsys):
    from lib.serving.__main__ import main

    main(["--model", "llama-3-8b", "--rate", "60", "--max-devices", "16", "--tpot-ms", "20"])
    want = serving.size(PRESETS["llama-3-8b"], "h100-sxm", 60.0, 1024, 256, max_devices=16, tpot_limit=20 * ms)
    out = capsys.readouterr().out
    assert f"{want.devices} x " in out and want.layout.name in out and f"{want.replica.rate:.2f} requests/s" in out


@pytest.mark.slow
def test_the_command_line_reads_a_config_and_prints_the_deploy_line(tmp_path, capsys):
    from lib.serving.__main__ import main

    path = tmp_path / "Qwen2.5-32B-Instruct" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(QWEN25_32B))
    main(["--config", str(path), "--devices", "4", "--ttft-ms", "1000", "--tpot-ms", "60"])
    out = capsys.readouterr().out
    assert "32.76 billion parameters" in out
    line = [row for row in out.splitlines() if row.startswith("vllm serve")][0]
    assert serving.parse_vllm_command(line)["model"] == "Qwen2.5-32B-Instruct"
    main(["--model", "llama-3-70b", "--weight-format", "fp8", "--rate", "10", "--ttft-ms", "1000", "--tpot-ms", "50"])
    assert "requests/s" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv, lead, simple",
    [
        (["--model", "llama-3-8b", "--ttft-ms", "1000", "--tpot-ms", "100"], "tp1-pp2-dp4", "tp1-pp1-dp8"),
        (
            ["--model", "mixtral-8x7b", "--devices", "2", "--prompt", "256", "--ttft-ms", "1000", "--tpot-ms", "100"],
            "adp2-ep2-pp1-dp1",
            "tp2-pp1-dp1",
        ),
    ],
)
def test_the_command_line_marks_the_simpler_layout_and_prints_why(capsys, argv, lead, simple):
    from lib.serving.__main__ import main

    main(argv)
    lines = capsys.readouterr().out.splitlines()
    marked = [line.split()[0] for line in lines if line.endswith("<- best")]
    assert marked == [simple]
    note = [line for line in lines if line.startswith(f"{lead} is ")]
    assert len(note) == 1 and "inside the model's 16 % error" in note[0] and f"{simple} is simpler" in note[0]
    flags = serving.parse_vllm_command(next(line for line in lines if line.startswith("vllm serve")))
    assert int(flags["tensor-parallel-size"]) == int(simple.split("-")[0][2:])
