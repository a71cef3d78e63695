"""Re-check every number in data/published/*.csv against its source, at the cited commit.

Each row names its source file as a GitHub URL pinned to a commit and, where the
file has stable line numbers, the line the number is printed on. This script
reads that line, takes the cell the row claims to copy (the out-of-place
``time``/``algbw``/``busbw`` of an nccl-tests log, a table column, a number in
a sentence) and compares it, as text, with the row's ``value``. It also checks
that the line belongs to the row: the message size, batch, lengths or GPU count
printed on it must be the row's.

It needs local copies of the source repositories (the book ships none of the
third-party files). Clone them, then point the script at them::

    git clone https://github.com/stas00/ml-engineering
    git clone https://github.com/aws-samples/awsome-distributed-training
    git clone https://github.com/NVIDIA/FasterTransformer
    git clone https://github.com/pytorch-labs/gpt-fast
    git clone https://github.com/lessizzmore/create-a3mega-ztan-fork
    git clone https://github.com/argonne-lcf/LLM-Inference-Bench
    git clone https://github.com/argonne-lcf/ALCFBeginnersGuide
    git clone https://github.com/InternLM/lmdeploy
    git clone https://github.com/sgl-project/sglang              # large
    git clone https://github.com/datacrunch-research/h200-benchmarks
    git clone https://github.com/waynehacking8/nccl-collectives-bench
    python data/published/recheck.py --clone stas00/ml-engineering=ml-engineering \\
        --clone NVIDIA/FasterTransformer=FasterTransformer ...

Rows whose repository was not given are reported as skipped, not as passed.
Rows whose source is a pull request's description rather than a file at a
commit (``allreduce_engine_h100_vllm``) cannot be re-read; they are counted
as not re-checkable.
``--file OWNER/REPO:PATH=LOCAL`` uses a local copy of one file instead of a clone
(it must be the file at the cited commit). Exit status 1 if any row fails.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
_URL = re.compile(r"https://github\.com/([^/]+/[^/]+)/blob/([0-9a-f]{40})/(.+)$")
_PULL = re.compile(r"^https://github\.com/[^/]+/[^/]+/pull/\d+$")
_NCCL = re.compile(r"^\s*(?:\d+:|\[\d+,\d+\]<stdout>:)?\s*(\d+)\s+\d+\s+\w+\s+\w+\s+-?\d+\s+(\S+)\s+(\S+)\s+(\S+)")
_FOUR = re.compile(r"^\s*([\d_]+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$")
_UNITS = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


def split_source(url: str) -> tuple[str, str, str]:
    """``(owner/repo, commit, path)`` of a pinned GitHub blob URL."""
    match = _URL.match(url)
    if not match:
        raise ValueError(f"source must be a GitHub blob URL pinned to a commit, got {url!r}")
    return match.group(1), match.group(2), match.group(3)


def label_bytes(label: str) -> int:
    """``"32KiB"`` -> 32768; ``"8"`` -> 8."""
    for unit, factor in _UNITS.items():
        if label.endswith(unit):
            return int(label[: -len(unit)]) * factor
    return int(label.replace("_", ""))


def cells(line: str) -> list[str]:
    """The cells of a markdown table row."""
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _number(text: str) -> str:
    return text[:-4] if text.endswith("GBps") else text


#: Markdown column names that identify a row, and the CSV columns they must equal (the first non-empty one).
_KEYS = {"batch": ("batch", "concurrency"), "tp": ("tp",), "prompt_tokens": ("input_tokens",),
         "output_tokens": ("output_tokens",), "num_prompts": ("num_prompts",), "num_promts": ("num_prompts",),
         "Num prompts": ("num_prompts",), "Num Prompts": ("num_prompts",), "RPS": ("request_rate",),
         "Tensor Parallel": ("tp",)}


def table_header(lines: list[str], number: int) -> list[str]:
    """The header cells of the markdown table that line ``number`` belongs to (the row above its ``|---`` line)."""
    for i in range(number - 2, 0, -1):
        if re.match(r"^\s*\|[\s:|-]+\|\s*$", lines[i]) and "-" in lines[i]:
            return cells(lines[i - 1])
    return []


def _same(printed: str, wanted: str) -> bool:
    try:
        return float(printed) == float(wanted)
    except ValueError:
        return printed == wanted


def markdown_cell(row: dict, lines: list[str], number: int) -> tuple[str, list[str]]:
    """The cell of column ``source_detail: column "..."`` on line ``number``, and mismatches of the row's keys."""
    column = re.search(r'column "([^"]+)"', row["source_detail"]).group(1)
    header, c = table_header(lines, number), [x.strip("*") for x in cells(lines[number - 1])]
    if column not in header or len(c) != len(header):
        return "", [f"no column {column!r} in the table of line {number}"]
    problems = []
    for name, keys in _KEYS.items():
        wanted = next((row[k] for k in keys if row.get(k)), None)
        if name in header and wanted is not None and not _same(c[header.index(name)], wanted):
            problems.append(f"{name} {c[header.index(name)]} != {wanted}")
    if "Engine" in header and not row["software"].startswith(c[header.index("Engine")]):
        problems.append(f"engine {c[header.index('Engine')]} is not the row's software")
    return c[header.index(column)], problems


