"""Transformer shapes and their parameter counts: published configurations, where the parameters sit.

Introduced in chapter 6 (tensor parallelism per generated token); part of
:mod:`lib.transformer`, which re-exports everything here.

>>> from lib.transformer import PRESETS
>>> parameter_count(PRESETS["llama-3-8b"]) / 1e9 > 8
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks
from lib.formats import WEIGHT_FORMATS

__all__ = [
    "ModelConfig",
    "ParameterBreakdown",
    "parameter_breakdown",
    "parameter_count",
    "active_parameter_count",
    "decode_parameters_read",
    "kv_cache_bytes_per_token",
]

Number = Any  # a float or a numpy array of floats


@dataclass(frozen=True)
class ModelConfig:
    """The shape of a decoder-only transformer (Llama-style blocks).

    Parameters
    ----------
    name : str
        Human-readable name, e.g. ``"Llama-2 70B"``.
    layers : int
        ``L``, the number of transformer blocks.
    hidden : int
        ``d``, the width of the residual stream.
    heads : int
        Attention (query) heads.
    kv_heads : int
        Key/value heads (fewer than ``heads`` with grouped-query attention).
    ffn_hidden : int
        Inner width of the MLP (of each expert, for a mixture of experts).
    vocab : int
        Vocabulary size (rows of the embedding).
    experts : int
        MLP experts per layer (1 for a dense model).
    experts_per_token : int
        Experts each token is routed to (1 for a dense model).
    gated_mlp : bool
        ``True`` for a SwiGLU MLP (three matrices), ``False`` for two.
    qkv_bias : bool
        Whether the query, key and value projections carry a bias (Qwen2).
    tied_embeddings : bool
        Whether the output head reuses the input embedding matrix.
    source : str
        Key in ``references.bib`` of the paper that publishes the model.
    source_note : str
        Where exactly the numbers come from.
    hf_id : str
        The model's repository on Hugging Face, as ``vllm serve`` takes it ("" if none).
    head_width : int
        Width of one attention head when it is not ``hidden / heads`` (Qwen3); 0 for the default.
    shared_experts, shared_ffn_hidden : int
        Experts every token runs through besides its routed ones (DeepSeek-V3: 1), and their MLP width
        (0: ``ffn_hidden``).
    dense_layers, dense_ffn_hidden : int
        The first layers of a mixture of experts that have a dense MLP instead (DeepSeek-V3: 3), and its width.
    kv_lora_rank, q_lora_rank, rope_head_dim, v_head_dim : int
        Multi-head latent attention (DeepSeek-V2/V3) when ``kv_lora_rank > 0``: the cache holds one latent
        of ``kv_lora_rank + rope_head_dim`` numbers per token and layer instead of keys and values;
        queries go through a ``q_lora_rank`` bottleneck; ``head_dim`` is the no-rope part of a query or
        key head, ``v_head_dim`` a value head's width (0: ``head_dim``).
    context_length : int
        Tokens of context the model was trained to attend to, prompt and output together (0: unknown): a
        ``config.json``'s ``max_position_embeddings``, times the factor of a rope scaling that extends it
        (:func:`lib.transformer.from_hf_config`). Serving refuses longer requests.
    checkpoint_format : str
        The format of the published weights, a :data:`lib.formats.WEIGHT_FORMATS` key (DeepSeek-V3: ``"fp8"``).

    >>> ModelConfig("tiny", layers=2, hidden=64, heads=4, kv_heads=2, ffn_hidden=128, vocab=100).head_dim
    16
    >>> ModelConfig("bad", layers=2, hidden=60, heads=8, kv_heads=2, ffn_hidden=128, vocab=100)
    Traceback (most recent call last):
    ...
    ValueError: hidden must be a multiple of heads, got hidden=60, heads=8
    """

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn_hidden: int
    vocab: int
    experts: int = 1
    experts_per_token: int = 1
    gated_mlp: bool = True
    qkv_bias: bool = False
    tied_embeddings: bool = False
    source: str = ""
    source_note: str = ""
    hf_id: str = ""
    head_width: int = 0
    shared_experts: int = 0
    shared_ffn_hidden: int = 0
    dense_layers: int = 0
    dense_ffn_hidden: int = 0
    kv_lora_rank: int = 0
    q_lora_rank: int = 0
    rope_head_dim: int = 0
    v_head_dim: int = 0
    context_length: int = 0
    checkpoint_format: str = "bf16"

    def __post_init__(self) -> None:
        for name in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "experts", "experts_per_token"):
            value = getattr(self, name)
            _checks.count(name, value, minimum=1)
            if isinstance(value, (float, np.floating)) or np.ndim(value) != 0:
                raise ValueError(f"{name} must be a plain integer, got {value!r}")
        for name in (
            "head_width",
            "shared_experts",
            "shared_ffn_hidden",
            "dense_layers",
            "dense_ffn_hidden",
            "kv_lora_rank",
            "q_lora_rank",
            "rope_head_dim",
            "v_head_dim",
            "context_length",
        ):
            value = getattr(self, name)
            _checks.count(name, value, minimum=0)
            if isinstance(value, (float, np.floating)) or np.ndim(value) != 0:
                raise ValueError(f"{name} must be a plain integer, got {value!r}")
        if self.checkpoint_format not in WEIGHT_FORMATS:
            raise ValueError(
                f"checkpoint_format must be one of {sorted(WEIGHT_FORMATS)}, got {self.checkpoint_format!r}"
            )
        if self.dense_layers >= self.layers:
            raise ValueError(f"dense_layers must be fewer than the {self.layers} layers, got {self.dense_layers}")
        if self.head_width == 0 and self.hidden % self.heads:
            raise ValueError(f"hidden must be a multiple of heads, got hidden={self.hidden}, heads={self.heads}")
        if self.heads % self.kv_heads:
            raise ValueError(f"heads must be a multiple of kv_heads, got heads={self.heads}, kv_heads={self.kv_heads}")
        if self.experts_per_token > self.experts:
            raise ValueError(
                f"experts_per_token must be <= experts, got experts_per_token={self.experts_per_token}, "
                f"experts={self.experts}"
            )

    @property
    def head_dim(self) -> int:
        """Width of one attention head: ``head_width``, or ``hidden // heads``."""
        return self.head_width or self.hidden // self.heads

    @property
    def latent_attention(self) -> bool:
        """Whether attention is multi-head latent attention (a compressed cache; ``kv_lora_rank > 0``)."""
        return self.kv_lora_rank > 0

    @property
    def value_dim(self) -> int:
        """Width of one value head (``v_head_dim``, or ``head_dim``)."""
        return self.v_head_dim or self.head_dim

    @property
    def moe_layers(self) -> int:
        """Layers with the routed MLP (all of them for a dense model, whose one "expert" is its MLP)."""
        return self.layers - self.dense_layers

    def attention_flops(self, decode: bool = True) -> float:
        """FLOPs one new token spends per cached position per layer, over all heads.

        Standard attention: ``2 (d_head)`` to score a key and ``2 (d_head)`` to weigh its value, per head:
        ``4 heads d_head``. Latent attention in decode works in the latent space (the key and value up-
        projections absorbed into the query and output): ``2 (r + d_rope) + 2 r`` per head with latent
        width ``r``; in prefill it expands keys and values: ``2 (d_head + d_rope) + 2 d_v`` per head.

        >>> from lib.transformer import PRESETS
        >>> PRESETS["llama-3-8b"].attention_flops(), PRESETS["deepseek-v3"].attention_flops()
        (16384, 278528)
        """
        if not self.latent_attention:
            return 4 * self.heads * self.head_dim
        if decode:
            return self.heads * (2 * (self.kv_lora_rank + self.rope_head_dim) + 2 * self.kv_lora_rank)
        return self.heads * (2 * (self.head_dim + self.rope_head_dim) + 2 * self.value_dim)


