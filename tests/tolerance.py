"""Comparing what the code computes now with what a committed file stores, on any CPU.

A float that went through numpy (a sum, a bootstrap, a least-squares fit) can
differ in its last bits between machines: numpy picks SIMD kernels by CPU
(SSE, AVX2, AVX-512), and a different kernel adds in a different order. So a
test that re-computes a committed number compares it with a relative
tolerance, and everything else exactly:

* floats agree within ``REL`` (relative) or ``ABS`` (absolute, for values
  near zero);
* integers, strings, booleans and ``None`` must be equal, and of the same kind
  (an integer never matches a float, ``True`` never matches ``1``);
* dicts must have the same keys and lists the same length, recursively.

``REL = 1e-9`` is far above rounding and far below any real change. Summing
``n`` float64 terms in another order moves the result by at most about
``n * 2.2e-16`` relative; a bootstrap over a few thousand repetitions is about
1e-12, and a least-squares fit on a well-conditioned 2 x 2 system loses a few
more digits. A change in the analysis moves a number by far more than 1e-9.

>>> assert_json_close({"a": [1, 2.0, "x"]}, {"a": [1, 2.0 * (1 + 1e-14), "x"]})
>>> assert_json_close({"a": 1.0}, {"a": 1.0 + 1e-6})
Traceback (most recent call last):
...
AssertionError: at ['a']: 1.0 != 1.000001 (relative tolerance 1e-09)
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["REL", "ABS", "assert_json_close", "differences"]

#: Relative tolerance for re-computed floats (see the module notes).
REL = 1e-9
#: Absolute tolerance, for floats that should be zero and come out as rounding noise.
ABS = 1e-15


def differences(actual: Any, expected: Any, rel: float = REL, abs_: float = ABS, where: str = "") -> list[str]:
    """Every place where ``actual`` and ``expected`` disagree, in words (empty when they agree).

    >>> differences([1, 2], [1, 3])
    ['at [1]: 2 != 3']
    >>> differences({"n": 3}, {"n": 3.0})
    ["at ['n']: int 3 != float 3.0"]
    """
    here = where or "the top level"
    if isinstance(expected, dict) and isinstance(actual, dict):
        if set(actual) != set(expected):
            return [f"at {here}: keys {sorted(actual)} != {sorted(expected)}"]
        found = []
        for key in expected:
            found += differences(actual[key], expected[key], rel, abs_, f"{where}[{key!r}]")
        return found
    if isinstance(expected, list) and isinstance(actual, list):
        if len(actual) != len(expected):
            return [f"at {here}: lengths {len(actual)} != {len(expected)}"]
        found = []
        for i, (a, e) in enumerate(zip(actual, expected)):
            found += differences(a, e, rel, abs_, f"{where}[{i}]")
        return found
    if type(actual) is not type(expected):
        return [f"at {here}: {type(actual).__name__} {actual!r} != {type(expected).__name__} {expected!r}"]
    if isinstance(expected, float):
        same = (math.isnan(actual) and math.isnan(expected)) or math.isclose(
            actual, expected, rel_tol=rel, abs_tol=abs_
        )
        return [] if same else [f"at {here}: {actual!r} != {expected!r} (relative tolerance {rel:g})"]
    return [] if actual == expected else [f"at {here}: {actual!r} != {expected!r}"]


def assert_json_close(actual: Any, expected: Any, rel: float = REL, abs_: float = ABS) -> None:
    """Raise an AssertionError listing the first few differences (see the module notes)."""
    found = differences(actual, expected, rel, abs_)
    if found:
        more = f" (and {len(found) - 5} more)" if len(found) > 5 else ""
        raise AssertionError("; ".join(found[:5]) + more)
