"""Tests for lib.collectives.timing: the closed-form and ring time models."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lib import collectives as col
from lib.units import GB, MB, s, us

# --- time models --------------------------------------------------------------------------


def test_two_forms_share_the_bandwidth_term():
    n, k, a, bw = 64 * MB, 8, 5 * us, 100 * GB / s
    per_collective = col.collective_time("allreduce", n, k, a, bw)
    ring = col.ring_allreduce_time(n, k, a, bw)
    # Subtract the startup terms: l once, versus 2 (K - 1) alpha.
    assert math.isclose(per_collective - a, ring - 2 * (k - 1) * a)
    assert math.isclose(per_collective - a, 2 * 7 / 8 * n / bw)


@given(st.floats(1e-7, 1e-4), st.floats(1e9, 1e12), st.integers(2, 64))
def test_crossover_equalises_the_terms(latency, bandwidth, k):
    n = col.crossover_message_bytes(latency, bandwidth, k)
    assert math.isclose(col.allreduce_bytes(n, k) / bandwidth, latency, rel_tol=1e-9)
    m = col.crossover_message_bytes(latency, bandwidth, k, form="ring")
    assert math.isclose(m / (k * bandwidth), latency, rel_tol=1e-9)


def test_single_device_costs_nothing():
    assert col.collective_time("allreduce", 1 * MB, 1, 5 * us, 1 * GB / s) == 0
    assert col.ring_allreduce_time(1 * MB, 1, 5 * us, 1 * GB / s) == 0
    assert col.crossover_message_bytes(5 * us, 1 * GB / s, 1) == math.inf


@pytest.mark.parametrize("kind", sorted(col.KINDS))
def test_one_device_sends_nothing_whatever_the_kind(kind):
    assert col.bytes_sent(kind, 100, 1) == 0
    assert col.collective_time(kind, 100, 1, 5 * us, 1 * GB / s) == 0
    assert col.crossover_message_bytes(5 * us, 1 * GB / s, 1, kind=kind) == math.inf


@pytest.mark.parametrize("form", ["collective", "ring"])
def test_crossover_with_no_startup_is_zero_even_on_an_ideal_link(form):
    # No startup cost: the transfer term dominates every message, so the crossover is 0 (not NaN).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert col.crossover_message_bytes(0.0, math.inf, 4, form=form) == 0
        assert col.crossover_message_bytes(0.0, 1 * GB / s, 4, form=form) == 0
        out = col.crossover_message_bytes(np.array([0.0, 5 * us]), math.inf, 4, form=form)
    # With a startup but an ideal link the startup always dominates: infinite crossover.
    assert out.tolist() == [0.0, math.inf]
