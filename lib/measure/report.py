"""Turning raw timings into predictions, their uncertainty, the comparison and the final table.

Introduced in chapter 10 (measure it). :func:`analyse` fits the link,
computes ``eta`` per hidden size, and compares the measured ``T2`` with two
uses of the book's budget:

- the *additivity check*: ``eta`` measured at the same size, so the budget
  only adds up parts timed at that size (``predicted_split_s`` with the link
  fit, ``predicted_split_matched_s`` with the all-reduce timed in the same
  rounds);
- the *held-out prediction*: the sweep is cut into two alternating folds and
  each size is predicted from an efficiency model fitted on the other fold,
  with the link's bandwidth from its own sweep and its latency interpolated
  from the all-reduces timed among the other fold's steps
  (``predicted_split_held_out_s``, :func:`lib.measure.model.held_out_split`).
  The same folds with the link exactly as its own sweep fitted it,
  ``l + V / B``, are the prediction the book states before any run
  (``predicted_split_held_out_link_s``); the recalibrated latency corrects
  for the interference the first committed run showed, so it was chosen after
  seeing that run;
- the *extrapolation*: the efficiency model fitted on the sizes whose
  one-rank time is below :data:`lib.measure.model.CHEAP_S` only, every larger
  size predicted with the link fit (``predicted_split_extrapolated_s``,
  :func:`lib.measure.model.extrapolated_split`).

Seeded bootstrap intervals (:mod:`lib.measure.uncertainty`) come with the
medians, the held-out predictions, the break-even sizes and the headline
error. Pure numpy: it works on a run stored as JSON as well as on a fresh one.

>>> rounds = lambda t: {step: [t, t, t] for step in ("one", "whole_calib")} | {  # noqa: E731
...     "split": [t / 2 + 1.5e-3] * 3, "shard_calib": [t / 2] * 3, "allreduce": [1.5e-3] * 3}
>>> raw = {"devices": 2, "message_bytes": 1000, "plan": {"name": "demo"}, "clock": "shared",
...        "link": [{"message_bytes": 1000, "median_s": 1.5e-3, "samples_s": [1.5e-3] * 3},
...                 {"message_bytes": 10**6, "median_s": 2.499e-3, "samples_s": [2.499e-3] * 3}],
...        "matched": {"median_s": 1.5e-3},
...        "points": [{"hidden": h, "one": {"median": t, "q1": t, "q3": t},
...                    "split": {"median": t / 2 + 1.5e-3, "q1": t / 2, "q3": t / 2 + 2e-3},
...                    "whole_calib": {"median": t}, "shard_calib": {"median": t / 2},
...                    "allreduce": {"median": 1.5e-3}, "max_abs_error": 0.0, "samples_s": rounds(t)}
...                   for h, t in [(64, 1e-3), (128, 2e-3), (256, 4e-3), (512, 8e-3)]]}
>>> summary = analyse(raw, resamples=20)["summary"]
>>> round(summary["break_even_measured_hidden"]), round(summary["break_even_held_out_hidden"])
(181, 181)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lib.measure.fit import fit_link
from lib.measure.model import (
    CHEAP_S,
    alternate_folds,
    beyond_calibration,
    break_even_hidden,
    efficiency,
    extrapolated_split,
    held_out_split,
    predict_split,
    step_gap,
)
from lib.measure.stats import LEVEL, RESAMPLES, SEED, median_abs_relative_error, relative_error, summarize
from lib.measure.uncertainty import POINT_STEPS, bootstrap_run, interval, json_interval
from lib.units import GB, ms, s

__all__ = [
    "analyse",
    "reanalyse",
    "format_table",
    "format_hidden",
    "format_interval",
    "THRESHOLD_S",
    "SCHEMA",
    "NOISY_LINK",
]

#: Sweep points with a measured ``T2`` at least this long (seconds) count in
#: the headline error: shorter ones are dominated by timer and scheduler noise.
THRESHOLD_S = 5e-3

#: What a run whose link timings do not grow with the message size can tell, in words.
NOISY_LINK = (
    "the link timings did not grow with the message size (a small message came out slower than a "
    "large one), so this machine was too busy or too noisy to measure a link; the fit holds the "
    "per-byte time at zero and every prediction below rests on that"
)

#: Version of the JSON layout that :func:`analyse` writes (documented in :mod:`lib.measure`).
SCHEMA = 2


def _finite(value: float) -> float | None:
    """``value``, or ``None`` (JSON ``null``) where it is infinite: strict JSON has no Infinity."""
    return float(value) if np.isfinite(value) else None


def _median_error(predicted: np.ndarray, measured: np.ndarray) -> float | None:
    return median_abs_relative_error(predicted, measured) if measured.size else None


def analyse(
    raw: dict[str, Any],
    machine: dict[str, Any] | None = None,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> dict[str, Any]:
    """The full result of a run: link fit, ``eta``, both predictions, bootstrap intervals, summary.

    ``raw`` is what :func:`lib.measure.protocol.measure` returns on rank 0
    (every repetition kept under ``samples_s``). ``resamples``, ``seed`` and
    ``level`` set the bootstrap. The layout of the result is the JSON schema
    in the docstring of :mod:`lib.measure`.
    """
    k = int(raw["devices"])
    message = float(raw["message_bytes"])
    sizes = [row["message_bytes"] for row in raw["link"]]
    link = fit_link(sizes, [row["median_s"] for row in raw["link"]], devices=k, constrain=True)
    points = raw["points"]
    hidden = np.array([p["hidden"] for p in points], dtype=float)
    one, split, whole, shard, allreduce = (
        np.array([p[step]["median"] for p in points], dtype=float)
        for step in ("one", "split", "whole_calib", "shard_calib", "allreduce")
    )
    eta = np.atleast_1d(efficiency(whole, shard, k))
    predicted = np.atleast_1d(predict_split(link, message, one, eta).split_time)
    matched = np.atleast_1d(predict_split(link, message, one, eta, communication_s=allreduce).split_time)
    folds = alternate_folds(len(points))
    held = held_out_split(link, message, one, whole, shard, folds, allreduce, hidden, constrain=True)
    stated = held_out_split(link, message, one, whole, shard, folds, constrain=True)
    long = split >= THRESHOLD_S
    cheap = whole < CHEAP_S
    far = beyond_calibration(long, cheap)
    extrapolated = (
        extrapolated_split(link, message, one, whole, shard, constrain=True, calibrated=cheap).split_s
        if far.any()
        else None
    )
    reps = bootstrap_run(
        hidden,
        sizes,
        [row["samples_s"] for row in raw["link"]],
        [np.array([p["samples_s"][step] for step in POINT_STEPS]) for p in points],
        k,
        message,
        folds,
        long,
        cheap,
        resamples,
        seed,
    )
    (one_lo, one_hi), (split_lo, split_hi), (held_lo, held_hi), (error_lo, error_hi) = (
        interval(values, level) for values in (reps.one, reps.split, reps.held_out, reps.held_out / reps.split - 1)
    )
    sweep = [
        {
            "hidden": int(p["hidden"]),
            "fold": int(folds[i]),
            "measured_one_s": p["one"]["median"],
            "one_q1_s": p["one"]["q1"],
            "one_q3_s": p["one"]["q3"],
            "one_ci_s": json_interval(one_lo[i], one_hi[i]),
            "measured_split_s": p["split"]["median"],
            "split_q1_s": p["split"]["q1"],
            "split_q3_s": p["split"]["q3"],
            "split_ci_s": json_interval(split_lo[i], split_hi[i]),
            "predicted_split_s": float(predicted[i]),
            "predicted_split_matched_s": float(matched[i]),
            "predicted_split_held_out_s": float(held.split_s[i]),
            "predicted_split_held_out_ci_s": json_interval(held_lo[i], held_hi[i]),
            "held_out_error_ci": json_interval(error_lo[i], error_hi[i]),
            "efficiency": float(eta[i]),
            "efficiency_held_out": float(held.efficiency[i]),
            "link_latency_held_out_s": float(held.latency[i]),
            "predicted_split_held_out_link_s": float(stated.split_s[i]),
            "predicted_split_extrapolated_s": None if extrapolated is None else float(extrapolated[i]),
            "extrapolation_calibrated": bool(cheap[i]),
            "allreduce_s": float(allreduce[i]),
            "whole_calib_s": float(whole[i]),
            "shard_calib_s": float(shard[i]),
            "max_abs_error": p["max_abs_error"],
            "load": p.get("load"),
            "samples_s": p["samples_s"],
        }
        for i, p in enumerate(points)
    ]
    measured_be = break_even_hidden(hidden, one, split)
    predicted_be = break_even_hidden(hidden, one, predicted)
    matched_be = break_even_hidden(hidden, one, matched)
    held_be = break_even_hidden(hidden, one, held.split_s)
    stated_be = break_even_hidden(hidden, one, stated.split_s)
    error_ci, link_ci, far_ci = (
        interval(values, level) for values in (reps.error_held_out, reps.error_held_out_link, reps.error_extrapolated)
    )
    summary = {
        "threshold_s": THRESHOLD_S,
        "points_over_threshold": int(long.sum()),
        "median_abs_error_held_out": _median_error(held.split_s[long], split[long]),
        "median_abs_error_held_out_ci": None if error_ci is None else json_interval(*error_ci),
        "median_abs_error_held_out_all": _median_error(held.split_s, split),
        "median_abs_error_held_out_link": _median_error(stated.split_s[long], split[long]),
        "median_abs_error_held_out_link_ci": None if link_ci is None else json_interval(*link_ci),
        "extrapolation_cheap_s": CHEAP_S,
        "points_extrapolated": int(far.sum()),
        "median_abs_error_extrapolated": None if extrapolated is None else _median_error(extrapolated[far], split[far]),
        "median_abs_error_extrapolated_ci": None if far_ci is None else json_interval(*far_ci),
        "median_abs_error": _median_error(predicted[long], split[long]),
        "median_abs_error_matched": _median_error(matched[long], split[long]),
        "median_abs_error_all": _median_error(predicted, split),
        "break_even_measured_hidden": measured_be,
        "break_even_measured_ci": json_interval(*interval(reps.break_even_measured, level)),
        "break_even_held_out_hidden": held_be,
        "break_even_held_out_ci": json_interval(*interval(reps.break_even_held_out, level)),
        "break_even_step_gap_held_out": _finite(step_gap(hidden, measured_be, held_be)),
        "break_even_held_out_link_hidden": stated_be,
        "break_even_held_out_link_ci": json_interval(*interval(reps.break_even_held_out_link, level)),
        "break_even_step_gap_held_out_link": _finite(step_gap(hidden, measured_be, stated_be)),
        "break_even_predicted_hidden": predicted_be,
        "break_even_step_gap": _finite(step_gap(hidden, measured_be, predicted_be)),
        "break_even_predicted_matched_hidden": matched_be,
        "break_even_step_gap_matched": _finite(step_gap(hidden, measured_be, matched_be)),
        "max_abs_error": float(max(p["max_abs_error"] for p in points)),
    }
    return {
        "schema": SCHEMA,
        "machine": {**(machine or {}), "clock": raw["clock"], "load": raw.get("load")},
        "plan": raw["plan"],
        "devices": k,
        "message_bytes": int(message),
        "link": {"calibration": raw["link"], "fit": link.as_dict(), "matched": raw["matched"]},
        "held_out": {
            "folds": int(folds.max()) + 1,
            "fits": [
                {
                    **fit.as_dict(),
                    "fitted_on_hidden": [int(h) for h in hidden[folds != f]],
                    "predicts_hidden": [int(h) for h in hidden[folds == f]],
                }
                for f, fit in enumerate(held.fits)
            ],
        },
        "bootstrap": {
            "resamples": int(resamples),
            "seed": int(seed),
            "level": float(level),
            "resampled": "rounds of each hidden size (all steps together); link repetitions",
            "unphysical_fits": {
                "link": int(reps.unphysical[:, 0].sum()),
                "efficiency": int(reps.unphysical[:, 1].sum()),
            },
        },
        "sweep": sweep,
        "summary": summary,
    }


def reanalyse(result: dict[str, Any]) -> dict[str, Any]:
    """Analyse a stored run (schema 2) again, from the repetitions it kept, with this version of the analysis.

    The measurement is not repeated: the raw timings are rebuilt from
    ``link.calibration``, ``link.matched`` and each point's ``samples_s``,
    and :func:`analyse` runs with the run's own bootstrap settings. Machine,
    plan and command are kept.

    >>> reanalyse({"schema": 1})
    Traceback (most recent call last):
    ...
    ValueError: result must be schema 2 (with every repetition kept), got schema 1
    """
    if result.get("schema") != SCHEMA:
        raise ValueError(
            f"result must be schema {SCHEMA} (with every repetition kept), got schema {result.get('schema')}"
        )
    points = [
        {
            "hidden": p["hidden"],
            "max_abs_error": p["max_abs_error"],
            "load": p.get("load"),
            "samples_s": p["samples_s"],
            **{step: summarize(values) for step, values in p["samples_s"].items()},
        }
        for p in result["sweep"]
    ]
    raw = {
        "devices": result["devices"],
        "message_bytes": result["message_bytes"],
        "plan": result["plan"],
        "link": result["link"]["calibration"],
        "matched": result["link"]["matched"],
        "clock": result["machine"]["clock"],
        "load": result["machine"].get("load"),
        "points": points,
    }
    machine = {key: value for key, value in result["machine"].items() if key not in ("clock", "load")}
    boot = result["bootstrap"]
    again = analyse(raw, machine, resamples=boot["resamples"], seed=boot["seed"], level=boot["level"])
    return {**again, "command": result["command"]} if "command" in result else again


def format_hidden(value: float | None) -> str:
    """A break-even hidden size in words: rounded, or ``"none in the sweep"`` for ``None``.

    >>> format_hidden(181.4), format_hidden(None)
    ('181', 'none in the sweep')
    """
    return "none in the sweep" if value is None else f"{value:.0f}"


def format_interval(bounds: list[float | None] | None, unit: str = "", scale: float = 1.0, digits: int = 0) -> str:
    """An interval from the JSON in words: ``"between 480 and 610"``; ``None`` ends are beyond the sweep.

    ``scale`` divides both ends (``ms`` for milliseconds), ``unit`` follows them.

    >>> format_interval([480.2, 610.0]), format_interval([0.0052, 0.0061], " ms", 1e-3, 1)
    ('between 480 and 610', 'between 5.2 and 6.1 ms')
    >>> format_interval([480.2, None]), format_interval([None, None]), format_interval(None)
    ('above 480 (beyond the sweep in some resamples)', 'beyond the sweep', 'not available')
    """
    if bounds is None:
        return "not available"
    if bounds[0] is None:
        return "beyond the sweep"
    low = f"{bounds[0] / scale:.{digits}f}"
    if bounds[1] is None:
        return f"above {low}{unit} (beyond the sweep in some resamples)"
    return f"between {low} and {bounds[1] / scale:.{digits}f}{unit}"


def _apart(steps: float | None) -> str:
    return "" if steps is None or not np.isfinite(steps) else f", {steps:.2f} sweep steps apart"


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _ci(interval_: list[float] | None) -> str:
    return "" if interval_ is None else f" (95% CI {format_interval(interval_, ' %', 0.01, 1)})"


def format_table(result: dict[str, Any]) -> str:
    """The final table of a run: one line per hidden size, then the summary.

    >>> print(format_table({"sweep": [], "summary": {}, "link": {"fit": {"latency_s": 1e-4,
    ...     "bus_bandwidth_Bps": 2e9}}}).splitlines()[0])
    link fit: latency 0.100 ms, bus bandwidth 2.00 GB/s
    """
    fit = result["link"]["fit"]
    lines = [
        f"link fit: latency {fit['latency_s'] / ms:.3f} ms, "
        + (
            f"bus bandwidth {fit['bus_bandwidth_Bps'] / (GB / s):.2f} GB/s"
            if fit["bus_bandwidth_Bps"] is not None
            else "no bandwidth: " + NOISY_LINK
        )
    ]
    failed = result.get("bootstrap", {}).get("unphysical_fits", {})
    for kind, words in (("link", "link timings"), ("efficiency", "shard timings")):
        if failed.get(kind):
            lines.append(
                f"{failed[kind]} of {result['bootstrap']['resamples']} bootstrap resamples drew {words} "
                "that did not grow with size; their fits held the slope at zero"
            )
    for number, model in enumerate(result.get("held_out", {}).get("fits", [])):
        lines.append(
            f"held-out efficiency model for fold {number} (fitted on the other fold): "
            f"shard overhead {model['overhead_s'] / ms:.4f} ms, eta_inf {model['asymptote']:.3f}"
        )
    lines.append(
        f"{'hidden':>7} {'fold':>4} {'T1 (ms)':>9} {'T2 (ms)':>9} {'T2 95% CI':>15} {'held-out':>9} "
        f"{'error':>7} | {'additivity error':>16} {'(rounds)':>8} {'eta':>5} {'max|err|':>8}"
    )
    for point in result["sweep"]:
        low, high = point["split_ci_s"]
        errors = [
            relative_error(point[key], point["measured_split_s"])
            for key in ("predicted_split_held_out_s", "predicted_split_s", "predicted_split_matched_s")
        ]
        lines.append(
            f"{point['hidden']:>7} {point['fold']:>4} {point['measured_one_s'] / ms:>9.3f} "
            f"{point['measured_split_s'] / ms:>9.3f} {f'{low / ms:.3f}-{high / ms:.3f}':>15} "
            f"{point['predicted_split_held_out_s'] / ms:>9.3f} {errors[0]:>+7.1%} | "
            f"{errors[1]:>+16.1%} {errors[2]:>+8.1%} {point['efficiency']:>5.2f} "
            f"{point['max_abs_error']:>8.1e}"
        )
    summary = result["summary"]
    if summary:
        ci = summary["median_abs_error_held_out_ci"]
        lines.append(
            f"held-out prediction (link latency recalibrated in the rounds, chosen after the first run), "
            f"median |error| where T2 >= {summary['threshold_s'] / ms:g} ms "
            f"({summary['points_over_threshold']} points): {_percent(summary['median_abs_error_held_out'])}"
            + _ci(ci)
            + f"; over all points {_percent(summary['median_abs_error_held_out_all'])}"
        )
        lines.append(
            f"the same folds with the link as its sweep fitted it (l + V/B): "
            f"{_percent(summary['median_abs_error_held_out_link'])}" + _ci(summary["median_abs_error_held_out_link_ci"])
        )
        lines.append(
            f"extrapolated from the sizes with T1 < {summary['extrapolation_cheap_s'] / ms:g} ms "
            f"({summary['points_extrapolated']} long points beyond them): "
            f"{_percent(summary['median_abs_error_extrapolated'])}" + _ci(summary["median_abs_error_extrapolated_ci"])
        )
        lines.append(
            f"additivity check (eta measured at the same size), median |error| where T2 >= "
            f"{summary['threshold_s'] / ms:g} ms: {_percent(summary['median_abs_error'])} (link fit), "
            f"{_percent(summary['median_abs_error_matched'])} (all-reduce timed in the rounds)"
        )
        lines.append(
            f"break-even hidden size: measured {format_hidden(summary['break_even_measured_hidden'])} "
            f"(95% CI {format_interval(summary['break_even_measured_ci'])}), held-out prediction "
            f"{format_hidden(summary['break_even_held_out_hidden'])} "
            f"(95% CI {format_interval(summary['break_even_held_out_ci'])})"
            + _apart(summary["break_even_step_gap_held_out"])
        )
    load = result.get("machine", {}).get("load")
    if load and load.get("other_busy_cores") is not None:
        lines.append(
            f"machine load during the run: other programs kept {load['other_busy_cores']:.2f} cores busy "
            f"on average, the ranks {load['ranks_busy_cores']:.2f}"
        )
    return "\n".join(lines)
