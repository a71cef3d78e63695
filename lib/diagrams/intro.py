"""The introduction's picture: the ways to split one model over two GPUs, side by side.

Part of :mod:`lib.diagrams`, which re-exports everything here. Each panel is
drawn from the data of the matching diagram (:func:`tp_block_data`,
:func:`pipeline_data`, :func:`experts_data`), so its numbers are the
chapters' numbers.
"""

from __future__ import annotations

import math

from matplotlib.figure import Figure

from lib.diagrams._draw import arrow, box, canvas, label, register, shade, tint
from lib.diagrams.data import _config, experts_data, pipeline_data, span, tp_block_data
from lib.plotting import COLORS
from lib.transformer import PRESETS, ModelConfig

__all__ = ["three_splits_data", "three_splits"]

_BARS = 8  # layers drawn per GPU: a stack that stands for all of them


def _flat(text: str) -> str:
    return text.replace("\n", " ")


def three_splits_data(config: ModelConfig | None = None, moe: ModelConfig | None = None) -> dict:
    """What each GPU of two holds under each split: tensor, pipeline, replicas, and experts.

    ``config`` is the dense model of the first three panels (Llama-3 8B by
    default), ``moe`` the mixture of experts of the fourth (Mixtral 8x7B).
    Each panel has a ``title``, one line per GPU (``gpus``) and what the
    GPUs exchange (``exchange``).

    >>> panels = three_splits_data()["panels"]
    >>> [p["split"] for p in panels]
    ['tensor', 'pipeline', 'replicas', 'experts']
    >>> [gpu.splitlines() for gpu in panels[1]["gpus"]]
    [['layers 0–15', '+ embedding'], ['layers 16–31', '+ output head']]
    """
    dense = _config(PRESETS["llama-3-8b"] if config is None else config)
    mixture = _config(PRESETS["mixtral-8x7b"] if moe is None else moe)
    block, pipe = tp_block_data(dense, 2), pipeline_data(dense, 2)
    experts = experts_data(mixture, 2, expert_parallel=True)
    tensor = [
        f"{span(*d['query_heads'], 'heads')},\n{span(*d['mlp_columns'], 'MLP columns')}" for d in block["devices"]
    ]
    stages = [
        span(*s["layers"], "layers") + ("\n+ embedding" if s["embedding"] else "\n+ output head")
        for s in pipe["stages"]
    ]
    held = [span(*d["experts"], "experts") for d in experts["devices"]]
    routed = ", ".join(f"E{e}" for e in experts["routed_to"])
    panels = [
        {
            "split": "tensor",
            "title": "Tensor: split every layer",
            "gpus": tensor,
            "exchange": f"{len(block['allreduces'])} all-reduces a layer, {block['hidden'] * 2:,} B a token",
        },
        {
            "split": "pipeline",
            "title": "Pipeline: split the stack of layers",
            "gpus": stages,
            "exchange": f"1 hop per token, {pipe['hop_bytes_per_token']:,} B",
        },
        {
            "split": "replicas",
            "title": "Replicas: copy the model, split the users",
            "gpus": [f"all {dense.layers} layers,\nhalf the users"] * 2,
            "exchange": "nothing",
        },
        {
            "split": "experts",
            "title": "Experts: split a mixture's experts",
            "gpus": held,
            "exchange": f"a token goes to its top {experts['top_k']} ({routed})",
        },
    ]
    alt = (
        f"Four ways to split a model over two GPUs. Tensor parallelism: each GPU holds part of every layer of "
        f"{dense.name} ({_flat(tensor[0])} on GPU 0), and the GPUs all-reduce twice per layer. Pipeline "
        f"parallelism: GPU 0 holds {_flat(stages[0])}, GPU 1 {_flat(stages[1])}, and each token hops from one to "
        "the other once. Replicas: each GPU "
        f"holds the whole model and serves half the users; they exchange nothing. Experts: each GPU holds "
        f"{experts['experts'] // 2} of the {experts['experts']} experts of {mixture.name} whole, and a token goes "
        f"to the GPUs of its top {experts['top_k']}."
    )
    return {
        "models": [dense.name, mixture.name],
        "panels": panels,
        "experts": experts,
        "layers": dense.layers,
        "alt": alt,
    }


