"""The PDF edition (``make pdf``): every page in order, maths typeset, figures, bookmarks, fit.

Run after ``make pdf`` (``make test`` does), with the ``pdf`` marker. The PDF
is read with poppler-utils (``pdftotext``, ``pdfinfo``, ``pdftohtml``,
``pdfimages``; Debian package ``poppler-utils``, which ``.ci/run``
installs, with ``chromium`` and ``qpdf`` for ``make pdf``). Without them, or without Chromium to print the PDF, the tests
skip locally with a message and fail in CI (``$CI`` set). Without the PDF
they fail and say to run ``make pdf``. ``$BOOK_PDF`` points them at another
PDF (the single-page build is looked for in ``../singlehtml`` beside its
folder).

What they check, and why it can fail:

* the page count lies in a range set by the table of contents (a PDF cut
  short, or a layout that puts a line per page, falls outside);
* every page of the table of contents has its title in the text, in order,
  on the page its bookmark points to;
* no raw TeX (``\\frac``, ``$$``, ``\\begin``, ``\\(``, ``\\[``, ``$\\``) in
  the text, except inside code the notebooks show (MathJax did not run, or a
  formula was not written as maths);
* a bookmark for every part and, under it, every chapter;
* every image of the single-page build is in the PDF;
* every word lies inside the printable width (code or outputs running off
  the page), and nothing was clipped or fetched from another host (the report
  ``tools.pdf.build`` writes beside the PDF);
* a page number in every footer; the file is at most 25 MB (and, in CI,
  compressed by ``qpdf``).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import unicodedata
from pathlib import Path

import nbformat
import pytest
import yaml

from lib.serving import best, plan
from lib.transformer import PRESETS
from tools.pdf.build import PDF, report_path
from tools.pdf.page import MARGINS_MM, TITLE
from tools.prerequisites import require
from tools.site.browser import missing_chromium, toc_parts

pytestmark = pytest.mark.pdf

ROOT = Path(__file__).resolve().parents[2]
POPPLER = ("pdftotext", "pdfinfo", "pdftohtml", "pdfimages")
MAX_BYTES = 25 * 10**6
#: Fewest sheets a chapter notebook takes (the shortest has 12), and most per page of the contents.
MIN_PAGES_PER_CHAPTER, MAX_PAGES_PER_TOC_PAGE = 8, 25
#: Strings that are TeX source, never typeset maths.
RAW_TEX = ("\\frac", "$$", "\\begin", "\\(", "\\[", "$\\")
POINTS_PER_MM = 72 / 25.4
#: Rounding between CSS pixels and PDF points: text may end this far past the margin.
SLACK_PT = 2.0
#: One word of ``pdftotext -bbox`` output: x min, x max, the word.
WORD = re.compile(r'<word xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)" yMax="[\d.]+">(.*?)</word>')


def _pdf_path() -> Path:
    path = Path(os.environ.get("BOOK_PDF", ROOT / PDF))
    return path if path.is_absolute() else ROOT / path


def _run(*command: str | Path) -> str:
    return subprocess.run(
        [str(part) for part in command], check=True, capture_output=True, text=True, encoding="utf-8", errors="replace"
    ).stdout


def normalise(text: str) -> str:
    """Text as compared: NFKC (ligatures split), whitespace collapsed.

    >>> normalise("Split\\u00a0the  \\ufb01le\\n now")
    'Split the file now'
    """
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip()


def source_title(path: Path) -> str:
    """The ``# Title`` of a notebook or MyST page, inline markup dropped.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     page = Path(tmp) / "p.md"
    ...     _ = page.write_text("(lbl)=\\n# The `K`-device *budget* for $K$\\n\\ntext\\n")
    ...     source_title(page)
    'The K-device budget for K'
    """
    if path.suffix == ".ipynb":
        lines = [
            line
            for cell in nbformat.read(path, as_version=4).cells
            if cell.cell_type == "markdown"
            for line in cell.source.splitlines()
        ]
    else:
        lines = path.read_text(encoding="utf-8").splitlines()
    for line in lines:
        if line.startswith("# "):
            return normalise(re.sub(r"[`*$]", "", line[2:]))
    raise ValueError(f"{path} has no '# Title' line")


def toc_entries(toc_path: Path = ROOT / "_toc.yml") -> list[dict]:
    """Pages of the table of contents in order (:func:`tools.site.browser.toc_parts`).

    Each is a dict: ``file`` (its path, no suffix), ``part`` (the caption of
    its part, None for the root page), ``source`` (the notebook or MyST file),
    ``title`` and ``chapter`` (True for a notebook).
    """
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    entries = [
        {"file": page.removesuffix(".html"), "part": caption} for caption, pages in toc_parts(toc) for page in pages
    ]
    for entry in entries:
        source = next(ROOT.glob(entry["file"] + ".*"))
        entry["title"] = source_title(source)
        entry["chapter"] = source.suffix == ".ipynb"
        entry["source"] = source
    return entries


def parse_outline(xml: str) -> list[tuple[int, int, str]]:
    """``(depth, page, title)`` of each bookmark in ``pdftohtml -xml`` output, in order.

    >>> parse_outline('<outline><item page="1">A</item><outline><item page="2">B &amp; C</item>'
    ...               '</outline></outline>')
    [(0, 1, 'A'), (1, 2, 'B & C')]
    """
    start = xml.find("<outline>")
    entries, depth = [], -1
    for match in re.finditer(r'<outline>|</outline>|<item page="(\d+)">(.*?)</item>', xml[max(start, 0) :], re.S):
        token = match.group(0)
        if token == "<outline>":
            depth += 1
        elif token == "</outline>":
            depth -= 1
        else:
            entries.append((depth, int(match.group(1)), normalise(html.unescape(match.group(2)))))
    return entries


def parse_words(bbox: str) -> list[tuple[int, float, float, float, str]]:
    """``(page, page width, x min, x max, word)`` of every word in ``pdftotext -bbox`` output.

    >>> parse_words('<page width="595.0" height="842.0"><word xMin="42.5" yMin="1" xMax="60" '
    ...             'yMax="9">Hello</word></page>')
    [(1, 595.0, 42.5, 60.0, 'Hello')]
    """
    words = []
    for number, page in enumerate(re.findall(r"<page (.*?)</page>", bbox, re.S), start=1):
        width = float(re.search(r'width="([\d.]+)"', page).group(1))
        for match in re.finditer(WORD, page):
            x_min, x_max, word = float(match.group(1)), float(match.group(2)), html.unescape(match.group(3))
            words.append((number, width, x_min, x_max, word))
    return words


def shown_code(entries: list[dict]) -> str:
    """Every code cell and text output of the chapter notebooks, without whitespace."""
    parts = []
    for entry in entries:
        if entry["chapter"]:
            for cell in nbformat.read(entry["source"], as_version=4).cells:
                if cell.cell_type == "code":
                    parts.append(cell.source)
                    parts.extend(str(output.get("text", "")) for output in cell.get("outputs", []))
    return re.sub(r"\s+", "", "".join(parts))


@pytest.fixture(scope="module")
def pdf() -> Path:
    missing = [tool for tool in POPPLER if shutil.which(tool) is None]
    poppler = f"{', '.join(missing)} not found: install poppler-utils (`apt-get install -y poppler-utils`)."
    require(poppler if missing else None, locally="PDF tests skipped.", in_ci="CI must check the PDF.")
    path = _pdf_path()
    if not path.is_file():
        require(missing_chromium(), locally="No PDF without it: PDF tests skipped.", in_ci="CI must print the PDF.")
        pytest.fail(f"No PDF at {path}: run `make pdf` first (or set BOOK_PDF).")
    return path


@pytest.fixture(scope="module")
def entries() -> list[dict]:
    return toc_entries()


@pytest.fixture(scope="module")
def pages_text(pdf: Path) -> list[str]:
    """The text of each page (``pdftotext``), normalised."""
    return [normalise(page) for page in _run("pdftotext", pdf, "-").split("\f")[:-1]]


@pytest.fixture(scope="module")
def outline(pdf: Path) -> list[tuple[int, int, str]]:
    return parse_outline(_run("pdftohtml", "-xml", "-i", "-q", "-stdout", pdf))


@pytest.fixture(scope="module")
def report(pdf: Path) -> dict:
    path = report_path(pdf)
    if not path.is_file():
        pytest.fail(f"No report at {path}: run `make pdf` again.")
    return json.loads(path.read_text(encoding="utf-8"))


def test_size(pdf: Path) -> None:
    assert pdf.stat().st_size <= MAX_BYTES, f"{pdf} is {pdf.stat().st_size / 1e6:.1f} MB"


def test_page_count_in_range(pdf: Path, pages_text: list[str], entries: list[dict]) -> None:
    info = _run("pdfinfo", pdf)
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))
    chapters = sum(entry["chapter"] for entry in entries)
    low = MIN_PAGES_PER_CHAPTER * chapters + len(entries) - chapters
    high = MAX_PAGES_PER_TOC_PAGE * len(entries)
    assert low <= pages <= high, f"{pages} pages, expected {low} to {high}"
    assert len(pages_text) == pages


def test_page_numbers_in_every_footer(pages_text: list[str]) -> None:
    total = len(pages_text)
    missing = [
        number
        for number, text in enumerate(pages_text, start=1)
        if not re.search(rf"(?<!\d){number} / {total}(?!\d)", text)
    ]
    assert not missing, f"no 'N / {total}' at the foot of pages {missing[:10]}"


def test_no_blank_page(pages_text: list[str]) -> None:
    """A page with nothing but its footer: some element spilled past a chapter's last page."""
    total = len(pages_text)
    blank = [
        number
        for number, text in enumerate(pages_text, start=1)
        if not text.replace(normalise(TITLE), "").replace(f"{number} / {total}", "").strip()
    ]
    assert not blank, f"pages with nothing but the footer: {blank}"


