"""Tests for lib.validation.published and data/published: every CSV loads, has its schema, the right unit for each
quantity, and a source on every row."""

from __future__ import annotations

import csv
import importlib.util
import math
import re

import pytest

from lib.validation.published import DATA_DIR, allreduce_sweep, load_published, rounding_error
from lib.validation.schemas import (
    ALGORITHM_DATASETS,
    ALLREDUCE_DATASETS,
    BATCH_DATASETS,
    COLLECTIVE_COLUMNS,
    COLLECTIVE_DATASETS,
    DATASETS,
    DECODE_COLUMNS,
    DECODE_DATASETS,
    DEVICE_COLUMNS,
    DISAGG_DATASETS,
    EXPERT_DATASETS,
    LOAD_DATASETS,
    NOT_RECHECKABLE,
    PD_WORDS,
    PER_WORDS,
    PHASE_WORDS,
    QUANTITY_UNITS,
    SERVING_COLUMNS,
    SPECULATIVE_DATASETS,
    SPLIT_COLUMNS,
    SPLIT_DATASETS,
    TTFT_DATASETS,
    schema,
)

PINNED = re.compile(r"^https://github\.com/[^/]+/[^/]+/blob/[0-9a-f]{40}/\S+$")
PULL = re.compile(r"^https://github\.com/[^/]+/[^/]+/pull/\d+$")
FILES = sorted(DATA_DIR.glob("*.csv"))
#: Columns that may be blank, by schema: what a source does not print, and the log-only NCCL columns.
OPTIONAL = {
    COLLECTIVE_COLUMNS: (
        "note",
        "source_line",
        "value",
        "size_printed",
        "nchannels",
        "algo_source_line",
        "size_source_line",
    ),
    DECODE_COLUMNS: ("note", "source_line", "value", "output_tokens"),
    SERVING_COLUMNS: (
        "note",
        "source_line",
        "value",
        "batch",
        "input_tokens",
        "output_tokens",
        "concurrency",
        "request_rate",
        "num_prompts",
        "total_input_tokens",
        "total_output_tokens",
    ),
    DEVICE_COLUMNS: ("note",),
    SPLIT_COLUMNS: (
        "note",
        "gpus",
        "nodes",
        "tp",
        "ep",
        "dp",
        "prefill_gpus",
        "decode_gpus",
        "prefill_layout",
        "decode_layout",
        "batch",
        "batch_scope",
        "batch_tokens",
        "concurrency",
        "request_rate",
        "num_prompts",
        "input_tokens",
        "output_tokens",
        "draft",
        "draft_tokens",
        "acceptance",
        "compared_with",
    ),
}
#: Quantities that may be negative: a relative gain can be a loss.
SIGNED = ("throughput_gain",)
WITH_LAYOUT = DECODE_DATASETS + BATCH_DATASETS + TTFT_DATASETS + LOAD_DATASETS


def raw_rows(name: str) -> tuple[list[str], list[dict]]:
    with (DATA_DIR / f"{name}.csv").open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames), list(reader)


def test_the_files_are_the_datasets():
    assert sorted(p.stem for p in FILES) == sorted(DATASETS)
    assert len(DATASETS) == len(set(DATASETS)) >= 3


@pytest.mark.parametrize("name", DATASETS)
def test_header_is_the_schema(name):
    header, rows = raw_rows(name)
    assert tuple(header) == schema(name)
    assert rows, f"{name} is empty"


@pytest.mark.parametrize("name", DATASETS)
def test_every_row_has_a_source_a_unit_and_a_value(name):
    _, rows = raw_rows(name)
    required = [c for c in schema(name) if c not in OPTIONAL[schema(name)]]
    for number, row in enumerate(rows, start=2):
        where = f"{name}.csv line {number}"
        for column in required:
            assert row[column].strip(), f"{where}: {column} is empty"
        assert row["dataset"] == name, where
        if name in NOT_RECHECKABLE:
            assert PULL.match(row["source"]) and "recheck.py cannot re-read it" in row["note"], where
        else:
            assert PINNED.match(row["source"]), f"{where}: source is not a GitHub URL pinned to a commit"
        assert row["quantity"] in QUANTITY_UNITS, f"{where}: unknown quantity {row['quantity']!r}"
        assert row["unit"] in QUANTITY_UNITS[row["quantity"]], (
            f"{where}: {row['quantity']} must be in one of {QUANTITY_UNITS[row['quantity']]}"
        )
        if row.get("status") == "OOM":
            assert row["value"] == "", where
        else:
            assert float(row["value"]) >= 0 or row["quantity"] in SIGNED, where
        assert row["source_line"] == "" or int(row["source_line"]) > 0, where


