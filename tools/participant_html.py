"""The built book without answers, for the participant bundle (:mod:`tools.dist`).

:func:`participant_html` cuts the solutions out of every page, leaves out
:data:`ANSWER_PAGES` with every link to them and their entries in the search
index, drops the images only a solution showed, and makes each chapter's
download button serve the student notebook. Links and images are followed as
a browser would (:func:`tools.browser.resolve`: ``%``-escapes undone, a
folder meaning its ``index.html``).

>>> ANSWER_PAGES
('book/answers.html',)
"""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path

from tools.browser import resolve
from tools.bundle_files import files_under

__all__ = ["ANSWER_PAGES", "participant_html"]

#: Pages of the built book that hold answers: left out of the participant bundle.
ANSWER_PAGES = ("book/answers.html",)

#: Classes of the previous/next buttons at the foot of a page.
_PAGE_BUTTONS = {"prev", "next", "left-prev", "right-next"}


def _target(html: Path, page: str, address: str) -> str | None:
    """The file ``address`` on ``page`` points at, relative to ``html``; None if it leaves the site."""
    found = resolve(html, html / page, address)
    return None if found is None else found[0].relative_to(html).as_posix()


def _drop_links(soup, html: Path, page: str, removed: set[str]) -> None:
    """Take every link from ``page`` to a removed page out of ``soup``.

    A ``<link>`` in the head and a previous/next button go; a list item that
    holds nothing but the link (the navigation) goes with it; a link inside a
    sentence keeps its words and loses only the link.
    """
    for link in soup.find_all(["a", "link"], href=True):
        if _target(html, page, link["href"]) not in removed:
            continue
        item = link.find_parent("li")
        if link.name == "link" or _PAGE_BUTTONS & set(link.get("class", [])):
            link.decompose()
        elif item is not None and item.get_text(strip=True) == link.get_text(strip=True):
            item.decompose()
        else:
            link.unwrap()


def _search_index(text: str, removed: set[str]) -> str:
    """Sphinx's ``searchindex.js`` with removed pages unreachable from search."""
    match = re.fullmatch(r"(?s)(\s*Search\.setIndex\()(.*)(\)\s*;?\s*)", text)
    if not match:
        return text
    index = json.loads(match.group(2))
    gone = {i for i, name in enumerate(index.get("filenames", [])) if
            posixpath.splitext(name)[0] + ".html" in removed}
    gone |= {i for i, name in enumerate(index.get("docnames", [])) if name + ".html" in removed}
    for key in ("terms", "titleterms"):
        for word, docs in list(index.get(key, {}).items()):
            kept = [d for d in (docs if isinstance(docs, list) else [docs]) if d not in gone]
            if kept:
                index[key][word] = kept if isinstance(docs, list) else kept[0]
            else:
                del index[key][word]
    for title, places in list(index.get("alltitles", {}).items()):
        kept = [p for p in places if p[0] not in gone]
        if kept:
            index["alltitles"][title] = kept
        else:
            del index["alltitles"][title]
    return match.group(1) + json.dumps(index, separators=(",", ":")) + match.group(3)


def participant_html(html: Path, student: Path | None = None) -> dict[str, bytes | Path]:
    """The built book without answers: relative path -> new bytes, or the file to copy.

    Solution blocks (``div.solution``, the dropdowns of sphinx-exercise) are cut
    from every page; :data:`ANSWER_PAGES` and their sources are left out and
    links to them removed, also from search; images no remaining page shows
    are dropped; ``_sources/notebooks/NN_slug.ipynb`` (what each chapter's
    download button serves) becomes the student notebook of that name when
    ``student`` has one, and is left out otherwise (so is any other form of a
    chapter's source); the prose pages' sources stay.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     (Path(tmp) / "book").mkdir()
    ...     _ = (Path(tmp) / "book" / "answers.html").write_text("<p>42</p>")
    ...     _ = (Path(tmp) / "index.html").write_text('<p>See <a href="book/answers%2Ehtml">them</a>.</p>')
    ...     participant_html(Path(tmp))
    {'index.html': b'<p>See them.</p>'}
    """
    from bs4 import BeautifulSoup

    html = Path(html)
    removed = set(ANSWER_PAGES)
    removed_sources = tuple("_sources/" + posixpath.splitext(page)[0] for page in removed)
    out: dict[str, bytes | Path] = {}
    shown: set[str | None] = set()
    for path in files_under(html):
        name = path.relative_to(html).as_posix()
        if name in removed or name.startswith(removed_sources):
            continue
        if name.endswith(".html"):
            soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
            for block in soup.select("div.solution"):
                block.decompose()
            _drop_links(soup, html, name, removed)
            shown |= {_target(html, name, tag["src"]) for tag in soup.find_all(src=True)}
            out[name] = str(soup).encode("utf-8")
        elif name == "searchindex.js":
            out[name] = _search_index(path.read_text(encoding="utf-8"), removed).encode("utf-8")
        elif name.startswith("_sources/notebooks/") and name.endswith(".ipynb"):
            replacement = Path(student) / Path(name).name if student else None
            if replacement is not None and replacement.is_file():
                out[name] = replacement
        elif name.startswith("_sources/notebooks/"):
            continue  # a chapter's source in another form would hold its solutions too
        else:
            out[name] = path
    for name in [n for n in out if n.startswith("_images/") and n not in shown]:
        del out[name]
    return out
