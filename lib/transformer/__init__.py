"""Transformer shapes, their parameter counts, and tensor parallelism per token.

Introduced in chapter 6 (tensor parallelism per generated token). A
:class:`ModelConfig` holds the few numbers that decide how big a decoder-only
transformer is and how it can be split; :data:`PRESETS` holds real published
configurations, each with the source of its numbers.

Tensor parallelism (Megatron-style) puts two all-reduces in every layer, one
after attention and one after the MLP. With hidden size ``d``, ``b`` bytes per
element, batch ``B`` and a ring over ``K`` devices, each moves about
``2 (K - 1) / K * d * b * B`` bytes per device:

>>> from lib.units import GB, KB, MB, s, us
>>> tp_bytes_per_collective(hidden=8192, bytes_per_element=2, batch=1, devices=4)
24576.0
>>> cost = tp_comm_per_token(PRESETS["llama-2-70b"], devices=4, batch=1, bytes_per_element=2,
...                          latency=5 * us, bandwidth=400 * GB / s)
>>> cost.collectives, round(cost.bytes / MB, 2), round(cost.latency_time / us), round(cost.transfer_time / us, 1)
(160, 3.93, 800, 9.8)
"""

from lib.transformer.hf import ARCHITECTURES, LENGTH_KEYS, context_length, from_hf_config, read_hf_config
from lib.transformer.models import (
    ModelConfig,
    ParameterBreakdown,
    active_parameter_count,
    decode_parameters_read,
    kv_cache_bytes_per_token,
    parameter_breakdown,
    parameter_count,
)
from lib.transformer.parallel import (
    TPComm,
    check_tp_degree,
    decode_time_bound,
    kv_heads_per_device,
    shard_efficiency,
    tp_bytes_per_collective,
    tp_collectives_per_token,
    tp_comm_per_token,
    tp_crossover_batch,
    valid_tp_degrees,
)
from lib.transformer.presets import PRESETS

__all__ = [
    "ARCHITECTURES",
    "LENGTH_KEYS",
    "context_length",
    "from_hf_config",
    "read_hf_config",
    "ModelConfig",
    "PRESETS",
    "ParameterBreakdown",
    "parameter_breakdown",
    "parameter_count",
    "active_parameter_count",
    "decode_parameters_read",
    "kv_cache_bytes_per_token",
    "tp_bytes_per_collective",
    "tp_collectives_per_token",
    "TPComm",
    "tp_comm_per_token",
    "tp_crossover_batch",
    "decode_time_bound",
    "valid_tp_degrees",
    "check_tp_degree",
    "kv_heads_per_device",
    "shard_efficiency",
]
