"""The code a chapter shows its readers, and the plumbing or overlong lines left in it.

A code cell is *visible* when the book shows its source without a click:
not tagged ``remove-input`` or ``remove-cell`` (left out of the page) nor
``hide-input`` or ``hide-cell`` (folded behind "Show code cell source").
Visible code is what a reader learns from, so it holds no ``glue(`` calls
(they go in a ``remove-input`` cell of their own, or a folded plotting cell),
no import of the book's plumbing (``myst_nb``, or a private name such as
``lib.diagrams._draw``: :func:`plumbing_imports`), and no line longer than
:data:`WIDTH` characters.

Usage: ``python -m tools.notebooks.visible_code [--width 80] notebooks/*.ipynb`` lists
every visible ``glue(`` call and overlong line, by notebook and cell id.

>>> import nbformat
>>> cells = [nbformat.v4.new_code_cell("x = 1\\nglue('x', x, display=False)"),
...          nbformat.v4.new_code_cell("glue('y', 2)", metadata={"tags": ["remove-input"]})]
>>> book = nbformat.v4.new_notebook(cells=cells)
>>> [cell.source for cell in visible_code_cells(book)]
["x = 1\\nglue('x', x, display=False)"]
>>> glue_calls(book)
[(0, "glue('x', x, display=False)")]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import nbformat

__all__ = ["WIDTH", "OUT_OF_SIGHT", "visible_code_cells", "glue_calls", "plumbing_imports", "long_lines", "main"]

#: The longest line of visible code, in characters (80 fit the column at 1280 px; see _static/fit.css).
WIDTH = 80

#: Cell tags under which the book does not show a cell's source without a click.
OUT_OF_SIGHT = frozenset({"remove-input", "remove-cell", "hide-input", "hide-cell"})

_GLUE = re.compile(r"\bglue\(")

#: An import of myst_nb, or of a name (or module) that starts with an underscore.
_PLUMBING = re.compile(r"^\s*(from\s+\S+\s+)?import\s.*|^\s*from\s+\S+\s+import\s.*")
_PRIVATE = re.compile(r"\bmyst_nb\b|(^|[\s.,(])_[A-Za-z]")


def visible_code_cells(notebook: nbformat.NotebookNode) -> Iterator[nbformat.NotebookNode]:
    """The code cells whose source the book shows without a click, in order."""
    for cell in notebook.cells:
        if cell.cell_type == "code" and not OUT_OF_SIGHT & set(cell.get("metadata", {}).get("tags", [])):
            yield cell


def _visible_lines(notebook: nbformat.NotebookNode) -> Iterator[tuple[int, str]]:
    """``(cell index among all cells, line)`` for every line of visible code."""
    index = {id(cell): number for number, cell in enumerate(notebook.cells)}
    for cell in visible_code_cells(notebook):
        for line in cell.source.splitlines():
            yield index[id(cell)], line


def glue_calls(notebook: nbformat.NotebookNode) -> list[tuple[int, str]]:
    """``(cell index, line)`` of each visible line that calls ``glue(``."""
    return [(number, line) for number, line in _visible_lines(notebook) if _GLUE.search(line)]


def plumbing_imports(notebook: nbformat.NotebookNode) -> list[tuple[int, str]]:
    """``(cell index, line)`` of each visible line that imports ``myst_nb`` or a private name.

    >>> book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
    ...     "from myst_nb import glue\\nfrom lib.diagrams import _draw as draw\\nfrom lib import plotting\\nx_ = 1")])
    >>> [line for _, line in plumbing_imports(book)]
    ['from myst_nb import glue', 'from lib.diagrams import _draw as draw']
    """
    return [
        (number, line)
        for number, line in _visible_lines(notebook)
        if _PLUMBING.match(line) and _PRIVATE.search(line.split("#")[0])
    ]


def long_lines(notebook: nbformat.NotebookNode, width: int = WIDTH) -> list[tuple[int, str]]:
    """``(cell index, line)`` of each visible line longer than ``width`` characters.

    >>> book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("y = 1" + " " * 80 + "# far")])
    >>> [(number, len(line)) for number, line in long_lines(book)]
    [(0, 90)]
    """
    return [(number, line) for number, line in _visible_lines(notebook) if len(line) > width]


def main(argv: list[str] | None = None) -> int:
    """Print each notebook's visible glue calls, plumbing imports and overlong lines; exit 1 if there are any."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--width", type=int, default=WIDTH, help=f"longest line allowed (default {WIDTH})")
    args = parser.parse_args(argv)
    found = 0
    for path in args.notebooks:
        notebook = nbformat.read(path, as_version=4)
        found_here = (
            ("glue", glue_calls(notebook)),
            ("plumbing", plumbing_imports(notebook)),
            (f"over {args.width}", long_lines(notebook, args.width)),
        )
        for kind, rows in found_here:
            for number, line in rows:
                cell_id = notebook.cells[number].get("id", number)
                print(f"{path}: cell {cell_id} ({kind}): {line.strip()[:100]}")
            found += len(rows)
    print(f"{found} visible lines to move or shorten")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
