"""Does the model hold? Published measurements, and the book's models held against them.

Introduced in chapter 11. One module per topic, all re-exported here:

* :mod:`lib.validation.published`: the CSV files of ``data/published`` (loading, all-reduce sweeps in SI);
* :mod:`lib.validation.allreduce`: NCCL's model per published system, calibrated on two message sizes;
* :mod:`lib.validation.decode`: the serving model for FasterTransformer requests and gpt-fast tokens;
* :mod:`lib.validation.report`: the held-out comparisons and their medians (``python -m lib.validation``).

>>> rows = load_published("allreduce_a100_8gpu_mle")
>>> sorted({row["unit"] for row in rows})
['GB/s', 'us']
"""

from lib.validation.allreduce import (SYSTEMS, UNMODELLED, LineFit, NCCLFit, Prediction, System, calibrate_line,
                                      calibrate_nccl, median_abs_error, predict_nccl, relative_error, scaled_link)
from lib.validation.decode import (GPT_20B, MEGATRON_530B, MODELS, EfficiencyFit, RooflineTerms, context_time,
                                   fit_efficiencies, model_config, request_terms, request_time, token_terms,
                                   token_time)
from lib.validation.published import (ALLREDUCE_DATASETS, COLLECTIVE_COLUMNS, DATA_DIR, DATASETS, DECODE_COLUMNS,
                                      DECODE_DATASETS, QUANTITY_UNITS, UNIT_SI, AllReduceSweep, allreduce_sweep,
                                      load_published, rounding_error)
from lib.validation.report import (FT_CLUSTER, GPTFAST_CLUSTER, GPTFAST_CONTEXT, decode_rows, summary,
                                   validate_allreduce, validate_decode)

__all__ = [
    "DATA_DIR", "COLLECTIVE_COLUMNS", "DECODE_COLUMNS", "ALLREDUCE_DATASETS", "DECODE_DATASETS", "DATASETS",
    "QUANTITY_UNITS", "UNIT_SI", "load_published", "AllReduceSweep", "allreduce_sweep", "rounding_error",
    "System", "SYSTEMS", "UNMODELLED", "scaled_link", "Prediction", "predict_nccl", "NCCLFit", "calibrate_nccl",
    "LineFit", "calibrate_line", "relative_error", "median_abs_error",
    "GPT_20B", "MEGATRON_530B", "MODELS", "model_config", "context_time", "token_time", "request_time",
    "RooflineTerms", "request_terms", "token_terms", "EfficiencyFit", "fit_efficiencies",
    "FT_CLUSTER", "GPTFAST_CLUSTER", "GPTFAST_CONTEXT", "validate_allreduce", "validate_decode", "decode_rows",
    "summary",
]
