"""tools.teaching.participant_html follows links as a browser does; the participant copy of the book keeps its promises.

The solutions, search index and student notebooks of the participant book are
tested on a miniature site in ``tests/book/test_student.py``; here the link and
image resolution, and (after ``make book``) the real site: no teacher's
guide, and no search term that only a solution uses.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tools.sphinx.run_note import PLACEHOLDER
from tools.teaching.participant_html import ANSWER_PAGES, _shown_text, participant_html
from tools.teaching.search_index import parse, terms

ROOT = Path(__file__).resolve().parents[2]


def _site(tmp_path: Path) -> Path:
    html = tmp_path / "html"
    (html / "book" / "answers").mkdir(parents=True)
    (html / "_images").mkdir()
    (html / ANSWER_PAGES[0]).write_text("<p>42</p>")
    (html / "_images" / "a b.png").write_bytes(b"png")
    (html / "_images" / "unused.png").write_bytes(b"png")
    (html / "book" / "page.html").write_text(
        '<ul><li><a href="answers%2Ehtml#q1">Answers</a></li></ul>'
        '<p>Also <a href="./answers.html?x=1">here</a>.</p>'
        '<img src="../_images/a%20b.png" alt=""><img src="data:image/png;base64,AA" alt="">'
    )
    return html


def test_escaped_links_to_answer_pages_are_removed(tmp_path):
    files = participant_html(_site(tmp_path))
    page = files["book/page.html"].decode()
    assert "answers" not in page.lower() and "<p>Also here.</p>" in page
    assert ANSWER_PAGES[0] not in files


def test_images_shown_through_escaped_addresses_stay(tmp_path):
    files = participant_html(_site(tmp_path))
    assert "_images/a b.png" in files and "_images/unused.png" not in files


@pytest.mark.browser
def test_participant_copy_of_the_built_book_has_no_guide_and_no_solution_only_search_term():
    """After `make book`: the participant site lacks the teacher's guide, its search index names no teacher's
    page, and it finds no word that only a solution uses (Sphinx's own terms: tools.teaching.search_index.terms).

    Marked ``browser`` so that ``make test`` runs it after the book build.
    """
    from bs4 import BeautifulSoup

    html = ROOT / "_build" / "html"
    if not (html / "index.html").is_file():
        pytest.fail("No built book at _build/html: run `make book` first.")
    files = participant_html(html)
    assert not set(ANSWER_PAGES) & set(files)
    pages = {
        name: BeautifulSoup(data.decode("utf-8"), "html.parser")
        for name, data in files.items()
        if name.endswith(".html") and isinstance(data, bytes)
    }
    linking = [
        name
        for name, soup in pages.items()
        if any(a["href"].split("#")[0].endswith("workshop.html") for a in soup.find_all("a", href=True))
    ]
    assert not linking, f"pages still link to the teacher's guide: {linking}"
    assert not any("Common stumbling points" in soup.get_text() for soup in pages.values())

    solutions = set()
    for path in html.rglob("*.html"):
        for block in BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser").select("div.solution"):
            solutions |= terms(block.get_text(" ")) | terms(block.get_text(""))
    shown = set().union(*(terms(_shown_text(soup)) for soup in pages.values()))
    solution_only = solutions - shown
    teacher = parse((html / "searchindex.js").read_text(encoding="utf-8"))[1]
    assert solution_only & set(teacher["terms"]), "no solution-only term in the book's index: nothing tested"
    participant = parse(files["searchindex.js"].decode("utf-8"))[1]
    leaked = solution_only & (set(participant["terms"]) | set(participant["titleterms"]))
    assert not leaked, f"the participant search finds words only solutions use: {sorted(leaked)[:20]}"
    for page in ANSWER_PAGES:
        doc = teacher["docnames"].index(page.removesuffix(".html"))
        title = teacher["titles"][doc]
        assert page.removesuffix(".html") not in participant["docnames"], f"{page} is still a search document"
        assert teacher["filenames"][doc] not in participant["filenames"] and title not in participant["titles"], page
    assert len(participant["docnames"]) == len(participant["titles"]) == len(participant["filenames"])
    assert len(participant["docnames"]) == len(teacher["docnames"]) - len(ANSWER_PAGES)
    count = len(participant["docnames"])
    for key in ("terms", "titleterms"):
        for docs in participant[key].values():
            assert all(0 <= doc < count for doc in (docs if isinstance(docs, list) else [docs]))


@pytest.mark.browser
def test_no_built_file_holds_the_repository_placeholder():
    """After `make book` with ``repository.url`` as shipped: no page, script or source links to the placeholder.

    tools.sphinx.run_note turns the theme's repository button off and points
    the chapters' notes to the download and the bundle while it is unset.
    """
    html = ROOT / "_build" / "html"
    if not (html / "index.html").is_file():
        pytest.fail("No built book at _build/html: run `make book` first.")
    checked, holding = 0, []
    for path in html.rglob("*"):
        if path.suffix in (".html", ".js", ".txt", ".md", ".ipynb", ".json") and path.is_file():
            checked += 1
            if PLACEHOLDER in path.read_text(encoding="utf-8", errors="replace"):
                holding.append(path.relative_to(html).as_posix())
    assert checked > 50 and not holding, f"{PLACEHOLDER} in {holding[:10]}"


#: Words that mark an address nobody filled in: the repository placeholder, and the example ones of the pages.
PLACEHOLDER_WORDS = re.compile(r"OWNER|your-org|YOUR-ORG|YOUR_ORG|example\.com|<user>", re.IGNORECASE)


@pytest.mark.browser
def test_no_built_link_points_at_a_placeholder():
    """No ``href`` or ``src`` of the built site names a placeholder: an example such as ``your-org`` is text."""
    html = ROOT / "_build" / "html"
    if not (html / "index.html").is_file():
        pytest.fail("No built book at _build/html: run `make book` first.")
    pages = list(html.rglob("*.html"))
    links = [
        (page.relative_to(html).as_posix(), address)
        for page in pages
        for address in re.findall(r'(?:href|src)="([^"]*)"', page.read_text(encoding="utf-8", errors="replace"))
    ]
    assert len(pages) > 20 and len(links) > 1000, (len(pages), len(links))
    bad = [(page, address) for page, address in links if PLACEHOLDER_WORDS.search(address)]
    assert not bad, bad[:10]
