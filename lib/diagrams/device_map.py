"""The device map: which GPU holds which shard and layers, and which link each collective crosses.

Part of :mod:`lib.diagrams`, which re-exports everything here. The picture
draws :func:`lib.diagrams.device_map_data` and nothing else, so a page that
draws the same dict (the planner, in SVG) shows the same map.
"""

from __future__ import annotations

from matplotlib.figure import Figure

from lib.diagrams._draw import arrow, box, canvas, label, register, shade, short_link, tint
from lib.diagrams.data import device_map_data, span
from lib.plotting import COLORS
from lib.serving.layout import Cluster, Layout
from lib.transformer import ModelConfig

__all__ = ["device_map", "grid_columns"]

_COMM = COLORS["communication"]
_HOP = COLORS["bound"]
_WIDTH, _PAD, _GAP, _STAGE_GAP = 7.8, 0.15, 0.12, 0.4


def grid_columns(devices_per_node: int, tp: int) -> int:
    """GPUs a row of a server box: 4, 3, 2 or 1, dividing the server and aligned with the tensor-parallel groups.

    >>> grid_columns(8, 2), grid_columns(6, 3), grid_columns(6, 2), grid_columns(2, 1)
    (4, 3, 2, 2)
    """
    return next(c for c in (4, 3, 2, 1) if devices_per_node % c == 0 and (c % tp == 0 or tp % c == 0))


def _gpu_lines(gpu: dict, data: dict) -> list[str]:
    where = [f"replica {gpu['replica']}"] * (data["dp"] > 1) + [f"stage {gpu['stage']}"] * (data["pp"] > 1)
    lines = [f"GPU {gpu['gpu']}"] + [" · ".join(where)] * bool(where) + [span(*gpu["layers"], "layers")]
    extras = [part for part, has in (("embedding", gpu["embedding"]), ("output head", gpu["head"])) if has]
    if data["pp"] > 1 and extras:
        lines.append("+ " + " & ".join(extras))
    if data["attention_dp"]:
        lines.append("all heads, own seqs")
    elif data["tp"] > 1:
        heads = span(*gpu["query_heads"], "q heads")
        lines += (
            [heads, f"copy of {span(*gpu['kv_heads'], 'KV heads')}"]
            if gpu["kv_copies"] > 1
            else [f"{heads} · {span(*gpu['kv_heads'], 'KV')}"]
        )
    if data["expert_parallel"]:
        lines.append(span(*gpu["experts"], "experts") + ", whole")
    elif gpu["experts"][1] > 1 and data["tp"] > 1:
        lines.append(f"1/{data['tp']} of all {gpu['experts'][1]} experts")
    return lines


def _columns(data: dict, cols: int) -> tuple[list[float], float]:
    """The left edge of each column of GPUs and their width: wide gaps where a tensor-parallel group ends."""
    gaps = [_STAGE_GAP if (c + 1) % data["tp"] == 0 else _GAP for c in range(cols - 1)]
    width = min(1.75, (_WIDTH - 0.2 - 2 * _PAD - sum(gaps)) / cols)
    lefts = [0.1 + _PAD + c * width + sum(gaps[:c]) for c in range(cols)]
    return lefts, width


