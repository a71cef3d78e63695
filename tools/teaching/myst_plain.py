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
  format spec exactly as myst-nb formats it (:func:`tools.notebooks.glue.format_glue`);
  glued figures become image attachments of the cell, with their
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
in order inside each chapter. :class:`tools.notebooks.book_index.BookIndex` collects
them; glued values are read and formatted by :mod:`tools.notebooks.glue`.

>>> from tools.notebooks.book_index import Target
>>> index = BookIndex(chapters={"ch-a": Target("The A chapter", "Chapter 1", "01_a.ipynb")},
...                   equations={"eq-c01-x": "1.1"})
>>> to_plain("(ch-a)=\\n# A\\n\\nSee {eq}`eq-c01-x` in {ref}`ch-a`.", index, {})[0]
'# A\\n\\nSee Eq. 1.1 in [The A chapter](01_a.ipynb).'
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from typing import Any

from tools.notebooks.book_index import BookIndex
from tools.notebooks.glue import format_glue, glue_key
from tools.notebooks.myst_syntax import DIRECTIVE, LABELLED_EQUATION, ROLE, TARGET_LINE, split_options

__all__ = ["to_plain", "MYST_LEFTOVERS"]

#: Markup that must not survive :func:`to_plain` (the student-notebook test greps for it).
MYST_LEFTOVERS = re.compile(r"\{glue|\{ref\}|\{term\}|\{numref\}|\{eq\}|\{cite|:label:|^\([\w-]+\)=", re.MULTILINE)

_DISPLAY = re.compile(r"^(?P<indent>[ \t]*)\$\$(?P<body>(?:(?!\$\$).)+?)\$\$[ \t]*$", re.DOTALL | re.MULTILINE)


@dataclass
class _Context:
    index: BookIndex
    glue: dict[str, dict[str, Any]]
    attachments: dict[str, dict[str, str]] = field(default_factory=dict)
    book: bool = False


def to_plain(
    source: str, index: BookIndex, glue: dict[str, dict[str, Any]], book: bool = False
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
        text = LABELLED_EQUATION.sub(lambda m: f"$${m.group('body').rstrip()}\n$$", text)
    else:
        text = LABELLED_EQUATION.sub(lambda m: _tag(m, index), text)
        text = _DISPLAY.sub(lambda m: _unnumbered(m.group("body"), indent=m.group("indent")), text)
    text = TARGET_LINE.sub("", text)
    role = (
        (
            lambda m: (
                _role(m.group("name"), m.group("content"), context)
                if m.group("name").startswith("glue")
                else m.group(0)
            )
        )
        if book
        else (lambda m: _role(m.group("name"), m.group("content"), context))
    )
    text = ROLE.sub(role, text)
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n"), context.attachments


def _glued(name: str, context: _Context) -> dict[str, Any]:
    """The MIME bundle glued as ``name``; ``KeyError`` if the notebook's outputs lack it."""
    if name not in context.glue:
        raise KeyError(f"glued value {name!r} is not in the notebook's outputs (execute it first)")
    return context.glue[name]


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
        key, spec = glue_key(name, content)
        if name == "glue:md":
            return _glued(key, context).get("text/markdown", "")
        return format_glue(_glued(key, context), spec)
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
        block = DIRECTIVE.search(text, position)
        if not block:
            out.append(text[position:])
            return "".join(out)
        fence, indent = block.group("fence"), block.group("indent")
        closing = re.compile(rf"^{re.escape(indent)}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
        end = closing.search(text, block.end())
        # An unclosed fence runs to the end of the cell, as in CommonMark.
        stop, resume = (end.start(), end.end()) if end else (len(text), len(text))
        options, inner = split_options(text[block.end() : stop])
        body = _directives(inner.strip("\n"), context)
        out.append(text[position : block.start()])
        if context.book:
            out.append(_render_book(block, options, body, context))
        else:
            out.append(_render(block.group("name"), block.group("arg").strip(), options, body, context))
        position = resume


_ADMONITIONS = {
    "note": "Note",
    "tip": "Tip",
    "important": "Important",
    "warning": "Warning",
    "caution": "Caution",
    "attention": "Attention",
    "hint": "Hint",
    "seealso": "See also",
    "danger": "Danger",
    "error": "Error",
}


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
        bundle = _glued(arg, context)
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
    bundle = _glued(name, context)
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
