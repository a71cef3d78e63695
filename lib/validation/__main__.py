"""Print chapter 11's median held-out errors: ``python -m lib.validation``.

>>> main([])  # doctest: +ELLIPSIS
all-reduce, NCCL's model calibrated on 2 sizes: median |error| ... % over 170 held-out sizes
...
"""

from __future__ import annotations

import argparse
import sys

from lib.validation.report import summary

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(prog="python -m lib.validation", description=__doc__.split("\n")[0]).parse_args(argv)
    s = summary()
    print(f"all-reduce, NCCL's model calibrated on 2 sizes: median |error| {100 * s['allreduce_calibrated']:.1f} % "
          f"over {s['allreduce_held_out']} held-out sizes (goal <= 10 %)")
    print(f"all-reduce, l + V/B through the same 2 sizes:   median |error| {100 * s['allreduce_line']:.1f} %")
    print(f"all-reduce, NCCL's model as is (nothing fitted): median |error| {100 * s['allreduce_as_is']:.1f} % "
          "over every size")
    print(f"decode, roofline with efficiencies from 1 GPU:  median |error| {100 * s['decode']:.1f} % "
          f"over {s['decode_held_out']} held-out figures (goal <= 15 %)")
    print(f"decode, plus a per-layer overhead (1 and 8 GPUs): median |error| {100 * s['decode_with_overhead']:.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
