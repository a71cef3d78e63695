"""The book's one figure style and the plot helpers chapters share.

Introduced in chapter 2. Nothing is drawn at import; call :func:`figure` to
get a styled figure. Colours are chosen from a colour-blind-safe palette
(Okabe and Ito) and every helper labels what it draws.

>>> fig, ax = figure()
>>> ax.get_figure() is fig
True
>>> import matplotlib.pyplot as plt; plt.close(fig)
"""

from __future__ import annotations

from typing import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

__all__ = ["COLORS", "STYLE", "figure", "stacked_bars"]

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

#: Matplotlib settings applied to every figure of the book.
STYLE = {
    "figure.dpi": 110,
    "savefig.dpi": 110,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
}


def figure(ncols: int = 1, nrows: int = 1, width: float = 6.4, height: float = 3.6, **kwargs) -> tuple[Figure, Axes]:
    """A new figure in the book style, with ``constrained`` layout.

    Returns ``(fig, ax)`` where ``ax`` is one Axes or an array of them, as
    :func:`matplotlib.pyplot.subplots` does.
    """
    with plt.rc_context(STYLE):
        return plt.subplots(nrows, ncols, figsize=(width, height), layout="constrained", **kwargs)


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
                ax.text(bar.get_x() + bar.get_width() / 2, bar.get_y() + bar.get_height() / 2,
                        f"{value:.2f}", ha="center", va="center", color="white", fontsize=9)
        left = [a + b for a, b in zip(left, values)]
    ax.set_xlabel(f"time ({unit})")
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    ax.legend(loc="lower right", ncols=len(segments))
