"""A model from its Hugging Face ``config.json``: the shape every user has at hand.

Introduced with the layout planner (chapter 9). :func:`from_hf_config` reads
the fields that Llama, Mistral, Qwen2 and Qwen2.5, Mixtral, Qwen3, Qwen3-MoE
and DeepSeek-V3 configurations use, with Hugging Face's defaults where a
field is absent (``num_key_value_heads`` defaults to ``num_attention_heads``,
``tie_word_embeddings`` to false, ``attention_bias`` to false). Qwen2's
attention always has biases on its query, key and value projections. An
explicit ``head_dim`` (Qwen3, Gemma) sets the head width; a mixture of
experts sizes its experts by ``moe_intermediate_size`` where the file has
it; DeepSeek-V3's multi-head latent attention, shared expert and leading
dense layers are read from their own fields (its multi-token-prediction
layers, ``num_nextn_predict_layers``, are left out, as its published 671B
parameters leave them out). Anything the book's
:class:`~lib.transformer.ModelConfig` cannot price (Qwen2-MoE's shared
expert, experts on only some layers, an architecture it does not know) is
refused with the field's name.

The context length is derived as vLLM derives its default ``max_model_len``
(``_get_and_verify_max_len`` in ``vllm/config/model.py``, vllm-project/vllm
at commit 0052a5b8): the smallest of the length fields present
(:data:`LENGTH_KEYS`; ``model_max_length`` wins where set), then, unless the
model is Gemma 3, a rope scaling other than ``llama3``, ``su`` or
``longrope`` multiplies it by its ``factor``, starting for YaRN from
``original_max_position_embeddings``. Llama 3.1 (``llama3``) keeps its
131,072; DeepSeek-V3 (YaRN, 40 x 4,096) gets 163,840. A file with none of
the fields gives 0 (unknown), where vLLM would assume 2,048.

>>> config = from_hf_config({"architectures": ["Qwen2ForCausalLM"], "hidden_size": 5120,
...     "intermediate_size": 27648, "num_attention_heads": 40, "num_hidden_layers": 64,
...     "num_key_value_heads": 8, "vocab_size": 152064, "tie_word_embeddings": False,
...     "max_position_embeddings": 32768}, name="Qwen2.5 32B")
>>> round(parameter_count(config) / 1e9, 2), config.qkv_bias, config.context_length
(32.76, True, 32768)
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

__all__ = ["ARCHITECTURES", "LENGTH_KEYS", "context_length", "from_hf_config", "read_hf_config"]

#: Architectures this reader prices, and whether their attention has query/key/value biases.
ARCHITECTURES = {
    "LlamaForCausalLM": False,
    "MistralForCausalLM": False,
    "Qwen2ForCausalLM": True,
    "MixtralForCausalLM": False,
    "Qwen3ForCausalLM": False,
    "Qwen3MoeForCausalLM": False,
    "DeepseekV3ForCausalLM": False,
}

#: Fields that bound a model's length, as vLLM's ``_get_and_verify_max_len`` lists them
#: (vllm/config/model.py, vllm-project/vllm at commit 0052a5b8): the smallest present counts.
LENGTH_KEYS = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_target_positions",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)
#: Rope scalings whose ``max_position_embeddings`` already counts the extension (vLLM leaves them alone).
_UNSCALED_ROPE = ("su", "longrope", "llama3")

_REQUIRED = {
    "num_hidden_layers": "the number of transformer layers",
    "hidden_size": "the width of the residual stream",
    "num_attention_heads": "the query heads",
    "vocab_size": "the vocabulary",
}

#: DeepSeek-V3's fields of multi-head latent attention and of its experts, and what each is.
_DEEPSEEK = {
    "kv_lora_rank": "the width of the cached latent",
    "qk_rope_head_dim": "the rotary part of a query or key head",
    "qk_nope_head_dim": "the no-rope part of a query or key head",
    "v_head_dim": "the width of a value head",
    "n_routed_experts": "the routed experts per layer",
    "num_experts_per_tok": "the experts each token is routed to",
    "moe_intermediate_size": "the width of each expert's MLP",
    "intermediate_size": "the width of the dense layers' MLP",
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


def _positive(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value == float("inf"):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return float(value)


def context_length(raw: dict) -> int:
    """The tokens of context a parsed ``config.json`` allows, as vLLM derives ``max_model_len`` (module notes).

    >>> context_length({"max_position_embeddings": 131072, "rope_scaling": {"rope_type": "llama3", "factor": 8.0,
    ...     "original_max_position_embeddings": 8192}})
    131072
    >>> context_length({"max_position_embeddings": 40960, "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
    ...     "original_max_position_embeddings": 32768}})
    131072
    >>> context_length({"hidden_size": 4096})   # no length field: unknown
    0
    """
    found = [_positive(key, raw[key]) for key in LENGTH_KEYS if raw.get(key) is not None]
    if not found:
        return 0
    length = _positive("model_max_length", raw["model_max_length"]) if raw.get("model_max_length") else min(found)
    scalings = raw.get("rope_scaling") or raw.get("rope_parameters")
    if scalings and "gemma3" not in str(raw.get("model_type", "")):
        if not isinstance(scalings, dict):
            raise ValueError(f"rope_scaling must be an object, got {scalings!r}")
        # Transformers 5 may key rope_parameters by layer type; vLLM assumes one factor for all of them.
        per_layer = scalings.values() if all(isinstance(v, dict) for v in scalings.values()) else [scalings]
        factor = 1.0
        for scaling in per_layer:
            kind = scaling.get("rope_type", scaling.get("type", "default"))
            if kind in _UNSCALED_ROPE:
                continue
            factor = _positive("rope_scaling.factor", scaling.get("factor", factor))
            if kind == "yarn":
                length = _positive(
                    "rope_scaling.original_max_position_embeddings",
                    _field(scaling, "original_max_position_embeddings", "the length YaRN extends"),
                )
        length *= factor
    return int(length)


def _optional(raw: dict, name: str) -> int:
    """A count that may be absent or null (0 then)."""
    value = raw.get(name)
    return 0 if value is None else _whole(name, value)


def _deepseek(raw: dict) -> dict:
    """ModelConfig's fields of a DeepSeek-V3 config: latent attention, shared experts, leading dense layers."""
    f = {key: _whole(key, _field(raw, key, why)) for key, why in _DEEPSEEK.items()}
    if _optional(raw, "moe_layer_freq") not in (0, 1):
        raise ValueError(f"moe_layer_freq: experts on every k-th layer are not priced, got {raw['moe_layer_freq']!r}")
    return dict(
        experts=f["n_routed_experts"],
        experts_per_token=f["num_experts_per_tok"],
        ffn_hidden=f["moe_intermediate_size"],
        shared_experts=_optional(raw, "n_shared_experts"),
        dense_layers=_optional(raw, "first_k_dense_replace"),
        dense_ffn_hidden=f["intermediate_size"],
        kv_lora_rank=f["kv_lora_rank"],
        q_lora_rank=_optional(raw, "q_lora_rank"),
        rope_head_dim=f["qk_rope_head_dim"],
        head_width=f["qk_nope_head_dim"],
        v_head_dim=f["v_head_dim"],
    )


