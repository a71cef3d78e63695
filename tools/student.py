"""Write student copies of the chapter notebooks: exercises kept, solutions gone, plain Markdown.

Usage: ``python -m tools.student notebooks _build/student`` (``make student``;
add ``--execute`` to run every chapter first instead of reading the glued
values from its stored outputs). With ``--full`` it writes the teacher's
reading copies instead (:func:`make_full`: solutions and outputs kept, the
same plain Markdown), e.g. ``python -m tools.student --full notebooks _build/full``.

Every chapter ``NN_slug.ipynb`` in the source folder becomes
``NN_slug.ipynb`` in the target folder with

* every solution removed: each cell from the markdown cell holding a
  ``{solution-start}`` directive through the cell holding its
  ``{solution-end}`` directive. Text in those two marker cells that lies
  outside the solution (an exercise that shares a cell with the start marker,
  a heading after the end marker) is kept;
* an empty cell in the place of each removed solution, for the answer (a
  code cell where the solution ran code, a markdown cell where it was prose);
* every exercise kept, under a heading "Exercise N.k";
* the markdown in plain Markdown that JupyterLab shows as the book does
  (:mod:`tools.myst_plain`): glued numbers and figures pasted in from the
  chapter's stored outputs (or from a fresh run when some are missing),
  cross-references as words or links, no ``(label)=`` targets;
* outputs cleared and execution counts reset; kernelspec and metadata as
  JupyterLab writes them, so that a notebook does not show as modified the
  moment it opens;
* a short note at the top.

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
>>> print(student.cells[1].source)
## Exercises
<BLANKLINE>
### Exercise 1
<BLANKLINE>
Add 1 and 1.
>>> student.cells[2].source, student.cells[3].source
('# Your answer to exercise 1', '## Next')
>>> exercise_labels(student), exercise_labels(nbformat.v4.new_notebook(cells=cells))
([], ['ex-demo'])
"""

from __future__ import annotations

import copy
import platform
import re
import sys
from pathlib import Path

import nbformat

from tools.execute import KERNELSPEC, execute
from tools.myst_plain import BookIndex, book_index, glue_values, glued_names, index_notebook, to_plain

__all__ = [
    "NOTE",
    "STUDENT_KERNELSPEC",
    "STUDENT_LANGUAGE",
    "chapter_notebooks",
    "exercise_labels",
    "exercise_headings",
    "strip_solutions",
    "FULL_NOTE",
    "lab_metadata",
    "clear_outputs",
    "plain_markdown",
    "make_student",
    "make_full",
    "main",
]

NOTE = (
    "**Student version.** The exercises are all here; their solutions are not. "
    "Each exercise is followed by an empty cell for your answer. Run the cells "
    "from the top, in order: the numbers in the text are the ones the code "
    "computes. Studying on your own? The worked solutions are in the book's "
    "HTML version of this chapter, in the dropdown under each exercise. In a "
    "workshop, your teacher goes through them."
)

FULL_NOTE = (
    "**Teacher's reading copy.** The whole chapter with its stored outputs and every "
    "solution (under \"Solution to exercise N.k\"), in plain Markdown. The book's source "
    "notebook is `notebooks/` in the repository."
)

#: Kernelspec and language exactly as JupyterLab writes them once the kernel
#: (ipykernel) has started: it rewrites both, and any difference shows the
#: notebook as modified (●) before the reader has done anything. The version
#: is the Python that writes the student notebooks; a laptop with another
#: Python release sees the ● once, harmlessly. The kernelspec is the one every
#: committed notebook names (:data:`tools.execute.KERNELSPEC`).
STUDENT_KERNELSPEC = KERNELSPEC
STUDENT_LANGUAGE = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
    "version": platform.python_version(),
}

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


def exercise_headings(notebook: nbformat.NotebookNode) -> list[str]:
    """The "### Exercise N.k" headings of a student notebook, in order.

    >>> import nbformat
    >>> cell = nbformat.v4.new_markdown_cell("### Exercise 2.1\\n\\n**Twice.** Do it.")
    >>> exercise_headings(nbformat.v4.new_notebook(cells=[cell]))
    ['Exercise 2.1']
    """
    return [match.group(1) for cell in notebook.cells if cell.cell_type == "markdown"
            for match in re.finditer(r"^### (Exercise[^\n]*)$", cell.source, re.MULTILINE)]


def _answer_cell(label: str | None, number: int, code: bool,
                 names: dict[str, str] | None = None) -> nbformat.NotebookNode:
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