def _argonne(row: dict, line: str) -> tuple[str, list[str]]:
    c = next(csv.reader([line]))
    framework = "vLLM" if "vllm" in row["dataset"] else "TensorRT-LLM"
    problems = [f"{what} {got} != {want}" for what, got, want in
                (("GPUs", c[1], row["tp"]), ("framework", c[2], framework), ("model", c[3], row["model"]),
                 ("length", c[4], row["input_tokens"]), ("batch", c[5], row["batch"])) if got != want]
    return c[-2], problems


def _logged(row: dict, line: str, lines: list[str]) -> tuple[str, list[str]]:
    """nccl-collectives-bench: the out-of-place triple on ``source_line``, the size and NCCL's choice above."""
    problems = []
    if row["algo_source_line"]:
        size_line = lines[int(row["size_source_line"]) - 1]
        if size_line.split()[0] != row["size_bytes"]:
            problems.append(f"size {size_line.split()[0]} != {row['size_bytes']}")
        choice = f"AllReduce: {row['size_bytes']} Bytes -> Algo {row['algorithm']} proto {row['protocol']}"
        if choice not in lines[int(row["algo_source_line"]) - 1]:
            problems.append(f"line {row['algo_source_line']} does not log {choice!r}")
        return line.split()[{"time": 0, "algbw": 1, "busbw": 2}[row["quantity"]]], problems
    t = line.split()
    if t[0] != row["size_bytes"]:
        problems.append(f"size {t[0]} != {row['size_bytes']}")
    return t[5 + {"time": 0, "algbw": 1, "busbw": 2}[row["quantity"]]], problems


