"""Graders for chapter 2's exercises: dot product, cosine similarity, softmax, self-attention.

Each grader compares the learner's function with the attnlab reference on seeded cases and
knows the planted mistakes beginners make (see :mod:`attnlab.grading.pipeline`). The
notebook imports the ``check_*`` functions and ``summary`` (the chapter's score table).

Taught in: exercises/02_similarity.ipynb
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..attention import scaled_dot_product_attention
from ..similarity import cosine_similarity, dot, softmax
from .pipeline import Grader
from .registry import ChapterGraders
from .results import CheckResult
from .specs import Case, Mistake

__all__ = [
    "GRADERS",
    "check_cosine_similarity",
    "check_dot",
    "check_self_attention",
    "check_softmax",
    "summary",
]

GRADERS = ChapterGraders(__name__)
"""Chapter 2's exercises, in the order of the notebook."""

_KEPT_AXIS = (
    "you kept the summed axis (keepdims=True): the result should have shape (...), one "
    "number per pair; drop keepdims"
)


def _rng() -> np.random.Generator:
    return np.random.default_rng(2)


_BATCHED_VECTOR_HINTS = (
    (
        "mismatch in its core dimension",
        "@ and np.dot multiply matrices; for vectors stored along the last axis, multiply "
        "elementwise and sum over that axis: np.sum(a * b, axis=-1)",
    ),
    (
        "not aligned",
        "@ and np.dot multiply matrices; for vectors stored along the last axis, multiply "
        "elementwise and sum over that axis: np.sum(a * b, axis=-1)",
    ),
)


def _vector_pair_cases(rng: np.random.Generator) -> list[Case]:
    """Pairs of random vectors along the last axis: one pair, rows of a matrix, a batch."""
    shapes = {"two vectors": (5,), "rows of a matrix": (3, 5), "a batch": (2, 3, 4)}
    return [
        Case(label, {"a": rng.standard_normal(s), "b": rng.standard_normal(s)})
        for label, s in shapes.items()
    ]


def _dot_cases() -> tuple[Case, ...]:
    rng = _rng()
    cases = _vector_pair_cases(rng)
    cases.append(Case("size-1 vectors", {"a": rng.standard_normal((4, 1)), "b": np.ones((4, 1))}))
    cases.append(
        Case(
            "very different lengths",
            {"a": 1e3 * rng.standard_normal((4, 6)), "b": 1e-2 * rng.standard_normal((4, 6))},
        )
    )
    return tuple(cases)


DOT = GRADERS.add(
    Grader(
        name="dot",
        signature="dot(a, b) with a, b: (..., d) -> (...)",
        reference=dot,
        cases=_dot_cases(),
        mistakes=(
            Mistake(
                "you multiplied elementwise but did not sum: add up a * b over the last axis "
                "(np.sum(a * b, axis=-1))",
                lambda a, b: a * b,
            ),
            Mistake(
                "you summed over the first axis; the vector entries are on the last axis: axis=-1",
                lambda a, b: np.sum(a * b, axis=0),
            ),
            Mistake(
                "you summed over every axis (one number for the whole batch); sum over the "
                "last axis only: axis=-1",
                lambda a, b: np.sum(a * b),
            ),
            Mistake(
                "you summed a + b; the dot product sums the products a * b",
                lambda a, b: np.sum(a + b, axis=-1),
            ),
            Mistake(_KEPT_AXIS, lambda a, b: np.sum(a * b, axis=-1, keepdims=True)),
        ),
        hint="the dot product multiplies matching entries and sums them: Σ_i a_i b_i, "
        "over the last axis",
        error_hints=_BATCHED_VECTOR_HINTS,
    )
)


