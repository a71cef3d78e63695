"""Drawing primitives of the diagrams: a canvas measured in inches, boxes, labels and arrows.

Part of :mod:`lib.diagrams`. A canvas is one Axes that fills its figure with
one data unit per inch both ways, so a box of width 1 is an inch wide on the
page and text sizes (in points) can be checked against it. Nothing here
knows about models or layouts.
"""

from __future__ import annotations

import weakref

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from lib.plotting import COLORS, MICROBATCH_COLORS, MIN_FONT_PT, figure

__all__ = [
    "MIN_FONT",
    "MAX_WIDTH",
    "canvas",
    "box",
    "label",
    "arrow",
    "tint",
    "shade",
    "register",
    "alt_text",
    "diagram_data",
    "short_link",
]

#: The smallest text of any diagram, in points: the book's figure minimum (:data:`lib.plotting.MIN_FONT_PT`).
MIN_FONT = MIN_FONT_PT
#: The widest a diagram may be, in inches.
MAX_WIDTH = 8.0

_DATA: weakref.WeakKeyDictionary[Figure, dict] = weakref.WeakKeyDictionary()


def canvas(width: float, height: float) -> tuple[Figure, Axes]:
    """A figure of ``width`` x ``height`` inches in the book style, whose one Axes measures in inches."""
    fig, ax = figure(width=min(width, MAX_WIDTH), height=height)
    fig.set_layout_engine("none")
    ax.set_position((0, 0, 1, 1))
    ax.set_xlim(0, min(width, MAX_WIDTH))
    ax.set_ylim(0, height)
    ax.set_axis_off()
    return fig, ax


def box(
    ax: Axes,
    x: float,
    y: float,
    w: float,
    h: float,
    face: str = "white",
    edge: str = "#333333",
    lw: float = 1.0,
    ls: str = "-",
    radius: float = 0.06,
    z: float = 1.0,
) -> FancyBboxPatch:
    """A rounded box with its lower-left corner at ``(x, y)``."""
    patch = FancyBboxPatch(
        (x, y),
        w,
        h,
        boxstyle=f"round,pad=0,rounding_size={radius}",
        facecolor=face,
        edgecolor=edge,
        linewidth=lw,
        linestyle=ls,
        zorder=z,
    )
    ax.add_patch(patch)
    return patch


def label(ax: Axes, x: float, y: float, text: str, size: float = MIN_FONT, **kwargs):
    """Text at ``(x, y)``, centred unless told otherwise, never smaller than :data:`MIN_FONT`."""
    kwargs.setdefault("ha", "center")
    kwargs.setdefault("va", "center")
    kwargs.setdefault("zorder", 5)
    return ax.text(x, y, text, fontsize=max(size, MIN_FONT), **kwargs)


def arrow(
    ax: Axes,
    start: tuple[float, float],
    end: tuple[float, float],
    color: str = COLORS["one"],
    lw: float = 1.4,
    bend: float = 0.0,
    both: bool = False,
    ls: str = "-",
) -> FancyArrowPatch:
    """An arrow from ``start`` to ``end``, straight or bent by ``bend`` (matplotlib's ``arc3`` radius)."""
    patch = FancyArrowPatch(
        start,
        end,
        arrowstyle="<|-|>" if both else "-|>",
        mutation_scale=11,
        color=color,
        linewidth=lw,
        linestyle=ls,
        connectionstyle=f"arc3,rad={bend}",
        shrinkA=0,
        shrinkB=0,
        zorder=4,
    )
    ax.add_patch(patch)
    return patch


def tint(color: str, amount: float = 0.75) -> str:
    """``color`` mixed with ``amount`` of white, as a hex string.

    >>> tint("#000000", 0.5)
    '#808080'
    """
    rgb = [int(color[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(c + (255 - c) * amount):02X}" for c in rgb)


def shade(index: int, amount: float = 0.72) -> str:
    """A pale colour for the ``index``-th replica, stage or device (the microbatch colours, tinted)."""
    return tint(MICROBATCH_COLORS[index % len(MICROBATCH_COLORS)], amount)


def short_link(name: str) -> str:
    """A link's name without its parenthesis: ``"NVLink 4 (H100, H200)"`` -> ``"NVLink 4"``.

    >>> short_link("InfiniBand NDR (400 Gb/s)"), short_link("PCIe Gen4 x16")
    ('InfiniBand NDR', 'PCIe Gen4 x16')
    """
    return name.split(" (")[0]


def register(fig: Figure, data: dict) -> Figure:
    """Remember the data ``fig`` was drawn from (for :func:`alt_text` and :func:`diagram_data`); return ``fig``."""
    _DATA[fig] = data
    return fig


def diagram_data(fig: Figure) -> dict:
    """The data a diagram of :mod:`lib.diagrams` was drawn from."""
    try:
        return _DATA[fig]
    except (KeyError, TypeError):
        raise ValueError(f"fig must be a figure drawn by lib.diagrams, got {fig!r}") from None


def alt_text(diagram: Figure | dict) -> str:
    """The alt text of a diagram: from the figure itself, or from the data it is drawn from.

    >>> alt_text({"alt": "Two GPUs."})
    'Two GPUs.'
    """
    data = diagram if isinstance(diagram, dict) else diagram_data(diagram)
    if "alt" not in data:
        raise ValueError("diagram must be a figure of lib.diagrams or its data (a dict with an 'alt' entry)")
    return data["alt"]
