"""One symbol, one meaning: the known conflicts with book/notation.md stay fixed.

``book/notation.md`` gives $C$ for the divisible time (so $T_2 = S +
C/(K\\eta) + H$), $B$ for a bandwidth in Part I and $B_{\\text{batch}}$ for a
batch of sequences from chapter 6 on. These checks read the prose pages
(``book/*.md``) and every notebook's markdown for the conflicts that were
found: a split time written with another letter for the divisible work, the
tensor-parallel bytes $d\\,b\\,B$ with a bare $B$ for the batch, chapter 6
reading plain $B$ as the batch anywhere, and its figure labelling an axis so.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTATION = ROOT / "book" / "notation.md"
CHAPTER_6 = ROOT / "notebooks" / "06_tensor_parallel_decode.ipynb"

#: T_2 = S + <first letter of the divisible term>: it must be C.
SPLIT_TIME = re.compile(r"T_(?:2|\{2\})\s*=\s*S\s*\+\s*(?:\\frac\{)?\s*([A-Za-z])")
#: The tensor-parallel bytes d b B with a bare B (no subscript) for the batch.
BARE_BATCH_BYTES = re.compile(r"d\s*(?:\\,|\*)?\s*b\s*(?:\\,|\*)?\s*B(?![_\w])")
#: A bare B in maths: not B_{...}, B^*, \mathrm{B}, or part of a word or command.
BARE_B = re.compile(r"(?<![\\A-Za-z{])B(?![_^A-Za-z}])")
#: Maths in MyST markdown: $$...$$ blocks, then $...$ spans.
MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)


def _texts() -> list[tuple[str, str]]:
    """(where, markdown) for every prose page and every notebook's markdown cell."""
    texts = [(path.name, path.read_text(encoding="utf-8")) for path in sorted((ROOT / "book").glob("*.md"))]
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        texts += [(f"{path.name} cell {c.get('id')}", c.source) for c in notebook.cells if c.cell_type == "markdown"]
    return texts


def test_notation_defines_the_symbols_checked_here():
    text = NOTATION.read_text(encoding="utf-8")
    assert "| $C$ | divisible time" in text
    assert "$T_2$ | time split over $K$ devices, $S + C/(K\\eta) + H$" in text
    assert "$B_{\\text{batch}}$" in text and "| $B$ | effective bandwidth" in text


def test_split_time_writes_the_divisible_time_as_c():
    wrong = [(where, m.group(0)) for where, text in _texts() for m in SPLIT_TIME.finditer(text) if m.group(1) != "C"]
    assert not wrong, wrong


def test_tensor_parallel_bytes_name_the_batch_b_batch():
    wrong = [(where, m.group(0)) for where, text in _texts() for m in BARE_BATCH_BYTES.finditer(text)]
    assert not wrong, wrong


def test_chapter_6_has_no_bare_b():
    """Chapter 6 writes the batch B_batch, the link's bandwidth B_link and the crossover batch B^*; never plain B."""
    notebook = nbformat.read(CHAPTER_6, as_version=4)
    wrong = [
        (c.get("id"), math)
        for c in notebook.cells
        if c.cell_type == "markdown"
        for math in MATH.findall(c.source)
        if BARE_B.search(math)
    ]
    assert not wrong, wrong
    labels = [c.get("id") for c in notebook.cells if c.cell_type == "code" and re.search(r"batch size B\b", c.source)]
    assert not labels, f"a figure labels the batch plain B: {labels}"


@pytest.mark.parametrize(
    "text, bad",
    [
        ("$T_2 = S + W / (2\\eta) + H$", True),
        ("$T_2 = S + C / (2\\eta) + H$", False),
        ("$V = 2\\,\\frac{K-1}{K}\\, d\\, b\\, B .$", True),
        ("$V = 2\\,\\frac{K-1}{K}\\, d\\, b\\, B_{\\text{batch}}$", False),
    ],
)
def test_the_checks_catch_the_conflicts_they_name(text, bad):
    found = bool(SPLIT_TIME.search(text) and SPLIT_TIME.search(text).group(1) != "C") or bool(
        BARE_BATCH_BYTES.search(text)
    )
    assert found == bad
