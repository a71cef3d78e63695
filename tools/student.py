"""Write student copies of the chapter notebooks: exercises kept, solutions gone.

Usage: ``python -m tools.student notebooks _build/student`` (``make student``).

Every chapter ``NN_slug.ipynb`` in the source folder becomes
``NN_slug.ipynb`` in the target folder with

* every solution removed: each cell from the markdown cell holding a
  ``{solution-start}`` directive through the cell holding its
  ``{solution-end}`` directive. Text in those two marker cells that lies
  outside the solution (an exercise that shares a cell with the start marker,
  a heading after the end marker) is kept;
* an empty cell in the place of each removed solution, for the answer (a
  code cell where the solution ran code, a markdown cell where it was prose);
* every exercise kept as it is;
* outputs cleared and execution counts reset; kernelspec ``python3``;
* a short note at the top saying that the solutions are in the book.

A solution that starts and never ends, or an end without a start, raises
``ValueError``: better no student notebook than one that leaks an answer.

>>> import nbformat
>>> cells = [
...     nbformat.v4.new_markdown_cell(
...         "## Exercises\\n```{exercise-start}\\n:label: ex-demo\\n```\\n"
...         "Add 1 and 1.\\n```{exercise-end}\\n```\\n"
...         "```{solution-start} ex-demo\\n:class: dropdown\\n```"),
...     nbformat.v4.new_code_cell("1 + 1"),
...     nbformat.v4.new_markdown_cell("```{solution-end}\\n```\\n## Next"),
... ]
>>> student = make_student(nbformat.v4.new_notebook(cells=cells))
>>> [cell.cell_type for cell in student.cells]
['markdown', 'markdown', 'code', 'markdown']
>>> "solution" in student.cells[1].source, student.cells[2].source, student.cells[3].source
(False, '# Your answer to ex-demo', '## Next')
>>> exercise_labels(student)
['ex-demo']
"""

from __future__ import annotations

import copy
import re
import sys
from pathlib import Path

import nbformat

from tools.execute import clean

__all__ = [
    "NOTE",
    "chapter_notebooks",
    "exercise_labels",
    "strip_solutions",
    "clear_outputs",
    "make_student",
    "main",
]

NOTE = (
    "**Student version.** The exercises are all here; their solutions are not. "
    "Each exercise is followed by an empty cell for your answer. The worked "
    "solutions are in the book (the HTML version of this chapter), in the "
    "dropdown under each exercise. Run the cells from the top, in order."
)

# A MyST directive fence: three or more backticks or colons, then {name}.
_FENCE = r"(?P<fence>`{3,}|:{3,})[ \t]*\{%s\}"


def _directive(name: str) -> re.Pattern[str]:
    """A regex matching one whole ``{name}`` directive block, fence to fence.

    >>> bool(_directive("solution-end").search("```{solution-end}\\n```"))
    True
    """
    return re.compile(
        r"^[ \t]*" + _FENCE % re.escape(name) + r"[^\n]*\n"  # opening line
        r"(?:.*?\n)??"                                        # options, body
        r"[ \t]*(?P=fence)[ \t]*$",                           # closing fence
        re.MULTILINE | re.DOTALL,
    )


_START = _directive("solution-start")
_END = _directive("solution-end")
_EXERCISE = re.compile(
    r"^[ \t]*(?:`{3,}|:{3,})[ \t]*\{exercise(?:-start)?\}[^\n]*\n"
    r"(?P<options>(?:[ \t]*:[\w-]+:[^\n]*\n)*)",
    re.MULTILINE,
)
_LABEL = re.compile(r"^[ \t]*:label:[ \t]*(\S+)", re.MULTILINE)
_SOLUTION_OF = re.compile(r"\{solution-start\}[ \t]*(\S+)")


def chapter_notebooks(folder: Path) -> list[Path]:
    """The chapter notebooks ``NN_slug.ipynb`` in ``folder``, in order.

    >>> [p.name for p in chapter_notebooks(Path("notebooks"))][:2]
    ['01_splitting_a_matrix.ipynb', '02_time_budget.ipynb']
    """
    return sorted(p for p in Path(folder).glob("[0-9][0-9]_*.ipynb") if p.is_file())


