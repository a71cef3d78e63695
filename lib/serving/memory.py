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
head (on the last stage), which stay in 16 bits in every format. The
engine's share of the device and its reserve are
:meth:`lib.serving.engine.Engine.usable_bytes`: vLLM 0.33.0 manages 92 % of
it and keeps room for memory outside PyTorch and for the CUDA graphs; the
activations are sized for its largest step, ``max_num_batched_tokens``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks
from lib.formats import UNQUANTISED_BYTES
from lib.formats import weight_format as lookup_format
from lib.hardware import Device
from lib.hardware import device as lookup_device
from lib.serving.engine import Engine, configure
from lib.serving.layout import Layout, check_layout, stage_layers
from lib.transformer import ModelConfig, kv_cache_bytes_per_token, kv_heads_per_device, parameter_breakdown
from lib.units import GB

__all__ = [
    "check_context",
    "kv_cache_bytes",
    "kv_bytes_per_token_per_device",
    "stage_weight_bytes",
    "weight_bytes_per_device",
    "activation_bytes",
    "MemoryFit",
    "memory_fit",
    "kv_token_capacity",
]

Number = Any


def check_context(config: ModelConfig, prompt_tokens: Any, output_tokens: Any) -> None:
    """Refuse requests longer than the model's context: ``prompt_tokens + output_tokens`` past ``context_length``.

    An engine rejects such a request (vLLM: ``max_model_len``, derived from the model's ``config.json``),
    so no layout serves it. Lengths may be samples (paired, or one side a single length); the longest
    request counts. A model whose context is unknown (``context_length`` 0) is not checked.

    >>> from lib.transformer import PRESETS
    >>> check_context(PRESETS["llama-3-8b"], 4096, 4096)   # exactly the context: allowed
    >>> check_context(PRESETS["llama-3-8b"], 16384, 4096)
    Traceback (most recent call last):
    ...
    ValueError: prompt_tokens + output_tokens = 20480 exceeds Llama-3 8B's context of 8192 tokens
    """
    limit = config.context_length
    if not limit:
        return
    prompts = np.atleast_1d(_checks.count("prompt_tokens", prompt_tokens, minimum=1)).astype(float)
    outputs = np.atleast_1d(_checks.count("output_tokens", output_tokens, minimum=1)).astype(float)
    if prompts.ndim > 1 or outputs.ndim > 1 or (prompts.size > 1 and outputs.size > 1 and prompts.size != outputs.size):
        return  # not paired lengths: the workload's own check names the shapes
    longest = float(np.max(prompts + outputs))
    if longest > limit:
        which = "the longest sample's " if max(prompts.size, outputs.size) > 1 else ""
        raise ValueError(
            f"{which}prompt_tokens + output_tokens = {longest:.0f} exceeds {config.name}'s context of {limit} tokens"
        )


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
    return _kv_bytes_per_layer(config, layout.tp, bytes_per_element, not layout.attention_dp) * max(
        stage_layers(config.layers, layout.pp)
    )


def _kv_bytes_per_layer(config: ModelConfig, tp: int, bytes_per_element: Number, heads_split: bool = True) -> float:
    """KV-cache bytes one token adds to one layer on one device of a group of ``tp``.

    Split by KV heads under tensor parallelism (until one replicated head);
    whole with latent attention (one latent per token, on every device) or
    with attention run data-parallel (``heads_split`` False: each device
    caches its own sequences in full).
    """
    share = 1.0 if (config.latent_attention or not heads_split) else kv_heads_per_device(config, tp) / config.kv_heads
    return float(kv_cache_bytes_per_token(config, bytes_per_element)) * share / config.layers


def _per_device_layer(config: ModelConfig, layout: Layout, experts: float) -> float:
    """Parameters of an average layer on one device, with ``experts`` of the routed MLPs (whole or split).

    The leading dense layers of a mixture of experts are averaged in. With
    ``attention_dp`` the attention, the shared experts and the dense MLPs
    are whole on every device; only the routed experts are spread.
    """
    parts = parameter_breakdown(config)
    tp, whole = layout.tp, layout.attention_dp
    moe = config.moe_layers / config.layers
    if whole:
        attention = parts.attention
    else:
        kv = parts.attention_kv * kv_heads_per_device(config, tp) / config.kv_heads
        attention = parts.attention_qo / tp + kv + parts.attention_replicated
    replicated_split = 1 if whole else tp
    routed = moe * (experts * parts.mlp / tp + parts.shared_mlp / replicated_split + parts.router)
    return attention + routed + (1 - moe) * parts.dense_mlp / replicated_split + parts.norms


