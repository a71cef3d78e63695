"""Measure it: real all-reduces and a real split layer, predicted against measured.

Introduced in chapter 10. The pure parts (no torch needed) are imported here:
:func:`fit_link` and :class:`LinkFit` (link calibration),
:func:`fit_efficiency` and :class:`EfficiencyFit` (a shard's fixed cost and
the efficiency large layers approach), :func:`summarize` (medians and
percentiles), :func:`bootstrap_medians`, :func:`percentile_interval` and
:func:`median_interval` (seeded bootstrap intervals), :func:`predict_split`
(the budget with calibrated numbers), :func:`alternate_folds` and
:func:`held_out_split` (a prediction at sizes the calibration never saw),
:func:`extrapolated_split` (a prediction of large sizes from small ones, judged on
:func:`beyond_calibration`),
:func:`break_even_hidden`, and :func:`analyse` (a whole run).
:func:`run` starts the ranks and runs the protocol; it imports torch only in
the worker processes. From a shell::

    python -m lib.measure --devices 2 --backend auto --json out.json [--quick]

>>> from lib.units import GB, KB, s, us
>>> link = fit_link([4 * KB, 4000 * KB], [100 * us, 4.096e-3], devices=2)
>>> round(link.latency / us, 1), round(link.bus_bandwidth / (GB / s), 3)
(96.0, 1.0)

The JSON a run writes (schema 2; SI units, key suffixes ``_s`` seconds,
``_Bps`` bytes per second; ``*_ci*`` keys are ``[low, high]`` bootstrap
intervals at ``bootstrap.level``, an end written ``null`` when it lies
beyond the sweep)::

    schema            2
    command           the command line that produced the file
    machine           cpu, cores, cuda_devices, backend, devices, threads_per_rank, torch, numpy, python,
                      platform, dtype, date_utc; loadavg (1, 5, 15 min) at the start, loadavg_end at the end;
                      clock: "shared" (ranks on one machine: a repetition is the makespan, earliest start
                      to latest end) or "per-rank" (across machines: the longest rank's own duration);
                      load: the whole run's average busy cores (see below)
    plan              the Plan (lib.measure.protocol.PLANS): hidden sizes, link sizes, batch, width, repetitions
    devices           K;  message_bytes: bytes of the layer's all-reduce
    link.calibration  per link size: message_bytes, n, median_s, q1_s, q3_s, iqr_s, p10_s, p90_s, p99_s,
                      mean_s, min_s, max_s, samples_s (every repetition)
    link.fit          latency_s, bus_bandwidth_Bps (null when constrained), constrained (the timings did not
                      grow with size, so the per-byte time was held at 0), devices, kind, residuals
    link.matched      the all-reduce at the layer's message size, many repetitions: summary and samples_s
    held_out          folds; fits[f]: overhead_s, asymptote (eta_inf; null when constrained), constrained,
                      devices, residuals,
                      fitted_on_hidden, predicts_hidden (the efficiency model that predicts fold f,
                      fitted on every fold but f)
    bootstrap         resamples, seed, level, resampled (what was resampled), unphysical_fits: how many
                      resamples had a link fit ("link") or an efficiency fit ("efficiency") whose timings did
                      not grow with size and that was held at a zero slope
    sweep[i]          hidden; fold (of the held-out prediction)
                      measured_one_s, one_q1_s, one_q3_s, one_ci_s          T1: median, quartiles, CI of the median
                      measured_split_s, split_q1_s, split_q3_s, split_ci_s  T2: the same
                      predicted_split_held_out_s, predicted_split_held_out_ci_s
                          T2 predicted from T1 with the other fold's efficiency model, the link fit's
                          bandwidth and link_latency_held_out_s (interpolated from the other fold)
                      held_out_error_ci          CI of its relative error (predicted / measured - 1)
                      predicted_split_s          additivity check: eta measured at this size, link fit
                      predicted_split_matched_s  additivity check: eta at this size, all-reduce timed in the rounds
                      efficiency (measured at this size), efficiency_held_out (the other fold's model),
                      link_latency_held_out_s
                      predicted_split_held_out_link_s  the same folds with the link fit's own l + V / B
                      predicted_split_extrapolated_s   from the efficiency model of the sizes with a
                          one-rank calibration below summary.extrapolation_cheap_s (extrapolation_calibrated
                          true), and the link fit (null when the run has too few such sizes)
                      allreduce_s, whole_calib_s, shard_calib_s    medians of the calibration steps
                      max_abs_error              max |split output - whole output|
                      load                       busy cores while this size was timed (see below)
                      samples_s                  every repetition of one, split, whole_calib, shard_calib,
                                                 allreduce (round r of each step at index r)
    summary           threshold_s, points_over_threshold (measured T2 >= threshold_s)
                      median_abs_error_held_out, median_abs_error_held_out_ci, median_abs_error_held_out_all
                      median_abs_error_held_out_link, median_abs_error_held_out_link_ci   (link fit's latency)
                      extrapolation_cheap_s, points_extrapolated (long points beyond the calibrated ones),
                      median_abs_error_extrapolated, median_abs_error_extrapolated_ci
                      median_abs_error, median_abs_error_matched, median_abs_error_all   (additivity check)
                      break_even_measured_hidden, break_even_measured_ci
                      break_even_held_out_hidden, break_even_held_out_ci, break_even_step_gap_held_out
                      break_even_held_out_link_hidden, break_even_held_out_link_ci,
                      break_even_step_gap_held_out_link   (the held-out prediction with the link fit's latency)
                      (each step gap null where one break-even lies beyond the sweep)
                      break_even_predicted_hidden, break_even_step_gap,
                      break_even_predicted_matched_hidden, break_even_step_gap_matched   (additivity check)
                      max_abs_error
    load (machine.load and sweep[i].load)
                      wall_s; machine_busy_cores (every program, from psutil; null without it);
                      ranks_busy_cores (the run's ranks); other_busy_cores (the rest); cpu_percent
                      (100 * machine_busy_cores / cores); loadavg_end. Busy cores are CPU seconds per
                      second of wall time, read on rank 0's machine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lib.measure.fit import PUBLISHED_NCCL, EfficiencyFit, LinkFit, fit_efficiency, fit_link
from lib.measure.launch import MeasureError, free_port, resolve_backend
from lib.measure.model import (
    CHEAP_S,
    Extrapolated,
    HeldOut,
    alternate_folds,
    beyond_calibration,
    break_even_hidden,
    efficiency,
    extrapolated_split,
    held_out_split,
    predict_split,
    step_gap,
)
from lib.measure.report import SCHEMA, THRESHOLD_S, analyse, format_hidden, format_interval, format_table
from lib.measure.stats import (
    bootstrap_medians,
    median_abs_relative_error,
    median_interval,
    percentile_interval,
    relative_error,
    summarize,
)

__all__ = [
    "fit_link",
    "LinkFit",
    "PUBLISHED_NCCL",
    "fit_efficiency",
    "EfficiencyFit",
    "summarize",
    "relative_error",
    "median_abs_relative_error",
    "bootstrap_medians",
    "percentile_interval",
    "median_interval",
    "efficiency",
    "predict_split",
    "alternate_folds",
    "held_out_split",
    "HeldOut",
    "extrapolated_split",
    "Extrapolated",
    "beyond_calibration",
    "CHEAP_S",
    "break_even_hidden",
    "step_gap",
    "analyse",
    "format_table",
    "format_hidden",
    "format_interval",
    "THRESHOLD_S",
    "SCHEMA",
    "MeasureError",
    "resolve_backend",
    "free_port",
    "run",
    "check_split",
]


def run(
    devices: int = 2,
    plan: str = "quick",
    backend: str = "auto",
    timeout: float = 900.0,
    threads: int = 1,
    echo: Callable[[str], None] | None = print,
) -> dict[str, Any]:
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

    return launch(
        "protocol", devices, backend, {"plan": plan}, timeout=timeout, threads=threads, echo=echo, check=known_plan
    )


def check_split(
    devices: int = 2,
    hidden: int = 32,
    backend: str = "auto",
    timeout: float = 120.0,
    fault: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One split forward pass on ``devices`` real ranks against the whole layer.

    Returns ``max_abs_error`` and the output shape. ``fault`` (for tests)
    makes one rank fail on purpose: ``{"rank": 1, "mode": "kill"}``.
    """
    from lib.measure.launch import launch

    config = {"hidden": int(hidden), "fault": fault}
    return launch("check", devices, backend, config, timeout=timeout, echo=None)
