"""Measured GEMM throughput by device, number format and shape, and the interpolation between measurements.

Introduced in chapter 7 (serving many users). A datasheet peak is what the
tensor cores reach on an ideal problem; a real matrix product of ``m`` tokens
by an ``n x k`` weight reaches a fraction of it that depends on the shape:
small ``m`` leaves tiles empty and the kernel waits on the weight reads, and
a small ``n`` or ``k`` leaves SMs idle. This module holds published
measurements (``data/kernels/gemm.csv``, one measurement a row, each with its
repository, commit, file and entry; ``data/kernels/README.md`` lists the
sources) and turns them into the FLOP/s of any shape.

**The efficiency** of a row is its achieved FLOP/s over the peak of the
format on the device it is filed under (:func:`lib.formats.compute_peak`).

**The table** of a device and arithmetic (``"bf16"`` or ``"fp8"``) is the rows
of the source with the most rows for it; rows of other sources for the same
pair stay in the file as cross-checks (:func:`gemm_rows`).

**The interpolation rule.** Where the table's shapes form a full grid in
``(m, n, k)`` (XLA's tables: every power of two from 256 to 4096), each cell
is first raised to the largest efficiency of the cells it contains (a monotone
hull; it changes no cell of the committed tables), then the efficiency is
interpolated linearly in ``(log2 m, log2 n, log2 k)`` between the eight
surrounding cells. Outside the grid in a dimension the efficiency stays at
the edge value. Below the smallest measured size this prices the arithmetic
only: a product of a few tokens is bound by reading its weights, and the
memory side of the roofline prices that (:mod:`lib.serving.matmul` takes the
larger of the two times), so the table's efficiency is not lowered there.

Where the shapes do not form a grid (DeepGEMM's eighteen shapes, a single
best shape), fewer rows than both the table's fewest and the grid's fewest
(below) are held there, as on a grid, and each
measured point ``p`` vouches for the shapes around it through the grid of
the same architecture, ``S``: ``e(q) = max_p e_p * S(min(q, p)) / S(p)``
(the minimum taken in each dimension), so a shape at least as large as ``p``
in every dimension keeps ``p``'s efficiency, and one smaller in some
dimension loses what the grid loses when ``p`` shrinks there; no dimension's
growth buys back another's. Here ``S`` below its smallest sizes is taken as
the kernel time of the smallest (a floor), so that a point of many rows never
vouches for a few rows better than the grid's own smallest measurement
does. The result is then capped by the smallest efficiency measured at a
shape at least as large in every dimension (a shape inside a measured one is
no more efficient than it), which keeps the measured value at each measured
shape. Both rules are non-decreasing in each of ``m``, ``n`` and ``k``,
return a measured row's value at its shape where the measurements themselves
grow with size, and are capped at the peak.

**Stand-ins** (:func:`gemm_source` names the one used): a W8A16 or W4A16
product (``"int8"``, ``"int4"``), and FP8 on a device without FP8 tensor
cores, multiply at the 16-bit peak and use the 16-bit table; a device without
a table of its own, or with fewer measured shapes than its neighbour's (one
best-shape figure says nothing of small products), borrows the neighbour's
efficiencies and applies them to its own peak (:data:`NEIGHBOURS`).

>>> round(gemm_flops("h100-sxm", "bf16", 4096, 4096, 4096) / 1e12, 1)
783.3
>>> gemm_source("h200", "bf16").table_device
'h100-sxm'
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lib._checks import count, result
from lib.formats import WEIGHT_FORMATS, compute_peak, weight_format
from lib.hardware import DEVICES, Device

__all__ = [
    "GemmSource",
    "NEIGHBOURS",
    "OUTSIDE_CATALOGUE",
    "table_data",
    "DATA_FILE",
    "gemm_rows",
    "gemm_source",
    "gemm_efficiency",
    "gemm_flops",
]

#: A device without measurements of its own borrows the efficiencies of the first device listed here that has them.
NEIGHBOURS: dict[str, tuple[str, str]] = {
    "a100-40gb": ("a100-80gb", "the same GA100 chip and 312 TFLOP/s peak; the source does not name the memory size"),
    "h100-pcie": (
        "h100-sxm",
        "the same GH100 chip with 114 of 132 SMs at a lower power limit: the SXM's fractions of peak, "
        "applied to the PCIe peak",
    ),
    "h200": (
        "h100-sxm",
        "the same GH100 chip and tensor-core peaks with faster memory (stas00's table: 'H200 is the same')",
    ),
    "l40s": (
        "a100-80gb",
        "no Ada measurement found; Ada's tensor cores are driven like Ampere's (mma.sync, no wgmma), so the "
        "A100's fractions of peak stand in",
    ),
    "l4": (
        "a100-80gb",
        "no Ada measurement found; Ada's tensor cores are driven like Ampere's (mma.sync, no wgmma), so the "
        "A100's fractions of peak stand in",
    ),
    "a10g": ("a100-80gb", "an Ampere part (GA102): the A100's fractions of peak"),
}

#: The device whose efficiencies a device outside the catalogue borrows, and why.
OUTSIDE_CATALOGUE = "h100-sxm"
OUTSIDE_REASON = "the H100 SXM's fractions of peak (the part with the most measurements) stand in, at its own peak"

#: The architecture grid that shapes the interpolation of a non-grid table, by the table's device.
_SHAPE_GRID = {"b200": ("b200", "bf16")}
_DEFAULT_SHAPE_GRID = ("h100-sxm", "bf16")


def _data_file() -> Path:
    """``data/kernels/gemm.csv`` of the repository, or of the nearest folder above the working directory."""
    checkout = Path(__file__).resolve().parents[1] / "data" / "kernels" / "gemm.csv"
    if checkout.is_file():
        return checkout
    for folder in (Path.cwd(), *Path.cwd().parents):
        if (folder / "data" / "kernels" / "gemm.csv").is_file():
            return folder / "data" / "kernels" / "gemm.csv"
    return checkout


#: The committed measurements.
DATA_FILE = _data_file()


@dataclass(frozen=True)
class GemmSource:
    """Which measurements price a device and format, and why.

    Attributes
    ----------
    device, fmt : str
        What was asked for (a device outside the catalogue by its name).
    table_device, table_format : str
        The device and arithmetic (``"bf16"`` or ``"fp8"``) whose table is used.
    rule : str
        ``"grid"`` (interpolation on a full grid) or ``"points"`` (measured points shaped by a grid).
    sources : tuple of str
        ``repository@commit:path`` of the rows used.
    rows : int
        How many rows the table has.
    reason : str
        Why this table: the device's own, or the stand-in rule that chose it.
    """

    device: str
    fmt: str
    table_device: str
    table_format: str
    rule: str
    sources: tuple[str, ...]
    rows: int
    reason: str


@functools.cache
def _all_rows() -> tuple[dict, ...]:
    with DATA_FILE.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        for key in ("m", "n", "k"):
            row[key] = int(row[key])
        row["flops"] = float(row["tflops"]) * 1e12
    return tuple(rows)


def gemm_rows(device: str | None = None, fmt: str | None = None) -> list[dict]:
    """The rows of ``data/kernels/gemm.csv`` filed under ``device`` and ``fmt`` (``None``: any), as new dicts.

    Each has the file's columns, ``m``, ``n`` and ``k`` as ints, and ``flops`` in FLOP/s.

    >>> [(r["m"], r["n"], r["k"], r["tflops"]) for r in gemm_rows("a100-80gb", "bf16")]
    [(1024, 10240, 5120, '271.2')]
    """
    return [dict(r) for r in _all_rows() if device in (None, r["device"]) and fmt in (None, r["format"])]


def _source_key(row: dict) -> str:
    return f"{row['repository']}@{row['commit']}:{row['path']}"


@functools.cache
def _table(device: str, compute: str):
    """The rows of the largest source for ``device`` and ``compute``, and their efficiencies; None without rows."""
    rows = gemm_rows(device, compute)
    if not rows:
        return None
    sizes: dict[str, int] = {}
    for row in rows:
        sizes[_source_key(row)] = sizes.get(_source_key(row), 0) + 1
    key = max(sizes, key=lambda s: (sizes[s], s))
    rows = [r for r in rows if _source_key(r) == key]
    shapes = np.array([[r["m"], r["n"], r["k"]] for r in rows], dtype=float)
    eff = np.array([r["flops"] for r in rows]) / compute_peak(device, compute)
    axes = [np.unique(shapes[:, i]) for i in range(3)]
    if len(axes[0]) * len(axes[1]) * len(axes[2]) == len(rows) and min(len(a) for a in axes) > 1:
        grid = np.zeros([len(a) for a in axes])
        index = tuple(np.searchsorted(axes[i], shapes[:, i]) for i in range(3))
        grid[index] = eff
        for axis in range(3):
            grid = np.maximum.accumulate(grid, axis=axis)
        return "grid", (key,), len(rows), (axes, grid)
    return "points", (key,), len(rows), (shapes, eff)


def _grid_eval(axes, grid, m, n, k, floor: bool = False) -> np.ndarray:
    """Trilinear interpolation of ``grid`` in log2 size, held at the edge value outside the grid; with ``floor``
    proportional to the size below it instead (the kernel time of the smallest measured size as a floor)."""
    weights, scale = [], np.ones(np.broadcast(m, n, k).shape)
    for axis, q in zip(axes, (m, n, k), strict=True):
        logs = np.log2(axis)
        x = np.minimum(np.maximum(np.log2(q), logs[0]), logs[-1])
        if floor:
            scale = scale * np.minimum(1.0, q / axis[0])
        i = np.minimum(np.maximum(np.searchsorted(logs, x, side="right") - 1, 0), len(logs) - 2)
        weights.append((i, (x - logs[i]) / (logs[i + 1] - logs[i])))
    (i, u), (j, v), (h, w) = weights
    total = np.zeros(np.broadcast(m, n, k).shape)
    for di, wi in ((0, 1 - u), (1, u)):
        for dj, wj in ((0, 1 - v), (1, v)):
            for dl, wl in ((0, 1 - w), (1, w)):
                total = total + wi * wj * wl * grid[i + di, j + dj, h + dl]
    return total * scale


def _shape_grid(device: str):
    grid_device, compute = _SHAPE_GRID.get(device, _DEFAULT_SHAPE_GRID)
    return _table(grid_device, compute)[3]


@functools.cache
def _points(device: str, compute: str):
    """A points table's shapes ``(P, 3)``, each point's efficiency over its own grid value, its efficiencies, the
    rows held below, and its shape grid."""
    shapes, eff = _table(device, compute)[3]
    axes, grid = _shape_grid(device)
    own = _grid_eval(axes, grid, shapes[:, 0], shapes[:, 1], shapes[:, 2], floor=True)
    return shapes, eff / own, eff, min(shapes[:, 0].min(), axes[0][0]), (axes, grid)


#: Above this many shapes, :func:`_efficiency` prices each distinct shape once where most repeat (a step table
#: over decodes and prompt tokens asks for hundreds of thousands of shapes, a few thousand of them distinct).
_DISTINCT_ABOVE = 4096


def _efficiency(device: str, compute: str, m, n, k) -> np.ndarray:
    shape = np.broadcast(m, n, k).shape
    if np.prod(shape) <= _DISTINCT_ABOVE:
        return _shape_efficiency(device, compute, m, n, k)
    every = np.stack([np.asarray(x, dtype=float).ravel() for x in np.broadcast_arrays(m, n, k)], axis=1)
    order = np.lexsort(every.T[::-1])  # by m, then n, then k
    ranked = every[order]
    first = np.ones(len(ranked), dtype=bool)
    first[1:] = np.any(ranked[1:] != ranked[:-1], axis=1)
    if first.sum() > len(ranked) / 2:  # mostly distinct: the broadcast shapes are cheaper to price
        return _shape_efficiency(device, compute, m, n, k)
    where = np.empty(len(ranked), dtype=int)
    where[order] = np.cumsum(first) - 1
    return _shape_efficiency(device, compute, *ranked[first].T)[where].reshape(shape)


def _shape_efficiency(device: str, compute: str, m, n, k) -> np.ndarray:
    rule, _, _, data = _table(device, compute)
    if rule == "grid":
        return np.minimum(1.0, _grid_eval(*data, m, n, k))
    shapes, scaled, eff, hold, (axes, grid) = _points(device, compute)
    m = np.maximum(m, hold)  # held below the fewest rows of the table or grid
    q = np.broadcast(m, n, k).shape
    pm, pn, pk = (shapes[:, i].reshape((-1,) + (1,) * len(q)) for i in range(3))  # points along a new first axis
    inside = _grid_eval(axes, grid, np.minimum(m, pm), np.minimum(n, pn), np.minimum(k, pk), floor=True)
    best = np.max(scaled.reshape(pm.shape) * inside, axis=0)
    ceiling = np.min(np.where((m <= pm) & (n <= pn) & (k <= pk), eff.reshape(pm.shape), 1.0), axis=0)
    return np.minimum(ceiling, best)


def _catalogued(device: str | Device) -> tuple[Device, str | None]:
    """``device`` as a :class:`~lib.hardware.Device` and its catalogue key (``None`` for a device of its own)."""
    if isinstance(device, Device):
        return device, next((key for key, value in DEVICES.items() if value == device), None)
    if not isinstance(device, str) or device not in DEVICES:
        raise ValueError(f"device must be one of {sorted(DEVICES)} or a Device, got {device!r}")
    return DEVICES[device], device


def _compute(device: Device, fmt: str) -> tuple[str, str]:
    """The arithmetic a product of weights in ``fmt`` runs in on ``device``, and a note when it is not ``fmt``."""
    if not isinstance(fmt, str) or fmt not in WEIGHT_FORMATS:
        raise ValueError(f"fmt must be one of {sorted(WEIGHT_FORMATS)}, got {fmt!r}")
    wanted = weight_format(fmt).compute
    if wanted == "fp8" and device.fp8_flops > 0:
        return "fp8", ""
    if fmt == "fp8":
        return "bf16", "no FP8 tensor cores: W8A16 at the 16-bit peak, so the 16-bit table; "
    if wanted != fmt:
        return "bf16", (
            f"{fmt} weights are dequantised to 16 bits (W{fmt[-1]}A16), so the 16-bit table "
            "(the dequantisation and the smaller weight reads are not in it); "
        )
    return wanted, ""


def gemm_source(device: str | Device, fmt: str) -> GemmSource:
    """Which table prices ``fmt`` on ``device`` (a catalogue slug or a :class:`~lib.hardware.Device`): its own, or
    the stand-in the module's rules choose.

    >>> s = gemm_source("h100-pcie", "int4")
    >>> s.table_device, s.table_format, s.rule, s.rows
    ('h100-sxm', 'bf16', 'grid', 125)
    >>> gemm_source("h100-sxm", "fp8").sources
    ('deepseek-ai/DeepGEMM@327ec92f6977e7fee022cb76a8f273b75483c3d8:README.md',)
    >>> from dataclasses import replace
    >>> gemm_source(replace(DEVICES["l4"], name="my part"), "bf16").table_device
    'h100-sxm'
    >>> gemm_source("h100-sxm", "fp4")
    Traceback (most recent call last):
    ...
    ValueError: fmt must be one of ['bf16', 'fp8', 'int4', 'int8'], got 'fp4'
    """
    dev, key = _catalogued(device)
    compute, note = _compute(dev, fmt)
    if key is None:
        note += f"{dev.name!r} is not in the catalogue; {OUTSIDE_REASON}; "
    return GemmSource(key or dev.name, fmt, *_source(key or OUTSIDE_CATALOGUE, compute, note))


@functools.cache
def _source(device: str, compute: str, note: str) -> tuple:
    """``GemmSource``'s fields after ``device`` and ``fmt``, for a catalogue device and an arithmetic."""
    table_device, reason = device, note + "the device's own measurements"
    own, neighbour = _table(device, compute), NEIGHBOURS.get(device, ("", ""))[0]
    if own is not None and neighbour and own[2] < (_table(neighbour, compute) or (0, 0, 0))[2]:
        why = NEIGHBOURS[device][1]
        table_device = neighbour
        reason = (
            note + f"{device}'s {compute} table has {own[2]} shape(s), {neighbour}'s more; {neighbour} stands in: {why}"
        )
    elif own is None:
        neighbour, why = NEIGHBOURS[device]
        table_device, reason = neighbour, note + f"no {compute} measurement of {device}; {neighbour} stands in: {why}"
        if _table(neighbour, compute) is None:
            reason += f"; {neighbour} has no {compute} table either, so its 16-bit one"
            compute = "bf16"
    rule, sources, rows, _ = _table(table_device, compute)
    return table_device, compute, rule, sources, rows, reason


