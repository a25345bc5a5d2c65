"""Figures every chapter uses: heatmaps, 2-D vectors, bars and curves, always labelled.

Also :func:`table`: a small table of numbers shown as a real table in Jupyter, Colab and
on the website, where it fits a phone's column, and as aligned text elsewhere.

Each helper draws into an ``ax`` you pass (so it works in ``plt.subplots()``, in a
``Figure`` of :func:`attnlab.drawing.widgets.explore`, and in a grid of subplots) and returns the
artist it made. A title is required: a figure without one does not explain itself. Axis
labels are optional (``None``: no label) where the title says it all, e.g. a single bar
titled "cosine"; when given, no text may be empty. Data may be NumPy arrays, torch tensors (detached and moved to the CPU
here, so ``heatmap(ax, weights[0], ...)`` works on a CUDA tensor that requires grad) or
lists of numbers.

Taught in: chapters/02_similarity.ipynb (first used), then every chapter.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.colors import Normalize
from matplotlib.container import BarContainer
from matplotlib.image import AxesImage
from matplotlib.lines import Line2D
from matplotlib.quiver import Quiver
from matplotlib.ticker import MaxNLocator

from .._validate import describe, to_numpy

__all__ = ["Table", "bar", "curves", "heatmap", "table", "to_numpy", "vectors_2d"]

ANNOTATE_UP_TO = 12
"""``heatmap(annotate=None)`` writes the numbers in the cells when both sides are at most this."""

ROTATE_OVER = 24
"""x labels are rotated when (number of labels) x (longest label) exceeds this many characters."""

ROTATE_UPRIGHT_OVER = 8
"""More x labels than this are rotated by 90°, not 45° (slanted, long neighbours collide)."""


def heatmap(
    ax: Axes,
    matrix: Any,
    *,
    title: str,
    cbar_label: str,
    xlabel: str | None = None,
    ylabel: str | None = None,
    row_labels: Sequence[Any] | None = None,
    col_labels: Sequence[Any] | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    annotate: bool | None = None,
    fmt: str | None = None,
    cmap: str = "viridis",
) -> AxesImage:
    """A matrix as coloured cells, with token labels, a labelled colorbar and the numbers.

    For attention weights: ``heatmap(ax, weights, row_labels=tokens, col_labels=tokens,
    ylabel="query", xlabel="key", cbar_label="weight", title=...)``: row ``i`` shows how
    query ``i`` spreads its attention over the keys.

    Non-finite entries (the ``-inf`` of masked scores) are drawn in light grey and
    annotated ``−∞``/``+∞``/``nan``; the colour scale uses the finite entries only.

    Args:
        ax: the axes to draw into; the colorbar is added next to it.
        matrix: ``(T, S)`` numbers (NumPy, torch or nested lists; booleans become 0/1).
        title, cbar_label: the title and the colorbar's label; neither may be empty.
        xlabel, ylabel: the axis labels (e.g. ``"key"``, ``"query"``); ``None``: none.
        row_labels: ``T`` labels (e.g. tokens) for the rows; default: row numbers.
        col_labels: ``S`` labels for the columns; default: column numbers. Rotated by 45°
            when they would not fit side by side (see ``ROTATE_OVER``).
        vmin, vmax: ends of the colour scale (default: the finite min and max). Fix them
            (e.g. ``0, 1`` for weights) to compare heatmaps, or frames of a slider.
        annotate: write each value in its cell; ``None`` (default) does so when both sides
            are at most ``ANNOTATE_UP_TO``.
        fmt: format of the annotations; default ``".2f"``, or ``"d"`` for integer and
            boolean matrices.
        cmap: a matplotlib colormap name.

    Returns:
        The ``AxesImage``; its colorbar is ``image.colorbar``, drawn in an inset of ``ax``
        as tall as the matrix.

    Raises:
        ValueError: ``matrix`` is not 2-D or empty, or a label list has the wrong length.
        TypeError: non-numeric ``matrix``.
    """
    _check_texts(title=title, xlabel=xlabel, ylabel=ylabel, cbar_label=cbar_label)
    m = to_numpy(matrix, "matrix")
    if m.ndim != 2 or 0 in m.shape:
        raise ValueError(f"matrix must be 2-D and non-empty (rows, columns), got {describe(m)}")
    n_rows, n_cols = m.shape
    integral = m.dtype.kind in "biu"
    values = m.astype(np.float64)
    finite = np.isfinite(values)
    lo = vmin if vmin is not None else (values[finite].min() if finite.any() else 0.0)
    hi = vmax if vmax is not None else (values[finite].max() if finite.any() else 1.0)
    colours = colormaps[cmap].with_extremes(bad="lightgrey")
    norm = Normalize(vmin=lo, vmax=hi)
    image = ax.imshow(
        np.ma.masked_invalid(values),
        cmap=colours,
        norm=norm,
        aspect="equal" if max(n_rows, n_cols) <= 30 else "auto",
        interpolation="nearest",
    )
    # The colour bar in an inset of the axes, as tall as the matrix drawn: a colorbar given
    # ax= takes the axes' whole slot, taller than a wide matrix drawn with equal aspect.
    cax = ax.inset_axes([1.03, 0.0, 0.04, 1.0])
    ax.figure.colorbar(image, cax=cax, label=cbar_label)
    ax.set_anchor("W")  # flush left, the colour bar beside it (centred, constrained layout
    # could cut the y label off the figure's left edge)
    _ticks(ax, "x", n_cols, col_labels, "col_labels", m.shape)
    _ticks(ax, "y", n_rows, row_labels, "row_labels", m.shape)
    _set_texts(ax, title, xlabel, ylabel)
    if annotate is None:
        annotate = max(n_rows, n_cols) <= ANNOTATE_UP_TO
    if annotate:
        fmt = fmt or ("d" if integral else ".2f")
        # As large as the tick labels (font.size, which figures scale for phones: at least
        # 9 CSS px there); a matrix too large for its numbers at that size is drawn with
        # annotate=False (attnlab.drawing.widgets.layout_problems finds numbers that collide).
        size = "medium"
        for (r, c), v in np.ndenumerate(values):
            if np.isfinite(v):
                text = format(int(v) if integral else v, fmt)
                r_, g_, b_, _ = colours(norm(v))
                dark = 0.299 * r_ + 0.587 * g_ + 0.114 * b_ < 0.5
            else:
                text = "nan" if np.isnan(v) else ("−∞" if v < 0 else "+∞")
                dark = False
            ax.text(c, r, text, ha="center", va="center", fontsize=size,
                    color="white" if dark else "black")  # fmt: skip
    return image


def vectors_2d(
    ax: Axes,
    vectors: Any,
    labels: Sequence[Any],
    *,
    title: str,
    xlabel: str | None = "dimension 1",
    ylabel: str | None = "dimension 2",
    colors: Sequence[Any] | None = None,
) -> Quiver:
    """2-D vectors as arrows from the origin, each labelled at its tip, on equal axes.

    Equal aspect matters: angles (cosine similarity) and lengths (the dot product) are
    only read correctly when one unit is as long on both axes.

    Args:
        ax: the axes to draw into.
        vectors: ``(n, 2)`` vectors.
        labels: ``n`` labels (e.g. the words the vectors embed).
        title: the title.
        xlabel, ylabel: axis labels (``None``: none).
        colors: ``n`` matplotlib colours; default: the colour cycle.

    Returns:
        The ``Quiver`` holding the arrows.

    Raises:
        ValueError: ``vectors`` is not ``(n, 2)`` with ``n >= 1``, or ``labels``/``colors``
            have the wrong length.
    """
    _check_texts(title=title, xlabel=xlabel, ylabel=ylabel)
    v = to_numpy(vectors, "vectors").astype(np.float64)
    if v.ndim != 2 or v.shape[1] != 2 or v.shape[0] == 0:
        raise ValueError(f"vectors must have shape (n, 2), got {describe(v)}")
    n = v.shape[0]
    labels = _labels(labels, n, "labels", f"vectors of shape {v.shape}")
    if colors is None:
        colors = [f"C{i % 10}" for i in range(n)]
    elif len(colors) != n:
        raise ValueError(f"got {len(colors)} colors for {n} vectors")
    zeros = np.zeros(n)
    arrows = ax.quiver(zeros, zeros, v[:, 0], v[:, 1], color=list(colors), angles="xy",
                       scale_units="xy", scale=1, width=0.006)  # fmt: skip
    for (x, y), label, colour in zip(v, labels, colors, strict=True):
        norm = float(np.hypot(x, y)) or 1.0
        ax.annotate(label, (x, y), xytext=(6 * x / norm, 6 * y / norm),
                    textcoords="offset points", color=colour, fontsize="medium",
                    ha="left" if x >= 0 else "right", va="bottom" if y >= 0 else "top")  # fmt: skip
    # The origin and every tip in view, with room for the labels.
    pad = 0.25 * (float(np.abs(v).max()) or 1.0)
    ax.set_xlim(min(0.0, v[:, 0].min()) - pad, max(0.0, v[:, 0].max()) + pad)
    ax.set_ylim(min(0.0, v[:, 1].min()) - pad, max(0.0, v[:, 1].max()) + pad)
    ax.set_aspect("equal", adjustable="box")
    ax.axhline(0, color="0.7", linewidth=0.8, zorder=0)
    ax.axvline(0, color="0.7", linewidth=0.8, zorder=0)
    _set_texts(ax, title, xlabel, ylabel)
    return arrows


def bar(
    ax: Axes,
    labels: Sequence[Any],
    values: Any,
    *,
    title: str,
    ylabel: str | None = None,
    xlabel: str | None = "token",
    annotate: bool = True,
    fmt: str = ".2f",
    ylim: tuple[float, float] | None = None,
    color: Any = None,
) -> BarContainer:
    """One bar per label (e.g. the softmax weight of each token), values written on top.

    Args:
        ax: the axes to draw into.
        labels: ``n`` labels along the x axis (rotated when they would not fit, see
            ``ROTATE_OVER``).
        values: ``(n,)`` numbers.
        title: the title.
        ylabel, xlabel: the axis labels (``None``: none; the x axis says ``"token"``
            unless told otherwise).
        annotate: write each value above its bar, formatted with ``fmt``.
        fmt: format of the annotations.
        ylim: y-axis range; fix it (e.g. ``(0, 1)`` for weights) so slider frames compare.
        color: one colour or ``n`` colours.

    Returns:
        The ``BarContainer`` of the bars.

    Raises:
        ValueError: ``values`` is not 1-D and non-empty, or ``labels`` has another length.
    """
    _check_texts(title=title, xlabel=xlabel, ylabel=ylabel)
    v = to_numpy(values, "values").astype(np.float64)
    if v.ndim != 1 or v.size == 0:
        raise ValueError(f"values must be 1-D and non-empty, got {describe(v)}")
    labels = _labels(labels, v.size, "labels", f"values of shape {v.shape}")
    bars = ax.bar(np.arange(v.size), v, color=color)
    ax.set_xticks(np.arange(v.size), labels)
    _rotate_if_long(ax, labels)
    if annotate:
        ax.bar_label(bars, labels=[format(x, fmt) for x in v], padding=2, fontsize="medium")
    if ylim is not None:
        ax.set_ylim(*ylim)
    else:
        ax.margins(y=0.15)  # room for the annotations
    _set_texts(ax, title, xlabel, ylabel)
    return bars


def curves(
    ax: Axes,
    x: Any,
    ys: Mapping[str, Any],
    *,
    title: str,
    xlabel: str | None = None,
    ylabel: str | None = None,
    logx: bool = False,
    logy: bool = False,
    markers: bool = True,
) -> list[Line2D]:
    """Several curves over a shared x axis, with a legend (e.g. gradient norm vs distance).

    Args:
        ax: the axes to draw into.
        x: ``(n,)`` x values.
        ys: curve label -> ``(n,)`` y values, drawn in this order.
        title: the title.
        xlabel, ylabel: the axis labels (``None``: none).
        logx, logy: logarithmic axes.
        markers: mark the measured points.

    Returns:
        One ``Line2D`` per curve.

    Raises:
        ValueError: no curves, or a curve whose length differs from ``x``'s.
    """
    _check_texts(title=title, xlabel=xlabel, ylabel=ylabel)
    xs = to_numpy(x, "x").astype(np.float64)
    if xs.ndim != 1 or xs.size == 0:
        raise ValueError(f"x must be 1-D and non-empty, got {describe(xs)}")
    if not isinstance(ys, Mapping) or not ys:
        raise ValueError("ys must be a non-empty dict {label: y values}")
    lines = []
    for label, y in ys.items():
        yv = to_numpy(y, f"ys[{label!r}]").astype(np.float64)
        if yv.shape != xs.shape:
            raise ValueError(
                f"ys[{label!r}] has shape {yv.shape} but x has shape {xs.shape}: one y per x"
            )
        (line,) = ax.plot(xs, yv, marker="o" if markers else None, markersize=4, label=label)
        lines.append(line)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.legend()
    ax.grid(True, alpha=0.3)
    _set_texts(ax, title, xlabel, ylabel)
    return lines


# -- helpers ---------------------------------------------------------------------------------


def _check_texts(**texts: Any) -> None:
    """Each text must be a non-empty string; an axis label may also be ``None`` (none)."""
    for name, text in texts.items():
        if text is None and name in ("xlabel", "ylabel"):
            continue
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{name} must be a non-empty string, got {text!r}")


def _set_texts(ax: Axes, title: str, xlabel: str | None, ylabel: str | None) -> None:
    ax.set_title(title)
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)


def _labels(labels: Any, n: int, name: str, what: str) -> list[str]:
    if labels is None or isinstance(labels, str):
        raise TypeError(f"{name} must be a list of {n} labels, got {labels!r}")
    labels = [str(label) for label in labels]
    if len(labels) != n:
        raise ValueError(f"{name} has {len(labels)} entries for {what}: need {n}")
    return labels


def _ticks(ax: Axes, axis: str, n: int, labels: Any, name: str, shape: tuple[int, ...]) -> None:
    if labels is None:
        (ax.xaxis if axis == "x" else ax.yaxis).set_major_locator(MaxNLocator(integer=True))
        return
    labels = _labels(labels, n, name, f"a matrix of shape {tuple(shape)}")
    if axis == "x":
        ax.set_xticks(np.arange(n), labels)
        _rotate_if_long(ax, labels)
    else:
        ax.set_yticks(np.arange(n), labels)


def _rotate_if_long(ax: Axes, labels: Sequence[str]) -> None:
    """Rotate the x labels by 45° (90° for more than 8) when they would likely collide side
    by side.

    About 24 characters fit across an axis at the default font size: more than that
    (number of labels x longest label) and the labels are rotated.
    """
    if len(labels) * max(len(label) for label in labels) > ROTATE_OVER:
        upright = len(labels) > ROTATE_UPRIGHT_OVER
        for tick in ax.get_xticklabels():
            tick.set_rotation(90 if upright else 45)
            tick.set_horizontalalignment("right")
            if upright:
                tick.set_verticalalignment("center")
            tick.set_rotation_mode("anchor")


class Table:
    """A small table of numbers: an HTML table when displayed, aligned text elsewhere.

    Made by :func:`table`. Jupyter, Colab and the website show ``_repr_html_``, a real
    table whose columns wrap to the width of the page (so it fits a phone); a committed
    notebook keeps ``_repr_markdown_`` (a Markdown table) and ``repr``, the same numbers
    as aligned plain text (what a terminal and nbval see).
    """

    def __init__(self, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        self.header = tuple(header)
        self.rows = tuple(tuple(r) for r in rows)

    def __repr__(self) -> str:
        widths = [max(len(h), *(len(r[j]) for r in self.rows)) for j, h in enumerate(self.header)]
        lines = [self.header, *self.rows]
        return "\n".join(
            "  ".join(
                c.rjust(w) if j else c.ljust(w)
                for j, (c, w) in enumerate(zip(line, widths, strict=True))
            ).rstrip()
            for line in lines
        )

    def _repr_html_(self) -> str:
        pad = "padding: 0.2em 0.6em"
        head = "".join(
            f'<th style="{pad}; text-align: {"right" if j else "left"}; '
            f'border-bottom: 1px solid currentColor">{html.escape(h)}</th>'
            for j, h in enumerate(self.header)
        )
        body = "".join(
            "<tr>"
            + "".join(
                f'<td style="{pad}; text-align: {"right" if j else "left"}">{html.escape(c)}</td>'
                for j, c in enumerate(r)
            )
            + "</tr>"
            for r in self.rows
        )
        return (
            '<table class="attnlab-table" style="border-collapse: collapse; '
            'font-variant-numeric: tabular-nums; margin: 0.3em 0">'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        )

    def _repr_markdown_(self) -> str:
        def row(cells: Sequence[str]) -> str:
            return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

        align = "|" + "|".join([":--"] + ["--:"] * (len(self.header) - 1)) + "|"
        return "\n".join([row(self.header), align, *(row(r) for r in self.rows)])


def table(header: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str = ".2f") -> Table:
    """A table of numbers that reads well on any screen: first column left, numbers right.

    Args:
        header: the column titles.
        rows: one sequence per row, as long as ``header``; numbers are written with
            ``fmt``, anything else with ``str``.
        fmt: a format spec for the numbers (one for all), or one per column separated by
            commas (``"d,.2f,.3f"``).

    Returns:
        A :class:`Table`: displayed as a table by Jupyter, Colab and the website, as
        aligned text by ``print`` and ``repr``.

    Raises:
        ValueError: a row's length differs from the header's, or ``fmt`` gives neither one
            spec nor one per column.

    Taught in: chapters/02_similarity.ipynb
    """
    header = [str(h) for h in header]
    specs = fmt.split(",")
    if len(specs) == 1:
        specs = specs * len(header)
    if len(specs) != len(header):
        raise ValueError(f"fmt gives {len(specs)} specs for {len(header)} columns: {fmt!r}")
    cells = []
    for i, r in enumerate(rows):
        r = [v.item() if isinstance(v, np.ndarray) and v.ndim == 0 else v for v in r]
        if len(r) != len(header):
            raise ValueError(f"row {i} has {len(r)} cells, the header {len(header)}")
        cells.append(
            [
                format(v, spec)
                if isinstance(v, (int, float, np.number)) and not isinstance(v, bool)
                else str(v)
                for v, spec in zip(r, specs, strict=True)
            ]
        )
    return Table(header, cells)
