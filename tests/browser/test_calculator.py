"""The what-if calculator (book/calculator.md) against the book's library.

Expected values come from ``lib.budget.Phase`` and ``lib.breakeven``; the
test reads what the page *displays* and checks that it agrees with them to
the precision shown (and that at least four significant digits are shown,
so the check has teeth). Cases without a finite answer must be said in words.

Two modes. The what-if mode (``mode=fixed``) takes Q, l and V as typed; the
cases below run in it. The model mode, the page's default, prices V and l
for each K as chapter 2's sweep does: ``test_calculator_model.py``.
"""

from __future__ import annotations

import math
import re
import urllib.parse

import pytest
from layout_support import settle
from site_support import assert_accessible_and_offline, open_page, query

from lib import breakeven, experiment
from lib.budget import Phase
from lib.units import GB, ms, s
from tools.site.browser import offline_context

pytestmark = pytest.mark.browser

PAGE = "book/calculator.html"

NAMES = [
    "serial_ms",
    "divisible_ms",
    "efficiency",
    "transfers",
    "startup_ms",
    "transfer_bytes",
    "bandwidth_GBps",
    "devices",
]

#: Words that start an output with no finite value: no value works, or the value overflows.
NO_VALUE = ("none", "too large")

OUTPUTS = [
    "one_device_time",
    "split_time",
    "communication_time",
    "speedup",
    "parallel_efficiency",
    "overlap_bound",
    "break_even_divisible",
    "min_bandwidth",
    "min_efficiency",
]

BASE = dict(
    mode="fixed",
    serial_ms="0.8",
    divisible_ms="12",
    efficiency="0.8",
    transfers="4",
    startup_ms="0.03",
    transfer_bytes="2000000",
    bandwidth_GBps="10",
    devices="2",
)

# C at which the base case breaks even, from the library (an independent route to T1 = T2).
# The calculator's base case is the book's (test_base_case_is_the_books below).
BREAK_EVEN_MS = repr(breakeven.break_even_divisible(experiment.BASE) / ms)

#: name -> changes from the base case. At least ten, with the cases the issue asks for.
CASES = {
    "base case": {},
    "small job, C = 1 ms": dict(divisible_ms="1"),
    "slow link, 1 GB/s": dict(bandwidth_GBps="1"),
    "fast link, 50 GB/s": dict(bandwidth_GBps="50"),
    "long serial part, S = 100 ms": dict(serial_ms="100"),
    "C at break-even": dict(divisible_ms=BREAK_EVEN_MS),
    "impossible, K eta = 1": dict(efficiency="0.5"),
    "impossible, one device": dict(devices="1", efficiency="1"),
    "communication-dominated": dict(transfers="8", startup_ms="1", transfer_bytes="1e8", bandwidth_GBps="1"),
    "efficiency above 1 needed": dict(divisible_ms="1", startup_ms="0.23", transfer_bytes="0", efficiency="1"),
    "no communication": dict(transfers="0"),
    "ideal link": dict(bandwidth_GBps="inf"),
    "eight devices": dict(devices="8", efficiency="0.6", transfers="16", transfer_bytes="5e5"),
    "tiny messages": dict(startup_ms="1e-5", transfer_bytes="10", bandwidth_GBps="400"),
    "nothing at all": dict(serial_ms="0", divisible_ms="0", transfers="0"),
    "a transfer overflows to infinity": dict(transfer_bytes="1e308", bandwidth_GBps="1e-9"),
    "break-even overflows": dict(transfer_bytes="1e300", bandwidth_GBps="1e-4", efficiency="0.5000000000000001"),
}

_SUPER = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
_NUMBER = re.compile(r"^(-?\d+(?:\.(\d+))?)(?: × 10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+))?")


def parse_displayed(text: str) -> tuple[float, float, int]:
    """(value, half a unit in the last shown place, significant digits shown).

    >>> parse_displayed("9.220 ms")
    (9.22, 0.0005, 4)
    >>> value, half, digits = parse_displayed("1.234 × 10⁻⁵ ms")
    >>> round(value * 1e5, 6), round(half * 1e8, 6), digits
    (1.234, 0.5, 4)
    """
    match = _NUMBER.match(text)
    assert match, f"no number at the start of {text!r}"
    mantissa, decimals, exponent = match.group(1), match.group(2) or "", match.group(3)
    power = int(exponent.translate(_SUPER)) if exponent else 0
    value = float(mantissa) * 10.0**power
    half = 0.5 * 10.0 ** (power - len(decimals))
    digits = len(mantissa.lstrip("-").replace(".", "").lstrip("0"))
    return value, half, digits


