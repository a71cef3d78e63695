"""No broken internal link or anchor anywhere in the built site.

Every HTML page of the site is parsed; every ``href`` and ``src`` that
stays inside the site is resolved like a browser would, and must name an
existing file and, where it has a ``#fragment``, an element with that id (or
an ``<a name>``) in the target. Links to other sites are not followed (the
book must work offline; their requests are checked in test_site_pages.py).
"""

from __future__ import annotations

import html.parser
import posixpath
import urllib.parse
from functools import lru_cache
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

#: Attributes that point at another resource, by tag.
LINK_ATTRIBUTES = {"a": "href", "link": "href", "img": "src", "script": "src", "source": "src", "iframe": "src"}


class _Collector(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if values.get(key):
                self.ids.add(values[key])
        wanted = LINK_ATTRIBUTES.get(tag)
        if wanted and values.get(wanted) is not None:
            self.links.append(values[wanted])


@lru_cache(maxsize=None)
def _parse(path: Path) -> _Collector:
    collector = _Collector()
    collector.feed(path.read_text(encoding="utf-8", errors="replace"))
    return collector


def resolve(site: Path, page: Path, link: str) -> tuple[Path, str] | None:
    """The file and fragment a link on ``page`` points at; None if it leaves the site.

    >>> site = Path("/site")
    >>> resolve(site, site / "book" / "intro.html", "../notebooks/02.html#eq-t2")
    (PosixPath('/site/notebooks/02.html'), 'eq-t2')
    >>> resolve(site, site / "book" / "intro.html", "#top")
    (PosixPath('/site/book/intro.html'), 'top')
    >>> resolve(site, site / "book" / "intro.html", "https://doi.org/10.1/x") is None
    True
    """
    parts = urllib.parse.urlsplit(link)
    if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:", "data:")):
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


def site_pages(site: Path) -> list[Path]:
    """The HTML pages of the site.

    Files under ``_static`` are left out: the themes copy their Jinja macro
    templates there (``webpack-macros.html``), which no page links to and
    which hold ``{{ pathto(...) }}`` placeholders instead of links.
    """
    return sorted(p for p in site.rglob("*.html") if "_static" not in p.relative_to(site).parts)


def broken_links(site: Path) -> list[str]:
    """Every internal link of the site that names a missing file or anchor."""
    problems = []
    for page in site_pages(site):
        for link in _parse(page).links:
            resolved = resolve(site, page, link)
            if resolved is None:
                continue
            target, fragment = resolved
            where = f"{page.relative_to(site)}: {link}"
            if not target.is_file():
                problems.append(f"{where} (no such file)")
            elif fragment and target.suffix == ".html" and fragment not in _parse(target).ids:
                problems.append(f"{where} (no anchor #{fragment})")
    return problems


def test_no_broken_internal_link(site_dir):
    pages = site_pages(site_dir)
    assert len(pages) > 10, f"only {len(pages)} pages found under {site_dir}"
    problems = broken_links(site_dir)
    assert not problems, f"{len(problems)} broken internal links:\n" + "\n".join(problems[:50])


def test_link_checker_sees_a_broken_link(tmp_path):
    # The checker itself must be able to fail.
    (tmp_path / "a.html").write_text('<a href="b.html#there">b</a><a href="#here">self</a><p id="here"></p>')
    (tmp_path / "b.html").write_text('<p id="elsewhere"></p>')
    assert broken_links(tmp_path) == ["a.html: b.html#there (no anchor #there)"]
