"""Tests for lib.diagrams.figures and lib.diagrams.splits: every figure (device maps, the three splits) is legible."""

from __future__ import annotations

import matplotlib
import matplotlib.patches
import matplotlib.text

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from diagrams_support import H100, LLAMA8, LLAMA70, MIXTRAL  # noqa: E402

from lib import diagrams  # noqa: E402
from lib.diagrams._draw import MAX_WIDTH, MIN_FONT  # noqa: E402
from lib.serving import Cluster, Layout  # noqa: E402
from lib.transformer import PRESETS  # noqa: E402

# --- legibility -----------------------------------------------------------------------------------------------

FIGURES = {
    "block-tp4": lambda: diagrams.tensor_parallel_block(LLAMA70, 4),
    "block-tp16": lambda: diagrams.tensor_parallel_block(LLAMA70, 16),
    "block-tp1": lambda: diagrams.tensor_parallel_block(LLAMA8, 1),
    "block-moe": lambda: diagrams.tensor_parallel_block(MIXTRAL, 2),
    "stages-1": lambda: diagrams.pipeline_stages(LLAMA8, 1),
    "stages-3": lambda: diagrams.pipeline_stages(LLAMA70, 3),
    "stages-9": lambda: diagrams.pipeline_stages(PRESETS["llama-3.1-405b"], 9),
    "experts-ep4": lambda: diagrams.experts_over_devices(MIXTRAL, 4, True),
    "experts-tp8": lambda: diagrams.experts_over_devices(MIXTRAL, 8, False),
    "map-tp2pp2dp2": lambda: diagrams.device_map(LLAMA70, Layout(tp=2, pp=2, dp=2), H100),
    "map-tp1pp8": lambda: diagrams.device_map(LLAMA8, Layout(pp=8), H100),
    "map-tp8pp2": lambda: diagrams.device_map(LLAMA70, Layout(tp=8, pp=2), H100),
    "map-tp16": lambda: diagrams.device_map(PRESETS["llama-3.1-405b"], Layout(tp=16), H100),
    "map-ep4dp2": lambda: diagrams.device_map(MIXTRAL, Layout(tp=4, dp=2, expert_parallel=True), H100),
    "map-dp8": lambda: diagrams.device_map(LLAMA8, Layout(dp=8), H100),
    "map-half-server": lambda: diagrams.device_map(LLAMA8, Layout(tp=2), Cluster("l40s", devices_per_node=4)),
    "map-tp3": lambda: diagrams.device_map(PRESETS["qwen2-72b"], Layout(tp=2, pp=3), Cluster("h100-sxm", 6)),
    "three-splits": diagrams.three_splits,
    "sequence-tp4": lambda: diagrams.sequence_parallel_block(LLAMA70, 4, 4096),
    "sequence-tp8": lambda: diagrams.sequence_parallel_block(LLAMA70, 8, 4096),
    "replicas-2": lambda: diagrams.data_parallel_replicas(LLAMA8, 2),
    "replicas-8-tp2": lambda: diagrams.data_parallel_replicas(LLAMA70, 8, tp=2, requests=16),
    "dispatch-ep4": lambda: diagrams.expert_dispatch(MIXTRAL, 4, 8),
    "dispatch-ep8": lambda: diagrams.expert_dispatch(MIXTRAL, 8, 64),
    "pools-2-6": lambda: diagrams.disaggregated_pools(LLAMA70, 2, 6, 1024, 1),
    "pools-4-12": lambda: diagrams.disaggregated_pools(LLAMA70, 4, 12, 8192),
}


@pytest.mark.parametrize("name", FIGURES)
def test_figures_are_legible(name):
    """At most 8 in wide, no text under 9 pt, every text inside the figure, no two texts on top of each other."""
    fig = FIGURES[name]()
    try:
        width, height = fig.get_size_inches()
        assert width <= MAX_WIDTH
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        texts = [t for t in fig.findobj(matplotlib.text.Text) if t.get_text() and t.get_visible()]
        assert texts and all(t.get_fontsize() >= MIN_FONT for t in texts)
        frame = fig.bbox
        boxes = [t.get_window_extent(renderer) for t in texts]
        for t, b in zip(texts, boxes):
            assert frame.x0 - 1 <= b.x0 and b.x1 <= frame.x1 + 1 and frame.y0 - 1 <= b.y0 and b.y1 <= frame.y1 + 1, (
                t.get_text()
            )
        patches = [p.get_window_extent(renderer) for p in fig.findobj(matplotlib.patches.FancyBboxPatch)]
        for t, b in zip(texts, boxes):  # text on a box stays inside the smallest box under its centre
            under = [e for e in patches if e.contains((b.x0 + b.x1) / 2, (b.y0 + b.y1) / 2)]
            if under:
                e = min(under, key=lambda e: e.width * e.height)
                assert e.x0 - 1 <= b.x0 and b.x1 <= e.x1 + 1 and e.y0 - 1 <= b.y0 and b.y1 <= e.y1 + 1, t.get_text()
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                a, b = boxes[i], boxes[j]
                overlap = min(a.x1, b.x1) - max(a.x0, b.x0) > 1 and min(a.y1, b.y1) - max(a.y0, b.y0) > 1
                assert not overlap, (texts[i].get_text(), texts[j].get_text())
        alt = diagrams.alt_text(fig)
        assert len(alt) > 60 and alt == diagrams.diagram_data(fig)["alt"]
    finally:
        plt.close(fig)
