"""The book on one page: every rule quotes a number a chapter computes, and the intro and cheat sheet link to it."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "book" / "one_page.md"
GLUE = re.compile(r"\{glue:text\}`\.\./(notebooks/[\w.]+\.ipynb)::(\w+)(?::[^`]*)?`")


def _rules() -> list[tuple[str, str]]:
    text = PAGE.read_text(encoding="utf-8")
    parts = re.split(r"(?m)^## (\d+\. .*)$", text)
    return list(zip(parts[1::2], parts[2::2]))


def _glued(notebook: str) -> set[str]:
    """The glue keys the committed, executed notebook stores."""
    nb = nbformat.read(ROOT / notebook, as_version=4)
    return {
        out.get("metadata", {}).get("scrapbook", {}).get("name")
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
    }


def test_the_page_has_numbered_rules_each_with_a_glued_number():
    rules = _rules()
    assert len(rules) >= 4
    for title, body in rules:
        assert GLUE.search(body), f"rule {title!r} quotes no glued number"


@pytest.mark.parametrize("notebook,key", sorted({m.groups() for m in GLUE.finditer(PAGE.read_text("utf-8"))}))
def test_every_glued_number_is_glued_by_its_chapter(notebook, key):
    assert key in _glued(notebook), (notebook, key)


def test_the_intro_and_the_cheat_sheet_link_to_it():
    assert "(one-page)=" in PAGE.read_text(encoding="utf-8")
    for page in ("intro.md", "cheatsheet.md"):
        assert "{ref}`one-page`" in (ROOT / "book" / page).read_text(encoding="utf-8"), page
    assert "book/one_page" in (ROOT / "_toc.yml").read_text(encoding="utf-8")
