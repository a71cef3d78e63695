"""tools.participant_html follows links as a browser does: escaped and folder links to the answers go too.

The solutions, search index and student notebooks of the participant book are
tested in ``tests/test_student.py``; here only the link and image resolution.
"""

from __future__ import annotations

from pathlib import Path

from tools.participant_html import ANSWER_PAGES, participant_html


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
        '<img src="../_images/a%20b.png" alt=""><img src="data:image/png;base64,AA" alt="">')
    return html


def test_escaped_links_to_answer_pages_are_removed(tmp_path):
    files = participant_html(_site(tmp_path))
    page = files["book/page.html"].decode()
    assert "answers" not in page.lower() and "<p>Also here.</p>" in page
    assert ANSWER_PAGES[0] not in files


def test_images_shown_through_escaped_addresses_stay(tmp_path):
    files = participant_html(_site(tmp_path))
    assert "_images/a b.png" in files and "_images/unused.png" not in files
