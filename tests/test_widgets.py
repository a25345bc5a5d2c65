"""Tests for attnlab.drawing.widgets: the frames, the static scrubber, the live widget, and a browser."""

from __future__ import annotations

import base64
import io
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import IPython
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from attnlab.drawing import widgets
from attnlab.drawing.widgets import MAX_FRAMES, Explorer, Slider, explore

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
SMALL = {"figsize": (2.0, 1.5), "dpi": 20}  # fast frames where the pixels do not matter
# Frames that small are unreadable, and explore says so; here that is expected.
pytestmark = pytest.mark.filterwarnings("ignore::attnlab.drawing.widgets.FigureLayoutWarning")


def draw_power(fig: Any, power: int) -> None:
    ax = fig.subplots()
    x = np.linspace(0, 1, 50)
    ax.plot(x, x**power)
    ax.set_title(f"y = x^{power}")


def draw_line(fig: Any, slope: float, color: str) -> None:
    ax = fig.subplots()
    ax.plot([0, 1], [0, slope], color=color, linewidth=4)
    ax.set_ylim(-1.1, 1.1)
    ax.set_title(f"slope {slope}, {color}")


@pytest.fixture(scope="module")
def one() -> Explorer:
    return explore(draw_power, figsize=(3, 2), dpi=40, power=[1, 2, 3])


@pytest.fixture(scope="module")
def two() -> Explorer:
    return explore(
        draw_line,
        figsize=(3, 2),
        dpi=40,
        alt="A line",
        slope=Slider([-1.0, 1.0], label="the slope", fmt="+.1f"),
        color=["red", "blue"],
    )