@pytest.mark.parametrize("name", DATASETS)
def test_every_row_has_its_line_except_a_pull_request(name):
    _, rows = raw_rows(name)
    blank = [row for row in rows if row["source_line"] == ""]
    assert len(blank) == (len(rows) if name in NOT_RECHECKABLE else 0)


@pytest.mark.parametrize("name", COLLECTIVE_DATASETS)
def test_nccl_settings_are_recorded_on_every_collective_row(name):
    for row in load_published(name):
        assert row["nccl_version"] and row["tuner_plugin"] and row["nccl_settings"]
        if row["selection"].startswith("NCCL_"):
            assert row["selection"].split(" ")[0] in row["nccl_settings"]


def test_the_p5_job_settings_are_on_every_p5_single_node_row():
    for row in load_published("allreduce_h100_8gpu_aws_p5"):
        assert "NCCL_BUFFSIZE=8388608 (line 435)" in row["nccl_settings"]
        assert row["tuner_plugin"].startswith("NCCL_TUNER_PLUGIN=/opt/aws-ofi-nccl/install/lib/libnccl-ofi-tuner.so")
        assert "-n 100" in row["software"]


@pytest.mark.parametrize("name", ALGORITHM_DATASETS)
def test_logged_runs_name_algorithm_protocol_and_lines(name):
    rows = load_published(name)
    for row in rows:
        assert row["collective"] == "allreduce" and row["nodes"] == 1 and row["gpus"] in (2, 4, 6)
        if row["algo_source_line"] is not None:  # NCCL's own TUNING line was printed
            assert row["algorithm"] in ("RING", "NVLS") and row["protocol"] == "SIMPLE" and row["nchannels"] > 0
            assert row["size_source_line"] == row["algo_source_line"] < row["source_line"]
            assert row["tuner_plugin"].startswith("none:") and row["nccl_version"].startswith("2.29.2")
    logged = {(r["gpus"], r["algorithm"]) for r in rows if r["selection"] == "NCCL default"}
    assert name != "allreduce_h100_2to6gpu_algo_ncb" or logged == {(2, "RING"), (4, "RING"), (6, "NVLS")}
    for size, q in _by_size(rows).items():
        if "time" in q and "algbw" in q:
            assert size / (q["time"] * 1e-6) / 1e9 == pytest.approx(q["algbw"], rel=0.02)


def _by_size(rows: list[dict]) -> dict:
    by: dict = {}
    for row in rows:
        by.setdefault((row["size_bytes"], row["gpus"], row["selection"], row["source_line"]), {})
        by[(row["size_bytes"], row["gpus"], row["selection"], row["source_line"])][row["quantity"]] = row["value"]
    return {key[0]: q for key, q in by.items()}


@pytest.mark.parametrize("name", ALLREDUCE_DATASETS)
def test_sweeps_are_internally_consistent(name):
    """nccl-tests' own arithmetic: algbw = size / time, busbw = 2 (K - 1) / K algbw (within printing precision)."""
    rows = load_published(name)
    by_size: dict = {}
    for row in rows:
        assert row["collective"] == "allreduce" and row["size_bytes"] > 0
        by_size.setdefault(row["size_bytes"], {})[row["quantity"]] = row["value"]
    k = rows[0]["gpus"]
    assert rows[0]["nodes"] * 8 == k
    for size, q in by_size.items():
        if "time" in q and q.get("algbw", 0) >= 1:
            assert size / (q["time"] * 1e-6) / 1e9 == pytest.approx(q["algbw"], rel=0.02)
        if q.get("algbw", 0) >= 1:
            assert q["busbw"] == pytest.approx(q["algbw"] * 2 * (k - 1) / k, rel=0.02)


