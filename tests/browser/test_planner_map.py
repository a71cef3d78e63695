"""The planner's device map (book/planner.md, _static/planner-map.js) against ``lib.diagrams.device_map_data``.

The page draws the map of the best row, and of any row whose layout name is
clicked. These tests read the placement the page drew (``data-map`` on the
figure) and compare it, GPU by GPU and collective by collective, with the
library's, then click another row and see the map follow it.
"""

from __future__ import annotations

import json
import re

import pytest
from site_support import open_page, query

from lib.diagrams import device_map_data
from lib.serving import Cluster, Layout
from lib.transformer import PRESETS

pytestmark = pytest.mark.browser

PAGE = "book/planner.html"
GPU_FIELDS = ("gpu", "server", "slot", "replica", "stage", "tp_rank", "layers")


def layout_of(name: str) -> Layout:
    """``Layout`` from a name such as ``tp2-pp2-dp2``, ``ep4-pp1-dp2`` or ``adp8-ep8-pp1-dp2``."""
    adp, kind, tp, pp, dp = re.fullmatch(r"(adp\d+-)?(tp|ep)(\d+)-pp(\d+)-dp(\d+)", name).groups()
    return Layout(tp=int(tp), pp=int(pp), dp=int(dp), expert_parallel=kind == "ep", attention_dp=adp is not None)


def drawn(page) -> dict:
    page.wait_for_selector("#pl-map[data-map]")
    return json.loads(page.get_attribute("#pl-map", "data-map"))


def assert_same_as_lib(shown: dict, model: str, device: str, per_node: int) -> None:
    lib = device_map_data(PRESETS[model], layout_of(shown["layout"]), Cluster(device, per_node))
    assert shown["layout"] == lib["layout"]
    assert [{k: g[k] for k in GPU_FIELDS} for g in shown["gpus"]] == [
        {k: list(g[k]) if k == "layers" else g[k] for k in GPU_FIELDS} for g in lib["gpus"]
    ]
    assert len(shown["collectives"]) == len(lib["collectives"])
    for mine, theirs in zip(shown["collectives"], lib["collectives"]):
        members = ("from_gpus", "to_gpus") if theirs["kind"] == "send" else ("gpus",)
        assert mine["kind"] == theirs["kind"] and mine["across_servers"] == theirs["across_servers"]
        assert all(mine[key] == theirs[key] for key in members), (mine, theirs)
        assert mine["link"]["slug"] == theirs["link_slug"], (mine, theirs)


@pytest.mark.parametrize(
    "scenario",
    [
        dict(
            model="llama-3-70b",
            device="h100-sxm",
            devices="8",
            devices_per_node="8",
            batch="64",
            prompt_tokens="1024",
            output_tokens="256",
        ),
        dict(
            model="llama-3.1-405b",
            device="h100-sxm",
            devices="16",
            devices_per_node="8",
            batch="64",
            prompt_tokens="1024",
            output_tokens="256",
        ),
        dict(
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
        ),
    ],
    ids=["one server", "two servers", "attention data-parallel"],
)
def test_the_map_is_the_best_rows_and_follows_a_clicked_row(context, base_url, scenario):
    page, visit = open_page(context, base_url + PAGE + query(scenario))
    page.wait_for_selector("tr[data-layout]")
    best = page.get_attribute('tr[data-best="true"]', "data-layout")
    shown = drawn(page)
    assert shown["layout"] == best
    per_node = int(scenario["devices_per_node"])
    assert_same_as_lib(shown, scenario["model"], scenario["device"], per_node)
    words = page.inner_text("#pl-map ul")
    assert words.strip() and page.get_attribute("#pl-map svg", "aria-label").startswith("Device map of " + best)

    others = [
        name
        for name in page.eval_on_selector_all("tr[data-layout]", "rows => rows.map(r => r.dataset.layout)")
        if name != best and layout_of(name).pp > 1
    ]
    assert others, "the scenario should list a pipelined layout to click"
    page.click(f'tr[data-layout="{others[0]}"] .pl-map-link')
    page.wait_for_function(f"document.getElementById('pl-map').dataset.layout === '{others[0]}'")
    clicked = drawn(page)
    assert clicked != shown and clicked["layout"] == others[0]
    assert_same_as_lib(clicked, scenario["model"], scenario["device"], per_node)
    assert any(c["kind"] == "send" for c in clicked["collectives"])
    assert page.inner_text("#pl-map ul") != words
    assert not visit.page_errors, visit.page_errors
    page.close()
