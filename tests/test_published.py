"""data/published: every CSV loads, has its schema, the right unit for each quantity, and a source on every row."""

from __future__ import annotations

import csv
import importlib.util
import re

import pytest

from lib.validation.published import DATA_DIR, load_published
from lib.validation.schemas import (ALGORITHM_DATASETS, ALLREDUCE_DATASETS, BATCH_DATASETS, COLLECTIVE_COLUMNS,
                                    COLLECTIVE_DATASETS, DATASETS, DECODE_COLUMNS, DECODE_DATASETS, DEVICE_COLUMNS,
                                    LOAD_DATASETS, NOT_RECHECKABLE, QUANTITY_UNITS, SERVING_COLUMNS, TTFT_DATASETS,
                                    schema)

PINNED = re.compile(r"^https://github\.com/[^/]+/[^/]+/blob/[0-9a-f]{40}/\S+$")
PULL = re.compile(r"^https://github\.com/[^/]+/[^/]+/pull/\d+$")
FILES = sorted(DATA_DIR.glob("*.csv"))
#: Columns that may be blank, by schema: what a source does not print, and the log-only NCCL columns.
OPTIONAL = {COLLECTIVE_COLUMNS: ("note", "source_line", "value", "size_printed", "nchannels", "algo_source_line",
                                 "size_source_line"),
            DECODE_COLUMNS: ("note", "source_line", "value", "output_tokens"),
            SERVING_COLUMNS: ("note", "source_line", "value", "batch", "input_tokens", "output_tokens",
                              "concurrency", "request_rate", "num_prompts", "total_input_tokens",
                              "total_output_tokens"),
            DEVICE_COLUMNS: ("note",)}
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
        assert row["unit"] in QUANTITY_UNITS[row["quantity"]], f"{where}: {row['quantity']} must be in one of " \
                                                              f"{QUANTITY_UNITS[row['quantity']]}"
        if row.get("status") == "OOM":
            assert row["value"] == "", where
        else:
            assert float(row["value"]) >= 0, where
        assert row["source_line"] == "" or int(row["source_line"]) > 0, where


@pytest.mark.parametrize("name", DATASETS)
def test_every_row_has_its_line_except_a_pull_request(name):
    _, rows = raw_rows(name)
    blank = [row for row in rows if row["source_line"] == ""]
    assert len(blank) == (len(rows) if name in NOT_RECHECKABLE else 0)


def test_oci_rows_have_the_lines_of_their_log_rows():
    rows = load_published("allreduce_a100_16gpu_oci")
    lines = {row["size_bytes"]: row["source_line"] for row in rows}
    sizes = sorted(lines)
    # One log row per size, contiguous from 64 B at line 572 to 1 GiB at line 596.
    assert [lines[n] for n in sizes] == list(range(572, 597)) and sizes[0] == 64 and sizes[-1] == 2**30


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
        if row["algo_source_line"] is not None:         # NCCL's own TUNING line was printed
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
    line = ("[1,0]<stdout>:     8388608       2097152     float     sum      -1    84.29   99.52  174.16      0"
            "    83.22  100.80  176.40      0")
    assert recheck.extract(row, line) == ("174.16", [])
    assert recheck.extract(dict(row, quantity="time"), line) == ("84.29", [])
    # The in-place busbw of the same line is not the out-of-place one, and a wrong size is caught.
    assert recheck.extract(dict(row, value="176.40"), line)[0] != "176.40"
    assert recheck.extract(dict(row, size_bytes="16"), line)[1]


def test_recheck_reads_markdown_tables(recheck):
    row = {"dataset": "decode_ft_gpt20b_a100", "quantity": "request_latency", "tp": "4", "pp": "1",
           "batch": "1", "input_tokens": "20", "output_tokens": "8", "value": "102", "status": "ok"}
    line = "|     1      |      20      |       8       |  225  |  147  |  102  |  89  |"
    assert recheck.extract(row, line) == ("102", [])
    assert recheck.extract(dict(row, batch="2"), line)[1] == ["batch 1 != 2"]
    assert recheck.label_bytes("32KiB") == 32768 and recheck.label_bytes("1048_576") == 1048576


def test_recheck_finds_the_column_by_the_tables_header(recheck):
    lines = ["### llama2-7b", "", "| batch | tp  | prompt_tokens | output_tokens | FTL(ave)(s) | FTL(min)(s) |",
             "| ----- | --- | ------------- | ------------- | ----------- | ----------- |",
             "| 1     | 1   | 128           | 128           | 0.022       | 0.021       |"]
    row = {"dataset": "ttft_lmdeploy_a100", "quantity": "ttft", "batch": "1", "tp": "1", "input_tokens": "128",
           "output_tokens": "128", "concurrency": "", "source": "x.md", "software": "LMDeploy",
           "source_detail": 'row at line 5, column "FTL(min)(s)"'}
    assert recheck.extract(row, lines[4], lines, 5) == ("0.021", [])
    assert recheck.extract(dict(row, tp="2"), lines[4], lines, 5)[1] == ["tp 1 != 2"]
    assert recheck.extract(dict(row, source_detail='column "PRS"'), lines[4], lines, 5)[1]


def test_recheck_reads_json_csv_stream_and_logged_nccl_lines(recheck):
    line = '{"request_rate": 4.0, "completed": 1200, "median_itl_ms": 13.841505102813244}'
    row = {"dataset": "serving_sglang_h200_datacrunch", "source": "a.jsonl", "num_prompts": "1200",
           "source_detail": 'JSON line 6, key "median_itl_ms"', "quantity": "itl"}
    assert recheck.extract(row, line) == ("13.841505102813244", [])
    assert recheck.extract(dict(row, num_prompts="2400"), line)[1]
    argonne = 'Nvidia A100 GPU,2,vLLM,meta-llama/Llama-2-7b-hf,128,16,1.40,2917.8'
    row = {"dataset": "decode_argonne_vllm_a100", "tp": "2", "model": "meta-llama/Llama-2-7b-hf",
           "input_tokens": "128", "batch": "16", "source": "All_results.csv", "quantity": "request_latency"}
    assert recheck.extract(row, argonne) == ("1.40", [])
    assert recheck.extract(dict(row, dataset="decode_argonne_trtllm_a100"), argonne)[1] == [
        "framework vLLM != TensorRT-LLM"]
    stream = {"dataset": "stream_a100_40gb_polaris", "note": "kernel Copy; ...", "source": "p.md",
              "quantity": "stream_bandwidth"}
    assert recheck.extract(stream, "Copy        1400256.415 0.00038") == ("1400256.415", [])
    assert recheck.extract(stream, "Mul         1360437.756 0.00039")[1]
    log = ["268435456      67108864     float     sum      -1  NCCL INFO AllReduce: 268435456 Bytes -> Algo RING "
           "proto SIMPLE channel{Lo..Hi}={0..23}", "   893.63  300.39  300.39      0"]
    row = {"dataset": "allreduce_h100_2to6gpu_algo_ncb", "quantity": "algbw", "size_bytes": "268435456",
           "algorithm": "RING", "protocol": "SIMPLE", "algo_source_line": "1", "size_source_line": "1"}
    assert recheck.extract(row, log[1], log, 2) == ("300.39", [])
    assert recheck.extract(dict(row, algorithm="NVLS"), log[1], log, 2)[1]
