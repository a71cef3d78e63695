"""What ``data/published`` holds: the files, their columns, the units of each quantity, and which rows re-check.

Introduced in chapter 11 (does the model hold?). Every CSV holds one printed
figure per row, with its unit, the hardware, the software and the source. The
files come in five schemas (:data:`SCHEMAS`):

* **collective** files (:data:`COLLECTIVE_COLUMNS`): all-reduce sweeps, NVLS
  against ring, the engine's own all-reduce, and nccl-tests runs that log
  NCCL's choice; every row records the NCCL version, the tuner plugin and
  the environment settings where the source prints them, and the harness
  that timed it (:data:`HARNESSES`), each cited;
* **decode** files (:data:`DECODE_COLUMNS`): FasterTransformer requests and
  gpt-fast rates;
* **serving** files (:data:`SERVING_COLUMNS`): whole static batches, first-token
  latencies and serving benchmarks under load, with the statistic, the
  concurrency or request rate and the workload of each figure;
* a **device** file (:data:`DEVICE_COLUMNS`): a memory-bandwidth benchmark.

A source is a GitHub blob URL pinned to a commit, with the line the figure
is printed on; the exceptions (:data:`NOT_RECHECKABLE`) are named, with the
reason ``data/published/recheck.py`` cannot re-read them.

>>> schema("decode_ft_gpt20b_a100") == DECODE_COLUMNS
True
>>> QUANTITY_UNITS["ttft"], UNIT_SI["req/s"]
(('s', 'ms'), 1.0)
>>> schema("allreduce_h100")
Traceback (most recent call last):
...
ValueError: name must be one of the files in data/published (see DATASETS), got 'allreduce_h100'
"""

from __future__ import annotations

from lib.units import GB, MB, ms, s, us

__all__ = [
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
    "INTEGER_COLUMNS",
    "schema",
]

#: Columns of every collective file. The last seven: NCCL's version, the tuner plugin, the NCCL_* settings
#: (buffer size, forced algorithm or protocol), and, where NCCL logged its choice, the protocol, the channel
#: count and the lines the choice and the size are printed on.
COLLECTIVE_COLUMNS = (
    "dataset",
    "system",
    "gpu",
    "gpus",
    "nodes",
    "interconnect",
    "software",
    "collective",
    "algorithm",
    "selection",
    "size_bytes",
    "size_printed",
    "quantity",
    "value",
    "unit",
    "source",
    "source_line",
    "source_detail",
    "note",
    "nccl_version",
    "tuner_plugin",
    "nccl_settings",
    "protocol",
    "nchannels",
    "algo_source_line",
    "size_source_line",
    "harness",
    "harness_source",
    "nccl_version_source",
)
#: How each collective sweep was run (the ``harness`` column): what a call's time includes besides NCCL.
HARNESSES = {
    "nccl-tests-process-per-gpu": "nccl-tests all_reduce_perf -g 1 under MPI or srun: one process per GPU, "
    "the mean of many back-to-back calls, no CUDA graphs",
    "nccl-tests-one-process": "nccl-tests all_reduce_perf -g N: one process launches every GPU's kernel in a group "
    "call, the mean of many back-to-back calls, no CUDA graphs",
    "nccl-tests-layout-unstated": "nccl-tests, but the source prints neither the command nor its header",
    "all_reduce_bench.py": "ml-engineering's PyTorch benchmark: one eager dist.all_reduce per timed trial between "
    "CUDA events after a barrier, one process per GPU (torchrun)",
    "vllm-cuda-graphs": "vLLM's benchmark_device_communicators.py: calls captured in a CUDA graph and replayed",
    "unstated": "the source names no harness",
}
#: Columns of the FasterTransformer and gpt-fast decode files.
DECODE_COLUMNS = (
    "dataset",
    "model",
    "gpu",
    "hardware",
    "software",
    "precision",
    "tp",
    "pp",
    "gpus",
    "nodes",
    "batch",
    "input_tokens",
    "output_tokens",
    "quantity",
    "value",
    "unit",
    "status",
    "source",
    "source_line",
    "source_detail",
    "note",
)
#: Columns of the static-batch, first-token and serving files: the decode columns, then how the figure was
#: taken (statistic over requests, closed-loop concurrency or open-loop rate, requests, workload, token totals).
SERVING_COLUMNS = DECODE_COLUMNS + (
    "statistic",
    "concurrency",
    "request_rate",
    "num_prompts",
    "workload",
    "parallelism",
    "total_input_tokens",
    "total_output_tokens",
)
#: Columns of the device benchmark file.
DEVICE_COLUMNS = (
    "dataset",
    "gpu",
    "hardware",
    "software",
    "quantity",
    "value",
    "unit",
    "source",
    "source_line",
    "source_detail",
    "note",
)