def table_data(device: str, compute: str) -> dict:
    """The table of a catalogue ``device`` and arithmetic (``"bf16"`` or ``"fp8"``) as plain lists, for a page that
    evaluates :func:`gemm_efficiency` itself: ``{"rule": "grid", "axes": [m, n, k], "grid": nested lists}`` or
    ``{"rule": "points", "shapes": [[m, n, k], ...], "efficiency": [...], "shape_grid": "device/arithmetic"}``.

    >>> data = table_data("h100-sxm", "bf16")
    >>> data["rule"], data["axes"][0][:3], round(data["grid"][4][4][4], 3)
    ('grid', [256, 512, 1024], 0.792)
    >>> table_data("h100-sxm", "fp8")["shape_grid"]
    'h100-sxm/bf16'
    """
    found = _table(device, compute) if device in DEVICES and compute in ("bf16", "fp8") else None
    if found is None:
        raise ValueError(f"device and compute must name a measured table, got {device!r}, {compute!r}")
    rule, _, _, data = found
    if rule == "grid":
        axes, grid = data
        return {"rule": rule, "axes": [[int(x) for x in a] for a in axes], "grid": grid.tolist()}
    shapes, eff = data
    return {
        "rule": rule,
        "shapes": [[int(x) for x in shape] for shape in shapes],
        "efficiency": eff.tolist(),
        "shape_grid": "/".join(_SHAPE_GRID.get(device, _DEFAULT_SHAPE_GRID)),
    }


