"""Tests for lib.diagrams.data: the data behind each diagram is lib's own, and bad input is refused."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from diagrams_support import H100, LLAMA8, LLAMA70, MIXTRAL, _texts  # noqa: E402

from lib import diagrams  # noqa: E402
from lib.collectives import engine_allreduce, kernel_for  # noqa: E402
from lib.serving import Cluster, Layout, hop_time, layouts, stage_layers, stage_weight_bytes  # noqa: E402
from lib.serving.engine import configure  # noqa: E402
from lib.serving.operators import pass_work, tp_allreduce  # noqa: E402
from lib.serving.step import _hop_links  # noqa: E402
from lib.transformer import PRESETS, valid_tp_degrees  # noqa: E402


def covers(ranges, total):
    """The half-open ranges tile [0, total) in order."""
    return ranges[0][0] == 0 and ranges[-1][1] == total and all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))


# --- the tensor-parallel block -------------------------------------------------------------------------------


@pytest.mark.parametrize("config", [LLAMA70, LLAMA8, MIXTRAL, PRESETS["qwen2-7b"]], ids=lambda c: c.name)
def test_block_shards_tile_heads_and_columns(config):
    for tp in valid_tp_degrees(config, 64, replicate_kv=True):
        block = diagrams.tp_block_data(config, tp)
        devices = block["devices"]
        assert len(devices) == tp
        assert covers([d["query_heads"] for d in devices], config.heads)
        assert covers([d["mlp_columns"] for d in devices], config.ffn_hidden)
        if tp <= config.kv_heads:
            assert covers([d["kv_heads"] for d in devices], config.kv_heads)
        else:  # each KV head copied on tp / kv_heads devices, in order
            heads = [d["kv_heads"][0] for d in devices]
            assert heads == sorted(heads) and all(heads.count(h) == tp // config.kv_heads for h in set(heads))
            assert all(d["kv_copies"] == tp // config.kv_heads for d in devices)
        assert len(block["allreduces"]) == (2 if tp > 1 else 0)
        assert all(a["message_bytes_per_token"] == config.hidden * 2 for a in block["allreduces"])


def test_block_allreduces_sit_after_the_two_row_parallel_projections():
    block = diagrams.tp_block_data(LLAMA70, 8)
    assert [a["after"] for a in block["allreduces"]] == ["attention output projection", "MLP down projection"]
    assert block["allreduces"][0]["ring_bytes_per_device"] == pytest.approx(2 * 7 / 8 * 16384)


# --- pipeline stages ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pp", [1, 2, 3, 5, 8, 80])
def test_stages_follow_stage_layers_and_sum_to_the_model(pp):
    pipe = diagrams.pipeline_data(LLAMA70, pp)
    stages = pipe["stages"]
    assert [s["layer_count"] for s in stages] == stage_layers(LLAMA70.layers, pp)
    assert sum(s["layer_count"] for s in stages) == LLAMA70.layers
    assert covers([s["layers"] for s in stages], LLAMA70.layers)
    assert [s["embedding"] for s in stages] == [True] + [False] * (pp - 1)
    assert [s["head"] for s in stages] == [False] * (pp - 1) + [True]
    assert [s["weight_bytes"] for s in stages] == stage_weight_bytes(LLAMA70, Layout(pp=pp))
    assert pipe["hop_bytes_per_token"] == (LLAMA70.hidden * 2 if pp > 1 else 0)


# --- experts --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("devices", [1, 2, 4, 8])
def test_experts_whole_or_sliced_hold_the_same_bytes(devices):
    ep = diagrams.experts_data(MIXTRAL, devices, expert_parallel=True)
    tp = diagrams.experts_data(MIXTRAL, devices, expert_parallel=False)
    assert covers([d["experts"] for d in ep["devices"]], MIXTRAL.experts)
    assert all(d["experts"] == [0, MIXTRAL.experts] and d["expert_share"] == 1 / devices for d in tp["devices"])
    assert ep["expert_parameters_per_device"] == tp["expert_parameters_per_device"]
    assert len(ep["routed_to"]) == MIXTRAL.experts_per_token == ep["top_k"]
    holders = {d["device"] for d in ep["devices"] for e in ep["routed_to"] if d["experts"][0] <= e < d["experts"][1]}
    assert ep["visits"] == sorted(holders) and tp["visits"] == list(range(devices))


# --- the device map -------------------------------------------------------------------------------------------


def test_tp2_pp2_dp2_on_one_server_is_placed_as_the_launcher_places_it():
    m = diagrams.device_map_data(LLAMA70, Layout(tp=2, pp=2, dp=2), H100)
    assert len(m["gpus"]) == 8 and [s["gpus"] for s in m["servers"]] == [list(range(8))]
    assert [r["gpus"] for r in m["replicas"]] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert [g["stage"] for g in m["gpus"]] == [0, 0, 1, 1, 0, 0, 1, 1]
    assert [g["tp_rank"] for g in m["gpus"]] == [0, 1] * 4
    assert [g["layers"] for g in m["gpus"][:4]] == [[0, 40], [0, 40], [40, 80], [40, 80]]
    allreduces = [c for c in m["collectives"] if c["kind"] == "all-reduce"]
    hops = [c for c in m["collectives"] if c["kind"] == "send"]
    assert [c["gpus"] for c in allreduces] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert all(
        c["link_slug"] == "nvlink4" and c["kernel"] == "one-shot" and not c["across_servers"] for c in allreduces
    )
    assert [(h["from_gpus"], h["to_gpus"]) for h in hops] == [([0, 1], [2, 3]), ([4, 5], [6, 7])]
    assert all(h["link_slug"] == "nvlink4" and not h["across_servers"] for h in hops)


def _layouts_on(config, cluster, devices):
    return [layout for layout in layouts(config, devices, expert_parallel="both") if cluster.holds_group(layout.tp)]


@pytest.mark.parametrize(
    "config,cluster,devices",
    [
        (LLAMA70, H100, 16),
        (LLAMA8, Cluster("h100-sxm", devices_per_node=4), 8),
        (MIXTRAL, H100, 8),
        (PRESETS["llama-3.1-405b"], H100, 32),
        (LLAMA8, Cluster("l40s", devices_per_node=4), 4),
    ],
    ids=["70b-2x8", "8b-2x4", "mixtral-8", "405b-4x8", "8b-l40s"],
)
def test_every_layout_maps_every_gpu_and_chooses_links_as_lib_does(config, cluster, devices):
    for layout in _layouts_on(config, cluster, devices):
        m = diagrams.device_map_data(config, layout, cluster)
        assert json.loads(json.dumps(m)) == m
        gpus = m["gpus"]
        assert [g["gpu"] for g in gpus] == list(range(layout.devices))
        assert all(g["server"] == cluster.node(g["gpu"]) for g in gpus)
        assert sum(len(s["gpus"]) for s in m["servers"]) == layout.devices
        for r in range(layout.dp):
            mine = [g for g in gpus if g["replica"] == r]
            for s in range(layout.pp):
                group = [g for g in mine if g["stage"] == s]
                assert [g["tp_rank"] for g in group] == list(range(layout.tp))
                assert covers([g["query_heads"] for g in group], config.heads)
            assert sum({g["stage"]: g["layer_count"] for g in mine}.values()) == config.layers
        message = m["message_bytes"]
        for c in m["collectives"]:
            if c["kind"] == "all-reduce":
                nodes = -(-layout.tp // cluster.devices_per_node)
                assert len(c["servers"]) == nodes and c["across_servers"] == (nodes > 1)
                expected = engine_allreduce(
                    message, layout.tp, cluster.link, nodes, cluster.inter_link, cluster.nics_per_node
                )
                assert c["kernel"] == expected.kernel
                custom = kernel_for(message, layout.tp, cluster.link, nodes)
                assert c["kernel"] == custom.name if custom else c["kernel"].startswith("nccl")
                assert c["time"] == pytest.approx(tp_allreduce(cluster, layout.tp, message))
                assert c["link"] == (cluster.inter_link if nodes > 1 else cluster.link).name
        for r in range(layout.dp):
            hops = [c for c in m["collectives"] if c["kind"] == "send" and c["replica"] == r]
            assert [h["link"] for h in hops] == [link.name for link in _hop_links(cluster, layout, r)]
        per_replica = [
            sum(c["time"] for c in m["collectives"] if c["kind"] == "send" and c["replica"] == r)
            for r in range(layout.dp)
        ]
        assert max(per_replica) == pytest.approx(hop_time(cluster, layout, message))


def test_groups_that_span_servers_use_the_network():
    across = diagrams.device_map_data(PRESETS["llama-3.1-405b"], Layout(tp=16), H100)
    (allreduce,) = across["collectives"]
    assert allreduce["across_servers"] and allreduce["servers"] == [0, 1]
    assert allreduce["link_kind"] == "net" and allreduce["kernel"].startswith("nccl")
    split = diagrams.device_map_data(LLAMA70, Layout(tp=8, pp=2), H100)
    hop = next(c for c in split["collectives"] if c["kind"] == "send")
    assert hop["across_servers"] and hop["link_slug"] == "ib-ndr" and hop["from_gpus"][-1] == 7


def test_expert_parallel_gpus_hold_whole_experts():
    m = diagrams.device_map_data(MIXTRAL, Layout(tp=4, dp=2, expert_parallel=True), H100)
    assert m["layout"] == "ep4-pp1-dp2"
    assert [g["experts"] for g in m["gpus"][:4]] == [[0, 2], [2, 4], [4, 6], [6, 8]]
    assert all(g["expert_share"] == 1.0 and g["mlp_columns"] == [0, MIXTRAL.ffn_hidden] for g in m["gpus"])


def test_attention_data_parallel_groups_exchange_tokens_around_the_experts():
    """adp16 on two servers: every GPU holds all the heads, the group's exchange crosses the network, and one
    stage's exchanges take what lib.serving prices for them."""
    deepseek, layout, cluster = PRESETS["deepseek-v3"], Layout(16, 1, 1, True, True), Cluster("h200")
    m = diagrams.device_map_data(deepseek, layout, cluster, tokens=64)
    assert m["attention_dp"] and m["layout"] == "adp16-ep16-pp1-dp1"
    assert all(g["query_heads"] == [0, deepseek.heads] for g in m["gpus"])
    assert [g["experts"] for g in m["gpus"][:2]] == [[0, 16], [16, 32]]
    (exchange,) = m["collectives"]
    assert exchange["kind"] == "expert exchange" and exchange["across_servers"] and exchange["link_slug"] == "ib-ndr"
    assert exchange["per_token"] == 2 * deepseek.moe_layers
    priced = pass_work(deepseek, cluster, layout, 0, configure("h200"), decode=64).communication_time
    assert exchange["time"] * exchange["per_token"] / 2 == pytest.approx(priced)
    assert "expert exchange across servers over InfiniBand NDR" in m["alt"]
    fig = diagrams.device_map(deepseek, layout, cluster, tokens=64)
    try:
        assert "all heads, own seqs" in " ".join(_texts(fig))
    finally:
        plt.close(fig)