def test_every_page_of_the_contents_in_order(entries: list[dict], outline: list, pages_text: list[str]) -> None:
    at, last_page = -1, 0
    for entry in entries:
        found = [
            index
            for index, (_, _, title) in enumerate(outline)
            if index > at and re.fullmatch(r"(\d+\. )?" + re.escape(entry["title"]), title)
        ]
        assert found, f"no bookmark {entry['title']!r} after {outline[at][2] if at >= 0 else 'the start'!r}"
        at = found[0]
        page = outline[at][1]
        assert page >= last_page, f"{entry['title']!r} on page {page}, before page {last_page}"
        assert entry["title"] in pages_text[page - 1], f"{entry['title']!r} is not on page {page}"
        last_page = page


def test_planner_prints_its_own_starting_scenario(entries: list[dict], outline: list, pages_text: list[str]) -> None:
    """The PDF's single page also holds the calculator: the planner must not take its address."""
    titles = [entry["title"] for entry in entries]
    after = titles[titles.index("Layout planner") + 1]
    start, end = (
        next(page for _, page, title in outline if re.fullmatch(r"(\d+\. )?" + re.escape(name), title))
        for name in ("Layout planner", after)
    )
    printed = normalise(" ".join(pages_text[start - 1 : end]))
    want = best(plan(PRESETS["llama-3-70b"], "h100-sxm", 8, 64, 1024, 256)).name
    assert f"Best layout: {want}" in printed


