"""Models, cluster and helper shared by the tests of lib.diagrams (tests/unit/lib/diagrams)."""

from __future__ import annotations

import matplotlib.text

from lib.serving import Cluster
from lib.transformer import PRESETS

LLAMA70, LLAMA8, MIXTRAL = PRESETS["llama-3-70b"], PRESETS["llama-3-8b"], PRESETS["mixtral-8x7b"]
H100 = Cluster("h100-sxm")


def _texts(fig):
    return sorted(t.get_text() for t in fig.findobj(matplotlib.text.Text) if t.get_text())
