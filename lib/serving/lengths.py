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

A short sample also has a text form that fits in a form field and a link
(:func:`parse_lengths`, ``--lengths-inline``): ``prompt:output`` pairs
joined by commas, each repeated ``*count`` times, ``1024:256*3,95:410``;
:func:`format_lengths` writes it back.

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
import re
from pathlib import Path

import numpy as np

from lib import _checks

__all__ = [
    "LENGTH_COLUMNS",
    "read_lengths",
    "describe_lengths",
    "MAX_INLINE_REQUESTS",
    "MAX_INLINE_TOKENS",
    "parse_lengths",
    "format_lengths",
]

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


#: The most requests the text form may describe (its counts summed): a sample typed or linked, not a trace.
MAX_INLINE_REQUESTS = 10_000
#: The largest length or count the text form takes (far past any model's context; keeps integers exact
#: in a browser's doubles and in numpy's int64).
MAX_INLINE_TOKENS = 10**9

#: One group: ``prompt:output`` or ``prompt:output*count``, ASCII digits, spaces allowed around each part.
_GROUP = re.compile(r"[ \t]*([0-9]+)[ \t]*:[ \t]*([0-9]+)[ \t]*(?:\*[ \t]*([0-9]+)[ \t]*)?")
_FORM = "prompt:output pairs, each optionally *count, joined by commas (1024:256*3,95:410)"


def parse_lengths(text: str, name: str = "lengths") -> tuple[np.ndarray, np.ndarray]:
    """The prompt and output lengths of the requests a text such as ``"1024:256*3,95:410"`` describes.

    The grammar (spaces and tabs may surround any part)::

        lengths := group ("," group)*
        group   := prompt ":" output ["*" count]
        prompt, output, count := ASCII digits, a whole number from 1 to MAX_INLINE_TOKENS

    ``count`` repeats the pair (1 if left out); the requests come out in the
    order written, and at most :data:`MAX_INLINE_REQUESTS` in all. Anything
    else (an empty text or group, a sign, a decimal point, an exponent, a
    zero) raises a one-line ``ValueError`` naming ``name`` and the group.
    :func:`format_lengths` writes the text back.

    >>> prompts, outputs = parse_lengths("1024:256*3, 95:410")
    >>> prompts.tolist(), outputs.tolist()
    ([1024, 1024, 1024, 95], [256, 256, 256, 410])
    >>> parse_lengths("1024:0", "--lengths-inline")
    Traceback (most recent call last):
    ...
    ValueError: --lengths-inline group 1 '1024:0': output must be a whole number from 1 to 1000000000, got 0
    """
    if not isinstance(text, str):
        raise ValueError(f"{name} must be text, {_FORM}, got {text!r}")
    if not text.strip():
        raise ValueError(f"{name} holds no request: it must be {_FORM}, got {text!r}")
    prompts, outputs, total = [], [], 0
    for index, group in enumerate(text.split(","), start=1):
        found = _GROUP.fullmatch(group)
        if found is None:
            raise ValueError(f"{name} must be {_FORM}; group {index} is {group.strip()!r}")
        where = f"{name} group {index} {group.strip()!r}"
        values = []
        for word, digits in zip(("prompt", "output", "count"), found.groups(default="1")):
            # more digits than the limit has are past it (and Python refuses int() of 4,301 digits)
            value = int(digits) if len(digits.lstrip("0")) <= len(str(MAX_INLINE_TOKENS)) else MAX_INLINE_TOKENS + 1
            if not 1 <= value <= MAX_INLINE_TOKENS:
                raise ValueError(f"{where}: {word} must be a whole number from 1 to {MAX_INLINE_TOKENS}, got {digits}")
            values.append(value)
        prompt, output, count = values
        total += count
        if total > MAX_INLINE_REQUESTS:
            raise ValueError(
                f"{name} describes more than {MAX_INLINE_REQUESTS:,} requests (at {where}): use a file (--lengths)"
            )
        prompts += [prompt] * count
        outputs += [output] * count
    return np.array(prompts, dtype=np.int64), np.array(outputs, dtype=np.int64)


def format_lengths(prompts, outputs) -> str:
    """The text :func:`parse_lengths` reads back as these lengths: runs of one pair written once, ``*count``.

    The shortest form in the requests' order, without spaces; ``parse_lengths(format_lengths(p, o))``
    gives ``p`` and ``o`` again. Lengths must be whole numbers of at least 1 (``ValueError`` naming them).

    >>> format_lengths([1024, 1024, 1024, 95], [256, 256, 256, 410])
    '1024:256*3,95:410'
    """
    p = np.atleast_1d(_checks.count("prompts", prompts, minimum=1)).astype(np.int64)
    o = np.atleast_1d(_checks.count("outputs", outputs, minimum=1)).astype(np.int64)
    if p.ndim != 1 or p.shape != o.shape or not p.size:
        raise ValueError(
            f"prompts and outputs must be samples of one length, at least one request, got shapes {p.shape} and "
            f"{o.shape}"
        )
    groups: list[list[int]] = []
    for pair in zip(p.tolist(), o.tolist()):
        if groups and groups[-1][:2] == list(pair):
            groups[-1][2] += 1
        else:
            groups.append([*pair, 1])
    return ",".join(f"{a}:{b}" + (f"*{n}" if n > 1 else "") for a, b, n in groups)
