"""Torch wheels that stand in for the real ones in tests: a file with the right name and METADATA, a few bytes.

>>> sorted(__all__)
['CPU_REQUIRES', 'CUDA_REQUIRES', 'fake_wheel']
"""

from __future__ import annotations

import zipfile
from pathlib import Path

__all__ = ["CPU_REQUIRES", "CUDA_REQUIRES", "fake_wheel"]

#: What PyPI's Linux torch 2.13.0 declares (abridged): the CUDA build.
CUDA_REQUIRES = [
    "filelock",
    "sympy>=1.13.3",
    'nvidia-cuda-runtime-cu12==12.8.90; platform_system == "Linux" and platform_machine == "x86_64"',
    'nvidia-cudnn-cu12==9.10.2.21; platform_system == "Linux" and platform_machine == "x86_64"',
    'triton==3.5.0; platform_system == "Linux" and platform_machine == "x86_64"',
]
CPU_REQUIRES = ["filelock", "sympy>=1.13.3"]


def fake_wheel(folder: Path, filename: str, requires: list[str]) -> Path:
    """A wheel file holding only its METADATA, with the version of ``filename``."""
    version = filename.split("-")[1]
    path = folder / filename
    metadata = "".join(
        [
            "Metadata-Version: 2.1\nName: torch\n",
            f"Version: {version}\n",
            *(f"Requires-Dist: {line}\n" for line in requires),
        ]
    )
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr(f"torch-{version}.dist-info/METADATA", metadata)
        wheel.writestr("torch/__init__.py", "")
    return path