def extract(row: dict, line: str, lines: list[str] | None = None, number: int = 0) -> tuple[str, list[str]]:
    """The text the row claims to copy from ``line``, and a list of mismatches of the row's keys.

    ``lines`` (the whole file) and ``number`` (the line's number) are needed
    for markdown tables, whose header sits above, and for logs that print a
    size and NCCL's choice on other lines.
    """
    problems = []
    ds, q = row["dataset"], row["quantity"]
    if ds.endswith("_ncb"):
        return _logged(row, line, lines or [])
    if ds.startswith("decode_argonne"):
        return _argonne(row, line)
    source = row.get("source", "")
    if ds.startswith(("ttft_", "serving_")) and not source.endswith(".jsonl"):
        return markdown_cell(row, lines or [], number)
    if source.endswith(".jsonl"):
        key = re.search(r'key "([^"]+)"', row["source_detail"]).group(1)
        m = re.search(rf'"{re.escape(key)}":\s*([^,}}]+)', line)
        completed = json.loads(line).get("completed")
        if row["num_prompts"] and str(completed) != row["num_prompts"]:
            problems.append(f"completed {completed} != {row['num_prompts']}")
        return (m.group(1).strip() if m else ""), problems
    if ds.startswith("stream_"):
        t = line.split()
        kernel = row["note"].split(";")[0].removeprefix("kernel ")
        return (t[1] if t and t[0] == kernel else ""), ([] if t and t[0] == kernel else [f"not the {kernel} row"])
    if ds.startswith("allreduce_") and "mle" not in ds:            # nccl-tests logs
        m = _NCCL.match(line)
        if not m:
            return "", ["not an nccl-tests log row"]
        if m.group(1) != row["size_bytes"]:
            problems.append(f"size {m.group(1)} != {row['size_bytes']}")
        return {"time": m.group(2), "algbw": m.group(3), "busbw": m.group(4)}[q], problems
    if ds == "allreduce_a100_8gpu_mle":                             # author-reformatted nccl-tests
        m = _FOUR.match(line)
        if not m:
            return "", ["not a four-column row"]
        if m.group(1) != row["size_printed"] or label_bytes(m.group(1)) != int(row["size_bytes"]):
            problems.append(f"size {m.group(1)} != {row['size_printed']}")
        return {"time": m.group(2), "algbw": m.group(3), "busbw": m.group(4)}[q], problems
    if ds in ("allreduce_h200_8gpu_mle", "allreduce_b200_8gpu_mle", "allreduce_b200_32gpu_mle"):
        c = cells(line)
        if c[0] != row["size_printed"] or label_bytes(c[0]) != int(row["size_bytes"]):
            problems.append(f"payload {c[0]} != {row['size_printed']}")
        if ds == "allreduce_h200_8gpu_mle":
            return _number(c[1 if q == "busbw" else 2]), problems
        return _number(c[1 if row["nodes"] == "1" else 2]), problems
    if ds == "nvls_vs_ring":
        c = cells(line)
        if line.lstrip().startswith("|") and c[0].isdigit():          # GPU-count tables
            if c[0] != row["gpus"]:
                problems.append(f"GPUs {c[0]} != {row['gpus']}")
            default = row["selection"] == "NCCL default"
            if default and c[1] != row["algorithm"]:
                problems.append(f"algo {c[1]} != {row['algorithm']}")
            return _number(c[2 if default else 3]), problems
        if line.lstrip().startswith("|"):                             # collective table
            if c[1] != row["algorithm"]:
                problems.append(f"algo {c[1]} != {row['algorithm']}")
            return _number(c[2]), problems
        found = re.findall(r"\d+\.\d+", line)                              # a sentence
        return (row["value"] if row["value"] in found else ",".join(found)), problems
    if ds.startswith("decode_ft_"):
        c = cells(line)
        for key, cell in zip(("batch", "input_tokens", "output_tokens"), c[:3]):
            if cell != row[key]:
                problems.append(f"{key} {cell} != {row[key]}")
        column = ({"1": 3, "2": 4, "4": 5, "8": 6}[row["tp"]] if ds == "decode_ft_gpt20b_a100"
                  else {("16", "1"): 3, ("32", "1"): 4, ("8", "3"): 5}[(row["tp"], row["pp"])])
        return c[column], problems
    if ds == "decode_gptfast_a100":
        c = cells(line)
        if row["model"].startswith("Mixtral"):
            wanted = "int8" if row["precision"].startswith("int8") else "bfloat16"
            if wanted not in c[0]:
                problems.append(f"row label {c[0]!r} is not the {wanted} row")
            return c[{"1": 1, "2": 2, "4": 3, "8": 4}[row["tp"]]], problems
        if c[1] != row["tp"]:
            problems.append(f"GPUs {c[1]} != {row['tp']}")
        return c[2 if q == "decode_rate" else 3], problems
    return "", [f"no rule for dataset {ds!r}"]


