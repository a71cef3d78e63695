"""The built book without answers, for the participant bundle (:mod:`tools.release.dist`).

:func:`participant_html` cuts the solutions and the teacher-only blocks out of
every page, shows the participant-only ones, leaves out :data:`ANSWER_PAGES`
(the answer sheet and the teacher's guide) with every link to them, drops the
images only a solution showed, makes each chapter's download button serve the
student notebook, turns each chapter's "Run this chapter yourself" note into the
bundle's own (:func:`tools.sphinx.run_note.bundle_note`: ``student/``, not the
repository's ``notebooks/``), and leaves in the search index only the terms each
remaining page still shows (:func:`tools.teaching.search_index.restrict`). Links and images are followed as
a browser would (:func:`tools.site.browser.resolve`: ``%``-escapes undone, a
folder meaning its ``index.html``).

>>> ANSWER_PAGES
('book/answers.html', 'book/workshop.html')
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from tools.release.bundle_files import files_under
from tools.site.browser import resolve
from tools.sphinx.run_note import NOTE_CLASS, bundle_note
from tools.teaching.search_index import restrict, terms

__all__ = ["ANSWER_PAGES", "PARTICIPANT_ONLY", "TEACHER_ONLY", "participant_html"]

#: Pages of the built book that hold answers: the answer sheet, and the teacher's guide (its questions,
#: stumbling points and live-coding plan). Left out of the participant bundle.
ANSWER_PAGES = ("book/answers.html", "book/workshop.html")

#: Blocks only one copy shows: ``{div} teacher-only`` is cut from the participant copy; ``{div}
#: participant-only`` is hidden in the book (``_static/workshop.css``) and shown in the participant copy.
TEACHER_ONLY, PARTICIPANT_ONLY = "teacher-only", "participant-only"

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


def _shown_text(soup) -> str:
    """The text a reader of the page sees and can search: its article and its title, words kept apart."""
    parts = [soup.title.get_text() if soup.title else ""]
    for article in soup.find_all("article") or [soup]:
        parts += [article.get_text(" "), article.get_text("")]
    return "\n".join(parts)


def participant_html(html: Path, student: Path | None = None) -> dict[str, bytes | Path]:
    """The built book without answers: relative path -> new bytes, or the file to copy.

    Solution blocks (``div.solution``, the dropdowns of sphinx-exercise) and
    :data:`TEACHER_ONLY` blocks are cut from every page, and
    :data:`PARTICIPANT_ONLY` blocks shown; :data:`ANSWER_PAGES` and their
    sources are left out and links to them removed; the search index keeps a
    term on a page only if the page still shows it; images no remaining page
    shows are dropped; ``_sources/notebooks/NN_slug.ipynb`` (what each chapter's
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
    searchable: dict[str, set[str]] = {}
    for path in files_under(html):
        name = path.relative_to(html).as_posix()
        if name in removed or name.startswith(removed_sources):
            continue
        if name.endswith(".html"):
            soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
            for block in soup.select(f"div.solution, .{TEACHER_ONLY}"):
                block.decompose()
            for block in soup.select(f".{PARTICIPANT_ONLY}"):
                block["class"] = [c for c in block["class"] if c != PARTICIPANT_ONLY]
                if not block["class"]:
                    del block["class"]
            _drop_links(soup, html, name, removed)
            for note in soup.select(f"details.{NOTE_CLASS}"):
                note.replace_with(BeautifulSoup(bundle_note(posixpath.splitext(name)[0]), "html.parser"))
            shown |= {_target(html, name, tag["src"]) for tag in soup.find_all(src=True)}
            searchable[name] = terms(_shown_text(soup))
            out[name] = str(soup).encode("utf-8")
        elif name == "searchindex.js":
            continue  # written below, once every page's text is known
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
    if (html / "searchindex.js").is_file():
        out["searchindex.js"] = restrict(
            (html / "searchindex.js").read_text(encoding="utf-8"), removed, searchable
        ).encode("utf-8")
    return out
