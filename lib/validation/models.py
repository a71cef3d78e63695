"""The model behind each name in ``data/published``: the book's presets, and four shapes the sources benchmark.

Introduced in chapter 11 (does the model hold?). A ``model`` cell names a
model as its source prints it (``meta-llama/Llama-2-7b-hf``, ``llama2-7b``,
``GPT-20B (head_num 48, ...)``); :func:`model_config` maps it to a
:class:`lib.transformer.ModelConfig`. Llama 3.1 and 3.3 have Llama 3's
shapes at 8B and 70B. A name with no entry (DeciLM-7B, whose attention
varies by layer) is not modelled, and its rows are left unscored.

>>> model_config("GPT-20B (head_num 48, size_per_head 128)").layers
44
>>> model_config("meta-llama/Llama-3.3-70B-Instruct") is PRESETS["llama-3-70b"]
True
"""

from __future__ import annotations

from lib.transformer import PRESETS, ModelConfig

__all__ = ["GPT_20B", "MEGATRON_530B", "INTERNLM_20B", "LLAMA_3_405B", "MODELS", "model_config", "modelled"]

#: GPT-20B as FasterTransformer benchmarks it (GPT-style: two-matrix GELU MLP, biases, tied embeddings).
GPT_20B = ModelConfig(
    "GPT-20B",
    layers=44,
    hidden=48 * 128,
    heads=48,
    kv_heads=48,
    ffn_hidden=24576,
    vocab=51200,
    gated_mlp=False,
    qkv_bias=True,
    tied_embeddings=True,
    source="fastertransformer",
    source_note="docs/gpt_guide.md lines 1249-1253 (head_num 48, size_per_head 128, num_layers 44, vocab_size "
    "51200) and examples/cpp/multi_gpu_gpt/gpt_config.ini lines 96-103 (inter_size 24576), commit df4a753",
)
#: Megatron-530B as FasterTransformer benchmarks it.
MEGATRON_530B = ModelConfig(
    "Megatron-530B",
    layers=105,
    hidden=128 * 160,
    heads=128,
    kv_heads=128,
    ffn_hidden=81920,
    vocab=51200,
    gated_mlp=False,
    qkv_bias=True,
    tied_embeddings=True,
    source="fastertransformer",
    source_note="docs/gpt_guide.md lines 1136-1140 (head_num 128, size_per_head 160, num_layers 105, vocab_size "
    "51200) and docs/models/megatron-530b-model.md lines 49-75 (per-rank shapes of a 16-way split: "
    "dense_h_to_4h 5120 x 20480, so 81920 in all), commit df4a753",
)
#: InternLM-20B, LMDeploy's TP 2 model: 60 layers (InternLM's model card); the other shapes as in its released
#: config.json (hidden 5120, 40 heads, MLP 13824, vocabulary 103168; not re-read here).
INTERNLM_20B = ModelConfig(
    "InternLM-20B",
    layers=60,
    hidden=5120,
    heads=40,
    kv_heads=40,
    ffn_hidden=13824,
    vocab=103168,
    source="internlm20b",
    source_note="InternLM/InternLM model_cards/internlm_20b.md (60 layers); widths from the released config.json",
)
#: Llama 3.1 405B (the Llama 3 paper, Table 3: 126 layers, width 16384, MLP 53248, 128 heads, 8 KV heads).
LLAMA_3_405B = ModelConfig(
    "Llama-3.1 405B",
    layers=126,
    hidden=16384,
    heads=128,
    kv_heads=8,
    ffn_hidden=53248,
    vocab=128256,
    source="grattafiori2024llama3",
    source_note="Llama 3 paper (arXiv 2407.21783), Table 3",
)

#: The configuration behind each model name in ``data/published`` (the text before `` (`` is the name).
MODELS: dict[str, ModelConfig] = {
    "GPT-20B": GPT_20B,
    "Megatron-530B": MEGATRON_530B,
    "Llama-2-7B": PRESETS["llama-2-7b"],
    "Llama-2-70B": PRESETS["llama-2-70b"],
    "Llama-3.1-8B": PRESETS["llama-3-8b"],
    "Llama-3.1-70B": PRESETS["llama-3-70b"],
    "Mixtral 8x7B": PRESETS["mixtral-8x7b"],
    "meta-llama/Llama-2-7b-hf": PRESETS["llama-2-7b"],
    "meta-llama/Llama-2-70b-hf": PRESETS["llama-2-70b"],
    "meta-llama/Meta-Llama-3-8B": PRESETS["llama-3-8b"],
    "meta-llama/Meta-Llama-3-70B": PRESETS["llama-3-70b"],
    "mistralai/Mistral-7B-v0.1": PRESETS["mistral-7b"],
    "mistralai/Mixtral-8x7B-v0.1": PRESETS["mixtral-8x7b"],
    "Qwen/Qwen2-7B": PRESETS["qwen2-7b"],
    "llama2-7b": PRESETS["llama-2-7b"],
    "llama2-13b": PRESETS["llama-2-13b"],
    "llama2-70b": PRESETS["llama-2-70b"],
    "internlm-20b": INTERNLM_20B,
    "meta-llama/Llama-3.1-8B-Instruct": PRESETS["llama-3-8b"],
    "meta-llama/Llama-3.1-70B-Instruct": PRESETS["llama-3-70b"],
    "meta-llama/Llama-3.3-70B-Instruct": PRESETS["llama-3-70b"],
    "Llama 3.1 70B Instruct": PRESETS["llama-3-70b"],
    "meta-llama/Llama-3.1-405B-Instruct": LLAMA_3_405B,
    "Llama 3.1 405B Instruct": LLAMA_3_405B,
}


def _key(name: str) -> str:
    return name.split(" (")[0]


def modelled(name: str) -> bool:
    """Whether :func:`model_config` knows the model of a ``model`` cell.

    >>> modelled("Deci/DeciLM-7B"), modelled("llama2-13b")
    (False, True)
    """
    return _key(name) in MODELS


def model_config(name: str) -> ModelConfig:
    """The :class:`ModelConfig` for a ``model`` cell of ``data/published`` (text before `` (`` is the name).

    >>> model_config("GPT-4")
    Traceback (most recent call last):
    ...
    ValueError: name must start with a model of lib.validation.MODELS, got 'GPT-4'
    """
    if not modelled(name):
        raise ValueError(f"name must start with a model of lib.validation.MODELS, got {name!r}")
    return MODELS[_key(name)]
