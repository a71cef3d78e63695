"""Time each part of ``make test`` and print where the time went.

``python -m tools.timed PART COMMAND...`` runs ``COMMAND``, prints how long
it took, and appends ``PART<TAB>seconds<TAB>exit status`` to :data:`LOG`;
it exits with the command's status. ``python -m tools.timed --together PART
'SHELL COMMAND' PART 'SHELL COMMAND'...`` runs the commands at once
(:func:`together`): a part that mostly waits (a browser loading pages) leaves
the cores to one that computes (the PDF). ``python -m tools.timed --start``
empties the log; ``python -m tools.timed --summary`` prints every part, the
total, and the total as a multiple of the part named :data:`REFERENCE` (one
strict nbval pass over the chapters), the yardstick of the test budget.
Parts run together count once in the total, by their wall time together.

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
import tempfile
import threading
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
    _write(log, f"{part}\t{seconds:.1f}\t{status}")
    print(f"[make test] {part}: {seconds:.1f} s (exit {status})", flush=True)
    return status


def _write(log: Path, line: str) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf-8") as out:
        out.write(line + "\n")


def together(parts: list[tuple[str, str]], log: Path = LOG) -> int:
    """Run each part's shell command at the same time; log each part's wall time and that of them all.

    The first part prints as it runs; the others' output is held back and
    printed when they end, so that the logs do not interleave. Each part is
    logged as beside the others (it does not add to the total), and the
    whole under the parts' names joined by ``" | "``. Returns the first
    non-zero exit status, in the parts' order, or 0.

    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     log = Path(tmp) / "times.tsv"
    ...     status = together([("a", "sleep 0.1"), ("b", "echo held; exit 3")], log)
    ...     rows = [line.split("\\t") for line in log.read_text().splitlines()]
    [make test] output of b, run beside a:
    held
    [make test] a: exit 0
    [make test] b: exit 3
    [make test] a | b: ... s together (exit 3)
    >>> status, [(row[0], row[2], row[3:]) for row in rows]
    (3, [('a', '0', ['beside b']), ('b', '3', ['beside a']), ('a | b', '3', [])])
    """
    start = time.perf_counter()
    held = [tempfile.TemporaryFile() for _ in parts[1:]]
    runs = [subprocess.Popen(["sh", "-c", parts[0][1]])] + [
        subprocess.Popen(["sh", "-c", command], stdout=out, stderr=subprocess.STDOUT)
        for (_, command), out in zip(parts[1:], held)
    ]
    ended = [0.0] * len(runs)

    def wait(i: int) -> None:
        runs[i].wait()
        ended[i] = time.perf_counter() - start

    waiters = [threading.Thread(target=wait, args=(i,)) for i in range(len(runs))]
    for waiter in waiters:
        waiter.start()
    for waiter in waiters:
        waiter.join()
    statuses = [run.returncode for run in runs]
    for i, (part, _) in enumerate(parts):
        others = ", ".join(name for name, _ in parts if name != part)
        _write(log, f"{part}\t{ended[i]:.1f}\t{statuses[i]}\tbeside {others}")
    for (part, _), out in zip(parts[1:], held):
        out.seek(0)
        sys.stdout.write(f"[make test] output of {part}, run beside {parts[0][0]}:\n")
        sys.stdout.write(out.read().decode("utf-8", "replace"))
        out.close()
    seconds = time.perf_counter() - start
    status = next((s for s in statuses if s), 0)
    names = " | ".join(part for part, _ in parts)
    _write(log, f"{names}\t{seconds:.1f}\t{status}")
    for (part, _), code in zip(parts, statuses):
        print(f"[make test] {part}: exit {code}", flush=True)
    print(f"[make test] {names}: {seconds:.1f} s together (exit {status})", flush=True)
    return status


def summary(log: Path = LOG) -> str:
    """The parts' times in ``log`` as a table, with the total and its ratio to :data:`REFERENCE`.

    A part run beside another (:func:`together`) is listed but not added:
    the line of the parts together holds their wall time.
    """
    parts = [line.split("\t") for line in log.read_text(encoding="utf-8").splitlines() if line]
    times = {fields[0]: float(fields[1]) for fields in parts}
    beside = {fields[0]: fields[3] for fields in parts if len(fields) > 3}
    total = sum(seconds for name, seconds in times.items() if name not in beside)
    lines = [f"{'part':<12}{'seconds':>9}"] + [
        f"{name:<12}{seconds:>9.1f}" + (f"  ({beside[name]})" if name in beside else "")
        for name, seconds in times.items()
    ]
    ratio = f"; {total / times[REFERENCE]:.2f} x one nbval pass" if times.get(REFERENCE) else ""
    lines.append(f"{'total':<12}{total:>9.1f}  ({total / 60:.1f} min{ratio})")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    usage = "usage: python -m tools.timed PART COMMAND... | --together PART 'COMMAND' PART 'COMMAND'... | --start | --summary"
    if argv == ["--start"]:
        LOG.unlink(missing_ok=True)
        return 0
    if argv == ["--summary"]:
        print(summary())
        return 0
    if argv[:1] == ["--together"] and len(argv) >= 5 and len(argv) % 2:
        return together(list(zip(argv[1::2], argv[2::2])))
    if len(argv) < 2 or argv[0].startswith("-"):
        print(usage, file=sys.stderr)
        return 2
    return run(argv[0], argv[1:])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
