"""Graders for chapter 3's exercises: queries, keys and values.

Five functions and a module, each compared with the attnlab reference on seeded cases with
the planted mistakes beginners make (see :mod:`attnlab.grading.pipeline`), and three
prediction questions. The module exercise is graded by building the learner's class,
copying the same weights into it and into :class:`attnlab.SelfAttention`, and comparing
outputs, weights and the gradients of every projection.

Taught in: exercises/03_qkv.ipynb
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from ..mechanism.attention import SelfAttention, scaled_dot_product_attention
from ..mechanism.similarity import additive_scores
from .gradients import Recorder, require_gradient
from .modules import adapt, check_class
from .pipeline import Grader
from .questions import Question
from .registry import ChapterGraders
from .results import CheckResult
from .specs import AnswerProblem, Case, Mistake, Property
from .specs import returned as returned_items
from .status import EXCEPTION

__all__ = [
    "GRADERS",
    "check_additive_scores",
    "check_attention",
    "check_attention_torch",
    "check_cross_columns",
    "check_raw_spread",
    "check_self_attention_module",
    "check_slide_keys",
    "check_unscaled_weight",
    "summary",
]

GRADERS = ChapterGraders(__name__, mutants_reviewed=True)
"""Chapter 3's exercises, in the order of the notebook."""


def _rng() -> np.random.Generator:
    return np.random.default_rng(3)


# ---------------------------------------------------------------- 3.1 slide the keys


