"""Published measurements in ``data/published/``: load them, and turn an all-reduce sweep into SI arrays.

Introduced in chapter 11 (does the model hold?); chapter 5 reads the
all-reduce sweeps too. Every CSV holds one printed figure per row, with its
unit, the hardware, the software and the source (a GitHub URL pinned to a
commit, and the line the figure is printed on); :mod:`lib.validation.schemas`
names the files and their columns. ``data/published/README.md`` gives the provenance
of each file and ``data/published/recheck.py`` re-checks every row against
its source.

>>> rows = load_published("allreduce_h100_8gpu_aws_p5")
>>> row = rows[0]
>>> row["size_bytes"], row["quantity"], row["value"], row["unit"], row["gpus"]
(8, 'time', 12.9, 'us', 8)
>>> sweep = allreduce_sweep("allreduce_h100_8gpu_aws_p5")
>>> len(sweep.size), round(float(sweep.time[-1]) * 1e3, 3)      # 8 B to 16 GiB; 62.239 ms at the largest
(32, 62.239)
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from lib import _checks
from lib.collectives import busbw_factor
from lib.validation.schemas import ALLREDUCE_DATASETS, INTEGER_COLUMNS, UNIT_SI, schema

__all__ = ["DATA_DIR", "load_published", "AllReduceSweep", "allreduce_sweep", "rounding_error"]


def _data_dir() -> Path:
    """``data/published`` of the repository, or of the nearest folder above the working directory that has one.

    From a source checkout the first is found; a workshop bundle installs
    ``lib`` as a wheel beside its own ``data/`` folder, so the notebooks find
    the second from ``notebooks/``.
    """
    checkout = Path(__file__).resolve().parents[2] / "data" / "published"
    if checkout.is_dir():
        return checkout
    for folder in (Path.cwd(), *Path.cwd().parents):
        if (folder / "data" / "published").is_dir():
            return folder / "data" / "published"
    return checkout


#: Where the CSV files live (``data/published`` at the top of the repository or workshop bundle).
DATA_DIR = _data_dir()


def _typed(row: dict) -> dict:
    out: dict[str, Any] = dict(row)
    for key in INTEGER_COLUMNS:
        if key in out:
            out[key] = int(out[key]) if out[key] != "" else None
    if "request_rate" in out:
        out["request_rate"] = float(out["request_rate"]) if out["request_rate"] != "" else None
    out["printed"] = row["value"]
    out["value"] = float(row["value"]) if row["value"] != "" else None
    out["value_si"] = None if out["value"] is None else out["value"] * UNIT_SI[row["unit"]]
    return out


@cache
def _rows(name: str) -> tuple:
    schema(name)
    with (DATA_DIR / f"{name}.csv").open(encoding="utf-8", newline="") as handle:
        return tuple(_typed(row) for row in csv.DictReader(handle))


def load_published(name: str) -> list[dict]:
    """The rows of ``data/published/<name>.csv``, typed (a fresh copy on every call).

    Counts (``gpus``, ``size_bytes``, ``tp``, ``batch``, ...) become ``int``
    (``None`` where blank) and ``request_rate`` a ``float`` (``inf`` for an
    offline run); ``value`` becomes a ``float`` in the row's ``unit``
    (``None`` for an out-of-memory cell), ``value_si`` the same in SI units,
    and ``printed`` keeps the text exactly as the source printed it.

    >>> rows = load_published("decode_ft_gpt20b_a100")
    >>> first = rows[0]
    >>> first["tp"], first["batch"], first["input_tokens"], first["output_tokens"], first["value"], first["unit"]
    (1, 1, 20, 8, 225.0, 'ms')
    >>> first["value_si"]
    0.225
    >>> load_published("allreduce_h100")
    Traceback (most recent call last):
    ...
    ValueError: name must be one of the files in data/published (see DATASETS), got 'allreduce_h100'
    """
    return [dict(row) for row in _rows(name)]


def rounding_error(printed: str) -> float:
    """Largest relative error that printing ``printed`` to its last digit can hide: half a unit of it.

    ``inf`` for a printed zero (the true value could be anything below the
    last digit).

    >>> round(rounding_error("0.45"), 4), round(rounding_error("16240"), 7), rounding_error("0.00")
    (0.0111, 3.08e-05, inf)
    """
    try:
        value = float(printed)
    except (TypeError, ValueError):
        raise ValueError(f"printed must be a number as text, got {printed!r}") from None
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return 0.5 * 10.0**-decimals / value if value > 0 else float("inf")


@dataclass(frozen=True)
class AllReduceSweep:
    """One system's all-reduce time against message size, in SI units.

    ``time`` is printed where the source printed it and otherwise derived
    from the printed bus bandwidth (``derived`` is True there):
    ``time = size x 2 (K - 1) / K / busbw``, nccl-tests' definition read
    backwards. ``dropped`` lists the sizes left out because the printed
    figure was too coarse (see :func:`allreduce_sweep`).
    """

    name: str
    system: str
    gpus: int
    nodes: int
    size: np.ndarray
    time: np.ndarray
    derived: np.ndarray
    dropped: tuple


def allreduce_sweep(name: str, max_rounding: float = 0.01) -> AllReduceSweep:
    """The all-reduce sweep ``name`` as arrays: message size (bytes) and time (seconds).

    Where the source printed no time (``all_reduce_bench.py`` prints
    bandwidths only), the time comes from the bus bandwidth, or from the
    algorithm bandwidth if only that was printed. A size is dropped when the
    figure it rests on is printed so coarsely that rounding alone could move
    it by more than ``max_rounding`` (``0.01 GBps`` printed for a 32 KiB
    message on four nodes says only "between 0.005 and 0.015").

    >>> sweep = allreduce_sweep("allreduce_b200_32gpu_mle")
    >>> sweep.dropped                      # printed busbw 0.01, 0.04, 0.45 GBps
    (32768, 65536, 131072)
    >>> bool(sweep.derived.all()), sweep.gpus, sweep.nodes
    (True, 32, 4)
    >>> allreduce_sweep("nvls_vs_ring")
    Traceback (most recent call last):
    ...
    ValueError: name must be one of ALLREDUCE_DATASETS, got 'nvls_vs_ring'
    """
    if name not in ALLREDUCE_DATASETS:
        raise ValueError(f"name must be one of ALLREDUCE_DATASETS, got {name!r}")
    _checks.scalar("max_rounding", max_rounding, _checks.positive)
    rows = load_published(name)
    k = rows[0]["gpus"]
    factor = busbw_factor("allreduce", k)
    by_size: dict[int, dict] = {}
    for row in rows:
        by_size.setdefault(row["size_bytes"], {})[row["quantity"]] = row
    sizes, times, derived, dropped = [], [], [], []
    for size in sorted(by_size):
        printed = by_size[size]
        if "time" in printed:
            basis, time = printed["time"], printed["time"]["value_si"]
        else:
            basis = printed.get("busbw") or printed["algbw"]
            volume = size * (factor if basis["quantity"] == "busbw" else 1.0)
            time = volume / basis["value_si"] if basis["value_si"] > 0 else float("inf")
        if rounding_error(basis["printed"]) > max_rounding:
            dropped.append(size)
            continue
        sizes.append(float(size))
        times.append(time)
        derived.append("time" not in printed)
    return AllReduceSweep(
        name,
        rows[0]["system"],
        k,
        rows[0]["nodes"],
        np.array(sizes),
        np.array(times),
        np.array(derived),
        tuple(dropped),
    )
