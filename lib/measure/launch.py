"""Starting K ranks, watching them, and ending them all when one fails.

Introduced in chapter 10 (measure it). :func:`launch` starts ``devices``
worker processes itself (``python -m lib.measure.worker``) with the same
environment variables ``torchrun`` sets (``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``), so the worker code runs
unchanged under either. The launcher picks the backend, finds a free port on
127.0.0.1 (and tries a second one if another program took the first before
rank 0 could bind it), forwards rank 0's progress lines, and if any rank
exits with an error, or the whole run outlives ``timeout``, it ends every
rank and raises :class:`MeasureError`. Workers also watch their parent and exit if it dies,
so no orphan keeps running.

>>> resolve_backend(2, "auto", cores=2, gpus=0)
'gloo'
>>> resolve_backend(1, "auto", cores=2, gpus=0)
Traceback (most recent call last):
...
ValueError: devices must be >= 2, got 1
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lib import _checks

__all__ = [
    "BROKEN_TORCH",
    "CONFIG_ENV",
    "CPU_TORCH_OFFLINE",
    "NEEDS_TORCH",
    "Context",
    "MeasureError",
    "available_cores",
    "close_worker",
    "cuda_devices",
    "free_port",
    "init_worker",
    "launch",
    "live_run_problem",
    "resolve_backend",
    "torch_problem",
    "under_torchrun",
]

#: Environment variable naming the JSON config of a worker this launcher started.
CONFIG_ENV = "LIB_MEASURE_CONFIG"
_PARENT_ENV = "LIB_MEASURE_PARENT"
_BACKENDS = ("auto", "gloo", "nccl")
_ROOT = Path(__file__).resolve().parents[2]


class MeasureError(RuntimeError):
    """A rank failed, hung past the timeout, or the run could not start."""


def available_cores() -> int:
    """CPU cores this process may run on (its affinity set where the OS has one).

    >>> available_cores() >= 1
    True
    """
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def cuda_devices() -> int:
    """How many CUDA devices torch sees (0 without a torch that imports, a CUDA build or a GPU)."""
    if torch_problem() is not None:
        return 0
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


#: The one command that installs the CPU build of torch offline, in a workshop bundle's folder with ``wheels/``
#: copied in (``--force-reinstall`` replaces a CUDA build that ``pip`` would otherwise keep as "2.13.0 installed").
CPU_TORCH_OFFLINE = (
    ".venv/bin/pip install --no-index --find-links wheels --no-deps --force-reinstall "
    "-r requirements-participant-torch.txt"
)

#: What to say when torch is missing: the one thing a live run needs beyond numpy.
NEEDS_TORCH = (
    "The live run needs PyTorch, which is not installed here (everything else in this chapter works "
    f"without it); in the workshop bundle's folder: {CPU_TORCH_OFFLINE} (with a network: the README, "
    '"Running the notebooks yourself")'
)

#: What to say when torch is installed but does not import; ``{error}`` is the first line of the error.
BROKEN_TORCH = (
    "PyTorch is installed here but does not import ({error}); that is usually its CUDA build without "
    f"the CUDA libraries. Replace it with the CPU build, in the workshop bundle's folder: "
    f"{CPU_TORCH_OFFLINE}"
)


def torch_problem() -> str | None:
    """Why torch cannot be used here, in one line (:data:`NEEDS_TORCH` or :data:`BROKEN_TORCH`), or ``None``.

    It imports torch, so an install that is present but broken (``ImportError:
    libcudnn.so.9``, an ``OSError`` from a missing library) is caught too; the
    first import's error is the one reported.

    >>> torch_problem() is None or torch_problem().startswith(("The live run needs PyTorch", "PyTorch is installed"))
    True
    """
    if importlib.util.find_spec("torch") is None:
        return NEEDS_TORCH
    try:
        import torch  # noqa: F401  (the import itself is the check)
    except Exception as error:  # noqa: BLE001 (a broken build fails with ImportError, OSError, or its own errors)
        first = (str(error).strip().splitlines() or [""])[0]
        return BROKEN_TORCH.format(error=f"{type(error).__name__}: {first}" if first else type(error).__name__)
    return None


def live_run_problem(devices: int = 2) -> str | None:
    """Why a live run of ``devices`` ranks cannot start on this machine, in one line, or ``None`` if it can.

    It needs a torch that imports (:func:`torch_problem`), and a CPU core or a
    CUDA device per rank.

    >>> live_run_problem(devices=10**6) is not None
    True
    """
    k = _checks.scalar_count("devices", devices, minimum=2)
    problem = torch_problem()
    if problem is not None:
        return problem
    cores, gpus = available_cores(), cuda_devices()
    if cores < k and gpus < k:
        return (
            f"The live run needs {k} CPU cores or {k} CUDA devices, one per rank; this machine offers "
            f"{cores} cores and {gpus} CUDA devices."
        )
    return None


def resolve_backend(
    devices: int, backend: str = "auto", cores: int | None = None, gpus: int | None = None, local: int | None = None
) -> str:
    """Check ``devices`` and turn ``backend="auto"`` into ``"nccl"`` or ``"gloo"``.

    ``auto`` picks NCCL when at least ``local`` CUDA devices exist (``local``
    is the ranks on this machine, ``devices`` by default), else gloo. gloo
    ranks each need a core of their own; NCCL ranks a GPU of their own.

    >>> resolve_backend(2, "auto", cores=2, gpus=2)
    'nccl'
    >>> resolve_backend(3, "gloo", cores=2, gpus=0)
    Traceback (most recent call last):
    ...
    ValueError: devices must be <= 2 (CPU cores available to the gloo backend), got 3
    >>> resolve_backend(2, "nccl", cores=16, gpus=1)
    Traceback (most recent call last):
    ...
    ValueError: devices must be <= 1 (CUDA devices visible to the nccl backend), got 2
    """
    _checks.count("devices", devices, minimum=2)
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be one of {list(_BACKENDS)}, got {backend!r}")
    local = int(devices if local is None else local)
    cores = available_cores() if cores is None else int(cores)
    gpus = (cuda_devices() if backend != "gloo" else 0) if gpus is None else int(gpus)
    if backend == "auto":
        backend = "nccl" if gpus >= local else "gloo"
    if backend == "nccl" and local > gpus:
        raise ValueError(f"devices must be <= {gpus} (CUDA devices visible to the nccl backend), got {local}")
    if backend == "gloo" and local > cores:
        raise ValueError(f"devices must be <= {cores} (CPU cores available to the gloo backend), got {local}")
    return backend


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now.

    >>> 0 < free_port() < 65536
    True
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def under_torchrun() -> bool:
    """True when torchrun (not this launcher) started the current process."""
    return "RANK" in os.environ and "WORLD_SIZE" in os.environ and CONFIG_ENV not in os.environ


def _stop(processes: list[subprocess.Popen], grace: float = 3.0) -> None:
    """End every still-running worker: SIGTERM to its process group, then SIGKILL."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = [p for p in processes if p.poll() is None]
        for process in alive:
            try:
                os.killpg(process.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + grace
        for process in alive:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def launch(
    task: str,
    devices: int,
    backend: str = "auto",
    config: dict[str, Any] | None = None,
    timeout: float = 600.0,
    threads: int = 1,
    echo: Callable[[str], None] | None = print,
    check: Callable[[], None] | None = None,
) -> dict:
    """Run ``task`` on ``devices`` fresh worker processes; return rank 0's result.

    Parameters
    ----------
    task : str
        A task name known to :mod:`lib.measure.worker` (``"protocol"``,
        ``"check"``).
    devices : int
        ``K``, the number of ranks (at least 2, at most the cores or GPUs).
    backend : str
        ``"auto"``, ``"gloo"`` or ``"nccl"``.
    config : dict
        JSON-ready settings handed to the task.
    timeout : float
        Seconds after which every rank is ended and :class:`MeasureError`
        raised.
    threads : int
        Compute threads per rank (``torch.set_num_threads``).
    echo : callable or None
        Receives each line rank 0 prints (progress); ``None`` keeps quiet.
    check : callable or None
        Validates the caller's own arguments (raising ``ValueError``) once
        ``devices`` and ``backend`` passed, before any rank starts.

    Raises
    ------
    ValueError
        For bad ``devices``, ``backend``, ``timeout`` or ``threads``, or
        from ``check``.
    MeasureError
        When a rank fails or the run exceeds ``timeout``; the message names
        the rank and quotes the end of its output.
    """
    backend = resolve_backend(devices, backend)
    if check is not None:
        check()
    _checks.positive("timeout", timeout)
    _checks.count("threads", threads, minimum=1)
    folder = Path(tempfile.mkdtemp(prefix="lib-measure-"))
    settings = {
        "task": task,
        "backend": backend,
        "threads": int(threads),
        "timeout": float(timeout),
        "config": config or {},
        "result": str(folder / "result.json"),
    }
    (folder / "config.json").write_text(json.dumps(settings))
    logs = [folder / f"rank{rank}.log" for rank in range(devices)]
    deadline = time.monotonic() + timeout
    try:
        for attempt in (1, 2):
            processes: list[subprocess.Popen] = []
            try:
                _start(processes, logs, backend, threads, folder / "config.json", free_port())
                _watch(processes, logs, timeout, echo, deadline)
                return json.loads((folder / "result.json").read_text())
            except MeasureError:
                # The free port can be taken between free_port() and rank 0 binding it; then
                # nothing has run yet, so one retry on a fresh port is safe.
                if attempt == 1 and _port_taken(logs) and time.monotonic() < deadline:
                    continue
                raise
            finally:
                _stop(processes)
        raise AssertionError("unreachable")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _start(
    processes: list[subprocess.Popen], logs: list[Path], backend: str, threads: int, config: Path, port: int
) -> None:
    """Start one worker per log file, appending each to ``processes`` as soon as it runs."""
    devices = len(logs)
    for rank in range(devices):
        env = dict(
            os.environ,
            RANK=str(rank),
            WORLD_SIZE=str(devices),
            LOCAL_RANK=str(rank),
            LOCAL_WORLD_SIZE=str(devices),
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port),
            OMP_NUM_THREADS=str(threads),
            PYTHONUNBUFFERED="1",
            PYTHONPATH=os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")])),
            **{CONFIG_ENV: str(config), _PARENT_ENV: str(os.getpid())},
        )
        if backend == "gloo":
            env.setdefault("GLOO_SOCKET_IFNAME", "lo")
        with open(logs[rank], "w") as log:
            processes.append(
                subprocess.Popen(
                    [sys.executable, "-m", "lib.measure.worker"],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    cwd=str(_ROOT),
                    start_new_session=True,
                )
            )


