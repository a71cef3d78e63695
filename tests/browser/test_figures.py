"""Figures that can be read at 1280 px, and enlarged anywhere (issue 23, acceptance 5).

Legibility is computed, not eyeballed. ``lib.plotting`` draws no text below
``MIN_FONT_PT`` points (``enforce_min_font``), and each stored PNG says the
resolution it was drawn at (its pHYs chunk, read by ``png_facts``). A text of
``MIN_FONT_PT`` points is therefore ``MIN_FONT_PT / 72 * dpi`` pixels tall in
the image, and on the page that times ``displayed width / natural width``,
which the browser reports (the ``page_reports`` visits at 1280 px). A figure
drawn wider than the column is shrunk, and its smallest text with it.

Enlarging is ``_static/figure-zoom.js``: every figure gets an "Enlarge"
button; the image opens at its drawn size in a dialog that Escape closes. On a
phone the same script keeps each figure at least as wide as its smallest text
needs to show at ``MIN_PHONE_TEXT_PX``, in a box that scrolls sideways under a
line that says so (the ``phone_reports`` visits at 390 px).
"""

from __future__ import annotations

import urllib.parse

import pytest
from layout_support import NARROW, WIDE, png_facts
from site_support import PAGES, open_page

from lib.plotting import MIN_FONT_PT
from tools.site.browser import offline_context

pytestmark = pytest.mark.browser

#: Smallest text allowed on screen at 1280 px and at 390 px, CSS pixels.
MIN_TEXT_PX, MIN_PHONE_TEXT_PX = 10, 9

#: A chapter with several figures, for the interactive checks.
CHAPTER = "notebooks/05_collectives.html"


def smallest_text_px(figure: dict, site_dir) -> float:
    """The on-screen size of a figure's smallest text, from its PNG and its displayed width."""
    path = site_dir / urllib.parse.unquote(urllib.parse.urlsplit(figure["src"]).path.lstrip("/"))
    facts = png_facts(path)
    assert "Matplotlib" in facts["text"].get("Software", ""), f"{path.name} was not drawn by matplotlib"
    assert facts["dpi"], f"{path.name} does not say its resolution (no pHYs chunk)"
    assert facts["width"] == figure["natural"], path.name
    return figure["shown"] / facts["width"] * MIN_FONT_PT / 72 * facts["dpi"]


def test_the_book_has_figures(page_reports):
    assert sum(len(report.layout["figures"]) for report in page_reports.values()) >= 20


def png_figures(report) -> list[dict]:
    """The figures of a page report that are PNG images."""
    return [f for f in report.layout["figures"] if f["src"].endswith(".png")]


def too_small(figures: list[dict], site_dir, minimum: float) -> dict[str, float]:
    """``{image file: smallest text, px}`` of the figures whose smallest text shows below ``minimum`` pixels."""
    sizes = {f["src"].rsplit("/", 1)[-1]: round(smallest_text_px(f, site_dir), 1) for f in figures}
    return {name: px for name, px in sizes.items() if px < minimum}


@pytest.mark.parametrize("path", PAGES)
def test_smallest_text_legible_at_1280(page_reports, site_dir, path):
    small = too_small(png_figures(page_reports[path]), site_dir, MIN_TEXT_PX)
    assert not small, (
        f"{path}: figures whose {MIN_FONT_PT} pt text shows below {MIN_TEXT_PX} px "
        f"at {WIDE} px (draw them narrower, or split them): {small}"
    )


@pytest.mark.parametrize("path", PAGES)
def test_smallest_text_legible_at_390_in_a_box_that_scrolls(phone_reports, site_dir, path):
    figures = png_figures(phone_reports[path])
    small = too_small(figures, site_dir, MIN_PHONE_TEXT_PX)
    assert not small, (
        f"{path}: figures whose {MIN_FONT_PT} pt text shows below {MIN_PHONE_TEXT_PX} px at {NARROW} px: {small}"
    )
    scrolled = [f for f in figures if f["wide"]]
    assert all(f["cue"] and f["scrolls"] for f in scrolled), f"{path}: a wide figure without its cue or scroll box"
    assert all(f["shown"] <= f["natural"] for f in figures), path


@pytest.mark.parametrize("path", PAGES)
def test_every_figure_can_be_enlarged(page_reports, path):
    figures = page_reports[path].layout["figures"]
    without = [f["src"].rsplit("/", 1)[-1] for f in figures if not f["zoom"]]
    assert not without, f"{path}: figures without an Enlarge button: {without}"


DIALOG_JS = """() => {
  const dialog = document.querySelector("dialog.zoom-dialog");
  const img = dialog && dialog.querySelector(".zoom-frame img");
  const frame = dialog && dialog.querySelector(".zoom-frame");
  return {open: Boolean(dialog && dialog.open), width: img ? Math.round(img.getBoundingClientRect().width) : 0,
          natural: img ? img.naturalWidth : 0, scrolls: frame ? frame.scrollWidth > frame.clientWidth : false,
          focus: document.activeElement ? document.activeElement.className : ""};
}"""


@pytest.mark.parametrize("width", [WIDE, NARROW])
def test_enlarge_with_the_keyboard_and_close_with_escape(browser, base_url, width):
    context = offline_context(browser, viewport={"width": width, "height": 800})
    try:
        page, visit = open_page(context, base_url + CHAPTER)
        button = page.locator("button.zoom-button").first
        button.focus()
        page.keyboard.press("Enter")
        page.locator("dialog.zoom-dialog .zoom-frame img").evaluate("(img) => img.decode()")
        shown = page.evaluate(DIALOG_JS)
        assert shown["open"], "Enter on the Enlarge button did not open the figure"
        assert shown["width"] == shown["natural"], f"not at its drawn size: {shown}"
        assert shown["scrolls"] == (shown["natural"] > width), shown
        assert "zoom-close" in shown["focus"], "focus did not move into the dialog"
        page.keyboard.press("Escape")
        closed = page.evaluate(DIALOG_JS)
        assert not closed["open"], "Escape did not close the enlarged figure"
        assert "zoom-button" in closed["focus"], "focus did not return to the figure's button"
        assert not visit.page_errors, visit.page_errors
        page.close()
    finally:
        context.close()


def test_clicking_a_figure_enlarges_it(context, base_url):
    page, visit = open_page(context, base_url + CHAPTER)
    try:
        page.locator("img.zoomable").nth(1).click()
        assert page.evaluate(DIALOG_JS)["open"]
        page.locator("dialog.zoom-dialog .zoom-close").click()
        assert not page.evaluate(DIALOG_JS)["open"]
    finally:
        page.close()
