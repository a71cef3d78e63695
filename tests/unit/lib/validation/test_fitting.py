"""Tests for lib.validation.fitting: the fitted overhead."""

from __future__ import annotations

import numpy as np
import pytest

from lib.validation import fit_overhead


def test_fit_overhead_recovers_a_cost_and_refuses_what_is_not_affine():
    truth = np.array([1.0, 2.0, 3.0]) + 150e-6 * np.array([1e3, 2e3, 5e3])
    o = fit_overhead(lambda c: np.array([1.0, 2.0, 3.0]) + c * np.array([1e3, 2e3, 5e3]), truth)
    assert o == pytest.approx(150e-6, rel=1e-6)
    with pytest.raises(ValueError, match="affine"):
        fit_overhead(lambda c: np.array([1.0 + c * c * 1e6]), [1.0])