def phase_for(values: dict[str, str]) -> Phase:
    """The library's Phase for one set of calculator inputs (strings as typed)."""
    v = {name: float(text) for name, text in values.items() if name != "mode"}
    return Phase(
        serial=v["serial_ms"] * ms,
        divisible=v["divisible_ms"] * ms,
        efficiency=v["efficiency"],
        transfers=v["transfers"],
        startup=v["startup_ms"] * ms,
        transfer_bytes=v["transfer_bytes"],
        bandwidth=v["bandwidth_GBps"] * GB / s,
        devices=v["devices"],
    )


def expected(values: dict[str, str]) -> dict[str, float | None]:
    """Each output in the calculator's units; None where the library refuses (undefined)."""
    phase = phase_for(values)
    try:
        speedup = phase.speedup
        efficiency = phase.parallel_efficiency
    except ValueError:
        speedup = efficiency = None
    return {
        "one_device_time": phase.one_device_time / ms,
        "split_time": phase.split_time / ms,
        "communication_time": phase.communication_time / ms,
        "speedup": speedup,
        "parallel_efficiency": efficiency,
        "overlap_bound": phase.overlap_bound / ms,
        "break_even_divisible": breakeven.break_even_divisible(phase) / ms,
        "min_bandwidth": breakeven.min_bandwidth(phase) / (GB / s),
        "min_efficiency": breakeven.min_efficiency(phase),
    }


def read_outputs(page) -> dict[str, str]:
    return {name: page.locator(f'[data-output="{name}"]').inner_text().strip() for name in OUTPUTS}


def read_inputs(page) -> dict[str, str]:
    mode = page.locator('input[name="mode"]:checked').get_attribute("value")
    return {"mode": mode, **{name: page.locator(f'input[name="{name}"]').input_value() for name in NAMES}}


@pytest.fixture()
def calculator(context, base_url):
    """Open the calculator with a given query string; close the tabs afterwards.

    An uncaught JavaScript error in any tab, from its load to the end of the test, fails the test. (The
    tests read what the page shows, not the requests it made: no wait for the network to be idle.)
    """
    opened = []
    errors: list[str] = []

    def open_with(values: dict[str, str] | None = None):
        page, visit = open_page(context, base_url + PAGE + (query(values) if values else ""), idle=False)
        page.on("pageerror", lambda error: errors.append(str(error)))
        opened.append((page, visit))
        return page

    yield open_with
    for page, visit in opened:
        assert not visit.page_errors, visit.page_errors
        page.close()
    assert not errors, errors


def test_base_case_is_the_books():
    assert phase_for(BASE) == experiment.BASE


def test_at_least_ten_cases_cover_the_required_kinds():
    assert len(CASES) >= 10
    kinds = {name: expected({**BASE, **changes}) for name, changes in CASES.items()}
    assert any(math.isinf(k["break_even_divisible"]) for k in kinds.values()), "no impossible case"
    assert any(k["min_efficiency"] > 1 or math.isinf(k["min_efficiency"]) for k in kinds.values())
    dominated = kinds["communication-dominated"]
    assert dominated["communication_time"] > dominated["one_device_time"], "not communication-dominated"


@pytest.mark.parametrize("name", list(CASES))
def test_calculator_agrees_with_lib(calculator, name):
    values = {**BASE, **CASES[name]}
    page = calculator(values)
    shown = read_outputs(page)
    for output, want in expected(values).items():
        text = shown[output]
        where = f"{name}: {output} shows {text!r}, lib says {want!r}"
        assert "NaN" not in text and "Infinity" not in text, where
        if want is None:
            assert text.startswith("undefined"), where
            continue
        if math.isinf(want):
            assert text.startswith(NO_VALUE), where
            continue
        value, half, digits = parse_displayed(text)
        assert abs(value - want) <= half * (1 + 1e-9) + 1e-300, where
        if want != 0:
            assert digits >= 4, f"{where}: fewer than four significant digits shown"
        raw = page.locator(f'[data-output="{output}"]').get_attribute("data-value")
        assert math.isclose(float(raw), want, rel_tol=1e-12, abs_tol=1e-300), where
        if output == "min_efficiency":
            assert ("impossible" in text) == (want > 1), where
        if output == "min_bandwidth" and want == 0:
            assert "no bytes travel" in text, where


def test_typing_updates_live(calculator):
    page = calculator({"mode": "fixed"})
    assert read_inputs(page) == BASE, "the page does not start at the base case"
    before = read_outputs(page)["split_time"]
    page.fill('input[name="devices"]', "4")
    changed = {**BASE, "devices": "4"}
    value, half, _ = parse_displayed(read_outputs(page)["split_time"])
    assert abs(value - expected(changed)["split_time"]) <= half
    assert read_outputs(page)["split_time"] != before


