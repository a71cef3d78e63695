"""Published model configurations, each with the source of its numbers.

Introduced in chapter 6 (tensor parallelism per generated token); part of
:mod:`lib.transformer`, which re-exports :data:`PRESETS`.

>>> PRESETS["llama-3-70b"].layers, PRESETS["deepseek-v3"].experts
(80, 256)
"""

from __future__ import annotations

from typing import Any

from lib.transformer.models import ModelConfig

__all__ = ["PRESETS"]


def _llama(
    name: str,
    layers: int,
    hidden: int,
    heads: int,
    kv_heads: int,
    ffn_hidden: int,
    vocab: int,
    source: str,
    source_note: str,
    **extra: Any,
) -> ModelConfig:
    return ModelConfig(
        name=name,
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads,
        ffn_hidden=ffn_hidden,
        vocab=vocab,
        source=source,
        source_note=source_note,
        **extra,
    )


#: Real published configurations, keyed by a short slug. ``source`` is a
#: ``references.bib`` key; ``source_note`` says which table or released
#: configuration file the numbers come from. ``hf_id`` is the repository
#: people serve (the Instruct release) and ``context_length`` the context
#: its ``config.json`` gives, derived as vLLM derives its ``max_model_len``
#: (:func:`lib.transformer.from_hf_config`).
PRESETS: dict[str, ModelConfig] = {
    "llama-2-7b": _llama(
        "Llama-2 7B",
        32,
        4096,
        32,
        32,
        11008,
        32000,
        "touvron2023llama2",
        "Llama 2 paper (arXiv 2307.09288) and the released config.json of Llama-2-7b (max_position_embeddings 4096)",
        hf_id="meta-llama/Llama-2-7b-hf",
        context_length=4096,
    ),
    "llama-2-13b": _llama(
        "Llama-2 13B",
        40,
        5120,
        40,
        40,
        13824,
        32000,
        "touvron2023llama2",
        "Llama 2 paper (arXiv 2307.09288) and the released config.json of Llama-2-13b (max_position_embeddings 4096)",
        hf_id="meta-llama/Llama-2-13b-hf",
        context_length=4096,
    ),
    "llama-2-70b": _llama(
        "Llama-2 70B",
        80,
        8192,
        64,
        8,
        28672,
        32000,
        "touvron2023llama2",
        "Llama 2 paper (arXiv 2307.09288; GQA with 8 KV heads) and the released config.json "
        "(max_position_embeddings 4096)",
        hf_id="meta-llama/Llama-2-70b-hf",
        context_length=4096,
    ),
    "llama-3-8b": _llama(
        "Llama-3 8B",
        32,
        4096,
        32,
        8,
        14336,
        128256,
        "grattafiori2024llama3",
        "Llama 3 paper (arXiv 2407.21783), Table 3; the first Llama 3 release, whose config.json has "
        "max_position_embeddings 8192 and no rope scaling (Llama 3.1 8B, same shape: llama-3.1-8b)",
        hf_id="meta-llama/Meta-Llama-3-8B-Instruct",
        context_length=8192,
    ),
    "llama-3-70b": _llama(
        "Llama-3 70B",
        80,
        8192,
        64,
        8,
        28672,
        128256,
        "grattafiori2024llama3",
        "Llama 3 paper (arXiv 2407.21783), Table 3; the first Llama 3 release, whose config.json has "
        "max_position_embeddings 8192 and no rope scaling (Llama 3.1 and 3.3 70B, same shape: llama-3.1-70b, "
        "llama-3.3-70b)",
        hf_id="meta-llama/Meta-Llama-3-70B-Instruct",
        context_length=8192,
    ),
    "llama-3.1-8b": _llama(
        "Llama-3.1 8B",
        32,
        4096,
        32,
        8,
        14336,
        128256,
        "grattafiori2024llama3",
        "Llama 3 paper (arXiv 2407.21783), Table 3, and meta-llama/Llama-3.1-8B's config.json "
        "(max_position_embeddings 131072 with rope_scaling of type llama3, which keeps it)",
        hf_id="meta-llama/Llama-3.1-8B-Instruct",
        context_length=131072,
    ),
    "llama-3.1-70b": _llama(
        "Llama-3.1 70B",
        80,
        8192,
        64,
        8,
        28672,
        128256,
        "grattafiori2024llama3",
        "Llama 3 paper (arXiv 2407.21783), Table 3, and meta-llama/Llama-3.1-70B's config.json "
        "(max_position_embeddings 131072 with rope_scaling of type llama3, which keeps it)",
        hf_id="meta-llama/Llama-3.1-70B-Instruct",
        context_length=131072,
    ),
    "llama-3.3-70b": _llama(
        "Llama-3.3 70B",
        80,
        8192,
        64,
        8,
        28672,
        128256,
        "grattafiori2024llama3",
        "meta-llama/Llama-3.3-70B-Instruct's config.json: the Llama 3.1 70B shape (Llama 3 paper, "
        "arXiv 2407.21783, Table 3), max_position_embeddings 131072 with rope_scaling of type llama3",
        hf_id="meta-llama/Llama-3.3-70B-Instruct",
        context_length=131072,
    ),
    "mistral-7b": _llama(
        "Mistral 7B",
        32,
        4096,
        32,
        8,
        14336,
        32000,
        "jiang2023mistral",
        "Mistral 7B paper (arXiv 2310.06825), Table 1; Mistral-7B-Instruct-v0.3's config.json: "
        "max_position_embeddings 32768, no sliding window",
        hf_id="mistralai/Mistral-7B-Instruct-v0.3",
        context_length=32768,
    ),
    "mixtral-8x7b": _llama(
        "Mixtral 8x7B",
        32,
        4096,
        32,
        8,
        14336,
        32000,
        "jiang2024mixtral",
        "Mixtral paper (arXiv 2401.04088), Table 1: 8 experts, 2 per token; config.json: max_position_embeddings 32768",
        experts=8,
        experts_per_token=2,
        hf_id="mistralai/Mixtral-8x7B-Instruct-v0.1",
        context_length=32768,
    ),
    "qwen2-7b": _llama(
        "Qwen2 7B",
        28,
        3584,
        28,
        4,
        18944,
        152064,
        "yang2024qwen2",
        "Qwen2 technical report (arXiv 2407.10671), Table 1, and the released config.json "
        "(max_position_embeddings 32768; longer only with YaRN added by hand)",
        qkv_bias=True,
        hf_id="Qwen/Qwen2-7B-Instruct",
        context_length=32768,
    ),
    "qwen2-72b": _llama(
        "Qwen2 72B",
        80,
        8192,
        64,
        8,
        29568,
        152064,
        "yang2024qwen2",
        "Qwen2 technical report (arXiv 2407.10671), Table 1, and the released config.json "
        "(max_position_embeddings 32768; longer only with YaRN added by hand)",
        qkv_bias=True,
        hf_id="Qwen/Qwen2-72B-Instruct",
        context_length=32768,
    ),
    "llama-3.1-405b": _llama(
        "Llama-3.1 405B",
        126,
        16384,
        128,
        8,
        53248,
        128256,
        "grattafiori2024llama3",
        "Llama 3 paper (arXiv 2407.21783), Table 3, and meta-llama/Llama-3.1-405B's config.json "
        "(max_position_embeddings 131072 with rope_scaling of type llama3, which keeps it)",
        hf_id="meta-llama/Llama-3.1-405B-Instruct",
        context_length=131072,
    ),
    "qwen2.5-32b": _llama(
        "Qwen2.5 32B",
        64,
        5120,
        40,
        8,
        27648,
        152064,
        "qwen2025qwen25",
        "Qwen/Qwen2.5-32B config.json (hidden_size 5120, intermediate_size 27648, 40 heads, "
        "8 KV heads, 64 layers, vocab_size 152064, untied); the Qwen2.5 report, Table 1; the Instruct "
        "config.json has max_position_embeddings 32768 (131072 only with YaRN added by hand)",
        qkv_bias=True,
        hf_id="Qwen/Qwen2.5-32B-Instruct",
        context_length=32768,
    ),
    "qwen2.5-72b": _llama(
        "Qwen2.5 72B",
        80,
        8192,
        64,
        8,
        29568,
        152064,
        "qwen2025qwen25",
        "Qwen/Qwen2.5-72B config.json (hidden_size 8192, intermediate_size 29568, 64 heads, "
        "8 KV heads, 80 layers, vocab_size 152064, untied); the Qwen2.5 report, Table 1; the Instruct "
        "config.json has max_position_embeddings 32768 (131072 only with YaRN added by hand)",
        qkv_bias=True,
        hf_id="Qwen/Qwen2.5-72B-Instruct",
        context_length=32768,
    ),
    "mixtral-8x22b": _llama(
        "Mixtral 8x22B",
        56,
        6144,
        48,
        8,
        16384,
        32768,
        "mistral2024mixtral8x22b",
        "mistralai/Mixtral-8x22B-v0.1 config.json: 8 local experts, 2 per token, "
        "hidden_size 6144, intermediate_size 16384, 56 layers, 48 heads, 8 KV heads, "
        "max_position_embeddings 65536",
        experts=8,
        experts_per_token=2,
        hf_id="mistralai/Mixtral-8x22B-Instruct-v0.1",
        context_length=65536,
    ),
    "deepseek-v3": ModelConfig(
        "DeepSeek-V3",
        layers=61,
        hidden=7168,
        heads=128,
        kv_heads=128,
        ffn_hidden=2048,
        vocab=129280,
        experts=256,
        experts_per_token=8,
        head_width=128,
        shared_experts=1,
        dense_layers=3,
        dense_ffn_hidden=18432,
        kv_lora_rank=512,
        q_lora_rank=1536,
        rope_head_dim=64,
        v_head_dim=128,
        source="deepseek2024v3",
        hf_id="deepseek-ai/DeepSeek-V3",
        context_length=163840,
        checkpoint_format="fp8",
        source_note="deepseek-ai/DeepSeek-V3 config.json: 61 layers, hidden_size 7168, 128 heads, "
        "n_routed_experts 256 of moe_intermediate_size 2048, num_experts_per_tok 8, n_shared_experts 1, "
        "first_k_dense_replace 3 (intermediate_size 18432), kv_lora_rank 512, q_lora_rank 1536, "
        "qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128, vocab_size 129280 (the multi-token "
        "prediction module is left out: 671B parameters); max_position_embeddings 163840 = YaRN factor 40 "
        "x original_max_position_embeddings 4096; weights published in FP8 (quantization_config fp8 e4m3, "
        "128x128 blocks): data/models/DeepSeek-V3.json",
    ),
    "qwen3-235b-a22b": ModelConfig(
        "Qwen3 235B-A22B",
        layers=94,
        hidden=4096,
        heads=64,
        kv_heads=4,
        ffn_hidden=1536,
        vocab=151936,
        experts=128,
        experts_per_token=8,
        head_width=128,
        source="qwen2025qwen3",
        hf_id="Qwen/Qwen3-235B-A22B",
        context_length=40960,
        source_note="Qwen/Qwen3-235B-A22B config.json: 94 layers, hidden_size 4096, 64 heads, 4 KV heads, "
        "head_dim 128, num_experts 128 of moe_intermediate_size 1536, num_experts_per_tok 8, "
        "vocab_size 151936, untied; no shared expert; max_position_embeddings 40960, no rope scaling",
    ),
}
