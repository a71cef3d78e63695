"""Tests for lib.pipeline: closed forms against the event simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib import pipeline

stage_counts = st.integers(min_value=1, max_value=8)
microbatch_counts = st.integers(min_value=1, max_value=40)
# Times on a 1/8 grid are exact in binary floating point, so sums compare exactly.
stage_time = st.integers(min_value=1, max_value=80).map(lambda k: k / 8)


def test_source_numbers():
    # (S - 1) / (m + S - 1) worked by hand: 3/4, 3/11, 3/35.
    assert pipeline.bubble_fraction(4, 1) == 0.75
    assert math.isclose(pipeline.bubble_fraction(4, 8), 3 / 11)
    assert math.isclose(pipeline.bubble_fraction(4, 32), 3 / 35)
    assert round(100 * pipeline.bubble_fraction(4, 8)) == 27
    assert round(100 * pipeline.bubble_fraction(4, 32), 1) == 8.6


def test_broadcasting():
    m = np.array([1, 8, 32])
    out = pipeline.bubble_fraction(4, m)
    assert out.shape == (3,)
    assert np.allclose(out, 3 / (m + 3))


@settings(max_examples=60, deadline=None)
@given(stage_counts, microbatch_counts, stage_time)
def test_equal_stages_match_closed_form(s, m, t):
    schedule = pipeline.simulate_pipeline([t] * s, m)
    assert schedule.makespan == (m + s - 1) * t
    assert math.isclose(schedule.bubble_fraction, pipeline.bubble_fraction(s, m), abs_tol=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(stage_time, min_size=1, max_size=8),
    microbatch_counts,
    st.integers(min_value=0, max_value=8).map(lambda k: k / 8),
)
def test_unequal_stages_slowest_sets_rate(times, m, hop):
    schedule = pipeline.simulate_pipeline(times, m, hop=hop)
    expected = sum(times) + (m - 1) * max(times) + (len(times) - 1) * hop
    assert schedule.makespan == expected
    # A single request crosses every stage and every hop, whatever m is.
    assert schedule.first_latency == sum(times) + (len(times) - 1) * hop


@settings(max_examples=40, deadline=None)
@given(
    st.lists(stage_time, min_size=1, max_size=6),
    st.integers(1, 12),
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(0, 4).map(lambda k: k / 8),
)
def test_schedule_is_feasible(times, m, chunks, tokens, hop):
    schedule = pipeline.simulate_pipeline(times, m, hop=hop, chunks=chunks, tokens=tokens)
    s = len(times)
    # Every task appears once and the work adds up.
    tasks = [(i.microbatch, i.token, i.chunk * s + d) for d, row in enumerate(schedule.intervals) for i in row]
    assert len(tasks) == len(set(tasks)) == m * tokens * chunks * s
    assert math.isclose(sum(schedule.busy_times), m * tokens * sum(times))
    # No device runs two tasks at once.
    for row in schedule.intervals:
        for a, b in zip(row, row[1:]):
            assert b.start >= a.end - 1e-12
    # Each microbatch visits chunks in order, with the hop between them.
    when = {(i.microbatch, i.token, i.chunk * s + d): i for d, row in enumerate(schedule.intervals) for i in row}
    order = [(r, k) for r in range(tokens) for k in range(chunks * s)]
    for j in range(m):
        for prev, nxt in zip(order, order[1:]):
            assert when[(j, *nxt)].start >= when[(j, *prev)].end + hop - 1e-12
    assert 0 <= schedule.bubble_fraction < 1


@pytest.mark.parametrize("s,v", [(2, 2), (4, 2), (4, 4), (3, 3)])
@pytest.mark.parametrize("groups", [1, 2, 5])
def test_interleaved_matches_megatron(s, v, groups):
    # With m a multiple of S, the ideal time m t plus a bubble of (S - 1) t / v.
    m, t = groups * s, 1.0
    schedule = pipeline.simulate_pipeline([t] * s, m, chunks=v)
    assert math.isclose(schedule.makespan, m * t + (s - 1) * t / v)
    ratio = (schedule.makespan - m * t) / (m * t)
    assert math.isclose(ratio, pipeline.bubble_ratio(s, m, v))


def test_interleaving_costs_hops():
    # One microbatch crosses v S - 1 hand-overs instead of S - 1.
    plain = pipeline.simulate_pipeline([1.0] * 4, 1, hop=0.1)
    inter = pipeline.simulate_pipeline([1.0] * 4, 1, hop=0.1, chunks=2)
    assert math.isclose(plain.first_latency, 4 + 3 * 0.1)
    assert math.isclose(inter.first_latency, 4 + 7 * 0.1)


@settings(max_examples=40, deadline=None)
@given(stage_counts, microbatch_counts, st.integers(1, 4))
def test_ratio_versus_fraction(s, m, v):
    ratio = pipeline.bubble_ratio(s, m, v)
    assert math.isclose(pipeline.bubble_ratio(s, m), (s - 1) / m)
    if v == 1:
        # idle / (idle + useful) from idle / useful.
        assert math.isclose(ratio / (1 + ratio), pipeline.bubble_fraction(s, m))
    assert ratio <= pipeline.bubble_ratio(s, m) + 1e-15


@pytest.mark.parametrize("m", [1, 2, 3])
def test_decode_loop_idle_follows_concurrency(m):
    # With m < S requests circulating, at most m devices can be busy at once.
    s, tokens = 4, 200
    schedule = pipeline.simulate_pipeline([1.0] * s, m, tokens=tokens)
    # Each token of a request crosses all S stages before the next may start;
    # request j starts j stage-times after the first.
    assert math.isclose(schedule.makespan, tokens * s + (m - 1))
    assert math.isclose(schedule.bubble_fraction, 1 - m * tokens / (tokens * s + m - 1))
    assert abs(schedule.bubble_fraction - (1 - m / s)) < 0.01


@settings(max_examples=60, deadline=None)
@given(
    st.lists(stage_time, min_size=1, max_size=6),
    st.integers(1, 12),
    st.integers(2, 8),
    st.integers(0, 8).map(lambda k: k / 8),
    st.none() | st.integers(0, 8).map(lambda k: k / 8),
)
def test_decode_loop_pace_matches_closed_form(times, m, tokens, hop, back):
    # The simulator's steady pace is max(loop, m x slowest stage), exactly, for the plain schedule.
    schedule = pipeline.simulate_pipeline(times, m, hop=hop, tokens=tokens, return_hop=back)
    assert schedule.time_per_token == pipeline.loop_time(times, m, hop=hop, return_hop=back)
    loop = sum(times) + (len(times) - 1) * hop + (hop if back is None else back)
    assert pipeline.loop_time(times, m, hop, back) == max(loop, m * max(times))


def test_return_hop_only_delays_the_next_pass():
    # A single pass never returns, so return_hop cannot change it.
    one = pipeline.simulate_pipeline([1.0] * 4, 2, hop=0.5, return_hop=0.0)
    assert one.intervals == pipeline.simulate_pipeline([1.0] * 4, 2, hop=0.5).intervals
    # Loop-bound (2 microbatches, 4 stages): each later pass waits for the return.
    plain = pipeline.simulate_pipeline([1.0] * 4, 2, hop=0.5, tokens=3)
    quick = pipeline.simulate_pipeline([1.0] * 4, 2, hop=0.5, tokens=3, return_hop=0.0)
    assert plain.time_per_token - quick.time_per_token == 0.5
    assert plain.makespan - quick.makespan == 2 * 0.5
    assert plain.return_hop == 0.5 and quick.return_hop == 0.0


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 500), st.integers(1, 16))
def test_split_batch_slices_the_running_batch(batch, stages):
    m, b = pipeline.split_batch(batch, stages)
    assert m == min(stages, batch)
    assert m * b >= batch > (b - 1) * m  # b = ceil(B / m): every sequence placed, no slice empty
    assert pipeline.split_batch(batch, stages, per_sequence=True) == (batch, 1)


def test_batches_inside_microbatches_buy_throughput_one_per_microbatch_does_not():
    # A memory-bound stage: 5 ms to read its weights, plus 0.02 ms per sequence carried.
    def stage(b):
        return [5e-3 + 2e-5 * b] * 4

    rate = {}
    for per_sequence in (True, False):
        for batch in (4, 20, 64):
            m, b = pipeline.split_batch(batch, 4, per_sequence)
            rate[per_sequence, batch] = batch / pipeline.loop_time(stage(b), m)
    # One sequence per microbatch: past S users the rate is stuck at one token per slowest stage-time.
    assert math.isclose(rate[True, 4], rate[True, 64]) and math.isclose(rate[True, 64], 1 / (5e-3 + 2e-5))
    # A slice of the batch per microbatch: the rate grows almost in proportion to the batch.
    assert rate[False, 64] > 14 * rate[False, 4]


@pytest.mark.parametrize(
    "model,pp,batch",
    [
        ("llama-3-70b", 4, 1),
        ("llama-3-70b", 4, 3),
        ("llama-3-70b", 4, 64),
        ("llama-3-70b", 8, 20),
        ("llama-3-8b", 2, 7),
    ],
)
def test_loop_time_is_decode_steps_time_per_output_token(model, pp, batch):
    # lib.serving.decode_step's tpot is this module's loop with the serving stage times and hops, the
    # stages priced for the average slice B / m (a steady-state batch is an average, not a count).
    from lib import serving, transformer

    config, cluster, layout = transformer.PRESETS[model], serving.Cluster("h100-sxm"), serving.Layout(pp=pp)
    m, _ = pipeline.split_batch(batch, pp)
    times = [float(serving.stage_work(config, cluster, layout, i, batch / m, 1024).time) for i in range(pp)]
    step = serving.decode_step(config, cluster, layout, batch=batch, context=1024)
    hop = float(step.hop_time) / (pp - 1)
    assert math.isclose(pipeline.loop_time(times, m, hop, return_hop=0.0), float(step.tpot), rel_tol=1e-12)
    simulated = pipeline.simulate_pipeline(times, m, hop=hop, tokens=4, return_hop=0.0).time_per_token
    assert math.isclose(simulated, float(step.tpot), rel_tol=1e-12)


def test_time_per_token_needs_two_passes():
    with pytest.raises(ValueError, match="tokens must be >= 2"):
        pipeline.simulate_pipeline([1.0], 1).time_per_token  # noqa: B018 (the property raises)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: pipeline.simulate_pipeline([], 4), "stage_times"),
        (lambda: pipeline.simulate_pipeline([1.0, -1.0], 4), "stage_times"),
        (lambda: pipeline.simulate_pipeline([1.0, 0.0], 4), "stage_times"),
        (lambda: pipeline.simulate_pipeline([1.0, float("nan")], 4), "stage_times"),
        (lambda: pipeline.simulate_pipeline([1.0, float("inf")], 4), "stage_times"),
        (lambda: pipeline.simulate_pipeline([1.0], 0), "microbatches"),
        (lambda: pipeline.simulate_pipeline([1.0], 2.5), "microbatches"),
        (lambda: pipeline.simulate_pipeline([1.0], 2, hop=-1.0), "hop"),
        (lambda: pipeline.simulate_pipeline([1.0], 2, chunks=0), "chunks"),
        (lambda: pipeline.simulate_pipeline([1.0], 2, tokens=1.5), "tokens"),
        (lambda: pipeline.bubble_fraction(0, 4), "stages"),
        (lambda: pipeline.bubble_fraction(4, 0), "microbatches"),
        (lambda: pipeline.bubble_fraction(4, 1.5), "microbatches"),
        (lambda: pipeline.bubble_ratio(4, 2, chunks=0.5), "chunks"),
        (lambda: pipeline.simulate_pipeline([1.0], 2, tokens=2, return_hop=-1.0), "return_hop"),
        (lambda: pipeline.split_batch(0, 4), "batch"),
        (lambda: pipeline.split_batch(2.5, 4), "batch"),
        (lambda: pipeline.split_batch(4, 0), "stages"),
        (lambda: pipeline.loop_time([], 2), "stage_times"),
        (lambda: pipeline.loop_time([1.0, -1.0], 2), "stage_times"),
        (lambda: pipeline.loop_time([1.0], 0), "microbatches"),
        (lambda: pipeline.loop_time([1.0], 2, hop=float("nan")), "hop"),
        (lambda: pipeline.loop_time([1.0], 2, return_hop=-0.5), "return_hop"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize(
    "kwargs,name",
    [
        ({"microbatches": [2, 4]}, "microbatches"),
        ({"microbatches": 2, "chunks": [1, 2]}, "chunks"),
        ({"microbatches": 2, "tokens": [1, 2]}, "tokens"),
        ({"microbatches": 2, "hop": [0.0, 1.0]}, "hop"),
        ({"microbatches": 2, "return_hop": [0.0, 1.0]}, "return_hop"),
    ],
)
def test_simulation_refuses_sweeps_naming_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=rf"{name} must be a scalar .*not an array"):
        pipeline.simulate_pipeline([1.0, 1.0], **kwargs)


def test_schedule_is_frozen():
    schedule = pipeline.simulate_pipeline([1.0], 1)
    with pytest.raises(AttributeError):
        schedule.microbatches = 2
