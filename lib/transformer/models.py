"""Transformer shapes and their parameter counts: published configurations, where the parameters sit.

Introduced in chapter 6 (tensor parallelism per generated token); part of
:mod:`lib.transformer`, which re-exports everything here.

>>> parameter_count(PRESETS["llama-3-8b"]) / 1e9 > 8
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks

__all__ = [
    "ModelConfig",
    "PRESETS",
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

    def __post_init__(self) -> None:
        for name in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab",
                     "experts", "experts_per_token"):
            value = getattr(self, name)
            _checks.count(name, value, minimum=1)
            if isinstance(value, (float, np.floating)) or np.ndim(value) != 0:
                raise ValueError(f"{name} must be a plain integer, got {value!r}")
        if self.hidden % self.heads:
            raise ValueError(f"hidden must be a multiple of heads, got hidden={self.hidden}, heads={self.heads}")
        if self.heads % self.kv_heads:
            raise ValueError(
                f"heads must be a multiple of kv_heads, got heads={self.heads}, kv_heads={self.kv_heads}"
            )
        if self.experts_per_token > self.experts:
            raise ValueError(
                f"experts_per_token must be <= experts, got experts_per_token={self.experts_per_token}, "
                f"experts={self.experts}"
            )

    @property
    def head_dim(self) -> int:
        """Width of one attention head, ``hidden // heads``."""
        return self.hidden // self.heads


def _llama(name: str, layers: int, hidden: int, heads: int, kv_heads: int, ffn_hidden: int,
           vocab: int, source: str, source_note: str, **extra: Any) -> ModelConfig:
    return ModelConfig(name=name, layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads,
                       ffn_hidden=ffn_hidden, vocab=vocab, source=source, source_note=source_note, **extra)


#: Real published configurations, keyed by a short slug. ``source`` is a
#: ``references.bib`` key; ``source_note`` says which table or released
#: configuration file the numbers come from.
PRESETS: dict[str, ModelConfig] = {
    "llama-2-7b": _llama("Llama-2 7B", 32, 4096, 32, 32, 11008, 32000, "touvron2023llama2",
                         "Llama 2 paper (arXiv 2307.09288) and the released config.json of Llama-2-7b",
        hf_id="meta-llama/Llama-2-7b-hf"),
    "llama-2-13b": _llama("Llama-2 13B", 40, 5120, 40, 40, 13824, 32000, "touvron2023llama2",
                          "Llama 2 paper (arXiv 2307.09288) and the released config.json of Llama-2-13b",
        hf_id="meta-llama/Llama-2-13b-hf"),
    "llama-2-70b": _llama("Llama-2 70B", 80, 8192, 64, 8, 28672, 32000, "touvron2023llama2",
                          "Llama 2 paper (arXiv 2307.09288; GQA with 8 KV heads) and the released config.json",
        hf_id="meta-llama/Llama-2-70b-hf"),
    "llama-3-8b": _llama("Llama-3 8B", 32, 4096, 32, 8, 14336, 128256, "grattafiori2024llama3",
                         "Llama 3 paper (arXiv 2407.21783), Table 3",
        hf_id="meta-llama/Meta-Llama-3-8B-Instruct"),
    "llama-3-70b": _llama("Llama-3 70B", 80, 8192, 64, 8, 28672, 128256, "grattafiori2024llama3",
                          "Llama 3 paper (arXiv 2407.21783), Table 3",
        hf_id="meta-llama/Meta-Llama-3-70B-Instruct"),
    "mistral-7b": _llama("Mistral 7B", 32, 4096, 32, 8, 14336, 32000, "jiang2023mistral",
                         "Mistral 7B paper (arXiv 2310.06825), Table 1",
        hf_id="mistralai/Mistral-7B-Instruct-v0.3"),
    "mixtral-8x7b": _llama("Mixtral 8x7B", 32, 4096, 32, 8, 14336, 32000, "jiang2024mixtral",
                           "Mixtral paper (arXiv 2401.04088), Table 1: 8 experts, 2 per token",
                           experts=8, experts_per_token=2,
        hf_id="mistralai/Mixtral-8x7B-Instruct-v0.1"),
    "qwen2-7b": _llama("Qwen2 7B", 28, 3584, 28, 4, 18944, 152064, "yang2024qwen2",
                       "Qwen2 technical report (arXiv 2407.10671), Table 1, and the released config.json",
                       qkv_bias=True,
        hf_id="Qwen/Qwen2-7B-Instruct"),
    "qwen2-72b": _llama("Qwen2 72B", 80, 8192, 64, 8, 29568, 152064, "yang2024qwen2",
                        "Qwen2 technical report (arXiv 2407.10671), Table 1, and the released config.json",
                        qkv_bias=True,
        hf_id="Qwen/Qwen2-72B-Instruct"),
    "llama-3.1-405b": _llama("Llama-3.1 405B", 126, 16384, 128, 8, 53248, 128256, "grattafiori2024llama3",
                             "Llama 3 paper (arXiv 2407.21783), Table 3, and meta-llama/Llama-3.1-405B's "
                             "config.json",
        hf_id="meta-llama/Llama-3.1-405B-Instruct"),
    "qwen2.5-32b": _llama("Qwen2.5 32B", 64, 5120, 40, 8, 27648, 152064, "qwen2025qwen25",
                          "Qwen/Qwen2.5-32B config.json (hidden_size 5120, intermediate_size 27648, 40 heads, "
                          "8 KV heads, 64 layers, vocab_size 152064, untied); the Qwen2.5 report, Table 1",
                          qkv_bias=True,
        hf_id="Qwen/Qwen2.5-32B-Instruct"),
    "qwen2.5-72b": _llama("Qwen2.5 72B", 80, 8192, 64, 8, 29568, 152064, "qwen2025qwen25",
                          "Qwen/Qwen2.5-72B config.json (hidden_size 8192, intermediate_size 29568, 64 heads, "
                          "8 KV heads, 80 layers, vocab_size 152064, untied); the Qwen2.5 report, Table 1",
                          qkv_bias=True,
        hf_id="Qwen/Qwen2.5-72B-Instruct"),
    "mixtral-8x22b": _llama("Mixtral 8x22B", 56, 6144, 48, 8, 16384, 32768, "mistral2024mixtral8x22b",
                            "mistralai/Mixtral-8x22B-v0.1 config.json: 8 local experts, 2 per token, "
                            "hidden_size 6144, intermediate_size 16384, 56 layers, 48 heads, 8 KV heads",
                            experts=8, experts_per_token=2,
        hf_id="mistralai/Mixtral-8x22B-Instruct-v0.1"),
}