class _Parsed(HTMLParser):
    """The tags of a scrubber, by name (attributes as dicts), and its visible text."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: dict[str, list[dict[str, str | None]]] = {}
        self.text: list[str] = []
        self._in: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.setdefault(tag, []).append(dict(attrs))
        if tag not in ("img", "input"):  # void elements have no end tag
            self._in.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self._in and self._in[-1] == tag:
            self._in.pop()

    def handle_data(self, data: str) -> None:
        if self._in and self._in[-1] not in ("script", "style"):
            self.text.append(data)


def _data(explorer: Explorer) -> dict[str, Any]:
    match = re.search(r"^  var data = (.*);$", explorer.to_html(), re.M)
    assert match is not None
    return json.loads(match.group(1))


# -- frames ----------------------------------------------------------------------------------


def test_draw_is_called_once_per_combination_in_row_major_order() -> None:
    calls = []

    def draw(fig: Any, a: int, b: str) -> None:
        calls.append((a, b))
        fig.subplots().set_title(f"{a}{b}")

    ex = explore(draw, **SMALL, a=[1, 2, 3], b=["x", "y"])
    assert calls == [(1, "x"), (1, "y"), (2, "x"), (2, "y"), (3, "x"), (3, "y")]
    assert len(ex.frames) == 6
    assert ex.shape == (3, 2)
    assert ex.names == ("a", "b")


def test_frames_are_distinct_pngs_of_the_figure_size(two: Explorer) -> None:
    sizes = set()
    for frame in two.frames:
        assert frame.startswith(b"\x89PNG\r\n\x1a\n")
        with Image.open(io.BytesIO(frame)) as img:
            sizes.add(img.size)
    # figsize (3, 2) inches at 40 dpi is 120 x 80 CSS pixels; density 2 doubles the pixels.
    assert sizes == {(240, 160)}
    assert len(set(two.frames)) == len(two.frames)


def test_density_sets_the_pixels_not_the_size_on_the_page() -> None:
    sharp = explore(draw_power, figsize=(3, 2), dpi=40, density=3, power=[1])
    plain = explore(draw_power, figsize=(3, 2), dpi=40, density=1, power=[1])
    assert Image.open(io.BytesIO(sharp.frames[0])).size == (360, 240)
    assert Image.open(io.BytesIO(plain.frames[0])).size == (120, 80)
    for ex in (sharp, plain):
        assert ex.css_size == (120, 80)
        (img,) = _Parsed(ex.to_html()).tags["img"]
        assert (img["width"], img["height"]) == ("120", "80")


@pytest.mark.parametrize("density", [0, 0.5, 5, np.nan, True, "2"])
def test_a_density_outside_1_to_4_is_refused(density: Any) -> None:
    with pytest.raises(ValueError, match="density must be a number between 1 and 4"):
        explore(_never, t=[1], density=density)


def test_nothing_leaks_into_pyplot() -> None:
    before = plt.get_fignums()
    explore(draw_power, **SMALL, power=[1, 2])
    assert plt.get_fignums() == before


def test_numpy_and_torch_values_become_python_numbers() -> None:
    seen = []

    def draw(fig: Any, t: Any, d: Any) -> None:
        seen.append((type(t), type(d)))
        fig.subplots()

    ex = explore(draw, **SMALL, t=np.array([0.5, 1.0]), d=torch.tensor([2, 4]))
    assert set(seen) == {(float, int)}
    assert ex.sliders[0].texts() == ["0.5", "1"]
    assert ex.sliders[1].texts() == ["2", "4"]


# -- the static scrubber ---------------------------------------------------------------------


def test_html_has_one_labelled_range_input_per_slider(two: Explorer) -> None:
    page = _Parsed(two.to_html())
    inputs = page.tags["input"]
    assert [i["aria-label"] for i in inputs] == ["the slope", "color"]
    assert [i["type"] for i in inputs] == ["range", "range"]
    assert [(i["min"], i["max"], i["value"]) for i in inputs] == [("0", "1", "0"), ("0", "1", "0")]
    assert [i["aria-valuetext"] for i in inputs] == ["-1.0", "red"]
    # Visible labels "name = value", the first value of each slider (the default).
    text = re.sub(r"\s+", " ", "".join(page.text)).strip()
    assert text == "the slope = -1.0 color = red"
    # Disabled until the script runs, so a page without JavaScript shows an honest state.
    assert all("disabled" in i for i in inputs)


def test_html_embeds_every_frame_and_starts_on_the_initial_one(two: Explorer) -> None:
    data = _data(two)
    assert [base64.b64decode(f) for f in data["frames"]] == list(two.frames)
    assert data["labels"] == [["-1.0", "+1.0"], ["red", "blue"]]
    assert data["names"] == ["the slope", "color"]
    assert data["shape"] == [2, 2]
    (img,) = _Parsed(two.to_html()).tags["img"]
    assert img["src"] == "data:image/png;base64," + data["frames"][0]
    assert img["alt"] == "A line (the slope = -1.0, color = red)"
    assert (img["width"], img["height"]) == ("120", "80")


def test_initial_values_choose_the_first_frame_shown() -> None:
    ex = explore(
        draw_line, **SMALL, initial={"color": "blue"}, slope=[-1, 1], color=["red", "blue"]
    )
    assert ex.initial == {"slope": -1, "color": "blue"}
    (img,) = _Parsed(ex.to_html()).tags["img"]
    assert img["src"] == "data:image/png;base64," + base64.b64encode(ex.frames[1]).decode()
    inputs = _Parsed(ex.to_html()).tags["input"]
    assert [i["value"] for i in inputs] == ["0", "1"]


def test_initial_matches_floats_up_to_rounding() -> None:
    ex = explore(draw_power, **SMALL, initial={"power": 0.3}, power=np.linspace(0.1, 0.5, 5))
    assert ex.initial == {"power": pytest.approx(0.3)}
    assert ex._start == (2,)


def test_html_is_self_contained_and_scoped(two: Explorer) -> None:
    html = two.to_html()
    code = re.sub(r"[A-Za-z0-9+/]{40,}=*", "PNG", html)  # the frames
    assert "PNG" in code
    assert not re.search(r"https?:|//|@import|url\(|fetch|XMLHttpRequest", code, re.I), (
        "the scrubber must not load anything"
    )
    assert html.startswith(
        f'<div class="attnlab-explorer" id="{two.id}" data-attnlab-explorer="{two.id}">'
    )
    # One script that carries its own data, finds its own root and defines no globals.
    assert html.count("<script") == 1
    script = html.split("<script>", 1)[1]
    assert script.startswith("(function () {")
    assert two.id in script


def test_a_label_cannot_close_the_script_early() -> None:
    ex = explore(draw_power, **SMALL, power=Slider([1, 2], fmt=lambda v: f"</script>{v}"))
    html = ex.to_html()
    assert html.count("</script>") == 1
    assert _data(ex)["labels"] == [["</script>1", "</script>2"]]
    assert "&lt;/script&gt;1" in html  # the visible label is escaped


def test_same_input_gives_the_same_html_in_a_fresh_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(widgets, "_ISSUED", {})
    first = explore(draw_power, **SMALL, power=[1, 2])
    html = first.to_html()
    assert first.to_html() == html
    assert repr(first) == repr(first)
    monkeypatch.setattr(widgets, "_ISSUED", {})  # what a restarted kernel sees
    again = explore(draw_power, **SMALL, power=[1, 2])
    assert again.to_html() == html
    assert re.fullmatch(r"attnlab-explorer-[0-9a-f]{12}", again.id)


def test_several_explorers_have_distinct_ids(one: Explorer, two: Explorer) -> None:
    same_a = explore(draw_power, **SMALL, power=[1, 2])
    same_b = explore(draw_power, **SMALL, power=[1, 2])
    other = explore(draw_power, **SMALL, power=[1, 3])
    ids = [one.id, two.id, same_a.id, same_b.id, other.id]
    assert len(set(ids)) == len(ids)
    # Same content, same digest; the later one gets a suffix.
    assert same_a.id[:29] == same_b.id[:29] == other.id[:17] + same_a.id[17:29]


def test_text_plain_is_one_line_without_addresses(two: Explorer) -> None:
    text = two._repr_mimebundle_()["text/plain"]
    assert text == repr(two)
    assert text == (
        "Explorer(the slope: 2 values -1.0 … +1.0; color: 2 values red … blue; "
        "4 frames, showing the slope = -1.0, color = red)"
    )
    assert "\n" not in text
    assert "0x" not in text


# -- the two renderings: with and without a kernel -------------------------------------------


def test_without_a_kernel_the_bundle_has_no_widget(two: Explorer) -> None:
    assert IPython.get_ipython() is None
    bundle = two._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", "image/png"}
    assert bundle["text/html"] == two.to_html()
    assert base64.b64decode(bundle["image/png"]) == two.frames[0]


@pytest.fixture
def kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend to run inside a live IPython kernel."""
    monkeypatch.setattr(IPython, "get_ipython", lambda: SimpleNamespace(kernel=object()))


