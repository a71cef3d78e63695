"""What each diagram shows, as plain data: shards, stages, experts, and the device map.

Part of :mod:`lib.diagrams`, which re-exports everything here. Each
function returns a dict of plain Python values (ints, floats, strings,
bools, lists, dicts; ``json.dumps`` takes it as it is), computed from the
same ``lib`` objects the chapters use, with an ``"alt"`` entry that
describes the picture in words. Ranges are half-open ``[start, stop)`` and
numbered from 0, as engines number heads, columns, layers and GPUs.
"""

from __future__ import annotations

from typing import Any

from lib import _checks
from lib.collectives import ALLREDUCE_CHOICES, engine_allreduce, send_time
from lib.experts import route
from lib.hardware import LINKS
from lib.serving.engine import Engine
from lib.serving.layout import Cluster, Layout, check_layout, stage_layers
from lib.serving.memory import stage_weight_bytes
from lib.serving.operators import ACTIVATION_BYTES, exchange_time
from lib.serving.step import _hop_links
from lib.transformer import ModelConfig, check_tp_degree, parameter_breakdown, tp_bytes_per_collective

__all__ = [
    "DEVICE_MAP_VERSION",
    "listing",
    "span",
    "shard",
    "tp_block_data",
    "pipeline_data",
    "experts_data",
    "device_map_data",
]

#: Version of the :func:`device_map_data` shape; raised only when a field changes meaning or goes away.
DEVICE_MAP_VERSION = 1


def span(start: int, stop: int, what: str = "") -> str:
    """A half-open range ``[start, stop)`` in words, inclusive as readers count: ``"0–39"``.

    A range of one drops the plural ``s`` of ``what``.

    >>> span(0, 40, "layers"), span(3, 4, "KV heads"), span(2, 5)
    ('layers 0–39', 'KV head 3', '2–4')
    """
    if stop - start == 1:
        return f"{what[:-1] if what.endswith('s') else what} {start}".strip()
    return f"{what} {start}–{stop - 1}".strip()


def listing(ids: list[int], noun: str = "GPU") -> str:
    """Numbered things in words: ``"GPU 3"``, ``"GPUs 1 and 2"``, ``"GPUs 0, 4 and 5"``.

    >>> listing([3]), listing([0, 4, 5], "device")
    ('GPU 3', 'devices 0, 4 and 5')
    """
    if len(ids) == 1:
        return f"{noun} {ids[0]}"
    return f"{noun}s " + ", ".join(map(str, ids[:-1])) + f" and {ids[-1]}"


def _config(config: Any) -> ModelConfig:
    if not isinstance(config, ModelConfig):
        raise ValueError(f"config must be a lib.transformer.ModelConfig (e.g. PRESETS['llama-3-8b']), got {config!r}")
    return config


