"""Every exercise of the book with its solution, as MyST for the teacher's answer sheet.

``book/answers.md`` runs :func:`show` in a hidden code cell, so the sheet is
written from the chapter notebooks at every book build and never drifts from
them. For each chapter it takes the ``## Exercises`` section: statements and
solutions, their prose with glued numbers pasted in
(:func:`tools.teaching.myst_plain.to_plain` with ``book=True``), their code, and the
text the code printed. Figures are named, not drawn (the chapter shows them);
hidden cells (``remove-input``, ``remove-cell``) are left out.

The participant bundle leaves the sheet out (:data:`tools.teaching.participant_html.ANSWER_PAGES`).

>>> text = chapter_sheet(Path("notebooks/02_time_budget.ipynb"), book_index(Path("notebooks")))
>>> text.startswith("```{rubric} Chapter 2. The time budget")
True
>>> "**Exercise 2.1.**" in text and "**Solution 2.1.**" in text and "{glue" not in text
True
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from tools.notebooks.book_index import BookIndex, book_index, chapter_notebooks
from tools.notebooks.glue import glue_values
from tools.notebooks.myst_syntax import HEADING
from tools.teaching.myst_plain import to_plain

__all__ = ["MAX_OUTPUT_LINES", "chapter_sheet", "sheet", "show"]

#: Printed output longer than this is cut, with a note: the sheet is for paper.
MAX_OUTPUT_LINES = 25


def _printed(cell: nbformat.NotebookNode) -> tuple[str, bool]:
    """The text a code cell printed or returned, and whether it also drew a figure."""
    parts, figure = [], False
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            parts.append(output.text)
        elif output.output_type in ("execute_result", "display_data"):
            data = output.get("data", {})
            if "scrapbook" in output.get("metadata", {}):
                continue  # a glued value: it appears where the prose pastes it
            if any(key.startswith("image/") for key in data):
                figure = True
            elif "text/plain" in data:
                parts.append(data["text/plain"] + "\n")
    lines = "".join(parts).rstrip("\n").split("\n") if parts else []
    if len(lines) > MAX_OUTPUT_LINES:
        lines = lines[:MAX_OUTPUT_LINES] + [f"... ({len(lines) - MAX_OUTPUT_LINES} more lines)"]
    return "\n".join(lines), figure


def chapter_sheet(path: Path, index: BookIndex) -> str:
    """The exercises and solutions of one chapter notebook, as MyST without headings or labels."""
    notebook = nbformat.read(path, as_version=4)
    glue = glue_values(notebook)
    title = next((t for t in index.chapters.values() if t.file == path.name), None)
    heading = f"{title.number}. {title.title}" if title else path.stem
    parts = [f"```{{rubric}} {heading}\n```"]
    started = False
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            if not started:
                match = re.search(r"^##[ \t]+Exercises[ \t]*$", cell.source, re.MULTILINE)
                if not match:
                    continue
                started, source = True, cell.source[match.end() :]
            else:
                source = cell.source
            text, _ = to_plain(source, index, glue, book=True)
            text = HEADING.sub(lambda m: f"**{m.group('title').strip()}**", text)
            if text.strip():
                parts.append(text.strip())
        elif started and cell.cell_type == "code":
            tags = set(cell.metadata.get("tags", []))
            if tags & {"remove-input", "remove-cell", "hide-cell"} or not cell.source.strip():
                continue
            code = "\n".join(
                line for line in cell.source.strip().split("\n") if not line.startswith("glue(")
            )  # the book's plumbing, not the answer
            parts.append(f"```python\n{code.strip()}\n```")
            printed, figure = ("", False) if "remove-output" in tags else _printed(cell)
            if printed:
                parts.append(f"```text\n{printed}\n```")
            if figure:
                parts.append("*(This cell draws a figure; the chapter shows it.)*")
    return "\n\n".join(parts) + "\n"


def sheet(notebooks: Path) -> list[str]:
    """:func:`chapter_sheet` for every chapter ``NN_slug.ipynb`` in ``notebooks``, in order.

    >>> [text.split("\\n", 1)[0] for text in sheet(Path("notebooks"))][1]
    '```{rubric} Chapter 2. The time budget'
    """
    index = book_index(notebooks)
    return [chapter_sheet(path, index) for path in chapter_notebooks(notebooks)]


def show(root: Path | str = "..") -> None:
    """Display the whole sheet as Markdown outputs (one per chapter): what ``book/answers.md`` runs."""
    from IPython.display import Markdown, display

    root = Path(root)
    for text in sheet(root / "notebooks"):
        display(Markdown(text))
