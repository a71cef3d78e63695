"""tools.release.wheels: ``--torch`` exits non-zero, naming the wheel, when pip fetched the CUDA build.

pip is replaced by a stand-in that writes what the registry would serve, so
nothing is downloaded.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_wheels import CPU_REQUIRES, CUDA_REQUIRES, fake_wheel

from tools.release import wheels

ROOT = Path(__file__).resolve().parents[4]
ARGS = ["--torch", "--platform", "linux-x86_64", "--python", "3.12"]


def _serve(monkeypatch, torch_wheel: str, requires: list[str]) -> list[list[str]]:
    """Make ``wheels._pip`` write ``torch_wheel`` when asked for torch; return the commands it got."""
    calls: list[list[str]] = []

    def pip(python, *args):
        calls.append(list(args))
        folder = Path(args[args.index("-d") + 1])
        if any(arg.startswith("torch==") for arg in args):
            fake_wheel(folder, torch_wheel, requires)

    monkeypatch.setattr(wheels, "_pip", pip)
    monkeypatch.setattr(wheels, "project_wheel", lambda target, root=None, python=None: Path(target) / "p.whl")
    monkeypatch.chdir(ROOT)
    return calls


def test_cuda_torch_from_the_registry_fails_naming_it(monkeypatch, tmp_path):
    cuda = "torch-2.13.0-cp312-cp312-manylinux_2_28_x86_64.whl"
    calls = _serve(monkeypatch, cuda, CUDA_REQUIRES)
    with pytest.raises(SystemExit) as exit_:
        wheels.main([str(tmp_path), *ARGS])
    message = str(exit_.value.code)
    assert exit_.value.code not in (0, None)
    assert "\n" not in message and cuda in message and "download.pytorch.org/whl/cpu" in message, message
    assert any("--extra-index-url" in call for call in calls), "torch was asked of PyTorch's CPU index"


def test_cpu_torch_passes(monkeypatch, tmp_path):
    _serve(monkeypatch, "torch-2.13.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl", CPU_REQUIRES)
    assert wheels.main([str(tmp_path), *ARGS]) == tmp_path
    sizes = json.loads((tmp_path / wheels.SIZES).read_text())
    torch = (tmp_path / "torch-2.13.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl").stat().st_size
    assert sizes["torch_bytes"] == torch and sizes["bytes"] == sum(p.stat().st_size for p in tmp_path.glob("*.whl"))


def test_without_torch_a_stray_cuda_wheel_is_not_checked(monkeypatch, tmp_path):
    """Only ``--torch`` checks torch: without it the folder's torch is none of this run's business."""
    _serve(monkeypatch, "unused.whl", [])
    fake_wheel(tmp_path, "torch-2.13.0-cp312-cp312-manylinux_2_28_x86_64.whl", CUDA_REQUIRES)
    assert wheels.main([str(tmp_path), "--platform", "linux-x86_64", "--python", "3.12"]) == tmp_path
