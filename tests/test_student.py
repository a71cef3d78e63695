"""Student notebooks (``make student``) and the offline bundle (``make dist``).

For every chapter: the student version holds no solution (no marker, none of
the solution cells' code), keeps every exercise, has no outputs, and runs
from top to bottom without error. The stripping itself is checked on small
synthetic notebooks, so these tests fail if it leaks a solution or drops an
exercise. The solution cells are found here by a deliberately simpler rule
than ``tools.student`` uses (whole cells between the marker cells), so the
two are independent.
"""

from __future__ import annotations

import copy
import re
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `tools` is not installed; `python -m pytest` adds it anyway
    sys.path.insert(0, str(ROOT))

import tools.dist  # noqa: E402
import tools.student  # noqa: E402
from tools.execute import KERNELSPEC  # noqa: E402
from tools.student import chapter_notebooks, exercise_labels, make_student, strip_solutions  # noqa: E402

NOTEBOOKS = ROOT / "notebooks"
CHAPTERS = chapter_notebooks(NOTEBOOKS)
MARKER = re.compile(r"\{solution-(start|end)\}")


def _labels(notebook) -> set[str]:
    """Exercise labels found with a plain regex over the whole markdown."""
    text = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    return set(re.findall(r"\{exercise(?:-start)?\}[^\n]*\n(?:[ \t]*:[\w-]+:[^\n]*\n)*?"
                          r"[ \t]*:label:[ \t]*(\S+)", text))


def _solution_code(notebook) -> list[str]:
    """Sources of code cells lying between a solution-start and a solution-end cell."""
    inside, found = False, []
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            if "{solution-start}" in cell.source and "{solution-end}" not in cell.source:
                inside = True
            elif "{solution-end}" in cell.source:
                inside = False
        elif inside and cell.source.strip():
            found.append(cell.source.strip())
    return found


def _md(text: str):
    return nbformat.v4.new_markdown_cell(text)


def _code(text: str):
    return nbformat.v4.new_code_cell(text, execution_count=1, outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="out\n")])


SYNTHETIC = [
    _md("(ch-demo)=\n# Demo"),
    _code("x = 2"),
    _md("## Exercises\n\n```{exercise-start}\n:label: ex-d-one\n```\nDouble x.\n"
        "```{exercise-end}\n```\n\n```{solution-start} ex-d-one\n:class: dropdown\n```"),
    _code("SECRET_ONE = x * 2\nSECRET_ONE"),
    _md("Prose inside the first solution."),
    _code("assert SECRET_ONE == 4"),
    _md("```{solution-end}\n```\n\n:::{exercise-start}\n:label: ex-d-two\n:::\nWhy?\n"
        ":::{exercise-end}\n:::\n::::{solution-start} ex-d-two\n:class: dropdown\n::::\n"
        "SECRET_TWO because.\n::::{solution-end}\n::::\nText after both."),
    _code("y = x + 1"),
]


def _synthetic():
    notebook = nbformat.v4.new_notebook(cells=[nbformat.from_dict(c) for c in SYNTHETIC])
    notebook.metadata["kernelspec"] = dict(KERNELSPEC)
    return notebook


def _all_text(notebook) -> str:
    return "\n".join(cell.source for cell in notebook.cells)


def test_synthetic_solutions_are_removed_and_exercises_kept():
    original = _synthetic()
    student = make_student(original)
    text = _all_text(student)
    assert not MARKER.search(text)
    for secret in ("SECRET_ONE", "SECRET_TWO", "Prose inside the first solution"):
        assert secret in _all_text(original) and secret not in text
    assert exercise_labels(student) == ["ex-d-one", "ex-d-two"]
    assert _labels(student) == _labels(original) == {"ex-d-one", "ex-d-two"}
    # Text sharing a cell with a marker survives; so does code outside solutions.
    assert "Double x." in text and "Why?" in text and "Text after both." in text
    assert [c.source for c in student.cells if c.cell_type == "code"] == [
        "x = 2", "# Your answer to ex-d-one", "y = x + 1"]
    # The prose-only solution leaves a markdown answer cell after its exercise.
    answer = next(i for i, c in enumerate(student.cells) if "Your answer to ex-d-two" in c.source)
    assert student.cells[answer].cell_type == "markdown"
    assert "Why?" in student.cells[answer - 1].source
    nbformat.validate(student)
    assert len({c.id for c in student.cells}) == len(student.cells)