def test_the_message_follows_tokens_and_the_kernel_with_it():
    small = diagrams.device_map_data(LLAMA70, Layout(tp=8), H100, tokens=1)
    large = diagrams.device_map_data(LLAMA70, Layout(tp=8), H100, tokens=64)
    assert large["message_bytes"] == 64 * small["message_bytes"] == 64 * 8192 * 2
    assert (small["collectives"][0]["kernel"], large["collectives"][0]["kernel"]) == ("one-shot", "two-shot")
    nccl = diagrams.device_map_data(LLAMA70, Layout(tp=8), H100, allreduce="nccl")
    assert nccl["collectives"][0]["kernel"].startswith("nccl")


def test_the_data_shape_is_the_documented_one():
    m = diagrams.device_map_data(LLAMA70, Layout(tp=2, pp=2, dp=2), H100)
    assert m["version"] == diagrams.DEVICE_MAP_VERSION == 1
    assert set(m) == {
        "version",
        "model",
        "layout",
        "tp",
        "pp",
        "dp",
        "expert_parallel",
        "attention_dp",
        "tokens",
        "message_bytes",
        "cluster",
        "servers",
        "replicas",
        "gpus",
        "collectives",
        "alt",
    }
    assert set(m["cluster"]) == {
        "device",
        "devices_per_node",
        "servers",
        "nics_per_node",
        "link",
        "link_slug",
        "link_kind",
        "inter_link",
        "inter_link_slug",
        "inter_link_kind",
    }
    assert set(m["gpus"][0]) == {
        "gpu",
        "server",
        "slot",
        "replica",
        "stage",
        "tp_rank",
        "layers",
        "layer_count",
        "embedding",
        "head",
        "query_heads",
        "kv_heads",
        "kv_copies",
        "mlp_columns",
        "experts",
        "expert_share",
        "weight_bytes",
    }
    kinds = {c["kind"]: set(c) for c in m["collectives"]}
    common = {"kind", "purpose", "replica", "across_servers", "link", "link_slug", "link_kind", "message_bytes", "time"}
    assert kinds["all-reduce"] == common | {"stage", "gpus", "servers", "kernel", "per_token"}
    assert kinds["send"] == common | {"from_stage", "to_stage", "from_gpus", "to_gpus"}