def _port_taken(logs: list[Path]) -> bool:
    """True when a rank failed to bind the rendezvous port before rank 0 reported any progress."""
    texts = [log.read_text(errors="replace") if log.exists() else "" for log in logs]
    started = any(line.startswith("[measure]") for line in texts[0].splitlines())
    return not started and any("EADDRINUSE" in text or "address already in use" in text.lower() for text in texts)


def _watch(
    processes: list[subprocess.Popen],
    logs: list[Path],
    timeout: float,
    echo: Callable[[str], None] | None,
    deadline: float,
) -> None:
    """Wait for every rank; echo rank 0's new lines; raise on failure or at ``deadline``.

    ``timeout`` is the whole run's limit in seconds, quoted in the error.
    """
    shown = 0
    while True:
        if echo is not None:
            lines = logs[0].read_text(errors="replace").splitlines(keepends=True)
            complete = [line for line in lines if line.endswith("\n")]
            for line in complete[shown:]:
                if line.startswith("[measure]"):
                    echo(line.rstrip("\n"))
            shown = len(complete)
        codes = [p.poll() for p in processes]
        failed = [(rank, code) for rank, code in enumerate(codes) if code not in (None, 0)]
        if failed:
            rank, code = failed[0]
            _stop(processes)
            raise MeasureError(
                f"rank {rank} of {len(processes)} exited with code {code}; all ranks were "
                f"ended. Its last output:\n{_tail(logs[rank])}"
            )
        if all(code == 0 for code in codes):
            return
        if time.monotonic() > deadline:
            running = [rank for rank, code in enumerate(codes) if code is None]
            _stop(processes)
            raise MeasureError(
                f"timeout: ranks {running} still running after {timeout:g} s; all ranks were "
                f"ended. Last output of rank {running[0]}:\n{_tail(logs[running[0]])}"
            )
        time.sleep(0.05)


