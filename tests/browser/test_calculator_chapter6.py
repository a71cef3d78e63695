"""The calculator's presets on the page: chapter 6's speed-ups, and fields of at most four significant digits.

The Llama-3 70B preset over NVLink is one layer's share of chapter 6's decode
step (``tools/sphinx/calculator_data.py``); the page must show, within 1 %,
the speed-ups the chapter glued (``c06_l70_speedup8``: eight devices over one;
``c06_l70_gain48``: eight over four). ``tests/unit/tools/sphinx/
test_calculator_data.py`` checks the same presets without a browser.
"""

from __future__ import annotations

import re

import nbformat
import pytest
from site_support import ROOT
from test_calculator import calculator, parse_displayed, read_outputs  # noqa: F401 (fixture)

from tools.notebooks.glue import glue_values
from tools.sphinx import calculator_data

pytestmark = pytest.mark.browser

#: How close the page must come to the chapter's glued speed-up (issue 32's acceptance).
REL_TOL = 0.01

#: The typed fields of the model mode, which a preset fills.
FIELDS = [
    "serial_ms",
    "divisible_ms",
    "efficiency",
    "devices",
    "transfers",
    "message_bytes",
    "bandwidth_GBps",
    "l0_us",
    "delta_us",
]


def glued(name: str) -> float:
    notebook = nbformat.read(ROOT / "notebooks" / "06_tensor_parallel_decode.ipynb", as_version=4)
    return float(glue_values(notebook)[name]["text/plain"])


def significant_digits(text: str) -> int:
    """Digits of a field's number that carry information: ``0.5108`` has 4, ``16384`` is a whole number (0)."""
    if text.lower() == "inf" or re.fullmatch(r"\d+", text):
        return 0
    mantissa = re.split(r"[eE]", text)[0].replace(".", "").lstrip("0")
    return len(mantissa)


def speedup_at(page, devices: int) -> float:
    page.fill('input[name="devices"]', str(devices))
    node = page.locator('[data-output="speedup"]')
    shown = parse_displayed(node.inner_text().strip())[0]
    raw = float(node.get_attribute("data-value"))
    assert abs(shown - raw) <= 0.5e-3 * raw, (shown, raw)
    return raw


def test_nvlink_preset_shows_chapter_6s_speedups(calculator):  # noqa: F811
    page = calculator()
    page.select_option("#calc-preset", "llama-nvlink")
    eight, four = speedup_at(page, 8), speedup_at(page, 4)
    assert eight == pytest.approx(glued("c06_l70_speedup8"), rel=REL_TOL)
    assert eight / four == pytest.approx(glued("c06_l70_gain48"), rel=REL_TOL)


@pytest.mark.parametrize("key", list(calculator_data.calculator_data()["presets"]))
def test_preset_fields_show_at_most_four_significant_digits(calculator, key):  # noqa: F811
    page = calculator()
    page.select_option("#calc-preset", key)
    shown = {name: page.locator(f'input[name="{name}"]').input_value() for name in FIELDS}
    assert all(significant_digits(text) <= 4 for text in shown.values()), shown
    assert page.locator("#calc-preset").input_value() == key, "the rounded fields no longer name their preset"
    page.select_option("#calc-preset", "")  # the page still computes with the preset's full numbers
    assert read_outputs(page)


def test_base_case_computes_with_full_numbers(calculator):  # noqa: F811
    """The base case's l0 (12.73 shown) is chapter 2's to the last digit until the reader types over it."""
    page = calculator()
    full = calculator_data.calculator_data()["presets"]["base"]["l0_us"]
    assert page.locator('input[name="l0_us"]').input_value() == f"{float(full):.4g}"
    assert f"l0_us={full}" in page.evaluate("window.location.href")
    page.fill('input[name="l0_us"]', "12.5")
    assert "l0_us=12.5" in page.evaluate("window.location.href")
