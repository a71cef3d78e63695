"""Fixtures of the browser tests: the built site, served on 127.0.0.1, in the system Chromium.

Playwright never downloads a browser here: it drives ``/usr/bin/chromium``
(``$CHROMIUM_PATH``). Without it the tests are skipped locally and fail in CI
(where the environment variable ``CI`` is set), since ``.ci/run`` installs it.
Without a built site (``$BOOK_HTML``, default ``_build/html``) they fail and
say to run ``make book``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from layout_support import NARROW, WIDE
from site_support import (
    MEASURE_AGAIN,
    PAGES,
    PageReport,
    Printout,
    book_html,
    browser_identity,
    print_page,
    report_page,
    reports_key,
    shared_reports,
)
from site_support import reports_folder as reports_folder_for

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
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder shared by all the xdist workers of this run (and by this run only)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def printed(browser: Any, base_url: str, run_folder: Path) -> Callable[[str, str], Printout]:
    """``printed(path, paper)``: the page at ``path`` printed on ``paper`` (:func:`site_support.print_page`),
    once in the run: the handout tests of two modules (test_print.py, test_handouts.py) read the same
    printouts, whichever worker printed them."""

    def get(path: str, paper: str) -> Printout:
        kind = "print-" + paper + "-" + path.replace("/", "-")
        return shared_reports(
            run_folder / "printouts", kind, [path], lambda p: print_page(browser, base_url, p, paper)
        )[path]

    return get


#: The reports folder this process read or wrote, if any (see :func:`pytest_sessionfinish`).
_USED: list[Path] = []


@pytest.fixture(scope="session")
def reports_folder(site_dir: Path, browser: Any, run_folder: Path) -> Path:
    """Where the page reports are kept: ``_build/page-reports/KEY``, one folder for every xdist worker
    of a run and for later runs over the same site, browser and measuring code
    (:func:`site_support.reports_key`). Delete ``_build/page-reports`` to measure every page again."""
    # The key is computed once in the run, by whichever worker comes first, so that every worker reads
    # the same folder even if a file it depends on changes meanwhile.
    key = shared_reports(
        run_folder,
        "key",
        ["key"],
        lambda _: reports_key(site_dir, PAGES, browser_identity(chromium_path(), browser.version)),
    )["key"]
    folder = reports_folder_for(site_dir, key)
    _USED.append(folder)
    return folder


#: The fixtures that hand out page reports.
_REPORT_FIXTURES = {"page_reports", "phone_reports", "reports_by_width"}

#: Whether a test that read page reports failed in this process.
_FAILED: list[str] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Iterator[None]:
    outcome = yield
    if outcome.get_result().failed and _REPORT_FIXTURES & set(getattr(item, "fixturenames", ())):
        _FAILED.append(item.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """After a failed test that read page reports, mark them to be measured again by the next run."""
    if _FAILED:
        for folder in _USED:
            if folder.is_dir():
                (folder / MEASURE_AGAIN).write_text("failed with these reports: " + " ".join(_FAILED) + "\n")


@pytest.fixture(scope="session")
def page_reports(context: Any, base_url: str, reports_folder: Path) -> dict[str, PageReport]:
    """Visit every page of the table of contents once (whichever worker gets there first, see
    :func:`site_support.shared_reports`; or read what an earlier run saw of the same site); return what
    each showed."""
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
