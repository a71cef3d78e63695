"""The workshop guide's sizes are the bundle's: measured by the release tools, shown by tools.sphinx.bundle_sizes.

Here the bundles are built (tools.release.dist, from a miniature site), the
wheels measured (tools.release.wheels, a folder of stand-in wheels), and the
guide's own paragraphs that quote a size are built with Sphinx against those
files; every figure on the page must be the one measured from the files of
this run.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path

import pytest

from tools.release import dist, wheels
from tools.sphinx import bundle_sizes

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "book" / "workshop.md"
UNITS = {"MB": 1e6, "GB": 1e9}


def _guide_paragraphs() -> str:
    """The guide's blocks (blank-line separated) that use the role or the directive, with ``{ref}`` made plain."""
    blocks = re.split(r"\n\s*\n", GUIDE.read_text(encoding="utf-8"))
    chosen = [block for block in blocks if "{bundle-size" in block]
    return re.sub(r"\{ref\}`([^`<]*?)(?: <[^`]*>)?`", r"\1", "\n\n".join(chosen))


def _pdf(path: Path, pages: int) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    with PdfPages(path) as pdf:
        for page in range(pages):
            figure = plt.figure()
            figure.text(0.5, 0.5, f"page {page + 1}")
            pdf.savefig(figure)
            plt.close(figure)
    return path


def _site(tmp_path: Path) -> tuple[Path, Path]:
    html, student = tmp_path / "html", tmp_path / "student"
    (html / "book").mkdir(parents=True)
    student.mkdir()
    (html / "index.html").write_text("<html><p>" + "book " * 20_000 + "</p></html>")
    (html / "book" / "workshop.html").write_text("<html><p>guide</p></html>")
    (student / "01_splitting_a_matrix.ipynb").write_text('{"cells": []}')
    return html, student


def _build_page(tmp_path: Path, files: dict[str, str]) -> str:
    """The guide's size paragraphs built to HTML by Sphinx with the extension reading ``files``."""
    from sphinx.application import Sphinx

    source = tmp_path / "book"
    source.mkdir()
    (source / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
        "extensions = ['myst_parser', 'tools.sphinx.bundle_sizes']\n"
        f"bundle_sizes_files = {files!r}\n"
    )
    (source / "index.md").write_text("# Sizes\n\n" + _guide_paragraphs() + "\n")
    app = Sphinx(
        str(source),
        str(source),
        str(tmp_path / "out"),
        str(tmp_path / "doctrees"),
        "html",
        status=None,
        warning=None,
        freshenv=True,
    )
    app.build()
    return (tmp_path / "out" / "index.html").read_text(encoding="utf-8")


def _figures(page: str) -> dict[str, set[str]]:
    from bs4 import BeautifulSoup

    shown: dict[str, set[str]] = {}
    for span in BeautifulSoup(page, "html.parser").select("span.bundle-size"):
        key = next(name for name in span["class"] if name != "bundle-size")
        shown.setdefault(key, set()).add(span.get_text())
    return shown


def _close(text: str, count: float) -> bool:
    """Whether a size in words (``18.6 MB``) is ``count`` bytes to the precision it is written with."""
    number, unit = text.split()
    digits = len(number.partition(".")[2])
    return abs(float(number) * UNITS[unit] - count) <= 0.5 * 10**-digits * UNITS[unit] + 1


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """Bundles, a PDF and wheels made in this run, their sizes files, and the guide built against them."""
    tmp_path = tmp_path_factory.mktemp("sizes")
    html, student = _site(tmp_path)
    target = tmp_path / "dist"
    participant = dist.build_zip(target, root=ROOT, html=html, student=student)
    teacher = dist.build_zip(target, root=ROOT, kind="teacher", html=html, student=student, full=student)
    pdf = _pdf(tmp_path / "book.pdf", pages=3)
    dist.write_sizes(target, participant, teacher, pdf)
    folder = tmp_path / "wheels"
    folder.mkdir()
    (folder / "numpy-2.4.6-cp312-cp312-win_amd64.whl").write_bytes(b"n" * 3_000_000)
    (folder / "torch-2.13.0-cp312-cp312-win_amd64.whl").write_bytes(b"t" * 7_000_000)
    wheels.write_sizes(folder, ROOT)
    files = {"dist": str(target / dist.SIZES), "wheels": str(folder / wheels.SIZES)}
    return {"participant": participant, "teacher": teacher, "pdf": pdf, "page": _build_page(tmp_path, files)}


def test_the_guide_shows_the_sizes_of_the_bundle_built_in_the_same_run(measured):
    if shutil.which("pdfinfo") is None:
        pytest.fail("pdfinfo not found: install poppler-utils (the PDF's pages are counted with it)")
    shown = _figures(measured["page"])
    with zipfile.ZipFile(measured["participant"]) as bundle:
        unzipped = sum(info.file_size for info in bundle.infolist())
    expected = {
        "participant-zip": measured["participant"].stat().st_size,
        "participant-unzipped": unzipped,
        "teacher-zip": measured["teacher"].stat().st_size,
        "pdf-size": measured["pdf"].stat().st_size,
        "wheels": 3_000_000,
        "torch-wheels": 7_000_000,
        "disk": unzipped + bundle_sizes.ENVIRONMENT["base"] + 3_000_000,
        "disk-torch": unzipped + sum(bundle_sizes.ENVIRONMENT.values()) + 10_000_000,
    }
    for key, count in expected.items():
        assert shown.get(key), f"the guide does not show {key}"
        for text in shown[key]:
            assert _close(text, count), f"{key}: the guide says {text}, the bundle of this run has {count} bytes"
    assert shown["pdf-pages"] == {"3"} and shown["wheels-count"] == {"2"}
    assert "not measured" not in measured["page"]


def test_the_guide_says_when_and_by_what_the_figures_were_measured(measured):
    from bs4 import BeautifulSoup

    text = " ".join(BeautifulSoup(measured["page"], "html.parser").get_text().split())
    assert "were measured by make dist" in text and "UTC" in text, text[:500]
    assert "when python -m tools.release.wheels last filled it" in text


def test_the_guide_types_no_size_of_the_bundle_or_the_wheels():
    """Its sizes of the bundle, the PDF and wheels/ go through the role; only rules of thumb are typed."""
    guide = GUIDE.read_text(encoding="utf-8")
    rows = [line for line in guide.splitlines() if line.startswith(("| disk per laptop", "| USB stick"))]
    typed = {figure for row in rows for figure in re.findall(r"\b\d[\d.,]* [MG]B\b(?!/)", row)}
    assert typed <= {"2 GB", "4 GB", "70 MB"}, typed
    assert not re.search(r"\b\d+ (?:pages|files)\b", guide), "a typed count of pages or files"


def test_without_sizes_files_every_figure_reads_not_measured(tmp_path):
    sizes = bundle_sizes.load(tmp_path)
    assert sizes == {"dist": None, "wheels": None}
    assert all(
        bundle_sizes.figure(key, sizes) == "not measured" for key, (needs, _) in bundle_sizes.FIGURES.items() if needs
    )
    assert "No bundle had been built" in bundle_sizes.note(sizes)