# The live path runs in a real IPython kernel, as in Jupyter or Colab: the widgets open
# their comms through the kernel's comm manager (ipykernel's own under ipywidgets 7, the
# `comm` package's under 8), so a stand-in kernel would not test it. Make's test-matrix
# runs this file on ipywidgets 7 (the lowest allowed, Colab's line) and 8 (the pin).
_IN_KERNEL = """
import base64, warnings
import ipywidgets
from attnlab.drawing.widgets import explore

def draw_line(fig, slope, color):
    ax = fig.subplots()
    ax.plot([0, 1], [0, slope], color=color, linewidth=4)
    ax.set_title(f"slope {slope}, {color}")

warnings.simplefilter("ignore")  # tiny frames: the layout warning is expected
ex = explore(draw_line, figsize=(2.0, 1.5), dpi=20, slope=[-1, 1], color=["red", "blue"])
"""


class _Kernel:
    """A real ``ipykernel`` of this Python (as ``nbval --nbval-current-env`` starts it)."""

    def __init__(self) -> None:
        from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
        from jupyter_client.manager import KernelManager

        class ThisPython(KernelSpecManager):
            def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
                argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
                return KernelSpec(argv=argv, display_name="this Python", language="python")

        self.km = KernelManager(kernel_name="this", kernel_spec_manager=ThisPython())
        self.km.start_kernel()
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def _until_sentinel(self) -> list[dict[str, Any]]:
        """Every IOPub message (but status) until the kernel has also run a sentinel cell.

        The kernel handles shell messages in order, so these are the messages the request
        sent just before caused. They are not picked by their parent header: ipykernel 7
        has been seen to publish replies (and the idle status) under another request's
        header when the machine is loaded, and a wait for "idle of this request" then
        timed out on CI (for a comm message, and once for an execute request)."""
        sentinel = self.kc.execute("pass")
        seen = []
        while True:
            reply = self.kc.get_iopub_msg(timeout=120)
            done = reply["parent_header"].get("msg_id") == sentinel
            if done and reply["msg_type"] == "status":
                if reply["content"]["execution_state"] == "idle":
                    return seen
            elif reply["msg_type"] != "status":
                seen.append(reply)

    def execute(self, code: str) -> list[dict[str, Any]]:
        self.kc.execute(code, stop_on_error=False)  # an error must not abort the sentinel
        messages = self._until_sentinel()
        errors = [m["content"] for m in messages if m["msg_type"] == "error"]
        assert not errors, "\n".join(e["ename"] + ": " + e["evalue"] for e in errors)
        return messages

    def printed(self, code: str) -> str:
        messages = self.execute(code)
        return "".join(m["content"]["text"] for m in messages if m["msg_type"] == "stream")

    def comm_msg(self, comm_id: str, data: dict[str, Any]) -> list[dict[str, Any]]:
        """Send what a browser sends when the reader moves a slider.

        Returns every IOPub message the kernel sent until it had also run a sentinel
        cell sent right after: the kernel handles shell messages in order, so these are
        the messages the slider move caused. They are not picked by their parent header:
        ipykernel 7 has been seen to publish a comm message's replies (and its idle
        status) under another request's header when the machine is loaded, which made a
        wait for "idle of this comm message" time out on CI.
        """
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        self.kc.shell_channel.send(msg)
        return self._until_sentinel()

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def real_kernel() -> Any:
    pytest.importorskip("ipykernel")
    pytest.importorskip("jupyter_client")
    kernel = _Kernel()
    try:
        kernel.execute(_IN_KERNEL)
        yield kernel
    finally:
        kernel.close()


