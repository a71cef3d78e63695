"""Print the planner's table, or the throughput-latency frontier, for a model on a cluster.

Usage (``python -m lib.serving --help``)::

    python -m lib.serving --model llama-3-70b --device h100-sxm --devices 8 --batch 64
    python -m lib.serving --model llama-3-70b --device h100-sxm --devices 8 --frontier
"""

from __future__ import annotations

import argparse

from lib.hardware import DEVICES
from lib.serving.plan import best, frontier, plan
from lib.transformer import PRESETS
from lib.units import GB, ms


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m lib.serving", description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(PRESETS), default="llama-3-70b")
    parser.add_argument("--device", choices=sorted(DEVICES), default="h100-sxm")
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--batch", type=int, default=64, help="concurrent sequences across the cluster")
    parser.add_argument("--prompt", type=int, default=1024, help="prompt tokens per sequence")
    parser.add_argument("--output", type=int, default=256, help="generated tokens per sequence")
    parser.add_argument("--frontier", action="store_true", help="sweep the batch and print the Pareto frontier")
    args = parser.parse_args(argv)
    config = PRESETS[args.model]
    if args.frontier:
        _, front = frontier(config, args.device, args.devices, args.prompt, args.output)
        print(f"{config.name} on {args.devices} x {DEVICES[args.device].name}, prompt {args.prompt}, "
              f"output {args.output}: the throughput-latency frontier")
        print(f"{'layout':>14} {'batch':>6} {'tokens/s per user':>18} {'tokens/s per device':>20}")
        for point in front:
            print(f"{point.name:>14} {point.batch:>6} {point.tokens_per_s_per_user:>18.1f} "
                  f"{point.tokens_per_s_per_device:>20.1f}")
        return
    rows = plan(config, args.device, args.devices, args.batch, args.prompt, args.output)
    chosen = best(rows)
    print(f"{config.name} on {args.devices} x {DEVICES[args.device].name}, batch {args.batch}, "
          f"prompt {args.prompt}, output {args.output}")
    print(f"{'layout':>14} {'fits':>5} {'GB/device':>10} {'max batch':>10} {'TTFT ms':>8} {'TPOT ms':>8} "
          f"{'tok/s/dev':>10}  note")
    for row in rows:
        mark = "  <- best" if row is chosen else ""
        print(f"{row.name:>14} {'yes' if row.fits else 'no':>5} {row.memory_per_device / GB:>10.1f} "
              f"{row.max_batch:>10} {row.ttft / ms:>8.1f} {row.tpot / ms:>8.2f} {row.tokens_per_s_per_device:>10.1f}"
              f"  {row.reason}{mark}")


if __name__ == "__main__":
    main()
