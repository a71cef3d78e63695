"""Measured decode-attention kernel time by batch, context and head layout, as a fraction of HBM bandwidth.

Introduced in chapter 7 (serving many users), which draws it beside the serving model's price of decode
attention: :mod:`lib.serving.operators` prices it as its
KV-cache bytes over ``engine.memory_efficiency`` times the datasheet bandwidth, a constant 0.9 that
BabelStream's copy kernel reaches. A decode-attention kernel (one query token per sequence against a KV cache)
reaches far less when there is little to read: it takes some 25 microseconds on the A30 below whatever it
reads, and it spreads its work over the sequences times the KV heads (FlashAttention packs the
query heads of one KV head together), so a batch of one with eight KV heads keeps few SMs busy. This module
holds published measurements (``data/kernels/attention_decode.csv``, one a row, each with its repository,
commit, file and line; ``data/kernels/README.md`` lists the sources) and turns them into the fraction of the
datasheet bandwidth a decode-attention kernel reaches at any shape.

**The efficiency** of a row is the KV cache it reads, ``2 x batch x context x kv_heads x head_dim`` elements of
two bytes, over its time and over the peak bandwidth its source names (the query and output are not counted,
as the serving model does not count them: they add at most 3 % from 1,024 tokens on, and as much again as the
cache at 32 tokens with one KV head).

**The table** is FlashAttention 2.6.3's paged decode kernel (``mha_fwd_kvcache``) on an NVIDIA A30, FP16, head
dimension 128, timed by nvbench with the L2 cache flushed before each sample
(JakeFlasher/benchmark_flash_attention, ``results/`` at commit 13da53c). The A30 is the A100's GA100 chip with
56 SMs and 933 GB/s of HBM2; its fractions of peak stand in for every device. The other rows of the file
(an A100 40GB PCIe in vLLM's pull request 2744, an H100 PCIe and an A800 SXM at two long-context shapes, the
A30 at head dimensions 64, 80, 96 and 160) are cross-checks; ``data/kernels/README.md`` compares them.

**The interpolation rule.** The measurements collapse onto two numbers: the work items,
``units = batch x kv_heads``, and the context (at 1,024 tokens, 16 sequences of 2 KV heads reach 0.31 and one
of 32 reaches 0.32; 16 of 4 reach 0.43 and two of 32 reach 0.44). The grid's axes are every ``units`` value the
table measures at all ten contexts from 32 to 16,384 tokens (1, 4, 8, 32, 64, ..., 4,096) and those ten
contexts; a cell is the median efficiency of its rows (several sources' files repeat a shape). The grid is
then raised to its monotone hull, a running maximum along the context and then along the units (a kernel
given more to read, in either way, is taken to be no less efficient: the hull lifts 8 of the 109 measured cells,
the largest by 0.10, at four sequences of 32 heads at 16,384 tokens, measured below two sequences); the one
missing cell (4,096 units at 16,384 tokens, beyond the benchmark's 2^20 tokens) takes its neighbour's value the
same way. Between grid points the efficiency is interpolated linearly in ``(log2 units, log2 context)``;
outside the grid it stays at the edge value; the result is capped at ``ceiling``, the share of the bandwidth
the engine reaches at best (``lib.serving.engine.MEMORY_EFFICIENCY``, 0.90, the BabelStream copy fraction),
which the longest, widest measured shapes exceed slightly (0.93 of the A30's bus peak).

The head dimension is not a coordinate: the table holds 128 only (the other widths, 0.40 to 0.52 where 128
reaches 0.53, are cross-checks).

>>> round(decode_attention_efficiency(1, 1024, 8, ceiling=0.9), 3)      # one sequence, 8 KV heads
0.096
>>> round(decode_attention_efficiency(64, 4096, 8, ceiling=0.9), 3)     # capped
0.9
"""

from __future__ import annotations

import csv
import functools
from pathlib import Path

import numpy as np

from lib._checks import fraction, positive, result

__all__ = [
    "DATA_FILE",
    "TABLE_REPOSITORY",
    "TABLE_HEAD_DIM",
    "attention_rows",
    "efficiency_grid",
    "decode_attention_efficiency",
]

#: The repository whose rows make the table (the others are cross-checks).
TABLE_REPOSITORY = "JakeFlasher/benchmark_flash_attention"
#: The head dimension of the table's rows.
TABLE_HEAD_DIM = 128
#: Bytes per element of the KV cache in every row (FP16 or BF16).
_ELEMENT_BYTES = 2
_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}


def _data_file() -> Path:
    """``data/kernels/attention_decode.csv`` of the repository, or of the nearest folder above the working
    directory."""
    relative = Path("data") / "kernels" / "attention_decode.csv"
    checkout = Path(__file__).resolve().parents[1] / relative
    if checkout.is_file():
        return checkout
    for folder in (Path.cwd(), *Path.cwd().parents):
        if (folder / relative).is_file():
            return folder / relative
    return checkout


#: The committed measurements.
DATA_FILE = _data_file()