def _comm_state(message: dict[str, Any]) -> dict[str, Any]:
    return message["content"]["data"].get("state", {})


def test_in_a_real_kernel_the_bundle_adds_the_live_widget(real_kernel: _Kernel) -> None:
    messages = real_kernel.execute("ex")
    (result,) = [m["content"] for m in messages if m["msg_type"] == "execute_result"]
    assert set(result["data"]) == {"text/plain", "text/html", "image/png", WIDGET_VIEW}
    view = result["data"][WIDGET_VIEW]
    assert view["version_major"] == 2
    # The front end can draw the view: the kernel opened a comm for each of its widgets.
    opened = {
        m["content"]["comm_id"]: _comm_state(m)
        for m in messages
        if m["msg_type"] == "comm_open" and m["content"]["target_name"] == "jupyter.widget"
    }
    box = opened[view["model_id"]]
    assert box["_model_name"] == "VBoxModel"
    children = [c.removeprefix("IPY_MODEL_") for c in box["children"]]
    assert [opened[c]["_model_name"] for c in children] == [
        "SelectionSliderModel",
        "SelectionSliderModel",
        "OutputModel",
    ]
    assert [opened[c]["description"] for c in children[:2]] == ["slope", "color"]
    # The Output is opened empty, then given the first frame.
    outputs = [opened[children[2]]["outputs"]] + [
        _comm_state(m)["outputs"]
        for m in messages
        if m["msg_type"] == "comm_msg"
        and m["content"]["comm_id"] == children[2]
        and "outputs" in _comm_state(m)
    ]
    (shown,) = outputs[-1]
    first = real_kernel.printed("print(base64.b64encode(ex.frames[0]).decode())").strip()
    assert shown["data"]["image/png"] == first

    # Displaying the explorer again shows the same widget (one UI, not two).
    again = real_kernel.execute("ex")
    (result2,) = [m["content"] for m in again if m["msg_type"] == "execute_result"]
    assert result2["data"][WIDGET_VIEW] == view
    code = (
        "W = 'application/vnd.jupyter.widget-view+json'\n"
        "print(sorted(ex._repr_mimebundle_(include=[W, 'text/plain'])))\n"
        "print(W in ex._repr_mimebundle_(exclude=[W]))"
    )
    assert real_kernel.printed(code).split("\n")[:2] == [
        f"['{WIDGET_VIEW}', 'text/plain']",
        "False",
    ]


def test_in_a_real_kernel_moving_a_slider_shows_its_frame(real_kernel: _Kernel) -> None:
    ids = real_kernel.printed(
        "box = ex.live()\nprint(*(w.model_id for w in box.children))\nprint(ipywidgets.__version__)"
    ).split("\n")
    slope, color, output = ids[0].split()
    for comm_id, index, frame in ((color, 1, 1), (slope, 1, 3), (color, 0, 2)):
        # What the widget JavaScript sends when the reader drags a slider (protocol 2).
        replies = real_kernel.comm_msg(
            comm_id, {"method": "update", "state": {"index": index}, "buffer_paths": []}
        )
        updates = [
            _comm_state(m)["outputs"]
            for m in replies
            if m["msg_type"] == "comm_msg"
            and m["content"]["comm_id"] == output
            and "outputs" in _comm_state(m)
        ]
        expected = real_kernel.printed(f"print(base64.b64encode(ex.frames[{frame}]).decode())")
        assert updates, f"ipywidgets {ids[1]}: moving a slider sent no new frame"
        (shown,) = updates[-1]
        assert shown["data"]["image/png"] == expected.strip()
    assert shown["data"]["text/plain"] == "Figure (slope = 1, color = red)"


