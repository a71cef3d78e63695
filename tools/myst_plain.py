"""The chapters' MyST markup as plain Markdown, for notebooks read in JupyterLab.

The book's notebooks are written for Jupyter Book: numbers come from
``{glue:text}`` roles, cross-references from ``{ref}``, ``{numref}``,
``{eq}``, ``{term}`` and ``{cite:p}``, figures from ``{glue:figure}``
blocks, exercises from ``{exercise-start}`` directives. A plain Markdown
renderer (JupyterLab without a MyST extension) shows all of that as raw
markup, and no renderer at all can show a glued number in a notebook whose
outputs were cleared. :func:`to_plain` rewrites one markdown cell so that it
reads as the book does:

* each glued value is substituted as text, formatted with the role's own
  format spec exactly as myst-nb formats it (``myst_nb`` is imported for
  that); glued figures become image attachments of the cell, with their
  caption; glued Markdown is pasted in;
* ``{ref}`` to a chapter becomes a link to that chapter's notebook (in the
  same folder), any other ``{ref}`` the words the book would show; ``{numref}``
  and ``{eq}`` the numbers the book prints ("Fig. 2.1", "Eq. 2.3");
  ``{term}`` its words; ``{cite:p}`` "(Author et al., 2021)";
* display equations become ``equation*`` environments (which neither plain
  JupyterLab nor jupyterlab-myst numbers), labelled ones with the book's
  number as ``\\tag``; ``(label)=`` targets go;
* exercise directives become headings ("Exercise 2.1"), admonitions block
  quotes with a bold title.

Numbers follow the book's numbering: chapter ``NN`` is the notebook
``NN_slug.ipynb``, and figures, labelled equations and exercises are counted
in order inside each chapter. :class:`BookIndex` collects them.

>>> index = BookIndex(chapters={"ch-a": Target("The A chapter", "Chapter 1", "01_a.ipynb")},
...                   equations={"eq-c01-x": "1.1"})
>>> to_plain("(ch-a)=\\n# A\\n\\nSee {eq}`eq-c01-x` in {ref}`ch-a`.", index, {})[0]
'# A\\n\\nSee Eq. 1.1 in [The A chapter](01_a.ipynb).'
"""

from __future__ import annotations

import ast
import base64
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

__all__ = [
    "GLUE_PREFIX",
    "Target",
    "BookIndex",
    "book_index",
    "index_notebook",
    "exercise_statements",
    "read_bib",
    "glue_values",
    "glued_names",
    "format_glue",
    "to_plain",
    "MYST_LEFTOVERS",
]

#: The MIME prefix myst-nb gives a value glued with ``display=False``.
GLUE_PREFIX = "application/papermill.record/"

#: Markup that must not survive :func:`to_plain` (the student-notebook test greps for it).
MYST_LEFTOVERS = re.compile(r"\{glue|\{ref\}|\{term\}|\{numref\}|\{eq\}|\{cite|:label:|^\([\w-]+\)=",
                            re.MULTILINE)

_ROLE = re.compile(r"\{(?P<name>[\w:+-]+)\}`(?P<content>[^`]*)`")
_TARGET_LINE = re.compile(r"^[ \t]*\((?P<label>[^()\s]+)\)=[ \t]*\n?", re.MULTILINE)
_EQUATION = re.compile(r"\$\$(?P<body>(?:(?!\$\$).)+?)\$\$[ \t]*\((?P<label>[\w:-]+)\)", re.DOTALL)
_DISPLAY = re.compile(r"^(?P<indent>[ \t]*)\$\$(?P<body>(?:(?!\$\$).)+?)\$\$[ \t]*$", re.DOTALL | re.MULTILINE)
_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|:{3,})[ \t]*\{(?P<name>[\w:-]+)\}[ \t]*(?P<arg>[^\n]*)$",
                   re.MULTILINE)
_OPTION = re.compile(r"^[ \t]*:(?P<key>[\w-]+):[ \t]*(?P<value>[^\n]*)$")
_BOLD_TITLE = re.compile(r"\*\*(?P<title>[^*]+?)\.?\*\*")
_HEADING = re.compile(r"^#{1,6}[ \t]+(?P<title>[^\n]+)$", re.MULTILINE)


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


# ------------------------------------------------------------------ glue