def check_dot(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(a, b)``: the dot product along the last axis, ``(..., d), (..., d) -> (...)``.

    Taught in: chapters/02_similarity.ipynb (exercise in exercises/02_similarity.ipynb)
    """
    return DOT.check(fn)


def _norm(x: np.ndarray, keepdims: bool = False) -> np.ndarray:
    return np.sqrt(np.sum(x * x, axis=-1, keepdims=keepdims))


def _cosine_cases() -> tuple[Case, ...]:
    rng = _rng()
    cases = _vector_pair_cases(rng)
    a = rng.standard_normal((4, 6))
    cases.append(
        Case(
            "very different lengths",
            {"a": 1e3 * a, "b": 1e-2 * rng.standard_normal((4, 6))},
        )
    )
    b = np.concatenate([3.0 * a[:2], -0.5 * a[2:]])  # rows 0, 1 parallel; rows 2, 3 opposite
    cases.append(Case("parallel and opposite vectors", {"a": a, "b": b}))
    return tuple(cases)


COSINE = GRADERS.add(
    Grader(
        name="cosine_similarity",
        signature="cosine_similarity(a, b) with a, b: (..., d) -> (...)",
        reference=cosine_similarity,
        cases=_cosine_cases(),
        mistakes=(
            Mistake(
                "you divided by the length of `a` only; normalise both sides: a·b / (|a| |b|)",
                lambda a, b: np.sum(a * b, axis=-1) / _norm(a),
            ),
            Mistake(
                "you divided by the length of `b` only; normalise both sides: a·b / (|a| |b|)",
                lambda a, b: np.sum(a * b, axis=-1) / _norm(b),
            ),
            Mistake(
                "you returned the dot product: divide it by both lengths, |a| |b|",
                lambda a, b: np.sum(a * b, axis=-1),
            ),
            Mistake(
                "you divided by the squared lengths: the length is the square root of the "
                "sum of squares, |a| = sqrt(Σ a_i²)",
                lambda a, b: np.sum(a * b, axis=-1) / (np.sum(a * a, -1) * np.sum(b * b, -1)),
            ),
            Mistake(
                "you took the norm of the whole array; each vector needs its own length: "
                "np.linalg.norm(a, axis=-1)",
                lambda a, b: np.sum(a * b, axis=-1) / (np.linalg.norm(a) * np.linalg.norm(b)),
            ),
            Mistake(
                "you divided by |a| twice; the denominator is |a| |b|",
                lambda a, b: np.sum(a * b, axis=-1) / _norm(a) ** 2,
            ),
            Mistake(
                "you added the lengths; multiply them: a·b / (|a| |b|)",
                lambda a, b: np.sum(a * b, axis=-1) / (_norm(a) + _norm(b)),
            ),
            Mistake(
                _KEPT_AXIS,
                lambda a, b: (
                    np.sum(a * b, axis=-1, keepdims=True) / (_norm(a, True) * _norm(b, True))
                ),
            ),
        ),
        error_hints=_BATCHED_VECTOR_HINTS,
        hint="cos = a·b / (|a| |b|): the dot product over the last axis, divided by the "
        "product of the two lengths; the result lies in [-1, 1]",
    )
)


def check_cosine_similarity(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(a, b)``: cosine similarity along the last axis, ``(..., d), (..., d) -> (...)``.

    Taught in: chapters/02_similarity.ipynb (exercise in exercises/02_similarity.ipynb)
    """
    return COSINE.check(fn)


def _softmax_reference(x: Any, axis: int = -1, temperature: float = 1.0) -> Any:
    return softmax(x, axis, temperature=temperature)


def _exp_over(z: np.ndarray, axis: int) -> np.ndarray:
    """``exp(z - max)`` along ``axis``: the stable numerator, shared by planted mistakes."""
    return np.exp(z - np.max(z, axis=axis, keepdims=True))


def _normalise(e: np.ndarray, axis: int) -> np.ndarray:
    return e / np.sum(e, axis=axis, keepdims=True)


def _softmax_cases() -> tuple[Case, ...]:
    rng = _rng()

    def logits(*shape: int) -> np.ndarray:
        return 2.0 * rng.standard_normal(shape)

    return (
        Case("a vector", {"x": logits(5)}),
        Case("rows of a matrix", {"x": logits(3, 6)}),
        Case("a square matrix", {"x": logits(4, 4)}),
        Case("a batch", {"x": logits(2, 3, 4)}),
        Case("columns", {"x": logits(4, 3)}, {"axis": 0}),
        Case("the middle axis of a batch", {"x": logits(2, 3, 4)}, {"axis": 1}),
        Case("a low temperature", {"x": logits(3, 5)}, {"temperature": 0.5}),
        Case("a high temperature", {"x": logits(2, 6)}, {"temperature": 10.0}),
        Case("a very low temperature", {"x": logits(3, 4)}, {"axis": 0, "temperature": 0.1}),
        Case("logits of 1000", {"x": 1000.0 + logits(2, 4)}),
        Case("logits of -1000", {"x": -1000.0 + logits(2, 4)}),
        Case("rows of 1000 and -1000", {"x": np.array([[1000.0], [-1000.0]]) + logits(2, 4)}),
        # Subtracting any constant per slice is exact on paper; only the max keeps every
        # exponent <= 0 in floating point, whatever the spread and the temperature.
        Case("a wide spread", {"x": np.array([[0.0, 800.0, -800.0], [3.0, -1.0, 2.0]])}),
        Case(
            "logits of 1000 at a low temperature",
            {"x": 1000.0 + logits(2, 4)},
            {"temperature": 0.5},
        ),
        Case(
            "logits of -1000 at a very low temperature",
            {"x": -1000.0 + logits(4, 2)},
            {"axis": 0, "temperature": 0.1},
        ),
    )


SOFTMAX = GRADERS.add(
    Grader(
        name="softmax",
        signature="softmax(x, axis=-1, temperature=1.0) -> weights, the shape of x",
        reference=_softmax_reference,
        cases=_softmax_cases(),
        mistakes=(
            Mistake(
                "overflowed at logits of 1000: subtract the max before exp (e^1000 = inf and "
                "inf/inf = NaN; at -1000, 0/0). softmax(x) = softmax(x - max(x)): the max "
                "cancels in the ratio",
                lambda x, axis=-1, temperature=1.0: (
                    np.exp(x / temperature)
                    / np.sum(np.exp(x / temperature), axis=axis, keepdims=True)
                ),
            ),
            Mistake(
                "you subtracted one max for the whole array, so slices far below it underflow "
                "to 0/0: take the max along `axis`, with keepdims=True",
                lambda x, axis=-1, temperature=1.0: (
                    np.exp(x / temperature - np.max(x / temperature))
                    / np.sum(np.exp(x / temperature - np.max(x / temperature)), axis, keepdims=True)
                ),
            ),
            Mistake(
                "you subtracted the min instead of the max: subtract the max along `axis`, so "
                "that the largest exponent is 0 (with values from -800 to 800, x - min "
                "reaches 1600 and e^1600 = inf)",
                lambda x, axis=-1, temperature=1.0: _normalise(
                    np.exp(x / temperature - np.min(x / temperature, axis, keepdims=True)), axis
                ),
            ),
            Mistake(
                "you subtracted the mean instead of the max: subtract the max along `axis`, so "
                "that the largest exponent is 0 (a value 800 above the mean gives e^800 = inf)",
                lambda x, axis=-1, temperature=1.0: _normalise(
                    np.exp(x / temperature - np.mean(x / temperature, axis, keepdims=True)), axis
                ),
            ),
            Mistake(
                "you subtracted the max of x, but exponentiated x/τ: take the max of the "
                "values you exponentiate (z = x / temperature, then z - max(z)); at τ = 0.5, "
                "logits of 1000 give e^(2000 - 1000) = inf",
                lambda x, axis=-1, temperature=1.0: _normalise(
                    np.exp(x / temperature - np.max(x, axis, keepdims=True)), axis
                ),
            ),
            Mistake(
                "you ignored the `axis` argument (always the last axis): pass axis=axis to "
                "max and sum",
                lambda x, axis=-1, temperature=1.0: softmax(x, -1, temperature=temperature),
            ),
            Mistake(
                "softmax over the wrong axis: you normalised along axis 0; the slices that sum "
                "to 1 run along `axis` (by default the last one, -1)",
                lambda x, axis=-1, temperature=1.0: softmax(x, 0, temperature=temperature),
            ),
            Mistake(
                "you divided by the sum over the whole array; sum along `axis` only "
                "(keepdims=True), so that each slice sums to 1",
                lambda x, axis=-1, temperature=1.0: (
                    _exp_over(x / temperature, axis) / np.sum(_exp_over(x / temperature, axis))
                ),
            ),
            Mistake(
                "you multiplied the logits by the temperature; divide them by it "
                "(x / temperature), so that a high temperature flattens the weights",
                lambda x, axis=-1, temperature=1.0: softmax(x * temperature, axis),
            ),
            Mistake(
                "the temperature had no effect: divide the logits by it before exp",
                lambda x, axis=-1, temperature=1.0: softmax(x, axis),
            ),
            Mistake(
                "you forgot to normalise: divide exp(...) by its sum along `axis` so that "
                "each slice sums to 1",
                lambda x, axis=-1, temperature=1.0: _exp_over(x / temperature, axis),
            ),
        ),
        hint="softmax(x)_i = exp(x_i/τ - m) / Σ_j exp(x_j/τ - m), with m the max of x/τ "
        "along `axis`; the output has the shape of x and sums to 1 along `axis`",
    )
)


def check_softmax(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, axis=-1, temperature=1.0)``: a numerically stable softmax with temperature.

    The output has the shape of ``x``, is non-negative and sums to 1 along ``axis``; logits
    of ±1000 (also at low temperatures) and slices spread from -800 to 800 must not
    overflow. Cases use the defaults, ``axis=0``/``axis=1`` and temperatures from 0.1 to 10
    (always given as keywords).

    Taught in: chapters/02_similarity.ipynb (exercise in exercises/02_similarity.ipynb)
    """
    return SOFTMAX.check(fn)


def _self_attention_reference(x: Any) -> tuple[Any, Any]:
    return scaled_dot_product_attention(x, x, x)


def _scaled_scores(x: np.ndarray, divide_by: float | None = None) -> np.ndarray:
    """``x xᵀ / sqrt(D)`` (or divided by a planted wrong scale)."""
    scale = math.sqrt(x.shape[-1]) if divide_by is None else divide_by
    return x @ x.T / scale  # (T, D) @ (D, T) -> (T, T)


def _attend(
    x: np.ndarray, divide_by: float | None = None, axis: int = -1
) -> tuple[np.ndarray, np.ndarray]:
    """``(out, weights)`` of weightless self-attention, with a planted scale or axis."""
    weights = softmax(_scaled_scores(x, divide_by), axis)  # (T, T)
    return weights @ x, weights  # (T, T) @ (T, D) -> (T, D)


def _attend_unstable(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Planted: a softmax without the max subtraction (overflows on large entries)."""
    e = np.exp(_scaled_scores(x))  # (T, T)
    weights = e / np.sum(e, axis=-1, keepdims=True)
    return weights @ x, weights


def _attend_whole(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Planted: the weights normalised over the whole (T, T) matrix, not per row."""
    e = _exp_over(_scaled_scores(x), -1)  # (T, T)
    weights = e / np.sum(e)
    return weights @ x, weights


def _self_attention_cases() -> tuple[Case, ...]:
    rng = _rng()
    return (
        Case("4 tokens of size 3", {"x": rng.standard_normal((4, 3))}),
        Case("6 tokens of size 8", {"x": rng.standard_normal((6, 8))}),
        Case("5 tokens of size 5", {"x": rng.standard_normal((5, 5))}),
        Case("one token", {"x": rng.standard_normal((1, 4))}),
        Case("large entries", {"x": 30.0 * rng.standard_normal((3, 4))}),
    )


SELF_ATTENTION = GRADERS.add(
    Grader(
        name="self_attention",
        signature="self_attention(x) with x: (T, D) -> (out (T, D), weights (T, T))",
        reference=_self_attention_reference,
        cases=_self_attention_cases(),
        outputs=("out", "weights"),
        mistakes=(
            Mistake(
                "you forgot to scale: divide the scores x xᵀ by sqrt(D) before the softmax",
                lambda x: _attend(x, divide_by=1.0),
            ),
            Mistake(
                "you divided the scores by D; divide by sqrt(D), the square root of the "
                "vector size",
                lambda x: _attend(x, divide_by=x.shape[-1]),
            ),
            Mistake(
                "you multiplied the scores by sqrt(D); divide by it",
                lambda x: _attend(x, divide_by=1.0 / math.sqrt(x.shape[-1])),
            ),
            Mistake(
                "you divided by sqrt(T), the number of tokens; the scale is sqrt(D), the size "
                "of each vector (x.shape[-1])",
                lambda x: _attend(x, divide_by=math.sqrt(x.shape[0])),
            ),
            Mistake(
                "softmax over the wrong axis: each ROW of the weights (one query) must sum to "
                "1, so take the softmax along axis=-1, not over columns",
                lambda x: _attend(x, axis=0),
            ),
            Mistake(
                "overflowed on large entries: your softmax does not subtract the row max "
                "before exp (reuse your stable softmax)",
                _attend_unstable,
            ),
            Mistake(
                "you normalised over the whole matrix; each row of the weights sums to 1 "
                "(softmax along axis=-1)",
                _attend_whole,
            ),
            Mistake(
                "you returned the scores (before the softmax) as `weights`; return the "
                "weights, softmax(scores)",
                lambda x: (_attend(x)[0], _scaled_scores(x)),
            ),
            Mistake(
                "you averaged with the scores; `out` = weights @ x, with the softmax weights",
                lambda x: (_scaled_scores(x) @ x, _attend(x)[1]),
            ),
            Mistake(
                "you used the transposed weights; `out` = weights @ x: row i of out mixes the "
                "rows of x with the weights of query i",
                lambda x: (_attend(x)[1].T @ x, _attend(x)[1]),
            ),
            Mistake(
                "you averaged the scores, not the vectors: `out` = weights @ x",
                lambda x: (_attend(x)[1] @ _scaled_scores(x), _attend(x)[1]),
            ),
            Mistake(
                "you returned x unchanged as `out`; `out` = weights @ x, a weighted average "
                "of the rows of x",
                lambda x: (x, _attend(x)[1]),
            ),
            Mistake(
                "you returned (weights, out); the order is (out, weights)",
                lambda x: _attend(x)[::-1],
            ),
        ),
        hint="scores = x xᵀ / sqrt(D) is (T, T); weights = softmax(scores) along each row; "
        "out = weights @ x is (T, D); return (out, weights)",
    )
)


def check_self_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x)``: weightless self-attention, ``x: (T, D) -> (out (T, D), weights (T, T))``.

    ``weights = softmax(x xᵀ / sqrt(D))`` row by row and ``out = weights @ x``: every token
    becomes a weighted average of all tokens (the queries, keys and values are x itself).

    Taught in: chapters/02_similarity.ipynb (exercise in exercises/02_similarity.ipynb)
    """
    return SELF_ATTENTION.check(fn)


summary = GRADERS.summary
"""``summary()``: the score table of every chapter 2 exercise, checked or not."""