@pytest.mark.usefixtures("kernel")
def test_in_a_kernel_without_ipywidgets_the_static_scrubber_remains(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import fails
    ex = explore(draw_power, **SMALL, power=[1, 2])
    assert set(ex._repr_mimebundle_()) == {"text/plain", "text/html", "image/png"}


def _shown_png(output: Any) -> bytes:
    (item,) = output.outputs
    return base64.b64decode(item["data"]["image/png"])


def test_live_widget_shows_the_frame_for_the_chosen_values(two: Explorer) -> None:
    box = two.live()
    *sliders, output = box.children
    assert [s.description for s in sliders] == ["the slope", "color"]
    assert [s.options for s in sliders] == [(("-1.0", 0), ("+1.0", 1)), (("red", 0), ("blue", 1))]
    assert [s.label for s in sliders] == ["-1.0", "red"]
    assert _shown_png(output) == two.frames[0]
    sliders[1].label = "blue"
    assert _shown_png(output) == two.frames[1]
    sliders[0].label = "+1.0"
    assert _shown_png(output) == two.frames[3]
    sliders[1].label = "red"
    assert _shown_png(output) == two.frames[2]
    assert output.outputs[0]["data"]["text/plain"] == "A line (the slope = +1.0, color = red)"
    # Shown at its CSS size (the frame has twice the pixels each way, for sharp screens).
    assert output.outputs[0]["metadata"] == {"image/png": {"width": 120, "height": 80}}


@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_flat_index_is_numpy_row_major(shape: list[int], data: st.DataObject) -> None:
    index = tuple(data.draw(st.integers(0, n - 1)) for n in shape)
    assert widgets._flat_index(index, shape) == np.ravel_multi_index(index, shape)


# -- bad input -------------------------------------------------------------------------------


def _never(fig: Any, **values: Any) -> None:
    raise AssertionError("draw must not be called when the input is invalid")


@pytest.mark.parametrize(
    ("sliders", "error", "match"),
    [
        ({}, ValueError, "at least one slider"),
        ({"t": []}, ValueError, "slider 't' has no values"),
        ({"t": np.array([])}, ValueError, "slider 't' has no values"),
        ({"t": Slider([1], label="temp"), "d": []}, ValueError, "slider 'd' has no values"),
        ({"t": range(8), "d": range(8)}, ValueError, r"t \(8 values\) x d \(8 values\) = 64"),
        ({"a": [1], "b": [1], "c": [1], "d": [1]}, ValueError, "at most 3 sliders"),
        ({"t": "abc"}, TypeError, "slider 't' must be a sequence"),
        ({"t": {1, 2}}, TypeError, "slider 't' must be a sequence"),
        ({"t": 3}, TypeError, "slider 't' must be a sequence"),
        ({"t": np.zeros((2, 2))}, TypeError, r"1-D, got an array of shape \(2, 2\)"),
        ({"t": [1, None]}, TypeError, "holds None"),
        ({"t": [0.5, 0.5]}, ValueError, r"same text \['0.5'\]"),
    ],
)
def test_bad_sliders_raise_before_drawing(
    sliders: dict[str, Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        explore(_never, **sliders)


def test_slider_values_must_show_distinct_text() -> None:
    with pytest.raises(ValueError, match=r"slider 'temp' has values that show the same text"):
        Slider([0.11, 0.12], label="temp", fmt=".1f")
    assert Slider([0.11, 0.12], fmt=".2f").texts() == ["0.11", "0.12"]


def test_too_many_frames_names_the_limit() -> None:
    with pytest.raises(ValueError, match=f"at most {MAX_FRAMES}"):
        explore(_never, a=range(4), b=range(4), c=range(4))


@pytest.mark.parametrize(
    ("initial", "match"),
    [
        ({"temp": 1}, r"unknown sliders \['temp'\]"),
        ({"t": 3}, r"t=3 is not one of the slider's values \[1, 2\]"),
        ({"t": "1"}, "is not one of"),
    ],
)
def test_bad_initial_raises(initial: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        explore(_never, initial=initial, t=[1, 2])


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"figsize": (6,)}, "figsize must be"),
        ({"figsize": (0, 3)}, "figsize must be"),
        ({"dpi": 0}, "dpi must be"),
        ({"dpi": True}, "dpi must be a number between 10 and 300"),
        ({"figsize": (6, np.nan)}, "figsize must be"),
    ],
)
def test_bad_figure_options_raise(options: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        explore(_never, t=[1], **options)


def test_figure_options_accept_numpy_numbers() -> None:
    explorer = explore(
        draw_power, figsize=(np.float32(3), np.int64(2)), dpi=np.int64(40), power=[1]
    )
    assert {Image.open(io.BytesIO(f)).size for f in explorer.frames} == {(240, 160)}


def test_draw_must_be_callable() -> None:
    with pytest.raises(TypeError, match="draw must be a function"):
        explore("draw", t=[1])  # type: ignore[arg-type]


def test_a_failing_draw_names_the_values_it_failed_for() -> None:
    def draw(fig: Any, t: float, mode: str) -> None:
        fig.subplots()
        if t == 2 and mode == "b":
            raise ZeroDivisionError("boom")

    with pytest.raises(
        RuntimeError, match=r"draw\(fig, t=2, mode='b'\) raised ZeroDivisionError: boom"
    ):
        explore(draw, t=[1, 2], mode=["a", "b"])


def test_a_failing_draw_keeps_the_original_error() -> None:
    def draw(fig: Any, t: float) -> None:
        raise KeyError(t)

    with pytest.raises(RuntimeError) as info:
        explore(draw, t=[1])
    assert isinstance(info.value.__cause__, KeyError)


def test_a_draw_that_uses_pyplot_is_refused_and_cleaned_up() -> None:
    before = plt.get_fignums()

    def draw(fig: Any, t: float) -> None:
        plt.plot([0, t])

    with pytest.raises(ValueError, match=r"draw\(fig, t=1\) opened a pyplot figure"):
        explore(draw, t=[1])
    assert plt.get_fignums() == before


def test_a_draw_that_draws_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match=r"draw\(fig, t=1\) drew nothing"):
        explore(lambda fig, t: None, t=[1])