def _stack(ax, x: float, y: float, w: float, first: int, last: int, half: int | None = None) -> None:
    """``_BARS`` layer bars from the top at ``(x, y)``; those outside ``[first, last)`` empty, or half of each."""
    for i in range(_BARS):
        top = y - i * 0.13
        if half is not None:
            box(ax, x, top - 0.1, w, 0.1, face="white", edge="#BBBBBB", lw=0.6, radius=0.01, z=2)
            box(
                ax,
                x + half * w / 2,
                top - 0.1,
                w / 2,
                0.1,
                face=COLORS["compute"],
                edge="white",
                lw=0.6,
                radius=0.01,
                z=3,
            )
        elif first <= i < last:
            box(ax, x, top - 0.1, w, 0.1, face=COLORS["compute"], edge="white", lw=0.6, radius=0.01, z=2)
        else:
            box(ax, x, top - 0.1, w, 0.1, face="white", edge="#BBBBBB", lw=0.6, ls=":", radius=0.01, z=2)


def three_splits(config: ModelConfig | None = None, moe: ModelConfig | None = None) -> Figure:
    """The introduction's picture: one model over two GPUs, split four ways, each in a panel.

    A stack of bars stands for the layers: split down the middle (tensor),
    cut in two (pipeline), copied (replicas); the fourth panel splits a
    mixture's experts. Under each pair of GPUs, what they exchange. The data
    is :func:`three_splits_data`.

    >>> from lib.diagrams import diagram_data
    >>> fig = three_splits()
    >>> diagram_data(fig)["panels"][3]["gpus"]
    ['experts 0–3', 'experts 4–7']
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    data = three_splits_data(config, moe)
    fig, ax = canvas(7.8, 5.5)
    gpu_w, gpu_h, gap = 1.45, 1.4, 0.5
    for n, panel in enumerate(data["panels"]):
        px, py = 0.05 + (n % 2) * 3.9, 5.45 - (n // 2) * 2.7
        box(ax, px, py - 2.6, 3.8, 2.6, face="#FAFAFA", edge="#BBBBBB", radius=0.1, z=0.5)
        label(ax, px + 1.9, py - 0.2, panel["title"], size=10, weight="bold")
        for g in range(2):
            gx, gy = px + 0.2 + g * (gpu_w + gap), py - 0.45
            box(ax, gx, gy - gpu_h, gpu_w, gpu_h, face=tint(COLORS["compute"], 0.88), z=1)
            label(ax, gx + gpu_w / 2, gy - 0.15, f"GPU {g}", weight="bold")
            label(ax, gx + gpu_w / 2, gy - gpu_h - 0.27, panel["gpus"][g], linespacing=1.2)
            inner = (gx + 0.15, gy - 0.3, gpu_w - 0.3)
            if panel["split"] == "tensor":
                _stack(ax, *inner, 0, _BARS, half=g)
            elif panel["split"] == "pipeline":
                _stack(ax, *inner, g * _BARS // 2, (g + 1) * _BARS // 2)
            elif panel["split"] == "replicas":
                _stack(ax, *inner, 0, _BARS)
            else:
                _experts(ax, inner, data["experts"], g)
        mid, y = px + 0.2 + gpu_w + gap / 2, py - 0.45 - gpu_h / 2
        if panel["split"] == "tensor":
            arrow(ax, (mid - 0.2, y), (mid + 0.2, y), color=COLORS["communication"], lw=2.2, both=True)
        elif panel["split"] == "pipeline":
            arrow(ax, (mid - 0.2, y), (mid + 0.2, y), color=COLORS["bound"], lw=2.2)
        label(
            ax,
            px + 1.9,
            py - 2.45,
            "exchange: " + panel["exchange"],
            color={"tensor": COLORS["communication"], "pipeline": COLORS["bound"]}.get(panel["split"], "black"),
        )
    return register(fig, data)


def _experts(ax, inner: tuple, experts: dict, gpu: int) -> None:
    """The GPU's whole experts as chips in a square grid, the token's own in the highlight colour."""
    x, y, w = inner
    first, last = experts["devices"][gpu]["experts"]
    per_row = max(2, math.ceil(math.sqrt(last - first)))
    cw, ch = w / per_row - 0.06, min(0.42, 0.96 / math.ceil((last - first) / per_row) - 0.06)
    for i, e in enumerate(range(first, last)):
        r, c = divmod(i, per_row)
        picked = e in experts["routed_to"]
        box(
            ax,
            x + c * (cw + 0.06),
            y - (r + 1) * (ch + 0.06),
            cw,
            ch,
            face=COLORS["highlight"] if picked else shade(0, 0.6),
            edge="white" if picked else "#333333",
            radius=0.04,
            z=2,
        )
        if cw >= 0.3 and ch >= 0.2:
            label(
                ax,
                x + c * (cw + 0.06) + cw / 2,
                y - (r + 1) * (ch + 0.06) + ch / 2,
                f"E{e}",
                color="white" if picked else "black",
                weight="bold" if picked else "normal",
            )