#: All-reduce sweeps against message size, one system each.
ALLREDUCE_DATASETS = (
    "allreduce_a100_8gpu_mle",
    "allreduce_h100_8gpu_aws_p5",
    "allreduce_h200_8gpu_mle",
    "allreduce_b200_8gpu_mle",
    "allreduce_a100_16gpu_aws_p4de",
    "allreduce_h100_16gpu_aws_p5",
    "allreduce_h100_16gpu_gcp_a3mega",
    "allreduce_b200_32gpu_mle",
)
#: nccl-tests runs on 2 to 6 H100s with NCCL's own line naming the algorithm, and forced algorithms and protocols.
ALGORITHM_DATASETS = ("allreduce_h100_2to6gpu_algo_ncb", "allreduce_h100_4gpu_forced_ncb")
#: vLLM's custom all-reduce kernels against NCCL (the constants of :mod:`lib.collectives.engine`).
ENGINE_ALLREDUCE_DATASETS = ("allreduce_engine_h100_vllm",)
#: Every collective file.
COLLECTIVE_DATASETS = ALLREDUCE_DATASETS + ("nvls_vs_ring",) + ALGORITHM_DATASETS + ENGINE_ALLREDUCE_DATASETS
#: Tensor-parallel decode measurements: FasterTransformer requests and gpt-fast rates.
DECODE_DATASETS = ("decode_ft_gpt20b_a100", "decode_ft_megatron530b_a100", "decode_gptfast_a100")
#: Whole static batches (Argonne's LLM-Inference-Bench) on A100s at TP 1, 2 and 4.
BATCH_DATASETS = ("decode_argonne_vllm_a100", "decode_argonne_trtllm_a100")
#: First-token latencies at TP 1, 2 and 4 (LMDeploy's static benchmark).
TTFT_DATASETS = ("ttft_lmdeploy_a100",)
#: Serving benchmarks under load: a closed-loop concurrency or an open-loop request rate.
LOAD_DATASETS = ("serving_lmdeploy_a100", "serving_sglang_vllm060", "serving_sglang_h200_datacrunch")
#: Device benchmarks.
DEVICE_DATASETS = ("stream_a100_40gb_polaris",)
#: Every file in ``data/published`` (without ``.csv``).
DATASETS = COLLECTIVE_DATASETS + DECODE_DATASETS + BATCH_DATASETS + TTFT_DATASETS + LOAD_DATASETS + DEVICE_DATASETS

#: The columns of each file.
SCHEMAS: dict[str, tuple] = {
    **{name: COLLECTIVE_COLUMNS for name in COLLECTIVE_DATASETS},
    **{name: DECODE_COLUMNS for name in DECODE_DATASETS},
    **{name: SERVING_COLUMNS for name in BATCH_DATASETS + TTFT_DATASETS + LOAD_DATASETS},
    **{name: DEVICE_COLUMNS for name in DEVICE_DATASETS},
}

#: Files whose source is not a file at a commit, and why ``recheck.py`` cannot re-read them.
NOT_RECHECKABLE = {
    "allreduce_engine_h100_vllm": "a pull request's description (vllm-project/vllm#24532), not a file at a commit: "
    "it has no commit to pin and no line numbers",
}

#: The units each quantity is printed in (as printed: nothing was converted).
QUANTITY_UNITS: dict[str, tuple[str, ...]] = {
    "time": ("us", "ms"),
    "algbw": ("GB/s",),
    "busbw": ("GB/s",),
    "request_latency": ("s", "ms"),
    "decode_rate": ("tokens/s",),
    "reported_bandwidth": ("GB/s",),
    "ttft": ("s", "ms"),
    "itl": ("s", "ms"),
    "tpot": ("ms",),
    "output_throughput": ("tokens/s",),
    "total_throughput": ("tokens/s",),
    "request_throughput": ("req/s",),
    "stream_bandwidth": ("MB/s",),
}
#: One of each unit in SI (seconds, bytes per second, tokens or requests per second).
UNIT_SI = {"us": us, "ms": ms, "s": s, "GB/s": GB / s, "MB/s": MB / s, "tokens/s": 1.0, "req/s": 1.0}

