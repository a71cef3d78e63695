"""The pre-registered splits of chapter 11: which figures calibrate, which are held out, written before scoring.

Introduced in chapter 11 (does the model hold?). Each family of
measurements has one rule (:data:`SPLITS`), and every rule extrapolates: the
held-out figures lie away from the calibration ones along the axis the
family is about. A role function gives each published row its role,
``"calibration"``, ``"held-out"`` or ``"unscored"`` (with the reason), and its
distance from the calibration set. The rules read only a row's description
(sizes, degrees, models, engines), never its value or any error, and were
fixed before any error was computed; :data:`POST_HOC` lists the model forms
chosen after seeing residuals, which chapter 11 reports beside, never instead.

>>> allreduce_roles([2**k for k in range(10, 31)])[0][-5:].tolist()
['gap', 'calibration', 'calibration', 'calibration', 'calibration']
>>> decode_role({"dataset": "decode_ft_gpt20b_a100", "tp": 1, "pp": 1, "model": "GPT-20B", "batch": 8,
...              "status": "ok", "quantity": "request_latency"})
('calibration', 0.0, '')
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from lib.units import KiB, MiB
from lib.validation.models import modelled

__all__ = [
    "Split",
    "SPLITS",
    "POST_HOC",
    "BAND",
    "FLOOR_SPLIT",
    "FLOOR_SIZES_UP_TO",
    "CALIBRATION_DOUBLINGS",
    "HELD_OUT_DOUBLINGS",
    "allreduce_roles",
    "allreduce_floor_roles",
    "decode_role",
    "prefill_role",
    "load_role",
    "scored_quantity",
]

#: The message sizes of tensor-parallel steps, scored on their own: 8 KiB to 64 MiB.
BAND = (8 * KiB, 64 * MiB)
#: The all-reduce calibration regime: the largest size and the sizes up to this many doublings below it.
CALIBRATION_DOUBLINGS = 3
#: A held-out size lies at least this many doublings below the smallest calibration size.
HELD_OUT_DOUBLINGS = 4


@dataclass(frozen=True)
class Split:
    """One family's rule: what calibrates, which constants it fits, what is held out, and the goal."""

    family: str
    calibrate: str
    fitted: str
    held_out: str
    distance: str
    goal: float


#: The rule of each family, in words (the role functions below implement them).
SPLITS: dict[str, Split] = {
    "allreduce": Split(
        "all-reduce",
        "each sweep's large-message regime: its largest size and the three below it (16x range)",
        "one link-bandwidth scale per sweep; the floor is NCCL's own latency constants, not fitted",
        "every size at least 4 doublings below the smallest calibration size",
        "doublings below calibration",
        0.10,
    ),
    "decode": Split(
        "decode",
        "TP 1 only: GPT-20B (FasterTransformer), gpt-fast's one-GPU rows, and the batch-1 rows of each Argonne engine",
        "the fixed cost per layer of each engine (and the engine defaults' own)",
        "every figure at TP > 1, and every model with no TP 1 figure (Megatron-530B, the 70B models, Mixtral, Qwen2)",
        "doublings of the TP degree (log2 TP)",
        0.10,
    ),
    "prefill": Split(
        "prefill",
        "LMDeploy's TP 1 first-token latencies (Llama-2 7B and 13B, batch 1, mean)",
        "the compute efficiency (from the rise between 128- and 2,048-token prompts) and LMDeploy's cost per layer",
        "the same table at TP 2 (InternLM-20B) and TP 4 (Llama-2 70B)",
        "doublings of the TP degree (log2 TP)",
        0.15,
    ),
    "load": Split(
        "throughput under load",
        "one engine and GPU: LMDeploy on A100-80G at TP 1 (request throughput at a "
        "closed-loop concurrency of 64, 128 and 256)",
        "the CPU cost per scheduling step",
        "LMDeploy at TP 2 and 4; SGLang and vLLM on A100, H100 and H200 at TP 1 to 8 (throughput offline, "
        "time per output token under Poisson arrivals)",
        "0 same engine, 1 other engine, 2 other engine and GPU",
        0.15,
    ),
}

#: Model forms chosen after seeing residuals: reported beside the pre-registered ones, never instead of them.
POST_HOC = {
    "allreduce": "a floor per sweep, the smallest message's measured excess over the model, added to the "
    "pre-registered model (chosen after seeing that small messages measure the harness); held out: "
    "sizes 4 or more doublings from both calibration regimes",
}


#: The second all-reduce split's floor sizes: each sweep's sizes up to this one measure its floor.
FLOOR_SIZES_UP_TO = 1 * KiB

