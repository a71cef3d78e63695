"""Finding the programs the tools and tests need, and what a test does when one is missing.

* :func:`beside_python` finds a program installed with this Python (the
  virtual environment's ``bin/``) before the one on the PATH;
* :func:`find_python` finds an interpreter of a given Python line (the
  offline-install test runs the participants' install under each supported
  one);
* :func:`require` is the tests' rule for a missing prerequisite: skip, with
  the message, on a laptop; fail in CI (``$CI`` set), where ``.ci/run``
  installs everything.

>>> beside_python("no-such-program-here") is None
True
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["PYTHONS_ENV", "beside_python", "find_python", "require"]

#: Interpreters to try first, separated by the path separator (for a machine that keeps them elsewhere).
PYTHONS_ENV = "WORKSHOP_PYTHONS"


def beside_python(program: str) -> str | None:
    """``program`` beside this Python (the virtual environment's), else the one on the PATH, else None.

    >>> Path(beside_python("python3") or "python3").name.startswith("python")
    True
    """
    beside = Path(sys.executable).with_name(program)
    return str(beside) if beside.is_file() else shutil.which(program)


def _version(python: str) -> tuple[int, ...] | None:
    """The version of the interpreter ``python`` if it runs and can make a virtual environment, else None."""
    try:
        done = subprocess.run(
            [python, "-c", "import ensurepip, platform, venv; print(platform.python_version())"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode:
        return None
    return tuple(int(part) for part in done.stdout.strip().split(".") if part.isdigit())


def find_python(minor: str) -> tuple[str, str] | None:
    """The oldest interpreter of the Python line ``minor`` (``"3.12"``) found here, and its version.

    It looks in :data:`PYTHONS_ENV`, for ``python3.12`` on the PATH and in
    ``/usr/bin``, and among pyenv's versions (``$PYENV_ROOT``, by default
    ``~/.pyenv``); an interpreter counts only if it runs and has ``venv`` and
    ``ensurepip``. None if there is none.

    >>> find_python("2.1") is None
    True
    """
    pyenv = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    candidates = [p for p in os.environ.get(PYTHONS_ENV, "").split(os.pathsep) if p]
    candidates += [shutil.which(f"python{minor}") or "", f"/usr/bin/python{minor}"]
    candidates += sorted(glob.glob(os.path.join(pyenv, "versions", f"{minor}.*", "bin", f"python{minor}")))
    found = {}
    for candidate in dict.fromkeys(c for c in candidates if c and Path(c).is_file()):
        version = _version(candidate)
        if version and ".".join(map(str, version[:2])) == minor:
            found.setdefault(version, candidate)
    if not found:
        return None
    oldest = min(found)
    return found[oldest], ".".join(map(str, oldest))


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