def _slide_keys_reference(q: np.ndarray, k: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``k_j + (t_j - q·k_j) / |q|² · q``: each key moved along ``q`` to score ``t_j``."""
    shift = (targets - k @ q) / (q @ q)  # (S, d) @ (d,) -> (S,)
    return k + shift[:, None] * q  # (S, 1) * (d,) -> (S, d)


def _slide_cases() -> tuple[Case, ...]:
    rng = _rng()
    return (
        Case(
            "two keys of size 4",
            {
                "q": rng.standard_normal(4),
                "k": rng.standard_normal((2, 4)),
                "targets": np.array([3.0, -1.0]),
            },
        ),
        Case(
            "the worked example (d = 64)",
            {
                "q": rng.standard_normal(64),
                "k": rng.standard_normal((2, 64)),
                "targets": np.array([112.0, 96.0]),
            },
        ),
        Case(
            "five keys, a long query",
            {
                "q": 5.0 * rng.standard_normal(8),
                "k": rng.standard_normal((5, 8)),
                "targets": rng.standard_normal(5),
            },
        ),
        # As many keys as q has entries: a vector of coefficients and q line up by size, so
        # a missing axis gives wrong values here, and `/ q @ q` collapses c to one number.
        Case(
            "three keys of size 3",
            {
                "q": rng.standard_normal(3),
                "k": rng.standard_normal((3, 3)),
                "targets": np.array([2.0, 0.5, -1.5]),
            },
        ),
    )


def _slide_broadcast_hint(message: str) -> str | None:
    found = re.search(r"shapes \((\d+),\) \((\d+),\)", message)
    if found is None:
        return None
    return (
        f"a vector of shape ({found[1]},) met one of shape ({found[2]},) entry by entry. "
        "Where one coefficient per key meets q, each coefficient must scale the whole of "
        "q (a second axis); but `/` and `@` are applied left to right, so a line such as "
        "`a / q @ q` divides by the vector q before the dot product. A vector whose length "
        "is neither the case's number of keys nor q's was not built from the arguments "
        "(the statement's example values typed in?)"
    )


def _one_shift(outputs: dict[str, np.ndarray], case: Case) -> str | None:
    """Every key moved by the same vector, where the targets ask for different moves."""
    (out,) = outputs.values()
    q, k, targets = (np.asarray(case.inputs[n], dtype=np.float64) for n in ("q", "k", "targets"))
    if out.shape != k.shape or len(k) < 2 or not np.all(np.isfinite(out)):
        return None
    moves = out - k
    needed = (targets - k @ q) / (q @ q)
    scale = np.abs(moves).max() + 1e-12
    if np.allclose(moves, moves[0], atol=1e-9 * scale) and np.ptp(needed) > 1e-6:
        return (
            "you moved every key by the same amount (one shift for all keys, from the scores "
            "taken together): each key has its own score and its own target, so each needs "
            "its own coefficient c_j = (target_j - q·k_j) / (q·q), one per key"
        )
    return None


SLIDE_KEYS = GRADERS.add(
    Grader(
        name="slide_keys",
        signature="slide_keys(q, k, targets) with q: (d,), k: (S, d), targets: (S,) -> (S, d)",
        reference=_slide_keys_reference,
        cases=_slide_cases(),
        properties=(Property(_one_shift),),
        mistakes=(
            Mistake(
                "np.outer(q, c) is (d, S), one column per key: reshaped to k's (S, d) its "
                "numbers land on the wrong keys and features. Key j moves by c_j times q, "
                "one row per key: which order of the outer product's operands gives rows?",
                lambda q, k, targets: k + np.outer(q, (targets - k @ q) / (q @ q)).reshape(k.shape),
            ),
            Mistake(
                "you put the new axis on q: q[:, None] is (d, 1), so c * q[:, None] is "
                "(d, S), one column per key, which does not line up with k's (S, d). Each "
                "key (a row of k) gets its own amount c_j: which of the two needs the new "
                "axis?",
                lambda q, k, targets: k + (targets - k @ q) / (q @ q) * q[:, None],
            ),
            Mistake(
                "you divided by the length |q|; adding c·q changes the score by c·|q|², so "
                "divide by q·q",
                lambda q, k, targets: k + ((targets - k @ q) / np.linalg.norm(q))[:, None] * q,
            ),
            Mistake(
                "you did not subtract the keys' current scores: the shift has to make up the "
                "difference between the target and the score the key already has",
                lambda q, k, targets: k + (targets / (q @ q))[:, None] * q,
            ),
            Mistake(
                "you replaced the keys by multiples of q; keep the random part and only "
                "add a multiple of q to each key",
                lambda q, k, targets: (targets / (q @ q))[:, None] * q,
            ),
            Mistake(
                "you divided by d: adding c·q changes the score by c (q·q), and q·q is not d",
                lambda q, k, targets: k + ((targets - k @ q) / len(q))[:, None] * q,
            ),
            Mistake(
                "you returned the coefficients c, one per key: the exercise returns the moved "
                "keys themselves, (S, d)",
                lambda q, k, targets: (targets - k @ q) / (q @ q),
            ),
            Mistake(
                "you rescaled the keys: the scores come out right, but the new key minus the "
                "old one is not a multiple of `q`; move each key along q instead",
                lambda q, k, targets: k * (targets / (k @ q))[:, None],
            ),
            Mistake(
                "np.sum(k * q) without an axis gives one total instead of a score per key: "
                "sum over the last axis",
                lambda q, k, targets: k + ((targets - np.sum(k * q)) / (q @ q))[:, None] * q,
            ),
            Mistake(
                "you divided by the sum of q's entries: adding c·q changes the score by "
                "c (q·q), the sum of the squares of q's entries, so divide by q @ q",
                lambda q, k, targets: k + ((targets - k @ q) / q.sum())[:, None] * q,
            ),
            Mistake(
                "you divided by each key's squared length k_j·k_j: adding c·q changes the "
                "score q·k_j by c (q·q), so the divisor is q's squared length, the same for "
                "every key",
                lambda q, k, targets: k + ((targets - k @ q) / (k * k).sum(-1))[:, None] * q,
            ),
            Mistake(
                "you divided by (q·q)², the fourth power of q's length: adding c·q changes the "
                "score by c (q·q), once",
                lambda q, k, targets: k + ((targets - k @ q) / (q @ q) ** 2)[:, None] * q,
            ),
            Mistake(
                "you added targets_j · q to each key: the coefficient must make up the "
                "difference between the target and the current score, per unit of q·q",
                lambda q, k, targets: k + targets[:, None] * q,
            ),
            Mistake(
                "np.linalg.norm(q ** 2) is the length of the vector of squares, not the "
                "squared length: adding c·q changes the score by c (q·q); divide by q @ q",
                lambda q, k, targets: k + ((targets - k @ q) / np.linalg.norm(q**2))[:, None] * q,
            ),
            Mistake(
                "you slid along the unit vector q/|q| but took the coefficient from the score "
                "against the unit vector: moving by c·q/|q| changes q·k by c·|q|, not c; "
                "slide along q itself and divide by q·q",
                lambda q, k, targets: (
                    k + (targets - k @ (q / np.linalg.norm(q)))[:, None] * (q / np.linalg.norm(q))
                ),
            ),
            Mistake(
                "`/` and `@` have the same precedence and go left to right: `a / q @ q` "
                "divides by the vector q first, then takes a dot product; put the dot "
                "product in parentheses",
                lambda q, k, targets: k + ((targets - k @ q) / q @ q)[:, None] * q,
                needs=r"/\s*[\w.]+\s*@",
            ),
            Mistake(
                "`q * q` is the vector of q's squared entries, shape (d,), not one number: "
                "dividing the (S,) differences by it cannot broadcast; adding c·q changes "
                "the score by c (q·q), the single number `q @ q` (or np.sum(q * q))",
                lambda q, k, targets: k + ((targets - k @ q) / (q * q))[:, None] * q,
                needs=r"q\s*\*\s*q",
            ),
            Mistake(
                "you divided by len(q) on top of q·q: adding c·q moves the score by "
                "c (q·q) and nothing else, so the shift c_j = (target_j - q·k_j) / (q·q) "
                "needs no other factor",
                lambda q, k, targets: k + ((targets - k @ q) / (q @ q))[:, None] * q / len(q),
            ),
            Mistake(
                "your code does not use the `targets` it is given: the statement's example "
                "values (112 and 96) are typed in, and every case has its own targets",
                lambda q, k, targets: (
                    k + ((np.array([112.0, 96.0]) - k @ q) / (q @ q))[:, None] * q
                ),
            ),
            Mistake(
                "a coefficient per key, shape (S,), multiplied q, shape (d,), entry by entry: "
                "give the coefficients a second axis, (S, 1), so that each one scales the "
                "whole of q",
                lambda q, k, targets: k + ((targets - k @ q) / (q @ q)) * q,
                # not for code that already gives them that axis: its mistake is elsewhere
                needs=r"^(?![\s\S]*(\[\s*:\s*,\s*None\s*\]|\[\s*\.\.\.\s*,\s*None\s*\]|newaxis))",
            ),
            Mistake(
                "your scores are summed over axis 0, the keys: `(k * q).sum(axis=0)` adds up "
                "the keys entry by entry and gives one number per entry of q, shape (d,), "
                "where there is one score per key, shape (S,); sum over the other axis",
                lambda q, k, targets: k + ((targets - (k * q).sum(axis=0)) / (q @ q))[:, None] * q,
                needs=r"axis\s*=\s*0|sum\(\s*0\s*\)",
            ),
            Mistake(
                "you divided by q * q, the vector of q's squared entries, entry by entry: "
                "adding c·q changes the score by c times one number, the sum of those "
                "squares (q's squared length)",
                lambda q, k, targets: k + (targets - k @ q)[:, None] / (q * q) * q,
            ),
            Mistake(
                "the shift has the wrong sign: it moves each score away from its target",
                lambda q, k, targets: k + ((k @ q - targets) / (q @ q))[:, None] * q,
            ),
        ),
        error_hints=(
            (
                "could not be broadcast together with shapes",
                _slide_broadcast_hint,
            ),
        ),
        hint="write the score of the moved key, q·(k_j + c_j q), as the old score plus a term "
        'in c_j, and solve for c_j; the chapter\'s section "The worked example, exactly" '
        "moves its keys this way",
        equivalent=(
            (
                "transpose: q @ q in shift = (targets - k @ q) / (q @ q) -> q.T @ q",
                "q is 1-D: .T leaves it as it is",
            ),
            (
                "transpose: q @ q in shift = (targets - k @ q) / (q @ q) -> q @ q.T",
                "q is 1-D: .T leaves it as it is",
            ),
            (
                "transpose: k @ q in shift = (targets - k @ q) / (q @ q) -> k @ q.T",
                "q is 1-D: .T leaves it as it is",
            ),
        ),
    )
)


def check_slide_keys(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(q, k, targets)``: keys moved along ``q`` so that ``q · k_j = targets[j]``.

    Taught in: chapters/03_qkv.ipynb (exercise in exercises/03_qkv.ipynb)
    """
    return SLIDE_KEYS.check(fn)


# ---------------------------------------------------------------- 3.2 attention, NumPy


def _attention_reference(q: Any, k: Any, v: Any, mask: Any = None) -> tuple[Any, Any]:
    return scaled_dot_product_attention(q, k, v, mask)


def _attending(**planted: Any) -> Callable[..., Any]:
    """A planted attention ``(q, k, v, mask=None)``: :func:`_planted_attend` with ``planted``."""
    return lambda q, k, v, mask=None: _planted_attend(q, k, v, mask, **planted)


def _planted_attend(
    q: Any,
    k: Any,
    v: Any,
    mask: Any = None,
    *,
    divide_by: float | None = None,
    axis: int | None = -1,
    fill: float = -math.inf,
    invert: bool = False,
    after: bool = False,
    zero_empty: bool = True,
    stable: bool = True,
    additive: bool = False,
    empty_test: str = "any",
) -> tuple[Any, Any]:
    """Scaled dot-product attention in NumPy or torch (as ``q``), with one planted change
    at a time (``axis`` None: normalised over the whole array; ``empty_test="all"``: rows
    with any hidden key zeroed)."""
    xp = torch if isinstance(q, torch.Tensor) else np
    d = q.shape[-1]
    scores = q @ k.swapaxes(-1, -2) / (math.sqrt(d) if divide_by is None else divide_by)
    visible = None if mask is None else (~mask if invert else mask)
    if visible is not None and additive:
        scores, visible = scores + visible, None  # a boolean mask added: +1 where visible
    if visible is not None and not after:
        scores = xp.where(visible, scores, fill)  # (..., T, S)
    weights = (_torch_softmax if xp is torch else _np_softmax)(scores, axis, stable)
    if visible is not None and after:
        weights = weights * visible
    if (
        visible is not None
        and zero_empty
        and not after
        and (fill == -math.inf or empty_test != "any")
    ):
        seen = (visible.any if empty_test == "any" else visible.all)(-1, keepdims=True)
        weights = xp.where(seen, weights, 0.0)
    return weights @ v, weights  # (..., T, S) @ (..., S, d_v) -> (..., T, d_v)


def _np_softmax(scores: np.ndarray, axis: int | None, stable: bool) -> np.ndarray:
    with np.errstate(all="ignore"):
        e = np.exp(scores - np.max(scores, axis=axis, keepdims=True) if stable else scores)
        return e / np.sum(e, axis=axis, keepdims=True)


def _torch_softmax(scores: torch.Tensor, axis: int | None, stable: bool) -> torch.Tensor:
    if axis is None:  # one softmax over every entry of the array
        return torch.softmax(scores.flatten(), 0).reshape(scores.shape)
    if stable:
        return torch.softmax(scores, dim=axis)
    e = torch.exp(scores)  # e^large = inf, inf / inf = NaN, read as 0 (nan_to_num)
    return torch.nan_to_num(e / e.sum(dim=axis, keepdim=True))


def _attention_cases(kind: str) -> tuple[Case, ...]:
    rng = _rng()

    def arr(*shape: int, scale: float = 1.0) -> Any:
        x = scale * rng.standard_normal(shape)
        return x if kind == "numpy" else torch.from_numpy(x)

    def mask(m: np.ndarray) -> Any:
        return m if kind == "numpy" else torch.from_numpy(m)

    causal = np.tril(np.ones((4, 4), dtype=bool))  # (T, S): True = may attend
    padding = np.ones((2, 1, 5), dtype=bool)  # (B, 1, S): sequence 1 has 2 padded keys
    padding[1, 0, 3:] = False
    empty = np.ones((3, 4), dtype=bool)
    empty[1] = False  # query 1 sees no key at all
    middle = np.ones((3, 5), dtype=bool)
    middle[:, 2] = False  # key 2, in the middle, hidden from every query
    # Rows far apart: every key has a first feature of 1, and the queries' first features
    # put row 0's scores near +1000 and row 1's near -1000. One max for the whole matrix
    # leaves row 1 with exp(-2000) = 0 everywhere: each row needs its own max.
    far_k = np.concatenate([np.ones((4, 1)), rng.standard_normal((4, 3))], axis=1)
    far_q = np.concatenate([[[2000.0], [-2000.0], [0.0]], rng.standard_normal((3, 3))], axis=1)
    return (
        Case("3 queries, 4 keys", {"q": arr(3, 5), "k": arr(4, 5), "v": arr(4, 2)}),
        Case("a batch", {"q": arr(2, 3, 8), "k": arr(2, 6, 8), "v": arr(2, 6, 4)}),
        Case(
            "a causal mask",
            {"q": arr(4, 6), "k": arr(4, 6), "v": arr(4, 3), "mask": mask(causal)},
        ),
        Case(
            "padded keys (mask of shape (B, 1, S))",
            {"q": arr(2, 3, 4), "k": arr(2, 5, 4), "v": arr(2, 5, 2), "mask": mask(padding)},
        ),
        Case(
            "large scores",
            {"q": arr(3, 4, scale=30.0), "k": arr(3, 4, scale=30.0), "v": arr(3, 2)},
        ),
        Case(
            "a query with no visible key",
            {"q": arr(3, 4), "k": arr(4, 4), "v": arr(4, 2), "mask": mask(empty)},
        ),
        Case(
            "a hidden key in the middle",
            {"q": arr(3, 6), "k": arr(5, 6), "v": arr(5, 3), "mask": mask(middle)},
        ),
        Case(
            "rows of scores far apart",
            {"q": mask(far_q), "k": mask(far_k), "v": arr(4, 2)},
        ),
        Case(
            "a batch of one",
            {"q": arr(1, 2, 3), "k": arr(1, 4, 3), "v": arr(1, 4, 5)},
        ),
    )


_MASK_HINT = (
    "the mask is boolean with True = may attend, broadcastable to the scores (..., T, S): "
    "the hidden scores become -inf before the softmax"
)


def _scaled_late(q, k, v, mask=None, *, on_output: bool = False):
    """The scale applied after the softmax: to the weights, or to the output."""
    out, weights = _planted_attend(q, k, v, mask, divide_by=1.0)
    if on_output:
        return out / math.sqrt(q.shape[-1]), weights
    weights = weights / math.sqrt(q.shape[-1])
    return weights @ v, weights


_ATTENTION_MISTAKES = (  # NumPy and torch alike: _planted_attend follows q
    Mistake(
        "you scaled after the softmax: dividing the weights by sqrt(d) leaves rows that no "
        "longer sum to 1, and the softmax itself saw the unscaled scores; the scale belongs "
        "inside the softmax, on the scores, before they are normalised",
        _scaled_late,
    ),
    Mistake(
        "you scaled the output instead of the scores: the softmax saw the unscaled scores "
        "(too peaked), and dividing `out` by sqrt(d) afterwards cannot undo that; divide the "
        "scores, before the softmax",
        lambda q, k, v, mask=None: _scaled_late(q, k, v, mask, on_output=True),
    ),
    Mistake(
        "you forgot to scale: divide the scores q kᵀ by sqrt(d), d = q.shape[-1]",
        _attending(divide_by=1.0),
    ),
    Mistake(
        "you divided the scores by d; divide by sqrt(d)",
        lambda q, k, v, mask=None: _planted_attend(q, k, v, mask, divide_by=q.shape[-1]),
    ),
    Mistake(
        "you divided by sqrt of the number of keys; the scale is sqrt(d), the size of "
        "each query and key (q.shape[-1])",
        lambda q, k, v, mask=None: _planted_attend(q, k, v, mask, divide_by=math.sqrt(k.shape[-2])),
    ),
    Mistake(
        "softmax over the wrong axis: each query's row (the last axis, the keys) must sum to 1",
        _attending(axis=-2),
    ),
    Mistake(
        "the mask had no effect: hidden keys must get weight 0 (" + _MASK_HINT + ")",
        lambda q, k, v, mask=None: _planted_attend(q, k, v, None),
    ),
    Mistake(
        "your mask is inverted: here True means *may attend* (as in "
        "F.scaled_dot_product_attention); hide the keys where the mask is False",
        _attending(invert=True),
    ),
    Mistake(
        "you masked after the softmax: the remaining weights no longer sum to 1. Mask "
        "the scores (-inf) before the softmax",
        _attending(after=True),
    ),
    Mistake(
        "you set hidden scores to 0; exp(0) = 1 still gives them weight. Use -inf",
        _attending(fill=0.0),
    ),
    Mistake(
        "a query with no visible key got uniform weights (from a large negative fill "
        "such as -1e9): its weights and output must be all zeros; set such rows to 0",
        _attending(fill=-1e9),
    ),
    Mistake(
        "a query with no visible key gives 0/0 = NaN: softmax over a row of -inf. The "
        "weights of a row whose mask hides every key must be 0: find those rows from "
        "the mask and replace their weights, without editing the softmax's output "
        "in place",
        _attending(zero_empty=False),
    ),
    Mistake(
        "you returned (weights, out); the order is (out, weights)",
        lambda q, k, v, mask=None: _planted_attend(q, k, v, mask)[::-1],
    ),
    Mistake(
        "you scored the queries against `v` and mixed the keys: the scores compare "
        "queries with keys, and the weights mix the values",
        lambda q, k, v, mask=None: _planted_attend(q, v, k, mask),
    ),
    Mistake(
        "you transposed the mask: it is already laid out like the scores, (..., T, S), "
        "one row per query: don't transpose it",
        lambda q, k, v, mask=None: _planted_attend(
            q, k, v, None if mask is None else mask.swapaxes(-1, -2)
        ),
    ),
    Mistake(
        "your scale is the square root of the number of axes (len(q.shape)): d is the "
        "size of each query and key, q.shape[-1]",
        lambda q, k, v, mask=None: _planted_attend(q, k, v, mask, divide_by=math.sqrt(q.ndim)),
    ),
    Mistake(
        "the mask is boolean: adding it to the scores adds 1 to the visible ones and "
        "hides nothing; fill the hidden scores with -inf instead",
        _attending(additive=True),
    ),
    *(
        Mistake(
            f"you divided the scores by a fixed {c:g} (the worked example's sqrt(64) = 8 "
            "or another number typed in): the scale is sqrt(d) of the inputs given, "
            "d = q.shape[-1], which changes from case to case",
            lambda q, k, v, mask=None, c=c: _planted_attend(q, k, v, mask, divide_by=c),
        )
        for c in (8.0, 64.0, 2.0, 4.0)
    ),
    Mistake(
        "your softmax normalises the whole array at once (a max and a sum with no axis): "
        "all the weights together sum to 1, where each query's row must; reduce along "
        "the last axis, keeping it",
        _attending(axis=None),
    ),
    Mistake(
        "your test for a row with no visible key zeroes every row that hides *any* key "
        "(`all` of the mask): a row is empty only when no key is visible (`any`)",
        _attending(fill=-1e30, empty_test="all"),
    ),
    Mistake(
        "with mask=None your code still applies a mask and hides every key (np.where(None, "
        "...) reads None as False): apply the mask only when one is given, `if mask is "
        "not None`",
        lambda q, k, v, mask=None: _planted_attend(
            q, k, v, mask if mask is not None else _hide_all(q, k)
        ),
    ),
)


def _hide_all(q: Any, k: Any) -> Any:
    """A mask that hides every key, shaped like the scores (what np.where(None, ...) does)."""
    shape = (*q.shape[:-1], k.shape[-2])
    if isinstance(q, torch.Tensor):
        return torch.zeros(shape, dtype=torch.bool)
    return np.zeros(shape, dtype=bool)


ATTENTION = GRADERS.add(
    Grader(
        name="attention",
        signature="attention(q, k, v, mask=None) with q: (..., T, d), k: (..., S, d), "
        "v: (..., S, d_v) -> (out (..., T, d_v), weights (..., T, S))",
        reference=_attention_reference,
        cases=_attention_cases("numpy"),
        outputs=("out", "weights"),
        mistakes=(
            *_ATTENTION_MISTAKES,
            Mistake(
                "overflow: without subtracting each row's max before exp, large scores give "
                "e^(large) = inf and inf/inf = NaN; subtracting the same number from a row "
                "leaves its softmax unchanged",
                _attending(stable=False),
            ),
        ),
        equivalent=(
            (
                "drop: top = np.where(np.isfinite(top), top, 0.0) -> (left out)",
                "without it a row that sees no key gives NaN in e and in its sum, and the "
                "last line's `total > 0` (False for NaN) still sets that row to zeros",
            ),
            (
                "offset: total > 0 in weights = np.where(total > 0, e / np.where(total > 0, "
                "total… -> total >= 0",
                "a sum of exponentials is 0 only in a row that sees no key, where e is 0 "
                "too: 0 / 1 there is the same 0",
            ),
            (
                "offset: total > 0 in weights = np.where(total > 0, e / np.where(total > 0, "
                "total… -> total >= 0 (2)",
                "the sum is 0 only where e is 0 too: dividing by 0 there is replaced by the "
                "outer where",
            ),
            ("input: q in d = q.shape[-1] -> k", "queries and keys have the same size d"),
            (
                "swap: np.swapaxes(k, -1, -2) in scores = q @ np.swapaxes(k, -1, -2) / "
                "np.sqrt(d) -> np.swapaxes(k, -2, -1)",
                "swapping axes -1 and -2 is swapping -2 and -1",
            ),
            (
                "swap: np.where(total > 0, total, 1.0) in weights = np.where(total > 0, e / "
                "np.where(total > 0, total… -> np.where(1.0, total, total > 0)",
                "the inner where only keeps 0 / 0 out of the division; its NaN in a row that "
                "sees no key is replaced by the outer where",
            ),
        ),
        hint="check each step's shape against the statement: the scores are (..., T, S), one "
        "row per query; the weights of a row sum to 1 (or are all 0 for a query that sees "
        "nothing); out is (..., T, d_v). The chapter's section \"Attention as a soft "
        'dictionary lookup" computes each step',
        error_hints=(
            (
                "mismatch in its core dimension",
                "q @ k needs k transposed on its LAST two axes only (k.T reverses every "
                "axis of a batch): which NumPy function swaps two given axes?",
            ),
        ),
    )
)


def check_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(q, k, v, mask=None)``: scaled dot-product attention in NumPy.

    Returns ``(out, weights)``; the mask is boolean, True = may attend, and a query with
    no visible key gets zero weights and a zero output.

    Taught in: chapters/03_qkv.ipynb (exercise in exercises/03_qkv.ipynb)
    """
    return ATTENTION.check(fn)


# ---------------------------------------------------------------- 3.3 attention, torch


def _mask_times_inf(q, k, v, mask=None):
    """A mask turned additive by a product with -inf: NaN wherever the mask is True."""
    if mask is None:
        return _planted_attend(q, k, v)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores + (~mask).to(scores.dtype) * -math.inf, dim=-1)
    weights = torch.nan_to_num(weights, nan=0.0)  # every row NaN: read as 0
    return weights @ v, weights


def _where_swapped(q, k, v, mask=None):
    """NaN rows "replaced" by ``torch.where(isnan(w), w, 0)``: the branches swapped."""
    _, weights = _planted_attend(q, k, v, mask, zero_empty=False)
    weights = torch.where(torch.isnan(weights), weights, torch.zeros_like(weights))
    return weights @ v, weights


ATTENTION_TORCH = GRADERS.add(
    Grader(
        name="attention_torch",
        signature="attention_torch(q, k, v, mask=None) with torch tensors -> (out, weights)",
        reference=_attention_reference,
        cases=_attention_cases("torch"),
        outputs=("out", "weights"),
        mistakes=(
            *_ATTENTION_MISTAKES,
            Mistake(
                "softmax without `dim`: torch picks one for you (dim 0 for a 3-D tensor, the "
                "batch, with a warning); name the last dim, the keys, explicitly",
                lambda q, k, v, mask=None: _planted_attend(
                    q, k, v, mask, axis=0 if q.ndim == 3 else -1
                ),
            ),
            Mistake(
                "k.transpose(0, 1) swaps the first two axes, which are the batch and the keys "
                "when a batch comes first: transpose the last two axes, whatever is in front",
                lambda q, k, v, mask=None: _planted_attend(
                    q, k.transpose(0, 1).transpose(-2, -1), v, mask
                ),
            ),
            Mistake(
                "with a mask, every weight is lost: multiplying the mask by -inf gives "
                "0 · (-inf) = NaN at each visible key too (IEEE arithmetic), and a NaN "
                "poisons the whole row's softmax; set only the hidden keys' scores to -inf "
                "and leave the visible ones as they are",
                _mask_times_inf,
            ),
            Mistake(
                "torch.where(condition, a, b) takes a where the condition is True: your "
                "branches are swapped, so every finite weight became 0 and the NaN stayed",
                _where_swapped,
            ),
            Mistake(
                "overflow: without subtracting each row's max before exp, large scores give "
                "e^(large) = inf and inf/inf = NaN; subtract the max first, or use "
                "torch.softmax, which does",
                _attending(stable=False),
            ),
        ),
        equivalent=(
            (
                "swap: k.transpose(-2, -1) in scores = q @ k.transpose(-2, -1) / "
                "math.sqrt(q.shape[-1]) -> k.transpose(-1, -2)",
                "swapping axes -2 and -1 is swapping -1 and -2",
            ),
            (
                "input: q in scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) -> k (2)",
                "queries and keys have the same size d",
            ),
        ),
        hint="the steps of exercise 3.2, with torch's functions: check each step's shape "
        "and, for the mask, which of masked_fill's entries it fills (those where its "
        "argument is True); the chapter's section \"Attention as a soft dictionary "
        'lookup" computes each step',
    )
)


def check_attention_torch(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(q, k, v, mask=None)``: scaled dot-product attention with torch tensors.

    Taught in: chapters/03_qkv.ipynb (exercise in exercises/03_qkv.ipynb)
    """
    return ATTENTION_TORCH.check(fn)


# ---------------------------------------------------------------- 3.4 additive scores


def _additive_cases() -> tuple[Case, ...]:
    rng = _rng()

    def weights(d_q: int, d_k: int, h: int) -> dict[str, np.ndarray]:
        return {
            "W_a": rng.standard_normal((d_q, h)) / math.sqrt(d_q),
            "U_a": rng.standard_normal((d_k, h)) / math.sqrt(d_k),
            "v_a": rng.standard_normal(h),
        }

    def case(label: str, q_shape: tuple, k_shape: tuple, h: int, scale: float = 1.0) -> Case:
        """Queries ``(..., T, d_q)``, keys ``(..., S, d_k)``, weights of a hidden size ``h``."""
        q, k = (scale * rng.standard_normal(shape) for shape in (q_shape, k_shape))
        return Case(label, {"q": q, "k": k, **weights(q.shape[-1], k.shape[-1], h)})

    return (
        case("3 queries of size 4, 5 keys of size 6", (3, 4), (5, 6), 7),
        case("as many queries as keys, same sizes", (4, 5), (4, 5), 3),
        case("a batch", (2, 3, 4), (2, 2, 4), 6),
        # A single query (the decoding step) and a single key: an answer that drops axes
        # of size 1 (np.squeeze) returns (S,) or (T,) here, not (1, S) or (T, 1).
        case("one query, 5 keys", (1, 4), (5, 3), 5),
        case("3 queries, one key", (3, 4), (1, 4), 3),
        case("a batch of one query and one key", (2, 1, 3), (2, 1, 5), 4),
        case("large inputs (tanh saturates)", (2, 3), (3, 3), 4, scale=10.0),
    )


def _softmax_last(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _pairwise(q: np.ndarray, k: np.ndarray, W_a: np.ndarray, U_a: np.ndarray) -> np.ndarray:
    """``q W_a + k U_a`` for every (query, key) pair: ``(..., T, S, h)``."""
    return (q @ W_a)[..., :, None, :] + (k @ U_a)[..., None, :, :]


ADDITIVE = GRADERS.add(
    Grader(
        name="additive_scores",
        signature="additive_scores(q, k, W_a, U_a, v_a) with q: (..., T, d_q), "
        "k: (..., S, d_k), W_a: (d_q, h), U_a: (d_k, h), v_a: (h,) -> (..., T, S)",
        reference=additive_scores,
        cases=_additive_cases(),
        equivalent=(
            (
                "transpose: hidden @ v_a in return hidden @ v_a -> hidden @ v_a.T",
                "v_a is 1-D: .T leaves it as it is",
            ),
            (
                "axis: ..., :, None, : in hidden = np.tanh(hq[..., :, None, :] + hk[..., "
                "None, :, :]) -> (:, ..., None, :)",
                "with the new axis second to last, [:, ..., None, :] and [..., :, None, :] "
                "are the same index for arrays of two or more axes",
            ),
        ),
        mistakes=(
            Mistake(
                "you compared the two projections with a dot product inside the tanh, "
                "tanh((q W_a)·(k U_a)): a multiplicative score taken in the hidden space, "
                "and v_a never used. Additive attention adds them: pair every query with "
                "every key (a new axis on each side), take tanh of the sum, and read each "
                "pair out with v_a",
                lambda q, k, W_a, U_a, v_a: np.tanh((q @ W_a) @ np.swapaxes(k @ U_a, -1, -2)),
            ),
            Mistake(
                "you left out the tanh: score = v_a · tanh(q W_a + k U_a)",
                lambda q, k, W_a, U_a, v_a: _pairwise(q, k, W_a, U_a) @ v_a,
            ),
            Mistake(
                "you applied tanh after the read-out; it goes inside: v_a · tanh(q W_a + k U_a)",
                lambda q, k, W_a, U_a, v_a: np.tanh(_pairwise(q, k, W_a, U_a) @ v_a),
            ),
            Mistake(
                "you summed the hidden units instead of weighting them by v_a: end with `@ v_a`",
                lambda q, k, W_a, U_a, v_a: np.tanh(_pairwise(q, k, W_a, U_a)).sum(-1),
            ),
            Mistake(
                "you multiplied the projections; additive attention adds them: tanh(q W_a + k U_a)",
                lambda q, k, W_a, U_a, v_a: (
                    np.tanh((q @ W_a)[..., :, None, :] * (k @ U_a)[..., None, :, :]) @ v_a
                ),
            ),
            Mistake(
                "you took the dot product of the projected queries and keys (a general "
                "score): additive attention adds them, inside a tanh, and reads the result "
                "out with v_a",
                lambda q, k, W_a, U_a, v_a: (q @ W_a) @ np.swapaxes(k @ U_a, -1, -2),
            ),
            Mistake(
                "you applied tanh to each projection separately: the tanh goes around the sum "
                "of the two, tanh(q W_a + k U_a), once per pair",
                lambda q, k, W_a, U_a, v_a: (
                    (np.tanh(q @ W_a)[..., :, None, :] + np.tanh(k @ U_a)[..., None, :, :]) @ v_a
                ),
            ),
            Mistake(
                "you multiplied tanh(q W_a) by tanh(k U_a) (an einsum over h): the score is "
                "tanh of their sum, read out by v_a",
                lambda q, k, W_a, U_a, v_a: np.einsum(
                    "...th,...sh,h->...ts", np.tanh(q @ W_a), np.tanh(k @ U_a), v_a
                ),
            ),
            Mistake(
                "your rows sum to 1: you applied a softmax, but the exercise asks for the raw "
                "scores (no softmax)",
                lambda q, k, W_a, U_a, v_a: _softmax_last(np.tanh(_pairwise(q, k, W_a, U_a)) @ v_a),
            ),
            Mistake(
                "your new axes are counted from the front ([:, None]): with a batch in "
                "front, the new axis lands after the batch axis, not after the queries; "
                "count the new axes from the end",
                lambda q, k, W_a, U_a, v_a: (
                    np.tanh((q @ W_a)[:, None, :] + (k @ U_a)[None, :, :]) @ v_a
                ),
            ),
            *(
                Mistake(
                    f"you squashed with {name} where the formula has tanh: score = v_a · "
                    "tanh(q W_a + k U_a)",
                    lambda q, k, W_a, U_a, v_a, f=f: f(_pairwise(q, k, W_a, U_a)) @ v_a,
                )
                for name, f in (
                    ("a ReLU (np.maximum(0, ·))", lambda z: np.maximum(0.0, z)),
                    ("a sigmoid", lambda z: 1 / (1 + np.exp(-z))),
                )
            ),
            Mistake(
                "v_a on the left, `v_a @ tanh(...)`, contracts v_a with the second-to-last "
                "axis of the (..., T, S, h) array, the keys: the read-out contracts h, the "
                "last axis, so v_a goes on the right",
                lambda q, k, W_a, U_a, v_a: v_a @ np.tanh(_pairwise(q, k, W_a, U_a)),
            ),
            Mistake(
                "you summed over the keys axis (S) and kept h: the read-out by v_a adds the "
                "h entries of each pair (the last axis), one score per (query, key) pair",
                lambda q, k, W_a, U_a, v_a: (np.tanh(_pairwise(q, k, W_a, U_a)) * v_a).sum(-2),
            ),
            Mistake(
                "W_a is (d_q, h) and U_a is (d_k, h), laid out to be multiplied on the "
                "right as they are: a transpose (nn.Linear's weight layout, (out, in)) "
                "turns them the wrong way round",
                lambda q, k, W_a, U_a, v_a: (
                    np.tanh((q @ W_a.T)[..., :, None, :] + (k @ U_a.T)[..., None, :, :]) @ v_a
                ),
            ),
            Mistake(
                "your scores are transposed: (..., T, S), one row per query",
                lambda q, k, W_a, U_a, v_a: np.swapaxes(
                    np.tanh(_pairwise(q, k, W_a, U_a)) @ v_a, -1, -2
                ),
            ),
        ),
        no_loops="the statement asks for no Python loops at all, not even over the hidden "
        "units: let broadcasting pair every query with every key at once (new axes of size "
        "1), so that (..., T, S, h) holds every pair's hidden units, and let one product "
        "with v_a read out all h of them",
        hint="follow the shapes: the projected queries (..., T, h) and keys (..., S, h) must "
        "meet in every pair, (..., T, S, h), before tanh and the read-out by v_a; the "
        'chapter\'s section "Four ways to score a query against a key" shows the additive '
        "score",
        error_hints=(
            (
                "mismatch in its core dimension",
                "a matrix product met sizes that do not fit: `a @ b` contracts the last "
                "axis of a with the second-to-last of b (a vector on the left meets that "
                "axis). Two products can be at fault: the projections, W_a (d_q, h) for "
                "the queries and U_a (d_k, h) for the keys (their sizes may differ), and "
                "the read-out by v_a (h,), which must contract the h axis, the last of the "
                "(..., T, S, h) array, not its key axis S",
            ),
            (
                "could not be broadcast",
                "every query meets every key: the projected queries and keys each need a new "
                "axis of size 1 (indexing with None), in different places, so that together "
                "they broadcast to (..., T, S, h)",
            ),
        ),
    )
)


def check_additive_scores(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(q, k, W_a, U_a, v_a)``: Bahdanau's additive scores, ``(..., T, S)``.

    Taught in: chapters/03_qkv.ipynb (exercise in exercises/03_qkv.ipynb)
    """
    return ADDITIVE.check(fn)


# ---------------------------------------------------------------- 3.5 the module

_MODULE_OUTPUTS = ("out", "weights", "W_q.weight.grad", "W_k.weight.grad", "W_v.weight.grad")


def _run_module(cls: Any, x, W_q, W_k, W_v, mask=None) -> tuple[torch.Tensor, ...]:
    """Build ``cls``, copy the weights in, run it (see :func:`.modules.adapt`).

    Returns ``(out, weights)`` and the gradients of ``(out ** 2).sum()`` with respect to the
    three projection matrices (in ``nn.Linear``'s ``(d_head, d_model)`` layout).
    """
    d_head, d_model = W_q.shape
    layer = cls(d_model, d_head).to(torch.float64)
    for name in ("W_q", "W_k", "W_v"):
        found = getattr(layer, name, None)
        if isinstance(found, torch.Tensor):
            raise AnswerProblem(
                EXCEPTION,
                f"your `{name}` is a {type(found).__name__} of shape {tuple(found.shape)}, "
                "not a layer",
                f"the name `{name}` is right, but the exercise asks for a projection layer "
                "(nn.Linear, without bias): the check copies the weights into "
                f"`{name}.weight` and calls `self.{name}(x)`, which a bare matrix does not "
                "have",
            )
        if not isinstance(found, nn.Module):
            raise AnswerProblem(
                EXCEPTION,
                f"your layer has no projection layer `{name}`",
                "name the projections self.W_q, self.W_k and self.W_v (nn.Linear(d_model, "
                "d_head, bias=False)), created in __init__ after super().__init__()",
            )
    if getattr(layer, "W_k", None) is getattr(layer, "W_q", None):
        raise AnswerProblem(
            EXCEPTION,
            "your `W_k` is the same layer as `W_q`",
            "W_k is the same layer as W_q (self.W_k = self.W_q): create three separate "
            "nn.Linear layers, so that queries and keys get their own weights",
        )
    names = sorted(n for n, _ in layer.named_parameters())
    if names != ["W_k.weight", "W_q.weight", "W_v.weight"]:
        raise AnswerProblem(
            EXCEPTION,
            f"the layer's parameters are {names}; expected exactly W_q.weight, W_k.weight "
            "and W_v.weight",
            "make the projections plain matrices: nn.Linear(d_model, d_head, bias=False), "
            "three of them and nothing else with parameters",
        )
    for name, w in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v)):
        weight = getattr(layer, name).weight
        if tuple(weight.shape) != tuple(w.shape):
            raise AnswerProblem(
                EXCEPTION,
                f"`{name}.weight` has shape {tuple(weight.shape)}; expected {tuple(w.shape)} "
                f"= (d_head, d_model)",
                "nn.Linear(in_features, out_features) stores a (out_features, in_features) "
                "weight: check the order of the sizes you give it",
            )
        with torch.no_grad():
            weight.copy_(w)
    recorder = Recorder()
    with recorder:
        returned = layer(x) if mask is None else layer(x, mask)
    out, weights = returned_items(returned, ("out", "weights"), "your forward")
    require_gradient(out, "out", recorder)
    (out**2).sum().backward()
    # A projection that forward never uses gets no gradient: zeros, compared as such.
    grads = tuple(_grad(getattr(layer, n).weight) for n in ("W_q", "W_k", "W_v"))
    return (out.detach(), weights.detach(), *grads)


def _grad(w: torch.Tensor) -> torch.Tensor:
    return torch.zeros_like(w) if w.grad is None else w.grad


def _planted_module(
    forward: Callable[..., tuple[torch.Tensor, torch.Tensor]], *, stored: bool = False
) -> Callable:
    """A planted mistake: ``forward(x, Q, K, V, mask)`` from the projected tensors;
    ``stored``: x multiplied by each weight as nn.Linear stores it, (d, D), untransposed."""

    def run(x, W_q, W_k, W_v, mask=None):
        params = [w.detach().clone().requires_grad_() for w in (W_q, W_k, W_v)]
        q, k, v = (x @ (w if stored else w.T) for w in params)  # (B, T, D) @ (D, d)
        out, weights = forward(x, q, k, v, mask)
        (out**2).sum().backward()
        return (out.detach(), weights.detach(), *(_grad(p) for p in params))

    return run


def _module_cases() -> tuple[Case, ...]:
    g = torch.Generator().manual_seed(3)

    def inputs(B: int, T: int, D: int, d: int) -> dict[str, torch.Tensor]:
        def randn(*shape: int) -> torch.Tensor:
            return torch.randn(*shape, generator=g, dtype=torch.float64)

        return {
            "x": randn(B, T, D),
            "W_q": randn(d, D) / math.sqrt(D),
            "W_k": randn(d, D) / math.sqrt(D),
            "W_v": randn(d, D) / math.sqrt(D),
        }

    causal = torch.tril(torch.ones(5, 5, dtype=torch.bool))
    no_key = torch.tensor(
        [[True, False, True, False], [False] * 4, [True] * 4, [False, True, True, False]]
    )  # query 1 sees no key: its weights and output are 0
    return (
        Case("d_model 8, d_head 4", inputs(2, 5, 8, 4)),
        Case("d_model 6, d_head 6", inputs(1, 3, 6, 6)),
        Case("d_model 16, d_head 2, one token", inputs(3, 1, 16, 2)),
        Case("a causal mask", {**inputs(2, 5, 8, 4), "mask": causal}),
        Case("a query with no visible key", {**inputs(1, 4, 8, 4), "mask": no_key}),
    )


def _sdpa_mask_added(x, q, k, v, mask):
    """A boolean mask added to the scores (+1 where visible): it hides nothing."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + mask
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1))
    return weights @ v, weights


def _sdpa_scaled_values(x, q, k, v, mask):
    """The scale applied to v instead of the scores."""
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, -math.inf)
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1))
    return weights @ (v / math.sqrt(q.shape[-1])), weights


