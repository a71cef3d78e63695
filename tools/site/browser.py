"""Open the built book in the system Chromium: shared by the browser tests and tools.

Small pieces, each used by the browser tests and by ``tools.site.screenshots``:

* :func:`toc_pages` lists the HTML pages of the table of contents, in reading order
  (:func:`toc_parts`: grouped by part);
* :func:`serve` serves a built site on ``127.0.0.1`` at a free port, in a thread;
* :func:`launch` starts the system Chromium through Playwright with the flags
  that keep it off the network. Playwright never downloads a browser here;
* :func:`offline_context` opens a browser context that refuses and records
  every request to another host (:func:`is_external`);
* :func:`wait_for_mathjax` waits until a page's maths is typeset;
* :func:`resolve` and :func:`start_tags` follow the links of a built page
  on disk, without a browser;
* :func:`missing_book` and :func:`missing_chromium` say what is missing
  before anything starts.

>>> toc_pages_from({"root": "book/intro", "parts": [{"chapters": [
...     {"file": "notebooks/01_a", "sections": [{"file": "notebooks/01b"}]},
...     {"url": "https://example.org", "title": "elsewhere"}]}]})
['book/intro.html', 'notebooks/01_a.html', 'notebooks/01b.html']
"""

from __future__ import annotations

import contextlib
import functools
import html.parser
import http.server
import os
import posixpath
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "LOCAL_SCHEMES",
    "chromium_path",
    "missing_chromium",
    "missing_book",
    "toc_parts",
    "toc_pages",
    "toc_pages_from",
    "serve",
    "launch",
    "is_external",
    "offline_context",
    "wait_for_mathjax",
    "resolve",
    "start_tags",
]

#: Where Debian's ``apt-get install chromium`` puts the browser.
CHROMIUM = "/usr/bin/chromium"

#: No sandbox (CI runs as root), no GPU, and none of the background traffic
#: (updates, sync, component downloads) that would reach for the internet.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


#: Schemes that never leave the browser (no request to any host).
LOCAL_SCHEMES = {"data", "blob", "about", "chrome-extension"}


def chromium_path() -> str:
    """The Chromium executable: ``$CHROMIUM_PATH`` if set, else :data:`CHROMIUM`."""
    return os.environ.get("CHROMIUM_PATH", CHROMIUM)


def missing_chromium(executable: str | None = None) -> str | None:
    """What to do when the Chromium executable is not there; None when it is.

    >>> missing_chromium("/nowhere/chromium")
    'Chromium not found at /nowhere/chromium: install it with `apt-get install -y chromium` (or set CHROMIUM_PATH).'
    """
    executable = executable or chromium_path()
    if Path(executable).is_file():
        return None
    return f"Chromium not found at {executable}: install it with `apt-get install -y chromium` (or set CHROMIUM_PATH)."


def missing_book(site: str | Path, make: str = "make book", page: str = "index.html") -> str | None:
    """What to do when ``site`` holds no built book (no ``page``); None when it does.

    >>> missing_book("/nowhere/html")
    'No built book at /nowhere/html (no index.html): run `make book` first.'
    >>> missing_book("/nowhere/singlehtml", "make pdf", "book/intro.html")
    'No built book at /nowhere/singlehtml (no book/intro.html): run `make pdf` first.'
    """
    if (Path(site) / page).is_file():
        return None
    return f"No built book at {site} (no {page}): run `{make}` first."


def _entry_pages(entry: dict) -> list[str]:
    """HTML paths of a ``_toc.yml`` entry's file and, in order, every entry nested in it."""
    pages = [str(entry["file"]) + ".html"] if "file" in entry else []
    for key in ("sections", "chapters", "parts"):
        for nested in entry.get(key, []):
            pages += _entry_pages(nested)
    return pages


def toc_parts(toc: dict) -> list[tuple[str | None, list[str]]]:
    """``(caption, pages)`` of each part of a parsed ``_toc.yml``, in reading order.

    Pages are HTML paths relative to the site root. The root page, and the
    chapters of a table of contents without parts, come first under the
    caption None. Entries with a ``url`` (external links) have no page of
    ours and are skipped.

    >>> toc_parts({"root": "intro", "parts": [{"caption": "One", "chapters": [
    ...     {"file": "a", "sections": [{"file": "a1"}]}, {"url": "https://example.org"}]}]})
    [(None, ['intro.html']), ('One', ['a.html', 'a1.html'])]
    """
    loose = [str(toc["root"]) + ".html"]
    for key in ("chapters", "sections"):
        for entry in toc.get(key, []):
            loose += _entry_pages(entry)
    return [(None, loose)] + [(part.get("caption"), _entry_pages(part)) for part in toc.get("parts", [])]