#: A second all-reduce split, written down (here and in chapter 11) after the first split's result was seen
#: and before any error under it was computed. Why: the first split calibrates only bandwidth-bound sizes, so
#: the fixed cost of a call (the harness's launch, the network's per-call latency) is never measured on the
#: system being predicted, and no datasheet or source file gives it. The floor is a separate measurement,
#: the time of the smallest messages, where the time is the floor; nothing else is fitted on the scored sizes.
FLOOR_SPLIT = Split(
    "all-reduce, floor measured apart",
    "the first split's large-message regime for the link scales, and each sweep's sizes of 1 KiB or less for its floor",
    "the two-level scales (NVLink per generation, network per type) on the large sizes; one floor per sweep, "
    "the median excess of its sizes up to 1 KiB over the scaled model; a sweep with no such size borrows the "
    "median floor of the sweeps of its harness (one node) or network (several nodes), or keeps NCCL's own "
    "latency constants where none has one",
    "every size the first split holds out that is larger than 1 KiB; the headline is the 8 KiB-64 MiB band",
    "doublings below calibration",
    0.10,
)


def allreduce_floor_roles(sizes: Any) -> tuple[np.ndarray, np.ndarray]:
    """:func:`allreduce_roles` under :data:`FLOOR_SPLIT`: sizes up to :data:`FLOOR_SIZES_UP_TO` become ``"floor"``.

    >>> allreduce_floor_roles([2**k for k in range(0, 31, 5)])[0].tolist()
    ['floor', 'floor', 'floor', 'held-out', 'held-out', 'gap', 'calibration']
    """
    roles, doublings = allreduce_roles(sizes)
    n = np.asarray(sizes, dtype=float)
    return np.where(n <= FLOOR_SIZES_UP_TO, "floor", roles), doublings


def allreduce_roles(sizes: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(roles, doublings)`` of a sweep's sizes: calibration regime, gap, held out, and doublings below it.

    ``doublings`` is ``log2(smallest calibration size / size)``, 0 or less in
    the calibration regime.
    """
    n = np.asarray(sizes, dtype=float)
    lowest = n.max() / 2**CALIBRATION_DOUBLINGS
    doublings = np.log2(lowest / n)
    roles = np.where(
        n >= lowest * (1 - 1e-12), "calibration", np.where(doublings >= HELD_OUT_DOUBLINGS - 1e-9, "held-out", "gap")
    )
    return roles, doublings


def _degree_distance(row: dict) -> float:
    return math.log2(row["tp"] * row["pp"])


def decode_role(row: dict) -> tuple[str, float, str]:
    """``(role, distance, reason)`` of a decode or static-batch row under the decode split."""
    distance = _degree_distance(row)
    if row.get("status", "ok") != "ok":
        return "unscored", distance, "out of memory in the source"
    if row["quantity"] not in ("request_latency", "decode_rate"):
        return "unscored", distance, "derived from the rate on the same line, not a measurement"
    if not modelled(row["model"]):
        return "unscored", distance, "model not in lib.validation.MODELS (per-layer attention shapes)"
    if row["tp"] * row["pp"] > 1:
        return "held-out", distance, ""
    if row["dataset"].startswith("decode_argonne") and row["batch"] != 1:
        return "unscored", distance, "TP 1 but not batch 1: the degree of the calibration, not held out"
    return "calibration", distance, ""


def prefill_role(row: dict) -> tuple[str, float, str]:
    """``(role, distance, reason)`` of a first-token row: batch-1 means, calibrating at TP 1."""
    distance = _degree_distance(row)
    if row["quantity"] != "ttft" or row["statistic"] != "mean" or row["batch"] != 1:
        return "unscored", distance, "not a batch-1 mean first-token latency (at batch > 1 it queues)"
    return ("calibration" if row["tp"] == 1 else "held-out"), distance, ""


def scored_quantity(row: dict) -> str | None:
    """The quantity the load split scores in a serving file (``None``: none of this row's).

    Closed loop: request throughput. Offline (rate ``inf``): output
    throughput. Open loop: the median time per output token (``itl`` for
    SGLang's raw outputs, where it streams every token).
    """
    rate = row.get("request_rate")
    if row["dataset"] == "serving_lmdeploy_a100":
        return "request_throughput"
    if row["dataset"] == "serving_sglang_h200_datacrunch" and not row["source"].endswith(".jsonl"):
        return None
    if rate == math.inf:
        return "output_throughput"
    return "tpot" if row["dataset"] == "serving_sglang_vllm060" else "itl"


def load_role(row: dict) -> tuple[str, float, str]:
    """``(role, distance, reason)`` of a serving row: LMDeploy at TP 1 calibrates, everything else is held out."""
    wanted = scored_quantity(row)
    if row["dataset"] == "serving_sglang_h200_datacrunch" and wanted is None:
        return "unscored", 1.0, "README table with no raw output (its online table repeats another source's figures)"
    if row["quantity"] != wanted or (row["quantity"] == "itl" and row["statistic"] != "median"):
        return "unscored", 0.0, f"not the quantity this source is scored on ({wanted})"
    if row["dataset"] == "serving_lmdeploy_a100":
        return ("calibration", 0.0, "") if row["tp"] == 1 else ("held-out", 0.0, "")
    other_gpu = "A100" not in row["gpu"]
    return "held-out", 2.0 if other_gpu else 1.0, ""
