"""The layout planner (book/planner.md) against ``lib.serving.plan``, in Chromium.

The page evaluates the formulas of ``lib.serving`` in JavaScript. These tests
open it with a scenario in the query string, read what the table *displays*
(and the full-precision ``data-value`` of each cell) and compare every row
with ``lib.serving.plan`` for the same scenario. The scenarios are seeded and
random (``tools/site/planner_golden.py``, which stores them with lib's rows in
``golden/scenarios.json``): dense and mixture-of-experts models, presets and
custom shapes, catalogue and custom devices, one server and several, rows
that fit and rows that do not, every weight and KV-cache format, prefix hits,
both all-reduces, the engine's scheduler limits and CUDA graphs, latency
targets (with the capacity under them, ``lib.serving.capacity``), and samples
of request lengths (the ``lengths`` field, ``lib.serving.parse_lengths``'s text)
in place of one prompt and output length. The page is
opened on the fewest of them that show every case kind; every function the
page computes with is compared with lib's on all of them by
``test_planner_functions.py``.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from pathlib import Path

import pytest
from site_support import assert_accessible_and_offline, open_page, query

from lib import hardware
from lib.serving import best, capacity_interval, frontier, parse_lengths, plan
from lib.serving.memory import check_context
from lib.transformer import PRESETS
from lib.units import GB, ms
from tools.site.browser import offline_context
from tools.site.planner_golden import PLAN_KINDS, RANDOM_SCENARIOS, lib_arguments, plan_kinds

pytestmark = pytest.mark.browser

PAGE = "book/planner.html"

#: Relative agreement the issue asks for between the page and lib.serving.plan.
TOLERANCE = 0.005

#: The page's contract: input names, and cells in decimal GB, ms and tokens/s.
CONTRACT_INPUTS = ["model", "device", "devices", "batch", "prompt_tokens", "output_tokens"]
NUMBERS = {  # data-output -> (PlanRow attribute, scale to the unit shown)
    "memory_per_device_GB": ("memory_per_device", 1 / GB),
    "ttft_ms": ("ttft", 1 / ms),
    "tpot_ms": ("tpot", 1 / ms),
    "tokens_per_s_per_device": ("tokens_per_s_per_device", 1.0),
    "tokens_per_s_per_user": ("tokens_per_s_per_user", 1.0),
}

#: The page's starting scenario, as its inputs hold it.
BASE = dict(
    model="llama-3-70b",
    device="h100-sxm",
    devices="8",
    devices_per_node="8",
    batch="64",
    prompt_tokens="1024",
    output_tokens="256",
    weight_format="bf16",
    kv_format="bf16",
    allreduce="engine",
    inter_link="ib-ndr",
)

READ_ROWS = """() => Array.from(document.querySelectorAll('tr[data-layout]')).map((tr) => ({
  layout: tr.getAttribute('data-layout'),
  best: tr.getAttribute('data-best') === 'true',
  cells: Object.fromEntries(Array.from(tr.querySelectorAll('[data-output]')).map((c) =>
    [c.getAttribute('data-output'), {text: c.innerText.trim(), value: c.getAttribute('data-value')}])),
}))"""


# ---------------------------------------------------------------- scenarios

#: tools/site/planner_golden.py's seeded scenarios and lib's answers (``python -m tools.site.planner_golden`` writes them).
GOLDEN = json.loads((Path(__file__).with_name("golden") / "scenarios.json").read_text(encoding="utf-8"))
SCENARIOS = GOLDEN["plan"]
#: The scenarios the browser opens: the fewest that show every case kind (tools.site.planner_golden._cover); the
#: others are compared function by function (test_planner_functions.py).
OPENED = GOLDEN["e2e"]["plan"]


def relative(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-300)


@pytest.fixture(scope="module")
def tab(context, base_url):
    """One tab of the planner, reused: ``tab(values)`` opens the page with that scenario."""
    page, visit = open_page(context, base_url + PAGE)
    # The largest scenarios compute for many seconds on a busy 2-core machine (make test prints the PDF
    # meanwhile): a wait fails only past two minutes, not Playwright's default 30 s.
    page.set_default_timeout(120_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    def goto(values: dict[str, str] | None = None):
        page.goto(base_url + PAGE + (query(values) if values else ""), wait_until="load")
        page.wait_for_selector("tr[data-layout], td.pl-waiting")
        return page

    goto.page = page
    yield goto
    assert not visit.page_errors and not errors, visit.page_errors + errors
    page.close()


def test_scenarios_cover_the_cases_the_issue_names():
    kinds = {kind: 0 for kind in PLAN_KINDS}
    for entry in SCENARIOS:
        for kind in plan_kinds(entry["query"], entry["rows"]):
            kinds[kind] += 1
    assert len(SCENARIOS) == RANDOM_SCENARIOS >= 30
    assert all(count >= 2 for count in kinds.values()), kinds
    opened = set().union(*(plan_kinds(SCENARIOS[i]["query"], SCENARIOS[i]["rows"]) for i in OPENED))
    assert opened == set(PLAN_KINDS), f"the scenarios opened in the browser miss {set(PLAN_KINDS) - opened}"


@pytest.mark.parametrize("index", OPENED)
def test_page_agrees_with_lib(tab, index):
    assert_page_agrees(tab, SCENARIOS[index], f"scenario {index}")


def assert_page_agrees(tab, entry: dict, label: str) -> None:
    """Open a golden scenario (``query``) and compare every row the page shows, and its summary, with
    lib.serving.plan's (``rows``, ``best``: tools/site/planner_golden.py)."""
    q, rows, chosen = entry["query"], entry["rows"], entry["best"]
    page = tab(q)
    shown = page.evaluate(READ_ROWS)
    assert [r["layout"] for r in shown] == [row["name"] for row in rows], q
    for row, got in zip(rows, shown):
        where = f"{label} {query(q)}, {row['name']}"
        cells = got["cells"]
        assert got["best"] == (row["name"] == chosen), where
        assert cells["fits"]["text"] == ("yes" if row["fits"] else "no"), where
        assert cells["max_sequences"]["text"] == str(row["max_batch"] * row["dp"]), where
        for output, (attribute, scale) in NUMBERS.items():
            want = row[attribute] * scale
            text, value = cells[output]["text"], cells[output]["value"]
            assert "NaN" not in text and "Infinity" not in text, where
            displayed = relative(float(text), want)
            exact = relative(float(value), want)
            assert displayed <= TOLERANCE, f"{where}: {output} shows {text}, lib says {want!r}"
            assert exact <= 1e-9, f"{where}: {output} holds {value}, lib says {want!r}"
        if row["requests_per_s_per_device"] is not None:  # with a target: lib.serving.capacity's columns
            text, value = (cells["requests_per_s_per_device"][k] for k in ("text", "value"))
            assert relative(float(text), row["requests_per_s_per_device"]) <= TOLERANCE, f"{where}: {text}"
            assert relative(float(value), row["requests_per_s_per_device"]) <= 1e-9, f"{where}: {value}"
            assert cells["binding"]["text"] == row["binding"], where
            # Its range from chapter 11's held-out errors (lib.serving.trust), shown to four digits.
            shown_range = [float(x) for x in cells["requests_per_s_range"]["text"].split("–")]
            want_range = capacity_interval(row["requests_per_s_per_device"], "load")
            assert all(relative(a, b) <= TOLERANCE for a, b in zip(shown_range, want_range)), where
        else:
            assert "requests_per_s_per_device" not in cells and "binding" not in cells, where
            assert "requests_per_s_range" not in cells, where
        if row["cost_per_million_tokens"] is not None:
            cost = float(cells["cost_per_million_tokens"]["text"])
            assert relative(cost, row["cost_per_million_tokens"]) <= TOLERANCE, where
        note = cells["note"]["text"]
        if row["reason"]:
            assert note == row["reason"][0].upper() + row["reason"][1:] + ".", f"{where}: {note!r} vs {row['reason']!r}"
        else:
            assert note.startswith("Fits; each decode step is " + row["bound"]), where
    summary = page.locator("#pl-summary").inner_text()
    assert (chosen in summary) if chosen else summary.startswith("No layout"), summary
    note = entry["note"]  # lib.serving.plan.tie_note: why the best is not the leader, "" when it is
    assert (f"A tie: {note}." in summary) if note else ("A tie" not in summary), summary