def test_url_round_trip(calculator):
    page = calculator({"mode": "fixed"})
    scenario = {**BASE, "divisible_ms": "3.5", "devices": "4", "bandwidth_GBps": "25"}
    for name in ("divisible_ms", "devices", "bandwidth_GBps"):
        page.fill(f'input[name="{name}"]', scenario[name])
    address = page.evaluate("window.location.href")
    params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(address).query))
    assert params == scenario, "the address bar does not hold the scenario"
    link = page.locator("#calc-link").input_value()
    assert link == address.split("#")[0], "the shareable link differs from the address"
    shown = read_outputs(page)

    again = calculator({"devices": "7"})  # a fresh tab, then the shared link
    again.goto(link)
    assert read_inputs(again) == scenario
    assert read_outputs(again) == shown


def test_copy_link_button_says_what_happened(calculator, context, base_url):
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url.rstrip("/"))
    page = calculator({**BASE, "devices": "3"})
    page.click("#calc-copy")
    status = page.locator("#calc-copy-status")
    status.filter(has_text=re.compile(r"\S")).wait_for(timeout=5000)
    if status.inner_text().startswith("Link copied"):
        assert page.evaluate("navigator.clipboard.readText()") == page.locator("#calc-link").input_value()
    else:  # clipboard refused: the link must be selected for the reader to copy by hand
        assert page.evaluate("document.activeElement.id") == "calc-link"


@pytest.mark.parametrize(
    "name, typed, rule",
    [
        ("efficiency", "1.5", "(0, 1]"),
        ("efficiency", "0", "(0, 1]"),
        ("devices", "2.5", "whole number"),
        ("devices", "0", "≥ 1"),
        ("devices", "1e9", "at most 4096"),
        ("devices", "1e3", "written in digits"),
        ("transfers", "-1", "≥ 0"),
        ("bandwidth_GBps", "0", "> 0"),
        ("serial_ms", "-0.1", "≥ 0"),
        ("startup_ms", "inf", "finite"),
        ("transfer_bytes", "lots", "must be a number"),
        ("divisible_ms", "", "empty"),
    ],
)
def test_invalid_input_is_marked_at_the_field(calculator, name, typed, rule):
    page = calculator({"mode": "fixed"})
    field = page.locator(f'input[name="{name}"]')
    field.fill(typed)
    assert field.get_attribute("aria-invalid") == "true"
    error = page.locator(f"#calc-{name}-error")
    assert error.is_visible()
    message = error.inner_text()
    assert name in message and rule in message, message
    # The message is tied to the field for screen readers.
    assert f"calc-{name}-error" in field.get_attribute("aria-describedby").split()
    for text in read_outputs(page).values():
        assert "NaN" not in text and "Infinity" not in text
    # Fixing the value clears the mark.
    field.fill(BASE[name])
    assert field.get_attribute("aria-invalid") is None
    assert not error.is_visible()


def test_chart_follows_the_inputs(calculator):
    page = calculator({"mode": "fixed"})
    chart = page.locator("#calc-chart")
    assert chart.get_attribute("role") == "img"
    assert page.locator("#calc-chart circle.calc-breakeven").count() == 1
    caption = page.locator("#calc-chart-desc").inner_text()
    c_star = expected(BASE)["break_even_divisible"]
    assert f"C* = {c_star:.3f} ms" in caption, caption

    page.fill('input[name="efficiency"]', "0.5")  # K eta = 1: the lines never cross
    assert page.locator("#calc-chart circle.calc-breakeven").count() == 0
    assert "never cross" in page.locator("#calc-chart-desc").inner_text()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_calculator_accessible_with_an_error_showing(browser, base_url, scheme):
    # The page-wide axe test sees the calculator in its first state, light mode;
    # this one also covers the error styles and the dark theme.
    context = offline_context(browser, color_scheme=scheme)
    try:
        page = context.new_page()
        page.goto(base_url + PAGE + query({**BASE, "efficiency": "2"}))
        assert page.locator('input[name="efficiency"]').get_attribute("aria-invalid") == "true"
        assert_accessible_and_offline(page, context)
    finally:
        context.close()


