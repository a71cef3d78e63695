"""The workshop plan (``book/workshop_plan.yml``) holds together, and every live-coding step runs.

* Each agenda adds up to its length, with about a tenth of it as buffer and
  something marked "cut if late"; every exercise, chapter and cell it names
  exists.
* Every live step runs in a fresh kernel from the student notebook, exactly
  the cells it names, in order, with torch blocked as on a participant's
  laptop without it. A failure names the agenda, the block, the notebook and
  the cell id, so whoever edits a chapter can fix the plan.
* The cells' roles are what the teacher will meet: the Setup cell is the
  chapter's first code cell, a check is a collapsed cell, a live cell is
  visible code, the cells come in notebook order, and a collapsed check right
  after a live cell (the next Shift-Enter) is in the plan too.
* The answer sheet's model answers stand at the times the agendas ask.
"""

from __future__ import annotations

import ast
import copy
import re
from functools import cache
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

import tools.sphinx.workshop_pages as workshop_pages
from tools.notebooks.book_index import book_index
from tools.sphinx.workshop_pages import cell_label
from tools.teaching.student import make_student
from tools.teaching.workshop_plan import PLAN, Agenda, Step, clock, load

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
AGENDAS = load()
INDEX = book_index(NOTEBOOKS, ROOT / "book")
LIVE = [(agenda, block, step) for agenda in AGENDAS for block, step in agenda.steps("live")]

#: As in tests/book/test_student.py: ``import torch`` fails in the kernel, as where it is not installed.
WITHOUT_TORCH = "--InteractiveShellApp.exec_lines=import sys; sys.modules['torch'] = None"


@cache
def _student(name: str) -> nbformat.NotebookNode:
    path = NOTEBOOKS / f"{name}.ipynb"
    return make_student(nbformat.read(path, as_version=4), INDEX, folder=NOTEBOOKS)


def _where(agenda: Agenda, step: Step) -> str:
    return f"{agenda.key} agenda, step at {clock(step.start)}, student/{step.notebook}.ipynb"


def _hidden(cell) -> bool:
    return bool(cell.get("metadata", {}).get("jupyter", {}).get("source_hidden"))


@pytest.mark.parametrize("agenda", AGENDAS, ids=lambda a: a.key)
def test_agenda_adds_up_with_slack_and_cuts(agenda):
    assert agenda.total == agenda.minutes, f"{agenda.key}: the blocks add up to {agenda.total} min"
    assert 0.08 <= agenda.slack / agenda.minutes <= 0.15, f"{agenda.key}: {agenda.slack} min of buffer"
    assert all(step.minutes > 0 for _, step in agenda.steps())
    assert any(step.cut for _, step in agenda.steps()), "nothing is marked to cut if late"
    assert agenda.steps("break"), "no break"


@pytest.mark.parametrize("agenda", AGENDAS, ids=lambda a: a.key)
def test_agenda_names_what_exists(agenda):
    labels = {**INDEX.chapters, **INDEX.pages, **INDEX.sections}
    for block, step in agenda.steps():
        for chapter in block.chapters:
            assert chapter in labels, f"{agenda.key}, {block.title}: no page or chapter labelled {chapter}"
        for exercise in step.exercises:
            assert exercise in INDEX.exercises, f"{agenda.key} at {clock(step.start)}: no exercise {exercise}"
        assert step.kind != "set" or step.exercises, f"{agenda.key} at {clock(step.start)}: set, but what?"
        assert step.kind != "ask" or step.questions, f"{agenda.key} at {clock(step.start)}: ask, but what?"
        assert step.kind != "live" or (step.notebook and step.cells)


@pytest.mark.parametrize(
    "agenda, block, step",
    LIVE,
    ids=lambda x: getattr(x, "key", None) or (f"{clock(x.start)}" if isinstance(x, Step) else None),
)
def test_live_step_cells_are_what_the_teacher_meets(agenda, block, step):
    student = _student(step.notebook)
    ids = [cell.get("id") for cell in student.cells]
    missing = [cell.id for cell in step.cells if cell.id not in ids]
    assert not missing, (
        f"{_where(agenda, step)}: cell ids {missing} are not in the notebook (removed, or split "
        f"into new cells?): update book/workshop_plan.yml"
    )
    positions = [ids.index(cell.id) for cell in step.cells]
    assert positions == sorted(positions), f"{_where(agenda, step)}: the cells are not in notebook order"
    code = [i for i, cell in enumerate(student.cells) if cell.cell_type == "code"]
    planned = {cell.id for cell in step.cells}
    for cell, at in zip(step.cells, positions):
        source = student.cells[at]
        name = f"{_where(agenda, step)}, cell {cell.id}"
        assert source.cell_type == "code", f"{name} is not a code cell"
        if cell.role == "setup":
            assert at == code[0], f"{name}: the Setup cell is the chapter's first code cell"
        elif cell.role == "check":
            assert _hidden(source), f"{name}: a check cell is one the student copy shows collapsed"
        else:
            assert not _hidden(source), f"{name}: a {cell.role} cell must be visible"
        said = re.search(
            r"code cell \d+|the Setup cell",
            workshop_pages.cell_label(workshop_pages._student_code(step.notebook), cell.id),
        ).group(0)
        found = re.search(r"code cell \d+|the Setup cell", cell_label(student, cell.id)).group(0)
        assert said == found, f"{name}: the guide says {said}, the student notebook has it as {found}"
        follower = next((i for i in code if i > at), None)
        if cell.role == "live" and follower is not None and _hidden(student.cells[follower]):
            assert ids[follower] in planned, (
                f"{name}: Shift-Enter runs the collapsed cell {ids[follower]} after it; add it to the plan as a check"
            )