@dataclass(frozen=True)
class ParameterBreakdown:
    """Where the parameters of a model sit, in counts of numbers (not bytes).

    Per layer: ``attention_qo`` (query and output projections, with the
    query bias), ``attention_kv`` (key and value projections, with their
    biases), ``mlp`` (one expert's MLP), ``router`` and ``norms``. Once per
    model: ``embedding`` (input), ``head`` (output; 0 when tied) and
    ``final_norm``. Tensor parallelism splits the attention by heads and the
    MLP by columns; a lookup reads one embedding row per token, not the table.

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

    def layer(self, experts: int | None = None) -> int:
        """One layer's parameters with ``experts`` MLPs (all of them by default).

        >>> parameter_breakdown(PRESETS["mixtral-8x7b"]).layer(experts=2)  # the MLPs a token runs through
        394305536
        """
        count = self.experts if experts is None else experts
        return self.attention_qo + self.attention_kv + count * self.mlp + self.router + self.norms

    def total(self, experts: int | None = None) -> int:
        """The model's parameters with ``experts`` MLPs per layer (all of them by default).

        >>> parts = parameter_breakdown(PRESETS["mixtral-8x7b"])
        >>> parts.total() == parameter_count(PRESETS["mixtral-8x7b"]), parts.total(experts=2)
        (True, 12879925248)
        """
        return self.layers * self.layer(experts) + self.embedding + self.head + self.final_norm


def parameter_breakdown(config: ModelConfig) -> ParameterBreakdown:
    """The parameters of ``config`` by part; :func:`parameter_count` is their sum.

    >>> parts = parameter_breakdown(PRESETS["llama-3-8b"])
    >>> parts.layers, parts.mlp, parts.embedding == parts.head  # untied: the head is a second table
    (32, 176160768, True)
    """
    d, hd = config.hidden, config.head_dim
    q_width, kv_width = config.heads * hd, config.kv_heads * hd
    qo = 2 * d * q_width + (q_width if config.qkv_bias else 0)
    kv = 2 * d * kv_width + (2 * kv_width if config.qkv_bias else 0)
    mlp = (3 if config.gated_mlp else 2) * d * config.ffn_hidden
    router = d * config.experts if config.experts > 1 else 0
    embedding = config.vocab * d
    return ParameterBreakdown(attention_qo=qo, attention_kv=kv, mlp=mlp, router=router, norms=2 * d,
                              embedding=embedding, head=0 if config.tied_embeddings else embedding, final_norm=d,
                              layers=config.layers, experts=config.experts)


def parameter_count(config: ModelConfig) -> int:
    """All parameters of ``config`` (every expert counted), as an integer.

    Counts the attention projections (with biases where ``qkv_bias``), the
    MLP of every expert, the norms, the router of a mixture of experts, the
    input embedding and the output head (once if tied).

    >>> parameter_count(PRESETS["llama-2-7b"])
    6738415616
    """
    return parameter_breakdown(config).total()


def active_parameter_count(config: ModelConfig) -> int:
    """Parameters one token actually uses: only ``experts_per_token`` experts.

    Equal to :func:`parameter_count` for a dense model.

    >>> round(active_parameter_count(PRESETS["mixtral-8x7b"]) / 1e9, 1)
    12.9
    """
    return parameter_breakdown(config).total(config.experts_per_token)


def decode_parameters_read(config: ModelConfig) -> int:
    """Parameters one token of a batch-1 decode step reads: the active ones, less the input embedding.

    The input embedding is a table lookup (one row per token), not a matrix
    read in full; the output head is read in full. With tied embeddings the
    head is the embedding table, so it still counts once.

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

    ``2 * layers * kv_heads * head_dim * b``.

    >>> kv_cache_bytes_per_token(PRESETS["llama-2-70b"])
    327680.0
    """
    b = _checks.positive("bytes_per_element", bytes_per_element)
    return _checks.result(2 * config.layers * config.kv_heads * config.head_dim * b)
