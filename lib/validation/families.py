"""Chapter 11's four comparisons, each under its pre-registered split: what was fitted on what, and the errors.

Introduced in chapter 11 (does the model hold?). Each ``validate_*``
function takes the published rows (every file of its family by default),
gives each row its role by the rule of :mod:`lib.validation.splits`, fits
the family's constants on the calibration rows *only*, and predicts every
row. It returns a :class:`Validation`: one record per row (measured,
predicted, signed error ``e = predicted / measured - 1``, role, distance from
calibration) and the fitted constants by name. Removing every held-out row
from the input leaves the constants unchanged (``tests/unit/lib/validation/test_validation.py``
checks it).

Each takes ``kernels`` (:data:`lib.validation.calibrate.KERNEL_MODELS`):
``"measured"`` prices the matrix products by the GEMM tables, ``"single"``
by one compute efficiency fitted on the prefill family's calibration rows.

>>> v = validate_prefill()
>>> sorted(v.constants)
['layer_overhead.LMDeploy']
>>> sorted(validate_prefill(kernels="single").constants)
['compute_efficiency', 'layer_overhead.LMDeploy']
>>> {r["role"] for r in v.records if r["tp"] > 1} == {"held-out", "unscored"}
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from lib.measure.stats import relative_error
from lib.validation.calibrate import calibrate_serving, check_kernels, fit_compute_efficiency
from lib.validation.fitting import fit_overhead
from lib.validation.predict import measured, predict_row
from lib.validation.published import load_published
from lib.validation.schemas import BATCH_DATASETS, DECODE_DATASETS, LOAD_DATASETS, TTFT_DATASETS
from lib.validation.sources import source
from lib.validation.splits import decode_role, load_role, prefill_role

__all__ = ["Validation", "rows_of", "score_rows", "validate_decode", "validate_prefill", "validate_load"]


@dataclass(frozen=True)
class Validation:
    """One family's records (one dict per published row) and the constants fitted on its calibration rows."""

    family: str
    records: tuple
    constants: dict

    def held_out(self, key: str = "error", **match: Any) -> list[float]:
        """``key`` of every held-out record whose fields equal ``match``."""
        return [
            r[key] for r in self.records if r["role"] == "held-out" and all(r.get(k) == v for k, v in match.items())
        ]


def rows_of(datasets: Sequence[str]) -> list[dict]:
    """Every row of ``datasets``, in order."""
    return [row for name in datasets for row in load_published(name)]


def _record(row: dict, role: tuple[str, float, str], predicted: float | None, **extra: Any) -> dict:
    value = measured(row) if row["value_si"] else None
    error = None if predicted is None or value is None else float(relative_error(predicted, value))
    kind, distance, reason = role
    if kind != "unscored" and error is None:
        kind, reason = "unscored", "does not fit the assumed device"
    return dict(
        dataset=row["dataset"],
        model=row["model"].split(" (")[0],
        gpu=row["gpu"],
        tp=row["tp"],
        pp=row["pp"],
        batch=row["batch"],
        input_tokens=row["input_tokens"],
        output_tokens=row["output_tokens"],
        quantity=row["quantity"],
        measured=value,
        predicted=predicted,
        error=error,
        role=kind,
        distance=distance,
        reason=reason,
        **extra,
    )


def _predict(row: dict, **fixed: Any) -> float | None:
    try:
        return predict_row(row, **fixed)
    except ValueError:
        return None


def score_rows(rows: Sequence[dict], role: Callable[[dict], tuple], fixed: dict, **extra: Any) -> list[dict]:
    """One record per row: its role, the prediction with the ``fixed`` engine costs, and the error.

    Unscored rows are predicted too where the model can (their errors
    explain residuals; they never enter a score or a fit).
    """
    return [_record(row, role(row), _predict(row, **fixed), **extra) for row in rows]


def _fit(rows: Sequence[dict], name: str, **fixed: Any) -> float:
    """The fixed cost ``name`` fitted on ``rows`` (all calibration rows of one engine), the others held."""
    values = np.array([measured(r) for r in rows])
    return fit_overhead(lambda o: np.array([predict_row(r, **fixed, **{name: o}) for r in rows]), values)


@lru_cache(maxsize=2)
def _defaults(kernels: str) -> tuple[float, float | None, float]:
    cal = calibrate_serving(kernels=kernels)
    return cal.memory_efficiency, cal.compute_efficiency, cal.layer_overhead


