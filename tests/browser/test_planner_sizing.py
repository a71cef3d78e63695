"""The planner's sizing (_static/planner-sizing.js) against ``lib.serving.size``, on seeded scenarios.

The scenarios are test_planner.py's (drawn the same way by
``tools/site/planner_golden.py``), each with a request rate to carry and the most
devices the sizing may use; most carry a latency target too. Their answers
from ``lib.serving.size`` are golden (``tests/browser/golden/scenarios.json``).
The page must find the same layout, the same number of devices, and the same
capacities and binding as ``lib``. The browser opens the fewest scenarios that
show every case kind; ``test_planner_functions.py`` compares ``size`` and
every function it calls on all of them.

Issue 31's acceptance 5 asks that the page and the command line agree on ten
seeded scenarios with a percentile, a length distribution and a sized answer:
``GOLDEN["acceptance"]`` (``planner_golden.acceptance_scenario``), each opened
here (the sizing line and the table against ``lib.serving.size`` and
``lib.serving.plan``) and run through ``python -m lib.serving`` by
``tests/unit/lib/test_serving.py``.
"""

from __future__ import annotations

import pytest
from test_planner import GOLDEN, assert_page_agrees, relative, tab  # noqa: F401 (tab: a fixture)

from lib.serving import capacity_interval, regime
from tools.site.planner_golden import ACCEPTANCE_SCENARIOS, SIZING_KINDS, SIZING_SCENARIOS, sizing_kinds

pytestmark = pytest.mark.browser

SCENARIOS = GOLDEN["sizing"]
OPENED = GOLDEN["e2e"]["sizing"]
ACCEPTANCE = GOLDEN["acceptance"]


def test_scenarios_cover_the_cases():
    kinds = {kind: 0 for kind in SIZING_KINDS}
    for entry in SCENARIOS:
        for kind in sizing_kinds(entry["query"], entry["want"]):
            kinds[kind] += 1
    assert len(SCENARIOS) == SIZING_SCENARIOS
    assert sum(1 for entry in SCENARIOS if "ttft_limit_ms" in entry["query"] or "tpot_limit_ms" in entry["query"]) >= 30
    assert all(count >= 2 for count in kinds.values()), kinds
    opened = set().union(*(sizing_kinds(SCENARIOS[i]["query"], SCENARIOS[i]["want"]) for i in OPENED))
    assert opened == set(SIZING_KINDS), f"the scenarios opened in the browser miss {set(SIZING_KINDS) - opened}"


READ_SIZING = """() => { const p = document.getElementById('pl-sizing');
  return {hidden: p.hidden, text: p.innerText, layout: p.getAttribute('data-layout'),
          devices: p.getAttribute('data-devices'), rate: p.getAttribute('data-rate'),
          replica: p.getAttribute('data-replica-rate'), binding: p.getAttribute('data-binding'),
          low: p.getAttribute('data-low'), high: p.getAttribute('data-high'),
          estimate: p.getAttribute('data-estimate')}; }"""


@pytest.mark.parametrize("index", OPENED)
def test_page_sizes_like_lib(tab, index):  # noqa: F811 (tab: the fixture)
    assert_sizes_like_lib(tab(SCENARIOS[index]["query"]), SCENARIOS[index], f"scenario {index}")


def test_the_acceptance_scenarios_hold_a_percentile_a_length_distribution_and_a_sized_answer():
    assert len(ACCEPTANCE) == ACCEPTANCE_SCENARIOS == 10
    assert all("percentile" in entry["query"] for entry in ACCEPTANCE)
    kinds = [sizing_kinds(entry["query"], entry["want"]) for entry in ACCEPTANCE]
    assert sum("a length distribution" in k for k in kinds) >= 5, kinds  # lengths and a sized answer both
    assert sum("a layout found" in k for k in kinds) >= 6, kinds
    assert any("nothing carries it" in k or "several replicas" in k for k in kinds), kinds


@pytest.mark.parametrize("index", range(len(ACCEPTANCE)))
def test_page_sizes_and_plans_the_acceptance_scenarios_like_lib(tab, index):  # noqa: F811 (tab: the fixture)
    entry = ACCEPTANCE[index]
    assert_page_agrees(tab, entry, f"acceptance {index}")  # opens the scenario: the table against lib's plan
    assert_sizes_like_lib(tab.page, entry, f"acceptance {index}")
    if "lengths" in entry["query"]:  # the sample is used, and the prompt and output fields stand aside
        assert tab.page.locator('input[name="prompt_tokens"]').is_disabled()
        assert "prompt_tokens" not in tab.page.evaluate("location.search")


def assert_sizes_like_lib(page, entry: dict, label: str) -> None:
    """The sizing line of the open page against lib.serving.size's answer (``want``, golden) for ``query``."""
    q, want = entry["query"], entry["want"]
    shown = page.evaluate(READ_SIZING)
    assert not shown["hidden"], q
    if want is None:
        assert shown["layout"] is None, shown
        assert shown["text"].startswith("Sizing: no layout of at most " + q["max_devices"]), shown
        return
    where = f"{label}: {q}"
    assert (shown["layout"], int(shown["devices"])) == (want["layout"], want["devices"]), where
    assert relative(float(shown["rate"]), want["rate"]) <= 1e-9, where
    assert relative(float(shown["replica"]), want["replica_rate"]) <= 1e-9, where
    assert shown["binding"] == want["binding"], where
    assert want["layout"] in shown["text"] and f"{want['devices']} ×" in shown["text"], shown["text"]
    # The range of what it carries, from chapter 11's held-out errors (lib.serving.trust), named in the line.
    targeted = "ttft_limit_ms" in q or "tpot_limit_ms" in q
    low, high = capacity_interval(want["rate"], regime(ttft_limit=1.0 if targeted else None))
    assert relative(float(shown["low"]), low) <= 1e-9 and relative(float(shown["high"]), high) <= 1e-9, where
    assert "% range" in shown["text"] and "chapter 11's held-out errors" in shown["text"], shown["text"]
    if "confidence" in q:  # sized for the rate with that probability; the model's own estimate beside it
        assert f"% confidence need {want['devices']} ×" in shown["text"], shown["text"]
        assert int(shown["estimate"]) == want["estimate"] <= want["devices"], where
        assert f"The model's own estimate needs {want['estimate']} ×" in shown["text"], shown["text"]


def test_no_rate_no_sizing_and_a_bad_rate_is_marked(tab):  # noqa: F811 (tab: the fixture)
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
    page.fill('input[name="confidence"]', "0.99")
    error = page.locator("#pl-confidence-error").inner_text()
    assert "confidence must be from 0.05 to 0.95" in error and "got 0.99" in error, error
