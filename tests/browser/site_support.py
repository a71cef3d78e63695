"""Helpers of the browser tests (imported by conftest.py and the test modules).

The site under test is ``$BOOK_HTML`` (default ``_build/html``, built by
``make book``). Chromium is ``$CHROMIUM_PATH`` (default ``/usr/bin/chromium``).
"""

from __future__ import annotations

import fcntl
import os
import pickle
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from layout_support import WIDE, Navigation, exercise_navigation, measure

from tools.site.browser import is_external, toc_pages, wait_for_mathjax

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


def open_page(context: Any, url: str) -> tuple[Any, Visit]:
    """Open ``url`` in a new tab of ``context`` (see conftest), recording what happens."""
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


def shared_reports(folder: Path, kind: str, pages: list[str], visit: Callable[[str], Any]) -> dict[str, Any]:
    """``{path: visit(path)}`` for every page, each computed by one process of the run and read by the others.

    Under pytest-xdist every worker that needs the reports calls this with the
    same ``folder`` (one per run). Each page has its own file and lock: a
    worker measures the pages no other worker holds and skips the held ones
    for later, so two workers that need the reports at once share the work,
    and a worker that comes later reads them.

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
