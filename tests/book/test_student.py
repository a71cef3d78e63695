"""Student notebooks (``make student``) and the offline bundles (``make dist``).

For every chapter: the student version holds no solution (no marker, none of
the solution cells' code), keeps every exercise, has no outputs, shows no
MyST markup that JupyterLab would print raw nor any ``glue()`` call, and runs
from top to bottom without error, with torch blocked (chapter 10's live cell
then says in one line what it needs). The participant bundle holds no
solution either. The stripping itself is checked on small synthetic
notebooks, so these tests fail if it leaks a solution or drops an exercise.
The solution cells are found here by a deliberately simpler rule than
``tools.teaching.student`` uses (whole cells between the marker cells), so
the two are independent.
"""

from __future__ import annotations

import copy
import re
import zipfile
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import tools.release.dist
import tools.teaching.participant_html
import tools.teaching.student
from lib.measure.launch import NEEDS_TORCH
from tools.notebooks.book_index import book_index, chapter_notebooks, exercise_statements
from tools.notebooks.execute import KERNELSPEC
from tools.notebooks.glue import format_glue, glue_values
from tools.sphinx import run_note
from tools.teaching.myst_plain import MYST_LEFTOVERS
from tools.teaching.solutions import strip_solutions
from tools.teaching.student import exercise_headings, make_full, make_student

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
CHAPTERS = chapter_notebooks(NOTEBOOKS)
MARKER = re.compile(r"\{solution-(start|end)\}")
INDEX = book_index(NOTEBOOKS)


def _labels(notebook) -> set[str]:
    """Exercise labels found with a plain regex over the whole markdown."""
    text = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    return set(
        re.findall(
            r"\{exercise(?:-start)?\}[^\n]*\n(?:[ \t]*:[\w-]+:[^\n]*\n)*?"
            r"[ \t]*:label:[ \t]*(\S+)",
            text,
        )
    )


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
    return nbformat.v4.new_code_cell(
        text, execution_count=1, outputs=[nbformat.v4.new_output("stream", name="stdout", text="out\n")]
    )


SYNTHETIC = [
    _md("(ch-demo)=\n# Demo"),
    _code("x = 2"),
    _md(
        "## Exercises\n\n```{exercise-start}\n:label: ex-d-one\n```\nDouble x.\n"
        "```{exercise-end}\n```\n\n```{solution-start} ex-d-one\n:class: dropdown\n```"
    ),
    _code("SECRET_ONE = x * 2\nSECRET_ONE"),
    _md("Prose inside the first solution."),
    _code("assert SECRET_ONE == 4"),
    _md(
        "```{solution-end}\n```\n\n:::{exercise-start}\n:label: ex-d-two\n:::\nWhy?\n"
        ":::{exercise-end}\n:::\n::::{solution-start} ex-d-two\n:class: dropdown\n::::\n"
        "SECRET_TWO because.\n::::{solution-end}\n::::\nText after both."
    ),
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
    assert exercise_headings(student) == ["Exercise 1", "Exercise 2"]
    assert _labels(original) == {"ex-d-one", "ex-d-two"} and not MYST_LEFTOVERS.search(text)
    # Text sharing a cell with a marker survives; so does code outside solutions.
    assert "Double x." in text and "Why?" in text and "Text after both." in text
    assert [c.source for c in student.cells if c.cell_type == "code"] == [
        "x = 2",
        "# Your answer to exercise 1",
        "y = x + 1",
    ]
    # The prose-only solution leaves a markdown answer cell after its exercise.
    answer = next(i for i, c in enumerate(student.cells) if "Your answer to exercise 2" in c.source)
    assert student.cells[answer].cell_type == "markdown"
    assert "Why?" in student.cells[answer - 1].source
    nbformat.validate(student)
    assert len({c.id for c in student.cells}) == len(student.cells)


def test_synthetic_student_has_no_outputs_and_a_note():
    student = make_student(_synthetic())
    assert student.cells[0].source == tools.teaching.student.NOTE
    assert "participant copy of the book leaves the solutions" in student.cells[0].source
    assert student.metadata.kernelspec == KERNELSPEC
    assert student.metadata.language_info == tools.teaching.student.STUDENT_LANGUAGE
    for cell in student.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    assert student.metadata.kernelspec.name == "python3"


def test_original_is_not_modified():
    original = _synthetic()
    before = nbformat.writes(original)
    make_student(original)
    assert nbformat.writes(original) == before


@pytest.mark.parametrize(
    "cells, message",
    [
        ([_md("```{solution-start} ex-x\n```"), _code("1")], "never ends"),
        ([_md("```{solution-end}\n```")], "without solution-start"),
    ],
)
def test_unbalanced_markers_raise(cells, message):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.from_dict(c) for c in cells])
    with pytest.raises(ValueError, match=message):
        strip_solutions(notebook)