def test_defaults_are_the_books_example(tab):
    page = tab()
    for name in CONTRACT_INPUTS:
        assert page.locator(f'[name="{name}"]').count() == 1, f"no input named {name}"
    values = {name: page.locator(f'[name="{name}"]').input_value() for name in BASE}
    assert values == BASE
    rows = plan(PRESETS["llama-3-70b"], "h100-sxm", 8, 64, 1024, 256)
    assert page.locator("tr[data-best='true']").get_attribute("data-layout") == best(rows).name


#: tests/unit/lib/serving/test_plan.py's near-ties of issue 31 as the page's inputs hold them, and the layout to deploy.
PAGE_TIES = {
    "Llama 3.1 8B, 8 H100, chat targets": (
        dict(BASE, model="llama-3.1-8b", ttft_limit_ms="1000", tpot_limit_ms="100"),
        "tp1-pp1-dp8",
    ),
    "Mixtral 8x7B, 2 H100, every expert layout": (
        dict(
            BASE,
            model="mixtral-8x7b",
            devices="2",
            prompt_tokens="256",
            output_tokens="256",
            ttft_limit_ms="1000",
            tpot_limit_ms="100",
            expert_parallel="all",
        ),
        "tp2-pp1-dp1",
    ),
}


@pytest.mark.parametrize("case", sorted(PAGE_TIES))
def test_a_near_tie_goes_to_the_simpler_layout_on_the_page_as_in_lib(tab, case):
    values, simple = PAGE_TIES[case]
    page = tab(values)
    assert page.locator("tr[data-best='true']").get_attribute("data-layout") == simple, case
    summary = page.locator("#pl-summary").inner_text()
    assert "A tie: " in summary and f"inside the model's 15 % error (chapter 11); {simple} is simpler" in summary, (
        summary
    )


