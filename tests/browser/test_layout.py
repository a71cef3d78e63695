"""Tables, layout names and code that fit, on every page at 1280 and 390 px (issue 23, acceptance 3).

The visits are the ``page_reports`` and ``phone_reports`` fixtures of
conftest.py; :mod:`layout_support` says what is measured. The styles under
test are ``_static/fit.css``, ``_static/layout-names.js`` and
``_static/scroll-cue.js``. The last test
shows the measurements on a page built to fail them, so that a pass means
something.
"""

from __future__ import annotations

import pytest
from layout_support import MAX_ROW_PX, NARROW, WIDE, measure
from site_support import PAGES

pytestmark = pytest.mark.browser

WIDTHS = [WIDE, NARROW]


@pytest.mark.parametrize("path", PAGES)
def test_no_table_row_taller_than_the_limit_on_a_laptop(page_reports, path):
    rows = page_reports[path].layout["tallRows"]
    assert not rows, f"{path} at {WIDE} px: rows taller than {MAX_ROW_PX} px: {rows}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", PAGES)
def test_no_layout_name_broken_across_lines(reports_by_width, path, width):
    broken = reports_by_width[width][path].layout["brokenNames"]
    assert not broken, f"{path} at {width} px: layout names split over two lines: {broken}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", PAGES)
def test_no_code_or_output_line_clipped(reports_by_width, path, width):
    clipped = reports_by_width[width][path].layout["clippedLines"]
    assert not clipped, f"{path} at {width} px: lines wider than their box: {clipped}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", PAGES)
def test_no_line_starts_with_punctuation_after_maths(reports_by_width, path, width):
    stranded = reports_by_width[width][path].layout["strandedPunctuation"]
    assert not stranded, f"{path} at {width} px: punctuation pushed to the next line after maths: {stranded}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", PAGES)
def test_no_page_scrolls_sideways(reports_by_width, path, width):
    measured = reports_by_width[width][path].layout["pageWidth"]
    assert measured["scroll"] <= measured["viewport"], f"{path} at {width} px: the page scrolls sideways: {measured}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", PAGES)
def test_a_table_wider_than_the_column_says_it_scrolls(reports_by_width, path, width):
    boxes = reports_by_width[width][path].layout["tableBoxes"]
    assert all(box["cue"] for box in boxes), f"{path} at {width} px: table boxes that scroll without a cue: {boxes}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", PAGES)
def test_a_pinned_first_column_hides_the_cells_scrolled_beneath(reports_by_width, path, width):
    boxes = reports_by_width[width][path].layout["tableBoxes"]
    clear = [box["seeThrough"] for box in boxes if box["seeThrough"]]
    assert not clear, f"{path} at {width} px: pinned cells with a see-through background: {clear}"


@pytest.mark.parametrize("width", WIDTHS)
def test_the_participants_agenda_fits_its_column_without_scrolling(browser, base_url, width):
    """book/agenda.md's timetables (tools/sphinx/workshop_pages.py, three columns) are no wider than the text."""
    from tools.site.browser import offline_context

    context = offline_context(browser, viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        page.goto(base_url + "book/agenda.html")
        widths = page.evaluate("""() => Array.from(document.querySelectorAll(".bd-article table")).map(
            (table) => [table.scrollWidth, table.closest(".bd-article").querySelector("section").clientWidth])""")
    finally:
        context.close()
    assert len(widths) == 2, widths
    assert all(table <= column + 1 for table, column in widths), f"at {width} px: (table, column) {widths}"


def test_the_pages_have_what_is_measured(page_reports):
    # Guards the tests above against passing because they look at nothing.
    layouts = [report.layout for report in page_reports.values()]
    assert sum(layout["tables"] for layout in layouts) >= 10
    assert sum(layout["codeBlocks"] for layout in layouts) >= 100
    assert sum(layout["namesSeen"] for layout in layouts) >= 10
    assert sum(len(layout["tableBoxes"]) for layout in layouts) >= 5
    assert sum(box["pinned"] for layout in layouts for box in layout["tableBoxes"]) >= 10


#: Everything the tests above look for, wrong: a squeezed table row, a layout name in a narrow
#: box, a code line wider than its column, two search buttons, a table box that scrolls without a
#: cue (its pinned first cell see-through), and a word wider than the window.
BAD_ARTICLE = (
    """<div class="pst-scrollable-table-container"><table style="width: 1500px"><tr>
<td style="position: sticky; left: 0">a</td><td>b</td><td>c</td><td>d</td></tr></table></div><p>"""
    + "0123456789abcdef" * 100
    + """</p><table><tr><td>tp1-pp1-dp8</td><td>a</td><td>b</td><td>c</td>
<td>weights alone need 141.1 GB per device, more than the 77.3 GB usable</td></tr></table>
<p style="width: 60px">see tp1-pp1-dp8</p>
<p style="width: 60px">see adp2-ep2-pp4-dp2</p>
<pre>print("a line far longer than the two hundred pixels of this column, cut off")</pre>
<p>at <span class="math"><span style="display: inline-block; width: 195px">K</span></span>). Then</p>
<button class="search-button__button">Search</button><button class="search-button__button">Search</button>"""
)


def test_measurements_catch_a_bad_page(context):
    page = context.new_page()
    try:
        page.set_content(f'<article class="bd-article" style="width: 200px">{BAD_ARTICLE}</article>')
        found = measure(page, max_row=40)
    finally:
        page.close()
    assert found["tallRows"] and found["tallRows"][0]["height"] > 40, found
    assert found["brokenNames"] == ["tp1-pp1-dp8", "tp1-pp1-dp8", "adp2-ep2-pp4-dp2"], found
    assert found["clippedLines"] and found["clippedLines"][0]["line"].startswith('print("a line'), found
    assert len(found["searchBoxes"]) == 2, found
    assert found["strandedPunctuation"] == ["K)"], found
    over = found["tableBoxes"][0]["over"]
    assert found["tableBoxes"] == [{"over": over, "cue": False, "pinned": 1, "seeThrough": ["a"]}], found
    assert found["pageWidth"]["scroll"] > found["pageWidth"]["viewport"], found


def test_the_books_styles_mend_the_same_content(context, base_url):
    """The bad article inside a page of the book: fit.css and layout-names.js leave nothing to report."""
    page = context.new_page()
    try:
        page.goto(base_url + "book/intro.html")
        page.evaluate(
            """(html) => new Promise((done) => {
            document.querySelector("article.bd-article").innerHTML = html;
            window.dispatchEvent(new Event("resize"));
            requestAnimationFrame(() => requestAnimationFrame(done));
        })""",
            BAD_ARTICLE,
        )
        found = measure(page)
    finally:
        page.close()
    assert found["namesSeen"] == 3 and not found["brokenNames"], found
    assert not found["clippedLines"], found
    assert not found["tallRows"], found
    assert found["tableBoxes"] and all(box["cue"] for box in found["tableBoxes"]), found
    assert all(box["pinned"] and not box["seeThrough"] for box in found["tableBoxes"]), found
    assert found["pageWidth"]["scroll"] <= found["pageWidth"]["viewport"], found
