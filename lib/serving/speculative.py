"""Speculative decoding: spare FLOPs at small batch traded for fewer sequential steps.

Introduced in chapter 12 (the splits engines use today). A cheap drafter
proposes ``gamma`` tokens; the model checks all of them in one forward pass
of ``gamma + 1`` tokens per sequence and keeps the longest prefix it agrees
with, plus one token of its own. If each drafted token is accepted with
probability ``alpha`` independently, a verification step yields on average

    E[tokens] = (1 - alpha^(gamma + 1)) / (1 - alpha)                    (Leviathan et al. 2023)

tokens per sequence (``gamma + 1`` when ``alpha = 1``). The verification
step is priced by the per-operator roofline with ``gamma + 1`` tokens per
sequence (:func:`lib.serving.loop_time`): while decode is bandwidth-bound the
extra tokens ride on weights read anyway, so it costs little more than a
plain step; once the linear layers are compute-bound it costs about
``gamma + 1`` plain steps. The drafter costs ``gamma`` steps of its own: a
small model (:class:`~lib.transformer.ModelConfig`) decoded at the same
batch, or a head on the model (MTP, EAGLE) priced as ``head_layers`` layers
of the model. The time per output token is then

    TPOT_spec = (t_verify + t_draft) / E[tokens]

and the speed-up is ``TPOT_plain / TPOT_spec``, which falls as the batch
grows and vanishes where the step turns compute-bound.

>>> from lib.transformer import PRESETS
>>> from lib.serving.layout import Cluster, Layout
>>> round(expected_tokens(0.8, 4), 3)
3.362
>>> s = speculative_step(PRESETS["llama-3-70b"], Cluster("h100-sxm"), Layout(tp=4), 1, 1152, 0.8, 4, head_layers=1)
>>> round(float(s.speedup), 2)
3.19
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks
from lib.serving.engine import Engine, configure
from lib.serving.layout import Cluster, Layout, check_layout
from lib.serving.step import loop_time
from lib.transformer import ModelConfig

__all__ = ["expected_tokens", "simulate_tokens", "SpeculativeStep", "speculative_step", "break_even_batch"]

Number = Any


def _acceptance(checked: Any, given: Any) -> np.ndarray:
    """``checked`` (already non-negative) as an array, refused above 1."""
    array = np.asarray(checked, dtype=float)
    if np.any(array > 1):
        raise ValueError(f"acceptance must be in [0, 1], got {given!r}")
    return array


def expected_tokens(acceptance: Number, draft_tokens: Number) -> float | np.ndarray:
    """Tokens a verification step yields per sequence: ``(1 - a^(g + 1)) / (1 - a)``; ``g + 1`` at ``a = 1``.

    >>> expected_tokens(0.0, 4), expected_tokens(1.0, 4), round(float(expected_tokens(0.5, 3)), 4)
    (1.0, 5.0, 1.875)
    """
    a_ = _acceptance(_checks.nonnegative("acceptance", acceptance), acceptance)
    g = _checks.count("draft_tokens", draft_tokens, minimum=0)
    ones = g + 1.0
    safe = np.where(a_ < 1, a_, 0.5)
    tokens = np.where(a_ < 1, (1 - safe ** (g + 1)) / (1 - safe), ones)
    return _checks.result(tokens)


def simulate_tokens(acceptance: float, draft_tokens: int, rounds: int, seed: int = 0) -> np.ndarray:
    """Tokens each of ``rounds`` verification steps yields, drafted tokens accepted independently at ``acceptance``.

    A round keeps drafted tokens until the first rejection (at most
    ``draft_tokens``) and adds the model's own token: the exact count whose
    mean :func:`expected_tokens` gives.

    >>> tokens = simulate_tokens(0.8, 4, 20000, seed=1)
    >>> int(tokens.min()), int(tokens.max()), bool(abs(tokens.mean() - expected_tokens(0.8, 4)) < 0.03)
    (1, 5, True)
    """
    a = _acceptance(_checks.scalar("acceptance", acceptance, _checks.nonnegative), acceptance)
    g = _checks.scalar_count("draft_tokens", draft_tokens, minimum=0)
    n = _checks.scalar_count("rounds", rounds, minimum=1)
    accepted = np.random.default_rng(seed).random((n, g)) < a
    run = np.cumprod(accepted, axis=1).sum(axis=1) if g else np.zeros(n, dtype=int)
    return run + 1


@dataclass(frozen=True)
class SpeculativeStep:
    """One replica decoding with speculation, against the same replica without (seconds, tokens per sequence).

    ``tokens`` is the expected tokens per verification step; ``verify``
    and ``draft`` the two parts of a round; ``tpot`` and ``plain_tpot``
    the times per output token with and without; ``speedup`` their ratio.
    """

    tokens: Any
    verify: Any
    draft: Any
    tpot: Any
    plain_tpot: Any
    speedup: Any


def speculative_step(
    config: ModelConfig,
    cluster: Cluster,
    layout: Layout,
    batch: Number,
    context: Number,
    acceptance: float,
    draft_tokens: int,
    draft: ModelConfig | None = None,
    head_layers: float | None = None,
    engine: Engine | None = None,
    **options: Any,
) -> SpeculativeStep:
    """A decode round of ``batch`` sequences with ``draft_tokens`` drafted tokens accepted at ``acceptance``.

    Give the drafter as a small model ``draft`` (run on the same devices,
    ``draft_tokens`` decode steps at the same batch), or as ``head_layers``
    layers of the model itself (an MTP or EAGLE head: ``draft_tokens`` passes
    of that many layers). ``options`` are :class:`~lib.serving.engine.Engine`
    fields. Broadcasts over ``batch``.
    """
    check_layout(config, layout)
    if (draft is None) == (head_layers is None):
        raise ValueError(
            "draft or head_layers must be given, one of them: a draft model, or the layers of an MTP/EAGLE head"
        )
    eng = configure(cluster.device, engine, **options)
    b = _checks.positive("batch", batch)
    g = _checks.scalar_count("draft_tokens", draft_tokens, minimum=1)
    tokens = expected_tokens(acceptance, g)
    plain = np.asarray(loop_time(config, cluster, layout, b, context, engine=eng))
    verify = np.asarray(loop_time(config, cluster, layout, b, context, b * g, context, b * (g + 1), engine=eng))
    if draft is not None:
        check_layout(draft, Layout(tp=layout.tp))
        one = np.asarray(loop_time(draft, cluster, Layout(tp=layout.tp), b, context, engine=eng))
        drafting = g * one
    else:
        layers = _checks.scalar("head_layers", head_layers, _checks.positive)
        drafting = g * plain * layers / config.layers
    tpot = (verify + drafting) / tokens
    return SpeculativeStep(
        tokens=tokens,
        verify=_checks.result(verify),
        draft=_checks.result(drafting),
        tpot=_checks.result(tpot),
        plain_tpot=_checks.result(plain),
        speedup=_checks.result(plain / tpot),
    )


def break_even_batch(
    config: ModelConfig,
    cluster: Cluster,
    layout: Layout,
    context: float,
    acceptance: float,
    draft_tokens: int,
    max_batch: int = 4096,
    **kwargs: Any,
) -> float:
    """The smallest batch (per replica) at which speculation stops paying: speed-up 1; ``inf`` if never.

    >>> from lib.transformer import PRESETS
    >>> from lib.serving.layout import Cluster, Layout
    >>> b = break_even_batch(PRESETS["llama-3-70b"], Cluster("h100-sxm"), Layout(tp=4), 1152, 0.7, 3, head_layers=1)
    >>> 256 < b < 1024
    True
    """
    batches = np.unique(np.round(np.geomspace(1, max_batch, 200)))
    speedup = np.asarray(
        speculative_step(config, cluster, layout, batches, context, acceptance, draft_tokens, **kwargs).speedup
    )
    slower = np.nonzero(speedup <= 1)[0]
    if slower.size == 0:
        return float("inf")
    i = int(slower[0])
    if i == 0:
        return float(batches[0])
    lo, hi = batches[i - 1], batches[i]
    s_lo, s_hi = speedup[i - 1], speedup[i]
    return float(lo + (s_lo - 1) * (hi - lo) / (s_lo - s_hi))
