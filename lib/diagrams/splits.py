"""Diagrams of the splits that the book's other diagrams leave out, and the table of every split's figure.

Part of :mod:`lib.diagrams`, which re-exports everything here. Like the
diagrams of :mod:`lib.diagrams.figures`, each is a pair: a ``*_data``
function that returns plain data with an ``"alt"`` description, computed
from the same ``lib`` objects the chapters use, and a function that draws
exactly that data.

* :func:`sequence_parallel_block` (:func:`sequence_parallel_data`): what each
  GPU holds between the reduce-scatter and the all-gather (chapter 6);
* :func:`data_parallel_replicas` (:func:`replicas_data`): whole replicas
  behind a router, which exchange nothing (chapter 9);
* :func:`expert_dispatch` (:func:`dispatch_data`): tokens dispatched to the
  GPUs that hold their experts and combined back, two all-to-alls (chapter 9);
* :func:`disaggregated_pools` (:func:`disaggregated_data`): a prefill pool, a
  decode pool and the KV cache between them (chapter 12).

:data:`SPLIT_FIGURES` says, for every split, which chapter introduces it,
the section, and the name its figure is glued under.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from lib import _checks
from lib.collectives import all_to_all_bytes, allgather_bytes, reduce_scatter_bytes
from lib.diagrams._draw import arrow, box, canvas, label, register, shade, tint
from lib.diagrams.data import _config, listing, span
from lib.diagrams.figures import shown
from lib.experts import route
from lib.plotting import COLORS
from lib.serving.layout import Layout, check_layout
from lib.serving.memory import kv_cache_bytes, stage_weight_bytes
from lib.serving.operators import ACTIVATION_BYTES
from lib.transformer import ModelConfig, check_tp_degree

__all__ = [
    "SPLIT_FIGURES",
    "sequence_parallel_data",
    "sequence_parallel_block",
    "replicas_data",
    "data_parallel_replicas",
    "dispatch_data",
    "expert_dispatch",
    "disaggregated_data",
    "disaggregated_pools",
]

#: split -> (chapter notebook, section heading, glued figure name): where each split is introduced and drawn.
SPLIT_FIGURES: dict[str, tuple[str, str, str]] = {
    "tensor": (
        "06_tensor_parallel_decode.ipynb",
        "## The Megatron split: two all-reduces per layer",
        "c06_fig_tp_block",
    ),
    "sequence": (
        "06_tensor_parallel_decode.ipynb",
        "## Reduce-scatter and all-gather: sequence parallelism",
        "c06_fig_sp_block",
    ),
    "pipeline": ("08_pipeline_bubbles.ipynb", "## Whole layers per device", "c08_fig_stages"),
    "data": ("09_choosing.ipynb", "## Two replicas or one split", "c09_fig_replicas"),
    "expert": ("09_choosing.ipynb", "## Expert parallelism", "c09_fig_dispatch"),
    "disaggregated": ("12_engines_today.ipynb", "## Disaggregated prefill and decode", "c12_fig_disagg"),
}

_COMM = COLORS["communication"]
_HOP = COLORS["bound"]
_PICKED = COLORS["highlight"]
_WORK = tint(COLORS["compute"], 0.78)


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB" if n >= 1e6 else f"{n / 1e3:,.1f} kB" if n >= 1e3 else f"{n:,.0f} B"


def _lanes(ax, data: dict, height: float, top: float, columns: list, texts, bars: list, lane_h: float, gap: float):
    """Draw one lane per shown GPU: a box per column with ``texts(rank)``, arrows, and a collective bar per gap.

    ``bars`` holds ``(x, words)``: a vertical bar at ``x`` between two
    columns, labelled with ``words``. Returns the y of the lanes' bottom.
    """
    lanes = shown(data["devices_count"])
    for i, rank in enumerate(lanes):
        y = height - top - (i + 1) * (lane_h + gap) + gap / 2
        mid = y + lane_h / 2
        if rank is None:
            label(ax, 3.9, mid, f"GPUs {lanes[i - 1] + 1}–{lanes[i + 1] - 1} alike", style="italic")
            continue
        label(ax, 0.38, mid, f"GPU {rank}", weight="bold")
        for (x, w, _), text in zip(columns, texts(rank)):
            box(ax, x, y, w, lane_h, face=_WORK)
            label(ax, x + w / 2, mid, text, linespacing=1.15)
        for (x0, w0, _), (x1, _, _) in zip(columns, columns[1:]):
            between = [b for b, _ in bars if x0 + w0 <= b <= x1]
            if between:
                arrow(ax, (x0 + w0, mid), (between[0], mid), lw=1.0)
                arrow(ax, (between[0] + 0.22, mid), (x1, mid), lw=1.0)
            else:
                arrow(ax, (x0 + w0, mid), (x1, mid), lw=1.0)
    bottom = height - top - len(lanes) * (lane_h + gap) + gap / 2
    for x, words in bars:
        box(ax, x, bottom, 0.22, height - top - bottom, face=_COMM, edge=_COMM, radius=0.04)
        label(ax, x + 0.11, (bottom + height - top) / 2, words, rotation=90, color="white", weight="bold")
    return bottom


# --- sequence parallelism ----------------------------------------------------------------------------------------


def sequence_parallel_data(config: ModelConfig, tp: int, tokens: int) -> dict:
    """What each of ``tp`` GPUs holds around the norm of a block under sequence parallelism, for ``tokens`` tokens.

    Megatron-LM's sequence parallelism replaces the all-reduce after a
    row-parallel projection by a reduce-scatter along the tokens: each GPU
    then holds the summed activations of its ``1/tp`` of the tokens
    (``tokens`` slice), runs the norm, residual and dropout on them alone,
    and an all-gather gives every GPU all the tokens again before the next
    column-parallel projection. ``held_bytes`` is what a GPU keeps of that
    activation tensor in between (16-bit), ``whole_bytes`` the tensor;
    ``reduce_scatter_bytes`` and ``allgather_bytes`` are what a ring sends
    from each GPU (:mod:`lib.collectives`).

    >>> from lib.transformer import PRESETS
    >>> sp = sequence_parallel_data(PRESETS["llama-3-70b"], 4, 4096)
    >>> [d["tokens"] for d in sp["devices"]][:2], sp["held_bytes"] * 4 == sp["whole_bytes"]
    ([[0, 1024], [1024, 2048]], True)
    >>> sp["reduce_scatter_bytes"] == sp["allgather_bytes"] == 3 / 4 * sp["whole_bytes"]
    True
    """
    config = _config(config)
    k = check_tp_degree(config, tp, "tp")
    t = _checks.scalar_count("tokens", tokens, minimum=k)
    if t % k:
        raise ValueError(f"tokens must be a multiple of tp = {k} so that every GPU holds as many, got {t}")
    whole = t * config.hidden * ACTIVATION_BYTES
    devices = [{"device": r, "tokens": [r * t // k, (r + 1) * t // k]} for r in range(k)]
    scatter, gather = float(reduce_scatter_bytes(whole, k)), float(allgather_bytes(whole, k))
    alt = (
        f"One {config.name} block on {k} GPUs with sequence parallelism, {t:,} tokens. After the row-parallel "
        f"output projection each GPU holds partial sums for all {t:,} tokens; a reduce-scatter, {_mb(scatter)} "
        f"sent per GPU, leaves each GPU the summed activations of {t // k:,} tokens (GPU 0 tokens "
        f"{span(*devices[0]['tokens'])}), {_mb(whole / k)} instead of {_mb(whole)}, on which it runs the norm, "
        f"the residual add and dropout alone. An all-gather, {_mb(gather)} sent per GPU, gives every GPU all "
        f"{t:,} tokens again for the next column-parallel projection. The same bytes as one all-reduce."
    )
    return {
        "model": config.name,
        "devices_count": k,
        "tokens_count": t,
        "hidden": config.hidden,
        "devices": devices,
        "whole_bytes": float(whole),
        "held_bytes": float(whole / k),
        "reduce_scatter_bytes": scatter,
        "allgather_bytes": gather,
        "alt": alt,
    }


def sequence_parallel_block(config: ModelConfig, tp: int, tokens: int) -> Figure:
    """The sequence-parallel region of a block on ``tp`` GPUs, one lane per GPU (:func:`sequence_parallel_data`).

    >>> from lib.transformer import PRESETS
    >>> from lib.diagrams import diagram_data
    >>> fig = sequence_parallel_block(PRESETS["llama-3-70b"], 4, 4096)
    >>> diagram_data(fig)["devices"][3]["tokens"]
    [3072, 4096]
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    data = sequence_parallel_data(config, tp, tokens)
    lanes = shown(data["devices_count"])
    lane_h, gap, top, bottom = 0.62, 0.14, 1.05, 0.75
    height = top + len(lanes) * (lane_h + gap) + bottom
    fig, ax = canvas(7.8, height)
    k, t = data["devices_count"], data["tokens_count"]
    label(
        ax,
        3.9,
        height - 0.22,
        f"Sequence parallelism: {data['model']}, {t:,} tokens on {k} GPUs",
        size=10,
        weight="bold",
    )
    columns = [
        (0.75, 1.85, "output projection\n(row-parallel)"),
        (3.05, 2.05, "norm, residual, dropout\n(token by token)"),
        (5.55, 1.95, "next projection\n(column-parallel)"),
    ]
    for x, w, title in columns:
        label(ax, x + w / 2, height - top + 0.3, title)
    held = f"{t // k:,} tokens × {data['hidden']:,}"

    def texts(rank: int) -> list[str]:
        d = data["devices"][rank]
        return [f"partial sums,\nall {t:,} tokens", f"tokens {span(*d['tokens'])}\n{held}", f"all {t:,} tokens"]

    bars = [(2.69, "reduce-scatter"), (5.19, "all-gather")]
    low = _lanes(ax, data, height, top, columns, texts, bars, lane_h, gap)
    label(ax, 2.8, low - 0.3, f"{_mb(data['reduce_scatter_bytes'])} sent per GPU", color=_COMM)
    label(ax, 5.3, low - 0.3, f"{_mb(data['allgather_bytes'])} sent per GPU", color=_COMM)
    label(
        ax,
        0.1,
        0.2,
        f"between the two, each GPU keeps {_mb(data['held_bytes'])}, not {_mb(data['whole_bytes'])}",
        ha="left",
    )
    return register(fig, data)


