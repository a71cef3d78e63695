"""The planner's sizing (_static/planner-sizing.js) against ``lib.serving.size``, on seeded scenarios.

The scenarios are test_planner.py's (drawn the same way, with its helpers),
each with a request rate to carry and the most devices the sizing may use;
most carry a latency target too. The page must find the same layout, the same
number of devices, and the same capacities and binding as ``lib``.
"""

from __future__ import annotations

import math
import random

import pytest

from lib.serving import size
from lib.serving.sizing import Sizing
from test_planner import lib_arguments, random_scenario, relative, scenarios, tab  # noqa: F401 (tab: a fixture)

pytestmark = pytest.mark.browser

#: Scenarios drawn for the sizing parity (the issue asks for at least 36 with targets and sizing).
SIZING_SCENARIOS = 36


def sizing_scenario(rng: random.Random) -> dict[str, str]:
    """test_planner's scenario with a rate (1 to 2000 requests/s, log-uniform) and a device limit."""
    q = random_scenario(rng)
    q["rate"] = str(round(math.exp(rng.uniform(math.log(1), math.log(2000))), 2))
    q["max_devices"] = str(rng.choice([4, 8, 16, 32]))
    if "ttft_limit_ms" not in q and "tpot_limit_ms" not in q and rng.random() < 0.85:
        q["tpot_limit_ms"] = str(round(rng.uniform(10, 100), 1))
    return q


def size_arguments(q: dict[str, str]) -> tuple[tuple, dict]:
    """``lib.serving.size``'s arguments for a scenario of the page."""
    args, options = lib_arguments(q)
    config, device, _, _, prompt, output = args
    del options["price_per_device_hour"]
    return (config, device, float(q["rate"]), prompt, output), dict(options, max_devices=int(q["max_devices"]))


def sizing_scenarios(count: int, seed: int = 20261) -> list[tuple[dict[str, str], Sizing | None]]:
    """``count`` scenarios that lib.serving.plan accepts (test_planner.scenarios), each with size's answer."""
    return [(q, size(*args, **options)) for q in scenarios(count, seed, draw=lambda rng, _: sizing_scenario(rng))
            for args, options in [size_arguments(q)]]


SCENARIOS = sizing_scenarios(SIZING_SCENARIOS)


def test_scenarios_cover_the_cases():
    kinds = {"a layout found": 0, "nothing carries it": 0, "several replicas": 0, "a target": 0, "no target": 0,
             "moe": 0, "custom model": 0, "custom device": 0}
    for q, got in SCENARIOS:
        args, options = size_arguments(q)
        kinds["a layout found"] += got is not None
        kinds["nothing carries it"] += got is None
        kinds["several replicas"] += got is not None and got.layout.dp > 1
        targeted = options["ttft_limit"] is not None or options["tpot_limit"] is not None
        kinds["a target"] += targeted
        kinds["no target"] += not targeted
        kinds["moe"] += args[0].experts > 1
        kinds["custom model"] += q["model"] == "custom"
        kinds["custom device"] += q["device"] == "custom"
    assert sum(1 for q, _ in SCENARIOS if "ttft_limit_ms" in q or "tpot_limit_ms" in q) >= 30
    assert all(count >= 2 for count in kinds.values()), kinds


READ_SIZING = """() => { const p = document.getElementById('pl-sizing');
  return {hidden: p.hidden, text: p.innerText, layout: p.getAttribute('data-layout'),
          devices: p.getAttribute('data-devices'), rate: p.getAttribute('data-rate'),
          replica: p.getAttribute('data-replica-rate'), binding: p.getAttribute('data-binding')}; }"""


@pytest.mark.parametrize("index", range(SIZING_SCENARIOS))
def test_page_sizes_like_lib(tab, index):
    q, want = SCENARIOS[index]
    shown = tab(q).evaluate(READ_SIZING)
    assert not shown["hidden"], q
    if want is None:
        assert shown["layout"] is None and shown["text"].startswith("Sizing: no layout of at most " + q["max_devices"]), shown
        return
    where = f"scenario {index}: {q}"
    assert (shown["layout"], int(shown["devices"])) == (want.layout.name, want.devices), where
    assert relative(float(shown["rate"]), want.capacity.rate) <= 1e-9, where
    assert relative(float(shown["replica"]), want.replica.rate) <= 1e-9, where
    assert shown["binding"] == want.replica.binding, where
    assert want.layout.name in shown["text"] and f"{want.devices} ×" in shown["text"], shown["text"]


def test_no_rate_no_sizing_and_a_bad_rate_is_marked(tab):
    page = tab({"rate": ""})
    assert page.locator("#pl-sizing").is_hidden()
    page.fill('input[name="rate"]', "-2")
    assert "rate must be > 0, got -2" in page.locator("#pl-rate-error").inner_text()
    page.fill('input[name="rate"]', "3")
    page.fill('input[name="max_devices"]', "0")
    assert "max_devices must be ≥ 1" in page.locator("#pl-max_devices-error").inner_text()
    page.fill('input[name="max_devices"]', "8")
    assert page.locator("#pl-sizing").is_visible()
    assert "rate=3" in page.evaluate("location.search") and "max_devices=8" in page.evaluate("location.search")
