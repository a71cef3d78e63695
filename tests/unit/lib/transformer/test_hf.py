"""Tests for lib.transformer.hf: models from a Hugging Face config.json."""

from __future__ import annotations

import pytest
from serving_support import QWEN25_32B

from lib.transformer import PRESETS, from_hf_config, parameter_count


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
    with pytest.raises(ValueError, match="head_dim"):
        from_hf_config(dict(QWEN25_32B, head_dim=256))
    with pytest.raises(ValueError, match="hidden_size must be a whole number, got '5120'"):
        from_hf_config(dict(QWEN25_32B, hidden_size="5120"))
    with pytest.raises(ValueError, match="num_key_value_heads must be a whole number, got 7.5"):
        from_hf_config(dict(QWEN25_32B, num_key_value_heads=7.5))
    assert from_hf_config(dict(QWEN25_32B, hidden_size=5120.0)).hidden == 5120  # JSON may write 5120.0