# -- in a real browser -----------------------------------------------------------------------

_INSERT = {
    # JupyterLab/VS Code: the HTML is inserted, then each script is re-created to run it.
    "dom": """(html) => {
        const host = document.getElementById("host");
        host.innerHTML = html;
        for (const old of host.querySelectorAll("script")) {
            const s = document.createElement("script");
            s.textContent = old.textContent;
            old.replaceWith(s);
        }
    }""",
    # Classic Notebook (jQuery): scripts are eval'ed, so document.currentScript is null.
    "eval": """(html) => {
        const host = document.getElementById("host");
        host.innerHTML = html;
        for (const s of host.querySelectorAll("script")) (0, eval)(s.textContent);
    }""",
}


def _state(root: Any) -> dict[str, Any]:
    return root.evaluate(
        """(root) => ({
            src: root.querySelector("img.attnlab-frame").src,
            alt: root.querySelector("img.attnlab-frame").alt,
            labels: [...root.querySelectorAll(".attnlab-label")].map((e) => e.textContent),
            enabled: [...root.querySelectorAll("input")].every((i) => !i.disabled),
        })"""
    )


def _src(frame: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(frame).decode()


def _screenshot(root: Any) -> bytes:
    img = root.locator("img.attnlab-frame")
    img.evaluate("(img) => img.decode()")
    return img.screenshot()


@pytest.mark.parametrize("insert", ["static", "dom", "eval"])
def test_scrubbers_work_in_a_browser_without_network(
    offline_page: Any, tmp_path: Path, one: Explorer, two: Explorer, insert: str
) -> None:
    # `one` twice: the same explorer displayed twice must still give independent scrubbers.
    html = "\n".join([one.to_html(), two.to_html(), one.to_html()])
    page_file = tmp_path / "page.html"
    body = html if insert == "static" else '<div id="host"></div>'
    page_file.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>{body}"
                         "</body></html>", encoding="utf-8")  # fmt: skip
    page = offline_page.page
    page.goto(page_file.as_uri())
    if insert != "static":
        page.evaluate(_INSERT[insert], html)
    roots = page.locator("div.attnlab-explorer")
    assert roots.count() == 3
    first, second, third = (roots.nth(i) for i in range(3))
    assert all(_state(r)["enabled"] for r in (first, second, third)), "the script did not run"
    assert _state(first)["src"] == _src(one.frames[0])
    assert _state(first)["labels"] == ["power = 1"]

    # Keyboard: Tab reaches the first slider, ArrowRight moves it.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "power"
    before, others = _screenshot(first), [_state(r) for r in (second, third)]
    page.keyboard.press("ArrowRight")
    after = _state(first)
    assert after["src"] == _src(one.frames[1])
    assert after["labels"] == ["power = 2"]
    assert after["alt"] == "Figure (power = 2)"
    assert _screenshot(first) != before
    assert [_state(r) for r in (second, third)] == others, "moving one scrubber moved another"

    # Setting a value and dispatching `input` (a mouse drag does the same) on the 2-slider one.
    second.locator("input").nth(1).evaluate(
        "(i) => { i.value = 1; i.dispatchEvent(new Event('input', {bubbles: true})); }"
    )
    assert _state(second)["src"] == _src(two.frames[1])
    assert _state(second)["labels"] == ["the slope = -1.0", "color = blue"]
    second.locator("input").nth(0).focus()
    page.keyboard.press("ArrowRight")
    assert _state(second)["src"] == _src(two.frames[3])
    assert _state(second)["labels"] == ["the slope = +1.0", "color = blue"]
    page.keyboard.press("ArrowRight")  # already at the end: nothing changes
    assert _state(second)["src"] == _src(two.frames[3])

    assert _state(third)["src"] == _src(one.frames[0])
    assert offline_page.blocked == []
    assert offline_page.errors == []


