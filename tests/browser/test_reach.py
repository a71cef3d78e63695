"""Code and data within reach of every page (issue 23, item 9), read from the built site.

* the repository button and each chapter's "Run this chapter yourself" note
  link to ``repository.url`` of ``_config.yml``, and the note names the
  chapter's notebook beside the theme's ``.ipynb`` download;
* the references page links every data file, and each link's file in the
  site is the repository's file, byte for byte;
* the footer names the project.
"""

from __future__ import annotations

import html
from pathlib import Path

import pytest
import yaml
from site_support import PAGES, ROOT

from tools.site.browser import resolve, start_tags
from tools.sphinx.data_files import data_files
from tools.sphinx.run_note import INSTALL, PLACEHOLDER, bundle_commands, repository

pytestmark = pytest.mark.browser

REPOSITORY = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["repository"]["url"]
CHAPTERS = [page for page in PAGES if page.startswith("notebooks/")]


def links(site_dir: Path, page: str) -> list[str]:
    text = (site_dir / page).read_text(encoding="utf-8")
    return [attrs.get("href") or "" for tag, attrs in start_tags(text) if tag == "a"]


@pytest.mark.parametrize("page", CHAPTERS)
def test_each_chapter_says_how_to_run_it(site_dir, page):
    text = (site_dir / page).read_text(encoding="utf-8")
    notebook = page.removesuffix(".html") + ".ipynb"
    assert 'class="run-chapter"' in text, f"{page} has no 'Run this chapter yourself' note"
    hrefs = links(site_dir, page)
    if repository(REPOSITORY):  # a repository: its link, and a clone's two commands
        assert INSTALL in text and f"jupyter lab {notebook}" in text, f"{page}: the note lacks the two commands"
        assert hrefs.count(REPOSITORY) >= 2, f"{page}: repository button and note must link {REPOSITORY}"
    else:  # the placeholder: no link to it, and the workshop bundle's own commands
        commands = bundle_commands(page.removesuffix(".html"))
        assert all(html.escape(command) in text for command in commands), f"{page}: the note lacks {commands}"
        assert not any(PLACEHOLDER in href for href in hrefs), f"{page} links the placeholder repository"
    assert any(href.endswith("_sources/" + notebook) for href in hrefs), f"{page}: no .ipynb download"


def test_references_offer_every_data_file(site_dir):
    page = "book/references.html"
    targets = {
        resolve(site_dir, site_dir / page, href)[0]
        for href in links(site_dir, page)
        if resolve(site_dir, site_dir / page, href)
    }
    files = data_files(ROOT)
    assert len(files) >= 10
    for relative in files:
        copy = site_dir / relative
        assert copy in targets, f"{page} does not link {relative}"
        assert copy.read_bytes() == (ROOT / relative).read_bytes(), f"{copy} differs from the repository's"


def test_the_footer_names_the_project(site_dir):
    text = (site_dir / "book/intro.html").read_text(encoding="utf-8")
    assert "By the Twice the Devices project" in text
    assert "By The authors of" not in text