def test_a_leaking_stripper_would_be_caught():
    """The checks used below on real chapters do detect a leaked solution."""
    leaked = _synthetic()  # not stripped at all
    assert MARKER.search(_all_text(leaked))
    assert set(_solution_code(leaked)) == {"SECRET_ONE = x * 2\nSECRET_ONE", "assert SECRET_ONE == 4"}


def test_main_writes_one_student_notebook_per_chapter(tmp_path):
    written = tools.teaching.student.main([str(NOTEBOOKS), str(tmp_path)])
    assert [p.name for p in written] == [p.name for p in CHAPTERS]
    assert len(CHAPTERS) >= 10


@pytest.fixture(scope="module", params=CHAPTERS, ids=lambda p: p.stem)
def pair(request):
    original = nbformat.read(request.param, as_version=4)
    return request.param, original, make_student(original, INDEX, folder=request.param.parent)


def test_student_has_no_solution(pair):
    _, original, student = pair
    text = _all_text(student)
    assert not MARKER.search(text)
    student_code = {c.source.strip() for c in student.cells if c.cell_type == "code"}
    for solution in _solution_code(original):
        assert solution not in student_code


def test_student_keeps_every_exercise(pair):
    """One heading per exercise, numbered as in the book, each with its statement."""
    path, original, student = pair
    chapter = int(path.name[:2])
    count = len(_labels(original))
    assert exercise_headings(student) == [f"Exercise {chapter}.{k}" for k in range(1, count + 1)]
    text = _all_text(student)
    for label, statement in exercise_statements(original).items():
        first = statement.splitlines()[0]
        first = first if "{" not in first else first[: first.index("{")]  # before any role
        assert len(first) > 10 and first in text, f"{label}: statement {first!r} missing"


def test_student_markdown_is_plain(pair):
    """Nothing JupyterLab would print raw: no glue, ref, term, numref, eq or cite role, no label."""
    path, _, student = pair
    for cell in student.cells:
        if cell.cell_type == "markdown":
            leftover = MYST_LEFTOVERS.search(cell.source)
            assert not leftover, f"{path.name}: {leftover.group(0)!r} in {cell.source[:200]!r}"
            assert not re.search(r"^\s*(```+|:::+)\s*\{", cell.source, re.MULTILINE), cell.source[:200]
            assert "{glue" not in cell.source and ":label:" not in cell.source


def test_glued_numbers_are_pasted(pair):
    """Every glued value the chapter's prose quotes appears in the student text, formatted as in the book."""
    path, original, student = pair
    glue = glue_values(original)
    text = _all_text(student)
    roles = re.findall(
        r"\{glue:text\}`([^`]+)`",
        "\n".join(c.source for c in strip_solutions(original).cells if c.cell_type == "markdown"),
    )
    assert roles or path.name.startswith("00"), f"{path.name} quotes no glued number"
    for role in roles:
        key, _, spec = role.rpartition(":") if ":" in role else (role, "", "s")
        assert format_glue(glue[key], spec) in text, role


