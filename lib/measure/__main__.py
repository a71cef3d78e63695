"""Command line: ``python -m lib.measure --devices 2 --backend auto --json PATH [--quick]``.

Introduced in chapter 10 (measure it). Started from a shell, it launches the
ranks itself; started by ``torchrun`` (which sets ``RANK`` and
``WORLD_SIZE``), every process runs the protocol directly, so the same
command spans several GPUs or machines::

    torchrun --nproc-per-node 2 -m lib.measure --devices 2 --json out.json

Rank 0 prints one progress line per step, then the final table, and writes
the JSON. Exit status 2 for bad arguments, 1 when a rank fails or times out.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from lib.measure import MeasureError, format_table, resolve_backend, run
from lib.measure.launch import under_torchrun

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m lib.measure",
        description=(
            "Calibrate the link and the shard efficiency, then time a two-layer MLP whole on one rank and "
            "split over K ranks, and compare the measured split time with the book's prediction."
        ),
    )
    parser.add_argument("--devices", type=int, default=2, help="number of ranks K (at least 2)")
    parser.add_argument(
        "--backend",
        default="auto",
        choices=["auto", "gloo", "nccl"],
        help="auto: NCCL when there are at least K CUDA devices, else gloo on 127.0.0.1",
    )
    parser.add_argument("--json", type=Path, required=True, help="where to write the result")
    size = parser.add_mutually_exclusive_group()
    size.add_argument(
        "--quick",
        action="store_true",
        help="a short sweep (under two minutes on two cores, several sizes with T2 >= 5 ms)",
    )
    size.add_argument("--plan", choices=["full", "quick", "tiny"], help="the sweep to run (default: full)")
    parser.add_argument("--threads", type=int, default=1, help="compute threads per rank (default 1)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds before every rank is ended")
    return parser


def _under_torchrun(args: argparse.Namespace, plan: str) -> dict | None:
    from lib.measure.launch import close_worker, init_worker
    from lib.measure.worker import run_protocol

    world = int(os.environ["WORLD_SIZE"])
    if args.devices != world:
        raise ValueError(f"devices must equal torchrun's WORLD_SIZE ({world}), got {args.devices}")
    local = int(os.environ.get("LOCAL_WORLD_SIZE", world))
    backend = resolve_backend(world, args.backend, local=local)
    ctx = init_worker(backend, args.timeout, args.threads)
    result = run_protocol(ctx, {"plan": plan}, args.threads)
    close_worker()
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv``, run, print the table, write the JSON; return the exit status."""
    args = _parser().parse_args(argv)
    plan = "quick" if args.quick else (args.plan or "full")
    try:
        if under_torchrun():
            result = _under_torchrun(args, plan)
        else:
            result = run(args.devices, plan, args.backend, timeout=args.timeout, threads=args.threads)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except MeasureError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if result is None:  # a torchrun rank other than 0
        return 0
    result["command"] = "python -m lib.measure " + " ".join(sys.argv[1:] if argv is None else argv)
    print(format_table(result))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