def glue_values(notebook: nbformat.NotebookNode) -> dict[str, dict[str, Any]]:
    """Every glued value in ``notebook``'s stored outputs: name -> MIME bundle.

    >>> from myst_nb.ext.glue import GLUE_PREFIX as prefix
    >>> out = nbformat.v4.new_output("display_data", data={prefix + "text/plain": "0.5"},
    ...                              metadata={"scrapbook": {"name": "half", "mime_prefix": prefix}})
    >>> cell = nbformat.v4.new_code_cell("glue('half', 0.5, display=False)", outputs=[out])
    >>> glue_values(nbformat.v4.new_notebook(cells=[cell]))
    {'half': {'text/plain': '0.5'}}
    """
    values: dict[str, dict[str, Any]] = {}
    for cell in notebook.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            meta = output.get("metadata", {}).get("scrapbook")
            if not meta:
                continue
            prefix = meta.get("mime_prefix", "")
            values[meta["name"]] = {key[len(prefix):] if key.startswith(prefix) else key: value
                                    for key, value in output.get("data", {}).items()}
    return values


def glued_names(notebook: nbformat.NotebookNode) -> set[str]:
    """Names the markdown of ``notebook`` pastes with a glue role or directive.

    >>> cell = nbformat.v4.new_markdown_cell("{glue:text}`a:.1f` and\\n```{glue:figure} b\\n```")
    >>> sorted(glued_names(nbformat.v4.new_notebook(cells=[cell])))
    ['a', 'b']
    """
    names: set[str] = set()
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        for role in _ROLE.finditer(cell.source):
            if role.group("name").startswith("glue"):
                names.add(_glue_key(role.group("name"), role.group("content"))[0])
        for block in _OPEN.finditer(cell.source):
            if block.group("name").startswith("glue"):
                names.add(block.group("arg").strip())
    return names


def _glue_key(role: str, content: str) -> tuple[str, str]:
    """Split a glue role's content into key and format spec, as myst-nb does."""
    if role != "glue:text":
        return content.strip(), ""
    parts = content.rsplit(":", 1)
    return (parts[0], parts[1]) if len(parts) == 2 else (parts[0], "s")


def format_glue(bundle: dict[str, Any], spec: str) -> str:
    """A glued value's ``text/plain`` formatted as ``{glue:text}`name:spec``` shows it.

    The rule is myst-nb's (``myst_nb.core.variables.format_plain_text``),
    written out here so that the student notebooks can be made where myst-nb's
    rendering side is not installed; ``tests/test_student.py`` holds the two
    to each other. The text is read as a Python literal where it is one; the
    last character of ``spec`` picks the type it is formatted as.

    >>> format_glue({"text/plain": "0.123456"}, ".2f")
    '0.12'
    >>> format_glue({"text/plain": "'H100 SXM'"}, "s")
    'H100 SXM'
    >>> format_glue({"text/plain": "14"}, "")
    '14'
    """
    text = bundle["text/plain"]
    try:
        value: Any = ast.literal_eval(text)
    except (SyntaxError, ValueError):
        value = text
    if spec == "":
        return str(value)
    kind = spec[-1]
    if kind == "s":
        value = str(value)
    elif kind in "bcdoxX":
        value = int(value)
    elif kind in "eEfFgGn%":
        value = float(value)
    return format(value, spec)


# ------------------------------------------------------------------ the index


