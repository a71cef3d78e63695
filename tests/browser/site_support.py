"""Helpers of the browser tests (imported by conftest.py and the test modules).

The site under test is ``$BOOK_HTML`` (default ``_build/html``, built by
``make book``). Chromium is ``$CHROMIUM_PATH`` (default ``/usr/bin/chromium``).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import pickle
import shutil
import sys
import time
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from layout_support import WIDE, Navigation, exercise_navigation, measure

from tools.site.browser import is_external, offline_context, toc_pages, wait_for_mathjax

ROOT = Path(__file__).resolve().parents[2]

#: Every page the table of contents lists, as paths relative to the site root.
PAGES = toc_pages(ROOT / "_toc.yml")

#: Console messages of type "error" that are tolerated, each with its reason.
#: Matched as substrings. Keep it empty unless a message is beyond our control.
TOLERATED_CONSOLE_ERRORS: dict[str, str] = {}


def book_html() -> Path:
    """The built site the tests look at."""
    return Path(os.environ.get("BOOK_HTML", ROOT / "_build" / "html")).resolve()


#: axe-core impact levels that fail the build.
BLOCKING_IMPACTS = {"serious", "critical"}


def blocking(violations: list[dict]) -> list[dict]:
    """The axe-core violations whose impact is in :data:`BLOCKING_IMPACTS`.

    >>> [v["id"] for v in blocking([{"id": "a", "impact": "minor"}, {"id": "b", "impact": "serious"}])]
    ['b']
    """
    return [v for v in violations if v.get("impact") in BLOCKING_IMPACTS]


def query(values: dict[str, str]) -> str:
    """A tool's scenario as the query string of its page's address.

    >>> query({"devices": "4", "batch": "8"})
    '?devices=4&batch=8'
    """
    return "?" + urllib.parse.urlencode(values)


def assert_accessible_and_offline(page: Any, context: Any) -> None:
    """axe-core finds no blocking violation on ``page``, and ``context`` (see conftest) left 127.0.0.1 never."""
    from axe_playwright_python.sync_playwright import Axe

    found = [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes'][:3]]}"
        for v in blocking(Axe().run(page).response["violations"])
    ]
    assert not found, found
    external = [url for url in context.requests if is_external(url)]
    assert not external, f"requests to other hosts than 127.0.0.1: {external}"


def tolerated(message: str) -> bool:
    """Whether a console error is in :data:`TOLERATED_CONSOLE_ERRORS`."""
    return any(pattern in message for pattern in TOLERATED_CONSOLE_ERRORS)


@dataclass
class Visit:
    """What one page load showed: filled by :func:`open_page`."""

    url: str
    status: int | None = None
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    #: Set once the page has loaded: what test tools (axe-core) do later is not the page's.
    done: bool = False

    def note(self, kind: str, text: str) -> None:
        if not self.done:
            getattr(self, kind).append(text)


def open_page(context: Any, url: str, idle: bool = True) -> tuple[Any, Visit]:
    """Open ``url`` in a new tab of ``context`` (see conftest), recording what happens until it is done:
    loaded, its maths typeset, and (with ``idle``) no request for half a second (Playwright's
    ``networkidle``), so that the requests it makes late are recorded too. A test that reads none of
    the visit's requests may leave out that last wait (``idle=False``)."""
    page = context.new_page()
    visit = Visit(url=url)
    first = len(context.requests)
    page.on(
        "console",
        lambda m: (
            visit.note("console_errors", f"{m.text} ({m.location.get('url', '')})") if m.type == "error" else None
        ),
    )
    page.on("pageerror", lambda error: visit.note("page_errors", str(error)))
    page.on("requestfailed", lambda r: visit.note("failed", f"{r.url}: {r.failure}"))
    response = page.goto(url, wait_until="load")
    visit.status = response.status if response else None
    wait_for_mathjax(page)
    if idle:
        page.wait_for_load_state("networkidle")
    visit.requests = context.requests[first:]
    visit.done = True
    return page, visit


@dataclass
class PageReport:
    """All the facts the page tests check, gathered in one visit."""

    visit: Visit
    math_elements: int
    math_without_output: list[str]
    math_errors: list[str]
    images: list[dict]
    violations: list[dict]
    #: :func:`layout_support.measure`, then :func:`layout_support.exercise_navigation`.
    layout: dict = field(default_factory=dict)
    navigation: Navigation = field(default_factory=Navigation)
    #: Uncaught JavaScript errors while the menu button was used.
    navigation_errors: list[str] = field(default_factory=list)


