"""The smallest network that shows where a split must talk.

Introduced in chapter 1. A row vector ``X`` (1x2) passes through ``A`` (2x4),
a ReLU, and ``B`` (4x2). Splitting ``A`` by columns and ``B`` by the matching
rows gives each device a partial output; the partials must be summed (an
all-reduce) to recover the whole.

>>> forward(X, A, B).tolist()
[[-3, 9]]
>>> [part.tolist() for part in split_forward(X, A, B)]
[[[1, 1]], [[-4, 8]]]
"""

from __future__ import annotations

import numpy as np

from lib import _checks

__all__ = ["X", "A", "B", "relu", "forward", "split_forward"]

X = np.array([[1, 2]])
A = np.array([[1, -1, 2, 0], [0, 1, -1, 2]])
B = np.array([[1, 0], [0, 1], [3, -2], [-1, 2]])


def relu(values: np.ndarray) -> np.ndarray:
    """Replace negative entries by zero, elementwise.

    >>> relu(np.array([-3, 0, 2])).tolist()
    [0, 0, 2]
    """
    return np.maximum(values, 0)


def _check_shapes(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    if x.ndim != 2 or a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"x, a and b must be 2-D, got shapes {x.shape}, {a.shape}, {b.shape}")
    if x.shape[1] != a.shape[0] or a.shape[1] != b.shape[0]:
        raise ValueError(f"shapes do not chain: x {x.shape} @ a {a.shape} @ b {b.shape}")


def forward(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The whole network on one device: ``relu(x @ a) @ b``.

    >>> forward(np.array([[1, 0]]), np.eye(2, dtype=int), np.eye(2, dtype=int)).tolist()
    [[1, 0]]
    """
    x, a, b = np.asarray(x), np.asarray(a), np.asarray(b)
    _check_shapes(x, a, b)
    return relu(x @ a) @ b


def split_forward(x: np.ndarray, a: np.ndarray, b: np.ndarray, parts: int = 2) -> list[np.ndarray]:
    """Each device's partial output when ``a`` is split by columns, ``b`` by rows.

    Device ``k`` holds a contiguous block of ``a``'s columns and the same
    block of ``b``'s rows, so it can apply the ReLU locally; the partial
    outputs it returns must still be summed.

    Parameters
    ----------
    x, a, b : array
        The input (n x d), first weight matrix (d x h) and second (h x m).
    parts : int
        Number of devices, between 1 and h; blocks differ by at most one
        column when h is not divisible by ``parts``.

    Returns
    -------
    list of arrays
        One (n x m) partial output per device; their sum equals
        :func:`forward`.

    >>> sum(split_forward(X, A, B, parts=4)).tolist()
    [[-3, 9]]
    """
    x, a, b = np.asarray(x), np.asarray(a), np.asarray(b)
    _check_shapes(x, a, b)
    _checks.count("parts", parts, minimum=1)
    if parts > a.shape[1]:
        raise ValueError(f"parts must be at most the hidden width {a.shape[1]}, got {parts!r}")
    columns = np.array_split(np.arange(a.shape[1]), int(parts))
    return [relu(x @ a[:, block]) @ b[block, :] for block in columns]
