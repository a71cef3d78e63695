"""Disaggregated serving: prompts computed on one pool of devices, tokens generated on another.

Introduced in chapter 12 (the splits engines use today). A colocated replica
runs each prompt's chunks inside the same steps as everyone's decodes, so a
long prompt slows every running sequence and the token budget that keeps
TPOT in check also rations the prompts. Disaggregation (DistServe, Splitwise,
NVIDIA Dynamo, llm-d, SGLang's PD mode, vLLM's KV connectors) gives each
phase its own replicas and layout:

* a **prefill pool** of replicas that compute prompts and sample one token
  (:func:`lib.serving.capacity` with one output token: only TTFT matters);
* a **decode pool** of replicas whose steps carry decodes only
  (``capacity(..., prefill=False)``: only TPOT matters);
* a **KV transfer** of each prompt's cache from one to the other
  (:func:`kv_transfer`), which the first token waits for.

With ``r_p`` and ``r_d`` requests per second per device in the two pools,
``N`` devices carry the most when both pools run at the same rate,

    N_p r_p = N_d r_d,  N_p + N_d = N   =>   N_p / N = r_d / (r_p + r_d)

and then carry ``N r_p r_d / (r_p + r_d)`` (:func:`balance`), half the
harmonic mean of the two per-device rates. :func:`disaggregate` tries every
pair of replica shapes in whole replicas; the plan pays where that beats the
best colocated layout on the same devices (:func:`lib.serving.best_capacity`).

Assumptions, stated: the TTFT target is split as prefill TTFT + transfer +
one decode step (the TPOT target, or nothing without one); the transfer is
not overlapped with the prefill (vLLM's NIXL connector pulls the blocks once
the prompt is done); each device of a prefill replica sends its share of the
cache over its own share of the network ports, or NVLink when both pools sit
in the same servers (``same_node``).

>>> from lib.transformer import PRESETS
>>> prefill_devices, rate = balance(10.0, 2.5, devices=8)
>>> prefill_devices, rate
(1.6, 16.0)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from lib import _checks
from lib.collectives import send_time
from lib.hardware import Device, Link
from lib.serving.capacity import Capacity, capacity
from lib.serving.engine import configure
from lib.serving.layout import Cluster, Layout, check_layout
from lib.serving.memory import kv_cache_bytes
from lib.serving.sizing import replica_shapes
from lib.transformer import ModelConfig

__all__ = ["KVTransfer", "kv_transfer", "balance", "Disaggregated", "disaggregate", "POOL_BINDINGS"]

#: What limits a disaggregated plan, in :attr:`Disaggregated.binding`.
POOL_BINDINGS = ("prefill pool", "decode pool", "KV transfer")


@dataclass(frozen=True)
class KVTransfer:
    """One request's KV cache moving from a prefill replica to a decode replica.

    ``bytes`` is the whole cache of the prompt; ``senders`` the devices that
    send a share each; ``link`` the link each share crosses and
    ``bandwidth`` the bytes per second one sender gets on it; ``time`` the
    seconds the first token waits for it.
    """

    bytes: float
    senders: int
    link: str
    bandwidth: float
    time: float


def kv_transfer(
    config: ModelConfig,
    prompt_tokens: float,
    prefill: Layout,
    cluster: Cluster,
    kv_format: str = "bf16",
    same_node: bool = False,
) -> KVTransfer:
    """The KV transfer of one prompt of ``prompt_tokens`` tokens computed on a replica of ``prefill``.

    Each of the replica's ``tp x pp`` devices sends its share. Across
    servers a device gets ``nics_per_node / devices_per_node`` of the
    network ports; inside one (``same_node``) its NVLink. The time is one
    point-to-point send of the share (:func:`lib.collectives.send_time`)
    at that bandwidth.

    >>> from lib.transformer import PRESETS
    >>> t = kv_transfer(PRESETS["llama-3-70b"], 4096, Layout(tp=4), Cluster("h100-sxm"))
    >>> round(t.bytes / 1e9, 2), t.senders, t.link, round(t.time * 1e3, 2)
    (1.34, 4, 'InfiniBand NDR (400 Gb/s)', 6.73)
    """
    check_layout(config, prefill)
    tokens = _checks.scalar("prompt_tokens", prompt_tokens, _checks.positive)
    if not isinstance(same_node, bool):
        raise ValueError(f"same_node must be True or False, got {same_node!r}")
    total = float(kv_cache_bytes(config, tokens, configure(cluster.device, kv_format=kv_format).kv_bytes))
    senders = prefill.tp * prefill.pp
    link: Link = cluster.link if same_node else cluster.inter_link
    ports = 1.0 if same_node else cluster.nics_per_node / cluster.devices_per_node
    bandwidth = link.bandwidth * ports
    share = total / senders
    time = float(send_time(share * link.bandwidth / bandwidth, link))  # the share at the port's fraction
    return KVTransfer(total, senders, link.name, bandwidth, time)


def balance(prefill_rate_per_device: float, decode_rate_per_device: float, devices: float) -> tuple[float, float]:
    """``(prefill devices, requests per second)``: the split of ``devices`` at which both pools run equally fast.

    >>> balance(4.0, 4.0, 10)
    (5.0, 20.0)
    """
    r_p = _checks.scalar("prefill_rate_per_device", prefill_rate_per_device, _checks.positive)
    r_d = _checks.scalar("decode_rate_per_device", decode_rate_per_device, _checks.positive)
    n = _checks.scalar("devices", devices, _checks.positive)
    share = r_d / (r_p + r_d)
    return n * share, n * r_p * r_d / (r_p + r_d)


@dataclass(frozen=True)
class Disaggregated:
    """A disaggregated plan: ``prefill.dp`` prefill replicas and ``decode.dp`` decode replicas.

    ``prefill_replica`` and ``decode_replica`` are one replica's
    :class:`~lib.serving.capacity.Capacity` in its pool (the prefill one
    under the TTFT left after the transfer and a decode step); ``rate``
    the requests per second of the whole plan, the least of the two pools
    and the transfers; ``binding`` which of :data:`POOL_BINDINGS` that is;
    ``balanced_prefill_devices`` the (fractional) prefill devices of
    :func:`balance` for the same shapes.
    """

    prefill: Layout
    decode: Layout
    prefill_replica: Capacity
    decode_replica: Capacity
    transfer: KVTransfer
    rate: float
    binding: str
    balanced_prefill_devices: float

    @property
    def devices(self) -> int:
        """Devices in both pools."""
        return self.prefill.devices + self.decode.devices

    @property
    def rate_per_device(self) -> float:
        """Requests per second per device."""
        return self.rate / self.devices

    @property
    def name(self) -> str:
        """Both pools' layouts: ``"prefill tp2-pp1-dp3 + decode tp4-pp1-dp1"``."""
        return f"prefill {self.prefill.name} + decode {self.decode.name}"