IMAGES_JS = """async () => {
  const images = Array.from(document.images);
  await Promise.all(images.map(async (img) => {
    img.loading = 'eager';
    try { await img.decode(); } catch (e) { /* reported below as naturalWidth 0 */ }
  }));
  return images.map((img) => ({src: img.currentSrc || img.src, alt: img.getAttribute('alt'),
                               width: img.naturalWidth,
                               hidden: img.closest('[aria-hidden="true"]') !== null}));
}"""

MATH_JS = """() => {
  const math = Array.from(document.querySelectorAll('.math'));
  return {
    count: math.length,
    missing: math.filter((m) => !m.querySelector('mjx-container')).map((m) => m.textContent.slice(0, 80)),
    errors: Array.from(document.querySelectorAll('mjx-merror, [data-mjx-error]'))
      .map((e) => e.getAttribute('data-mjx-error') || e.textContent.slice(0, 80)),
  };
}"""


def report_page(context: Any, url: str, axe: Any = None, width: int = WIDE) -> PageReport:
    """Visit ``url`` once and gather everything the page tests check (axe-core's only with ``axe``).

    The layout is measured last but one, after axe-core; the menu button is
    used last, since it changes the page.
    """
    page, visit = open_page(context, url)
    errors: list[str] = []
    try:
        math = page.evaluate(MATH_JS)
        images = page.evaluate(IMAGES_JS)
        violations = axe.run(page).response["violations"] if axe else []
        layout = measure(page)
        page.on("pageerror", lambda error: errors.append(str(error)))
        navigation = exercise_navigation(page, width)
    finally:
        page.close()
    return PageReport(
        visit=visit,
        math_elements=math["count"],
        math_without_output=math["missing"],
        math_errors=math["errors"],
        images=images,
        violations=violations,
        layout=layout,
        navigation=navigation,
        navigation_errors=errors,
    )


@dataclass
class Printout:
    """A page printed as a reader's Ctrl+P would print it (:func:`print_page`)."""

    pdf: bytes
    #: The address of the server the page was printed from, and every request it made meanwhile.
    base: str
    requests: list[str]


def print_page(browser: Any, base_url: str, path: str, paper: str) -> Printout:
    """Print ``base_url + path`` on ``paper`` (``"A4"``, ``"Letter"``) with the page's own print styles
    and ``@page`` rules (``prefer_css_page_size``), in a fresh offline context of ``browser``."""
    with offline_context(browser) as context:
        page = context.new_page()
        page.goto(base_url + path)
        wait_for_mathjax(page)
        page.emulate_media(media="print")
        pdf = page.pdf(format=paper, prefer_css_page_size=True, print_background=True)
        return Printout(pdf=pdf, base=base_url, requests=list(context.requests))


#: Where the page reports are kept between runs, beside the built site (``_build/page-reports``), one
#: folder per :func:`reports_key`.
REPORTS = "page-reports"

#: What the page reports depend on besides the site and the browser: the code that opens and measures
#: each page (these modules, the fixtures, :mod:`tools.site.browser`) and axe-core's script.
REPORT_CODE = (
    Path(__file__).with_name("site_support.py"),
    Path(__file__).with_name("layout_support.py"),
    Path(__file__).with_name("conftest.py"),
    ROOT / "tools" / "site" / "browser.py",
)


def reports_key(site: Path, pages: Iterable[str], browser: str, code: Iterable[Path] = REPORT_CODE) -> str:
    """A digest of everything a page report depends on: every file of ``site`` (names and bytes), the
    ``pages`` visited, ``browser`` (a description of the browser binary), and the files of ``code``.

    The book builds to the same bytes from the same sources, so a second ``make test`` over an
    unchanged book reads the reports the first one measured (:func:`shared_reports`), and any change
    to the site, the pages, the browser or the measuring code measures them again.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     site = Path(tmp)
    ...     _ = (site / "a.html").write_text("a")
    ...     first = reports_key(site, ["a.html"], "chromium 1", code=[])
    ...     same = reports_key(site, ["a.html"], "chromium 1", code=[])
    ...     _ = (site / "a.html").write_text("b")
    ...     edited = reports_key(site, ["a.html"], "chromium 1", code=[])
    ...     other_browser = reports_key(site, ["a.html"], "chromium 2", code=[])
    >>> first == same, len({first, edited, other_browser})
    (True, 3)
    """
    digest = hashlib.sha256()

    def add(*parts: str | bytes) -> None:
        for part in parts:
            data = part.encode() if isinstance(part, str) else part
            digest.update(len(data).to_bytes(8, "little") + data)

    add(browser, f"python {sys.version_info[:2]}", *pages)
    for path in code:
        add(path.name, path.read_bytes())
    for path in sorted(p for p in site.rglob("*") if p.is_file()):
        add(path.relative_to(site).as_posix(), path.read_bytes())
    return digest.hexdigest()[:20]


