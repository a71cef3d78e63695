"""Print the book to one PDF with the system Chromium: ``make pdf``.

Usage: ``python -m tools.pdf`` (``make pdf``) writes
``_build/pdf/twice-the-devices.pdf``. It runs Jupyter Book's single-page build
first (:data:`SINGLE_PAGE_BUILD`, into ``_build/singlehtml``); after ``make
book`` that build reuses the parsed, executed notebooks in
``_build/.doctrees``, so only the writing is done again. Options:

* ``--no-build``: print the single-page build that is there (to try print styles);
* ``--skip-without-chromium``: where Chromium is missing and ``$CI`` is unset,
  say so and stop without error (``make test`` on a laptop without Chromium:
  the PDF tests then skip, as the browser tests do). In CI it is an error.

Nothing is downloaded: the page is served on 127.0.0.1 to the system Chromium
(:mod:`tools.browser`), MathJax comes from the book's own ``_static`` folder,
and any request to another host is refused (and recorded).

Before printing, the page is made ready for paper:

* MathJax has typeset every formula and every image has loaded;
* the single page loads the scripts and styles that the HTML book loads on
  their own pages only (:data:`tools.html_tweaks.PAGE_ONLY`: the calculator
  shows the base case worked out), less their print rules
  (:func:`page_only_styles`);
* solutions, folded into dropdowns in the HTML book, are opened; the code of
  ``hide-input`` cells (plotting recipes the HTML book hides too) is left out,
  their outputs stay; sidebars, navigation and buttons are hidden;
* each part of the table of contents gets a heading of its own
  (:data:`PART_HEADINGS_JS`), so the bookmarks read part > chapter > section;
* :data:`PRINT_CSS` starts every chapter and page on a new sheet and wraps long
  code lines and outputs instead of letting them run off the page.

This stylesheet is injected into the page being printed; the HTML book never
loads it. Chromium then writes an A4 PDF with a clickable outline (bookmarks
from the headings), tagged for assistive technology, with the title and the
page number in every footer. Chromium builds the outline from the tags, and
writes the tags as plain objects, about 60 % of the file; ``qpdf`` (Debian
package ``qpdf``) packs them into compressed object streams
(:func:`compress`), which takes the file from about 13 MB to 5 MB. Without
``qpdf`` the PDF is kept as Chromium wrote it, except in CI, where it is an
error. A JSON report beside the PDF (:func:`report_path`) records what the
tests check but cannot see in the PDF: images that did not load, content
clipped or wider than the page, requests to other hosts.

>>> report_path(Path("_build/pdf/book.pdf"))
PosixPath('_build/pdf/book.json')
>>> printable_width_px()
680
"""

from __future__ import annotations

import html
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tools.browser import (
    is_external, launch, missing_chromium, offline_context, serve, toc_pages, wait_for_mathjax,
)

__all__ = [
    "SITE", "PDF", "SINGLE_PAGE_BUILD", "TITLE", "PAGE_MM", "MARGINS_MM", "PRINT_CSS", "PREPARE_JS",
    "PART_HEADINGS_JS",
    "DROP_PRINT_RULES_JS", "OVERFLOW_JS", "printable_width_px", "page_css", "report_path",
    "page_only_styles", "footer_template", "missing_qpdf", "compress", "missing_site", "print_pdf", "main",
]

#: The single-page build (``jupyter-book build . --builder singlehtml``).
SITE = Path("_build/singlehtml")

#: Where ``make pdf`` writes the book.
PDF = Path("_build/pdf/twice-the-devices.pdf")

#: The single-page build, with the flags of ``make book`` (``--all`` aside, so that it
#: reuses what ``make book`` read and executed; the same configuration, or everything is
#: read and executed again).
SINGLE_PAGE_BUILD = ["jupyter-book", "build", ".", "-W", "-n", "--keep-going", "--builder", "singlehtml"]

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

#: Give each part of the table of contents a heading of its own, before its first page.
#: The print-only contents at the top of the page list each part's caption, then its pages.
#: Returns the number of part headings made.
PART_HEADINGS_JS = """
() => {
  let made = 0;
  for (const caption of document.querySelectorAll('#jb-print-toc nav p.caption')) {
    let list = caption.nextElementSibling;
    while (list && list.tagName !== 'UL') list = list.nextElementSibling;
    const first = list && list.querySelector('a[href^="#document-"]');
    const anchor = first && document.getElementById(decodeURIComponent(first.getAttribute('href').slice(1)));
    if (!anchor) continue;
    caption.removeAttribute('role');  // one bookmark per part: the heading below, not this caption
    const heading = document.createElement('h1');
    heading.className = 'pdf-part';
    heading.textContent = caption.textContent.trim();
    anchor.parentNode.insertBefore(heading, anchor);
    made += 1;
  }
  return made;
}
"""

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
    """Width of the printable area in CSS pixels (96 per inch): A4 less the side margins."""
    return round((PAGE_MM[0] - MARGINS_MM["left"] - MARGINS_MM["right"]) / 25.4 * 96)


