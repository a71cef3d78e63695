"""The held-out comparisons of chapter 11, as records: what was fitted on what, and what was predicted.

Introduced in chapter 11 (does the model hold?); ``python -m lib.validation``
prints their medians. The designs are fixed here, before any error is seen
by a reader:

* **all-reduce** (:func:`validate_allreduce`): for every modelled sweep, the
  smallest and largest message calibrate; every other size is held out. The
  uncalibrated model is compared at every size.
* **decode** (:func:`validate_decode`): FasterTransformer's efficiencies come
  from GPT-20B on one GPU and predict GPT-20B on 2, 4 and 8 GPUs and every
  Megatron-530B figure (16 and 32 GPUs, or 8 x 3 with pipelining);
  gpt-fast's memory efficiency comes from its three one-GPU rows and
  predicts every row on 2, 4 and 8 GPUs. ``overhead=True`` fits a per-layer
  overhead as well, on 1 and 8 GPUs, and holds out 2 and 4 GPUs and the
  models without both.

>>> records = validate_allreduce()
>>> held = [r["calibrated_error"] for r in records if r["role"] == "held-out"]
>>> len(held), round(median_abs_error(held), 3)
(179, 0.118)
"""

from __future__ import annotations

from lib.serving import Cluster, Layout
from lib.validation.allreduce import (SYSTEMS, calibrate_line, calibrate_nccl, median_abs_error, predict_nccl,
                                      relative_error)
from lib.validation.decode import (fit_efficiencies, model_config, request_terms, request_time, token_terms,
                                   token_time)
from lib.validation.published import allreduce_sweep, load_published

__all__ = ["FT_CLUSTER", "GPTFAST_CLUSTER", "GPTFAST_CONTEXT", "validate_allreduce", "validate_decode",
           "decode_rows", "summary"]

#: FasterTransformer's A100 SuperPod: 8 GPUs per node on NVSwitch, 8 x 200 Gb/s InfiniBand ports per node.
FT_CLUSTER = Cluster("a100-80gb", devices_per_node=8, inter_link="ib-hdr")
#: gpt-fast's 8 x A100-80GB (modelled with the book's NVSwitch link; the source says "hybrid cube mesh").
GPTFAST_CLUSTER = Cluster("a100-80gb")
#: Context at the middle of a gpt-fast generation: 5 prompt tokens plus half of the CLI's default 200.
GPTFAST_CONTEXT = 5 + 200 / 2


def validate_allreduce() -> list[dict]:
    """One record per (modelled sweep, message size): measured and predicted seconds, errors and role."""
    records = []
    for name in SYSTEMS:
        sweep = allreduce_sweep(name)
        fit, line = calibrate_nccl(sweep), calibrate_line(sweep)
        as_is = predict_nccl(sweep.size, name, sweep.gpus)
        calibrated = predict_nccl(sweep.size, name, sweep.gpus, fit.efficiency, fit.overhead)
        straight = line.time(sweep.size, sweep.gpus)
        for i, size in enumerate(sweep.size):
            role = "calibration" if i in (0, len(sweep.size) - 1) else "held-out"
            records.append(dict(
                dataset=name, size=float(size), measured=float(sweep.time[i]), derived=bool(sweep.derived[i]),
                as_is=float(as_is.time[i]), calibrated=float(calibrated.time[i]), line=float(straight[i]),
                as_is_error=relative_error(as_is.time[i], sweep.time[i]),
                calibrated_error=relative_error(calibrated.time[i], sweep.time[i]),
                line_error=relative_error(straight[i], sweep.time[i]),
                algorithm=str(calibrated.algorithm[i]), protocol=str(calibrated.protocol[i]),
                efficiency=fit.efficiency, overhead=fit.overhead, role=role))
    return records