#: Columns read as integers (``None`` where blank).
INTEGER_COLUMNS = (
    "gpus",
    "nodes",
    "size_bytes",
    "source_line",
    "tp",
    "pp",
    "batch",
    "input_tokens",
    "output_tokens",
    "concurrency",
    "num_prompts",
    "total_input_tokens",
    "total_output_tokens",
    "nchannels",
    "algo_source_line",
    "size_source_line",
)


def schema(name: str) -> tuple:
    """The columns of ``data/published/<name>.csv``."""
    if name not in SCHEMAS:
        raise ValueError(f"name must be one of the files in data/published (see DATASETS), got {name!r}")
    return SCHEMAS[name]


# --- Serving splits (issue 24): disaggregated prefill/decode, speculative decoding, expert parallelism -------------

#: Columns of the serving-split files: the model and its formats, the hardware, the engine and its version, the
#: layout (colocated or disaggregated pools, TP/EP/DP degrees, attention data-parallel), the load (batch, concurrency
#: or rate, lengths), the drafter of a speculative run, the engine switches a predictor needs (CUDA graphs, chunked
#: prefill), and the figure with what it is normalised by (``per``) and which statistic it is.
SPLIT_COLUMNS = (
    "dataset",
    "model",
    "precision",
    "kv_format",
    "gpu",
    "hardware",
    "interconnect",
    "engine",
    "engine_version",
    "software",
    "pd",
    "parallelism",
    "gpus",
    "nodes",
    "tp",
    "ep",
    "dp",
    "attention_dp",
    "prefill_gpus",
    "decode_gpus",
    "prefill_layout",
    "decode_layout",
    "phase",
    "batch",
    "batch_scope",
    "batch_tokens",
    "concurrency",
    "request_rate",
    "num_prompts",
    "input_tokens",
    "output_tokens",
    "workload",
    "draft",
    "draft_tokens",
    "acceptance",
    "cuda_graphs",
    "chunked_prefill",
    "compared_with",
    "quantity",
    "value",
    "unit",
    "per",
    "statistic",
    "status",
    "source",
    "source_line",
    "source_detail",
    "note",
)
#: Disaggregated prefill/decode against colocated serving: TTFT, KV transfer time, throughput.
DISAGG_DATASETS = ("disagg_mooncake_h800_h20", "disagg_dynamo_vllm_h200_gke")
#: Speculative decoding: speed-up at several batch sizes, throughput with and without MTP, acceptance.
SPECULATIVE_DATASETS = ("spec_magicdec_a100_h100", "spec_mtp_sglang_h200_lmsys")
#: Expert-parallel DeepSeek-V3/R1 serving at a stated layout, and DeepEP's dispatch/combine kernels.
EXPERT_DATASETS = (
    "ep_pd_sglang_h100_lmsys",
    "ep_pd_deepseek_h800",
    "ep_trtllm_deepseek_r1_h200_b200",
    "ep_deepep_kernels",
)
#: Every serving-split file.
SPLIT_DATASETS = DISAGG_DATASETS + SPECULATIVE_DATASETS + EXPERT_DATASETS
#: Words of the ``pd`` column: the two pools on their own devices, one pool doing both, or not applicable (kernels).
PD_WORDS = ("disaggregated", "colocated", "n/a")
#: Words of the ``phase`` column: what part of serving the figure times.
PHASE_WORDS = ("prefill", "decode", "first token", "kv transfer", "end-to-end", "dispatch", "combine")
#: Words of the ``per`` column: what a throughput or time is normalised by.
PER_WORDS = ("total", "node", "gpu", "rank", "user", "request", "call", "layer", "run")

DATASETS = DATASETS + SPLIT_DATASETS
SCHEMAS.update({name: SPLIT_COLUMNS for name in SPLIT_DATASETS})
QUANTITY_UNITS.update(
    {
        "input_throughput": ("tokens/s", "k tokens/s"),
        "kv_transfer_time": ("ms",),
        "kernel_time": ("us", "ms"),
        "ep_bandwidth": ("GB/s",),
        "speedup": ("x",),
        "throughput_gain": ("%",),
        "acceptance_rate": ("1",),
        "acceptance_length": ("tokens",),
        "run_duration": ("s", "ms"),
        "kv_length": ("tokens",),
        "prefix_hit_rate": ("%",),
    }
)
QUANTITY_UNITS["output_throughput"] = QUANTITY_UNITS["output_throughput"] + ("k tokens/s",)
UNIT_SI.update({"k tokens/s": 1000.0, "x": 1.0, "%": 0.01, "1": 1.0, "tokens": 1.0})
INTEGER_COLUMNS = INTEGER_COLUMNS + ("ep", "dp", "prefill_gpus", "decode_gpus", "batch_tokens", "draft_tokens")
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