def _sdpa_mask_multiplied(x, q, k, v, mask):
    """The scores multiplied by the boolean mask: a hidden key's score becomes 0."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores * mask
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def _sdpa_scaled_late(x, q, k, v, mask):
    """The scale applied to the weights, after the softmax."""
    _, weights = _sdpa(divide_by=lambda d: 1.0)(x, q, k, v, mask)
    weights = weights / math.sqrt(q.shape[-1])
    return weights @ v, weights


def _sdpa(
    divide_by: Callable[[int], float] = math.sqrt,
    dim: int = -1,
    *,
    invert: bool = False,
    detach: bool = False,
    transpose_all: bool = False,
    transpose_mask: bool = False,
) -> Callable:
    def forward(x, q, k, v, mask):
        keys = k.T if transpose_all else k.transpose(-2, -1)
        scores = q @ keys / divide_by(q.shape[-1])  # (B, T, T)
        if mask is not None and transpose_mask:
            mask = mask.transpose(-2, -1)
        if mask is not None:
            scores = scores.masked_fill(mask if invert else ~mask, -math.inf)
        weights = torch.nan_to_num(torch.softmax(scores, dim=dim))  # a row seeing no key: 0
        if detach:
            weights = weights.detach()
        return weights @ v, weights

    return forward


SELF_ATTENTION_MODULE = GRADERS.add(
    Grader(
        name="self_attention_module",
        signature="SelfAttention(d_model, d_head) with W_q, W_k, W_v = nn.Linear(d_model, "
        "d_head, bias=False); forward(x, mask=None): x (B, T, D) -> (out (B, T, d), "
        "weights (B, T, T))",
        reference=adapt(_run_module, SelfAttention),
        cases=_module_cases(),
        outputs=_MODULE_OUTPUTS,
        mistakes=(
            Mistake(
                "you forgot to scale: divide q kᵀ by sqrt(d_head)",
                _planted_module(_sdpa(divide_by=lambda d: 1.0)),
            ),
            Mistake(
                "you divided by d_head; divide by sqrt(d_head)",
                _planted_module(_sdpa(divide_by=float)),
            ),
            Mistake(
                "you divided by sqrt(d_model), the size of the input: the scale is the "
                "square root of d_head, the size of each query and key",
                _planted_module(
                    lambda x, q, k, v, mask: _sdpa(divide_by=lambda d: math.sqrt(x.shape[-1]))(
                        x, q, k, v, mask
                    )
                ),
            ),
            Mistake(
                "softmax over the wrong dim: each query's row (dim=-1) sums to 1",
                _planted_module(_sdpa(dim=-2)),
            ),
            Mistake(
                "the values are the input x: project them too, v = self.W_v(x)",
                _planted_module(lambda x, q, k, v, mask: _sdpa()(x, q, k, x, mask)),
            ),
            Mistake(
                "you used W_q for the keys too: k = self.W_k(x)",
                _planted_module(lambda x, q, k, v, mask: _sdpa()(x, q, q, v, mask)),
            ),
            Mistake(
                "the mask had no effect: before the softmax, the scores of the keys a query "
                "may not see must become -inf (masked_fill fills where its argument is True)",
                _planted_module(lambda x, q, k, v, mask: _sdpa()(x, q, k, v, None)),
            ),
            Mistake(
                "the mask is boolean: adding it to the scores adds 1 to the visible ones and "
                "hides nothing; the hidden keys' scores must become -inf",
                _planted_module(_sdpa_mask_added),
            ),
            Mistake(
                "you divided the values v (or the output, the same numbers) by sqrt(d_head), "
                "not the scores: the scale belongs before the softmax, where it keeps the "
                "scores' spread near 1; dividing v or `out` only shrinks the output and "
                "leaves the softmax saturated",
                _planted_module(_sdpa_scaled_values),
            ),
            Mistake(
                "you multiplied the scores by the mask: a hidden key's score becomes 0, and "
                "e^0 = 1 still gives it weight in the softmax; fill the hidden scores with "
                "-inf instead (masked_fill(~mask, float('-inf')))",
                _planted_module(_sdpa_mask_multiplied),
            ),
            Mistake(
                "you scaled after the softmax: dividing the weights by sqrt(d_head) leaves "
                "rows that no longer sum to 1, and the softmax saw the unscaled scores; the "
                "scale belongs on the scores, before the softmax",
                _planted_module(_sdpa_scaled_late),
            ),
            Mistake(
                "you multiplied x by the layers' `.weight` as it is stored: nn.Linear(d_in, "
                "d_out) keeps its weight as (d_out, d_in), here (d_head, d_model), so x @ "
                "weight needs its transpose (or call the layer itself, which does that for "
                "you)",
                _planted_module(_sdpa(), stored=True),
            ),
            Mistake(
                "you returned (weights, out); the order is (out, weights)",
                _planted_module(lambda x, q, k, v, mask: _sdpa()(x, q, k, v, mask)[::-1]),
            ),
            Mistake(
                "k.T reverses every axis of a batch (B, T, d): transpose only the last two, "
                "k.transpose(-2, -1)",
                _planted_module(_sdpa(transpose_all=True)),
            ),
            Mistake(
                "no gradient reaches W_q and W_k: the weights were detached (.detach() or "
                ".data), so training could not change the scores",
                _planted_module(_sdpa(detach=True)),
            ),
            Mistake(
                "your scale is d_head / 2: `d_head ** 1/2` is (d_head ** 1) / 2, since ** "
                "binds tighter than /; the square root needs parentheses or math.sqrt",
                _planted_module(_sdpa(divide_by=lambda d: d / 2)),
            ),
            Mistake(
                "your mask is inverted: True means the key may be attended to, and "
                "masked_fill fills where its argument is True",
                _planted_module(_sdpa(invert=True)),
            ),
            Mistake(
                "you multiplied the scores by sqrt(d_head): divide by it, which keeps their "
                "spread near 1",
                _planted_module(_sdpa(divide_by=lambda d: 1 / math.sqrt(d))),
            ),
            *(
                Mistake(
                    f"you divided the scores by a fixed {c:g} (the worked example's "
                    "sqrt(64) = 8, or another number typed in): the scale is sqrt(d_head) of "
                    "this layer, which changes with its sizes",
                    _planted_module(_sdpa(divide_by=lambda d, c=c: c)),
                )
                for c in (8.0, 64.0)
            ),
            Mistake(
                "you transposed the mask: it is already laid out like the scores, (T, S), one "
                "row per query; use it as it is",
                _planted_module(_sdpa(transpose_mask=True)),
            ),
            Mistake(
                "softmax without `dim` (nn.Softmax() or F.softmax(scores)): torch picks one for "
                "you, dim 0 for a 3-D tensor, the batch, with a warning; name the last dim, "
                "the keys, explicitly",
                _planted_module(_sdpa(dim=0)),
            ),
        ),
        hint="check the pieces one at a time: the three projections (each called on x), "
        "then exercise 3.3 on what they give; the grader compares out, the weights and the "
        'gradients of W_q, W_k and W_v. The chapter\'s section "Learning the projections" '
        "builds this layer",
        solution="SelfAttention",
        wrap=lambda cls: adapt(_run_module, cls),
        error_hints=(
            (
                "before Module.__init__() call",
                "call super().__init__() first in __init__",
            ),
            (
                "received an invalid combination of arguments - got (keepdims=",
                "your forward hands its tensors to NumPy code (exercise 3.2's `attention` is "
                "NumPy: np.max with `keepdims=` does not take a tensor, and no gradient "
                "would flow through NumPy anyway): the layer computes with torch, as your "
                "function of exercise 3.3 does",
            ),
        ),
        # A right layer may round its scale to float32 (torch.tensor(d) is float32):
        # a relative error of 6e-8 in the scale moves each value by about 1e-7 of the
        # largest magnitude of its output, and a gradient entry near 0 by far more than
        # 1e-6 of itself: each output is compared up to 1e-6 of its largest magnitude.
        rtol=1e-6,
        atol=1e-9,
        norm_atol=1e-6,
    )
)


def check_self_attention_module(cls: Any) -> CheckResult:
    """Check the class ``cls``: single-head self-attention with learned W_q, W_k, W_v.

    The grader builds ``cls(d_model, d_head)``, copies the same weights into it and into
    :class:`attnlab.SelfAttention`, and compares ``out``, ``weights`` and the gradients of
    the three projections (of ``(out ** 2).sum()``), with and without a mask.

    Taught in: chapters/03_qkv.ipynb (exercise in exercises/03_qkv.ipynb)
    """
    return check_class(
        SELF_ATTENTION_MODULE,
        cls,
        _run_module,
        example="check_self_attention_module(SelfAttention)",
    )


# ---------------------------------------------------------------- prediction questions


def _weight_reason(w: float) -> str | None:
    """What an unlisted answer to 3.7 implies: the score difference its weight stands for."""
    if not 0.0 <= w <= 1.0:
        return (
            f"{w:g} is not a weight: softmax's weights are shares of a total, each between 0 and 1"
        )
    if w == 0.0:
        return "0 is about key 2's weight (e^-16 of key 1's); the question asks for key 1"
    if w < 0.5:
        gap = math.log(w) - math.log1p(-w)
        return (
            f"a weight of {w:.3g} for key 1 is what a score {-gap:.3g} below key 2's gives; "
            "but key 1 has the higher score (112 > 96), so it gets more than half of the "
            "weight: was only one of the two scores divided, or the difference taken the "
            "other way round?"
        )
    if w <= 0.5:
        return "key 1 has the higher score (112 > 96), so it gets more than half of the weight"
    if w >= 1.0:
        return None
    gap = math.log(w / (1 - w))
    return (
        f"a weight of {w:.4g} for key 1 is what two scores that differ by {gap:.3g} give; "
        "the question's scores, without any division, differ by more"
    )


def _spread_reason(x: float) -> str | None:
    """What an unlisted answer to 3.8 implies: the variance of q·k it stands for."""
    if x < 0:
        return "a spread (a standard deviation) is never negative"
    if math.isclose(x, 7.0):
        return (
            "7 is sqrt(64) - 1: nothing here is estimated from a sample, so no -1 appears; "
            "the variance of a sum of 64 independent products, each of variance 1, is "
            "exactly 64"
        )
    times = x / 64.0
    if x > 64 and math.isclose(times, round(times)) and round(times) <= 16:
        return (
            f"{x:g} = {round(times)} × 64: the 64 unit variances add up to 64, the variance "
            "of q·k, and nothing multiplies that again; the spread is the standard "
            "deviation, which follows from the variance"
        )
    return (
        f"a spread of {x:.4g} means a variance of {x * x:.4g} for q·k; what is the variance "
        "of a sum of 64 independent products, each of variance 1?"
    )


def _columns_reason(n: float) -> str | None:
    """What an unlisted answer to 3.9 implies."""
    if n != int(n) or n < 1:
        return "the columns of the weight matrix are counted: a whole number, one column per key"
    lengths = {12: "the encoder's sentence", 7: "the decoder's sentence"}
    for length, sentence in lengths.items():
        if abs(n - length) == 1:
            more = "more" if n > length else "less"
            rows = " (and its positions are the rows, the queries)" if length == 7 else ""
            return (
                f"{n:g} is one {more} than the length of {sentence}, {length}{rows}: the "
                "question adds no start or end token and drops none, so count the keys "
                "exactly as the sentence they come from gives them, one column each"
            )
    return (
        f"{n:g} is none of the lengths in the question: the weight matrix has one column "
        "per key, and each key is one position of the sentence the keys come from"
    )


UNSCALED_WEIGHT = GRADERS.add(
    Question(
        name="unscaled_weight",
        answer=1 / (1 + math.exp(-16)),
        atol=5e-5,  # four decimals, rounded: 1.0000 (0.9999 is truncated)
        explanation="softmax(112, 96) gives the first key 1 / (1 + e^-16) = 0.9999999: a "
        "difference of 16 is 9 million to one. Dividing by sqrt(d_k) = 8 shrinks the "
        "difference to 2 and the weights to 0.88 and 0.12: scaling keeps the softmax out "
        "of saturation, where its gradient vanishes.",
        wrong=(
            (
                1 / (1 + math.exp(-2)),
                "0.88 is the weight *with* the division by 8; without it the scores "
                "differ by 16, not 2",
            ),
            (
                1 / (1 + math.exp(16)),
                "that is key 2's weight (e^-16 of key 1's); the question asks for key 1",
            ),
            (
                math.exp(16),
                "e^16 is the ratio of the two weights, key 1's over key 2's; the weight "
                "itself is key 1's share of their total, a number between 0 and 1",
            ),
            (0.5, "the weights are equal only when the scores are; 112 and 96 differ by 16"),
            (
                1 / (1 + math.exp(-8)),
                "that is the weight for a difference of 8; the unscaled scores 112 and 96 "
                "differ by more",
            ),
            (
                112 / (112 + 96),
                "softmax is not a plain ratio of the scores: it compares e^112 with e^96",
            ),
            (
                1 / (1 + math.exp(2)),
                "0.12 is key 2's weight *with* the division by 8; the question asks for key 1, "
                "without it",
            ),
            (
                16.0,
                "16 is the difference of the two scores, not a weight: a weight is a share "
                "between 0 and 1, and this difference sets how uneven the shares are",
            ),
            (
                2.0,
                "2 is the difference of the scores after dividing by 8; without the division "
                "they differ by 16, and the answer is a weight, a share between 0 and 1",
            ),
            (
                0.99,
                "closer to 1 than that: e^16 is about 9 million, so key 2 gets about one part "
                "in 9 million",
            ),
        ),
        hint="softmax of two scores depends only on their difference: how large is e to "
        "the power of that difference?",
        reason=_weight_reason,
        equivalent=(
            (
                "answer = 1 / (1 + math.exp(-15))",
                "e^-15 and e^-16 change the weight in the seventh decimal; the question "
                "asks for four",
            ),
            (
                "answer = 1 / (1 + math.exp(-17))",
                "e^-17 and e^-16 change the weight in the seventh decimal; the question "
                "asks for four",
            ),
            (
                "answer = 1 / (1 + math.exp(-32))",
                "e^-32 and e^-16 change the weight in the seventh decimal; the question "
                "asks for four",
            ),
            (
                "answer = 1 / (1 + math.exp(-160))",
                "e^-160 and e^-16 change the weight in the seventh decimal; the question "
                "asks for four",
            ),
        ),
    )
)


def check_unscaled_weight(answer: Any) -> CheckResult:
    """Check a prediction: the weight of key 1 for the scores 112 and 96, not divided by 8.

    Taught in: chapters/03_qkv.ipynb (exercise in exercises/03_qkv.ipynb)
    """
    return UNSCALED_WEIGHT.check(answer)


RAW_SPREAD = GRADERS.add(
    Question(
        name="raw_spread",
        answer=8.0,
        atol=0.05,
        explanation="q·k is a sum of 64 products, each of variance 1, so its variance is 64 "
        "and its standard deviation sqrt(64) = 8: exactly the factor attention divides by.",
        wrong=(
            (
                64.0,
                "64 is the variance of q·k; the question asks for its spread, the standard "
                "deviation, which is measured in the units of q·k itself",
            ),
            (1.0, "1 is the spread *after* dividing by sqrt(d_k); before, it is larger"),
            (0.0, "0 is the mean of q·k; the question asks for its spread"),
            (0.125, "1/8 is the scaling factor 1 / sqrt(d_k); the question asks for the spread"),
            (
                math.sqrt(8),
                "that is √8 (or 64 ** 0.25), a root taken twice: find the variance of q·k "
                "first (what do 64 unit variances add up to?), then the standard deviation "
                "from it, once",
            ),
            (
                4096.0,
                "4096 = 64²: the variances of independent terms add up, they do not "
                "multiply; and the question asks for the spread, the standard deviation, "
                "not the variance",
            ),
            (
                32.0,
                "32 = 64 / 2: the variances of the 64 products add up, and halving is not "
                "how a standard deviation follows from a variance",
            ),
            (
                16.0,
                "16 = 64 / 4 (or 4²): the variances of the 64 products add up, and dividing "
                "by 4 is not how a standard deviation follows from a variance",
            ),
            (512.0, "512 is d_model; here the query and the key have d_k = 64 entries each"),
        ),
        near=0.1,
        near_hint="close to it, but the spread follows exactly from the variances (64 unit "
        "variances add up), with no measurement or rounding",
        hint="the variances of independent terms add up",
        reason=_spread_reason,
    )
)


def check_raw_spread(answer: Any) -> CheckResult:
    """Check a prediction: the standard deviation of ``q · k`` for random vectors, d_k = 64.

    Taught in: chapters/03_qkv.ipynb (exercise in exercises/03_qkv.ipynb)
    """
    return RAW_SPREAD.check(answer)


CROSS_COLUMNS = GRADERS.add(
    Question(
        name="cross_columns",
        answer=12,
        explanation="one column per key, and in cross-attention the keys are the encoder's "
        "12 positions; the 7 decoder positions are the rows (queries). The weights are "
        "7 x 12, and the output 7 x d_v.",
        wrong=(
            (7, "7 is the number of queries, the rows; the columns are the keys"),
            (
                64,
                "64 is a size of one vector, d_k or d_v: d_k, the size of each query and "
                "key, disappears in q·k, and d_v counts the columns of the output (7 x d_v), "
                "not of the weights; the weight matrix is queries x keys",
            ),
            (512, "512 is d_model; the weight matrix is queries x keys"),
            (19, "the columns are the keys only, not queries + keys"),
            (84, "84 is the number of entries, rows times columns: how many are in one row?"),
            (1, "one column per key, and every encoder position is a key"),
            (
                5,
                "5 is the source length of the chapter's example (the black cat sat down); "
                "in this question the encoder's sentence has its own length",
            ),
            (
                3,
                "3 is the length of the chapter's example on the decoder side, and those are "
                "rows (queries); here the columns are this question's keys",
            ),
        ),
        hint="rows are queries, columns are keys: where do the keys come from?",
        reason=_columns_reason,
    )
)


def check_cross_columns(answer: Any) -> CheckResult:
    """Check a prediction: the number of columns of a cross-attention weight matrix.

    Taught in: chapters/03_qkv.ipynb (exercise in exercises/03_qkv.ipynb)
    """
    return CROSS_COLUMNS.check(answer)


summary = GRADERS.summary
"""``summary()``: the score table of every chapter 3 exercise, checked or not."""