# --- data parallelism --------------------------------------------------------------------------------------------


def replicas_data(config: ModelConfig, replicas: int, tp: int = 1, requests: int = 6) -> dict:
    """``replicas`` whole copies of the model behind a router, each on ``tp`` GPUs, taking turns at ``requests``.

    Each replica holds every layer (``weight_bytes`` per GPU, 16-bit, from
    :func:`lib.serving.stage_weight_bytes`) and serves its own requests, so
    replicas exchange nothing; the router deals the requests in turn (request
    ``i`` to replica ``i mod replicas``).

    >>> from lib.transformer import PRESETS
    >>> dp = replicas_data(PRESETS["llama-3-8b"], 2)
    >>> [r["requests"] for r in dp["replicas"]], [r["gpus"] for r in dp["replicas"]]
    ([[0, 2, 4], [1, 3, 5]], [[0], [1]])
    """
    config = _config(config)
    r = _checks.scalar_count("replicas", replicas, minimum=1)
    layout = Layout(tp=tp, dp=r)
    check_layout(config, layout)
    n = _checks.scalar_count("requests", requests, minimum=1)
    weight = float(stage_weight_bytes(config, Layout(tp=tp))[0])
    rows = [
        {"replica": i, "gpus": list(range(i * tp, (i + 1) * tp)), "requests": list(range(i, n, r))} for i in range(r)
    ]
    gpus = "one GPU" if tp == 1 else f"{tp} GPUs"
    alt = (
        f"{r} replicas of {config.name} behind a router, each on {gpus} holding all {config.layers} layers, "
        f"{weight / 1e9:.1f} GB of weights per GPU. The router deals requests 0 to {n - 1} in turn: replica 0 "
        f"takes requests {', '.join(map(str, rows[0]['requests']))}. The replicas exchange nothing."
    )
    return {
        "model": config.name,
        "replicas_count": r,
        "tp": tp,
        "layers": config.layers,
        "weight_bytes": weight,
        "replicas": rows,
        "requests_count": n,
        "alt": alt,
    }