def stage_weight_bytes(config: ModelConfig, layout: Layout, weight_format: str = "bf16") -> list[float]:
    """Weight bytes on one device of each pipeline stage (every expert counted).

    The linear layers take the format's bytes per weight; the embedding and
    the output head stay in 16 bits.

    >>> from lib.transformer import PRESETS, parameter_count
    >>> config = PRESETS["llama-3-8b"]
    >>> stage_weight_bytes(config, Layout()) == [parameter_count(config) * 2.0]
    True
    >>> round(stage_weight_bytes(config, Layout(), "fp8")[0] / 1e9, 2)      # 8 bits, but the tables stay 16
    9.08
    """
    check_layout(config, layout)
    b = lookup_format(weight_format).bytes_per_weight
    parts = parameter_breakdown(config)
    layer = _per_device_layer(config, layout, config.experts)
    counts = stage_layers(config.layers, layout.pp)
    stages = []
    for i, n in enumerate(counts):
        table = parts.embedding / layout.tp if i == 0 else 0.0
        if i == len(counts) - 1:
            table += (parts.head if parts.head else (parts.embedding if layout.pp > 1 else 0)) / layout.tp
            table += parts.final_norm
        stages.append(n * layer * b + table * UNQUANTISED_BYTES)
    return stages


def weight_bytes_per_device(config: ModelConfig, layout: Layout, weight_format: str = "bf16") -> float:
    """The heaviest stage's weight bytes per device.

    >>> from lib.transformer import PRESETS
    >>> round(weight_bytes_per_device(PRESETS["llama-3-70b"], Layout(tp=8)) / 1e9, 2)
    17.64
    """
    return max(stage_weight_bytes(config, layout, weight_format))


def activation_bytes(
    config: ModelConfig, tokens: Number, tp: int = 1, sequences: Number | None = None, bytes_per_element: Number = 2
) -> float | np.ndarray:
    """An estimate of the activations and workspace of one forward step over ``tokens`` tokens.

    An assumption, stated: per token, the residual stream and its normalised
    copy, the attention input and output (4 d), this device's query, key and
    value columns, and the MLP's three inner tensors (gate, up and their
    product); plus 32-bit logits over this device's share of the vocabulary
    for the ``sequences`` that sample a token (all ``tokens`` if not given).
    Engines size this by profiling a step of ``max_num_batched_tokens``
    tokens and sampling ``max_num_seqs`` sequences (vLLM's ``profile_run``).
    A check: for Llama-3 8B on one H100 at 8,192 tokens and 256 sequences it
    gives 1.12 GiB; vLLM's profiler logged an activation peak of 1.26 GiB
    (vLLM pull request #10511).

    >>> from lib.transformer import PRESETS
    >>> from lib.units import GiB
    >>> round(activation_bytes(PRESETS["llama-3-70b"], 2048, tp=8) / 1e9, 3)
    0.315
    >>> round(activation_bytes(PRESETS["llama-3-8b"], 8192, sequences=256) / GiB, 2)
    1.12
    """
    n = _checks.nonnegative("tokens", tokens)
    k = _checks.scalar_count("tp", tp, minimum=1)
    b = _checks.positive("bytes_per_element", bytes_per_element)
    sampled = n if sequences is None else _checks.nonnegative("sequences", sequences)
    d, hd = config.hidden, config.head_dim
    qkv = (config.heads + 2 * config.kv_heads) * hd / k
    per_token = b * (4 * d + qkv + 3 * config.ffn_hidden / k)
    return _checks.result(n * per_token + sampled * 4 * config.vocab / k)


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


def _cache_sharers(layout: Layout) -> int:
    """Devices of a replica whose caches hold different sequences: ``tp`` with attention run data-parallel
    (each rank caches its own sequences whole), else 1 (every rank caches its share of every sequence)."""
    return layout.tp if layout.attention_dp else 1


