"""Which files of a folder go into a workshop bundle: every plain file, caches left out.

Shared by :mod:`tools.release.dist` (the zips), :mod:`tools.teaching.participant_html` (the
book without answers) and :mod:`tools.release.wheels` (the project's wheel, built
from a clean copy of ``lib/``).

>>> sorted(CACHE_FOLDERS)[:2]
['.doctrees', '.hypothesis']
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["CACHE_FOLDERS", "files_under"]

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
    return sorted(path for path in Path(folder).rglob("*")
                  if path.is_file() and not (CACHE_FOLDERS & set(path.relative_to(folder).parts)))
