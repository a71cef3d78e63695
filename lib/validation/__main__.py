"""Print chapter 11's held-out scores under the pre-registered splits: ``python -m lib.validation``.

One line per family (and the all-reduce band, the post-hoc form and the
band under the second split, and the previous edition's decode set): the split, the held-out count, the median
and 90th percentile of ``|e|``, the bootstrap 95 % interval of the median,
and whether the goal is met.

>>> main([])  # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
family ... held out  median |e|  p90 |e|  95 % interval (median)  goal  met
all-reduce ... 121 ...
all-reduce, 8 KiB-64 MiB ... 85 ...
all-reduce, post hoc ... 93 ...
all-reduce, floor split ... 85 ...
decode ... 554 ...
decode, FT + gpt-fast ... 230 ...
prefill ... 10 ...
under load ... 39 ...
"""

from __future__ import annotations

import argparse
import sys

from lib.validation.report import summary
from lib.validation.splits import POST_HOC, SPLITS

__all__ = ["ROWS", "main"]

#: What each printed line scores: (label, summary key, family of the split and goal, the split in words).
ROWS = (
    ("all-reduce", "allreduce", "allreduce", "large sizes (top 16x) -> sizes 4+ doublings below"),
    ("all-reduce, 8 KiB-64 MiB", "allreduce_band", "allreduce", "the same split, held-out sizes in the band"),
    ("all-reduce, post hoc", "allreduce_post_hoc", "allreduce", "plus the smallest size's floor (post hoc)"),
    ("all-reduce, floor split", "allreduce_floor_band", "allreduce", "two levels, floor from sizes <= 1 KiB; band"),
    ("decode", "decode", "decode", "TP 1 -> TP > 1 and other models"),
    ("decode, FT + gpt-fast", "decode_ft_gptfast", "decode", "the same split, the previous edition's data"),
    ("prefill", "prefill", "prefill", "LMDeploy TP 1 -> TP 2 and 4"),
    ("under load", "load", "load", "LMDeploy A100 TP 1 -> other engines, GPUs, TP"),
)


def main(argv: list[str] | None = None) -> int:
    """Print the table (``argv``: command-line arguments; none are taken)."""
    argparse.ArgumentParser(prog="python -m lib.validation", description=__doc__.split("\n")[0]).parse_args(argv)
    scores = summary()
    print(
        f"{'family':<26}{'split (calibration -> held out)':<52}{'held out':>9}{'median |e|':>12}{'p90 |e|':>9}"
        f"{'95 % interval (median)':>24}{'goal':>6}{'met':>5}"
    )
    for label, key, family, split in ROWS:
        s, goal = scores[key], SPLITS[family].goal
        low, high = s.median_interval
        print(
            f"{label:<26}{split:<52}{s.n:>9}{100 * s.median:>10.1f} %{100 * s.p90:>7.1f} %"
            f"{f'{100 * low:.1f} to {100 * high:.1f} %':>24}{100 * goal:>4.0f} %{'yes' if s.median <= goal else 'no':>5}"
        )
    print(f"post hoc (chosen after seeing residuals, reported beside): {POST_HOC['allreduce']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