@functools.cache
def _all_rows() -> tuple[dict, ...]:
    with DATA_FILE.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        for key in ("batch", "context", "q_heads", "kv_heads", "head_dim", "page_size"):
            row[key] = int(row[key])
        row["seconds"] = float(row["time"]) * _UNITS[row["time_unit"]]
        row["kv_bytes"] = 2 * row["batch"] * row["context"] * row["kv_heads"] * row["head_dim"] * _ELEMENT_BYTES
        row["efficiency"] = row["kv_bytes"] / row["seconds"] / (float(row["peak_bandwidth_gbs"]) * 1e9)
    return tuple(rows)


def attention_rows(device: str | None = None) -> list[dict]:
    """The rows of ``data/kernels/attention_decode.csv`` filed under ``device`` (``None``: all), as new dicts.

    Each has the file's columns, the shape as ints, and ``seconds``, ``kv_bytes`` (the KV cache read) and
    ``efficiency`` (``kv_bytes / seconds`` over the row's peak bandwidth).

    >>> [(r["batch"], r["time"], round(r["efficiency"], 4)) for r in attention_rows("a100-40gb")][:3]
    [(1, '37.541', 0.0718), (1, '29.602', 0.0911), (1, '27.675', 0.0975)]
    """
    return [dict(r) for r in _all_rows() if device in (None, r["device"])]


@functools.cache
def _grid() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows = [r for r in _all_rows() if r["repository"] == TABLE_REPOSITORY and r["head_dim"] == TABLE_HEAD_DIM]
    cells: dict[tuple[int, int], list[float]] = {}
    for r in rows:
        cells.setdefault((r["batch"] * r["kv_heads"], r["context"]), []).append(r["efficiency"])
    contexts = np.array(sorted({c for _, c in cells if (1, c) in cells}), dtype=float)  # the ten of one sequence
    counts: dict[int, int] = {}
    for u, c in cells:
        counts[u] = counts.get(u, 0) + (c in contexts)
    units = np.array(sorted(u for u, n in counts.items() if n >= len(contexts) - 1), dtype=float)
    grid = np.zeros((len(units), len(contexts)))
    for i, u in enumerate(units):
        for j, c in enumerate(contexts):
            grid[i, j] = np.median(cells.get((int(u), int(c)), [0.0]))  # a missing cell is filled by the hull
    grid = np.maximum.accumulate(np.maximum.accumulate(grid, axis=1), axis=0)
    return units, contexts, grid


def efficiency_grid() -> dict:
    """The table as plain lists: ``{"units": [...], "contexts": [...], "grid": [[...], ...]}``, ``grid[i][j]``
    the (hulled) efficiency at ``units[i] = batch x kv_heads`` and ``contexts[j]`` tokens.

    >>> g = efficiency_grid()
    >>> g["units"][:4], g["contexts"][0], g["contexts"][-1], round(g["grid"][0][-1], 3)
    ([1, 4, 8, 32], 32, 16384, 0.032)
    """
    units, contexts, grid = _grid()
    return {"units": [int(u) for u in units], "contexts": [int(c) for c in contexts], "grid": grid.tolist()}


def decode_attention_efficiency(batch, context, kv_heads, ceiling: float) -> float | np.ndarray:
    """Achieved fraction of the datasheet memory bandwidth of a decode-attention kernel (arrays broadcast).

    Parameters
    ----------
    batch : float or array
        Sequences decoding in the call (> 0; a mean is allowed).
    context : float or array
        Tokens of KV cache each attends to (> 0).
    kv_heads : float or array
        KV heads on the device (> 0; ``kv_heads / tp`` under tensor parallelism).
    ceiling : float
        The largest share returned, in (0, 1]: the engine's ``memory_efficiency``.

    Returns
    -------
    float or numpy.ndarray
        In (0, ``ceiling``]; see the module docstring for the rule.

    >>> import numpy as np
    >>> np.round(decode_attention_efficiency(np.array([1, 8, 64]), 1024, 8, ceiling=1.0), 3)
    array([0.096, 0.432, 0.817])
    >>> decode_attention_efficiency(0, 1024, 8, ceiling=0.9)
    Traceback (most recent call last):
    ...
    ValueError: batch must be > 0, got 0
    """
    b, n, h = positive("batch", batch), positive("context", context), positive("kv_heads", kv_heads)
    cap = fraction("ceiling", ceiling)
    units, contexts, grid = _grid()
    x = np.clip(np.log2(b * h), np.log2(units[0]), np.log2(units[-1]))
    y = np.clip(np.log2(n), np.log2(contexts[0]), np.log2(contexts[-1]))
    i = np.clip(np.searchsorted(np.log2(units), x, side="right") - 1, 0, len(units) - 2)
    j = np.clip(np.searchsorted(np.log2(contexts), y, side="right") - 1, 0, len(contexts) - 2)
    u = (x - np.log2(units[i])) / (np.log2(units[i + 1]) - np.log2(units[i]))
    v = (y - np.log2(contexts[j])) / (np.log2(contexts[j + 1]) - np.log2(contexts[j]))
    value = (
        (1 - u) * (1 - v) * grid[i, j]
        + u * (1 - v) * grid[i + 1, j]
        + (1 - u) * v * grid[i, j + 1]
        + u * v * grid[i + 1, j + 1]
    )
    return result(np.minimum(cap, value))
