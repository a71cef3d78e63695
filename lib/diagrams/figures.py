"""Diagrams of one split each: a block under tensor parallelism, pipeline stages, experts over devices.

Part of :mod:`lib.diagrams`, which re-exports everything here. Each function
draws the dict of the matching ``*_data`` function of
:mod:`lib.diagrams.data` and returns the figure; :func:`alt_text` gives its
description in words.
"""

from __future__ import annotations

from matplotlib.figure import Figure

from lib.diagrams._draw import arrow, box, canvas, label, register, tint
from lib.diagrams.data import experts_data, listing, pipeline_data, span, tp_block_data
from lib.plotting import COLORS
from lib.transformer import ModelConfig

__all__ = ["tensor_parallel_block", "pipeline_stages", "experts_over_devices", "shown"]

_COMM = COLORS["communication"]
_HOP = COLORS["bound"]
_PICKED = COLORS["highlight"]


def shown(count: int, most: int = 4) -> list[int | None]:
    """Which of ``count`` devices a diagram draws: all up to ``most``, else the first ones, a gap (None), the last.

    >>> shown(3), shown(8)
    ([0, 1, 2], [0, 1, 2, None, 7])
    """
    return list(range(count)) if count <= most else list(range(most - 1)) + [None, count - 1]


def _bytes(n: int) -> str:
    return f"{n:,} B"


