"""Tests for lib.measure.protocol: the machine description."""

from __future__ import annotations

import shutil


def test_the_machine_description_records_the_cpu_topology():
    from lib.measure.protocol import TOPOLOGY_FIELDS, machine_description

    description = machine_description("gloo", 2, 1)
    assert set(description["topology"]) <= set(TOPOLOGY_FIELDS)
    if shutil.which("lscpu"):
        assert {"Socket(s)", "Core(s) per socket", "Thread(s) per core"} <= set(description["topology"])
