"""The workshop's pages written from its plan: the guide's agendas, the timetable, the exercise sheet.

A Sphinx extension (set up by :mod:`tools.sphinx.html_tweaks`) with three
directives, each taking an agenda's key of ``book/workshop_plan.yml``
(:mod:`tools.teaching.workshop_plan`)::

    ```{workshop-timetable} 90min
    :teacher:
    ```
    ```{workshop-agenda} 90min
    ```
    ```{workshop-exercises} 90min
    ```

``workshop-timetable`` is the table of blocks (with ``:teacher:``, also their
minutes and how many cells each runs); ``workshop-agenda`` is every block minute by minute,
with each live step's cells named as the teacher finds them in the student
notebook (:func:`cell_label`); ``workshop-exercises`` is the room's exercise
sheet, each statement with its glued numbers pasted in and room for an
answer. They write MyST (:func:`timetable`, :func:`agenda`,
:func:`exercise_sheet`) that the page then parses, so every time, count and
cell in the pages comes from the plan, and the plan's test runs what they say.

>>> print(timetable(load()[0]).splitlines()[3])
| 0:00–0:04 | Opening |  |
"""

from __future__ import annotations

import ast
import sys
from functools import cache
from pathlib import Path

if not __package__:  # loaded by Sphinx from tools/ as a top-level module: make the package importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import nbformat

from tools.notebooks.book_index import BookIndex, book_index, exercise_statements
from tools.notebooks.glue import glue_values
from tools.notebooks.myst_syntax import HEADING, strip_markup
from tools.teaching.myst_plain import to_plain
from tools.teaching.solutions import strip_solutions
from tools.teaching.unglue import unglue, unglue_notebook
from tools.teaching.workshop_plan import KINDS, Agenda, Block, Step, clock, load

__all__ = ["NOTEBOOKS", "timetable", "cell_label", "agenda", "exercise_sheet", "setup"]

#: The chapters the plan's cells come from.
NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@cache
def _notebook(name: str) -> nbformat.NotebookNode:
    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


@cache
def _student_code(name: str) -> nbformat.NotebookNode:
    """The chapter's cells as the student copy has them (solutions out, glue-only cells gone)."""
    return unglue_notebook(strip_solutions(_notebook(name)))


@cache
def _index() -> BookIndex:
    return book_index(NOTEBOOKS, NOTEBOOKS.parent / "book")


def _span(block: Block) -> str:
    return f"{clock(block.start)}–{clock(block.end)}"


def _refs(labels: list[str]) -> str:
    return ", ".join(f"{{ref}}`{label}`" for label in labels)


def _live_cells(block: Block) -> tuple[int, int]:
    cells = [cell for step in block.steps if step.kind == "live" for cell in step.cells]
    return len(cells), sum(cell.role == "live" for cell in cells)


def timetable(agenda: Agenda, teacher: bool = False) -> str:
    """The agenda's blocks as a Markdown table; with ``teacher``, also the minutes and the cells each block runs.

    The participants' table has three columns (time, block, chapters) inside a
    ``workshop-timetable`` div, which ``_static/fit.css`` wraps within the
    text column at every width instead of letting it scroll sideways.
    """
    if teacher:
        rows = ["| time | min | block | chapters | cells run (live-coded) |", "|---|---|---|---|---|"]
    else:
        rows = [":::{div} workshop-timetable", "| time | block | chapters |", "|---|---|---|"]
    for block in agenda.blocks:
        if teacher:
            run, live = _live_cells(block)
            rows.append(
                f"| {_span(block)} | {block.minutes} | {block.title} | {_refs(block.chapters)} | "
                f"{f'{run} ({live})' if run else ''} |"
            )
        else:
            rows.append(f"| {_span(block)} | {block.title} | {_refs(block.chapters)} |")
    return "\n".join(rows + ([] if teacher else [":::"]))


def _first_line(source: str) -> str:
    lines = [line for line in unglue(source).split("\n") if line.strip() and not line.lstrip().startswith("#")]
    text = lines[0].strip() if lines else ""
    return text if len(text) <= 60 else text[:57].rstrip() + "…"


def cell_label(notebook: nbformat.NotebookNode, cell_id: str) -> str:
    """Where the teacher finds a cell: its section, its place among the section's code cells, its first line.

    >>> cells = [nbformat.v4.new_markdown_cell("## Setup"), nbformat.v4.new_code_cell("import numpy", id="a1"),
    ...          nbformat.v4.new_markdown_cell("## The *base* case"), nbformat.v4.new_code_cell("t = 1", id="b1"),
    ...          nbformat.v4.new_code_cell("assert t", id="b2")]
    >>> notebook = nbformat.v4.new_notebook(cells=cells)
    >>> cell_label(notebook, "a1"), cell_label(notebook, "b2")
    ('the Setup cell', '"The base case", code cell 2: `assert t`')
    """
    section, count = "", 0
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            headings = HEADING.findall(cell.source)
            if headings:
                section, count = strip_markup(headings[-1]).strip(), 0
            continue
        count += cell.cell_type == "code"
        if cell.get("id") == cell_id:
            if section == "Setup":
                return "the Setup cell"
            return f'"{section}", code cell {count}: `{_first_line(cell.source)}`'
    raise KeyError(f"no cell {cell_id} in the notebook")


