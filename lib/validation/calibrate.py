"""Where the serving engine's constants come from: one measured, two fitted on one GPU, refitted from the data.

Introduced in chapter 11 (does the model hold?). :func:`calibrate_serving`
reproduces the defaults of :mod:`lib.serving.engine` from rows of
``data/published``, in the order the mechanisms allow:

1. ``memory_efficiency`` is **measured**: BabelStream's copy rate on an
   A100-SXM4-40GB of Polaris over the datasheet's 1,555 GB/s
   (``stream_a100_40gb_polaris``).
2. The matrix products run at the throughput measured for their shape
   (:mod:`lib.kernels`): nothing is fitted. The single-fraction model
   (``kernels="single"``) instead **fits** ``compute_efficiency`` on the
   *rise* of LMDeploy's TP 1 first-token latency from a 128- to a
   2,048-token prompt (Llama-2 7B and 13B, A100-80G, batch 1, mean): both
   prompts are one prefill step, so the fixed costs cancel in the difference
   and only the arithmetic is left (:func:`fit_compute_efficiency`).
3. ``layer_overhead`` is **fitted**, given both, on vLLM's TP 1 batch-1
   static batches of Argonne's LLM-Inference-Bench (:func:`fit_overhead`).

``step_overhead`` stays 0 by mechanism (asynchronous scheduling), and the
all-reduce floor is NCCL's own constants and the engine kernels' fit to
vLLM's benchmark (:mod:`lib.collectives.engine`).

>>> cal = calibrate_serving(kernels="single")
>>> round(cal.memory_efficiency, 4), round(cal.compute_efficiency, 3), round(cal.layer_overhead * 1e6, 1)
(0.9005, 0.752, 110.6)
>>> cal = calibrate_serving()
>>> cal.compute_efficiency is None, round(cal.layer_overhead * 1e6, 1)
(True, 110.4)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lib import _checks
from lib.hardware import DEVICES
from lib.serving import Layout
from lib.units import B, s
from lib.validation.fitting import fit_overhead, minimise
from lib.validation.models import model_config
from lib.validation.predict import predict_row
from lib.validation.published import load_published
from lib.validation.requests import first_token_time
from lib.validation.sources import cluster_for, engine_for
from lib.validation.splits import decode_role

__all__ = [
    "STREAM_KERNEL",
    "SLOPE_PROMPTS",
    "KERNEL_MODELS",
    "measured_memory_efficiency",
    "slope_pairs",
    "fit_compute_efficiency",
    "ServingCalibration",
    "calibrate_serving",
]

#: The BabelStream kernel whose rate is the achieved memory bandwidth (a read and a write per element, no FLOPs).
STREAM_KERNEL = "Copy"
#: The prompt lengths whose first-token latencies give the compute efficiency.
SLOPE_PROMPTS = (128, 2048)
#: How the matrix products are priced: "measured" (the GEMM tables of :mod:`lib.kernels`, the engine's default) or
#: "single" (one fitted fraction of the peak for every product, the book's earlier model).
KERNEL_MODELS = ("measured", "single")


def measured_memory_efficiency(rows: Sequence[dict] | None = None) -> float:
    """BabelStream's copy rate over the A100-40GB datasheet bandwidth.

    >>> round(measured_memory_efficiency(), 4)
    0.9005
    """
    rows = load_published("stream_a100_40gb_polaris") if rows is None else rows
    copy = [r for r in rows if r["note"].startswith(f"kernel {STREAM_KERNEL};")]
    if len(copy) != 1:
        raise ValueError(f"rows must hold one BabelStream {STREAM_KERNEL} figure, got {len(copy)}")
    return copy[0]["value_si"] * (B / s) / DEVICES["a100-40gb"].memory_bandwidth


def slope_pairs(rows: Sequence[dict]) -> list[tuple[dict, dict]]:
    """``(128-token row, 2,048-token row)`` pairs of the same model and output length, TP 1, batch 1, mean."""
    picked = [
        r
        for r in rows
        if r["quantity"] == "ttft"
        and r["statistic"] == "mean"
        and r["batch"] == 1
        and r["tp"] == 1
        and r["input_tokens"] in SLOPE_PROMPTS
    ]
    short = {(r["model"], r["output_tokens"]): r for r in picked if r["input_tokens"] == SLOPE_PROMPTS[0]}
    return [
        (short[(r["model"], r["output_tokens"])], r)
        for r in picked
        if r["input_tokens"] == SLOPE_PROMPTS[1] and (r["model"], r["output_tokens"]) in short
    ]


def fit_compute_efficiency(rows: Sequence[dict], memory_efficiency: float) -> float:
    """The compute efficiency whose predicted rise ``T(2048) - T(128)`` best matches the measured ones (log LSQ)."""
    pairs = slope_pairs(rows)
    if not pairs:
        raise ValueError("rows must hold TP 1 batch-1 mean first-token latencies at 128 and 2,048 tokens")
    em = _checks.scalar("memory_efficiency", memory_efficiency, _checks.fraction)

    def rise(pair: tuple[dict, dict], ec: float) -> float:
        short, long_ = pair
        engine = engine_for(long_, memory_efficiency=em, compute_efficiency=ec, layer_overhead=0.0)
        config, cluster = model_config(long_["model"]), cluster_for(long_)
        return first_token_time(config, cluster, Layout(), engine, long_["input_tokens"]) - first_token_time(
            config, cluster, Layout(), engine, short["input_tokens"]
        )

    measured = np.array([b["value_si"] - a["value_si"] for a, b in pairs])

    def loss(grid: np.ndarray) -> np.ndarray:
        return np.array([np.sum(np.log([rise(p, float(ec)) for p in pairs] / measured) ** 2) for ec in grid])

    return minimise(loss, 0.05, 1.0, log=True)


@dataclass(frozen=True)
class ServingCalibration:
    """The refitted constants (``compute_efficiency`` ``None`` with measured kernels), with the figures each came
    from (counts) and the fit's rms log error."""

    memory_efficiency: float
    compute_efficiency: float | None
    layer_overhead: float
    slope_pairs: int
    overhead_rows: int
    overhead_rms_log_error: float


