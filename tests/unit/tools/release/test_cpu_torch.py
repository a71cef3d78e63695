"""tools.release.cpu_torch: a CUDA torch wheel is told apart from the CPU build, by its file and its metadata."""

from __future__ import annotations

from pathlib import Path

from fake_wheels import CPU_REQUIRES, CUDA_REQUIRES, fake_wheel

from tools.release.cpu_torch import build_problem, folder_problems, report_problems


def test_pypi_cuda_wheel_is_named(tmp_path):
    cuda = fake_wheel(tmp_path, "torch-2.13.0-cp312-cp312-manylinux_2_28_x86_64.whl", CUDA_REQUIRES)
    problems = folder_problems(tmp_path)
    assert len(problems) == 1 and "\n" not in problems[0]
    assert problems[0].startswith(cuda.name), problems
    assert "not +cpu" in problems[0] and "nvidia-cudnn-cu12" in problems[0]


def test_cpu_wheels_pass(tmp_path):
    fake_wheel(tmp_path, "torch-2.13.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl", CPU_REQUIRES)
    fake_wheel(tmp_path, "torch-2.13.0-cp312-cp312-win_amd64.whl", CPU_REQUIRES)  # registry's Windows wheel: CPU
    fake_wheel(tmp_path, "torch-2.13.0-cp312-none-macosx_14_0_arm64.whl", CPU_REQUIRES)
    assert folder_problems(tmp_path) == []


def test_cpu_version_with_nvidia_requirement_fails():
    """Either sign of a CUDA build is enough: a ``+cpu`` version that still requires nvidia-* packages fails."""
    problem = build_problem(
        "torch-2.13.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl", "2.13.0+cpu", CUDA_REQUIRES, linux=True
    )
    assert problem is not None and "nvidia-cuda-runtime-cu12" in problem and "not +cpu" not in problem


def test_resolved_report_on_every_platform():
    """wheel_check's dry-run report: a Linux torch without +cpu fails; elsewhere only nvidia-* requirements for that platform do."""

    def report(url, version, requires):
        return [
            {
                "metadata": {"name": "torch", "version": version, "requires_dist": requires},
                "download_info": {"url": url},
            }
        ]

    linux = "https://files.example/torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    assert report_problems(report(linux, "2.13.0", CUDA_REQUIRES), linux=True)[0].startswith(Path(linux).name)
    cpu = "https://download.example/whl/cpu/torch-2.13.0%2Bcpu-cp311-cp311-manylinux_2_28_x86_64.whl"
    assert report_problems(report(cpu, "2.13.0+cpu", CPU_REQUIRES), linux=True) == []
    windows = "https://files.example/torch-2.13.0-cp311-cp311-win_amd64.whl"
    assert report_problems(report(windows, "2.13.0", CPU_REQUIRES), linux=False) == []
    # The registry's Windows and macOS wheels list the nvidia-* packages for Linux only: they do not apply there.
    assert report_problems(report(windows, "2.13.0", CUDA_REQUIRES), linux=False) == []
    assert report_problems(report(windows, "2.13.0", ["nvidia-cudnn-cu12==9.10.2.21"]), linux=False) != []
