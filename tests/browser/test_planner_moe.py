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

import pytest
from test_planner import GOLDEN, assert_page_agrees, tab  # noqa: F401 (tab: fixture)
from test_planner_map import layout_of

from lib.serving import best, leader, plan, tie_note
from lib.serving.command import vllm_command
from lib.serving.engine import configure
from lib.transformer import PRESETS
from tools.site.planner_golden import MOE_KINDS, MOE_SCENARIOS, lib_arguments, moe_kinds

pytestmark = pytest.mark.browser

#: tools/site/planner_golden.py's mixture-of-experts scenarios (each model of MOE_MODELS twice, the second time with
#: targets) and lib's rows; the browser opens the fewest that show every case kind.
SCENARIOS = GOLDEN["moe"]
OPENED = GOLDEN["e2e"]["moe"]

#: Chapter 12's scenario (notebooks/12_engines_today.ipynb: TTFT, TPOT, fp8, MOE_PROMPT, MOE_OUTPUT).
CHAPTER_12 = dict(
    model="deepseek-v3",
    device="h200",
    devices="16",
    devices_per_node="8",
    batch="64",
    prompt_tokens="1024",
    output_tokens="2048",
    weight_format="fp8",
    ttft_limit_ms="1000",
    tpot_limit_ms="50",
    expert_parallel="all",
)


#: Mixtral 8x7B on two H100s with every expert layout and chat targets: attention data-parallel with whole experts
#: leads TP 2 by about 2 %, far inside the model's held-out error (lib.serving.plan.TIE_BAND).
MIXTRAL_TIE = dict(
    model="mixtral-8x7b",
    device="h100-sxm",
    devices="2",
    devices_per_node="8",
    batch="64",
    prompt_tokens="256",
    output_tokens="256",
    ttft_limit_ms="1000",
    tpot_limit_ms="100",
    expert_parallel="all",
)


def test_moe_scenarios_cover_attention_data_parallel():
    kinds = {kind: 0 for kind in MOE_KINDS}
    for entry in SCENARIOS:
        for kind in moe_kinds(entry["query"], entry["rows"], entry["best"]):
            kinds[kind] += 1
    assert len(SCENARIOS) == MOE_SCENARIOS
    assert all(count >= 2 for count in kinds.values()), kinds
    opened = set().union(
        *(moe_kinds(SCENARIOS[i]["query"], SCENARIOS[i]["rows"], SCENARIOS[i]["best"]) for i in OPENED)
    )
    assert opened == set(MOE_KINDS), f"the scenarios opened in the browser miss {set(MOE_KINDS) - opened}"


@pytest.mark.parametrize("index", OPENED)
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
    assert (
        command
        == vllm_command(
            PRESETS["deepseek-v3"].hf_id,
            layout_of(chosen.name),
            configure("h200", weight_format="fp8"),
            int(CHAPTER_12["prompt_tokens"]) + int(CHAPTER_12["output_tokens"]),
            mixture_of_experts=True,
        ).text
    )
    shown = json.loads(page.get_attribute("#pl-map", "data-map"))
    assert shown["layout"] == chosen.name


def test_mixtral_on_two_h100s_gives_tp2_and_says_why(tab):  # noqa: F811 (tab: the fixture)
    """The page, like lib and the command line, deploys TP 2 when the adp row leads it inside the model's error."""
    args, options = lib_arguments(MIXTRAL_TIE)
    rows = plan(*args, **options)
    chosen = best(rows, options["devices_per_node"])
    assert leader(rows).name == "adp2-ep2-pp1-dp1" and chosen.name == "tp2-pp1-dp1"
    page = tab(MIXTRAL_TIE)
    assert page.locator('tr[data-best="true"]').get_attribute("data-layout") == "tp2-pp1-dp1"
    summary = page.locator("#pl-summary").inner_text()
    assert f"A tie: {tie_note(rows, chosen, options['devices_per_node'])}." in summary, summary
    assert "tp2-pp1-dp1 is simpler: tensor, not experts + attention data-parallel" in summary, summary
