"""The book's nbval comparison rules (tools.notebooks.nbval_rules), proved on copies of a real chapter.

Each test edits one stored output of chapter 1 in a temporary copy and runs
strict nbval on it in a fresh pytest: a glued figure's PNG bytes and the last
digits of a full-precision float may change, a printed or glued integer may not.
"""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from myst_nb.ext.glue import GLUE_PREFIX

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "notebooks" / "01_splitting_a_matrix.ipynb"
GLUED_PNG = GLUE_PREFIX + "image/png"
GLUED_TEXT = GLUE_PREFIX + "text/plain"
#: A valid 1×1 PNG, standing in for the same figure rendered on another CPU.
OTHER_PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
    )
).decode()


def _outputs(notebook):
    for cell in notebook.cells:
        yield from cell.get("outputs", [])


def _glued(notebook, name):
    return next(o for o in _outputs(notebook) if o.get("metadata", {}).get("scrapbook", {}).get("name") == name)


def _nbval(tmp_path: Path, edit) -> subprocess.CompletedProcess:
    """Strict nbval on a copy of chapter 1 after ``edit(notebook)``."""
    notebook = nbformat.read(CHAPTER, as_version=4)
    edit(notebook)
    nbformat.write(notebook, tmp_path / CHAPTER.name)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # keep the copy's run apart from this suite's config
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "tools.notebooks.nbval_rules",
        "--nbval",
        "--nbval-sanitize-with",
        str(ROOT / "tests" / "nbval_sanitize.cfg"),
        str(tmp_path / CHAPTER.name),
    ]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_a_glued_png_and_float_rounding_may_differ(tmp_path):
    def edit(notebook):
        figure = _glued(notebook, "c01_fig_float")
        assert figure["data"][GLUED_PNG] != OTHER_PNG
        figure["data"][GLUED_PNG] = OTHER_PNG
        roundoff = _glued(notebook, "c01_u")
        assert roundoff["data"][GLUED_TEXT] == "5.960464477539063e-08"
        roundoff["data"][GLUED_TEXT] = "5.960464477539064e-08"  # one unit in the 16th digit

    run = _nbval(tmp_path, edit)
    assert run.returncode == 0, run.stdout[-3000:]


@pytest.mark.parametrize("kind", ["printed", "glued"])
def test_a_changed_integer_fails(tmp_path, kind):
    def edit(notebook):
        if kind == "printed":
            stream = next(o for o in _outputs(notebook) if "device 1 now holds [[-3, 9]]" in o.get("text", ""))
            stream["text"] = stream["text"].replace("device 1 now holds [[-3, 9]]", "device 1 now holds [[-3, 8]]")
        else:
            count = _glued(notebook, "c01_nout")
            assert count["data"][GLUED_TEXT] == "32768"
            count["data"][GLUED_TEXT] = "32769"

    run = _nbval(tmp_path, edit)
    assert run.returncode == 1, run.stdout[-3000:]
    assert "1 failed" in run.stdout and ("-3, 8" in run.stdout or "32769" in run.stdout)
