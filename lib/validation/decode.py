"""The book's serving model against published tensor-parallel decode measurements.

Introduced in chapter 11 (does the model hold?). Two kinds of figure are
predicted with :mod:`lib.serving`:

* a FasterTransformer **request** (``decode_ft_*``): a context phase over
  ``batch`` prompts of ``input_tokens`` each, then one decoder step per
  output token (:func:`request_time`);
* a gpt-fast **decode rate** (``decode_gptfast_a100``): one token per
  decoder step at batch 1, compared as time per token (:func:`token_time`).

The model is the roofline of :func:`lib.serving.stage_work`:
``max(bytes / (eta_mem BW), flops / (eta_flop peak))`` plus NCCL's all-reduces.
Its two efficiencies are fitted to single-GPU measurements
(:func:`fit_efficiencies`) and every multi-GPU figure is held out.
``layer_overhead`` (seconds per layer per forward pass, not divided by the
tensor-parallel degree) is **not** part of the book's model; chapter 11 adds
it to test what the residuals point at. It is 0 unless given.

>>> from lib.serving import Cluster, Layout
>>> one = request_time(GPT_20B, Cluster("a100-80gb"), Layout(), batch=1, input_tokens=80, output_tokens=200)
>>> round(one * 1e3)                     # ideal bound, ms; FasterTransformer measured 5609 ms
4011
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks
from lib.pipeline import split_batch
from lib.serving import ACTIVATION_BYTES, Cluster, Layout, decode_step, hop_time, stage_work
from lib.transformer import PRESETS, ModelConfig

__all__ = ["GPT_20B", "MEGATRON_530B", "MODELS", "model_config", "context_time", "token_time", "request_time",
           "RooflineTerms", "request_terms", "token_terms", "EfficiencyFit", "fit_efficiencies"]

#: GPT-20B as FasterTransformer benchmarks it (GPT-style: two-matrix GELU MLP, biases, tied embeddings).
GPT_20B = ModelConfig(
    "GPT-20B", layers=44, hidden=48 * 128, heads=48, kv_heads=48, ffn_hidden=24576, vocab=51200, gated_mlp=False,
    qkv_bias=True, tied_embeddings=True, source="fastertransformer",
    source_note="docs/gpt_guide.md lines 1249-1253 (head_num 48, size_per_head 128, num_layers 44, vocab_size "
                "51200) and examples/cpp/multi_gpu_gpt/gpt_config.ini lines 96-103 (inter_size 24576), commit df4a753")
#: Megatron-530B as FasterTransformer benchmarks it.
MEGATRON_530B = ModelConfig(
    "Megatron-530B", layers=105, hidden=128 * 160, heads=128, kv_heads=128, ffn_hidden=81920, vocab=51200,
    gated_mlp=False, qkv_bias=True, tied_embeddings=True, source="fastertransformer",
    source_note="docs/gpt_guide.md lines 1136-1140 (head_num 128, size_per_head 160, num_layers 105, vocab_size "
                "51200) and docs/models/megatron-530b-model.md lines 49-75 (per-rank shapes of a 16-way split: "
                "dense_h_to_4h 5120 x 20480, so 81920 in all), commit df4a753")

#: The configuration behind each model name in ``data/published`` (Llama 3.1 has Llama 3's shapes).
MODELS: dict[str, ModelConfig] = {
    "GPT-20B": GPT_20B, "Megatron-530B": MEGATRON_530B,
    "Llama-2-7B": PRESETS["llama-2-7b"], "Llama-2-70B": PRESETS["llama-2-70b"],
    "Llama-3.1-8B": PRESETS["llama-3-8b"], "Llama-3.1-70B": PRESETS["llama-3-70b"],
    "Mixtral 8x7B": PRESETS["mixtral-8x7b"],
}


def model_config(name: str) -> ModelConfig:
    """The :class:`ModelConfig` for a ``model`` cell of ``data/published`` (text before `` (`` is the name).

    >>> model_config("GPT-20B (head_num 48, size_per_head 128)").layers
    44
    """
    key = name.split(" (")[0]
    if key not in MODELS:
        raise ValueError(f"name must start with one of {sorted(MODELS)}, got {name!r}")
    return MODELS[key]


def _efficiencies(memory_efficiency: float, compute_efficiency: float, layer_overhead: float) -> dict:
    _checks.scalar("memory_efficiency", memory_efficiency, _checks.fraction)
    _checks.scalar("compute_efficiency", compute_efficiency, _checks.fraction)
    _checks.scalar("layer_overhead", layer_overhead, _checks.nonnegative)
    return dict(memory_efficiency=memory_efficiency, compute_efficiency=compute_efficiency)


def context_time(config: ModelConfig, cluster: Cluster, layout: Layout, batch: int, prompt_tokens: int,
                 bytes_per_element: float = 2, memory_efficiency: float = 1.0, compute_efficiency: float = 1.0,
                 layer_overhead: float = 0.0) -> float:
    """The context phase of ``batch`` prompts of ``prompt_tokens`` each, in seconds.

    Per stage: weights read once for all prompts, FLOPs of ``batch`` separate
    prompts (each attends only to itself), all-reduces carrying every token.
    With ``pp`` stages the batch flows through as ``m = min(pp, batch)``
    microbatches (:func:`lib.pipeline.split_batch`): ``sum(stages) + (m - 1) max(stage)``, plus the
    hops of one microbatch (:func:`lib.serving.hop_time`).
    """
    b = _checks.scalar_count("batch", batch, minimum=1)
    n = _checks.scalar_count("prompt_tokens", prompt_tokens, minimum=1)
    eff = _efficiencies(memory_efficiency, compute_efficiency, layer_overhead)
    m, micro = split_batch(b, layout.pp)
    stages = []
    for s in range(layout.pp):
        tokens = stage_work(config, cluster, layout, s, micro * n, 0, True, bytes_per_element, **eff)
        prompt = stage_work(config, cluster, layout, s, n, 0, True, bytes_per_element, **eff)
        stages.append(max(float(tokens.memory_time), micro * float(prompt.compute_time))
                      + float(tokens.communication_time))
    hops = float(hop_time(cluster, layout, micro * n * config.hidden * ACTIVATION_BYTES))
    return sum(stages) + (m - 1) * max(stages) + hops + config.layers * layer_overhead


def token_time(config: ModelConfig, cluster: Cluster, layout: Layout, batch: int, context: float,
               bytes_per_element: float = 2, kv_bytes_per_element: float | None = None,
               memory_efficiency: float = 1.0, compute_efficiency: float = 1.0, layer_overhead: float = 0.0) -> float:
    """One decoder step: :func:`lib.serving.decode_step`'s time per output token, plus ``layers x layer_overhead``.

    >>> from lib.serving import Cluster, Layout
    >>> round(1 / token_time(PRESETS["llama-2-7b"], Cluster("a100-80gb"), Layout(), 1, 105), 1)   # tokens/s, ideal
    153.7
    """
    eff = _efficiencies(memory_efficiency, compute_efficiency, layer_overhead)
    step = decode_step(config, cluster, layout, batch, context, bytes_per_element, kv_bytes_per_element, **eff)
    return float(step.tpot) + config.layers * layer_overhead


def request_time(config: ModelConfig, cluster: Cluster, layout: Layout, batch: int, input_tokens: int,
                 output_tokens: int, bytes_per_element: float = 2, memory_efficiency: float = 1.0,
                 compute_efficiency: float = 1.0, layer_overhead: float = 0.0) -> float:
    """A whole request: :func:`context_time`, then ``output_tokens`` decoder steps at the mean context.

    FasterTransformer's generation loop runs one step per output token after
    the context phase (``ParallelGpt.cc`` lines 1201-1202 at commit
    df4a753); the KV cache grows from ``input_tokens``, so each step is taken
    at the middle of the generation, ``input + output / 2``, as
    :func:`lib.serving.plan` does.
    """
    out = _checks.scalar_count("output_tokens", output_tokens, minimum=1)
    eff = dict(memory_efficiency=memory_efficiency, compute_efficiency=compute_efficiency,
               layer_overhead=layer_overhead)
    first = context_time(config, cluster, layout, batch, input_tokens, bytes_per_element, **eff)
    step = token_time(config, cluster, layout, batch, input_tokens + out / 2, bytes_per_element, **eff)
    return first + out * step


@dataclass(frozen=True)
class RooflineTerms:
    """A prediction split into the parts each fitted number scales (one row per figure, one column per phase).

    ``time = sum(weight x (max(memory / eta_mem, compute / eta_flop) + fixed + layers x overhead))``,
    where ``memory``, ``compute`` and ``fixed`` (the all-reduces and hops)
    are the times at both efficiencies 1. Exact for ``pp = 1``.
    """

    memory: np.ndarray
    compute: np.ndarray
    fixed: np.ndarray
    weight: np.ndarray
    layers: np.ndarray

    def time(self, memory_efficiency: Any, compute_efficiency: Any, layer_overhead: Any = 0.0) -> np.ndarray:
        """Predicted times; the efficiencies and the overhead broadcast against each other (grids)."""
        em = np.asarray(memory_efficiency, dtype=float)[..., None, None]
        ec = np.asarray(compute_efficiency, dtype=float)[..., None, None]
        o = np.asarray(layer_overhead, dtype=float)[..., None, None]
        phase = np.maximum(self.memory / em, self.compute / ec) + self.fixed + self.layers[:, None] * o
        return (self.weight * phase).sum(axis=-1)


def _stack(parts: list) -> RooflineTerms:
    return RooflineTerms(*(np.array([p[i] for p in parts], dtype=float) for i in range(4)),
                         np.array([p[4] for p in parts], dtype=float))


def request_terms(config: ModelConfig, cluster: Cluster, tp: int, batch: int, input_tokens: int,
                  output_tokens: int, bytes_per_element: float = 2) -> tuple:
    """The terms of :func:`request_time` for one figure (``pp = 1``): context, then steps."""
    layout = Layout(tp=tp)
    tokens = stage_work(config, cluster, layout, 0, batch * input_tokens, 0, True, bytes_per_element)
    prompt = stage_work(config, cluster, layout, 0, input_tokens, 0, True, bytes_per_element)
    step = stage_work(config, cluster, layout, 0, batch, input_tokens + output_tokens / 2, False, bytes_per_element)
    return ((float(tokens.memory_time), float(step.memory_time)),
            (batch * float(prompt.compute_time), float(step.compute_time)),
            (float(tokens.communication_time), float(step.communication_time)), (1.0, float(output_tokens)),
            config.layers)


def token_terms(config: ModelConfig, cluster: Cluster, tp: int, batch: int, context: float,
                bytes_per_element: float = 2, kv_bytes_per_element: float | None = None) -> tuple:
    """The terms of :func:`token_time` for one figure (``pp = 1``)."""
    step = stage_work(config, cluster, Layout(tp=tp), 0, batch, context, False, bytes_per_element,
                      kv_bytes_per_element)
    return ((0.0, float(step.memory_time)), (0.0, float(step.compute_time)), (0.0, float(step.communication_time)),
            (0.0, 1.0), config.layers)


@dataclass(frozen=True)
class EfficiencyFit:
    """Fitted efficiencies (and overhead, s per layer), with the root-mean-square log error of the fit."""

    memory_efficiency: float
    compute_efficiency: float
    layer_overhead: float
    rms_log_error: float


def _grid(lo: float, hi: float, points: int, log: bool) -> np.ndarray:
    return np.geomspace(lo, hi, points) if log else np.linspace(lo, hi, points)


def fit_efficiencies(terms: list, measured: Any, fit_compute: bool = True, fit_overhead: bool = False,
                     max_overhead: float = 1e-3) -> EfficiencyFit:
    """Least squares on ``log(predicted / measured)`` over a grid, refined once around the best point.

    ``terms`` are :func:`request_terms` or :func:`token_terms` tuples;
    efficiencies range over (0.02, 1], the overhead over [0, ``max_overhead``].
    With ``fit_compute=False`` the compute efficiency stays 1 (for figures
    that are all memory-bound, where it cannot be identified).

    >>> from lib.serving import Cluster
    >>> t = [token_terms(PRESETS["llama-2-7b"], Cluster("a100-80gb"), 1, 1, 105)]
    >>> fit = fit_efficiencies(t, [1 / 104.9], fit_compute=False)      # gpt-fast's 104.9 tokens/s
    >>> round(fit.memory_efficiency, 3)
    0.682
    """
    if not terms:
        raise ValueError("terms must hold at least one figure, got an empty list")
    _checks.scalar("max_overhead", max_overhead, _checks.positive)
    stacked = _stack(terms)
    m = _checks.positive("measured", measured)
    if m.shape != (len(terms),):
        raise ValueError(f"measured must hold one time per terms entry ({len(terms)}), got shape {m.shape}")
    axes = [(0.02, 1.0, True), (0.02, 1.0, True) if fit_compute else None,
            (0.0, max_overhead, False) if fit_overhead else None]
    ranges = [a for a in axes if a is not None]
    best = None
    for _ in range(2):
        grids = [_grid(lo, hi, 61, log) for lo, hi, log in ranges]
        mesh = np.meshgrid(*grids, indexing="ij")
        values, it = [], iter(mesh)
        for axis, fixed in zip(axes, (None, 1.0, 0.0)):
            values.append(next(it) if axis is not None else np.full(mesh[0].shape, fixed))
        loss = (np.log(stacked.time(*values) / m) ** 2).sum(axis=-1)
        index = np.unravel_index(int(np.argmin(loss)), loss.shape)
        best = [float(v[index]) for v in values] + [float(np.sqrt(loss[index] / len(terms)))]
        refined = []
        for (lo, hi, log), grid, i in zip(ranges, grids, index):
            a, b = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
            refined.append((a, b, log and a > 0))
        ranges = refined
    return EfficiencyFit(*best)
