"""The planner's reader of a Hugging Face config.json (_static/planner-config.js) against ``lib.transformer.hf``.

For every architecture ``from_hf_config`` accepts, the page reads a
config.json (pasted, or picked as a file) into the same shape and echoes the
same parameter count as ``parameter_count``; a config without a required
field, or of an unknown architecture, is refused with ``lib``'s own message,
which names the field.
"""

from __future__ import annotations

import json

import pytest
from site_support import query

from lib.transformer import ARCHITECTURES, PRESETS, from_hf_config, parameter_count
from tools.sphinx.planner_data import PAGE_REFUSES

pytestmark = pytest.mark.browser

PAGE = "book/planner.html"

#: Hugging Face lists Qwen2.5-32B's safetensors as 32.8B parameters (as tests/unit/lib/serving/test_capacity.py does).
QWEN25_32B_PUBLISHED = 32.8e9


def config_json(key: str, architecture: str, **extra) -> dict:
    """A config.json of the preset ``key``, in Hugging Face's field names, as ``architecture``."""
    c = PRESETS[key]
    raw = {
        "architectures": [architecture],
        "num_hidden_layers": c.layers,
        "hidden_size": c.hidden,
        "num_attention_heads": c.heads,
        "num_key_value_heads": c.kv_heads,
        "vocab_size": c.vocab,
        "tie_word_embeddings": c.tied_embeddings,
        "intermediate_size": c.ffn_hidden,
    }
    if c.experts > 1:
        raw.update(num_local_experts=c.experts, num_experts_per_tok=c.experts_per_token)
    return {**raw, **extra}


QWEN = config_json("qwen2.5-32b", "Qwen2ForCausalLM", _name_or_path="Qwen/Qwen2.5-32B")

#: One config per architecture (and Hugging Face's defaults: no KV heads, biases asked for, tied embeddings).
CONFIGS = {
    "LlamaForCausalLM": config_json("llama-3-8b", "LlamaForCausalLM"),
    "MistralForCausalLM": config_json("mistral-7b", "MistralForCausalLM"),
    "Qwen2ForCausalLM": QWEN,
    "MixtralForCausalLM": config_json("mixtral-8x7b", "MixtralForCausalLM"),
    "Qwen3ForCausalLM": {
        "architectures": ["Qwen3ForCausalLM"],
        "num_hidden_layers": 28,
        "hidden_size": 2048,
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "vocab_size": 151936,
        "intermediate_size": 6144,
        "tie_word_embeddings": True,
    },
    "Qwen3MoeForCausalLM": {
        "architectures": ["Qwen3MoeForCausalLM"],
        "num_hidden_layers": 48,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 4,
        "vocab_size": 151936,
        "intermediate_size": 12288,
        "moe_intermediate_size": 1536,
        "num_experts": 128,
        "num_experts_per_tok": 8,
    },
    "Llama, no KV heads, biases": {
        k: v
        for k, v in config_json("llama-2-7b", "LlamaForCausalLM", attention_bias=True).items()
        if k != "num_key_value_heads"
    },
}

FIELDS = {
    "layers": "layers",
    "hidden": "hidden",
    "heads": "heads",
    "kv_heads": "kv_heads",
    "ffn_hidden": "ffn_hidden",
    "vocab": "vocab",
    "experts": "experts",
    "top_k": "experts_per_token",
}

READ = """() => ({fields: Object.fromEntries(%s.map((n) => [n, document.querySelector(`[name="${n}"]`).value])),
  qkv_bias: document.querySelector('[name="qkv_bias"]').checked,
  tied_embeddings: document.querySelector('[name="tied_embeddings"]').checked,
  model: document.querySelector('[name="model"]').value,
  count: document.getElementById('pl-params').getAttribute('data-value'),
  error: document.getElementById('pl-config-error').hidden ? null : document.getElementById('pl-config-error').innerText,
  status: document.getElementById('pl-config-status').innerText})""".replace("%s", json.dumps(list(FIELDS)))


@pytest.fixture(scope="module")
def planner(context, base_url):
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    def paste(text: str) -> dict:
        page.goto(base_url + PAGE + query({"devices": "8"}), wait_until="load")
        page.wait_for_selector("tr[data-layout]")
        page.locator(".pl-config summary").click()
        page.fill("#pl-config-text", text)
        page.click("#pl-config-read")
        return page.evaluate(READ)

    paste.page = page
    yield paste
    assert not errors, errors
    page.close()


