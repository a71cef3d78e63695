"""Pack the book for a workshop without a network: a participant zip and a teacher zip.

Usage (``make dist``, which first runs ``make book student``)::

    python -m tools.dist _build/dist              # both bundles
    python -m tools.dist --wheels _build/wheels   # the packages, for an offline room
    python -m tools.dist --wheels _build/wheels --torch   # ... with CPU torch (Linux)

``_build/dist/twice-the-devices-workshop.zip`` is what participants get. Its
one folder ``twice-the-devices-workshop/`` holds

* ``html/``: the built book *without answers*: every solution dropdown is cut
  out of the pages, the teacher's answer sheet and its links are gone, images
  that only a solution showed are dropped, and each chapter's download button
  serves the student notebook;
* ``student/``: the student notebooks (``make student``);
* ``lib/``, ``pyproject.toml``, ``data/``: the library's source and the data
  the chapters read;
* ``requirements-participant.txt`` and ``requirements-participant-torch.txt``;
* ``README-offline.txt``: how to open the book and install offline.

``_build/dist/twice-the-devices-teacher.zip`` (folder
``twice-the-devices-teacher/``) holds everything: the book as built (with the
solutions and ``book/answers.html``), the teacher's reading copies of the full
chapters (``notebooks/``, from ``python -m tools.student --full``), the
student notebooks, ``lib/``, ``data/``, all requirements files and the same
README.

Neither zip holds packages. ``--wheels`` prepares them *outside* the bundle
(:func:`prepare_wheels`): exactly the wheels of
``requirements-participant.txt`` for this machine's system and Python, plus a
wheel of the project itself, so that ``pip install --no-index`` needs nothing
else. The teacher copies that folder into the unzipped bundle as ``wheels/``;
participants then run :data:`PARTICIPANT_COMMANDS` (the guide shows the same
lines, and ``tests/test_offline_install.py`` runs them).

The zips are reproducible: entries are sorted and carry one fixed timestamp.

>>> sorted(_wanted(Path("."), "participant"))[:3]
['README-offline.txt', 'data', 'html']
"""

from __future__ import annotations

import posixpath
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from tools.browser import missing_book

__all__ = [
    "NAME",
    "TEACHER_NAME",
    "TORCH_CPU_INDEX",
    "PARTICIPANT_COMMANDS",
    "ANSWER_PAGES",
    "README",
    "participant_html",
    "collect",
    "build_zip",
    "download_wheels",
    "project_wheel",
    "prepare_wheels",
    "main",
]

NAME = "twice-the-devices-workshop"
TEACHER_NAME = "twice-the-devices-teacher"

#: PyTorch's index of CPU-only builds (Linux wheels there carry ``+cpu``).
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"

#: What a participant types, in the unzipped bundle with ``wheels/`` copied in.
PARTICIPANT_COMMANDS = [
    "python3 -m venv .venv",
    ".venv/bin/pip install --no-index --find-links wheels --no-deps --no-compile"
    " -r requirements-participant.txt twice-the-devices",
    ".venv/bin/jupyter lab student/",
]

#: Pages of the built book that hold answers: left out of the participant bundle.
ANSWER_PAGES = ("book/answers.html",)

#: Fixed timestamp for every entry, so two builds of the same files are identical.
_STAMP = (2026, 1, 1, 0, 0, 0)

_SKIP_PARTS = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".hypothesis", ".doctrees"}

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
Your teacher copies a folder `wheels/` into this folder (it holds every
package, prepared on a machine with the same system and Python version as
yours: see the book's workshop guide). Then, in this folder, with Python 3.11:

{_COMMANDS}

On Windows write `.venv\\Scripts\\pip` and `.venv\\Scripts\\jupyter`.
JupyterLab opens in your browser; open a notebook in student/ and run it from
the top. Chapter 10's live measurement also needs torch:

    .venv/bin/pip install --no-index --find-links wheels --no-compile -r requirements-participant-torch.txt

Running the notebooks with a network
------------------------------------
    python3 -m venv .venv
    .venv/bin/pip install --no-deps --no-compile -r requirements-participant.txt
    .venv/bin/pip install --no-deps .
    .venv/bin/jupyter lab student/

and for chapter 10's live run, on Linux (the CPU build; a plain install
would fetch the CUDA build, several GB):

    .venv/bin/pip install --no-compile -r requirements-participant-torch.txt --index-url {TORCH_CPU_INDEX}
