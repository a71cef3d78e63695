"""Write student copies of the chapter notebooks: exercises kept, solutions gone, plain Markdown.

Usage: ``python -m tools.teaching.student notebooks _build/student`` (``make student``;
add ``--execute`` to run every chapter first instead of reading the glued
values from its stored outputs). With ``--full`` it writes the teacher's
reading copies instead (:func:`make_full`: solutions and outputs kept, the
same plain Markdown), e.g. ``python -m tools.teaching.student --full notebooks _build/full``.

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
* the book's ``glue(...)`` calls taken out of the code (:mod:`tools.teaching.unglue`):
  the prose shows the numbers they glue as plain text already;
* the markdown in plain Markdown that JupyterLab shows as the book does
  (:mod:`tools.teaching.myst_plain`): glued numbers and figures pasted in from the
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
>>> from tools.notebooks.book_index import exercise_statements
>>> exercise_statements(student), exercise_statements(nbformat.v4.new_notebook(cells=cells))
({}, {'ex-demo': 'Add 1 and 1.'})
"""

from __future__ import annotations

import copy
import platform
import re
import sys
from pathlib import Path

import nbformat

from tools.notebooks.book_index import BookIndex, book_index, chapter_notebooks, index_notebook
from tools.notebooks.execute import KERNELSPEC, execute
from tools.notebooks.glue import glue_values, glued_names
from tools.teaching.myst_plain import to_plain
from tools.teaching.solutions import strip_solutions
from tools.teaching.unglue import unglue_notebook

__all__ = [
    "NOTE",
    "STUDENT_LANGUAGE",
    "exercise_headings",
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
    "computes (the book's `glue()` calls, which carry them into its pages, are "
    "left out here). Studying on your own? The published book, and a build from "
    "the repository (`make book`), show each worked solution in a dropdown under "
    "its exercise. A workshop's participant copy of the book leaves the solutions "
    "out: there, your teacher goes through them."
)

FULL_NOTE = (
    "**Teacher's reading copy.** The whole chapter with its stored outputs and every "
    'solution (under "Solution to exercise N.k"), in plain Markdown. The book\'s source '
    "notebook is `notebooks/` in the repository."
)

#: Language exactly as JupyterLab writes it once the kernel (ipykernel) has
#: started: it rewrites it, and any difference shows the notebook as modified
#: (●) before the reader has done anything. The version is the Python that
#: writes the student notebooks; a laptop with another Python release sees the
#: ● once, harmlessly. The kernelspec is the one every committed notebook names
#: (:data:`tools.notebooks.execute.KERNELSPEC`), as JupyterLab writes it too.
STUDENT_LANGUAGE = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
    "version": platform.python_version(),
}


def exercise_headings(notebook: nbformat.NotebookNode) -> list[str]:
    """The "### Exercise N.k" headings of a student notebook, in order.

    >>> import nbformat
    >>> cell = nbformat.v4.new_markdown_cell("### Exercise 2.1\\n\\n**Twice.** Do it.")
    >>> exercise_headings(nbformat.v4.new_notebook(cells=[cell]))
    ['Exercise 2.1']
    """
    return [
        match.group(1)
        for cell in notebook.cells
        if cell.cell_type == "markdown"
        for match in re.finditer(r"^### (Exercise[^\n]*)$", cell.source, re.MULTILINE)
    ]


def lab_metadata(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Set the metadata JupyterLab writes on opening; keep only cell tags, in place.

    The notebook-level metadata becomes :data:`tools.notebooks.execute.KERNELSPEC` and
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
    notebook.metadata = nbformat.from_dict(
        {
            "kernelspec": dict(KERNELSPEC),
            "language_info": dict(STUDENT_LANGUAGE),
        }
    )
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


def plain_markdown(notebook: nbformat.NotebookNode, index: BookIndex, glue: dict[str, dict]) -> nbformat.NotebookNode:
    """Rewrite every markdown cell of ``notebook`` with :func:`tools.teaching.myst_plain.to_plain`, in place.

    Figures pasted in become attachments of their cell.

    >>> cell = nbformat.v4.new_markdown_cell("Split: {glue:text}`t2:.1f` ms.")
    >>> notebook = nbformat.v4.new_notebook(cells=[cell])
    >>> plain_markdown(notebook, BookIndex(), {"t2": {"text/plain": "9.22"}}).cells[0].source
    'Split: 9.2 ms.'
    """
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        cell.source, attachments = to_plain(cell.source, index, glue)
        if attachments:
            cell.attachments = nbformat.NotebookNode(attachments)
    return notebook


def _index_and_glue(
    notebook: nbformat.NotebookNode, index: BookIndex | None, folder: Path | None = None
) -> tuple[BookIndex, dict[str, dict]]:
    """``index`` (by default the notebook's own) and the values the notebook's markdown glues.

    Values missing from the stored outputs come from running a copy of the
    notebook in ``folder``; without a folder they raise ``ValueError``.

    >>> cell = nbformat.v4.new_markdown_cell("{glue:text}`t2`")
    >>> _index_and_glue(nbformat.v4.new_notebook(cells=[cell]), None)
    Traceback (most recent call last):
    ...
    ValueError: glued values ['t2'] are not in the stored outputs: execute the notebook first
    """
    index = index if index is not None else index_notebook(notebook)
    glue = glue_values(notebook)
    missing = glued_names(notebook) - set(glue)
    if missing:
        if folder is None:
            raise ValueError(
                f"glued values {sorted(missing)} are not in the stored outputs: execute the notebook first"
            )
        glue = glue_values(execute(copy.deepcopy(notebook), Path(folder)))
    return index, glue


def make_student(
    notebook: nbformat.NotebookNode, index: BookIndex | None = None, folder: Path | None = None
) -> nbformat.NotebookNode:
    """The student version of one chapter notebook (a new notebook).

    ``index`` numbers chapters, figures, equations and exercises across the
    book (:func:`tools.notebooks.book_index.book_index`); without it they are numbered
    within this notebook alone. Glued values come from the stored outputs;
    if some are missing, a copy of the notebook is executed in ``folder``
    first (``ValueError`` without a folder).

    >>> import nbformat
    >>> make_student(nbformat.v4.new_notebook()).cells[0].source.startswith("**Student version.**")
    True
    """
    index, glue = _index_and_glue(notebook, index, folder)
    names = {label: f"exercise {target.number}" for label, target in index.exercises.items()}
    student = unglue_notebook(strip_solutions(notebook, names))
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
    index, glue = _index_and_glue(notebook, index)
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
        raise SystemExit("usage: python -m tools.teaching.student [--execute] [--full] SOURCE_FOLDER TARGET_FOLDER")
    source, target = Path(argv[0]), Path(argv[1])
    chapters = chapter_notebooks(source)
    if not chapters:
        raise SystemExit(f"no chapter notebooks NN_slug.ipynb in {source}")
    index = book_index(source)
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
        print(
            f"{out}: {len(exercise_headings(student))} exercises, "
            f"{len(student.cells)} cells (from {len(original.cells)})"
        )
    return written


if __name__ == "__main__":
    main()
