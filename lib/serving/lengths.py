"""Requests' prompt and output lengths from a file: a sample of the workload to size for.

Used by the planner's command line; the capacity model is chapter 9's.
Real traffic mixes short and long requests; :func:`lib.serving.capacity` and :func:`lib.serving.size`
take samples of the lengths (:class:`lib.serving.Workload`: the means set
the steady state, the spread the prefill queue), and
``python -m lib.serving --rate R --lengths FILE`` reads them with
:func:`read_lengths`. A file is CSV (a header row naming the columns) or
JSON Lines (one object per request), with the lengths under
``prompt_tokens`` and ``output_tokens`` (``input_len``/``output_len``, the
names of vLLM's and SGLang's benchmark dumps, are read too). Every length is
a whole number of at least one token; a bad row is refused with its line.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = Path(tmp) / "chat.csv"
...     _ = path.write_text("prompt_tokens,output_tokens\\n812,233\\n95,410\\n2048,64\\n")
...     prompts, outputs = read_lengths(path)
>>> prompts.tolist(), outputs.tolist()
([812, 95, 2048], [233, 410, 64])
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

__all__ = ["LENGTH_COLUMNS", "read_lengths", "describe_lengths"]

#: The names a file may give the two lengths, in the order they are looked for.
LENGTH_COLUMNS = {"prompt_tokens": ("prompt_tokens", "input_len"), "output_tokens": ("output_tokens", "output_len")}


def _records(path: Path, name: str) -> list[tuple[int, dict]]:
    """``(line, record)`` for every request of the file: CSV rows under a header, or JSON Lines objects."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"{name} cannot be read: {str(path)!r}: {getattr(error, 'strerror', None) or error}") from None
    if path.suffix.lower() in (".jsonl", ".json", ".ndjson"):
        records = []
        for line, row in enumerate(text.splitlines(), start=1):
            if not row.strip():
                continue
            try:
                record = json.loads(row)
            except json.JSONDecodeError as error:
                raise ValueError(f"{name} {str(path)!r} line {line} is not JSON: {error.msg}") from None
            if not isinstance(record, dict):
                raise ValueError(f"{name} {str(path)!r} line {line} is not an object: {row.strip()[:40]!r}")
            records.append((line, record))
        return records
    rows = csv.DictReader(text.splitlines())
    return [(line, row) for line, row in enumerate(rows, start=2)]


def _length(record: dict, key: str, where: str) -> int:
    found = next((record[k] for k in LENGTH_COLUMNS[key] if k in record), None)
    if found is None:
        raise ValueError(f"{where} has no {' or '.join(LENGTH_COLUMNS[key])}")
    try:
        value = float(found)
    except (TypeError, ValueError):
        value = float("nan")
    if not (np.isfinite(value) and value == int(value) and value >= 1):
        raise ValueError(f"{where}: {key} must be a whole number of at least 1, got {found!r}")
    return int(value)


def read_lengths(path: str | Path, name: str = "lengths") -> tuple[np.ndarray, np.ndarray]:
    """The prompt and output lengths of every request in the CSV or JSON Lines file ``path``, as two arrays.

    A file that cannot be read, holds no request, lacks a length or holds one
    that is not a whole number of at least 1 raises a ``ValueError`` naming
    ``name``, the file and the line.
    """
    path = Path(path)
    records = _records(path, name)
    if not records:
        raise ValueError(f"{name} {str(path)!r} holds no request")
    prompts, outputs = [], []
    for line, record in records:
        where = f"{name} {str(path)!r} line {line}"
        prompts.append(_length(record, "prompt_tokens", where))
        outputs.append(_length(record, "output_tokens", where))
    return np.array(prompts), np.array(outputs)


def describe_lengths(prompts: np.ndarray, outputs: np.ndarray) -> str:
    """The sample in words: its size, and each length's mean and 90th percentile.

    >>> describe_lengths(np.array([812, 95, 2048]), np.array([233, 410, 64]))
    '3 requests (prompt mean 985, p90 1801; output mean 236, p90 375)'
    """
    return (
        f"{len(prompts)} requests (prompt mean {np.mean(prompts):.0f}, p90 {np.percentile(prompts, 90):.0f}; "
        f"output mean {np.mean(outputs):.0f}, p90 {np.percentile(outputs, 90):.0f})"
    )
