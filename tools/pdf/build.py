"""Print the book to one PDF with the system Chromium: ``make pdf``.

Usage: ``python -m tools.pdf`` (``make pdf``) writes
``_build/pdf/twice-the-devices.pdf``. It runs Jupyter Book's single-page build
first (:data:`SINGLE_PAGE_BUILD`, into ``_build/singlehtml``); after ``make
book`` that build reuses the parsed, executed notebooks in
``_build/.doctrees``, so only the writing is done again. Options:

* ``--no-build``: print the single-page build that is there (to try print styles);
* ``--config PATH``: build with that Jupyter Book configuration instead of
  ``_config.yml`` (``make test`` passes the stored-outputs copy of
  :mod:`tools.notebooks.stored_config`, as for its HTML build);
* ``--skip-without-chromium``: where Chromium is missing and ``$CI`` is unset,
  say so and stop without error (``make test`` on a laptop without Chromium:
  the PDF tests then skip, as the browser tests do). In CI it is an error.

Nothing is downloaded: the page is served on 127.0.0.1 to the system Chromium
(:mod:`tools.site.browser`), MathJax comes from the book's own ``_static`` folder,
and any request to another host is refused (and recorded).

Before printing, the page is made ready for paper:

* MathJax has typeset every formula and every image has loaded;
* the single page loads the scripts and styles that the HTML book loads on
  their own pages only (:data:`tools.sphinx.html_tweaks.PAGE_ONLY`: the calculator
  shows the base case worked out), less their print rules
  (:func:`page_only_styles`);
* solutions, folded into dropdowns in the HTML book, are opened; the code of
  ``hide-input`` cells (plotting recipes the HTML book hides too) is left out,
  their outputs stay; sidebars, navigation and buttons are hidden;
* each part of the table of contents gets a heading of its own
  (:data:`tools.pdf.page.PART_HEADINGS_JS`), so the bookmarks read part >
  chapter > section;
* :data:`tools.pdf.page.PRINT_CSS` starts every chapter and page on a new
  sheet and wraps long code lines and outputs instead of letting them run off
  the page.

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
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from tools.pdf.page import (
    DROP_PRINT_RULES_JS,
    OVERFLOW_JS,
    PART_HEADINGS_JS,
    PREPARE_JS,
    footer_template,
    page_css,
    part_openings,
    printable_width_px,
)
from tools.prerequisites import beside_python
from tools.site.browser import (
    is_external,
    launch,
    missing_book,
    missing_chromium,
    offline_context,
    serve,
    toc_pages_from,
    wait_for_mathjax,
)

__all__ = [
    "SITE",
    "PDF",
    "SINGLE_PAGE_BUILD",
    "report_path",
    "page_only_styles",
    "missing_qpdf",
    "compress",
    "print_pdf",
    "main",
]

#: The single-page build (``jupyter-book build . --builder singlehtml``).
SITE = Path("_build/singlehtml")

#: Where ``make pdf`` writes the book.
PDF = Path("_build/pdf/twice-the-devices.pdf")

#: The single-page build, with the flags of ``make book`` (``--all`` aside, so that it
#: reuses what ``make book`` read and executed; the same configuration, or everything is
#: read and executed again).
SINGLE_PAGE_BUILD = ["jupyter-book", "build", ".", "-W", "-n", "--keep-going", "--builder", "singlehtml"]


def report_path(pdf: Path) -> Path:
    """The JSON report written beside ``pdf``."""
    return Path(pdf).with_suffix(".json")


def page_only_styles(owners: dict[str, tuple[str, ...]] | None = None) -> list[str]:
    """Style sheets the HTML book loads on its own pages only (:data:`tools.sphinx.html_tweaks.PAGE_ONLY`).

    The single-page build loads them all; their print rules are dropped
    (:data:`tools.pdf.page.DROP_PRINT_RULES_JS`), since once every page shares one document a
    page's own paper layout (the cheat sheet's one-sheet rules) would apply to
    the whole book.

    >>> page_only_styles({"calc.js": ("book/calc",), "calc.css": ("book/calc",), "sheet.css": ("book/sheet",)})
    ['calc.css', 'sheet.css']
    """
    if owners is None:
        from tools.sphinx.html_tweaks import PAGE_ONLY as owners
    return [name for name in owners if name.endswith(".css")]


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
    done = subprocess.run(
        ["qpdf", "--object-streams=generate", "--recompress-flate", "--compression-level=9", str(source), str(target)],
        capture_output=True,
        text=True,
    )
    if done.returncode not in (0, 3):
        raise RuntimeError(f"qpdf failed on {source}: {done.stderr.strip()}")


def print_pdf(
    site: Path = SITE, target: Path = PDF, toc: Path = Path("_toc.yml"), executable: str | None = None
) -> dict[str, Any]:
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
    parsed = yaml.safe_load(Path(toc).read_text("utf-8"))
    pages = toc_pages_from(parsed)
    qpdf = missing_qpdf()
    for problem in (
        missing_book(site, make="make pdf", page=pages[0]),
        missing_chromium(executable),
        qpdf if os.environ.get("CI") else None,
    ):
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
            context = offline_context(
                browser, color_scheme="light", viewport={"width": printable_width_px(), "height": 1000}
            )
            page = context.new_page()
            page.route(
                base + "book.html",
                lambda route: route.fulfill(status=200, body=body, content_type="text/html; charset=utf-8"),
            )
            page.goto(base + "book.html", wait_until="load", timeout=180_000)
            wait_for_mathjax(page)
            page.evaluate(DROP_PRINT_RULES_JS, page_only_styles())
            images = page.evaluate(PREPARE_JS)
            if images["broken"]:
                raise RuntimeError(f"{len(images['broken'])} images did not load, e.g. {images['broken'][0]}")
            parts = page.evaluate(PART_HEADINGS_JS, part_openings(parsed))
            page.add_style_tag(content=page_css())
            page.emulate_media(media="print")
            overflow = page.evaluate(OVERFLOW_JS)
            page.pdf(
                path=str(printed),
                prefer_css_page_size=True,
                print_background=True,
                outline=True,
                tagged=True,
                display_header_footer=True,
                header_template="<span></span>",
                footer_template=footer_template(),
            )
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
        "pdf": target.name,
        "compressed": not qpdf,
        "toc_pages": pages,
        "parts": parts,
        "raster_images": images["raster"],
        "overflow": overflow,
        "offsite_requests": offsite,
        "chromium": chromium,
        "seconds": round(time.perf_counter() - start, 1),
    }
    report_path(target).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return report


def main(argv: list[str] | None = None) -> Path | None:
    """Command line: ``python -m tools.pdf [--no-build] [--config PATH] [--skip-without-chromium]``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    usage = "usage: python -m tools.pdf [--no-build] [--config PATH] [--skip-without-chromium]"
    config = []
    if "--config" in argv:
        at = argv.index("--config")
        if at + 1 >= len(argv):
            raise SystemExit(usage)
        config = ["--config", argv[at + 1]]
        del argv[at : at + 2]
    options = {"--no-build", "--skip-without-chromium"}
    if set(argv) - options:
        raise SystemExit(usage)
    problem = missing_chromium()
    if problem and "--skip-without-chromium" in argv and not os.environ.get("CI"):
        for old in (PDF, report_path(PDF)):  # the tests would check a PDF of older pages
            old.unlink(missing_ok=True)
        print(f"make pdf: skipped. {problem} The PDF tests will skip.")
        return None
    if problem:
        raise SystemExit(problem)
    if "--no-build" not in argv:
        command = [beside_python("jupyter-book") or "jupyter-book", *SINGLE_PAGE_BUILD[1:], *config]
        print("$ " + " ".join(SINGLE_PAGE_BUILD + config), flush=True)
        if subprocess.run(command).returncode:
            raise SystemExit("the single-page build failed (see above)")
    try:
        report = print_pdf(SITE, PDF)
    except (FileNotFoundError, RuntimeError) as error:
        raise SystemExit(str(error)) from None
    print(
        f"wrote {PDF} ({PDF.stat().st_size / 1e6:.1f} MB; {len(report['toc_pages'])} pages "
        f"of the table of contents, {report['parts']} parts) in {report['seconds']:.0f} s"
    )
    if not report["compressed"]:
        print(f"  not compressed: {missing_qpdf()}")
    for problem in report["overflow"][:10]:
        print(f"  does not fit the page: {problem}")
    if report["offsite_requests"]:
        print(
            f"  refused {len(report['offsite_requests'])} requests to other hosts, e.g. {report['offsite_requests'][0]}"
        )
    return PDF
