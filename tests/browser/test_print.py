"""The room's handouts, printed as the teacher prints them: the system Chromium's print to PDF, A4.

* The cheat sheet prints on exactly one A4 page (what the guide and the page
  promise), with every section of formulas in it.
* The exercise sheet prints each session on sheets of its own, with every
  exercise the session sets.

Pages are counted with ``pdfinfo`` (poppler-utils): without it these tests
skip locally with a message and fail in CI, as the PDF tests do.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tools.prerequisites import require
from tools.site.browser import offline_context, wait_for_mathjax
from tools.teaching.workshop_plan import load

pytestmark = pytest.mark.browser


def _printed(browser, url: str, target: Path) -> tuple[int, str]:
    """Print ``url`` to ``target`` as a reader's Ctrl+P would (the page's own print styles, A4); pages and text."""
    require(
        None if shutil.which("pdfinfo") else "pdfinfo not found: install poppler-utils.",
        "Print tests skipped.",
        "CI must count the printed pages.",
    )
    with offline_context(browser) as context:
        page = context.new_page()
        page.goto(url)
        wait_for_mathjax(page)
        page.emulate_media(media="print")
        page.pdf(path=str(target), format="A4", prefer_css_page_size=True, print_background=True)
        assert not [u for u in context.requests if not u.startswith(url.split("/book/")[0])], context.requests
    info = subprocess.run(["pdfinfo", str(target)], capture_output=True, text=True, check=True).stdout
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.MULTILINE).group(1))
    text = subprocess.run(["pdftotext", "-layout", str(target), "-"], capture_output=True, text=True).stdout
    return pages, text


def test_cheat_sheet_prints_on_one_a4_page(browser, base_url, tmp_path):
    pages, text = _printed(browser, base_url + "book/cheatsheet.html", tmp_path / "cheatsheet.pdf")
    assert pages == 1, f"the cheat sheet prints on {pages} A4 pages; the guide promises one"
    for section in (
        "Splitting a matrix",
        "One phase, whole or split",
        "Break-even",
        "Collectives",
        "Tensor parallelism",
        "Serving many users",
        "Pipelines",
        "Choosing a split",
        "units",
    ):
        assert section in text, f"{section!r} is missing from the printed cheat sheet"


def test_exercise_sheet_prints_each_session_with_its_exercises(browser, base_url, tmp_path):
    pages, text = _printed(browser, base_url + "book/exercise-sheet.html", tmp_path / "sheet.pdf")
    agendas = load()
    sets = {agenda.key: [label for _, step in agenda.steps("set") for label in step.exercises] for agenda in agendas}
    assert pages >= 2, "the two sessions do not start on sheets of their own"
    assert text.count("Your answer:") == sum(map(len, sets.values())), "an exercise lost its answer box"
    assert "Solution" not in text
