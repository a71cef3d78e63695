"""Tests for lib.queueing.chunked: the token-budget scheduler preempts, recomputes and refuses."""

from __future__ import annotations

import numpy as np
import pytest

from lib import queueing


def test_the_scheduler_preempts_the_newest_and_recomputes_it():
    # A KV cache of 24 tokens, two requests of 8 + 8: the second cannot grow beside the first and is preempted.
    out = queueing.simulate_chunked([0.0, 0.0], 8, 8, lambda d, p: 1e-3, token_budget=32, max_seqs=4, kv_tokens=24)
    assert out.preemptions.tolist() == [0, 1]
    assert np.all(out.finish > out.first_token) and out.finish[1] > out.finish[0]


def test_the_scheduler_refuses_a_request_that_can_never_fit():
    with pytest.raises(ValueError, match="prompt_tokens"):
        queueing.simulate_chunked([0.0], 20, 10, lambda d, p: 1e-3, token_budget=32, max_seqs=4, kv_tokens=16)


# --- the planner ranks by capacity, sizing ----------------------------------------------------------------------
