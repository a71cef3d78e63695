"""Tests for lib.toy: the chapter-1 network and its column/row split."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from lib import toy


def test_matrices_have_the_chapter_shapes():
    assert toy.X.shape == (1, 2)
    assert toy.A.shape == (2, 4)
    assert toy.B.shape == (4, 2)


def test_forward_matches_hand_arithmetic():
    # x A = 1 * [1, -1, 2, 0] + 2 * [0, 1, -1, 2] = [1, 1, 0, 4]; ReLU keeps it.
    # [1, 1, 0, 4] B = [1 + 0 + 0 - 4, 0 + 1 + 0 + 8] = [-3, 9].
    assert (toy.X @ toy.A).tolist() == [[1, 1, 0, 4]]
    assert toy.forward(toy.X, toy.A, toy.B).tolist() == [[-3, 9]]


def test_two_device_partials_match_hand_arithmetic():
    # Device 1: ReLU([1, 1]) @ [[1, 0], [0, 1]] = [1, 1].
    # Device 2: ReLU([0, 4]) @ [[3, -2], [-1, 2]] = [0 - 4, 0 + 8] = [-4, 8].
    first, second = toy.split_forward(toy.X, toy.A, toy.B)
    assert first.tolist() == [[1, 1]]
    assert second.tolist() == [[-4, 8]]
    assert (first + second).tolist() == [[-3, 9]]


def test_four_device_partials_are_one_hidden_unit_each():
    # Hidden values [1, 1, 0, 4] times the matching row of B.
    parts = toy.split_forward(toy.X, toy.A, toy.B, parts=4)
    assert [p.tolist() for p in parts] == [[[1, 0]], [[0, 1]], [[0, 0]], [[-4, 8]]]


def test_one_part_is_the_whole_network():
    (only,) = toy.split_forward(toy.X, toy.A, toy.B, parts=1)
    assert only.tolist() == [[-3, 9]]


def test_relu_does_not_distribute_over_sums():
    assert toy.relu(np.array(2 - 3)) == 0
    assert toy.relu(np.array(2)) + toy.relu(np.array(-3)) == 2


def test_row_split_of_a_would_need_a_sum_before_the_relu():
    row_parts = [toy.X[:, [k]] @ toy.A[[k], :] for k in range(2)]
    assert toy.relu(sum(row_parts)).tolist() == [[1, 1, 0, 4]]
    assert sum(toy.relu(p) for p in row_parts).tolist() == [[1, 2, 2, 4]]


@st.composite
def integer_networks(draw):
    n, d, h, m = (draw(st.integers(1, 6)) for _ in range(4))
    entries = st.integers(-50, 50)
    x = draw(arrays(np.int64, (n, d), elements=entries))
    a = draw(arrays(np.int64, (d, h), elements=entries))
    b = draw(arrays(np.int64, (h, m), elements=entries))
    parts = draw(st.integers(1, h))
    return x, a, b, parts


@settings(deadline=None, max_examples=200)
@given(integer_networks())
def test_split_sums_exactly_to_forward_on_integers(network):
    x, a, b, parts = network
    pieces = toy.split_forward(x, a, b, parts=parts)
    assert len(pieces) == parts
    assert all(p.shape == (x.shape[0], b.shape[1]) for p in pieces)
    assert np.array_equal(sum(pieces), toy.forward(x, a, b))


@settings(deadline=None, max_examples=50)
@given(st.integers(0, 2**32 - 1), st.integers(1, 8))
def test_float32_split_stays_within_the_rounding_bound(seed, parts):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((4, 16), dtype=np.float32)
    a = rng.standard_normal((16, 32), dtype=np.float32)
    b = rng.standard_normal((32, 8), dtype=np.float32)
    split = sum(toy.split_forward(x, a, b, parts=parts)).astype(np.float64)
    exact = toy.forward(*(m.astype(np.float64) for m in (x, a, b)))
    # Each output sums h = 32 products (plus d = 16 in the first layer, whose
    # errors feed the hidden values); allow gamma for 64 float32 roundings.
    u = 2.0**-24
    scale = np.abs(toy.relu(x.astype(np.float64) @ a)) @ np.abs(b.astype(np.float64))
    scale += toy.relu(np.abs(x.astype(np.float64)) @ np.abs(a)) @ np.abs(b.astype(np.float64))
    assert np.all(np.abs(split - exact) <= 64 * u * scale + 1e-30)


def test_relu_is_nonnegative_and_keeps_positives():
    values = np.array([-2.5, -0.0, 0.0, 3.5])
    assert toy.relu(values).tolist() == [0.0, 0.0, 0.0, 3.5]


@pytest.mark.parametrize("parts", [0, -1, 1.5, float("nan"), float("inf")])
def test_bad_part_counts_name_the_parameter(parts):
    with pytest.raises(ValueError, match="parts"):
        toy.split_forward(toy.X, toy.A, toy.B, parts=parts)


def test_more_parts_than_hidden_units_is_refused():
    with pytest.raises(ValueError, match="parts must be at most the hidden width 4"):
        toy.split_forward(toy.X, toy.A, toy.B, parts=5)


def test_shapes_that_do_not_chain_are_refused():
    with pytest.raises(ValueError, match="shapes do not chain"):
        toy.forward(toy.X, toy.A.T, toy.B)
    with pytest.raises(ValueError, match="shapes do not chain"):
        toy.split_forward(toy.X, toy.A, toy.B.T)


def test_vectors_must_be_two_dimensional():
    with pytest.raises(ValueError, match="2-D"):
        toy.forward(np.array([1, 2]), toy.A, toy.B)
