"""How busy the machine was while a run measured: its own ranks against everything else.

Introduced in chapter 10 (measure it). A timing on a shared machine depends
on what else runs. :func:`snapshot` reads the clock, the CPU seconds the whole
machine has spent busy (from ``psutil``, summed over cores; ``None`` without
it), the seconds the hypervisor gave this virtual machine's cores to someone
else (*steal*), the cores' current clock frequency, this process's own CPU
seconds (all its threads) and the load average.
:func:`load_between` turns two snapshots and the ranks' CPU seconds into
average numbers of busy cores: the run's ranks, and other programs;
:func:`combine_loads` averages several such intervals (the passes over one
hidden size) weighted by their wall time.

>>> first = {"wall_s": 0.0, "machine_busy_s": 10.0, "process_cpu_s": 0.0, "loadavg": [0.5, 0.4, 0.3]}
>>> last = {"wall_s": 2.0, "machine_busy_s": 13.0, "process_cpu_s": 1.0, "loadavg": [1.5, 0.6, 0.4]}
>>> load = load_between(first, last, ranks_cpu_s=2.0, cores=2)
>>> load["machine_busy_cores"], load["ranks_busy_cores"], load["other_busy_cores"], load["cpu_percent"]
(1.5, 1.0, 0.5, 75.0)
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from lib import _checks

__all__ = ["snapshot", "load_between", "combine_loads"]


def snapshot() -> dict[str, Any]:
    """The clock, the machine's busy CPU seconds, this process's CPU seconds and the load average.

    Busy time is user, nice, system, irq and softirq time (guest time is
    already inside user time; steal is kept apart: the core was not ours).

    >>> sorted(snapshot())
    ['cpu_mhz', 'loadavg', 'machine_busy_s', 'process_cpu_s', 'steal_s', 'wall_s']
    """
    busy = steal = mhz = None
    try:
        import psutil

        times = psutil.cpu_times()
        busy = float(sum(getattr(times, name, 0.0) for name in ("user", "nice", "system", "irq", "softirq")))
        steal = float(getattr(times, "steal", 0.0))
        frequency = psutil.cpu_freq()
        mhz = float(frequency.current) if frequency and frequency.current > 0 else None
    except (ImportError, OSError, AttributeError):  # psutil is in requirements.txt; the run must not need it
        pass
    return {
        "wall_s": time.monotonic(),
        "machine_busy_s": busy,
        "steal_s": steal,
        "cpu_mhz": mhz,
        "process_cpu_s": time.process_time(),
        "loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


def load_between(first: dict[str, Any], last: dict[str, Any], ranks_cpu_s: float, cores: int) -> dict[str, Any]:
    """Average busy cores between two :func:`snapshot` readings.

    Parameters
    ----------
    first, last : dict
        Snapshots taken before and after, on the same machine.
    ranks_cpu_s : float
        CPU seconds the run's ranks spent in between, summed over ranks.
    cores : int
        Cores of the machine (for ``cpu_percent``).

    Returns
    -------
    dict
        ``wall_s``; ``machine_busy_cores`` (all programs), ``ranks_busy_cores``
        (the run), ``other_busy_cores`` (the difference, never below 0) and
        ``cpu_percent`` (``100 * machine_busy_cores / cores``), and
        ``steal_cores`` (cores' worth of time the hypervisor gave to other
        machines); the busy figures are ``None`` when the machine's CPU times
        were unavailable. ``loadavg_end`` is the one-, five- and
        fifteen-minute load average at ``last``, ``cpu_mhz_end`` the clock
        frequency then.

    >>> load_between({"wall_s": 1.0}, {"wall_s": 1.0}, 0.0, 2)
    Traceback (most recent call last):
    ...
    ValueError: wall time between the snapshots must be > 0, got 0.0
    """
    wall = float(last["wall_s"]) - float(first["wall_s"])
    if not wall > 0:
        raise ValueError(f"wall time between the snapshots must be > 0, got {wall!r}")
    ranks = float(_checks.nonnegative("ranks_cpu_s", ranks_cpu_s)) / wall
    n = _checks.scalar_count("cores", cores, minimum=1)
    result: dict[str, Any] = {
        "wall_s": wall,
        "machine_busy_cores": None,
        "ranks_busy_cores": ranks,
        "other_busy_cores": None,
        "cpu_percent": None,
        "steal_cores": None,
        "loadavg_end": last.get("loadavg"),
        "cpu_mhz_end": last.get("cpu_mhz"),
    }
    if first.get("machine_busy_s") is not None and last.get("machine_busy_s") is not None:
        machine = (float(last["machine_busy_s"]) - float(first["machine_busy_s"])) / wall
        result.update(
            machine_busy_cores=machine, other_busy_cores=max(0.0, machine - ranks), cpu_percent=100.0 * machine / n
        )
    if first.get("steal_s") is not None and last.get("steal_s") is not None:
        result["steal_cores"] = max(0.0, float(last["steal_s"]) - float(first["steal_s"])) / wall
    return result


def combine_loads(loads: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Several :func:`load_between` results as one, each busy figure weighted by its ``wall_s``.

    A figure that is ``None`` (or missing) in any interval is ``None`` in the
    result; ``loadavg_end`` and ``cpu_mhz_end`` are the last interval's.

    >>> first = {"wall_s": 1.0, "machine_busy_cores": 2.0, "ranks_busy_cores": 1.0, "other_busy_cores": 1.0,
    ...          "cpu_percent": 100.0, "loadavg_end": [2.0, 1.0, 1.0]}
    >>> second = {"wall_s": 3.0, "machine_busy_cores": 1.0, "ranks_busy_cores": 1.0, "other_busy_cores": 0.0,
    ...           "cpu_percent": 50.0, "loadavg_end": [1.0, 1.0, 1.0]}
    >>> combined = combine_loads([first, second])
    >>> combined["wall_s"], combined["other_busy_cores"], combined["cpu_percent"], combined["loadavg_end"]
    (4.0, 0.25, 62.5, [1.0, 1.0, 1.0])
    """
    if not loads:
        raise ValueError("loads must hold at least one interval, got 0")
    wall = sum(float(load["wall_s"]) for load in loads)
    result: dict[str, Any] = {
        "wall_s": wall,
        "loadavg_end": loads[-1].get("loadavg_end"),
        "cpu_mhz_end": loads[-1].get("cpu_mhz_end"),
    }
    for key in ("machine_busy_cores", "ranks_busy_cores", "other_busy_cores", "cpu_percent", "steal_cores"):
        values = [load.get(key) for load in loads]
        result[key] = (
            None
            if any(v is None for v in values)
            else sum(float(v) * float(load["wall_s"]) for v, load in zip(values, loads)) / wall
        )
    return result
