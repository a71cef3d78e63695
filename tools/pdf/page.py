"""What the printed page looks like: paper size, print styles and the scripts that ready the page.

:mod:`tools.pdf.build` injects these into the single-page build before Chromium
prints it; the HTML book never loads them.

* :data:`PRINT_CSS` (after :func:`page_css`, which adds the ``@page`` rule for
  :data:`PAGE_MM` and :data:`MARGINS_MM`) starts every chapter and page on a
  new sheet and wraps long code lines and outputs instead of letting them run
  off the page;
* :data:`PREPARE_JS` opens folded content and loads every image,
  :data:`PART_HEADINGS_JS` gives each part of the table of contents a heading
  (so the bookmarks read part > chapter > section), :data:`DROP_PRINT_RULES_JS`
  drops a page's own print rules and :data:`OVERFLOW_JS` finds what does not
  fit the page;
* :func:`footer_template` writes :data:`TITLE` and the page number in every footer.
"""

from __future__ import annotations

import html

from tools.site.browser import toc_parts

__all__ = [
    "TITLE",
    "PAGE_MM",
    "MARGINS_MM",
    "PRINT_CSS",
    "PREPARE_JS",
    "PART_HEADINGS_JS",
    "DROP_PRINT_RULES_JS",
    "OVERFLOW_JS",
    "part_openings",
    "printable_width_px",
    "page_css",
    "footer_template",
]

#: In every page footer, beside the page number.
TITLE = "Twice the Devices, Half the Wait?"

#: A4, width and height in millimetres.
PAGE_MM = (210.0, 297.0)

#: Page margins in millimetres; the footer sits in the bottom one.
MARGINS_MM = {"top": 16.0, "right": 15.0, "bottom": 16.0, "left": 15.0}

#: The paper layout, after :func:`page_css`. Injected into the page being printed only.
PRINT_CSS = """
html { font-size: 13px; }
body { background: white !important; }
/* No shadows: Chromium would draw each one as an image (the theme marks some !important). */
html body :is(*, .admonition, div.admonition, details, .sd-card, div.highlight, div.cell_output) {
  box-shadow: none !important; text-shadow: none !important;
}

/* Screen furniture. */
.bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-header-article,
.bd-footer, .bd-footer-article, .bd-footer-content, .prev-next-area, .footer-article-items,
.headerlink, button.copybtn, .toggle-button, .skip-link, #pst-back-to-top,
.search-button__wrapper { display: none !important; }
.bd-container, .bd-container__inner, .bd-main, .bd-content, .bd-article-container, .bd-article {
  max-width: none !important; width: auto !important; padding: 0 !important; margin: 0 !important;
  overflow: visible !important;
  /* a flex item as wide as the page, never as its widest line: what does not fit shows as overflow */
  min-width: 0 !important;
}

/* Cells whose code the HTML book hides (hide-input) show their outputs only. */
details.hide.above-input { display: none !important; }

/* Buttons and links to copy do nothing on paper. */
.calc-form button, .calc-status, .calc-link-row,
.pl-actions, .pl-link-row { display: none !important; }
/* The planner's table prints whole; its widest cells give up some room so that it fits. */
.pl-table td.pl-note-cell { min-width: 6rem !important; }
.pl-mem { min-width: 5rem !important; }

/* Every chapter and page of the table of contents starts a sheet; a part opens with its title. */
#jb-print-docs-body { break-after: page; }
span[id^="document-"] + section { break-before: page; }
.bd-main .bd-content .bd-article h1.pdf-part {
  display: block !important; break-before: page; margin-top: 30vh; font-size: 2.2rem; text-align: center;
}

/* Headings stay with what follows. Chromium titles each bookmark with its heading's text as
   painted: "contain: paint" stops a heading pushed to the next sheet from being painted (and
   titled) twice, and "pre-wrap" keeps the space where a long heading wraps. */
h1, h2, h3, h4, h5, h6 { break-after: avoid; break-inside: avoid; display: flow-root; contain: paint; }
section > :is(h1, h2, h3, h4, h5, h6) { white-space: pre-wrap; }
.admonition-title, p.caption, figcaption { break-after: avoid; }
em.pdf-math { font-family: "DejaVu Serif", serif; }
/* A code cell that fits on a sheet moves there whole, instead of leaving its empty frame behind. */
figure, img, table, mjx-container[display="true"], div.cell_input { break-inside: avoid; }
/* A section's last box keeps no margin below it: on a full sheet that margin alone would spill
   onto a sheet of its own before the next chapter's page break. */
div.admonition:last-child { margin-bottom: 0 !important; }

/* Code and outputs wrap instead of running off the page. */
pre, div.highlight, .output pre {
  white-space: pre-wrap !important; overflow-wrap: anywhere !important;
  overflow: visible !important; max-height: none !important;
}
pre { font-size: 0.85em; line-height: 1.35; }
code, table td, table th { overflow-wrap: break-word; }
/* "anywhere", not "break-word": only it lets a long name in a cell shrink the table's narrowest width. */
table :is(td, th) code, table :is(td, th) code .pre {
  overflow-wrap: anywhere; white-space: normal !important;
}
.cell_output, .output, .highlight { overflow: visible !important; }

/* Wide things fit the width of the page. */
img, svg, figure { max-width: 100% !important; height: auto; }
.pst-scrollable-table-container, .table-wrapper { overflow: visible !important; }
table { max-width: 100% !important; font-size: 0.85em; }
/* The screen's wide tables (_static/fit.css: natural width, a scrolling box, the first column pinned)
   would widen the whole page on paper: here every table takes the page's width and wraps. */
.bd-article table { width: 100% !important; min-width: 0 !important; }
.bd-article table :is(td, th) > :is(p, div) { max-width: none !important; }
.bd-article table tr > :first-child { position: static !important; }
mjx-container[display="true"], .math-wrapper { overflow: visible !important; max-width: 100%; }

/* Links and captions stay readable on paper (the theme's light grey captions are faint in print). */
a { color: #1a4fa0 !important; text-decoration: none; }
figcaption, figcaption p, .caption-text { color: #333 !important; font-weight: 400 !important; }
"""