def _experts(raw: dict) -> dict:
    """The experts of a Mixtral or Qwen3-MoE config (one "expert", the MLP, for a dense model)."""
    if raw.get("shared_expert_intermediate_size") or raw.get("n_shared_experts"):
        raise ValueError(
            "shared_expert_intermediate_size: shared experts are not priced by this model; "
            "remove the field only if the model has none"
        )
    if raw.get("mlp_only_layers") or _optional(raw, "decoder_sparse_step") > 1:
        raise ValueError(
            "mlp_only_layers, decoder_sparse_step: experts on only some layers are not priced, got "
            f"{raw.get('mlp_only_layers')!r}, {raw.get('decoder_sparse_step')!r}"
        )
    experts_key = "num_local_experts" if "num_local_experts" in raw else "num_experts"
    experts = _whole(experts_key, raw.get(experts_key) or 1)
    if experts == 1:
        return dict(ffn_hidden=_whole("intermediate_size", _field(raw, "intermediate_size", "the width of the MLP")))
    ffn_key = "moe_intermediate_size" if "moe_intermediate_size" in raw else "intermediate_size"
    return dict(
        experts=experts,
        ffn_hidden=_whole(ffn_key, _field(raw, ffn_key, "the width of each expert's MLP")),
        experts_per_token=_whole(
            "num_experts_per_tok", _field(raw, "num_experts_per_tok", "the experts each token is routed to")
        ),
    )


def _checkpoint_format(raw: dict) -> str:
    """The published weights' format: ``"fp8"`` for a ``quantization_config`` of FP8 (DeepSeek-V3), else bf16."""
    quantization = raw.get("quantization_config")
    if isinstance(quantization, dict) and quantization.get("quant_method") == "fp8":
        return "fp8"
    return "bf16"


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
    if arch == "DeepseekV3ForCausalLM":
        shape = _deepseek(raw)
    else:
        shape = _experts(raw)
        head_dim = raw.get("head_dim")
        if head_dim is not None and _whole("head_dim", head_dim) * heads != hidden:
            shape["head_width"] = _whole("head_dim", head_dim)
    label = name or raw.get("_name_or_path") or arch
    return ModelConfig(
        str(label),
        layers=fields["num_hidden_layers"],
        hidden=hidden,
        heads=heads,
        kv_heads=_whole("num_key_value_heads", raw.get("num_key_value_heads") or heads),
        vocab=fields["vocab_size"],
        gated_mlp=True,
        qkv_bias=ARCHITECTURES[arch] or bool(raw.get("attention_bias", False)),
        tied_embeddings=bool(raw.get("tie_word_embeddings", False)),
        source="",
        source_note=f"read from a config.json ({arch})",
        context_length=context_length(raw),
        checkpoint_format=_checkpoint_format(raw),
        **shape,
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
