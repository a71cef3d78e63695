"""Tests for lib.serving.layout: the cluster's links and the planner's cap on devices."""

from __future__ import annotations

import pytest

from lib.serving import MAX_DEVICES, Cluster, check_devices, layouts
from lib.transformer import PRESETS


def test_inter_node_links_follow_the_generation():
    assert Cluster("a100-80gb").inter_link.name.startswith("InfiniBand HDR")
    assert Cluster("h100-sxm").inter_link.name.startswith("InfiniBand NDR")
    assert Cluster("h200").nics_per_node == 8 and Cluster("l4").nics_per_node == 1


def test_the_device_cap_admits_4096_and_refuses_one_more_in_one_line():
    assert MAX_DEVICES == 4096 and check_devices(MAX_DEVICES) == MAX_DEVICES
    # one device per layer of Llama-3 8B's 32 stages, 128 replicas: a layout at the cap is still listed
    assert any(layout.name == "tp1-pp32-dp128" for layout in layouts(PRESETS["llama-3-8b"], MAX_DEVICES))
    for call in (lambda: check_devices(100_000), lambda: layouts(PRESETS["llama-3-8b"], MAX_DEVICES + 1)):
        with pytest.raises(ValueError, match=r"^devices must be at most 4096 \(the planner's cap\), got"):
            call()
    with pytest.raises(ValueError, match="^--max-devices must be >= 1, got 0"):
        check_devices(0, "--max-devices")
