"""Turning raw timings into the prediction, the comparison and the final table.

Introduced in chapter 9 (measure it). :func:`analyse` fits the link, computes
``eta`` per hidden size, fills a ``lib.budget.Phase`` per point, and compares
predicted with measured ``T2`` and the two break-even sizes. Pure numpy: it
works on a run stored as JSON as well as on a fresh one.

>>> raw = {"devices": 2, "message_bytes": 1000, "plan": {"name": "demo"},
...        "link": [{"message_bytes": 1000, "median_s": 1.5e-3}, {"message_bytes": 10**6, "median_s": 2.499e-3}],
...        "matched": {"median_s": 1.5e-3},
...        "points": [{"hidden": h, "one": {"median": t, "q1": t, "q3": t},
...                    "split": {"median": t / 2 + 1.5e-3, "q1": t / 2, "q3": t / 2 + 2e-3},
...                    "whole_calib": {"median": t}, "shard_calib": {"median": t / 2}, "max_abs_error": 0.0}
...                   for h, t in [(64, 1e-3), (128, 2e-3), (256, 4e-3), (512, 8e-3)]]}
>>> result = analyse(raw)
>>> summary = result["summary"]
>>> round(summary["break_even_measured_hidden"]), round(summary["break_even_predicted_hidden"])
(181, 181)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lib.measure.fit import fit_link
from lib.measure.model import break_even_hidden, efficiency, predict_split, step_gap
from lib.measure.stats import median_abs_relative_error, relative_error
from lib.units import GB, ms, s

__all__ = ["analyse", "format_table", "format_hidden", "THRESHOLD_S"]

#: Sweep points with a measured ``T2`` at least this long (seconds) count in
#: the headline error: shorter ones are dominated by timer and scheduler noise.
THRESHOLD_S = 5e-3


def analyse(raw: dict[str, Any], machine: dict[str, Any] | None = None) -> dict[str, Any]:
    """The full result of a run: link fit, ``eta``, sweep with predictions, summary.

    ``raw`` is what :func:`lib.measure.protocol.measure` returns on rank 0.
    Each sweep point gets ``predicted_split_s`` (link from the fit over all
    calibration sizes, measured before the sweep) and
    ``predicted_split_matched_s`` (link time taken as the median all-reduce
    at the MLP's own message size, timed in the same interleaved rounds as
    that point's experiment, so under the same background load).
    """
    k = int(raw["devices"])
    message = float(raw["message_bytes"])
    sizes = [row["message_bytes"] for row in raw["link"]]
    link = fit_link(sizes, [row["median_s"] for row in raw["link"]], devices=k)
    points = raw["points"]
    hidden = np.array([p["hidden"] for p in points], dtype=float)
    one = np.array([p["one"]["median"] for p in points])
    split = np.array([p["split"]["median"] for p in points])
    eta = np.atleast_1d(efficiency([p["whole_calib"]["median"] for p in points],
                                   [p["shard_calib"]["median"] for p in points], k))
    predicted = np.atleast_1d(predict_split(link, message, one, eta).split_time)
    allreduce = np.array([p["allreduce"]["median"] if "allreduce" in p else raw["matched"]["median_s"]
                          for p in points])
    matched = np.atleast_1d(predict_split(link, message, one, eta, communication_s=allreduce).split_time)
    sweep = [{
        "hidden": int(p["hidden"]),
        "measured_one_s": p["one"]["median"], "one_q1_s": p["one"]["q1"], "one_q3_s": p["one"]["q3"],
        "measured_split_s": p["split"]["median"], "split_q1_s": p["split"]["q1"], "split_q3_s": p["split"]["q3"],
        "predicted_split_s": float(predicted[i]), "predicted_split_matched_s": float(matched[i]),
        "efficiency": float(eta[i]), "allreduce_s": float(allreduce[i]), "whole_calib_s": p["whole_calib"]["median"],
        "shard_calib_s": p["shard_calib"]["median"], "max_abs_error": p["max_abs_error"],
    } for i, p in enumerate(points)]
    long = split >= THRESHOLD_S
    measured_be = break_even_hidden(hidden, one, split)
    predicted_be = break_even_hidden(hidden, one, predicted)
    matched_be = break_even_hidden(hidden, one, matched)
    summary = {
        "threshold_s": THRESHOLD_S,
        "points_over_threshold": int(long.sum()),
        "median_abs_error": median_abs_relative_error(predicted[long], split[long]) if long.any() else None,
        "median_abs_error_matched": median_abs_relative_error(matched[long], split[long]) if long.any() else None,
        "median_abs_error_all": median_abs_relative_error(predicted, split),
        "break_even_measured_hidden": measured_be,
        "break_even_predicted_hidden": predicted_be,
        "break_even_step_gap": step_gap(hidden, measured_be, predicted_be),
        "break_even_predicted_matched_hidden": matched_be,
        "break_even_step_gap_matched": step_gap(hidden, measured_be, matched_be),
        "max_abs_error": float(max(p["max_abs_error"] for p in points)),
    }
    return {"schema": 1, "machine": machine or {}, "plan": raw["plan"], "devices": k,
            "message_bytes": int(message), "link": {"calibration": raw["link"], "fit": link.as_dict(),
                                                    "matched": raw["matched"]},
            "sweep": sweep, "summary": summary}


def format_hidden(value: float | None) -> str:
    """A break-even hidden size in words: rounded, or ``"none in the sweep"`` for ``None``.

    >>> format_hidden(181.4), format_hidden(None)
    ('181', 'none in the sweep')
    """
    return "none in the sweep" if value is None else f"{value:.0f}"


def format_table(result: dict[str, Any]) -> str:
    """The final table of a run: one line per hidden size, then the summary.

    >>> print(format_table({"sweep": [], "summary": {}, "link": {"fit": {"latency_s": 1e-4,
    ...     "bus_bandwidth_Bps": 2e9}}}).splitlines()[0])
    link fit: latency 0.100 ms, bus bandwidth 2.00 GB/s
    """
    fit = result["link"]["fit"]
    lines = [f"link fit: latency {fit['latency_s'] / ms:.3f} ms, "
             f"bus bandwidth {fit['bus_bandwidth_Bps'] / (GB / s):.2f} GB/s",
             f"{'hidden':>7} {'T1 (ms)':>10} {'T2 (ms)':>10} {'pred T2':>10} {'error':>8} {'matched':>10} "
             f"{'error':>8} {'eta':>6} {'max|err|':>9}"]
    for point in result["sweep"]:
        error = relative_error(point["predicted_split_s"], point["measured_split_s"])
        other = relative_error(point["predicted_split_matched_s"], point["measured_split_s"])
        lines.append(f"{point['hidden']:>7} {point['measured_one_s'] / ms:>10.3f} "
                     f"{point['measured_split_s'] / ms:>10.3f} "
                     f"{point['predicted_split_s'] / ms:>10.3f} {error:>+8.1%} "
                     f"{point['predicted_split_matched_s'] / ms:>10.3f} {other:>+8.1%} {point['efficiency']:>6.2f} "
                     f"{point['max_abs_error']:>9.1e}")
    summary = result["summary"]
    if summary:
        mae, mae_matched = summary["median_abs_error"], summary["median_abs_error_matched"]
        lines.append(f"median |error| where T2 >= {summary['threshold_s'] / ms:g} ms "
                     f"({summary['points_over_threshold']} points): "
                     + ("n/a" if mae is None else f"{mae:.1%} (link fit), {mae_matched:.1%} (matched link)"))
        lines.append(f"break-even hidden size: measured {format_hidden(summary['break_even_measured_hidden'])}, "
                     f"predicted {format_hidden(summary['break_even_predicted_hidden'])} (link fit, "
                     f"{summary['break_even_step_gap']:.2f} sweep steps apart), "
                     f"{format_hidden(summary['break_even_predicted_matched_hidden'])} (matched link, "
                     f"{summary['break_even_step_gap_matched']:.2f} steps apart)")
    return "\n".join(lines)