def _names(source: str, stored: bool) -> set[str]:
    try:
        tree = ast.parse(unglue(source))
    except SyntaxError:
        return set()
    kind = ast.Store if stored else ast.Load
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, kind)}


_ROLE_NOTES = {"check": " (collapsed; Shift-Enter runs it next)", "setup": "", "live": ""}


def _cell_lines(step: Step) -> list[str]:
    notebook = _student_code(step.notebook)
    sources = {cell.get("id"): cell.source for cell in notebook.cells}
    lines = []
    for at, cell in enumerate(step.cells):
        note = _ROLE_NOTES.get(cell.role, "")
        if cell.role == "needs":
            later = set().union(*(_names(sources[c.id], stored=False) for c in step.cells[at + 1 :]))
            used = sorted(_names(sources[cell.id], stored=True) & later)
            note = " (run it without discussing it: it defines " + ", ".join(f"`{n}`" for n in used) + ")"
        lines.append(f"  {at + 1}. {cell_label(notebook, cell.id)}{note}")
    return lines


def _step_lines(step: Step) -> list[str]:
    head = f"- **{clock(step.start)} {KINDS[step.kind]}, {step.minutes} min"
    if step.kind == "live":
        live = sum(cell.role == "live" for cell in step.cells)
        head += f"** (`student/{step.notebook}.ipynb`, {len(step.cells)} cells in order, {live} of them to explain):"
    words = [f"{{ref}}`{label}`." for label in step.exercises] + step.questions + [step.text] * bool(step.text)
    if step.kind != "live":
        head += ":**" if words else "**"
    if step.cut:
        words.append(f"*Cut if late:* {step.cut}.")
    return [" ".join([head, *words])] + (_cell_lines(step) if step.kind == "live" else [])


def agenda(plan: Agenda) -> str:
    """Every block of ``plan``, minute by minute, as MyST: what to do, run, set and ask."""
    cells = [cell for block in plan.blocks for step in block.steps if step.kind == "live" for cell in step.cells]
    live = sum(cell.role == "live" for cell in cells)
    parts = [
        timetable(plan, teacher=True),
        f"{len(cells)} cells to run in {plan.minutes} minutes, {live} of them live-coded (the rest are "
        f"Setup cells, collapsed checks and cells a later one needs); {plan.slack} minutes of buffer "
        f"({100 * plan.slack / plan.minutes:.0f} %).",
    ]
    for block in plan.blocks:
        chapters = f" ({_refs(block.chapters)}, {block.minutes} min)" if block.chapters else f" ({block.minutes} min)"
        lines = [f"**{_span(block)} · {block.title}**{chapters}", ""]
        for step in block.steps:
            lines += _step_lines(step)
        if block.leave_with:
            lines.append(f"- *Leave with:* {block.leave_with}")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def exercise_sheet(plan: Agenda) -> str:
    """The exercises ``plan`` sets in the room, in order, each with its statement and room for the answer.

    Each exercise is one ``exercise-sheet-item`` block, which the printout keeps on one sheet
    (``_static/exercise-sheet.css``).
    """
    index, parts = _index(), []
    for _, step in plan.steps("set"):
        for label in step.exercises:
            target = index.exercises[label]
            notebook = _notebook(target.file.removesuffix(".ipynb"))
            statement, _ = to_plain(exercise_statements(notebook)[label], index, glue_values(notebook), book=True)
            statement = HEADING.sub(lambda m: f"**{m.group('title').strip()}**", statement)
            parts.append(
                f"::::::{{div}} exercise-sheet-item\n**{clock(step.start)} · Exercise {target.number}** "
                f"({step.minutes} min)\n\n{statement}\n\n```{{div}} exercise-sheet-answer\n*Your answer:*\n```"
                "\n::::::"
            )
    return "\n\n".join(parts)


def _directive(render):
    """A directive class whose one argument is an agenda's key and whose content is ``render(agenda, options)``."""
    from docutils.parsers.rst import directives
    from sphinx.util.docutils import SphinxDirective

    class Directive(SphinxDirective):
        required_arguments = 1
        option_spec = {"teacher": directives.flag}

        def run(self):
            from docutils import nodes
            from docutils.statemachine import StringList

            self.env.note_dependency(str(Path(__file__).resolve().parents[2] / "book" / "workshop_plan.yml"))
            plans = {plan.key: plan for plan in load()}
            if self.arguments[0] not in plans:
                raise self.error(f"no agenda {self.arguments[0]!r} in book/workshop_plan.yml: {sorted(plans)}")
            container = nodes.container()
            text = render(plans[self.arguments[0]], self.options)
            self.state.nested_parse(
                StringList(text.split("\n"), source=self.get_source_info()[0]), self.content_offset, container
            )
            return container.children

    return Directive


def setup(app) -> dict:
    app.add_directive("workshop-timetable", _directive(lambda plan, options: timetable(plan, "teacher" in options)))
    app.add_directive("workshop-agenda", _directive(lambda plan, options: agenda(plan)))
    app.add_directive("workshop-exercises", _directive(lambda plan, options: exercise_sheet(plan)))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
