"""No chapter shows its readers a ``glue(`` call or an import of the book's plumbing (myst_nb, private names).

What counts as visible is :mod:`tools.notebooks.visible_code`'s rule: a code cell whose
source the book shows without a click. Glue calls belong in a
``remove-input`` cell, or in a folded (``hide-input``) plotting cell.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from tools.notebooks.visible_code import glue_calls, plumbing_imports

CHAPTERS = sorted(Path(__file__).resolve().parents[2].glob("notebooks/[0-9][0-9]_*.ipynb"))


def test_there_are_chapters():
    assert len(CHAPTERS) >= 11


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_no_visible_glue_call(chapter):
    calls = glue_calls(nbformat.read(chapter, as_version=4))
    shown = "\n".join(f"  cell {number}: {line.strip()}" for number, line in calls[:10])
    assert not calls, f"{chapter.name}: {len(calls)} glue( calls in visible code cells, e.g.\n{shown}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_no_visible_import_of_the_books_plumbing(chapter):
    imports = plumbing_imports(nbformat.read(chapter, as_version=4))
    assert not imports, f"{chapter.name}: visible imports of myst_nb or private names: {imports}"
