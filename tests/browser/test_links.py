"""No broken internal link or anchor anywhere in the built site.

Every HTML page of the site is parsed; every ``href`` and ``src`` that
stays inside the site is resolved like a browser would, and must name an
existing file and, where it has a ``#fragment``, an element with that id (or
an ``<a name>``) in the target. Links to other sites are not followed (the
book must work offline; their requests are checked in test_site_pages.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

from tools.site.browser import resolve, start_tags

pytestmark = pytest.mark.browser

#: Attributes that point at another resource, by tag.
LINK_ATTRIBUTES = {"a": "href", "link": "href", "img": "src", "script": "src", "source": "src", "iframe": "src"}


@dataclass
class _Links:
    """The anchors (ids, and names of ``<a>``) and the link addresses of one page."""

    ids: set[str] = field(default_factory=set)
    links: list[str] = field(default_factory=list)


@cache
def _parse(path: Path) -> _Links:
    found = _Links()
    for tag, values in start_tags(path.read_text(encoding="utf-8", errors="replace")):
        for key in ("id", "name") if tag == "a" else ("id",):
            if values.get(key):
                found.ids.add(values[key])
        wanted = LINK_ATTRIBUTES.get(tag)
        if wanted and values.get(wanted) is not None:
            found.links.append(values[wanted])
    return found


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
