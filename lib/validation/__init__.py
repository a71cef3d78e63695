"""Does the model hold? Published measurements, and the book's models held against them under fixed splits.

Introduced in chapter 11. One module per topic, all re-exported here:

* :mod:`lib.validation.schemas` and :mod:`lib.validation.published`: the files of ``data/published``, their
  columns and units, loading, and all-reduce sweeps in SI;
* :mod:`lib.validation.allreduce`: NCCL's model per published system, and its link scale fitted on some sizes;
* :mod:`lib.validation.models` and :mod:`lib.validation.sources`: the model behind each name, and how each
  source's engine is set up (all-reduce, CUDA graphs, prefill budget, memory), fixed before scoring;
* :mod:`lib.validation.requests` and :mod:`lib.validation.predict`: what a figure measured (a static batch, a
  first token, a loaded server), priced with :mod:`lib.serving`;
* :mod:`lib.validation.splits`: the pre-registered rule of each family (what calibrates, what is held out);
* :mod:`lib.validation.fitting` and :mod:`lib.validation.calibrate`: one-number fits, and
  :func:`calibrate_serving`, which refits the engine defaults of :mod:`lib.serving.engine`;
* :mod:`lib.validation.families` and :mod:`lib.validation.report`: the four comparisons, their scores and the
  summary ``python -m lib.validation`` prints.

>>> rows = load_published("allreduce_a100_8gpu_mle")
>>> sorted({row["unit"] for row in rows})
['GB/s', 'us']
>>> SPLITS["decode"].goal, SPLITS["load"].goal
(0.1, 0.15)
"""

from lib.validation.allreduce import (
    SYSTEMS,
    UNMODELLED,
    LineFit,
    NCCLFit,
    Prediction,
    System,
    calibrate_efficiency,
    calibrate_line,
    calibrate_nccl,
    median_abs_error,
    predict_nccl,
    relative_error,
    scaled_link,
)
from lib.validation.calibrate import (
    KERNEL_MODELS,
    ServingCalibration,
    calibrate_serving,
    fit_compute_efficiency,
    measured_memory_efficiency,
    slope_pairs,
)
from lib.validation.families import Validation, validate_decode, validate_load, validate_prefill
from lib.validation.fitting import fit_overhead, minimise
from lib.validation.models import GPT_20B, INTERNLM_20B, LLAMA_3_405B, MEGATRON_530B, MODELS, model_config, modelled
from lib.validation.predict import measured, predict_row, workload
from lib.validation.published import DATA_DIR, AllReduceSweep, allreduce_sweep, load_published, rounding_error
from lib.validation.report import (
    TIME_QUANTITIES,
    Score,
    capacity_ratios,
    score,
    summary,
    validate_algorithms,
    validate_allreduce,
    validations,
)
from lib.validation.requests import (
    Workload,
    batch_prefill_time,
    batch_time,
    capacity,
    first_token_time,
    loaded_step,
    open_loop_batch,
    waves,
)
from lib.validation.schemas import (
    ALGORITHM_DATASETS,
    ALLREDUCE_DATASETS,
    BATCH_DATASETS,
    COLLECTIVE_COLUMNS,
    COLLECTIVE_DATASETS,
    DATASETS,
    DECODE_COLUMNS,
    DECODE_DATASETS,
    DEVICE_COLUMNS,
    DEVICE_DATASETS,
    ENGINE_ALLREDUCE_DATASETS,
    HARNESSES,
    LOAD_DATASETS,
    NOT_RECHECKABLE,
    QUANTITY_UNITS,
    SCHEMAS,
    SERVING_COLUMNS,
    TTFT_DATASETS,
    UNIT_SI,
    schema,
)
from lib.validation.sources import SOURCES, Source, cluster_for, engine_for, source
from lib.validation.splits import BAND, POST_HOC, SPLITS, Split, allreduce_roles, decode_role, load_role, prefill_role

__all__ = [
    "DATA_DIR",
    "COLLECTIVE_COLUMNS",
    "HARNESSES",
    "DECODE_COLUMNS",
    "SERVING_COLUMNS",
    "DEVICE_COLUMNS",
    "ALLREDUCE_DATASETS",
    "ALGORITHM_DATASETS",
    "ENGINE_ALLREDUCE_DATASETS",
    "COLLECTIVE_DATASETS",
    "DECODE_DATASETS",
    "BATCH_DATASETS",
    "TTFT_DATASETS",
    "LOAD_DATASETS",
    "DEVICE_DATASETS",
    "DATASETS",
    "SCHEMAS",
    "NOT_RECHECKABLE",
    "QUANTITY_UNITS",
    "UNIT_SI",
    "schema",
    "load_published",
    "AllReduceSweep",
    "allreduce_sweep",
    "rounding_error",
    "System",
    "SYSTEMS",
    "UNMODELLED",
    "scaled_link",
    "Prediction",
    "predict_nccl",
    "NCCLFit",
    "calibrate_nccl",
    "LineFit",
    "calibrate_line",
    "calibrate_efficiency",
    "relative_error",
    "median_abs_error",
    "GPT_20B",
    "MEGATRON_530B",
    "INTERNLM_20B",
    "LLAMA_3_405B",
    "MODELS",
    "model_config",
    "modelled",
    "Source",
    "SOURCES",
    "source",
    "cluster_for",
    "engine_for",
    "Workload",
    "batch_prefill_time",
    "batch_time",
    "waves",
    "first_token_time",
    "capacity",
    "loaded_step",
    "open_loop_batch",
    "measured",
    "predict_row",
    "workload",
    "Split",
    "SPLITS",
    "POST_HOC",
    "BAND",
    "allreduce_roles",
    "decode_role",
    "prefill_role",
    "load_role",
    "minimise",
    "fit_overhead",
    "measured_memory_efficiency",
    "slope_pairs",
    "fit_compute_efficiency",
    "ServingCalibration",
    "calibrate_serving",
    "KERNEL_MODELS",
    "Validation",
    "validate_decode",
    "validate_prefill",
    "validate_load",
    "validate_allreduce",
    "validate_algorithms",
    "validations",
    "Score",
    "score",
    "summary",
    "TIME_QUANTITIES",
    "capacity_ratios",
]

# Serving splits (issue 24): the files of disaggregated, speculative and expert-parallel serving.
from lib.validation.schemas import (  # noqa: E402
    DISAGG_DATASETS,
    EXPERT_DATASETS,
    PD_WORDS,
    PER_WORDS,
    PHASE_WORDS,
    SPECULATIVE_DATASETS,
    SPLIT_COLUMNS,
    SPLIT_DATASETS,
)

__all__ += [
    "SPLIT_COLUMNS",
    "DISAGG_DATASETS",
    "SPECULATIVE_DATASETS",
    "EXPERT_DATASETS",
    "SPLIT_DATASETS",
    "PD_WORDS",
    "PHASE_WORDS",
    "PER_WORDS",
]
