"""The code a chapter shows its readers, and the plumbing, overlong or formatting lines left in it.

A code cell is *visible* when the book shows its source without a click:
not tagged ``remove-input`` or ``remove-cell`` (left out of the page) nor
``hide-input`` or ``hide-cell`` (folded behind "Show code cell source").
Visible code is what a reader learns from, so it holds no ``glue(`` calls
(they go in a ``remove-input`` cell of their own, or a folded plotting cell),
no import of the book's plumbing (``myst_nb``, or a private name such as
``lib.diagrams._draw``: :func:`plumbing_imports`), and no line longer than
:data:`WIDTH` characters.

Visible code should also teach rather than typeset: under :data:`MAX_SHARE` of a
chapter's visible lines may be *formatting lines* (:func:`formatting_lines`), lines
whose only job is to turn values already computed into text or a table for display.
Display goes in a folded (``hide-input``) cell next to the code, or the cell ends
with the value itself as its last expression.

The rule, applied to whole statements (parsed with :mod:`ast`) and counted in lines:
a statement is *formatting only* when it is

1. a call of ``print``, ``display``, ``set_option`` or ``set_printoptions``
   (``pd.set_option``, ``np.set_printoptions``) whose arguments are all *shown values*;
2. an expression statement, an assignment (``=``, ``+=``) or an ``.append(``/``.extend(``
   whose value is a shown value that uses a formatting tool: an f-string, or a call
   of ``format``, ``round``, ``Markdown``, ``HTML``, ``.format``,
   ``.join``, ``.round``, ``.to_string``, ``.to_markdown``, ``.to_html``, ``.set_index``,
   ``.rename`` or ``.style``;
3. a ``for``, ``if`` or ``with`` statement whose body (and ``else``) holds only
   formatting-only statements: the loop or test exists only to print, so its header counts too.

A *shown value* computes nothing new. It is built only from literals; names;
attribute reads (``BASE.split_time``); subscripts (``row["value"]``, ``gains[-1]``);
f-strings, tuples, lists, dicts, sets, ``*``/``**`` unpacking and comprehensions (with no
``if``) of shown values; ``-x``; scaling of a shown value by a number or by a unit
imported from ``lib.units`` (``t / ms``, ``100 * share``, ``b / (GB / s)``); and calls of
the formatting tools above, of the conversions ``str``, ``repr``, ``int``, ``float``, ``bool``, ``list``,
``tuple``, ``dict``, ``enumerate``, ``zip``, or of the methods ``.tolist``, ``.item``,
``.items``, ``.keys``, ``.values``, ``.upper``, ``.lower``, ``.ljust``, ``.rjust``.
Anything else is a computation: a call of any other function or method
(``np.median(e)``, ``p.speedup.max()``, ``BASE.with_(...)``, ``sum(parts)``), a comparison,
``and``/``or``/``not``, a conditional expression, a comprehension's ``if``, or arithmetic
between two values neither of which is a number or a unit. So
``print(f"T2 = {BASE.split_time / ms:.2f} ms")`` and ``print("x =", toy.X.tolist())``
are formatting lines, while ``print("equal:", bool((a == b).all()))`` and
``print(f"{np.median(errors):.1f}")`` are not: the line computes something new.
A bare name or attribute as a cell's last expression is not formatting either: it
shows a value without formatting code. The *share* (:func:`formatting_share`) is
formatting lines over visible lines, both counting only lines that are neither blank
nor a comment; a cell that does not parse as Python (a ``%magic``) has no formatting lines.

Usage: ``python -m tools.notebooks.visible_code [--width 80] notebooks/*.ipynb`` lists
every visible ``glue(`` call, plumbing import and overlong line, by notebook and cell id,
then prints each notebook's visible lines, formatting lines and their share.

>>> import nbformat
>>> cells = [nbformat.v4.new_code_cell("x = 1\\nglue('x', x, display=False)"),
...          nbformat.v4.new_code_cell("glue('y', 2)", metadata={"tags": ["remove-input"]})]
>>> book = nbformat.v4.new_notebook(cells=cells)
>>> [cell.source for cell in visible_code_cells(book)]
["x = 1\\nglue('x', x, display=False)"]
>>> glue_calls(book)
[(0, "glue('x', x, display=False)")]

>>> from lib.units import ms
>>> book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
...     "from lib.units import ms\\n"
...     "t = [0.001, 0.002]\\n"
...     "for k, x in enumerate(t):\\n"
...     "    print(f'{k}: {x / ms:.1f} ms')\\n"
...     "print('largest', max(t) / ms)\\n"
...     "label = ', '.join(f'{x:.3f}' for x in t)\\n"
...     "# a comment\\n"
...     "t")])
>>> formatting_lines(book)
[(0, 'for k, x in enumerate(t):'), (0, "    print(f'{k}: {x / ms:.1f} ms')"), (0, "label = ', '.join(f'{x:.3f}' for x in t)")]
>>> visible_line_count(book), round(formatting_share(book), 3)
(7, 0.429)
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import nbformat

__all__ = [
    "WIDTH",
    "MAX_SHARE",
    "OUT_OF_SIGHT",
    "visible_code_cells",
    "glue_calls",
    "plumbing_imports",
    "long_lines",
    "formatting_lines",
    "visible_line_count",
    "formatting_share",
    "main",
]

#: The longest line of visible code, in characters (80 fit the column at 1280 px; see _static/fit.css).
WIDTH = 80

#: The largest share of a chapter's visible lines that may only format output (issue 32).
MAX_SHARE = 0.10

#: Cell tags under which the book does not show a cell's source without a click.
OUT_OF_SIGHT = frozenset({"remove-input", "remove-cell", "hide-input", "hide-cell"})

_GLUE = re.compile(r"\bglue\(")

#: An import of myst_nb, or of a name (or module) that starts with an underscore.
_PLUMBING = re.compile(r"^\s*(from\s+\S+\s+)?import\s.*|^\s*from\s+\S+\s+import\s.*")
_PRIVATE = re.compile(r"\bmyst_nb\b|(^|[\s.,(])_[A-Za-z]")


def visible_code_cells(notebook: nbformat.NotebookNode) -> Iterator[nbformat.NotebookNode]:
    """The code cells whose source the book shows without a click, in order."""
    for cell in notebook.cells:
        if cell.cell_type == "code" and not OUT_OF_SIGHT & set(cell.get("metadata", {}).get("tags", [])):
            yield cell


def _visible_lines(notebook: nbformat.NotebookNode) -> Iterator[tuple[int, str]]:
    """``(cell index among all cells, line)`` for every line of visible code."""
    index = {id(cell): number for number, cell in enumerate(notebook.cells)}
    for cell in visible_code_cells(notebook):
        for line in cell.source.splitlines():
            yield index[id(cell)], line


def glue_calls(notebook: nbformat.NotebookNode) -> list[tuple[int, str]]:
    """``(cell index, line)`` of each visible line that calls ``glue(``."""
    return [(number, line) for number, line in _visible_lines(notebook) if _GLUE.search(line)]


def plumbing_imports(notebook: nbformat.NotebookNode) -> list[tuple[int, str]]:
    """``(cell index, line)`` of each visible line that imports ``myst_nb`` or a private name.

    >>> book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
    ...     "from myst_nb import glue\\nfrom lib.diagrams import _draw as draw\\nfrom lib import plotting\\nx_ = 1")])
    >>> [line for _, line in plumbing_imports(book)]
    ['from myst_nb import glue', 'from lib.diagrams import _draw as draw']
    """
    return [
        (number, line)
        for number, line in _visible_lines(notebook)
        if _PLUMBING.match(line) and _PRIVATE.search(line.split("#")[0])
    ]


def long_lines(notebook: nbformat.NotebookNode, width: int = WIDTH) -> list[tuple[int, str]]:
    """``(cell index, line)`` of each visible line longer than ``width`` characters.

    >>> book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("y = 1" + " " * 80 + "# far")])
    >>> [(number, len(line)) for number, line in long_lines(book)]
    [(0, 90)]
    """
    return [(number, line) for number, line in _visible_lines(notebook) if len(line) > width]


#: Calls that only print or set how output is printed (rule 1).
_SHOW_CALLS = frozenset({"print", "display", "set_option", "set_printoptions"})

#: Calls that turn a value into text or a table for display (rule 2: a "formatting tool").
_FORMAT_CALLS = frozenset("format round Markdown HTML join to_string to_markdown to_html set_index rename".split())

#: Calls that convert or iterate without computing anything new.
_PLAIN_CALLS = frozenset(
    "str repr int float bool list tuple dict enumerate zip tolist item items keys values upper lower ljust rjust".split()
)

#: Attributes whose reading formats (``df.style``).
_FORMAT_ATTRS = frozenset({"style"})


def _units(notebook: nbformat.NotebookNode) -> frozenset[str]:
    """The names any cell of ``notebook`` imports from ``lib.units``."""
    trees = [_parse(cell.source) for cell in notebook.cells if cell.cell_type == "code"]
    return frozenset(
        alias.asname or alias.name
        for tree in trees
        if tree is not None
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "lib.units"
        for alias in node.names
    )


def _call_name(node: ast.Call) -> str | None:
    """``print`` for ``print(...)``, ``join`` for ``", ".join(...)``; None for anything else."""
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


class _Shown:
    """Whether an expression is a *shown value* (the module's rule), and whether it formats."""

    def __init__(self, units: frozenset[str]):
        self.units = units

    def is_unit(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.units
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
            return self.is_unit(node.left) and (self.is_unit(node.right) or _is_number(node.right))
        return False

    def __call__(self, node: ast.AST | None) -> bool:
        if node is None or isinstance(node, (ast.Constant, ast.Name, ast.expr_context)):
            return True
        if isinstance(node, ast.Attribute):
            return self(node.value)
        if isinstance(node, ast.Subscript):
            return self(node.value) and self(node.slice)
        if isinstance(node, ast.Slice):
            return self(node.lower) and self(node.upper) and self(node.step)
        if isinstance(node, ast.JoinedStr):
            return all(self(value) for value in node.values)
        if isinstance(node, ast.FormattedValue):
            return self(node.value) and self(node.format_spec)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return all(self(element) for element in node.elts)
        if isinstance(node, ast.Dict):
            return all(self(part) for part in node.keys + node.values)
        if isinstance(node, ast.Starred):
            return self(node.value)
        if isinstance(node, ast.UnaryOp):
            return isinstance(node.op, (ast.USub, ast.UAdd)) and self(node.operand)
        if isinstance(node, ast.BinOp):
            if not isinstance(node.op, (ast.Mult, ast.Div)):
                return False
            scale = [side for side in (node.left, node.right) if _is_number(side) or self.is_unit(side)]
            other = node.left if scale and scale[0] is node.right else node.right
            return bool(scale) and self(other)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            return all(not g.ifs and self(g.target) and self(g.iter) for g in node.generators) and all(
                self(part) for part in parts
            )
        if isinstance(node, ast.Call):
            name = _call_name(node)
            if name not in _FORMAT_CALLS | _PLAIN_CALLS | _SHOW_CALLS:
                return False
            receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
            return (
                self(receiver)
                and all(self(arg) for arg in node.args)
                and all(self(keyword.value) for keyword in node.keywords)
            )
        return False

    def formats(self, node: ast.AST) -> bool:
        """A shown value that uses a formatting tool: an f-string, ``.join``, ``.round``, ``.style`` ..."""
        if not self(node):
            return False
        for part in ast.walk(node):
            if isinstance(part, ast.JoinedStr):
                return True
            if isinstance(part, ast.Call) and _call_name(part) in _FORMAT_CALLS:
                return True
            if isinstance(part, ast.Attribute) and part.attr in _FORMAT_ATTRS:
                return True
        return False


def _is_number(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _formatting_only(statement: ast.stmt, shown: _Shown) -> bool:
    """Whether ``statement`` only formats output, by the module's three rules."""
    if isinstance(statement, ast.Expr):
        value = statement.value
        if isinstance(value, ast.Call) and _call_name(value) in _SHOW_CALLS:
            return shown(value)  # rule 1
        if isinstance(value, ast.Call) and _call_name(value) in {"append", "extend"}:
            return shown(value.func.value) and all(shown.formats(arg) for arg in value.args)  # rule 2
        return shown.formats(value)  # rule 2
    if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return (
            statement.value is not None and all(shown(t) for t in targets) and shown.formats(statement.value)
        )  # rule 2
    if isinstance(statement, (ast.For, ast.If, ast.With)):  # rule 3
        body = statement.body + getattr(statement, "orelse", [])
        return all(_formatting_only(inner, shown) for inner in body)
    return False


def _formatting_statements(statements: list[ast.stmt], shown: _Shown) -> Iterator[ast.stmt]:
    """The formatting-only statements among ``statements``, looking inside those that are not."""
    for statement in statements:
        if _formatting_only(statement, shown):
            yield statement
        else:
            for field in ("body", "orelse", "finalbody"):
                yield from _formatting_statements(getattr(statement, field, []), shown)
            for handler in getattr(statement, "handlers", []):
                yield from _formatting_statements(handler.body, shown)


def _parse(source: str) -> ast.Module | None:
    """``source`` parsed, or None when it is not Python (an IPython magic)."""
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def _is_code(line: str) -> bool:
    return bool(line.strip()) and not line.strip().startswith("#")


def formatting_lines(notebook: nbformat.NotebookNode) -> list[tuple[int, str]]:
    """``(cell index, line)`` of each visible line that only formats output (the module's rule).

    >>> book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
    ...     "import numpy as np\\nx = np.arange(3)\\nprint('x =', x.tolist())\\nprint('equal:', bool((x == x).all()))")])
    >>> formatting_lines(book)
    [(0, "print('x =', x.tolist())")]
    """
    shown = _Shown(_units(notebook))
    index = {id(cell): number for number, cell in enumerate(notebook.cells)}
    found = []
    for cell in visible_code_cells(notebook):
        tree = _parse(cell.source)
        if tree is None:
            continue
        numbers = set()
        for statement in _formatting_statements(tree.body, shown):
            numbers.update(range(statement.lineno, statement.end_lineno + 1))
        lines = cell.source.splitlines()
        found += [(index[id(cell)], lines[n - 1]) for n in sorted(numbers) if _is_code(lines[n - 1])]
    return found


def visible_line_count(notebook: nbformat.NotebookNode) -> int:
    """How many lines of visible code are neither blank nor only a comment."""
    return sum(_is_code(line) for _, line in _visible_lines(notebook))


def formatting_share(notebook: nbformat.NotebookNode) -> float:
    """Formatting lines over visible lines (both neither blank nor a comment); 0 with no visible code."""
    total = visible_line_count(notebook)
    return len(formatting_lines(notebook)) / total if total else 0.0


def main(argv: list[str] | None = None) -> int:
    """Print each notebook's visible glue calls, plumbing imports, overlong lines and formatting share.

    Exit 1 if there is any such call, import or line, or a notebook whose share is at least ``--max-share``.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--width", type=int, default=WIDTH, help=f"longest line allowed (default {WIDTH})")
    parser.add_argument(
        "--max-share", type=float, default=MAX_SHARE, help=f"formatting lines allowed (default {MAX_SHARE})"
    )
    args = parser.parse_args(argv)
    found = 0
    table = []
    for path in args.notebooks:
        notebook = nbformat.read(path, as_version=4)
        table.append((path.name, visible_line_count(notebook), len(formatting_lines(notebook))))
        found_here = (
            ("glue", glue_calls(notebook)),
            ("plumbing", plumbing_imports(notebook)),
            (f"over {args.width}", long_lines(notebook, args.width)),
        )
        for kind, rows in found_here:
            for number, line in rows:
                cell_id = notebook.cells[number].get("id", number)
                print(f"{path}: cell {cell_id} ({kind}): {line.strip()[:100]}")
            found += len(rows)
    print(f"{found} visible lines to move or shorten")
    print()
    print(f"{'notebook':<36} {'visible':>7} {'formatting':>10} {'share':>6}")
    over = 0
    for name, total, formatting in table:
        share = formatting / total if total else 0.0
        over += share >= args.max_share
        mark = "  over" if share >= args.max_share else ""
        print(f"{name:<36} {total:>7} {formatting:>10} {share:>6.1%}{mark}")
    print(f"{over} notebooks at or over {args.max_share:.0%} formatting lines")
    return 1 if found or over else 0


if __name__ == "__main__":
    sys.exit(main())
