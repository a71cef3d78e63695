"""The book's labels with the words and numbers its HTML shows for them, read from the sources.

Chapter ``NN`` is the notebook ``NN_slug.ipynb`` (:func:`chapter_notebooks`);
figures, labelled equations and exercises are counted in order inside each
chapter; a ``(label)=`` target names the heading after it; the bib file gives
each citation's short author and year. :func:`book_index` collects all of it
in a :class:`BookIndex`, which :func:`tools.teaching.myst_plain.to_plain` uses to write
cross-references out.

>>> index = book_index(Path("notebooks"))
>>> index.chapters["ch-time-budget"], index.citations["amdahl1967validity"]
(Target(title='The time budget', number='Chapter 2', file='02_time_budget.ipynb'), ('Amdahl', '1967'))
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from tools.notebooks.myst_syntax import DIRECTIVE, HEADING, LABELLED_EQUATION, TARGET_LINE, split_options, strip_markup

__all__ = [
    "Target",
    "BookIndex",
    "chapter_notebooks",
    "book_index",
    "index_notebook",
    "exercise_statements",
    "read_bib",
]

_BOLD_TITLE = re.compile(r"\*\*(?P<title>[^*]+?)\.?\*\*")
_EXERCISE_DIRECTIVES = ("exercise", "exercise-start")


@dataclass(frozen=True)
class Target:
    """Something a cross-reference points at: its words, its number, its notebook."""

    title: str
    number: str = ""
    file: str = ""


@dataclass
class BookIndex:
    """Labels of the whole book, with the words and numbers the HTML shows for them."""

    chapters: dict[str, Target] = field(default_factory=dict)
    sections: dict[str, Target] = field(default_factory=dict)
    pages: dict[str, Target] = field(default_factory=dict)
    figures: dict[str, str] = field(default_factory=dict)
    equations: dict[str, str] = field(default_factory=dict)
    exercises: dict[str, Target] = field(default_factory=dict)
    citations: dict[str, tuple[str, str]] = field(default_factory=dict)


def chapter_notebooks(folder: Path) -> list[Path]:
    """The chapter notebooks ``NN_slug.ipynb`` in ``folder``, in order.

    >>> [p.name for p in chapter_notebooks(Path("notebooks"))][:2]
    ['01_splitting_a_matrix.ipynb', '02_time_budget.ipynb']
    """
    return sorted(p for p in Path(folder).glob("[0-9][0-9]_*.ipynb") if p.is_file())


def _braced(text: str, start: int) -> tuple[str, int]:
    """The text inside the braces opening at ``text[start]``, and the index after the closing one."""
    depth, i = 0, start
    while i < len(text):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start + 1 : i], i + 1
        i += 1
    raise ValueError(f"unbalanced braces in the bib file after position {start}")


def read_bib(text: str) -> dict[str, tuple[str, str]]:
    """Short author and year of every entry of a BibTeX file: "Smith", "Smith and Lee", "Smith et al.".

    Only ``author`` (or ``editor``) and ``year`` are read, so no BibTeX
    library is needed where the student notebooks are written.

    >>> read_bib("@misc{k, author = {Lee, Ann and {NVIDIA} and Roe, B.}, year = {2024}}")
    {'k': ('Lee et al.', '2024')}
    >>> read_bib("@book{a, author = {Amdahl, Gene M.}, year = 1967}")
    {'a': ('Amdahl', '1967')}
    """
    entries = {}
    for match in re.finditer(r"@\w+\s*\{", text):
        body, _ = _braced(text, match.end() - 1)
        key, _, rest = body.partition(",")
        fields: dict[str, str] = {}
        for field_match in re.finditer(r"(\w+)\s*=\s*", rest):
            position = field_match.end()
            if position < len(rest) and rest[position] == "{":
                value, _ = _braced(rest, position)
            else:
                value = re.match(r"[^,}]*", rest[position:]).group(0)
            fields.setdefault(field_match.group(1).lower(), value.strip().strip('"'))
        people = fields.get("author") or fields.get("editor") or ""
        names = []
        for person in re.split(r"\s+and\s+", people) if people else []:
            person = person.strip()
            last = (
                person.split(",")[0]
                if "," in person and not person.startswith("{")
                else (person if person.startswith("{") else person.split()[-1])
            )
            names.append(re.sub(r"[{}\\]", "", last).strip())
        if names and names[-1] == "others":  # BibTeX's "and others": more authors than listed
            names = names[:-1] + ["", ""]
        if not names:
            who = re.sub(r"[{}]", "", fields.get("title", key))
        elif len(names) == 1:
            who = names[0]
        elif len(names) == 2:
            who = f"{names[0]} and {names[1]}"
        else:
            who = f"{names[0]} et al."
        entries[key.strip()] = (who, re.sub(r"[{}]", "", fields.get("year", "n.d.")))
    return entries


def book_index(notebooks: Path, book: Path | None = None, bib: Path | None = None) -> BookIndex:
    """Index the chapter notebooks ``NN_slug.ipynb`` in ``notebooks``, the pages in ``book``, the bib file.

    ``book`` defaults to the folder ``book`` beside ``notebooks``, ``bib`` to
    ``references.bib`` beside it; a missing folder or file adds nothing.

    >>> index = book_index(Path("notebooks"), Path("book"), Path("references.bib"))
    >>> index.chapters["ch-time-budget"].number, index.chapters["ch-time-budget"].file
    ('Chapter 2', '02_time_budget.ipynb')
    >>> index.equations["eq-c02-t1"], index.pages["calculator"].title
    ('2.1', 'What-if calculator')
    """
    notebooks = Path(notebooks)
    root = notebooks.resolve().parent
    book = Path(book) if book is not None else root / "book"
    bib = Path(bib) if bib is not None else root / "references.bib"
    index = BookIndex()
    for path in chapter_notebooks(notebooks):
        index_notebook(nbformat.read(path, as_version=4), int(path.name[:2]), path.name, index)
    for page in sorted(book.glob("*.md")):
        for label, heading in _headed_targets(page.read_text(encoding="utf-8")):
            index.pages[label] = Target(strip_markup(heading.group("title")))
    if bib.is_file():
        index.citations.update(read_bib(bib.read_text(encoding="utf-8")))
    return index


def _headed_targets(text: str) -> Iterator[tuple[str, re.Match[str]]]:
    """Each ``(label)=`` target of ``text`` with the first heading after it.

    >>> [(label, heading.group(0)) for label, heading in _headed_targets("(sec-a)=\\n## A\\n")]
    [('sec-a', '## A')]
    """
    for target in TARGET_LINE.finditer(text):
        heading = HEADING.search(text, target.end())
        if heading:
            yield target.group("label"), heading


def _markdown(notebook: nbformat.NotebookNode) -> str:
    """All the markdown cells of ``notebook`` as one text."""
    return "\n\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")


def index_notebook(
    notebook: nbformat.NotebookNode, chapter: int | None = None, file: str = "", index: BookIndex | None = None
) -> BookIndex:
    """Add one notebook's labels to ``index`` (a new one by default) and return it.

    Without a ``chapter`` number, figures, equations and exercises are numbered
    1, 2, ... within the notebook.

    >>> cell = nbformat.v4.new_markdown_cell("```{exercise-start}\\n:label: ex-a\\n```\\n**Go.** Now.")
    >>> index_notebook(nbformat.v4.new_notebook(cells=[cell]), chapter=3).exercises["ex-a"]
    Target(title='Go', number='3.1', file='')
    """
    index = index if index is not None else BookIndex()
    prefix = f"{chapter}." if chapter is not None else ""
    text = _markdown(notebook)
    for number, match in enumerate(LABELLED_EQUATION.finditer(text), start=1):
        index.equations[match.group("label")] = f"{prefix}{number}"
    figures = exercises = 0
    for block in DIRECTIVE.finditer(text):
        options, after = split_options(text[block.end() :])
        if block.group("name") in ("glue:figure", "figure") and "name" in options:
            figures += 1
            index.figures[options["name"]] = f"{prefix}{figures}"
        elif block.group("name") in _EXERCISE_DIRECTIVES:
            exercises += 1
            title = _BOLD_TITLE.match(_statement(after))
            index.exercises[options.get("label", f"{file}-{exercises}")] = Target(
                strip_markup(title.group("title")) if title else "", f"{prefix}{exercises}", file
            )
    for label, heading in _headed_targets(text):
        title = strip_markup(heading.group("title"))
        if heading.group(0).startswith("# "):
            index.chapters[label] = Target(title, f"Chapter {chapter}" if chapter else "", file)
        else:
            index.sections[label] = Target(title, "", file)
    return index


def exercise_statements(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """Each exercise's statement (the text from its directive to ``{exercise-end}``), by label.

    >>> cell = nbformat.v4.new_markdown_cell("```{exercise-start}\\n:label: ex-a\\n```\\nAdd.\\n```{exercise-end}\\n```")
    >>> exercise_statements(nbformat.v4.new_notebook(cells=[cell]))
    {'ex-a': 'Add.'}
    """
    text = _markdown(notebook)
    statements = {}
    for block in DIRECTIVE.finditer(text):
        if block.group("name") in _EXERCISE_DIRECTIVES:
            options, after = split_options(text[block.end() :])
            statements[options.get("label", "")] = _statement(after)
    return statements


def _statement(text: str) -> str:
    """The text after a directive's options, up to the next directive fence.

    >>> _statement("```\\n**Go.** Now.\\n```{exercise-end}\\n```")
    '**Go.** Now.'
    """
    if text.lstrip().startswith(("```", ":::")):  # the gated directive's own closing fence
        text = text.lstrip().split("\n", 1)[1] if "\n" in text.lstrip() else ""
    end = re.search(r"^[ \t]*(`{3,}|:{3,})", text, re.MULTILINE)
    return (text[: end.start()] if end else text).strip()