"""


def _files(folder: Path) -> list[Path]:
    """Every plain file under ``folder``, caches skipped, sorted."""
    return sorted(p for p in folder.rglob("*")
                  if p.is_file() and not (_SKIP_PARTS & set(p.relative_to(folder).parts)))


def _wanted(root: Path, kind: str, html: Path | None = None, student: Path | None = None,
            full: Path | None = None) -> dict[str, Path | None]:
    """Top-level names in a bundle of ``kind`` and where each comes from (None: generated)."""
    build = root / "_build"
    wanted: dict[str, Path | None] = {
        "html": html or build / "html",
        "student": student or build / "student",
        "lib": root / "lib",
        "pyproject.toml": root / "pyproject.toml",
        "requirements-participant.txt": root / "requirements-participant.txt",
        "requirements-participant-torch.txt": root / "requirements-participant-torch.txt",
        "README-offline.txt": None,
    }
    if kind == "teacher":
        wanted["notebooks"] = full or build / "full"
        wanted["requirements.txt"] = root / "requirements.txt"
        pdf = build / "pdf" / "twice-the-devices.pdf"      # solutions opened out; `make dist` builds it first
        if pdf.is_file():
            wanted["twice-the-devices.pdf"] = pdf
    if (root / "data").is_dir() and _files(root / "data"):
        wanted["data"] = root / "data"
    return wanted


# ------------------------------------------------------------------ answers out of the HTML


def _page_links(soup, page: str, removed: set[str]) -> None:
    """Take every link from ``page`` to a removed page out of ``soup``.

    A ``<link>`` in the head and a previous/next button go; a list item that
    holds nothing but the link (the navigation) goes with it; a link inside a
    sentence keeps its words and loses only the link.
    """
    for link in soup.find_all(["a", "link"], href=True):
        href = link["href"].split("#")[0].split("?")[0]
        if not href or "://" in href:
            continue
        target = posixpath.normpath(posixpath.join(posixpath.dirname(page), href))
        if target not in removed:
            continue
        item = link.find_parent("li")
        if link.name == "link" or {"prev", "next", "left-prev", "right-next"} & set(link.get("class", [])):
            link.decompose()
        elif item is not None and item.get_text(strip=True) == link.get_text(strip=True):
            item.decompose()
        else:
            link.unwrap()


def _search_index(text: str, removed: set[str]) -> str:
    """Sphinx's ``searchindex.js`` with removed pages unreachable from search."""
    import json

    match = re.fullmatch(r"(?s)(\s*Search\.setIndex\()(.*)(\)\s*;?\s*)", text)
    if not match:
        return text
    index = json.loads(match.group(2))
    gone = {i for i, name in enumerate(index.get("filenames", [])) if
            posixpath.splitext(name)[0] + ".html" in removed}
    gone |= {i for i, name in enumerate(index.get("docnames", [])) if name + ".html" in removed}
    for key in ("terms", "titleterms"):
        for word, docs in list(index.get(key, {}).items()):
            kept = [d for d in (docs if isinstance(docs, list) else [docs]) if d not in gone]
            if kept:
                index[key][word] = kept if isinstance(docs, list) else kept[0]
            else:
                del index[key][word]
    for title, places in list(index.get("alltitles", {}).items()):
        kept = [p for p in places if p[0] not in gone]
        if kept:
            index["alltitles"][title] = kept
        else:
            del index["alltitles"][title]
    return match.group(1) + json.dumps(index, separators=(",", ":")) + match.group(3)


def participant_html(html: Path, student: Path | None = None) -> dict[str, bytes | Path]:
    """The built book without answers: relative path -> new bytes, or the file to copy.

    Solution blocks (``div.solution``, the dropdowns of sphinx-exercise) are cut
    from every page; :data:`ANSWER_PAGES` and their sources are left out and
    links to them removed, also from search; images no remaining page shows
    are dropped; ``_sources/notebooks/NN_slug.ipynb`` (what each chapter's
    download button serves) becomes the student notebook of that name when
    ``student`` has one, and is left out otherwise (so is any other form of a
    chapter's source); the prose pages' sources stay.
    """
    from bs4 import BeautifulSoup

    html = Path(html)
    removed = set(ANSWER_PAGES)
    files = {p.relative_to(html).as_posix(): p for p in _files(html)}
    out: dict[str, bytes | Path] = {}
    shown: set[str] = set()
    for name, path in files.items():
        if name in removed or any(name.startswith("_sources/" + posixpath.splitext(page)[0])
                                  for page in removed):
            continue
        if name.endswith(".html"):
            soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
            for block in soup.select("div.solution"):
                block.decompose()
            _page_links(soup, name, removed)
            for tag in soup.find_all(src=True):
                shown.add(posixpath.normpath(posixpath.join(posixpath.dirname(name), tag["src"])))
            out[name] = str(soup).encode("utf-8")
        elif name == "searchindex.js":
            out[name] = _search_index(path.read_text(encoding="utf-8"), removed).encode("utf-8")
        elif name.startswith("_sources/notebooks/") and name.endswith(".ipynb"):
            replacement = Path(student) / Path(name).name if student else None
            if replacement is not None and replacement.is_file():
                out[name] = replacement
        elif name.startswith("_sources/notebooks/"):
            continue  # a chapter's source in another form would hold its solutions too
        else:
            out[name] = path
    for name in [n for n in out if n.startswith("_images/") and n not in shown]:
        del out[name]
    return out


# ------------------------------------------------------------------ the zips


