"""Suite-wide settings: hypothesis profiles and the book's nbval comparison rules.

No deadline: these machines are shared and noisy, and a deadline is a timing
assertion in disguise. In CI (``CI`` set) the examples are derandomized, so a
red run can be reproduced exactly; locally each run explores new examples.
What nbval compares, and why, is in :mod:`tools.notebooks.nbval_rules`.

Tests that take seconds each (a property over many plans, real ranks, a
subprocess, a refit from every published figure) carry ``@pytest.mark.slow``:
``make check`` leaves them to ``make test``. Doctests cannot carry a mark, so
the slow ones are named in :data:`SLOW_DOCTESTS`.
"""

import os

import pytest
from hypothesis import settings

pytest_plugins = ["tools.notebooks.nbval_rules"]

settings.register_profile("local", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "local")

#: Doctests that plan a cluster or refit from every published figure (seconds each).
SLOW_DOCTESTS = {"lib.serving.sizing", "lib.validation.calibrate", "lib.validation.families", "lib.validation.report"}


def pytest_collection_modifyitems(items):
    """Mark the doctests of :data:`SLOW_DOCTESTS` ``slow``."""
    for item in items:
        if type(item).__name__ == "DoctestItem" and item.name in SLOW_DOCTESTS:
            item.add_marker(pytest.mark.slow)
