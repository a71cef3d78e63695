"""Hypothesis strategies for random but valid, physically meaningful ``lib.budget.Phase`` objects.

A time is zero or at least a nanosecond, a message zero or at least a byte:
smaller non-zero values (``transfer_bytes=2.2e-308``) mean nothing physically,
and near the bottom of the float range a relative tolerance means nothing either.
"""

from __future__ import annotations

from hypothesis import strategies as st

from lib.budget import Phase

#: The shortest non-zero time drawn, in seconds, and the smallest non-zero message, in bytes.
SHORTEST_TIME = 1e-9
SMALLEST_MESSAGE = 1.0


def zero_or_between(low: float, high: float, smallest: float) -> st.SearchStrategy[float]:
    """Floats in ``[low, high]`` that are zero (when ``low`` is) or at least ``smallest``."""
    above = st.floats(min_value=max(low, smallest), max_value=high)
    return st.one_of(st.just(0.0), above) if low <= 0.0 else above


def phases(min_divisible: float = 0.0, min_transfers: int = 0, min_bytes: float = 0.0) -> st.SearchStrategy[Phase]:
    """Phases with times up to 1 s, up to 16 transfers and devices, and realistic links."""
    return st.builds(
        Phase,
        serial=zero_or_between(0.0, 1.0, SHORTEST_TIME),
        divisible=zero_or_between(min_divisible, 1.0, SHORTEST_TIME),
        efficiency=st.floats(min_value=0.05, max_value=1.0),
        transfers=st.integers(min_value=min_transfers, max_value=16),
        startup=zero_or_between(0.0, 1e-3, SHORTEST_TIME),
        transfer_bytes=zero_or_between(min_bytes, 1e9, SMALLEST_MESSAGE),
        bandwidth=st.floats(min_value=1e6, max_value=1e12),
        devices=st.integers(min_value=1, max_value=16),
    )
