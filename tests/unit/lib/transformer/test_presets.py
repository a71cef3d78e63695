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
