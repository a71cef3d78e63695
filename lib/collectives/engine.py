"""The all-reduce a serving engine runs for tensor parallelism: its own kernels on NVLink, NCCL elsewhere.

Introduced in chapter 6 (tensor parallelism, one token at a time). A decode
step all-reduces a few kilobytes twice per layer, where NCCL's fixed costs
dominate. vLLM, SGLang and TensorRT-LLM therefore bring their own kernels
for small messages on a group of GPUs that see each other's memory, and hand
larger messages to NCCL. The rules here are vLLM's, at version 0.33.0
(commit ``4ba787ec9``):

* ``vllm/distributed/device_communicators/custom_all_reduce.py``: the custom
  kernel is used for 2, 4, 6 or 8 GPUs (line 118; ``should_custom_ar``,
  lines 496-511) of one server, below ``max_size`` = 8 MiB (line 138, used
  while ``inp_size < max_size``, line 510); it is switched off on more than
  two GPUs that are not all joined by NVLink (lines 266-273: "not supported
  on more than two PCIe-only GPUs").
* ``csrc/custom_all_reduce.cuh`` (``CustomAllreduce::allreduce``): two GPUs
  always run the **one-shot** kernel; a fully connected group runs one-shot
  below 512 KiB on up to 4 GPUs and below 256 KiB on up to 8, and the
  **two-shot** kernel above.

Everything else, across servers, on PCIe beyond two GPUs, at other group
sizes and from 8 MiB up, is NCCL (:func:`lib.collectives.tune_allreduce`).
(vLLM 0.33.0 tries FlashInfer's and PyTorch's symmetric-memory kernels
before its own on Hopper, with similar size cut-offs; the one- and two-shot
model below stands for that whole family.)

**The latency model, derived.** One-shot: after a barrier, every GPU reads
the whole ``n``-byte input of each of its ``K - 1`` peers over NVLink and
adds them, so

    t_one = alpha_1 + (K - 1) n / B_1

Two-shot: a reduce-scatter (each GPU reads its ``1/K`` slice from every
peer), a second barrier, an all-gather of the reduced slices:

    t_two = alpha_2 + 2 (K - 1) / K  n / B_2

``alpha`` is the barrier and the kernel's own time, ``B`` the bandwidth the
kernel draws from each GPU's NVLink in one direction. The four constants
are measured, not assumed: :data:`ONE_SHOT` and :data:`TWO_SHOT` are a
least-squares fit (on relative errors) to vLLM's own benchmark of the two
kernels on four H100s, six sizes from 0.5 to 4 MiB (vLLM pull request
#24532, table "TP = 4", columns ``ca_1stage`` and ``ca_2stage``; the figures
are in ``data/published/allreduce_engine_h100_vllm.csv``, and
``tests/unit/lib/collectives/test_engine.py`` refits them). The bandwidths are kept as
shares of NVLink 4's 450 GB/s, so that they scale with the link on other
generations: one-shot reaches 86 % of it, two-shot 48 %.

>>> from lib.units import KB, MB, us
>>> one = engine_allreduce(16 * KB, 8, "nvlink4")
>>> one.kernel, round(one.time / us, 1)
('one-shot', 6.3)
>>> nccl = engine_allreduce(16 * KB, 8, "nvlink4", allreduce="nccl")
>>> nccl.kernel, round(nccl.time / us, 1)
('nccl ring/LL', 15.2)
>>> engine_allreduce(16 * KB, 4, "pcie4").kernel     # four PCIe GPUs: vLLM leaves it to NCCL
'nccl ring/LL'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks
from lib.collectives.nccl import tune_allreduce
from lib.hardware import Link
from lib.hardware import link as lookup_link
from lib.units import KiB, MiB, us

__all__ = [
    "ALLREDUCE_CHOICES",
    "Kernel",
    "ONE_SHOT",
    "TWO_SHOT",
    "MAX_SIZE",
    "ONE_SHOT_BELOW_4",
    "ONE_SHOT_BELOW_8",
    "SUPPORTED_GROUPS",
    "kernel_for",
    "EngineAllReduce",
    "engine_allreduce",
]

Number = Any

#: What the ``allreduce`` keyword of the serving model accepts.
ALLREDUCE_CHOICES = ("engine", "nccl")
#: Group sizes vLLM's custom all-reduce runs (``_SUPPORTED_WORLD_SIZES``, all-reduce only).
SUPPORTED_GROUPS = (2, 4, 6, 8)
#: Messages from this size up go to NCCL (``max_size``; the kernel runs while ``size < MAX_SIZE``).
MAX_SIZE = 8 * MiB
#: A fully connected group of up to 4 GPUs runs one-shot below this size, two-shot above (``custom_all_reduce.cuh``).
ONE_SHOT_BELOW_4 = 512 * KiB
#: A fully connected group of up to 8 GPUs runs one-shot below this size, two-shot above.
ONE_SHOT_BELOW_8 = 256 * KiB


@dataclass(frozen=True)
class Kernel:
    """One custom kernel's constants: ``latency`` (s) and the share of the link's per-direction bandwidth it draws."""

    name: str
    latency: float
    link_share: float


#: vLLM's one-shot kernel, fitted to PR #24532's ``ca_1stage`` column on 4 x H100 (see the module notes).
ONE_SHOT = Kernel("one-shot", 6.02 * us, 0.855)
#: vLLM's two-shot kernel, fitted to the ``ca_2stage`` column of the same table.
TWO_SHOT = Kernel("two-shot", 12.4 * us, 0.479)


def _masks(message: np.ndarray, devices: int, intra: Link, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Where vLLM runs the one-shot and the two-shot kernel (both False: NCCL)."""
    fits = np.asarray(message < MAX_SIZE)
    if nodes > 1 or devices not in SUPPORTED_GROUPS or intra.kind == "net":
        return np.zeros_like(fits), np.zeros_like(fits)
    if intra.kind == "pcie":  # only a pair of PCIe GPUs, and always one-shot
        return fits & (devices == 2), np.zeros_like(fits)
    small = np.asarray((devices == 2) | ((devices <= 4) & (message < ONE_SHOT_BELOW_4)) | (message < ONE_SHOT_BELOW_8))
    return fits & small, fits & ~small