def test_frontier_matches_lib(tab):
    for q in (BASE, SCENARIOS[1]["query"], SCENARIOS[4]["query"]):
        args, options = lib_arguments(q)
        config, device, devices, _, prompt, output = args
        _, front = frontier(config, device, devices, prompt, output, **options)
        page = tab(q)
        page.locator(".pl-front-table summary").click()
        shown = page.evaluate("""() => Array.from(document.querySelectorAll('#pl-front-rows tr')).map(
            (tr) => Array.from(tr.children).map((c) => c.textContent))""")
        want = list(reversed(front))
        if not want:
            assert len(shown) == 1 and "No point" in shown[0][0]
            continue
        assert [(r[0], int(r[1])) for r in shown] == [(p.name, p.batch) for p in want], query(q)
        for r, p in zip(shown, want):
            assert relative(float(r[2]), p.tokens_per_s_per_user) <= TOLERANCE
            assert relative(float(r[3]), p.tokens_per_s_per_device) <= TOLERANCE


def test_url_round_trip(tab, context, base_url):
    page = tab()
    page.select_option('select[name="model"]', "mixtral-8x7b")
    page.select_option('select[name="device"]', "a100-80gb")
    page.fill('input[name="devices_per_node"]', "4")
    page.fill('input[name="nodes"]', "2")
    page.fill('input[name="batch"]', "32")
    page.fill('input[name="tpot_limit_ms"]', "30")
    page.select_option('select[name="kv_format"]', "fp8")
    assert page.locator('input[name="devices"]').input_value() == "8"
    address = page.evaluate("window.location.href")
    params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(address).query))
    assert params["model"] == "mixtral-8x7b" and params["device"] == "a100-80gb" and params["link"] == "nvlink3"
    assert params["inter_link"] == hardware.DEVICES["a100-80gb"].network  # plan's default follows the device
    assert params["devices"] == "8" and params["devices_per_node"] == "4" and params["batch"] == "32"
    assert params["tpot_limit_ms"] == "30" and params["kv_format"] == "fp8"
    assert page.locator("#pl-share").input_value() == address.split("#")[0]
    shown = page.evaluate(READ_ROWS)

    again, visit = open_page(context, address)
    try:
        assert again.evaluate(READ_ROWS) == shown
        for name, value in params.items():
            assert again.locator(f'[name="{name}"]').input_value() == value, name
        assert again.locator('input[name="nodes"]').input_value() == "2"
    finally:
        again.close()


