"""How results look: a symbol per status in plain text, a coloured box or table in HTML.

Jupyter shows the HTML; nbval and a terminal compare the plain text, so both say the same.
The messages write code between backticks (Markdown's way): the plain text keeps them, the
HTML shows that code in ``<code>`` (a backtick is never shown raw there).

The HTML carries its colours inline (Jupyter and Colab have no stylesheet of ours) and
class names (``attnlab-result``, ``attnlab-score``, ``attnlab-<status>``) through which the
website's stylesheet (``_static/attnlab.css``) restyles it for dark mode.

Taught in: every chapter's exercises (first in exercises/02_similarity.ipynb)
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from .status import NOT_ATTEMPTED, NOT_CHECKED, PASSED

_SYMBOLS = {PASSED: "✓", NOT_ATTEMPTED: "○", NOT_CHECKED: "○"}
_COLOURS = {  # (border, background): green for passed, grey for not attempted, red otherwise
    PASSED: ("#2e7d32", "#e8f5e9"),
    NOT_ATTEMPTED: ("#616161", "#f5f5f5"),
    NOT_CHECKED: ("#616161", "#f5f5f5"),
}
_FAILED_COLOURS = ("#c62828", "#ffebee")

_CODE = re.compile(r"`([^`\n]+)`")
"""Code in a message: ``raise NotImplementedError(...)`` between single backticks."""


def clipped(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, ending in ``...`` where it was cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def symbol(status: str) -> str:
    """``✓`` passed, ``○`` not attempted or not checked, ``✗`` anything else."""
    return _SYMBOLS.get(status, "✗")


def colours(status: str) -> tuple[str, str]:
    """``(border, background)`` colours of a status."""
    return _COLOURS.get(status, _FAILED_COLOURS)


def status_class(status: str) -> str:
    """The class naming a status in the HTML: ``attnlab-passed``, ``attnlab-not-attempted``,
    ``attnlab-failed`` (any other status)."""
    if status == PASSED:
        return "attnlab-passed"
    if status in (NOT_ATTEMPTED, NOT_CHECKED):
        return "attnlab-not-attempted"
    return "attnlab-failed"


def text_html(text: str) -> str:
    """``text`` escaped for HTML, each `` `code` `` span shown as ``<code>code</code>``.

    A lone backtick (no closing one on its line) stays as it is.
    """
    out, end = [], 0
    for match in _CODE.finditer(text):
        out.append(html.escape(text[end : match.start()]))
        out.append(f"<code>{html.escape(match[1])}</code>")
        end = match.end()
    out.append(html.escape(text[end:]))
    return "".join(out)


def result_box(text: str, status: str) -> str:
    """A check's plain text in a box coloured by its status."""
    border, background = colours(status)
    return (
        f'<div class="attnlab-result {status_class(status)}" '
        f'style="border-left: 6px solid {border}; background: {background}; '
        "color: #1a1a1a; padding: 0.5em 0.8em; margin: 0.3em 0; white-space: pre-wrap; "
        f'overflow-wrap: break-word; font-family: monospace;">{text_html(text)}</div>'
    )


def _breakable(name: str) -> str:
    """An exercise's name, allowed to wrap after each underscore and nowhere else.

    On a phone the name column is narrow: without these break points the browser splits a
    long name anywhere (``self_attention_modul`` / ``e``).
    """
    return "_<wbr>".join(html.escape(part) for part in name.split("_"))


def score_table(title: str, rows: Sequence[tuple[str, str]], score: int, total: int) -> str:
    """The score summary: one row per exercise (symbol, name, status), then the score."""
    pad = "padding: 0.15em 0.6em; border: none; text-align: left"
    cells = []
    for name, status in rows:
        colour = colours(status)[0]
        cells.append(
            f'<tr class="{status_class(status)}">'
            f'<td style="{pad}; color: {colour}">{symbol(status)}</td>'
            f'<td style="{pad}"><code style="color: inherit; background: none">'
            f"{_breakable(name)}</code></td>"
            f'<td style="{pad}; color: {colour}; white-space: nowrap">'
            f"{html.escape(status)}</td></tr>"
        )
    body = "".join(cells) or (
        f'<tr><td colspan="3" style="{pad}">(no exercise checked yet)</td></tr>'
    )
    return (
        '<div class="attnlab-score" style="margin: 0.3em 0;">'
        f"<strong>{html.escape(title)}</strong>"
        f'<table style="margin: 0.3em 0; border-collapse: collapse;">{body}</table>'
        f"<strong>Score: {score}/{total}</strong></div>"
    )
