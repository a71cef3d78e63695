"""data/published: every CSV loads, has its schema, the right unit for each quantity, and a source on every row."""

from __future__ import annotations

import csv
import importlib.util
import re

import pytest

from lib.validation.published import (ALLREDUCE_DATASETS, COLLECTIVE_COLUMNS, DATA_DIR, DATASETS, DECODE_COLUMNS,
                                      DECODE_DATASETS, QUANTITY_UNITS, load_published)

PINNED = re.compile(r"^https://github\.com/[^/]+/[^/]+/blob/[0-9a-f]{40}/\S+$")
FILES = sorted(DATA_DIR.glob("*.csv"))


def raw_rows(name: str) -> tuple[list[str], list[dict]]:
    with (DATA_DIR / f"{name}.csv").open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames), list(reader)


def schema(name: str) -> tuple:
    return DECODE_COLUMNS if name in DECODE_DATASETS else COLLECTIVE_COLUMNS


def test_the_files_are_the_datasets():
    assert sorted(p.stem for p in FILES) == sorted(DATASETS)
    assert len(DATASETS) >= 3


@pytest.mark.parametrize("name", DATASETS)
def test_header_is_the_schema(name):
    header, rows = raw_rows(name)
    assert tuple(header) == schema(name)
    assert rows, f"{name} is empty"


@pytest.mark.parametrize("name", DATASETS)
def test_every_row_has_a_source_a_unit_and_a_value(name):
    _, rows = raw_rows(name)
    required = [c for c in schema(name) if c not in ("note", "source_line", "value", "output_tokens", "size_printed")]
    for number, row in enumerate(rows, start=2):
        where = f"{name}.csv line {number}"
        for column in required:
            assert row[column].strip(), f"{where}: {column} is empty"
        assert row["dataset"] == name, where
        assert PINNED.match(row["source"]), f"{where}: source is not a GitHub URL pinned to a commit"
        assert row["quantity"] in QUANTITY_UNITS, f"{where}: unknown quantity {row['quantity']!r}"
        assert row["unit"] == QUANTITY_UNITS[row["quantity"]], f"{where}: {row['quantity']} must be in " \
                                                              f"{QUANTITY_UNITS[row['quantity']]}"
        if row.get("status") == "OOM":
            assert row["value"] == "", where
        else:
            assert float(row["value"]) >= 0, where
        assert row["source_line"] == "" or int(row["source_line"]) > 0, where


@pytest.mark.parametrize("name", DATASETS)
def test_source_lines_are_given_except_for_the_oci_log(name):
    _, rows = raw_rows(name)
    blank = [row for row in rows if row["source_line"] == ""]
    if name == "allreduce_a100_16gpu_oci":
        assert all("the log row whose size column reads" in row["source_detail"] for row in blank)
    else:
        assert not blank


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


@pytest.mark.parametrize("name", DECODE_DATASETS)
def test_decode_rows_describe_the_layout(name):
    for row in load_published(name):
        assert row["gpus"] == row["tp"] * row["pp"]
        assert row["nodes"] == -(-row["gpus"] // 8)
        assert row["batch"] >= 1 and row["input_tokens"] >= 1
        assert (row["value"] is None) == (row["status"] == "OOM")


def test_decode_covers_three_models_at_several_degrees():
    combos = {}
    for name in DECODE_DATASETS:
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
