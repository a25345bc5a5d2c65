"""Figures set their math in mathtext: never a raw ``W_Q``, ``h_T`` or ``0.9 ** d``.

A figure's text is read by people who have just read the prose, where ``W^Q`` is typeset;
a title that says ``W_Q`` or a legend that says ``0.9 ** distance`` shows them code instead
of the symbol. So every title, axis label, tick label, legend entry and annotation of every
figure the notebooks draw, static figures and every frame of every slider, is checked:

- outside ``$...$`` there is no subscript written with an underscore after a single letter
  (``W_Q``, ``h_T``, ``M_0``; snake_case code names such as ``attn_mask`` are code and may
  appear), no ``**`` and no ``^``, and the ``$`` signs pair up;
- inside ``$...$`` the forms notation.md rules out (tests/test_notation.py) do not appear.

The texts are those the notebooks really drew, recorded by their kernels while
``pytest --nbval`` ran them (tools/figure_text.py, installed by conftest.py). ``make test``
runs this file after nbval, with the website's tests; run on its own, it needs a fresh
nbval run of each notebook first (a missing or stale record skips, and fails under CI).

Findings in figures whose editors have not fixed them yet are listed in :data:`KNOWN`,
dated; a listed finding that no longer occurs fails, so the list can only shrink.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from test_notation import RULES, math_of

from tools import figure_text

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(
    p for d in ("chapters", "solutions", "exercises") for p in (ROOT / d).glob("*.ipynb")
)


DOLLAR = re.compile(r"(?<!\\)\$")
RAW = [
    ("a subscript outside mathtext", re.compile(r"(?<![\w\\])[A-Za-z]_(?:\{|\w)")),
    ("** outside mathtext", re.compile(r"\*\*")),
    ("^ outside mathtext", re.compile(r"\^")),
]

# Figure texts in notebooks whose editors are fixing them, each with the date it was
# recorded: (notebook, the text). Delete a line when its text is gone; add none. Empty since
# issue 24 fixed the last of them.
KNOWN: dict[tuple[str, str], str] = {}


def problems(text: str) -> list[str]:
    """What is wrong with one figure text: raw math outside ``$...$``, ruled-out forms in it."""
    found = []
    if len(DOLLAR.findall(text)) % 2:
        found.append("an unpaired $")
    outside = "".join(DOLLAR.split(text)[0::2])
    found += [f"{name}: {m.group(0)!r}" for name, raw in RAW for m in raw.finditer(outside)]
    for rule in RULES:
        if rule.where in ("math", "text"):
            found += [f"{rule.name}: {f!r}" for m in math_of(text) for f in rule.findall(m)]
    return found


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("through W_hh", True),
        ("‖∂h_T / ∂x_t‖ (log scale)", True),
        ("0.9 ** distance", True),
        ("x^2", True),
        ("$W_Q$: who asks", True),  # mathtext, but notation.md writes W^Q
        ("$W^Q$ costs $d", True),  # an unpaired $
        ("through $W_{hh}$", False),
        (r"$\Vert \partial h_T / \partial x_t \Vert$ (log scale)", False),
        ("$0.9^{T-t}$", False),
        ("attn_mask: 1 = may attend", False),  # a code name
        ("key_padding_mask", False),
        ("softmax(q·k/√d): max 0.22", False),
        ("−2", False),
    ],
)
def test_the_checker(text, found):
    assert bool(problems(text)) == found, problems(text)


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (under CI the test fails, never skips)")
    pytest.skip(reason)


def _texts(path: Path) -> list[str]:
    record = figure_text.read_record(path)
    if record is None:
        _skip_or_fail(f"no figure text recorded for {path.name}: run nbval on it first")
    recorded, texts = record
    if recorded != figure_text.digest(path):
        _skip_or_fail(f"the figure text of {path.name} was recorded from other code: rerun nbval")
    return texts


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(ROOT)) for p in NOTEBOOKS])
def test_figure_text_is_mathtext(path):
    name = str(path.relative_to(ROOT))
    texts = _texts(path)
    found = {t: problems(t) for t in texts if problems(t)}
    new = {t: p for t, p in found.items() if (name, t) not in KNOWN}
    assert not new, f"{name}: figure text with raw math:\n" + "\n".join(
        f"  {t!r}: {'; '.join(p)}" for t, p in new.items()
    )
    gone = [t for (nb, t) in KNOWN if nb == name and t not in found]
    assert not gone, f"{name}: fixed, delete from KNOWN in tests/test_figure_text.py: {gone}"


def test_known_findings_are_dated_and_outside_the_chapters_already_fixed():
    fixed = ("chapters/",)
    for (name, text), recorded in KNOWN.items():
        assert (ROOT / name).is_file(), name
        assert problems(text), f"{text!r} is no finding"
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", recorded), recorded
        assert not name.startswith(fixed), name
