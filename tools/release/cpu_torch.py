"""Whether a torch wheel is the CPU build: the one the workshop's laptops can import without a GPU stack.

On Linux x86-64 the package registry's torch is the CUDA build: its version
has no local part and its metadata requires a dozen ``nvidia-*`` packages
(cuDNN, cuBLAS, NCCL, ...). Installed with ``--no-deps`` from a folder that
lacks them, ``import torch`` then fails (``ImportError: libcudnn.so.9``).
PyTorch's CPU index serves ``torch-2.13.0+cpu-...whl`` instead. pip falls back
to the registry's wheel when that index cannot be reached, so
:mod:`tools.release.wheels` and :mod:`tools.release.wheel_check` check what
they got with :func:`build_problem`: a Linux torch must carry the ``+cpu``
local version, and no torch, on any platform, may require an ``nvidia-*``
package on the wheel's own platform (a requirement whose marker names
another platform does not count).

>>> build_problem("torch-2.13.0-cp312-cp312-manylinux_2_28_x86_64.whl", "2.13.0",
...               ["filelock", "nvidia-cudnn-cu12==9.10.2.21; platform_system == 'Linux'"], linux=True)
'torch-2.13.0-cp312-cp312-manylinux_2_28_x86_64.whl is the CUDA build of torch, not the CPU build (version 2.13.0, \
not +cpu; requires nvidia-cudnn-cu12)'
>>> build_problem("torch-2.13.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl", "2.13.0+cpu", ["filelock"], linux=True)
"""

from __future__ import annotations

import zipfile
from email.parser import Parser
from pathlib import Path

__all__ = ["CPU_LOCAL", "build_problem", "folder_problems", "is_linux_wheel", "report_problems", "wheel_metadata"]

#: The local version label of PyTorch's CPU builds (``2.13.0+cpu``).
CPU_LOCAL = "cpu"


def _requirement_name(line: str) -> str:
    """The project name a ``Requires-Dist`` line asks for, canonical (PEP 503).

    >>> _requirement_name("nvidia_cudnn_cu12==9.10.2.21; platform_system == 'Linux'")
    'nvidia-cudnn-cu12'
    """
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    return canonicalize_name(Requirement(line).name)


def _environment(wheel: str) -> dict[str, str] | None:
    """The marker environment of the platform the wheel file name ``wheel`` is for (None if it names none).

    >>> _environment("torch-2.13.0-cp312-cp312-macosx_14_0_arm64.whl")["platform_system"]
    'Darwin'
    """
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    try:
        platform = next(iter(parse_wheel_filename(wheel)[3])).platform
    except (InvalidWheelFilename, StopIteration):
        return None
    systems = {
        "manylinux": ("Linux", "linux"),
        "musllinux": ("Linux", "linux"),
        "linux": ("Linux", "linux"),
        "macosx": ("Darwin", "darwin"),
        "win": ("Windows", "win32"),
    }
    system = next((value for prefix, value in systems.items() if platform.startswith(prefix)), None)
    if system is None:
        return None
    machine = next(
        (
            m
            for key, m in (("x86_64", "x86_64"), ("arm64", "arm64"), ("aarch64", "aarch64"), ("amd64", "AMD64"))
            if key in platform
        ),
        platform,
    )
    return {"platform_system": system[0], "sys_platform": system[1], "platform_machine": machine, "extra": ""}


def _applies(line: str, wheel: str) -> bool:
    """Whether the ``Requires-Dist`` ``line`` applies on the platform of ``wheel`` (its marker, if any, holds).

    >>> _applies("nvidia-nccl-cu13; platform_system == 'Linux'", "torch-2.13.0-cp312-cp312-win_amd64.whl")
    False
    >>> _applies("nvidia-nccl-cu13; platform_system == 'Linux'", "torch-2.13.0-cp312-cp312-manylinux_2_28_x86_64.whl")
    True
    """
    from packaging.requirements import Requirement

    marker, environment = Requirement(line).marker, _environment(wheel)
    return marker is None or environment is None or marker.evaluate(environment)


def build_problem(wheel: str, version: str, requires_dist: list[str], linux: bool) -> str | None:
    """Why the torch ``wheel`` (its file name) is not a CPU build, in one line, or None if it is.

    ``version`` and ``requires_dist`` are the wheel's metadata; ``linux``
    says whether it is a Linux wheel, which must also carry ``+cpu``.
    """
    from packaging.version import Version

    reasons = []
    if linux and Version(version).local != CPU_LOCAL:
        reasons.append(f"version {version}, not +{CPU_LOCAL}")
    applying = [line for line in requires_dist if _applies(line, wheel)]
    nvidia = sorted({name for name in map(_requirement_name, applying) if name.startswith("nvidia-")})
    if nvidia:
        more = f" and {len(nvidia) - 3} more nvidia-*" if len(nvidia) > 3 else ""
        reasons.append("requires " + ", ".join(nvidia[:3]) + more)
    return f"{wheel} is the CUDA build of torch, not the CPU build ({'; '.join(reasons)})" if reasons else None


def is_linux_wheel(wheel: str) -> bool:
    """Whether the wheel file name ``wheel`` is for Linux (a ``manylinux``, ``musllinux`` or ``linux`` tag).

    >>> is_linux_wheel("torch-2.13.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl"), is_linux_wheel(
    ...     "torch-2.13.0-cp312-cp312-win_amd64.whl")
    (True, False)
    """
    from packaging.utils import parse_wheel_filename

    tags = parse_wheel_filename(wheel)[3]
    return any(tag.platform.startswith(("manylinux", "musllinux", "linux")) for tag in tags)


def wheel_metadata(path: Path) -> tuple[str, list[str]]:
    """The ``Version`` and the ``Requires-Dist`` lines of the wheel at ``path`` (read from its ``METADATA``)."""
    with zipfile.ZipFile(path) as wheel:
        name = next(n for n in wheel.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(wheel.read(name).decode("utf-8"), headersonly=True)
    return metadata["Version"], metadata.get_all("Requires-Dist") or []


def folder_problems(folder: Path) -> list[str]:
    """:func:`build_problem` for every torch wheel in ``folder``, one line each (empty: all are CPU builds)."""
    problems = []
    for path in sorted(Path(folder).glob("torch-*.whl")):
        version, requires = wheel_metadata(path)
        problem = build_problem(path.name, version, requires, is_linux_wheel(path.name))
        if problem:
            problems.append(problem)
    return problems


def report_problems(installed: list[dict], linux: bool) -> list[str]:
    """:func:`build_problem` for the torch of a pip ``--report``'s ``install`` list (as from a dry run).

    >>> report_problems([{"metadata": {"name": "torch", "version": "2.13.0", "requires_dist": []},
    ...                   "download_info": {"url": "https://x/torch-2.13.0-cp312-cp312-manylinux_2_28_x86_64.whl"}},
    ...                  {"metadata": {"name": "sympy", "version": "1.14.0"}}], linux=True)
    ['torch-2.13.0-cp312-cp312-manylinux_2_28_x86_64.whl is the CUDA build of torch, not the CPU build (version \
2.13.0, not +cpu)']
    """
    from urllib.parse import unquote, urlsplit

    problems = []
    for item in installed:
        metadata = item["metadata"]
        if metadata["name"].lower() != "torch":
            continue
        url = item.get("download_info", {}).get("url", "")
        wheel = unquote(urlsplit(url).path.rsplit("/", 1)[-1]) or f"torch {metadata['version']}"
        problem = build_problem(wheel, metadata["version"], metadata.get("requires_dist") or [], linux)
        if problem:
            problems.append(problem)
    return problems
