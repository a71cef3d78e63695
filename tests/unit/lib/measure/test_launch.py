"""Tests for lib.measure.launch: the backend and the device count are checked before any rank starts, and a
torch that is installed but does not import gives one line, not a traceback.

A stub package ``torch`` whose ``__init__`` raises, first on ``sys.path``,
stands in for a CUDA build whose libraries are missing; each case runs in a
fresh interpreter so the real torch (if any) is never shadowed in this one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lib.measure import launch
from lib.measure.launch import BROKEN_TORCH, CPU_TORCH_OFFLINE, NEEDS_TORCH

ROOT = Path(__file__).resolve().parents[4]
PROBE = "from lib.measure import launch; print(launch.live_run_problem(devices=2)); print(launch.cuda_devices())"


def _run(path: Path | None, code: str = PROBE) -> subprocess.CompletedProcess:
    """Run ``code`` with ``path`` (a folder holding a stub ``torch``) first on the module path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*([str(path)] if path else []), str(ROOT)])}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120, check=False
    )


@pytest.mark.parametrize(
    "error",
    [
        'ImportError("libcudnn.so.9: cannot open shared object file")',
        'OSError("libtorch_cuda.so: cannot open shared object file")',
    ],
)
def test_torch_that_raises_on_import_gives_one_line(tmp_path, error):
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(f"raise {error}\n")
    done = _run(tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr + done.stdout, done.stderr
    problem, gpus = done.stdout.splitlines()
    expected_error = error.replace('("', ": ").replace('")', "")
    assert problem == BROKEN_TORCH.format(error=expected_error), problem
    assert gpus == "0"
    assert CPU_TORCH_OFFLINE in problem and "--force-reinstall" in problem


def test_missing_torch_gives_the_offline_install_line():
    done = _run(None, "import sys; sys.modules['torch'] = None; " + PROBE)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [NEEDS_TORCH, "0"]


def test_offline_install_names_the_bundle_files():
    """The command installs from ``wheels/`` alone, without dependencies, from the torch pins the bundle ships."""
    words = CPU_TORCH_OFFLINE.split()
    assert {"--no-index", "--no-deps", "--force-reinstall"} <= set(words)
    assert words[words.index("--find-links") + 1] == "wheels"
    assert (ROOT / words[words.index("-r") + 1]).is_file()


def test_more_devices_than_cores_is_refused_naming_devices():
    too_many = launch.available_cores() + 1
    with pytest.raises(ValueError, match="devices must be <="):
        launch.resolve_backend(too_many, "gloo")


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="backend"):
        launch.resolve_backend(2, "mpi", cores=2, gpus=0)