def _braced(text: str, start: int) -> tuple[str, int]:
    """The text inside the braces opening at ``text[start]``, and the index after the closing one."""
    depth, i = 0, start
    while i < len(text):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start + 1:i], i + 1
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
            last = person.split(",")[0] if "," in person and not person.startswith("{") else (
                person if person.startswith("{") else person.split()[-1])
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

    >>> index = book_index(Path("notebooks"), Path("book"), Path("references.bib"))
    >>> index.chapters["ch-time-budget"].number, index.chapters["ch-time-budget"].file
    ('Chapter 2', '02_time_budget.ipynb')
    >>> index.equations["eq-c02-t1"], index.pages["calculator"].title
    ('2.1', 'What-if calculator')
    """
    index = BookIndex()
    for path in sorted(Path(notebooks).glob("[0-9][0-9]_*.ipynb")):
        index_notebook(nbformat.read(path, as_version=4), int(path.name[:2]), path.name, index)
    for page in sorted(Path(book).glob("*.md")) if book else []:
        text = page.read_text(encoding="utf-8")
        for target in _TARGET_LINE.finditer(text):
            heading = _HEADING.search(text, target.end())
            if heading:
                index.pages[target.group("label")] = Target(_strip_markup(heading.group("title")))
    if bib and Path(bib).is_file():
        index.citations.update(read_bib(Path(bib).read_text(encoding="utf-8")))
    return index


def index_notebook(notebook: nbformat.NotebookNode, chapter: int | None = None, file: str = "",
                   index: BookIndex | None = None) -> BookIndex:
    """Add one notebook's labels to ``index`` (a new one by default) and return it.

    Without a ``chapter`` number, figures, equations and exercises are numbered
    1, 2, ... within the notebook.

    >>> cell = nbformat.v4.new_markdown_cell("```{exercise-start}\\n:label: ex-a\\n```\\n**Go.** Now.")
    >>> index_notebook(nbformat.v4.new_notebook(cells=[cell]), chapter=3).exercises["ex-a"]
    Target(title='Go', number='3.1', file='')
    """
    index = index if index is not None else BookIndex()
    prefix = f"{chapter}." if chapter is not None else ""
    text = "\n\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    for number, match in enumerate(_EQUATION.finditer(text), start=1):
        index.equations[match.group("label")] = f"{prefix}{number}"
    figures = exercises = 0
    for block in _OPEN.finditer(text):
        options = _options(text, block.end())
        if block.group("name") in ("glue:figure", "figure") and "name" in options:
            figures += 1
            index.figures[options["name"]] = f"{prefix}{figures}"
        elif block.group("name") in ("exercise", "exercise-start"):
            exercises += 1
            statement = _statement(text, block.end())
            title = _BOLD_TITLE.match(statement)
            index.exercises[options.get("label", f"{file}-{exercises}")] = Target(
                _strip_markup(title.group("title")) if title else "", f"{prefix}{exercises}", file)
    for target in _TARGET_LINE.finditer(text):
        heading = _HEADING.search(text, target.end())
        if not heading:
            continue
        label, title = target.group("label"), _strip_markup(heading.group("title"))
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
    text = "\n\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    return {_options(text, block.end()).get("label", ""): _statement(text, block.end())
            for block in _OPEN.finditer(text) if block.group("name") in ("exercise", "exercise-start")}


def _statement(text: str, start: int) -> str:
    """The text after a directive's opening line and options, up to the next directive fence."""
    lines = text[start:].lstrip("\n").split("\n")
    while lines and _OPTION.match(lines[0]):
        lines.pop(0)
    rest = "\n".join(lines)
    if rest.lstrip().startswith(("```", ":::")):  # the gated directive's own closing fence
        rest = rest.lstrip().split("\n", 1)[1] if "\n" in rest.lstrip() else ""
    end = re.search(r"^[ \t]*(`{3,}|:{3,})", rest, re.MULTILINE)
    return (rest[:end.start()] if end else rest).strip()


def _strip_markup(text: str) -> str:
    """Heading text without emphasis markers or roles (``$K$`` kept)."""
    text = _ROLE.sub(lambda m: m.group("content"), text)
    return re.sub(r"[*_]{1,2}(\S[^*_]*?)[*_]{1,2}", r"\1", text).strip()


def _options(text: str, start: int) -> dict[str, str]:
    """The ``:key: value`` lines right after a directive's opening line."""
    options = {}
    for line in text[start:].lstrip("\n").split("\n"):
        option = _OPTION.match(line)
        if not option:
            break
        options[option.group("key")] = option.group("value").strip()
    return options


# ------------------------------------------------------------------ conversion


@dataclass
class _Context:
    index: BookIndex
    glue: dict[str, dict[str, Any]]
    attachments: dict[str, dict[str, str]] = field(default_factory=dict)
    book: bool = False


def to_plain(source: str, index: BookIndex, glue: dict[str, dict[str, Any]], book: bool = False
             ) -> tuple[str, dict[str, dict[str, str]]]:
    """One markdown cell's MyST as plain Markdown; also the image attachments it now needs.

    Raises ``KeyError`` naming a glued value that ``glue`` lacks (execute the
    notebook first).

    >>> glue = {"t2": {"text/plain": "9.2245"}}
    >>> to_plain("Split: {glue:text}`t2:.2f` ms ({term}`speedup`).", BookIndex(), glue)[0]
    'Split: 9.22 ms (speedup).'
    >>> to_plain(":::{admonition} Takeaway\\n:class: tip\\nNot twice.\\n:::", BookIndex(), {})[0]
    '> **Takeaway**\\n>\\n> Not twice.'
    >>> to_plain("{glue:text}`missing`", BookIndex(), {})
    Traceback (most recent call last):
    ...
    KeyError: "glued value 'missing' is not in the notebook's outputs (execute it first)"

    With ``book=True`` the result is MyST for another page of the same book
    (the teacher's answer sheet): glued values pasted in, cross-references and
    admonitions kept, labels and targets dropped (they would be duplicates),
    exercise and solution directives as bold titles.

    >>> to_plain("See {eq}`eq-a`: {glue:text}`t2:.1f` ms.\\n$$\\nx\\n$$ (eq-a)", BookIndex(), glue, book=True)[0]
    'See {eq}`eq-a`: 9.2 ms.\\n$$\\nx\\n$$'
    """
    context = _Context(index, glue, book=book)
    text = _directives(source, context)
    if book:
        text = _EQUATION.sub(lambda m: f"$${m.group('body').rstrip()}\n$$", text)
    else:
        text = _EQUATION.sub(lambda m: _tag(m, index), text)
        text = _DISPLAY.sub(lambda m: _unnumbered(m.group("body"), indent=m.group("indent")), text)
    text = _TARGET_LINE.sub("", text)
    role = (lambda m: _role(m.group("name"), m.group("content"), context) if m.group("name").startswith("glue")
            else m.group(0)) if book else (lambda m: _role(m.group("name"), m.group("content"), context))
    text = _ROLE.sub(role, text)
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n"), context.attachments


