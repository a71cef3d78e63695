"""Tests for lib.transformer.models: parameter counts and their breakdown."""

from __future__ import annotations

import pytest

from lib import transformer as tr


def test_dense_active_equals_total():
    config = tr.PRESETS["llama-3-8b"]
    assert tr.active_parameter_count(config) == tr.parameter_count(config)


def test_parameter_count_by_hand_for_a_tiny_model():
    config = tr.ModelConfig("tiny", layers=2, hidden=8, heads=2, kv_heads=1, ffn_hidden=16, vocab=10)
    # per layer: q 8x8, k 8x4, v 8x4, o 8x8 = 192; mlp 3*8*16 = 384; norms 16 -> 592
    # embeddings 2 * 10 * 8 = 160; final norm 8
    assert tr.parameter_count(config) == 2 * 592 + 160 + 8


@pytest.mark.parametrize("key", sorted(tr.PRESETS))
def test_parameter_breakdown_sums_to_the_count(key):
    config = tr.PRESETS[key]
    parts = tr.parameter_breakdown(config)
    assert parts.total() == tr.parameter_count(config)
    if not parts.dense_layers:
        assert config.layers * parts.layer() + parts.embedding + parts.head + parts.final_norm == parts.total()


def test_context_length_and_checkpoint_format_are_checked():
    tiny = dict(layers=2, hidden=8, heads=2, kv_heads=1, ffn_hidden=16, vocab=10)
    assert tr.ModelConfig("tiny", **tiny).context_length == 0  # unknown unless given
    assert tr.ModelConfig("tiny", **tiny, context_length=4096).context_length == 4096
    with pytest.raises(ValueError, match="context_length"):
        tr.ModelConfig("tiny", **tiny, context_length=-1)
    with pytest.raises(ValueError, match="context_length must be a plain integer"):
        tr.ModelConfig("tiny", **tiny, context_length=4096.0)
    with pytest.raises(ValueError, match="checkpoint_format must be one of .*, got 'fp4'"):
        tr.ModelConfig("tiny", **tiny, checkpoint_format="fp4")
