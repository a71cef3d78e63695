"""Remove the solutions from a chapter notebook, leaving an empty answer cell in place of each.

A solution runs from the markdown cell holding its ``{solution-start}``
directive through the cell holding its ``{solution-end}`` directive; text in
those two marker cells that lies outside the solution (an exercise sharing a
cell with the start marker, a heading after the end marker) is kept. A
solution that starts and never ends, or an end without a start, raises
``ValueError``: better no student notebook than one that leaks an answer.
:func:`tools.teaching.student.make_student` calls :func:`strip_solutions`.

>>> cells = [nbformat.v4.new_markdown_cell("Add 1 and 1.\\n```{solution-start} ex-a\\n```"),
...          nbformat.v4.new_code_cell("1 + 1"), nbformat.v4.new_markdown_cell("```{solution-end}\\n```")]
>>> [c.source for c in strip_solutions(nbformat.v4.new_notebook(cells=cells)).cells]
['Add 1 and 1.', '# Your answer to ex-a']
"""

from __future__ import annotations

import copy
import re

import nbformat

__all__ = ["strip_solutions"]

# A MyST directive fence: three or more backticks or colons, then {name}.
_FENCE = r"(?P<fence>`{3,}|:{3,})[ \t]*\{%s\}"


def _directive(name: str) -> re.Pattern[str]:
    """A regex matching one whole ``{name}`` directive block, fence to fence.

    >>> bool(_directive("solution-end").search("```{solution-end}\\n```"))
    True
    """
    return re.compile(
        r"^[ \t]*" + _FENCE % re.escape(name) + r"[^\n]*\n"  # opening line
        r"(?:.*?\n)??"  # options, body
        r"[ \t]*(?P=fence)[ \t]*$",  # closing fence
        re.MULTILINE | re.DOTALL,
    )


_START = _directive("solution-start")
_END = _directive("solution-end")
_SOLUTION_OF = re.compile(r"\{solution-start\}[ \t]*(\S+)")


def _answer_cell(
    label: str | None, number: int, code: bool, names: dict[str, str] | None = None
) -> nbformat.NotebookNode:
    """An empty answer cell where a solution used to be: code if the solution ran code.

    >>> _answer_cell("ex-a", 1, code=False).source
    '*Your answer to ex-a (double-click to edit):*'
    >>> _answer_cell("ex-a", 1, code=True, names={"ex-a": "exercise 2.1"}).source
    '# Your answer to exercise 2.1'
    """
    name = (names or {}).get(label or "", label or f"exercise {number}")
    if code:
        cell = nbformat.v4.new_code_cell(f"# Your answer to {name}")
    else:
        cell = nbformat.v4.new_markdown_cell(f"*Your answer to {name} (double-click to edit):*")
    cell.id = re.sub(r"[^A-Za-z0-9_-]", "-", f"answer-{label or number}")[:64]
    return cell


def _kept(cell: nbformat.NotebookNode, text: str) -> list[nbformat.NotebookNode]:
    """``cell`` with its source replaced by ``text``, or nothing if ``text`` is blank."""
    text = text.strip("\n")
    if not text.strip():
        return []
    new = copy.deepcopy(cell)
    new.source = text
    return [new]


def strip_solutions(notebook: nbformat.NotebookNode, names: dict[str, str] | None = None) -> nbformat.NotebookNode:
    """A copy of ``notebook`` without solutions, an answer cell in place of each.

    A solution may lie inside one markdown cell (a prose answer) or span
    several cells; marker cells may hold other text, which is kept. The
    answer cell names the exercise by ``names[label]`` where given.

    >>> cell = nbformat.v4.new_markdown_cell(
    ...     "Why?\\n```{solution-start} ex-b\\n```\\nBecause.\\n```{solution-end}\\n```\\nAfter.")
    >>> [c.source for c in strip_solutions(nbformat.v4.new_notebook(cells=[cell])).cells]
    ['Why?', '*Your answer to ex-b (double-click to edit):*', 'After.']
    >>> strip_solutions(nbformat.v4.new_notebook(cells=[
    ...     nbformat.v4.new_markdown_cell("```{solution-start} ex-c\\n```")]))
    Traceback (most recent call last):
    ...
    ValueError: solution of ex-c starts but never ends (solution-end missing)
    """
    result = copy.deepcopy(notebook)
    cells: list[nbformat.NotebookNode] = []
    inside: str | None = None  # label of the open solution, "" if it has none
    count, ran_code = 0, False
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            if inside is None:
                cells.append(copy.deepcopy(cell))
            else:
                ran_code = ran_code or cell.cell_type == "code"
            continue
        # Split the cell into text outside solutions and answer cells, in order.
        text, pieces = cell.source, []
        while True:
            if inside is None:
                start = _START.search(text)
                end = _END.search(text)
                if end and (not start or end.start() < start.start()):
                    raise ValueError(f"solution-end without solution-start in cell {cell.get('id')!r}")
                if not start:
                    pieces.append(text)
                    break
                pieces.append(text[: start.start()])
                label = _SOLUTION_OF.search(start.group(0))
                inside = label.group(1) if label else ""
                count += 1
                text = text[start.end() :]
            else:
                end = _END.search(text)
                if not end:
                    break  # the rest of this cell belongs to the solution
                pieces.append(_answer_cell(inside or None, count, ran_code, names))
                ran_code = False
                inside = None
                text = text[end.end() :]
        run: list[str] = []
        for piece in pieces + [None]:
            if isinstance(piece, str):
                run.append(piece.strip("\n"))
                continue
            cells.extend(_kept(cell, "\n\n".join(part for part in run if part.strip())))
            run = []
            if piece is not None:
                cells.append(piece)
    if inside is not None:
        raise ValueError(f"solution of {inside or 'an exercise'} starts but never ends (solution-end missing)")
    result.cells = _unique_ids(cells)
    return result


def _unique_ids(cells: list[nbformat.NotebookNode]) -> list[nbformat.NotebookNode]:
    """Give a fresh id to any cell whose id repeats (a marker cell split in two).

    >>> twins = [nbformat.v4.new_markdown_cell("a", id="x"), nbformat.v4.new_markdown_cell("b", id="x")]
    >>> [c.id for c in _unique_ids(twins)]
    ['x', 'x-2']
    """
    seen: set[str] = set()
    for cell in cells:
        if "id" not in cell:
            continue
        base, n = cell.id[:60], 1
        while cell.id in seen:
            n += 1
            cell.id = f"{base}-{n}"
        seen.add(cell.id)
    return cells
