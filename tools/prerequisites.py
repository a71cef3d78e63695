"""Finding the programs the tools and tests need, and what a test does when one is missing.

* :func:`beside_python` finds a program installed with this Python (the
  virtual environment's ``bin/``) before the one on the PATH;
* :func:`require` is the tests' rule for a missing prerequisite: skip, with
  the message, on a laptop; fail in CI (``$CI`` set), where ``.ci/run``
  installs everything.

>>> beside_python("no-such-program-here") is None
True
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

__all__ = ["beside_python", "require"]


def beside_python(program: str) -> str | None:
    """``program`` beside this Python (the virtual environment's), else the one on the PATH, else None.

    >>> Path(beside_python("python3") or "python3").name.startswith("python")
    True
    """
    beside = Path(sys.executable).with_name(program)
    return str(beside) if beside.is_file() else shutil.which(program)


def require(problem: str | None, locally: str, in_ci: str) -> None:
    """In a test: nothing when ``problem`` is None; else skip (fail in CI) with ``problem`` and a note.

    ``locally`` ends the skip message (what is skipped), ``in_ci`` the failure
    message (why CI may not skip), e.g. ``require(missing_chromium(),
    "Browser tests skipped.", "CI must run the browser tests.")``.

    >>> require(None, "Skipped.", "CI must run it.") is None
    True
    """
    if problem is None:
        return
    import pytest

    if os.environ.get("CI"):
        pytest.fail(f"{problem} {in_ci}")
    pytest.skip(f"{problem} {locally}")
