"""Does the model hold? Published measurements (``data/published``), loaded and typed.

Introduced in chapter 11. :mod:`lib.validation.schemas` names the files, their columns and units;
:mod:`lib.validation.published` loads them and turns an all-reduce sweep into SI arrays.

>>> rows = load_published("allreduce_a100_8gpu_mle")
>>> sorted({row["unit"] for row in rows})
['GB/s', 'us']
"""

from lib.validation.published import DATA_DIR, AllReduceSweep, allreduce_sweep, load_published, rounding_error
from lib.validation.schemas import (ALGORITHM_DATASETS, ALLREDUCE_DATASETS, BATCH_DATASETS, COLLECTIVE_COLUMNS,
                                    COLLECTIVE_DATASETS, DATASETS, DECODE_COLUMNS, DECODE_DATASETS, DEVICE_COLUMNS,
                                    DEVICE_DATASETS, ENGINE_ALLREDUCE_DATASETS, LOAD_DATASETS, NOT_RECHECKABLE,
                                    QUANTITY_UNITS, SCHEMAS, SERVING_COLUMNS, TTFT_DATASETS, UNIT_SI, schema)

__all__ = [
    "DATA_DIR", "COLLECTIVE_COLUMNS", "DECODE_COLUMNS", "SERVING_COLUMNS", "DEVICE_COLUMNS", "ALLREDUCE_DATASETS",
    "ALGORITHM_DATASETS", "ENGINE_ALLREDUCE_DATASETS", "COLLECTIVE_DATASETS", "DECODE_DATASETS", "BATCH_DATASETS",
    "TTFT_DATASETS", "LOAD_DATASETS", "DEVICE_DATASETS", "DATASETS", "SCHEMAS", "NOT_RECHECKABLE", "QUANTITY_UNITS",
    "UNIT_SI", "schema", "load_published", "AllReduceSweep", "allreduce_sweep", "rounding_error",
]
