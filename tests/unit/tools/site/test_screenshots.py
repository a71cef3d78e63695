"""Tests for tools.site.screenshots: the screenshots' file names."""

from __future__ import annotations

from pathlib import Path

from tools.site import browser, screenshots

ROOT = Path(__file__).resolve().parents[4]


def test_shot_names_are_distinct_per_page_and_width():
    pages = browser.toc_pages(ROOT / "_toc.yml")
    names = {screenshots.shot_name(p, w) for p in pages for w in screenshots.WIDTHS}
    assert len(names) == len(pages) * len(screenshots.WIDTHS)
    assert all("/" not in name and name.endswith(".png") for name in names)
