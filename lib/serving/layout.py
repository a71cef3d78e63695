"""How a model is laid out over devices: tensor, pipeline and data parallel degrees, and where they sit.

Introduced in chapter 7 (serving many users). A :class:`Layout` splits each
layer over ``tp`` devices, the layer stack into ``pp`` stages and keeps ``dp``
replicas: ``tp * pp * dp`` devices in all. Devices are numbered tensor-parallel
first, then stage, then replica, and fill servers of ``devices_per_node`` in
order, as launchers place ranks.

>>> layout = Layout(tp=4, pp=2, dp=1)
>>> layout.devices, layout.name
(8, 'tp4-pp2-dp1')
>>> stage_layers(80, 3)
[27, 27, 26]
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from lib import _checks
from lib.hardware import Link
from lib.hardware import device as lookup_device
from lib.hardware import link as lookup_link
from lib.transformer import ModelConfig, check_tp_degree

__all__ = ["MAX_DEVICES", "SPLITS", "Layout", "Cluster", "stage_layers", "check_layout", "check_devices", "layouts"]

#: The most devices the planner lays a model out over: :func:`layouts` (so :func:`lib.serving.plan` and
#: :func:`lib.serving.size`), ``python -m lib.serving`` and the planner page refuse more. A sanity cap on the
#: enumeration's cost (every divisor pair of the count is checked; 100,000 devices take tens of seconds), far
#: above any one model's serving deployment.
MAX_DEVICES = 4096

#: The kinds of split, from the simplest to deploy to the least simple (:meth:`Layout.splits`): independent
#: replicas (one engine each, nothing shared), one tensor-parallel group (``--tensor-parallel-size``, one
#: flag), a pipeline (``--pipeline-parallel-size``, a schedule to fill), a group wider than one server
#: (its collectives cross the network: vLLM's guide sets "tensor_parallel_size to the number of GPUs per node
#: and pipeline_parallel_size to the number of nodes", vllm-project/vllm docs/serving/parallelism_scaling.md
#: at f948f41), whole experts placed on the group (``--enable-expert-parallel``) and attention run
#: data-parallel beside them.
SPLITS = ("replicas", "tensor", "pipeline", "group across servers", "experts", "attention data-parallel")


@dataclass(frozen=True)
class Layout:
    """``tp`` x ``pp`` x ``dp`` devices; ``expert_parallel`` places whole experts on the ``tp`` devices.

    With ``expert_parallel`` alone the attention is still split by heads and
    each device holds ``experts / tp`` whole experts, as vLLM runs expert
    parallelism inside a tensor-parallel group (the same two all-reduces per
    layer). ``attention_dp`` runs attention data-parallel instead, as SGLang
    and vLLM serve DeepSeek-V3 (``--enable-dp-attention``,
    ``--data-parallel-size`` with ``--enable-expert-parallel``): each of the
    ``tp`` devices of the group holds the whole attention and the caches of
    its own share of the sequences, the experts are spread over the group,
    and tokens reach their experts and come back in a dispatch and a combine
    all-to-all per layer. The shared experts and the leading dense layers run
    data-parallel with the attention.
    """

    tp: int = 1
    pp: int = 1
    dp: int = 1
    expert_parallel: bool = False
    attention_dp: bool = False

    def __post_init__(self) -> None:
        for name in ("tp", "pp", "dp"):
            object.__setattr__(self, name, _checks.scalar_count(name, getattr(self, name), minimum=1))
        if self.attention_dp and not self.expert_parallel:
            raise ValueError("attention_dp needs expert_parallel: the experts are what the group shares")

    @property
    def devices(self) -> int:
        """``tp * pp * dp``."""
        return self.tp * self.pp * self.dp

    @property
    def name(self) -> str:
        """``"tp{T}-pp{P}-dp{D}"``, the planner's row key; ``"ep{T}-pp{P}-dp{D}"`` with expert parallelism.

        >>> Layout(tp=4, dp=2).name, Layout(tp=4, dp=2, expert_parallel=True).name
        ('tp4-pp1-dp2', 'ep4-pp1-dp2')
        >>> Layout(tp=8, expert_parallel=True, attention_dp=True).name     # attention data-parallel over 8
        'adp8-ep8-pp1-dp1'
        """
        group = f"{'ep' if self.expert_parallel else 'tp'}{self.tp}-pp{self.pp}-dp{self.dp}"
        return f"adp{self.tp}-{group}" if self.attention_dp else group

    def splits(self, devices_per_node: int | None = None) -> tuple[str, ...]:
        """The kinds of split the layout uses, in the order of :data:`SPLITS` (simplest first).

        ``"replicas"`` if ``dp > 1``; ``"tensor"`` if a group of ``tp > 1``
        splits the attention by heads (every group but an attention-data-parallel
        one); ``"pipeline"`` if ``pp > 1``; ``"group across servers"`` if the
        group is wider than a server of ``devices_per_node`` (not checked when
        None); ``"experts"`` with whole experts on the group;
        ``"attention data-parallel"`` with :attr:`attention_dp`.

        >>> Layout(dp=8).splits(), Layout(tp=2, pp=4).splits(), Layout(tp=16).splits(8)
        (('replicas',), ('tensor', 'pipeline'), ('tensor', 'group across servers'))
        >>> Layout(tp=2, expert_parallel=True, attention_dp=True).splits()
        ('experts', 'attention data-parallel')
        """
        wide = devices_per_node is not None and self.tp > _checks.scalar_count(
            "devices_per_node", devices_per_node, minimum=1
        )
        used = (
            self.dp > 1,
            self.tp > 1 and not self.attention_dp,
            self.pp > 1,
            wide,
            self.expert_parallel and self.tp > 1,
            self.attention_dp,
        )
        return tuple(kind for kind, yes in zip(SPLITS, used) if yes)

    def simplicity(self, devices_per_node: int | None = None) -> tuple[int, int]:
        """A sort key, smaller for the simpler layout: how many kinds of split, then which (:meth:`splits`).

        Fewer kinds come first; among as many kinds, the layout whose least
        simple kind comes earlier in :data:`SPLITS` (replicas, then tensor,
        pipeline, a group across servers, experts, attention data-parallel):
        the second number adds ``2 ** i`` for the ``i``-th kind of
        :data:`SPLITS` used. :func:`lib.serving.plan.best` prefers the
        simplest row among those within the model's error of the best.

        >>> shapes = [Layout(tp=2, pp=4), Layout(tp=8), Layout(dp=8), Layout(tp=4, dp=2), Layout(pp=2, dp=4)]
        >>> [layout.name for layout in sorted(shapes, key=Layout.simplicity)]
        ['tp1-pp1-dp8', 'tp8-pp1-dp1', 'tp4-pp1-dp2', 'tp1-pp2-dp4', 'tp2-pp4-dp1']
        >>> sorted([Layout(tp=16), Layout(tp=8, pp=2)], key=lambda layout: layout.simplicity(8))[0].name
        'tp8-pp2-dp1'
        """
        kinds = self.splits(devices_per_node)
        return len(kinds), sum(2 ** SPLITS.index(kind) for kind in kinds)


@dataclass(frozen=True)
class Cluster:
    """Where the devices sit: the device, servers of ``devices_per_node``, and the links.

    ``link`` joins the devices of one server (the device's own by default);
    ``inter_link`` is each network port between servers, ``nics_per_node``
    of them per server. Both default to the device's reference servers
    (:attr:`lib.hardware.Device.network`, ``nics_per_gpu``): NDR 400 Gb/s,
    one port per GPU, for H100, H200 and B200; HDR 200 Gb/s, one per GPU,
    for A100; one 100 Gb/s Ethernet port per eight PCIe GPUs.

    >>> [Cluster(d).inter_link.name for d in ("a100-80gb", "h100-sxm")], Cluster("l4").nics_per_node
    (['InfiniBand HDR (200 Gb/s)', 'InfiniBand NDR (400 Gb/s)'], 1)
    """

    device: object
    devices_per_node: int = 8
    link: Link | str | None = None
    inter_link: Link | str | None = None
    nics_per_node: int | None = None

    def __post_init__(self) -> None:
        device = lookup_device(self.device)
        object.__setattr__(self, "device", device)
        object.__setattr__(
            self, "devices_per_node", _checks.scalar_count("devices_per_node", self.devices_per_node, minimum=1)
        )
        object.__setattr__(self, "link", lookup_link(device.link if self.link is None else self.link))
        object.__setattr__(
            self, "inter_link", lookup_link(device.network if self.inter_link is None else self.inter_link)
        )
        nics = (
            max(1, round(device.nics_per_gpu * self.devices_per_node))
            if self.nics_per_node is None
            else self.nics_per_node
        )
        object.__setattr__(self, "nics_per_node", _checks.scalar_count("nics_per_node", nics, minimum=1))

    def node(self, index: int) -> int:
        """The server that holds device ``index``."""
        return index // self.devices_per_node

    def holds_group(self, tp: int) -> bool:
        """True if a tensor-parallel group of ``tp`` devices sits inside one server or fills whole servers.

        Engines place a group that way; a group of 5 on servers of 4, or of 12
        on servers of 8, would straddle a server boundary unevenly.

        >>> cluster = Cluster("h100-sxm", devices_per_node=8)
        >>> [cluster.holds_group(k) for k in (4, 8, 12, 16)]
        [True, True, False, True]
        """
        return self.devices_per_node % tp == 0 or tp % self.devices_per_node == 0


def stage_layers(layers: int, stages: int) -> list[int]:
    """Layers per pipeline stage: an even split, the first ``layers % stages`` stages one more.

    Engines differ in where they put the remainder; the heaviest stage is the
    same either way.

    >>> stage_layers(32, 4), stage_layers(7, 3)
    ([8, 8, 8, 8], [3, 2, 2])
    """
    n = _checks.scalar_count("layers", layers, minimum=1)
    s = _checks.scalar_count("stages", stages, minimum=1)
    if s > n:
        raise ValueError(f"stages must be at most the number of layers ({n}), got {s}")
    return [n // s + (1 if i < n % s else 0) for i in range(s)]


def check_layout(config: ModelConfig, layout: Layout) -> None:
    """Raise a ValueError naming the degree that ``config`` cannot be split by.

    >>> from lib.transformer import PRESETS
    >>> check_layout(PRESETS["llama-3-8b"], Layout(tp=3))
    Traceback (most recent call last):
    ...
    ValueError: tp must split the 32 heads, 8 KV heads and MLP width 14336 of Llama-3 8B evenly (see valid_tp_degrees), got 3

    A pair that passed is remembered (both are frozen), so the pricing
    functions that call this for every pass pay for the check once.
    """
    _check_layout(config, layout)


@functools.lru_cache(maxsize=4096)
def _check_layout(config: ModelConfig, layout: Layout) -> None:
    if layout.expert_parallel:
        if config.experts == 1:
            raise ValueError(f"expert_parallel needs a mixture of experts; {config.name} is dense")
        if layout.attention_dp and layout.tp == 1:
            raise ValueError("attention_dp needs a group of more than one device (tp > 1)")
        if config.experts % layout.tp:
            raise ValueError(
                f"tp must divide the {config.experts} experts of {config.name} for expert parallelism, got {layout.tp}"
            )
    check_tp_degree(config, layout.tp, "tp")
    if layout.pp > config.layers:
        raise ValueError(f"pp must be at most the {config.layers} layers of {config.name}, got {layout.pp}")


def check_devices(devices: int, name: str = "devices") -> int:
    """``devices`` as a whole number from 1 to :data:`MAX_DEVICES`; else a ``ValueError`` naming ``name``.

    >>> check_devices(8)
    8
    >>> check_devices(100000)
    Traceback (most recent call last):
    ...
    ValueError: devices must be at most 4096 (the planner's cap), got 100000
    """
    n = _checks.scalar_count(name, devices, minimum=1)
    if n > MAX_DEVICES:
        raise ValueError(f"{name} must be at most {MAX_DEVICES} (the planner's cap), got {n}")
    return n


def layouts(config: ModelConfig, devices: int, expert_parallel: bool | str = False) -> list[Layout]:
    """Every layout that uses exactly ``devices``: valid ``tp``, then ``pp``, then ``dp = devices / (tp pp)``.

    For a mixture of experts, ``expert_parallel=True`` places whole experts
    on the tensor-parallel devices instead of splitting each, ``"both"``
    lists the two side by side (each expert-parallel layout after its
    tensor-parallel twin), and ``"all"`` adds the attention-data-parallel
    layouts (:class:`Layout` ``attention_dp``) after those. A dense model
    ignores it. ``devices`` is at most :data:`MAX_DEVICES` (:func:`check_devices`).

    >>> [l.name for l in layouts(__import__("lib.transformer").transformer.PRESETS["llama-3-8b"], 4)]
    ['tp1-pp1-dp4', 'tp1-pp2-dp2', 'tp1-pp4-dp1', 'tp2-pp1-dp2', 'tp2-pp2-dp1', 'tp4-pp1-dp1']
    """
    n = check_devices(devices)
    if expert_parallel not in (True, False, "both", "all"):
        raise ValueError(f"expert_parallel must be True, False, 'both' or 'all', got {expert_parallel!r}")
    variants = {
        "both": [(False, False), (True, False)],
        "all": [(False, False), (True, False), (True, True)],
        True: [(True, False)],
        False: [(False, False)],
    }[expert_parallel]
    found = []
    for tp in range(1, n + 1):
        if n % tp:
            continue
        for pp in range(1, n // tp + 1):
            if (n // tp) % pp or pp > config.layers:
                continue
            for ep, adp in variants:
                moe = config.experts > 1 and tp > 1
                layout = Layout(tp, pp, n // (tp * pp), ep and moe, adp and ep and moe)
                try:
                    check_layout(config, layout)
                except ValueError:
                    continue
                if layout not in found:
                    found.append(layout)
    return found
