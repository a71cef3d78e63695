"""Measure it: real all-reduces and a real split layer, predicted against measured.

Introduced in chapter 9. The pure parts (no torch needed) are imported here:
:func:`fit_link` and :class:`LinkFit` (link calibration), :func:`summarize`
(medians and percentiles), :func:`predict_split` and
:func:`break_even_hidden` (the prediction), :func:`analyse` (a whole run).
:func:`run` starts the ranks and runs the protocol; it imports torch only in
the worker processes. From a shell::

    python -m lib.measure --devices 2 --backend auto --json out.json [--quick]

>>> from lib.units import GB, KB, s, us
>>> link = fit_link([4 * KB, 4000 * KB], [100 * us, 4.096e-3], devices=2)
>>> round(link.latency / us, 1), round(link.bus_bandwidth / (GB / s), 3)
(96.0, 1.0)
"""

from __future__ import annotations

from typing import Any, Callable

from lib.measure.fit import PUBLISHED_NCCL, LinkFit, fit_link
from lib.measure.launch import MeasureError, free_port, resolve_backend
from lib.measure.model import break_even_hidden, efficiency, predict_split, step_gap
from lib.measure.report import THRESHOLD_S, analyse, format_hidden, format_table
from lib.measure.stats import median_abs_relative_error, relative_error, summarize

__all__ = ["fit_link", "LinkFit", "PUBLISHED_NCCL", "summarize", "relative_error", "median_abs_relative_error",
           "efficiency", "predict_split", "break_even_hidden", "step_gap", "analyse", "format_table",
           "format_hidden", "THRESHOLD_S", "MeasureError", "resolve_backend", "free_port", "run", "check_split"]


def run(devices: int = 2, plan: str = "quick", backend: str = "auto", timeout: float = 900.0,
        threads: int = 1, echo: Callable[[str], None] | None = print) -> dict[str, Any]:
    """Start ``devices`` ranks, run the protocol with ``plan``, return the analysed result.

    ``plan`` is ``"full"``, ``"quick"`` or ``"tiny"`` (see
    :data:`lib.measure.protocol.PLANS`). Raises ``ValueError`` for bad
    arguments and :class:`MeasureError` when a rank fails or the run times out.

    >>> run(devices=1)
    Traceback (most recent call last):
    ...
    ValueError: devices must be >= 2, got 1
    """
    from lib.measure.launch import launch
    from lib.measure.protocol import PLANS

    def known_plan() -> None:
        if plan not in PLANS:
            raise ValueError(f"plan must be one of {sorted(PLANS)}, got {plan!r}")

    return launch("protocol", devices, backend, {"plan": plan}, timeout=timeout, threads=threads, echo=echo,
                  check=known_plan)


def check_split(devices: int = 2, hidden: int = 32, backend: str = "auto", timeout: float = 120.0,
                fault: dict[str, Any] | None = None) -> dict[str, Any]:
    """One split forward pass on ``devices`` real ranks against the whole layer.

    Returns ``max_abs_error`` and the output shape. ``fault`` (for tests)
    makes one rank fail on purpose: ``{"rank": 1, "mode": "kill"}``.
    """
    from lib.measure.launch import launch

    config = {"hidden": int(hidden), "fault": fault}
    return launch("check", devices, backend, config, timeout=timeout, echo=None)
