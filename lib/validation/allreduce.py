"""NCCL's cost model against published all-reduce sweeps: as is, and calibrated on two message sizes.

Introduced in chapter 11 (does the model hold?). Each sweep in
``data/published`` is mapped onto the book's catalogue (:data:`SYSTEMS`:
which :data:`lib.hardware.LINKS` entry joins the GPUs inside a node, which
ports join the nodes). Then three predictions are compared with it:

* **as is**: :func:`lib.collectives.tune_allreduce`, nothing fitted;
* **calibrated NCCL**: the same model with every link's bandwidth scaled by
  one factor ``efficiency`` (set so that the largest message is predicted
  exactly) plus one constant ``overhead`` per call (set so that the smallest
  is); every size in between is held out;
* **two-point line**: the book's ``l + V / B``
  (:func:`lib.collectives.collective_time`) through the same two sizes.

>>> from lib.validation.published import allreduce_sweep
>>> sweep = allreduce_sweep("allreduce_h200_8gpu_mle")
>>> fit = calibrate_nccl(sweep)
>>> round(fit.efficiency, 3), round(fit.overhead * 1e6, 1)      # scale on the links; microseconds per call
(1.014, 24.2)
>>> predict_nccl(2 * 2**20, "allreduce_h200_8gpu_mle").algorithm   # NCCL 2.27.7 logged NVLS from 2 MiB
'nvls'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from lib import _checks
from lib.collectives import allreduce_bytes, collective_time, tune_allreduce
from lib.hardware import Link
from lib.hardware import link as lookup_link
from lib.measure.stats import median_abs_error, relative_error
from lib.queueing.theory import bisect
from lib.validation.fitting import minimise
from lib.validation.published import AllReduceSweep

__all__ = [
    "System",
    "SYSTEMS",
    "UNMODELLED",
    "scaled_link",
    "Prediction",
    "predict_nccl",
    "NCCLFit",
    "calibrate_nccl",
    "LineFit",
    "calibrate_line",
    "calibrate_efficiency",
    "relative_error",
    "median_abs_error",
]


@dataclass(frozen=True)
class System:
    """How the book models one published system: links by catalogue slug, and why.

    ``inter_link`` times ``nics_per_node`` is what each node can send to the
    others; NCCL's model only uses that product (and the port's class, for
    its latency).
    """

    link: str
    nodes: int = 1
    inter_link: str | None = None
    nics_per_node: int | None = None
    why: str = ""


#: The catalogue entries each modelled sweep runs on.
SYSTEMS: dict[str, System] = {
    "allreduce_a100_8gpu_mle": System("nvlink3", why="A100 node with NVSwitch (NVLink 3)"),
    "allreduce_h100_8gpu_aws_p5": System("nvlink4", why="p5.48xlarge: H100 with NVSwitch (NVLink 4)"),
    "allreduce_h200_8gpu_mle": System("nvlink4", why="H200 with NVSwitch (NVLink 4)"),
    "allreduce_b200_8gpu_mle": System("nvlink5", why="p6-b200.48xlarge: B200 with NVSwitch (NVLink 5)"),
    "allreduce_a100_16gpu_aws_p4de": System(
        "nvlink3", 2, "eth-400g", 1, "p4de.24xlarge: 400 Gbps of EFA per node (AWS's table)"
    ),
    "allreduce_h100_16gpu_aws_p5": System(
        "nvlink4", 2, "eth-400g", 8, "p5.48xlarge: 3200 Gbps of EFA per node (AWS's table)"
    ),
    "allreduce_b200_32gpu_mle": System(
        "nvlink5", 4, "eth-400g", 8, "p6-b200.48xlarge: 8 x 400 Gbps EFA v4 NICs per node (ml-engineering)"
    ),
}

#: Sweeps kept in ``data/published`` but not modelled, and why.
UNMODELLED = {
    "allreduce_h100_16gpu_gcp_a3mega": "the source names GPUDirect-TCPXO but neither the number nor the rate of "
    "the network ports, and does not print which transport NCCL used",
}


def scaled_link(link: Link | str, factor: float) -> Link:
    """``link`` with the bandwidth NCCL credits it multiplied by ``factor`` (via ``nccl_share``).

    >>> round(scaled_link("nvlink4", 0.5).nccl_bandwidth / 1e9)
    180
    """
    f = _checks.scalar("factor", factor, _checks.positive)
    base = lookup_link(link)
    return replace(base, nccl_share=base.nccl_share * f)


def _system(name: str) -> System:
    if name in UNMODELLED:
        raise ValueError(f"name {name!r} is not modelled: {UNMODELLED[name]}")
    if name not in SYSTEMS:
        raise ValueError(f"name must be one of {sorted(SYSTEMS)}, got {name!r}")
    return SYSTEMS[name]


@dataclass(frozen=True)
class Prediction:
    """NCCL's pick for each size and its time (seconds), plus any calibrated overhead."""

    time: Any
    algorithm: Any
    protocol: Any


