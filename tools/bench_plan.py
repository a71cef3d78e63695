"""Benchmark: how long :func:`lib.serving.plan` takes to enumerate every layout of a 70B model on 64 devices.

Run ``python -m tools.bench_plan`` (or ``make bench``). The goal is under one
second; the figure is printed, never asserted (these machines are shared).
"""

from __future__ import annotations

import statistics
import time

from lib.serving import plan
from lib.transformer import PRESETS

GOAL_S = 1.0


def main(repeats: int = 5) -> None:
    config = PRESETS["llama-3-70b"]
    times, rows = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        rows = plan(config, "h100-sxm", devices=64, batch=512, prompt_tokens=2048, output_tokens=512)
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    print(
        f"plan({config.name}, 64 x H100): {len(rows)} layouts in {median:.3f} s "
        f"(median of {repeats}; min {min(times):.3f} s, max {max(times):.3f} s); goal < {GOAL_S:.1f} s: "
        f"{'met' if median < GOAL_S else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