@dataclass(frozen=True)
class ParameterBreakdown:
    """Where the parameters of a model sit, in counts of numbers (not bytes).

    Per layer: ``attention_qo`` (what tensor parallelism splits by query
    heads: the query and output projections with the query bias, and with
    latent attention the key/value up-projection too), ``attention_kv`` (key
    and value projections with their biases, split by KV heads),
    ``attention_replicated`` (latent attention's down-projections and their
    norms, which every device holds whole), ``mlp`` (one expert's MLP),
    ``shared_mlp`` (the shared experts of one layer), ``router`` and
    ``norms``. ``dense_mlp`` is the MLP of each of the first
    ``dense_layers`` layers of a mixture of experts. Once per model:
    ``embedding`` (input), ``head`` (output; 0 when tied) and
    ``final_norm``. Tensor parallelism splits the attention by heads and the
    MLP by columns; a lookup reads one embedding row per token, not the table.

    >>> from lib.transformer import PRESETS
    >>> parts = parameter_breakdown(PRESETS["llama-3-8b"])
    >>> parts.embedding == parts.head == 128256 * 4096
    True
    """

    attention_qo: int
    attention_kv: int
    mlp: int
    router: int
    norms: int
    embedding: int
    head: int
    final_norm: int
    layers: int
    experts: int
    attention_replicated: int = 0
    shared_mlp: int = 0
    dense_mlp: int = 0
    dense_layers: int = 0

    @property
    def attention(self) -> int:
        """One layer's attention parameters."""
        return self.attention_qo + self.attention_kv + self.attention_replicated

    def layer(self, experts: int | None = None) -> int:
        """One routed layer's parameters with ``experts`` MLPs (all of them by default).

        >>> from lib.transformer import PRESETS
        >>> parameter_breakdown(PRESETS["mixtral-8x7b"]).layer(experts=2)  # the MLPs a token runs through
        394305536
        """
        count = self.experts if experts is None else experts
        return self.attention + count * self.mlp + self.shared_mlp + self.router + self.norms

    def total(self, experts: int | None = None) -> int:
        """The model's parameters with ``experts`` MLPs per routed layer (all of them by default).

        >>> from lib.transformer import PRESETS
        >>> parts = parameter_breakdown(PRESETS["mixtral-8x7b"])
        >>> parts.total() == parameter_count(PRESETS["mixtral-8x7b"]), parts.total(experts=2)
        (True, 12879925248)
        """
        dense = self.dense_layers * (self.attention + self.dense_mlp + self.norms)
        return (
            (self.layers - self.dense_layers) * self.layer(experts)
            + dense
            + self.embedding
            + self.head
            + self.final_norm
        )