def _watch_parent(parent: int) -> None:
    """Exit this worker as soon as ``parent`` is gone (no orphans)."""

    def loop() -> None:
        while True:
            time.sleep(0.25)
            if os.getppid() != parent:
                os._exit(70)

    threading.Thread(target=loop, name="parent-watch", daemon=True).start()


@dataclass
class Context:
    """What a worker knows about itself: rank, world size, backend, device."""

    rank: int
    world: int
    local_rank: int
    backend: str
    device: Any

    def sync(self) -> None:
        """Wait until queued device work has finished (no-op on CPU)."""
        if self.device.type == "cuda":
            import torch

            torch.cuda.synchronize(self.device)

    def log(self, message: str) -> None:
        """A progress line, printed by rank 0 only."""
        if self.rank == 0:
            print(f"[measure] {message}", flush=True)


def _pin_to_cores(local_rank: int, threads: int) -> None:
    """Give a CPU rank's compute thread cores of its own, as a GPU rank has its own device.

    Called after the process group exists, so only the calling (compute)
    thread is pinned; the backend's communication threads, created earlier,
    may still run anywhere. Pinning them too puts each rank's polling and
    its socket thread on one core, which costs milliseconds per small
    all-reduce; pinning nothing lets a rank that waits in the all-reduce take
    the core a slower rank still computes on (chapter 10 shows both). Where
    the machine has too few cores, or no affinity call, nothing changes.
    """
    if not hasattr(os, "sched_setaffinity"):
        return
    cores = sorted(os.sched_getaffinity(0))
    mine = cores[local_rank * threads : (local_rank + 1) * threads]
    if len(mine) == threads:
        os.sched_setaffinity(0, mine)


def init_worker(backend: str, timeout: float, threads: int) -> Context:
    """Join the process group described by torchrun's environment variables."""
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    _watch_parent(int(os.environ.get(_PARENT_ENV, os.getppid())))
    torch.set_num_threads(int(threads))
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    if backend == "nccl":
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    dist.init_process_group(
        backend, init_method="env://", rank=rank, world_size=world, timeout=timedelta(seconds=float(timeout))
    )
    if device.type == "cpu":
        _pin_to_cores(local_rank, int(threads))
    return Context(rank=rank, world=world, local_rank=local_rank, backend=backend, device=device)


def close_worker() -> None:
    """Leave the process group together: a barrier, so no rank quits while others still talk, then destroy it."""
    import torch.distributed as dist

    dist.barrier()
    dist.destroy_process_group()
