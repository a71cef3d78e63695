"""The planner's deploy lines (book/planner.md) against ``lib.serving.vllm_command`` and ``sglang_command``."""

from __future__ import annotations

import pytest
from site_support import open_page, query
from test_planner_map import layout_of

from lib.serving import configure
from lib.serving.command import parse_vllm_command, sglang_command, vllm_command
from lib.transformer import PRESETS

pytestmark = pytest.mark.browser

PAGE = "book/planner.html"
BASE = dict(
    model="llama-3-70b",
    device="h100-sxm",
    devices="8",
    devices_per_node="8",
    batch="64",
    prompt_tokens="1024",
    output_tokens="256",
)


@pytest.mark.parametrize(
    "extra, engine",
    [
        ({}, {}),
        (dict(weight_format="fp8", kv_format="fp8"), dict(weight_format="fp8", kv_format="fp8")),
        (
            dict(allreduce="nccl", cuda_graphs="off", max_num_seqs="128"),
            dict(allreduce="nccl", cuda_graphs=False, max_num_seqs=128),
        ),
    ],
    ids=["defaults", "fp8", "nccl, eager, 128 sequences"],
)
def test_the_deploy_line_is_libs_for_the_best_row(context, base_url, extra, engine):
    page, visit = open_page(context, base_url + PAGE + query({**BASE, **extra}))
    page.wait_for_selector('tr[data-best="true"]')
    best = page.get_attribute('tr[data-best="true"]', "data-layout")
    shown = page.inner_text("#pl-command").strip()
    length = int(BASE["prompt_tokens"]) + int(BASE["output_tokens"])
    expected = vllm_command(PRESETS[BASE["model"]].hf_id, layout_of(best), configure(BASE["device"], **engine), length)
    assert shown == expected.text
    sglang = sglang_command(PRESETS[BASE["model"]].hf_id, layout_of(best), configure(BASE["device"], **engine), length)
    assert page.inner_text("#pl-command-sglang").strip() == sglang.text
    flags = parse_vllm_command(expected.lines[0])
    layout = layout_of(best)
    assert (flags["tensor-parallel-size"], flags["pipeline-parallel-size"]) == (str(layout.tp), str(layout.pp))
    assert int(flags["data-parallel-size"]) * expected.copies == layout.dp
    assert flags["max-model-len"] == str(length)
    assert flags.get("quantization") == ("fp8" if engine.get("weight_format") == "fp8" else None)
    assert flags["kv-cache-dtype"] == ("fp8" if engine.get("kv_format") == "fp8" else "auto")
    assert not visit.page_errors, visit.page_errors
    page.close()
