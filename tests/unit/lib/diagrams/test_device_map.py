"""Tests for lib.diagrams.device_map: the drawn device map follows the layout."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from diagrams_support import H100, LLAMA70, _texts  # noqa: E402

from lib import diagrams  # noqa: E402
from lib.serving import Layout  # noqa: E402


def test_a_changed_layout_changes_the_map():
    one = diagrams.device_map(LLAMA70, Layout(tp=2, pp=2, dp=2), H100)
    other = diagrams.device_map(LLAMA70, Layout(tp=4, pp=2), H100)
    try:
        assert diagrams.diagram_data(one)["gpus"] != diagrams.diagram_data(other)["gpus"]
        assert _texts(one) != _texts(other)
        assert diagrams.alt_text(one) != diagrams.alt_text(other)
        assert "layers 40–79" in diagrams.alt_text(other) and "GPUs 4–7" in diagrams.alt_text(other)
    finally:
        plt.close(one)
        plt.close(other)