def _budget(
    config: ModelConfig, device: Device, layout: Layout, engine: Engine, sequences: int = 0
) -> tuple[float, float, float]:
    """``(usable, weights, activations)`` bytes of the busiest device; the activations are sized for one
    rank's largest step (``max_num_batched_tokens``, ``max_num_seqs``), or for ``sequences`` if more."""
    ranks = _cache_sharers(layout)
    per_rank = math.ceil(sequences / ranks)
    activations = float(
        activation_bytes(
            config,
            max(engine.max_num_batched_tokens, per_rank),
            1 if layout.attention_dp else layout.tp,
            max(engine.max_num_seqs, per_rank),
        )
    )
    return (
        engine.usable_bytes(device, layout.tp),
        weight_bytes_per_device(config, layout, engine.weight_format),
        activations,
    )


def kv_token_capacity(
    config: ModelConfig, device: Device | str, layout: Layout, engine: Engine | None = None, **options: Any
) -> float:
    """Tokens of KV cache one replica holds beside its weights and activations (0 when nothing fits).

    >>> from lib.transformer import PRESETS
    >>> round(kv_token_capacity(PRESETS["llama-3-70b"], "h100-sxm", Layout(tp=8)) / 1e6, 2)
    1.37
    """
    dev = lookup_device(device)
    eng = configure(dev, engine, **options)
    usable, weights, activations = _budget(config, dev, layout, eng)
    room = max(0.0, usable - weights - activations)
    return room / kv_bytes_per_token_per_device(config, layout, eng.kv_bytes) * _cache_sharers(layout)


def memory_fit(
    config: ModelConfig,
    device: Device | str,
    layout: Layout,
    sequences: int,
    context: int,
    engine: Engine | None = None,
    **options: Any,
) -> MemoryFit:
    """The budget of the busiest device when each replica holds ``sequences`` of ``context`` tokens.

    With attention run data-parallel the ``tp`` ranks hold different
    sequences, each cached whole on its rank; ``kv_cache`` is one rank's
    even share.

    ``options`` are :class:`~lib.serving.engine.Engine` fields (formats, the
    token budget that sizes the activations, ``gpu_memory_utilization``).

    >>> from lib.transformer import PRESETS
    >>> fit = memory_fit(PRESETS["llama-3-70b"], "h100-sxm", Layout(tp=1), sequences=1, context=4096)
    >>> fit.fits, fit.reason
    (False, 'weights alone need 141.1 GB per device, more than the 76.4 GB usable (85.5 GB, 92% for the engine, less 2.3 GB outside PyTorch and for CUDA graphs)')
    """
    dev = lookup_device(device)
    eng = configure(dev, engine, **options)
    seqs = _checks.scalar_count("sequences", sequences, minimum=0)
    ctx = _checks.scalar_count("context", context, minimum=1)
    usable, weights, activations = _budget(config, dev, layout, eng, seqs)
    # the busiest device's average share of one sequence's cache
    per_sequence = ctx * kv_bytes_per_token_per_device(config, layout, eng.kv_bytes) / _cache_sharers(layout)
    room = usable - weights - activations
    max_sequences = max(0, math.floor(room / per_sequence)) if room > 0 else 0
    kv = seqs * per_sequence
    where = (
        f"{usable / GB:.1f} GB usable ({dev.memory_bytes / GB:.1f} GB, {eng.gpu_memory_utilization:.0%} for "
        f"the engine, less {eng.reserved_bytes(layout.tp) / GB:.1f} GB outside PyTorch and for CUDA graphs)"
    )
    if weights > usable:
        reason = f"weights alone need {weights / GB:.1f} GB per device, more than the {where}"
    elif room <= 0:
        reason = (
            f"weights ({weights / GB:.1f} GB) and activations ({activations / GB:.1f} GB) need more than the {where}"
        )
    elif seqs > max_sequences:
        reason = (
            f"the KV cache of {seqs} sequences of {ctx} tokens needs {kv / GB:.1f} GB per device, but only "
            f"{room / GB:.1f} GB remain after weights and activations (room for {max_sequences})"
        )
    else:
        reason = ""
    return MemoryFit(weights, kv, activations, usable, max_sequences, reason)
