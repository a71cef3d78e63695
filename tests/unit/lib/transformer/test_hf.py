"""Tests for lib.transformer.hf: models from a Hugging Face config.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from serving_support import QWEN25_32B

from lib.transformer import (
    PRESETS,
    active_parameter_count,
    context_length,
    from_hf_config,
    parameter_breakdown,
    parameter_count,
    read_hf_config,
)

#: The published config.json files (data/models/README.md gives each one's source).
MODELS = Path(__file__).parents[4] / "data" / "models"
QWEN3_30B_A3B = json.loads((MODELS / "Qwen3-30B-A3B.json").read_text())


def test_qwen25_32b_from_its_config_has_its_published_parameter_count():
    # Hugging Face lists Qwen2.5-32B's safetensors as 32.8B parameters.
    count = parameter_count(from_hf_config(QWEN25_32B))
    assert abs(count / 32.8e9 - 1) < 0.005
    assert count == parameter_count(PRESETS["qwen2.5-32b"])


@pytest.mark.parametrize(
    "field", ["num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size", "intermediate_size"]
)
def test_a_config_without_a_required_field_names_it(field):
    broken = {k: v for k, v in QWEN25_32B.items() if k != field}
    with pytest.raises(ValueError, match=field):
        from_hf_config(broken)


def test_hugging_face_defaults_and_what_cannot_be_priced():
    mixtral = from_hf_config(
        {
            "architectures": ["MixtralForCausalLM"],
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 8,
            "vocab_size": 32000,
            "num_local_experts": 8,
            "num_experts_per_tok": 2,
        }
    )
    assert parameter_count(mixtral) == parameter_count(PRESETS["mixtral-8x7b"])
    no_kv = from_hf_config({k: v for k, v in QWEN25_32B.items() if k != "num_key_value_heads"})
    assert no_kv.kv_heads == no_kv.heads  # Hugging Face's default: one KV head per head
    with pytest.raises(ValueError, match="architectures"):
        from_hf_config(dict(QWEN25_32B, architectures=["GPT2LMHeadModel"]))
    with pytest.raises(ValueError, match="shared_expert_intermediate_size"):
        from_hf_config(dict(QWEN25_32B, shared_expert_intermediate_size=2048))
    wide = from_hf_config(dict(QWEN25_32B, head_dim=256))  # an explicit head width (Qwen3, Gemma) is read
    assert (wide.head_dim, wide.head_width) == (256, 256)
    assert from_hf_config(dict(QWEN25_32B, head_dim=128)).head_width == 0  # hidden / heads: the default
    with pytest.raises(ValueError, match="mlp_only_layers"):
        from_hf_config(dict(QWEN3_30B_A3B, mlp_only_layers=[0]))
    with pytest.raises(ValueError, match="hidden_size must be a whole number, got '5120'"):
        from_hf_config(dict(QWEN25_32B, hidden_size="5120"))
    with pytest.raises(ValueError, match="num_key_value_heads must be a whole number, got 7.5"):
        from_hf_config(dict(QWEN25_32B, num_key_value_heads=7.5))
    assert from_hf_config(dict(QWEN25_32B, hidden_size=5120.0)).hidden == 5120  # JSON may write 5120.0


# Published parameter counts, from each model's card (Hugging Face README): Qwen3-32B "32.8B, non-embedding
# 31.2B"; Qwen3-30B-A3B "30.5B in total and 3.3B activated, non-embedding 29.9B"; Qwen2.5-1.5B-Instruct
# "1.54B, non-embedding 1.31B"; DeepSeek-V3 "671B total parameters with 37B activated" (README of
# deepseek-ai/DeepSeek-V3, which adds: the checkpoint's 685B are the 671B of the main model and 14B of the
# multi-token-prediction module). Totals include the embedding and, untied, the output head.
PUBLISHED = {
    "Qwen3-32B": (32.8e9, 31.2e9),
    "Qwen3-30B-A3B": (30.5e9, 29.9e9),
    "Qwen2.5-1.5B-Instruct": (1.54e9, 1.31e9),
    "DeepSeek-V3": (671e9, None),
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_each_published_config_loads_with_its_published_parameter_count(name):
    config = read_hf_config(MODELS / f"{name}.json")
    assert config.name == "models"  # the folder's name, as read_hf_config labels a file
    total, non_embedding = PUBLISHED[name]
    count = parameter_count(config)
    assert abs(count / total - 1) < 0.005
    if non_embedding is not None:
        parts = parameter_breakdown(config)
        assert abs((count - parts.embedding - parts.head) / non_embedding - 1) < 0.005


def test_active_parameters_truncate_to_the_published_two_figures():
    # The cards give active counts to two figures ("3.3B", "37B"), truncated: 3.35e9 and 37.55e9 are not
    # within 0.5 % of them, so the check is the published precision.
    qwen = active_parameter_count(read_hf_config(MODELS / "Qwen3-30B-A3B.json"))
    deepseek = active_parameter_count(read_hf_config(MODELS / "DeepSeek-V3.json"))
    assert 3.3e9 <= qwen < 3.4e9
    assert 37e9 <= deepseek < 38e9


def test_deepseek_v3_leaves_out_the_multi_token_prediction_module():
    config = read_hf_config(MODELS / "DeepSeek-V3.json")
    parts = parameter_breakdown(config)
    # The module (num_nextn_predict_layers 1) is one more routed layer, its own copies of the embedding and
    # head in the checkpoint, the projection of two concatenated hidden states and three norms.
    d = config.hidden
    mtp = parts.layer() + parts.embedding + parts.head + 2 * d * d + 3 * d
    assert abs((parameter_count(config) + mtp) / 685e9 - 1) < 0.005
    assert abs(mtp / 14e9 - 1) < 0.05  # "14B", given to two figures


def test_each_published_config_reads_its_shape_context_and_format():
    qwen3 = read_hf_config(MODELS / "Qwen3-32B.json")
    assert (qwen3.heads, qwen3.hidden, qwen3.head_dim, qwen3.context_length) == (64, 5120, 128, 40960)
    assert qwen3.hidden != qwen3.heads * qwen3.head_dim  # the explicit head_dim the old reader refused
    moe = read_hf_config(MODELS / "Qwen3-30B-A3B.json")
    assert (moe.experts, moe.experts_per_token, moe.ffn_hidden, moe.context_length) == (128, 8, 768, 40960)
    small = read_hf_config(MODELS / "Qwen2.5-1.5B-Instruct.json")
    assert small.tied_embeddings and parameter_breakdown(small).head == 0 and small.context_length == 32768
    deepseek = read_hf_config(MODELS / "DeepSeek-V3.json")
    assert deepseek.context_length == 40 * 4096 == 163840  # YaRN: factor x original_max_position_embeddings
    assert deepseek.checkpoint_format == "fp8"  # quantization_config: fp8
    assert (deepseek.kv_lora_rank, deepseek.rope_head_dim, deepseek.dense_layers) == (512, 64, 3)


def test_the_deepseek_v3_preset_is_its_config():
    read = read_hf_config(MODELS / "DeepSeek-V3.json", "DeepSeek-V3")
    preset = PRESETS["deepseek-v3"]
    fields = [f for f in read.__dataclass_fields__ if f not in ("source", "source_note", "hf_id")]
    assert {f: getattr(read, f) for f in fields} == {f: getattr(preset, f) for f in fields}


def test_context_length_follows_the_rope_scaling_as_vllm_does():
    llama31 = {
        "max_position_embeddings": 131072,
        "rope_scaling": {"factor": 8.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    }
    assert context_length(llama31) == 131072  # llama3 scaling: max_position_embeddings already counts it
    qwen_yarn = {
        "max_position_embeddings": 40960,
        "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
    }
    assert context_length(qwen_yarn) == 131072  # YaRN: from original_max_position_embeddings; "type" read too
    assert context_length({"max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 2}}) == 8192
    assert context_length({"max_position_embeddings": 8192, "rope_scaling": None}) == 8192
    assert context_length({"max_position_embeddings": 8192, "seq_length": 4096}) == 4096  # the smallest field
    gemma3 = {"model_type": "gemma3_text", "max_position_embeddings": 131072, "rope_scaling": {"factor": 8.0}}
    assert context_length(gemma3) == 131072  # Gemma 3's length already counts its scaling
    assert context_length({}) == 0
    with pytest.raises(ValueError, match="max_position_embeddings must be a positive number, got -1"):
        context_length({"max_position_embeddings": -1})
    with pytest.raises(ValueError, match="original_max_position_embeddings"):
        context_length({"max_position_embeddings": 4096, "rope_scaling": {"type": "yarn", "factor": 4.0}})