def parameter_breakdown(config: ModelConfig) -> ParameterBreakdown:
    """The parameters of ``config`` by part; :func:`parameter_count` is their sum.

    >>> from lib.transformer import PRESETS
    >>> parts = parameter_breakdown(PRESETS["llama-3-8b"])
    >>> parts.layers, parts.mlp, parts.embedding == parts.head  # untied: the head is a second table
    (32, 176160768, True)
    """
    d, hd = config.hidden, config.head_dim
    q_width, kv_width = config.heads * hd, config.kv_heads * hd
    replicated = 0
    if config.latent_attention:
        rank, rope = config.kv_lora_rank, config.rope_head_dim
        q_in = config.q_lora_rank or d
        q_heads = config.heads * (hd + rope)
        qo = (
            q_in * q_heads
            + config.heads * config.value_dim * d  # query up (or whole), output
            + rank * config.heads * (hd + config.value_dim)
        )  # key/value up-projection
        kv = 0
        replicated = (
            d * (rank + rope) + rank + ((d * config.q_lora_rank + config.q_lora_rank) if config.q_lora_rank else 0)
        )
    else:
        qo = d * q_width + q_width * d + (q_width if config.qkv_bias else 0)
        kv = 2 * d * kv_width + (2 * kv_width if config.qkv_bias else 0)
    matrices = 3 if config.gated_mlp else 2
    mlp = matrices * d * config.ffn_hidden
    shared = config.shared_experts * matrices * d * (config.shared_ffn_hidden or config.ffn_hidden)
    dense = matrices * d * (config.dense_ffn_hidden or config.ffn_hidden) if config.dense_layers else 0
    router = d * config.experts if config.experts > 1 else 0
    embedding = config.vocab * d
    return ParameterBreakdown(
        attention_qo=qo,
        attention_kv=kv,
        mlp=mlp,
        router=router,
        norms=2 * d,
        embedding=embedding,
        head=0 if config.tied_embeddings else embedding,
        final_norm=d,
        layers=config.layers,
        experts=config.experts,
        attention_replicated=replicated,
        shared_mlp=shared,
        dense_mlp=dense,
        dense_layers=config.dense_layers,
    )


def parameter_count(config: ModelConfig) -> int:
    """All parameters of ``config`` (every expert counted), as an integer.

    Counts the attention projections (with biases where ``qkv_bias``), the
    MLP of every expert, the norms, the router of a mixture of experts, the
    input embedding and the output head (once if tied).

    >>> from lib.transformer import PRESETS
    >>> parameter_count(PRESETS["llama-2-7b"])
    6738415616
    """
    return parameter_breakdown(config).total()


def active_parameter_count(config: ModelConfig) -> int:
    """Parameters one token actually uses: only ``experts_per_token`` experts.

    Equal to :func:`parameter_count` for a dense model.

    >>> from lib.transformer import PRESETS
    >>> round(active_parameter_count(PRESETS["mixtral-8x7b"]) / 1e9, 1)
    12.9
    """
    return parameter_breakdown(config).total(config.experts_per_token)


def decode_parameters_read(config: ModelConfig) -> int:
    """Parameters one token of a batch-1 decode step reads: the active ones, less the input embedding.

    The input embedding is a table lookup (one row per token), not a matrix
    read in full; the output head is read in full. With tied embeddings the
    head is the embedding table, so it still counts once.

    >>> from lib.transformer import PRESETS
    >>> config = PRESETS["llama-3-8b"]
    >>> active, read = active_parameter_count(config), decode_parameters_read(config)
    >>> round(100 * (active - read) / read, 1)      # % of bytes a bound that counted the lookup would add
    7.0
    """
    parts = parameter_breakdown(config)
    lookup = parts.embedding if parts.head else 0
    return parts.total(config.experts_per_token) - lookup


def kv_cache_bytes_per_token(config: ModelConfig, bytes_per_element: Number = 2) -> float | np.ndarray:
    """Bytes of keys and values one token adds to the KV cache (all layers).

    ``2 * layers * kv_heads * head_dim * b``; with latent attention one latent of
    ``kv_lora_rank + rope_head_dim`` numbers per layer instead.

    >>> from lib.transformer import PRESETS
    >>> kv_cache_bytes_per_token(PRESETS["llama-2-70b"])
    327680.0
    """
    b = _checks.positive("bytes_per_element", bytes_per_element)
    if config.latent_attention:
        return _checks.result(config.layers * (config.kv_lora_rank + config.rope_head_dim) * b)
    return _checks.result(2 * config.layers * config.kv_heads * config.head_dim * b)