def collect(root: Path = Path("."), kind: str = "participant", html: Path | None = None,
            student: Path | None = None, full: Path | None = None) -> dict[str, bytes | Path | None]:
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
    if kind not in ("participant", "teacher"):
        raise ValueError(f"kind must be 'participant' or 'teacher', got {kind!r}")
    root = Path(root)
    top = NAME if kind == "participant" else TEACHER_NAME
    entries: dict[str, bytes | Path | None] = {}
    for name, source in _wanted(root, kind, html, student, full).items():
        if source is None:
            entries[f"{top}/{name}"] = None
        elif source.is_file():
            entries[f"{top}/{name}"] = source
        elif source.is_dir():
            if name == "html" and kind == "participant":
                files = participant_html(source, student or root / "_build" / "student")
            else:
                paths = _files(source)
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


def build_zip(target: Path, root: Path = Path("."), kind: str = "participant", html: Path | None = None,
              student: Path | None = None, full: Path | None = None) -> Path:
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
    path = target / f"{NAME if kind == 'participant' else TEACHER_NAME}.zip"
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


# ------------------------------------------------------------------ wheels


def _pip(python: str, *args: str) -> None:
    command = [python, "-m", "pip", *args]
    print("$", " ".join(command), flush=True)
    subprocess.run(command, check=True)


def download_wheels(target: Path, root: Path = Path("."), python: str = sys.executable) -> Path:
    """``pip download --no-deps`` every package of ``requirements-participant.txt`` into ``target``."""
    target = Path(target)
    target.mkdir(parents=True, exist_ok=True)
    _pip(python, "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
         "-r", str(Path(root) / "requirements-participant.txt"), "-d", str(target))
    return target


def project_wheel(target: Path, root: Path = Path("."), python: str = sys.executable) -> Path:
    """Build the wheel of the project (``lib``) into ``target`` from a clean copy; return its path.

    Built from a temporary copy of ``lib/`` and ``pyproject.toml``, so that
    no ``build/`` or ``*.egg-info`` folder lands in the repository.
    """
    root, target = Path(root), Path(target)
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(root / "lib", Path(tmp) / "lib", ignore=shutil.ignore_patterns(*_SKIP_PARTS, "*.pyc"))
        shutil.copy2(root / "pyproject.toml", Path(tmp) / "pyproject.toml")
        before = set(target.glob("*.whl"))
        _pip(python, "wheel", "--no-deps", "--disable-pip-version-check", "-q", tmp, "-w", str(target))
    built = sorted(set(target.glob("twice_the_devices-*.whl")) - before) or sorted(
        target.glob("twice_the_devices-*.whl"), key=lambda p: p.stat().st_mtime)
    return built[-1]


def prepare_wheels(target: Path, root: Path = Path("."), torch: bool = False,
                   python: str = sys.executable) -> Path:
    """Everything :data:`PARTICIPANT_COMMANDS` installs, as wheels in ``target``.

    With ``torch``, also torch and its dependencies from :data:`TORCH_CPU_INDEX`
    (the CPU build on Linux).
    """
    download_wheels(target, root, python)
    project_wheel(target, root, python)
    if torch:
        _pip(python, "download", "--disable-pip-version-check", "-r",
             str(Path(root) / "requirements-participant-torch.txt"),
             "--index-url", TORCH_CPU_INDEX, "-d", str(target))
    return Path(target)


def _size(folder: Path) -> float:
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file()) / 1e6


def main(argv: list[str] | None = None) -> list[Path]:
    """Command line: ``python -m tools.dist TARGET`` or ``python -m tools.dist --wheels TARGET [--torch]``."""
    argv = sys.argv[1:] if argv is None else argv
    flags = {arg for arg in argv if arg.startswith("--")}
    args = [arg for arg in argv if not arg.startswith("--")]
    if len(args) != 1 or flags - {"--wheels", "--torch"} or ("--torch" in flags and "--wheels" not in flags):
        raise SystemExit("usage: python -m tools.dist TARGET_FOLDER\n"
                         "       python -m tools.dist --wheels TARGET_FOLDER [--torch]")
    target = Path(args[0])
    if "--wheels" in flags:
        prepare_wheels(target, torch="--torch" in flags)
        count = len(list(target.glob("*.whl")))
        print(f"wrote {count} wheels to {target} ({_size(target):.0f} MB); copy the folder into the "
              f"unzipped bundle as wheels/")
        return [target]
    problem = missing_book(Path("_build/html"), make="make book student")
    if problem:
        raise SystemExit(problem)
    written = []
    for kind in ("participant", "teacher"):
        try:
            path = build_zip(target, kind=kind)
        except FileNotFoundError as error:
            raise SystemExit(str(error)) from None
        with zipfile.ZipFile(path) as bundle:
            count = len(bundle.namelist())
        print(f"wrote {path} ({kind}: {count} files, {path.stat().st_size / 1e6:.1f} MB)")
        written.append(path)
    print(f"hand out {NAME}.zip; keep {TEACHER_NAME}.zip (it holds the answers)")
    return written


if __name__ == "__main__":
    main()