def expected(row: dict) -> str:
    """What the source should print for this row: the value, or ``OOM``."""
    return "OOM" if row.get("status") == "OOM" else row["value"]


def find_line(row: dict, lines: list[str]) -> int | None:
    """Line number of the row: ``source_line``, or (when blank) the nccl-tests row with its size."""
    if row["source_line"]:
        return int(row["source_line"])
    for number, line in enumerate(lines, start=1):
        m = _NCCL.match(line)
        if m and m.group(1) == row["size_bytes"]:
            return number
    return None


def read_source(repo: str, commit: str, path: str, clones: dict, files: dict) -> list[str] | None:
    if f"{repo}:{path}" in files:
        return Path(files[f"{repo}:{path}"]).read_text(encoding="utf-8").split("\n")
    if repo not in clones:
        return None
    text = subprocess.run(["git", "-C", clones[repo], "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout
    return text.split("\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clone", action="append", default=[], metavar="OWNER/REPO=DIR")
    parser.add_argument("--file", action="append", default=[], metavar="OWNER/REPO:PATH=FILE")
    args = parser.parse_args(argv)
    clones = dict(item.split("=", 1) for item in args.clone)
    files = dict(item.split("=", 1) for item in args.file)
    cache: dict = {}
    passed = failed = skipped = unreadable = 0
    for table in sorted(HERE.glob("*.csv")):
        for row in csv.DictReader(table.open(encoding="utf-8")):
            if _PULL.match(row["source"]):
                unreadable += 1
                continue
            key = split_source(row["source"])
            if key not in cache:
                cache[key] = read_source(*key, clones, files)
            lines = cache[key]
            if lines is None:
                skipped += 1
                continue
            number = find_line(row, lines)
            got, problems = extract(row, lines[number - 1], lines, number) if number else ("", ["row not found"])
            if got != expected(row):
                problems.append(f"source prints {got!r}, CSV has {expected(row)!r}")
            if problems:
                failed += 1
                print(f"FAIL {table.name} line {number}: {row['quantity']} {'; '.join(problems)}")
            else:
                passed += 1
    print(f"{passed} rows match their source, {failed} do not, {skipped} skipped (source not given), "
          f"{unreadable} not re-checkable (a pull request's description)")
    return 1 if failed else 0


# --- Serving splits (issue 24): disaggregated prefill/decode, speculative decoding, expert parallelism -------------
#
# The repositories: kvcache-ai/Mooncake, ankdeshm/dynamo_disaag_serving_gke, Infini-AI-Lab/MagicDec,
# deepseek-ai/open-infra-index, deepseek-ai/DeepEP (clone them), and lm-sys/lm-sys.github.io and NVIDIA/TensorRT-LLM
# (too large to clone here: give --file copies of the cited files at the cited commits).

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def _plain(cell: str) -> str:
    """A table cell's figure: bold and thousands separators dropped, the first number (or the one in brackets)."""
    cell = cell.replace("*", "").replace(",", "")
    if "(" in cell and re.match(r"^[\d.]+\w*\)", cell.split("(", 1)[1]):     # "12 min 57s (777s)" -> 777
        cell = cell.split("(", 1)[1]
    match = _NUMBER.search(cell)
    return match.group(0) if match else ""


def _in_sentence(row: dict, line: str) -> tuple[str, list[str]]:
    """A figure printed in running text: the row's value must be one of the numbers on the line."""
    found = [n.replace(",", "") for n in _NUMBER.findall(line)]
    return (row["value"] if row["value"] in found else ",".join(found)), []


def _column(row: dict, lines: list[str], number: int) -> tuple[str, list[str], list[str]]:
    """The cell of ``column "..."`` on line ``number``, the row's cells and the header's."""
    column = re.search(r'column "([^"]+)"', row["source_detail"]).group(1)
    header, c = table_header(lines, number), cells(lines[number - 1])
    if column not in header or len(c) != len(header):
        return "", c, header
    return c[header.index(column)], c, header


def _split_markdown(row: dict, line: str, lines: list[str], number: int) -> tuple[str, list[str]]:
    """Markdown tables of the split files, with the cells that place the row checked per source."""
    ds, problems = row["dataset"], []
    if "cell " in row["source_detail"] and "column" not in row["source_detail"]:          # DeepEP: by position
        k = int(re.search(r"cell (\d+)", row["source_detail"]).group(1))
        c = cells(line)
        if ds == "ep_deepep_kernels":
            if "Topo" in table_header(lines, number):
                m = re.match(r"EP (\d+)(?: x (\d+))?", c[2])
                ep = int(m.group(1)) * int(m.group(2) or 1) if m else 0
            else:
                ep = int(c[1] if c[0] in ("Intranode", "Internode") else c[0])
            if str(ep) != row["ep"]:
                problems.append(f"EP {ep} != {row['ep']}")
        return (_plain(c[k - 1]) if len(c) >= k else ""), problems
    cell, c, header = _column(row, lines, number)
    if not cell:
        return "", [f"no column in the table of line {number}"]
    if ds == "disagg_mooncake_h800_h20" and _plain(c[0]) != row["input_tokens"]:
        problems.append(f"prompt length {c[0]} != {row['input_tokens']}")
    if ds == "disagg_dynamo_vllm_h200_gke":
        label = c[0].replace("*", "").split(" (")[0]
        wanted = {"Request Throughput": "request_throughput", "Token Throughput": "total_throughput", "Mean TTFT": "ttft",
                  "P99 TPOT": "tpot", "Total Duration": "run_duration"}.get(label)
        if wanted != row["quantity"]:
            problems.append(f"row {label!r} is not {row['quantity']}")
        pd = {"Standard": "colocated", "Dynamo": "disaggregated"}.get(cell_name(row).split()[0], "?")
        if pd != row["pd"]:
            problems.append(f"column is {pd}, row is {row['pd']}")
    if ds == "spec_mtp_sglang_h200_lmsys":
        gamma = re.search(r"(\d+)-token", c[1])
        if (gamma.group(1) if gamma else "") != row["draft_tokens"]:
            problems.append(f"MTP cell {c[1]!r} does not match draft_tokens {row['draft_tokens']!r}")
    if ds == "ep_pd_sglang_h100_lmsys":
        col = header.index(cell_name(row))
        above = {cells(lines[i])[0]: cells(lines[i])[col] for i in range(number - 5, number - 1) if lines[i].startswith("| ")}
        checks = (("Batch Size", row["batch"] or row["batch_tokens"]), ("Input Length", row["input_tokens"] or "N/A"),
                  ("KV Cache Length", row["input_tokens"]), ("Number of Nodes", row["nodes"]))
        for name, wanted_value in checks:
            if name in above and _plain(above[name]) != wanted_value.replace(",", "") and above[name] != wanted_value:
                problems.append(f"{name} {above[name]} != {wanted_value}")
    return _plain(cell), problems


def cell_name(row: dict) -> str:
    """The ``column "..."`` a row names in ``source_detail``."""
    return re.search(r'column "([^"]+)"', row["source_detail"]).group(1)


def _split_html(row: dict, line: str, lines: list[str], number: int) -> tuple[str, list[str]]:
    """MagicDec's HTML tables: the <td> on the line, and the cells of its <tr> that place it."""
    value = re.search(r"<td>(.*?)</td>", line)
    problems = []
    if row["quantity"] == "speedup":
        tds = [re.search(r"<td>(.*?)</td>", lines[i]).group(1) for i in range(number - 6, number - 1)]
        target, draft, prefill, batch, spec = tds
        model = {"Llama3.1-8B": "Llama-3.1-8B", "Llama2-7B": "Llama-2-7B"}.get(target, target)
        drafter = {"Selfspec": "self-speculation", "Tinyllama1.1B": "draft model TinyLlama-1.1B"}.get(draft, draft)
        for what, got, want in (("target", row["model"].startswith(model), True), ("draft", row["draft"].startswith(drafter), True),
                                ("prefill", prefill, row["input_tokens"]), ("batch", batch, row["batch"]),
                                ("spec len", spec, row["draft_tokens"])):
            if got != want:
                problems.append(f"{what} {got} != {want}")
    else:
        first = next(i for i in range(number - 1, 0, -1) if "<td>Acceptance Rate</td>" in lines[i - 1])
        head = next(i for i in range(first, 0, -1) if "<th>Sequence Length</th>" in lines[i - 1])
        length = re.search(r"<th>(\d+)</th>", lines[head + number - first - 1])
        if not length or length.group(1) != row["input_tokens"]:
            problems.append(f"column is not sequence length {row['input_tokens']}")
    return (value.group(1) if value else ""), problems


#: trtllm-bench's labels, and the quantity and normalisation of the row that copies each.
_TRTLLM_LABELS = {"Request Throughput (req/sec)": ("request_throughput", "total"),
                  "Total Output Throughput (tokens/sec)": ("output_throughput", "total"),
                  "Per User Output Throughput (tokens/sec/user)": ("output_throughput", "user"),
                  "Per User Output Throughput [w/ ctx] (tps/user)": ("output_throughput", "user"),
                  "Per GPU Output Throughput (tokens/sec/gpu)": ("output_throughput", "gpu"),
                  "Per GPU Output Throughput (tps/gpu)": ("output_throughput", "gpu"),
                  "Total Token Throughput (tokens/sec)": ("total_throughput", "total"),
                  "Total Latency (ms)": ("run_duration", "run"), "Average request latency (ms)": ("request_latency", "request")}


def _split_trtllm(row: dict, line: str, lines: list[str], number: int) -> tuple[str, list[str]]:
    """trtllm-bench's PERFORMANCE OVERVIEW lines: 'Label:   value'; the label must be the row's quantity, the section
    above it the row's GPU, and the command of that section the row's --ep."""
    label, _, value = line.partition(":")
    problems = []
    if _TRTLLM_LABELS.get(label.strip()) != (row["quantity"], row["per"]):
        problems.append(f"line label {label.strip()!r} is not {row['quantity']} per {row['per']}")
    heading = next((i for i in range(number - 1, 0, -1) if lines[i - 1].startswith("### ")), 0)
    if not heading or row["gpu"] not in lines[heading - 1]:
        problems.append(f"section {lines[heading - 1] if heading else None!r} is not the row's GPU {row['gpu']}")
    if not any(re.search(rf"--ep {row['ep']}\b", lines[i]) for i in range(heading, number)):
        problems.append(f"the section's command has no --ep {row['ep']}")
    return value.strip(), problems


def extract_split(row: dict, line: str, lines: list[str], number: int) -> tuple[str, list[str]]:
    """The text a serving-split row claims to copy from ``line``, and the mismatches of what places it."""
    if row["dataset"] == "ep_trtllm_deepseek_r1_h200_b200":
        return _split_trtllm(row, line, lines, number)
    if row["dataset"] == "spec_magicdec_a100_h100":
        return _split_html(row, line, lines, number)
    if line.lstrip().startswith("|"):
        return _split_markdown(row, line, lines, number)
    return _in_sentence(row, line)


_SPLIT_PREFIXES = ("disagg_", "spec_", "ep_")
_extract_before_splits = extract


def extract(row: dict, line: str, lines: list[str] | None = None, number: int = 0) -> tuple[str, list[str]]:  # noqa: F811
    """:func:`extract_split` for the serving-split files, the rules above for every other file."""
    if row["dataset"].startswith(_SPLIT_PREFIXES):
        return extract_split(row, line, lines or [], number)
    return _extract_before_splits(row, line, lines, number)


if __name__ == "__main__":
    sys.exit(main())
