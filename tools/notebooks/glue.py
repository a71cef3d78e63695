"""Glued values: what a chapter's outputs hold, what its markdown pastes, as myst-nb shows them.

A chapter computes a number and stores it with ``glue(name, value,
display=False)``; its prose pastes it with ``{glue:text}`name:spec``` (or a
``{glue:figure}`` block). :func:`glue_values` reads the stored values,
:func:`glued_names` the names the prose needs, :func:`format_glue` formats one
value as the book prints it.

>>> cell = nbformat.v4.new_markdown_cell("Split: {glue:text}`t2:.2f` ms.")
>>> glued_names(nbformat.v4.new_notebook(cells=[cell])), glue_key("glue:text", "t2:.2f")
({'t2'}, ('t2', '.2f'))
"""

from __future__ import annotations

import ast
from typing import Any

import nbformat

from tools.notebooks.myst_syntax import DIRECTIVE, ROLE

__all__ = ["glue_values", "glued_names", "glue_key", "format_glue"]


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
            values[meta["name"]] = {
                key[len(prefix) :] if key.startswith(prefix) else key: value
                for key, value in output.get("data", {}).items()
            }
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
        for role in ROLE.finditer(cell.source):
            if role.group("name").startswith("glue"):
                names.add(glue_key(role.group("name"), role.group("content"))[0])
        for block in DIRECTIVE.finditer(cell.source):
            if block.group("name").startswith("glue"):
                names.add(block.group("arg").strip())
    return names


def glue_key(role: str, content: str) -> tuple[str, str]:
    """Split a glue role's content into key and format spec, as myst-nb does.

    >>> glue_key("glue:text", "t2"), glue_key("glue:md", " notes ")
    (('t2', 's'), ('notes', ''))
    """
    if role != "glue:text":
        return content.strip(), ""
    parts = content.rsplit(":", 1)
    return (parts[0], parts[1]) if len(parts) == 2 else (parts[0], "s")


def format_glue(bundle: dict[str, Any], spec: str) -> str:
    """A glued value's ``text/plain`` formatted as ``{glue:text}`name:spec``` shows it.

    The rule is myst-nb's (``myst_nb.core.variables.format_plain_text``),
    written out here so that the student notebooks can be made where myst-nb's
    rendering side is not installed; ``tests/book/test_student.py`` holds the two
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
