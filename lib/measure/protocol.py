"""The measurement protocol every rank runs: calibrate the link, then sweep the MLP.

Introduced in chapter 10 (measure it). Fixed shapes, dtype and thread count;
warm-up repetitions apart from timed ones; a barrier before each timed
repetition; device work waited for before the clock stops; and per
repetition the time of the *slowest* rank (an all-reduce with ``MAX`` of the
per-rank times), because the split finishes only when its last rank does.

Steps, in order:

1. many repetitions of an all-reduce at the MLP's own message size (its
   latency distribution);
2. ``plan.passes`` passes through the sweep, upwards, then downwards, and so
   on; each pass times its share of the repetitions of every step below, so
   that every size samples the background load of the whole run:

   a. link calibration: all-reduces of every size in ``plan.link_sizes``;
   b. for each hidden size, in interleaved rounds (one repetition of each
      step per round, so all steps meet the same background load): the
      efficiency calibration (whole layer on rank 0 alone; a 1/K shard on all
      ranks at once, no communication), an all-reduce of the layer's message
      size, and the experiment (``T1``: whole layer on rank 0 alone; ``T2``:
      shard plus the all-reduce on all ranks); in the first pass the split
      output is also checked against the whole.

Every repetition is kept (rounded to the nanosecond) so that the analysis can
bootstrap its medians, and around every hidden size the machine's load is read
(:mod:`lib.measure.load`): how many cores the ranks kept busy, and how many
other programs did.

Only :data:`PLANS` and :class:`Plan` are pure; :func:`measure` needs an
initialised ``torch.distributed`` process group.

>>> PLANS["quick"].hidden[0] < PLANS["quick"].hidden[-1]
True
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from lib.measure.load import combine_loads, load_between, snapshot
from lib.measure.model import efficiency
from lib.measure.stats import summarize
from lib.units import KB, MB, ms

__all__ = ["Plan", "PLANS", "measure", "machine_description"]


@dataclass(frozen=True)
class Plan:
    """Shapes, sizes and repetition rules of one run (all sizes in bytes or elements).

    ``budget_s`` and ``point_budget_s`` are the seconds aimed at per link
    size and per hidden size, ``min_reps`` and ``max_reps`` bound the rounds;
    all four are totals over the ``passes`` passes through the sweep.
    """

    name: str
    hidden: tuple[int, ...]
    link_sizes: tuple[int, ...]
    batch: int = 32
    width: int = 1024
    warmup: int = 3
    min_reps: int = 10
    max_reps: int = 200
    budget_s: float = 0.4
    point_budget_s: float = 2.0
    matched_reps: int = 200
    seed: int = 0
    passes: int = 1

    def as_dict(self) -> dict[str, Any]:
        """The plan as JSON-ready values.

        >>> PLANS["tiny"].as_dict()["width"]
        1024
        """
        return {key: list(value) if isinstance(value, tuple) else value for key, value in asdict(self).items()}


def _sweep(low: int, high: int) -> tuple[int, ...]:
    """Hidden sizes 64, 96, 128, 192, ...: powers of two and 1.5 times them."""
    sizes, size = [], low
    while size <= high:
        sizes.append(size)
        if size * 3 // 2 <= high:
            sizes.append(size * 3 // 2)
        size *= 2
    return tuple(sizes)


#: ``full`` is the committed run of chapter 10; ``quick`` the CLI's ``--quick``
#: (under two minutes on two cores, with several sizes whose ``T2`` is 5 ms
#: or more even on a CPU twice as fast); ``tiny`` the chapter's live run,
#: whose link sizes reach well past the latency floor (about 0.6 MB on two
#: CPU ranks) so that noise cannot hide the bandwidth term from the fit.
#: Every plan has at least four hidden sizes, two per fold of the held-out
#: prediction.
PLANS = {
    "full": Plan(
        name="full",
        hidden=_sweep(64, 65536),
        link_sizes=tuple(int(4**i * KB) for i in range(9)),
        budget_s=0.8,
        min_reps=32,
        max_reps=400,
        matched_reps=400,
        point_budget_s=4.0,
        passes=4,
    ),
    "quick": Plan(
        name="quick",
        hidden=(64, 256, 1024, 2048, 4096, 8192, 16384, 32768),
        link_sizes=tuple(int(4**i * KB) for i in range(7)),
        budget_s=0.3,
        min_reps=15,
        max_reps=210,
        matched_reps=200,
        point_budget_s=2.0,
        passes=3,
    ),
    "tiny": Plan(
        name="tiny",
        hidden=(128, 512, 2048, 8192),
        link_sizes=(int(4 * KB), int(1 * MB), int(8 * MB)),
        budget_s=0.08,
        warmup=2,
        min_reps=5,
        max_reps=40,
        matched_reps=40,
        point_budget_s=0.5,
    ),
}


#: ``lscpu`` fields kept in a run's ``topology``: how the cores a run uses are laid out and shared.
TOPOLOGY_FIELDS = (
    "Model name",
    "Socket(s)",
    "Core(s) per socket",
    "Thread(s) per core",
    "NUMA node(s)",
    "L1d cache",
    "L2 cache",
    "L3 cache",
    "CPU max MHz",
    "Hypervisor vendor",
    "Virtualization type",
)


def cpu_topology() -> dict[str, str]:
    """The CPU's layout as ``lscpu`` prints it (the :data:`TOPOLOGY_FIELDS` it reports; ``{}`` without lscpu).

    Two ranks on two hyperthreads of one core share its caches and execution
    units; on a virtual machine the hypervisor's vendor says whose cores they
    are. Runs on different layouts are different experiments.

    >>> set(cpu_topology()) <= set(TOPOLOGY_FIELDS)
    True
    """
    try:
        out = subprocess.run(["lscpu", "-J"], capture_output=True, text=True, timeout=10, check=True).stdout
        entries = json.loads(out)["lscpu"]
    except (OSError, subprocess.SubprocessError, ValueError, KeyError):
        return {}
    found: dict[str, str] = {}

    def walk(items: list) -> None:
        for item in items:
            name = str(item.get("field", "")).rstrip(":")
            if name in TOPOLOGY_FIELDS and name not in found and item.get("data") is not None:
                found[name] = str(item["data"])
            walk(item.get("children", []))

    walk(entries)
    return found


def machine_description(backend: str, devices: int, threads: int) -> dict[str, Any]:
    """CPU, its topology and clock, GPUs, versions, backend and current load: what a reader needs to compare runs.

    >>> description = machine_description("gloo", 2, 1)
    >>> sorted(description)[:4]
    ['backend', 'cores', 'cpu', 'cpu_mhz']
    """
    import torch

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            names = [line.split(":", 1)[1].strip() for line in info if line.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    gpus = (
        [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []
    )
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "topology": cpu_topology(),
        "cpu_mhz": snapshot()["cpu_mhz"],
        "cuda_devices": gpus,
        "backend": backend,
        "devices": int(devices),
        "threads_per_rank": int(threads),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "dtype": "float32",
        "loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


class _Timer:
    """Timed repetitions on rank 0 alone or on all ranks together (see module docstring).

    A repetition of a step run together lasts from the earliest rank's start
    to the latest rank's end. On one machine the ranks share a monotonic
    clock, so this makespan counts a rank that started late (descheduled
    after the barrier); across machines, where clocks differ, the longest
    per-rank duration stands in for it.
    """

    _NOTHING = -1e300

    def __init__(self, ctx: Any, plan: Plan) -> None:
        import torch
        import torch.distributed as dist

        self.ctx, self.plan, self.torch, self.dist = ctx, plan, torch, dist
        self.shared_clock = int(os.environ.get("LOCAL_WORLD_SIZE", ctx.world)) == ctx.world

    def _span(self, fn: Callable[[], Any]) -> tuple[float, float]:
        start = time.perf_counter()
        fn()
        self.ctx.sync()
        return start, time.perf_counter()

    def _reps(self, probe: float, budget_s: float) -> int:
        """Rounds for one pass: the pass's share of the budget, within its share of the bounds."""
        share = self.plan.passes
        return int(
            np.clip(
                budget_s / share / max(probe, 1e-7), -(-self.plan.min_reps // share), -(-self.plan.max_reps // share)
            )
        )

    def together(self, fn: Callable[[], Any], reps: int | None = None) -> np.ndarray:
        """Every rank runs ``fn``; seconds per repetition, slowest rank included."""
        return self.interleaved([("fn", "together", fn)], self.plan.budget_s, reps)["fn"]

    def interleaved(
        self, steps: list[tuple[str, str, Callable[[], Any]]], budget_s: float, rounds: int | None = None
    ) -> dict[str, np.ndarray]:
        """Rounds of single repetitions of every step, in rotating order.

        ``steps`` holds ``(name, mode, fn)`` with mode ``"alone"`` (rank 0
        runs, the others wait at the next barrier) or ``"together"`` (every
        rank runs). A barrier precedes every repetition. Interleaving exposes
        every step to the same background load, so a calibration and the
        experiment it predicts see alike conditions. Returns seconds per
        step and round.
        """
        mine = [i for i, (_, mode, _) in enumerate(steps) if mode == "together" or self.ctx.rank == 0]
        for _ in range(self.plan.warmup):
            for i in mine:
                steps[i][2]()
        self.ctx.sync()
        self.dist.barrier()
        if rounds is None:
            probe = sum(np.subtract(*self._span(steps[i][2])[::-1]) for i in mine)
            rounds = self._reps(probe, budget_s)
        wanted = self.torch.tensor([rounds], dtype=self.torch.int64, device=self.ctx.device)
        self.dist.all_reduce(wanted, op=self.dist.ReduceOp.MIN)
        spans = np.full((3, len(steps), int(wanted.item())), self._NOTHING)
        for r in range(spans.shape[2]):
            for i in np.roll(np.arange(len(steps)), -r):
                self.dist.barrier()
                if i in mine:
                    start, end = self._span(steps[i][2])
                    spans[:, i, r] = (-start, end, end - start)
        packed = self.torch.from_numpy(spans).to(self.ctx.device)
        self.dist.all_reduce(packed, op=self.dist.ReduceOp.MAX)
        neg_start, end, duration = packed.cpu().numpy()
        seconds = end + neg_start if self.shared_clock else duration
        return {name: seconds[i] for i, (name, _, _) in enumerate(steps)}


def _size(n: float) -> str:
    return f"{n / MB:g} MB" if n >= MB else f"{n / KB:g} KB"


def _seconds(summary: dict[str, float]) -> dict[str, float]:
    """Summary keys with an ``_s`` suffix (they are seconds), ``n`` unchanged."""
    return {key if key == "n" else f"{key}_s": value for key, value in summary.items()}


def _kept(seconds: np.ndarray) -> list[float]:
    """Repetitions as JSON-ready seconds, rounded to the nanosecond."""
    return [round(float(value), 9) for value in seconds]


def _load(ctx: Any, first: dict[str, Any]) -> dict[str, Any] | None:
    """The machine's load since ``first`` (a :func:`snapshot` on every rank); rank 0 gets it."""
    import torch
    import torch.distributed as dist

    last = snapshot()
    mine = torch.tensor([last["process_cpu_s"] - first["process_cpu_s"]], dtype=torch.float64, device=ctx.device)
    dist.all_reduce(mine)
    return load_between(first, last, float(mine.item()), os.cpu_count() or 1) if ctx.rank == 0 else None


def _others(load: dict[str, Any] | None) -> str:
    busy = None if load is None else load["other_busy_cores"]
    return "" if busy is None else f", other programs {busy:.2f} cores"


def _ms(summary: dict[str, float]) -> str:
    return f"{summary['median'] / ms:.3f} ms (IQR {summary['q1'] / ms:.3f}-{summary['q3'] / ms:.3f})"


def measure(ctx: Any, plan: Plan) -> dict[str, Any] | None:
    """Run the whole protocol on this rank; rank 0 returns the raw timings.

    The returned dict holds the plan, the link timings per size, the matched
    all-reduce's distribution, and per hidden size the summaries of the whole
    and shard calibrations, ``T1``, ``T2``, every repetition, the load and
    the split's max abs error. The repetitions of every size and link size
    are spread over ``plan.passes`` passes through the whole sweep (upwards,
    then downwards, and so on), so that all sizes sample the background load
    of the whole run rather than of one stretch of it.
    """
    import torch
    import torch.distributed as dist

    from lib.measure import mlp

    start = snapshot()
    timer = _Timer(ctx, plan)
    k = ctx.world
    message = mlp.message_bytes(plan.batch, plan.width)
    ctx.log(
        f"{k} ranks, backend {ctx.backend}, {torch.get_num_threads()} thread(s) per rank, "
        f"plan {plan.name}: batch {plan.batch}, width {plan.width}, float32, {plan.passes} pass(es)"
    )
    buffer = torch.zeros(plan.batch * plan.width, dtype=torch.float32, device=ctx.device)
    matched_times = timer.together(lambda: dist.all_reduce(buffer), reps=plan.matched_reps)
    matched = summarize(matched_times)
    ctx.log(
        f"link   all-reduce {_size(message):>8} (the MLP's message): {_ms(matched)}, "
        f"p90 {matched['p90'] / ms:.3f} ms, {matched['n']} reps"
    )

    link_times: dict[int, list[np.ndarray]] = {size: [] for size in plan.link_sizes}
    point_times: dict[int, list[dict[str, np.ndarray]]] = {hidden: [] for hidden in plan.hidden}
    loads: dict[int, list[dict[str, Any]]] = {hidden: [] for hidden in plan.hidden}
    errors: dict[int, float] = {}
    for number in range(plan.passes):
        began = time.monotonic()
        for size in plan.link_sizes:
            link_buffer = torch.zeros(max(1, size // 4), dtype=torch.float32, device=ctx.device)
            link_times[size].append(timer.together(lambda: dist.all_reduce(link_buffer)))  # noqa: B023 (called here)
        for hidden in plan.hidden if number % 2 == 0 else plan.hidden[::-1]:
            before = snapshot()
            times, error = _point(ctx, timer, plan, hidden, buffer, check=number == 0)
            point_times[hidden].append(times)
            loads[hidden].append(_load(ctx, before))
            if error is not None:
                errors[hidden] = error
        ctx.log(f"pass {number + 1} of {plan.passes} took {time.monotonic() - began:.1f} s")

    link = []
    for size, parts in link_times.items():
        seconds = np.concatenate(parts)
        summary = summarize(seconds)
        link.append({"message_bytes": int(size), **_seconds(summary), "samples_s": _kept(seconds)})
        ctx.log(f"link   all-reduce {_size(size):>8}: {_ms(summary)}, {summary['n']} reps")
    points = []
    for hidden, parts in point_times.items():
        times = {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}
        load = combine_loads(loads[hidden]) if ctx.rank == 0 else None
        point = {
            "hidden": int(hidden),
            **{name: summarize(value) for name, value in times.items()},
            "max_abs_error": errors[hidden],
            "load": load,
            "samples_s": {name: _kept(value) for name, value in times.items()},
        }
        points.append(point)
        ctx.log(
            f"hidden {hidden:>6}: T1 {_ms(point['one'])}, T2 {_ms(point['split'])}, "
            f"eta {efficiency(point['whole_calib']['median'], point['shard_calib']['median'], k):.2f}, "
            f"max |split - whole| {point['max_abs_error']:.1e}{_others(load)}"
        )
    load = _load(ctx, start)
    if ctx.rank != 0:
        return None
    return {
        "plan": plan.as_dict(),
        "devices": k,
        "clock": "shared" if timer.shared_clock else "per-rank",
        "message_bytes": message,
        "link": link,
        "load": load,
        "matched": {"message_bytes": message, **_seconds(matched), "samples_s": _kept(matched_times)},
        "points": points,
    }


def _point(
    ctx: Any, timer: _Timer, plan: Plan, hidden: int, buffer: Any, check: bool
) -> tuple[dict[str, np.ndarray], float | None]:
    """One pass over one hidden size: its interleaved rounds, and (if ``check``) the split's max abs error."""
    import torch
    import torch.distributed as dist

    from lib.measure import mlp

    x, a, b = mlp.make_layer(plan.batch, plan.width, hidden, seed=plan.seed, device=ctx.device)
    a_k, b_k = mlp.shard(a, b, ctx.rank, ctx.world)

    def split() -> Any:
        partial = mlp.shard_forward(x, a_k, b_k)
        dist.all_reduce(partial)
        return partial

    times = timer.interleaved(
        [
            ("whole_calib", "alone", lambda: mlp.whole_forward(x, a, b)),
            ("shard_calib", "together", lambda: mlp.shard_forward(x, a_k, b_k)),
            ("allreduce", "together", lambda: dist.all_reduce(buffer)),
            ("one", "alone", lambda: mlp.whole_forward(x, a, b)),
            ("split", "together", split),
        ],
        plan.point_budget_s,
    )
    if not check:
        return times, None
    worst = torch.tensor(
        [float((split() - mlp.whole_forward(x, a, b)).abs().max())], dtype=torch.float64, device=ctx.device
    )
    dist.all_reduce(worst, op=dist.ReduceOp.MAX)
    return times, float(worst.item())
