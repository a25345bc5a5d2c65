"""How checker results are drawn: code between backticks becomes <code> in the HTML (never a
raw backtick on the website or in Jupyter), and each box names its status for the
website's dark-mode stylesheet."""

from __future__ import annotations

import re

from attnlab.grading import display
from attnlab.grading.status import NOT_ATTEMPTED, PASSED


def test_backticked_code_is_shown_as_code() -> None:
    text = "○ softmax: not attempted yet: replace `raise NotImplementedError(...)` with your code"
    html = display.result_box(text, NOT_ATTEMPTED)
    assert "<code>raise NotImplementedError(...)</code>" in html
    assert "`" not in html


def test_text_is_escaped_and_lone_backticks_stay() -> None:
    assert display.text_html("a < b and `x<y`") == "a &lt; b and <code>x&lt;y</code>"
    assert display.text_html("one ` alone") == "one ` alone"
    assert display.text_html("`a` and `b`") == "<code>a</code> and <code>b</code>"


def test_boxes_and_rows_name_their_status() -> None:
    assert 'class="attnlab-result attnlab-passed"' in display.result_box("✓ ok", PASSED)
    assert "attnlab-failed" in display.result_box("✗ no", "failed")
    table = display.score_table("Exercises", [("dot", PASSED), ("softmax", NOT_ATTEMPTED)], 1, 2)
    assert table.startswith('<div class="attnlab-score"')
    assert re.findall(r'<tr class="([^"]+)"', table) == ["attnlab-passed", "attnlab-not-attempted"]


def test_light_colours_keep_4_5_to_1_on_their_backgrounds() -> None:
    """The inline colours (Jupyter, Colab): every status colour against white and its box."""

    def luminance(hex_colour: str) -> float:
        rgb = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    def contrast(a: str, b: str) -> float:
        hi, lo = sorted([luminance(a), luminance(b)], reverse=True)
        return (hi + 0.05) / (lo + 0.05)

    for status in (PASSED, NOT_ATTEMPTED, "failed"):
        border, background = display.colours(status)
        assert contrast(border, "#ffffff") >= 4.5, status
        assert contrast("#1a1a1a", background) >= 4.5, status