def data_parallel_replicas(config: ModelConfig, replicas: int, tp: int = 1, requests: int = 6) -> Figure:
    """A router on the left, one box per replica on the right (:func:`replicas_data`).

    >>> from lib.transformer import PRESETS
    >>> from lib.diagrams import diagram_data
    >>> fig = data_parallel_replicas(PRESETS["llama-3-8b"], 2)
    >>> diagram_data(fig)["replicas"][1]["requests"]
    [1, 3, 5]
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    data = replicas_data(config, replicas, tp, requests)
    rows = shown(data["replicas_count"])
    row_h, gap, top = 0.9, 0.25, 0.75
    height = top + len(rows) * (row_h + gap) + 0.5
    fig, ax = canvas(7.8, height)
    label(
        ax,
        3.9,
        height - 0.22,
        f"Data parallelism: {data['replicas_count']} replicas of {data['model']}",
        size=10,
        weight="bold",
    )
    stack_top = height - top
    stack_mid = stack_top - len(rows) * (row_h + gap) / 2
    label(ax, 0.6, stack_mid + 0.55, f"requests\n0 to {data['requests_count'] - 1}", linespacing=1.15)
    arrow(ax, (0.6, stack_mid + 0.3), (0.6, stack_mid + 0.02), lw=1.0)
    box(ax, 0.15, stack_mid - 0.35, 0.9, 0.35, face=tint(COLORS["one"], 0.85))
    label(ax, 0.6, stack_mid - 0.175, "router", weight="bold")
    gpus = "one GPU" if data["tp"] == 1 else f"{data['tp']} GPUs"
    left = 3.7
    for i, rep in enumerate(rows):
        y = stack_top - (i + 1) * (row_h + gap) + gap / 2
        mid = y + row_h / 2
        if rep is None:
            label(ax, left + 1.9, mid, f"replicas {rows[i - 1] + 1}–{rows[i + 1] - 1} alike", style="italic")
            continue
        r = data["replicas"][rep]
        start = (1.05, stack_mid - 0.175)
        arrow(ax, start, (left, mid), lw=1.2, color=_HOP)
        taken = ", ".join(map(str, r["requests"])) or "none yet"
        above = mid >= start[1]
        label(
            ax,
            (start[0] + left) / 2,
            (start[1] + mid) / 2 + (0.22 if above else -0.22),
            f"requests {taken}",
            color=_HOP,
        )
        box(ax, left, y, 7.65 - left, row_h, face=shade(rep))
        lines = [
            f"replica {rep}: {listing(r['gpus'])}",
            f"all {data['layers']} layers, {data['weight_bytes'] / 1e9:.1f} GB a GPU",
        ]
        label(ax, (left + 7.65) / 2, mid, "\n".join(lines), linespacing=1.25)
    label(ax, 0.1, 0.2, f"replicas exchange nothing: each serves its own requests on {gpus}", ha="left")
    return register(fig, data)


# --- expert parallelism ------------------------------------------------------------------------------------------


def dispatch_data(config: ModelConfig, devices: int, tokens_per_device: int, seed: int = 0) -> dict:
    """Tokens dispatched to the GPUs that hold their experts, and combined back: the two all-to-alls of a layer.

    Each of ``devices`` GPUs holds ``experts / devices`` whole experts and
    ``tokens_per_device`` tokens (from its own attention). The router
    (:func:`lib.experts.route`, ``seed``) picks each token's top-k experts;
    ``sends[i][j]`` counts the token copies GPU ``i`` sends to GPU ``j``
    (the diagonal stays home). ``dispatch_bytes`` is the most any GPU sends
    in the dispatch (16-bit hidden vectors); the combine returns as many.

    >>> from lib.transformer import PRESETS
    >>> ep = dispatch_data(PRESETS["mixtral-8x7b"], 4, 8)
    >>> [d["experts"] for d in ep["devices"]], [sum(row) for row in ep["sends"]]
    ([[0, 2], [2, 4], [4, 6], [6, 8]], [16, 16, 16, 16])
    """
    config = _config(config)
    if config.experts == 1:
        raise ValueError(f"config must be a mixture of experts; {config.name} is dense (experts=1)")
    k = _checks.scalar_count("devices", devices, minimum=1)
    if config.experts % k:
        raise ValueError(f"devices must divide the {config.experts} experts of {config.name}, got {k}")
    n = _checks.scalar_count("tokens_per_device", tokens_per_device, minimum=1)
    per = config.experts // k
    chosen = route(n * k, config.experts, config.experts_per_token, seed=seed)
    owner = chosen // per
    sends = [[int(np.sum(owner[i * n : (i + 1) * n] == j)) for j in range(k)] for i in range(k)]
    vector = config.hidden * ACTIVATION_BYTES
    away = [sum(row) - row[i] for i, row in enumerate(sends)]
    devices = [
        {"device": d, "experts": [d * per, (d + 1) * per], "tokens": n, "receives": sum(row[d] for row in sends)}
        for d in range(k)
    ]
    most = max(range(k), key=lambda d: devices[d]["receives"])
    alt = (
        f"Expert parallelism for one {config.name} layer on {k} GPUs, each holding {per} whole experts and "
        f"{n} tokens. The router sends each token to its top {config.experts_per_token} experts: in the dispatch "
        f"all-to-all every GPU sends the hidden vectors of its tokens to the GPUs holding their experts (GPU 0 "
        f"sends {away[0]} token copies away and keeps {sends[0][0]}; at most {max(away) * vector:,} bytes leave "
        f"one GPU). Each GPU runs its experts on what it receives (GPU {most} receives "
        f"{devices[most]['receives']}), and the combine all-to-all returns the results to the tokens' GPUs, "
        "where each token sums its experts' outputs."
    )
    return {
        "model": config.name,
        "devices_count": k,
        "experts": config.experts,
        "top_k": config.experts_per_token,
        "tokens_per_device": n,
        "devices": devices,
        "sends": sends,
        "dispatch_bytes": max(away) * vector,
        "uniform_bytes": float(all_to_all_bytes(n * config.experts_per_token * vector, k)),
        "alt": alt,
    }


def expert_dispatch(config: ModelConfig, devices: int, tokens_per_device: int, seed: int = 0) -> Figure:
    """Dispatch, experts and combine on ``devices`` GPUs, one lane per GPU (:func:`dispatch_data`).

    >>> from lib.transformer import PRESETS
    >>> from lib.diagrams import diagram_data
    >>> fig = expert_dispatch(PRESETS["mixtral-8x7b"], 4, 8)
    >>> len(diagram_data(fig)["sends"])
    4
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    data = dispatch_data(config, devices, tokens_per_device, seed)
    lanes = shown(data["devices_count"])
    lane_h, gap, top, bottom = 0.62, 0.14, 1.05, 0.75
    height = top + len(lanes) * (lane_h + gap) + bottom
    fig, ax = canvas(7.8, height)
    k, n = data["devices_count"], data["tokens_per_device"]
    label(
        ax,
        3.9,
        height - 0.22,
        f"Expert parallelism: one {data['model']} layer on {k} GPUs, top {data['top_k']}",
        size=10,
        weight="bold",
    )
    columns = [
        (0.75, 1.45, "attention,\nown tokens"),
        (2.65, 1.75, "its experts,\ntokens received"),
        (4.85, 1.3, "sum of experts,\nown tokens"),
        (6.6, 1.0, "sent away\n(dispatch)"),
    ]
    for x, w, title in columns:
        label(ax, x + w / 2, height - top + 0.3, title)

    def texts(rank: int) -> list[str]:
        d = data["devices"][rank]
        away = sum(data["sends"][rank]) - data["sends"][rank][rank]
        return [
            f"{n} tokens",
            f"{span(*d['experts'], 'experts')}\n{d['receives']} copies in",
            f"{n} tokens",
            f"{away} of {n * data['top_k']}",
        ]

    bars = [(2.32, "dispatch"), (4.52, "combine")]
    low = _lanes(ax, data, height, top, columns[:3], texts, bars, lane_h, gap)
    for i, rank in enumerate(lanes):  # the last column is a count, not a step: no arrow into it
        if rank is None:
            continue
        y = height - top - (i + 1) * (lane_h + gap) + gap / 2
        x, w, _ = columns[3]
        box(ax, x, y, w, lane_h, face="white", edge=_COMM, ls="--")
        label(ax, x + w / 2, y + lane_h / 2, texts(rank)[3], color=_COMM)
    label(
        ax,
        3.5,
        low - 0.3,
        f"two all-to-alls a layer; at most {data['dispatch_bytes']:,} B leave a GPU in each",
        color=_COMM,
    )
    label(
        ax, 0.1, 0.2, "each token's copies go to the GPUs holding its experts; the combine brings them back", ha="left"
    )
    return register(fig, data)


