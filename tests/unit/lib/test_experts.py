"""Tests for lib.experts: a seeded router that conserves token slots."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib import experts


@settings(max_examples=50, deadline=None)
@given(
    st.integers(1, 600),
    st.integers(1, 16),
    st.integers(1, 4),
    st.floats(0.1, 4.0),
    st.integers(0, 2**31),
    st.floats(0.0, 3.0),
)
def test_slots_are_conserved(tokens, n_experts, top_k, factor, seed, skew):
    top_k = min(top_k, n_experts)
    r = experts.simulate_router(tokens, n_experts, top_k, factor, seed=seed, skew=skew)
    assert r.routed + r.dropped == r.slots == tokens * top_k
    assert r.load.sum() == r.slots
    # The capacity rule: an expert takes what it is asked for, up to its capacity.
    assert np.array_equal(r.accepted, np.minimum(r.load, r.capacity))
    # Each token's experts are distinct.
    assert all(len(set(row)) == top_k for row in r.assignments.tolist())


def test_same_seed_same_routing_other_seed_differs():
    a = experts.simulate_router(256, 8, 2, 1.0, seed=7, skew=0.5)
    b = experts.simulate_router(256, 8, 2, 1.0, seed=7, skew=0.5)
    c = experts.simulate_router(256, 8, 2, 1.0, seed=8, skew=0.5)
    assert np.array_equal(a.assignments, b.assignments) and np.array_equal(a.kept, b.kept)
    assert not np.array_equal(a.assignments, c.assignments)


def test_capacity_formula_by_hand():
    # 1000 tokens, top-2, 8 experts: a fair share is 250 slots.
    assert experts.expert_capacity(1000, 8, 2, 1.0) == 250
    assert experts.expert_capacity(1000, 8, 2, 1.25) == math.ceil(312.5)
    assert experts.expert_capacity(1000, 8, 2, 1.1) == 275  # not 276 from float noise


def test_more_capacity_never_drops_more():
    drops = [experts.simulate_router(2048, 8, 2, f, seed=3, skew=1.0).dropped for f in (0.5, 1.0, 1.25, 2.0, 4.0)]
    assert drops == sorted(drops, reverse=True)
    # At capacity factor E / k an expert can hold every token: nothing drops.
    assert drops[-1] == 0


def test_skew_raises_imbalance():
    even = experts.simulate_router(4096, 8, 2, 1.0, seed=0, skew=0.0)
    skewed = experts.simulate_router(4096, 8, 2, 1.0, seed=0, skew=1.0)
    assert 1.0 <= even.imbalance < 1.1 < skewed.imbalance
    assert skewed.dropped > even.dropped


def test_first_choices_have_priority():
    # Expert 0 has room for 2: the two first choices win over the earlier token's second choice.
    r = experts.dispatch([[1, 0], [0, 1], [0, 1]], experts=2, capacity=2)
    assert r.kept.tolist() == [[True, False], [True, True], [True, False]]


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 300), st.sampled_from([(8, 1), (8, 2), (8, 4), (8, 8), (6, 3)]), st.integers(0, 1000))
def test_dispatch_bytes_counts_cross_device_slots(tokens, shape, seed):
    n_experts, devices = shape
    r = experts.simulate_router(tokens, n_experts, 2, 1.0, seed=seed)
    sent = experts.dispatch_bytes(r, devices, hidden=10, bytes_per_element=2)
    count = 0
    for i in range(tokens):
        for j in range(2):
            home = i * devices // tokens
            there = r.assignments[i, j] // (n_experts // devices)
            count += bool(r.kept[i, j]) and home != there
    assert sent.sum() == count * 10 * 2
    if devices == 1:
        assert sent.sum() == 0


def test_even_routing_sends_the_all_to_all_share():
    # Spread evenly, a device keeps 1/D of its slots and sends (D - 1)/D of them.
    tokens, devices = 8192, 4
    r = experts.simulate_router(tokens, 8, 1, 4.0, seed=1)
    sent = experts.dispatch_bytes(r, devices, hidden=1, bytes_per_element=1)
    expected = (devices - 1) / devices * tokens / devices
    assert np.allclose(sent, expected, rtol=0.05)


def test_load_imbalance_by_hand():
    assert experts.load_imbalance([2, 2, 2]) == 1.0
    assert experts.load_imbalance([4, 0, 2]) == 2.0


def _simulated_imbalance(tokens, n_experts, top_k, devices, draws=200):
    """Mean over seeds of the busiest device's slots over the mean, experts placed in contiguous blocks."""
    ratios = []
    for seed in range(draws):
        on_device = experts.route(tokens, n_experts, top_k, seed=seed) * devices // n_experts
        load = np.bincount(on_device.ravel(), minlength=devices)
        ratios.append(load.max() / load.mean())
    return float(np.mean(ratios))


