"""Slider figures that work everywhere: live in Jupyter and Colab, a scrubber on the website.

A live ``ipywidgets`` slider needs a running kernel (and widget JavaScript from a CDN), so it
is dead on a static web page. :func:`explore` therefore draws every combination of slider
values once, up front, and returns an :class:`Explorer` that displays in two ways at once:

* ``text/html``: a self-contained scrubber. Every frame is embedded as a PNG, each slider is
  an ``<input type="range">`` with a visible ``name = value`` label, and a few lines of
  inline JavaScript swap the image. No kernel, no network, no external file. This is what
  the website shows (``_config.yml`` tells myst-nb never to render the widget view) and
  what any viewer without widget support falls back to.
* ``application/vnd.jupyter.widget-view+json``: only inside a live IPython kernel with
  ``ipywidgets`` installed, one ``SelectionSlider`` per slider over the same values and an
  ``Output`` showing the frame for the chosen values (instantly: it is already drawn).
  JupyterLab, Notebook 7, VS Code and Colab prefer this rendering.

Both renderings show the same frames: each is drawn exactly once, by ``draw(fig, **values)``
into a fresh :class:`matplotlib.figure.Figure` (never through ``pyplot``, so nothing leaks
into the notebook's figures), when ``explore`` is called. A ``draw`` that fails therefore
fails the cell that calls ``explore``, naming the slider values it failed for.

Example::

    def draw(fig, temperature):
        ax = fig.subplots()
        viz.bar(ax, tokens, softmax(logits, temperature=temperature),
                title=f"softmax at temperature {temperature}", ylabel="weight")

    explore(draw, temperature=[0.1, 0.5, 1, 2, 5])

Taught in: chapters/02_similarity.ipynb (first used), then every chapter with a slider.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import itertools
import json
import math
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib as mpl
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image
from PIL.PngImagePlugin import PngInfo

from .._validate import check_real

__all__ = [
    "MAX_FRAMES",
    "MAX_SLIDERS",
    "PHONE_WIDTH",
    "Explorer",
    "FigureLayoutWarning",
    "Slider",
    "StaticFigure",
    "explore",
    "figure",
    "layout_problems",
    "text_sizes",
]

MAX_SLIDERS = 3
"""At most this many sliders per explorer."""

MAX_FRAMES = 60
"""At most this many frames (the product of the slider lengths) per explorer."""

PHONE_WIDTH = 358
"""CSS pixels a figure gets on a 390 px phone (the page's column, without its margins)."""

MIN_PHONE_TEXT = 9.0
"""The smallest text, in CSS pixels at :data:`PHONE_WIDTH`, a figure may hold (tick labels,
numbers written in cells or on bars, legends alike)."""

TEXT_SIZES_KEY = "attnlab:text-px"
"""The PNG text chunk in which every figure records its smallest text (see
:func:`text_sizes`): the browser test reads it to measure that text on a phone."""

PHONE_TEXT = 9.0
"""The size of a frame's ordinary text on a phone, in CSS pixels: ``font.size`` is scaled
for each figure width so that unsized text lands here."""


def phone_font_size(figwidth: float) -> float:
    """The ``font.size`` (points) that makes ordinary text :data:`PHONE_TEXT` px on a phone.

    A figure ``figwidth`` inches wide is shown :data:`PHONE_WIDTH` px wide on a phone, so a
    point becomes ``PHONE_WIDTH / (72 * figwidth)`` px. Never below matplotlib's setting.
    """
    return max(float(mpl.rcParams["font.size"]), PHONE_TEXT * 72 * figwidth / PHONE_WIDTH)


class FigureLayoutWarning(UserWarning):
    """A slider frame has text that collides, is cut off, or is too small on a phone."""


WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"

Value = int | float | str | bool
"""What a slider can hold: numbers or strings."""


@dataclass(frozen=True)
class Slider:
    """The values of one slider, with an optional label and number format.

    Args:
        values: the values, in slider order (numbers or strings; NumPy/torch scalars and
            1-D arrays are converted to Python numbers).
        label: the name shown next to the slider; defaults to the keyword it is passed as.
        fmt: how a value is shown: a format spec such as ``".2f"`` or a function
            ``value -> str``. The default shows ints as ints and floats with ``"g"``.

    Raises:
        ValueError: no values, or two values that would show the same text.
        TypeError: ``values`` is a string, a set or a mapping, or holds something that is
            neither a number nor a string.
    """

    values: Sequence[Value]
    label: str | None = None
    fmt: str | Callable[[Any], str] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", _as_values(self.values, self.label))
        if self.label is not None and (not isinstance(self.label, str) or not self.label):
            raise TypeError(f"label must be a non-empty string, got {self.label!r}")
        if self.fmt is not None and not (isinstance(self.fmt, str) or callable(self.fmt)):
            raise TypeError(f"fmt must be a format spec like '.2f' or a function, got {self.fmt!r}")
        shown = self.texts()
        if len(set(shown)) != len(shown):
            dupes = sorted({t for t in shown if shown.count(t) > 1})
            raise ValueError(
                f"{_slider_name(self.label)} has values that show the same text {dupes}: "
                f"remove duplicates or use a finer fmt (values: {list(self.values)})"
            )

    def texts(self) -> list[str]:
        """Each value as it is shown next to the slider."""
        return [self.format(v) for v in self.values]

    def format(self, value: Value) -> str:
        """One value as it is shown next to the slider."""
        if callable(self.fmt):
            return str(self.fmt(value))
        if self.fmt is not None:
            return format(value, self.fmt)
        if isinstance(value, float):
            return f"{value:g}"
        return str(value)


class Explorer:
    """A figure with sliders; see :func:`explore`, which builds it.

    Attributes:
        names: the slider keywords, in order.
        sliders: one :class:`Slider` per name (labels filled in).
        shape: the number of values of each slider.
        frames: the PNG bytes of every frame, the last slider varying fastest.
        initial: the values shown first, by name.
        id: the HTML id of the scrubber's root element: a hash of the content, with a
            suffix when the same content was already shown in this process. Never random,
            so re-running a notebook gives the same output.
    """

    def __init__(
        self,
        draw: Callable[..., Any],
        sliders: Mapping[str, Slider | Iterable[Value]],
        *,
        figsize: tuple[float, float] = (6.4, 3.6),
        dpi: float = 80,
        density: float = 2,
        initial: Mapping[str, Value] | None = None,
        alt: str | None = None,
    ) -> None:
        if not callable(draw):
            raise TypeError(f"draw must be a function draw(fig, **values), got {draw!r}")
        self.names, self.sliders = _check_sliders(sliders)
        self.shape = tuple(len(s.values) for s in self.sliders)
        self.figsize, self.dpi = _check_size(figsize, dpi)
        self.density = check_real(
            density, "density", expected="a number between 1 and 4", ok=lambda d: 1 <= d <= 4
        )
        if alt is not None and not isinstance(alt, str):
            raise TypeError(f"alt must be a string, got {alt!r}")
        self.alt = alt or "Figure"
        self._start = _initial_index(self.names, self.sliders, initial)
        self.initial = {
            n: s.values[i] for n, s, i in zip(self.names, self.sliders, self._start, strict=True)
        }
        self.frames = tuple(
            _render(
                draw,
                dict(zip(self.names, combo, strict=True)),
                self.figsize,
                self.dpi * self.density,
                css_dpi=self.dpi,
            )
            for combo in itertools.product(*(s.values for s in self.sliders))
        )
        self.id = _issue_id(self._digest())
        self._live: Any = None

    # -- the two renderings ----------------------------------------------------------------

    def to_html(self) -> str:
        """The self-contained scrubber: ``<div>`` with the frames, range inputs and script."""
        labels = [s.texts() for s in self.sliders]
        start = _flat_index(self._start, self.shape)
        data = {
            "names": [s.label for s in self.sliders],
            "labels": labels,
            "shape": list(self.shape),
            "alt": self.alt,
            "frames": [base64.b64encode(f).decode("ascii") for f in self.frames],
        }
        # JSON is valid JavaScript. "<" only occurs inside its strings, where "\u003c" means the
        # same; escaping it means no label can end the <script> early ("</script>", "<!--").
        payload = json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")
        width, height = self.css_size
        controls = "\n".join(
            _control_html(s.label or n, labels[i], self._start[i])
            for i, (n, s) in enumerate(zip(self.names, self.sliders, strict=True))
        )
        alt = html.escape(self._alt_text(self._start))
        src = "data:image/png;base64," + data["frames"][start]
        return (
            f'<div class="attnlab-explorer" id="{self.id}" data-attnlab-explorer="{self.id}">\n'
            f"<style>{_CSS}</style>\n"
            '<div class="attnlab-figure">'
            f'<img class="attnlab-frame" src="{src}" width="{width}" height="{height}" '
            f'alt="{alt}">'
            '<span class="attnlab-loading" aria-hidden="true"></span></div>\n'
            f'<div class="attnlab-controls">\n{controls}\n</div>\n'
            f"<script>{_JS.replace('__ID__', self.id).replace('__DATA__', payload)}</script>\n"
            "</div>"
        )

    @property
    def css_size(self) -> tuple[int, int]:
        """The frame's size on the page in CSS pixels: ``figsize`` times ``dpi``.

        The frames themselves have ``density`` times as many pixels each way, so that they
        stay sharp on high-density (phone, "retina") screens.
        """
        width, height = (round(x * self.dpi) for x in self.figsize)
        return width, height

    def _repr_mimebundle_(
        self, include: Iterable[str] | None = None, exclude: Iterable[str] | None = None
    ) -> dict[str, Any]:
        """``text/plain``, ``text/html``, ``image/png`` and, in a live kernel, the widget."""
        first = self.frames[_flat_index(self._start, self.shape)]
        bundle: dict[str, Any] = {
            "text/plain": repr(self),
            "text/html": self.to_html(),
            # The first frame alone, for builders that show neither HTML nor widgets (PDF).
            "image/png": base64.b64encode(first).decode("ascii"),
        }
        if _in_live_kernel():
            view = self.live()
            if view is not None:
                # Written out rather than taken from the widget's own repr, which
                # ipywidgets 7 (still Colab's default) does not have.
                bundle[WIDGET_VIEW_MIME] = {
                    "version_major": 2,
                    "version_minor": 0,
                    "model_id": view.model_id,
                }
        if include is not None:
            bundle = {k: v for k, v in bundle.items() if k in set(include)}
        if exclude is not None:
            bundle = {k: v for k, v in bundle.items() if k not in set(exclude)}
        return bundle

    def live(self) -> Any:
        """The ``ipywidgets`` UI (built once): a ``SelectionSlider`` per slider and an ``Output``.

        Returns ``None`` when ``ipywidgets`` is not installed.
        """
        if self._live is not None:
            return self._live
        try:
            import ipywidgets as widgets
        except ImportError:
            return None
        controls = [
            widgets.SelectionSlider(
                options=[(text, i) for i, text in enumerate(s.texts())],
                index=start,
                description=s.label or n,
                continuous_update=True,  # frames are precomputed: updating is instant
                style={"description_width": "initial"},
                layout=widgets.Layout(width="min(100%, 30em)"),
            )
            for n, s, start in zip(self.names, self.sliders, self._start, strict=True)
        ]
        out = widgets.Output()
        width, height = self.css_size

        def show(_change: Any = None) -> None:
            index = tuple(c.value for c in controls)
            png = self.frames[_flat_index(index, self.shape)]
            out.outputs = (
                {
                    "output_type": "display_data",
                    "data": {
                        "image/png": base64.b64encode(png).decode("ascii"),
                        "text/plain": self._alt_text(index),
                    },
                    # Shown at its CSS size (as IPython's "retina" figures are).
                    "metadata": {"image/png": {"width": width, "height": height}},
                },
            )

        for c in controls:
            c.observe(show, names="value")
        show()
        self._live = widgets.VBox([*controls, out])
        return self._live

    def __repr__(self) -> str:
        parts = []
        for n, s in zip(self.names, self.sliders, strict=True):
            texts = s.texts()
            span = texts[0] if len(texts) == 1 else f"{texts[0]} … {texts[-1]}"
            parts.append(f"{s.label or n}: {len(texts)} values {span}")
        now = ", ".join(self._assignments(self._start))
        return f"Explorer({'; '.join(parts)}; {len(self.frames)} frames, showing {now})"

    # -- helpers ---------------------------------------------------------------------------

    def _assignments(self, index: Sequence[int]) -> list[str]:
        return [
            f"{s.label or n} = {s.texts()[i]}"
            for n, s, i in zip(self.names, self.sliders, index, strict=True)
        ]

    def _alt_text(self, index: Sequence[int]) -> str:
        return f"{self.alt} ({', '.join(self._assignments(index))})"

    def _digest(self) -> str:
        h = hashlib.sha256()
        spec = [[s.label, s.texts()] for s in self.sliders]
        h.update(json.dumps([self.names, spec, self._start, self.alt]).encode())
        for frame in self.frames:
            h.update(frame)
        return h.hexdigest()[:12]


def explore(
    draw: Callable[..., Any],
    /,
    *,
    figsize: tuple[float, float] = (6.4, 3.6),
    dpi: float = 80,
    density: float = 2,
    initial: Mapping[str, Value] | None = None,
    alt: str | None = None,
    **sliders: Slider | Iterable[Value],
) -> Explorer:
    """A figure with sliders: live in Jupyter/Colab, a self-contained scrubber on the website.

    Every combination of slider values is drawn once, now: ``draw(fig, **values)`` gets a
    fresh ``Figure(figsize, dpi * density, layout="constrained")`` each time and must draw into it
    (``ax = fig.subplots()``), not with ``plt``. Make the cell's last expression the
    explorer (or ``display`` it) to show it.

    Args:
        draw: ``draw(fig, **values)``, one keyword per slider.
        figsize: figure size in inches; every frame has the same pixel size.
        dpi: CSS pixels per inch of the figure as shown (80 shows the default size
            512 x 288 px on the page).
        density: image pixels per CSS pixel: 2 draws the default size as a 1024 x 576
            image, sharp on the high-density screens of phones and laptops.
        initial: the values shown first, by slider name; a slider not named here starts at
            its **first** value (list the values in the order the prose walks through them).
        alt: a description of the figure for screen readers; the current slider values are
            appended to it.
        **sliders: one to three sliders, each a sequence of values (numbers or strings) or
            a :class:`Slider` for a custom label or number format. The names ``figsize``,
            ``dpi``, ``density``, ``initial`` and ``alt`` are taken by the options above.

    Returns:
        An :class:`Explorer`; displaying it shows the sliders and the figure.

    Raises:
        ValueError: no slider, more than ``MAX_SLIDERS``, more than ``MAX_FRAMES`` frames in
            all, a slider without values, an ``initial`` value that is not on its slider, or
            a ``draw`` that draws nothing into ``fig`` (or opens ``pyplot`` figures).
        TypeError: ``draw`` is not callable, or a slider is not a sequence of numbers/strings.
        RuntimeError: ``draw`` raised; the message names the slider values it failed for
            and the original error is chained.
    """
    return Explorer(
        draw, sliders, figsize=figsize, dpi=dpi, density=density, initial=initial, alt=alt
    )


class StaticFigure:
    """A figure without a slider, drawn like a slider's frames; see :func:`figure`.

    Attributes:
        png: the image, ``density`` pixels per CSS pixel.
        css_size: its size on the page in CSS pixels, ``figsize`` times ``dpi``.
    """

    def __init__(
        self,
        draw: Callable[..., Any],
        *,
        figsize: tuple[float, float] = (6.4, 3.6),
        dpi: float = 80,
        density: float = 2,
    ) -> None:
        if not callable(draw):
            raise TypeError(f"draw must be a function draw(fig), got {draw!r}")
        self.figsize, self.dpi = _check_size(figsize, dpi)
        self.density = check_real(
            density, "density", expected="a number between 1 and 4", ok=lambda d: 1 <= d <= 4
        )
        self.png = _render(draw, {}, self.figsize, self.dpi * self.density, css_dpi=self.dpi)
        self.css_size = (round(self.figsize[0] * self.dpi), round(self.figsize[1] * self.dpi))

    def _repr_mimebundle_(
        self, include: Iterable[str] | None = None, exclude: Iterable[str] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The PNG, shown at its CSS size (as IPython's "retina" figures are), and a line
        of text for viewers without images (and for nbval)."""
        width, height = self.css_size
        data = {
            "image/png": base64.b64encode(self.png).decode("ascii"),
            "text/plain": repr(self),
        }
        return data, {"image/png": {"width": width, "height": height}}

    def __repr__(self) -> str:
        width, height = self.css_size
        return f"<Figure {width}x{height} px>"


def figure(
    draw: Callable[..., Any],
    /,
    *,
    figsize: tuple[float, float] = (6.4, 3.6),
    dpi: float = 80,
    density: float = 2,
) -> StaticFigure:
    """A figure without a slider, drawn exactly as :func:`explore` draws a frame.

    ``draw(fig)`` gets a fresh ``Figure(figsize, dpi * density, layout="constrained")`` with
    text sized for a phone (:func:`phone_font_size`); a figure whose text collides, is cut
    off or is too small on a phone gets a :class:`FigureLayoutWarning`. On the website it
    is shown like a slider's frame (the same size rules, the same treatment in dark mode).
    Make it the cell's last expression (or ``display`` it).

    Example::

        def draw(fig):
            ax = fig.subplots()
            viz.heatmap(ax, weights, title="weights", cbar_label="weight")

        figure(draw, figsize=(5.2, 4.4))

    Raises:
        ValueError: ``draw`` draws nothing into ``fig`` or opens a ``pyplot`` figure, or a
            size is out of range.
        RuntimeError: ``draw`` raised (chained).

    Taught in: chapters/01_why_attention.ipynb (first used), then every chapter's figures.
    """
    return StaticFigure(draw, figsize=figsize, dpi=dpi, density=density)


# -- validation ------------------------------------------------------------------------------


def _slider_name(name: str | None) -> str:
    return f"slider {name!r}" if name else "a slider"


def _as_values(values: Any, name: str | None) -> tuple[Value, ...]:
    """Normalize slider values to a tuple of Python numbers/strings."""
    what = _slider_name(name)
    if isinstance(values, (str, bytes, Mapping, set, frozenset)):
        raise TypeError(
            f"{what} must be a sequence of values such as [0.5, 1, 2], got "
            f"{type(values).__name__} {values!r}"
        )
    if getattr(values, "ndim", 1) != 1:
        raise TypeError(f"{what} must be 1-D, got an array of shape {values.shape}")
    try:
        items = list(values)
    except TypeError:
        raise TypeError(
            f"{what} must be a sequence of values such as [0.5, 1, 2], got {values!r}"
        ) from None
    if not items:
        raise ValueError(f"{what} has no values")
    out: list[Value] = []
    for v in items:
        if getattr(v, "ndim", None) == 0 and hasattr(v, "item"):  # NumPy or torch scalar
            v = v.item()
        if not isinstance(v, (int, float, str)):
            raise TypeError(
                f"{what} holds {v!r} ({type(v).__name__}); values must be numbers or strings"
            )
        out.append(v)
    return tuple(out)


def _check_sliders(sliders: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[Slider, ...]]:
    if not sliders:
        raise ValueError(
            "explore needs at least one slider, e.g. explore(draw, temperature=[1, 2])"
        )
    if len(sliders) > MAX_SLIDERS:
        raise ValueError(
            f"explore takes at most {MAX_SLIDERS} sliders, got {len(sliders)}: {list(sliders)}"
        )
    names, out = [], []
    for name, spec in sliders.items():
        if isinstance(spec, Slider):
            slider = spec if spec.label else Slider(spec.values, label=name, fmt=spec.fmt)
        else:
            slider = Slider(_as_values(spec, name), label=name)
        names.append(name)
        out.append(slider)
    n_frames = math.prod(len(s.values) for s in out)
    if n_frames > MAX_FRAMES:
        sizes = " x ".join(f"{n} ({len(s.values)} values)" for n, s in zip(names, out, strict=True))
        raise ValueError(
            f"{sizes} = {n_frames} frames; at most {MAX_FRAMES} are drawn for the website: "
            "use fewer values"
        )
    return tuple(names), tuple(out)


def _check_size(figsize: Any, dpi: Any) -> tuple[tuple[float, float], float]:
    wrong_size = ValueError(f"figsize must be (width, height) in inches, got {figsize!r}")
    if not (isinstance(figsize, (tuple, list)) and len(figsize) == 2):
        raise wrong_size
    try:
        width, height = (check_real(x, "figsize", ok=lambda v: 0 < v < 50) for x in figsize)
    except ValueError:
        raise wrong_size from None
    between = "a number between 10 and 300"
    dpi = check_real(dpi, "dpi", expected=between, ok=lambda d: 10 <= d <= 300)
    return (width, height), dpi


def _initial_index(
    names: Sequence[str], sliders: Sequence[Slider], initial: Mapping[str, Any] | None
) -> tuple[int, ...]:
    initial = dict(initial or {})
    unknown = sorted(set(initial) - set(names))
    if unknown:
        raise ValueError(f"initial names unknown sliders {unknown}; the sliders are {list(names)}")
    index = []
    for name, slider in zip(names, sliders, strict=True):
        if name not in initial:
            index.append(0)
            continue
        want = initial[name]
        for i, v in enumerate(slider.values):
            if _same(v, want):
                index.append(i)
                break
        else:
            raise ValueError(
                f"initial {name}={want!r} is not one of the slider's values {list(slider.values)}"
            )
    return tuple(index)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    try:
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    except TypeError:
        return False


def _flat_index(index: Sequence[int], shape: Sequence[int]) -> int:
    """Row-major position of ``index`` in a grid of ``shape`` (the last axis varies fastest)."""
    flat = 0
    for i, n in zip(index, shape, strict=True):
        flat = flat * n + i
    return flat


# -- drawing ---------------------------------------------------------------------------------


def _render(
    draw: Callable[..., Any],
    values: dict[str, Value],
    figsize: tuple[float, float],
    dpi: float,
    *,
    css_dpi: float | None = None,
) -> bytes:
    """Draw one frame into a fresh Figure and return it as a PNG.

    Text is sized for a phone (:func:`phone_font_size`); a frame whose text collides, is cut
    off or is still too small gets a :class:`FigureLayoutWarning` naming the texts.
    """
    call = "draw(" + ", ".join(["fig", *(f"{k}={v!r}" for k, v in values.items())]) + ")"
    pyplot = sys.modules.get("matplotlib.pyplot")
    before = set(pyplot.get_fignums()) if pyplot is not None else set()
    with mpl.rc_context({"font.size": phone_font_size(figsize[0])}):
        fig = Figure(figsize=figsize, dpi=dpi, layout="constrained")
        try:
            draw(fig, **values)
        except Exception as err:
            raise RuntimeError(f"{call} raised {type(err).__name__}: {err}") from err
        finally:
            pyplot = sys.modules.get("matplotlib.pyplot")
            leaked = set(pyplot.get_fignums()) - before if pyplot is not None else set()
            for num in leaked:
                pyplot.close(num)
        if leaked:
            raise ValueError(
                f"{call} opened a pyplot figure; draw into the fig it receives "
                "(ax = fig.subplots()) instead of using plt"
            )
        if not fig.axes:
            raise ValueError(
                f"{call} drew nothing into fig; draw into the fig it receives (ax = fig.subplots())"
            )
        png = _to_png(fig, css_dpi)  # draws the figure: the text positions below are final
        problems = layout_problems(fig)
    if problems:
        where = ", ".join(f"{k}={v!r}" for k, v in values.items()) or "(no slider)"
        more = f"; and {len(problems) - 8} more" if len(problems) > 8 else ""
        warnings.warn(
            f"frame {where}: {'; '.join(problems[:8])}{more}", FigureLayoutWarning, stacklevel=4
        )
    return png


def _texts(fig: Figure) -> list[Any]:
    """The texts a reader sees: titles, axis and tick labels, annotations, legends."""
    found: list[Any] = [*fig.texts]
    if getattr(fig, "_suptitle", None) is not None:
        found.append(fig._suptitle)
    for ax in fig.axes:
        found += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
        for axis in (ax.xaxis, ax.yaxis):
            # The ticks actually drawn: those inside the view limits (matplotlib keeps
            # labels for the others, invisible on the image but still "visible").
            for tick in axis._update_ticks():
                found += [tick.label1, tick.label2]
            found.append(axis.offsetText)
        found += ax.texts
        legend = ax.get_legend()
        if legend is not None:
            found += legend.get_texts()
            found.append(legend.get_title())
    unique = list({id(t): t for t in found}.values())  # a suptitle is also in fig.texts
    return [t for t in unique if t.get_visible() and t.get_text().strip()]


def layout_problems(fig: Figure) -> list[str]:
    """What a reader could not read in a drawn figure: texts that overlap, that the figure's
    edge cuts off, or that are smaller than :data:`MIN_PHONE_TEXT` pixels on a phone.

    Written by hand because matplotlib only *avoids* collisions of the elements its layout
    engine manages (constrained layout), and reports none of them.

    Args:
        fig: a figure already drawn (its canvas rendered once).

    Returns:
        One sentence per problem, naming the texts (empty when the figure is clean).
    """
    renderer = fig.canvas.get_renderer()
    width_px = fig.bbox.width
    scale = min(1.0, PHONE_WIDTH / width_px)  # on a phone the image shrinks to the column
    boxes = []
    problems: list[str] = []
    for text in _texts(fig):
        box = text.get_window_extent(renderer)
        label = repr(text.get_text().strip())
        size = text.get_fontsize() * fig.dpi / 72 * scale
        if size < MIN_PHONE_TEXT:
            problems.append(f"text {label} is {size:.1f} px tall on a phone")
        if (
            box.x0 < -1
            or box.y0 < -1
            or box.x1 > fig.bbox.width + 1
            or box.y1 > fig.bbox.height + 1
        ):
            problems.append(f"text {label} is cut off by the edge of the figure")
        boxes.append((label, box))
    for i, (a, box_a) in enumerate(boxes):
        for b, box_b in boxes[i + 1 :]:
            dx = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
            dy = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
            if dx > 1 and dy > 1:
                problems.append(f"text {a} overlaps text {b}")
    return list(dict.fromkeys(problems))


def text_sizes(fig: Figure, css_dpi: float | None = None) -> dict[str, float | None]:
    """The smallest text of a drawn figure, in CSS pixels at its size on the page.

    Returns:
        ``{"min": smallest text, "annotation": smallest text written in the axes (numbers
        in cells, on bars; None when there is none)}``, for a figure shown ``css_dpi``
        CSS pixels per inch (default: ``fig.dpi``, one image pixel per CSS pixel).
    """
    scale = (css_dpi or fig.dpi) / 72
    texts = _texts(fig)
    written = {id(t) for ax in fig.axes for t in ax.texts}
    sizes = [t.get_fontsize() * scale for t in texts]
    notes = [t.get_fontsize() * scale for t in texts if id(t) in written]
    return {
        "min": round(min(sizes), 2) if sizes else None,
        "annotation": round(min(notes), 2) if notes else None,
    }


def _to_png(fig: Figure, css_dpi: float | None = None) -> bytes:
    """Rasterize ``fig`` (over white) as a 256-colour palette PNG.

    A palette PNG is about 3x smaller than matplotlib's RGBA one and indistinguishable for
    plots. Octree quantization without dithering is deterministic (the same figure, the
    same bytes) and, with zlib's default level, 3x faster than median cut with PNG
    optimization, for 15 % more bytes: at two pixels per CSS pixel, drawing and encoding
    a frame costs less than one pixel per CSS pixel did with the slower encoder.

    The PNG carries its smallest text (:func:`text_sizes`, at ``css_dpi`` CSS pixels per
    inch) in a text chunk named :data:`TEXT_SIZES_KEY`, which the website's test reads.
    """
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    rgba = Image.fromarray(np.asarray(canvas.buffer_rgba()), "RGBA")
    white = Image.new("RGBA", rgba.size, "white")
    rgb = Image.alpha_composite(white, rgba).convert("RGB")
    palette = rgb.quantize(256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    info = PngInfo()
    info.add_text(TEXT_SIZES_KEY, json.dumps(text_sizes(fig, css_dpi), sort_keys=True))
    out = io.BytesIO()
    palette.save(out, format="png", compress_level=6, pnginfo=info)
    return out.getvalue()


# -- environment -----------------------------------------------------------------------------

_ISSUED: dict[str, int] = {}
"""How many explorers with each content digest this process has made (for unique ids)."""


def _issue_id(digest: str) -> str:
    count = _ISSUED.get(digest, 0) + 1
    _ISSUED[digest] = count
    return f"attnlab-explorer-{digest}" + (f"-{count}" if count > 1 else "")


def _in_live_kernel() -> bool:
    """True inside a running IPython kernel (Jupyter, Colab, VS Code), not a plain shell."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return getattr(shell, "kernel", None) is not None


def _control_html(label: str, texts: Sequence[str], start: int) -> str:
    """One slider: ``name = value`` on its own line above a full-width range input.

    The value's box is as wide as the longest value (``ch`` units, tabular digits, one to
    spare), so the label takes the same room whatever the value and dragging never moves
    the slider under the reader's finger. The control is wide enough for its whole label
    (at least 18em, at most the column); in a column too narrow for it, the value goes
    onto a second line, for every value alike.
    """
    name = html.escape(label)
    value = html.escape(texts[start])
    width = max(len(t) for t in texts) + 1
    whole = len(label) + 3 + width  # "name = value"
    return (
        f'<label class="attnlab-control" style="width:min(100%,max(18em,{whole}ch))">'
        f'<span class="attnlab-label"><span class="attnlab-name">{name}</span> = '
        f'<output class="attnlab-value" style="min-width:{width}ch">{value}</output></span>'
        f'<input class="attnlab-slider" type="range" min="0" max="{len(texts) - 1}" step="1" '
        f'value="{start}" aria-label="{name}" aria-valuetext="{value}" disabled>'
        "</label>"
    )


_CSS = (
    ".attnlab-explorer{margin:.5em 0 1em;max-width:100%}"
    ".attnlab-explorer img.attnlab-frame{display:block;max-width:100%;height:auto;"
    "border-radius:4px}"
    ".attnlab-explorer .attnlab-controls{display:flex;flex-wrap:wrap;gap:.5em 2em;"
    "margin-top:.4em}"
    ".attnlab-explorer .attnlab-control{display:flex;flex-direction:column;gap:.15em;"
    "margin:0;width:min(18em,100%);font-variant-numeric:tabular-nums}"
    ".attnlab-explorer .attnlab-name{white-space:nowrap}"
    ".attnlab-explorer .attnlab-value{display:inline-block;text-align:left;white-space:nowrap}"
    ".attnlab-explorer input.attnlab-slider{width:100%;height:28px;margin:0;"
    "accent-color:#1a73e8;cursor:pointer}"
    ".attnlab-explorer input.attnlab-slider:focus-visible{outline:2px solid #1a73e8;"
    "outline-offset:2px}"
    # While a frame loads (the website loads each from a file on demand), the old figure
    # dims and says so, after 150 ms (a cached frame shows no cue).
    ".attnlab-explorer .attnlab-figure{position:relative;width:fit-content;max-width:100%}"
    ".attnlab-explorer img.attnlab-frame{transition:opacity .2s}"
    ".attnlab-explorer[aria-busy=true] img.attnlab-frame{opacity:.35;transition-delay:.15s}"
    ".attnlab-explorer .attnlab-loading{position:absolute;top:.5em;left:.5em;padding:.1em .5em;"
    "border-radius:4px;background:#fff;color:#1a1a1a;border:1px solid #767676;font-size:.9em;"
    "visibility:hidden}"
    '.attnlab-explorer .attnlab-loading::after{content:"loading the figure…"}'
    ".attnlab-explorer[aria-busy=true] .attnlab-loading{visibility:visible;"
    "transition:visibility 0s .15s}"
)

# Plain ES5 in one script that carries its own data, no globals. The frames are base64 PNGs
# (a notebook's output is one self-contained file) unless ``data.dir`` is set: the website's
# build moves them into files (``tools/attnlab_book.py``, ``externalize_frames``), named by
# ``data.frames``, and a page then downloads only the frame it shows until the reader
# reaches for a slider, when the others are loaded in the background. It finds its own root
# (the <div> around the script), so several scrubbers on a page, or the same one shown twice,
# never interfere. It runs when Sphinx's HTML is loaded, when JupyterLab/VS Code/Colab
# insert the output, or via jQuery's eval (classic Notebook: there is no currentScript, so it
# takes the first root with its id not yet set up; scripts run in page order). Until it
# runs, the sliders stay disabled and the first frame is shown. While a frame the reader
# asked for is loading (on a slow connection, a second or more), the root has
# aria-busy="true": the old figure dims and a "loading the figure…" note shows on it.
_JS = """(function () {
  var data = __DATA__;
  var s = document.currentScript, root = null;
  if (s && s.parentNode && s.parentNode.getAttribute("data-attnlab-explorer")) {
    root = s.parentNode;
  } else {
    var all = document.querySelectorAll('div[data-attnlab-explorer="__ID__"]');
    for (var j = 0; j < all.length && !root; j++) {
      if (!all[j].getAttribute("data-attnlab-ready")) { root = all[j]; }
    }
  }
  if (!root || root.getAttribute("data-attnlab-ready")) { return; }
  root.setAttribute("data-attnlab-ready", "1");
  var img = root.querySelector("img.attnlab-frame");
  var inputs = root.querySelectorAll("input.attnlab-slider");
  var outputs = root.querySelectorAll("output.attnlab-value");
  function busy(on) {
    if (on) { root.setAttribute("aria-busy", "true"); } else { root.removeAttribute("aria-busy"); }
  }
  img.addEventListener("load", function () { busy(false); });
  img.addEventListener("error", function () { busy(false); });
  function update() {
    var flat = 0, parts = [];
    for (var i = 0; i < inputs.length; i++) {
      var k = parseInt(inputs[i].value, 10);
      var text = data.labels[i][k];
      flat = flat * data.shape[i] + k;
      outputs[i].textContent = text;
      inputs[i].setAttribute("aria-valuetext", text);
      parts.push(data.names[i] + " = " + text);
    }
    var src = source(flat);
    if (img.getAttribute("src") !== src) {
      img.src = src;
      busy(!img.complete);  /* until the new frame has loaded, the figure says so */
    }
    img.alt = data.alt + " (" + parts.join(", ") + ")";
  }
  function source(flat) {
    return data.dir ? data.dir + data.frames[flat] + ".png"
                    : "data:image/png;base64," + data.frames[flat];
  }
  var warm = !data.dir, kept = [];
  function preload() {
    if (warm) { return; }
    warm = true;
    for (var f = 0; f < data.frames.length; f++) {
      var next = new Image();
      next.src = source(f);
      kept.push(next);
    }
  }
  var starts = ["pointerdown", "touchstart", "focusin", "mouseover"];
  for (var e = 0; e < starts.length; e++) {
    root.addEventListener(starts[e], preload, {passive: true});
  }
  for (var i = 0; i < inputs.length; i++) {
    inputs[i].disabled = false;
    inputs[i].addEventListener("input", update);
    inputs[i].addEventListener("change", update);
  }
  update();
})();"""