# --- disaggregated prefill and decode ----------------------------------------------------------------------------


def disaggregated_data(
    config: ModelConfig, prefill_devices: int, decode_devices: int, prompt_tokens: int, kv_bytes_per_element: int = 2
) -> dict:
    """A prefill pool and a decode pool of GPUs, and the KV cache one prompt sends from the first to the second.

    ``kv_bytes`` is :func:`lib.serving.kv_cache_bytes` of ``prompt_tokens``
    tokens at ``kv_bytes_per_element`` bytes per element.

    >>> from lib.transformer import PRESETS
    >>> pools = disaggregated_data(PRESETS["llama-3-70b"], 2, 6, 1024)
    >>> pools["prefill"]["gpus"], pools["decode"]["gpus"], round(pools["kv_bytes"] / 1e6)
    ([0, 1], [2, 3, 4, 5, 6, 7], 336)
    """
    config = _config(config)
    p = _checks.scalar_count("prefill_devices", prefill_devices, minimum=1)
    d = _checks.scalar_count("decode_devices", decode_devices, minimum=1)
    tokens = _checks.scalar_count("prompt_tokens", prompt_tokens, minimum=1)
    kv = float(kv_cache_bytes(config, tokens, kv_bytes_per_element))
    alt = (
        f"Disaggregated serving of {config.name} on {p + d} GPUs: a prefill pool of {p} GPU{'s' if p > 1 else ''} "
        f"computes each prompt and its first token; the prompt's KV cache, {kv / 1e6:,.0f} MB for {tokens:,} "
        f"tokens, crosses a link to a decode pool of {d} GPU{'s' if d > 1 else ''}, whose steps carry only "
        "decodes and return the other tokens."
    )
    return {
        "model": config.name,
        "prompt_tokens": tokens,
        "prefill": {"gpus": list(range(p))},
        "decode": {"gpus": list(range(p, p + d))},
        "kv_bytes": kv,
        "kv_bytes_per_element": kv_bytes_per_element,
        "alt": alt,
    }


