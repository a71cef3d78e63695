"""Pack the book for a workshop without a network: one zip a participant unpacks.

Usage: ``python -m tools.dist _build/dist`` (``make dist``, which first runs
``make book student``). Writes ``_build/dist/twice-the-devices-workshop.zip``
holding one folder ``twice-the-devices-workshop/`` with

* ``html/``: the built book (open ``html/index.html``; it loads nothing from
  the internet);
* ``notebooks/``: the chapter notebooks, executed, with solutions;
* ``student/``: the student notebooks (solutions removed, outputs cleared);
* ``lib/``, ``pyproject.toml``, ``requirements.txt``: so that
  ``pip install -r requirements.txt`` (which ends in ``-e .``) works from the
  unpacked folder; ``data/`` when the repository has one, because chapters
  read it;
* ``README-offline.txt``: how to open the book and install offline.

The zip is reproducible: entries are sorted and carry one fixed timestamp.

>>> wanted = _wanted(Path("."), Path("_build/html"), Path("_build/student"))
>>> [name in wanted for name in ("html", "student", "lib", "requirements.txt")]
[True, True, True, True]
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

from tools.browser import missing_book

__all__ = ["NAME", "README", "collect", "build_zip", "main"]

NAME = "twice-the-devices-workshop"

#: Fixed timestamp for every entry, so two builds of the same files are identical.
_STAMP = (2026, 1, 1, 0, 0, 0)

_SKIP_PARTS = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".hypothesis"}

README = f"""\
Twice the Devices, Half the Wait? -- offline workshop bundle
============================================================

This folder holds everything a workshop participant needs, with no network:

  html/index.html      the book; open it in any web browser (double-click it,
                       or File > Open). It loads nothing from the internet.
  notebooks/           the chapters as Jupyter notebooks, with solutions
  student/             the same chapters with the solutions removed and the
                       outputs cleared: work the exercises here
  lib/, pyproject.toml the small library the notebooks import (`import lib`)
  requirements.txt     exact versions of every package; ends in `-e .`
  data/                measurements the chapters read (if present)

Reading only
------------
Open html/index.html. Nothing needs installing.

Running the notebooks (Python 3.11 or newer)
---------------------------------------------
With a network, from this folder:

    python3 -m venv .venv
    .venv/bin/pip install -r requirements.txt jupyterlab
    .venv/bin/jupyter lab student/

Without a network (a workshop room): on a machine that has a network and the
SAME operating system, processor type and Python version as the participants'
machines, download the packages once, into this folder:

    pip download -r requirements.txt jupyterlab "setuptools>=61" wheel -d wheels

(`setuptools` and `wheel` are needed to install the local `-e .` line;
`jupyterlab` is the notebook front end, not part of requirements.txt.
torch is the largest download, a few hundred MB.) Copy the whole folder,
wheels/ included, to each participant (USB stick, shared drive). Then, on the
participant's machine, from this folder:

    python3 -m venv .venv
    .venv/bin/pip install --no-index --find-links wheels -r requirements.txt jupyterlab
    .venv/bin/jupyter lab student/

On Windows use `.venv\\Scripts\\pip` and `.venv\\Scripts\\jupyter` instead.
Run each notebook from the top. The student notebooks and notebooks/ sit side
by side, so paths such as ../data work from both.

The requirements pin a CPU build of torch; for a CUDA build, install torch
from the PyTorch index first (see the book's README).
"""


def _files(folder: Path) -> list[Path]:
    """Every plain file under ``folder``, caches skipped, sorted."""
    return sorted(p for p in folder.rglob("*")
                  if p.is_file() and not (_SKIP_PARTS & set(p.relative_to(folder).parts)))


def _wanted(root: Path, html: Path, student: Path) -> dict[str, Path | None]:
    """Top-level names in the bundle and where each comes from (None: generated)."""
    wanted: dict[str, Path | None] = {
        "html": html,
        "notebooks": root / "notebooks",
        "student": student,
        "lib": root / "lib",
        "pyproject.toml": root / "pyproject.toml",
        "requirements.txt": root / "requirements.txt",
        "README-offline.txt": None,
    }
    if (root / "data").is_dir() and _files(root / "data"):
        wanted["data"] = root / "data"
    return wanted


def collect(root: Path = Path("."), html: Path | None = None,
            student: Path | None = None) -> dict[str, Path | None]:
    """Map each path inside the bundle to the file it copies (None: the README).

    Raises ``FileNotFoundError`` naming what is missing (run ``make book
    student`` first).

    >>> entries = collect(Path("."), html=Path("lib"), student=Path("notebooks"))
    >>> entries[f"{NAME}/README-offline.txt"] is None
    True
    >>> f"{NAME}/lib/units.py" in entries and f"{NAME}/pyproject.toml" in entries
    True
    >>> collect(Path("."), html=Path("no/such/folder"))
    Traceback (most recent call last):
    ...
    FileNotFoundError: html: no/such/folder is missing (run `make book student` first)
    """
    root = Path(root)
    html = Path(html) if html is not None else root / "_build" / "html"
    student = Path(student) if student is not None else root / "_build" / "student"
    entries: dict[str, Path | None] = {}
    for name, source in _wanted(root, html, student).items():
        if source is None:
            entries[f"{NAME}/{name}"] = None
        elif source.is_file():
            entries[f"{NAME}/{name}"] = source
        elif source.is_dir():
            files = _files(source)
            if name in ("notebooks", "student"):
                files = [p for p in files if p.suffix == ".ipynb" and p.parent == source]
            if not files:
                raise FileNotFoundError(f"{name}: {source} is empty")
            for path in files:
                entries[f"{NAME}/{name}/{path.relative_to(source).as_posix()}"] = path
        else:
            raise FileNotFoundError(f"{name}: {source} is missing (run `make book student` first)")
    return entries


def build_zip(target: Path, root: Path = Path("."), html: Path | None = None,
              student: Path | None = None) -> Path:
    """Write ``target/twice-the-devices-workshop.zip``; return its path.

    >>> import tempfile, zipfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = build_zip(Path(tmp), html=Path("lib"), student=Path("notebooks"))
    ...     names = zipfile.ZipFile(path).namelist()
    >>> f"{NAME}/requirements.txt" in names, names == sorted(names)
    (True, True)
    """
    entries = collect(root, html, student)
    target = Path(target)
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"{NAME}.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=_STAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            source = entries[name]
            data = README.encode() if source is None else source.read_bytes()
            bundle.writestr(info, data)
    return path


def main(argv: list[str] | None = None) -> Path:
    """Command line: ``python -m tools.dist TARGET_FOLDER``."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        raise SystemExit("usage: python -m tools.dist TARGET_FOLDER")
    problem = missing_book(Path("_build/html"), make="make book student")
    if problem:
        raise SystemExit(problem)
    try:
        path = build_zip(Path(argv[0]))
    except FileNotFoundError as error:
        raise SystemExit(str(error)) from None
    with zipfile.ZipFile(path) as bundle:
        count = len(bundle.namelist())
    print(f"wrote {path} ({count} files, {path.stat().st_size / 1e6:.1f} MB)")
    print(f"unzip it and open {NAME}/html/index.html; see {NAME}/README-offline.txt")
    return path


if __name__ == "__main__":
    main()