def _piece(count: int, parts: int, index: int) -> list[int]:
    """The ``index``-th of ``parts`` equal pieces of ``range(count)``, as ``[start, stop)``."""
    return [index * count // parts, (index + 1) * count // parts]


def shard(config: ModelConfig, tp: int, rank: int, expert_parallel: bool = False, attention_dp: bool = False) -> dict:
    """What tensor-parallel rank ``rank`` of ``tp`` holds of every layer.

    Query heads and MLP columns are cut evenly (Megatron-LM; vLLM's
    ``ColumnParallelLinear``); KV heads too while ``tp`` divides them, and
    past that each rank holds a copy of KV head ``rank * kv_heads // tp``
    (``kv_copies`` ranks share it). The MLP's down projection takes the
    same rows as the up projection's columns. With ``expert_parallel`` each
    rank holds ``experts / tp`` whole experts (every column of them);
    otherwise a ``1/tp`` slice of every expert. With ``attention_dp`` (and
    ``expert_parallel``) every rank holds every head: attention runs
    data-parallel, each rank over its own sequences.

    >>> from lib.transformer import PRESETS
    >>> shard(PRESETS["llama-3-70b"], 16, 3)["kv_heads"], shard(PRESETS["llama-3-70b"], 16, 3)["kv_copies"]
    ([1, 2], 2)
    >>> shard(PRESETS["mixtral-8x7b"], 4, 1, expert_parallel=True)["experts"]
    [2, 4]
    >>> [shard(PRESETS["deepseek-v3"], 8, 1, True, True)[k] for k in ("query_heads", "experts")]
    [[0, 128], [32, 64]]
    """
    config = _config(config)
    k = check_tp_degree(config, tp, "tp")
    r = _checks.scalar_count("rank", rank, minimum=0)
    if r >= k:
        raise ValueError(f"rank must be below tp ({k}), got {rank!r}")
    if expert_parallel or attention_dp:
        check_layout(config, Layout(tp=k, expert_parallel=expert_parallel, attention_dp=attention_dp))
    if attention_dp:
        kv, copies = [0, config.kv_heads], 1
    elif k <= config.kv_heads:
        kv, copies = _piece(config.kv_heads, k, r), 1
    else:
        head = r * config.kv_heads // k
        kv, copies = [head, head + 1], k // config.kv_heads
    whole = bool(expert_parallel)
    return {
        "query_heads": [0, config.heads] if attention_dp else _piece(config.heads, k, r),
        "kv_heads": kv,
        "kv_copies": copies,
        "mlp_columns": [0, config.ffn_hidden] if whole else _piece(config.ffn_hidden, k, r),
        "experts": _piece(config.experts, k, r) if whole else [0, config.experts],
        "expert_share": 1.0 if whole else 1.0 / k,
    }


def tp_block_data(config: ModelConfig, tp: int) -> dict:
    """One transformer block cut ``tp`` ways: each device's shard and the block's two all-reduces.

    Each all-reduce sums a vector of ``hidden`` activations per token, in 16
    bits (:data:`lib.serving.operators.ACTIVATION_BYTES`): the one after
    attention's output projection and the one after the MLP's down
    projection. ``ring_bytes_per_device`` is what a ring sends from each
    device per token (:func:`lib.transformer.tp_bytes_per_collective`).

    >>> from lib.transformer import PRESETS
    >>> block = tp_block_data(PRESETS["llama-3-70b"], 4)
    >>> [d["query_heads"] for d in block["devices"]][:2], block["devices"][1]["kv_heads"]
    ([[0, 16], [16, 32]], [2, 4])
    >>> [(a["after"], a["message_bytes_per_token"]) for a in block["allreduces"]]
    [('attention output projection', 16384), ('MLP down projection', 16384)]
    """
    config = _config(config)
    k = check_tp_degree(config, tp, "tp")
    message = config.hidden * ACTIVATION_BYTES
    ring = float(tp_bytes_per_collective(config.hidden, ACTIVATION_BYTES, 1, k))
    allreduces = (
        [
            {"after": after, "message_bytes_per_token": message, "ring_bytes_per_device": ring}
            for after in ("attention output projection", "MLP down projection")
        ]
        if k > 1
        else []
    )
    devices = [dict(device=r, **shard(config, k, r)) for r in range(k)]
    first = devices[0]
    kv = (
        f"{first['kv_heads'][1] - first['kv_heads'][0]} of {config.kv_heads} KV heads"
        if first["kv_copies"] == 1
        else f"a copy of one of the {config.kv_heads} KV heads (each held by {first['kv_copies']} devices)"
    )
    whole, owner = (
        (f"all {config.experts} experts", "each expert's") if config.experts > 1 else ("the MLP", "the MLP's")
    )
    if k == 1:
        alt = (
            f"One {config.name} block on one device: it holds all {config.heads} query heads, all "
            f"{config.kv_heads} KV heads and {whole} whole, so nothing is exchanged."
        )
    else:
        alt = (
            f"One {config.name} block on {k} devices: each holds {config.heads // k} of {config.heads} query heads "
            f"and {kv}, and {config.ffn_hidden // k} of the {config.ffn_hidden} columns of {owner} gate and up "
            f"projections with the matching rows of its down projection. An all-reduce of {config.hidden} x "
            f"{ACTIVATION_BYTES} = {message} bytes per token follows the attention output projection, and another "
            "the MLP down projection."
        )
    return {
        "model": config.name,
        "tp": k,
        "hidden": config.hidden,
        "heads": config.heads,
        "kv_heads": config.kv_heads,
        "ffn_hidden": config.ffn_hidden,
        "experts": config.experts,
        "devices": devices,
        "allreduces": allreduces,
        "alt": alt,
    }


def _stage(pp: int, stage: int, counts: list[int]) -> dict:
    start = sum(counts[:stage])
    return {
        "stage": stage,
        "layers": [start, start + counts[stage]],
        "layer_count": counts[stage],
        "embedding": stage == 0,
        "head": stage == pp - 1,
    }


def pipeline_data(config: ModelConfig, pp: int, weight_format: str = "bf16") -> dict:
    """The layer stack cut into ``pp`` stages (:func:`lib.serving.stage_layers`), and the hops between them.

    The first stage holds the embedding, the last the final norm and the
    output head (a copy of the embedding when it is tied and ``pp > 1``).
    ``weight_bytes`` is one stage's weights on one device
    (:func:`lib.serving.stage_weight_bytes`). Each hop sends one hidden
    vector per token, ``hidden x 2`` bytes.

    >>> from lib.transformer import PRESETS
    >>> pipe = pipeline_data(PRESETS["llama-3-70b"], 3)
    >>> [s["layers"] for s in pipe["stages"]], pipe["hop_bytes_per_token"]
    ([[0, 27], [27, 54], [54, 80]], 16384)
    """
    config = _config(config)
    p = _checks.scalar_count("pp", pp, minimum=1)
    check_layout(config, Layout(pp=p))
    counts = stage_layers(config.layers, p)
    weights = stage_weight_bytes(config, Layout(pp=p), weight_format)
    stages = [dict(_stage(p, s, counts), weight_bytes=float(weights[s])) for s in range(p)]
    hop = config.hidden * ACTIVATION_BYTES
    ranges = "; ".join(f"stage {s['stage']} {span(*s['layers'], 'layers')}" for s in stages)
    alt = (
        f"The {config.layers} layers of {config.name} cut into {p} pipeline stage{'s' if p > 1 else ''}: {ranges}. "
        "The first stage also holds the embedding, the last the output head"
        + (
            f"; each of the {p - 1} hop{'s' if p > 2 else ''} between stages sends {hop} bytes per token."
            if p > 1
            else "."
        )
    )
    return {
        "model": config.name,
        "pp": p,
        "layers": config.layers,
        "stages": stages,
        "hop_bytes_per_token": hop if p > 1 else 0,
        "alt": alt,
    }


def experts_data(config: ModelConfig, devices: int, expert_parallel: bool, seed: int = 0) -> dict:
    """Which experts each of ``devices`` holds, and where one token's top-k experts are.

    With ``expert_parallel`` each device holds ``experts / devices`` whole
    experts; without, a ``1/devices`` slice of every expert (tensor
    parallelism). Either way each device holds the same bytes of experts.
    The token is routed by :func:`lib.experts.route` (``seed``); ``visits``
    lists the devices that compute for it.

    >>> from lib.transformer import PRESETS
    >>> ep = experts_data(PRESETS["mixtral-8x7b"], 4, expert_parallel=True)
    >>> [d["experts"] for d in ep["devices"]], ep["routed_to"], ep["visits"]
    ([[0, 2], [2, 4], [4, 6], [6, 8]], [3, 5], [1, 2])
    >>> experts_data(PRESETS["mixtral-8x7b"], 4, expert_parallel=False)["visits"]
    [0, 1, 2, 3]
    """
    config = _config(config)
    if config.experts == 1:
        raise ValueError(f"config must be a mixture of experts; {config.name} is dense (experts=1)")
    if expert_parallel not in (True, False):
        raise ValueError(f"expert_parallel must be True or False, got {expert_parallel!r}")
    k = check_tp_degree(config, devices, "devices")
    if expert_parallel and config.experts % k:
        raise ValueError(
            f"devices must divide the {config.experts} experts of {config.name} for expert parallelism, got {k}"
        )
    chosen = sorted(int(e) for e in route(1, config.experts, config.experts_per_token, seed=seed)[0])
    held = [dict(device=d, **shard(config, k, d, expert_parallel)) for d in range(k)]
    visits = sorted({d["device"] for d in held for e in chosen if d["experts"][0] <= e < d["experts"][1]})
    per_device = parameter_breakdown(config).mlp * config.experts // k
    names = ", ".join(f"E{e}" for e in chosen)
    per = config.experts // k
    how = (
        f"each holds {per} whole expert{'s' if per > 1 else ''}"
        if expert_parallel
        else f"each holds a 1/{k} slice of all {config.experts} experts"
    )
    kind = "expert" if expert_parallel else "tensor"
    where = (
        f"{listing(visits, 'device')} compute{'s' if len(visits) == 1 else ''} for it"
        if expert_parallel
        else "every device computes its slice of them"
    )
    alt = (
        f"The {config.experts} experts of one {config.name} layer on {k} devices ({kind} parallelism): {how}, "
        f"{per_device:,} expert parameters per device either way. One token is routed to its top "
        f"{config.experts_per_token} ({names}); {where}."
    )
    return {
        "model": config.name,
        "devices_count": k,
        "expert_parallel": bool(expert_parallel),
        "experts": config.experts,
        "top_k": config.experts_per_token,
        "devices": held,
        "routed_to": chosen,
        "visits": visits,
        "expert_parameters_per_device": per_device,
        "alt": alt,
    }


def _link(link) -> dict:
    slug = next((key for key, value in LINKS.items() if value == link), None)
    return {"link": link.name, "link_slug": slug, "link_kind": link.kind}


def device_map_data(
    config: ModelConfig,
    layout: Layout,
    cluster: Cluster,
    tokens: int = 1,
    weight_format: str = "bf16",
    allreduce: str = "engine",
) -> dict:
    """Which GPU holds what, and which link each collective crosses, for ``layout`` on ``cluster``.

    GPUs are numbered as launchers place ranks: tensor-parallel rank first,
    then stage, then replica, filling servers of
    ``cluster.devices_per_node`` in order (:mod:`lib.serving.layout`). A
    tensor-parallel group's all-reduce runs the kernel
    :func:`lib.collectives.engine_allreduce` picks for a message of
    ``tokens`` hidden vectors (vLLM's one- or two-shot inside a server,
    NCCL across servers or on PCIe; ``allreduce="nccl"`` forces NCCL); a
    pipeline hop crosses the link :func:`lib.serving.hop_time` prices it
    with. With attention run data-parallel (``layout.attention_dp``) every
    GPU of a group holds all the heads and the group exchanges tokens
    around each routed layer instead: an all-gather and a reduce-scatter of
    the group's hidden states (:func:`lib.serving.expert_exchange`, vLLM's
    default), over the network when the group spans servers. Replicas
    exchange nothing.

    Returns a dict (version :data:`DEVICE_MAP_VERSION`; every value is
    plain JSON)::

        version, model, layout, tp, pp, dp, expert_parallel, attention_dp, tokens, message_bytes, alt
        cluster: {device, devices_per_node, servers, nics_per_node,
                  link, link_slug, link_kind, inter_link, inter_link_slug, inter_link_kind}
        servers: [{server, slots, gpus: [gpu, ...]}]        # slots beyond the layout are idle
        replicas: [{replica, gpus, servers}]
        gpus: [{gpu, server, slot, replica, stage, tp_rank,
                layers: [start, stop), layer_count, embedding, head,
                query_heads, kv_heads, kv_copies, mlp_columns, experts, expert_share,
                weight_bytes}]
        collectives: [{kind: "all-reduce", purpose: "tensor parallel", replica, stage, gpus, servers,
                       across_servers, link, link_slug, link_kind, kernel, message_bytes, time, per_token},
                      {kind: "expert exchange", purpose: "attention data parallel", replica, stage, gpus,
                       servers, across_servers, link, link_slug, link_kind, kernel, message_bytes, time, per_token},
                      {kind: "send", purpose: "pipeline hop", replica, from_stage, to_stage,
                       from_gpus, to_gpus, across_servers, link, link_slug, link_kind, message_bytes, time}]

    ``link`` is the link that sets a collective's cost (the network when it
    spans servers); ``time`` is in seconds, ``weight_bytes`` in bytes (one
    GPU's weights in ``weight_format``); ``per_token`` counts the group's
    all-reduces per token (two per layer of its stage), or its exchanges
    (two per routed layer), whose ``time`` is the pair's.

    >>> from lib.transformer import PRESETS
    >>> m = device_map_data(PRESETS["llama-3-70b"], Layout(tp=2, pp=2, dp=2), Cluster("h100-sxm"))
    >>> [(g["gpu"], g["replica"], g["stage"], g["tp_rank"]) for g in m["gpus"][:4]]
    [(0, 0, 0, 0), (1, 0, 0, 1), (2, 0, 1, 0), (3, 0, 1, 1)]
    >>> [(c["kind"], c["gpus"] if "gpus" in c else c["to_gpus"], c.get("kernel")) for c in m["collectives"][:3]]
    [('all-reduce', [0, 1], 'one-shot'), ('all-reduce', [2, 3], 'one-shot'), ('send', [2, 3], None)]
    """
    config = _config(config)
    if not isinstance(layout, Layout):
        raise ValueError(f"layout must be a lib.serving.Layout, got {layout!r}")
    if not isinstance(cluster, Cluster):
        raise ValueError(f"cluster must be a lib.serving.Cluster, got {cluster!r}")
    try:
        check_layout(config, layout)
    except ValueError as error:
        raise ValueError(f"layout {layout.name} cannot split {config.name}: {error}") from None
    if not cluster.holds_group(layout.tp):
        raise ValueError(
            f"layout {layout.name}: a tensor-parallel group of {layout.tp} would straddle servers of "
            f"{cluster.devices_per_node} unevenly (Cluster.holds_group); engines do not place it so"
        )
    n = _checks.scalar_count("tokens", tokens, minimum=1)
    if allreduce not in ALLREDUCE_CHOICES:
        raise ValueError(f"allreduce must be one of {ALLREDUCE_CHOICES}, got {allreduce!r}")
    tp, pp, per_node = layout.tp, layout.pp, cluster.devices_per_node
    counts = stage_layers(config.layers, pp)
    weights = stage_weight_bytes(config, layout, weight_format)
    message = n * config.hidden * ACTIVATION_BYTES
    gpus = []
    for g in range(layout.devices):
        rank, stage, replica = g % tp, g // tp % pp, g // (tp * pp)
        gpus.append(
            dict(
                gpu=g,
                server=cluster.node(g),
                slot=g % per_node,
                replica=replica,
                stage=stage,
                tp_rank=rank,
                **{k: v for k, v in _stage(pp, stage, counts).items() if k != "stage"},
                **shard(config, tp, rank, layout.expert_parallel, layout.attention_dp),
                weight_bytes=float(weights[stage]),
            )
        )
    servers = [
        {"server": s, "slots": per_node, "gpus": [g["gpu"] for g in gpus if g["server"] == s]}
        for s in range(-(-layout.devices // per_node))
    ]

    def group(replica: int, stage: int) -> list[int]:
        first = (replica * pp + stage) * tp
        return list(range(first, first + tp))

    def where(members: list[int]) -> list[int]:
        return sorted({cluster.node(g) for g in members})

    collectives = []
    for r in range(layout.dp):
        for s in range(pp):
            members = group(r, s)
            if tp > 1:
                nodes = where(members)
                placed = dict(
                    replica=r,
                    stage=s,
                    gpus=members,
                    servers=nodes,
                    across_servers=len(nodes) > 1,
                    **_link(cluster.inter_link if len(nodes) > 1 else cluster.link),
                    message_bytes=message,
                )
                if layout.attention_dp:
                    start, stop = _stage(pp, s, counts)["layers"]
                    time = float(exchange_time(config, cluster, tp, Engine.expert_exchange, n, n))
                    collectives.append(
                        dict(
                            kind="expert exchange",
                            purpose="attention data parallel",
                            **placed,
                            kernel="all-gather + reduce-scatter",
                            time=time,
                            per_token=2 * max(0, stop - max(start, config.dense_layers)),
                        )
                    )
                    continue
                kernel = engine_allreduce(
                    message, tp, cluster.link, len(nodes), cluster.inter_link, cluster.nics_per_node, allreduce
                )
                collectives.append(
                    dict(
                        kind="all-reduce",
                        purpose="tensor parallel",
                        **placed,
                        kernel=str(kernel.kernel),
                        time=float(kernel.time),
                        per_token=2 * counts[s],
                    )
                )
        for b, link in enumerate(_hop_links(cluster, layout, r)):
            sender, receiver = group(r, b), group(r, b + 1)
            collectives.append(
                dict(
                    kind="send",
                    purpose="pipeline hop",
                    replica=r,
                    from_stage=b,
                    to_stage=b + 1,
                    from_gpus=sender,
                    to_gpus=receiver,
                    across_servers=cluster.node(sender[-1]) != cluster.node(receiver[0]),
                    **_link(link),
                    message_bytes=message,
                    time=float(send_time(message, link)),
                )
            )
    replicas = [
        {
            "replica": r,
            "gpus": [g for s in range(pp) for g in group(r, s)],
            "servers": where([g for s in range(pp) for g in group(r, s)]),
        }
        for r in range(layout.dp)
    ]
    data = {
        "version": DEVICE_MAP_VERSION,
        "model": config.name,
        "layout": layout.name,
        "tp": tp,
        "pp": pp,
        "dp": layout.dp,
        "expert_parallel": layout.expert_parallel,
        "attention_dp": layout.attention_dp,
        "tokens": n,
        "message_bytes": message,
        "cluster": {
            "device": cluster.device.name,
            "devices_per_node": per_node,
            "servers": len(servers),
            "nics_per_node": cluster.nics_per_node,
            **_link(cluster.link),
            **{f"inter_{k}": v for k, v in _link(cluster.inter_link).items()},
        },
        "servers": servers,
        "replicas": replicas,
        "gpus": gpus,
        "collectives": collectives,
    }
    data["alt"] = _device_map_alt(data)
    return data


def _device_map_alt(data: dict) -> str:
    """The device map in words: where replicas and stages sit, and what each collective crosses."""
    c = data["cluster"]
    parts = [
        f"{data['model']} as {data['layout']} on {len(data['gpus'])} {c['device']} GPUs in {c['servers']} "
        f"server{'s' if c['servers'] > 1 else ''} of {c['devices_per_node']}."
    ]
    for rep in data["replicas"]:
        stages = [
            [g for g in data["gpus"] if g["replica"] == rep["replica"] and g["stage"] == s] for s in range(data["pp"])
        ]
        where = "; ".join(
            f"{span(st[0]['gpu'], st[-1]['gpu'] + 1, 'GPUs')} hold{'s' if len(st) == 1 else ''} "
            f"{span(*st[0]['layers'], 'layers')}"
            for st in stages
        )
        parts.append(f"Replica {rep['replica']}: {where}.")
    kinds: dict[tuple, int] = {}
    for col in data["collectives"]:
        key = (col["purpose"], col["link"], col.get("kernel"), col["across_servers"])
        kinds[key] = kinds.get(key, 0) + 1
    for (purpose, link, kernel, across), count in kinds.items():
        what = {"tensor parallel": "tensor-parallel all-reduce", "attention data parallel": "expert exchange"}.get(
            purpose, "pipeline hop"
        )
        parts.append(
            f"{count} {what}{'s' if count > 1 else ''} {'across servers over' if across else 'over'} {link}"
            + (f", kernel {kernel}." if kernel else ".")
        )
    if data["dp"] > 1:
        parts.append("Replicas exchange nothing.")
    return " ".join(parts)
