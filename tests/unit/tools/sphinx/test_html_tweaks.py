"""Tests for tools.sphinx.html_tweaks: which assets a page keeps, ARIA fixes."""

from __future__ import annotations

import re
from pathlib import Path

from tools.sphinx import html_tweaks


def test_calculator_assets_stay_on_their_page():
    for name in ("calculator.js", "calculator.css"):
        assert html_tweaks.keep(f"_static/{name}?v=1", "book/calculator")
        assert not html_tweaks.keep(f"_static/{name}?v=1", "notebooks/03_break_even")
    assert html_tweaks.keep("_static/doctools.js", "notebooks/03_break_even")


def test_the_shared_scenario_link_loads_on_both_tools_and_nowhere_else():
    for page in ("book/calculator", "book/planner"):
        assert html_tweaks.keep("_static/scenario-link.js?v=1", page)
    assert not html_tweaks.keep("_static/scenario-link.js?v=1", "notebooks/03_break_even")


def test_bibliography_entries_become_list_items():
    body = '<div role="list" class="citation-list"><div class="citation" role="doc-biblioentry">A</div></div>'
    fixed = html_tweaks.fix_roles(body)
    assert 'role="doc-biblioentry"' not in fixed
    assert fixed.count('role="listitem"') == 1


def test_figure_zoom_takes_lib_plottings_smallest_text():
    """figure-zoom.js keeps phone figures at the width where lib.plotting's smallest text is legible."""
    from lib import plotting

    script = (Path(__file__).resolve().parents[4] / "_static" / "figure-zoom.js").read_text(encoding="utf-8")
    found = dict(re.findall(r"\b(MIN_FONT_PT|DPI|LEGIBLE_PX) = (\d+(?:\.\d+)?)", script))
    assert float(found["MIN_FONT_PT"]) == plotting.MIN_FONT_PT and float(found["DPI"]) == plotting.DPI
    assert float(found["LEGIBLE_PX"]) >= 9
