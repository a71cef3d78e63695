"""A helper shared by the tests of lib.queueing.fcfs and lib.queueing.batching (tests/unit/lib/queueing)."""

from __future__ import annotations


def most_at_once(starts, ends) -> int:
    """Most intervals ``[start, end)`` open at one time; one ending at ``t`` closes before one starting at ``t``.

    >>> most_at_once([0, 1, 1], [1, 2, 3])
    2
    """
    events = sorted([(t, 1) for t in starts] + [(t, -1) for t in ends])
    held = peak = 0
    for _, step in events:
        held += step
        peak = max(peak, held)
    return peak
