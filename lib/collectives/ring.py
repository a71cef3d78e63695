"""A ring all-reduce that really moves numpy chunks between simulated devices.

Introduced in chapter 5 (collectives): every transfer is recorded, so the
chapter's figures are drawn from what the simulation did.

>>> results, sent = ring_allreduce([[1, 2], [10, 20]])
>>> results[0].tolist(), sent.tolist()
([11, 22], [16, 16])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks

__all__ = ["Transfer", "RingRun", "simulate_ring_allreduce", "ring_allreduce", "chunk_contributions"]


@dataclass(frozen=True)
class Transfer:
    """One chunk sent from one simulated device to the next during a ring all-reduce.

    ``step`` counts from 0 over both phases; ``phase`` is ``"reduce-scatter"``
    or ``"all-gather"``; ``chunk`` indexes the K chunks of the array.
    """

    step: int
    phase: str
    sender: int
    receiver: int
    chunk: int
    nbytes: int


@dataclass(frozen=True)
class RingRun:
    """Everything a simulated ring all-reduce did.

    ``results`` (one array per device), ``bytes_sent_per_device`` (int array)
    and ``transfers``: the record of who sent which chunk at which step.
    """

    results: list
    bytes_sent_per_device: np.ndarray
    transfers: tuple

    @property
    def steps(self) -> int:
        """Number of ring steps, ``2 (K - 1)``."""
        return 1 + max((t.step for t in self.transfers), default=-1)


def simulate_ring_allreduce(arrays: Sequence[Any]) -> RingRun:
    """Sum ``arrays`` (one per device) with a ring, recording every transfer.

    The flattened array is cut into ``K`` chunks (``numpy.array_split``, so
    any length works). Reduce-scatter: in step ``s`` device ``i`` sends chunk
    ``(i - s) mod K`` to device ``i + 1``, which adds it to its own copy;
    after ``K - 1`` steps device ``i`` owns the finished chunk ``(i + 1) mod K``.
    All-gather: in step ``s`` device ``i`` forwards chunk ``(i + 1 - s) mod K``,
    which the receiver stores. All devices send at once in each step.

    >>> run = simulate_ring_allreduce([[1, 2, 3], [10, 20, 30], [100, 200, 300]])
    >>> [r.tolist() for r in run.results]
    [[111, 222, 333], [111, 222, 333], [111, 222, 333]]
    >>> run.steps, run.transfers[0]
    (4, Transfer(step=0, phase='reduce-scatter', sender=0, receiver=1, chunk=0, nbytes=8))
    """
    if isinstance(arrays, np.ndarray) and arrays.ndim == 0:
        raise ValueError(f"arrays must be a sequence of arrays, got {arrays!r}")
    buffers = [np.asarray(a) for a in arrays]
    if not buffers:
        raise ValueError("arrays must hold at least one array, got an empty sequence")
    shape, dtype = buffers[0].shape, np.result_type(*buffers)
    for i, b in enumerate(buffers):
        if b.shape != shape:
            raise ValueError(f"arrays must all have shape {shape}, got shape {b.shape} for device {i}")
        if not np.issubdtype(b.dtype, np.number) or (np.issubdtype(b.dtype, np.floating) and np.isnan(b).any()):
            raise ValueError(f"arrays must be numeric without NaN, got {b.dtype} for device {i}")
    k = len(buffers)
    chunks = [np.array_split(b.astype(dtype).ravel(), k) for b in buffers]
    sent = np.zeros(k, dtype=np.int64)
    transfers: list[Transfer] = []
    step = 0
    for phase in ("reduce-scatter", "all-gather"):
        for s in range(k - 1):
            offset = -s if phase == "reduce-scatter" else 1 - s
            outgoing = [(i, (i + offset) % k, chunks[i][(i + offset) % k].copy()) for i in range(k)]
            for sender, c, payload in outgoing:
                receiver = (sender + 1) % k
                if phase == "reduce-scatter":
                    chunks[receiver][c] = chunks[receiver][c] + payload
                else:
                    chunks[receiver][c] = payload
                sent[sender] += payload.nbytes
                transfers.append(Transfer(step, phase, sender, receiver, c, int(payload.nbytes)))
            step += 1
    results = [np.concatenate(c).reshape(shape) for c in chunks]
    return RingRun(results=results, bytes_sent_per_device=sent, transfers=tuple(transfers))


def ring_allreduce(arrays: Sequence[Any]) -> tuple[list, np.ndarray]:
    """Ring all-reduce of one array per simulated device.

    Returns ``(results, bytes_sent_per_device)``: every device's copy of the
    sum and how many bytes each device sent (they total ``2 (K - 1) n``).
    See :func:`simulate_ring_allreduce` for the step-by-step record.

    >>> results, sent = ring_allreduce([np.ones(8), 2 * np.ones(8)])
    >>> results[1].tolist() == [3.0] * 8, sent.tolist()
    (True, [64, 64])
    """
    run = simulate_ring_allreduce(arrays)
    return run.results, run.bytes_sent_per_device


def chunk_contributions(run: RingRun, devices: int) -> np.ndarray:
    """How many devices' inputs each chunk on each device holds, after each step.

    Rebuilt from ``run.transfers`` alone: start with 1 everywhere; a
    reduce-scatter transfer adds the sender's count to the receiver's, an
    all-gather transfer copies it. Returns shape ``(steps + 1, K, K)``
    indexed ``[step, device, chunk]``.

    ``devices`` must be the number of devices in ``run``.

    >>> run = simulate_ring_allreduce([np.zeros(4)] * 4)
    >>> int(chunk_contributions(run, 4)[-1].min())
    4
    """
    k = int(_checks.count("devices", devices, minimum=1))
    if k != len(run.results):
        raise ValueError(f"devices must equal the number of devices in run ({len(run.results)}), got {k}")
    counts = np.ones((run.steps + 1, k, k), dtype=int)
    for step in range(run.steps):
        before = counts[step].copy()
        counts[step + 1] = before
        for t in run.transfers:
            if t.step != step:
                continue
            if t.phase == "reduce-scatter":
                counts[step + 1, t.receiver, t.chunk] = before[t.receiver, t.chunk] + before[t.sender, t.chunk]
            else:
                counts[step + 1, t.receiver, t.chunk] = before[t.sender, t.chunk]
    return counts