def _overhead_rows(rows: Sequence[dict]) -> list[dict]:
    return [r for r in rows if decode_role(r)[0] == "calibration"]


def check_kernels(kernels: str) -> str:
    """``kernels`` if it is one of :data:`KERNEL_MODELS`, else a ValueError naming it."""
    if kernels not in KERNEL_MODELS:
        raise ValueError(f"kernels must be one of {KERNEL_MODELS}, got {kernels!r}")
    return kernels


def calibrate_serving(
    stream: Sequence[dict] | None = None,
    ttft: Sequence[dict] | None = None,
    batches: Sequence[dict] | None = None,
    kernels: str = "measured",
) -> ServingCalibration:
    """Refit the engine's defaults from ``data/published`` (each argument defaults to its file's rows).

    ``stream``: BabelStream rows; ``ttft``: LMDeploy's first-token rows;
    ``batches``: Argonne's vLLM rows (only the TP 1 batch-1 ones enter the fit);
    ``kernels``: one of :data:`KERNEL_MODELS`.
    """
    em = measured_memory_efficiency(stream)
    ttft_rows = load_published("ttft_lmdeploy_a100") if ttft is None else ttft
    ec = fit_compute_efficiency(ttft_rows, em) if check_kernels(kernels) == "single" else None
    rows = _overhead_rows(load_published("decode_argonne_vllm_a100") if batches is None else batches)
    if not rows:
        raise ValueError("batches must hold vLLM's TP 1 batch-1 rows")
    measured = np.array([r["value_si"] for r in rows])

    def predict(o: float) -> np.ndarray:
        return np.array([predict_row(r, memory_efficiency=em, compute_efficiency=ec, layer_overhead=o) for r in rows])

    o = fit_overhead(predict, measured)
    rms = math.sqrt(float(np.mean(np.log(predict(o) / measured) ** 2)))
    return ServingCalibration(em, ec, o, len(slope_pairs(ttft_rows)), len(rows), rms)
