"""The planner (book/planner.md) with attention run data-parallel (``expert_parallel="all"``) against lib.serving.

The adp layouts bring what the dense rows never price: the whole attention
on every rank of the expert group, DeepSeek-V3's latent (MLA) cache held per
rank, the shared experts run data-parallel, the all-gather and reduce-scatter
around each routed layer over NVLink and, in a group wider than a server,
over the NICs, and the busiest rank's share of the experts. These tests draw
mixture-of-experts scenarios on one server and several, with and without
latency targets, and compare every row with ``lib.serving.plan`` as the
parity test does (:func:`test_planner.assert_page_agrees`); then they open
chapter 12's scenario, DeepSeek-V3 on two servers of eight H200s, and check
the best layout and the word for what binds it.
"""

from __future__ import annotations

import json
import random

import pytest

from lib import hardware
from lib.serving import best, plan
from lib.serving.command import vllm_command
from lib.serving.engine import configure
from lib.transformer import PRESETS
from test_planner import assert_page_agrees, lib_arguments, random_scenario, scenarios, tab  # noqa: F401 (tab: fixture)
from test_planner_map import layout_of

pytestmark = pytest.mark.browser

#: Mixture-of-experts scenarios drawn for the parity test (the main test draws 36 more).
MOE_SCENARIOS = 12
MOE_MODELS = ("deepseek-v3", "qwen3-235b-a22b", "mixtral-8x7b", "mixtral-8x22b")
MOE_DEVICES = ("h200", "b200", "h100-sxm", "a100-80gb")

#: Chapter 12's scenario (notebooks/12_engines_today.ipynb: TTFT, TPOT, fp8, MOE_PROMPT, MOE_OUTPUT).
CHAPTER_12 = dict(model="deepseek-v3", device="h200", devices="16", devices_per_node="8", batch="64",
                  prompt_tokens="1024", output_tokens="2048", weight_format="fp8", ttft_limit_ms="1000",
                  tpot_limit_ms="50", expert_parallel="all")


def moe_scenario(rng: random.Random, model: str, targets: bool) -> dict[str, str]:
    """A scenario of :func:`test_planner.random_scenario` with ``model`` on servers of eight catalogue GPUs, one
    to four of them, every layout (``"all"``), and latency targets or none."""
    q = {k: v for k, v in random_scenario(rng).items()
         if k not in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "experts", "top_k",
                      "memory_GiB", "bandwidth_TBps", "flops_TFLOPS", "ttft_limit_ms", "tpot_limit_ms")}
    device = rng.choice(MOE_DEVICES)
    q.update(model=model, device=device, link=hardware.DEVICES[device].link, devices_per_node="8",
             devices=str(8 * rng.choice([1, 2, 2, 4])), expert_parallel="all")
    if targets:
        q.update(ttft_limit_ms=str(rng.choice([500, 1000, 3000])), tpot_limit_ms=str(rng.choice([30, 50, 100])))
    return q


def moe_draw(rng: random.Random, index: int) -> dict[str, str]:
    """Scenario ``index``: each model of :data:`MOE_MODELS` in turn, twice, the second time with targets."""
    return moe_scenario(rng, MOE_MODELS[index // 2 % len(MOE_MODELS)], targets=index % 2 == 1)


SCENARIOS = scenarios(MOE_SCENARIOS, seed=2412, draw=moe_draw)


def test_moe_scenarios_cover_attention_data_parallel():
    kinds = {model: 0 for model in ("deepseek-v3", "qwen3-235b-a22b")} | {
        "mixtral": 0, "several servers": 0, "adp group across servers": 0, "an adp row fits": 0,
        "targets": 0, "no target": 0, "an adp row carries requests": 0, "an adp row is best": 0}
    for q in SCENARIOS:
        args, options = lib_arguments(q)
        rows = plan(*args, **options)
        adp = [r for r in rows if r.attention_dp]
        chosen = best(rows)
        kinds[q["model"] if q["model"] in kinds else "mixtral"] += 1
        kinds["several servers"] += int(q["devices"]) > 8
        kinds["adp group across servers"] += any(r.tp > 8 for r in adp)
        kinds["an adp row fits"] += any(r.fits for r in adp)
        kinds["targets" if options["tpot_limit"] else "no target"] += 1
        kinds["an adp row carries requests"] += any(r.capacity for r in adp)
        kinds["an adp row is best"] += chosen is not None and chosen.attention_dp
    assert all(count >= 2 for count in kinds.values()), kinds


@pytest.mark.parametrize("index", range(MOE_SCENARIOS))
def test_page_agrees_with_lib_with_attention_data_parallel(tab, index):  # noqa: F811 (tab: the fixture)
    assert_page_agrees(tab, SCENARIOS[index], f"MoE scenario {index}")


def test_chapter_12_deepseek_on_two_servers_of_h200(tab):  # noqa: F811 (tab: the fixture)
    """The page plans chapter 12's DeepSeek-V3 and names, in words, the layout and what binds it, as lib does."""
    args, options = lib_arguments(CHAPTER_12)
    chosen = best(plan(*args, **options))
    assert chosen.name == "adp8-ep8-pp1-dp2" and chosen.binding == "TPOT target"  # chapter 12's finding
    page = tab(CHAPTER_12)
    row = page.locator('tr[data-best="true"]')
    assert row.get_attribute("data-layout") == chosen.name
    assert row.locator('[data-output="layout"]').inner_text().startswith("adp8 · ep8 · pp1 · dp2")
    assert row.locator('[data-output="binding"]').inner_text() == chosen.binding
    summary = page.locator("#pl-summary").inner_text()
    assert chosen.name in summary and f"before the {chosen.binding} binds" in summary, summary
    assert "(attention data-parallel and experts over 8 × pipeline 1 × data 2)" in summary, summary
    command = page.inner_text("#pl-command").strip()
    assert command == vllm_command(PRESETS["deepseek-v3"].hf_id, layout_of(chosen.name),
                                   configure("h200", weight_format="fp8"))
    shown = json.loads(page.get_attribute("#pl-map", "data-map"))
    assert shown["layout"] == chosen.name
