"""Every split has a figure drawn from lib, in the chapter that introduces it, with alt text and a caption, before the derivation.

The table is :data:`lib.diagrams.SPLIT_FIGURES` (split -> notebook, section
heading, glued figure name). For each split the committed notebook must
store the figure as a glued PNG made by a cell that calls ``lib.diagrams``,
and show it with a ``{glue:figure}`` block that has alt text and a caption,
inside the named section and before the section's first display equation
and its first code a reader sees (the derivation).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from lib.diagrams import SPLIT_FIGURES
from tools.notebooks.glue import glue_values

ROOT = Path(__file__).resolve().parents[2]

HIDDEN = {"hide-input", "remove-input", "remove-cell"}


def _figure_block(source: str, name: str) -> dict | None:
    """The ``{glue:figure} name`` block of a markdown cell: its options and its caption."""
    match = re.search(r"```\{glue:figure\}\s+" + re.escape(name) + r"\s*\n(.*?)\n```", source, re.S)
    if not match:
        return None
    lines = match.group(1).splitlines()
    options = dict(re.match(r":(\w+):\s*(.*)", line).groups() for line in lines if re.match(r":\w+:", line))
    caption = " ".join(line for line in lines if line.strip() and not re.match(r":\w+:", line))
    return {"options": options, "caption": caption}


def _sections(notebook) -> list[tuple[str, int, int]]:
    """(heading, first cell, end cell) of each ``## `` section."""
    starts = [
        (c.source.splitlines()[0], i)
        for i, c in enumerate(notebook.cells)
        if c.cell_type == "markdown" and c.source.startswith("## ")
    ]
    ends = [i for _, i in starts[1:]] + [len(notebook.cells)]
    return [(h, i, e) for (h, i), e in zip(starts, ends)]


def test_the_table_lists_every_split():
    assert set(SPLIT_FIGURES) == {"tensor", "sequence", "data", "pipeline", "expert", "disaggregated"}


@pytest.mark.parametrize("split", list(SPLIT_FIGURES))
def test_split_has_a_figure_before_its_derivation(split):
    notebook_name, heading, name = SPLIT_FIGURES[split]
    notebook = nbformat.read(ROOT / "notebooks" / notebook_name, as_version=4)
    stored = glue_values(notebook)
    assert name in stored and "image/png" in stored[name], f"{split}: {notebook_name} stores no figure {name}"
    makers = [c for c in notebook.cells if c.cell_type == "code" and re.search(rf"glue\(\"{name}\"", c.source)]
    assert len(makers) == 1 and "diagrams." in makers[0].source, f"{split}: {name} is not drawn by lib.diagrams"

    ((first, end),) = [(i, e) for h, i, e in _sections(notebook) if h == heading]
    shown = [i for i, c in enumerate(notebook.cells) if c.cell_type == "markdown" and _figure_block(c.source, name)]
    assert len(shown) == 1 and first <= shown[0] < end, f"{split}: {name} is not shown in section {heading!r}"
    block = _figure_block(notebook.cells[shown[0]].source, name)
    assert len(block["options"].get("alt", "")) > 60, f"{split}: {name} has no alt text"
    assert block["options"].get("name", "").startswith("fig-"), f"{split}: {name} has no label"
    assert len(block["caption"]) > 40, f"{split}: {name} has no caption"

    for i in range(first, shown[0]):
        cell = notebook.cells[i]
        if cell.cell_type == "markdown":
            assert "$$" not in cell.source, f"{split}: a derivation precedes the figure (cell {i})"
        elif not HIDDEN & set(cell.metadata.get("tags", [])):
            raise AssertionError(f"{split}: code a reader sees precedes the figure (cell {i})")