def test_file_copy_shares_a_relative_link_that_opens_anywhere(browser, site_dir):
    """From a file:// copy the link names no folder of the teacher's disk, and the paste box opens it."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    requests = []
    context.on("request", lambda request: requests.append(request.url))
    try:
        page = context.new_page()
        page.goto((site_dir / PAGE).resolve().as_uri() + "?mode=fixed")
        page.fill('input[name="devices"]', "4")
        link = page.locator("#calc-link").input_value()
        assert link.startswith("calculator.html?") and "file:" not in link and str(site_dir) not in link
        assert "devices=4" in link
        other = context.new_page()  # another participant's copy
        other.goto((site_dir / PAGE).resolve().as_uri())
        other.fill("#calc-open", link.replace("devices=4", "devices=3"))
        other.click("#calc-open-button")
        assert read_inputs(other) == {**BASE, "devices": "3"}, "a shared what-if link opens in the what-if mode"
        other.fill(
            "#calc-open", "file:///home/teacher/html/book/calculator.html?serial_ms=5&devices=8&startup_ms=0.03#top"
        )
        other.press("#calc-open", "Enter")
        assert read_inputs(other) == {**BASE, "serial_ms": "5", "devices": "8"}, (
            "an old link (no mode, with l) is what-if"
        )
        other.fill("#calc-open", "no scenario here")
        other.click("#calc-open-button")
        assert "no scenario" in other.locator("#calc-copy-status").inner_text()
        assert all(url.startswith(("file:", "data:", "about:", "blob:")) for url in requests), requests
    finally:
        context.close()


#: A 1280 x 720 projector at 150 % zoom: the page lays out in 853 x 480 CSS pixels, drawn at 1.5.
PROJECTOR = {"viewport": {"width": 853, "height": 480}, "device_scale_factor": 1.5}

#: Every input and every result of the calculator that its mode shows, where they are on the screen (the
#: fields of the other mode, .calc-model-only or .calc-fixed-only, are left out: the page hides them).
ON_SCREEN_JS = """() => {
  const mode = document.querySelector('input[name=mode]:checked').value;
  const other = mode === 'model' ? '.calc-fixed-only' : '.calc-model-only';
  return [...document.querySelectorAll('#calc-form input[name]:not(#calc-open), #calc [data-output]')]
    .filter(e => !e.closest(other))
    .map(e => { const r = e.getBoundingClientRect();
                return {name: e.name || e.dataset.output, top: r.top, bottom: r.bottom, shown: r.height > 0}; });
}"""

#: Inputs and results the what-if mode shows (eight inputs and two mode buttons, nine results); the
#: model mode shows more.
AT_LEAST_ON_SCREEN = 19


def _off_screen(page) -> list[str]:
    height = page.evaluate("window.innerHeight")
    boxes = page.evaluate(ON_SCREEN_JS)
    assert len(boxes) >= AT_LEAST_ON_SCREEN, [box["name"] for box in boxes]
    return [
        f"{box['name']} ({box['top']:.0f}-{box['bottom']:.0f} px of {height})"
        for box in boxes
        if not (box["shown"] and 0 <= box["top"] and box["bottom"] <= height)
    ]


def test_projector_layout_fits_inputs_and_results_on_one_screen(browser, base_url):
    """The room's layout (button or #projector) puts every input and result its mode shows on one screen."""
    with offline_context(browser, **PROJECTOR) as context:
        page = context.new_page()
        page.goto(base_url + PAGE + query({**BASE, "devices": "4"}))
        page.wait_for_function("document.querySelector('[data-output=split_time]').textContent.includes('ms')")
        assert _off_screen(page), "the usual layout already fits: this test would prove nothing"
        page.click("#calc-projector")
        settle(page)
        assert page.get_attribute("#calc-projector", "aria-pressed") == "true"
        assert page.evaluate("window.location.hash") == "#projector"
        assert not _off_screen(page), _off_screen(page)
        page.fill('input[name="divisible_ms"]', "1")  # still live in the room's layout
        assert "takes longer" in page.locator("#calc-verdict").inner_text()
        assert read_inputs(page) == {**BASE, "devices": "4", "divisible_ms": "1"}

        again = context.new_page()  # the room's address opens the layout directly
        again.goto(base_url + PAGE + "#projector")
        again.wait_for_function("document.getElementById('calc').classList.contains('calc-projector')")
        settle(again)
        assert not _off_screen(again), _off_screen(again)


def test_overflow_says_why(calculator):
    """A transfer whose V/B overflows: the reasons name the overflow, not K eta <= 1 or the startups."""
    page = calculator({**BASE, **CASES["a transfer overflows to infinity"]})
    shown = read_outputs(page)
    assert shown["communication_time"].startswith("too large"), shown
    assert shown["break_even_divisible"].startswith("too large") and "K·η ≤ 1" not in shown["break_even_divisible"]
    assert shown["min_bandwidth"].startswith("too large") and "startup" not in shown["min_bandwidth"], shown
    assert "too large" in shown["min_efficiency"], shown
    tiny_saving = read_outputs(calculator({**BASE, **CASES["break-even overflows"]}))
    assert tiny_saving["break_even_divisible"].startswith("too large"), tiny_saving  # K eta is just above 1
    assert tiny_saving["min_bandwidth"].startswith("none: the startup cost"), tiny_saving


@pytest.mark.parametrize("devices, words", [("1", "With 1 device nothing is split"), ("2", "With 2 devices")])
def test_verdict_counts_devices_in_words(calculator, devices, words):
    page = calculator({**BASE, "devices": devices})
    verdict = page.locator("#calc-verdict").inner_text()
    assert verdict.startswith(words) and "1 devices" not in verdict, verdict