#: Light mode, folded content opened, headings' maths as text, images loaded now.
#: Returns the addresses of images that did not load and the number of raster images.
PREPARE_JS = """
async () => {
  document.documentElement.dataset.theme = 'light';
  document.documentElement.dataset.mode = 'light';
  for (const item of document.querySelectorAll('.toggle-hidden')) item.classList.remove('toggle-hidden');
  for (const details of document.querySelectorAll('details:not(.hide.above-input)')) details.open = true;
  // A bookmark's title is its heading's text, and the glyphs MathJax draws are not text: in
  // headings, simple formulas become their letters (as MathJax's MathML spells them).
  for (const math of document.querySelectorAll(':is(h1, h2, h3, h4, h5, h6) mjx-container')) {
    const mathml = math.querySelector('mjx-assistive-mml');
    if (!mathml || mathml.querySelector('mfrac, msqrt, mroot, mtable, munderover')) continue;
    const plain = document.createElement('em');
    plain.className = 'pdf-math';
    plain.textContent = mathml.textContent.replace(/\\s+/g, '');
    math.replaceWith(plain);
  }
  const images = Array.from(document.images);
  for (const image of images) image.loading = 'eager';
  await Promise.all(images.map(image => image.complete ? null
      : new Promise(done => { image.onload = image.onerror = done; })));
  return {
    broken: images.filter(image => !image.naturalWidth).map(image => image.src),
    raster: images.filter(image => !/[.]svg([?#]|$)/i.test(image.src)).length,
  };
}
"""

#: Give each part of the table of contents a heading of its own, before its first page. The argument
#: lists ``[caption, first page]`` per part (:func:`part_openings`), from ``_toc.yml`` itself: the
#: theme's print-only contents cannot be used, since pydata-sphinx-theme drops it whole when the first
#: part holds a single page (its ``generate_toc_html`` takes a lone first entry for the page title).
#: Returns the number of part headings made.
PART_HEADINGS_JS = """
(parts) => {
  // one bookmark per part: the heading made here, not the print-only contents' caption
  document.querySelectorAll('#jb-print-toc p.caption').forEach(caption => caption.removeAttribute('role'));
  let made = 0;
  for (const [caption, first] of parts) {
    const anchor = document.getElementById('document-' + first);
    if (!anchor) continue;
    const heading = document.createElement('h1');
    heading.className = 'pdf-part';
    heading.textContent = caption;
    anchor.parentNode.insertBefore(heading, anchor);
    made += 1;
  }
  return made;
}
"""


