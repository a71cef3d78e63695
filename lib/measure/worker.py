"""The body of one rank: ``python -m lib.measure.worker`` (started by :func:`lib.measure.launch.launch`).

Introduced in chapter 10 (measure it). It reads its settings from the JSON
file named by ``LIB_MEASURE_CONFIG``, joins the process group from
torchrun's environment variables, runs its task and, on rank 0, writes the
result where the launcher reads it. Tasks:

- ``protocol``: the whole measurement (:func:`lib.measure.protocol.measure`)
  followed by :func:`lib.measure.report.analyse`;
- ``check``: one split forward pass against the whole, returning the max
  absolute error (the tests' numerical check).

``config["fault"] = {"rank": r, "mode": "exit" | "hang" | "kill"}`` makes
rank ``r`` fail on purpose after joining, so tests can check that the
launcher ends every rank.

>>> sorted(TASKS)
['check', 'protocol']
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = ["TASKS", "run_protocol", "run_check", "main"]


def run_protocol(ctx: Any, config: dict[str, Any], threads: int) -> dict[str, Any] | None:
    """Measure with the plan named in ``config["plan"]``; rank 0 returns the analysed result."""
    from lib.measure import protocol, report

    plan = protocol.PLANS[config.get("plan", "quick")]
    machine = protocol.machine_description(ctx.backend, ctx.world, threads) if ctx.rank == 0 else None
    raw = protocol.measure(ctx, plan)
    if ctx.rank != 0:
        return None
    machine["loadavg_end"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    return report.analyse(raw, machine)


def run_check(ctx: Any, config: dict[str, Any], threads: int) -> dict[str, Any] | None:
    """One split forward pass (shard, ReLU, shard, all-reduce) against the whole layer."""
    import torch.distributed as dist

    from lib.measure import mlp

    x, a, b = mlp.make_layer(
        config.get("batch", 4),
        config.get("width", 16),
        config.get("hidden", 32),
        seed=config.get("seed", 0),
        device=ctx.device,
    )
    partial = mlp.shard_forward(x, *mlp.shard(a, b, ctx.rank, ctx.world))
    dist.all_reduce(partial)
    whole = mlp.whole_forward(x, a, b)
    error = float((partial - whole).abs().max())
    return (
        {
            "max_abs_error": error,
            "devices": ctx.world,
            "backend": ctx.backend,
            "shape": list(partial.shape),
            "pid": os.getpid(),
        }
        if ctx.rank == 0
        else None
    )


TASKS: dict[str, Callable[[Any, dict[str, Any], int], dict[str, Any] | None]] = {
    "protocol": run_protocol,
    "check": run_check,
}


def _fault(ctx: Any, fault: dict[str, Any] | None) -> None:
    if not fault or int(fault.get("rank", -1)) != ctx.rank:
        return
    mode = fault.get("mode", "exit")
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "hang":
        while True:
            time.sleep(1)
    raise RuntimeError(f"rank {ctx.rank} failed on purpose (fault injection)")


def main() -> None:
    """Entry point of a worker started by the launcher."""
    from lib.measure.launch import CONFIG_ENV, close_worker, init_worker

    with open(os.environ[CONFIG_ENV]) as handle:
        settings = json.load(handle)
    ctx = init_worker(settings["backend"], settings["timeout"], settings["threads"])
    _fault(ctx, settings["config"].get("fault"))
    result = TASKS[settings["task"]](ctx, settings["config"], settings["threads"])
    if ctx.rank == 0:
        tmp = settings["result"] + ".tmp"
        with open(tmp, "w") as handle:
            json.dump(result, handle)
        os.replace(tmp, settings["result"])
    close_worker()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
