"""Fixtures of the browser tests: the built site, served on 127.0.0.1, in the system Chromium.

Playwright never downloads a browser here: it drives ``/usr/bin/chromium``
(``$CHROMIUM_PATH``). Without it the tests are skipped locally and fail in CI
(where the environment variable ``CI`` is set), since ``.ci/run`` installs it.
Without a built site (``$BOOK_HTML``, default ``_build/html``) they fail and
say to run ``make book``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from layout_support import NARROW, WIDE
from site_support import PAGES, PageReport, book_html, report_page, shared_reports

from tools.prerequisites import require
from tools.site.browser import chromium_path, launch, missing_book, missing_chromium, offline_context, serve


@pytest.fixture(scope="session")
def site_dir() -> Path:
    path = book_html()
    problem = missing_book(path)
    if problem:
        pytest.fail(problem + " Or set BOOK_HTML.")
    return path


@pytest.fixture(scope="session")
def base_url(site_dir: Path) -> Iterator[str]:
    """``http://127.0.0.1:PORT/`` serving the built site from a thread."""
    with serve(site_dir) as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    executable = chromium_path()
    require(missing_chromium(executable), locally="Browser tests skipped.", in_ci="CI must run the browser tests.")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = launch(playwright, executable)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def context(browser: Any) -> Iterator[Any]:
    """A browser context that records every request (``context.requests``) and refuses outside ones."""
    ctx = offline_context(browser, viewport={"width": WIDE, "height": 900})
    yield ctx
    ctx.close()


@pytest.fixture(scope="session")
def reports_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the page reports of this run are kept: one folder for all the xdist workers of the run."""
    base = tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "page-reports"


@pytest.fixture(scope="session")
def page_reports(context: Any, base_url: str, reports_folder: Path) -> dict[str, PageReport]:
    """Visit every page of the table of contents once in the run (whichever worker gets there first, see
    :func:`site_support.shared_reports`); return what each showed."""
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    return shared_reports(reports_folder, "wide", PAGES, lambda path: report_page(context, base_url + path, axe))


@pytest.fixture(scope="session")
def phone_reports(browser: Any, base_url: str, reports_folder: Path) -> Iterator[dict[str, PageReport]]:
    """Every page once more, in a phone-sized window (no axe-core: ``page_reports`` runs it)."""
    ctx = offline_context(browser, viewport={"width": NARROW, "height": 800})
    try:
        yield shared_reports(
            reports_folder, "narrow", PAGES, lambda path: report_page(ctx, base_url + path, width=NARROW)
        )
    finally:
        ctx.close()


@pytest.fixture(scope="session")
def reports_by_width(page_reports: dict, phone_reports: dict) -> dict[int, dict[str, PageReport]]:
    """``{1280: page_reports, 390: phone_reports}``."""
    return {WIDE: page_reports, NARROW: phone_reports}
