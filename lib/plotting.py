"""The book's one figure style and the plot helpers chapters share.

Introduced in chapter 2. Nothing is drawn at import; call :func:`figure` to
get a styled figure. Colours are chosen from a colour-blind-safe palette
(Okabe and Ito) and every helper labels what it draws.

No text of a figure made by :func:`figure` is smaller than
:data:`MIN_FONT_PT`: when it is drawn, smaller text (a ``fontsize=8``
annotation, small tick labels) is raised to it (:func:`enforce_min_font`).
At the book's :data:`DPI` that is 15.3 pixels in the stored image, so a
figure up to 9.5 inches wide still shows it at 10 pixels or more in the
book's 688-pixel column at 1280 px (``tests/browser/test_figures.py``).

>>> fig, ax = figure()
>>> ax.get_figure() is fig
True
>>> import matplotlib.pyplot as plt; plt.close(fig)
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Text

__all__ = [
    "COLORS",
    "MICROBATCH_COLORS",
    "DPI",
    "MIN_FONT_PT",
    "STYLE",
    "BookFigure",
    "enforce_min_font",
    "figure",
    "stacked_bars",
    "draw_matrix",
    "gantt",
]

#: Okabe-Ito colours, named by what they mean throughout the book.
COLORS = {
    "serial": "#999999",
    "compute": "#0072B2",
    "communication": "#D55E00",
    "startup": "#E69F00",
    "one": "#000000",
    "split": "#0072B2",
    "bound": "#009E73",
    "highlight": "#CC79A7",
    "idle": "#F0F0F0",
}

#: Pixels per inch of the book's figures, on screen and in the stored PNG (its pHYs chunk says so too).
DPI = 110

#: The smallest text of any figure, in points (10 pt at :data:`DPI` is 15.3 px in the image).
MIN_FONT_PT = 10

#: Matplotlib settings applied to every figure of the book.
STYLE = {
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "font.size": MIN_FONT_PT,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
}


def enforce_min_font(fig: Figure, minimum: float = MIN_FONT_PT) -> int:
    """Raise every text of ``fig`` smaller than ``minimum`` points to it; return how many were raised.

    Tick labels are raised through their axis (``set_tick_params``), so
    that ticks the axis makes later get the size too.

    >>> fig, ax = figure()
    >>> note = ax.text(0.5, 0.5, "9.22 ms", fontsize=7)
    >>> ax.tick_params(labelsize=6)
    >>> enforce_min_font(fig) > 1, note.get_fontsize(), ax.xaxis.get_ticklabels()[0].get_fontsize()
    (True, 10.0, 10.0)
    >>> enforce_min_font(fig)
    0
    >>> plt.close(fig)
    """
    raised = 0
    for ax in fig.axes:
        if not ax.axison:  # a diagram's hidden axes: asking for tick labels would make some
            continue
        for axis in (ax.xaxis, ax.yaxis):
            for which in ("major", "minor"):
                small = [label for label in axis.get_ticklabels(which=which) if label.get_fontsize() < minimum]
                if small:
                    axis.set_tick_params(which=which, labelsize=minimum)
                    raised += len(small)
    for text in fig.findobj(Text):
        if text.get_text() and text.get_fontsize() < minimum:
            text.set_fontsize(minimum)
            raised += 1
    return raised


class BookFigure(Figure):
    """A matplotlib Figure that applies :func:`enforce_min_font` each time it is drawn."""

    def draw(self, renderer) -> None:
        enforce_min_font(self)
        super().draw(renderer)


def figure(ncols: int = 1, nrows: int = 1, width: float = 6.4, height: float = 3.6, **kwargs) -> tuple[Figure, Axes]:
    """A new figure in the book style, with ``constrained`` layout.

    Returns ``(fig, ax)`` where ``ax`` is one Axes or an array of them, as
    :func:`matplotlib.pyplot.subplots` does. The figure is a
    :class:`BookFigure`: no text is drawn smaller than :data:`MIN_FONT_PT`.

    >>> fig, ax = figure()
    >>> label = ax.annotate("small", (0, 0), fontsize=6)
    >>> fig.canvas.draw()
    >>> label.get_fontsize(), fig.dpi
    (10.0, 110.0)
    >>> plt.close(fig)
    """
    with plt.rc_context(STYLE):
        return plt.subplots(
            nrows, ncols, figsize=(width, height), layout="constrained", FigureClass=BookFigure, **kwargs
        )


def stacked_bars(ax: Axes, labels: Sequence[str], segments: dict[str, Sequence[float]], unit: str = "ms") -> None:
    """Horizontal stacked bars: one bar per label, one colour per segment.

    ``segments`` maps a segment name (a key of :data:`COLORS` where it has
    one) to one length per bar. Each segment longer than 4 % of the longest
    bar is labelled with its value.

    >>> fig, ax = figure()
    >>> stacked_bars(ax, ["one", "two"], {"serial": [1, 1], "compute": [4, 2]})
    >>> len(ax.patches)
    4
    >>> plt.close(fig)
    """
    left = [0.0] * len(labels)
    longest = max(sum(values) for values in zip(*segments.values()))
    for name, values in segments.items():
        bars = ax.barh(labels, values, left=left, color=COLORS.get(name), label=name, edgecolor="white")
        for bar, value in zip(bars, values):
            if value > 0.04 * longest:
                ax.text(
                    bar.get_x() + bar.get_width() / 2,
                    bar.get_y() + bar.get_height() / 2,
                    f"{value:.2f}",
                    ha="center",
                    va="center",
                    color="white",
                    fontsize=MIN_FONT_PT,
                )
        left = [a + b for a, b in zip(left, values)]
    ax.set_xlabel(f"time ({unit})")
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    ax.legend(loc="lower right", ncols=len(segments))


def draw_matrix(
    ax: Axes,
    values,
    x: float,
    y: float,
    color: str = "#FFFFFF",
    title: str | None = None,
    cell: float = 1.0,
    text_color: str = "black",
    fontsize: float = MIN_FONT_PT,
) -> tuple[float, float]:
    """Draw a small matrix as a grid of labelled cells; return its (width, height).

    The top-left corner sits at ``(x, y)`` in data coordinates and rows go
    downwards, so ``y`` is the top edge. Used by chapter 1 to draw a split.

    >>> import numpy as np
    >>> fig, ax = figure()
    >>> draw_matrix(ax, np.array([[1, -2, 3]]), 0, 0, title="x")
    (3.0, 1.0)
    >>> len(ax.patches)
    3
    >>> plt.close(fig)
    """
    from matplotlib.patches import Rectangle

    grid = [list(row) for row in (values.tolist() if hasattr(values, "tolist") else values)]
    rows, cols = len(grid), len(grid[0])
    for i, row in enumerate(grid):
        for j, value in enumerate(row):
            left, bottom = x + j * cell, y - (i + 1) * cell
            ax.add_patch(Rectangle((left, bottom), cell, cell, facecolor=color, edgecolor="black", linewidth=0.8))
            ax.text(
                left + cell / 2,
                bottom + cell / 2,
                f"{value:g}",
                ha="center",
                va="center",
                color=text_color,
                fontsize=fontsize,
            )
    if title:
        ax.text(x + cols * cell / 2, y + 0.15 * cell, title, ha="center", va="bottom", fontsize=fontsize)
    return float(cols * cell), float(rows * cell)


#: Colours that tell microbatches apart in a Gantt chart (Okabe-Ito order).
MICROBATCH_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")


def gantt(ax: Axes, schedule, unit: float = 1e-3, unit_name: str = "ms", labels: bool = True) -> None:
    """Draw a pipeline schedule (from :func:`lib.pipeline.simulate_pipeline`).

    One row per device, top to bottom; each busy interval is a bar coloured
    by its microbatch (numbered from 1 inside the bar when it is wide enough)
    and the idle time behind it is a pale hatched band, so the bubble shows
    as the hatched area. Times are divided by ``unit`` and the x axis is
    labelled with ``unit_name``.

    >>> from lib.pipeline import simulate_pipeline
    >>> fig, ax = figure()
    >>> gantt(ax, simulate_pipeline([1e-3, 1e-3], microbatches=3))
    >>> len(ax.patches)  # 2 idle bands + 2 devices x 3 microbatches
    8
    >>> ax.get_xlabel()
    'time (ms)'
    >>> plt.close(fig)
    """
    span = schedule.makespan / unit
    for d, row in enumerate(schedule.intervals):
        ax.barh(
            d,
            span,
            left=0,
            height=0.8,
            color=COLORS["idle"],
            hatch="///",
            edgecolor="#BBBBBB",
            linewidth=0,
            label="idle" if d == 0 else None,
        )
        for task in row:
            left, width = task.start / unit, (task.end - task.start) / unit
            ax.barh(
                d,
                width,
                left=left,
                height=0.8,
                edgecolor="white",
                linewidth=0.8,
                color=MICROBATCH_COLORS[task.microbatch % len(MICROBATCH_COLORS)],
            )
            if labels and width > 0.025 * span:
                dark = task.microbatch % len(MICROBATCH_COLORS) in (1, 2, 4, 6)
                ax.text(
                    left + width / 2,
                    d,
                    str(task.microbatch + 1),
                    ha="center",
                    va="center",
                    fontsize=MIN_FONT_PT,
                    color="black" if dark else "white",
                )
    ax.set_yticks(range(schedule.stages), [f"device {d + 1}" for d in range(schedule.stages)])
    ax.set_ylim(schedule.stages - 0.5, -0.5)
    ax.set_xlim(0, span)
    ax.set_xlabel(f"time ({unit_name})")
    ax.grid(axis="y", visible=False)
