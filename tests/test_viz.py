"""Tests for attnlab.drawing.viz: every figure is labelled, accepts NumPy and torch, rejects bad shapes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from attnlab.drawing import viz

TOKENS = ["the", "river", "bank"]
WEIGHTS = np.array([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.05, 0.15, 0.8]])
LABELS = {"title": "Attention weights", "xlabel": "key", "ylabel": "query", "cbar_label": "weight"}


@pytest.fixture
def ax() -> Axes:
    return Figure(figsize=(4, 3), layout="constrained").subplots()


def _kinds(x: np.ndarray) -> list[Any]:
    """The same data as NumPy, as a CPU tensor that requires grad, and as nested lists."""
    return [x, torch.tensor(x, requires_grad=True), x.tolist()]


def _texts(ax: Axes) -> list[str]:
    return [t.get_text() for t in ax.texts]


def _ticks(labels: list[Any]) -> list[str]:
    return [t.get_text() for t in labels]


# -- heatmap ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", range(3))
def test_heatmap_is_labelled_with_a_colorbar(ax: Axes, kind: int) -> None:
    matrix = _kinds(WEIGHTS)[kind]
    image = viz.heatmap(ax, matrix, row_labels=TOKENS, col_labels=TOKENS, **LABELS)
    np.testing.assert_allclose(image.get_array(), WEIGHTS, rtol=0, atol=1e-12)
    assert ax.get_title() == "Attention weights"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("key", "query")
    assert image.colorbar is not None
    assert image.colorbar.ax.get_ylabel() == "weight"
    assert _ticks(ax.get_xticklabels()) == TOKENS
    assert _ticks(ax.get_yticklabels()) == TOKENS
    assert (image.norm.vmin, image.norm.vmax) == (0.05, 0.8)


def _drawn(shape: tuple[int, int], figsize: tuple[float, float] = (5.2, 4.4), **kw: Any):
    """A heat map drawn as the website draws figures: text sized for a phone."""
    import matplotlib as mpl
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from attnlab import widgets

    rng = np.random.default_rng(0)
    with mpl.rc_context({"font.size": widgets.phone_font_size(figsize[0])}):
        fig = Figure(figsize=figsize, dpi=160, layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.subplots()
        image = viz.heatmap(ax, rng.uniform(-1, 1, shape), **LABELS, **kw)
        fig.canvas.draw()
    return fig, ax, image


@pytest.mark.parametrize("shape", [(2, 8), (3, 5), (8, 8), (12, 4)])
def test_heatmap_colour_bar_is_as_tall_as_the_matrix(shape: tuple[int, int]) -> None:
    """A colour bar given the axes' whole slot was taller than a wide matrix (chapter 3)."""
    _, _, image = _drawn(shape)
    matrix = image.get_window_extent()
    bar = image.colorbar.ax.get_window_extent()
    assert abs(bar.height - matrix.height) <= 1, (bar.height, matrix.height)
    assert abs(bar.y0 - matrix.y0) <= 1, (bar.y0, matrix.y0)
    assert bar.x0 > matrix.x1, "the colour bar overlaps the matrix"


@pytest.mark.parametrize(("shape", "fmt"), [((8, 8), ".1f"), ((4, 6), ".2f"), ((6, 6), ".2f")])
def test_heatmap_numbers_stay_inside_their_cells(shape: tuple[int, int], fmt: str) -> None:
    """Each number written in a cell keeps clear of the cell's edges, so of the axes too
    (chapter 5's M_k numbers touched them)."""
    fig, ax, _ = _drawn(shape, fmt=fmt)
    renderer = fig.canvas.get_renderer()
    assert len(ax.texts) == shape[0] * shape[1]
    for text in ax.texts:
        c, r = text.get_position()
        (x0, y0), (x1, y1) = ax.transData.transform([(c - 0.5, r + 0.5), (c + 0.5, r - 0.5)])
        box = text.get_window_extent(renderer)
        margin = min(box.x0 - x0, x1 - box.x1, box.y0 - y0, y1 - box.y1)
        assert margin >= 1, f"{text.get_text()!r} at ({r}, {c}) is {margin:.1f} px from its edge"