def gemm_efficiency(device: str | Device, fmt: str, m, n, k, check: bool = True) -> float | np.ndarray:
    """Achieved fraction of ``compute_peak(device, fmt)`` for an ``m x k`` by ``k x n`` product (arrays broadcast).

    Parameters
    ----------
    device : str or Device
        Slug in :data:`lib.hardware.DEVICES`, or a :class:`~lib.hardware.Device` (one outside the catalogue
        borrows :data:`OUTSIDE_CATALOGUE`'s fractions).
    fmt : str
        Weight format in :data:`lib.formats.WEIGHT_FORMATS`.
    m, n, k : int or array of int
        Rows of the activations (tokens), output features, input features; each >= 1.
    check : bool
        Check ``m``, ``n`` and ``k`` (``False`` for a caller that already holds whole numbers >= 1, as the
        serving model's inner loop does, like scipy's ``check_finite``).

    Returns
    -------
    float or numpy.ndarray
        A number in (0, 1]; see the module docstring for the interpolation and stand-in rules.

    >>> round(gemm_efficiency("h100-sxm", "bf16", 4096, 4096, 4096), 3)
    0.792
    >>> gemm_efficiency("h100-sxm", "bf16", 0, 4096, 4096)
    Traceback (most recent call last):
    ...
    ValueError: m must be >= 1, got 0
    """
    source = gemm_source(device, fmt)
    if check:
        m, n, k = (count(name, value, minimum=1) for name, value in (("m", m), ("n", n), ("k", k)))
    return result(_efficiency(source.table_device, source.table_format, *np.broadcast_arrays(m, n, k)))


def gemm_flops(device: str | Device, fmt: str, m, n, k, check: bool = True) -> float | np.ndarray:
    """Achieved FLOP/s of an ``m x k`` by ``k x n`` matrix product (``2 m n k`` FLOP) in ``fmt`` on ``device``.

    The efficiency of :func:`gemm_efficiency` (``check`` as there) times :func:`lib.formats.compute_peak`;
    ``m``, ``n`` and ``k`` broadcast, so a sweep over the token count is one call.

    >>> import numpy as np
    >>> np.round(gemm_flops("h100-sxm", "bf16", np.array([256, 512, 1024]), 4096, 4096) / 1e12, 1)
    array([412. , 644.1, 738.5])
    >>> round(gemm_flops("h100-sxm", "bf16", 1, 4096, 4096) / 1e12, 1)   # below the grid: held at m = 256
    412.0
    """
    return result(gemm_efficiency(device, fmt, m, n, k, check) * compute_peak(device, fmt))
