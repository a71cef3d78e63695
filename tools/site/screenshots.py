"""Full-page screenshots of every page of the built book, at desktop and phone widths.

Usage (``make screenshots``)::

    python -m tools.site.screenshots _build/html _build/screenshots [--toc _toc.yml] [--widths 1280 390]

It serves the site on 127.0.0.1, opens each page of the table of contents in
the system Chromium (never a downloaded one; see :mod:`tools.site.browser`) with a
viewport of each width, waits for MathJax to finish, and writes one PNG per
page and width, named like ``notebooks__03_break_even-390.png``. Look at them:
wide tables, figures and formulas that overflow a phone screen show up here
first.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["WIDTHS", "shot_name", "take", "main"]

#: Desktop and phone widths, in CSS pixels.
WIDTHS = (1280, 390)

#: Height of the window before the full-page capture stretches it.
VIEWPORT_HEIGHT = 900


def shot_name(page: str, width: int) -> str:
    """File name of the screenshot of ``page`` (a site-relative path) at ``width`` pixels.

    >>> shot_name("notebooks/03_break_even.html", 390)
    'notebooks__03_break_even-390.png'
    >>> shot_name("book/intro.html", 1280)
    'book__intro-1280.png'
    """
    stem = page[: -len(".html")] if page.endswith(".html") else page
    return f"{stem.replace('/', '__')}-{width}.png"


def take(site: Path, out: Path, pages: list[str], widths: tuple[int, ...] = WIDTHS) -> list[Path]:
    """Screenshot every page at every width into ``out``; return the files written."""
    from playwright.sync_api import sync_playwright

    from tools.site.browser import launch, offline_context, serve, wait_for_mathjax

    out.mkdir(parents=True, exist_ok=True)
    written = []
    with serve(site) as base, sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            for width in widths:
                context = offline_context(browser, viewport={"width": width, "height": VIEWPORT_HEIGHT})
                for page_path in pages:
                    page = context.new_page()
                    page.goto(base + page_path, wait_until="load")
                    wait_for_mathjax(page)
                    page.wait_for_load_state("networkidle")
                    target = out / shot_name(page_path, width)
                    page.screenshot(path=str(target), full_page=True)
                    written.append(target)
                    page.close()
                context.close()
        finally:
            browser.close()
    return written


def main(argv: list[str] | None = None) -> int:
    from tools.site.browser import missing_book, missing_chromium, toc_pages

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("site", type=Path, help="the built HTML book, e.g. _build/html")
    parser.add_argument("out", type=Path, help="folder for the PNG files")
    parser.add_argument("--toc", type=Path, default=Path("_toc.yml"), help="table of contents (default: _toc.yml)")
    parser.add_argument("--widths", type=int, nargs="+", default=list(WIDTHS), help="viewport widths in pixels")
    args = parser.parse_args(argv)
    problem = missing_book(args.site) or missing_chromium()
    if problem:
        parser.error(problem)
    written = take(args.site, args.out, toc_pages(args.toc), tuple(args.widths))
    for path in written:
        print(path)
    print(f"{len(written)} screenshots in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
