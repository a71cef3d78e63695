"""Pack the book for a workshop without a network: a participant zip and a teacher zip.

Usage (``make dist``, after ``make book student pdf``)::

    python -m tools.release.dist _build/dist              # both bundles

The packages for an offline room are prepared apart, by :mod:`tools.release.wheels`.

``_build/dist/twice-the-devices-workshop.zip`` is what participants get. Its
one folder ``twice-the-devices-workshop/`` holds

* ``html/``: the built book *without answers*: every solution dropdown is cut
  out of the pages, the teacher's answer sheet and its links are gone, images
  that only a solution showed are dropped, and each chapter's download button
  serves the student notebook (:mod:`tools.teaching.participant_html`);
* ``student/``: the student notebooks (``make student``);
* ``lib/``, ``pyproject.toml``, ``data/``: the library's source and the data
  the chapters read; ``share/``: JupyterLab's settings for the room (no news
  toast, no update check), which installing the project puts into the
  environment;
* ``requirements-participant.txt`` and ``requirements-participant-torch.txt``;
* ``README-offline.txt``: how to open the book and install offline.

``_build/dist/twice-the-devices-teacher.zip`` (folder
``twice-the-devices-teacher/``) holds everything: the book as built (with the
solutions and ``book/answers.html``), the PDF (:data:`tools.pdf.build.PDF`, when
``make pdf`` made it), the teacher's reading copies of the full chapters
(``notebooks/``, from ``python -m tools.teaching.student --full``), the student
notebooks, ``lib/``, ``data/``, all requirements files and the same README.

Neither zip holds packages. :mod:`tools.release.wheels` prepares them *outside* the
bundle: the wheels of ``requirements-participant.txt`` for every supported
system and Python, plus a wheel of the project itself, so that ``pip install
--no-index`` needs nothing else. The teacher copies those files into the
unzipped bundle's ``wheels/``; participants then run
:data:`PARTICIPANT_COMMANDS` (the guide shows the same lines, and
``tests/release/test_offline_install.py`` runs them).

The zips are reproducible: entries are sorted and carry one fixed timestamp.
Beside them, :func:`write_sizes` records what the teacher plans a room with
(:data:`SIZES`: each zip's size, the participant folder unzipped, the PDF's
pages and size); the workshop guide shows those figures
(:mod:`tools.sphinx.bundle_sizes`).

>>> sorted(_wanted(Path("."), "participant"))[:3]
['README-offline.txt', 'data', 'html']
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from datetime import UTC, datetime
from pathlib import Path

from lib.measure.launch import CPU_TORCH_OFFLINE
from tools.pdf.build import PDF
from tools.release.bundle_files import PARTICIPANT_COMMANDS, files_under
from tools.release.wheel_targets import TORCH_CPU_INDEX
from tools.site.browser import missing_book
from tools.teaching.participant_html import participant_html

__all__ = [
    "BUNDLES",
    "NAME",
    "PARTICIPANT_COMMANDS",
    "README",
    "SIZES",
    "TEACHER_NAME",
    "build_zip",
    "bundle_sizes",
    "collect",
    "main",
    "pdf_pages",
    "write_sizes",
]

NAME = "twice-the-devices-workshop"
TEACHER_NAME = "twice-the-devices-teacher"

#: Each kind of bundle and its one top folder (also the zip's name).
BUNDLES = {"participant": NAME, "teacher": TEACHER_NAME}

#: The file :func:`write_sizes` writes in the target folder of ``python -m tools.release.dist``.
SIZES = "sizes.json"

#: Fixed timestamp for every entry, so two builds of the same files are identical.
_STAMP = (2026, 1, 1, 0, 0, 0)

_COMMANDS = "\n".join("    " + line for line in PARTICIPANT_COMMANDS)

README = f"""\
Twice the Devices, Half the Wait? -- offline workshop bundle
============================================================

  html/index.html      the book; open it in any web browser (double-click it,
                       or File > Open). It loads nothing from the internet.
  student/             the chapters as notebooks, exercises without solutions
  notebooks/           (teacher's bundle only) the full chapters, solutions included
  lib/, pyproject.toml the small library the notebooks import (`import lib`)
  data/                measurements the chapters read
  requirements-participant.txt        what the notebooks need, pinned
  requirements-participant-torch.txt  torch, only for chapter 10's live run

Reading only
------------
Open html/index.html. Nothing needs installing.

Running the notebooks without a network
---------------------------------------
Your teacher copies a folder `wheels/` into this folder: every package, for
Linux x86-64, macOS (Apple silicon or Intel) and Windows x86-64, for Python
3.11 (3.11.2 or newer), 3.12 and 3.13. Then, in this folder:

{_COMMANDS}

On Windows write `py -3.12 -m venv .venv` (or your version), then
`.venv\\Scripts\\pip` and `.venv\\Scripts\\jupyter`. JupyterLab opens in your
browser; open a notebook in student/ and run it from the top. Chapter 10's
live measurement also needs torch (not on Intel Macs; on Apple silicon it
needs macOS 14):

    {CPU_TORCH_OFFLINE}

"No matching distribution found for numpy==..." means that wheels/ has no
files for your system or Python version: check `python3 --version` (3.11,
3.12 or 3.13), and that wheels/ holds .whl files, not a second wheels/ folder.

Running the notebooks with a network
------------------------------------
    python3 -m venv .venv
    .venv/bin/pip install --no-deps --no-compile -r requirements-participant.txt
    .venv/bin/pip install --no-deps .
    .venv/bin/jupyter lab student/

and for chapter 10's live run, on Linux (the CPU build; a plain install
would fetch the CUDA build, several GB):

    .venv/bin/pip install --no-deps --no-compile -r requirements-participant-torch.txt --extra-index-url {TORCH_CPU_INDEX}