def part_openings(toc: dict) -> list[list[str]]:
    """``[caption, first page]`` of each part of a parsed ``_toc.yml`` that has a caption and a page.

    >>> part_openings({"root": "intro", "parts": [{"caption": "One", "chapters": [{"file": "a/b"}]}]})
    [['One', 'a/b']]
    """
    return [[caption, pages[0].removesuffix(".html")] for caption, pages in toc_parts(toc) if caption and pages]


#: Delete the ``@media print`` rules of the style sheets named in the argument.
DROP_PRINT_RULES_JS = """
(names) => {
  let dropped = 0;
  for (const sheet of document.styleSheets) {
    const name = (sheet.href || '').split(/[?#]/)[0].split('/').pop();
    if (!names.includes(name)) continue;
    for (let index = sheet.cssRules.length - 1; index >= 0; index--) {
      const media = sheet.cssRules[index].media;
      if (media && /\\bprint\\b/.test(media.mediaText)) { sheet.deleteRule(index); dropped += 1; }
    }
  }
  return dropped;
}
"""

#: With the print layout on a viewport as wide as the printable area: every block that is wider
#: than the page, or that hides part of its content behind a scroll bar or a clip.
OVERFLOW_JS = """
() => {
  const width = document.documentElement.clientWidth;
  const found = [];
  const selector = 'pre, table, img, svg, figure, mjx-container, .cell_output, div.highlight, '
      + '.admonition, .sd-card, .pst-scrollable-table-container, .table-wrapper, p, li, dd';
  for (const element of document.querySelectorAll(selector)) {
    const box = element.getBoundingClientRect();
    if (!box.width || element.closest('details.hide.above-input')) continue;
    const style = getComputedStyle(element);
    const hides = ['hidden', 'auto', 'scroll', 'clip'].includes(style.overflowX);
    const wide = box.right > width + 1;
    const clipped = hides && element.scrollWidth > element.clientWidth + 1;
    if (wide || clipped) {
      const near = element.closest('section[id]');
      found.push(`${element.tagName.toLowerCase()} in #${near ? near.id : '?'}: `
          + `${wide ? 'wider than the page' : 'clipped'} `
          + `(${Math.round(box.right)} px of ${width}): `
          + element.textContent.trim().slice(0, 60));
    }
  }
  return found;
}
"""


def printable_width_px() -> int:
    """Width of the printable area in CSS pixels (96 per inch): A4 less the side margins.

    >>> printable_width_px()
    680
    """
    return round((PAGE_MM[0] - MARGINS_MM["left"] - MARGINS_MM["right"]) / 25.4 * 96)


def page_css() -> str:
    """:data:`PRINT_CSS` with the ``@page`` rule for :data:`PAGE_MM` and :data:`MARGINS_MM`.

    >>> page_css().splitlines()[0]
    '@page { size: 210mm 297mm; margin: 16mm 15mm 16mm 15mm; }'
    """
    margin = " ".join(f"{MARGINS_MM[side]:g}mm" for side in ("top", "right", "bottom", "left"))
    return f"@page {{ size: {PAGE_MM[0]:g}mm {PAGE_MM[1]:g}mm; margin: {margin}; }}\n" + PRINT_CSS


def footer_template(title: str = TITLE) -> str:
    """Chromium's footer: ``title`` on the left, ``page / pages`` on the right.

    >>> footer_template("A & B").split('">', 1)[1]
    '<span>A &amp; B</span><span><span class="pageNumber"></span> / <span class="totalPages"></span></span></div>'
    """
    return (
        '<div style="font-size:8px; width:100%; margin:0 15mm; display:flex; '
        'justify-content:space-between; color:#555; font-family:sans-serif">'
        f"<span>{html.escape(title)}</span>"
        '<span><span class="pageNumber"></span> / <span class="totalPages"></span></span></div>'
    )