def strip_solutions(notebook: nbformat.NotebookNode,
                    names: dict[str, str] | None = None) -> nbformat.NotebookNode:
    """A copy of ``notebook`` without solutions, an answer cell in place of each.

    A solution may lie inside one markdown cell (a prose answer) or span
    several cells; marker cells may hold other text, which is kept. The
    answer cell names the exercise by ``names[label]`` where given.

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
                pieces.append(_answer_cell(inside or None, count, ran_code, names))
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


def lab_metadata(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Set the metadata JupyterLab writes on opening; keep only cell tags, in place.

    The notebook-level metadata becomes :data:`STUDENT_KERNELSPEC` and
    :data:`STUDENT_LANGUAGE`: JupyterLab rewrites both from the running
    kernel, and any difference marks the notebook as modified. A code cell
    the book hides (``remove-input``, ``remove-output``, ``remove-cell``)
    opens collapsed in JupyterLab (``jupyter.source_hidden`` and
    ``outputs_hidden``); one click shows it.

    >>> import nbformat
    >>> cell = nbformat.v4.new_code_cell("1", metadata={"tags": ["remove-input"], "scrolled": True})
    >>> notebook = lab_metadata(nbformat.v4.new_notebook(cells=[cell]))
    >>> notebook.cells[0].metadata, notebook.metadata.kernelspec.display_name
    ({'tags': ['remove-input'], 'jupyter': {'source_hidden': True}}, 'Python 3 (ipykernel)')
    """
    for cell in notebook.cells:
        tags = list(cell.metadata.get("tags", []))
        metadata: dict = {"tags": tags} if tags else {}
        hidden = {"source_hidden": True} if {"remove-input", "remove-cell", "hide-input"} & set(tags) else {}
        if {"remove-output", "remove-cell", "hide-output"} & set(tags):
            hidden["outputs_hidden"] = True
        if hidden and cell.cell_type == "code":  # what the book hides, JupyterLab shows collapsed
            metadata["jupyter"] = hidden
        cell.metadata = nbformat.from_dict(metadata)
    notebook.metadata = nbformat.from_dict({
        "kernelspec": dict(STUDENT_KERNELSPEC),
        "language_info": dict(STUDENT_LANGUAGE),
    })
    notebook.nbformat, notebook.nbformat_minor = 4, 5
    return notebook


def clear_outputs(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Remove outputs and execution counts, then :func:`lab_metadata`, in place.

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
    return lab_metadata(notebook)


def plain_markdown(notebook: nbformat.NotebookNode, index: BookIndex,
                   glue: dict[str, dict]) -> nbformat.NotebookNode:
    """Rewrite every markdown cell of ``notebook`` with :func:`tools.myst_plain.to_plain`, in place.

    Figures pasted in become attachments of their cell.
    """
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        cell.source, attachments = to_plain(cell.source, index, glue)
        if attachments:
            cell.attachments = nbformat.NotebookNode(attachments)
    return notebook


def make_student(notebook: nbformat.NotebookNode, index: BookIndex | None = None,
                 folder: Path | None = None) -> nbformat.NotebookNode:
    """The student version of one chapter notebook (a new notebook).

    ``index`` numbers chapters, figures, equations and exercises across the
    book (:func:`tools.myst_plain.book_index`); without it they are numbered
    within this notebook alone. Glued values come from the stored outputs;
    if some are missing, a copy of the notebook is executed in ``folder``
    first (``ValueError`` without a folder).

    >>> import nbformat
    >>> make_student(nbformat.v4.new_notebook()).cells[0].source.startswith("**Student version.**")
    True
    """
    index = index if index is not None else index_notebook(notebook)
    glue = glue_values(notebook)
    missing = glued_names(notebook) - set(glue)
    if missing:
        if folder is None:
            raise ValueError(f"glued values {sorted(missing)} are not in the stored outputs: "
                             "execute the notebook first (or pass its folder)")
        glue = glue_values(execute(copy.deepcopy(notebook), Path(folder)))
    names = {label: f"exercise {target.number}" for label, target in index.exercises.items()}
    student = strip_solutions(notebook, names)
    plain_markdown(clear_outputs(student), index, glue)
    note = nbformat.v4.new_markdown_cell(NOTE)
    note.id = "student-note"
    student.cells.insert(0, note)
    return student


def make_full(notebook: nbformat.NotebookNode, index: BookIndex | None = None) -> nbformat.NotebookNode:
    """A reading copy of one executed chapter for the teacher: everything kept, plain Markdown.

    Outputs and solutions stay (each solution under a heading "Solution to
    exercise N.k"); the markdown is rewritten as for students, so the chapter
    reads cleanly in JupyterLab with or without a MyST extension.

    >>> import nbformat
    >>> cell = nbformat.v4.new_markdown_cell("```{solution-start} ex-a\\n:class: dropdown\\n```\\nBecause.\\n```{solution-end}\\n```")
    >>> make_full(nbformat.v4.new_notebook(cells=[cell])).cells[1].source
    '#### Solution\\n\\nBecause.'
    """
    index = index if index is not None else index_notebook(notebook)
    glue = glue_values(notebook)
    missing = glued_names(notebook) - set(glue)
    if missing:
        raise ValueError(f"glued values {sorted(missing)} are not in the stored outputs: execute the notebook first")
    full = plain_markdown(lab_metadata(copy.deepcopy(notebook)), index, glue)
    note = nbformat.v4.new_markdown_cell(FULL_NOTE)
    note.id = "teacher-note"
    full.cells.insert(0, note)
    return full


def main(argv: list[str] | None = None) -> list[Path]:
    """Write a student copy of every chapter notebook; return the paths written."""
    argv = sys.argv[1:] if argv is None else argv
    run, full = "--execute" in argv, "--full" in argv
    argv = [arg for arg in argv if arg not in ("--execute", "--full")]
    if len(argv) != 2:
        raise SystemExit("usage: python -m tools.student [--execute] [--full] SOURCE_FOLDER TARGET_FOLDER")
    source, target = Path(argv[0]), Path(argv[1])
    chapters = chapter_notebooks(source)
    if not chapters:
        raise SystemExit(f"no chapter notebooks NN_slug.ipynb in {source}")
    root = source.resolve().parent
    index = book_index(source, root / "book", root / "references.bib")
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for path in chapters:
        original = nbformat.read(path, as_version=4)
        if run:
            original = execute(original, path.parent)
        student = make_full(original, index) if full else make_student(original, index, folder=path.parent)
        out = target / path.name
        nbformat.validate(student)
        nbformat.write(student, out)
        written.append(out)
        print(f"{out}: {len(exercise_headings(student))} exercises, "
              f"{len(student.cells)} cells (from {len(original.cells)})")
    return written


if __name__ == "__main__":
    main()
