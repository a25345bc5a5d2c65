"""Graders for chapter 5's exercises: sinusoids, the offset matrix, a permutation test, RoPE.

Each grader compares the learner's function with the attnlab reference on seeded cases and
knows the planted mistakes beginners make (see :mod:`attnlab.grading.pipeline`). The module
exercise (a positional-encoding layer) is checked by :func:`check_positional_encoding`,
which builds the learner's class for every case. The notebook imports the ``check_*``
functions and ``summary`` (the chapter's score table).

Taught in: exercises/05_positional.ipynb
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..mechanism.attention import scaled_dot_product_attention
from ..mechanism.masking import causal_mask
from ..mechanism.positional import (
    SinusoidalPositionalEncoding,
    apply_rope,
    offset_matrix,
    permutation_gap,
    sinusoidal_encoding,
)
from .modules import Finding, ModuleExercise, adapt, building_error
from .pipeline import Grader
from .questions import Question
from .registry import ChapterGraders
from .results import CheckResult
from .specs import Case, Mistake, Property
from .status import EXCEPTION, WRONG_SHAPE, WRONG_TYPE, WRONG_VALUES

__all__ = [
    "GRADERS",
    "check_offset_matrix",
    "check_permutation_gap",
    "check_positional_encoding",
    "check_rope",
    "check_rope_scores",
    "check_self_dot",
    "check_sign_of_offset",
    "check_sinusoidal_encoding",
    "summary",
]

GRADERS = ChapterGraders(__name__, mutants_reviewed=True)
"""Chapter 5's exercises, in the order of the notebook."""


def _rng() -> np.random.Generator:
    return np.random.default_rng(5)


# ---- 5.1 the sinusoidal table ----------------------------------------------------------------


def _table(length: int, d_model: int, omega: Callable[[np.ndarray], np.ndarray], start: int = 0,
           even: Callable[..., Any] = np.sin, odd: Callable[..., Any] = np.cos) -> np.ndarray:  # fmt: skip
    """A planted table: feature j of position p is even/odd(p · omega(j))."""
    pos = np.arange(start, start + length, dtype=np.float64)[:, None]  # (T, 1)
    j = np.arange(d_model)  # (D,)
    angles = pos * omega(j)[None, :]  # (T, 1) * (1, D) -> (T, D)
    return np.where(j % 2 == 0, even(angles), odd(angles))


def _table_broadcast_hint(message: str) -> str:
    """Rows that do not meet (a table of shape (d_model, length)) or, with the rows right,
    one sine more than cosines (an odd D)."""
    shapes = re.findall(r"shape \(([\d,]+)\)", message)
    if len(shapes) == 2:
        source, target = ([int(n) for n in s.split(",") if n] for s in shapes)
        if source and target and source[0] != target[0]:
            return (
                f"your angles have {source[0]} rows (one per position) and the columns you "
                f"write them into have {target[0]}: is your table (d_model, length)? Its "
                "shape is (length, d_model), one row per position"
            )
    return (
        "with an odd D there is one more sine than cosine: ceil(D/2) even columns "
        "take sines and floor(D/2) odd columns cosines; how many of the angles do "
        "the cosines use?"
    )


def _odd_torch_table_hint(message: str) -> str | None:
    """torch's "expanded size (k) must match the existing size (k + 1)": one more angle than
    odd columns, the odd-D slip of 5.1 in a table built with torch."""
    found = re.search(
        r"expanded size of the tensor \((\d+)\) must match the existing size "
        r"\((\d+)\)",
        message,
    )
    if found is None or int(found[2]) != int(found[1]) + 1:
        return None
    return _table_broadcast_hint("")


def _spaced_table(length: int, d_model: int) -> np.ndarray:
    """Planted: positions spaced evenly from 0 to ``length`` (``length`` of them)."""
    pos = np.linspace(0, length, length)[:, None]
    j = np.arange(d_model)
    angles = pos * _paired(d_model)(j)[None, :]
    return np.where(j % 2 == 0, np.sin(angles), np.cos(angles))


def _paired(d_model: int) -> Callable[[np.ndarray], np.ndarray]:
    """The right frequencies: ω = 10000^(-2i/D), shared by features 2i and 2i + 1."""
    return lambda j: 10000.0 ** (-(j - j % 2) / d_model)


def _odd_table(outputs: Any, case: Case) -> str | None:
    """Forensics on an odd D whose even-D tables were right (the cases run even D first):
    the cosines alone wrong (taken from other angles), or the frequencies divided by
    another number than D."""
    got = np.asarray(outputs["output"], dtype=np.float64)
    length, d_model = case.inputs["length"], case.inputs["d_model"]
    want = sinusoidal_encoding(length, d_model)
    if d_model % 2 == 0 or got.shape != want.shape:
        return None
    sines = np.allclose(got[:, 0::2], want[:, 0::2], atol=1e-5)
    cosines = np.allclose(got[:, 1::2], want[:, 1::2], atol=1e-5)
    if sines and not cosines:
        angles = np.arange(length)[:, None] * _paired(d_model)(np.arange(0, d_model, 2))
        later = np.allclose(got[:, 1::2], np.cos(angles[:, 1:]), atol=1e-5)
        yours = " Yours take the last floor(D/2) angles, each one pair further on" if later else ""
        return (
            f"your even-D tables are right, and for odd D = {d_model} so are the sines: only "
            "the cosines (the odd columns) are wrong. Cosine 2i + 1 turns by the angle of "
            "sine 2i, its own pair's; with an odd D there is one sine more than cosines, so "
            f"the cosines use floor(D/2) of the ceil(D/2) angles: which ones?{yours}"
        )
    for other in (d_model - 1, d_model + 1):
        table = _table(length, d_model, lambda j, other=other: 10000.0 ** (-(j - j % 2) / other))
        if np.allclose(got, table, atol=1e-5):
            return (
                f"your even-D tables are right, but for odd D = {d_model} your frequencies "
                f"divide the exponent by {other}, not by D = {d_model} (only the pairs after "
                "the first show it: pair 0's exponent is 0). The exponent 2i/D uses d_model "
                "itself, odd or not, whatever the number of features that have a partner"
            )
    return (
        f"your even-D tables are right; only odd D fails (D = {d_model}): there the last "
        "feature, 2i = D - 1, is a sine without a cosine partner. Print your table for "
        "D = 5 beside the one for D = 4: the first four columns must be the same"
    )


def _table_positions(outputs: Any, case: Case) -> str | None:
    """Forensics on the rows: the right frequencies and sin/cos layout, at other positions
    than the row numbers 0, 1, ..., length - 1 (scaled to [0, 1], fractions of the length,
    shifted or stretched). The slowest pair turns by less than π over every case's rows, so
    its angle gives the position each row holds."""
    got = np.asarray(outputs["output"], dtype=np.float64)
    length, d_model = case.inputs["length"], case.inputs["d_model"]
    if got.shape != (length, d_model) or length < 3 or d_model < 4:
        return None
    slow = d_model // 2 - 1  # the last pair with a cosine
    omega = _paired(d_model)(np.arange(d_model))
    held = np.arctan2(got[:, 2 * slow], got[:, 2 * slow + 1]) / omega[2 * slow]  # (T,)
    angles = held[:, None] * omega[None, :]  # (T, 1) * (1, D) -> (T, D)
    even = np.arange(d_model) % 2 == 0
    if not np.allclose(got, np.where(even, np.sin(angles), np.cos(angles)), atol=1e-5):
        return None
    rows = np.arange(length, dtype=np.float64)
    if np.allclose(held, rows, atol=1e-4):
        return None
    shown = ", ".join(f"{p:.4g}" for p in held[:4]) + (", ..." if length > 4 else "")
    if np.allclose(held, rows / (length - 1), atol=1e-4):
        what = "positions scaled to [0, 1]: row p at p/(length - 1)"
    elif np.allclose(held, rows / length, atol=1e-4):
        what = "fractions of the length: row p at p/length"
    elif np.allclose(held - rows, held[0], atol=1e-4):
        what = f"every position shifted by {held[0]:.4g}"
    elif abs(held[0]) < 1e-4 and np.allclose(held, rows * held[1], atol=1e-4):
        what = f"every position times {held[1]:.4g}"
    else:
        what = "not the row numbers"
    return (
        f"your frequencies and your sines and cosines are right, but your rows sit at other "
        f"positions: rows 0, 1, 2, ... hold positions {shown} ({what}). Row p is position p "
        "itself, the whole number 0, 1, ..., length - 1: which positions does your code give "
        "the rows?"
    )


def _odd_extra_column(outputs: Any, case: Case) -> str | None:
    """Forensics on the shape: an odd D built as whole (sin, cos) pairs, one column too many
    (the last cosine kept) or one too few (the last sine dropped)."""
    got = np.asarray(outputs["output"])
    length, d_model = case.inputs["length"], case.inputs["d_model"]
    want = sinusoidal_encoding(length, d_model)
    if d_model % 2 and got.shape == (length, d_model - 1):
        right = np.allclose(np.asarray(got, dtype=np.float64), want[:, :-1], atol=1e-5)
        first = f" (they are the first {d_model - 1} of the table)" if right else ""
        return (
            f"for odd D = {d_model} your table has D - 1 = {d_model - 1} columns{first}: you "
            "built whole (sin, cos) pairs only, floor(D/2) of them. With an odd D the last "
            f"feature, {d_model - 1}, is a sine of its own, one more frequency whose cosine "
            "partner would be feature D: how many frequencies does an odd D need?"
        )
    if d_model % 2 == 0 or got.shape != (length, d_model + 1):
        return None
    right = np.allclose(np.asarray(got[:, :d_model], dtype=np.float64), want, atol=1e-5)
    first = f" (its first {d_model} are right)" if right else ""
    return (
        f"for odd D = {d_model} your table has D + 1 = {d_model + 1} columns{first}. You "
        "built a whole (sin, cos) pair for the last frequency; with an odd D its sine is the "
        f"last feature, {d_model - 1}, and its cosine would be feature {d_model}, which does "
        "not exist. The table has d_model columns: which of yours has no place in it?"
    )


