"""``make dist`` after ``make book`` does not build the book again, but does when a source changed.

Checked with make's dry run (``make -n``) against stamps in a temporary
folder, so the real build is never touched: with the book's stamp newer than
everything it is built from, the dry run of ``dist`` lists the student
notebooks and the zips but no ``jupyter-book`` build; with the stamp older
than the sources it lists the build (so the check can fail).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _dry_run(tmp_path: Path, book_is_fresh: bool) -> str:
    if shutil.which("make") is None:
        pytest.fail("make not found: the Makefile's promises cannot be checked")
    now = time.time() + 60  # newer than any file a checkout just wrote
    stamps = {
        "STAMP": tmp_path / "venv.installed",
        "BOOK_STAMP": tmp_path / "book.built",
        "PDF_FILE": tmp_path / "book.pdf",
    }
    ages = {"STAMP": now, "BOOK_STAMP": now + 10 if book_is_fresh else 0, "PDF_FILE": now + 20}
    for name, path in stamps.items():
        path.touch()
        os.utime(path, (ages[name], ages[name]))
    done = subprocess.run(
        ["make", "-n", "dist", *(f"{name}={path}" for name, path in stamps.items())],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_dist_after_book_does_not_build_the_book_again(tmp_path):
    commands = _dry_run(tmp_path, book_is_fresh=True)
    assert "jupyter-book build" not in commands, commands
    assert "tools.pdf" not in commands, "the PDF is newer than the book: no second print"
    assert "tools.teaching.student notebooks" in commands and "tools.release.dist _build/dist" in commands, commands


def test_dist_builds_the_book_when_a_source_changed(tmp_path):
    commands = _dry_run(tmp_path, book_is_fresh=False)
    assert "jupyter-book build . --all" in commands, commands
    assert "tools.pdf --skip-without-chromium" in commands, commands