@pytest.mark.parametrize("shape", [(256, 8, 8), (8, 2, 4), (128, 8, 8), (64, 6, 4)])
@pytest.mark.parametrize("tokens", [1, 16, 256])
def test_expert_imbalance_follows_the_simulated_router(shape, tokens):
    # The normal approximation is a little low when few tokens are routed
    # (the load is discrete and skewed): within 15 % at one token, 6 % from 16 on.
    simulated = _simulated_imbalance(tokens, *shape)
    predicted = experts.expert_imbalance(tokens, *shape)
    assert predicted == pytest.approx(simulated, rel=0.15 if tokens == 1 else 0.06)
    assert 1 <= predicted <= simulated * 1.01


def test_expert_imbalance_falls_with_tokens_and_is_one_on_one_device():
    tokens = np.array([0, 1, 2, 8, 64, 512, 4096])
    ratio = experts.expert_imbalance(tokens[1:], 256, 8, 8)
    assert np.all(np.diff(ratio) < 0)
    assert experts.expert_imbalance(0, 256, 8, 8) == 1.0
    assert np.all(experts.expert_imbalance(tokens, 8, 2, 1) == 1.0)
    # Never more than one device can take: 8 experts on 8 devices, 2 per token.
    assert experts.expert_imbalance(1, 8, 2, 8) <= 4.0


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: experts.route(0, 8), "tokens"),
        (lambda: experts.route(10, 0), "experts"),
        (lambda: experts.route(10, 4, top_k=5), "top_k"),
        (lambda: experts.route(10, 4, top_k=1.5), "top_k"),
        (lambda: experts.route(10, 4, skew=-1), "skew"),
        (lambda: experts.expert_capacity(10, 4, 1, 0.0), "capacity_factor"),
        (lambda: experts.dispatch([[0, 5]], experts=4, capacity=1), "assignments"),
        (lambda: experts.dispatch([[0, 1]], experts=4, capacity=-1), "capacity"),
        (lambda: experts.load_imbalance([]), "load"),
        (lambda: experts.expert_imbalance(-1, 8, 2, 4), "tokens"),
        (lambda: experts.expert_imbalance(8, 8, 2, 3), "devices"),
        (lambda: experts.dispatch_bytes(experts.simulate_router(8, 6, 1), 4, 8, 2), "devices"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: experts.route([10, 20], 4), "tokens"),
        (lambda: experts.expert_capacity(10, [4, 8], 1, 1.0), "experts"),
        (lambda: experts.expert_capacity(10, 4, 1, [1.0, 1.25]), "capacity_factor"),
        (lambda: experts.route(10, 4, skew=[0.0, 1.0]), "skew"),
    ],
)
def test_sweeps_are_refused_naming_the_parameter(call, name):
    # A routing is one simulation: an array where one number belongs is an error, not a silent pick.
    with pytest.raises(ValueError, match=rf"{name} must be a scalar .*not an array"):
        call()


def test_infinite_capacity_factor_is_refused():
    with pytest.raises(ValueError, match="capacity_factor must be finite, got inf"):
        experts.expert_capacity(10, 4, 1, float("inf"))


def test_slot_limit_is_the_book_name_for_capacity():
    r = experts.simulate_router(512, 8, 2, 1.5, seed=4, skew=0.5)
    assert r.slot_limit == r.capacity == experts.expert_slot_limit(512, 8, 2, 1.5) == 192
    assert (r.accepted <= r.slot_limit).all()
