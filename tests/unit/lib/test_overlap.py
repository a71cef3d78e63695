"""Tests for lib.overlap: chunked overlap of compute and communication (chapter 4)."""

from __future__ import annotations

import math

import numpy as np
import phase_strategies
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.experiment import BASE
from lib.overlap import (
    ChunkSchedule,
    best_chunks,
    chunk_communication_time,
    chunk_compute_time,
    chunked_schedule,
    chunked_split_time,
)
from lib.units import GB, ms, s

SLOW = BASE.with_(bandwidth=1 * GB / s)


def test_overlap_bound_base_case():
    # S + max(7.5, 0.92) ms, against 9.22 ms without overlap.
    assert BASE.overlap_bound / ms == pytest.approx(0.8 + 7.5)
    assert BASE.overlap_bound / ms == pytest.approx(8.3)
    assert BASE.split_time / ms == pytest.approx(9.22)


def test_one_chunk_is_the_sequential_split():
    for phase in (BASE, SLOW):
        assert chunked_split_time(phase, 1) == pytest.approx(phase.split_time)


def test_chunk_times_by_hand():
    assert chunk_compute_time(BASE, 4) / ms == pytest.approx(7.5 / 4)
    assert chunk_communication_time(BASE, 4) / ms == pytest.approx(4 * (0.03 + 0.2 / 4))
    # compute-bound: S + all compute + the last chunk's transfers
    assert chunked_split_time(BASE, 4) / ms == pytest.approx(0.8 + 7.5 + 0.12 + 0.8 / 4)
    # link-bound: S + the first chunk's compute + every chunk's transfers
    assert chunked_split_time(SLOW, 8) / ms == pytest.approx(0.8 + 7.5 / 8 + 8 * (0.12 + 8 / 8))


def test_best_chunks_by_hand():
    # Base: compute stays the slower lane while 7.5/n > 0.12 + 0.8/n, i.e. n < 55.83.
    assert best_chunks(BASE) == 55
    # Slow link: minimise 7.5/n + 0.12 n, continuous optimum sqrt(62.5) = 7.9.
    assert best_chunks(SLOW) == 8


def test_best_chunks_edge_cases():
    assert best_chunks(BASE.with_(startup=0.0)) == math.inf
    assert best_chunks(BASE.with_(transfers=0)) == 1
    assert best_chunks(BASE.with_(divisible=0.0)) == 1
    # Startups dwarf everything: splitting the work more only adds them.
    assert best_chunks(BASE.with_(startup=100 * ms)) == 1


def test_free_startups_approach_bound():
    free = BASE.with_(startup=0.0)
    times = [chunked_split_time(free, n) for n in (1, 10, 100, 10_000)]
    assert all(later < earlier for earlier, later in zip(times, times[1:]))
    assert times[-1] == pytest.approx(free.overlap_bound, rel=1e-3)


def test_schedule_matches_formula_and_never_overlaps_itself():
    for phase in (BASE, SLOW):
        for n in (1, 2, 3, 7, 20):
            plan = chunked_schedule(phase, n)
            assert plan.makespan == pytest.approx(chunked_split_time(phase, n))
            for lane in (plan.compute, plan.communication):
                ends = [start + length for start, length in lane]
                assert all(end <= nxt[0] + 1e-15 for end, nxt in zip(ends, lane[1:]))
            for (c_start, c_len), (m_start, _) in zip(plan.compute, plan.communication):
                assert m_start >= c_start + c_len - 1e-15  # data leaves only once computed


@pytest.mark.parametrize("field", ["divisible", "serial", "transfers", "bandwidth"])
def test_schedule_rejects_sweeps_naming_the_field(field):
    sweep = np.array([1.0, 2.0]) * getattr(BASE, field)
    with pytest.raises(ValueError, match=rf"phase\.{field} must be a scalar .*got array\(\["):
        chunked_schedule(BASE.with_(**{field: sweep}), 2)


def test_schedule_fields_are_named():
    assert ChunkSchedule._fields == ("serial", "compute", "communication", "makespan")
    assert isinstance(chunked_schedule(BASE, 3), ChunkSchedule)


@pytest.mark.parametrize("bad", [0, -1, 1.5, float("nan"), math.inf])
def test_bad_chunk_counts(bad):
    with pytest.raises(ValueError, match="chunks"):
        chunked_split_time(BASE, bad)


def test_arrays_broadcast_like_scalars():
    bandwidth = np.array([0.5, 1.0, 10.0, 100.0]) * GB / s
    chunks = np.array([[1], [4], [16]])
    sweep = BASE.with_(bandwidth=bandwidth)
    grid = chunked_split_time(sweep, chunks)
    assert grid.shape == (3, 4)
    for i, n in enumerate(chunks[:, 0]):
        for j, b in enumerate(bandwidth):
            assert grid[i, j] == pytest.approx(chunked_split_time(BASE.with_(bandwidth=b), int(n)))
    best = best_chunks(sweep)
    assert best.shape == (4,)
    for j, b in enumerate(bandwidth):
        assert best[j] == best_chunks(BASE.with_(bandwidth=b))


phases = phase_strategies.phases()


@settings(max_examples=300)
@given(phase=phases, chunks=st.integers(min_value=1, max_value=500))
def test_chunked_time_between_bound_and_sequential_when_it_pays(phase, chunks):
    chunked = chunked_split_time(phase, chunks)
    assert chunked >= phase.overlap_bound * (1 - 1e-12)
    if phase.startup == 0:
        assert chunked <= phase.split_time * (1 + 1e-12)


@settings(max_examples=300)
@given(phase=phases)
def test_best_chunks_beats_every_nearby_count(phase):
    best = best_chunks(phase)
    if best == math.inf:
        # more chunks never hurt (they may help by less than rounding)
        assert chunked_split_time(phase, 1000) <= chunked_split_time(phase, 10) * (1 + 1e-12)
        assert chunked_split_time(phase, 10) <= chunked_split_time(phase, 1) * (1 + 1e-12)
        return
    time = chunked_split_time(phase, best)
    for other in {1, 2, max(1, int(best) - 1), int(best) + 1, 2 * int(best), int(best) + 50}:
        assert time <= chunked_split_time(phase, other) * (1 + 1e-12)
