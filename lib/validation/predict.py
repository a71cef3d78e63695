"""One published row in, the serving model's prediction of it out, in the row's own terms (SI).

Introduced in chapter 11 (does the model hold?). :func:`predict_row` reads
what a row measured (a whole request, a static batch, a rate, a first
token, a loaded server's throughput or time per token), builds the engine
of its source (:mod:`lib.validation.sources`) with the fixed costs given,
and prices it with :mod:`lib.validation.requests`. :func:`measured` gives
the figure in the same terms: seconds, except gpt-fast's rate (seconds per
token) and the throughputs (per second).

>>> from lib.validation.sources import load_row
>>> row = load_row("decode_ft_gpt20b_a100")
>>> row["batch"], row["input_tokens"], row["output_tokens"], measured(row)       # FasterTransformer, TP 1
(1, 20, 8, 0.225)
>>> round(predict_row(row, layer_overhead=0.0), 3)              # no fixed cost: the roofline alone
0.199
"""

from __future__ import annotations

import math
from typing import Any

from lib.serving import Layout
from lib.validation.models import model_config
from lib.validation.published import load_published
from lib.validation.requests import Workload, batch_time, capacity, first_token_time, loaded_step, open_loop_batch
from lib.validation.schemas import LOAD_DATASETS
from lib.validation.sources import cluster_for, engine_for, source

__all__ = ["GPTFAST_PROMPT", "GPTFAST_OUTPUT", "SHAREGPT", "workload", "measured", "predict_row"]

#: gpt-fast's prompt and the command line's new tokens (``--max_new_tokens 200``, generate.py line 453).
GPTFAST_PROMPT, GPTFAST_OUTPUT = 5, 200
#: sglang.bench_serving's ShareGPT sample by number of prompts: (input, output) token totals, from the raw
#: outputs of serving_sglang_h200_datacrunch (the same client, seeded sampling, a Llama 3 tokenizer).
SHAREGPT = {1200: (269081, 226901), 2400: (540779, 461874), 2000: (448102, 383064)}


def _sibling(row: dict, quantity: str) -> float:
    """The value of another quantity printed on the same source line as ``row``."""
    for other in load_published(row["dataset"]):
        if (other["source"], other["source_line"], other["quantity"]) == (row["source"], row["source_line"], quantity):
            return other["value_si"]
    raise ValueError(f"row: no {quantity} printed beside it at {row['source']} line {row['source_line']}")


def workload(row: dict) -> Workload:
    """Mean prompt and output tokens of a serving row's request set.

    From the row's own token totals where printed; for LMDeploy's ShareGPT
    runs from the same line's token throughputs (total and output tokens per
    request: the wall time cancels); for SGLang's ShareGPT runs from
    :data:`SHAREGPT`, the output mean from the row's own line when offline.
    """
    if row["total_input_tokens"]:
        return Workload(row["total_input_tokens"] / row["num_prompts"], row["total_output_tokens"] / row["num_prompts"])
    if row["dataset"] == "serving_lmdeploy_a100":
        rps = _sibling(row, "request_throughput")
        out, total = _sibling(row, "output_throughput"), _sibling(row, "total_throughput")
        return Workload((total - out) / rps, out / rps)
    if row["request_rate"] == math.inf:
        prompt = SHAREGPT[2000][0] / 2000
        return Workload(prompt, _sibling(row, "output_throughput") / _sibling(row, "request_throughput"))
    inputs, outputs = SHAREGPT[row["num_prompts"]]
    return Workload(inputs / row["num_prompts"], outputs / row["num_prompts"])


def measured(row: dict) -> float:
    """The row's figure in the terms :func:`predict_row` uses (gpt-fast's rate as seconds per token)."""
    return 1.0 / row["value_si"] if row["quantity"] == "decode_rate" else row["value_si"]


def _scheduling_steps(row: dict) -> int:
    """Steps per scheduling decision: vLLM 0.6.0's ``--num-scheduler-steps 10``, otherwise 1."""
    return 10 if "--num-scheduler-steps 10" in row["software"] else 1


def predict_row(row: dict, **fixed: Any) -> float:
    """The model's figure for ``row`` (see the module notes); ``fixed`` sets the engine's fixed costs.

    A ``step_overhead`` is spread over the steps of one scheduling decision
    (vLLM 0.6.0 schedules ten at a time). Raises a ValueError where the
    model does not fit the assumed device.
    """
    config = model_config(row["model"])
    layout, cluster, src = Layout(tp=row["tp"], pp=row["pp"]), cluster_for(row), source(row["dataset"])
    if "step_overhead" in fixed:
        fixed = dict(fixed, step_overhead=fixed["step_overhead"] / _scheduling_steps(row))
    engine = engine_for(row, **fixed)
    q = row["quantity"]
    if q == "ttft":
        return first_token_time(config, cluster, layout, engine, row["input_tokens"])
    if q == "decode_rate":
        return batch_time(config, cluster, layout, engine, 1, GPTFAST_PROMPT, GPTFAST_OUTPUT) / GPTFAST_OUTPUT
    if q == "request_latency":
        return batch_time(
            config,
            cluster,
            layout,
            engine,
            row["batch"],
            row["input_tokens"],
            row["output_tokens"],
            src.budget,
            src.loop_steps,
            src.memory_waves,
        )
    if row["dataset"] not in LOAD_DATASETS:
        raise ValueError(f"row: no prediction for quantity {q!r} outside a serving benchmark")
    load = workload(row)
    if q in ("request_throughput", "output_throughput"):
        batch = min(row["concurrency"] or math.inf, capacity(config, cluster, layout, engine, load))
        tokens = batch / float(loaded_step(config, cluster, layout, engine, batch, load))
        return tokens / load.output_tokens if q == "request_throughput" else tokens
    if q in ("tpot", "itl"):
        batch = open_loop_batch(config, cluster, layout, engine, load, row["request_rate"])
        return float(loaded_step(config, cluster, layout, engine, batch, load))
    raise ValueError(f"row: no prediction for quantity {q!r}")
