"""What strict nbval compares in this book, so that ``make test`` passes on any CPU.

A pytest plugin (loaded by the root ``conftest.py``; pass ``-p tools.notebooks.nbval_rules``
when running pytest on a notebook outside the repository). Two rules, and one mark:

1. **Images are never compared byte for byte.** nbval already skips
   ``image/png`` and ``image/jpeg``, but myst-nb's ``glue(name, fig)`` stores
   the figure under ``application/papermill.record/image/png``, which nbval
   compares. Anti-aliasing differs between CPUs, so every image mimetype,
   glued or displayed, joins nbval's skip list (:data:`IMAGE_MIMETYPES`).
2. **Full-precision floats are compared with a tolerance.** A glued float is
   stored as its full ``repr`` (``5.232023531696898``). Where it comes from a
   reduction, a transcendental function or BLAS, the last digits depend on the
   CPU's SIMD kernels. Numbers in text outputs whose relative difference is
   below :data:`RELATIVE_TOLERANCE` count as equal; every other character,
   integers included, is still compared exactly.

3. **Stored outputs are marked** ``stored``, as are the doctests of ``lib``
   (:func:`pytest_collection_modifyitems`): both compare what this CPU
   computes with text written down earlier, so the emulated-CPU pass of
   ``make test`` (``pytest -m stored``) runs them with the tests that compare
   a computed float with a committed file.

Values that differ by more than rounding between CPUs (ulp counts, errors of a
float split, timings) are not covered by rule 2: the cell that shows them is
tagged ``nbval-ignore-output`` and the claim they support is an ``assert``
with a justified tolerance. README's "Adding a chapter" states the rule.

>>> numbers_match("x = 5.232023531696883 ms", "x = 5.232023531696898 ms")
True
>>> numbers_match("28142 outputs", "28911 outputs")
False
>>> numbers_match("3.6e-07", "8.3e-07")
False
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from myst_nb.ext.glue import GLUE_PREFIX
from nbval.plugin import IPyNbCell, IPyNbFile

__all__ = ["IMAGE_MIMETYPES", "RELATIVE_TOLERANCE", "is_stored_output", "numbers_match", "with_tolerance"]

#: Every image mimetype nbval must not compare: displayed and glued.
IMAGE_MIMETYPES = tuple(
    prefix + kind for prefix in ("", GLUE_PREFIX) for kind in ("image/png", "image/jpeg", "image/svg+xml")
)

#: Relative difference below which two printed numbers are the same number:
#: a few hundred float64 ulps, far below any digit the prose quotes.
RELATIVE_TOLERANCE = 1e-12

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_TEXT_KEYS = ("text", "text/plain", GLUE_PREFIX + "text/plain")


def _is_float(token: str) -> bool:
    return any(mark in token for mark in ".eE")


def numbers_match(reference: str, test: str) -> bool:
    """True if the two texts differ only in float digits below the tolerance.

    Integers (no decimal point, no exponent) must be identical, and so must
    all the text between numbers.

    >>> numbers_match("1.0000000000001", "1.0")
    True
    >>> numbers_match("K = 4", "K = 5")
    False
    """
    if reference == test:
        return True
    ref_parts, test_parts = _NUMBER.split(reference), _NUMBER.split(test)
    ref_numbers, test_numbers = _NUMBER.findall(reference), _NUMBER.findall(test)
    if ref_parts != test_parts or len(ref_numbers) != len(test_numbers):
        return False
    for ref_token, test_token in zip(ref_numbers, test_numbers):
        if ref_token == test_token:
            continue
        if not (_is_float(ref_token) and _is_float(test_token)):
            return False
        if not math.isclose(float(ref_token), float(test_token), rel_tol=RELATIVE_TOLERANCE, abs_tol=0.0):
            return False
    return True


def with_tolerance(test_outputs: list, ref_outputs: list) -> list:
    """Copies of ``test_outputs`` whose text equals the reference where :func:`numbers_match`.

    nbval then compares exactly, so a real difference still fails with
    nbval's own message.

    >>> out = with_tolerance([{"text": "t = 1.0000000000001"}], [{"text": "t = 1.0"}])
    >>> out[0]["text"]
    't = 1.0'
    """
    if len(test_outputs) != len(ref_outputs):
        return test_outputs
    return [_align(test, ref) for test, ref in zip(test_outputs, ref_outputs)]


def _align(test: dict, ref: dict) -> dict:
    """``test`` with each text that matches ``ref`` within the tolerance replaced by ``ref``'s."""
    test = type(test)(test)  # a shallow copy that keeps NotebookNode attribute access
    for key in _TEXT_KEYS:
        if _both_text(test, ref, key) and numbers_match(ref[key], test[key]):
            test[key] = ref[key]
    if isinstance(test.get("data"), dict) and isinstance(ref.get("data"), dict):
        test["data"] = _align(test["data"], ref["data"])
    return test


def _both_text(test: dict, ref: dict, key: str) -> bool:
    return isinstance(test.get(key), str) and isinstance(ref.get(key), str)


def pytest_configure(config):
    """Extend nbval's skip list with :data:`IMAGE_MIMETYPES` and compare numbers with a tolerance."""
    if getattr(IPyNbCell, "_book_rules", False):
        return
    original_init, original_compare = IPyNbFile.__init__, IPyNbCell.compare_outputs

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        self.skip_compare = tuple(self.skip_compare) + IMAGE_MIMETYPES

    def compare_outputs(self, test, ref, skip_compare=None):
        return original_compare(self, with_tolerance(test, ref), ref, skip_compare)

    IPyNbFile.__init__, IPyNbCell.compare_outputs = init, compare_outputs
    IPyNbCell._book_rules = True


def is_stored_output(item, root: Path) -> bool:
    """True for a notebook cell nbval compares, or a doctest of a module under ``root/lib``.

    >>> class DoctestItem:
    ...     path = Path("/repo/tests/unit/lib/test_budget.py")
    >>> is_stored_output(DoctestItem(), Path("/repo"))
    False
    >>> DoctestItem.path = Path("/repo/lib/budget.py")
    >>> is_stored_output(DoctestItem(), Path("/repo"))
    True
    """
    if isinstance(item, IPyNbCell):
        return True
    return type(item).__name__ == "DoctestItem" and Path(item.path).is_relative_to(root / "lib")


def pytest_collection_modifyitems(config, items):
    """Mark every item :func:`is_stored_output` finds with ``stored``."""
    for item in items:
        if is_stored_output(item, config.rootpath):
            item.add_marker(pytest.mark.stored)
