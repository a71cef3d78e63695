"""Tests for lib.diagrams.splits: the data of the sequence, data, expert and disaggregated diagrams agrees with lib."""

from __future__ import annotations

import json

import numpy as np
import pytest
from diagrams_support import LLAMA8, LLAMA70, MIXTRAL

from lib import collectives, diagrams, experts, serving


@pytest.mark.parametrize("tp, tokens", [(2, 512), (4, 4096), (8, 4096)])
def test_sequence_slices_tile_the_tokens_and_cost_an_all_reduce(tp, tokens):
    sp = diagrams.sequence_parallel_data(LLAMA70, tp, tokens)
    slices = [d["tokens"] for d in sp["devices"]]
    assert slices[0][0] == 0 and slices[-1][1] == tokens
    assert all(a[1] == b[0] for a, b in zip(slices, slices[1:]))
    assert len({b - a for a, b in slices}) == 1
    whole = tokens * LLAMA70.hidden * 2
    assert sp["whole_bytes"] == whole and sp["held_bytes"] == whole / tp
    halves = sp["reduce_scatter_bytes"] + sp["allgather_bytes"]
    assert halves == pytest.approx(float(collectives.allreduce_bytes(whole, tp)), rel=1e-12)


def test_replicas_take_every_request_once_and_hold_the_whole_model():
    dp = diagrams.replicas_data(LLAMA70, 4, tp=2, requests=10)
    dealt = sorted(r for rep in dp["replicas"] for r in rep["requests"])
    assert dealt == list(range(10))
    assert sorted(g for rep in dp["replicas"] for g in rep["gpus"]) == list(range(8))
    assert dp["weight_bytes"] == pytest.approx(float(serving.stage_weight_bytes(LLAMA70, serving.Layout(tp=2))[0]))


@pytest.mark.parametrize("devices, tokens", [(2, 4), (4, 8), (8, 64)])
def test_dispatch_counts_every_routed_copy_once(devices, tokens):
    ep = diagrams.dispatch_data(MIXTRAL, devices, tokens, seed=3)
    sends = np.array(ep["sends"])
    assert (sends.sum(axis=1) == tokens * MIXTRAL.experts_per_token).all()
    assert [d["receives"] for d in ep["devices"]] == sends.sum(axis=0).tolist()
    chosen = experts.route(tokens * devices, MIXTRAL.experts, MIXTRAL.experts_per_token, seed=3)
    per = MIXTRAL.experts // devices
    assert sends.sum(axis=0).tolist() == np.bincount(chosen.ravel() // per, minlength=devices).tolist()
    away = sends.sum(axis=1) - np.diag(sends)
    assert ep["dispatch_bytes"] == int(away.max()) * MIXTRAL.hidden * 2


def test_pools_split_the_gpus_and_carry_the_prompts_cache():
    pools = diagrams.disaggregated_data(LLAMA70, 3, 5, 2048, kv_bytes_per_element=1)
    assert pools["prefill"]["gpus"] + pools["decode"]["gpus"] == list(range(8))
    assert pools["kv_bytes"] == pytest.approx(float(serving.kv_cache_bytes(LLAMA70, 2048, 1)))


@pytest.mark.parametrize(
    "data",
    [
        lambda: diagrams.sequence_parallel_data(LLAMA70, 4, 1024),
        lambda: diagrams.replicas_data(LLAMA8, 2),
        lambda: diagrams.dispatch_data(MIXTRAL, 4, 8),
        lambda: diagrams.disaggregated_data(LLAMA70, 4, 4, 1024),
    ],
)
def test_data_is_plain_json_with_an_alt_text(data):
    value = data()
    assert json.loads(json.dumps(value)) == value
    assert len(value["alt"]) > 60


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: diagrams.sequence_parallel_data(LLAMA70, 3, 1024), "tp"),
        (lambda: diagrams.sequence_parallel_data(LLAMA70, 4, 1022), "tokens"),
        (lambda: diagrams.replicas_data(LLAMA8, 0), "replicas"),
        (lambda: diagrams.dispatch_data(LLAMA8, 2, 4), "config"),
        (lambda: diagrams.dispatch_data(MIXTRAL, 3, 4), "devices"),
        (lambda: diagrams.dispatch_data(MIXTRAL, 4, 0), "tokens_per_device"),
        (lambda: diagrams.disaggregated_data(LLAMA70, 0, 4, 1024), "prefill_devices"),
        (lambda: diagrams.disaggregated_data(LLAMA70, 2, 2, 2.5), "prompt_tokens"),
    ],
)
def test_bad_input_is_refused_by_name(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_every_split_has_a_chapter_section_and_figure_name():
    assert set(diagrams.SPLIT_FIGURES) == {"tensor", "sequence", "data", "pipeline", "expert", "disaggregated"}
    for notebook, heading, name in diagrams.SPLIT_FIGURES.values():
        assert notebook.endswith(".ipynb") and heading.startswith("## ") and name.startswith("c")