def _tag(match: re.Match[str], index: BookIndex) -> str:
    """A labelled equation as an unnumbered environment with the book's number as its tag.

    Plain JupyterLab (MathJax) and jupyterlab-myst both show the tag and
    nothing else; jupyterlab-myst would number a ``$$`` block a second time.
    """
    number = index.equations.get(match.group("label"))
    return _unnumbered(match.group("body"), f" \\tag{{{number}}}" if number else "")


def _unnumbered(body: str, tag: str = "", indent: str = "") -> str:
    return f"{indent}\\begin{{equation*}}\n{body.strip()}{tag}\n\\end{{equation*}}"


def _split(content: str) -> tuple[str | None, str]:
    """``text <label>`` -> (text, label); ``label`` -> (None, label)."""
    explicit = re.fullmatch(r"(?P<text>.*?)\s*<(?P<label>[^<>]+)>", content.strip(), re.DOTALL)
    if explicit:
        return explicit.group("text"), explicit.group("label").strip()
    return None, content.strip()


def _role(name: str, content: str, context: _Context) -> str:
    index = context.index
    if name.startswith("glue"):
        key, spec = _glue_key(name, content)
        if key not in context.glue:
            raise KeyError(f"glued value {key!r} is not in the notebook's outputs (execute it first)")
        if name == "glue:md":
            return context.glue[key].get("text/markdown", "")
        return format_glue(context.glue[key], spec)
    text, label = _split(content)
    if name == "ref":
        return _ref(text, label, index)
    if name == "numref":
        number = index.figures.get(label) or index.equations.get(label) or "?"
        return text.replace("%s", number).replace("{number}", number) if text else f"Fig. {number}"
    if name == "eq":
        return f"Eq. {index.equations.get(label, '?')}"
    if name in ("cite:p", "cite:t", "cite", "cite:ps", "cite:ts"):
        cited = [index.citations.get(key.strip(), (key.strip(), "")) for key in content.split(",")]
        if name.startswith("cite:t"):
            return "; ".join(f"{who} ({year})" for who, year in cited)
        return "(" + "; ".join(f"{who}, {year}" for who, year in cited) + ")"
    if name == "math":
        return f"${content}$"
    return text if text is not None else label  # term, doc, abbr, ...


def _ref(text: str | None, label: str, index: BookIndex) -> str:
    if label in index.chapters:
        target = index.chapters[label]
        return f"[{text or target.title}]({target.file})"
    if label in index.exercises:
        target = index.exercises[label]
        words = f"exercise {target.number}" + (f" (*{target.title}*)" if target.title else "")
        return text or words
    for table in (index.sections, index.pages):
        if label in table:
            return text or f"*{table[label].title}*"
    if label in index.figures:
        return text or f"Fig. {index.figures[label]}"
    return text or label.replace("-", " ")