SINUSOIDAL = GRADERS.add(
    Grader(
        name="sinusoidal_encoding",
        signature="sinusoidal_encoding(length, d_model) -> (length, d_model) NumPy table",
        reference=sinusoidal_encoding,
        cases=(
            Case("4 positions, D = 4", {"length": 4, "d_model": 4}),
            Case("10 positions, D = 16", {"length": 10, "d_model": 16}),
            Case("50 positions, D = 64", {"length": 50, "d_model": 64}),
            Case("odd D = 5", {"length": 6, "d_model": 5}),
            Case("odd D = 3, one position", {"length": 1, "d_model": 3}),
            Case("odd D = 33", {"length": 20, "d_model": 33}),
        ),
        mistakes=(
            Mistake(
                "each feature got its own frequency: features 2i and 2i+1 share one, "
                "ω_i = 10000^(-2i/D): which one index do both features of pair i read "
                "their frequency from?",
                lambda length, d_model: _table(
                    length, d_model, lambda j: 10000.0 ** (-j / d_model)
                ),
            ),
            Mistake(
                "the exponent is 2i/D with i the pair number (0, 1, 2, ...); you used twice "
                "the feature index, 2j/D, so the frequencies fall off twice as fast",
                lambda length, d_model: _table(
                    length, d_model, lambda j: 10000.0 ** (-2 * j / d_model)
                ),
            ),
            Mistake(
                "the exponent is 2i/D; you used i/D (the pair number without the factor 2), "
                "so the slowest wavelength is only about 2π·100",
                lambda length, d_model: _table(
                    length, d_model, lambda j: 10000.0 ** (-(j // 2) / d_model)
                ),
            ),
            Mistake(
                "sine and cosine are swapped: even features (0, 2, ...) hold the sine, odd "
                "ones the cosine; PE[0] is (0, 1, 0, 1, ...)",
                lambda length, d_model: _table(
                    length, d_model, _paired(d_model), even=np.cos, odd=np.sin
                ),
            ),
            Mistake(
                "your positions start at 1; the first row is position 0, PE[0] = (0, 1, 0, 1, ...)",
                lambda length, d_model: _table(length, d_model, _paired(d_model), start=1),
            ),
            Mistake(
                "row 0 is right, but row p sits at position p·length/(length - 1), not p: "
                "your positions are evenly spaced from 0 to length, length of them (as "
                "linspace spaces them), not the whole numbers 0, 1, ..., length - 1",
                lambda length, d_model: _spaced_table(length, d_model),
            ),
            Mistake(
                "the frequencies grow instead of shrinking: divide the position by "
                "10000^(2i/D) (ω_i = 10000^(-2i/D)), do not multiply",
                lambda length, d_model: _table(
                    length, d_model, lambda j: 10000.0 ** ((j - j % 2) / d_model)
                ),
            ),
            Mistake(
                "only odd D fails: your frequencies use D + 1 in the exponent (an even table "
                "cut to D columns?); ω_i = 10000^(-2i/D) uses the real D, odd or even",
                lambda length, d_model: _table(
                    length, d_model, lambda j: 10000.0 ** (-(j - j % 2) / (d_model + d_model % 2))
                ),
            ),
            Mistake(
                "your loop or range already runs over the even features 0, 2, 4, ...; "
                "doubled again in the exponent (2i), the frequencies fall off twice as fast: "
                "pair i turns at 10000^(-2i/D) with i the pair number (the even feature j "
                "gives j/D)",
                lambda length, d_model: _table(
                    length, d_model, lambda j: 10000.0 ** (-2 * (j - j % 2) / d_model)
                ),
            ),
            *(
                Mistake(
                    f"only D = {size} is right: your frequencies divide by {size} whatever "
                    f"D is (a {size} written into your exponent?), so on a smaller D the "
                    "pairs turn far too fast and on a larger one too slowly; the exponent "
                    "2i/D uses d_model",
                    lambda length, d_model, size=size: _table(
                        length, d_model, lambda j: 10000.0 ** (-(j - j % 2) / size)
                    ),
                )
                for size in (16, 32, 64, 128, 256, 512)
            ),
            Mistake(
                "only odd D fails, in the last feature: with an odd D the last feature (an "
                "even index, D - 1) is a sine too, so there is one more sine than cosine",
                lambda length, d_model: np.where(
                    (np.arange(d_model) == d_model - 1) & (d_model % 2 == 1),
                    0.0,
                    _table(length, d_model, _paired(d_model)),
                ),
            ),
            Mistake(
                "only odd D fails: you built the table of D - 1 features and added a column "
                "of zeros. The frequencies use the real D (ω_i = 10000^(-2i/D)), and the last "
                "feature (index D - 1, even) is a sine",
                lambda length, d_model: np.where(
                    (np.arange(d_model) == d_model - 1) & (d_model % 2 == 1),
                    0.0,
                    _table(
                        length,
                        d_model,
                        lambda j: 10000.0 ** (-(j - j % 2) / (d_model - d_model % 2)),
                    ),
                ),
            ),
            *(
                Mistake(
                    "your angles went through a degrees/radians conversion (np.radians, "
                    "np.deg2rad or np.degrees): p·ω_i is already in radians, which np.sin and "
                    "np.cos take, so it goes in as it is (row 3 of the table turns by 3 "
                    "radians, not 3 degrees)",
                    lambda length, d_model, factor=factor: _table(
                        length, d_model, lambda j: factor * _paired(d_model)(j)
                    ),
                )
                for factor in (math.pi / 180, 180 / math.pi)
            ),
            *(
                Mistake(
                    f"pair 0 (features 0 and 1) is right but the higher pairs turn at the "
                    f"wrong speed: the exponent of your frequencies divides by {spelled}; "
                    "ω_i = 10000^(-2i/D) divides by D = d_model itself, odd or even",
                    lambda length, d_model, delta=delta: _table(
                        length, d_model, lambda j: 10000.0 ** (-(j - j % 2) / (d_model + delta))
                    ),
                )
                for delta, spelled in ((1, "D + 1"), (-1, "D - 1"))
            ),
            Mistake(
                "every feature is a sine: the odd features (1, 3, ...) are cosines",
                lambda length, d_model: _table(length, d_model, _paired(d_model), odd=np.sin),
            ),
            Mistake(
                "your higher pairs turn too fast: 10000^(-2i/D) written as an exponential "
                "is exp(-2i·ln(10000)/D), with the natural log; log10(10000) is 4, not "
                "ln(10000) ≈ 9.21, so your base is e⁴ ≈ 55 instead of 10000",
                lambda length, d_model: _table(
                    length, d_model, lambda j: np.exp(-(j - j % 2) * np.log10(1e4) / d_model)
                ),
            ),
            Mistake(
                "the base of the frequencies is 10000: ω_i = 10000^(-2i/D)",
                lambda length, d_model: _table(
                    length, d_model, lambda j: 1000.0 ** (-(j - j % 2) / d_model)
                ),
            ),
            Mistake(
                "you put the sines in the first half of the features and the cosines in the "
                "second: they alternate, sines on the even features (0, 2, ...) and cosines "
                "on the odd ones",
                lambda length, d_model: np.concatenate(
                    [
                        np.sin(
                            np.arange(length)[:, None] * _paired(d_model)(np.arange(0, d_model, 2))
                        ),
                        np.cos(
                            np.arange(length)[:, None]
                            * _paired(d_model)(np.arange(0, d_model - 1, 2))
                        ),
                    ],
                    axis=1,
                ),
            ),
            Mistake(
                "every pair turns at the same speed (ω = 1): `i // d_model` is an integer "
                "division, 0 for every feature below D; the exponent 2i/D needs a true "
                "division, `/`",
                lambda length, d_model: _table(length, d_model, lambda j: np.ones(len(j))),
            ),
        ),
        error_hints=(("could not broadcast", _table_broadcast_hint),),
        properties=(Property(_odd_extra_column), Property(_odd_table), Property(_table_positions)),
        hint="print your table for 4 positions and D = 4 next to the chapter's formula: "
        "which position is row 0, which frequency do features 2i and 2i+1 share, which of "
        'them holds the sine? The chapter\'s section "Sinusoidal encoding" builds the table',
        equivalent=(
            (
                "constant: np.zeros((length, d_model)) in pe = np.zeros((length, d_model)) -> "
                "np.ones((length, d_model))",
                "every entry of the table is written afterwards (the sines and the cosines "
                "cover all D columns)",
            ),
        ),
        # A float32 exponent (torch's default for int / int) costs about 1e-6 at p = 50:
        # still a right answer. Every planted mistake is off by more than 0.01.
        atol=1e-5,
    )
)


def check_sinusoidal_encoding(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(length, d_model)``: the ``(length, d_model)`` sinusoidal table, even and odd D.

    Taught in: chapters/05_positional.ipynb (exercise in exercises/05_positional.ipynb)
    """
    return SINUSOIDAL.check(fn)


# ---- 5.2 the offset matrix -------------------------------------------------------------------


def _blocks(k: int, d_model: int, block: Callable[[float], np.ndarray],
            omega: Callable[[int], float] | None = None) -> np.ndarray:  # fmt: skip
    """A planted block-diagonal matrix: ``block(angle)`` for each pair."""
    omega = omega or (lambda i: 10000.0 ** (-2 * i / d_model))
    m = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        m[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = block(k * omega(i))
    return m


def _rotation(b: float) -> np.ndarray:
    """The right block: (sin a, cos a) -> (sin(a + b), cos(a + b))."""
    return np.array([[math.cos(b), math.sin(b)], [-math.sin(b), math.cos(b)]])


def _blocks_at_i(k: int, d_model: int) -> np.ndarray:
    """Planted: pair i's block written at rows and columns i, i + 1 (they overlap)."""
    m = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        m[i : i + 2, i : i + 2] = _rotation(k * 10000.0 ** (-2 * i / d_model))
    return m


def _blocks_per_feature(k: int, d_model: int) -> np.ndarray:
    """Planted: one block per feature (``range(d_model)``): the blocks run off the matrix."""
    m = np.zeros((d_model, d_model))
    for i in range(d_model):
        b = k * 10000.0 ** (-2 * i / d_model)
        m[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [
            [np.cos(b), np.sin(b)],
            [-np.sin(b), np.cos(b)],
        ]
    return m


def _some_blocks(k: int, d_model: int, which: str, base: str) -> np.ndarray:
    """Planted: right blocks for some pairs only (``which``: "first" pair 0 alone, "short"
    all but the last, "late" all but pair 0), the others left as the starting matrix
    (``base``: "eye" or "zeros")."""
    n = d_model // 2
    pairs = {"first": range(min(1, n)), "short": range(n - 1), "late": range(1, n)}[which]
    m = np.eye(d_model) if base == "eye" else np.zeros((d_model, d_model))
    for i in pairs:
        m[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = _rotation(k * 10000.0 ** (-2 * i / d_model))
    return m


_SOME_BLOCKS = (
    (
        "first",
        "only your first block (pair 0, rows and columns 0 and 1) turns: the blocks of "
        "pairs 1, 2, ... are still {left}. Each pair i needs a block of its own, at rows "
        "and columns 2i and 2i + 1, turned by its own angle k·ω_i (one block per pair, "
        "not one for the whole matrix)",
    ),
    (
        "short",
        "your blocks are right but the last pair's is missing (still {left}; with D = 2 "
        "there is no block at all): your loop stops one pair early. How many pairs do D "
        "features make, and does your range reach the last of them?",
    ),
    (
        "late",
        "your blocks are right but the first pair's (rows and columns 0 and 1) is missing "
        "(still {left}): your loop starts one pair late. Pairs are numbered from 0",
    ),
)
"""Blocks filled for some pairs only: (which, diagnosis with ``{left}``, what the rest is)."""


def _pairs_listed(pairs: list[int]) -> str:
    """``"the block of pair 0 is"``, ``"the blocks of pairs 1, 3 are"``."""
    listed = ", ".join(map(str, pairs))
    return (
        f"the block of pair {listed} is" if len(pairs) == 1 else f"the blocks of pairs {listed} are"
    )


def _offset_blocks(outputs: Any, case: Case) -> str | None:
    """Forensics on a block-diagonal answer: some pairs' blocks right, the others left as
    they started (the identity, or zero): which pairs the learner's code never reached."""
    got = np.asarray(outputs["output"], dtype=np.float64)
    k, d_model = case.inputs["k"], case.inputs["d_model"]
    want = offset_matrix(k, d_model)
    if got.shape != want.shape:
        return None
    blocks = np.kron(np.eye(d_model // 2), np.ones((2, 2))) > 0
    if not np.allclose(got[~blocks], 0.0, atol=1e-8):
        return None
    right, left = [], {"the identity": [], "zero": []}
    for i in range(d_model // 2):
        g, w = got[2 * i : 2 * i + 2, 2 * i : 2 * i + 2], want[2 * i : 2 * i + 2, 2 * i : 2 * i + 2]
        if np.allclose(g, w, atol=1e-8):
            right.append(i)
        elif np.allclose(g, np.eye(2), atol=1e-8):
            left["the identity"].append(i)
        elif np.allclose(g, 0.0, atol=1e-8):
            left["zero"].append(i)
        else:
            return None
    untouched = "; ".join(
        f"{_pairs_listed(pairs)} still {what}" for what, pairs in left.items() if pairs
    )
    if not untouched:
        return None
    done = f"{_pairs_listed(right)} right, but " if right else ""
    return (
        f"with D = {d_model} ({d_model // 2} pair{'s' if d_model > 2 else ''}), {done}"
        f"{untouched}: nothing in your code wrote there. Each pair i, from 0 to the last, needs its "
        "own block at rows and columns 2i, 2i + 1: which pairs does your loop or indexing "
        "skip?"
    )


def _stacked_blocks(outputs: Any, case: Case) -> str | None:
    """Forensics on the shape: the D/2 blocks returned side by side, (D/2, 2, 2), not placed
    on the diagonal of a (D, D) matrix."""
    got = np.asarray(outputs["output"])
    d_model = case.inputs["d_model"]
    if got.shape != (d_model // 2, 2, 2):
        return None
    return (
        f"you returned the D/2 blocks stacked, shape {got.shape} (one 2 x 2 block per "
        f"pair), not the matrix: offset_matrix returns one ({d_model}, {d_model}) matrix, with the block of pair i on its diagonal at rows and columns "
        "2i, 2i + 1 and zeros everywhere else"
    )


def _block_rows(got: np.ndarray, want: np.ndarray, d_model: int) -> str | None:
    """Blocks whose two rows trade places, or whose one row is right in every block and the
    other not: row 2i of a block makes the new sine, row 2i + 1 the new cosine."""
    pairs = range(d_model // 2)
    got_b = [got[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] for i in pairs]
    want_b = [want[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] for i in pairs]
    if not got_b:
        return None
    if all(np.allclose(g, w[::-1], atol=1e-8) for g, w in zip(got_b, want_b, strict=True)):
        return (
            "the two rows of each of your blocks trade places: the first row of a block "
            "makes the new sine, sin(a + b), feature 2i of PE[p + k], and the second row "
            "the new cosine. Expand sin(a + b) into a term in sin a and a term in cos a: "
            "those two factors are the block's first row, in that order"
        )
    for right, wrong, made, other in ((0, 1, "sine", "cos(a + b)"), (1, 0, "cosine", "sin(a + b)")):
        if all(
            np.allclose(g[right], w[right], atol=1e-8) for g, w in zip(got_b, want_b, strict=True)
        ):
            if any(
                not np.allclose(g[wrong], w[wrong], atol=1e-8)
                for g, w in zip(got_b, want_b, strict=True)
            ):
                which = ("first", "second")
                return (
                    f"the {which[right]} row of each block (the new {made}) is right, the "
                    f"{which[wrong]} is not: expand {other} into a term in sin a and a term "
                    "in cos a, and read off each factor with its sign. Column 2i of a block "
                    "multiplies sin a and column 2i + 1 multiplies cos a: which factor did "
                    "you put where, and with which sign?"
                )
    return None


def _block_entries(outputs: Any, case: Case) -> str | None:
    """Forensics on the 2 x 2 blocks of a block-diagonal answer: their diagonal right and
    the rest not (or the other way round), or rotations by the wrong angles (one angle for
    every block, or a wrong one for a pair)."""
    got = np.asarray(outputs["output"], dtype=np.float64)
    k, d_model = case.inputs["k"], case.inputs["d_model"]
    want = offset_matrix(k, d_model)
    if got.shape != want.shape:
        return None
    on_blocks = np.kron(np.eye(d_model // 2), np.ones((2, 2))) > 0
    if not np.allclose(got[~on_blocks], 0.0, atol=1e-8):
        return None
    diagonal = np.eye(d_model) > 0
    off = on_blocks & ~diagonal
    diag_right = np.allclose(got[diagonal], want[diagonal], atol=1e-8)
    off_right = np.allclose(got[off], want[off], atol=1e-8)
    if off_right and not diag_right:
        ones = " (yours are 1, the identity's)" if np.allclose(got[diagonal], 1.0) else ""
        return (
            "the off-diagonal entries of your blocks (±sin b) are right, their diagonal is "
            f"not{ones}: expand sin(a + b) into a term in sin a and a term in cos a, and "
            "read off the factor of sin a: that factor is the entry the block keeps on its "
            "diagonal (a 1 there would keep all of sin a, whatever the angle b)"
        )
    if diag_right and not off_right:
        return (
            "the diagonal of your blocks (cos b) is right, their off-diagonal entries are "
            "not: expand sin(a + b) and cos(a + b) and read off the factor of cos a in the "
            "first and of sin a in the second"
        )
    rows = _block_rows(got, want, d_model)
    if rows is not None:
        return rows
    angles, expected = [], []
    for i in range(d_model // 2):
        block = got[2 * i : 2 * i + 2, 2 * i : 2 * i + 2]
        c, s = block[0, 0], block[0, 1]
        if not np.allclose(block, [[c, s], [-s, c]], atol=1e-8) or abs(c * c + s * s - 1) > 1e-6:
            return None
        angles.append(math.atan2(s, c))
        expected.append(math.remainder(k * 10000.0 ** (-2 * i / d_model), 2 * math.pi))
    wrong = [
        i
        for i in range(len(angles))
        if abs(math.remainder(angles[i] - expected[i], 2 * math.pi)) > 1e-6
    ]
    if not wrong:
        return None
    if len(angles) > 1 and np.allclose(angles, angles[0], atol=1e-8):
        return (
            f"every block of your matrix turns by the same angle ({angles[0]:.4g} rad for "
            f"k = {k}, D = {d_model}): each pair turns at its own speed, pair i by "
            "b = k·ω_i with ω_i = 10000^(-2i/D). Which ω does each of your blocks use?"
        )
    i = wrong[0]
    return (
        f"your blocks have the right form, but for k = {k}, D = {d_model} the block of pair "
        f"{i} turns by {angles[i]:.4g} rad, where k·ω_{i} is {expected[i]:.4g} "
        f"(ω_{i} = 10000^(-2·{i}/{d_model}) = {10000.0 ** (-2 * i / d_model):.4g}): which "
        f"frequency does your block of pair {i} use?"
    )


def _between_blocks(outputs: Any, case: Case) -> str | None:
    """Forensics on a matrix whose 2 x 2 blocks are right: nonzero entries outside them
    (pairs mixing), such as off-diagonals filled along the matrix's whole length."""
    got = np.asarray(outputs["output"], dtype=np.float64)
    k, d_model = case.inputs["k"], case.inputs["d_model"]
    want = offset_matrix(k, d_model)
    if got.shape != want.shape:
        return None
    on_blocks = np.kron(np.eye(d_model // 2), np.ones((2, 2))) > 0
    if not np.allclose(got[on_blocks], want[on_blocks], atol=1e-8):
        return None
    stray = ~on_blocks & ~np.isclose(got, 0.0, atol=1e-8)
    if not stray.any():
        return None
    rows, cols = np.nonzero(stray)
    r, c = int(rows[0]), int(cols[0])
    neighbours = bool(np.all(np.abs(rows - cols) == 1))
    along = (
        " They all sit just above or below the main diagonal, where one block ends and the "
        "next begins: a diagonal filled along the matrix's whole length also fills those"
        if neighbours
        else ""
    )
    return (
        f"your 2 x 2 blocks are right, but your matrix has nonzero entries outside them: row "
        f"{r}, column {c} holds {got[r, c]:.4g} (pair {r // 2} mixing into pair {c // 2}), "
        f"for k = {k}, D = {d_model}. Pairs never mix: every entry outside the D/2 blocks on "
        f"the diagonal is 0.{along}"
    )


OFFSET = GRADERS.add(
    Grader(
        name="offset_matrix",
        signature="offset_matrix(k, d_model) -> (d_model, d_model) with PE[p] @ M.T = PE[p + k]",
        reference=offset_matrix,
        cases=(
            Case("k = 1, D = 2", {"k": 1, "d_model": 2}),
            Case("k = 3, D = 8", {"k": 3, "d_model": 8}),
            Case("k = 0, D = 4", {"k": 0, "d_model": 4}),
            Case("k = -2, D = 6", {"k": -2, "d_model": 6}),
            Case("k = 10, D = 16", {"k": 10, "d_model": 16}),
        ),
        mistakes=(
            Mistake(
                "only the negative offset fails: your matrix for k = -2 is the one for "
                "k = +2, so the sign of k is lost (abs(k)?). A negative k moves positions "
                "backwards: keep its sign in the angle b = k·ω_i",
                lambda k, d_model: offset_matrix(abs(k), d_model),
            ),
            Mistake(
                "your matrix moves positions backwards (it is M_{-k}, the transpose of the "
                "right one): the minus sign sits in the wrong off-diagonal entry of each "
                "block. Expand sin(a + b), the new first member of the pair (sin a, cos a): "
                "does sin a or cos a come in with a minus?",
                lambda k, d_model: _blocks(k, d_model, lambda b: _rotation(b).T),
            ),
            Mistake(
                "each block needs the angle k·ω_i of its own pair; you used k for every pair "
                "(ω_i = 10000^(-2i/D))",
                lambda k, d_model: _blocks(k, d_model, _rotation, omega=lambda i: 1.0),
            ),
            Mistake(
                "pair 0 is right, but every later pair turns by the same tiny angle "
                "k·10^-4: your exponent -2i/D was computed with integer division (//), "
                "which floors it to -1 for every pair after the first. The exponent is a "
                "fraction: it needs true division",
                lambda k, d_model: _blocks(
                    k, d_model, _rotation, omega=lambda i: 10000.0 ** (-2 * i // d_model)
                ),
            ),
            Mistake(
                "your blocks are right but their angles are not: pair i turns by "
                "k·10000^(-(2i+1)/D), the exponent of its odd feature. Both features of pair "
                "i share one frequency, ω_i = 10000^(-2i/D), from the even index 2i",
                lambda k, d_model: _blocks(
                    k, d_model, _rotation, omega=lambda i: 10000.0 ** (-(2 * i + 1) / d_model)
                ),
            ),
            Mistake(
                "the frequency of pair i is 10000^(-2i/D); you used 10000^(-i/D)",
                lambda k, d_model: _blocks(
                    k, d_model, _rotation, omega=lambda i: 10000.0 ** (-i / d_model)
                ),
            ),
            Mistake(
                "cos and sin are swapped in your blocks: at k = 0 nothing moves, so the "
                "matrix must be the identity; which of cos b and sin b is 1 at b = 0, and "
                "where in a block must that 1 stand?",
                lambda k, d_model: _blocks(
                    k,
                    d_model,
                    lambda b: np.array([[math.sin(b), math.cos(b)], [-math.cos(b), math.sin(b)]]),
                ),
            ),
            Mistake(
                "your matrix does not depend on k (only the k = 1 case is right): the angle "
                "of pair i is b = k·ω_i, not ω_i",
                lambda k, d_model: _blocks(1, d_model, _rotation),
            ),
            Mistake(
                "your loop runs over the even features 0, 2, 4, ... and doubles that index "
                "again in the exponent, so pair p turns at 10000^(-4p/D): the exponent takes "
                "the pair number i (2i/D), or the even feature index itself (j/D), not both",
                lambda k, d_model: _blocks(
                    k, d_model, _rotation, omega=lambda i: 10000.0 ** (-4 * i / d_model)
                ),
            ),
            Mistake(
                "every diagonal entry is 1 too large (1 + cos b): you started from the "
                "identity and added the blocks to it. Each block replaces its corner of the "
                "diagonal: start from a matrix of zeros, or write the blocks with =, not +=",
                lambda k, d_model: np.eye(d_model) + offset_matrix(k, d_model),
            ),
            Mistake(
                "the lower-left entry of each block (its second row, first column) lost its "
                "minus sign: the second row gives the new cosine; expand cos(a + b) and look "
                "at the sign of its term in sin a",
                lambda k, d_model: _blocks(
                    k,
                    d_model,
                    lambda b: np.array([[math.cos(b), math.sin(b)], [math.sin(b), math.cos(b)]]),
                ),
            ),
            Mistake(
                "your blocks hold cos b on their diagonal and 0 off it: expand sin(a + b) and "
                "cos(a + b): each new entry of the pair takes a share of both old ones, sin a "
                "and cos a, so the two off-diagonal entries of each block are not 0 (which "
                "one carries the minus sign?)",
                lambda k, d_model: _blocks(k, d_model, lambda b: math.cos(b) * np.eye(2)),
            ),
            Mistake(
                "you returned the identity: M_k must turn pair i by the angle k·ω_i",
                lambda k, d_model: np.eye(d_model),
            ),
            Mistake(
                "your blocks turn by (k + 1)·ω_i: an offset of k positions turns pair i by "
                "k·ω_i (k = 0 is the identity)",
                lambda k, d_model: _blocks(k + 1, d_model, _rotation),
            ),
            Mistake(
                "pair i's block sits at rows and columns 2i and 2i + 1; at i, i + 1 the "
                "blocks overlap and each overwrites a corner of the one before",
                _blocks_at_i,
            ),
            Mistake(
                "your loop runs over all D features, but there is one block per pair: D/2 "
                "pairs, pair i at rows and columns 2i, 2i + 1",
                _blocks_per_feature,
            ),
            Mistake(
                "your angles grow with the pair number: b = k·ω_i with ω_i = 10000^(-2i/D), "
                "a negative exponent (multiply k by ω_i; dividing by it flips the exponent "
                "too)",
                lambda k, d_model: _blocks(
                    k, d_model, _rotation, omega=lambda i: 10000.0 ** (2 * i / d_model)
                ),
            ),
            Mistake(
                "only D = 8 is right: your frequencies divide by 8 whatever D is; the "
                "exponent 2i/D uses d_model",
                lambda k, d_model: _blocks(
                    k, d_model, _rotation, omega=lambda i: 10000.0 ** (-2 * i / 8)
                ),
            ),
            Mistake(
                "the two columns of each block are swapped: the pair is (sin a, cos a) in "
                "that order, so a block's first column multiplies sin a and its second cos a. "
                "Expand sin(a + b) and read off which factor goes with sin a",
                lambda k, d_model: _blocks(k, d_model, lambda b: _rotation(b)[:, ::-1]),
            ),
            *(
                Mistake(
                    diagnosis.format(left=left),
                    lambda k, d_model, which=which, base=base: _some_blocks(
                        k, d_model, which, base
                    ),
                    # Angles multiplied by d_model (not divided) vanish for every pair
                    # but 0, with the same numbers: that code gets the generated diagnosis.
                    needs=r"^(?![\s\S]*(\*\s*d_model\b|\bd_model\s*\*))"
                    if which == "first"
                    else "",
                )
                for which, diagnosis in _SOME_BLOCKS
                for base, left in (("eye", "the identity"), ("zeros", "zero"))
            ),
            Mistake(
                "the angle k·ω_i is already in radians, which np.sin and np.cos take: do "
                "not convert it from degrees",
                lambda k, d_model: _blocks(
                    k,
                    d_model,
                    _rotation,
                    omega=lambda i: math.pi / 180 * 10000.0 ** (-2 * i / d_model),
                ),
            ),
        ),
        properties=(
            Property(_stacked_blocks),
            Property(_offset_blocks),
            Property(_block_entries),
            Property(_between_blocks),
        ),
        hint="check your matrix on the table: does PE[p] @ offset_matrix(k, D).T give "
        "PE[p + k]? Work out one 2 x 2 block from sin(a + b) and cos(a + b) first. The "
        'chapter\'s section "Relative offsets are linear maps" derives the block',
        equivalent=(
            (
                "offset: range(d_model // 2) in for i in range(d_model // 2): -> "
                "reversed(range(d_model // 2))",
                "the blocks do not overlap: the order in which they are written does not matter",
            ),
        ),
        atol=1e-8,
    )
)


def check_offset_matrix(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(k, d_model)``: the ``(D, D)`` matrix with ``M_k @ PE[p] = PE[p + k]``.

    Taught in: chapters/05_positional.ipynb (exercise in exercises/05_positional.ipynb)
    """
    return OFFSET.check(fn)


# ---- 5.3 and 5.4: predictions on the dot product of positions --------------------------

SELF_DOT = GRADERS.add(
    Question(
        name="self_dot",
        answer=32.0,
        atol=1e-6,
        explanation="each of the D/2 = 32 pairs contributes sin² + cos² = 1, whatever the "
        "position: PE(p)·PE(p) = D/2 for every p",
        wrong=(
            (
                64.0,
                "that counts 1 for each of the 64 features, as if every feature squared were "
                "1; a single sin²(a) or cos²(a) is not 1 at most positions. Which group of "
                "features does add up to exactly 1, whatever the position?",
            ),
            (
                8.0,
                "8 = √64 would be the length of a vector of 64 entries ±1; the question asks "
                "for the dot product with itself (the squared length), and the entries are "
                "sines and cosines, not ±1: group them by (sin, cos) pair",
            ),
            (
                1.0,
                "a position vector is not of length 1: each of its (sin, cos) pairs is a "
                "point on the unit circle, of length 1. How many pairs does PE(5) hold?",
            ),
            (5.0, "the dot product does not grow with the position; all entries stay in [-1, 1]"),
            (
                25.0,
                "the dot product does not depend on the position: each pair is a point on "
                "the unit circle, wherever it has turned",
            ),
            (0.0, "the vector is not orthogonal to itself: PE(5)·PE(5) = |PE(5)|²"),
            (
                128.0,
                "that is 2 for each of the 64 features, more than any term can give: every "
                "entry is a sine or a cosine, so its square is at most 1. Group the 64 terms "
                "by (sin, cos) pair: what does one pair add, at any angle?",
            ),
            (
                16.0,
                "that is D/4, as if each pair added ½ (the average of sin² alone, or of "
                "cos² alone): a pair holds a sine and a cosine of the same angle. What do "
                "their two squares add up to, at any angle?",
            ),
            (
                31.0,
                "one short: each (sin, cos) pair adds exactly sin² + cos² = 1, so the sum is "
                "the number of pairs. Count them again: the pair number i starts at 0 (pair "
                "0 counts too); how many values does i take for D = 64?",
            ),
            (
                33.0,
                "one too many: each (sin, cos) pair adds exactly sin² + cos² = 1, so the sum "
                "is the number of pairs. Count them again: the pair number i starts at 0; "
                "how many values does i take for D = 64?",
            ),
            (
                math.sqrt(32),
                "that is the vector's length |PE(5)|, a square root; its dot product with "
                "itself is the squared length",
            ),
        ),
        hint="write PE(5)·PE(5) as a sum over the 64 features and group its terms by "
        "(sin, cos) pair: what does one pair add, whatever its angle?",
        near=0.1,
        near_hint="close, but not it: the sum is exact (a whole number) and the same at "
        "every position. Group the 64 terms by (sin, cos) pair: how many pairs are there, "
        "and which identity gives each pair's share exactly?",
    )
)


def check_self_dot(answer: Any) -> CheckResult:
    """Check the prediction of ``PE(5)·PE(5)`` for ``D = 64``.

    Taught in: chapters/05_positional.ipynb (exercise in exercises/05_positional.ipynb)
    """
    return SELF_DOT.check(answer)


SIGN_OF_OFFSET = GRADERS.add(
    Question(
        name="sign_of_offset",
        answer="equal",
        choices=("first", "second", "equal"),
        synonyms=tuple(
            (word, "equal") for word in ("same", "equally", "identical", "neither", "tie")
        ),
        explanation="PE(p)·PE(q) = Σ_i cos((p - q) ω_i) and cos is even: offsets +3 and -3 "
        "give the same dot product, so the raw dot product cannot tell after from before",
        wrong=(
            (
                "first",
                "'later' gets no bonus: the dot product is Σ_i cos((p - q) ω_i), and cos(-x) "
                "= cos(x)",
            ),
            (
                "second",
                "'earlier' gets no bonus: the dot product is Σ_i cos((p - q) ω_i), and "
                "cos(-x) = cos(x)",
            ),
        ),
        hint="write PE(p)·PE(q) pair by pair: each pair gives a cosine of the offset times a "
        "frequency; does a cosine tell +3 from -3?",
    )
)


def check_sign_of_offset(answer: Any) -> CheckResult:
    """Check the prediction: which is larger, ``PE(10)·PE(13)`` (first) or ``PE(10)·PE(7)``?

    Taught in: chapters/05_positional.ipynb (exercise in exercises/05_positional.ipynb)
    """
    return SIGN_OF_OFFSET.check(answer)


# ---- 5.5 a permutation-equivariance test -----------------------------------------------------


@dataclass(frozen=True)
class _Named:
    """A function with a readable name in the grader's messages (not a memory address)."""

    name: str
    fn: Callable[[Any], Any]

    def __call__(self, x: Any) -> Any:
        return self.fn(x)

    def __repr__(self) -> str:
        return self.name

    def __deepcopy__(self, memo: dict) -> _Named:
        return self


def _attention(x: np.ndarray) -> np.ndarray:
    return scaled_dot_product_attention(x, x, x)[0]


def _with_positions(x: np.ndarray) -> np.ndarray:
    return _attention(x + sinusoidal_encoding(x.shape[-2], x.shape[-1]))


def _causal(x: np.ndarray) -> np.ndarray:
    return scaled_dot_product_attention(x, x, x, causal_mask(x.shape[-2]))[0]


ATTENTION = _Named("attention without positions", _attention)
WITH_POSITIONS = _Named("attention with sinusoids added", _with_positions)
CAUSAL = _Named("causal attention", _causal)
TANH = _Named("tanh of every entry", np.tanh)
CUMSUM = _Named("running sum over the tokens", lambda x: np.cumsum(x, axis=-2))


def _route_gaps(fn: Callable[..., Any], x: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """Every entry's difference between the two routes (shuffle, then fn; fn, then shuffle)."""
    return np.abs(fn(x[..., perm, :]) - fn(x)[..., perm, :])


def _one_sequence(x: np.ndarray, which: int) -> np.ndarray:
    """Planted: one item of a batch, along its first axis (x itself when it is one (T, D)
    sequence)."""
    return x[which] if x.ndim > 2 else x


def _gap_cases() -> tuple[Case, ...]:
    rng = _rng()
    x5, x6, xb = (
        rng.standard_normal((5, 4)),
        rng.standard_normal((6, 8)),
        rng.standard_normal((2, 4, 6)),
    )
    # A batch whose sequences break equivariance by different amounts, the largest in the
    # middle: a gap measured on the first or the last sequence alone is told apart.
    xs = rng.standard_normal((3, 5, 4))
    per_item = _route_gaps(WITH_POSITIONS, xs, np.array([4, 0, 3, 1, 2])).max(axis=(-2, -1))
    order = np.argsort(per_item)  # smallest, middle, largest
    xs = xs[[order[0], order[2], order[1]]]  # (3, 5, 4), the largest gap at item 1
    # (B, H, T, D) with H != T: indexing axis 1 (the heads) is not indexing the tokens.
    # Its largest gap is in batch item 0, so a gap of item 0 alone (of a 3-D x alone) is
    # right there: that mistake is told by the 3-D batch, and named on both.
    x4 = rng.standard_normal((2, 3, 5, 4))
    per_item = _route_gaps(WITH_POSITIONS, x4, np.array([2, 0, 4, 1, 3])).max(axis=(-3, -2, -1))
    x4 = x4[np.argsort(-per_item)]  # (2, 3, 5, 4), the largest gap in item 0
    # No permutation below is its own inverse, so a reversed permutation is told apart.
    return (
        Case("attention, no positions", {"fn": ATTENTION, "x": x5, "perm": [2, 0, 4, 1, 3]}),
        Case("attention + sinusoids", {"fn": WITH_POSITIONS, "x": x5, "perm": [2, 0, 4, 1, 3]}),
        Case("tanh", {"fn": TANH, "x": x6, "perm": [1, 2, 0, 5, 3, 4]}),
        Case("running sum", {"fn": CUMSUM, "x": x6, "perm": [1, 2, 0, 5, 3, 4]}),
        Case("causal attention", {"fn": CAUSAL, "x": x6, "perm": [3, 0, 1, 2, 5, 4]}),
        Case("a batch, no positions", {"fn": ATTENTION, "x": xb, "perm": [3, 2, 0, 1]}),
        Case("a batch + sinusoids", {"fn": WITH_POSITIONS, "x": xs, "perm": [4, 0, 3, 1, 2]}),
        Case("(B, H, T, D) + sinusoids", {"fn": WITH_POSITIONS, "x": x4, "perm": [2, 0, 4, 1, 3]}),
    )


def _gap_with(fn: Any, x: np.ndarray, shuffled_in: np.ndarray, out_order: Any) -> float:
    return float(np.max(np.abs(fn(shuffled_in) - fn(x)[..., out_order, :])))


PERMUTATION = GRADERS.add(
    Grader(
        name="permutation_gap",
        signature="permutation_gap(fn, x, perm) -> float: max |fn(x[perm]) - fn(x)[perm]|",
        reference=permutation_gap,
        cases=_gap_cases(),
        mistakes=(
            Mistake(
                # On an equivariant fn the same numbers come from fn(x[perm]) shuffled a
                # second time against fn(x)[perm]: name the imbalance, not one side.
                "your two sides are one shuffle apart: either fn(x) was left unshuffled, or "
                "fn(x[perm]), whose rows already come out in the shuffled order, was "
                "reordered by perm a second time. Each side "
                "is shuffled exactly once: the input before fn on one side, the output of "
                "fn(x) on the other. Count the perm on each side of your difference",
                lambda fn, x, perm: float(np.max(np.abs(fn(x[..., perm, :]) - fn(x)))),
            ),
            Mistake(
                "you reordered the output with the inverse permutation: new row j is old row "
                "perm[j] on both sides, so index fn(x) with perm itself, not np.argsort(perm)",
                lambda fn, x, perm: _gap_with(fn, x, x[..., perm, :], np.argsort(perm)),
                needs=r"argsort",
            ),
            Mistake(
                # The same numbers as the inverse permutation on fn(x), on any fn: row perm[j]
                # of fn(x[perm]) meets row j of fn(x) either way.
                "your gap compares row perm[j] of fn(x[perm]) with row j of fn(x), as if "
                "fn(x[perm]) were reordered by perm a second time (or fn(x) by the inverse "
                "permutation): the input is shuffled once, before fn, and the other route "
                "reorders fn(x), the output of the unshuffled input, by that same perm",
                lambda fn, x, perm: float(
                    np.max(np.abs(fn(x[..., perm, :])[..., perm, :] - fn(x)))
                ),
            ),
            Mistake(
                "you took the largest signed difference; take the largest absolute one "
                "(np.abs before np.max), or a function off by -1 everywhere looks equivariant",
                lambda fn, x, perm: float(np.max(fn(x[..., perm, :]) - fn(x)[..., perm, :])),
            ),
            Mistake(
                "you took the norm of all the differences together; the gap is the largest "
                "absolute difference of one entry",
                lambda fn, x, perm: float(
                    np.linalg.norm(fn(x[..., perm, :]) - fn(x)[..., perm, :])
                ),
            ),
            Mistake(
                "you returned one gap per token (a max over the last axis only): the gap is "
                "one number, the largest difference over every entry",
                lambda fn, x, perm: _route_gaps(fn, x, perm).max(axis=-1),
            ),
            Mistake(
                "you summed the differences; the gap is the largest one (np.max), one "
                "number whatever the number of tokens",
                lambda fn, x, perm: float(np.sum(_route_gaps(fn, x, perm))),
            ),
            Mistake(
                "your two routes are the same computation, so the gap is always 0: one route "
                "shuffles the tokens before fn, the other shuffles fn's output",
                lambda fn, x, perm: 0.0,
            ),
            Mistake(
                "you averaged the differences; the gap is the largest one (np.max), so that "
                "one token out of place is enough to fail the test",
                lambda fn, x, perm: float(np.mean(_route_gaps(fn, x, perm))),
            ),
            *(
                Mistake(
                    f"your gap measures one sequence of the batch only (the {which}): on a "
                    "batch (..., T, D) the gap is the largest difference over every entry of "
                    "every sequence, so a function that breaks order on another sequence "
                    "still fails the test. Which part of x does your code drop?",
                    lambda fn, x, perm, at=at: float(
                        np.max(_route_gaps(fn, _one_sequence(x, at), np.asarray(perm)))
                    ),
                )
                for which, at in (("first", 0), ("last", -1))
            ),
            Mistake(
                "you compared the two outputs' largest entries, |max A - max B|: two very "
                "different arrays can share their largest entry (shuffling never changes "
                "it). The gap compares the two routes entry by entry, then takes the "
                "largest absolute difference",
                lambda fn, x, perm: float(
                    abs(np.max(fn(x[..., perm, :])) - np.max(fn(x)[..., perm, :]))
                ),
            ),
            Mistake(
                "you took the smallest difference: one entry that happens to agree makes any "
                "function look equivariant. The gap is the largest absolute difference",
                lambda fn, x, perm: float(np.min(_route_gaps(fn, x, perm))),
            ),
            Mistake(
                "you divided the differences by the size of fn's output: the gap is the "
                "absolute difference, not a relative one (outputs near zero blow a relative "
                "one up)",
                lambda fn, x, perm: float(
                    np.max(_route_gaps(fn, x, perm) / (np.abs(fn(x)[..., perm, :]) + 1e-12))
                ),
            ),
            *(
                Mistake(
                    "you divided the largest difference by the largest entry of "
                    f"{which}: the gap is the absolute largest difference, not a relative "
                    "one. A test of equivariance asks whether the two routes meet, in the "
                    "units of fn's output: leave it unnormalised",
                    lambda fn, x, perm, route=route: float(
                        np.max(_route_gaps(fn, x, perm)) / np.max(np.abs(route(fn, x, perm)))
                    ),
                )
                for which, route in (
                    ("fn's output", lambda fn, x, perm: fn(x)),
                    ("one route's output", lambda fn, x, perm: fn(x[..., perm, :])),
                )
            ),
            Mistake(
                "you divided the norm of the differences by the norm of fn's output (a "
                "relative error): the gap is the absolute largest difference of one entry, "
                "neither a norm nor relative to the output's size",
                lambda fn, x, perm: float(
                    np.linalg.norm(fn(x[..., perm, :]) - fn(x)[..., perm, :])
                    / np.linalg.norm(fn(x)[..., perm, :])
                ),
            ),
            Mistake(
                "your first route gives fn the tokens in their original order (x not "
                "reordered, or reordered by the indices 0, 1, ..., T - 1, which is what "
                "sorting a permutation gives back), so you compare fn(x) with fn(x) "
                "reordered. Which order of the tokens must fn see on the route that "
                "shuffles first?",
                lambda fn, x, perm: float(np.max(np.abs(fn(x) - fn(x)[..., perm, :]))),
            ),
        ),
        error_hints=(
            (
                "out of bounds",
                "perm reorders the tokens, which are on axis -2 (x is (..., T, D)): used "
                "on another axis (x[perm] reaches axis 0, x[:, perm] axis 1, the heads of a "
                "(B, H, T, D) input, x[..., perm] the features), its indices run out of "
                "that axis. Axis 1 holds the tokens of a 3-D x only: which indexing reaches "
                "the second-to-last axis, whatever comes before it?",
            ),
        ),
        hint="two routes must meet: shuffle the tokens before fn, or after it. Which axis "
        "holds the tokens, and which single number measures how far apart the two results "
        'are? The chapter\'s section "Attention sees a set" runs this test',
        equivalent=(
            (
                "drop: float(np.max(np.abs(shuffled_first - shuffled_after))) in return "
                "float(np.max(np.abs(shuffled_first - shuffled_after)… -> "
                "np.max(np.abs(shuffled_first - shuffled_after))",
                "np.max already returns one number (a NumPy float, compared by value)",
            ),
            (
                "swap: shuffled_first - shuffled_after in return float(np.max(np.abs("
                "shuffled_first - shuffled_after)… -> shuffled_after - shuffled_first",
                "the absolute value does not depend on the order of the difference",
            ),
        ),
        atol=1e-9,
    )
)


def check_permutation_gap(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(f, x, perm)``: the largest ``|f(x[perm]) - f(x)[perm]|``, over tokens.

    Taught in: chapters/05_positional.ipynb (exercise in exercises/05_positional.ipynb)
    """
    return PERMUTATION.check(fn)


# ---- 5.6 RoPE, and 5.7 RoPE on queries and keys ---------------------------------------------


def _rope_pairs(x: np.ndarray, positions: np.ndarray, sign: float = 1.0,
                omega: Callable[[int, int], np.ndarray] | None = None) -> np.ndarray:  # fmt: skip
    """A planted RoPE with neighbouring pairs (2i, 2i+1) and an optional wrong sign/frequency."""
    d = x.shape[-1]
    w = (10000.0 ** (-np.arange(0, d, 2) / d)) if omega is None else omega(d, d // 2)
    angle = sign * np.asarray(positions, dtype=np.float64)[:, None] * w  # (T, d/2)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x0 * np.cos(angle) - x1 * np.sin(angle)
    out[..., 1::2] = x0 * np.sin(angle) + x1 * np.cos(angle)
    return out


def _rope_sin_cos_swapped(x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Planted: cos and sin exchanged in both lines of the rotation."""
    d = x.shape[-1]
    theta = np.asarray(positions, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * np.sin(theta) - x[..., 1::2] * np.cos(theta)
    out[..., 1::2] = x[..., 0::2] * np.cos(theta) + x[..., 1::2] * np.sin(theta)
    return out


def _rope_halves(x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Planted: the "rotate half" layout, feature i paired with i + d/2."""
    d = x.shape[-1]
    angle = np.asarray(positions, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
    x0, x1 = x[..., : d // 2], x[..., d // 2 :]
    return np.concatenate(
        [x0 * np.cos(angle) - x1 * np.sin(angle), x0 * np.sin(angle) + x1 * np.cos(angle)], -1
    )


def _rope_layouts(x: np.ndarray, positions: np.ndarray, read: str, write: str) -> np.ndarray:
    """Planted: the pairs read from (``read``) and written to (``write``) either neighbouring
    columns ("pairs", 2i and 2i + 1) or the two halves ("halves", i and i + d/2)."""
    d = x.shape[-1]
    angle = np.asarray(positions, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
    halves = (slice(None, d // 2), slice(d // 2, None))
    first, second = halves if read == "halves" else (slice(0, None, 2), slice(1, None, 2))
    x0, x1 = x[..., first], x[..., second]
    new0 = x0 * np.cos(angle) - x1 * np.sin(angle)
    new1 = x0 * np.sin(angle) + x1 * np.cos(angle)
    out = np.empty(x.shape)
    to0, to1 = halves if write == "halves" else (slice(0, None, 2), slice(1, None, 2))
    out[..., to0], out[..., to1] = new0, new1
    return out


def _rope_reuses_rotated(x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Planted: the odd line reads the even features already rotated."""
    d = x.shape[-1]
    theta = np.asarray(positions, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
    out = x.copy()
    out[..., 0::2] = x[..., 0::2] * np.cos(theta) - x[..., 1::2] * np.sin(theta)
    out[..., 1::2] = out[..., 0::2] * np.sin(theta) + x[..., 1::2] * np.cos(theta)
    return out


_HEADS = (2, 5, 6)
"""The shape of x in 5.6's batched case: (heads, T, d)."""


def _rope_terms(x: np.ndarray, positions: np.ndarray, terms: str) -> np.ndarray:
    """Planted: the rotation with one trigonometric function per term, ``terms`` spelling
    (x'_2i's term in x_2i, its term in x_2i+1, x'_2i+1's term in x_2i, its term in x_2i+1)
    with ``c`` (cos) and ``s`` (sin); the right rotation is ``"cssc"``."""
    d = x.shape[-1]
    theta = np.asarray(positions, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
    f = [np.cos(theta) if t == "c" else np.sin(theta) for t in terms]
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * f[0] - x[..., 1::2] * f[1]
    out[..., 1::2] = x[..., 0::2] * f[2] + x[..., 1::2] * f[3]
    return out


_ONE_FUNCTION_TWICE = (
    ("ccsc", "x'_{2i}", "cos", "its term in x_{2i+1} takes the sine"),
    ("sssc", "x'_{2i}", "sin", "its term in x_{2i} takes the cosine"),
    ("cscc", "x'_{2i+1}", "cos", "its term in x_{2i} takes the sine"),
    ("csss", "x'_{2i+1}", "sin", "its term in x_{2i+1} takes the cosine"),
)
"""A typo in one line of the rotation: the same function in both of its terms."""


def _rope_line_typos() -> tuple[tuple[str, str], ...]:
    """Every rotation with one line right and the other of two functions of θ in another
    order than the rotation's (``terms`` as in :func:`_rope_terms`), the typos of
    ``_ONE_FUNCTION_TWICE`` and the fully swapped rotation left to their own diagnoses:
    ``(terms, diagnosis)``."""
    named = {t for t, *_ in _ONE_FUNCTION_TWICE} | {"sccs"}
    found = []
    for line, right in ((0, "cs"), (1, "sc")):
        for wrong in ("cc", "ss", "cs", "sc"):
            if wrong == right:
                continue
            terms = ("cs" + wrong) if line == 1 else (wrong + "sc")
            if terms in named:
                continue
            good, bad = ("x'_{2i}", "x'_{2i+1}") if line == 1 else ("x'_{2i+1}", "x'_{2i}")
            fns = " and ".join(
                f"x_{{{m}}} with {'cos' if f == 'c' else 'sin'} θ"
                for m, f in zip(("2i", "2i+1"), wrong, strict=True)
            )
            found.append(
                (
                    terms,
                    f"your new {good} is right and your new {bad} is not: in its line you "
                    f"multiply {fns}. Compare that line with the rotation in the statement, "
                    "term by term (at θ = 0 a row must come out unchanged)",
                )
            )
    return tuple(found)


def _rope_angles_reshaped(x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Planted: the angle grid built as (d/2, T) and reshaped (not transposed) to (T, d/2)."""
    d = x.shape[-1]
    omega = 10000.0 ** (-np.arange(0, d, 2) / d)
    positions = np.asarray(positions, dtype=np.float64)
    theta = (omega[:, None] * positions[None, :]).reshape(len(positions), -1)
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * np.cos(theta) - x[..., 1::2] * np.sin(theta)
    out[..., 1::2] = x[..., 0::2] * np.sin(theta) + x[..., 1::2] * np.cos(theta)
    return out


def _rope_frequency_per_feature(x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Planted: angles for every feature j (ω = 10000^(-j/d)), the even line reading the
    even columns of them and the odd line the odd ones: the two members of a pair turn by
    different angles."""
    d = x.shape[-1]
    theta = np.asarray(positions, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(d) / d)
    even, odd = theta[:, 0::2], theta[:, 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * np.cos(even) - x[..., 1::2] * np.sin(even)
    out[..., 1::2] = x[..., 0::2] * np.sin(odd) + x[..., 1::2] * np.cos(odd)
    return out


def _rope_broadcast_hint(message: str) -> str:
    """A shape that does not broadcast: on a batch of heads (the only 3-D case, so every
    (T, d) case ran), an index that reaches the features only on a 2-D x; otherwise the
    angles, which must be (T, d/2)."""
    shapes = [
        tuple(int(n) for n in s.split(",") if n.strip())
        for s in re.findall(r"\(([\d, ]+)\)", message)
    ]
    heads, _, d = _HEADS
    if any(len(s) == 3 and s[0] == heads and s[-1] == d for s in shapes):
        return (
            f"your code runs on the (T, d) cases but not on a batch of heads {_HEADS}: an "
            "index such as x[:, 0::2] takes every other entry of axis 1, which is the "
            "feature axis only when x is 2-D (on (heads, T, d) it slices the tokens). Which "
            "indexing reaches the last axis, whatever axes come before it?"
        )
    return (
        "the angles θ must hold one column per pair, (T, d/2), to broadcast against one "
        "member of every pair: a column of positions (T, 1) times the d/2 frequencies"
    )


def _rope_cases() -> tuple[Case, ...]:
    rng = _rng()
    return (
        Case("4 positions, d = 2", {"x": rng.standard_normal((4, 2)), "positions": np.arange(4)}),
        Case("6 positions, d = 8", {"x": rng.standard_normal((6, 8)), "positions": np.arange(6)}),
        Case(
            "positions 10, 20, 30",
            {"x": rng.standard_normal((3, 4)), "positions": np.array([10, 20, 30])},
        ),
        Case(
            f"heads {_HEADS}",
            {"x": rng.standard_normal(_HEADS), "positions": np.arange(_HEADS[1])},
        ),
        Case(
            "a long sequence, d = 16",
            {"x": rng.standard_normal((40, 16)), "positions": np.arange(40)},
        ),
    )


def _rope_lengths(outputs: Any, case: Case) -> str | None:
    """Forensics on a rotation: a rotation keeps the length of every pair; an output whose
    pairs stretch used two angles (or two frequencies) for one pair's two lines."""
    got = np.asarray(outputs["output"], dtype=np.float64)
    x = np.asarray(case.inputs["x"], dtype=np.float64)
    if got.shape != x.shape or x.shape[-1] % 2:
        return None
    before = x[..., 0::2] ** 2 + x[..., 1::2] ** 2
    after = got[..., 0::2] ** 2 + got[..., 1::2] ** 2
    if np.allclose(after, before, rtol=1e-6, atol=1e-8):
        return None
    return (
        "your output's pairs do not keep their length: a rotation turns (x_{2i}, x_{2i+1}) "
        "without stretching it, so x'_{2i}² + x'_{2i+1}² = x_{2i}² + x_{2i+1}². It does when "
        "both lines use cos θ and sin θ of one angle θ = position·ω_i: do your two lines (or "
        "your cos and sin columns) take the same angle, one frequency per pair?"
    )


def _rope_members(outputs: Any, case: Case) -> str | None:
    """Forensics on a rotation: one member of every pair right, the other wrong (one of the
    rotation's two lines is wrong)."""
    got = np.asarray(outputs["output"], dtype=np.float64)
    want = apply_rope(case.inputs["x"], case.inputs["positions"])
    if got.shape != want.shape:
        return None
    even = np.allclose(got[..., 0::2], want[..., 0::2], atol=1e-8)
    odd = np.allclose(got[..., 1::2], want[..., 1::2], atol=1e-8)
    if even == odd:
        return None
    good, bad = ("x'_{2i}", "x'_{2i+1}") if even else ("x'_{2i+1}", "x'_{2i}")
    return (
        f"your new {good} (the {'even' if even else 'odd'} features) are right and your new "
        f"{bad} are not: the line that computes {bad} is wrong. Compare its two terms with "
        "the rotation in the statement (at θ = 0 a row must come out unchanged), and check "
        "that it reads the original x, not a column already rotated"
    )


def _rope_stacked(outputs: Any, case: Case) -> str | None:
    """Forensics on the shape: the two new members of every pair stacked on a new axis,
    (..., T, d/2, 2) or (..., T, 2, d/2), not merged back into the d features (with d = 2
    the first looks like an axis of size 1 kept by mistake)."""
    got = np.asarray(outputs["output"])
    x = np.asarray(case.inputs["x"], dtype=np.float64)
    lead, d = x.shape[:-1], x.shape[-1]
    if d % 2 or got.shape == x.shape:
        return None
    want = apply_rope(x, case.inputs["positions"])
    if got.shape == (*lead, d // 2, 2):
        named, where_ = "(..., T, d/2, 2)", "a new last axis"
        right = np.allclose(got.reshape(x.shape), want, atol=1e-8)
        merged = "Merged in the order they have, your last two axes give exactly that"
    elif got.shape == (*lead, 2, d // 2):
        named, where_ = "(..., T, 2, d/2)", "a new axis before the pairs"
        right = np.allclose(np.swapaxes(got, -1, -2).reshape(x.shape), want, atol=1e-8)
        merged = (
            "Merged in the order they have, your last two axes would give all the first "
            "members, then all the second ones (two halves), not the pairs side by side"
        )
    else:
        return None
    looks = f"; d = {d}, so d/2 = 1 is the axis of size 1, not an axis kept" if d == 2 else ""
    values = "Your rotated values are right, only their layout is not: r" if right else "R"
    return (
        f"your output has shape {got.shape}, that is {named}{looks}: you stacked the two new "
        f"members of each pair on {where_}. {values}ope returns x's own shape, {x.shape}, "
        f"with pair i's two members in features 2i and 2i + 1. {merged}: how do they become "
        "the one feature axis?"
    )


ROPE = GRADERS.add(
    Grader(
        name="rope",
        signature="rope(x, positions) with x: (..., T, d), positions: (T,) -> (..., T, d)",
        reference=lambda x, positions: apply_rope(x, positions),
        cases=_rope_cases(),
        mistakes=(
            Mistake(
                "the angle p·ω_i is already in radians, which np.sin and np.cos take: do "
                "not convert it from degrees",
                lambda x, positions: _rope_pairs(
                    x,
                    positions,
                    omega=lambda d, n: np.pi / 180 * 10000.0 ** (-np.arange(0, d, 2) / d),
                ),
            ),
            Mistake(
                "you turned each pair the wrong way (by -p·ω_i): as a complex number the pair "
                "is multiplied by e^{+i p ω}, so x_{2i} cos θ - x_{2i+1} sin θ comes first",
                lambda x, positions: _rope_pairs(x, positions, sign=-1.0),
            ),
            Mistake(
                "you paired feature i with feature i + d/2 (the 'rotate half' layout of some "
                "libraries); here pairs are neighbours, (2i, 2i+1), as in the sinusoids",
                _rope_halves,
            ),
            Mistake(
                "you took the pairs from the two halves of the features, (x_i, x_{i+d/2}) "
                "(the 'rotate half' layout of some libraries), and wrote them into "
                "neighbouring columns: here a pair is two neighbours, (x_{2i}, x_{2i+1}), "
                "read from the same two columns it is written to",
                lambda x, positions: _rope_layouts(x, positions, "halves", "pairs"),
            ),
            Mistake(
                "your rotation of each pair is right, but you wrote the results back in two "
                "halves (all new first members, then all new second members): each pair "
                "goes back into its own columns 2i and 2i+1, interleaved as it came",
                lambda x, positions: _rope_layouts(x, positions, "pairs", "halves"),
            ),
            Mistake(
                "the frequency of pair i is 10000^(-2i/d); you used 10000^(-i/d)",
                lambda x, positions: _rope_pairs(
                    x, positions, omega=lambda d, h: 10000.0 ** (-np.arange(h) / d)
                ),
            ),
            Mistake(
                "the exponent is 2i/d with the whole d; you divided by d/2, doubling every "
                "exponent, so the frequencies fall off twice as fast",
                lambda x, positions: _rope_pairs(
                    x, positions, omega=lambda d, h: 10000.0 ** (-np.arange(0, d, 2) / h)
                ),
            ),
            Mistake(
                "your frequencies divide by x.shape[0], the first axis (the rows, or the "
                "batch): d is the size of the feature axis, x.shape[-1]",
                lambda x, positions: _rope_pairs(
                    x,
                    positions,
                    omega=lambda d, h: 10000.0 ** (-np.arange(0, d, 2) / x.shape[0]),
                ),
            ),
            Mistake(
                "cos and sin are swapped in your rotation: x'_{2i} = x_{2i} cos θ - "
                "x_{2i+1} sin θ and x'_{2i+1} = x_{2i} sin θ + x_{2i+1} cos θ (at θ = 0 a "
                "row must come out unchanged)",
                _rope_sin_cos_swapped,
            ),
            *(
                Mistake(
                    f"a typo in the rotation: the new {name} uses {fn} θ in both of its "
                    f"terms, and {fix} (at θ = 0 a row must come out unchanged)",
                    lambda x, positions, terms=terms: _rope_terms(x, positions, terms),
                )
                for terms, name, fn, fix in _ONE_FUNCTION_TWICE
            ),
            *(
                Mistake(
                    diagnosis,
                    lambda x, positions, terms=terms: _rope_terms(x, positions, terms),
                )
                for terms, diagnosis in _rope_line_typos()
            ),
            Mistake(
                "your angles are scrambled: row t of your angle grid is not position t times "
                "the frequencies. A grid built as (d/2, T) and reshaped to (T, d/2) keeps its "
                "entries in the old order (reshape does not transpose): build it with the "
                "positions along its rows from the start, or transpose it",
                _rope_angles_reshaped,
            ),
            Mistake(
                "the two members of a pair turned by different angles: each feature got its "
                "own frequency (10000^(-j/d) for every feature j); a pair (2i, 2i+1) shares "
                "one angle, θ = p·ω_i with ω_i = 10000^(-2i/d), the same in both lines",
                _rope_frequency_per_feature,
            ),
            Mistake(
                "your angles grow with the pair number: θ = p·ω_i with ω_i = 10000^(-2i/d), "
                "a negative exponent (multiply the positions by ω_i; dividing by it flips "
                "the exponent's sign)",
                lambda x, positions: _rope_pairs(
                    x, positions, omega=lambda d, h: 10000.0 ** (np.arange(0, d, 2) / d)
                ),
            ),
            Mistake(
                "every pair turned by its position alone (angle p); pair i turns by p·ω_i",
                lambda x, positions: _rope_pairs(x, positions, omega=lambda d, h: np.ones(h)),
            ),
            Mistake(
                "you returned x unchanged: rotate each pair (x_{2i}, x_{2i+1}) of row t by the "
                "angle positions[t]·ω_i",
                lambda x, positions: x.copy(),
            ),
            Mistake(
                "you rotated row t by the angle of position t (0, 1, 2, ...): use the "
                "`positions` argument, which need not start at 0 nor step by 1",
                lambda x, positions: apply_rope(x, np.arange(x.shape[-2])),
            ),
            Mistake(
                "the second line reads the even features already rotated by the first: both "
                "lines must use the original x_even and x_odd (read them before writing)",
                _rope_reuses_rotated,
            ),
        ),
        equivalent=(
            (
                "constant: np.zeros_like(x) in out = np.zeros_like(x) -> np.ones_like(x)",
                "every entry of `out` is written afterwards (the even and the odd features)",
            ),
        ),
        error_hints=(
            ("could not broadcast", _rope_broadcast_hint),
            ("could not be broadcast", _rope_broadcast_hint),
        ),
        properties=(Property(_rope_stacked), Property(_rope_members), Property(_rope_lengths)),
        hint="rotate one pair of one row by hand, on paper, and compare with your output at "
        "that place: which angle, which sign, which features form the pair? The chapter's "
        'section "Rotary position embedding (RoPE)" writes the rotation',
        atol=1e-8,
    )
)


def check_rope(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, positions)``: rotary position embedding of ``x``, pairs ``(2i, 2i+1)``.

    Taught in: chapters/05_positional.ipynb (exercise in exercises/05_positional.ipynb)
    """
    return ROPE.check(fn)


def _softmax_rows(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _rope_scores(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    pos = np.arange(q.shape[-2])
    q_rot, k_rot = apply_rope(q, pos), apply_rope(k, pos)  # (T, d) each
    return q_rot @ k_rot.T / math.sqrt(q.shape[-1])  # (T, d) @ (d, T) -> (T, T)


def _rope_at(q: np.ndarray, k: np.ndarray, q_pos: np.ndarray, k_pos: np.ndarray) -> np.ndarray:
    """Planted: the scaled scores with queries and keys turned by the given positions."""
    return apply_rope(q, q_pos) @ apply_rope(k, k_pos).T / math.sqrt(q.shape[-1])


def _scores_cases() -> tuple[Case, ...]:
    rng = _rng()
    return tuple(
        Case(
            f"T = {t}, d = {d}",
            {"q": rng.standard_normal((t, d)), "k": rng.standard_normal((t, d))},
        )
        for t, d in ((3, 2), (5, 8), (8, 4), (12, 16))
    )


_ROOT = r"(?:sqrt|\*\*\s*\(?\s*(?:0?\.5|1\s*/\s*2))"


def _rope_reversed(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Positions counting down; the same scores as a rope that turns by -θ."""
    return _rope_at(q, k, np.arange(len(q))[::-1], np.arange(len(k))[::-1])


def _rope_backwards(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """A rope that turns each pair by -θ, positions 0 .. T - 1: every offset negated."""
    pos = np.arange(len(q))
    rq, rk = _rope_pairs(q, pos, sign=-1.0), _rope_pairs(k, pos, sign=-1.0)
    return rq @ rk.T / math.sqrt(q.shape[-1])


_COUNTS_DOWN = (
    r"\[\s*::\s*-\s*1\s*\]|\bflip|\breversed\(|,\s*-\s*1\s*,\s*-\s*1\s*\)"
    r"|-\s*1\s*-\s*(np\.)?arange|-\s*(np\.)?arange|\bT\s*-\s*1\s*-"
)
"""Code whose positions visibly count down: [::-1], flip, reversed, a range with step -1."""


_SCALED_TWICE = (
    rf"{_ROOT}[\s\S]*{_ROOT}"  # two square roots
    r"|/\s*(?P<by>[A-Za-z_][\w.]*)(?![\w.(\[])[\s\S]*/\s*(?P=by)(?![\w.(\[])"
)
"""Code that scales by √d twice: two square roots, or two divisions by one name."""


def _rope_scaled_twice(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Planted: the rotated queries and the rotated keys each divided by √d."""
    pos = np.arange(q.shape[-2])
    scale = math.sqrt(q.shape[-1])
    return (apply_rope(q, pos) / scale) @ (apply_rope(k, pos) / scale).T  # (T, T)


def _scores_rotated_hint(said: str) -> str | None:
    """``rope`` split an odd number of features into pairs: (T, a) into (T, a - 1), as on
    the (3, 3) score matrix of case T = 3; q and k have an even d. Or it met two arrays that
    differ in their first axis alone, the rows of q or k and the angles of the positions:
    the positions are not one per row."""
    shapes = [
        tuple(int(n) for n in found.split(",") if n.strip())
        for found in re.findall(r"\(([\d,\s]+)\)", said)
    ]
    if len(shapes) != 2 or len(shapes[0]) != len(shapes[1]) or not shapes[0]:
        return None
    (a, *rest_a), (b, *rest_b) = shapes
    if len(shapes[0]) == 2 and a == b and rest_a[0] == rest_b[0] + 1:
        return (
            "your rope split an odd number of features into pairs: it got an array whose "
            "last axis is not d, such as the (T, T) score matrix. RoPE turns the queries "
            "and the keys, each (T, d), before their dot product; the scores have no "
            "feature pairs to turn (your rope from 5.6 is not the problem)"
        )
    if a != b and rest_a == rest_b:
        return (
            f"an array of {a} rows met one of {b} in your rope, where the rows of q (or k) "
            "meet the angles made from the positions you passed: they do not line up. rope "
            "turns row t by the t-th position, so it needs one position per row of q: how "
            "many entries does the positions array you build hold, and where does it start?"
        )
    return None


def _scores_scaled(outputs: Any, case: Case) -> str | None:
    """Forensics on the scale: the right scores times one number, so the rotations are
    right and only the divisor is not √d of these inputs."""
    got = np.asarray(outputs["output"], dtype=np.float64)
    q, k = case.inputs["q"], case.inputs["k"]
    want = _rope_scores(q, k)
    if got.shape != want.shape:
        return None
    ratio = float(np.sum(got * want) / np.sum(want * want))  # least squares: got ≈ ratio·want
    if ratio <= 0 or not np.allclose(got, ratio * want, rtol=1e-6, atol=1e-9):
        return None
    d = q.shape[-1]
    divisor = math.sqrt(d) / ratio
    squared = divisor * divisor
    named = f" (√{round(squared)})" if abs(squared - round(squared)) < 1e-6 and squared > 1 else ""
    return (
        f"your rotations are right, but your scale is not: on these q and k (d = {d}) you "
        f"divide the scores by {divisor:.4g}{named}, and √d = {math.sqrt(d):.4g}. The scale "
        "is the square root of the number of features of the inputs in hand: is yours a "
        "number written in, or does an operator bind before the square root is taken?"
    )


def _scores_repeated(outputs: Any, case: Case) -> str | None:
    """Forensics on the values: every row (or every column) of the scores one number
    repeated, such as the score of query t with key t alone (the diagonal) spread along
    its row; or that diagonal kept as a (T, 1) column."""
    got = np.asarray(outputs["output"], dtype=np.float64)
    q, k = case.inputs["q"], case.inputs["k"]
    want = _rope_scores(q, k)
    T = want.shape[0]
    if got.shape in ((T, 1), (1, T)) and np.allclose(got.ravel(), np.diagonal(want), atol=1e-8):
        return (
            f"your scores have shape {got.shape}, one per position: q'_t·k'_t/√d, the score "
            "of query t with key t alone (the diagonal of the score matrix). The scores pair "
            "every query with every key: a (T, T) matrix, entry (t, s) query t against key "
            "s. Which product of the rotated (T, d) arrays gives every pair at once?"
        )
    if got.shape != want.shape or T < 2:
        return None
    for axis, line in ((1, "row"), (0, "column")):
        first = got[:, :1] if axis == 1 else got[:1, :]
        if not np.allclose(got, first, atol=1e-9):
            continue
        kept = first.ravel()
        other = "key" if axis == 1 else "query"
        if np.allclose(kept, np.diagonal(want), atol=1e-8):
            what = (
                f"{line} t holds q'_t·k'_t/√d, the score of query t with key t alone (the "
                f"diagonal of the score matrix), copied along the {line}"
            )
        else:
            what = f"{line} 0 holds {kept[0]:.4g} at every {other}"
        return (
            f"each {line} of your scores is one number repeated: {what}. The scores pair "
            "every query with every key: entry (t, s) is query t against key s, so a "
            f"{line} changes from {other} to {other}. Which product of the rotated (T, d) "
            "arrays gives every pair at once?"
        )
    return None


ROPE_SCORES = GRADERS.add(
    Grader(
        name="rope_scores",
        signature="rope_scores(q, k) with q, k: (T, d) -> (T, T) scaled scores",
        reference=_rope_scores,
        cases=_scores_cases(),
        mistakes=(
            Mistake(
                "you rotated the queries only: rotate the keys too, each by its own position",
                lambda q, k: _rope_pairs(q, np.arange(len(q))) @ k.T / math.sqrt(q.shape[-1]),
            ),
            Mistake(
                "you rotated the keys only: rotate the queries too, each by its own position",
                lambda q, k: q @ _rope_pairs(k, np.arange(len(k))).T / math.sqrt(q.shape[-1]),
            ),
            Mistake(
                "you divided by √T, the size of another axis (the number of positions): "
                "the scale is √d, the square root of the number of features each dot "
                "product sums over",
                lambda q, k: _rope_scores(q, k) * math.sqrt(q.shape[-1] / q.shape[-2]),
            ),
            Mistake(
                "your scores are divided by 2d, not √d: ** binds tighter than / (and / runs "
                "left to right), so `scores / d ** 1 / 2` is (scores / d) / 2. The exponent "
                "1/2 must be one operand of **: how do you keep it together?",
                # the right scores times √d are q' k'ᵀ, then divided as the learner did
                lambda q, k: _rope_scores(q, k) * math.sqrt(q.shape[-1]) / q.shape[-1] ** 1 / 2,
                needs=r"\*\*\s*1\s*/\s*2",
            ),
            Mistake(
                "your scores are divided by d/2, not √d: ** binds tighter than /, so "
                "`d ** 1 / 2` is (d ** 1) / 2. The exponent 1/2 must be one operand of **: "
                "how do you keep it together?",
                lambda q, k: _rope_scores(q, k) * math.sqrt(q.shape[-1]) / (q.shape[-1] ** 1 / 2),
                needs=r"\*\*\s*1\s*/\s*2",
            ),
            Mistake(
                "your scores come out divided by d, not √d: your code scales by √d twice "
                "(the rotated queries and the rotated keys each divided by √d, say), and the "
                "two factors multiply in every dot product, 1/√d · 1/√d = 1/d. The scores "
                "take the factor 1/√d once: where does yours come in a second time?",
                _rope_scaled_twice,
                needs=_SCALED_TWICE,
            ),
            Mistake(
                "you forgot the scale: divide the scores by sqrt(d)",
                lambda q, k: _rope_scores(q, k) * math.sqrt(q.shape[-1]),
            ),
            Mistake(
                "your scale is a whole number: int() cut √d down (to 1 for d = 2, 2 for "
                "d = 8), so the scores are divided by too little. Divide by the square root "
                "itself, not rounded",
                lambda q, k: (
                    _rope_scores(q, k) * math.sqrt(q.shape[-1]) / int(math.sqrt(q.shape[-1]))
                ),
            ),
            Mistake(
                "your positions count down: row t is turned by position T - 1 - t, so every "
                "offset comes out negated. Row t is at position t, counting up from 0",
                _rope_reversed,
                needs=_COUNTS_DOWN,
            ),
            Mistake(
                # The same scores as positions counting down (every offset negated), from
                # code whose positions show no reversal: a rope turning by -θ.
                "every offset comes out negated, and your positions show no reversal: the rope you call turns each pair the "
                "wrong way, by -θ instead of +θ (the signs of its two sine terms swapped), "
                "which negates every offset the same way. Run check_rope on your rope from "
                "5.6 first: which way does the chapter turn a pair at position t?",
                _rope_backwards,
            ),
            *(
                Mistake(
                    "queries and keys are turned by different positions: your "
                    f"{late} are one position further than your {early} (positions from 1 "
                    f"for the {late}, from 0 for the {early}), so every offset is off by one. "
                    "Both use the same positions, 0 to T - 1",
                    lambda q, k, shift=shift: _rope_at(
                        q, k, np.arange(len(q)) + shift[0], np.arange(len(k)) + shift[1]
                    ),
                )
                for early, late, shift in (("queries", "keys", (0, 1)), ("keys", "queries", (1, 0)))
            ),
            Mistake(
                "your scores are the plain q kᵀ / √d: the rotation never reached them "
                "(rotated after the dot product, not at all, or every row turned by the "
                "same angle, which cancels in each qᵢ·kⱼ). Which inputs must your rope "
                "turn before they meet in the product, and by which position is row t "
                "turned?",
                lambda q, k: q @ k.T / math.sqrt(q.shape[-1]),
            ),
            Mistake(
                "you returned the transposed scores (keys × queries): row t must be query "
                "t, its scores against every key along the row. Which operand of the product "
                "gives the rows?",
                lambda q, k: _rope_scores(q, k).T,
            ),
            Mistake(
                "your scores are (d, d): the transposed rotated queries times the keys sum "
                "over the positions. A score compares one query with one key over their "
                "features: (T, d) @ (d, T) -> (T, T)",
                lambda q, k: (
                    apply_rope(q, np.arange(len(q))).T
                    @ apply_rope(k, np.arange(len(k)))
                    / math.sqrt(q.shape[-1])
                ),
            ),
            Mistake(
                "you paired query t with key t only, one score per position (the diagonal "
                "of the score matrix): scores pair every query with every key, a (T, T) "
                "matrix with row t = query t against all T keys. Which product of the "
                "rotated (T, d) arrays gives that?",
                lambda q, k: np.diagonal(_rope_scores(q, k)).copy(),
            ),
            Mistake(
                "you returned softmax weights (each row sums to 1): the exercise asks for "
                "the scaled scores themselves, before any softmax",
                lambda q, k: _softmax_rows(_rope_scores(q, k)),
            ),
            *(
                Mistake(
                    f"you rotated the {who} by -t, the conjugate: rotate both queries and "
                    "keys by +t, each row by its own position; the dot product of the two "
                    "rotated rows brings in the offset between them by itself, nothing needs "
                    "turning back",
                    lambda q, k, signs=signs: (
                        apply_rope(q, signs[0] * np.arange(len(q)))
                        @ apply_rope(k, signs[1] * np.arange(len(k))).T
                        / math.sqrt(q.shape[-1])
                    ),
                )
                for who, signs in (("keys", (1, -1)), ("queries", (-1, 1)))
            ),
            Mistake(
                "the keys are rotated by other positions than the queries: row t of q and "
                "row t of k are both at position t",
                lambda q, k: (
                    apply_rope(q, np.arange(len(q)))
                    @ apply_rope(k, np.arange(len(k))[::-1]).T
                    / math.sqrt(q.shape[-1])
                ),
            ),
        ),
        error_hints=(
            ("could not broadcast", _scores_rotated_hint),
            ("could not be broadcast", _scores_rotated_hint),
            (
                "0-dimensional",
                "`rope` got a single number where it indexes an array of positions: its "
                "second argument is the positions of the rows, one per row of q (not T, "
                "their count)",
            ),
        ),
        hint="which rows are rotated, by which positions, and which scale do scaled scores "
        "use? Compare with exercise 5.6 and the chapter's section \"Rotary position "
        'embedding (RoPE)"',
        equivalent=tuple(
            (key, "q and k are (T, d): the same T, the same d, and axis -2 is axis 0")
            for key in (
                "size: q.shape[-2] in positions = np.arange(q.shape[-2]) -> q.shape[0]",
                "size: q.shape[-1] in return q_rot @ k_rot.T / np.sqrt(q.shape[-1]) -> q.shape[1]",
                "input: q in positions = np.arange(q.shape[-2]) -> k",
                "input: q in return q_rot @ k_rot.T / np.sqrt(q.shape[-1]) -> k",
            )
        ),
        properties=(Property(_scores_scaled), Property(_scores_repeated)),
        atol=1e-8,
    )
)


def check_rope_scores(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(q, k)``: scaled scores of RoPE-rotated queries and keys, ``(T, T)``.

    Taught in: chapters/05_positional.ipynb (exercise in exercises/05_positional.ipynb)
    """
    return ROPE_SCORES.check(fn)


# ---- 5.8 and 5.9: a positional-encoding layer (nn.Module) -----------------------------

MAX_LEN = 16
"""The ``max_len`` the learner's layer is built with in every case."""


def _run_layer(cls: Any, x: torch.Tensor) -> torch.Tensor:
    """One case for a class (see :func:`.modules.adapt`): ``cls(D, MAX_LEN)(x)``."""
    return cls(x.shape[-1], MAX_LEN)(x)


def _pe_like(x: torch.Tensor, start: int = 0) -> torch.Tensor:
    T, D = x.shape[-2], x.shape[-1]
    return torch.from_numpy(sinusoidal_encoding(start + T, D)[start:]).to(x.dtype)  # (T, D)


def _layer_cases() -> tuple[Case, ...]:
    g = torch.Generator().manual_seed(5)
    return (
        Case("a batch (2, 5, 8), float32", {"x": torch.randn(2, 5, 8, generator=g)}),
        Case(
            "one sentence (1, 7, 6), float64",
            {"x": torch.randn(1, 7, 6, generator=g, dtype=torch.float64)},
        ),
        Case("odd d_model (3, 4, 5)", {"x": torch.randn(3, 4, 5, generator=g)}),
        Case("T = max_len (2, 16, 4)", {"x": torch.randn(2, MAX_LEN, 4, generator=g)}),
    )


_LAYER_MISTAKES = (
    Mistake(
        "you returned the table alone: the layer adds it to the token vectors, x + PE[:T]",
        lambda x: _pe_like(x),
    ),
    Mistake(
        "you returned the table alone (broadcast to x's shape): the layer adds it to the "
        "token vectors, x + PE[:T]",
        lambda x: _pe_like(x).expand_as(x),
    ),
    Mistake(
        "your table is sinusoidal_encoding(d_model, max_len), its arguments swapped: they "
        "are (length, d_model), so the table's rows are positions and its columns features",
        lambda x: (
            x
            + torch.from_numpy(sinusoidal_encoding(x.shape[-1], MAX_LEN))
            .T[: x.shape[-2]]
            .to(x.dtype)
        ),
    ),
    Mistake(
        "you multiplied the token vectors by the table; add it: x + PE[:T]",
        lambda x: x * _pe_like(x),
    ),
    Mistake(
        "your table starts at position 1; the first token is at position 0 (PE[0] = 0, 1, 0, 1, ...)",
        lambda x: x + _pe_like(x, start=1),
    ),
    Mistake(
        "you added rows 1 to T of the table: the first token is at position 0, so it takes "
        "row 0, and T tokens take rows 0 .. T-1 (with T = max_len, rows 1 .. T run past "
        "the table's end)",
        lambda x: (
            x
            + torch.from_numpy(sinusoidal_encoding(MAX_LEN, x.shape[-1]))[1 : x.shape[-2] + 1].to(
                x.dtype
            )
        ),
    ),
    Mistake(
        "you added the last T rows of the table, positions max_len - T to max_len - 1: "
        "token t is at position t, so the T tokens take the table's rows from its start, "
        "0 to T - 1",
        lambda x: (
            x
            + torch.from_numpy(sinusoidal_encoding(MAX_LEN, x.shape[-1]))[
                MAX_LEN - x.shape[-2] :
            ].to(x.dtype)
        ),
    ),
    Mistake(
        "you read x as (T, B, D), sequence first (as nn.Transformer's default): you took "
        "as many rows as x.shape[0], the batch size, and broadcast them over axis 1, so "
        "batch item b gets PE(b) at every one of its tokens. Here x is (B, T, D): the "
        "positions are on axis 1, and one row per position adds along it",
        lambda x: (
            x
            + torch.from_numpy(sinusoidal_encoding(x.shape[0], x.shape[-1]))[:, None, :].to(x.dtype)
        ),
    ),
    Mistake(
        "you scaled x by √D first (as the paper's embedding layer does): this layer adds "
        "the table to the token vectors unchanged, x + PE[:T]",
        lambda x: x * math.sqrt(x.shape[-1]) + _pe_like(x),
    ),
    Mistake(
        "you added the table twice: the layer adds PE[:T] once, x + PE[:T]",
        lambda x: x + 2 * _pe_like(x),
    ),
    Mistake(
        "you concatenated the table to the token vectors; the layer adds it, so the "
        "output keeps D features",
        lambda x: torch.cat([x, _pe_like(x).expand(x.shape[0], -1, -1)], dim=-1),
    ),
)


def _rows_taken_hint(said: str) -> str:
    """The sizes torch names in "The size of tensor a (5) must match the size of tensor b
    (10) at non-singleton dimension 1": a number of rows that is neither x's T nor the
    table's max_len is a fixed number typed into the slice."""
    found = re.search(r"tensor a \((\d+)\) must match the size of tensor b \((\d+)\)", said)
    axis = re.search(r"non-singleton dimension (-?\d+)", said)
    if found and axis and int(axis[1]) in (2, -1):
        # the last axis of a (B, T, D) sum: x's features against the table's columns
        a, b = int(found[1]), int(found[2])
        if b != MAX_LEN:
            return (
                f"x has {a} features (its last axis), and the rows you added have {b} "
                "columns: the table's columns are its features, and yours were cut. A "
                "slice on the table's second axis keeps some columns of every one of its "
                f"max_len = {MAX_LEN} rows; which axis of the table holds the positions, "
                "and which one did you slice to x's length?"
            )
    if found:
        a, b = int(found[1]), int(found[2])
        if b == MAX_LEN and a != MAX_LEN:
            return (
                f"x has {a} positions, and you added all {MAX_LEN} rows of the table "
                f"(max_len = {MAX_LEN}): whatever you sliced, the table's rows, one per "
                "position, were not cut to x's length. Slicing its second axis cuts the "
                "features, not the positions; how many rows does this x need?"
            )
        for rows, positions in ((b, a), (a, b)):
            if rows not in (positions, MAX_LEN) and positions != MAX_LEN:
                return (
                    f"x has {positions} positions, and you added {rows} rows of the table: "
                    "the number of rows must follow x's positions, its axis 1. Is yours a "
                    "fixed number of rows (which fits one length only), or the size of "
                    "another axis of x (axis 0 the batch, axis 2 the features)?"
                )
    return (
        "the table and x do not line up where they are added: x has T positions on "
        "its axis 1 and the table max_len rows; check which rows you take, and along "
        "which axis of x they are added"
    )


def _row_index_hint(said: str) -> str | None:
    """torch's "index 16 is out of bounds for dimension 0 with size 16" on the case with
    T = max_len: the table indexed at x's length (one row, past the last), not sliced."""
    found = re.search(r"index (\d+) is out of bounds for dimension 0", said)
    if not found or int(found[1]) != MAX_LEN:
        return None
    return (
        f"x has T = max_len = {MAX_LEN} positions here, and your forward reads row {MAX_LEN} "
        f"of the table, one past its last row ({MAX_LEN - 1}): an index such as [T] picks "
        "one row (row T, on every position), where the T positions take rows 0 to T - 1, one "
        "each. Which rows does your forward take from the table?"
    )


def _one_row_everywhere(outputs: Any, case: Case) -> str | None:
    """Forensics on a layer's output: x plus one row of the table at every position (an
    index such as ``[0]`` on the (T, D) slice), where position t takes row t."""
    got = np.asarray(outputs["output"], dtype=np.float64)
    x = case.inputs["x"].detach().double().numpy()
    if got.shape != x.shape or x.shape[-2] < 2:
        return None
    added = got - x  # (B, T, D)
    if not np.allclose(added, added[:, :1, :], atol=1e-4):
        return None
    table = sinusoidal_encoding(MAX_LEN, x.shape[-1])
    rows = [r for r in range(MAX_LEN) if np.allclose(added[:, 0, :], table[r], atol=1e-4)]
    if not rows:
        return None
    r, (batch, length) = rows[0], x.shape[:2]
    return (
        f"on x of shape {tuple(x.shape)}, every position got the same row of the table, "
        f"row {r}: token t must get row t, so the T = {length} positions take rows 0 to "
        f"T - 1, one each. An index such as [{r}] picks a single row of the table; "
        "what does your forward add for this batch of "
        f"{batch}, and does a (T, D) slice need any change to line up with a (B, T, D) x?"
    )


_LAYER_VALUES = Grader(
    name="positional_encoding",
    signature="PositionalEncoding(d_model, max_len)(x) with x: (B, T, D) -> (B, T, D)",
    reference=adapt(_run_layer, SinusoidalPositionalEncoding),
    cases=_layer_cases(),
    mistakes=_LAYER_MISTAKES,
    error_hints=(
        # torch's wording of 5.1's odd-D slip, in a table built with torch in __init__
        ("must match the existing size", lambda said: _odd_torch_table_hint(said)),
        ("could not broadcast", _table_broadcast_hint),
        ("must match the size", lambda said: _rows_taken_hint(said)),
        (f"out of bounds for dimension 0 with size {MAX_LEN}", lambda said: _row_index_hint(said)),
    ),
    properties=(Property(_one_row_everywhere),),
    hint="compare your output minus x with sinusoidal_encoding(T, D) on a random batch: "
    "which rows of the table does forward use, with which dtype, and how do they meet x, "
    "unchanged? The "
    'chapter\'s section "Sinusoidal encoding" adds the table to the tokens',
    solution="PositionalEncoding",
    wrap=lambda cls: adapt(_run_layer, cls),
    equivalent=(
        (
            "size: x.shape[-2] in T = x.shape[-2] -> x.shape[1]",
            "x is (B, T, D): axis 1 is axis -2",
        ),
    ),
    atol=1e-6,
)


def _table_shape(layer: torch.nn.Module, err: Exception) -> Finding | None:
    """A layer that failed on x: (1, 3, 4), built as (d_model=4, max_len), whose table is
    stored in a shape its forward does not expect (the arguments of the table swapped, or
    an axis for the batch in front)."""
    shapes = [tuple(b.shape) for b in layer.buffers() if b is not None]
    said = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
    if (4, MAX_LEN) in shapes:
        return Finding(
            EXCEPTION,
            f"your table has shape (4, {MAX_LEN}) in PositionalEncoding(4, {MAX_LEN}), "
            f"and forward raised {said}",
            "your table is (d_model, max_len): sinusoidal_encoding takes (length, d_model); "
            "build it with max_len rows of d_model features",
        )
    if (1, MAX_LEN, 4) in shapes:
        return Finding(
            EXCEPTION,
            f"your table has shape (1, {MAX_LEN}, 4) in PositionalEncoding(4, {MAX_LEN}), "
            f"and forward raised {said}",
            "your buffer has an axis of size 1 in front, (1, max_len, D): slicing its first "
            "axis takes that axis, not T positions. Store the table as (max_len, D), or "
            "slice along the positions' axis",
        )
    return None


def _table_misplaced(layer: torch.nn.Module, out: Any) -> Finding | None:
    """A layer that ran on x = zeros (1, 3, 4), built as (d_model=4, max_len), and returned
    a wrong output whose cause shows: a table built with the arguments of
    sinusoidal_encoding swapped, or rows (T, 1, D) that broadcast along the batch axis."""
    right = torch.from_numpy(sinusoidal_encoding(3, 4))
    if not isinstance(out, torch.Tensor) or (
        out.shape == (1, 3, 4) and torch.allclose(out.double().cpu(), right, atol=1e-5)
    ):
        return None
    swapped = torch.from_numpy(sinusoidal_encoding(4, MAX_LEN))
    for buffer in layer.buffers():
        if buffer is not None and tuple(buffer.shape) == (4, MAX_LEN):
            if torch.allclose(buffer.detach().double().cpu(), swapped, atol=1e-5):
                return Finding(
                    WRONG_VALUES,
                    f"your table has shape (4, {MAX_LEN}) in PositionalEncoding(4, {MAX_LEN}): "
                    f"it is sinusoidal_encoding(4, {MAX_LEN}), {MAX_LEN} features of 4 "
                    "positions",
                    "your table is sinusoidal_encoding(d_model, max_len), its arguments "
                    "swapped: it takes (length, d_model), so build the table with max_len "
                    "rows of d_model features (forward's slicing is not the problem)",
                )
    if tuple(out.shape) == (3, 3, 4):
        return Finding(
            WRONG_SHAPE,
            f"for x of shape (1, 3, 4), PositionalEncoding(4, {MAX_LEN}) returns shape (3, 3, 4)",
            "the rows you add have their 3 positions on axis 0, x's batch axis, with an axis "
            "of size 1 after them, shape (T, 1, D): they broadcast against x's T positions "
            "instead of adding to them. A (T, D) slice of the table already broadcasts over "
            "(B, T, D); an axis added for the batch goes in front of the positions",
        )
    return None


def _off_device(cls: type) -> Finding | None:
    """Move a fresh layer to PyTorch's ``meta`` device (it checks devices as CUDA does, on
    any machine) and run it there: a forward that builds its rows anew on the CPU, instead
    of reading the buffer that moved with the layer, fails."""
    try:
        layer = cls(4, MAX_LEN).to("meta")
    except Exception:
        return None  # a layer that cannot be moved at all is not this check's concern
    try:
        layer(torch.zeros(1, 3, 4, device="meta"))
    except NotImplementedError:
        raise
    except Exception as err:
        said = str(err).splitlines()[0] if str(err) else type(err).__name__
        if "device" not in said.lower():
            return None
        return Finding(
            WRONG_TYPE,
            f"moved to another device with .to(...), your layer's forward raised "
            f"{type(err).__name__}: {said}",
            "forward adds a tensor that stays on the CPU: it builds the rows anew (from "
            "NumPy, or with torch.tensor) instead of reading the buffer, which moves with "
            "the layer. Take the rows you add from self.pe",
        )
    return None


def _inspect_layer(cls: type) -> Finding | None:
    """Build the layer and run it once; its table must be a buffer, not a parameter."""
    try:
        layer = cls(4, MAX_LEN)
    except NotImplementedError:
        raise
    except Exception as err:
        return building_error(
            err, f"PositionalEncoding(4, {MAX_LEN})", "PositionalEncoding(d_model, max_len)"
        )
    before = [tuple(b.shape) for b in layer.buffers() if b is not None]
    try:
        out = layer(torch.zeros(1, 3, 4))
    except NotImplementedError:
        raise
    except Exception as err:
        found = _table_shape(layer, err)
        if found is not None:
            return found
        # otherwise reported, with its case and hints, by the value checks
    else:
        if isinstance(out, np.ndarray):
            return Finding(
                WRONG_TYPE,
                "for a tensor x of shape (1, 3, 4), your layer's forward returns a NumPy array",
                "forward must return a tensor: the next layer, the loss and backward all "
                "need one, on x's device and still in the autograd graph. Converting the "
                "sum to NumPy (with .detach() before it) cuts both: where does your forward "
                "leave torch?",
            )
        found = _table_misplaced(layer, out)
        if found is not None:
            return found
    after = [tuple(b.shape) for b in layer.buffers() if b is not None]
    if before and after != before and any(MAX_LEN in shape for shape in before):
        return Finding(
            WRONG_SHAPE,
            f"your table has shape {before[0]} after PositionalEncoding(4, {MAX_LEN}) is "
            f"built, and {after[0] if after else None} after one forward call on x of "
            "shape (1, 3, 4)",
            "__init__ builds the table right; forward replaces it: an assignment to the "
            "buffer inside forward keeps only the rows of that call, so a longer sentence "
            "later has no rows to add. Keep the rows you add in a local variable and "
            "leave the buffer unchanged",
        )
    half = None
    dtypes = [b.dtype for b in layer.buffers() if b is not None]
    try:
        half = layer(torch.zeros(1, 3, 4, dtype=torch.float16))
    except NotImplementedError:
        raise
    except Exception:
        pass  # a failure in half precision alone is not this exercise's concern
    changed = [b.dtype for b in layer.buffers() if b is not None]
    if half is not None and changed != dtypes:
        return Finding(
            WRONG_VALUES,
            f"after one forward call on a float16 x, your table's dtype is {changed[0]} "
            f"(it was {dtypes[0]})",
            "forward replaces the stored table with its converted copy (an assignment to "
            "the buffer inside forward): after a float16 call every later call adds "
            "float16-rounded positions, whatever its own dtype. Keep the converted rows in "
            "a local variable and leave the buffer unchanged",
        )
    if isinstance(half, torch.Tensor) and half.dtype != torch.float16:
        return Finding(
            WRONG_TYPE,
            f"a float16 x comes back as {half.dtype}",
            "the output must keep the input's precision (float16 in, float16 out): "
            "convert the rows of the table you add to the input's dtype in forward, "
            "instead of fixing the table's dtype once",
        )
    if any(p.requires_grad for p in layer.parameters()):
        return Finding(
            WRONG_TYPE,
            "your layer has trainable parameters",
            "the sinusoidal table is fixed: store it with self.register_buffer(...), "
            "not nn.Parameter, so that the optimizer never changes it",
        )
    if any(buffer is None for buffer in getattr(layer, "_buffers", {}).values()):
        return Finding(
            WRONG_TYPE,
            "your layer's buffer holds None, not the table",
            "register_buffer returns None: `self.pe = self.register_buffer('pe', table)` "
            "registers the table and then replaces it by None; call "
            "self.register_buffer('pe', table) without assigning its result",
        )
    if not list(layer.buffers()):
        return Finding(
            WRONG_TYPE,
            "your table is not a buffer of the layer",
            "store it with self.register_buffer('pe', table): a plain tensor "
            "attribute stays on the CPU when the layer is moved with .to('cuda')",
        )
    shapes = [tuple(b.shape) for b in layer.buffers()]
    if not any(MAX_LEN in shape for shape in shapes):
        shape = shapes[0]
        instead = " (d_model, where max_len belongs?)" if shape[:1] == (4,) else ""
        return Finding(
            WRONG_SHAPE,
            f"your table has shape {shape} in PositionalEncoding(4, {MAX_LEN}): none of its "
            f"axes holds max_len = {MAX_LEN} positions",
            f"the table has one row per position, max_len of them; yours has {shape[0]}"
            f"{instead}, so a sentence longer than that has no rows to add. Which length "
            "did you build the table for?",
        )
    found = _off_device(cls)
    if found is not None:
        return found
    names = [name for name, _ in layer.named_buffers()]
    if "pe" not in names:
        listed = ", ".join(f"'{n}'" for n in names)
        return Finding(
            WRONG_TYPE,
            f"your layer's buffer is named {listed}, not 'pe'",
            "the statement stores the table under the name 'pe' (code that uses the layer "
            "reads layer.pe, and a saved state_dict has that key): register it under that "
            "name",
        )
    return None


POSITIONAL_ENCODING = GRADERS.add(
    ModuleExercise(
        _LAYER_VALUES,
        _run_layer,
        example="check_positional_encoding(PositionalEncoding)",
        inspect=_inspect_layer,
        not_attempted="not attempted yet: replace each `raise NotImplementedError(...)` (in "
        "__init__ and forward) with your code, then run this cell again",
    )
)


def check_positional_encoding(cls: type) -> CheckResult:
    """Check the class ``cls``: ``cls(d_model, max_len)(x) == x + PE[:T]``, table a buffer.

    Taught in: chapters/05_positional.ipynb (exercise in exercises/05_positional.ipynb)
    """
    return POSITIONAL_ENCODING.check(cls)


summary = GRADERS.summary
"""``summary()``: the score table of every chapter 5 exercise, checked or not."""