# --- bad input ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: diagrams.device_map_data(LLAMA8, Layout(tp=3), H100), "layout"),
        (lambda: diagrams.device_map_data(LLAMA70, Layout(tp=12), Cluster("h100-sxm", devices_per_node=16)), "layout"),
        (
            lambda: diagrams.device_map_data(
                PRESETS["llama-3.1-405b"], Layout(tp=16), Cluster("h100-sxm", devices_per_node=6)
            ),
            "layout",
        ),
        (lambda: diagrams.device_map_data(LLAMA8, Layout(expert_parallel=True, tp=2), H100), "layout"),
        (lambda: diagrams.device_map_data(LLAMA8, (2, 2, 2), H100), "layout"),
        (lambda: diagrams.shard(MIXTRAL, 4, 0, attention_dp=True), "attention_dp"),
        (lambda: diagrams.device_map_data(LLAMA8, Layout(), "h100-sxm"), "cluster"),
        (lambda: diagrams.device_map_data("llama-3-8b", Layout(), H100), "config"),
        (lambda: diagrams.device_map_data(LLAMA8, Layout(), H100, tokens=0), "tokens"),
        (lambda: diagrams.device_map_data(LLAMA8, Layout(), H100, allreduce="mpi"), "allreduce"),
        (lambda: diagrams.tensor_parallel_block(LLAMA8, 3), "tp"),
        (lambda: diagrams.tensor_parallel_block(LLAMA8, 0), "tp"),
        (lambda: diagrams.pipeline_stages(LLAMA8, 33), "pp"),
        (lambda: diagrams.pipeline_stages(LLAMA8, 1.5), "pp"),
        (lambda: diagrams.experts_over_devices(LLAMA8, 2, True), "config"),
        (lambda: diagrams.experts_over_devices(MIXTRAL, 16, True), "devices"),
        (lambda: diagrams.experts_over_devices(MIXTRAL, 3, False), "devices"),
        (lambda: diagrams.experts_over_devices(MIXTRAL, 2, "yes"), "expert_parallel"),
        (lambda: diagrams.three_splits(moe=LLAMA8), "config"),
        (lambda: diagrams.alt_text(plt.figure()), "fig"),
    ],
)
def test_bad_input_is_refused_by_name(call, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()
    plt.close("all")


def test_alt_text_names_what_the_picture_shows():
    assert "16,384" not in diagrams.tp_block_data(LLAMA70, 1)["alt"]
    assert "16384 bytes per token" in diagrams.tp_block_data(LLAMA70, 2)["alt"]
    assert "stage 1 layers 27–53" in diagrams.pipeline_data(LLAMA70, 3)["alt"]
    alt = diagrams.device_map_data(LLAMA70, Layout(tp=8, pp=2), H100)["alt"]
    assert "across servers over InfiniBand NDR" in alt and "one-shot" in alt
    assert "Replicas exchange nothing" in diagrams.device_map_data(LLAMA70, Layout(tp=2, pp=2, dp=2), H100)["alt"]
    assert np.isfinite(diagrams.device_map_data(LLAMA70, Layout(tp=2, pp=2, dp=2), H100)["collectives"][0]["time"])
