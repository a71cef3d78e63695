"""Clusters and models shared by the tests of lib.serving (tests/unit/lib/serving)."""

from __future__ import annotations

from lib.serving import Cluster
from lib.transformer import PRESETS

H100 = Cluster("h100-sxm")
DEEPSEEK = PRESETS["deepseek-v3"]