def toc_pages_from(toc: dict) -> list[str]:
    """HTML paths (relative to the site root) of every file a parsed ``_toc.yml`` lists, in order.

    The pages of :func:`toc_parts`, one part after another.
    """
    return [page for _, pages in toc_parts(toc) for page in pages]


def toc_pages(toc_path: str | Path = "_toc.yml") -> list[str]:
    """:func:`toc_pages_from` applied to the YAML file at ``toc_path``."""
    import yaml

    return toc_pages_from(yaml.safe_load(Path(toc_path).read_text(encoding="utf-8")))


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib name)
        pass


@contextlib.contextmanager
def serve(directory: str | Path) -> Iterator[str]:
    """Serve ``directory`` over HTTP on 127.0.0.1; yield the base URL (ending in ``/``).

    The operating system picks a free port. The server stops when the block ends.
    """
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="book-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def launch(playwright: Any, executable: str | None = None) -> Any:
    """Start the system Chromium (headless) with :data:`CHROMIUM_ARGS`; return the Browser."""
    return playwright.chromium.launch(
        executable_path=executable or chromium_path(),
        headless=True,
        args=CHROMIUM_ARGS,
    )


def is_external(url: str) -> bool:
    """True for a request that would leave the machine (any host but 127.0.0.1).

    >>> is_external("http://127.0.0.1:8000/book/intro.html"), is_external("data:image/png;base64,AA")
    (False, False)
    >>> is_external("https://cdn.jsdelivr.net/npm/thebe"), is_external("http://localhost:8000/")
    (True, True)
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme in LOCAL_SCHEMES:
        return False
    return parts.hostname != "127.0.0.1"


def offline_context(browser: Any, **kwargs: Any) -> Any:
    """A new context of ``browser`` (``kwargs`` as for ``new_context``) that never reaches the internet.

    Every request is recorded, in order, in ``context.requests`` (a list of
    URLs); any for which :func:`is_external` holds is aborted. Close the
    context (or use it in a ``with`` block) when done.
    """
    context = browser.new_context(**kwargs)
    context.requests = []

    def route(route: Any) -> None:
        if is_external(route.request.url):
            route.abort()
        else:
            route.continue_()

    context.on("request", lambda request: context.requests.append(request.url))
    context.route("**/*", route)
    return context


def wait_for_mathjax(page: Any) -> None:
    """Wait until MathJax, where the page loads it, has typeset everything."""
    page.wait_for_function(
        "() => !document.querySelector('script[src*=\"mathjax\"]')"
        " || (window.MathJax && MathJax.startup && MathJax.startup.promise)",
        timeout=30_000,
    )
    page.evaluate(
        "() => (window.MathJax && MathJax.startup && MathJax.startup.promise)"
        " ? MathJax.startup.promise.then(() => true) : true"
    )


def resolve(site: Path, page: Path, address: str) -> tuple[Path, str] | None:
    """The file and fragment an address on ``page`` points at; None if it leaves the site.

    Resolved as a browser would, relative to ``page``, with ``%``-escapes
    undone; a folder means its ``index.html``. An address that climbs above
    ``site`` gives a path under ``site / "__outside_the_site__"``, which
    never exists. Whether the file exists is the caller's question.

    >>> site = Path("/site")
    >>> resolve(site, site / "book" / "intro.html", "../notebooks/02.html#eq-t2")
    (PosixPath('/site/notebooks/02.html'), 'eq-t2')
    >>> resolve(site, site / "book" / "intro.html", "#top")
    (PosixPath('/site/book/intro.html'), 'top')
    >>> resolve(site, site / "book" / "intro.html", "../_static/a%20b.js?v=1")
    (PosixPath('/site/_static/a b.js'), '')
    >>> resolve(site, site / "book" / "intro.html", "https://doi.org/10.1/x") is None
    True
    """
    parts = urllib.parse.urlsplit(address)
    if parts.scheme or parts.netloc or address.startswith(("mailto:", "javascript:", "data:")):
        return None
    fragment = urllib.parse.unquote(parts.fragment)
    if not parts.path:
        return page, fragment
    here = page.parent.relative_to(site).as_posix()
    target = posixpath.normpath(posixpath.join(here, urllib.parse.unquote(parts.path)))
    if target.startswith(".."):
        return site / "__outside_the_site__" / target, fragment
    path = site / target
    if parts.path.endswith("/") or path.is_dir():
        path = path / "index.html"
    return path, fragment


class _StartTags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def start_tags(page_html: str) -> list[tuple[str, dict[str, str | None]]]:
    """(tag, attributes) of every start tag of an HTML page, in order.

    >>> start_tags('<p id="x">a <a href="b.html">b</a></p><img src="c.png" alt="">')
    [('p', {'id': 'x'}), ('a', {'href': 'b.html'}), ('img', {'src': 'c.png', 'alt': ''})]
    """
    parser = _StartTags()
    parser.feed(page_html)
    parser.close()
    return parser.tags