def predict_nccl(
    message_bytes: Any, name: str, gpus: int | None = None, efficiency: float = 1.0, overhead: float = 0.0
) -> Prediction:
    """NCCL's tuner on the system of sweep ``name``: ``overhead + tune_allreduce(...)``, links scaled by ``efficiency``.

    ``gpus`` defaults to the sweep's own count (8 per node).

    >>> from lib.units import MiB, us
    >>> p = predict_nccl([1 * MiB, 2 * MiB], "allreduce_h100_8gpu_aws_p5")
    >>> p.algorithm.tolist(), (p.time / us).round(1).tolist()
    (['ring', 'nvls'], [28.0, 32.7])
    """
    system = _system(name)
    eff = _checks.scalar("efficiency", efficiency, _checks.positive)
    extra = _checks.scalar("overhead", overhead)
    k = 8 * system.nodes if gpus is None else gpus
    inter = None if system.inter_link is None else scaled_link(system.inter_link, eff)
    choice = tune_allreduce(message_bytes, k, scaled_link(system.link, eff), system.nodes, inter, system.nics_per_node)
    return Prediction(_checks.result(np.asarray(choice.time) + extra), choice.algorithm, choice.protocol)


@dataclass(frozen=True)
class NCCLFit:
    """The two numbers fitted to a sweep, and the two sizes they came from (bytes)."""

    efficiency: float
    overhead: float
    sizes: tuple


def calibrate_nccl(sweep: AllReduceSweep) -> NCCLFit:
    """Fit NCCL's model to the smallest and the largest message of ``sweep``, both exactly.

    ``efficiency`` scales every link's bandwidth and ``overhead`` is added to
    every call. The two equations ``overhead + model(n, efficiency) =
    measured(n)`` at both ends are solved by bisection on a log scale of the
    efficiency between 0.05 and 20 (the gap the model leaves between the two
    sizes shrinks as the links get faster). The overhead may be negative.
    """
    n_small, n_large = float(sweep.size[0]), float(sweep.size[-1])
    t_small, t_large = float(sweep.time[0]), float(sweep.time[-1])

    def gap(log_efficiency: float) -> float:
        e = math.exp(log_efficiency)
        model = predict_nccl([n_small, n_large], sweep.name, sweep.gpus, e).time
        return float(model[1] - model[0]) - (t_large - t_small)

    lo, hi = math.log(0.05), math.log(20.0)
    if not gap(hi) < 0 < gap(lo):
        raise ValueError(f"sweep {sweep.name!r}: no efficiency in [0.05, 20] reproduces both end points")
    efficiency = math.exp(bisect(gap, lo, hi))
    overhead = t_small - predict_nccl(n_small, sweep.name, sweep.gpus, efficiency).time
    return NCCLFit(efficiency, overhead, (n_small, n_large))


@dataclass(frozen=True)
class LineFit:
    """The book's ``l + V / B`` through two sizes: ``latency`` (s) and ``bandwidth`` (B/s)."""

    latency: float
    bandwidth: float
    sizes: tuple

    def time(self, message_bytes: Any, devices: int) -> Any:
        """``collective_time("allreduce", ...)`` with the fitted latency and bandwidth."""
        return collective_time("allreduce", message_bytes, devices, max(self.latency, 0.0), self.bandwidth)


def calibrate_line(sweep: AllReduceSweep) -> LineFit:
    """``l`` and ``B`` of ``l + V / B`` through the smallest and largest message, ``V = 2 (K - 1) / K n``.

    >>> from lib.validation.published import allreduce_sweep
    >>> line = calibrate_line(allreduce_sweep("allreduce_h100_8gpu_aws_p5"))
    >>> round(line.latency * 1e6, 1), round(line.bandwidth / 1e9)
    (12.9, 483)
    """
    v = np.asarray(allreduce_bytes(sweep.size[[0, -1]], sweep.gpus))
    t = sweep.time[[0, -1]]
    bandwidth = float((v[1] - v[0]) / (t[1] - t[0]))
    return LineFit(float(t[0] - v[0] / bandwidth), bandwidth, (float(sweep.size[0]), float(sweep.size[-1])))


def calibrate_efficiency(sweep: AllReduceSweep, mask: Any) -> float:
    """The link scale ``eta_B`` minimising the squared log error of NCCL's model at the sizes ``mask`` selects.

    Nothing else is fitted: the floor stays NCCL's own latency constants.

    >>> from lib.validation.published import allreduce_sweep
    >>> sweep = allreduce_sweep("allreduce_h100_8gpu_aws_p5")
    >>> round(calibrate_efficiency(sweep, sweep.size >= 2 * 2**30), 3)
    0.99
    """
    pick = np.asarray(mask, dtype=bool)
    if pick.shape != sweep.size.shape or not pick.any():
        raise ValueError(f"mask must select at least one of the sweep's {sweep.size.size} sizes")
    sizes, times = sweep.size[pick], sweep.time[pick]

    def loss(grid: np.ndarray) -> np.ndarray:
        return np.array(
            [np.sum(np.log(predict_nccl(sizes, sweep.name, sweep.gpus, float(e)).time / times) ** 2) for e in grid]
        )

    return minimise(loss, 0.05, 20.0, log=True)