def disaggregate(
    config: ModelConfig,
    device: Device | str,
    devices: int,
    prompt_tokens: Any,
    output_tokens: Any,
    *,
    ttft_limit: float | None = None,
    tpot_limit: float | None = None,
    percentile: float = 0.9,
    devices_per_node: int = 8,
    link: Link | str | None = None,
    inter_link: Link | str | None = None,
    nics_per_node: int | None = None,
    same_node: bool = False,
    expert_parallel: bool | str = False,
    **options: Any,
) -> Disaggregated | None:
    """The disaggregated plan of at most ``devices`` devices that carries the most requests per second.

    Every prefill shape is paired with every decode shape
    (:func:`lib.serving.sizing.replica_shapes`), in whole replicas, at
    least one of each; ``options`` are engine fields for both pools.
    ``None`` when no pair carries anything within the targets.

    >>> from lib.transformer import PRESETS
    >>> plan = disaggregate(PRESETS["llama-3-8b"], "h100-sxm", 4, 4096, 128, ttft_limit=1.0, tpot_limit=0.02)
    >>> plan.name, plan.binding
    ('prefill tp1-pp2-dp1 + decode tp1-pp1-dp2', 'prefill pool')
    """
    n = _checks.scalar_count("devices", devices, minimum=2)
    cluster = Cluster(device, devices_per_node, link, inter_link, nics_per_node)
    keywords = dict(
        percentile=percentile,
        devices_per_node=cluster.devices_per_node,
        link=cluster.link,
        inter_link=cluster.inter_link,
        nics_per_node=cluster.nics_per_node,
        **options,
    )
    ttft_max = None if ttft_limit is None else _checks.scalar("ttft_limit", ttft_limit, _checks.positive)
    tpot_max = None if tpot_limit is None else _checks.scalar("tpot_limit", tpot_limit, _checks.positive)
    kv_format = configure(cluster.device, **options).kv_format
    prompt = float(_checks.positive("prompt_tokens", prompt_tokens).mean())
    shapes = replica_shapes(config, n - 1, cluster.devices_per_node, expert_parallel)
    decodes = {
        s: capacity(config, device, s, prompt_tokens, output_tokens, tpot_limit=tpot_max, prefill=False, **keywords)
        for s in shapes
    }
    prefills = {}
    for shape in shapes:
        transfer = kv_transfer(config, prompt, shape, cluster, kv_format, same_node)
        left = None if ttft_max is None else ttft_max - transfer.time - (tpot_max or 0.0)
        if left is not None and left <= 0:
            continue
        prefills[shape] = (capacity(config, device, shape, prompt_tokens, 1, ttft_limit=left, **keywords), transfer)
    found = None
    for p_shape, (p_cap, transfer) in prefills.items():
        for d_shape, d_cap in decodes.items():
            plan = _best_split(n, p_shape, p_cap, transfer, d_shape, d_cap)
            if plan is not None and (found is None or plan.rate > found.rate):
                found = plan
    return found


def _best_split(
    devices: int, p_shape: Layout, p_cap: Capacity, transfer: KVTransfer, d_shape: Layout, d_cap: Capacity
) -> Disaggregated | None:
    """The whole numbers of prefill and decode replicas of these shapes, within ``devices``, that carry most."""
    if p_cap.rate <= 0 or d_cap.rate <= 0:
        return None
    best = None
    for prefill_replicas in range(1, (devices - d_shape.devices) // p_shape.devices + 1):
        decode_replicas = (devices - prefill_replicas * p_shape.devices) // d_shape.devices
        rates = {
            "prefill pool": prefill_replicas * p_cap.rate,
            "decode pool": decode_replicas * d_cap.rate,
            "KV transfer": prefill_replicas / transfer.time,
        }
        binding = min(rates, key=rates.get)
        if best is None or rates[binding] > best[0]:
            best = (rates[binding], binding, prefill_replicas, decode_replicas)
    if best is None:
        return None
    rate, binding, prefill_replicas, decode_replicas = best
    balanced, _ = balance(p_cap.rate_per_device, d_cap.rate_per_device, devices)
    return Disaggregated(
        dataclasses.replace(p_shape, dp=prefill_replicas),
        dataclasses.replace(d_shape, dp=decode_replicas),
        p_cap,
        d_cap,
        transfer,
        rate,
        binding,
        balanced,
    )
