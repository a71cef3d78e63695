"""Check that the participant pins install on every laptop: ``python -m tools.release.wheel_check`` (``make check-wheels``).

For each target of :func:`tools.release.wheel_targets.targets` (four platforms, three
Pythons), pip resolves the pins of ``requirements-participant.txt`` for that
system without installing anything (:func:`resolve`: ``pip install --dry-run
--report --no-deps --only-binary=:all: --platform ... --python-version ...
--target ...``): each pin must have a wheel for it, and each wheel's
``Requires-Python`` must admit the oldest release of that Python line
(3.11.2 for 3.11). Then :func:`closure_problems` reads what every resolved
package declares it needs (its ``Requires-Dist``, markers evaluated for the
target, extras followed) and checks that the pins provide it, at a version
that satisfies it, so that the participants' ``pip install --no-deps``
leaves nothing out. Only :data:`LEFT_OUT` may be missing: what myst-nb needs
to build a book, which the notebooks never use.

With ``--torch``, ``requirements-participant-torch.txt`` is resolved too, for
the platforms of :data:`tools.release.wheel_targets.TORCH` (torch has no wheel for
Intel Macs, and needs macOS 14 on Apple silicon), and the closure is checked
over both files together. By default that is :data:`TORCH_PLATFORMS`, whose
wheels are on the package registry; Linux's CPU build is on PyTorch's own
index, which CI cannot reach: ``--torch --platform linux-x86_64`` checks it
where that index can be reached. Every torch it resolves, on every platform,
must be the CPU build (:func:`tools.release.cpu_torch.report_problems`: no
``nvidia-*`` requirement, and on Linux the ``+cpu`` version): pip silently
takes the registry's CUDA build when PyTorch's index cannot be reached.

It needs the package registry, so ``make test`` does not run it; ``.ci/run``
runs ``make check-wheels``.

>>> sorted(LEFT_OUT)
['importlib-metadata', 'jupyter-cache', 'myst-parser', 'sphinx']
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from tools.release.cpu_torch import report_problems
from tools.release.wheel_targets import (
    PLATFORMS,
    Target,
    marker_environment,
    pins_for,
    pip_target_options,
    requirement_files,
    requirement_lines,
    targets,
)

__all__ = ["LEFT_OUT", "TORCH_PLATFORMS", "canonical", "check", "closure_problems", "main", "resolve"]

#: What myst-nb declares but the notebooks never use (its book-building side), left out on purpose.
LEFT_OUT = frozenset({"sphinx", "myst-parser", "jupyter-cache", "importlib-metadata"})

#: Where the registry itself serves torch's CPU wheels: what ``--torch`` checks by default.
TORCH_PLATFORMS = ("macos-arm64", "windows-x86_64")


def canonical(name: str) -> str:
    """A project name as pip compares it (PEP 503).

    >>> canonical("Jinja2"), canonical("typing_extensions")
    ('jinja2', 'typing-extensions')
    """
    return re.sub(r"[-_.]+", "-", name).lower()


def resolve(target: Target, pins: list[str], python: str = sys.executable, torch: bool = False) -> list[dict]:
    """pip's ``--report`` of installing exactly ``pins`` for ``target`` (nothing is installed).

    With ``torch``, for the platform tags and from the index that torch's CPU
    wheels need (:data:`tools.release.wheel_targets.TORCH`).

    Raises ``RuntimeError`` with pip's own reason when a pin has no wheel for
    the target, or its ``Requires-Python`` rules the target's Python out.
    """
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        command = [
            python,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--quiet",
            "--no-deps",
            "--ignore-installed",
            "--disable-pip-version-check",
            "--report",
            str(report),
            "--target",
            str(Path(tmp) / "t"),
            *pip_target_options(target, torch),
            *pins,
        ]
        done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
        if done.returncode:
            reason = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
            raise RuntimeError(f"{target}: " + ("\n  ".join(reason) or done.stderr[-2000:]))
        return json.loads(report.read_text(encoding="utf-8"))["install"]


def closure_problems(installed: list[dict], target: Target, left_out: frozenset[str] = LEFT_OUT) -> list[str]:
    """What the packages of a ``--report`` need for ``target`` and the same report does not provide.

    >>> report = [{"metadata": {"name": "a", "version": "1.0", "requires_dist": [
    ...     "b>=2", "c; sys_platform == 'win32'", "d; extra == 'fast'", "sphinx"]}},
    ...     {"metadata": {"name": "B", "version": "1.5"}}]
    >>> closure_problems(report, Target("linux-x86_64", "3.11.2"))
    ['a 1.0 needs b>=2, pinned at 1.5']
    >>> closure_problems(report, Target("windows-x86_64", "3.11.2"))
    ['a 1.0 needs b>=2, pinned at 1.5', 'a 1.0 needs c; sys_platform == "win32", which is not pinned']
    """
    from packaging.requirements import Requirement
    from packaging.version import Version

    metadata = {canonical(item["metadata"]["name"]): item["metadata"] for item in installed}
    environment = marker_environment(target)
    problems: list[str] = []
    wanted = [(name, "") for name in metadata]
    seen: set[tuple[str, str]] = set()
    while wanted:
        name, extra = wanted.pop()
        if (name, extra) in seen:
            continue
        seen.add((name, extra))
        package = metadata[name]
        for line in package.get("requires_dist") or []:
            requirement = Requirement(line)
            if requirement.marker is not None and not requirement.marker.evaluate({**environment, "extra": extra}):
                continue
            if requirement.marker is None and extra:
                continue  # a plain requirement belongs to the base package, already checked
            needed = canonical(requirement.name)
            where = f"{package['name']} {package['version']}{f'[{extra}]' if extra else ''}"
            if needed not in metadata:
                if needed not in left_out:
                    problems.append(f"{where} needs {requirement}, which is not pinned")
                continue
            version = Version(metadata[needed]["version"])
            if not requirement.specifier.contains(version, prereleases=True):
                problems.append(f"{where} needs {requirement}, pinned at {version}")
            wanted += [(needed, wanted_extra) for wanted_extra in requirement.extras]
    return problems


def check(root: Path = Path("."), chosen: list[Target] | None = None, torch: bool = False) -> list[str]:
    """Resolve the participant pins (and with ``torch`` the torch pins) for each target; return the problems."""
    root = Path(root)
    problems = []
    for target in chosen or targets():
        try:
            resolved = {
                for_torch: resolve(target, pins_for(requirement_lines(root / name), target), torch=for_torch)
                for name, for_torch in requirement_files(torch)
            }
        except RuntimeError as error:
            problems.append(str(error))
            print(f"FAIL {target}", flush=True)
            continue
        installed = [item for items in resolved.values() for item in items]
        found = closure_problems(installed, target)
        found += report_problems(resolved.get(True, []), linux=target.platform.startswith("linux"))
        problems += [f"{target}: {problem}" for problem in found]
        print(f"{'FAIL' if found else 'ok  '} {target}: {len(installed)} wheels", flush=True)
    return problems


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m tools.release.wheel_check [--torch] [--platform P ...] [--python V ...]``."""
    parser = argparse.ArgumentParser(prog="python -m tools.release.wheel_check", description=__doc__.split("\n")[0])
    parser.add_argument("--torch", action="store_true", help="also requirements-participant-torch.txt")
    parser.add_argument("--platform", action="append", choices=sorted(PLATFORMS))
    parser.add_argument("--python", action="append", help="e.g. 3.12 (default: 3.11.2, 3.12.0, 3.13.0)")
    args = parser.parse_args(argv)
    platforms = args.platform or (list(TORCH_PLATFORMS) if args.torch else None)
    problems = check(Path("."), targets(platforms, args.python), torch=args.torch)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