#: Written into a reports folder by a run in which a test failed: the next run measures every page
#: again, so that a page that misbehaved once (a flaky console error) is not reported from disk forever.
MEASURE_AGAIN = "measure-again"


def reports_folder(site: Path, key: str, keep_s: float = 3600.0) -> Path:
    """``REPORTS/key`` beside ``site``, emptied first if a failed run marked it :data:`MEASURE_AGAIN`.

    Folders of other keys left untouched for ``keep_s`` seconds are removed. The workers of one run
    call this one after the other (a lock), so only the first empties a marked folder.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     folder = reports_folder(Path(tmp) / "html", "k1")
    ...     _ = (folder / "wide-000.pickle").write_bytes(b"")
    ...     kept = sorted(p.name for p in reports_folder(Path(tmp) / "html", "k1").iterdir())
    ...     _ = (folder / MEASURE_AGAIN).write_text("")
    ...     emptied = sorted(p.name for p in reports_folder(Path(tmp) / "html", "k1").iterdir())
    >>> kept, emptied
    (['wide-000.pickle'], [])
    """
    base = site.parent / REPORTS
    base.mkdir(parents=True, exist_ok=True)
    folder = base / key
    with open(base / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / MEASURE_AGAIN).exists():
            shutil.rmtree(folder)
        folder.mkdir(exist_ok=True)
        os.utime(folder)
    for old in base.iterdir():
        if old.name not in (key, f"{key}.lock") and time.time() - old.stat().st_mtime > keep_s:
            shutil.rmtree(old, ignore_errors=True) if old.is_dir() else old.unlink(missing_ok=True)
    return folder


def browser_identity(executable: str, version: str) -> str:
    """The browser as the reports' key sees it: the executable's path, size and modification time, the
    ``version`` Chromium reports, Playwright's version and axe-core's script (a new one of any
    measures the pages again)."""
    from importlib.metadata import version as installed

    import axe_playwright_python

    binary = Path(executable).resolve()
    stat = binary.stat()
    axe = Path(axe_playwright_python.__file__).with_name("axe.min.js")
    return (
        f"{binary} {stat.st_size} {stat.st_mtime_ns} chromium {version} playwright {installed('playwright')}"
        f" axe {hashlib.sha256(axe.read_bytes()).hexdigest()}"
    )


def shared_reports(folder: Path, kind: str, pages: list[str], visit: Callable[[str], Any]) -> dict[str, Any]:
    """``{path: visit(path)}`` for every page, each computed by one process of the run and read by the others.

    Under pytest-xdist every worker that needs the reports calls this with the
    same ``folder`` (one per :func:`reports_key`: kept between runs). Each page
    has its own file and lock: a worker measures the pages no other worker
    holds and skips the held ones for later, so two workers that need the
    reports at once share the work, and a worker (or a run) that comes later
    reads them.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     seen = []
    ...     first = shared_reports(Path(tmp), "wide", ["a", "b"], lambda p: seen.append(p) or p.upper())
    ...     again = shared_reports(Path(tmp), "wide", ["a", "b"], lambda p: seen.append(p) or "never")
    >>> first, again, seen
    ({'a': 'A', 'b': 'B'}, {'a': 'A', 'b': 'B'}, ['a', 'b'])
    """
    folder.mkdir(parents=True, exist_ok=True)
    found: dict[str, Any] = {}
    pending = list(pages)
    for wait in (False, True):  # first every page no one else holds, then wait for the held ones
        held = []
        for path in pending:
            file = folder / f"{kind}-{pages.index(path):03d}.pickle"
            with open(file.with_suffix(".lock"), "w") as lock:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
                except BlockingIOError:
                    held.append(path)
                    continue
                if not file.exists():
                    partial = file.with_suffix(".partial")
                    partial.write_bytes(pickle.dumps(visit(path)))
                    partial.rename(file)
                found[path] = pickle.loads(file.read_bytes())
        pending = held
    return {path: found[path] for path in pages}
