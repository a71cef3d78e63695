"""The pieces of MyST markup that the chapters' tools read: roles, targets, directives, headings.

Shared by :mod:`tools.notebooks.glue` (which names a chapter glues), :mod:`tools.notebooks.book_index`
(what the book numbers) and :mod:`tools.teaching.myst_plain` (the plain Markdown).

>>> ROLE.search("See {eq}`eq-a`.").group("name", "content")
('eq', 'eq-a')
>>> DIRECTIVE.search("```{exercise-start}\\n:label: ex-a\\n```").group("fence", "name")
('```', 'exercise-start')
"""

from __future__ import annotations

import re

__all__ = [
    "ROLE",
    "TARGET_LINE",
    "LABELLED_EQUATION",
    "DIRECTIVE",
    "OPTION",
    "HEADING",
    "split_options",
    "strip_markup",
]

#: An inline role: ``{name}`content```.
ROLE = re.compile(r"\{(?P<name>[\w:+-]+)\}`(?P<content>[^`]*)`")
#: A ``(label)=`` target on a line of its own.
TARGET_LINE = re.compile(r"^[ \t]*\((?P<label>[^()\s]+)\)=[ \t]*\n?", re.MULTILINE)
#: A display equation with a label: ``$$ ... $$ (label)``.
LABELLED_EQUATION = re.compile(r"\$\$(?P<body>(?:(?!\$\$).)+?)\$\$[ \t]*\((?P<label>[\w:-]+)\)", re.DOTALL)
#: The opening line of a directive: a fence of backticks or colons, ``{name}``, an argument.
DIRECTIVE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|:{3,})[ \t]*\{(?P<name>[\w:-]+)\}[ \t]*(?P<arg>[^\n]*)$", re.MULTILINE
)
#: One ``:key: value`` option line of a directive.
OPTION = re.compile(r"^[ \t]*:(?P<key>[\w-]+):[ \t]*(?P<value>[^\n]*)$")
#: A Markdown heading of any level.
HEADING = re.compile(r"^#{1,6}[ \t]+(?P<title>[^\n]+)$", re.MULTILINE)


def split_options(text: str) -> tuple[dict[str, str], str]:
    """The ``:key: value`` lines that open ``text`` (what follows a directive's opening line), and the rest.

    >>> split_options("\\n:label: ex-a\\n:class: tip\\nBody.")
    ({'label': 'ex-a', 'class': 'tip'}, 'Body.')
    """
    lines = text.lstrip("\n").split("\n")
    options = {}
    while lines and (option := OPTION.match(lines[0])):
        options[option.group("key")] = option.group("value").strip()
        lines.pop(0)
    return options, "\n".join(lines)


def strip_markup(text: str) -> str:
    """Heading text without emphasis markers or roles (``$K$`` kept).

    >>> strip_markup("The *speedup* of {term}`Amdahl's law` for $K$")
    "The speedup of Amdahl's law for $K$"
    """
    text = ROLE.sub(lambda m: m.group("content"), text)
    return re.sub(r"[*_]{1,2}(\S[^*_]*?)[*_]{1,2}", r"\1", text).strip()