def test_without_javascript_the_first_frame_shows_and_sliders_are_disabled(
    browser: Any, tmp_path: Path, two: Explorer
) -> None:
    page_file = tmp_path / "page.html"
    page_file.write_text(f"<!DOCTYPE html><html><body>{two.to_html()}</body></html>", "utf-8")
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(page_file.as_uri())
        state = _state(page.locator("div.attnlab-explorer"))
    finally:
        context.close()
    assert state["src"] == _src(two.frames[0])
    assert state["labels"] == ["the slope = -1.0", "color = red"]
    assert not state["enabled"]


def test_frames_in_files_load_when_the_reader_reaches_for_a_slider(
    offline_page: Any, tmp_path: Path, two: Explorer
) -> None:
    # The website moves the frames into files (tools/attnlab_book.py): a page downloads the
    # frame it shows, and the others once the reader reaches for a slider.
    from tools import attnlab_book as ext

    page_dir = tmp_path / "chapters"
    page_dir.mkdir()
    html = ext.externalize_frames(two.to_html(), page_dir, tmp_path)
    page_file = page_dir / "page.html"
    page_file.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>{html}"
                         "</body></html>", encoding="utf-8")  # fmt: skip
    pngs = lambda: sorted({u for u in offline_page.loaded if u.endswith(".png")})  # noqa: E731
    page = offline_page.page
    page.goto(page_file.as_uri(), wait_until="load")
    root = page.locator("div.attnlab-explorer")
    assert len(pngs()) == 1, "only the frame shown is downloaded with the page"
    assert _state(root)["src"] == pngs()[0]
    shot = _screenshot(root)
    root.locator("input").nth(1).focus()  # reaching for a slider fetches every frame
    page.keyboard.press("ArrowRight")
    page.wait_for_timeout(200)
    assert len(pngs()) == len(set(two.frames)) == 4
    assert _state(root)["labels"] == ["the slope = -1.0", "color = blue"]
    assert _state(root)["src"].endswith(".png") and _screenshot(root) != shot
    name = _state(root)["src"].rsplit("/", 1)[1]
    assert (tmp_path / "_images" / "frames" / name).read_bytes() == two.frames[1]
    assert offline_page.blocked == [] and offline_page.errors == []