def test_heatmap_annotates_every_cell_with_readable_colours(ax: Axes) -> None:
    viz.heatmap(ax, WEIGHTS, row_labels=TOKENS, col_labels=TOKENS, vmin=0, vmax=1, **LABELS)
    assert _texts(ax) == [f"{v:.2f}" for v in WEIGHTS.ravel()]
    colours = {t.get_text(): t.get_color() for t in ax.texts}
    assert colours["0.05"] == "white"  # dark end of viridis
    assert colours["0.80"] == "black"  # bright end


def test_heatmap_formats_and_integer_matrices(ax: Axes) -> None:
    viz.heatmap(ax, np.array([[1, 0], [1, 1]], dtype=bool), **LABELS)
    assert _texts(ax) == ["1", "0", "1", "1"]
    other = Figure().subplots()
    viz.heatmap(other, WEIGHTS, fmt=".1f", **LABELS)
    assert _texts(other)[0] == "0.7"


def test_heatmap_without_labels_uses_integer_positions(ax: Axes) -> None:
    viz.heatmap(ax, np.zeros((2, 5)), **LABELS)
    ax.figure.canvas.draw()
    ticks = ax.get_xticks()
    np.testing.assert_array_equal(ticks, np.round(ticks))


def test_heatmap_big_matrices_are_not_annotated_by_default(ax: Axes) -> None:
    n = viz.ANNOTATE_UP_TO + 1
    viz.heatmap(ax, np.ones((n, 2)), **LABELS)
    assert _texts(ax) == []
    viz.heatmap(ax, np.ones((n, 2)), annotate=True, **LABELS)
    assert len(_texts(ax)) == 2 * n


def test_heatmap_shows_masked_scores_in_grey(ax: Axes) -> None:
    scores = np.array([[1.0, -np.inf], [0.5, 2.0]])
    image = viz.heatmap(ax, scores, **LABELS)
    assert _texts(ax) == ["1.00", "−∞", "0.50", "2.00"]
    assert image.get_array().mask.tolist() == [[False, True], [False, False]]
    assert (image.norm.vmin, image.norm.vmax) == (0.5, 2.0)  # finite entries only


@pytest.mark.parametrize(
    ("labels", "rotation"),
    [
        (["dot a·b", "cosine"], 0.0),
        (["the", "river", "bank", "by"], 0.0),
        (["the", "river", "bank", "by", "the", "water"], 45.0),
        (["a", "b", "a-rather-long-label"], 45.0),
    ],
)
def test_long_column_labels_are_rotated(ax: Axes, labels: list[str], rotation: float) -> None:
    viz.heatmap(ax, np.ones((1, len(labels))), col_labels=labels, **LABELS)
    assert {t.get_rotation() for t in ax.get_xticklabels()} == {rotation}
    other = Figure().subplots()
    viz.bar(other, labels, np.ones(len(labels)), title="t", ylabel="y")
    assert {t.get_rotation() for t in other.get_xticklabels()} == {rotation}