def test_a_sample_of_lengths_replaces_prompt_and_output_and_round_trips(tab, context):
    page = tab()
    typed = "1000:200*3, 95:410"
    page.fill('input[name="lengths"]', typed)
    assert page.locator('input[name="prompt_tokens"]').is_disabled()
    assert page.locator('input[name="output_tokens"]').is_disabled()
    address = page.evaluate("window.location.href")
    params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(address).query))
    assert params["lengths"] == typed and "prompt_tokens" not in params and "output_tokens" not in params
    args, options = lib_arguments(params)
    rows = plan(*args, **options)  # the sample's plan: memory holds E[O (P + O)] / E[O] per sequence
    assert rows[-1].max_batch != plan(*args[:4], 774, 252, **options)[-1].max_batch  # not the mean request
    shown = page.evaluate(READ_ROWS)
    assert [r["layout"] for r in shown] == [row.name for row in rows]
    for row, got in zip(rows, shown):
        assert got["cells"]["max_sequences"]["text"] == str(row.max_batch * row.dp), row.name
        assert relative(float(got["cells"]["tpot_ms"]["value"]), row.tpot / ms) <= 1e-9, row.name
    again, visit = open_page(context, address)
    try:
        assert again.evaluate(READ_ROWS) == shown
        assert again.locator('input[name="lengths"]').input_value() == typed
        assert again.locator('input[name="prompt_tokens"]').is_disabled()
    finally:
        again.close()
    # lib's own words at the field: a bad text, and a sample whose longest request is past the model's context
    for bad in ("1000:200*3,95:0", "512:128,8000:256", "1000;200"):
        page.fill('input[name="lengths"]', bad)
        try:
            parse_lengths(bad)
            check_context(PRESETS["llama-3-70b"], *parse_lengths(bad))
        except ValueError as error:
            want = str(error)
        assert page.locator('input[name="lengths"]').get_attribute("aria-invalid") == "true"
        assert page.locator("#pl-lengths-error").inner_text() == want + ".", want
    page.fill('input[name="lengths"]', "")
    assert not page.locator('input[name="prompt_tokens"]').is_disabled()
    assert "lengths" not in page.evaluate("location.search") and "prompt_tokens=" in page.evaluate("location.search")


def test_custom_model_and_device_round_trip(tab):
    page = tab()
    page.fill('input[name="layers"]', "40")
    assert page.locator('select[name="model"]').input_value() == "custom"
    page.fill('input[name="memory_GiB"]', "96")
    assert page.locator('select[name="device"]').input_value() == "custom"
    params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(page.evaluate("location.href")).query))
    assert params["layers"] == "40" and params["hidden"] == "8192" and params["memory_GiB"] == "96"
    args, options = lib_arguments(params)
    rows = plan(*args, **options)
    shown = page.evaluate(READ_ROWS)
    assert [r["layout"] for r in shown] == [row.name for row in rows]
    for row, got in zip(rows, shown):
        assert relative(float(got["cells"]["tpot_ms"]["value"]), row.tpot / ms) <= 1e-9