def test_synthetic_student_has_no_outputs_and_a_note():
    student = make_student(_synthetic())
    assert student.cells[0].source == tools.student.NOTE
    assert "solutions are in the book" in student.cells[0].source
    for cell in student.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    assert student.metadata.kernelspec.name == "python3"


def test_original_is_not_modified():
    original = _synthetic()
    before = nbformat.writes(original)
    make_student(original)
    assert nbformat.writes(original) == before


@pytest.mark.parametrize("cells, message", [
    ([_md("```{solution-start} ex-x\n```"), _code("1")], "never ends"),
    ([_md("```{solution-end}\n```")], "without solution-start"),
])
def test_unbalanced_markers_raise(cells, message):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.from_dict(c) for c in cells])
    with pytest.raises(ValueError, match=message):
        strip_solutions(notebook)


def test_a_leaking_stripper_would_be_caught():
    """The checks used below on real chapters do detect a leaked solution."""
    leaked = _synthetic()  # not stripped at all
    assert MARKER.search(_all_text(leaked))
    assert set(_solution_code(leaked)) == {"SECRET_ONE = x * 2\nSECRET_ONE",
                                           "assert SECRET_ONE == 4"}


def test_main_writes_one_student_notebook_per_chapter(tmp_path):
    written = tools.student.main([str(NOTEBOOKS), str(tmp_path)])
    assert [p.name for p in written] == [p.name for p in CHAPTERS]
    assert len(CHAPTERS) == 9


@pytest.fixture(scope="module", params=CHAPTERS, ids=lambda p: p.stem)
def pair(request):
    original = nbformat.read(request.param, as_version=4)
    return request.param, original, make_student(original)


def test_student_has_no_solution(pair):
    _, original, student = pair
    text = _all_text(student)
    assert not MARKER.search(text)
    student_code = {c.source.strip() for c in student.cells if c.cell_type == "code"}
    for solution in _solution_code(original):
        assert solution not in student_code


def test_student_keeps_every_exercise(pair):
    _, original, student = pair
    assert _labels(student) == _labels(original)
    assert len(exercise_labels(student)) == len(exercise_labels(original))


def test_student_has_no_outputs(pair):
    _, _, student = pair
    for cell in student.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    assert student.metadata.kernelspec.name == "python3"


def test_every_written_chapter_has_three_exercises(pair):
    path, original, _ = pair
    assert len(_labels(original)) >= 3, path.name


def test_student_notebook_runs(pair, tmp_path):
    """Run from the chapters' own folder, as in the bundle (student/ beside notebooks/)."""
    path, _, student = pair
    NotebookClient(copy.deepcopy(student), timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()


def test_bundle_holds_what_a_participant_needs(tmp_path):
    """The zip from tools.dist, built here from a fake html folder."""
    html = tmp_path / "html"
    html.mkdir()
    (html / "index.html").write_text("<html></html>")
    student = tmp_path / "student"
    tools.student.main([str(NOTEBOOKS), str(student)])
    path = tools.dist.build_zip(tmp_path / "dist", root=ROOT, html=html, student=student)
    names = set(zipfile.ZipFile(path).namelist())
    top = tools.dist.NAME
    for required in ("html/index.html", "requirements.txt", "pyproject.toml",
                     "lib/__init__.py", "lib/budget.py", "README-offline.txt"):
        assert f"{top}/{required}" in names
    for chapter in CHAPTERS:
        assert f"{top}/notebooks/{chapter.name}" in names
        assert f"{top}/student/{chapter.name}" in names
    assert not any("__pycache__" in n or ".venv" in n for n in names)
    requirements = zipfile.ZipFile(path).read(f"{top}/requirements.txt").decode()
    assert requirements.strip().splitlines()[-1] == "-e ."
    readme = zipfile.ZipFile(path).read(f"{top}/README-offline.txt").decode()
    assert "pip download -r requirements.txt" in readme
    assert "--no-index --find-links wheels" in readme