def page_css() -> str:
    """:data:`PRINT_CSS` with the ``@page`` rule for :data:`PAGE_MM` and :data:`MARGINS_MM`.

    >>> page_css().splitlines()[0]
    '@page { size: 210mm 297mm; margin: 16mm 15mm 16mm 15mm; }'
    """
    margin = " ".join(f"{MARGINS_MM[side]:g}mm" for side in ("top", "right", "bottom", "left"))
    return f"@page {{ size: {PAGE_MM[0]:g}mm {PAGE_MM[1]:g}mm; margin: {margin}; }}\n" + PRINT_CSS


def report_path(pdf: Path) -> Path:
    """The JSON report written beside ``pdf``."""
    return Path(pdf).with_suffix(".json")


def page_only_styles(owners: dict[str, str] | None = None) -> list[str]:
    """Style sheets the HTML book loads on one page only (:data:`tools.html_tweaks.PAGE_ONLY`).

    The single-page build loads them all; their print rules are dropped
    (:data:`DROP_PRINT_RULES_JS`), since once every page shares one document a
    page's own paper layout (the cheat sheet's one-sheet rules) would apply to
    the whole book.

    >>> page_only_styles({"calc.js": "book/calc", "calc.css": "book/calc", "sheet.css": "book/sheet"})
    ['calc.css', 'sheet.css']
    """
    if owners is None:
        from tools.html_tweaks import PAGE_ONLY as owners
    return [name for name in owners if name.endswith(".css")]


def footer_template(title: str = TITLE) -> str:
    """Chromium's footer: ``title`` on the left, ``page / pages`` on the right.

    >>> footer_template("A & B").split('">', 1)[1]
    '<span>A &amp; B</span><span><span class="pageNumber"></span> / <span class="totalPages"></span></span></div>'
    """
    return ('<div style="font-size:8px; width:100%; margin:0 15mm; display:flex; '
            'justify-content:space-between; color:#555; font-family:sans-serif">'
            f'<span>{html.escape(title)}</span>'
            '<span><span class="pageNumber"></span> / <span class="totalPages"></span></span></div>')


def missing_qpdf() -> str | None:
    """What to do when ``qpdf`` is not on the PATH; None when it is."""
    if shutil.which("qpdf"):
        return None
    return "qpdf not found: install it with `apt-get install -y qpdf`."


def compress(source: Path, target: Path) -> None:
    """Write ``source`` to ``target`` with its objects packed in compressed streams (``qpdf``).

    Raises ``RuntimeError`` with qpdf's message when it fails (its exit code 3,
    warnings only, counts as success).
    """
    done = subprocess.run(["qpdf", "--object-streams=generate", "--recompress-flate",
                           "--compression-level=9", str(source), str(target)],
                          capture_output=True, text=True)
    if done.returncode not in (0, 3):
        raise RuntimeError(f"qpdf failed on {source}: {done.stderr.strip()}")


def missing_site(site: str | Path, page: str) -> str | None:
    """What to do when the single-page build is missing; None when it is there.

    >>> missing_site("/nowhere", "book/intro.html")
    'No single-page build at /nowhere/book/intro.html: run `make pdf`.'
    """
    if (Path(site) / page).is_file():
        return None
    return f"No single-page build at {Path(site) / page}: run `make pdf`."