def decode_rows(dataset: str) -> list[dict]:
    """The measured rows of a decode file that the model can be compared with, each with ``seconds``.

    FasterTransformer rows give seconds per request; gpt-fast rows seconds
    per token (``1 / rate``). Out-of-memory cells and gpt-fast's derived
    bandwidth column are left out.
    """
    rows = []
    for row in load_published(dataset):
        if row["status"] != "ok" or row["quantity"] == "reported_bandwidth":
            continue
        seconds = row["value_si"] if row["quantity"] == "request_latency" else 1.0 / row["value_si"]
        rows.append(dict(row, seconds=seconds, bytes_per_element=1 if row["precision"].startswith("int8") else 2))
    return rows


def _predict(row: dict, fit) -> float:
    eff = dict(memory_efficiency=fit.memory_efficiency, compute_efficiency=fit.compute_efficiency,
               layer_overhead=fit.layer_overhead)
    config = model_config(row["model"])
    layout = Layout(tp=row["tp"], pp=row["pp"])
    if row["quantity"] == "request_latency":
        return request_time(config, FT_CLUSTER, layout, row["batch"], row["input_tokens"], row["output_tokens"],
                            **eff)
    return token_time(config, GPTFAST_CLUSTER, layout, 1, GPTFAST_CONTEXT, row["bytes_per_element"],
                      kv_bytes_per_element=2, **eff)


def _terms(row: dict) -> tuple:
    config = model_config(row["model"])
    if row["quantity"] == "request_latency":
        return request_terms(config, FT_CLUSTER, row["tp"], row["batch"], row["input_tokens"], row["output_tokens"])
    return token_terms(config, GPTFAST_CLUSTER, row["tp"], 1, GPTFAST_CONTEXT, row["bytes_per_element"], 2)


def validate_decode(overhead: bool = False) -> list[dict]:
    """One record per measured decode figure: measured and predicted seconds, error, role and the fit used."""
    ft = decode_rows("decode_ft_gpt20b_a100") + decode_rows("decode_ft_megatron530b_a100")
    gf = decode_rows("decode_gptfast_a100")
    degrees = (1, 8) if overhead else (1,)
    records = []
    for family, rows, compute in (("FasterTransformer", ft, True), ("gpt-fast", gf, False)):
        if family == "FasterTransformer":
            calibrate = [r for r in rows if r["dataset"] == "decode_ft_gpt20b_a100" and r["tp"] in degrees]
        else:
            both = {r["model"] + r["precision"] for r in rows if r["tp"] == 1}
            calibrate = [r for r in rows if r["tp"] in degrees and r["model"] + r["precision"] in both]
        fit = fit_efficiencies([_terms(r) for r in calibrate], [r["seconds"] for r in calibrate],
                               fit_compute=compute, fit_overhead=overhead)
        chosen = {id(r) for r in calibrate}
        for row in rows:
            predicted = _predict(row, fit)
            records.append(dict(
                dataset=row["dataset"], model=row["model"].split(" (")[0], precision=row["precision"], tp=row["tp"],
                pp=row["pp"], batch=row["batch"], input_tokens=row["input_tokens"],
                output_tokens=row["output_tokens"], measured=row["seconds"], predicted=predicted,
                error=relative_error(predicted, row["seconds"]),
                role="calibration" if id(row) in chosen else "held-out", family=family,
                memory_efficiency=fit.memory_efficiency, compute_efficiency=fit.compute_efficiency,
                layer_overhead=fit.layer_overhead))
    return records


def summary() -> dict:
    """The medians chapter 11 reports: ``|error|`` over held-out figures (and over every size, as is)."""
    ar = validate_allreduce()
    dec, ext = validate_decode(), validate_decode(overhead=True)

    def held(records, key):
        return median_abs_error([r[key] for r in records if r["role"] == "held-out"])

    return {
        "allreduce_calibrated": held(ar, "calibrated_error"),
        "allreduce_line": held(ar, "line_error"),
        "allreduce_as_is": median_abs_error([r["as_is_error"] for r in ar]),
        "decode": held(dec, "error"),
        "decode_with_overhead": held(ext, "error"),
        "allreduce_held_out": sum(r["role"] == "held-out" for r in ar),
        "decode_held_out": sum(r["role"] == "held-out" for r in dec),
    }