@pytest.mark.parametrize(
    "name, typed, rule",
    [
        ("batch", "0", "≥ 1"),
        ("batch", "2.5", "whole number"),
        ("devices", "12", "whole servers of 8"),
        ("prompt_tokens", "", "empty"),
        ("output_tokens", "lots", "must be a number"),
        ("tpot_limit_ms", "-3", "> 0"),
        ("price_per_device_hour", "-1", "≥ 0"),
        ("hidden", "8001", "multiple of heads"),
        ("kv_heads", "7", "multiple of kv_heads"),
        ("top_k", "3", "at most experts"),
        ("memory_GiB", "0", "> 0"),
        ("memory_efficiency", "1.5", "(0, 1]"),
        ("gpu_memory_utilization", "0", "(0, 1]"),
        ("max_num_batched_tokens", "0", "≥ 1"),
        ("prefix_hit_rate", "1", "below 1"),
        ("percentile", "100", "a percent in [1, 100)"),
        ("devices", "100000", "at most 4096 (the planner's cap)"),
    ],
)
def test_invalid_input_is_marked_at_the_field(tab, name, typed, rule):
    page = tab()
    if name in ("memory_efficiency", "gpu_memory_utilization", "max_num_batched_tokens"):
        page.locator(".pl-more summary").click()
    field = page.locator(f'input[name="{name}"]')
    before = field.input_value()
    field.fill(typed)
    assert field.get_attribute("aria-invalid") == "true"
    error = page.locator(f"#pl-{name}-error")
    assert error.is_visible()
    assert name in error.inner_text() and rule in error.inner_text(), error.inner_text()
    assert f"pl-{name}-error" in field.get_attribute("aria-describedby").split()
    text = page.locator("body").inner_text()
    assert "NaN" not in text and "undefined" not in text and "Infinity" not in text
    waiting = page.locator("td.pl-waiting")
    assert waiting.count() == 1 and name in waiting.inner_text()
    assert page.locator("#pl-summary").inner_text().strip(), "the summary is blank"
    assert page.locator("#pl-chart-desc").inner_text().strip(), "the chart caption is blank"
    field.fill(before)  # a model or device field leaves a custom one with the preset's numbers
    assert field.get_attribute("aria-invalid") is None
    assert not error.is_visible()
    assert page.locator("tr[data-layout]").count() > 0


def test_unknown_names_in_a_link_are_marked(tab):
    page = tab({**BASE, "model": "llama-9-900b", "device": "h300"})
    for name, bad in (("model", "llama-9-900b"), ("device", "h300")):
        assert page.locator(f'select[name="{name}"]').get_attribute("aria-invalid") == "true"
        assert bad in page.locator(f"#pl-{name}-error").inner_text()
    page.select_option('select[name="model"]', "llama-3-8b")
    page.select_option('select[name="device"]', "l4")
    assert page.locator("tr[data-layout]").count() > 0


def test_nodes_and_devices_follow_each_other(tab):
    page = tab()
    page.fill('input[name="nodes"]', "2")
    assert page.locator('input[name="devices"]').input_value() == "16"
    assert page.locator('tr[data-layout="tp16-pp1-dp1"]').count() == 1
    page.fill('input[name="devices"]', "32")
    assert page.locator('input[name="nodes"]').input_value() == "4"
    page.fill('input[name="devices"]', "4")  # part of one server
    assert page.locator('input[name="nodes"]').input_value() == "1"
    assert page.locator("tr[data-layout]").count() == len(plan(PRESETS["llama-3-70b"], "h100-sxm", 4, 64, 1024, 256))


def test_uneven_groups_are_left_out_like_lib(tab):
    """A tensor-parallel group of 5 on servers of 4 would straddle a server: lib.serving.plan and the page omit it."""
    q = dict(
        model="custom",
        layers="8",
        hidden="5120",
        heads="40",
        kv_heads="40",
        ffn_hidden="12800",
        vocab="32000",
        experts="1",
        top_k="1",
        device="h100-sxm",
        devices_per_node="4",
        devices="20",
        batch="8",
        prompt_tokens="512",
        output_tokens="128",
    )
    args, options = lib_arguments(q)
    names = [row.name for row in plan(*args, **options)]
    assert "tp5-pp1-dp4" not in names and "tp4-pp1-dp5" in names
    page = tab(q)
    assert page.locator('tr[data-layout="tp5-pp1-dp4"]').count() == 0
    assert page.locator("tr[data-layout]").count() == len(names)
    assert "NaN" not in page.locator("#pl-rows").inner_text()
    assert page.locator('tr[data-layout="tp4-pp1-dp5"] [data-output="fits"]').inner_text() == "yes"