def print_pdf(site: Path = SITE, target: Path = PDF, toc: Path = Path("_toc.yml"),
              executable: str | None = None) -> dict[str, Any]:
    """Print the single-page build under ``site`` to ``target``; write and return the report.

    The report (:func:`report_path`) holds ``toc_pages`` (the pages of the
    table of contents, in order), ``parts`` (part headings made),
    ``raster_images`` (images on the page), ``overflow`` (blocks wider than
    the page or clipped; empty when all is well), ``offsite_requests``
    (refused; empty when all is well), ``compressed`` (whether ``qpdf`` packed
    the file, :func:`compress`), ``chromium`` and ``seconds``. An older PDF and
    report are removed first, so a failed run leaves neither.

    Raises ``FileNotFoundError`` when the build or Chromium is missing, or
    ``qpdf`` in CI, and ``RuntimeError`` when an image does not load.
    """
    from playwright.sync_api import sync_playwright

    start = time.perf_counter()
    site, target = Path(site), Path(target)
    pages = toc_pages(toc)
    qpdf = missing_qpdf()
    for problem in (missing_site(site, pages[0]), missing_chromium(executable),
                    qpdf if os.environ.get("CI") else None):
        if problem:
            raise FileNotFoundError(problem)
    # The single-page build writes the book to the root document's path (book/intro.html)
    # but writes its links as if the page sat at the top of the site: serve it from there.
    body = (site / pages[0]).read_bytes()
    target.parent.mkdir(parents=True, exist_ok=True)
    for old in (target, report_path(target)):
        old.unlink(missing_ok=True)
    printed = target.with_name(target.stem + ".chromium.pdf")
    with serve(site) as base, sync_playwright() as playwright:
        browser = launch(playwright, executable)
        try:
            context = offline_context(browser, color_scheme="light",
                                      viewport={"width": printable_width_px(), "height": 1000})
            page = context.new_page()
            page.route(base + "book.html", lambda route: route.fulfill(
                status=200, body=body, content_type="text/html; charset=utf-8"))
            page.goto(base + "book.html", wait_until="load", timeout=180_000)
            wait_for_mathjax(page)
            page.evaluate(DROP_PRINT_RULES_JS, page_only_styles())
            images = page.evaluate(PREPARE_JS)
            if images["broken"]:
                raise RuntimeError(f"{len(images['broken'])} images did not load, e.g. {images['broken'][0]}")
            parts = page.evaluate(PART_HEADINGS_JS)
            page.add_style_tag(content=page_css())
            page.emulate_media(media="print")
            overflow = page.evaluate(OVERFLOW_JS)
            page.pdf(path=str(printed), prefer_css_page_size=True, print_background=True,
                     outline=True, tagged=True, display_header_footer=True,
                     header_template="<span></span>", footer_template=footer_template())
            offsite = [url for url in context.requests if is_external(url)]
            context.close()
            chromium = browser.version
        finally:
            browser.close()
    if qpdf:
        printed.replace(target)
    else:
        compress(printed, target)
        printed.unlink()
    report = {
        "pdf": target.name, "compressed": not qpdf, "toc_pages": pages, "parts": parts,
        "raster_images": images["raster"], "overflow": overflow, "offsite_requests": offsite,
        "chromium": chromium, "seconds": round(time.perf_counter() - start, 1),
    }
    report_path(target).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return report


def _jupyter_book() -> str:
    """The ``jupyter-book`` beside this Python (the virtual environment's), else the one on PATH."""
    beside = Path(sys.executable).with_name("jupyter-book")
    return str(beside) if beside.is_file() else "jupyter-book"


def main(argv: list[str] | None = None) -> Path | None:
    """Command line: ``python -m tools.pdf [--no-build] [--skip-without-chromium]``."""
    argv = sys.argv[1:] if argv is None else argv
    options = {"--no-build", "--skip-without-chromium"}
    if set(argv) - options:
        raise SystemExit("usage: python -m tools.pdf [--no-build] [--skip-without-chromium]")
    problem = missing_chromium()
    if problem and "--skip-without-chromium" in argv and not os.environ.get("CI"):
        for old in (PDF, report_path(PDF)):  # the tests would check a PDF of older pages
            old.unlink(missing_ok=True)
        print(f"make pdf: skipped. {problem} The PDF tests will skip.")
        return None
    if problem:
        raise SystemExit(problem)
    if "--no-build" not in argv:
        command = [_jupyter_book(), *SINGLE_PAGE_BUILD[1:]]
        print("$ " + " ".join(SINGLE_PAGE_BUILD), flush=True)
        if subprocess.run(command).returncode:
            raise SystemExit("the single-page build failed (see above)")
    try:
        report = print_pdf(SITE, PDF)
    except (FileNotFoundError, RuntimeError) as error:
        raise SystemExit(str(error)) from None
    print(f"wrote {PDF} ({PDF.stat().st_size / 1e6:.1f} MB; {len(report['toc_pages'])} pages "
          f"of the table of contents, {report['parts']} parts) in {report['seconds']:.0f} s")
    if not report["compressed"]:
        print(f"  not compressed: {missing_qpdf()}")
    for problem in report["overflow"][:10]:
        print(f"  does not fit the page: {problem}")
    if report["offsite_requests"]:
        print(f"  refused {len(report['offsite_requests'])} requests to other hosts, "
              f"e.g. {report['offsite_requests'][0]}")
    return PDF


if __name__ == "__main__":
    main()
