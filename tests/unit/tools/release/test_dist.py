"""tools.release.dist refuses, in one line and with a non-zero exit, to pack a book whose build failed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]


def _site(tmp_path: Path) -> Path:
    """A built site in miniature, where ``python -m tools.release.dist`` looks for it (``_build/html``)."""
    html = tmp_path / "_build" / "html"
    (html / "notebooks").mkdir(parents=True)
    (html / "index.html").write_text("<html><p>The book</p></html>")
    (html / "notebooks" / "02_time_budget.html").write_text(
        '<div class="cell_output docutils container"><div class="output stream highlight-myst-ansi">ok</div>'
    )
    return html


def _dist(tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "tools.release.dist", str(tmp_path / "dist")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("broken", ["traceback", "reports", "moved reports"])
def test_a_failed_build_is_refused_in_one_line(tmp_path, broken):
    html = _site(tmp_path)
    if broken == "traceback":
        (html / "notebooks" / "03_break_even.html").write_text(
            '<div class="cell_output docutils container"><div class="output traceback highlight-ipythontb '
            'notranslate"><pre>ZeroDivisionError</pre></div></div>'
        )
    else:
        reports = html / "reports" if broken == "reports" else tmp_path / "_build" / "reports" / "html"
        (reports / "notebooks").mkdir(parents=True)
        (reports / "notebooks" / "03_break_even.err.log").write_text("Traceback (most recent call last):")
    done = _dist(tmp_path)
    assert done.returncode != 0 and not (tmp_path / "dist").exists()
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "03_break_even" in lines[0] and "build the book again" in lines[0]


def test_a_stale_report_from_an_earlier_build_does_not_count(tmp_path):
    """html_tweaks keeps the last failed build's logs; a later clean build is packed (here: gets past the check)."""
    reports = tmp_path / "_build" / "reports" / "html"
    reports.mkdir(parents=True)
    (reports / "old.err.log").write_text("Traceback")
    os.utime(reports, (1, 1))
    _site(tmp_path)
    done = _dist(tmp_path)
    assert "build the book again" not in done.stderr, done.stderr