def test_column_headers_link_to_definitions_and_equations(tab):
    page = tab()
    headers = page.locator("#pl-table th[data-col]:not([data-col='note'])")
    assert headers.count() >= 9
    for i in range(headers.count()):
        th = headers.nth(i)
        anchor = th.locator("a").first.get_attribute("href")
        assert anchor.startswith("#planner-col-") and page.locator(anchor).count() == 1, anchor
        equation = th.locator(".pl-eq a")
        assert equation.count() == 1, th.inner_text()
        href = equation.get_attribute("href")
        assert href.startswith("../notebooks/"), href
    equations = page.evaluate("""() => Array.from(document.querySelectorAll('#pl-table .pl-eq a'))
        .map((a) => a.getAttribute('href'))""")
    for column in ("ttft_ms", "tpot_ms", "memory_per_device_GB"):
        href = page.locator(f"#pl-table th[data-col='{column}'] .pl-eq a").get_attribute("href")
        assert "07_serving_many_users.html#equation-eq-c07-" in href, (column, href)
    assert len(equations) == headers.count()


def test_keyboard_alone_changes_the_scenario(tab):
    page = tab()
    page.locator("#pl-form-help").click()  # a neutral start, then only keys
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.name") == "model":
            break
    assert page.evaluate("document.activeElement.name") == "model"
    before = page.locator('input[name="layers"]').input_value()
    page.keyboard.press("ArrowDown")
    assert (
        page.locator('input[name="layers"]').input_value() != before
        or page.locator('select[name="model"]').input_value() != "llama-3-70b"
    )
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.name") == "batch":
            break
    assert page.evaluate("document.activeElement.name") == "batch"
    page.keyboard.press("Control+A")
    page.keyboard.type("7")
    assert "batch=7" in page.evaluate("location.search")
    for _ in range(40):  # the More assumptions fold opens from the keyboard
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.tagName") == "SUMMARY":
            break
    page.keyboard.press("Enter")
    assert page.locator(".pl-more").get_attribute("open") is not None
    scroll = page.locator(".pl-scroll")
    assert scroll.get_attribute("tabindex") == "0"  # the wide table scrolls from the keyboard


def test_reads_on_a_phone(browser, base_url):
    context = offline_context(
        browser, viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True, has_touch=True
    )
    try:
        page = context.new_page()
        page.goto(base_url + PAGE + query({**BASE, "price_per_device_hour": "3"}))
        page.wait_for_selector("tr[data-layout]")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the page is {width} px wide on a 390 px screen"
        row = page.locator('tr[data-layout="tp8-pp1-dp1"]')
        assert row.evaluate("(tr) => getComputedStyle(tr).display") == "block", "rows are not cards"
        box = row.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390
        label = row.locator('[data-output="tpot_ms"]').evaluate("(td) => getComputedStyle(td, '::before').content")
        assert "TPOT" in label
        chart = page.locator("#pl-chart").bounding_box()
        assert chart["width"] <= 390
    finally:
        context.close()


def test_works_from_a_downloaded_copy(browser, site_dir):
    """Opened from disk (file://), with the network refused: the data script still loads."""
    context = browser.new_context()  # no server at all; every request is recorded
    requests: list[str] = []
    context.on("request", lambda request: requests.append(request.url))
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto((Path(site_dir) / PAGE).as_uri() + query({**BASE, "batch": "1"}))
        page.wait_for_selector("tr[data-layout]")
        assert page.locator("tr[data-best='true']").get_attribute("data-layout") == "tp8-pp1-dp1"
        assert page.locator("tr[data-layout]").count() == len(plan(PRESETS["llama-3-70b"], "h100-sxm", 8, 1, 1024, 256))
        assert not errors, errors
        assert any(url.endswith("planner-data.js") or "planner-data.js?" in url for url in requests)
        elsewhere = [url for url in requests if not url.startswith(("file://", "data:"))]
        assert not elsewhere, elsewhere
    finally:
        context.close()


