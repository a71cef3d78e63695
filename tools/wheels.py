"""The packages of the workshop, as wheels for an offline room: ``python -m tools.dist --wheels``.

:func:`prepare_wheels` fills a folder, outside the bundle, with exactly the
wheels of ``requirements-participant.txt`` for this machine's system and
Python (:func:`download_wheels`) plus a wheel of the project itself
(:func:`project_wheel`), so that ``pip install --no-index`` needs nothing
else; with ``torch``, also CPU torch from :data:`TORCH_CPU_INDEX`.

>>> TORCH_CPU_INDEX
'https://download.pytorch.org/whl/cpu'
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tools.bundle_files import CACHE_FOLDERS

__all__ = ["TORCH_CPU_INDEX", "download_wheels", "project_wheel", "prepare_wheels", "folder_megabytes"]

#: PyTorch's index of CPU-only builds (Linux wheels there carry ``+cpu``).
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def _pip(python: str, *args: str) -> None:
    """Run ``python -m pip ARGS``, showing the command; raise if it fails."""
    command = [python, "-m", "pip", *args]
    print("$", " ".join(command), flush=True)
    subprocess.run(command, check=True)


def download_wheels(target: Path, root: Path = Path("."), python: str = sys.executable) -> Path:
    """``pip download --no-deps`` every package of ``requirements-participant.txt`` into ``target``."""
    target = Path(target)
    target.mkdir(parents=True, exist_ok=True)
    _pip(python, "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
         "-r", str(Path(root) / "requirements-participant.txt"), "-d", str(target))
    return target


def project_wheel(target: Path, root: Path = Path("."), python: str = sys.executable) -> Path:
    """Build the wheel of the project (``lib``) into ``target`` from a clean copy; return its path.

    Built from a temporary copy of ``lib/`` and ``pyproject.toml``, so that
    no ``build/`` or ``*.egg-info`` folder lands in the repository.
    """
    root, target = Path(root), Path(target)
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(root / "lib", Path(tmp) / "lib", ignore=shutil.ignore_patterns(*CACHE_FOLDERS, "*.pyc"))
        shutil.copy2(root / "pyproject.toml", Path(tmp) / "pyproject.toml")
        before = set(target.glob("*.whl"))
        _pip(python, "wheel", "--no-deps", "--disable-pip-version-check", "-q", tmp, "-w", str(target))
    built = sorted(set(target.glob("twice_the_devices-*.whl")) - before) or sorted(
        target.glob("twice_the_devices-*.whl"), key=lambda p: p.stat().st_mtime)
    return built[-1]


def prepare_wheels(target: Path, root: Path = Path("."), torch: bool = False,
                   python: str = sys.executable) -> Path:
    """Everything :data:`tools.dist.PARTICIPANT_COMMANDS` installs, as wheels in ``target``.

    With ``torch``, also torch and its dependencies from :data:`TORCH_CPU_INDEX`
    (the CPU build on Linux).
    """
    download_wheels(target, root, python)
    project_wheel(target, root, python)
    if torch:
        _pip(python, "download", "--disable-pip-version-check", "-r",
             str(Path(root) / "requirements-participant-torch.txt"),
             "--index-url", TORCH_CPU_INDEX, "-d", str(target))
    return Path(target)


def folder_megabytes(folder: Path) -> float:
    """The size of every file under ``folder`` together, in MB (10**6 bytes).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "a.whl").write_bytes(b"x" * 1_500_000)
    ...     folder_megabytes(Path(tmp))
    1.5
    """
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file()) / 1e6
