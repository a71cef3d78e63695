"""Open the built book in the system Chromium: shared by the browser tests and tools.

Three pieces, each small:

* :func:`toc_pages` lists the HTML pages of the table of contents, in reading order;
* :func:`serve` serves a built site on ``127.0.0.1`` at a free port, in a thread;
* :func:`launch` starts the system Chromium through Playwright with the flags
  that keep it off the network. Playwright never downloads a browser here.

>>> toc_pages_from({"root": "book/intro", "parts": [{"chapters": [
...     {"file": "notebooks/01_a", "sections": [{"file": "notebooks/01b"}]},
...     {"url": "https://example.org", "title": "elsewhere"}]}]})
['book/intro.html', 'notebooks/01_a.html', 'notebooks/01b.html']
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import threading
from pathlib import Path
from typing import Any, Iterator

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "chromium_path", "toc_pages", "toc_pages_from", "serve", "launch"]

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


def chromium_path() -> str:
    """The Chromium executable: ``$CHROMIUM_PATH`` if set, else :data:`CHROMIUM`."""
    return os.environ.get("CHROMIUM_PATH", CHROMIUM)


def toc_pages_from(toc: dict) -> list[str]:
    """HTML paths (relative to the site root) of every file a parsed ``_toc.yml`` lists.

    Entries with a ``url`` (external links) have no page of ours and are skipped.
    """
    pages = [str(toc["root"]) + ".html"]

    def walk(entries: list[dict]) -> None:
        for entry in entries:
            if "file" in entry:
                pages.append(str(entry["file"]) + ".html")
            for key in ("sections", "chapters", "parts"):
                walk(entry.get(key, []))

    for key in ("parts", "chapters", "sections"):
        walk(toc.get(key, []))
    return pages


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