def test_every_architecture_lib_accepts_is_tried():
    assert {raw["architectures"][0] for raw in CONFIGS.values()} == set(ARCHITECTURES) - set(PAGE_REFUSES)


def test_what_the_custom_model_cannot_hold_is_refused_on_the_page(planner):
    # lib reads an explicit head width and DeepSeek-V3's latent attention; the page's custom model has no field
    # for either, so its reader refuses them, naming the field.
    got = planner(json.dumps(dict(QWEN, head_dim=256)))
    assert got["error"].startswith("head_dim must equal hidden_size / num_attention_heads (128) for this page"), got
    assert from_hf_config(dict(QWEN, head_dim=256)).head_width == 256
    got = planner(json.dumps(dict(QWEN, architectures=list(PAGE_REFUSES))))
    assert got["error"].startswith(f"architectures {PAGE_REFUSES[0]!r} uses latent attention"), got
    assert got["model"] == "llama-3-70b"


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_the_page_reads_a_config_as_lib_does(planner, name):
    raw = CONFIGS[name]
    want = from_hf_config(raw)
    got = planner(json.dumps(raw, indent=2))
    assert got["error"] is None and got["model"] == "custom", got
    assert {f: int(v) for f, v in got["fields"].items()} == {f: getattr(want, a) for f, a in FIELDS.items()}
    assert (got["qkv_bias"], got["tied_embeddings"]) == (want.qkv_bias, want.tied_embeddings)
    assert int(got["count"]) == parameter_count(want)
    assert raw["architectures"][0] in got["status"]
    assert planner.page.locator("tr[data-layout]").count() > 0


def test_qwen25_32b_has_its_published_count(planner):
    got = planner(json.dumps(QWEN))
    assert abs(int(got["count"]) / QWEN25_32B_PUBLISHED - 1) < 0.005
    shown = planner.page.locator("#pl-params").inner_text()
    assert f"{parameter_count(from_hf_config(QWEN)) / 1e9:.2f} billion parameters" in shown, shown
    assert "Qwen/Qwen2.5-32B" in got["status"]


def test_a_picked_file_is_read_too(planner, tmp_path):
    planner(json.dumps(CONFIGS["LlamaForCausalLM"]))
    file = tmp_path / "config.json"
    file.write_text(json.dumps(QWEN), encoding="utf-8")
    planner.page.set_input_files("#pl-config-file", str(file))
    planner.page.wait_for_function("document.getElementById('pl-config-status').innerText.includes('Qwen2')")
    assert int(planner.page.evaluate(READ)["count"]) == parameter_count(from_hf_config(QWEN))


def _without(field: str) -> dict:
    return {k: v for k, v in QWEN.items() if k != field}


@pytest.mark.parametrize(
    "raw, field",
    [
        *[
            (_without(f), f)
            for f in ("num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size", "intermediate_size")
        ],
        ({k: v for k, v in CONFIGS["MixtralForCausalLM"].items() if k != "num_experts_per_tok"}, "num_experts_per_tok"),
        (dict(QWEN, architectures=["GPT2LMHeadModel"]), "architectures"),
        (_without("architectures"), "architectures"),
        (dict(QWEN, shared_expert_intermediate_size=2048), "shared_expert_intermediate_size"),
        (dict(QWEN, hidden_size="5120"), "hidden_size"),
        (dict(QWEN, num_key_value_heads=7.5), "num_key_value_heads"),
        ([QWEN], "JSON object"),
    ],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_a_refused_config_names_the_field_as_lib_does(planner, raw, field):
    with pytest.raises(ValueError) as refused:
        from_hf_config(raw)
    got = planner(json.dumps(raw))
    assert got["error"] == str(refused.value) + "." and field in got["error"], got["error"]
    assert got["model"] == "llama-3-70b"  # the model stays as it was
    assert planner.page.locator("#pl-config-text").get_attribute("aria-invalid") == "true"


def test_text_that_is_not_json_is_refused(planner):
    got = planner('{"architectures": ["LlamaForCausalLM"],')
    assert got["error"].startswith("config.json must be valid JSON: "), got["error"]
