"""Tests for the package lib.serving (__main__.py): the command line sizes, reads a config.json and refuses bad input
in one line, with the planner page's conventions (percentile, device cap, max batch, expert-parallel default)."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from serving_support import QWEN25_32B

from lib import serving
from lib.transformer import PRESETS
from lib.units import ms
from tools.sphinx import planner_data

ROOT = Path(__file__).resolve().parents[3]


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


def _bad_inputs(tmp: Path) -> list[tuple[list[str], list[str]]]:
    """Bad command lines and the words their one error line must hold: the option and the value given."""
    bad_json = tmp / "bad" / "config.json"
    bad_json.parent.mkdir()
    bad_json.write_text("{not json")
    missing = tmp / "absent" / "config.json"
    good_csv, zero_csv = tmp / "good.csv", tmp / "zero.csv"
    good_csv.write_text("prompt_tokens,output_tokens\n512,128\n")
    zero_csv.write_text("prompt_tokens,output_tokens\n512,128\n512,0\n")
    return [
        (["--devices", "abc"], ["--devices", "'abc'"]),
        (["--devices", "0"], ["--devices", "0"]),
        (["--devices", "100000"], ["--devices must be at most 4096 (the planner's cap), got 100000"]),
        (["--devices", "12"], ["devices", "12"]),  # lib's own ValueError: 12 devices do not fill servers of 8
        (["--max-devices", "5000", "--rate", "3"], ["--max-devices", "5000"]),
        (["--config", str(missing)], ["--config", str(missing)]),
        (["--config", str(bad_json)], ["--config", str(bad_json), "JSON"]),
        (["--model", "llama-9-900b"], ["--model", "'llama-9-900b'"]),
        (["--device", "h999"], ["--device", "'h999'"]),
        (["--weight-format", "fp3"], ["--weight-format", "'fp3'"]),
        (["--prompt", "0"], ["--prompt", "0"]),
        (["--output", "-5"], ["--output", "-5"]),
        (["--batch", "2.5"], ["--batch", "'2.5'"]),
        (["--rate", "-1"], ["--rate", "-1"]),
        (["--ttft-ms", "0"], ["--ttft-ms", "0"]),
        (["--tpot-ms", "nan"], ["--tpot-ms", "nan"]),
        (["--percentile", "100"], ["--percentile", "100"]),
        (["--percentile", "-0.5"], ["--percentile", "-0.5"]),
        (["--prefix-hit-rate", "1"], ["--prefix-hit-rate", "1"]),
        (["--max-num-seqs", "0"], ["--max-num-seqs", "0"]),
        (["--speculate", "1.5", "3"], ["--speculate ALPHA", "1.5"]),
        (["--disaggregate", "--ttft-ms", "100"], ["--disaggregate", "--tpot-ms"]),
        (["--rate", "5", "--confidence", "0.99"], ["--confidence", "0.99"]),
        (["--confidence", "0.9"], ["--confidence", "0.9", "--rate"]),
        (["--lengths", str(bad_json)], ["--lengths", str(bad_json), "line 1 is not JSON"]),  # the table's
        (["--rate", "5", "--lengths", str(bad_json)], ["--lengths", str(bad_json), "line 1"]),
        (["--rate", "5", "--lengths", str(missing)], ["--lengths", str(missing)]),
        (["--frontier", "--lengths", str(zero_csv)], ["--lengths", str(zero_csv), "line 3", "output_tokens", "'0'"]),
        (["--lengths-inline", "1024:0"], ["--lengths-inline", "'1024:0'", "output"]),
        (["--lengths-inline", "1024-256"], ["--lengths-inline", "'1024-256'"]),
        (["--lengths-inline", ""], ["--lengths-inline", "holds no request"]),
        (
            ["--model", "llama-3-8b", "--lengths-inline", "512:128,8000:256"],
            ["--lengths-inline 512:128,8000:256", "8256", "8192"],  # the longest request, not the mean, is refused
        ),
        (["--prompt", "512", "--lengths-inline", "512:128"], ["--prompt 512", "--lengths-inline 512:128"]),
        (["--output", "64", "--lengths", str(good_csv)], ["--output 64", f"--lengths {good_csv}"]),
        (["--lengths", str(good_csv), "--lengths-inline", "1:1"], ["--lengths", "--lengths-inline"]),
    ]


@pytest.mark.slow
def test_every_bad_input_is_one_line_naming_the_option_and_the_value(tmp_path):
    cases = _bad_inputs(tmp_path)
    assert len({tuple(argv) for argv, _ in cases}) >= 20
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "lib.serving", *argv],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for argv, _ in cases
    ]
    for (argv, words), run in zip(cases, runs):
        _, err = run.communicate(timeout=120)
        lines = [line for line in err.splitlines() if line.strip()]
        assert run.returncode == 2, (argv, run.returncode, err)
        assert len(lines) == 1 and len(err.splitlines()) == 1, (argv, err)
        assert "Traceback" not in err and lines[0].startswith("error: "), (argv, err)
        assert all(word in lines[0] for word in words), (argv, lines[0], words)


def test_the_percentile_is_read_as_a_fraction_or_a_percent(capsys):
    from lib.serving.__main__ import main

    common = ["--model", "llama-3-8b", "--devices", "1", "--batch", "8", "--ttft-ms", "200", "--tpot-ms", "20"]
    outputs = {}
    for written in ("0.9", "90", "0.5"):
        main([*common, "--percentile", written])
        outputs[written] = capsys.readouterr().out
    assert outputs["0.9"] == outputs["90"]
    assert outputs["0.5"] != outputs["90"]  # the median's capacity is higher: the column must move


def test_the_expert_parallel_default_is_plans_and_the_pages():
    from lib.serving.__main__ import EXPERT_PARALLEL, _parser

    page = planner_data.planner_data()["serving"]["plan_defaults"]["expert_parallel"]
    assert EXPERT_PARALLEL[_parser().parse_args([]).expert_parallel] is page
    assert page is inspect.signature(serving.plan).parameters["expert_parallel"].default


def test_the_max_batch_column_counts_every_replica(capsys):
    from lib.serving.__main__ import main

    main(["--model", "llama-3-8b", "--devices", "4", "--batch", "8"])
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if "max batch" in line)
    assert "max batch (all dp)" in header
    rows = {row.name: row for row in serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 4, 8, 1024, 256)}
    shown = {line.split()[0]: int(line.split()[3]) for line in lines if line.split() and line.split()[0] in rows}
    assert shown.keys() == rows.keys()
    # tp1-pp1-dp4 holds four replicas of what tp1-pp1-dp1 of one device holds; the column says the four
    one = serving.plan(PRESETS["llama-3-8b"], "h100-sxm", 1, 8, 1024, 256)[0]
    assert shown["tp1-pp1-dp4"] == 4 * one.max_batch > 0


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv, lead, simple",
    [
        (["--model", "llama-3-8b", "--ttft-ms", "1000", "--tpot-ms", "100"], "tp1-pp2-dp4", "tp1-pp1-dp8"),
        (
            ["--model", "mixtral-8x7b", "--devices", "2", "--prompt", "256", "--ttft-ms", "1000", "--tpot-ms", "100"]
            + ["--expert-parallel", "all"],
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
    assert len(note) == 1 and "inside the model's 15 % error" in note[0] and f"{simple} is simpler" in note[0]
    flags = serving.parse_vllm_command(next(line for line in lines if line.startswith("vllm serve")))
    assert int(flags["tensor-parallel-size"]) == int(simple.split("-")[0][2:])


@pytest.mark.slow
def test_every_capacity_carries_a_range_and_confidence_sizes_for_more(capsys):
    from lib.serving.__main__ import main

    common = ["--model", "llama-3.1-8b", "--ttft-ms", "1000", "--tpot-ms", "20"]
    main([*common, "--devices", "4"])
    table = capsys.readouterr().out.splitlines()
    header = next(line for line in table if "req/s" in line)
    assert "90 % range" in header
    rows = [line for line in table if re.match(r" +tp\S+ +(yes|no) ", line)]
    assert len(rows) == 6
    for row in rows:  # req/s, then its range, then req/s per device
        rate, low, high = map(float, re.search(r" (\d+\.\d\d) +(\d+\.\d\d)-(\d+\.\d\d) +\d+\.\d{3}  ", row).groups())
        assert low < rate < high, row  # the range straddles the estimate: the model errs both ways

    main([*common, "--rate", "40", "--max-devices", "16"])
    median = capsys.readouterr().out
    main([*common, "--rate", "40", "--max-devices", "16", "--confidence", "0.9"])
    sure = capsys.readouterr().out
    devices = [int(re.search(r"output 256: (\d+) x ", out).group(1)) for out in (median, sure)]
    assert devices[1] >= devices[0], devices
    assert "90 % range" in median and "with 90 % confidence" in sure
    assert f"the model's own estimate needs {devices[0]} x H100 SXM" in sure


@pytest.mark.slow
def test_the_command_line_sizes_for_a_file_of_lengths_as_size_does(tmp_path, capsys):
    from lib.serving.__main__ import main

    prompts, outputs = [812, 95, 2048, 300, 1500], [233, 410, 64, 300, 120]
    path = tmp_path / "requests.csv"
    path.write_text("prompt_tokens,output_tokens\n" + "".join(f"{p},{o}\n" for p, o in zip(prompts, outputs)))
    main(["--model", "llama-3.1-8b", "--rate", "50", "--tpot-ms", "30", "--max-devices", "8", "--lengths", str(path)])
    out = capsys.readouterr().out
    want = serving.size(PRESETS["llama-3.1-8b"], "h100-sxm", 50.0, prompts, outputs, max_devices=8, tpot_limit=30 * ms)
    assert f": {want.devices} x H100 SXM as {want.layout.name} " in out, out
    assert f"{want.capacity.rate:.2f} in all" in out and "lengths of 5 requests (prompt mean 951" in out, out
    line = next(row for row in out.splitlines() if row.startswith("vllm serve"))
    assert serving.parse_vllm_command(line)["max-model-len"] == str(2048 + 64), line  # the longest request


def test_the_table_and_the_frontier_plan_for_a_sample_of_lengths(tmp_path, capsys):
    from lib.serving.__main__ import main

    prompts, outputs = [812, 95, 2048, 300, 1500], [233, 410, 64, 300, 120]
    path = tmp_path / "requests.csv"
    path.write_text("prompt_tokens,output_tokens\n" + "".join(f"{p},{o}\n" for p, o in zip(prompts, outputs)))
    common = ["--model", "llama-3.1-8b", "--devices", "2", "--batch", "16"]
    main([*common, "--lengths", str(path)])
    table = capsys.readouterr().out
    rows = {row.name: row for row in serving.plan(PRESETS["llama-3.1-8b"], "h100-sxm", 2, 16, prompts, outputs)}
    shown = {line.split()[0]: line.split() for line in table.splitlines() if line.split() and line.split()[0] in rows}
    assert shown.keys() == rows.keys()
    for name, row in rows.items():  # max batch (all dp) and TPOT ms as plan gives them for the sample
        assert shown[name][3:6:2] == [str(row.max_batch * row.dp), f"{row.tpot / ms:.2f}"], name
    assert f"lengths of 5 requests (prompt mean 951, p90 1829; output mean 225, p90 366) from {path}" in table
    line = next(row for row in table.splitlines() if row.startswith("vllm serve"))
    assert serving.parse_vllm_command(line)["max-model-len"] == str(2048 + 64)  # the longest request
    text = "812:233,95:410,2048:64,300:300,1500:120"
    main([*common, "--lengths-inline", text])
    inline = capsys.readouterr().out
    assert inline == table.replace(f"from {path}", f"from --lengths-inline {text}")
    main([*common, "--lengths-inline", text, "--frontier"])
    front = capsys.readouterr().out
    _, want = serving.frontier(PRESETS["llama-3.1-8b"], "h100-sxm", 2, prompts, outputs)
    assert "lengths of 5 requests" in front
    assert [line.split()[:2] for line in front.splitlines()[3:]] == [[p.name, str(p.batch)] for p in want]


#: Issue 31's acceptance 5: ten seeded sizing scenarios (a percentile on each, most with a sample of lengths, most
#: sized) that the planner page opens too (tests/browser/test_planner_sizing.py), with lib.serving.size's answers.
ACCEPTANCE = json.loads((ROOT / "tests" / "browser" / "golden" / "scenarios.json").read_text(encoding="utf-8"))[
    "acceptance"
]


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(ACCEPTANCE)))
def test_the_command_line_sizes_the_pages_acceptance_scenarios_as_size_does(index, capsys):
    from lib.hardware import DEVICES
    from lib.serving.__main__ import main
    from tools.site.planner_golden import cli_arguments

    q, want = ACCEPTANCE[index]["query"], ACCEPTANCE[index]["want"]
    main(cli_arguments(q))
    out = capsys.readouterr().out
    device = DEVICES[q["device"]].name
    if want is None:
        assert f"No layout of at most {q['max_devices']} x {device} carries" in out, out
        return
    line = next(row for row in out.splitlines() if " x " + device + " as " in row)
    found = re.search(
        r": (\d+) x .* as (\S+) \((\d+) replicas of (\d+\.\d\d) requests/s each, (\d+\.\d\d) in all", line
    )
    assert found, line
    devices, layout, replicas, each, total = found.groups()
    assert (int(devices), layout, int(replicas)) == (want["devices"], want["layout"], want["dp"]), line
    # printed to 0.01: within half of that (and a hair) of lib's rates, whichever way a CPU rounds the last bits
    assert abs(float(each) - want["replica_rate"]) <= 0.005 + 1e-9 * want["replica_rate"], line
    assert abs(float(total) - want["rate"]) <= 0.005 + 1e-9 * want["rate"], line
    assert f"binding: {want['binding']})" in line, line
    if "lengths" in q:
        prompts, outputs = serving.parse_lengths(q["lengths"])
        assert f"lengths of {prompts.size} requests" in line, line
        command = next(row for row in out.splitlines() if row.startswith("vllm serve"))
        assert f"--max-model-len {int((prompts + outputs).max())} " in command + " ", command  # the longest request
    if "confidence" in q:
        assert f"the model's own estimate needs {want['estimate']} x {device}" in out, out