@pytest.mark.parametrize(
    ("matrix", "match"),
    [
        (np.ones(3), r"2-D and non-empty.*shape \(3,\)"),
        (np.ones((2, 2, 2)), r"shape \(2, 2, 2\)"),
        (np.ones((0, 3)), r"shape \(0, 3\)"),
        (torch.ones(1, 2, 3), r"shape \(1, 2, 3\)"),
    ],
)
def test_heatmap_rejects_bad_shapes(ax: Axes, matrix: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        viz.heatmap(ax, matrix, **LABELS)


def test_heatmap_rejects_label_counts_that_do_not_fit(ax: Axes) -> None:
    with pytest.raises(
        ValueError, match=r"col_labels has 2 entries for a matrix of shape \(3, 3\)"
    ):
        viz.heatmap(ax, WEIGHTS, col_labels=["a", "b"], **LABELS)
    with pytest.raises(ValueError, match=r"row_labels has 4 entries"):
        viz.heatmap(ax, WEIGHTS, row_labels=list("abcd"), **LABELS)
    with pytest.raises(TypeError, match="must be a list of 3 labels"):
        viz.heatmap(ax, WEIGHTS, row_labels="abc", **LABELS)


@pytest.mark.parametrize("missing", ["title", "xlabel", "ylabel", "cbar_label"])
def test_heatmap_needs_every_text(ax: Axes, missing: str) -> None:
    with pytest.raises(ValueError, match=f"{missing} must be a non-empty string"):
        viz.heatmap(ax, WEIGHTS, **{**LABELS, missing: " "})


def test_heatmap_rejects_non_numbers(ax: Axes) -> None:
    with pytest.raises(TypeError, match="matrix must hold real numbers"):
        viz.heatmap(ax, [["a", "b"]], **LABELS)


# -- vectors_2d ------------------------------------------------------------------------------

VECTORS = np.array([[1.0, 2.0], [2.0, 1.0], [-1.0, 0.5]])


@pytest.mark.parametrize("kind", range(3))
def test_vectors_2d_draws_arrows_from_the_origin(ax: Axes, kind: int) -> None:
    arrows = viz.vectors_2d(ax, _kinds(VECTORS)[kind], ["king", "queen", "dog"], title="words")
    np.testing.assert_allclose(arrows.X, 0)
    np.testing.assert_allclose(arrows.Y, 0)
    np.testing.assert_allclose(np.c_[arrows.U, arrows.V], VECTORS, rtol=0, atol=1e-12)
    assert _texts(ax) == ["king", "queen", "dog"]
    assert ax.get_title() == "words"
    assert ax.get_xlabel() and ax.get_ylabel()
    assert ax.get_aspect() == 1.0
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    assert x0 < -1 and x1 > 2 and y0 < 0 and y1 > 2, "an arrow tip is out of view"


@pytest.mark.parametrize(
    "vectors", [np.ones((3, 3)), np.ones(2), np.ones((0, 2)), torch.ones(2, 2, 2)]
)
def test_vectors_2d_rejects_bad_shapes(ax: Axes, vectors: Any) -> None:
    with pytest.raises(ValueError, match=r"vectors must have shape \(n, 2\), got .*shape"):
        viz.vectors_2d(ax, vectors, ["a"] * 3, title="t")


def test_vectors_2d_needs_one_label_and_colour_per_vector(ax: Axes) -> None:
    with pytest.raises(ValueError, match=r"labels has 2 entries for vectors of shape \(3, 2\)"):
        viz.vectors_2d(ax, VECTORS, ["a", "b"], title="t")
    with pytest.raises(ValueError, match="got 1 colors for 3 vectors"):
        viz.vectors_2d(ax, VECTORS, ["a", "b", "c"], title="t", colors=["red"])


# -- bar -------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", range(3))
def test_bar_draws_one_labelled_bar_per_value(ax: Axes, kind: int) -> None:
    values = WEIGHTS[0]
    bars = viz.bar(ax, TOKENS, _kinds(values)[kind], title="softmax", ylabel="weight", ylim=(0, 1))
    np.testing.assert_allclose([b.get_height() for b in bars], values, rtol=0, atol=1e-12)
    assert _ticks(ax.get_xticklabels()) == TOKENS
    assert _texts(ax) == ["0.70", "0.20", "0.10"]
    assert (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) == ("softmax", "token", "weight")
    assert ax.get_ylim() == (0, 1)


def test_bar_rejects_bad_shapes(ax: Axes) -> None:
    with pytest.raises(ValueError, match=r"values must be 1-D and non-empty, got .*\(3, 3\)"):
        viz.bar(ax, TOKENS, WEIGHTS, title="t", ylabel="y")
    with pytest.raises(ValueError, match=r"labels has 2 entries for values of shape \(3,\)"):
        viz.bar(ax, TOKENS[:2], WEIGHTS[0], title="t", ylabel="y")
    with pytest.raises(ValueError, match="ylabel must be a non-empty string"):
        viz.bar(ax, TOKENS, WEIGHTS[0], title="t", ylabel="")


# -- curves ----------------------------------------------------------------------------------


def test_curves_draws_one_line_per_series_with_a_legend(ax: Axes) -> None:
    x = [1, 2, 4, 8]
    ys = {"RNN": torch.tensor([1.0, 0.5, 0.1, 0.01]), "attention": np.ones(4)}
    lines = viz.curves(ax, x, ys, title="gradient", xlabel="distance", ylabel="norm", logy=True)
    assert [line.get_label() for line in lines] == ["RNN", "attention"]
    np.testing.assert_allclose(lines[0].get_ydata(), [1.0, 0.5, 0.1, 0.01], rtol=1e-6)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["RNN", "attention"]
    assert ax.get_yscale() == "log"
    assert (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) == ("gradient", "distance", "norm")


def test_curves_rejects_mismatched_lengths(ax: Axes) -> None:
    with pytest.raises(ValueError, match=r"ys\['a'\] has shape \(2,\) but x has shape \(3,\)"):
        viz.curves(ax, [1, 2, 3], {"a": [1, 2]}, title="t", xlabel="x", ylabel="y")
    with pytest.raises(ValueError, match="non-empty dict"):
        viz.curves(ax, [1, 2, 3], {}, title="t", xlabel="x", ylabel="y")


# -- optional axis labels -------------------------------------------------------------------


def test_axis_labels_are_optional_where_the_title_says_it_all() -> None:
    fig = Figure()
    a1, a2, a3, a4 = fig.subplots(1, 4)
    viz.heatmap(a1, WEIGHTS, title="weights", cbar_label="weight")
    viz.bar(a2, ["cos θ"], [0.5], title="cosine", xlabel=None)
    viz.curves(a3, [1, 2], {"loss": [1.0, 0.5]}, title="loss per step")
    viz.vectors_2d(a4, np.eye(2), ["a", "b"], title="two vectors", xlabel=None, ylabel=None)
    titles = ("weights", "cosine", "loss per step", "two vectors")
    for ax, title in zip((a1, a2, a3, a4), titles, strict=True):
        assert (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) == (title, "", "")
    # the defaults that chapters rely on stay
    viz.bar(a2, ["x"], [1.0], title="t")
    assert a2.get_xlabel() == "token"
    for call in (
        lambda: viz.heatmap(a1, WEIGHTS, title=None, cbar_label="weight"),
        lambda: viz.heatmap(a1, WEIGHTS, title="t", cbar_label="w", xlabel=" "),
        lambda: viz.curves(a3, [1], {"a": [1.0]}, title="t", ylabel=""),
    ):
        with pytest.raises(ValueError, match="must be a non-empty string"):
            call()


# -- to_numpy --------------------------------------------------------------------------------


def test_to_numpy_detaches_tensors_and_rejects_ragged_lists() -> None:
    t = torch.ones(2, requires_grad=True) * 2
    out = viz.to_numpy(t)
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, [2.0, 2.0])
    with pytest.raises(ValueError, match="ragged"):
        viz.to_numpy([[1, 2], [3]])


