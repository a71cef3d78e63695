"""Tests for lib.transformer.presets: every preset is cited and its size matches the published one."""

from __future__ import annotations

from pathlib import Path

import pytest

from lib import transformer as tr

# Published totals, written down from the model cards / papers, not from the code.
# (name, published parameters, where it is published)
PUBLISHED = {
    "llama-2-7b": 6.74e9,  # Llama-2-7b model card: 6.74B (7B class)
    "llama-2-13b": 13.0e9,  # Llama-2-13b model card: 13.0B
    "llama-2-70b": 69.0e9,  # Llama-2-70b model card: 69.0B (70B class)
    "llama-3-8b": 8.03e9,  # Meta-Llama-3-8B model card: 8.03B
    "llama-3-70b": 70.6e9,  # Meta-Llama-3-70B model card: 70.6B
    "llama-3.1-8b": 8.03e9,  # Hugging Face's count of Llama-3.1-8B's safetensors: 8.03B
    "llama-3.1-70b": 70.6e9,  # Hugging Face's count of Llama-3.1-70B's safetensors: 70.6B
    "llama-3.3-70b": 70.6e9,  # Hugging Face's count of Llama-3.3-70B-Instruct's safetensors: 70.6B
    "mistral-7b": 7.24e9,  # Mistral-7B-v0.1 model card: 7.24B ("7.3B" in the announcement)
    "mixtral-8x7b": 46.7e9,  # Mixtral announcement: 46.7B total, 12.9B per token
    "qwen2-7b": 7.62e9,  # Qwen2-7B model card: 7.62B
    "qwen2-72b": 72.71e9,  # Qwen2-72B model card: 72.71B
    "llama-3.1-405b": 405e9,  # Llama-3.1-405B model card: 405B
    "qwen2.5-32b": 32.5e9,  # Qwen2.5-32B model card: 32.5B
    "qwen2.5-72b": 72.7e9,  # Qwen2.5-72B model card: 72.7B
    "mixtral-8x22b": 141e9,  # Mixtral 8x22B announcement: 141B total, 39B active
    "deepseek-v3": 671e9,  # DeepSeek-V3 report: 671B total, 37B activated (without the MTP module)
    "qwen3-235b-a22b": 235e9,  # Qwen3-235B-A22B model card: 235B total, 22B activated
}


# Published parameters per token of the mixtures of experts, from the same sources.
PUBLISHED_ACTIVE = {"mixtral-8x7b": 12.9e9, "mixtral-8x22b": 39e9, "deepseek-v3": 37e9, "qwen3-235b-a22b": 22e9}


def test_at_least_six_presets_each_with_a_source():
    assert len(tr.PRESETS) >= 6
    bib = (Path(__file__).resolve().parents[4] / "references.bib").read_text(encoding="utf-8")
    for config in tr.PRESETS.values():
        assert config.source and "@" not in config.source
        assert "{" + config.source + "," in bib
        assert config.source_note


@pytest.mark.parametrize("key", sorted(PUBLISHED))
def test_parameter_count_within_two_percent_of_published(key):
    counted = tr.parameter_count(tr.PRESETS[key])
    assert abs(counted - PUBLISHED[key]) / PUBLISHED[key] < 0.02


def test_every_preset_has_a_published_total():
    assert set(tr.PRESETS) == set(PUBLISHED)


@pytest.mark.parametrize("key", sorted(PUBLISHED_ACTIVE))
def test_active_parameters_match_published(key):
    active = tr.active_parameter_count(tr.PRESETS[key])
    assert abs(active - PUBLISHED_ACTIVE[key]) / PUBLISHED_ACTIVE[key] < 0.02


def test_every_mixture_of_experts_has_a_published_active_count():
    assert {key for key, config in tr.PRESETS.items() if config.experts > 1} == set(PUBLISHED_ACTIVE)


# Context lengths: max_position_embeddings of each hf_id's config.json, after a rope scaling that extends it
# (vLLM's derivation). Llama 2: 4096; Llama 3 (first release): 8192, no rope scaling; Llama 3.1 and 3.3:
# 131072 with rope_type llama3, which keeps it; Mistral-7B-Instruct-v0.3, Mixtral-8x7B-Instruct-v0.1 and the
# Qwen2 and Qwen2.5 Instruct releases: 32768 (the Qwen cards' 131,072 needs YaRN added by hand);
# Mixtral-8x22B: 65536; DeepSeek-V3: YaRN factor 40 x 4096; Qwen3: 40960, no rope scaling.
PUBLISHED_CONTEXT = {
    "llama-2-7b": 4096,
    "llama-2-13b": 4096,
    "llama-2-70b": 4096,
    "llama-3-8b": 8192,
    "llama-3-70b": 8192,
    "llama-3.1-8b": 131072,
    "llama-3.1-70b": 131072,
    "llama-3.3-70b": 131072,
    "llama-3.1-405b": 131072,
    "mistral-7b": 32768,
    "mixtral-8x7b": 32768,
    "mixtral-8x22b": 65536,
    "qwen2-7b": 32768,
    "qwen2-72b": 32768,
    "qwen2.5-32b": 32768,
    "qwen2.5-72b": 32768,
    "deepseek-v3": 40 * 4096,
    "qwen3-235b-a22b": 40960,
}


def test_every_preset_has_its_published_context():
    assert {key: config.context_length for key, config in tr.PRESETS.items()} == PUBLISHED_CONTEXT


def test_names_repositories_and_contexts_agree():
    for key, config in tr.PRESETS.items():
        release = key.split("-")[1]  # "3", "3.1", "3.3" of a Llama key
        if key.startswith("llama-3"):
            assert config.name.startswith(f"Llama-{release} ")
            assert ("Meta-Llama-3-" in config.hf_id) == (release == "3")
            assert (config.context_length == 8192) == (release == "3")


def test_deepseek_v3_is_published_in_fp8_and_the_others_in_16_bits():
    assert {key for key, config in tr.PRESETS.items() if config.checkpoint_format != "bf16"} == {"deepseek-v3"}
    assert tr.PRESETS["deepseek-v3"].checkpoint_format == "fp8"
