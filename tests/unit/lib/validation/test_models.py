"""Tests for lib.validation.models: the validated models' shapes and names."""

from __future__ import annotations

import pytest

from lib.transformer import PRESETS, parameter_count
from lib.validation import GPT_20B, INTERNLM_20B, LLAMA_3_405B, MEGATRON_530B, model_config


def test_model_shapes_match_their_names():
    assert parameter_count(GPT_20B) / 1e9 == pytest.approx(20.5, abs=0.3)
    assert parameter_count(MEGATRON_530B) / 1e9 == pytest.approx(530, abs=3)
    assert parameter_count(INTERNLM_20B) / 1e9 == pytest.approx(20, abs=0.5)
    assert parameter_count(LLAMA_3_405B) / 1e9 == pytest.approx(405, abs=3)
    assert model_config("meta-llama/Llama-3.3-70B-Instruct") is PRESETS["llama-3-70b"]
    with pytest.raises(ValueError, match="must start with a model"):
        model_config("Deci/DeciLM-7B")
