"""The room's handouts printed at their own ``@page`` margins, on A4 and on Letter, by headless Chromium.

* The cheat sheet: one page on either paper, no text below 8 pt. Its
  formulas (MathJax's glyphs, drawn as Type 3 fonts, which poppler reports
  as "Times") are set at 8 pt or more; their sub- and superscripts are at
  MathJax's script sizes of that, which this test leaves out.
* The exercise sheet: its text keeps at least 12 mm from every edge of the
  paper (its ``@page`` margins are 15 mm, 18 mm at the foot), and no
  exercise is split from its answer box across sheets.

Font sizes are read with poppler's ``pdftohtml -xml`` at zoom 3 (its
largest), so to a third of a point; margins with ``pdftotext -bbox``.
Printed as :mod:`tools.pdf.build` prints, offline, with Playwright's
``page.pdf(prefer_css_page_size=True)``, so a ``size`` in ``@page`` would win
over the paper asked for (the test checks the paper of each PDF).
"""

from __future__ import annotations

import collections
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tools.prerequisites import require

pytestmark = pytest.mark.browser

PAPERS = {"A4": (595, 842), "Letter": (612, 792)}  # points
MIN_PT = 8.0
MM = 72 / 25.4  # points per millimetre
_ZOOM = 3  # pdftohtml's largest zoom: sizes to a third of a point
_MATH = "Times"  # how pdftohtml names the Type 3 fonts MathJax's glyphs print as


def _print(printed, path: str, paper: str, target: Path) -> Path:
    """Print ``path`` to ``target`` as Ctrl+P would on ``paper``: the page's print styles and ``@page`` rules.

    The printout is the run's one of that page on that paper (the ``printed`` fixture: test_print.py reads
    the A4 ones too).
    """
    require(
        None if shutil.which("pdftohtml") else "pdftohtml not found: install poppler-utils.",
        "Handout tests skipped.",
        "CI must measure the printed handouts.",
    )
    target.write_bytes(printed(path, paper).pdf)
    return target


def _paper(width: float, height: float) -> str | None:
    """The name in :data:`PAPERS` of a page of ``width`` by ``height`` points (Chromium rounds to 1/100 inch)."""
    return next((name for name, (w, h) in PAPERS.items() if abs(w - width) < 2 and abs(h - height) < 2), None)


def _run(*command: str) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def _pages(pdf: Path) -> list[tuple[float, float, list[tuple[float, float, float, float, str]]]]:
    """Each page's width and height (points) and its words, each as ``(x0, y0, x1, y1, word)``."""
    xml = _run("pdftotext", "-bbox", str(pdf), "-")
    pages = []
    for width, height, body in re.findall(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', xml, re.DOTALL):
        words = [
            (float(a), float(b), float(c), float(d), w)
            for a, b, c, d, w in re.findall(
                r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*?)</word>', body
            )
        ]
        pages.append((float(width), float(height), words))
    return pages


def _font_sizes(pdf: Path) -> collections.Counter:
    """Characters printed at each (size in points, font family)."""
    xml = _run("pdftohtml", "-xml", "-i", "-stdout", "-zoom", str(_ZOOM), str(pdf))
    fonts = {
        i: (int(size) / _ZOOM, family.split("+")[-1])
        for i, size, family in re.findall(r'<fontspec id="(\d+)" size="(\d+)" family="([^"]+)"', xml)
    }
    counts: collections.Counter = collections.Counter()
    for font, text in re.findall(r'font="(\d+)">(.*?)</text>', xml):
        counts[fonts[font]] += len(re.sub(r"<[^>]+>", "", text))
    return counts


@pytest.mark.parametrize("paper", sorted(PAPERS))
def test_cheat_sheet_is_one_page_with_no_text_below_8_pt(printed, tmp_path, paper):
    pdf = _print(printed, "book/cheatsheet.html", paper, tmp_path / "cheatsheet.pdf")
    pages = _pages(pdf)
    assert {_paper(w, h) for w, h, _ in pages} == {paper}, "the sheet set its own paper size"
    assert len(pages) == 1, f"the cheat sheet prints on {len(pages)} {paper} pages"
    sizes = _font_sizes(pdf)
    text, maths = collections.Counter(), collections.Counter()
    for (size, family), n in sizes.items():
        (maths if family == _MATH else text)[size] += n
    assert sum(text.values()) > 3000, "too little text measured: is the sheet printed?"
    assert min(text) >= MIN_PT, f"text at {sorted(s for s in text if s < MIN_PT)} pt on the {paper} cheat sheet"
    body = maths.most_common(1)[0][0]
    assert body >= MIN_PT, f"the formulas are set at {body:.1f} pt on the {paper} cheat sheet"


@pytest.mark.parametrize("paper", sorted(PAPERS))
def test_exercise_sheet_keeps_its_margins_and_each_exercise_whole(printed, tmp_path, paper):
    pdf = _print(printed, "book/exercise-sheet.html", paper, tmp_path / "sheet.pdf")
    pages = _pages(pdf)
    assert len(pages) >= 2 and {_paper(w, h) for w, h, _ in pages} == {paper}
    found = 0
    for number, (width, height, words) in enumerate(pages, 1):
        x0, y0 = min(w[0] for w in words), min(w[1] for w in words)
        x1, y1 = max(w[2] for w in words), max(w[3] for w in words)
        edge = min(x0, y0, width - x1, height - y1) / MM
        assert edge >= 12, f"{paper} page {number}: text {edge:.1f} mm from the edge of the paper"
        text = " ".join(w[4] for w in words)
        exercises, answers = len(re.findall(r"Exercise \d+\.\d+", text)), text.count("Your answer:")
        assert exercises == answers, f"{paper} page {number}: an exercise and its answer box are on different sheets"
        found += exercises
    assert found >= 10, f"{found} exercises found on the {paper} sheet"
