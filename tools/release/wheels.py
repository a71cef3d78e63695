"""The workshop's packages, as wheels for every laptop of an offline room: ``python -m tools.release.wheels FOLDER``.

:func:`prepare_wheels` fills a folder, outside the bundle, with the wheels of
``requirements-participant.txt`` for every target of
:func:`tools.release.wheel_targets.targets` (Linux x86-64, macOS on Apple silicon and
on Intel, Windows x86-64; Python 3.11, 3.12 and 3.13) by :func:`download_wheels`,
plus a wheel of the project itself (:func:`project_wheel`), so that ``pip
install --no-index --find-links wheels`` needs nothing else on any of them:
pip on each laptop picks the files for its own system and Python. With
``--torch`` it adds torch and its pinned dependencies
(``requirements-participant-torch.txt``) where torch has CPU wheels
(:data:`tools.release.wheel_targets.TORCH`; Linux's from PyTorch's CPU index),
and then refuses, naming the wheel, any torch in the folder that is not the
CPU build (:func:`tools.release.cpu_torch.folder_problems`): pip takes the
registry's CUDA build when PyTorch's index cannot be reached.

It needs only Python, pip and ``packaging`` (all in a participant's
environment), not ``make`` and none of the book's tools, so it runs on Windows
too, in a clone of the repository::

    python -m tools.release.wheels _build/wheels                     # every platform and Python
    python -m tools.release.wheels _build/wheels --torch             # ... and CPU torch
    python -m tools.release.wheels _build/wheels --platform windows-x86_64 --python 3.12

Running it again into the same folder downloads only what is missing. Each
run ends by measuring the folder into ``FOLDER/sizes.json``
(:func:`write_sizes`: the wheels' count and bytes, and how much of it torch
takes); the workshop guide shows the figures of ``_build/wheels/sizes.json``.

>>> sorted(__all__)[:3]
['NotCpuTorch', 'SIZES', 'download_wheels']
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools.release.bundle_files import CACHE_FOLDERS
from tools.release.cpu_torch import folder_problems
from tools.release.wheel_targets import (
    PLATFORMS,
    TORCH,
    TORCH_CPU_INDEX,
    Target,
    pins_for,
    pip_target_options,
    requirement_files,
    requirement_lines,
    targets,
)

__all__ = [
    "NotCpuTorch",
    "SIZES",
    "download_wheels",
    "main",
    "prepare_wheels",
    "project_wheel",
    "wheel_sizes",
    "write_sizes",
]

#: The file :func:`write_sizes` writes into the wheels' folder (``cp FOLDER/*.whl`` leaves it behind).
SIZES = "sizes.json"


class NotCpuTorch(RuntimeError):
    """A torch wheel in the folder is a CUDA build; the message names it, in one line."""


def _pip(python: str, *args: str) -> None:
    """Run ``python -m pip ARGS``, showing the command; raise if it fails."""
    command = [python, "-m", "pip", *args]
    print("$", " ".join(command), flush=True)
    subprocess.run(command, check=True)


def download_wheels(
    target: Path,
    root: Path = Path("."),
    chosen: list[Target] | None = None,
    torch: bool = False,
    python: str = sys.executable,
) -> Path:
    """``pip download --no-deps`` the pins of ``requirements-participant.txt`` for each of ``chosen``.

    ``chosen`` defaults to every target. With ``torch``, also the pins of
    ``requirements-participant-torch.txt`` for the chosen targets where torch
    has CPU wheels. Markers are evaluated for each target, not for this
    machine (:func:`tools.release.wheel_targets.pins_for`).

    Raises :class:`NotCpuTorch` if, with ``torch``, a torch wheel in
    ``target`` is not the CPU build (:func:`tools.release.cpu_torch.build_problem`).
    """
    target, root = Path(target), Path(root)
    target.mkdir(parents=True, exist_ok=True)
    for laptop in chosen or targets():
        for name, for_torch in requirement_files(torch):
            if for_torch and laptop.platform not in TORCH:
                print(f"# {laptop}: torch has no CPU wheel here; chapter 10 reads the committed run", flush=True)
                continue
            pins = pins_for(requirement_lines(root / name), laptop)
            _pip(
                python,
                "download",
                "--no-deps",
                "--disable-pip-version-check",
                "--quiet",
                *pip_target_options(laptop, for_torch),
                "-d",
                str(target),
                *pins,
            )
    problems = folder_problems(target) if torch else []
    if problems:
        raise NotCpuTorch(
            f"{'; '.join(problems)}. PyTorch's CPU index ({TORCH_CPU_INDEX}) was probably not "
            f"reachable: delete the file{'s' if len(problems) > 1 else ''} and run again"
        )
    return target


def project_wheel(target: Path, root: Path = Path("."), python: str = sys.executable) -> Path:
    """Build the wheel of the project (``lib``) into ``target`` from a clean copy; return its path.

    Built from a temporary copy of ``lib/``, ``share/`` (JupyterLab's
    settings for the room) and ``pyproject.toml``, so that no ``build/`` or
    ``*.egg-info`` folder lands in the repository.
    """
    root, target = Path(root), Path(target)
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(root / "lib", Path(tmp) / "lib", ignore=shutil.ignore_patterns(*CACHE_FOLDERS, "*.pyc"))
        shutil.copytree(root / "share", Path(tmp) / "share")
        shutil.copy2(root / "pyproject.toml", Path(tmp) / "pyproject.toml")
        before = set(target.glob("*.whl"))
        _pip(python, "wheel", "--no-deps", "--disable-pip-version-check", "-q", tmp, "-w", str(target))
    built = sorted(set(target.glob("twice_the_devices-*.whl")) - before) or sorted(
        target.glob("twice_the_devices-*.whl"), key=lambda p: p.stat().st_mtime
    )
    return built[-1]


def prepare_wheels(
    target: Path,
    root: Path = Path("."),
    chosen: list[Target] | None = None,
    torch: bool = False,
    python: str = sys.executable,
) -> Path:
    """Everything :data:`tools.release.dist.PARTICIPANT_COMMANDS` installs, for each of ``chosen``, as wheels."""
    download_wheels(target, root, chosen, torch, python)
    project_wheel(target, root, python)
    return Path(target)


def _name(requirement_or_wheel: str) -> str:
    """A distribution's normalised name, from a pin (``torch==2.13.0``) or a wheel's file name."""
    return re.split(r"[=<>!~;\[ ]|-", requirement_or_wheel, maxsplit=1)[0].lower().replace("_", "-").replace(".", "-")


def wheel_sizes(folder: Path, root: Path = Path(".")) -> dict:
    """The wheels in ``folder``: how many, their bytes, and the bytes of those only chapter 10's torch needs.

    Torch's share is every wheel named in ``requirements-participant-torch.txt``
    and not in ``requirements-participant.txt``.

    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "numpy-2.4.6-cp312-none-any.whl").write_bytes(b"x" * 10)
    ...     _ = (Path(tmp) / "torch-2.13.0-cp312-none-any.whl").write_bytes(b"x" * 90)
    ...     wheel_sizes(Path(tmp))
    {'wheels': 2, 'bytes': 100, 'torch_bytes': 90}
    """
    root = Path(root)
    base = {_name(line) for line in requirement_lines(root / "requirements-participant.txt")}
    torch = {_name(line) for line in requirement_lines(root / "requirements-participant-torch.txt")} - base
    wheels = sorted(Path(folder).glob("*.whl"))
    return {
        "wheels": len(wheels),
        "bytes": sum(p.stat().st_size for p in wheels),
        "torch_bytes": sum(p.stat().st_size for p in wheels if _name(p.name) in torch),
    }


def write_sizes(folder: Path, root: Path = Path(".")) -> Path:
    """Write :func:`wheel_sizes` of ``folder`` and the time (UTC, to the minute) to ``folder`` / :data:`SIZES`."""
    sizes = {"measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), **wheel_sizes(folder, root)}
    path = Path(folder) / SIZES
    path.write_text(json.dumps(sizes, indent=1) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> Path:
    """Command line: ``python -m tools.release.wheels FOLDER [--torch] [--platform P ...] [--python V ...]``."""
    parser = argparse.ArgumentParser(prog="python -m tools.release.wheels", description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path, help="where the wheels go (outside the bundle), e.g. _build/wheels")
    parser.add_argument("--torch", action="store_true", help="also CPU torch, for chapter 10's live run")
    parser.add_argument("--platform", action="append", choices=sorted(PLATFORMS), help="default: all")
    parser.add_argument("--python", action="append", help="e.g. 3.12 (default: 3.11, 3.12, 3.13)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        prepare_wheels(args.folder, Path("."), targets(args.platform, args.python), args.torch)
    except NotCpuTorch as error:
        raise SystemExit(f"error: {error}") from None
    sizes = wheel_sizes(args.folder)
    write_sizes(args.folder)
    print(
        f"wrote {sizes['wheels']} wheels to {args.folder} ({sizes['bytes'] / 1e6:.0f} MB, torch's "
        f"{sizes['torch_bytes'] / 1e6:.0f} MB) in "
        f"{time.perf_counter() - start:.0f} s. Copy the files, not the folder, into the unzipped bundle's "
        f"wheels/ (book/workshop.md)."
    )
    return args.folder


if __name__ == "__main__":
    main()