def tensor_parallel_block(config: ModelConfig, tp: int) -> Figure:
    """One transformer block cut by tensor parallelism over ``tp`` GPUs, one lane per GPU.

    Attention is split by heads (query heads, and KV heads or a copy of
    one), the MLP's gate and up projections by columns and its down
    projection by the matching rows; an all-reduce of ``hidden x 2`` bytes
    per token follows the attention output projection and another the
    down projection. Past four GPUs the middle lanes are drawn as one gap.
    The data is :func:`lib.diagrams.tp_block_data`.

    >>> from lib.transformer import PRESETS
    >>> from lib.diagrams import diagram_data
    >>> fig = tensor_parallel_block(PRESETS["llama-3-70b"], 8)
    >>> block = diagram_data(fig)
    >>> block["devices"][7]["query_heads"], len(block["allreduces"])
    ([56, 64], 2)
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    data = tp_block_data(config, tp)
    lanes = shown(data["tp"])
    lane_h, gap, top, bottom = 0.62, 0.14, 1.05, 0.75
    height = top + len(lanes) * (lane_h + gap) + bottom
    fig, ax = canvas(7.8, height)
    head_dim = data["hidden"] // data["heads"]
    title = (
        f"One {data['model']} block, tensor parallel over {data['tp']} GPUs"
        if data["tp"] > 1
        else f"One {data['model']} block on one GPU: nothing is split"
    )
    label(ax, 3.9, height - 0.22, title, size=10, weight="bold")
    moe = f"\n(each of {data['experts']} experts)\n" if data["experts"] > 1 else "\n"
    columns = [
        (0.75, 1.75, "attention\nsplit by heads"),
        (2.6, 1.1, "output proj.\nby rows"),
        (4.15, 1.35, f"MLP gate & up{moe}by columns"),
        (5.65, 1.2, f"MLP down{moe}by rows"),
    ]
    for x, w, title in columns:
        label(ax, x + w / 2, height - top + 0.3, title)
    bars = [3.82, 7.0] if data["allreduces"] else []
    for i, rank in enumerate(lanes):
        y = height - top - (i + 1) * (lane_h + gap) + gap / 2
        mid = y + lane_h / 2
        if rank is None:
            label(
                ax,
                2.2,
                mid,
                f"GPUs {lanes[i - 1] + 1}–{lanes[i + 1] - 1} alike,\neach its own heads and columns",
                style="italic",
                linespacing=1.15,
            )
            continue
        d = data["devices"][rank]
        kv = span(*d["kv_heads"], "KV heads")
        texts = [
            f"{span(*d['query_heads'], 'q heads')}\n{kv}{' (copy)' if d['kv_copies'] > 1 else ''}",
            f"rows\n{span(d['query_heads'][0] * head_dim, d['query_heads'][1] * head_dim)}",
            f"cols\n{span(*d['mlp_columns'])}",
            f"rows\n{span(*d['mlp_columns'])}",
        ]
        label(ax, 0.38, mid, f"GPU {rank}", weight="bold")
        for (x, w, _), text in zip(columns, texts):
            box(ax, x, y, w, lane_h, face=tint(COLORS["compute"], 0.78))
            label(ax, x + w / 2, mid, text, linespacing=1.15)
        stops = [(columns[0][0] + columns[0][1], columns[1][0]), (columns[2][0] + columns[2][1], columns[3][0])]
        if bars:
            stops += [
                (columns[1][0] + columns[1][1], bars[0]),
                (bars[0] + 0.22, columns[2][0]),
                (columns[3][0] + columns[3][1], bars[1]),
            ]
        else:
            stops += [(columns[1][0] + columns[1][1], columns[2][0])]
        for a, b in stops:
            arrow(ax, (a, mid), (b, mid), lw=1.0)
    lanes_bottom = height - top - len(lanes) * (lane_h + gap) + gap / 2
    for n, (x, ar) in enumerate(zip(bars, data["allreduces"]), start=1):
        box(ax, x, lanes_bottom, 0.22, height - top - lanes_bottom, face=_COMM, edge=_COMM, radius=0.04)
        label(
            ax,
            x + 0.11,
            (lanes_bottom + height - top) / 2,
            f"all-reduce {n}",
            rotation=90,
            color="white",
            weight="bold",
        )
        label(
            ax,
            min(x + 0.11, 7.05),
            lanes_bottom - 0.3,
            f"{_bytes(ar['message_bytes_per_token'])}\nper token",
            color=_COMM,
            ha="right" if n == 2 else "center",
        )
    note = (
        f"each all-reduce sums one hidden vector per token, hidden × 2 B = {data['hidden']} × 2 B: two per block"
        if bars
        else "one GPU holds the whole block: nothing to all-reduce"
    )
    label(ax, 0.1, 0.22, note, ha="left")
    return register(fig, data)


def _stage_face(stage: int, amount: float) -> str:
    """Stages alternate between two shades of the compute colour."""
    return tint(COLORS["compute"], amount + (0.12 if stage % 2 else 0.0))


def pipeline_stages(config: ModelConfig, pp: int) -> Figure:
    """The layer stack cut into ``pp`` pipeline stages: a bar of every layer, then one box per stage.

    Each box gives the stage's layers (:func:`lib.serving.stage_layers`),
    the embedding on the first and the output head on the last, and the
    weights one GPU of the stage holds (16-bit, one GPU per stage); arrows
    are the hops, one hidden vector per token. Four stages a row. The data
    is :func:`lib.diagrams.pipeline_data`.

    >>> from lib.transformer import PRESETS
    >>> from lib.diagrams import diagram_data
    >>> fig = pipeline_stages(PRESETS["llama-3-8b"], 3)
    >>> [s["layer_count"] for s in diagram_data(fig)["stages"]]
    [11, 11, 10]
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    data = pipeline_data(config, pp)
    stages, per_row = data["stages"], 4
    rows = -(-len(stages) // per_row)
    box_w, box_h, row_h = 1.45, 1.1, 1.5
    height = 1.55 + rows * row_h + 0.2
    fig, ax = canvas(7.8, height)
    label(
        ax,
        3.9,
        height - 0.22,
        f"{data['model']}: {data['layers']} layers in {data['pp']} pipeline stage{'s' if data['pp'] > 1 else ''}",
        size=10,
        weight="bold",
    )
    left, width, strip_y = 0.3, 7.2, height - 0.95
    label(ax, left, strip_y + 0.47, f"layers 0 to {data['layers'] - 1}, by stage", ha="left")
    for s in stages:
        x0 = left + width * s["layers"][0] / data["layers"]
        w = width * s["layer_count"] / data["layers"]
        box(ax, x0, strip_y, w, 0.32, face=_stage_face(s["stage"], 0.35), edge="white", radius=0.0)
        label(ax, x0 + 0.03, strip_y - 0.17, str(s["layers"][0]), ha="left")
        if w > 0.6:
            label(ax, x0 + w / 2, strip_y + 0.16, f"stage {s['stage']}", color="white", weight="bold")
    label(ax, left + width, strip_y - 0.17, str(data["layers"] - 1), ha="right")
    for s in stages:
        row, col = divmod(s["stage"], per_row)
        in_row = min(per_row, len(stages) - row * per_row)
        step = box_w + (width - in_row * box_w) / max(in_row - 1, 1) if in_row > 1 else 0
        x = left + col * step if in_row > 1 else left + (width - box_w) / 2
        y = height - 1.55 - (row + 1) * row_h + 0.3
        box(ax, x, y, box_w, box_h, face=_stage_face(s["stage"], 0.8))
        count = s["layer_count"]
        lines = [f"stage {s['stage']}", span(*s["layers"], "layers"), f"({count} layer{'s' if count > 1 else ''})"]
        lines += [f"+ {part}" for part, has in (("embedding", s["embedding"]), ("output head", s["head"])) if has]
        lines.append(f"{s['weight_bytes'] / 1e9:.1f} GB on its GPU")
        label(ax, x + box_w / 2, y + box_h / 2, "\n".join(line for line in lines if line), linespacing=1.2)
        if s["stage"] + 1 < len(stages):
            if col + 1 < in_row:
                arrow(ax, (x + box_w, y + box_h / 2), (x + step, y + box_h / 2), color=_HOP, lw=2)
                label(ax, x + box_w + (step - box_w) / 2, y + box_h / 2 + 0.17, "hop", color=_HOP)
            else:
                end = (left + box_w / 2, y - row_h + box_h)
                arrow(ax, (x + box_w / 2, y), end, color=_HOP, lw=2)
                label(ax, (x + box_w / 2 + end[0]) / 2, (y + end[1]) / 2 + 0.15, "hop", color=_HOP)
    if data["pp"] > 1:
        label(
            ax,
            0.1,
            0.2,
            f"each hop sends one hidden vector per token: {_bytes(data['hop_bytes_per_token'])}",
            ha="left",
            color=_HOP,
        )
    return register(fig, data)


def experts_over_devices(config: ModelConfig, devices: int, expert_parallel: bool, seed: int = 0) -> Figure:
    """Which experts each of ``devices`` GPUs holds, and one token's top-k experts highlighted.

    With ``expert_parallel`` a GPU holds ``experts / devices`` whole
    experts; without, a ``1/devices`` slice of every expert. A chip's width
    is the share of an expert a GPU holds, so every row is as long: each
    GPU holds the same bytes either way. The token is routed by
    :func:`lib.experts.route` (``seed``). The data is
    :func:`lib.diagrams.experts_data`.

    >>> from lib.transformer import PRESETS
    >>> from lib.diagrams import diagram_data
    >>> fig = experts_over_devices(PRESETS["mixtral-8x7b"], 2, expert_parallel=True)
    >>> [d["experts"] for d in diagram_data(fig)["devices"]]
    [[0, 4], [4, 8]]
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    data = experts_data(config, devices, expert_parallel, seed)
    rows = shown(data["devices_count"], 8)
    row_h, gap, top = 0.5, 0.12, 0.95
    height = top + len(rows) * (row_h + gap) + 0.55
    fig, ax = canvas(7.8, height)
    k, e = data["devices_count"], data["experts"]
    how = "expert parallel: whole experts" if expert_parallel else "tensor parallel: a slice of every expert"
    label(ax, 3.9, height - 0.22, f"{data['model']}: {e} experts on {k} GPUs ({how})", size=10, weight="bold")
    names = ", ".join(f"E{x}" for x in data["routed_to"])
    label(
        ax,
        0.1,
        height - 0.62,
        f"one token, routed to its top {data['top_k']}: {names}",
        ha="left",
        color=_PICKED,
        weight="bold",
    )
    left, width = 1.75, 5.9
    chip = width / e * (k if expert_parallel else 1)
    for i, d in enumerate(rows):
        y = height - top - (i + 1) * (row_h + gap) + gap
        if d is None:
            label(
                ax,
                left + width / 2,
                y + row_h / 2,
                f"GPUs {rows[i - 1] + 1}–{rows[i + 1] - 1}: the same",
                style="italic",
            )
            continue
        held = data["devices"][d]
        what = span(*held["experts"], "experts") if expert_parallel else f"1/{k} of each"
        label(ax, 0.1, y + row_h / 2, f"GPU {d}\n{what}", ha="left", linespacing=1.15)
        for j, x in enumerate(range(*held["experts"])):
            picked = x in data["routed_to"]
            box(
                ax,
                left + j * chip + 0.02,
                y,
                chip - 0.04,
                row_h,
                face=_PICKED if picked else tint(COLORS["compute"]),
                edge="white" if picked else "#333333",
                radius=0.04,
            )
            if chip >= 0.34:
                label(
                    ax,
                    left + (j + 0.5) * chip,
                    y + row_h / 2,
                    f"E{x}",
                    color="white" if picked else "black",
                    weight="bold" if picked else "normal",
                )
    idle = [d for d in range(k) if d not in data["visits"]]
    rest = f"; {listing(idle)} do{'es' if len(idle) == 1 else ''} no expert work for it" if idle else ""
    note = (
        f"the token's experts are on {listing(data['visits'])}{rest}"
        if expert_parallel
        else f"every GPU computes its slice of {'both' if data['top_k'] == 2 else 'each'} of the token's experts"
    )
    label(ax, 0.1, 0.42, note, ha="left")
    label(
        ax,
        0.1,
        0.17,
        f"either way each GPU holds {data['expert_parameters_per_device'] / 1e6:,.0f} M expert parameters per layer",
        ha="left",
    )
    return register(fig, data)
