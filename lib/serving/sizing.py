"""How many devices a load needs: the fewest replicas of the best shape that carry a request rate within targets.

Introduced in chapter 9 (choosing a split). A replica shape is a
tensor x pipeline layout (``tp``, ``pp``); copies of it serve independent
requests, so a shape of capacity ``c`` (:func:`lib.serving.capacity`) needs
``ceil(rate / c)`` replicas. :func:`size` tries every shape and keeps the
one that needs the fewest devices (with a ``confidence``, enough to carry the
rate with that probability given chapter 11's held-out errors:
:mod:`lib.serving.trust`); :func:`best_capacity` the one that
carries the most on a given number of devices, leaving the rest spare.
Shapes pack servers evenly: a shape of ``s`` devices divides a server or
fills whole servers, as a launcher would place it.

>>> from lib.transformer import PRESETS
>>> from lib.units import ms
>>> plan = size(PRESETS["llama-3-70b"], "h100-sxm", 20.0, 1024, 256, ttft_limit=1.0, tpot_limit=50 * ms,
...             weight_format="fp8")
>>> plan.layout.name, plan.devices, round(plan.capacity.rate, 1)
('tp2-pp1-dp3', 6, 21.4)
>>> sure = size(PRESETS["llama-3-70b"], "h100-sxm", 20.0, 1024, 256, ttft_limit=1.0, tpot_limit=50 * ms,
...             weight_format="fp8", confidence=0.9)
>>> sure.layout.name, sure.devices, sure.confidence
('tp2-pp2-dp3', 12, 0.9)
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from lib import _checks
from lib.hardware import Device
from lib.serving.capacity import Capacity, capacity
from lib.serving.layout import Layout, layouts
from lib.serving.memory import check_context
from lib.serving.trust import capacity_ratio, regime
from lib.transformer import ModelConfig

__all__ = ["Sizing", "replica_shapes", "size", "best_capacity"]


@dataclass(frozen=True)
class Sizing:
    """A layout of ``devices`` devices (``layout.dp`` replicas of one shape) and its capacity.

    ``replica`` is the capacity of one replica; ``spare`` the devices of a
    given cluster left idle (0 from :func:`size`); ``confidence`` the
    probability :func:`size` was asked to carry its rate with (``None``: the
    model's own estimate).
    """

    layout: Layout
    devices: int
    capacity: Capacity
    replica: Capacity
    spare: int
    confidence: float | None = None


def replica_shapes(
    config: ModelConfig, devices: int, devices_per_node: int = 8, expert_parallel: bool | str = False
) -> list[Layout]:
    """Every replica shape (``dp = 1``) of at most ``devices`` devices that packs servers evenly.

    ``expert_parallel`` as in :func:`lib.serving.layouts` (``True``, ``"both"``
    or ``"all"`` for a mixture of experts).

    >>> from lib.transformer import PRESETS
    >>> [s.name for s in replica_shapes(PRESETS["llama-3-8b"], 4)]
    ['tp1-pp1-dp1', 'tp1-pp2-dp1', 'tp1-pp4-dp1', 'tp2-pp1-dp1', 'tp2-pp2-dp1', 'tp4-pp1-dp1']
    >>> [s.name for s in replica_shapes(PRESETS["mixtral-8x7b"], 2, expert_parallel="all")]
    ['tp1-pp1-dp1', 'tp1-pp2-dp1', 'tp2-pp1-dp1', 'ep2-pp1-dp1', 'adp2-ep2-pp1-dp1']
    """
    n = _checks.scalar_count("devices", devices, minimum=1)
    per_node = _checks.scalar_count("devices_per_node", devices_per_node, minimum=1)
    shapes = []
    for size_ in range(1, n + 1):
        if per_node % size_ and size_ % per_node:
            continue
        shapes += [
            layout
            for layout in layouts(config, size_, expert_parallel)
            if layout.dp == 1 and not (per_node % layout.tp and layout.tp % per_node)
        ]
    order = {variant: i for i, variant in enumerate([(False, False), (True, False), (True, True)])}
    return sorted(shapes, key=lambda s: (s.tp, s.pp, order[(s.expert_parallel, s.attention_dp)]))


def size(
    config: ModelConfig,
    device: Device | str,
    rate: float,
    prompt_tokens: Any,
    output_tokens: Any,
    *,
    max_devices: int = 64,
    devices_per_node: int = 8,
    expert_parallel: bool | str = False,
    confidence: float | None = None,
    **keywords: Any,
) -> Sizing | None:
    """The fewest devices, and the layout on them, that carry ``rate`` requests per second within the targets.

    With ``confidence`` (0.05 to 0.95) the layout carries ``rate`` with that
    probability: its predicted capacity reaches ``rate /``
    :func:`lib.serving.trust.capacity_ratio` of the regime (under targets or
    not). ``None``, the default, takes the model's estimate as it is.

    ``keywords`` go to :func:`lib.serving.capacity` (``ttft_limit``,
    ``tpot_limit``, ``percentile``, ``prefix_hit_rate``, the cluster's
    links, engine fields). Ties go to the layout with the most capacity to
    spare. Requests longer than the model's context are refused
    (:func:`lib.serving.memory.check_context`). ``None`` when no shape of at most ``max_devices`` devices can
    carry it.
    """
    target = _checks.scalar("rate", rate, _checks.positive)
    if confidence is not None:
        target /= capacity_ratio(confidence, regime(keywords.get("ttft_limit"), keywords.get("tpot_limit")))
    per_node = _checks.scalar_count("devices_per_node", devices_per_node, minimum=1)
    check_context(config, prompt_tokens, output_tokens)
    found = None
    options = dict(keywords, devices_per_node=per_node)
    untargeted = {k: v for k, v in options.items() if k not in ("ttft_limit", "tpot_limit", "percentile")}
    for shape in replica_shapes(config, max_devices, per_node, expert_parallel):
        # Without targets a replica carries the most it ever can: a floor on the devices this shape needs.
        ceiling = capacity(config, device, shape, prompt_tokens, output_tokens, **untargeted).rate
        if ceiling <= 0 or (found and math.ceil(target / ceiling * (1 - 1e-12)) * shape.devices > found[0][0]):
            continue
        replica = capacity(config, device, shape, prompt_tokens, output_tokens, **options)
        if replica.rate <= 0:
            continue
        replicas = math.ceil(target / replica.rate * (1 - 1e-12))
        devices = replicas * shape.devices
        if devices > max_devices:
            continue
        key = (devices, -replicas * replica.rate)
        if found is None or key < found[0]:
            found = (key, shape, replica, replicas)
    if found is None:
        return None
    _, shape, replica, replicas = found
    sized = _sizing(
        config,
        device,
        shape,
        replica,
        replicas,
        0,
        prompt_tokens,
        output_tokens,
        dict(keywords, devices_per_node=per_node),
    )
    return dataclasses.replace(sized, confidence=confidence)


def _sizing(
    config: ModelConfig,
    device: Device | str,
    shape: Layout,
    replica: Capacity,
    replicas: int,
    spare: int,
    prompt_tokens: Any,
    output_tokens: Any,
    keywords: dict,
) -> Sizing:
    layout = dataclasses.replace(shape, dp=replicas)
    whole = capacity(config, device, layout, prompt_tokens, output_tokens, **keywords)
    return Sizing(layout, layout.devices, whole, replica, spare)


def best_capacity(
    config: ModelConfig,
    device: Device | str,
    devices: int,
    prompt_tokens: Any,
    output_tokens: Any,
    *,
    devices_per_node: int = 8,
    expert_parallel: bool | str = False,
    **keywords: Any,
) -> Sizing | None:
    """The layout of at most ``devices`` devices that carries the most requests per second within the targets.

    Every replica shape is copied as often as the devices allow; the rest
    of the devices are ``spare``. More devices can therefore never lower the
    answer. ``None`` when no shape carries anything.

    >>> from lib.transformer import PRESETS
    >>> best = best_capacity(PRESETS["llama-3-8b"], "l4", 8, 512, 128, tpot_limit=0.1)
    >>> best.layout.name, best.spare
    ('tp2-pp1-dp4', 0)
    """
    n = _checks.scalar_count("devices", devices, minimum=1)
    per_node = _checks.scalar_count("devices_per_node", devices_per_node, minimum=1)
    check_context(config, prompt_tokens, output_tokens)
    found = None
    options = dict(keywords, devices_per_node=per_node)
    for shape in replica_shapes(config, n, per_node, expert_parallel):
        replica = capacity(config, device, shape, prompt_tokens, output_tokens, **options)
        if replica.rate <= 0:
            continue
        replicas = n // shape.devices
        key = (-replicas * replica.rate, replicas * shape.devices)
        if found is None or key < found[0]:
            found = (key, shape, replica, replicas)
    if found is None:
        return None
    _, shape, replica, replicas = found
    return _sizing(
        config, device, shape, replica, replicas, n - replicas * shape.devices, prompt_tokens, output_tokens, options
    )
