"""Unit tests of the pure parts of the browser tooling (no browser, no built book needed).

tools/site/browser.py (table of contents), tools/site/pageweight.py (what a page names,
how much it weighs), tools/site/screenshots.py (file names) and tools/sphinx/html_tweaks.py
(which assets a page keeps, ARIA fixes).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import yaml

from tools.site import browser, pageweight, screenshots
from tools.sphinx import html_tweaks

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


def test_shot_names_are_distinct_per_page_and_width():
    pages = browser.toc_pages(ROOT / "_toc.yml")
    names = {screenshots.shot_name(p, w) for p in pages for w in screenshots.WIDTHS}
    assert len(names) == len(pages) * len(screenshots.WIDTHS)
    assert all("/" not in name and name.endswith(".png") for name in names)


def _site(tmp_path: Path) -> Path:
    (tmp_path / "_static" / "styles").mkdir(parents=True)
    (tmp_path / "book").mkdir()
    (tmp_path / "index.html").write_text("<html></html>")
    (tmp_path / "_static" / "base.css").write_text("b" * 300)
    (tmp_path / "_static" / "styles" / "theme.css").write_text('@import "../base.css";' + "t" * 78)
    (tmp_path / "_static" / "app.js").write_text("j" * 1000)
    (tmp_path / "_static" / "fig.png").write_bytes(b"p" * 500)
    (tmp_path / "book" / "page.html").write_text(
        '<link rel="stylesheet" href="../_static/styles/theme.css?digest=1">'
        '<script src="../_static/app.js?v=2"></script><script src="../_static/app.js?v=2"></script>'
        '<img src="../_static/fig.png" alt="a figure"><img src="data:image/png;base64,AAAA" alt="inline">'
        '<script src="../_static/missing.js"></script>'
    )
    return tmp_path


def test_weigh_counts_each_file_once_with_imports(tmp_path):
    site = _site(tmp_path)
    weight = pageweight.weigh(site, "book/page.html")
    html_bytes = (site / "book" / "page.html").stat().st_size
    assert weight.bytes == {"html": html_bytes, "scripts": 1000, "styles": 100 + 300, "images": 500}
    assert weight.total == html_bytes + 1900
    assert weight.missing == ["../_static/missing.js"]
    files = [site / "book" / "page.html", site / "_static" / "app.js", site / "_static" / "styles" / "theme.css",
             site / "_static" / "base.css", site / "_static" / "fig.png"]
    assert weight.compressed == sum(len(gzip.compress(f.read_bytes(), 6, mtime=0)) for f in files)


def test_report_marks_pages_over_budget(tmp_path):
    small = pageweight.PageWeight("small.html", {"html": 10, "scripts": 0, "styles": 0, "images": 0})
    big = pageweight.PageWeight("big.html", {"html": 10, "scripts": 2_000_000, "styles": 0, "images": 0})
    report = pageweight.format_report([small, big], top=1, budget=1.5e6)
    lines = report.splitlines()
    assert "over budget" in next(line for line in lines if line.startswith("big.html"))
    assert "over budget" not in next(line for line in lines if line.startswith("small.html"))
    heaviest = lines[lines.index("Heaviest pages:") + 1]
    assert "big.html" in heaviest
    assert "1 of 2 pages over the budget" in report


def test_calculator_assets_stay_on_their_page():
    for name in ("calculator.js", "calculator.css"):
        assert html_tweaks.keep(f"_static/{name}?v=1", "book/calculator")
        assert not html_tweaks.keep(f"_static/{name}?v=1", "notebooks/03_break_even")
    assert html_tweaks.keep("_static/doctools.js", "notebooks/03_break_even")


def test_the_shared_scenario_link_loads_on_both_tools_and_nowhere_else():
    for page in ("book/calculator", "book/planner"):
        assert html_tweaks.keep("_static/scenario-link.js?v=1", page)
    assert not html_tweaks.keep("_static/scenario-link.js?v=1", "notebooks/03_break_even")


def test_bibliography_entries_become_list_items():
    body = '<div role="list" class="citation-list"><div class="citation" role="doc-biblioentry">A</div></div>'
    fixed = html_tweaks.fix_roles(body)
    assert 'role="doc-biblioentry"' not in fixed
    assert fixed.count('role="listitem"') == 1


def test_toc_parts_give_each_page_its_part_caption():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    parts = browser.toc_parts(toc)
    assert parts[0] == (None, [toc["root"] + ".html"])
    assert [caption for caption, _ in parts[1:]] == [part["caption"] for part in toc["parts"]]
    assert [page for _, pages in parts for page in pages] == browser.toc_pages_from(toc)


def test_toc_parts_without_parts_put_the_chapters_after_the_root():
    toc = {"root": "intro", "chapters": [{"file": "a"}, {"url": "https://example.org", "title": "x"}]}
    assert browser.toc_parts(toc) == [(None, ["intro.html", "a.html"])]