def device_map(
    config: ModelConfig,
    layout: Layout,
    cluster: Cluster,
    tokens: int = 1,
    weight_format: str = "bf16",
    allreduce: str = "engine",
) -> Figure:
    """Servers as boxes, GPUs numbered as launchers place them, and every collective on the link it uses.

    Each GPU box gives its replica (also its colour), stage, layers and
    tensor-parallel shard; an orange outline joins a tensor-parallel group
    and names its all-reduce's link and kernel at the decode message of
    ``tokens`` tokens; green arrows are the pipeline hops, labelled with
    their link where they leave a server. Arguments as
    :func:`lib.diagrams.device_map_data`, which is the data.

    >>> from lib.transformer import PRESETS
    >>> from lib.diagrams import diagram_data
    >>> fig = device_map(PRESETS["llama-3-70b"], Layout(tp=2, pp=2, dp=2), Cluster("h100-sxm"))
    >>> [r["gpus"] for r in diagram_data(fig)["replicas"]]
    [[0, 1, 2, 3], [4, 5, 6, 7]]
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    data = device_map_data(config, layout, cluster, tokens, weight_format, allreduce)
    per_node, tp = data["cluster"]["devices_per_node"], data["tp"]
    cols = grid_columns(per_node, tp)
    rows = -(-per_node // cols)
    lefts, gpu_w = _columns(data, cols)
    gpu_h = 0.2 + 0.165 * max(len(_gpu_lines(g, data)) for g in data["gpus"])
    hops = [c for c in data["collectives"] if c["kind"] == "send"]
    band = 0.27 if tp > 1 else 0.0
    wraps = any(
        not h["across_servers"] and h["from_gpus"][-1] % per_node // cols != h["to_gpus"][0] % per_node // cols
        for h in hops
    )
    tops, y = [], 0.36
    for r in range(rows):  # a row where tensor-parallel groups end carries their all-reduce label below it
        tops.append(y)
        y += gpu_h + (band if ((r + 1) * cols) % tp == 0 or tp < cols else 0.0) + (0.34 if wraps else 0.16)
    server_h = y - (0.34 if wraps else 0.16) + 0.14
    across = any(c["across_servers"] for c in data["collectives"])
    server_gap = 0.55 if across else 0.25
    legend = _legend_lines(data)
    height = 0.45 + len(data["servers"]) * (server_h + server_gap) - server_gap + 0.2 + 0.25 * len(legend)
    fig, ax = canvas(_WIDTH, height)
    servers = len(data["servers"])
    label(
        ax,
        _WIDTH / 2,
        height - 0.22,
        f"{data['model']} as {data['layout']} on {len(data['gpus'])} × "
        f"{data['cluster']['device']}" + (f" in {servers} servers" if servers > 1 else ""),
        size=10,
        weight="bold",
    )
    cells = {}
    for s in range(len(data["servers"])):
        top = height - 0.45 - s * (server_h + server_gap)
        box(ax, 0.1, top - server_h, _WIDTH - 0.2, server_h, face="#FAFAFA", edge="#555555", lw=1.2, radius=0.1, z=0.5)
        label(
            ax,
            0.1 + _PAD,
            top - 0.18,
            f"server {s}: {per_node} × {data['cluster']['device']}, joined by {short_link(data['cluster']['link'])}",
            ha="left",
            weight="bold",
        )
        for slot in range(per_node):
            r, c = divmod(slot, cols)
            x, y = lefts[c], top - tops[r] - gpu_h
            cells[(s, slot)] = (x, y)
            if s * per_node + slot >= len(data["gpus"]):
                box(ax, x, y, gpu_w, gpu_h, face="white", edge="#AAAAAA", ls="--")
                label(ax, x + gpu_w / 2, y + gpu_h / 2, "unused", color="#777777")
    for gpu in data["gpus"]:
        x, y = cells[(gpu["server"], gpu["slot"])]
        face = shade(gpu["replica"], 0.7) if data["dp"] > 1 else tint(COLORS["compute"], 0.78)
        box(ax, x, y, gpu_w, gpu_h, face=face, z=2)
        text = _gpu_lines(gpu, data)
        label(ax, x + gpu_w / 2, y + gpu_h - 0.17, text[0], weight="bold")
        label(ax, x + gpu_w / 2, y + gpu_h - 0.27, "\n".join(text[1:]), va="top", linespacing=1.25)
    for col in data["collectives"]:
        if col["kind"] != "send":
            _draw_allreduce(ax, col, data, cells, gpu_w, gpu_h, band)
        else:
            _draw_hop(ax, col, data, cells, gpu_w, gpu_h, band)
    for i, (glyph, text) in enumerate(legend):
        y = 0.2 + 0.25 * (len(legend) - 1 - i)
        if glyph == "outline":
            box(ax, 0.15, y - 0.07, 0.34, 0.14, face="white", edge=_COMM, lw=2.0, radius=0.03)
        elif glyph == "arrow":
            arrow(ax, (0.15, y), (0.49, y), color=_HOP, lw=2.2)
        else:
            for j in range(min(data["dp"], 4)):
                box(
                    ax,
                    0.15 + j * 0.34 / min(data["dp"], 4),
                    y - 0.07,
                    0.34 / min(data["dp"], 4),
                    0.14,
                    face=shade(j, 0.7),
                    edge="#333333",
                    lw=0.6,
                    radius=0.0,
                )
        label(ax, 0.6, y, text, ha="left")
    return register(fig, data)


def _bounds(members: list[int], data: dict, cells: dict, gpu_w: float, gpu_h: float) -> dict:
    """Per server, the box ``(x0, y0, x1, y1)`` around the GPUs of ``members`` it holds."""
    found: dict[int, tuple] = {}
    for g in members:
        gpu = data["gpus"][g]
        x, y = cells[(gpu["server"], gpu["slot"])]
        x0, y0, x1, y1 = found.get(gpu["server"], (x, y, x + gpu_w, y + gpu_h))
        found[gpu["server"]] = (min(x0, x), min(y0, y), max(x1, x + gpu_w), max(y1, y + gpu_h))
    return found


def _draw_allreduce(ax, col: dict, data: dict, cells: dict, gpu_w: float, gpu_h: float, band: float) -> None:
    parts = _bounds(col["gpus"], data, cells, gpu_w, gpu_h)
    where = short_link(col["link"]) + (
        f" across servers {span(col['servers'][0], col['servers'][-1] + 1)}" if col["across_servers"] else ""
    )
    for x0, y0, x1, y1 in parts.values():
        box(
            ax,
            x0 - 0.05,
            y0 - band,
            x1 - x0 + 0.1,
            y1 - y0 + band + 0.05,
            face="none",
            edge=_COMM,
            lw=2.0,
            radius=0.08,
            z=3,
        )
        name = "all-reduce · " if col["kind"] == "all-reduce" else ""
        label(ax, (x0 + x1) / 2, y0 - band / 2 - 0.02, f"{name}{where} · {col['kernel']}", color=_COMM)
    if len(parts) > 1:
        boxes = list(parts.values())
        for upper, lower in zip(boxes, boxes[1:]):
            x = (upper[0] + upper[2]) / 2
            arrow(ax, (x, upper[1] - band), (x, lower[3] + 0.05), color=_COMM, lw=2.0, both=True, ls="--")


def _draw_hop(ax, col: dict, data: dict, cells: dict, gpu_w: float, gpu_h: float, band: float) -> None:
    (sender,) = _bounds(col["from_gpus"], data, cells, gpu_w, gpu_h).values()
    (receiver,) = _bounds(col["to_gpus"], data, cells, gpu_w, gpu_h).values()
    if abs(sender[3] - receiver[3]) < 1e-9 and not col["across_servers"]:
        y = (sender[1] + sender[3]) / 2
        arrow(ax, (sender[2] + 0.06, y), (receiver[0] - 0.06, y), color=_HOP, lw=2.2)
        return
    start = ((sender[0] + sender[2]) / 2, sender[1] - band - 0.02)
    end = ((receiver[0] + receiver[2]) / 2, receiver[3] + 0.05)
    arrow(ax, start, end, color=_HOP, lw=2.2)
    if col["across_servers"]:
        mid = ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2)
        label(
            ax,
            mid[0] + 0.12,
            mid[1],
            f"hop · {short_link(col['link'])}",
            color=_HOP,
            ha="left",
            backgroundcolor="white",
        )


def _message(data: dict) -> str:
    n = data["tokens"]
    return f"{data['message_bytes']:,} B " + ("per token" if n == 1 else f"for {n} tokens")


def _legend_lines(data: dict) -> list[tuple[str, str]]:
    """(glyph, text) rows under the map, one per kind of collective and for the replicas."""
    rows = []
    seen = []
    for col in data["collectives"]:
        key = (col["kind"], col["link"], col.get("kernel"), col["across_servers"])
        if key in seen:
            continue
        seen.append(key)
        us = f"{col['time'] * 1e6:.1f} µs"
        if col["kind"] == "all-reduce":
            rows.append(
                (
                    "outline",
                    f"tensor-parallel all-reduce, 2 per layer: {_message(data)} over "
                    f"{short_link(col['link'])}, {col['kernel']} ({us})",
                )
            )
        elif col["kind"] == "expert exchange":
            rows.append(
                (
                    "outline",
                    f"expert exchange, 2 per routed layer: {_message(data)} over {short_link(col['link'])} ({us})",
                )
            )
        else:
            rows.append(
                (
                    "arrow",
                    f"pipeline hop, 1 per stage boundary: {_message(data)} over "
                    f"{short_link(col['link'])}{' between servers' if col['across_servers'] else ''} ({us})",
                )
            )
    if data["dp"] > 1:
        rows.append(("replicas", f"colour: replica, {data['dp']} in all; replicas exchange nothing"))
    return rows