def _by_engine(rows: Sequence[dict]) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = {}
    for row in rows:
        groups.setdefault(source(row["dataset"]).engine, []).append(row)
    return groups


def validate_decode(rows: Sequence[dict] | None = None, kernels: str = "measured") -> Validation:
    """The decode split: each engine's cost per layer fitted on its TP 1 rows; TP > 1 and other models held out.

    The efficiencies are the refitted engine defaults (:func:`calibrate_serving`).
    """
    rows = rows_of(DECODE_DATASETS + BATCH_DATASETS) if rows is None else list(rows)
    em, ec, _ = _defaults(check_kernels(kernels))
    constants, records = {}, []
    for engine, group in _by_engine(rows).items():
        cal = [r for r in group if decode_role(r)[0] == "calibration"]
        o = _fit(cal, "layer_overhead", memory_efficiency=em, compute_efficiency=ec) if cal else None
        constants[f"layer_overhead.{engine}"] = o
        records += score_rows(
            group,
            decode_role,
            dict(memory_efficiency=em, compute_efficiency=ec, layer_overhead=o),
            engine=engine,
            layer_overhead=o,
        )
    return Validation("decode", tuple(records), constants)


def validate_prefill(rows: Sequence[dict] | None = None, kernels: str = "measured") -> Validation:
    """The prefill split: LMDeploy's cost per layer (and with ``kernels="single"`` the compute efficiency) from
    TP 1; TP 2 and 4 held out."""
    rows = rows_of(TTFT_DATASETS) if rows is None else list(rows)
    em = _defaults(check_kernels(kernels))[0]
    cal = [r for r in rows if prefill_role(r)[0] == "calibration"]
    ec = fit_compute_efficiency(cal, em) if kernels == "single" else None
    o = _fit(cal, "layer_overhead", memory_efficiency=em, compute_efficiency=ec)
    records = score_rows(
        rows, prefill_role, dict(memory_efficiency=em, compute_efficiency=ec, layer_overhead=o), engine="LMDeploy"
    )
    fitted = {"layer_overhead.LMDeploy": o} if ec is None else {"compute_efficiency": ec, "layer_overhead.LMDeploy": o}
    return Validation("prefill", tuple(records), fitted)


def _load_fixed(row: dict, lmdeploy_layer: float, step: float, kernels: str) -> dict:
    em, ec, layer = _defaults(kernels)
    src = source(row["dataset"])
    return dict(
        memory_efficiency=em,
        compute_efficiency=ec,
        layer_overhead=lmdeploy_layer if src.engine == "LMDeploy" else layer,
        step_overhead=0.0 if src.async_scheduling else step,
    )


def validate_load(
    rows: Sequence[dict] | None = None, prefill: Validation | None = None, kernels: str = "measured"
) -> Validation:
    """The load split: the CPU cost per step fitted on LMDeploy at TP 1 (A100-80G); every other engine held out.

    LMDeploy's cost per layer comes from the prefill family (its TP 1 first
    tokens); the other engines take the refitted default. Each record also
    carries ``predicted_default`` and ``error_default``: the same prediction
    with no cost per step (the engine default), reported beside.
    """
    rows = rows_of(LOAD_DATASETS) if rows is None else list(rows)
    check_kernels(kernels)
    lmdeploy_layer = (prefill or validate_prefill(kernels=kernels)).constants["layer_overhead.LMDeploy"]
    cal = [r for r in rows if load_role(r)[0] == "calibration"]
    per_request = 1 / np.array([measured(r) for r in cal])  # seconds per request: affine in the cost
    step = fit_overhead(
        lambda o: 1 / np.array([predict_row(r, **_load_fixed(r, lmdeploy_layer, o, kernels)) for r in cal]),
        per_request,
        upper=0.1,
    )
    records = []
    for row in rows:
        predicted = _predict(row, **_load_fixed(row, lmdeploy_layer, step, kernels))
        default = None if predicted is None else _predict(row, **_load_fixed(row, lmdeploy_layer, 0.0, kernels))
        rec = _record(
            row,
            load_role(row),
            predicted,
            engine=row["software"].split(",")[0].split(" (")[0],
            statistic=row["statistic"],
            concurrency=row["concurrency"],
            rate=row["request_rate"],
            predicted_default=default,
        )
        rec["error_default"] = None if default is None else float(relative_error(default, rec["measured"]))
        records.append(rec)
    return Validation("load", tuple(records), {"step_overhead": step, "layer_overhead.LMDeploy": lmdeploy_layer})
