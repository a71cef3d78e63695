"""Navigation on every page, at 1280 and 390 px (issue 23, acceptance 1).

The visits are the ``page_reports`` and ``phone_reports`` fixtures of
conftest.py; :mod:`layout_support` says what is measured. On a phone the
visible menu button opens the table of contents in a drawer and Escape closes
it; on a laptop the same button collapses the sidebar and brings it back. The
page shows one search box, and no second, empty header band above the
article's own.
"""

from __future__ import annotations

import pytest
from layout_support import NARROW, WIDE
from site_support import PAGES

pytestmark = pytest.mark.browser

WIDTHS = [WIDE, NARROW]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", PAGES)
def test_one_search_box_and_one_header(reports_by_width, path, width):
    layout = reports_by_width[width][path].layout
    assert len(layout["searchBoxes"]) == 1, f"{path} at {width} px shows {layout['searchBoxes']}"
    assert not layout["headerBand"], f"{path} at {width} px shows the theme's second header band"


@pytest.mark.parametrize("path", PAGES)
def test_menu_button_opens_the_drawer_on_a_phone(phone_reports, path):
    report = phone_reports[path]
    nav = report.navigation
    assert nav.toggles == 1, f"{path}: {nav.toggles} visible menu buttons"
    assert nav.drawer_opened, f"{path}: the menu button did not open the table of contents"
    assert nav.drawer_links >= len(PAGES) - 1, f"{path}: the drawer holds {nav.drawer_links} links"
    assert nav.drawer_closed, f"{path}: Escape did not close the drawer"
    assert not report.navigation_errors, report.navigation_errors


@pytest.mark.parametrize("path", PAGES)
def test_menu_button_collapses_the_sidebar_on_a_laptop(page_reports, path):
    report = page_reports[path]
    nav = report.navigation
    assert nav.toggles == 1, f"{path}: {nav.toggles} visible menu buttons"
    assert nav.sidebar_hidden, f"{path}: the menu button did not collapse the sidebar"
    assert len(nav.search_boxes_collapsed) == 1, f"{path}, sidebar collapsed: {nav.search_boxes_collapsed}"
    assert nav.sidebar_back, f"{path}: a second click did not bring the sidebar back"
    assert not report.navigation_errors, report.navigation_errors
