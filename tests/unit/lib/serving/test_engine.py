"""Tests for lib.serving.engine: the engine's scheduler limits."""

from __future__ import annotations

from lib.serving import Layout
from lib.serving.engine import configure


def test_scheduler_limits_multiply_with_the_ranks():
    engine = configure("h200")
    assert engine.replica_limits(Layout(8, 1, 1, True, True)) == (8 * 1024, 8 * 8192)
    assert engine.replica_limits(Layout(8, 1, 1, True, False)) == (1024, 8192)