def kernel_for(message_bytes: float, devices: int, link: Link | str, nodes: int = 1) -> Kernel | None:
    """The custom kernel vLLM 0.33.0 runs for this all-reduce, or ``None`` where it hands it to NCCL.

    >>> from lib.units import KiB, MiB
    >>> [getattr(kernel_for(n, 8, "nvlink4"), "name", None) for n in (16 * KiB, 1 * MiB, 8 * MiB)]
    ['one-shot', 'two-shot', None]
    >>> kernel_for(1 * MiB, 2, "pcie4").name, kernel_for(1 * MiB, 4, "nvlink4", nodes=2)
    ('one-shot', None)
    """
    one, two = _masks(np.asarray(float(message_bytes)), devices, lookup_link(link), nodes)
    return ONE_SHOT if one else TWO_SHOT if two else None


def _kernel_time(kernel: Kernel, message: np.ndarray, devices: int, intra: Link) -> np.ndarray:
    """``alpha + moved / B`` of one kernel, ``moved`` the bytes each GPU reads from its peers."""
    moved = (devices - 1) * message if kernel is ONE_SHOT else 2 * (devices - 1) / devices * message
    return kernel.latency + moved / (kernel.link_share * intra.bandwidth)


@dataclass(frozen=True)
class EngineAllReduce:
    """The all-reduce the engine runs for each message size: ``kernel`` in words and ``time`` in seconds."""

    kernel: Any
    time: Any


def engine_allreduce(
    message_bytes: Number,
    devices: int,
    link: Link | str,
    nodes: int = 1,
    inter_link: Link | str | None = None,
    nics_per_node: int | None = None,
    allreduce: str = "engine",
) -> EngineAllReduce:
    """Time of one tensor-parallel all-reduce of ``message_bytes``, as the engine runs it.

    ``allreduce="engine"`` follows vLLM's choice (:func:`kernel_for`) and
    falls back to NCCL's tuner; ``"nccl"`` always uses NCCL's tuner (an
    engine started with ``--disable-custom-all-reduce``). One device takes
    no time. Broadcasts over ``message_bytes``.
    """
    if allreduce not in ALLREDUCE_CHOICES:
        raise ValueError(f"allreduce must be one of {ALLREDUCE_CHOICES}, got {allreduce!r}")
    n = _checks.nonnegative("message_bytes", message_bytes)
    k = _checks.scalar_count("devices", devices, minimum=1)
    intra = lookup_link(link)
    if k == 1:
        return EngineAllReduce(np.full(n.shape, "none")[()], _checks.result(np.zeros_like(n, dtype=float)))
    nccl = tune_allreduce(n, k, intra, nodes, inter_link, nics_per_node)
    names = np.char.add(
        np.char.add("nccl ", np.asarray(nccl.algorithm, dtype=str)),
        np.char.add("/", np.asarray(nccl.protocol, dtype=str)),
    )
    time = np.asarray(nccl.time, dtype=float)
    if allreduce == "engine":
        one, two = _masks(n, k, intra, nodes)
        time = np.where(
            one, _kernel_time(ONE_SHOT, n, k, intra), np.where(two, _kernel_time(TWO_SHOT, n, k, intra), time)
        )
        names = np.where(one, ONE_SHOT.name, np.where(two, TWO_SHOT.name, names))
    return EngineAllReduce(str(names) if n.ndim == 0 else names, _checks.result(time))