def test_student_figures_are_attached(pair):
    """Each glued figure outside the solutions is an image attachment of its cell."""
    path, original, student = pair
    figures = re.findall(
        r"\{glue:figure\}\s*(\S+)",
        "\n".join(c.source for c in strip_solutions(original).cells if c.cell_type == "markdown"),
    )
    attached = {name for c in student.cells for name in c.get("attachments", {})}
    assert {f"{name}.png" for name in figures} <= attached


def test_student_has_no_outputs(pair):
    _, _, student = pair
    for cell in student.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    assert student.metadata.kernelspec.name == "python3"


def test_every_written_chapter_has_three_exercises(pair):
    path, original, _ = pair
    assert len(_labels(original)) >= 3, path.name


def test_full_reading_copy_keeps_solutions_and_outputs(pair):
    path, original, _ = pair
    full = make_full(original, INDEX)
    text = _all_text(full)
    assert not MYST_LEFTOVERS.search("\n".join(c.source for c in full.cells if c.cell_type == "markdown"))
    assert text.count("#### Solution to exercise") == len(_labels(original))
    for solution in _solution_code(original):
        assert solution in text
    outputs = [c.outputs for c in full.cells if c.cell_type == "code"]
    assert outputs == [c.outputs for c in original.cells if c.cell_type == "code"]


@pytest.mark.parametrize(
    "text, spec",
    [
        ("0.123456", ".2f"),
        ("9.22", ".1f"),
        ("0.0737", ".1%"),
        ("14", ""),
        ("14", "d"),
        ("2.0", "g"),
        ("'H100 SXM'", "s"),
        ("'81,920'", ""),
        ("1.3882863340563991", ".3f"),
        ("3.5e-06", ".2e"),
        ("not a literal", "s"),
        ("12.0", ".0f"),
        ("True", "s"),
    ],
)
def test_glue_formatting_is_myst_nbs(text, spec):
    """tools.notebooks.glue writes myst-nb's rule out; the two must agree."""
    from myst_nb.core.variables import format_plain_text

    assert format_glue({"text/plain": text}, spec) == format_plain_text(text, spec)


#: Started in each student notebook's kernel: ``import torch`` fails as where it is not installed
#: (``importlib.util.find_spec("torch")`` is None too), although this environment has it.
WITHOUT_TORCH = "--InteractiveShellApp.exec_lines=import sys; sys.modules['torch'] = None"


