"""Tests for lib.collectives.nccl: NCCL's cost model, its tuner, in-network and two-level all-reduce.

Hand-worked values follow NCCL 2.30.7's src/graph/tuning.cc for an 8-GPU H100 server
(ring graph 12 channels x 30 GB/s = 360 GB/s; NVLS graph 8 x 40 GB/s).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lib import collectives as col
from lib.hardware import LINKS
from lib.units import GB, KB, MB, s, us

SIZES = st.floats(min_value=0.0, max_value=4e9, allow_nan=False)


def test_ring_ll_latency_and_bandwidth_by_hand():
    cost = col.allreduce_cost(8 * KB, 8, "nvlink4", "ring", "LL")
    assert cost.latency == pytest.approx(6.6 * us + 14 * 0.6 * us)  # base + 2(K-1) hops
    assert cost.bandwidth == pytest.approx(141 * GB / s * 8 / 14)  # LL capped at 141 GB/s bus
    simple = col.allreduce_cost(8 * KB, 8, "nvlink4", "ring", "Simple")
    assert simple.bandwidth == pytest.approx(360 * GB / s * 8 / 14)


def test_nvls_by_hand():
    cost = col.allreduce_cost(1 * MB, 8, "nvlink4", "nvls", "Simple")
    assert cost.latency == pytest.approx(25 * us)
    bus = 2 * 0.85 * 7 * 360e9 / 9  # 8 channels of 360/9 = 40 GB/s, (c - 1)/c, x 2
    assert cost.bandwidth == pytest.approx(bus * 8 / 14)  # 272 GB/s, NCCL's own estimate
    assert col.allreduce_cost(1 * MB, 8, "nvlink4", "nvls", "LL").time == math.inf


def test_tuner_matches_nccls_choices_on_one_h100_server():
    # NCCL's model on 8 x H100: Ring/LL up to 1 MiB, NVLS from 2 MiB (also reported in nccl-tests #309).
    choice = col.tune_allreduce([8 * 1024, 2**20, 2 * 2**20, 256 * 2**20], 8, "nvlink4")
    assert choice.algorithm.tolist() == ["ring", "ring", "nvls", "nvls"]
    assert choice.protocol.tolist() == ["LL", "LL", "Simple", "Simple"]
    # Without an NVSwitch that reduces (A100), large messages go to ring Simple.
    assert col.tune_allreduce(256 * MB, 8, "nvlink3").protocol == "Simple"


def test_two_nodes_use_tree_then_nvls_tree():
    choice = col.tune_allreduce([8 * KB, 256 * MB], 16, "nvlink4", nodes=2, inter_link="ib-ndr")
    assert choice.algorithm.tolist() == ["tree", "nvls_tree"]


@given(size=SIZES, devices=st.sampled_from([2, 4, 8]), link=st.sampled_from(sorted(LINKS)))
def test_the_tuner_is_never_slower_than_any_single_pair(size, devices, link):
    choice = col.tune_allreduce(size, devices, link)
    assert all(choice.time <= cost.time for cost in choice.costs.values())
    assert math.isfinite(choice.time)


@given(size=st.floats(min_value=1.0, max_value=1e9), devices=st.integers(2, 16))
def test_more_bytes_never_take_less_time(size, devices):
    small = col.tune_allreduce(size, devices, "nvlink4").time
    assert col.tune_allreduce(2 * size, devices, "nvlink4").time >= small


def test_a_sweep_has_the_shape_of_the_sizes():
    choice = col.tune_allreduce(np.logspace(3, 9, 7), 8, "nvlink4")
    assert choice.time.shape == choice.algorithm.shape == (7,)


@given(size=st.floats(min_value=64 * MB, max_value=4e9), nodes=st.sampled_from([2, 4, 8]))
def test_two_level_beats_a_flat_ring_on_a_slow_network(size, nodes):
    # One 25 GB/s port per node: a flat ring pushes 2(K-1)/K n through it, the two-level
    # scheme only 2(N-1)/N n after the fast reduce-scatter inside each node.
    flat = col.allreduce_cost(
        size, 8 * nodes, "nvlink4", "ring", "Simple", nodes=nodes, inter_link="ib-hdr", nics_per_node=1
    )
    two = col.two_level_allreduce(size, nodes, 8, "nvlink4", "ib-hdr", nics_per_node=1)
    assert two.time < flat.time


def test_two_level_bytes_by_hand():
    plan = col.two_level_allreduce(800 * MB, nodes=2, per_node=4, link="nvlink4", inter_link="ib-ndr")
    assert plan.intra_bytes == pytest.approx(2 * 3 / 4 * 800 * MB)  # reduce-scatter + all-gather
    assert plan.inter_bytes == pytest.approx(4 * 2 * 1 / 2 * 200 * MB)  # 4 slices of 200 MB, ring of 2 nodes


def test_startup_model_by_hand():
    assert col.startup_time("allreduce", 4, "nvlink4") == pytest.approx(6.6 * us + 6 * 0.6 * us)
    assert col.startup_time("allgather", 4, "ib-hdr", protocol="Simple") == pytest.approx(8.4 * us + 3 * 14 * us)
    assert col.startup_time("allreduce", 1, "nvlink4") == 0


def test_send_time_is_one_step():
    assert col.send_time(0, "nvlink4") == pytest.approx(6.6 * us + 0.6 * us)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: col.allreduce_cost(-1, 8, "nvlink4"), "message_bytes"),
        (lambda: col.allreduce_cost(1, 0, "nvlink4"), "devices"),
        (lambda: col.allreduce_cost(1, 8, "nvlink4", protocol="LL64"), "protocol"),
        (lambda: col.allreduce_cost(1, 8, "warp-drive"), "link"),
        (lambda: col.allreduce_cost(1, 12, "nvlink4", nodes=5, inter_link="ib-ndr"), "devices"),
        (lambda: col.allreduce_cost(1, 16, "nvlink4", nodes=2), "inter_link"),
        (lambda: col.tune_allreduce(float("nan"), 8, "nvlink4"), "message_bytes"),
        (lambda: col.collective_cost("broadcast", 1, 8, "nvlink4"), "kind"),
        (lambda: col.startup_time("allreduce", 2.5, "nvlink4"), "devices"),
        (lambda: col.two_level_allreduce(1, 2, 0, "nvlink4", "ib-ndr"), "per_node"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
