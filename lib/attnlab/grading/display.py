"""How results look: a symbol per status in plain text, a coloured box or table in HTML.

Jupyter shows the HTML; nbval and a terminal compare the plain text, so both say the same.

Taught in: every chapter's exercises (first in exercises/02_similarity.ipynb)
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from .status import NOT_ATTEMPTED, NOT_CHECKED, PASSED

_SYMBOLS = {PASSED: "✓", NOT_ATTEMPTED: "○", NOT_CHECKED: "○"}
_COLOURS = {  # (border, background): green for passed, grey for not attempted, red otherwise
    PASSED: ("#2e7d32", "#e8f5e9"),
    NOT_ATTEMPTED: ("#757575", "#f5f5f5"),
    NOT_CHECKED: ("#757575", "#f5f5f5"),
}
_FAILED_COLOURS = ("#c62828", "#ffebee")


def symbol(status: str) -> str:
    """``✓`` passed, ``○`` not attempted or not checked, ``✗`` anything else."""
    return _SYMBOLS.get(status, "✗")


def colours(status: str) -> tuple[str, str]:
    """``(border, background)`` colours of a status."""
    return _COLOURS.get(status, _FAILED_COLOURS)


def result_box(text: str, status: str) -> str:
    """A check's plain text in a box coloured by its status."""
    border, background = colours(status)
    return (
        f'<div style="border-left: 6px solid {border}; background: {background}; '
        "color: #1a1a1a; padding: 0.5em 0.8em; margin: 0.3em 0; white-space: pre-wrap; "
        f'font-family: monospace;">{html.escape(text)}</div>'
    )


def score_table(title: str, rows: Sequence[tuple[str, str]], score: int, total: int) -> str:
    """The score summary: one row per exercise (symbol, name, status), then the score."""
    pad = "padding: 0.15em 0.6em; border: none; text-align: left"
    cells = []
    for name, status in rows:
        colour = colours(status)[0]
        cells.append(
            f'<tr><td style="{pad}; color: {colour}">{symbol(status)}</td>'
            f'<td style="{pad}"><code>{html.escape(name)}</code></td>'
            f'<td style="{pad}; color: {colour}">{html.escape(status)}</td></tr>'
        )
    body = "".join(cells) or (
        f'<tr><td colspan="3" style="{pad}">(no exercise checked yet)</td></tr>'
    )
    return (
        '<div style="margin: 0.3em 0;">'
        f"<strong>{html.escape(title)}</strong>"
        f'<table style="margin: 0.3em 0; border-collapse: collapse;">{body}</table>'
        f"<strong>Score: {score}/{total}</strong></div>"
    )
