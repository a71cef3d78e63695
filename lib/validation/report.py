"""Chapter 11's all-reduce comparisons, the scores of every family, and the summary ``python -m lib.validation`` prints.

Introduced in chapter 11 (does the model hold?).

* :func:`validate_allreduce`: the all-reduce split of
  :mod:`lib.validation.splits`. Each modelled sweep's large-message regime
  fits one link scale ``eta_B``; every size 4 or more doublings below it is
  held out. Beside it, the post-hoc form adds a floor (the smallest size's
  excess over the model), and the model as is (nothing fitted) is kept.
* :func:`validate_algorithms`: nccl-tests runs whose log names NCCL's
  choice, against the model's tuner with nothing fitted.
* :func:`score`: median and 90th percentile of ``|e|`` with seeded bootstrap
  95 % intervals; :func:`summary`: every family's score.

>>> v = validate_allreduce()
>>> s = score(v.held_out())
>>> s.n, round(s.median, 3)
(121, 0.578)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from lib.collectives import PROTOCOLS, tune_allreduce
from lib.measure.stats import LEVEL, RESAMPLES, SEED, percentile_interval, relative_error
from lib.validation.allreduce import SYSTEMS, calibrate_efficiency, predict_nccl
from lib.validation.calibrate import check_kernels
from lib.validation.families import Validation, validate_decode, validate_load, validate_prefill
from lib.validation.published import AllReduceSweep, allreduce_sweep, load_published
from lib.validation.schemas import ALGORITHM_DATASETS, QUANTITY_UNITS
from lib.validation.splits import BAND, HELD_OUT_DOUBLINGS, allreduce_roles

__all__ = [
    "Score",
    "score",
    "validate_allreduce",
    "validate_algorithms",
    "validations",
    "summary",
    "TIME_QUANTITIES",
    "capacity_ratios",
]


@dataclass(frozen=True)
class Score:
    """``n`` held-out errors: median and 90th percentile of ``|e|``, each with a bootstrap interval."""

    n: int
    median: float
    p90: float
    median_interval: tuple[float, float]
    p90_interval: tuple[float, float]


def score(errors: Any, resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL) -> Score:
    """Score signed errors by ``|e|``: median, p90 and their seeded bootstrap ``level`` intervals.

    The errors are resampled with replacement as a whole set (they share
    the fitted constants, so the interval says how much the score depends on
    which figures happened to be published, not how well a constant is known).

    >>> s = score([0.1, -0.2, 0.3, -0.05, 0.15])
    >>> s.n, round(s.median, 2), round(s.p90, 2)
    (5, 0.15, 0.26)
    """
    e = np.abs(np.asarray(errors, dtype=float))
    if e.size == 0 or not np.isfinite(e).all():
        raise ValueError(f"errors must be at least one finite number, got {e.size} values")
    rng = np.random.default_rng(seed)
    draws = e[rng.integers(0, e.size, size=(resamples, e.size))]
    return Score(
        int(e.size),
        float(np.median(e)),
        float(np.percentile(e, 90)),
        percentile_interval(np.median(draws, axis=1), level),
        percentile_interval(np.percentile(draws, 90, axis=1), level),
    )


def _post_hoc_roles(size: np.ndarray, roles: np.ndarray, doublings: np.ndarray) -> np.ndarray:
    above = np.log2(size / size.min())
    return np.where(
        (roles == "calibration") | (above == 0),
        "calibration",
        np.where((doublings >= HELD_OUT_DOUBLINGS - 1e-9) & (above >= HELD_OUT_DOUBLINGS - 1e-9), "held-out", "gap"),
    )


def _sweep_records(sweep: AllReduceSweep) -> tuple[list[dict], dict]:
    roles, doublings = allreduce_roles(sweep.size)
    eta = calibrate_efficiency(sweep, roles == "calibration")
    model = predict_nccl(sweep.size, sweep.name, sweep.gpus, eta)
    as_is = predict_nccl(sweep.size, sweep.name, sweep.gpus).time
    smallest = int(np.argmin(sweep.size))
    floor = float(sweep.time[smallest] - model.time[smallest])
    post = _post_hoc_roles(sweep.size, roles, doublings)
    records = []
    for i, size in enumerate(sweep.size):
        t = float(sweep.time[i])
        records.append(
            dict(
                dataset=sweep.name,
                size=float(size),
                measured=t,
                derived=bool(sweep.derived[i]),
                predicted=float(model.time[i]),
                error=float(relative_error(model.time[i], t)),
                role=str(roles[i]),
                distance=float(doublings[i]),
                in_band=bool(BAND[0] <= size <= BAND[1]),
                algorithm=str(model.algorithm[i]),
                protocol=str(model.protocol[i]),
                efficiency=eta,
                as_is=float(as_is[i]),
                as_is_error=float(relative_error(as_is[i], t)),
                post_hoc=float(model.time[i] + floor),
                post_hoc_error=float(relative_error(max(model.time[i] + floor, 0.0), t)),
                post_hoc_role=str(post[i]),
                floor=floor,
            )
        )
    return records, {f"efficiency.{sweep.name}": eta, f"floor.{sweep.name}": floor}


def validate_allreduce(sweeps: dict[str, AllReduceSweep] | None = None) -> Validation:
    """The all-reduce split on every modelled sweep (``sweeps`` by name; the published ones by default).

    Constants: ``efficiency.<sweep>`` (pre-registered) and ``floor.<sweep>``
    (post hoc). Record keys ``role``/``error`` are the pre-registered form,
    ``post_hoc_role``/``post_hoc_error`` the post-hoc one, ``as_is_error``
    nothing fitted; ``distance`` is doublings below the calibration regime.
    """
    sweeps = {name: allreduce_sweep(name) for name in SYSTEMS} if sweeps is None else sweeps
    records, constants = [], {}
    for sweep in sweeps.values():
        mine, fitted = _sweep_records(sweep)
        records += mine
        constants.update(fitted)
    return Validation("allreduce", tuple(records), constants)


def _forced(setting: str, prefix: str, names: tuple[str, ...]) -> tuple[str, ...]:
    """The names ``NCCL_ALGO=...`` or ``NCCL_PROTO=...`` leaves (all of them when not forced)."""
    if not setting.startswith(prefix):
        return names
    wanted = setting[len(prefix) :].split(" ")[0].lower()
    return tuple(n for n in names if n.lower() == wanted)


def validate_algorithms() -> list[dict]:
    """nccl-tests runs with NCCL's logged or forced choice, against the model's tuner with nothing fitted.

    One record per printed time: the run's algorithm (logged, or forced by
    ``NCCL_ALGO``), the model's pick under the same restriction, and the
    time error of that pick.
    """
    records = []
    for name in ALGORITHM_DATASETS:
        for row in load_published(name):
            if row["quantity"] != "time":
                continue
            algorithms = _forced(row["selection"], "NCCL_ALGO=", ("ring", "tree", "nvls", "nvls_tree"))
            protocols = _forced(row["selection"], "NCCL_PROTO=", PROTOCOLS)
            choice = tune_allreduce(float(row["size_bytes"]), row["gpus"], "nvlink4", algorithms=algorithms)
            pair = min(((a, p) for a in algorithms for p in protocols), key=lambda ap: float(choice.costs[ap].time))
            t = float(choice.costs[pair].time)
            logged = row["algorithm"].split(" ")[0].lower()
            records.append(
                dict(
                    dataset=name,
                    gpus=row["gpus"],
                    size=float(row["size_bytes"]),
                    selection=row["selection"].split(" (")[0],
                    logged=logged,
                    model=pair[0],
                    model_protocol=pair[1],
                    protocol=row["protocol"],
                    measured=row["value_si"],
                    predicted=t,
                    error=float(relative_error(t, row["value_si"])),
                    agrees=logged == pair[0],
                )
            )
    return records


@lru_cache(maxsize=2)
def _cached(kernels: str) -> dict[str, Validation]:
    prefill = validate_prefill(kernels=kernels)
    return {
        "allreduce": validate_allreduce(),
        "decode": validate_decode(kernels=kernels),
        "prefill": prefill,
        "load": validate_load(prefill=prefill, kernels=kernels),
    }


def validations(kernels: str = "measured") -> dict[str, Validation]:
    """Every family's :class:`Validation` on the published data (computed once per process and ``kernels``,
    one of :data:`lib.validation.calibrate.KERNEL_MODELS`)."""
    return dict(_cached(check_kernels(kernels)))


def summary(kernels: str = "measured") -> dict[str, Score]:
    """The scores chapter 11 reports, held-out figures only, by name.

    ``allreduce`` (every held-out size), ``allreduce_band`` (8 KiB to 64 MiB),
    ``allreduce_post_hoc``; ``allreduce_floor_band``, the band under the
    second split (:data:`lib.validation.splits.FLOOR_SPLIT`, two-level model); ``decode``, ``decode_ft_gptfast`` (the data set
    of the previous edition); ``prefill``; ``load``. ``kernels`` as :func:`validations`.
    """
    from lib.validation.twolevel import floor_split_scores  # twolevel imports this module

    v = validations(kernels)
    ar = v["allreduce"]
    post = [r["post_hoc_error"] for r in ar.records if r["post_hoc_role"] == "held-out"]
    old = [
        r["error"]
        for r in v["decode"].records
        if r["role"] == "held-out" and r["engine"] in ("FasterTransformer", "gpt-fast")
    ]
    return {
        "allreduce": score(ar.held_out()),
        "allreduce_band": score(ar.held_out(in_band=True)),
        "allreduce_post_hoc": score(post),
        "allreduce_floor_band": floor_split_scores()["allreduce_band"],
        "decode": score(v["decode"].held_out()),
        "decode_ft_gptfast": score(old),
        "prefill": score(v["prefill"].held_out()),
        "load": score(v["load"].held_out()),
    }


#: The published quantities that are times (their units are seconds): a longer one means less capacity.
TIME_QUANTITIES = frozenset(q for q, units in QUANTITY_UNITS.items() if set(units) <= {"us", "ms", "s"})


def capacity_ratios(validation: Validation) -> np.ndarray:
    """What the engine delivered over what the model predicted, for each held-out figure of ``validation``.

    A rate's ratio is measured over predicted, ``1 / (1 + e)``; a time's is
    predicted over measured, ``1 + e``: a step or a token that takes longer
    than predicted leaves proportionally less capacity. Below 1, the model
    was optimistic.

    >>> ratios = capacity_ratios(validations()["load"])
    >>> ratios.size, round(float(np.median(ratios)), 2)
    (39, 0.85)
    """
    held = [r for r in validation.records if r["role"] == "held-out"]
    e = np.array([r["error"] for r in held], dtype=float)
    time = np.array([r["quantity"] in TIME_QUANTITIES for r in held])
    return np.where(time, 1 + e, 1 / (1 + e))
