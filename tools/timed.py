"""Time each part of ``make test`` and print where the time went.

``python -m tools.timed PART COMMAND...`` runs ``COMMAND``, prints how long
it took, and appends ``PART<TAB>seconds<TAB>exit status`` to :data:`LOG`;
it exits with the command's status. ``python -m tools.timed --start``
empties the log; ``python -m tools.timed --summary`` prints every part, the
total, and the total as a multiple of the part named :data:`REFERENCE` (one
strict nbval pass over the chapters), the yardstick of the test budget.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as tmp:
...     log = Path(tmp) / "times.tsv"
...     _ = log.write_text("unit\\t60.0\\t0\\nnbval\\t120.0\\t0\\nbrowser\\t180.0\\t0\\n")
...     print(summary(log))
part          seconds
unit             60.0
nbval           120.0
browser         180.0
total           360.0  (6.0 min; 3.00 x one nbval pass)
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

#: Where the parts' times of the current ``make test`` are kept.
LOG = Path("_build") / "test-times.tsv"

#: The part whose time is the unit of the budget (``make test`` at most 3.5 of it).
REFERENCE = "nbval"


def run(part: str, command: list[str], log: Path = LOG) -> int:
    """Run ``command``, print and log its wall time under ``part``; return its exit status."""
    start = time.perf_counter()
    status = subprocess.run(command).returncode
    seconds = time.perf_counter() - start
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf-8") as out:
        out.write(f"{part}\t{seconds:.1f}\t{status}\n")
    print(f"[make test] {part}: {seconds:.1f} s (exit {status})", flush=True)
    return status


def summary(log: Path = LOG) -> str:
    """The parts' times in ``log`` as a table, with the total and its ratio to :data:`REFERENCE`."""
    parts = [line.split("\t") for line in log.read_text(encoding="utf-8").splitlines() if line]
    times = {name: float(seconds) for name, seconds, _ in parts}
    total = sum(times.values())
    lines = [f"{'part':<12}{'seconds':>9}"] + [f"{name:<12}{seconds:>9.1f}" for name, seconds in times.items()]
    ratio = f"; {total / times[REFERENCE]:.2f} x one nbval pass" if times.get(REFERENCE) else ""
    lines.append(f"{'total':<12}{total:>9.1f}  ({total / 60:.1f} min{ratio})")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    usage = "usage: python -m tools.timed PART COMMAND... | --start | --summary"
    if argv == ["--start"]:
        LOG.unlink(missing_ok=True)
        return 0
    if argv == ["--summary"]:
        print(summary())
        return 0
    if len(argv) < 2 or argv[0].startswith("-"):
        print(usage, file=sys.stderr)
        return 2
    return run(argv[0], argv[1:])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