def test_bookmark_per_part_and_chapter(entries: list[dict], outline: list) -> None:
    parts = {}
    for depth, _, title in outline:
        if depth == 0:
            current = parts.setdefault(title, [])
        elif depth == 1 and parts:
            current.append(title)
    for entry in entries:
        if entry["part"]:
            assert normalise(entry["part"]) in parts, f"no top-level bookmark for {entry['part']!r}"
            chapters = parts[normalise(entry["part"])]
            assert any(re.fullmatch(r"(\d+\. )?" + re.escape(entry["title"]), title) for title in chapters), (
                f"no bookmark {entry['title']!r} under {entry['part']!r}: {chapters}"
            )
    assert len(outline) > 3 * len(entries), "bookmarks for sections are missing"


def test_no_raw_tex(pdf: Path, entries: list[dict]) -> None:
    code = shown_code(entries)
    raw = []
    for number, page in enumerate(_run("pdftotext", "-layout", pdf, "-").split("\f"), start=1):
        for line in page.splitlines():
            if any(tex in line for tex in RAW_TEX) and re.sub(r"\s+", "", line) not in code:
                raw.append(f"page {number}: {line.strip()}")
    assert not raw, "raw TeX in the text:\n" + "\n".join(raw[:20])


def test_every_image(pdf: Path, report: dict, entries: list[dict]) -> None:
    single = pdf.parent.parent / "singlehtml" / (entries[0]["file"] + ".html")
    if not single.is_file():
        pytest.fail(f"No single-page build at {single}: run `make pdf`.")
    sources = re.findall(r'<img [^>]*src="([^"]+)"', single.read_text(encoding="utf-8"))
    raster = [src for src in sources if not re.search(r"\.svg([?#]|$)", src)]
    listed = _run("pdfimages", "-list", pdf).splitlines()[2:]
    assert raster and report["raster_images"] == len(raster)
    assert len(listed) >= len(raster), f"{len(listed)} images in the PDF, {len(raster)} in the book"


def test_nothing_runs_off_the_page(pdf: Path, report: dict) -> None:
    assert report["overflow"] == [], "blocks wider than the page or clipped:\n" + "\n".join(report["overflow"][:20])
    left = MARGINS_MM["left"] * POINTS_PER_MM - SLACK_PT
    outside = [
        f"page {page}: {word!r} at x {x0:.0f} to {x1:.0f} pt"
        for page, width, x0, x1, word in parse_words(_run("pdftotext", "-bbox", pdf, "-"))
        if x0 < left or x1 > width - MARGINS_MM["right"] * POINTS_PER_MM + SLACK_PT
    ]
    assert not outside, "text outside the printable width:\n" + "\n".join(outside[:20])


def test_printed_offline_and_compressed(report: dict) -> None:
    assert report["offsite_requests"] == [], "requests to other hosts while printing"
    if os.environ.get("CI"):
        assert report["compressed"], "qpdf did not compress the PDF"
