"""Tests for lib.serving.layout: the cluster's links."""

from __future__ import annotations

from lib.serving import Cluster


def test_inter_node_links_follow_the_generation():
    assert Cluster("a100-80gb").inter_link.name.startswith("InfiniBand HDR")
    assert Cluster("h100-sxm").inter_link.name.startswith("InfiniBand NDR")
    assert Cluster("h200").nics_per_node == 8 and Cluster("l4").nics_per_node == 1
