"""Tests for lib.validation.requests: batches in waves and the open-loop batch."""

from __future__ import annotations

import pytest

from lib.serving import Cluster, Layout
from lib.serving import engine as serving_engine
from lib.transformer import PRESETS
from lib.validation import Workload, batch_time, capacity, open_loop_batch

# The request models.


def test_a_batch_that_does_not_fit_runs_in_waves_and_a_model_that_does_not_fit_raises():
    engine = serving_engine.Engine(gpu_memory_utilization=0.9).resolved("a100-40gb")
    cluster, llama = Cluster("a100-40gb", devices_per_node=4), PRESETS["llama-2-7b"]
    one = batch_time(llama, cluster, Layout(), engine, 8, 2048, 2048, 8192, memory_waves=True)
    many = batch_time(llama, cluster, Layout(), engine, 64, 2048, 2048, 8192, memory_waves=True)
    assert many > 4 * one
    with pytest.raises(ValueError, match="does not fit"):
        batch_time(PRESETS["llama-2-70b"], cluster, Layout(), engine, 1, 128, 128, memory_waves=True)


def test_open_loop_batch_grows_with_the_rate_until_the_capacity():
    engine = serving_engine.Engine().resolved("a100-80gb")
    args, load = (PRESETS["llama-3-8b"], Cluster("a100-80gb"), Layout(), engine), Workload(220, 190)
    batches = [open_loop_batch(*args, load, rate) for rate in (0.5, 2, 8, 1e4)]
    assert batches == sorted(batches) and batches[-1] == capacity(*args, load) and batches[0] >= 1
    with pytest.raises(ValueError, match="rate"):
        open_loop_batch(*args, load, 0.0)
