"""What a page's layout and navigation look like in Chromium: measured once per page and width.

:func:`measure` reads the geometry the layout tests check (issue 23,
acceptance 1 and 3), in the page as the reader sees it:

* **tall rows**: table rows taller than :data:`MAX_ROW_PX`;
* **broken names**: layout names (``tp8-pp1-dp1``, ``tp2·pp2·dp2``) whose
  letters land on more than one line;
* **clipped lines**: code and output blocks (``pre``) whose text is wider than
  the box that shows it, so that part of a line is cut off or needs scrolling;
* **stranded punctuation**: a ``).`` after inline maths that starts a new line;
* **search boxes**: visible search fields and buttons in the page's chrome;
* **table boxes**: each table box that scrolls sideways (the book's tables and
  the planner's results), and whether the line above it says so
  (``_static/scroll-cue.js``); **page width**: the document's
  width against the window's;
* **figures**: each visible image's natural and displayed width, whether
  it has its "Enlarge" button (``_static/figure-zoom.js``), and whether it is
  kept wider than the column in a box that scrolls, with its cue above. :func:`png_facts`
  reads the size and resolution a PNG was stored at.

:func:`exercise_navigation` then uses the page as a reader would: on a narrow
screen it opens the table-of-contents drawer with the visible menu button and
closes it with Escape; on a wide one it collapses the sidebar with that button
and brings it back.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The tallest table row allowed at desktop width, in CSS pixels.
MAX_ROW_PX = 160

#: Viewport widths, CSS pixels: a laptop and a phone.
WIDE, NARROW = 1280, 390

#: Below this width the theme shows the sidebar as a drawer (a ``<dialog>``).
DRAWER_BELOW = 992

MEASURE_JS = """(maxRow) => {
  const visible = (el) => el.getClientRects().length > 0
    && el.checkVisibility({opacityProperty: true, visibilityProperty: true});
  const article = document.querySelector("article.bd-article") || document.body;
  const snippet = (text) => text.replace(/\\s+/g, " ").trim().slice(0, 70);

  const tallRows = Array.from(article.querySelectorAll("table tr")).filter(visible)
    .map((tr) => ({height: Math.round(tr.getBoundingClientRect().height), text: snippet(tr.innerText)}))
    .filter((row) => row.height > maxRow);

  const NAME = /\\b(?:adp|tp|pp|dp|ep)\\d+(?:[-·](?:tp|pp|dp|ep)\\d+)+\\b/g;
  const brokenNames = [];
  let namesSeen = 0;
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.parentElement || !visible(node.parentElement)) continue;
    for (const match of node.data.matchAll(NAME)) {
      namesSeen += 1;
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const lines = new Set(Array.from(range.getClientRects()).filter((r) => r.width > 0)
        .map((r) => Math.round(r.top)));
      if (lines.size > 1) brokenNames.push(match[0]);
    }
  }

  const clippedLines = Array.from(article.querySelectorAll("pre")).filter(visible)
    .filter((pre) => pre.scrollWidth > pre.clientWidth + 1)
    .map((pre) => ({over: pre.scrollWidth - pre.clientWidth,
                    line: pre.innerText.split("\\n").reduce((a, b) => (b.length > a.length ? b : a), "").slice(0, 90)}));

  const searchBoxes = Array.from(document.querySelectorAll(".search-button__button, form.bd-search"))
    .filter((el) => visible(el) && el.getBoundingClientRect().width > 0)
    .map((el) => el.className);

  // Punctuation that follows inline maths but starts the next line.
  const strandedPunctuation = [];
  for (const math of article.querySelectorAll("span.math")) {
    const next = math.nextSibling;
    if (!visible(math) || !next || next.nodeType !== Node.TEXT_NODE || !/^[)\\]},.;:!?]/.test(next.data)) continue;
    const range = document.createRange();
    range.setStart(next, 0);
    range.setEnd(next, 1);
    const mark = range.getBoundingClientRect();
    const boxes = Array.from(math.getClientRects());
    const last = boxes[boxes.length - 1];
    if (mark.width > 0 && last && mark.top >= last.bottom - 1) strandedPunctuation.push(snippet(math.textContent) + next.data[0]);
  }

  const figures = Array.from(article.querySelectorAll("img")).filter(visible).map((img) => {
    const box = img.closest(".zoom-box");
    const wide = Boolean(box && box.classList.contains("zoom-wide"));
    const cue = box && box.previousElementSibling;
    return {src: img.currentSrc || img.src, natural: img.naturalWidth,
            shown: img.getBoundingClientRect().width, zoom: Boolean(box && box.querySelector("button.zoom-button")),
            wide, cue: wide && Boolean(cue && cue.classList.contains("scroll-cue") && cue.getClientRects().length),
            scrolls: wide && box.scrollWidth > box.clientWidth};
  });

  // Table boxes that scroll sideways, whether the line above says so (scroll-cue.js), and the pinned first
  // cells (fit.css) that scrolled cells would show through: a background whose alpha is below 1.
  const alpha = (colour) => { const p = colour.slice(colour.indexOf("(") + 1, -1).split(",");
    return p.length === 4 ? Number(p[3]) : 1; };  // computed colours read rgb(r, g, b) or rgba(r, g, b, a)
  const tableBoxes = Array.from(article.querySelectorAll(".pst-scrollable-table-container, .pl-scroll")).filter(visible)
    .filter((box) => box.scrollWidth > box.clientWidth + 1).map((box) => {
      const cue = box.previousElementSibling;
      const pinned = Array.from(box.querySelectorAll("tr > :first-child"))
        .filter((cell) => getComputedStyle(cell).position === "sticky");
      return {over: box.scrollWidth - box.clientWidth,
              cue: Boolean(cue && cue.classList.contains("scroll-cue") && cue.getClientRects().length),
              pinned: pinned.length,
              seeThrough: pinned.filter((cell) => alpha(getComputedStyle(cell).backgroundColor) < 1)
                .map((cell) => cell.textContent.trim().slice(0, 30))};
    });
  const pageWidth = {scroll: document.documentElement.scrollWidth, viewport: document.documentElement.clientWidth};

  const header = document.querySelector("#pst-header");
  return {tableBoxes, pageWidth, tallRows, brokenNames, namesSeen, clippedLines, searchBoxes, figures, strandedPunctuation,
          headerBand: header !== null && visible(header) && header.getBoundingClientRect().height > 0,
          tables: article.querySelectorAll("table").length, codeBlocks: article.querySelectorAll("pre").length};
}"""

#: The page's visible sidebar (or drawer) menu buttons.
TOGGLES_JS = """() => Array.from(document.querySelectorAll(".primary-toggle"))
  .filter((b) => b.getClientRects().length > 0 && b.getBoundingClientRect().width > 0).length"""

DRAWER_JS = """() => {
  const dialog = document.getElementById("pst-primary-sidebar-modal");
  const box = dialog ? dialog.getBoundingClientRect() : {width: 0};
  return {open: Boolean(dialog && dialog.open), width: Math.round(box.width),
          links: dialog ? dialog.querySelectorAll("nav.bd-docs-nav a").length : 0};
}"""

SIDEBAR_JS = """() => {
  const sidebar = document.getElementById("pst-primary-sidebar");
  const box = sidebar.getBoundingClientRect();
  const article = document.querySelector(".bd-article-container").getBoundingClientRect();
  return {shown: sidebar.checkVisibility({visibilityProperty: true}) && box.right > 0 && box.width > 0,
          articleLeft: Math.round(article.left)};
}"""


def png_facts(path: str | Path) -> dict:
    """Width and height (pixels), resolution (``dpi``, None without a pHYs chunk) and text chunks of a PNG.

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import io, matplotlib.pyplot as plt, tempfile
    >>> fig = plt.figure(figsize=(2, 1), dpi=110)
    >>> with tempfile.NamedTemporaryFile(suffix=".png") as file:
    ...     fig.savefig(file.name)
    ...     facts = png_facts(file.name)
    >>> facts["width"], facts["height"], round(facts["dpi"]), facts["text"]["Software"].startswith("Matplotlib")
    (220, 110, 110, True)
    >>> plt.close(fig)
    """
    data = Path(path).read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG file")
    facts: dict = {"dpi": None, "text": {}}
    at = 8
    while at + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[at : at + 8])
        body = data[at + 8 : at + 8 + length]
        if kind == b"IHDR":
            facts["width"], facts["height"] = struct.unpack(">II", body[:8])
        elif kind == b"pHYs" and body[8] == 1:  # unit 1: pixels per metre
            facts["dpi"] = struct.unpack(">I", body[:4])[0] * 0.0254
        elif kind == b"tEXt":
            key, _, value = body.partition(b"\0")
            facts["text"][key.decode("latin-1")] = value.decode("latin-1")
        at += 12 + length
    return facts


@dataclass
class Navigation:
    """What happened when the visible menu button was used (see :func:`exercise_navigation`)."""

    toggles: int = 0
    drawer_opened: bool = False
    drawer_links: int = 0
    drawer_closed: bool = False
    sidebar_hidden: bool = False
    sidebar_back: bool = False
    search_boxes_collapsed: list[str] = field(default_factory=list)


def measure(page: Any, max_row: int = MAX_ROW_PX) -> dict:
    """The facts of :data:`MEASURE_JS` for the page as it is now."""
    return page.evaluate(MEASURE_JS, max_row)


def settle(page: Any) -> None:
    """Let the page lay out and its CSS transitions end (the sidebar's: 0.2 s in the theme): polled, not timed."""
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    page.wait_for_function("""() => !document.getAnimations().some((a) => a.playState === "running")""", timeout=10_000)


def exercise_navigation(page: Any, width: int) -> Navigation:
    """Use the visible menu button as a reader would, at viewport ``width``; report what it did."""
    nav = Navigation(toggles=page.evaluate(TOGGLES_JS))
    button = page.locator(".primary-toggle:visible").first
    if nav.toggles == 0:
        return nav
    if width < DRAWER_BELOW:
        button.click()
        settle(page)
        drawer = page.evaluate(DRAWER_JS)
        nav.drawer_opened = drawer["open"] and drawer["width"] > 0
        nav.drawer_links = drawer["links"]
        page.keyboard.press("Escape")
        settle(page)
        nav.drawer_closed = not page.evaluate(DRAWER_JS)["open"]
    else:
        before = page.evaluate(SIDEBAR_JS)
        button.click()
        settle(page)
        after = page.evaluate(SIDEBAR_JS)
        nav.sidebar_hidden = before["shown"] and not after["shown"] and after["articleLeft"] < before["articleLeft"]
        nav.search_boxes_collapsed = measure(page)["searchBoxes"]
        button.click()
        settle(page)
        nav.sidebar_back = page.evaluate(SIDEBAR_JS) == before
    return nav