def test_file_copy_shares_a_relative_link_that_opens_anywhere(browser, site_dir):
    """From a file:// copy the link names no folder of this disk, and the paste box opens any copy's link."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    requests: list[str] = []
    context.on("request", lambda request: requests.append(request.url))
    try:
        page = context.new_page()
        page.goto((Path(site_dir) / PAGE).as_uri())
        page.wait_for_selector("tr[data-layout]")
        page.fill('input[name="batch"]', "8")
        link = page.locator("#pl-share").input_value()
        assert link.startswith("planner.html?") and "file:" not in link and str(site_dir) not in link, link
        assert "batch=8" in link and "relative" in page.locator("#pl-share-help").inner_text()
        other = context.new_page()  # another participant's copy
        other.goto((Path(site_dir) / PAGE).as_uri())
        other.wait_for_selector("tr[data-layout]")
        other.fill("#pl-open", link.replace("batch=8", "batch=2"))
        other.click("#pl-open-button")
        assert other.locator('input[name="batch"]').input_value() == "2"
        want = best(plan(PRESETS["mixtral-8x7b"], "h100-sxm", 8, 2, 1024, 256))
        other.fill("#pl-open", "file:///home/teacher/book/planner.html?model=mixtral-8x7b&batch=2#top")
        other.press("#pl-open", "Enter")
        assert other.locator('select[name="model"]').input_value() == "mixtral-8x7b"
        assert other.locator("tr[data-best='true']").get_attribute("data-layout") == want.name
        other.fill("#pl-open", "no scenario here")
        other.click("#pl-open-button")
        assert "no scenario" in other.locator("#pl-copy-status").inner_text()
        assert other.locator('select[name="model"]').input_value() == "mixtral-8x7b"
        assert all(url.startswith(("file:", "data:", "about:", "blob:")) for url in requests), requests
    finally:
        context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("state", ["table", "error"])
def test_accessible_and_offline(browser, base_url, scheme, state):
    context = offline_context(browser, color_scheme=scheme)
    try:
        page = context.new_page()
        values = {**BASE, "tpot_limit_ms": "12", "price_per_device_hour": "2.5"}
        if state == "error":
            values["batch"] = "0"
        page.goto(base_url + PAGE + query(values))
        page.wait_for_selector("tr[data-layout], td.pl-waiting")
        page.locator(".pl-more summary").click()
        page.locator(".pl-front-table summary").click()
        assert_accessible_and_offline(page, context)
    finally:
        context.close()


#: The page's own bytes (HTML, scripts, data, style), not the theme's.
OWN_FILES = [
    PAGE,
    "_static/planner.js",
    "_static/planner-model.js",
    "_static/planner-capacity.js",
    "_static/planner-collectives.js",
    "_static/planner-config.js",
    "_static/planner-sizing.js",
    "_static/planner-map.js",
    "_static/planner-chart.js",
    "_static/planner-data.js",
    "_static/scenario-link.js",
    "_static/planner.css",
]


#: The most the page's own files may weigh together, as the built site serves them (scripts minified by
#: tools/sphinx/minify.py): 150 kB before the third edition's model (engine, formats, steady-state prefill,
#: capacity under targets, sizing, config.json, MoE layouts) came to the page; its issue allows 200 kB.
OWN_BYTES = 200e3


def test_page_weighs_at_most_200_kB(site_dir):
    sizes = {name: (Path(site_dir) / name).stat().st_size for name in OWN_FILES}
    total = sum(sizes.values())
    print(f"\nplanner page, own files: {sizes}, total {total / 1e3:.1f} kB")
    assert total <= OWN_BYTES, sizes
    html = (Path(site_dir) / PAGE).read_text(encoding="utf-8")
    for name in OWN_FILES[1:]:
        assert re.search(r'(src|href)="\.\./' + re.escape(name) + r'\?v=[0-9a-f]+"', html), name
