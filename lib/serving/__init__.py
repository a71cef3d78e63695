"""Serving many users: KV-cache memory, batched decode, prefill, and a layout planner.

Introduced in chapter 7 (serving many users). One module per topic, all re-exported here:

* :mod:`lib.serving.layout`: tensor x pipeline x data parallel layouts and where devices sit;
* :mod:`lib.serving.engine`: the engine's formats, all-reduce, fixed costs, scheduler limits and reserve;
* :mod:`lib.serving.memory`: weights, KV cache and activations per device, and whether they fit;
* :mod:`lib.serving.matmul`: a layer's matrix products on one device, at the throughput measured for their shape;
* :mod:`lib.serving.operators`: one forward pass priced operator by operator (linear, attention, head);
* :mod:`lib.serving.step`: a steady-state step (decode with its share of prefill) and a prefill;
* :mod:`lib.serving.capacity`: the highest request rate a layout carries within TTFT and TPOT targets;
* :mod:`lib.serving.sizing`: the fewest devices that carry a request rate, or the most a cluster carries;
* :mod:`lib.serving.trust`: ranges and confident sizing from chapter 11's held-out errors;
* :mod:`lib.serving.lengths`: a file of requests' prompt and output lengths, to size for;
* :mod:`lib.serving.command`: the ``vllm serve`` and SGLang lines that deploy a layout;
* :mod:`lib.serving.engine_flags`: each engine's server flags at a named release, and a check of a command line;
* :mod:`lib.serving.speculative`: speculative decoding, its speed-up and where it vanishes;
* :mod:`lib.serving.disagg`: prefill and decode on separate pools, the KV transfer between them;
* :mod:`lib.serving.plan`: every layout of a model on a cluster, ranked.

>>> from lib.transformer import PRESETS
>>> kv_cache_bytes(PRESETS["llama-2-7b"], 1)
524288.0
>>> round(expected_experts_touched(8, 2, 16), 2)
7.92
"""

from lib.serving.capacity import BINDINGS, Capacity, Load, Workload, capacity, percentile_fraction, replica_load
from lib.serving.command import Deployment, parse_sglang_command, parse_vllm_command, sglang_command, vllm_command
from lib.serving.disagg import Disaggregated, KVTransfer, balance, disaggregate, kv_transfer
from lib.serving.engine import Engine, configure, scheduler_limits
from lib.serving.engine_flags import check_command, flag_table
from lib.serving.layout import MAX_DEVICES, Cluster, Layout, check_devices, check_layout, layouts, stage_layers
from lib.serving.lengths import describe_lengths, format_lengths, parse_lengths, read_lengths
from lib.serving.matmul import ATTENTION_EFFICIENCY, Product, layer_products, linear_compute_time, product_flops
from lib.serving.memory import (
    MemoryFit,
    activation_bytes,
    check_context,
    kv_bytes_per_token_per_device,
    kv_cache_bytes,
    kv_token_capacity,
    memory_fit,
    stage_weight_bytes,
    weight_bytes_per_device,
)
from lib.serving.operators import (
    ACTIVATION_BYTES,
    Roofline,
    StageWork,
    expected_experts_touched,
    expert_exchange,
    pass_work,
)
from lib.serving.plan import TIE_BAND, FrontierPoint, PlanRow, best, frontier, leader, mean_context, plan, tie_note
from lib.serving.sizing import Sizing, best_capacity, replica_shapes, size
from lib.serving.speculative import SpeculativeStep, break_even_batch, expected_tokens, speculative_step
from lib.serving.step import (
    DecodeStep,
    compute_bound_batch,
    decode_step,
    hop_time,
    loop_time,
    prefill_lumps,
    prefill_time,
    stage_work,
    steady_prefill,
)
from lib.serving.trust import CAPACITY_RATIOS, INTERVAL_LEVEL, capacity_interval, capacity_ratio, regime

__all__ = [
    "Engine",
    "configure",
    "scheduler_limits",
    "BINDINGS",
    "Workload",
    "Load",
    "Capacity",
    "capacity",
    "percentile_fraction",
    "replica_load",
    "expected_tokens",
    "SpeculativeStep",
    "speculative_step",
    "break_even_batch",
    "Deployment",
    "vllm_command",
    "sglang_command",
    "parse_vllm_command",
    "parse_sglang_command",
    "flag_table",
    "check_command",
    "Sizing",
    "replica_shapes",
    "size",
    "read_lengths",
    "describe_lengths",
    "parse_lengths",
    "format_lengths",
    "CAPACITY_RATIOS",
    "INTERVAL_LEVEL",
    "capacity_interval",
    "capacity_ratio",
    "regime",
    "best_capacity",
    "KVTransfer",
    "kv_transfer",
    "balance",
    "Disaggregated",
    "disaggregate",
    "Layout",
    "Cluster",
    "stage_layers",
    "check_layout",
    "check_devices",
    "MAX_DEVICES",
    "layouts",
    "kv_cache_bytes",
    "kv_bytes_per_token_per_device",
    "stage_weight_bytes",
    "weight_bytes_per_device",
    "activation_bytes",
    "MemoryFit",
    "check_context",
    "memory_fit",
    "kv_token_capacity",
    "ATTENTION_EFFICIENCY",
    "Product",
    "layer_products",
    "product_flops",
    "linear_compute_time",
    "ACTIVATION_BYTES",
    "expected_experts_touched",
    "expert_exchange",
    "Roofline",
    "StageWork",
    "pass_work",
    "stage_work",
    "hop_time",
    "DecodeStep",
    "decode_step",
    "steady_prefill",
    "prefill_lumps",
    "loop_time",
    "prefill_time",
    "compute_bound_batch",
    "mean_context",
    "PlanRow",
    "plan",
    "TIE_BAND",
    "leader",
    "best",
    "tie_note",
    "FrontierPoint",
    "frontier",
]