"""


def _wanted(
    root: Path, kind: str, html: Path | None = None, student: Path | None = None, full: Path | None = None
) -> dict[str, Path | None]:
    """Top-level names in a bundle of ``kind`` and where each comes from (None: generated)."""
    build = root / "_build"
    wanted: dict[str, Path | None] = {
        "html": html or build / "html",
        "student": student or build / "student",
        "lib": root / "lib",
        "pyproject.toml": root / "pyproject.toml",
        "share": root / "share",  # JupyterLab's settings for the room, installed with the project
        "requirements-participant.txt": root / "requirements-participant.txt",
        "requirements-participant-torch.txt": root / "requirements-participant-torch.txt",
        "README-offline.txt": None,
    }
    if kind == "teacher":
        wanted["notebooks"] = full or build / "full"
        wanted["requirements.txt"] = root / "requirements.txt"
        pdf = root / PDF  # solutions opened out; `make dist` builds it first
        if pdf.is_file():
            wanted[PDF.name] = pdf
    if (root / "data").is_dir() and files_under(root / "data"):
        wanted["data"] = root / "data"
    return wanted


def collect(
    root: Path = Path("."),
    kind: str = "participant",
    html: Path | None = None,
    student: Path | None = None,
    full: Path | None = None,
) -> dict[str, bytes | Path | None]:
    """Map each path inside the bundle of ``kind`` to its bytes, the file it copies, or None (the README).

    Raises ``FileNotFoundError`` naming what is missing (run ``make book
    student`` first).

    >>> entries = collect(Path("."), "teacher", html=Path("lib"), student=Path("notebooks"), full=Path("notebooks"))
    >>> entries[f"{TEACHER_NAME}/README-offline.txt"] is None
    True
    >>> f"{TEACHER_NAME}/lib/units.py" in entries and f"{TEACHER_NAME}/notebooks/02_time_budget.ipynb" in entries
    True
    >>> collect(Path("."), html=Path("no/such/folder"))
    Traceback (most recent call last):
    ...
    FileNotFoundError: html: no/such/folder is missing (run `make book student` first)
    """
    if kind not in BUNDLES:
        raise ValueError(f"kind must be one of {sorted(BUNDLES)}, got {kind!r}")
    top = BUNDLES[kind]
    wanted = _wanted(Path(root), kind, html, student, full)
    entries: dict[str, bytes | Path | None] = {}
    for name, source in wanted.items():
        if source is None:
            entries[f"{top}/{name}"] = None
        elif source.is_file():
            entries[f"{top}/{name}"] = source
        elif source.is_dir():
            if name == "html" and kind == "participant":
                files = participant_html(source, wanted["student"])
            else:
                paths = files_under(source)
                if name in ("notebooks", "student"):
                    paths = [p for p in paths if p.suffix == ".ipynb" and p.parent == source]
                files = {p.relative_to(source).as_posix(): p for p in paths}
            if not files:
                raise FileNotFoundError(f"{name}: {source} is empty")
            for relative, content in files.items():
                entries[f"{top}/{name}/{relative}"] = content
        else:
            raise FileNotFoundError(f"{name}: {source} is missing (run `make book student` first)")
    return entries


def build_zip(
    target: Path,
    root: Path = Path("."),
    kind: str = "participant",
    html: Path | None = None,
    student: Path | None = None,
    full: Path | None = None,
) -> Path:
    """Write the bundle of ``kind`` as a zip in ``target``; return its path.

    >>> import tempfile, zipfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = build_zip(Path(tmp), html=Path("lib"), student=Path("notebooks"))
    ...     names = zipfile.ZipFile(path).namelist()
    >>> f"{NAME}/requirements-participant.txt" in names, names == sorted(names)
    (True, True)
    """
    entries = collect(root, kind, html, student, full)
    target = Path(target)
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"{BUNDLES[kind]}.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=_STAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            source = entries[name]
            if source is None:
                data = README.encode()
            elif isinstance(source, bytes):
                data = source
            else:
                data = source.read_bytes()
            bundle.writestr(info, data)
    return path


def pdf_pages(pdf: Path) -> int | None:
    """The number of pages of ``pdf`` as ``pdfinfo`` (poppler-utils) reads it, or None without ``pdfinfo``."""
    if shutil.which("pdfinfo") is None:
        return None
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", info, re.MULTILINE).group(1))


def bundle_sizes(participant: Path, teacher: Path, pdf: Path | None = None) -> dict:
    """Sizes in bytes of the two zips, of the participant zip's files unzipped, and of ``pdf`` with its pages.

    ``pdf`` is None or missing: its two entries are None (the guide then says
    so). ``participant_files`` counts the files a participant unzips.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = build_zip(Path(tmp), html=Path("lib"), student=Path("notebooks"))
    ...     sizes = bundle_sizes(path, path)
    >>> sizes["participant_unzipped_bytes"] > sizes["participant_zip_bytes"], sizes["pdf_pages"]
    (True, None)
    """
    with zipfile.ZipFile(participant) as bundle:
        infos = [info for info in bundle.infolist() if not info.is_dir()]
    pdf = Path(pdf) if pdf else None
    has_pdf = pdf is not None and pdf.is_file()
    return {
        "participant_zip_bytes": Path(participant).stat().st_size,
        "participant_unzipped_bytes": sum(info.file_size for info in infos),
        "participant_files": len(infos),
        "teacher_zip_bytes": Path(teacher).stat().st_size,
        "pdf_bytes": pdf.stat().st_size if has_pdf else None,
        "pdf_pages": pdf_pages(pdf) if has_pdf else None,
    }


def write_sizes(target: Path, participant: Path, teacher: Path, pdf: Path | None = None) -> Path:
    """Write :func:`bundle_sizes` and the time (UTC, to the minute) to ``target`` / :data:`SIZES`; return its path."""
    sizes = {"measured": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), **bundle_sizes(participant, teacher, pdf)}
    path = Path(target) / SIZES
    path.write_text(json.dumps(sizes, indent=1) + "\n", encoding="utf-8")
    return path


#: What myst-nb writes where a cell's output is an error: a traceback block.
ERROR_OUTPUT = re.compile(r'class="[^"]*\boutput (?:traceback|error)\b')


def build_problem(html: Path) -> str | None:
    """Why the book built in ``html`` must not be packed, in one line, or None.

    A build whose notebooks failed leaves myst-nb's error logs in
    ``html/reports`` (or, moved there by :mod:`tools.sphinx.html_tweaks`,
    in ``html/../reports/<builder>``, written by this build: not older than
    ``html/index.html``), and error output (a traceback) in its pages.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "index.html").write_text("<p>fine</p>")
    ...     ok = build_problem(Path(tmp))
    ...     _ = (Path(tmp) / "ch.html").write_text('<div class="output traceback highlight-ipythontb">')
    ...     ok, build_problem(Path(tmp))
    (None, 'ch.html shows error output (a notebook traceback): fix the chapter and build the book again')
    """
    html = Path(html)
    index = html / "index.html"
    moved = html.parent / "reports" / html.name
    for reports in (html / "reports", moved):
        logs = files_under(reports) if reports.is_dir() else []
        if not logs:
            continue
        if reports == html / "reports" or (index.is_file() and reports.stat().st_mtime >= index.stat().st_mtime):
            return (
                f"the book's build failed: {len(logs)} error log(s) in {reports} "
                f"(first {logs[0].relative_to(reports).as_posix()}); fix it and build the book again"
            )
    for page in sorted(html.rglob("*.html")):
        if ERROR_OUTPUT.search(page.read_text(encoding="utf-8", errors="replace")):
            return (
                f"{page.relative_to(html).as_posix()} shows error output (a notebook traceback): "
                "fix the chapter and build the book again"
            )
    return None


def main(argv: list[str] | None = None) -> list[Path]:
    """Command line: ``python -m tools.release.dist TARGET``."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0].startswith("-"):
        raise SystemExit(
            "usage: python -m tools.release.dist TARGET_FOLDER (the wheels: python -m tools.release.wheels FOLDER)"
        )
    target = Path(argv[0])
    problem = missing_book(Path("_build/html"), make="make book student") or build_problem(Path("_build/html"))
    if problem:
        raise SystemExit(problem)
    written = []
    for kind in BUNDLES:
        try:
            path = build_zip(target, kind=kind)
        except FileNotFoundError as error:
            raise SystemExit(str(error)) from None
        with zipfile.ZipFile(path) as bundle:
            count = len(bundle.namelist())
        print(f"wrote {path} ({kind}: {count} files, {path.stat().st_size / 1e6:.1f} MB)")
        written.append(path)
    sizes = write_sizes(target, *written, PDF)
    print(f"wrote {sizes} (the workshop guide shows these sizes when the book is next built)")
    print(f"hand out {BUNDLES['participant']}.zip; keep {BUNDLES['teacher']}.zip (it holds the answers)")
    return written


if __name__ == "__main__":
    main()
