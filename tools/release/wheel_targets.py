"""The laptops a workshop room may bring: each kind of system, each supported Python, and what pip needs to know.

A *target* is one kind of laptop: a platform of :data:`PLATFORMS` and a Python
of :data:`PYTHONS`. :mod:`tools.release.wheels` downloads the wheels of every target
into one folder (pip on each laptop then picks its own), and
:mod:`tools.release.wheel_check` resolves the participant requirements for each.

pip can download for another system (``--platform``, ``--python-version``,
``--only-binary=:all:``), but it evaluates the environment markers of a
requirement (``pexpect==4.9.0 ; sys_platform != "win32"``) for the machine it
runs on, not for the target. So the markers are evaluated here, against
:func:`marker_environment` of the target, and pip is given plain pins
(:func:`pins_for`).

>>> [str(target) for target in targets(["windows-x86_64"], ["3.12"])]
['windows-x86_64 / Python 3.12.0']
>>> pins_for(["colorama==0.4.6 ; sys_platform == 'win32'", "numpy==2.4.6"], Target("linux-x86_64", "3.11.2"))
['numpy==2.4.6']
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "PLATFORMS",
    "PYTHONS",
    "TORCH_CPU_INDEX",
    "TORCH",
    "Target",
    "targets",
    "host_platform",
    "marker_environment",
    "requirement_files",
    "requirement_lines",
    "pins_for",
    "pip_target_options",
]

#: The oldest glibc the Linux wheels may need: 2.28 (Debian 10, Ubuntu 20.04, RHEL 8 and later).
_GLIBC = 28

#: pip platform tags each kind of laptop accepts, best first. pip expands a macOS tag to every
#: older macOS release itself, but not a manylinux tag, so the Linux list is written out.
PLATFORMS: dict[str, tuple[str, ...]] = {
    "linux-x86_64": tuple(f"manylinux_2_{minor}_x86_64" for minor in range(_GLIBC, 16, -1))
    + ("manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"),
    "macos-arm64": ("macosx_11_0_arm64",),
    "macos-x86_64": ("macosx_10_15_x86_64",),
    "windows-x86_64": ("win_amd64",),
}

#: PyTorch's index of CPU-only builds (its Linux wheels carry ``+cpu``; PyPI's Linux wheel is the CUDA build).
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"

#: Where torch (chapter 10's live run only) has a CPU wheel: the platform tags it needs there and
#: the extra index that serves it. torch 2.13.0 needs macOS 14 on Apple silicon, and has no wheel
#: for Intel Macs.
TORCH: dict[str, tuple[tuple[str, ...], str | None]] = {
    "linux-x86_64": (PLATFORMS["linux-x86_64"], TORCH_CPU_INDEX),
    "macos-arm64": (("macosx_14_0_arm64",), None),
    "windows-x86_64": (PLATFORMS["windows-x86_64"], None),
}

#: The Pythons a laptop may run, each as the oldest release the pins must install on:
#: 3.11.2 is Debian 12's Python 3.11.
PYTHONS = ("3.11.2", "3.12.0", "3.13.0")

#: What environment markers see on each platform (PEP 508 names).
_SYSTEMS = {
    "linux": {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"},
    "macos": {"sys_platform": "darwin", "platform_system": "Darwin", "os_name": "posix"},
    "windows": {"sys_platform": "win32", "platform_system": "Windows", "os_name": "nt"},
}
_MACHINES = {"x86_64": {"linux": "x86_64", "macos": "x86_64", "windows": "AMD64"}, "arm64": {"macos": "arm64"}}


@dataclass(frozen=True)
class Target:
    """One kind of laptop: a key of :data:`PLATFORMS` and a full Python version (``"3.12.0"``)."""

    platform: str
    python: str

    def __post_init__(self) -> None:
        if self.platform not in PLATFORMS:
            raise ValueError(f"platform must be one of {sorted(PLATFORMS)}, got {self.platform!r}")
        parts = self.python.split(".")
        if len(parts) != 3 or not all(part.isdigit() for part in parts):
            raise ValueError(f"python must be a full version such as 3.12.0, got {self.python!r}")

    @property
    def minor(self) -> str:
        """``"3.12"`` for Python 3.12.0."""
        return ".".join(self.python.split(".")[:2])

    def __str__(self) -> str:
        return f"{self.platform} / Python {self.python}"


def targets(platforms: list[str] | None = None, pythons: list[str] | None = None) -> list[Target]:
    """Every combination of ``platforms`` (default all) and ``pythons`` (default :data:`PYTHONS`).

    A Python may be given as ``3.12``: it means the oldest release of that
    line in :data:`PYTHONS` (``3.12.0``), or ``.0``.

    >>> len(targets()), targets(["macos-arm64"], ["3.11"])[0].python
    (12, '3.11.2')
    """
    full = []
    for python in pythons or PYTHONS:
        known = [p for p in PYTHONS if p == python or p.startswith(python + ".")]
        full.append(known[0] if known else (python if python.count(".") == 2 else python + ".0"))
    return [Target(platform, python) for platform in (platforms or list(PLATFORMS)) for python in full]


def host_platform(system: str | None = None, machine: str | None = None) -> str | None:
    """The key of :data:`PLATFORMS` for this machine (or ``system``, ``machine``), None if unsupported.

    >>> host_platform("Darwin", "arm64"), host_platform("Windows", "AMD64"), host_platform("Linux", "aarch64")
    ('macos-arm64', 'windows-x86_64', None)
    """
    import platform

    system = (system or platform.system()).lower().replace("darwin", "macos")
    machine = (machine or platform.machine()).lower().replace("amd64", "x86_64")
    key = f"{system}-{machine}"
    return key if key in PLATFORMS else None


def marker_environment(target: Target) -> dict[str, str]:
    """The PEP 508 marker variables of ``target``, as its own Python would report them.

    >>> env = marker_environment(Target("windows-x86_64", "3.13.0"))
    >>> env["sys_platform"], env["platform_machine"], env["python_version"], env["python_full_version"]
    ('win32', 'AMD64', '3.13', '3.13.0')
    """
    system, machine = target.platform.split("-", 1)
    return {
        **_SYSTEMS[system],
        "platform_machine": _MACHINES[machine][system],
        "python_version": target.minor,
        "python_full_version": target.python,
        "implementation_name": "cpython",
        "implementation_version": target.python,
        "platform_python_implementation": "CPython",
        "platform_release": "",
        "platform_version": "",
        "extra": "",
    }


def requirement_files(torch: bool = False) -> list[tuple[str, bool]]:
    """The participant requirements files, each with whether it is torch's (chapter 10's live run).

    >>> requirement_files(torch=True)
    [('requirements-participant.txt', False), ('requirements-participant-torch.txt', True)]
    """
    return [("requirements-participant.txt", False)] + ([("requirements-participant-torch.txt", True)] if torch else [])


def requirement_lines(path: Path) -> list[str]:
    """The requirement lines of a pip requirements file: comments, blanks and options left out.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "r.txt").write_text("# pinned\\nnumpy==2.4.6  # arrays\\n\\n-e .\\n")
    ...     requirement_lines(Path(tmp) / "r.txt")
    ['numpy==2.4.6']
    """
    lines = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        line = line.split(" #")[0].split("\t#")[0].strip()
        if line and not line.startswith(("#", "-", ".")):
            lines.append(line)
    return lines


def pins_for(lines: list[str], target: Target) -> list[str]:
    """The pins of ``lines`` that apply to ``target``, markers evaluated and dropped."""
    from packaging.requirements import Requirement

    environment = marker_environment(target)
    pins = []
    for line in lines:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate(environment):
            pins.append(f"{requirement.name}{requirement.specifier}")
    return pins


def pip_target_options(target: Target, torch: bool = False) -> list[str]:
    """pip's options for downloading or resolving wheels for ``target`` (binary wheels only).

    With ``torch``, the platform tags and index of :data:`TORCH` instead.

    >>> pip_target_options(Target("macos-arm64", "3.12.0"))
    ['--only-binary=:all:', '--implementation', 'cp', '--python-version', '3.12.0', '--platform', 'macosx_11_0_arm64']
    >>> pip_target_options(Target("linux-x86_64", "3.12.0"), torch=True)[-2:]
    ['--extra-index-url', 'https://download.pytorch.org/whl/cpu']
    """
    if torch and target.platform not in TORCH:
        raise ValueError(f"torch has no CPU wheel for {target.platform}; it has for {sorted(TORCH)}")
    tags, index = TORCH[target.platform] if torch else (PLATFORMS[target.platform], None)
    options = ["--only-binary=:all:", "--implementation", "cp", "--python-version", target.python]
    for tag in tags:
        options += ["--platform", tag]
    return options + (["--extra-index-url", index] if index else [])
