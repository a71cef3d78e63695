"""Tests for lib.validation.calibrate: refitting from data/published gives the engine defaults."""

from __future__ import annotations

import pytest

from lib.serving import engine as serving_engine
from lib.validation import calibrate_serving

# The engine defaults, refitted from data/published.


@pytest.mark.stored
def test_refitting_gives_the_engine_defaults():
    cal = calibrate_serving()
    assert cal.memory_efficiency == pytest.approx(serving_engine.MEMORY_EFFICIENCY, rel=1e-9)  # a ratio
    assert cal.compute_efficiency is None  # matrix products priced by the measured tables of lib.kernels
    assert cal.layer_overhead == pytest.approx(serving_engine.LAYER_OVERHEAD, abs=2e-6)  # seconds
    assert cal.slope_pairs == 4 and cal.overhead_rows == 15 and cal.overhead_rms_log_error < 0.05


@pytest.mark.stored
def test_the_single_efficiency_model_refits_chapter_11s_baseline():
    cal = calibrate_serving(kernels="single")
    assert cal.compute_efficiency == pytest.approx(serving_engine.COMPUTE_EFFICIENCY, abs=0.01)
    assert cal.memory_efficiency == pytest.approx(serving_engine.MEMORY_EFFICIENCY, rel=1e-9)
