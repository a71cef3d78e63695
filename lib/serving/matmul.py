"""The matrix products of one layer on one device, and their time at the throughput measured for their shape.

Introduced in chapter 7 (serving many users). A layer's linear work is a few
matrix products, each of ``m`` tokens by an ``n x k`` weight, and a product's
achieved FLOP/s depends on its shape (:mod:`lib.kernels`): a few tokens, or a
narrow shard of a small model, leave the tensor cores idle. vLLM fuses the
query, key and value projections into one product (``QKVParallelLinear``) and
the gate and up projections into another (``MergedColumnParallelLinear``;
``vllm/model_executor/models/llama.py`` and ``mixtral.py``, release 0.34.0),
so with tensor parallelism of degree ``t`` a Llama-style layer runs four on
each device:

=========== ================================= ====================
product     n (output features)               k (input features)
=========== ================================= ====================
QKV         ``(heads / t + 2 kv) d_head``     ``d``
output      ``d``                             ``heads d_head / t``
gate-up     ``2 f / t`` (``f / t`` ungated)   ``d``
down        ``d``                             ``f / t``
=========== ================================= ====================

with ``kv`` the key/value heads each device holds
(:func:`lib.transformer.kv_heads_per_device`). Each expert of a mixture runs
its own gate-up and down on the rows routed to it: ``tokens x top_k /
experts`` on average, times the busiest device's excess with expert
parallelism (whose experts are whole: ``t = 1`` in the table). The weights
this module has no shape for (latent attention's projections, shared
experts, the router, biases) are priced as one product with ``k = d`` that
holds all of them; the norms are not matrix products.

A product's arithmetic takes ``2 m n k / gemm_flops(m, n, k)``; the
operator's roofline (:mod:`lib.serving.operators`) takes the larger of that
and the time to read the weights, so a product of a few tokens is priced by
its weight reads. An engine with a ``compute_efficiency`` set prices every
product at that one fraction of the format's peak instead (the book's
single-efficiency model, which chapter 11 scores as the baseline).

>>> from lib.transformer import PRESETS
>>> from lib.serving.layout import Layout
>>> [(p.name, p.n, p.k) for p in layer_products(PRESETS["llama-3-8b"], Layout(tp=8))]
[('qkv', 768.0, 4096), ('output', 4096, 512.0), ('gate-up', 3584.0, 4096), ('down', 4096, 1792.0)]
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from lib._checks import result
from lib.formats import compute_peak
from lib.hardware import Device
from lib.kernels import gemm_flops
from lib.serving.layout import Layout
from lib.serving.memory import _per_device_layer
from lib.transformer import ModelConfig, kv_heads_per_device, parameter_breakdown

__all__ = ["ATTENTION_EFFICIENCY", "Product", "layer_products", "linear_compute_time", "product_flops"]

#: Share of the 16-bit peak that attention's matrix products reach: FlashAttention-3's forward pass, 740 TFLOP/s
#: in BF16 on an H100 SXM5 (989.4 TFLOP/s peak; Shah et al. 2024, abstract); FlashAttention-2 reaches 50-73 % on
#: an A100 (Dao 2023, abstract).
ATTENTION_EFFICIENCY = 740 / 989.4


@dataclass(frozen=True)
class Product:
    """One weight's matrix product on one device: ``n x k`` weights, run ``share`` times per layer on average.

    ``routed`` products belong to one expert and see that expert's rows;
    the others see every token the device computes. ``share`` is below 1
    for a product that only some layers have (the dense MLP of the first
    layers of a mixture of experts).
    """

    name: str
    n: float
    k: float
    share: float = 1.0
    routed: bool = False


def _mlp(prefix: str, config: ModelConfig, width: float, split: int, share: float, routed: bool) -> list[Product]:
    gate_up = (2 if config.gated_mlp else 1) * width / split
    return [
        Product(f"{prefix}gate-up", gate_up, config.hidden, share, routed),
        Product(f"{prefix}down", config.hidden, width / split, share, routed),
    ]


def layer_products(config: ModelConfig, layout: Layout) -> list[Product]:
    """The matrix products of an average layer on one device of ``layout`` (see the module notes).

    The shared products' ``n x k x share`` add up to the device's non-expert
    parameters of an average layer less its norms (and biases smaller than one
    output feature), and the routed ones' to one expert's share on the device.

    >>> from lib.transformer import PRESETS
    >>> [(p.name, p.n, p.k) for p in layer_products(PRESETS["mixtral-8x7b"], Layout(tp=2, expert_parallel=True))][-2:]
    [('expert gate-up', 28672.0, 4096), ('expert down', 4096, 14336.0)]
    """
    return list(_layer_products(config, layout))


@functools.cache
def _layer_products(config: ModelConfig, layout: Layout) -> tuple[Product, ...]:
    d, split = config.hidden, 1 if layout.attention_dp else layout.tp
    moe = config.moe_layers / config.layers
    products = []
    if not config.latent_attention:
        kv = config.kv_heads if layout.attention_dp else kv_heads_per_device(config, layout.tp)
        products += [
            Product("qkv", (config.heads / split + 2 * kv) * config.head_dim, d),
            Product("output", d, config.heads * config.head_dim / split),
        ]
    if config.dense_layers:
        products += _mlp("dense ", config, config.dense_ffn_hidden or config.ffn_hidden, split, 1 - moe, False)
    shaped = sum(p.n * p.k * p.share for p in products)
    rest = _per_device_layer(config, layout, experts=0) - parameter_breakdown(config).norms - shaped
    if rest >= d:  # at least one output feature: biases alone are not a product
        products.append(Product("other", rest / d, d))
    expert_split = 1 if layout.expert_parallel else layout.tp
    routed = _mlp("expert " if config.experts > 1 else "", config, config.ffn_hidden, expert_split, moe, True)
    return tuple(products + routed)


def product_flops(device: str | Device, fmt: str, rows: Any, n: Any, k: Any, efficiency: float | None = None) -> Any:
    """FLOP/s of ``rows`` tokens through an ``n x k`` weight: measured for the shape (:func:`lib.kernels.gemm_flops`,
    each size rounded to at least one whole row or feature; arrays broadcast), or ``efficiency`` of the format's
    peak when one is given.

    >>> round(product_flops("h100-sxm", "bf16", 4096, 4096, 4096) / 1e12, 1)   # XLA's sm_90 entry
    783.3
    >>> round(product_flops("h100-sxm", "bf16", 4096, 4096, 4096, efficiency=0.75) / 1e12, 1)
    742.1
    """
    if efficiency is not None:
        return result(np.broadcast_to(efficiency * compute_peak(device, fmt), np.broadcast(rows, n, k).shape) * 1.0)
    whole = [np.maximum(np.round(np.asarray(x, dtype=float)), 1.0) for x in (rows, n, k)]
    return gemm_flops(device, fmt, *whole, check=False)


def linear_compute_time(
    config: ModelConfig,
    layout: Layout,
    device: str | Device,
    fmt: str,
    attended: Any,
    expert_rows: Any,
    expert_pairs: Any,
    efficiency: float | None = None,
) -> Any:
    """Seconds of arithmetic in one average layer's linear products on the busiest device.

    ``attended`` tokens run the shared products; ``expert_pairs`` (token,
    expert) pairs run the routed ones, ``expert_rows`` to each expert (for
    a dense model, whose one "expert" is its MLP, both are the tokens).
    ``efficiency``: one fraction of peak for every product instead of the
    measured tables.

    >>> from lib.transformer import PRESETS
    >>> from lib.units import ms
    >>> config = PRESETS["llama-3-70b"]
    >>> [round(linear_compute_time(config, Layout(tp=2), "h100-sxm", "fp8", t, t, t) / ms, 3) for t in (64, 4096)]
    [0.163, 2.306]
    """
    products = layer_products(config, layout)
    picked = [(expert_rows, expert_pairs) if p.routed else (attended, attended) for p in products]
    # every product's rate in one evaluation: products along a new first axis
    shape = np.broadcast(*(np.asarray(rows) for rows, _ in picked)).shape
    rows = np.stack([np.broadcast_to(np.asarray(rows, dtype=float), shape) for rows, _ in picked])
    n, k = (np.array([getattr(p, size) for p in products]).reshape((-1,) + (1,) * len(shape)) for size in "nk")
    rates = product_flops(device, fmt, rows, n, k, efficiency)
    total = 0.0
    for p, (_, work), rate in zip(products, picked, rates, strict=True):
        total = total + p.share * 2 * np.asarray(work, dtype=float) * p.n * p.k / rate
    return result(total)
