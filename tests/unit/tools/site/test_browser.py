"""Tests for tools.site.browser: the table of contents' pages and parts, and the local server (no browser needed)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tools.site import browser

ROOT = Path(__file__).resolve().parents[4]


def test_toc_pages_cover_every_file_of_the_real_toc():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = {toc["root"]}
    files |= {c["file"] for part in toc["parts"] for c in part["chapters"] if "file" in c}
    pages = browser.toc_pages(ROOT / "_toc.yml")
    assert sorted(pages) == sorted(f + ".html" for f in files)
    assert len(pages) == len(set(pages)), "a page is listed twice"
    assert pages[0] == toc["root"] + ".html", "reading order must start at the root"


def test_toc_pages_follow_nested_sections():
    toc = {"root": "intro", "chapters": [{"file": "a", "sections": [{"file": "a1", "sections": [{"file": "a1x"}]}]}]}
    assert browser.toc_pages_from(toc) == ["intro.html", "a.html", "a1.html", "a1x.html"]


def test_serve_answers_on_localhost(tmp_path):
    import urllib.request

    (tmp_path / "index.html").write_text("<p>hello</p>")
    with browser.serve(tmp_path) as base:
        assert base.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(base + "index.html", timeout=10) as response:
            assert response.read() == b"<p>hello</p>"


def test_toc_parts_give_each_page_its_part_caption():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    parts = browser.toc_parts(toc)
    assert parts[0] == (None, [toc["root"] + ".html"])
    assert [caption for caption, _ in parts[1:]] == [part["caption"] for part in toc["parts"]]
    assert [page for _, pages in parts for page in pages] == browser.toc_pages_from(toc)


def test_toc_parts_without_parts_put_the_chapters_after_the_root():
    toc = {"root": "intro", "chapters": [{"file": "a"}, {"url": "https://example.org", "title": "x"}]}
    assert browser.toc_parts(toc) == [(None, ["intro.html", "a.html"])]
