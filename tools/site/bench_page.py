"""Benchmark: how long the planner page takes to answer, sizing included, for every preset on 8 to 64 devices.

Run ``python -m tools.site.bench_page [_build/html]`` (``make bench`` runs it
after :mod:`tools.bench_plan`) on a built book. For each model preset and
cluster of :data:`DEVICES` H200s (FP8 weights, chat targets of
:data:`TARGETS`, every expert layout of a mixture of experts, and a rate of
:data:`RATE` requests per second to size for, on at most the cluster's
devices) it opens the page in headless Chromium, offline, and times the
scenario from the address to the filled table and sizing line. It prints
every case and then the slowest and the median against :data:`GOAL_S`, with
the load average; the figures are printed, never asserted (these machines
are shared).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
import urllib.parse
from pathlib import Path

from tools.site.browser import launch, missing_book, missing_chromium, offline_context, serve

__all__ = ["GOAL_S", "DEVICES", "TARGETS", "RATE", "scenario", "main"]

#: The page should answer within this many seconds on a 2-core machine.
GOAL_S = 2.0
#: The cluster sizes timed: one to eight servers of eight.
DEVICES = (8, 16, 32, 64)
#: The latency targets of every case (ms), as the page's fields take them.
TARGETS = {"ttft_limit_ms": "1000", "tpot_limit_ms": "50"}
#: The request rate every case sizes for.
RATE = 20

#: Script that says whether the page has answered: rows in the table and a sizing line.
ANSWERED = """() => document.querySelector('#pl-rows tr[data-layout]') !== null &&
  document.querySelector('#pl-rows td.pl-waiting') === null &&
  (document.getElementById('pl-sizing').textContent || '').startsWith('Sizing')"""


def scenario(model: str, devices: int, experts: int) -> dict[str, str]:
    """The page's query for one case.

    >>> scenario("mixtral-8x7b", 16, 8)["expert_parallel"], scenario("llama-3-8b", 8, 1).get("expert_parallel")
    ('all', None)
    """
    q = {"model": model, "device": "h200", "devices": str(devices), "devices_per_node": "8"}
    q.update(weight_format="fp8", rate=str(RATE), max_devices=str(devices), **TARGETS)
    if experts > 1:
        q["expert_parallel"] = "all"
    return q


def main(argv: list[str] | None = None) -> int:
    from playwright.sync_api import sync_playwright

    from lib.transformer import PRESETS

    argv = list(sys.argv[1:] if argv is None else argv)
    site = Path(argv[0] if argv else "_build/html")
    problem = missing_book(site) or missing_chromium()
    if problem:
        print(f"bench_page: not run. {problem}")
        return 0
    times: list[tuple[float, str]] = []
    with serve(site) as base, sync_playwright() as playwright:
        browser = launch(playwright)
        context = offline_context(browser, viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(600_000)
        for key, config in sorted(PRESETS.items()):
            for devices in DEVICES:
                address = base + "book/planner.html?" + urllib.parse.urlencode(scenario(key, devices, config.experts))
                start = time.perf_counter()
                page.goto(address, wait_until="load")
                page.wait_for_function(ANSWERED, polling=50)
                seconds = time.perf_counter() - start
                times.append((seconds, f"{key} on {devices} x H200"))
                print(f"{seconds:7.2f} s  {key} on {devices} x H200", flush=True)
        context.close()
        browser.close()
    slowest, case = max(times)
    over = sum(seconds > GOAL_S for seconds, _ in times)
    print(
        f"planner page, {len(times)} cases: slowest {slowest:.2f} s ({case}), median "
        f"{statistics.median(s for s, _ in times):.2f} s; {over} over the goal of {GOAL_S:.0f} s: "
        f"{'met' if not over else 'NOT met'} (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