def disaggregated_pools(
    config: ModelConfig, prefill_devices: int, decode_devices: int, prompt_tokens: int, kv_bytes_per_element: int = 2
) -> Figure:
    """Requests into a prefill pool, its KV cache across to a decode pool, tokens out (:func:`disaggregated_data`).

    >>> from lib.transformer import PRESETS
    >>> from lib.diagrams import diagram_data
    >>> fig = disaggregated_pools(PRESETS["llama-3-70b"], 2, 6, 1024)
    >>> len(diagram_data(fig)["decode"]["gpus"])
    6
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    data = disaggregated_data(config, prefill_devices, decode_devices, prompt_tokens, kv_bytes_per_element)
    bits = 8 * data["kv_bytes_per_element"]
    chip_w, chip_h, pad = 0.7, 0.36, 0.1
    pools = [("prefill pool", data["prefill"]["gpus"], 0), ("decode pool", data["decode"]["gpus"], 2)]

    # GPUs a row: a square-ish block for a few (2 x 2 for four), at most 4, fewer where the pools would crowd
    # the KV cache's arrow (1.3 in between them); at most two rows, the last chip saying where the pool ends.
    per_row = [2 if len(g) <= 4 else 3 if len(g) <= 6 else 4 for _, g, _ in pools]

    def widths_for(counts: list[int]) -> list[float]:
        return [max(2.3, pad * 2 + min(len(g), c) * (chip_w + 0.08) - 0.08) for (_, g, _), c in zip(pools, counts)]

    while sum(widths_for(per_row)) > 5.2:
        per_row = [c - 1 if c == max(per_row) else c for c in per_row]
    rows = max(-(-min(len(g), 2 * c) // c) for (_, g, _), c in zip(pools, per_row))
    h = 0.6 + rows * (chip_h + 0.1) + 0.1
    height = 1.0 + h + 0.6
    fig, ax = canvas(7.8, height)
    label(ax, 3.9, height - 0.22, f"Disaggregated prefill and decode: {data['model']}", size=10, weight="bold")
    label(ax, 3.9, height - 0.55, f"one {data['prompt_tokens']:,}-token prompt, {bits}-bit KV cache")
    y = 0.55
    widths = widths_for(per_row)
    xs = [1.15, 7.7 - widths[1]]
    for (name, gpus, colour), x, w, per in zip(pools, xs, widths, per_row):
        box(ax, x, y, w, h, face=shade(colour, 0.8))
        label(ax, x + w / 2, y + h - 0.25, f"{name}: {len(gpus)} GPU{'s' if len(gpus) > 1 else ''}", weight="bold")
        drawn = gpus if len(gpus) <= 2 * per else gpus[: 2 * per - 1]
        left = x + (w - (min(len(gpus), per) * (chip_w + 0.08) - 0.08)) / 2
        for j, g in enumerate(drawn):
            row, col = divmod(j, per)
            cx, cy = left + col * (chip_w + 0.08), y + h - 0.55 - chip_h - row * (chip_h + 0.1)
            box(ax, cx, cy, chip_w, chip_h, face="white", radius=0.04)
            label(ax, cx + chip_w / 2, cy + chip_h / 2, f"GPU {g}")
        if len(gpus) > len(drawn):
            cx = left + (len(drawn) % per) * (chip_w + 0.08)
            label(ax, cx + chip_w / 2, y + h - 0.55 - chip_h / 2 - (chip_h + 0.1), f"… {gpus[-1]}", style="italic")
    mid = y + h / 2
    prefill_end = xs[0] + widths[0]
    label(ax, 0.55, mid + 0.25, "prompts")
    arrow(ax, (0.1, mid), (xs[0], mid), color=_HOP, lw=1.6)
    arrow(ax, (prefill_end, mid), (xs[1], mid), color=_COMM, lw=2.4)
    centre = (prefill_end + xs[1]) / 2
    label(ax, centre, mid + 0.3, "KV cache", color=_COMM, weight="bold")
    label(ax, centre, mid - 0.3, f"{data['kv_bytes'] / 1e6:,.0f} MB", color=_COMM)
    label(ax, (xs[0] + prefill_end) / 2, y - 0.25, "first token", color=_HOP)
    label(ax, 7.7, y - 0.25, "every later token: steps of decodes only", color=_HOP, ha="right")
    return register(fig, data)
