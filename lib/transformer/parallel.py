"""Tensor parallelism per generated token: bytes, collectives, the decode bound and valid degrees.

Introduced in chapter 6 (tensor parallelism per generated token); part of
:mod:`lib.transformer`, which re-exports everything here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks, collectives
from lib.transformer.models import ModelConfig
from lib.transformer.presets import PRESETS  # noqa: F401  (the doctests use it)

__all__ = [
    "tp_bytes_per_collective",
    "tp_collectives_per_token",
    "TPComm",
    "tp_comm_per_token",
    "tp_crossover_batch",
    "decode_time_bound",
    "valid_tp_degrees",
    "check_tp_degree",
    "kv_heads_per_device",
    "shard_efficiency",
]

Number = Any  # a float or a numpy array of floats


def tp_bytes_per_collective(
    hidden: Number, bytes_per_element: Number, batch: Number, devices: Number
) -> float | np.ndarray:
    """Bytes each device sends in one tensor-parallel all-reduce (ring).

    The all-reduced activation holds ``hidden * batch`` elements of
    ``bytes_per_element`` bytes; a ring all-reduce sends ``2 (K - 1) / K`` of
    it from every device. Zero for one device.

    >>> tp_bytes_per_collective(8192, 2, 1, 4)
    24576.0
    >>> tp_bytes_per_collective(8192, 2, 1, [1, 2, 8]).tolist()
    [0.0, 16384.0, 28672.0]
    """
    d = _checks.count("hidden", hidden, minimum=1)
    b = _checks.positive("bytes_per_element", bytes_per_element)
    batch_ = _checks.count("batch", batch, minimum=1)
    k = _checks.count("devices", devices, minimum=1)
    return collectives.allreduce_bytes(d * b * batch_, k)


def tp_collectives_per_token(config: ModelConfig) -> int:
    """All-reduces per generated token: two per layer (after attention, after the MLP).

    >>> tp_collectives_per_token(PRESETS["llama-2-70b"])
    160
    """
    return 2 * config.layers


@dataclass(frozen=True)
class TPComm:
    """Communication of one generated token under tensor parallelism.

    Attributes are in SI units: ``bytes`` sent per device, times in seconds.
    Each is a plain number for one setting, or an array with the shape of
    the whole sweep (every argument of :func:`tp_comm_per_token` broadcast).
    """

    collectives: Any
    bytes: Any
    latency_time: Any
    transfer_time: Any

    @property
    def total_time(self) -> float | np.ndarray:
        """``latency_time + transfer_time``, in seconds."""
        return _checks.result(np.asarray(self.latency_time) + np.asarray(self.transfer_time))


def tp_comm_per_token(
    config: ModelConfig,
    devices: Number,
    batch: Number = 1,
    bytes_per_element: Number = 2,
    latency: Number = 0.0,
    bandwidth: Number = np.inf,
) -> TPComm:
    """Per-token all-reduce cost of tensor parallelism over ``devices``.

    ``collectives = 2 L`` (none on one device), ``bytes`` is their total per
    device, ``latency_time = collectives * latency`` and ``transfer_time =
    bytes / bandwidth``; the article's per-collective model ``l + V / B``.

    >>> from lib.units import GB, s, us
    >>> c = tp_comm_per_token(PRESETS["llama-2-70b"], 1, latency=5 * us, bandwidth=400 * GB / s)
    >>> c.collectives, c.total_time
    (0, 0.0)

    Every field has the shape of the whole sweep, here the batch sizes:

    >>> sweep = tp_comm_per_token(PRESETS["llama-2-70b"], 4, batch=[1, 8, 64], latency=5 * us)
    >>> sweep.collectives.tolist(), sweep.latency_time.shape
    ([160, 160, 160], (3,))
    """
    k = _checks.count("devices", devices, minimum=1)
    latency_ = _checks.nonnegative("latency", latency)
    bandwidth_ = _checks.positive("bandwidth", bandwidth, allow_inf=True)
    per_collective = np.asarray(tp_bytes_per_collective(config.hidden, bytes_per_element, batch, k))
    # Every field gets the shape of the whole sweep (devices, batch, bytes, latency, bandwidth).
    shape = np.broadcast_shapes(per_collective.shape, latency_.shape, bandwidth_.shape)
    collectives = np.broadcast_to(np.where(k > 1, tp_collectives_per_token(config), 0), shape)
    total_bytes = collectives * per_collective
    collectives_out: Any = int(collectives) if collectives.ndim == 0 else collectives.copy()
    return TPComm(
        collectives=collectives_out,
        bytes=_checks.result(total_bytes),
        latency_time=_checks.result(collectives * latency_),
        transfer_time=_checks.result(total_bytes / bandwidth_),
    )


def tp_crossover_batch(
    hidden: Number, bytes_per_element: Number, devices: Number, latency: Number, bandwidth: Number
) -> float | np.ndarray:
    """Batch size at which an all-reduce's transfer time equals its startup.

    Solves ``latency = 2 (K - 1) / K * d * b * B / bandwidth`` for ``B``:
    :func:`lib.collectives.crossover_message_bytes` over the ``d * b`` bytes
    of one sample's activation.
    Below it the per-token communication is latency-bound, above it
    bandwidth-bound. Infinite for one device (nothing is sent). Zero when
    ``latency`` is 0, even with infinite ``bandwidth``: with no startup the
    transfer always dominates.

    >>> from lib.units import GB, s, us
    >>> round(tp_crossover_batch(8192, 2, 4, 5 * us, 400 * GB / s), 1)
    81.4
    >>> tp_crossover_batch(8192, 2, 4, 0.0, float("inf"))
    0.0
    """
    d = _checks.count("hidden", hidden, minimum=1)
    b = _checks.positive("bytes_per_element", bytes_per_element)
    message = np.asarray(collectives.crossover_message_bytes(latency, bandwidth, devices))
    return _checks.result(message / (d * b))


def decode_time_bound(
    parameter_bytes: Number, devices: Number, device_bandwidth: Number, communication: Number = 0.0
) -> float | np.ndarray:
    """Lower bound on the time of one decode step: ``P b / (K BW) + communication``.

    Each device must read its ``1/K`` share of the weights from memory for
    every token; ``communication`` (seconds, e.g. ``tp_comm_per_token(...).total_time``)
    is added on top.

    >>> from lib.units import GB, TB, s, ms
    >>> round(decode_time_bound(140 * GB, 4, 3.35 * TB / s) / ms, 2)
    10.45
    """
    p = _checks.nonnegative("parameter_bytes", parameter_bytes)
    k = _checks.count("devices", devices, minimum=1)
    bw = _checks.positive("device_bandwidth", device_bandwidth)
    comm = _checks.nonnegative("communication", communication)
    return _checks.result(p / (k * bw) + comm)


def valid_tp_degrees(config: ModelConfig, max_devices: int, replicate_kv: bool = False) -> list[int]:
    """Tensor-parallel degrees ``K <= max_devices`` that split the attention and the MLP evenly.

    ``K`` must divide the attention heads and the MLP's inner width
    ``ffn_hidden`` (each device takes whole columns of the gate and up
    projections: vLLM's ``MergedColumnParallelLinear`` asserts
    ``output_size % tp_size == 0``). Strict (``replicate_kv=False``): ``K``
    also divides the KV heads. Replicated: up to the number of KV heads it
    must divide them; beyond, it must be a multiple of them, so that every
    device holds a copy of one KV head (as serving engines do).

    >>> valid_tp_degrees(PRESETS["llama-3-8b"], 64)
    [1, 2, 4, 8]
    >>> valid_tp_degrees(PRESETS["llama-3-8b"], 64, replicate_kv=True)
    [1, 2, 4, 8, 16, 32]
    >>> valid_tp_degrees(PRESETS["llama-2-13b"], 64)      # 40 heads, but ffn_hidden 13824 = 2**9 * 27
    [1, 2, 4, 8]
    """
    top = _checks.scalar_count("max_devices", max_devices, minimum=1)
    degrees = []
    for k in range(1, top + 1):
        if config.heads % k or config.ffn_hidden % k:
            continue
        if k <= config.kv_heads or not replicate_kv:
            ok = config.kv_heads % k == 0
        else:
            ok = k % config.kv_heads == 0
        if ok:
            degrees.append(k)
    return degrees


def check_tp_degree(config: ModelConfig, degree: int, name: str = "devices") -> int:
    """``degree`` if it is one of ``valid_tp_degrees(config, degree, replicate_kv=True)``; a ``ValueError`` naming
    ``name`` otherwise.

    >>> check_tp_degree(PRESETS["llama-2-13b"], 5)
    Traceback (most recent call last):
    ...
    ValueError: devices must split the 40 heads, 40 KV heads and MLP width 13824 of Llama-2 13B evenly (see valid_tp_degrees), got 5
    """
    k = _checks.scalar_count(name, degree, minimum=1)
    if k not in valid_tp_degrees(config, k, replicate_kv=True):
        raise ValueError(
            f"{name} must split the {config.heads} heads, {config.kv_heads} KV heads and MLP width "
            f"{config.ffn_hidden} of {config.name} evenly (see valid_tp_degrees), got {k}"
        )
    return k


def kv_heads_per_device(config: ModelConfig, devices: int) -> float:
    """KV heads whose cache each device stores at degree ``devices``.

    ``kv_heads / K`` while ``K`` divides them, then 1 (a replicated copy):
    past that point the per-device KV cache stops shrinking. ``devices`` must
    be one of ``valid_tp_degrees(config, devices, replicate_kv=True)``; other
    degrees would leave devices with fractions of a head.

    >>> [kv_heads_per_device(PRESETS["llama-3-8b"], k) for k in (1, 4, 8, 16)]
    [8.0, 2.0, 1.0, 1.0]
    """
    k = check_tp_degree(config, devices)
    return float(max(config.kv_heads / k, 1.0))


def shard_efficiency(work_per_device: Number, half_work: Number) -> float | np.ndarray:
    """An *assumed* efficiency curve: ``eta = w / (w + w_half)``.

    A Hockney-style model: a device reaches half its peak rate on a shard of
    size ``w_half`` and approaches full rate on much larger shards. It is a
    teaching assumption, not a measurement; fit ``half_work`` to your own
    hardware before trusting it.

    >>> shard_efficiency(4096, 1024)
    0.8
    """
    w = _checks.positive("work_per_device", work_per_device)
    half = _checks.nonnegative("half_work", half_work)
    return _checks.result(w / (w + half))
