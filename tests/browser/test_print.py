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
from tools.teaching.workshop_plan import load

pytestmark = pytest.mark.browser


def _printed(printed, path: str, target: Path) -> tuple[int, str]:
    """Print ``path`` to ``target`` as a reader's Ctrl+P would (the page's own print styles, A4); pages and text.

    The printout is the run's one of that page on A4 (the ``printed`` fixture: test_handouts.py reads it too).
    """
    require(
        None if shutil.which("pdfinfo") else "pdfinfo not found: install poppler-utils.",
        "Print tests skipped.",
        "CI must count the printed pages.",
    )
    printout = printed(path, "A4")
    target.write_bytes(printout.pdf)
    assert not [u for u in printout.requests if not u.startswith(printout.base)], printout.requests
    info = subprocess.run(["pdfinfo", str(target)], capture_output=True, text=True, check=True).stdout
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.MULTILINE).group(1))
    text = subprocess.run(["pdftotext", "-layout", str(target), "-"], capture_output=True, text=True).stdout
    return pages, text


def test_cheat_sheet_prints_on_one_a4_page(printed, tmp_path):
    pages, text = _printed(printed, "book/cheatsheet.html", tmp_path / "cheatsheet.pdf")
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


def test_exercise_sheet_prints_each_session_with_its_exercises(printed, tmp_path):
    pages, text = _printed(printed, "book/exercise-sheet.html", tmp_path / "sheet.pdf")
    agendas = load()
    sets = {agenda.key: [label for _, step in agenda.steps("set") for label in step.exercises] for agenda in agendas}
    assert pages >= 2, "the two sessions do not start on sheets of their own"
    assert text.count("Your answer:") == sum(map(len, sets.values())), "an exercise lost its answer box"
    assert "Solution" not in text