def test_student_notebook_runs_without_torch(pair):
    """Run from the chapters' own folder, as in the bundle (student/ beside notebooks/), with torch blocked.

    Participants install torch only for chapter 10's live run; every chapter
    must run top to bottom without it, and the live run must say in one line
    what it needs.
    """
    path, _, student = pair
    executed = copy.deepcopy(student)
    NotebookClient(
        executed,
        timeout=600,
        kernel_name="python3",
        extra_arguments=[WITHOUT_TORCH],
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    live = [cell for cell in executed.cells if cell.cell_type == "code" and "live_run_problem(" in cell.source]
    if path.name.startswith("10_"):
        assert len(live) == 1, "chapter 10 has one live-run cell"
        texts = [output.get("text", "") for output in live[0].outputs]
        assert texts == [NEEDS_TORCH + "\n"], texts


def test_student_code_shows_no_glue_call(pair):
    """The book's glue() plumbing is out of the student's code (tools.teaching.unglue)."""
    path, _, student = pair
    calls = [cell.id for cell in student.cells if cell.cell_type == "code" and "glue(" in cell.source]
    assert not calls, f"{path.name}: glue() left in cells {calls}"


SOLUTION_HTML = """<html><body><nav><ul>
<li><a href="../notebooks/02_time_budget.html">2. The time budget</a></li>
<li><a href="answers.html">Answer sheet</a></li></ul></nav>
<div class="exercise admonition" id="ex-a"><p>Exercise 1</p><p>Double x.</p></div>
<div class="solution dropdown admonition" id="sol-a"><p class="admonition-title">Solution</p>
<div class="cell"><pre>SECRET_SOLUTION = 4</pre></div><img src="../_images/secret.png"></div>
<img src="../_images/kept.png"><a class="right-next" href="answers.html">next</a>
<p>Model answers are on the <a class="reference internal" href="answers.html#top">answer sheet</a>.</p>
<div class="teacher-only"><p>TEACHER_NOTE in dropdowns</p></div>
<div class="participant-only"><p>Your teacher goes through them.</p></div>
<link href="answers.html" rel="next" title="Answer sheet"/>
</body></html>"""


def _fake_site(tmp_path: Path) -> Path:
    """A built site in miniature: one page with an exercise and its solution, the answer sheet."""
    html = tmp_path / "html"
    (html / "book").mkdir(parents=True)
    (html / "_images").mkdir()
    (html / "_sources" / "notebooks").mkdir(parents=True)
    (html / "index.html").write_text("<html><a href='book/answers.html'>answers</a></html>")
    (html / "book" / "chapter.html").write_text(SOLUTION_HTML)
    (html / "book" / "workshop.html").write_text("<html><p>Stumbling points</p></html>")
    (html / "book" / "answers.html").write_text("<html><pre>SECRET_SOLUTION = 4</pre></html>")
    (html / "_images" / "secret.png").write_bytes(b"png")
    (html / "_images" / "kept.png").write_bytes(b"png")
    (html / "_sources" / "notebooks" / "02_time_budget.ipynb").write_text('{"SECRET_SOLUTION": 4}')
    (html / "searchindex.js").write_text(
        'Search.setIndex({"docnames":["book/answers","book/chapter","book/workshop"],"filenames":['
        '"book/answers.md","book/chapter.md","book/workshop.md"],"terms":{"secret":0,"doubl":[0,1],'
        '"secret_solut":1,"stumbl":2},"titleterms":{"answer":0},"alltitles":{"Answer sheet":[[0,null]]}})'
    )
    return html


def test_participant_html_has_no_answers(tmp_path):
    from bs4 import BeautifulSoup

    student = tmp_path / "student"
    student.mkdir()
    (student / "02_time_budget.ipynb").write_text('{"student": true}')
    files = tools.teaching.participant_html.participant_html(_fake_site(tmp_path), student)
    assert "book/answers.html" not in files and "_images/secret.png" not in files
    assert "book/workshop.html" not in files, "the teacher's guide stays with the teacher"
    assert "_images/kept.png" in files
    page = files["book/chapter.html"].decode()
    assert "SECRET_SOLUTION" not in page and "Double x." in page
    assert "TEACHER_NOTE" not in page and "<div><p>Your teacher goes through them." in page
    assert "answers.html" not in page and "2. The time budget" in page
    assert "Model answers are on the answer sheet." in BeautifulSoup(page, "html.parser").get_text()
    assert "answers.html" not in files["index.html"].decode()
    assert files["_sources/notebooks/02_time_budget.ipynb"] == student / "02_time_budget.ipynb"
    search = files["searchindex.js"].decode()
    assert '"secret"' not in search and '"doubl":[0]' in search and "Answer sheet" not in search
    assert "answers" not in search and "workshop" not in search, "a teacher's page is still named in the index"
    assert '"secret_solut"' not in search, "a word only the cut solution held is still searchable"
    assert '"stumbl"' not in search, "the teacher's guide is still searchable"


def _readme_commands(readme: str) -> list[str]:
    """The lines of the first indented block of the README's section on installing without a network."""
    section = readme.split("Running the notebooks without a network", 1)[1]
    block = re.search(r"(?:^    \S[^\n]*\n)+", section, re.MULTILINE)
    return [line.strip() for line in block.group(0).splitlines()]


def test_bundles_hold_what_participant_and_teacher_need(tmp_path):
    """The zips from tools.release.dist, built here from a miniature site."""
    html = _fake_site(tmp_path)
    student, full = tmp_path / "student", tmp_path / "full"
    tools.teaching.student.main([str(NOTEBOOKS), str(student)])
    for chapter in CHAPTERS[:2]:
        full.mkdir(exist_ok=True)
        nbformat.write(make_full(nbformat.read(chapter, as_version=4), INDEX), full / chapter.name)
    participant = tools.release.dist.build_zip(tmp_path / "dist", root=ROOT, html=html, student=student)
    teacher = tools.release.dist.build_zip(
        tmp_path / "dist", root=ROOT, kind="teacher", html=html, student=student, full=full
    )
    names = set(zipfile.ZipFile(participant).namelist())
    top = tools.release.dist.NAME
    for required in (
        "html/index.html",
        "requirements-participant.txt",
        "requirements-participant-torch.txt",
        "pyproject.toml",
        "lib/__init__.py",
        "lib/budget.py",
        "README-offline.txt",
    ):
        assert f"{top}/{required}" in names
    for chapter in CHAPTERS:
        assert f"{top}/student/{chapter.name}" in names
    assert not any(n.startswith(f"{top}/notebooks/") for n in names)
    assert f"{top}/html/book/answers.html" not in names
    assert not any("__pycache__" in n or ".venv" in n or "wheels/" in n for n in names)
    teacher_names = set(zipfile.ZipFile(teacher).namelist())
    top = tools.release.dist.TEACHER_NAME
    assert {
        f"{top}/html/book/answers.html",
        f"{top}/requirements.txt",
        f"{top}/notebooks/{CHAPTERS[0].name}",
    } <= teacher_names
    readme = zipfile.ZipFile(participant).read(f"{tools.release.dist.NAME}/README-offline.txt").decode()
    assert _readme_commands(readme) == tools.release.dist.PARTICIPANT_COMMANDS
    assert "pip download -r requirements.txt" not in readme and "-e ." not in readme


def _solution_snippets() -> dict[str, list[str]]:
    """For each chapter, the distinctive lines of its solutions' code (what must never reach participants).

    A line counts if it is long enough to be specific and appears nowhere a
    participant may legitimately see it: not outside the solutions in any
    chapter, not in ``lib``'s source.
    """
    public = "\n".join(_all_text(strip_solutions(nbformat.read(c, as_version=4))) for c in CHAPTERS)
    public += "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "lib").rglob("*.py"))
    snippets = {}
    for chapter in CHAPTERS:
        lines = set()
        for code in _solution_code(nbformat.read(chapter, as_version=4)):
            for line in code.splitlines():
                line = line.strip()
                if len(line) >= 25 and not line.startswith(("#", "import ", "from ")) and line not in public:
                    lines.add(line)
        snippets[chapter.name] = sorted(lines)
    return snippets


def _bundle_text(path: Path) -> str:
    """Every text file of a zip as a reader or a search would see it (HTML as its text)."""
    from bs4 import BeautifulSoup

    parts = []
    with zipfile.ZipFile(path) as bundle:
        for name in bundle.namelist():
            data = bundle.read(name)
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            if name.endswith(".html"):
                text = BeautifulSoup(text, "html.parser").get_text()
            elif name.endswith(".ipynb"):
                import json

                notebook = json.loads(text)
                text = "\n".join("".join(c.get("source", "")) for c in notebook.get("cells", []))
            parts.append(text)
    return "\n".join(parts)


def test_solution_snippets_would_be_found():
    """The leak check below has teeth: the full book's notebooks hold every snippet."""
    snippets = _solution_snippets()
    assert sum(map(len, snippets.values())) >= 30
    full_text = "\n".join(_all_text(nbformat.read(c, as_version=4)) for c in CHAPTERS)
    for lines in snippets.values():
        for line in lines:
            assert line in full_text


def _run_note_problems(path: Path) -> tuple[int, list[str]]:
    """How many "Run this chapter yourself" notes the participant zip at ``path`` shows, and what they name amiss.

    Every word of a note's commands that names a file or folder must be in
    the bundle, except ``.venv`` (its first command creates it) and the
    ``--find-links`` folder, which the teacher copies in and the bundle's
    README names.
    """
    from bs4 import BeautifulSoup

    top = tools.release.dist.NAME
    with zipfile.ZipFile(path) as bundle:
        names = set(bundle.namelist())
        readme = bundle.read(f"{top}/README-offline.txt").decode()
        pages = {
            name: bundle.read(name).decode()
            for name in names
            if name.startswith(f"{top}/html/notebooks/") and name.endswith(".html")
        }
    present = names | {name.rsplit("/", 1)[0] for name in names}
    count, problems = 0, []
    for page, text in sorted(pages.items()):
        for note in BeautifulSoup(text, "html.parser").select(f"details.{run_note.NOTE_CLASS}"):
            count += 1
            words = note.pre.get_text().split()
            if "--find-links" in words:
                folder = words[words.index("--find-links") + 1]
                if f"{folder}/" not in readme:
                    problems.append(f"{page}: --find-links {folder}, which README-offline.txt does not name")
                words.remove(folder)
            for word in words:
                if word.startswith("-") or not ("/" in word or "." in word) or word.split("/")[0] == ".venv":
                    continue
                if f"{top}/{word.rstrip('/')}" not in present:
                    problems.append(f"{page}: {word} is not in the bundle")
    return count, problems


def test_participant_run_notes_name_the_bundles_files(tmp_path):
    """A chapter built with the repository set: the participant copy's note names student/, not notebooks/."""
    html = _fake_site(tmp_path)
    (html / "notebooks").mkdir()
    note = run_note.run_note("notebooks/02_time_budget", "https://github.com/someone/twice-the-devices")
    (html / "notebooks" / "02_time_budget.html").write_text(f"<html><h1>T</h1>{note}<p>x</p></html>")
    student = tmp_path / "student"
    student.mkdir()
    (student / "02_time_budget.ipynb").write_text('{"student": true}')
    path = tools.release.dist.build_zip(tmp_path / "dist", root=ROOT, html=html, student=student)
    assert _run_note_problems(path) == (1, [])
    page = zipfile.ZipFile(path).read(f"{tools.release.dist.NAME}/html/notebooks/02_time_budget.html").decode()
    assert "student/02_time_budget.ipynb" in page and "notebooks/02_time_budget.ipynb" not in page


@pytest.fixture(scope="module")
def built_bundles(tmp_path_factory) -> tuple[Path, Path]:
    """After `make book`: the participant and the teacher zip, built from the real site."""
    html = ROOT / "_build" / "html"
    if not (html / "index.html").is_file():
        pytest.fail("No built book at _build/html: run `make book` first.")
    tmp_path = tmp_path_factory.mktemp("bundles")
    student = tmp_path / "student"
    tools.teaching.student.main([str(NOTEBOOKS), str(student)])
    participant = tools.release.dist.build_zip(tmp_path / "dist", root=ROOT, html=html, student=student)
    teacher = tools.release.dist.build_zip(
        tmp_path / "dist", root=ROOT, kind="teacher", html=html, student=student, full=NOTEBOOKS
    )
    return participant, teacher


@pytest.mark.browser
def test_participant_bundle_of_the_built_book_runs_its_own_files(built_bundles):
    """After `make book`: every chapter's note in the participant zip names files the zip holds."""
    count, problems = _run_note_problems(built_bundles[0])
    assert count == len(CHAPTERS), f"{count} notes for {len(CHAPTERS)} chapters"
    assert not problems, problems


@pytest.mark.browser
def test_participant_bundle_of_the_built_book_holds_no_solution(built_bundles):
    """After `make book`: build the participant zip from the real site and grep it for every solution.

    Marked ``browser`` so that ``make test`` runs it after the book build.
    """
    path, teacher = built_bundles
    text = _bundle_text(path)
    assert "Exercise" in text and "The time budget" in text
    leaks = [f"{chapter}: {line}" for chapter, lines in _solution_snippets().items() for line in lines if line in text]
    assert not leaks, "solution code in the participant bundle:\n" + "\n".join(leaks[:20])
    teacher_text = _bundle_text(teacher)
    assert any(line in teacher_text for lines in _solution_snippets().values() for line in lines)
