"""Tests for lib.serving.memory: KV cache, weights per device and stage, and what fits in memory."""

from __future__ import annotations

import math

import pytest
from serving_support import DEEPSEEK

from lib import serving, transformer
from lib.serving import Layout
from lib.serving.engine import configure
from lib.transformer import PRESETS
from lib.units import GiB, MiB

# --- memory --------------------------------------------------------------------------------


def test_kv_cache_by_hand():
    # Llama-2 7B: 2 (K and V) x 32 layers x 32 KV heads x 128 wide x 2 bytes.
    assert serving.kv_cache_bytes(PRESETS["llama-2-7b"], 1) == 2 * 32 * 32 * 128 * 2 == 524_288
    # Llama-3 70B keeps 8 KV heads: 2 x 80 x 8 x 128 x 2 = 327,680 bytes per token.
    assert serving.kv_cache_bytes(PRESETS["llama-3-70b"], [1, 10]).tolist() == [327_680, 3_276_800]


def test_kv_per_device_follows_heads_and_stages():
    llama = PRESETS["llama-3-70b"]
    whole = serving.kv_cache_bytes(llama, 1)
    assert serving.kv_bytes_per_token_per_device(llama, Layout(tp=4)) == whole / 4
    assert serving.kv_bytes_per_token_per_device(llama, Layout(tp=8, pp=2)) == whole / 8 / 2
    assert serving.kv_bytes_per_token_per_device(llama, Layout(tp=16)) == whole / 8  # one replicated head


@pytest.mark.parametrize("key", sorted(PRESETS))
def test_one_device_holds_every_parameter(key):
    config = PRESETS[key]
    assert serving.weight_bytes_per_device(config, Layout()) == 2 * transformer.parameter_count(config)


def test_an_8_bit_format_halves_the_linear_layers_but_not_the_tables():
    llama = PRESETS["llama-3-70b"]
    parts = transformer.parameter_breakdown(llama)
    tables = parts.embedding + parts.head + parts.final_norm
    linear = transformer.parameter_count(llama) - tables
    for name, b in (("fp8", 1.0), ("int8", 1 + 2 / 128), ("int4", 0.5 + 2 / 128)):
        assert serving.weight_bytes_per_device(llama, Layout(), name) == pytest.approx(linear * b + 2 * tables)


def test_stages_hold_embedding_first_and_head_last():
    llama = PRESETS["llama-3-8b"]
    parts = transformer.parameter_breakdown(llama)
    first, last = serving.stage_weight_bytes(llama, Layout(pp=2))
    assert first - last == pytest.approx(2 * (parts.embedding - parts.head - parts.final_norm))
    assert first + last == 2 * transformer.parameter_count(llama)


def test_memory_fit_by_hand():
    # vLLM 0.33.0 on an H100: 92 % of the 81,559 MiB the driver reports, less 1.79 GiB outside PyTorch (one GPU)
    # and 0.36 GiB of CUDA graphs; activations for its 8,192-token budget and 1,024 sampled sequences.
    llama = PRESETS["llama-3-8b"]
    fit = serving.memory_fit(llama, "h100-sxm", Layout(), sequences=10, context=4096)
    assert fit.usable == pytest.approx(math.floor(81559 * MiB * 0.92) - (1.79 + 0.36) * GiB)
    assert fit.activations == pytest.approx(serving.activation_bytes(llama, 8192, 1, 1024))
    assert fit.kv_cache == pytest.approx(10 * 4096 * 131_072)
    room = fit.usable - fit.weights - fit.activations
    assert fit.max_sequences == math.floor(room / (4096 * 131_072))
    assert fit.fits and fit.reason == ""
    crowded = serving.memory_fit(llama, "h100-sxm", Layout(), sequences=fit.max_sequences + 1, context=4096)
    assert not crowded.fits and "KV cache" in crowded.reason
    # An 8-bit cache holds twice the sequences in the same room.
    fp8 = serving.memory_fit(llama, "h100-sxm", Layout(), 1, 4096, kv_format="fp8")
    assert fp8.max_sequences == math.floor(room / (4096 * 131_072 / 2))


def test_latent_attention_caches_one_latent_per_token_and_layer():
    # DeepSeek-V3: kv_lora_rank 512 + rope 64 numbers per token per layer, 61 layers, 16 bits.
    assert transformer.kv_cache_bytes_per_token(DEEPSEEK) == (512 + 64) * 61 * 2
    # Tensor parallelism cannot split a latent: every rank holds all of it.
    for tp in (1, 2, 8):
        assert serving.kv_bytes_per_token_per_device(DEEPSEEK, Layout(tp=tp)) == (512 + 64) * 61 * 2


def test_attention_data_parallel_ranks_cache_their_own_sequences():
    adp, tp = Layout(8, 1, 1, True, True), Layout(8, 1, 1, True, False)
    engine = configure("h200", weight_format="fp8")
    tokens_adp = serving.kv_token_capacity(DEEPSEEK, "h200", adp, engine)
    fit = serving.memory_fit(DEEPSEEK, "h200", adp, 64, 2048, engine)
    room = fit.usable - fit.weights - fit.activations
    per_token = serving.kv_bytes_per_token_per_device(DEEPSEEK, adp)
    # Eight ranks each hold their own sequences' whole latents.
    assert tokens_adp == pytest.approx(8 * room / per_token, rel=1e-9)
    assert fit.kv_cache == pytest.approx(64 * 2048 * per_token / 8, rel=1e-9)
    # The attention weights are whole on every rank, so each rank has less room, yet the group caches more.
    assert serving.memory_fit(DEEPSEEK, "h200", tp, 64, 2048, engine).weights < fit.weights
    assert tokens_adp > 5 * serving.kv_token_capacity(DEEPSEEK, "h200", tp, engine)
