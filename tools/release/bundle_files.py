"""Which files of a folder go into a workshop bundle: every plain file, caches left out.

Shared by :mod:`tools.release.dist` (the zips), :mod:`tools.teaching.participant_html` (the
book without answers) and :mod:`tools.release.wheels` (the project's wheel, built
from a clean copy of ``lib/``), with the commands a participant types in the
unzipped bundle (:data:`PARTICIPANT_COMMANDS`, also shown in each chapter's
"Run this chapter yourself" note, :mod:`tools.sphinx.run_note`).

>>> sorted(CACHE_FOLDERS)[:2]
['.doctrees', '.hypothesis']
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["CACHE_FOLDERS", "PARTICIPANT_COMMANDS", "STUDENT", "files_under"]

#: The participant bundle's folder of student notebooks (the repository's chapters are in ``notebooks/``).
STUDENT = "student"

#: What a participant types, in the unzipped bundle with ``wheels/`` copied in.
PARTICIPANT_COMMANDS = [
    "python3 -m venv .venv",
    (
        ".venv/bin/pip install --no-index --find-links wheels --no-deps --no-compile"
        " -r requirements-participant.txt twice-the-devices"
    ),
    f".venv/bin/jupyter lab {STUDENT}/",
]

#: Folders that tools and test runs leave behind; nothing in them goes into a bundle.
CACHE_FOLDERS = frozenset({"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".hypothesis", ".doctrees"})


def files_under(folder: Path) -> list[Path]:
    """Every plain file under ``folder``, none inside :data:`CACHE_FOLDERS`, sorted.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     for name in ("b/x.py", "a.txt", "b/__pycache__/x.pyc"):
    ...         (Path(tmp) / name).parent.mkdir(parents=True, exist_ok=True)
    ...         _ = (Path(tmp) / name).write_text("")
    ...     [p.relative_to(tmp).as_posix() for p in files_under(Path(tmp))]
    ['a.txt', 'b/x.py']
    """
    return sorted(
        path
        for path in Path(folder).rglob("*")
        if path.is_file() and not (CACHE_FOLDERS & set(path.relative_to(folder).parts))
    )
