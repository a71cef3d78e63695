"""No chapter shows its readers a ``glue(`` call or an import of the book's plumbing (myst_nb, private names),
and under 10 % of a chapter's visible lines only format output (issue 32).

What counts as visible is :mod:`tools.notebooks.visible_code`'s rule: a code cell whose
source the book shows without a click. Glue calls belong in a
``remove-input`` cell, or in a folded (``hide-input``) plotting cell; printing
values already computed belongs in a folded (``hide-input``) cell next to the
code. ``pytest -s`` on this file, or ``python -m tools.notebooks.visible_code
notebooks/*.ipynb``, prints the table of formatting lines per chapter.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from tools.notebooks.visible_code import (
    MAX_SHARE,
    formatting_lines,
    formatting_share,
    glue_calls,
    main,
    plumbing_imports,
    visible_line_count,
)

CHAPTERS = sorted(Path(__file__).resolve().parents[2].glob("notebooks/[0-9][0-9]_*.ipynb"))


def test_there_are_chapters():
    assert len(CHAPTERS) >= 11


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_no_visible_glue_call(chapter):
    calls = glue_calls(nbformat.read(chapter, as_version=4))
    shown = "\n".join(f"  cell {number}: {line.strip()}" for number, line in calls[:10])
    assert not calls, f"{chapter.name}: {len(calls)} glue( calls in visible code cells, e.g.\n{shown}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_no_visible_import_of_the_books_plumbing(chapter):
    imports = plumbing_imports(nbformat.read(chapter, as_version=4))
    assert not imports, f"{chapter.name}: visible imports of myst_nb or private names: {imports}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_under_a_tenth_of_visible_code_only_formats_output(chapter):
    notebook = nbformat.read(chapter, as_version=4)
    lines, share = formatting_lines(notebook), formatting_share(notebook)
    shown = "\n".join(f"  cell {notebook.cells[number].get('id', number)}: {line.strip()}" for number, line in lines)
    assert share < MAX_SHARE, (
        f"{chapter.name}: {len(lines)} of {visible_line_count(notebook)} visible lines ({share:.1%}) only format "
        f"output; move them to a hide-input cell next to the code, or end the cell with the value:\n{shown}"
    )


def test_the_table_of_formatting_lines_per_chapter(capsys):
    """The CLI prints one row per chapter (notebook, visible lines, formatting lines, share); ``pytest -s`` shows it."""
    main([str(path) for path in CHAPTERS])
    table = capsys.readouterr().out.split("\n\n")[-1]
    with capsys.disabled():
        print("\n" + table)
    rows = [line.split() for line in table.splitlines() if line.endswith("%") or line.endswith("over")]
    assert [row[0] for row in rows] == [path.name for path in CHAPTERS]
    for row, path in zip(rows, CHAPTERS):
        notebook = nbformat.read(path, as_version=4)
        assert int(row[1]) == visible_line_count(notebook) and int(row[2]) == len(formatting_lines(notebook))


def _notebook(*sources: str, tags: tuple[str, ...] = ()) -> nbformat.NotebookNode:
    cells = [nbformat.v4.new_code_cell(source, metadata={"tags": list(tags)} if tags else {}) for source in sources]
    return nbformat.v4.new_notebook(cells=cells)


SETUP = "import numpy as np\nimport pandas as pd\nfrom IPython.display import Markdown, display\nfrom lib.units import GB, ms, s"


def test_formatting_lines_are_found():
    book = _notebook(
        SETUP,
        "t = np.array([0.001, 0.004])\n"
        "print(f'T = {t[0] / ms:.2f} ms')\n"  # rule 1: an f-string of a value already computed
        "print('t =', t.tolist(), 'B =', 10 * GB / s)\n"  # rule 1: a unit scaling is not a computation
        "for k, x in enumerate(t):\n"  # rule 3: the loop only prints
        "    print(f'{k}: {x:.3f}',\n"
        "          end='')\n"
        "pd.set_option('display.precision', 3)\n"  # rule 1
        "table = pd.DataFrame({'t': t})\n"
        "label = ', '.join(f'{x / ms:.1f} ms' for x in t)\n"  # rule 2: f-string assembly
        "rows = []\n"
        "rows.append(f'| {t[0]} |')\n"  # rule 2
        "shown = table.round(2).set_index('t')\n"  # rule 2: a table shaped for looks
        "display(Markdown('\\\\n'.join(rows)))\n"  # rule 1
        "'{:.1f}'.format(t[1])",  # rule 2: the cell's last expression, formatted
    )
    found = [line.strip() for _, line in formatting_lines(book)]
    assert found == [
        "print(f'T = {t[0] / ms:.2f} ms')",
        "print('t =', t.tolist(), 'B =', 10 * GB / s)",
        "for k, x in enumerate(t):",
        "print(f'{k}: {x:.3f}',",
        "end='')",
        "pd.set_option('display.precision', 3)",
        "label = ', '.join(f'{x / ms:.1f} ms' for x in t)",
        "rows.append(f'| {t[0]} |')",
        "shown = table.round(2).set_index('t')",
        "display(Markdown('\\\\n'.join(rows)))",
        "'{:.1f}'.format(t[1])",
    ]
    assert visible_line_count(book) == 4 + 14 and formatting_share(book) == 11 / 18


def test_computations_that_are_printed_are_not_formatting():
    book = _notebook(
        SETUP,
        "t = np.array([0.001, 0.004])\n"
        "print(f'median {np.median(t) / ms:.2f} ms')\n"  # calls a function
        "print('equal:', bool((t == t).all()))\n"  # compares
        "print(f'{t[1] - t[0]:.3f}')\n"  # subtracts two values
        "print(f'{t[1] / t[0]:.1f}x')\n"  # a ratio of two values, not a unit
        "for x in t:\n"  # the loop computes as well as prints
        "    y = x * x\n"
        "    print(y)\n"
        "label = 'plain text'\n"  # no formatting tool
        "t  # a bare value as the last expression\n"
        "# print(f'{t}') in a comment",
    )
    assert formatting_lines(book) == [(1, "    print(y)")]
    assert formatting_lines(_notebook(SETUP, "%timeit t.sum()\nprint(f'{t}')")) == []  # a magic: not Python


def test_hidden_cells_are_not_counted():
    book = _notebook(SETUP, "x = 2\nprint(f'{x:.1f}')", tags=("hide-input",))
    assert formatting_lines(book) == [] and visible_line_count(book) == 0 and formatting_share(book) == 0.0


def test_the_share_test_fails_on_a_chapter_that_only_prints(tmp_path):
    path = tmp_path / "99_prints.ipynb"
    nbformat.write(_notebook("import numpy as np", "x = np.ones(3)\nprint(f'{x.tolist()}')"), path)
    assert formatting_share(nbformat.read(path, as_version=4)) == 1 / 3
    with pytest.raises(AssertionError, match=r"1 of 3 visible lines \(33.3%\)[^\n]*\n\s+cell .*print"):
        test_under_a_tenth_of_visible_code_only_formats_output(path)
    assert main([str(path)]) == 1
