"""Hypothesis strategies for random but valid ``lib.budget.Phase`` objects (shared by the tests)."""

from __future__ import annotations

from hypothesis import strategies as st

from lib.budget import Phase


def phases(min_divisible: float = 0.0, min_transfers: int = 0, min_bytes: float = 0.0) -> st.SearchStrategy[Phase]:
    """Phases with times up to 1 s, up to 16 transfers and devices, and realistic links."""
    return st.builds(
        Phase,
        serial=st.floats(min_value=0.0, max_value=1.0, allow_subnormal=False),
        divisible=st.floats(min_value=min_divisible, max_value=1.0, allow_subnormal=False),
        efficiency=st.floats(min_value=0.05, max_value=1.0),
        transfers=st.integers(min_value=min_transfers, max_value=16),
        startup=st.floats(min_value=0.0, max_value=1e-3, allow_subnormal=False),
        transfer_bytes=st.floats(min_value=min_bytes, max_value=1e9, allow_subnormal=False),
        bandwidth=st.floats(min_value=1e6, max_value=1e12),
        devices=st.integers(min_value=1, max_value=16),
    )