def _directives(text: str, context: _Context) -> str:
    """Rewrite every directive block of ``text``, outermost first, bodies recursively."""
    out, position = [], 0
    while True:
        block = _OPEN.search(text, position)
        if not block:
            out.append(text[position:])
            return "".join(out)
        fence, indent = block.group("fence"), block.group("indent")
        closing = re.compile(rf"^{re.escape(indent)}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
        end = closing.search(text, block.end())
        # An unclosed fence runs to the end of the cell, as in CommonMark.
        stop, resume = (end.start(), end.end()) if end else (len(text), len(text))
        inner = text[block.end():stop].lstrip("\n")
        options: dict[str, str] = {}
        lines = inner.split("\n")
        while lines and _OPTION.match(lines[0]):
            option = _OPTION.match(lines[0])
            options[option.group("key")] = option.group("value").strip()
            lines.pop(0)
        body = _directives("\n".join(lines).strip("\n"), context)
        out.append(text[position:block.start()])
        if context.book:
            out.append(_render_book(block, options, body, context))
        else:
            out.append(_render(block.group("name"), block.group("arg").strip(), options, body, context))
        position = resume


_ADMONITIONS = {"note": "Note", "tip": "Tip", "important": "Important", "warning": "Warning",
                "caution": "Caution", "attention": "Attention", "hint": "Hint", "seealso": "See also",
                "danger": "Danger", "error": "Error"}


def _quote(title: str, body: str) -> str:
    lines = [f"> **{title}**"] if title else []
    if body:
        lines += [">"] if lines else []
        lines += [f"> {line}".rstrip() for line in body.split("\n")]
    return "\n".join(lines)


def _render(name: str, arg: str, options: dict[str, str], body: str, context: _Context) -> str:
    index = context.index
    if name in ("exercise", "exercise-start"):
        target = index.exercises.get(options.get("label", ""))
        heading = f"\n### Exercise {target.number}" if target else "\n### Exercise"
        return heading + (f"\n\n{body}" if body else "\n")
    if name in ("exercise-end", "solution-end"):
        return ""
    if name in ("solution", "solution-start"):
        target = index.exercises.get(arg)
        title = f"Solution to exercise {target.number}" if target else "Solution"
        return f"\n#### {title}" + (f"\n\n{body}" if body else "\n")
    if name == "admonition":
        return _quote(arg, body)
    if name in _ADMONITIONS:
        return _quote(_ADMONITIONS[name], body)
    if name == "glue:figure":
        return _figure(arg, options, body, context)
    if name in ("glue:md", "glue:math", "glue", "glue:any"):
        if arg not in context.glue:
            raise KeyError(f"glued value {arg!r} is not in the notebook's outputs (execute it first)")
        bundle = context.glue[arg]
        if name == "glue:math":
            return f"$$\n{bundle.get('text/latex', '').strip('$')}\n$$"
        pasted = bundle.get("text/markdown") or bundle.get("text/plain", "")
        return _directives(pasted, context)
    if name in ("math",):
        return f"$$\n{body}\n$$"
    if name in ("code-block", "code", "code-cell"):
        return f"```{arg or 'python'}\n{body}\n```"
    return body


def _render_book(block: re.Match[str], options: dict[str, str], body: str, context: _Context) -> str:
    """A directive for another page of the book: exercises and solutions as bold titles, the rest kept."""
    name, arg = block.group("name"), block.group("arg").strip()
    if name in ("exercise", "exercise-start", "solution", "solution-start"):
        label = options.get("label", "") if name.startswith("exercise") else arg
        target = context.index.exercises.get(label)
        number = f" {target.number}" if target else ""
        title = f"**Exercise{number}.**" if name.startswith("exercise") else f"**Solution{number}.**"
        return f"\n{title}\n" + (f"\n{body}" if body else "")
    if name in ("exercise-end", "solution-end"):
        return ""
    if name == "glue:figure":
        return "*(The figure is in the chapter.)*"
    if name.startswith("glue"):
        return _render(name, arg, options, body, context)
    fence = block.group("fence")
    kept = {key: value for key, value in options.items() if key not in ("label", "name")}
    lines = [f"{fence}{{{name}}} {arg}".rstrip()] + [f":{key}: {value}" for key, value in kept.items()]
    return "\n".join(lines + [body, fence])


def _figure(name: str, options: dict[str, str], caption: str, context: _Context) -> str:
    if name not in context.glue:
        raise KeyError(f"glued value {name!r} is not in the notebook's outputs (execute it first)")
    bundle = context.glue[name]
    alt = re.sub(r"[\[\]\n]", " ", options.get("alt", name)).strip()
    number = context.index.figures.get(options.get("name", ""))
    parts = []
    for mime, suffix in (("image/png", "png"), ("image/svg+xml", "svg"), ("image/jpeg", "jpg")):
        if mime in bundle:
            data = bundle[mime]
            if mime == "image/svg+xml":
                data = base64.b64encode("".join(data).encode()).decode()
            filename = f"{name}.{suffix}"
            context.attachments[filename] = {mime: data if isinstance(data, str) else "".join(data)}
            parts.append(f"![{alt}](attachment:{filename})")
            break
    label = f"**Fig. {number}.** " if number else ""
    if caption or label:
        parts.append(f"{label}{caption}".strip())
    return "\n\n".join(parts)
