"""A model from its Hugging Face ``config.json``: the shape every user has at hand.

Introduced with the layout planner (chapter 9). :func:`from_hf_config` reads
the fields that Llama, Mistral, Qwen2 and Qwen2.5, Mixtral and Qwen3-MoE
configurations use, with Hugging Face's defaults where a field is absent
(``num_key_value_heads`` defaults to ``num_attention_heads``,
``tie_word_embeddings`` to false, ``attention_bias`` to false). Qwen2's
attention always has biases on its query, key and value projections.
Anything the book's :class:`~lib.transformer.ModelConfig` cannot price (a
shared expert, a head width other than ``hidden_size / num_attention_heads``,
an architecture it does not know) is refused with the field's name.

>>> config = from_hf_config({"architectures": ["Qwen2ForCausalLM"], "hidden_size": 5120,
...     "intermediate_size": 27648, "num_attention_heads": 40, "num_hidden_layers": 64,
...     "num_key_value_heads": 8, "vocab_size": 152064, "tie_word_embeddings": False}, name="Qwen2.5 32B")
>>> round(parameter_count(config) / 1e9, 2), config.qkv_bias
(32.76, True)
>>> from_hf_config({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096})
Traceback (most recent call last):
...
ValueError: config.json must have num_hidden_layers (the number of transformer layers); it is missing
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lib.transformer.models import ModelConfig, parameter_count  # noqa: F401 (for the doctests)

__all__ = ["ARCHITECTURES", "from_hf_config", "read_hf_config"]

#: Architectures this reader prices, and whether their attention has query/key/value biases.
ARCHITECTURES = {
    "LlamaForCausalLM": False,
    "MistralForCausalLM": False,
    "Qwen2ForCausalLM": True,
    "MixtralForCausalLM": False,
    "Qwen3ForCausalLM": False,
    "Qwen3MoeForCausalLM": False,
}

_REQUIRED = {
    "num_hidden_layers": "the number of transformer layers",
    "hidden_size": "the width of the residual stream",
    "num_attention_heads": "the query heads",
    "vocab_size": "the vocabulary",
}


def _field(raw: dict, name: str, why: str) -> Any:
    if name not in raw:
        raise ValueError(f"config.json must have {name} ({why}); it is missing")
    return raw[name]


def _whole(name: str, value: Any) -> int:
    """The field ``name`` as an int: a whole number (``40`` or ``40.0``), else refused naming the field.

    >>> _whole("hidden_size", 4096.0)
    4096
    >>> _whole("num_hidden_layers", "32")
    Traceback (most recent call last):
    ...
    ValueError: num_hidden_layers must be a whole number, got '32'
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or (isinstance(value, float) and not value.is_integer())
    ):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    return int(value)


def from_hf_config(raw: dict, name: str | None = None) -> ModelConfig:
    """The :class:`ModelConfig` of a parsed ``config.json`` (see the module notes); ``name`` labels it."""
    if not isinstance(raw, dict):
        raise ValueError(f"config.json must hold a JSON object, got {type(raw).__name__}")
    architectures = raw.get("architectures") or []
    known = [a for a in architectures if a in ARCHITECTURES]
    if not known:
        raise ValueError(f"architectures must name one of {sorted(ARCHITECTURES)}, got {architectures!r}")
    arch = known[0]
    fields = {key: _whole(key, _field(raw, key, why)) for key, why in _REQUIRED.items()}
    heads = fields["num_attention_heads"]
    hidden = fields["hidden_size"]
    head_dim = raw.get("head_dim")
    if head_dim is not None and _whole("head_dim", head_dim) * heads != hidden:
        raise ValueError(
            f"head_dim must equal hidden_size / num_attention_heads ({hidden // heads}) for the book's "
            f"model, got {head_dim}"
        )
    if raw.get("shared_expert_intermediate_size") or raw.get("n_shared_experts"):
        raise ValueError(
            "shared_expert_intermediate_size: shared experts are not priced by this model; "
            "remove the field only if the model has none"
        )
    experts_key = "num_local_experts" if "num_local_experts" in raw else "num_experts"
    experts = _whole(experts_key, raw.get(experts_key) or 1)
    if experts > 1:
        ffn_key = "moe_intermediate_size" if "moe_intermediate_size" in raw else "intermediate_size"
        ffn = _whole(ffn_key, _field(raw, ffn_key, "the width of each expert's MLP"))
        top_k = _whole("num_experts_per_tok", _field(raw, "num_experts_per_tok", "the experts each token is routed to"))
    else:
        ffn = _whole("intermediate_size", _field(raw, "intermediate_size", "the width of the MLP"))
        top_k = 1
    label = name or raw.get("_name_or_path") or arch
    return ModelConfig(
        str(label),
        layers=fields["num_hidden_layers"],
        hidden=hidden,
        heads=heads,
        kv_heads=_whole("num_key_value_heads", raw.get("num_key_value_heads") or heads),
        ffn_hidden=ffn,
        vocab=fields["vocab_size"],
        experts=experts,
        experts_per_token=top_k,
        gated_mlp=True,
        qkv_bias=ARCHITECTURES[arch] or bool(raw.get("attention_bias", False)),
        tied_embeddings=bool(raw.get("tie_word_embeddings", False)),
        source="",
        source_note=f"read from a config.json ({arch})",
    )


def read_hf_config(path: str | Path, name: str | None = None) -> ModelConfig:
    """:func:`from_hf_config` of the file at ``path`` (``name`` defaults to its folder's name).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     file = Path(tmp) / "config.json"
    ...     _ = file.write_text('{"architectures": ["MistralForCausalLM"], "hidden_size": 4096, '
    ...                         '"intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32, '
    ...                         '"num_key_value_heads": 8, "vocab_size": 32000}')
    ...     round(parameter_count(read_hf_config(file, "Mistral 7B")) / 1e9, 2)
    7.24
    """
    file = Path(path)
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"config.json must be valid JSON: {file}: {error}") from None
    return from_hf_config(raw, name or file.parent.name)