@pytest.mark.parametrize("width", [390, 1100])
def test_a_long_label_shows_whole_and_the_slider_stays_put(
    browser: Any, tmp_path: Path, width: int
) -> None:
    values = ["none: q = k = v = x", "hand-set", "attnlab / SDPA bool, with a long tail"]
    ex = explore(draw_power, figsize=(3, 2), dpi=40, power=Slider([1, 2, 3], label="projections",
                 fmt=lambda p: values[p - 1]))  # fmt: skip
    page_file = tmp_path / "page.html"
    page_file.write_text(f"<!DOCTYPE html><html><head><meta name='viewport' "
                         "content='width=device-width'></head><body style='margin:8px'>"
                         f"{ex.to_html()}</body></html>", encoding="utf-8")  # fmt: skip
    context = browser.new_context(viewport={"width": width, "height": 800})
    try:
        page = context.new_page()
        page.goto(page_file.as_uri())
        slider = page.locator("input.attnlab-slider")
        boxes = []
        for k in range(3):
            slider.evaluate("(i, k) => { i.value = k; i.dispatchEvent(new Event('input')); }", k)
            label = page.locator(".attnlab-label")
            assert label.text_content() == f"projections = {values[k]}"
            clipped = label.evaluate("(e) => e.scrollWidth > e.clientWidth + 1")
            assert not clipped, f"at {width} px the label is cut: {label.text_content()!r}"
            boxes.append(slider.bounding_box())
        assert boxes[0] == boxes[1] == boxes[2], f"the slider moved: {boxes}"
        assert boxes[0]["width"] <= width
    finally:
        context.close()


# ------------------------------------------------------------------ legible on a phone


def _drawn(draw: Any, figsize: tuple[float, float] = (6.4, 3.6)) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=80, layout="constrained")
    draw(fig)
    FigureCanvasAgg(fig).draw()
    return fig


def test_a_clean_figure_has_no_layout_problem() -> None:
    def draw(fig: Any) -> None:
        ax = fig.subplots()
        ax.bar(["a", "b"], [1, 2])
        ax.set_title("two bars", fontsize=14)
        ax.tick_params(labelsize=14)

    assert widgets.layout_problems(_drawn(draw)) == []


def test_colliding_cut_off_and_tiny_texts_are_named() -> None:
    def draw(fig: Any) -> None:
        ax = fig.subplots()
        ax.bar(["a", "b"], [1, 2])
        ax.tick_params(labelsize=14)
        ax.set_title("a title", fontsize=14)
        ax.text(0.5, 1.0, "on the title", transform=ax.transAxes, fontsize=14, ha="center")
        fig.text(0.8, 0.5, "far outside the figure", fontsize=14)  # not in the layout
        ax.text(0.0, 0.5, "tiny", fontsize=5)

    problems = widgets.layout_problems(_drawn(draw))
    assert "text 'a title' overlaps text 'on the title'" in problems
    assert "text 'far outside the figure' is cut off by the edge of the figure" in problems
    assert any(p.startswith("text 'tiny' is ") and "px tall on a phone" in p for p in problems)
    assert len(problems) == 3, problems


def test_ticks_outside_the_view_are_not_counted() -> None:
    def draw(fig: Any) -> None:
        ax = fig.subplots()
        ax.plot([0, 1], [0, 1])
        ax.set_yticks([0, 0.5, 1, 1.5])  # 1.5 is outside the view: not drawn
        ax.set_ylim(0, 1.05)
        ax.tick_params(labelsize=14)

    assert widgets.layout_problems(_drawn(draw)) == []


def test_frames_are_drawn_with_text_sized_for_a_phone() -> None:
    sizes = []

    def draw(fig: Any, w: int) -> None:
        ax = fig.subplots()
        sizes.append(ax.title.get_fontsize())
        ax.plot([0, w])

    explore(draw, figsize=(7.0, 3.0), dpi=40, w=[1])
    shown = sizes[0] * widgets.PHONE_WIDTH / (72 * 7.0)  # CSS px on a phone
    assert shown >= widgets.PHONE_TEXT - 1e-9
    assert widgets.phone_font_size(1.0) == pytest.approx(float(matplotlib.rcParams["font.size"]))


def test_explore_warns_about_each_unreadable_frame() -> None:
    def draw(fig: Any, x: int) -> None:
        ax = fig.subplots()
        ax.plot([0, 1])
        ax.set_title("title")
        if x == 2:
            ax.text(0.5, 1.0, "title", transform=ax.transAxes, ha="center", va="bottom")

    with pytest.warns(widgets.FigureLayoutWarning) as caught:
        explore(draw, figsize=(6.4, 3.6), dpi=80, x=[1, 2])
    assert [str(w.message) for w in caught] == ["frame x=2: text 'title' overlaps text 'title'"]
