"""Tests for tools.site.pageweight: what a page names, how much it weighs, the report."""

from __future__ import annotations

import gzip
from pathlib import Path

from tools.site import pageweight


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
    files = [
        site / "book" / "page.html",
        site / "_static" / "app.js",
        site / "_static" / "styles" / "theme.css",
        site / "_static" / "base.css",
        site / "_static" / "fig.png",
    ]
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