# ------------------------------------------------------------------ table


def test_table_is_markdown_in_notebooks_and_aligned_text_elsewhere():
    t = viz.table(["token", "cos(in, out)", "d"], [["the", 0.6123, 4], ["river", 0.98, 16]],
                  fmt="s,.2f,d")  # fmt: skip
    assert repr(t).splitlines() == [
        "token  cos(in, out)   d",
        "the            0.61   4",
        "river          0.98  16",
    ]
    assert t._repr_markdown_().splitlines() == [
        "| token | cos(in, out) | d |",
        "|:--|--:|--:|",
        "| the | 0.61 | 4 |",
        "| river | 0.98 | 16 |",
    ]


def test_table_formats_numpy_numbers_and_escapes_pipes():
    t = viz.table(["|J|", "w"], [[np.float64(0.12345), np.int64(3)]], fmt=".3f")
    assert t.rows == (("0.123", "3.000"),)
    assert t._repr_markdown_().splitlines()[0] == "| \\|J\\| | w |"


@pytest.mark.parametrize(
    ("header", "rows", "fmt", "words"),
    [
        (["a", "b"], [[1.0]], ".2f", "row 0 has 1 cells, the header 2"),
        (["a", "b"], [[1.0, 2.0]], ".2f,.2f,.2f", "3 specs for 2 columns"),
    ],
)
def test_table_rejects_ragged_rows_and_formats(header, rows, fmt, words):
    with pytest.raises(ValueError, match=words):
        viz.table(header, rows, fmt=fmt)


def test_table_html_is_a_real_table_with_escaped_cells():
    t = viz.table(["a<b", "x"], [["r&d", 1.5]], fmt="s,.1f")
    page = t._repr_html_()
    assert page.startswith('<table class="attnlab-table"') and page.endswith("</table>")
    assert "<th" in page and page.count("<tr>") == 2
    assert "a&lt;b" in page and "r&amp;d" in page and ">1.5</td>" in page
