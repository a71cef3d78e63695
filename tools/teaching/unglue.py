"""Take the book's ``glue()`` calls out of the code a student sees: :func:`unglue_notebook`.

In the book a code cell hands its numbers to the prose with
``glue("name", value, display=False)``. In a student notebook the prose
already shows those numbers as plain text (:mod:`tools.teaching.myst_plain`), so the
calls are plumbing that hides the lesson: :func:`unglue` removes every
statement that is nothing but a ``glue(...)`` call, and every loop, ``if`` or
``with`` left with nothing else to do. It removes a call only where that
changes nothing the cell shows or defines: with ``display=False`` (a glue
that displays its value stays), and without a ``:=`` inside. A line shared
with another statement (``x = 1; glue(...)``) is kept whole.

A code cell with nothing left but comments is dropped, and the Setup line
``from myst_nb import glue`` goes once no call is left in the notebook.

>>> print(unglue('t2 = 9.2\\nglue("t2", t2, display=False)\\n'
...              'for k in (1, 2):\\n    glue(f"k{k}", k, display=False)\\nt2'))
t2 = 9.2
t2
>>> unglue('glue("fig", fig)')    # it displays the figure: kept
'glue("fig", fig)'
"""

from __future__ import annotations

import ast
import copy

import nbformat

__all__ = ["IMPORT", "unglue", "unglue_notebook"]

#: The import the chapters' Setup cells use for glue.
IMPORT = "from myst_nb import glue"

_BLOCKS = (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith)


def _is_glue(statement: ast.stmt) -> bool:
    """A statement that only calls ``glue(..., display=False)``, with no ``:=`` in it."""
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return False
    call = statement.value
    hidden = any(
        k.arg == "display" and isinstance(k.value, ast.Constant) and k.value.value is False for k in call.keywords
    )
    return (
        isinstance(call.func, ast.Name)
        and call.func.id == "glue"
        and hidden
        and not any(isinstance(node, ast.NamedExpr) for node in ast.walk(call))
    )


def _plumbing(statement: ast.stmt) -> bool:
    """A glue call, or a block (loop, if, with) whose every statement is plumbing."""
    if _is_glue(statement):
        return True
    if isinstance(statement, _BLOCKS):
        inner = statement.body + getattr(statement, "orelse", [])
        return all(_plumbing(child) for child in inner)
    return False


def _removable(tree: ast.Module) -> list[ast.stmt]:
    """The outermost plumbing statements of ``tree``; a block is never emptied (its plumbing then stays)."""
    found = []
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not (isinstance(block, list) and block and isinstance(block[0], ast.stmt)):
                continue
            plumbing = [statement for statement in block if _plumbing(statement)]
            if isinstance(node, ast.Module) or len(plumbing) < len(block):
                found += plumbing
    return found


def unglue(source: str) -> str:
    """``source`` without its plumbing glue calls (see the module's docstring); unchanged if it does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    removed = _removable(tree)
    inside = {id(node) for statement in removed for node in ast.walk(statement)}
    others = [s for s in ast.walk(tree) if isinstance(s, ast.stmt) and id(s) not in inside]
    drop: set[int] = set()
    for statement in removed:
        span = set(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
        shared = any(
            other.lineno in span or (not isinstance(other, _BLOCKS) and other.end_lineno in span) for other in others
        )
        if not shared:
            drop |= span
    result = "\n".join(line for number, line in enumerate(source.split("\n"), 1) if number not in drop)
    while "\n\n\n" in result:
        result = result.replace("\n\n\n", "\n\n")
    return result.strip("\n")


def _only_comments(source: str) -> bool:
    return all(not line.strip() or line.strip().startswith("#") for line in source.split("\n"))


def unglue_notebook(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``notebook`` with :func:`unglue` applied to every code cell.

    >>> cells = [nbformat.v4.new_code_cell("from myst_nb import glue\\nimport numpy as np"),
    ...          nbformat.v4.new_code_cell("glue('a', 1, display=False)")]
    >>> [c.source for c in unglue_notebook(nbformat.v4.new_notebook(cells=cells)).cells]
    ['import numpy as np']
    """
    result = copy.deepcopy(notebook)
    cells = []
    for cell in result.cells:
        if cell.cell_type == "code" and "glue" in cell.source:
            cell.source = unglue(cell.source)
            if _only_comments(cell.source):
                continue
        cells.append(cell)
    if not any(cell.cell_type == "code" and "glue(" in cell.source for cell in cells):
        for cell in cells:
            if cell.cell_type == "code" and IMPORT in cell.source.split("\n"):
                cell.source = "\n".join(line for line in cell.source.split("\n") if line != IMPORT)
    result.cells = cells
    return result