@pytest.mark.parametrize("name", WITH_LAYOUT)
def test_decode_and_serving_rows_describe_the_layout(name):
    for row in load_published(name):
        assert row["gpus"] == row["tp"] * row["pp"]
        assert row["nodes"] == -(-row["gpus"] // 8)
        assert (row["value"] is None) == (row["status"] == "OOM")
        if name not in LOAD_DATASETS:
            assert row["batch"] >= 1 and row["input_tokens"] >= 1


@pytest.mark.parametrize("name", LOAD_DATASETS)
def test_serving_rows_say_how_the_load_was_applied(name):
    for row in load_published(name):
        closed, rate = row["concurrency"] is not None, row["request_rate"] is not None
        assert closed != rate, "a run is either closed-loop (concurrency) or open-loop (rate)"
        assert row["statistic"] and row["workload"]
        assert not closed or row["concurrency"] >= 1
        assert not rate or row["request_rate"] > 0
        if row["total_input_tokens"] is not None:
            assert row["num_prompts"] >= 1 and row["total_output_tokens"] >= 1


def test_serving_data_is_under_load_at_several_degrees_and_first_tokens_at_several():
    degrees = {row["tp"] for name in LOAD_DATASETS for row in load_published(name)}
    assert degrees >= {1, 2, 4, 8}
    ttft = {row["tp"] for row in load_published("ttft_lmdeploy_a100") if row["quantity"] == "ttft"}
    assert ttft == {1, 2, 4}


def test_the_stream_file_holds_the_copy_kernel_of_one_a100_40gb():
    rows = load_published("stream_a100_40gb_polaris")
    copy = [r for r in rows if r["note"].startswith("kernel Copy;")]
    assert len(copy) == 1 and copy[0]["printed"] == "1400256.415" and copy[0]["source_line"] == 213
    assert copy[0]["value_si"] == pytest.approx(1.400256415e12, rel=1e-12)


def test_decode_covers_three_models_at_several_degrees():
    combos = {}
    for name in DECODE_DATASETS + BATCH_DATASETS:
        for row in load_published(name):
            combos.setdefault(row["model"].split(" (")[0], set()).add(row["tp"])
    assert sum(len(degrees) >= 3 for degrees in combos.values()) >= 3


def test_the_readme_covers_every_file_and_says_how_to_load():
    readme = (DATA_DIR / "README.md").read_text(encoding="utf-8")
    assert "## How to load" in readme
    for name in DATASETS:
        assert f"{name}.csv" in readme


@pytest.fixture(scope="module")
def recheck():
    spec = importlib.util.spec_from_file_location("recheck", DATA_DIR / "recheck.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_recheck_reads_the_cited_cell(recheck):
    row = {"dataset": "allreduce_h100_8gpu_aws_p5", "quantity": "busbw", "size_bytes": "8388608", "value": "174.16"}
    line = (
        "[1,0]<stdout>:     8388608       2097152     float     sum      -1    84.29   99.52  174.16      0"
        "    83.22  100.80  176.40      0"
    )
    assert recheck.extract(row, line) == ("174.16", [])
    assert recheck.extract(dict(row, quantity="time"), line) == ("84.29", [])
    # The in-place busbw of the same line is not the out-of-place one, and a wrong size is caught.
    assert recheck.extract(dict(row, value="176.40"), line)[0] != "176.40"
    assert recheck.extract(dict(row, size_bytes="16"), line)[1]


def test_recheck_reads_markdown_tables(recheck):
    row = {
        "dataset": "decode_ft_gpt20b_a100",
        "quantity": "request_latency",
        "tp": "4",
        "pp": "1",
        "batch": "1",
        "input_tokens": "20",
        "output_tokens": "8",
        "value": "102",
        "status": "ok",
    }
    line = "|     1      |      20      |       8       |  225  |  147  |  102  |  89  |"
    assert recheck.extract(row, line) == ("102", [])
    assert recheck.extract(dict(row, batch="2"), line)[1] == ["batch 1 != 2"]
    assert recheck.label_bytes("32KiB") == 32768 and recheck.label_bytes("1048_576") == 1048576


def test_recheck_finds_the_column_by_the_tables_header(recheck):
    lines = [
        "### llama2-7b",
        "",
        "| batch | tp  | prompt_tokens | output_tokens | FTL(ave)(s) | FTL(min)(s) |",
        "| ----- | --- | ------------- | ------------- | ----------- | ----------- |",
        "| 1     | 1   | 128           | 128           | 0.022       | 0.021       |",
    ]
    row = {
        "dataset": "ttft_lmdeploy_a100",
        "quantity": "ttft",
        "batch": "1",
        "tp": "1",
        "input_tokens": "128",
        "output_tokens": "128",
        "concurrency": "",
        "source": "x.md",
        "software": "LMDeploy",
        "source_detail": 'row at line 5, column "FTL(min)(s)"',
    }
    assert recheck.extract(row, lines[4], lines, 5) == ("0.021", [])
    assert recheck.extract(dict(row, tp="2"), lines[4], lines, 5)[1] == ["tp 1 != 2"]
    assert recheck.extract(dict(row, source_detail='column "PRS"'), lines[4], lines, 5)[1]


def test_recheck_reads_json_csv_stream_and_logged_nccl_lines(recheck):
    line = '{"request_rate": 4.0, "completed": 1200, "median_itl_ms": 13.841505102813244}'
    row = {
        "dataset": "serving_sglang_h200_datacrunch",
        "source": "a.jsonl",
        "num_prompts": "1200",
        "source_detail": 'JSON line 6, key "median_itl_ms"',
        "quantity": "itl",
    }
    assert recheck.extract(row, line) == ("13.841505102813244", [])
    assert recheck.extract(dict(row, num_prompts="2400"), line)[1]
    argonne = "Nvidia A100 GPU,2,vLLM,meta-llama/Llama-2-7b-hf,128,16,1.40,2917.8"
    row = {
        "dataset": "decode_argonne_vllm_a100",
        "tp": "2",
        "model": "meta-llama/Llama-2-7b-hf",
        "input_tokens": "128",
        "batch": "16",
        "source": "All_results.csv",
        "quantity": "request_latency",
    }
    assert recheck.extract(row, argonne) == ("1.40", [])
    assert recheck.extract(dict(row, dataset="decode_argonne_trtllm_a100"), argonne)[1] == [
        "framework vLLM != TensorRT-LLM"
    ]
    stream = {
        "dataset": "stream_a100_40gb_polaris",
        "note": "kernel Copy; ...",
        "source": "p.md",
        "quantity": "stream_bandwidth",
    }
    assert recheck.extract(stream, "Copy        1400256.415 0.00038") == ("1400256.415", [])
    assert recheck.extract(stream, "Mul         1360437.756 0.00039")[1]
    log = [
        "268435456      67108864     float     sum      -1  NCCL INFO AllReduce: 268435456 Bytes -> Algo RING "
        "proto SIMPLE channel{Lo..Hi}={0..23}",
        "   893.63  300.39  300.39      0",
    ]
    row = {
        "dataset": "allreduce_h100_2to6gpu_algo_ncb",
        "quantity": "algbw",
        "size_bytes": "268435456",
        "algorithm": "RING",
        "protocol": "SIMPLE",
        "algo_source_line": "1",
        "size_source_line": "1",
    }
    assert recheck.extract(row, log[1], log, 2) == ("300.39", [])
    assert recheck.extract(dict(row, algorithm="NVLS"), log[1], log, 2)[1]


# --- Serving splits (issue 24) ------------------------------------------------------------------------------------


def _repository(url: str) -> str:
    return url.removeprefix("https://github.com/").split("/blob/")[0]


@pytest.mark.parametrize("name", SPLIT_DATASETS)
def test_split_rows_use_the_documented_words(name):
    for row in load_published(name):
        assert row["pd"].split(" (")[0] in PD_WORDS, row["pd"]
        assert row["phase"] in PHASE_WORDS and row["per"] in PER_WORDS, (row["phase"], row["per"])
        assert row["attention_dp"].split(" (")[0] in ("yes", "no", "n/a", "not stated"), row["attention_dp"]


@pytest.mark.parametrize("name", SPLIT_DATASETS)
def test_split_layouts_add_up(name):
    for row in load_published(name):
        if row["gpus"] is not None:
            assert row["nodes"] is not None and (row["nodes"] - 1) * 8 < row["gpus"] <= row["nodes"] * 8, row
        if row["prefill_gpus"] is not None and row["decode_gpus"] is not None:
            assert row["prefill_gpus"] + row["decode_gpus"] == row["gpus"]
        for degree in ("tp", "ep", "dp"):
            if row[degree] is not None and row["gpus"] is not None:
                assert row["gpus"] % row[degree] == 0, (degree, row)
        if row["pd"].startswith("colocated"):
            assert not row["prefill_layout"] and not row["decode_layout"]
        if row["pd"].startswith("disaggregated") and name in DISAGG_DATASETS:
            assert row["prefill_layout"] and row["decode_layout"] and row["prefill_gpus"] and row["decode_gpus"]


@pytest.mark.parametrize("name", SPLIT_DATASETS)
def test_relative_figures_say_what_they_compare(name):
    for row in load_published(name):
        if row["quantity"] in ("speedup", "throughput_gain"):
            assert row["compared_with"], row["source_detail"]
        if row["draft_tokens"] is not None or row["quantity"].startswith("acceptance"):
            assert row["draft"], row["source_detail"]


def test_speculative_speed_up_is_given_at_three_batch_sizes_of_one_model_and_gpu():
    groups: dict = {}
    for name in SPECULATIVE_DATASETS:
        for row in load_published(name):
            if row["quantity"] == "speedup":
                key = (row["dataset"], row["model"], row["gpu"], row["draft"], row["input_tokens"])
                groups.setdefault(key, {})[row["batch"]] = row["value"]
    assert max(len(batches) for batches in groups.values()) >= 3
    # MagicDec's claim: on 8 x A100 the speed-up grows with the batch for every configuration measured three times.
    for batches in groups.values():
        if len(batches) >= 3:
            speedups = [batches[b] for b in sorted(batches)]
            assert speedups == sorted(speedups) and speedups[0] > 1


def test_mtp_rows_pair_with_their_baseline():
    rows = [r for r in load_published("spec_mtp_sglang_h200_lmsys") if r["batch"] == 2]
    baseline = [r for r in rows if r["quantity"] == "output_throughput" and not r["compared_with"]]
    assert len(baseline) == 1 and baseline[0]["value"] == 51.0 and baseline[0]["draft"] == "none"
    by = {(r["draft_tokens"], r["quantity"]): r["value"] for r in rows if r["draft_tokens"] is not None}
    assert by[(3, "acceptance_length")] == 2.18 and by[(4, "acceptance_length")] == 2.44
    assert by[(4, "output_throughput")] > by[(3, "output_throughput")] > baseline[0]["value"]


def test_expert_parallel_rows_cover_the_books_layouts():
    rows = [r for name in EXPERT_DATASETS for r in load_published(name)]
    adp_ep8_h200 = [r for r in rows if r["gpu"] == "H200" and r["ep"] == 8 and r["attention_dp"].startswith("yes")]
    assert adp_ep8_h200 and all(r["precision"].startswith("FP8") for r in adp_ep8_h200)
    kernels = [r for r in load_published("ep_deepep_kernels") if r["quantity"] == "kernel_time"]
    assert {r["phase"] for r in kernels} == {"dispatch", "combine"} and {r["ep"] for r in kernels} >= {8, 16, 32, 64}
    lmsys = [r for r in load_published("ep_pd_sglang_h100_lmsys") if r["unit"] == "k tokens/s"]
    assert lmsys and all(r["value_si"] == pytest.approx(r["value"] * 1000) for r in lmsys)


def test_each_split_has_two_sources_or_more():
    disagg = {
        _repository(r["source"])
        for name in SPLIT_DATASETS
        for r in load_published(name)
        if r["pd"].startswith("disaggregated")
    }
    speculative = {_repository(r["source"]) for name in SPLIT_DATASETS for r in load_published(name) if r["draft"]}
    expert = {_repository(r["source"]) for name in EXPERT_DATASETS for r in load_published(name) if r["ep"]}
    assert len(disagg) >= 3 and len(speculative) >= 2 and len(expert) >= 3


def test_recheck_reads_split_markdown_tables(recheck):
    lines = [
        "| Prompt Length | Mean TTFT (ms) | KV Size |",
        "|---|---|---|",
        "| 1024 tokens | 67.29 | 146 MB  |",
        "| 16384 tokens| 387.52 | 2.25 GB |",
    ]
    row = {
        "dataset": "disagg_mooncake_h800_h20",
        "input_tokens": "1024",
        "value": "67.29",
        "source_detail": 'row at line 3, column "Mean TTFT (ms)"',
    }
    assert recheck.extract(row, lines[2], lines, 3) == ("67.29", [])
    assert recheck.extract(dict(row, input_tokens="16384"), lines[2], lines, 3)[1]
    assert recheck.extract(dict(row, input_tokens="16384"), lines[3], lines, 4) == ("387.52", [])
    dynamo = [
        "| Metric | Standard vLLM (Monolithic 8-GPU) | Dynamo Disaggregated (Split 4+4 GPUs) | Winner |",
        "| :--- | :--- | :--- | :--- |",
        "| **Total Duration** | 12 min 57s (777s) | 40 min 49s (2449s) | x |",
    ]
    row = {
        "dataset": "disagg_dynamo_vllm_h200_gke",
        "quantity": "run_duration",
        "pd": "disaggregated",
        "source_detail": 'row at line 3, column "Dynamo Disaggregated (Split 4+4 GPUs)"',
    }
    assert recheck.extract(row, dynamo[2], dynamo, 3) == ("2449", [])
    assert recheck.extract(dict(row, pd="colocated"), dynamo[2], dynamo, 3)[1]
    assert recheck.extract(dict(row, quantity="ttft"), dynamo[2], dynamo, 3)[1]


def test_recheck_reads_magicdec_html_trtllm_output_and_deepep_cells(recheck):
    html = [
        "<tr>",
        "<td>Llama3.1-8B</td>",
        "<td>Selfspec</td>",
        "<td>32000</td>",
        "<td>64</td>",
        "<td>3</td>",
        "<td>1.38</td>",
        "</tr>",
    ]
    row = {
        "dataset": "spec_magicdec_a100_h100",
        "quantity": "speedup",
        "model": "Llama-3.1-8B (...)",
        "draft": "self-speculation: ...",
        "input_tokens": "32000",
        "batch": "64",
        "draft_tokens": "3",
    }
    assert recheck.extract(row, html[6], html, 7) == ("1.38", [])
    assert recheck.extract(dict(row, batch="128"), html[6], html, 7)[1] == ["batch 64 != 128"]
    assert recheck.extract(dict(row, draft="draft model TinyLlama-1.1B"), html[6], html, 7)[1]
    out = [
        "### H200 max-throughput",
        "trtllm-bench -m deepseek-ai/DeepSeek-R1 \\",
        "    --tp 8 \\",
        "    --ep 8 \\",
        "Total Output Throughput (tokens/sec):             11489.2671",
    ]
    row = {
        "dataset": "ep_trtllm_deepseek_r1_h200_b200",
        "quantity": "output_throughput",
        "per": "total",
        "gpu": "H200",
        "ep": "8",
    }
    assert recheck.extract(row, out[4], out, 5) == ("11489.2671", [])
    assert recheck.extract(dict(row, per="gpu"), out[4], out, 5)[1]
    assert recheck.extract(dict(row, ep="4"), out[4], out, 5)[1]
    assert recheck.extract(dict(row, gpu="B200"), out[4], out, 5)[1]
    deepep = [
        "| Dispatch #EP | Latency | RDMA bandwidth | Combine #EP | Latency | RDMA bandwidth |",
        "|:------------:|:-------:|:--------------:|:-----------:|:-------:|:--------------:|",
        "|      32      | 155 us  |    48 GB/s     |     32      | 273 us  |    53 GB/s     |",
    ]
    row = {"dataset": "ep_deepep_kernels", "ep": "32", "source_detail": 'row at line 3, cell 5 ("273 us")'}
    assert recheck.extract(row, deepep[2], deepep, 3) == ("273", [])
    assert recheck.extract(dict(row, ep="64"), deepep[2], deepep, 3)[1] == ["EP 32 != 64"]
    sentence = {"dataset": "ep_pd_deepseek_h800", "value": "73.7", "source_detail": "bullet at line 76"}
    line = "- Each H800 node delivers an average throughput of ~73.7k tokens/s input (including cache hits)"
    assert recheck.extract(sentence, line, [line], 1)[0] == "73.7"
    assert recheck.extract(dict(sentence, value="14.8"), line, [line], 1)[0] != "14.8"


def test_load_published_types_and_refuses_unknown_names():
    rows = load_published("decode_gptfast_a100")
    oom = [r for r in rows if r["status"] == "OOM"]
    assert oom and all(r["value"] is None and r["value_si"] is None for r in oom)
    assert all(isinstance(r["tp"], int) and r["output_tokens"] is None for r in rows)
    offline = [r for r in load_published("serving_sglang_vllm060") if r["request_rate"] == math.inf]
    assert offline and all(r["concurrency"] is None for r in offline)
    rows[0]["value"] = -1.0  # a copy: the cached rows stay as printed
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