def exercise_labels(notebook: nbformat.NotebookNode) -> list[str]:
    """The ``:label:`` of every exercise directive in ``notebook``, in order.

    >>> import nbformat
    >>> cell = nbformat.v4.new_markdown_cell("```{exercise-start}\\n:label: ex-a\\n```\\nText")
    >>> exercise_labels(nbformat.v4.new_notebook(cells=[cell]))
    ['ex-a']
    """
    labels = []
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        for block in _EXERCISE.finditer(cell.source):
            labels.extend(_LABEL.findall(block.group("options")))
    return labels


def _answer_cell(label: str | None, number: int, code: bool) -> nbformat.NotebookNode:
    """An empty answer cell where a solution used to be: code if the solution ran code.

    >>> _answer_cell("ex-a", 1, code=False).source
    '*Your answer to ex-a (double-click to edit):*'
    """
    name = label or f"exercise {number}"
    if code:
        cell = nbformat.v4.new_code_cell(f"# Your answer to {name}")
    else:
        cell = nbformat.v4.new_markdown_cell(f"*Your answer to {name} (double-click to edit):*")
    cell.id = re.sub(r"[^A-Za-z0-9_-]", "-", f"answer-{name}")[:64]
    return cell


def _kept(cell: nbformat.NotebookNode, text: str) -> list[nbformat.NotebookNode]:
    """``cell`` with its source replaced by ``text``, or nothing if ``text`` is blank."""
    text = text.strip("\n")
    if not text.strip():
        return []
    new = copy.deepcopy(cell)
    new.source = text
    return [new]


def strip_solutions(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``notebook`` without solutions, an answer cell in place of each.

    A solution may lie inside one markdown cell (a prose answer) or span
    several cells; marker cells may hold other text, which is kept.

    >>> import nbformat
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
                text = text[start.end():]
            else:
                end = _END.search(text)
                if not end:
                    break  # the rest of this cell belongs to the solution
                pieces.append(_answer_cell(inside or None, count, ran_code))
                ran_code = False
                inside = None
                text = text[end.end():]
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
        raise ValueError(f"solution of {inside or 'an exercise'} starts but never ends "
                         "(solution-end missing)")
    result.cells = _unique_ids(cells)
    return result


def _unique_ids(cells: list[nbformat.NotebookNode]) -> list[nbformat.NotebookNode]:
    """Give a fresh id to any cell whose id repeats (a marker cell split in two).

    >>> import nbformat
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


def clear_outputs(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Remove outputs and execution counts in place; set kernelspec ``python3``.

    >>> import nbformat
    >>> cell = nbformat.v4.new_code_cell("1", execution_count=3, outputs=[{"output_type": "stream", "name": "stdout", "text": "1"}])
    >>> cleared = clear_outputs(nbformat.v4.new_notebook(cells=[cell]))
    >>> cleared.cells[0].outputs, cleared.cells[0].execution_count, cleared.metadata.kernelspec.name
    ([], None, 'python3')
    """
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return clean(notebook)


def make_student(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The student version of one chapter notebook (a new notebook).

    >>> import nbformat
    >>> make_student(nbformat.v4.new_notebook()).cells[0].source.startswith("**Student version.**")
    True
    """
    student = clear_outputs(strip_solutions(notebook))
    note = nbformat.v4.new_markdown_cell(NOTE)
    note.id = "student-note"
    student.cells.insert(0, note)
    return student


def main(argv: list[str] | None = None) -> list[Path]:
    """Write a student copy of every chapter notebook; return the paths written."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        raise SystemExit("usage: python -m tools.student SOURCE_FOLDER TARGET_FOLDER")
    source, target = Path(argv[0]), Path(argv[1])
    chapters = chapter_notebooks(source)
    if not chapters:
        raise SystemExit(f"no chapter notebooks NN_slug.ipynb in {source}")
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for path in chapters:
        original = nbformat.read(path, as_version=4)
        student = make_student(original)
        out = target / path.name
        nbformat.validate(student)
        nbformat.write(student, out)
        written.append(out)
        print(f"{out}: {len(exercise_labels(student))} exercises, "
              f"{len(student.cells)} cells (from {len(original.cells)})")
    return written


if __name__ == "__main__":
    main()