@pytest.mark.parametrize("agenda", AGENDAS, ids=lambda a: a.key)
def test_live_steps_name_every_visible_cell_they_pass(agenda):
    """Shift-Enter runs every cell between a block's first and last live cell: the plan names each one it meets."""
    for block in agenda.blocks:
        named: dict[str, set[str]] = {}
        for step in block.steps:
            if step.kind == "live":
                named.setdefault(step.notebook, set()).update(cell.id for cell in step.cells)
        for notebook, planned in named.items():
            cells = _student(notebook).cells
            at = [i for i, cell in enumerate(cells) if cell.get("id") in planned]
            skipped = [
                cell.get("id")
                for cell in cells[min(at) : max(at) + 1]
                if cell.cell_type == "code" and not _hidden(cell) and cell.get("id") not in planned
            ]
            assert not skipped, (
                f"{agenda.key}, {block.title}: student/{notebook}.ipynb's visible code cells "
                f"{skipped} lie between the live cells but are not in book/workshop_plan.yml"
            )


def test_every_cell_id_in_the_plan_is_quoted():
    from tools.teaching.workshop_plan import unquoted_cells

    assert unquoted_cells(PLAN.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("cell", ["12734400", "01234567"])
def test_a_cell_id_yaml_reads_as_a_number_is_refused_naming_it(tmp_path, cell):
    """All digits is a YAML integer (with a leading 0, an octal one: 01234567 would become 342391)."""
    plan = PLAN.read_text(encoding="utf-8").replace('"942ca177 setup"', cell, 1)
    (tmp_path / "plan.yml").write_text(plan, encoding="utf-8")
    with pytest.raises(ValueError) as error:
        load(tmp_path / "plan.yml")
    message = str(error.value)
    assert "\n" not in message and f": {cell}" in message and "quoted" in message, message


def _binds(source: str) -> set[str]:
    """Names a cell assigns, defines or imports (for the failure message)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    names |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    names |= {
        (a.asname or a.name).split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, (ast.Import, ast.ImportFrom))
        for a in n.names
    }
    return names


@pytest.mark.parametrize(
    "agenda, block, step",
    LIVE,
    ids=lambda x: getattr(x, "key", None) or (f"{clock(x.start)}" if isinstance(x, Step) else None),
)
def test_live_step_runs_in_a_fresh_kernel(agenda, block, step):
    student = _student(step.notebook)
    by_id = {cell.get("id"): cell for cell in student.cells}
    missing = [cell.id for cell in step.cells if cell.id not in by_id]
    assert not missing, f"{_where(agenda, step)}: cell ids {missing} are not in the notebook: update the plan"
    notebook = copy.deepcopy(student)
    notebook.cells = [copy.deepcopy(by_id[cell.id]) for cell in step.cells]
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        extra_arguments=[WITHOUT_TORCH],
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    try:
        client.execute()
    except CellExecutionError as error:
        failed = next(
            (c for c in notebook.cells if any(o.get("output_type") == "error" for o in c.get("outputs", []))), None
        )
        cell_id = failed.get("id") if failed is not None else "?"
        undefined = re.fullmatch(r"name '(\w+)' is not defined", str(error.evalue))
        planned = {c.id for c in step.cells}
        hint = [
            cell.get("id")
            for cell in student.cells
            if undefined
            and cell.cell_type == "code"
            and cell.get("id") not in planned
            and undefined.group(1) in _binds(cell.source)
        ]
        hint = f"{undefined.group(1)} is defined in cell(s) {hint} of the notebook" if undefined and hint else ""
        pytest.fail(
            f"{_where(agenda, step)}: cell {cell_id} fails in a fresh kernel:\n"
            f"{error.ename}: {error.evalue}"
            + (f"\n{hint}: add the one it needs before it (role needs)" if hint else "")
        )


def test_answer_sheet_answers_each_question_at_its_time():
    answers = (ROOT / "book" / "answers.md").read_text(encoding="utf-8")
    missing = [
        f"{agenda.key}: **{clock(step.start)} · {question}**"
        for agenda in AGENDAS
        for _, step in agenda.steps("ask")
        for question in step.questions
        if f"**{clock(step.start)} · {question}**" not in answers
    ]
    assert not missing, "book/answers.md lacks model answers headed:\n" + "\n".join(missing)
