"""All-reduce calibrated in two levels: NVLink inside a node, the network between nodes, and the harness's floor.

Introduced in chapter 11 (does the model hold?). :func:`lib.validation.allreduce.calibrate_nccl`
fits one link scale and one per-call overhead to a sweep and applies them to
NVLink and the network alike, so a constant fitted on one network carries to
another. Here each term names one mechanism and is fitted only on the sweeps
that exercise it:

* **intra-node** (single-node sweeps only): an NVLink bandwidth scale per
  NVLink generation (a :data:`lib.hardware.LINKS` slug), and the **harness
  floor**, the time a harness adds to every call (:data:`HARNESSES`: one
  eager PyTorch call between CUDA events is not nccl-tests' mean of
  back-to-back calls);
* **inter-node** (multi-node sweeps only): a bandwidth scale per network type
  (:data:`NETWORKS`) and the network's **per-call latency**, the time a call
  that crosses it takes beyond NCCL's model at small sizes.

A scale is fitted on selected sizes of at least :data:`SCALE_FROM`, a floor or
latency on selected sizes up to :data:`FLOOR_UP_TO`; a term with no such size
to fit is left out (NCCL's own constants stand). The two levels are fitted
apart (the inter-node fit holds NVLink at the catalogue's rate, the
intra-node fit never sees a multi-node sweep), so removing every multi-node
sweep leaves the intra-node constants unchanged, and the reverse. A
multi-node prediction adds its network's latency instead of the harness
floor (on one sweep per network the two cannot be told apart).

>>> from lib.validation.published import allreduce_sweep
>>> sweeps = {n: allreduce_sweep(n) for n in ("allreduce_h200_8gpu_mle", "allreduce_b200_8gpu_mle")}
>>> fit = calibrate_two_level(sweeps)
>>> sorted(fit.intra_scale), round(fit.harness_floor["all_reduce_bench.py"] * 1e6)   # microseconds
(['nvlink4', 'nvlink5'], 23)
>>> fit.inter()
{'network_scale': {}, 'network_latency': {}}
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

import numpy as np

from lib.collectives import tune_allreduce
from lib.measure.stats import relative_error
from lib.units import MiB
from lib.validation.allreduce import SYSTEMS, scaled_link
from lib.validation.families import Validation
from lib.validation.fitting import minimise
from lib.validation.published import AllReduceSweep, allreduce_sweep, load_published
from lib.validation.report import Score, score
from lib.validation.schemas import HARNESSES
from lib.validation.splits import BAND, allreduce_floor_roles, allreduce_roles

__all__ = [
    "Network",
    "NETWORKS",
    "NETWORK_OF",
    "HARNESSES",
    "SCALE_FROM",
    "FLOOR_UP_TO",
    "harness_of",
    "TwoLevelFit",
    "calibrate_two_level",
    "predict_two_level",
    "validate_two_level",
    "leave_one_system_out",
    "two_level_scores",
    "sweep_floors",
    "validate_floor_split",
    "floor_split_scores",
    "band_diagnosis",
]

#: A scale is fitted on selected sizes at least this large (bandwidth-bound in every modelled sweep).
SCALE_FROM = 64 * MiB
#: A floor or a network latency is fitted on selected sizes up to this one (latency-bound).
FLOOR_UP_TO = 1 * MiB


@dataclass(frozen=True)
class Network:
    """A network type between nodes: what it is, and where that is stated."""

    name: str
    transport: str
    source: str


#: Network types, by slug.
NETWORKS: dict[str, Network] = {
    "efa": Network(
        "AWS Elastic Fabric Adapter",
        "SRD over Ethernet; NCCL reaches it through the aws-ofi-nccl plugin (libfabric)",
        "aws-samples/awsome-distributed-training@7217859 micro-benchmarks/nccl-tests/README.md lines 39-51 "
        "(EFA installer and AWS_OFI_NCCL_VERSION); stas00/ml-engineering@744d01e network/README.md line 1400 "
        "(p6-b200: 8 x 50 GBps EFA v4 per node)",
    ),
    "roce": Network(
        "RDMA over Converged Ethernet v2", "InfiniBand verbs over UDP/IP; NCCL's IB transport", "NCCL's net_ib"
    ),
    "infiniband": Network("InfiniBand (HDR, NDR)", "InfiniBand verbs; NCCL's IB transport", "NCCL's net_ib"),
    "tcpxo": Network(
        "GCP GPUDirect-TCPXO",
        "TCP with GPU-direct receive through Google's NCCL net plugin",
        "lessizzmore/create-a3mega-ztan-fork@346b825 (names GPUDirect-TCPXO, not its ports)",
    ),
}

#: The network each modelled multi-node sweep crosses.
NETWORK_OF: dict[str, str] = {
    "allreduce_a100_16gpu_aws_p4de": "efa",
    "allreduce_h100_16gpu_aws_p5": "efa",
    "allreduce_b200_32gpu_mle": "efa",
}


@cache
def harness_of(name: str) -> str:
    """The harness a sweep names in its ``harness`` column (one per file).

    >>> harness_of("allreduce_h100_8gpu_aws_p5")
    'nccl-tests-process-per-gpu'
    """
    found = {row["harness"] for row in load_published(name)}
    if len(found) != 1 or not found <= set(HARNESSES):
        raise ValueError(f"name {name!r} must name one harness of HARNESSES, got {sorted(found)}")
    return found.pop()


@dataclass(frozen=True)
class TwoLevelFit:
    """The constants of each level. Missing keys: nothing to fit them on (scale 1, no floor)."""

    intra_scale: dict[str, float] = field(default_factory=dict)
    harness_floor: dict[str, float] = field(default_factory=dict)
    network_scale: dict[str, float] = field(default_factory=dict)
    network_latency: dict[str, float] = field(default_factory=dict)

    def intra(self) -> dict[str, dict[str, float]]:
        """The intra-node constants: NVLink scale by link slug, harness floor (s) by harness."""
        return {"intra_scale": dict(self.intra_scale), "harness_floor": dict(self.harness_floor)}

    def inter(self) -> dict[str, dict[str, float]]:
        """The inter-node constants: scale and per-call latency (s) by network type."""
        return {"network_scale": dict(self.network_scale), "network_latency": dict(self.network_latency)}


def _nccl(sweep: AllReduceSweep, intra: float, inter: float) -> np.ndarray:
    """NCCL's tuned time on the sweep's system, NVLink scaled by ``intra`` and the network by ``inter``."""
    system = SYSTEMS[sweep.name]
    net = None if system.inter_link is None else scaled_link(system.inter_link, inter)
    choice = tune_allreduce(
        sweep.size, sweep.gpus, scaled_link(system.link, intra), system.nodes, net, system.nics_per_node
    )
    return np.asarray(choice.time, dtype=float)


def _fit_scale(group: list[tuple[AllReduceSweep, np.ndarray]], model) -> float | None:
    picked = [(s, m & (s.size >= SCALE_FROM)) for s, m in group]
    picked = [(s, m) for s, m in picked if m.any()]
    if not picked:
        return None

    def loss(grid: np.ndarray) -> np.ndarray:
        return np.array(
            [sum(float(np.sum(np.log(model(s, float(e))[m] / s.time[m]) ** 2)) for s, m in picked) for e in grid]
        )

    return float(minimise(loss, 0.05, 20.0, log=True))


def _fit_excess(group: list[tuple[AllReduceSweep, np.ndarray]], model) -> float | None:
    excess = [s.time[m] - model(s)[m] for s, m in ((s, m & (s.size <= FLOOR_UP_TO)) for s, m in group) if m.any()]
    return float(np.median(np.concatenate(excess))) if excess else None


def _by(items: dict[str, Any], key) -> dict[str, list]:
    out: dict[str, list] = {}
    for name, item in items.items():
        out.setdefault(key(name), []).append(item)
    return out


def calibrate_two_level(sweeps: dict[str, AllReduceSweep], masks: dict[str, Any] | None = None) -> TwoLevelFit:
    """Fit each level on its own sweeps, at the sizes ``masks`` selects (every size by default).

    Intra-node: single-node sweeps; a scale per NVLink slug (squared log
    error over its sweeps' sizes of at least :data:`SCALE_FROM`), then a
    floor per harness (the median excess over that model up to
    :data:`FLOOR_UP_TO`). Inter-node: multi-node sweeps, NVLink at the
    catalogue's rate; a scale and a per-call latency per network type, the
    same way. The sweeps must be modelled (:data:`SYSTEMS`).
    """
    chosen = {}
    for name, sweep in sweeps.items():
        if name not in SYSTEMS:
            raise ValueError(f"sweeps must be modelled (lib.validation.allreduce.SYSTEMS), got {name!r}")
        mask = np.ones(sweep.size.shape, bool) if masks is None else np.asarray(masks[name], dtype=bool)
        chosen[name] = (sweep, mask)
    single = {n: sm for n, sm in chosen.items() if SYSTEMS[n].nodes == 1}
    multi = {n: sm for n, sm in chosen.items() if SYSTEMS[n].nodes > 1}

    intra_scale = {}
    for link, group in _by(single, lambda n: SYSTEMS[n].link).items():
        fitted = _fit_scale(group, lambda s, e: _nccl(s, e, 1.0))
        if fitted is not None:
            intra_scale[link] = fitted
    floor = {}
    for harness, group in _by(single, harness_of).items():
        fitted = _fit_excess(group, lambda s: _nccl(s, intra_scale.get(SYSTEMS[s.name].link, 1.0), 1.0))
        if fitted is not None:
            floor[harness] = fitted

    network_scale, latency = {}, {}
    for network, group in _by(multi, NETWORK_OF.__getitem__).items():
        fitted = _fit_scale(group, lambda s, e: _nccl(s, 1.0, e))
        if fitted is not None:
            network_scale[network] = fitted
        scale = network_scale.get(network, 1.0)
        excess = _fit_excess(group, lambda s, scale=scale: _nccl(s, 1.0, scale))
        if excess is not None:
            latency[network] = excess
    return TwoLevelFit(intra_scale, floor, network_scale, latency)


def predict_two_level(fit: TwoLevelFit, sweep: AllReduceSweep) -> np.ndarray:
    """Times (s) of ``sweep``'s sizes under ``fit``: each level's scale on its own links, plus the floor.

    The floor is the harness's on one node and the network's latency across
    nodes (the harness's where that network has none); never below zero.
    """
    system = SYSTEMS[sweep.name]
    network = NETWORK_OF.get(sweep.name)
    t = _nccl(sweep, fit.intra_scale.get(system.link, 1.0), fit.network_scale.get(network, 1.0))
    extra = fit.harness_floor.get(harness_of(sweep.name), 0.0)
    if system.nodes > 1:
        extra = fit.network_latency.get(network, extra)
    return np.maximum(t + extra, 0.0)


def _modelled() -> dict[str, AllReduceSweep]:
    return {name: allreduce_sweep(name) for name in SYSTEMS}


def validate_two_level(sweeps: dict[str, AllReduceSweep] | None = None) -> Validation:
    """Chapter 11's pre-registered all-reduce split with the two-level model: one fit, calibration sizes only.

    Every modelled sweep's calibration regime (:func:`lib.validation.splits.allreduce_roles`)
    goes into one :func:`calibrate_two_level`; records as
    :func:`lib.validation.report.validate_allreduce`'s (``role``, ``error``, ``in_band``).
    """
    sweeps = _modelled() if sweeps is None else sweeps
    roles = {name: allreduce_roles(s.size) for name, s in sweeps.items()}
    fit = calibrate_two_level(sweeps, {name: r == "calibration" for name, (r, _) in roles.items()})
    records = [
        record
        for name, sweep in sweeps.items()
        for record in _sweep_records(name, sweep, predict_two_level(fit, sweep), *roles[name])
    ]
    return Validation("allreduce", tuple(records), _constants(fit))


def _sweep_records(name: str, sweep: AllReduceSweep, predicted: Any, role: Any, doublings: Any, **extra: Any) -> list:
    """One record per size of ``sweep``, as :func:`lib.validation.report.validate_allreduce` writes them."""
    return [
        dict(
            dataset=name,
            size=float(size),
            measured=float(sweep.time[i]),
            predicted=float(predicted[i]),
            error=float(relative_error(predicted[i], sweep.time[i])),
            role=str(role[i]),
            distance=float(doublings[i]),
            in_band=bool(BAND[0] <= size <= BAND[1]),
            **extra,
        )
        for i, size in enumerate(sweep.size)
    ]


def _constants(fit: Any) -> dict:
    """A two-level fit's constants, flat: ``"<level>.<name>"``."""
    return {f"{k}.{n}": v for k, d in {**fit.intra(), **fit.inter()}.items() for n, v in d.items()}


def leave_one_system_out(sweeps: dict[str, AllReduceSweep] | None = None) -> list[dict]:
    """Each modelled system predicted at every size from constants fitted on every size of the others only.

    One row per system: its harness and network, the constants it could
    borrow (``borrowed``: which of its terms had another sweep to come
    from), and the median ``|e|`` over all its sizes and over the band;
    ``as_is`` is NCCL's model with nothing fitted, for reference.

    >>> rows = leave_one_system_out()
    >>> [r["system"] for r in rows][:2]
    ['allreduce_a100_8gpu_mle', 'allreduce_h100_8gpu_aws_p5']
    """
    sweeps = _modelled() if sweeps is None else sweeps
    rows = []
    for name, sweep in sweeps.items():
        fit = calibrate_two_level({n: s for n, s in sweeps.items() if n != name})
        system, network, harness = SYSTEMS[name], NETWORK_OF.get(name), harness_of(name)
        borrowed = [
            term
            for term, found in (
                ("NVLink scale", system.link in fit.intra_scale),
                ("harness floor", harness in fit.harness_floor and system.nodes == 1),
                ("network scale", network in fit.network_scale),
                ("network latency", network in fit.network_latency),
            )
            if found
        ]
        e = np.abs(relative_error(predict_two_level(fit, sweep), sweep.time))
        as_is = np.abs(relative_error(_nccl(sweep, 1.0, 1.0), sweep.time))
        band = (sweep.size >= BAND[0]) & (sweep.size <= BAND[1])
        rows.append(
            dict(
                system=name,
                harness=harness,
                network=network or "none (one node)",
                borrowed=tuple(borrowed),
                n=int(sweep.size.size),
                median=float(np.median(e)),
                band_median=float(np.median(e[band])) if band.any() else float("nan"),
                as_is=float(np.median(as_is)),
            )
        )
    return rows


def two_level_scores(validation: Validation | None = None) -> dict[str, Score]:
    """Held-out scores of the pre-registered split with the two-level model: every size, and the band.

    >>> s = two_level_scores()
    >>> s["allreduce"].n == s["allreduce"].n and s["allreduce_band"].n <= s["allreduce"].n
    True
    """
    v = validate_two_level() if validation is None else validation
    return {"allreduce": score(v.held_out()), "allreduce_band": score(v.held_out(in_band=True))}


def sweep_floors(fit: TwoLevelFit, sweeps: dict[str, AllReduceSweep]) -> dict[str, tuple[float, str]]:
    """Each sweep's floor under :data:`lib.validation.splits.FLOOR_SPLIT`: ``{name: (seconds, where from)}``.

    A sweep with sizes of at most :data:`lib.validation.splits.FLOOR_SIZES_UP_TO`
    measures its own: the median excess of those sizes over ``fit``'s scaled
    model without any floor (``"own"``). Any other borrows the median of the
    own floors of the sweeps with its harness on one node, or its network
    across nodes (``"borrowed"``), or has none (``"none"``: NCCL's constants).
    """
    bare = replace(fit, harness_floor={}, network_latency={})
    own = {}
    for name, sweep in sweeps.items():
        pick = allreduce_floor_roles(sweep.size)[0] == "floor"
        if pick.any():
            own[name] = float(np.median(sweep.time[pick] - predict_two_level(bare, sweep)[pick]))

    def group(name: str) -> tuple[str, str]:
        return ("network", NETWORK_OF[name]) if SYSTEMS[name].nodes > 1 else ("harness", harness_of(name))

    out = {}
    for name in sweeps:
        if name in own:
            out[name] = (own[name], "own")
            continue
        lenders = [v for n, v in own.items() if group(n) == group(name)]
        out[name] = (float(np.median(lenders)), "borrowed") if lenders else (0.0, "none")
    return out


def validate_floor_split(sweeps: dict[str, AllReduceSweep] | None = None) -> Validation:
    """Chapter 11's second all-reduce split (:data:`lib.validation.splits.FLOOR_SPLIT`) with the two-level model.

    The scales come from every sweep's large-message regime, as in
    :func:`validate_two_level`; each sweep's floor from its sizes up to 1 KiB
    (:func:`sweep_floors`). Records as :func:`validate_two_level`'s, with
    ``role`` ``"floor"`` for the floor sizes and ``floor_from`` per sweep.
    """
    sweeps = _modelled() if sweeps is None else sweeps
    first = {name: allreduce_roles(s.size)[0] == "calibration" for name, s in sweeps.items()}
    fit = replace(calibrate_two_level(sweeps, first), harness_floor={}, network_latency={})
    floors = sweep_floors(fit, sweeps)
    records = []
    for name, sweep in sweeps.items():
        floor, where = floors[name]
        predicted = np.maximum(predict_two_level(fit, sweep) + floor, 0.0)
        records += _sweep_records(name, sweep, predicted, *allreduce_floor_roles(sweep.size), floor_from=where)
    constants = _constants(fit)
    constants.update({f"floor.{name}": value for name, (value, _) in floors.items()})
    return Validation("allreduce", tuple(records), constants)


def floor_split_scores(validation: Validation | None = None) -> dict[str, Score]:
    """Held-out scores under the second split: every held-out size above 1 KiB, and the band.

    >>> s = floor_split_scores()
    >>> s["allreduce_band"].n <= s["allreduce"].n
    True
    """
    v = validate_floor_split() if validation is None else validation
    return {"allreduce": score(v.held_out()), "allreduce_band": score(v.held_out(in_band=True))}


def band_diagnosis(first: Validation | None = None, second: Validation | None = None) -> list[dict]:
    """Per modelled system, the held-out sizes in the band under both splits: which way, and which term.

    One row per system: ``harness``, ``n`` (held-out band sizes), ``first``
    and ``second`` (median signed error under :func:`validate_two_level` and
    :func:`validate_floor_split`), ``first_abs`` and ``second_abs`` (median
    ``|e|``), ``latency_share`` (median share of NCCL's latency term in the
    scaled model's time there, before any floor), ``picks`` (the tuner's
    algorithm/protocol pairs there), ``smallest`` (bytes, the smallest such
    size) with ``smallest_measured`` and ``smallest_model`` (s, first split),
    ``floor`` (s) and ``floor_from``.

    >>> rows = band_diagnosis()
    >>> [r["floor_from"] for r in rows]
    ['none', 'own', 'none', 'none', 'own', 'own', 'borrowed']
    """
    first = validate_two_level() if first is None else first
    second = validate_floor_split() if second is None else second
    c = first.constants
    rows = []
    for name in SYSTEMS:

        def band(v: Validation, key: str = "error", name: str = name) -> np.ndarray:
            return np.array(v.held_out(key, dataset=name, in_band=True), dtype=float)

        sizes, system = band(first, "size"), SYSTEMS[name]
        net = None if system.inter_link is None else scaled_link(system.inter_link, c["network_scale.efa"])
        link = scaled_link(system.link, c.get(f"intra_scale.{system.link}", 1.0))
        choice = tune_allreduce(sizes, 8 * system.nodes, link, system.nodes, net, system.nics_per_node)
        pairs = sorted({f"{a}/{p}" for a, p in zip(choice.algorithm.tolist(), choice.protocol.tolist())})
        rows.append(
            dict(
                system=name,
                harness=harness_of(name),
                n=int(sizes.size),
                first=float(np.median(band(first))),
                first_abs=float(np.median(np.abs(band(first)))),
                second=float(np.median(band(second))),
                second_abs=float(np.median(np.abs(band(second)))),
                latency_share=float(np.median(choice.latency / choice.time)),
                smallest=float(sizes[0]),
                smallest_measured=float(band(first, "measured")[0]),
                smallest_model=float(band(first, "predicted")[0]),
                picks=tuple(pairs),
                floor=float(second.constants[f"floor.{name}"]),
                floor_from=next(r["floor_from"] for r in second.records if r["dataset"] == name),
            )
        )
    return rows
