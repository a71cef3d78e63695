"""What a device must hold while serving: weights, KV cache, activations, and the engine's reserve.

Introduced in chapter 7 (serving many users). Every token a sequence has
seen leaves a key and a value vector in every layer, so the KV cache grows
with ``sequences x context``:

    kv_cache_bytes = 2 x layers x kv_heads x head_dim x b x tokens

>>> from lib.transformer import PRESETS
>>> kv_cache_bytes(PRESETS["llama-2-7b"], 1)          # bytes per token, 16-bit
524288.0

Per device, tensor parallelism divides the KV heads (until each device holds
a single, replicated head) and pipeline parallelism divides the layers. The
weights split the same way, except the embedding table (whole on the first
stage, split by vocabulary over the tensor-parallel devices) and the output
head (on the last stage). An engine keeps part of the memory free: vLLM uses
90 % of it by default (``--gpu-memory-utilization 0.9``), so ``reserve=0.10``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks
from lib.serving.layout import Layout, check_layout, stage_layers
from lib.transformer import ModelConfig, kv_cache_bytes_per_token, kv_heads_per_device, parameter_breakdown
from lib.units import GB

__all__ = ["kv_cache_bytes", "kv_bytes_per_token_per_device", "stage_weight_bytes", "weight_bytes_per_device",
           "activation_bytes", "MemoryFit", "memory_fit"]

Number = Any


def kv_cache_bytes(config: ModelConfig, tokens: Number, bytes_per_element: Number = 2) -> float | np.ndarray:
    """Bytes of KV cache that ``tokens`` tokens occupy across the whole model.

    >>> from lib.transformer import PRESETS
    >>> round(kv_cache_bytes(PRESETS["llama-3-70b"], 16 * 4096) / 1e9, 2)
    21.47
    """
    n = _checks.nonnegative("tokens", tokens)
    return _checks.result(n * kv_cache_bytes_per_token(config, bytes_per_element))


def kv_bytes_per_token_per_device(config: ModelConfig, layout: Layout, bytes_per_element: Number = 2) -> float:
    """KV-cache bytes one token adds on the busiest device: its stage's layers, its share of KV heads.

    >>> from lib.transformer import PRESETS
    >>> kv_bytes_per_token_per_device(PRESETS["llama-3-70b"], Layout(tp=8))        # one KV head each
    40960.0
    >>> kv_bytes_per_token_per_device(PRESETS["llama-3-70b"], Layout(tp=16))       # still one: replicated
    40960.0
    """
    check_layout(config, layout)
    return _kv_bytes_per_layer(config, layout.tp, bytes_per_element) * max(stage_layers(config.layers, layout.pp))


def _kv_bytes_per_layer(config: ModelConfig, tp: int, bytes_per_element: Number) -> float:
    """KV-cache bytes one token adds to one layer on one device of a tensor-parallel group of ``tp``."""
    share = kv_heads_per_device(config, tp) / config.kv_heads
    return float(kv_cache_bytes_per_token(config, bytes_per_element)) * share / config.layers


def _per_device_layer(config: ModelConfig, layout: Layout, experts: float) -> float:
    """Parameters of one layer on one device, with ``experts`` of the MLPs (whole or split)."""
    parts = parameter_breakdown(config)
    kv = parts.attention_kv * kv_heads_per_device(config, layout.tp) / config.kv_heads
    return parts.attention_qo / layout.tp + kv + experts * parts.mlp / layout.tp + parts.router + parts.norms


def stage_weight_bytes(config: ModelConfig, layout: Layout, bytes_per_element: Number = 2) -> list[float]:
    """Weight bytes on one device of each pipeline stage (every expert counted).

    >>> from lib.transformer import PRESETS, parameter_count
    >>> config = PRESETS["llama-3-8b"]
    >>> stage_weight_bytes(config, Layout()) == [parameter_count(config) * 2.0]
    True
    """
    check_layout(config, layout)
    b = float(_checks.positive("bytes_per_element", bytes_per_element))
    parts = parameter_breakdown(config)
    layer = _per_device_layer(config, layout, config.experts)
    counts = stage_layers(config.layers, layout.pp)
    stages = []
    for i, n in enumerate(counts):
        params = n * layer
        if i == 0:
            params += parts.embedding / layout.tp
        if i == len(counts) - 1:
            params += parts.final_norm + (parts.head if parts.head else (parts.embedding if layout.pp > 1 else 0)) / layout.tp
        stages.append(params * b)
    return stages


def weight_bytes_per_device(config: ModelConfig, layout: Layout, bytes_per_element: Number = 2) -> float:
    """The heaviest stage's weight bytes per device.

    >>> from lib.transformer import PRESETS
    >>> round(weight_bytes_per_device(PRESETS["llama-3-70b"], Layout(tp=8)) / 1e9, 2)
    17.64
    """
    return max(stage_weight_bytes(config, layout, bytes_per_element))


def activation_bytes(config: ModelConfig, tokens: Number, tp: int = 1, bytes_per_element: Number = 2) -> float | np.ndarray:
    """An estimate of the activations and workspace of one forward step over ``tokens`` tokens.

    An assumption, stated: per token, the residual stream and its normalised
    copy, the attention input and output (4 d), this device's query, key and
    value columns, and the MLP's three inner tensors (gate, up and their
    product); plus 32-bit logits over this device's share of the vocabulary.
    Engines size this by profiling a step of ``--max-num-batched-tokens``.

    >>> from lib.transformer import PRESETS
    >>> round(activation_bytes(PRESETS["llama-3-70b"], 2048, tp=8) / 1e9, 3)
    0.315
    """
    n = _checks.nonnegative("tokens", tokens)
    k = _checks.scalar_count("tp", tp, minimum=1)
    b = _checks.positive("bytes_per_element", bytes_per_element)
    d, hd = config.hidden, config.head_dim
    qkv = (config.heads + 2 * config.kv_heads) * hd / k
    per_token = b * (4 * d + qkv + 3 * config.ffn_hidden / k) + 4 * config.vocab / k
    return _checks.result(n * per_token)


@dataclass(frozen=True)
class MemoryFit:
    """One device's memory budget (bytes) and whether the work fits in it.

    ``usable`` is the memory less the engine's reserve; ``max_sequences``
    how many sequences of the full context fit beside the weights and
    activations (0 if none do); ``reason`` says in words why it does not fit
    ("" when it does).
    """

    weights: float
    kv_cache: float
    activations: float
    usable: float
    max_sequences: int
    reason: str

    @property
    def total(self) -> float:
        """Weights, KV cache and activations together."""
        return self.weights + self.kv_cache + self.activations

    @property
    def free(self) -> float:
        """Usable bytes left over (negative when it does not fit)."""
        return self.usable - self.total

    @property
    def fits(self) -> bool:
        """True when the total is within the usable memory."""
        return self.total <= self.usable


def memory_fit(config: ModelConfig, device_memory: float, layout: Layout, sequences: int, context: int,
               bytes_per_element: Number = 2, kv_bytes_per_element: Number | None = None, reserve: float = 0.10,
               step_tokens: int = 2048) -> MemoryFit:
    """The budget of the busiest device when each replica holds ``sequences`` of ``context`` tokens.

    ``step_tokens`` is the most tokens one step processes (a prefill chunk),
    which sizes the activations; ``reserve`` the share of memory the engine
    leaves free.

    >>> from lib.transformer import PRESETS
    >>> from lib.units import GiB
    >>> fit = memory_fit(PRESETS["llama-3-70b"], 80 * GiB, Layout(tp=1), sequences=1, context=4096)
    >>> fit.fits, fit.reason
    (False, 'weights alone need 141.1 GB per device, more than the 77.3 GB usable (85.9 GB less a 10% reserve)')
    """
    memory = float(_checks.positive("device_memory", device_memory))
    seqs = _checks.scalar_count("sequences", sequences, minimum=0)
    ctx = _checks.scalar_count("context", context, minimum=1)
    share = float(_checks.scalar("reserve", reserve, _checks.nonnegative))
    if share >= 1:
        raise ValueError(f"reserve must be below 1 (a share of the memory), got {reserve!r}")
    kv_b = bytes_per_element if kv_bytes_per_element is None else kv_bytes_per_element
    usable = memory * (1 - share)
    weights = weight_bytes_per_device(config, layout, bytes_per_element)
    activations = float(activation_bytes(config, max(step_tokens, seqs), layout.tp, bytes_per_element))
    per_sequence = ctx * kv_bytes_per_token_per_device(config, layout, kv_b)
    room = usable - weights - activations
    max_sequences = max(0, math.floor(room / per_sequence)) if room > 0 else 0
    kv = seqs * per_sequence
    where = f"{usable / GB:.1f} GB usable ({memory / GB:.1f} GB less a {share:.0%} reserve)"
    if weights > usable:
        reason = f"weights alone need {weights / GB:.1f} GB per device, more than the {where}"
    elif room <= 0:
        reason = (f"weights ({weights / GB:.1f} GB) and activations ({activations / GB:.1f} GB) need more than "
                  f"the {where}")
    elif seqs > max_sequences:
        reason = (f"the KV cache of {seqs} sequences of {ctx} tokens needs {kv / GB:.1f} GB per device, but only "
                  f"{room / GB:.1f} GB remain after weights and activations (room for {max_sequences})")
    else:
        reason = ""
    return MemoryFit(weights, kv, activations, usable, max_sequences, reason)
