"""The six cases of the time-budget chapter, as data and as a command.

Introduced in chapters 2 and 3. ``run()`` evaluates the toy network and the
six scenarios (base, small job, slow link, fast link, long serial, and the
divisible time exactly at break-even) and returns plain numbers, so that the
same results can be printed, stored as JSON and glued into the book.

>>> result = run()
>>> result["matrix"]["full"]
[-3, 9]
>>> [(case["name"], round(case["two_ms"], 3)) for case in result["cases"]][:2]
[('base', 9.22), ('small job', 2.345)]

Command line: ``python -m lib.experiment --json cases.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from lib import toy
from lib.breakeven import break_even_divisible
from lib.budget import Phase
from lib.collectives import startup_time
from lib.units import GB, MB, ms, s

__all__ = ["BASE", "BASE_LINK", "base_startup", "scenarios", "run", "main"]

#: The base case: 0.8 ms serial, 12 ms divisible at 80 % efficiency over two
#: devices, four transfers of 2 MB at 10 GB/s with 0.03 ms startup each.
BASE = Phase(
    serial=0.8 * ms,
    divisible=12 * ms,
    efficiency=0.8,
    transfers=4,
    startup=0.03 * ms,
    transfer_bytes=2 * MB,
    bandwidth=10 * GB / s,
    devices=2,
)


#: The class of link whose startup proportions the base case borrows (a 10 GB/s link is PCIe-like).
BASE_LINK = "pcie4"


def base_startup(devices):
    """Startup of one of the base case's all-reduces over ``devices`` devices, in seconds.

    The book's startup model (chapter 5): a base latency plus one latency per
    ring step, ``l0 + 2 (K - 1) delta``, in the proportions NCCL's tuner uses
    for a ring with the Simple protocol on a PCIe-class link (8.4 us base,
    5.7 us per step), scaled so that two devices give the base case's
    0.03 ms. Zero for one device. Broadcasts over ``devices``.

    >>> from lib.units import us
    >>> round(base_startup(2) / us, 6), base_startup(1)
    (30.0, 0.0)
    >>> round(base_startup(16) / us, 1)
    271.8
    """
    scale = BASE.startup / startup_time("allreduce", 2, BASE_LINK, protocol="Simple")
    return startup_time("allreduce", devices, BASE_LINK, protocol="Simple") * scale


def scenarios(base: Phase = BASE) -> list[tuple[str, Phase]]:
    """The six named variations of ``base``, each changing one assumption.

    >>> [name for name, _ in scenarios()]
    ['base', 'small job', 'slow link', 'fast link', 'long serial', 'break-even']
    """
    return [
        ("base", base),
        ("small job", base.with_(divisible=1 * ms)),
        ("slow link", base.with_(bandwidth=1 * GB / s)),
        ("fast link", base.with_(bandwidth=50 * GB / s)),
        ("long serial", base.with_(serial=100 * ms)),
        ("break-even", base.with_(divisible=break_even_divisible(base))),
    ]


def run() -> dict:
    """The toy network's outputs and the six cases as plain numbers.

    Returns
    -------
    dict
        ``{"matrix": {"full": [...], "parts": [[...], ...]}, "cases": [...]}``
        where each case has ``name``, ``one_ms``, ``two_ms`` and ``speedup``.
    """
    parts = toy.split_forward(toy.X, toy.A, toy.B)
    return {
        "matrix": {
            "full": toy.forward(toy.X, toy.A, toy.B)[0].tolist(),
            "parts": [part[0].tolist() for part in parts],
        },
        "cases": [
            {
                "name": name,
                "one_ms": phase.one_device_time / ms,
                "two_ms": phase.split_time / ms,
                "speedup": phase.speedup,
            }
            for name, phase in scenarios()
        ],
    }


def main(argv: list[str] | None = None) -> None:
    """Print the six cases; with ``--json PATH`` also write them there."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the results to this JSON file")
    args = parser.parse_args(argv)
    result = run()
    print("toy network output:", result["matrix"]["full"])
    print(f"{'case':<12} {'T1 (ms)':>10} {'T2 (ms)':>10} {'speedup':>8}")
    for case in result["cases"]:
        print(f"{case['name']:<12} {case['one_ms']:>10.4f} {case['two_ms']:>10.4f} {case['speedup']:>8.4f}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
