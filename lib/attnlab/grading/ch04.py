"""Graders for chapter 4's exercises: heads split and merged, counts, a multi-head module.

Each grader compares the learner's code with the attnlab reference on seeded cases and
knows the planted mistakes beginners make (see :mod:`attnlab.grading.pipeline`). Two
exercises hand in something other than a plain function, and are graded through an
adapter that turns it into one:

- ``multihead_attention``: the learner's ``nn.Module`` class. The adapter builds it,
  loads the weights of a seeded :class:`~attnlab.mechanism.multihead.MultiHeadAttention` into it
  (same parameter names), runs it and back-propagates, and returns the output, the
  per-head weights and the gradients of the input and of ``W_q``.
- ``load_into_torch``: the learner's function that copies a
  :class:`~attnlab.mechanism.multihead.MultiHeadAttention`'s weights into an ``nn.MultiheadAttention``.
  The adapter calls it on a fresh PyTorch layer, then returns that layer's output and
  per-head weights.

Taught in: exercises/04_multihead.ipynb
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from ..mechanism.multihead import MultiHeadAttention, merge_heads, mha_parameter_count, split_heads
from .gradients import Recorder, cut_by, require_gradient
from .modules import adapt, check_class, check_function, seed_cpu
from .pipeline import Grader
from .questions import Question
from .registry import ChapterGraders
from .results import CheckResult
from .specs import AnswerProblem, Case, Mistake
from .specs import returned as returned_items
from .status import EXCEPTION, NO_GRADIENT, WRONG_TYPE

__all__ = [
    "GRADERS",
    "check_bert_parameters",
    "check_blend_weight",
    "check_load_into_torch",
    "check_merge_heads",
    "check_mha_parameter_count",
    "check_multihead_attention",
    "check_split_heads",
    "check_which_key",
    "summary",
]

GRADERS = ChapterGraders(__name__, mutants_reviewed=True)
"""Chapter 4's exercises, in the order of the notebook."""


def _rng() -> np.random.Generator:
    return np.random.default_rng(4)


# ---- split_heads -----------------------------------------------------------------------


def _split_cases() -> tuple[Case, ...]:
    rng = _rng()
    shapes = {
        "B=1, T=3, D=4 into 2 heads": ((1, 3, 4), 2),
        "B=2, T=5, D=12 into 3 heads": ((2, 5, 12), 3),
        "one head (H=1)": ((2, 4, 6), 1),
        "heads of size 1 (H=D=8)": ((3, 2, 8), 8),
        "B=2, T=6, D=16 into 4 heads": ((2, 6, 16), 4),
    }
    return tuple(
        Case(label, {"x": rng.standard_normal(shape), "n_heads": h})
        for label, (shape, h) in shapes.items()
    )


def _split_direct(x: np.ndarray, n_heads: int) -> np.ndarray:
    B, T, D = x.shape
    return x.reshape(B, n_heads, T, D // n_heads)


def _split_interleaved(x: np.ndarray, n_heads: int) -> np.ndarray:
    B, T, D = x.shape
    return x.reshape(B, T, D // n_heads, n_heads).transpose(0, 3, 1, 2)


def _split_no_transpose(x: np.ndarray, n_heads: int) -> np.ndarray:
    B, T, D = x.shape
    return x.reshape(B, T, n_heads, D // n_heads)


def _split_wrong_transpose(x: np.ndarray, n_heads: int) -> np.ndarray:
    B, T, D = x.shape
    return x.reshape(B, T, n_heads, D // n_heads).transpose(0, 2, 3, 1)


def _split_two_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    B, T, D = x.shape
    return x.reshape(B, T, 2, D // 2).transpose(0, 2, 1, 3)


def _split_after(order: tuple[int, ...]) -> Callable[[np.ndarray, int], np.ndarray]:
    """A split that reshapes x to the sizes of ``order`` (indices into (B, T, H, d)), then
    moves the axes so named into (B, H, T, d)."""

    def split(x: np.ndarray, n_heads: int) -> np.ndarray:
        B, T, D = x.shape
        sizes = (B, T, n_heads, D // n_heads)
        named = x.reshape([sizes[i] for i in order])
        return named.transpose([order.index(i) for i in (0, 2, 1, 3)])

    return split


_SPLIT_AXES = ("B", "T", "H", "d")


def _split_order_mistakes() -> tuple[Mistake, ...]:
    """Each order of the reshape's four sizes but the right one (B, T, H, d), its axes then
    moved into (B, H, T, d) by name: a reshape regroups the numbers in the order they lie,
    so every other order scrambles them (the two orders with a diagnosis of their own, (B,
    H, T, d) and (B, T, d, H), are left out)."""
    own = {(0, 1, 2, 3), (0, 2, 1, 3), (0, 1, 3, 2)}
    found = []
    for order in itertools.permutations(range(4)):
        if order in own:
            continue
        names = ", ".join(_SPLIT_AXES[i] for i in order)
        found.append(
            Mistake(
                f"your reshape is to ({names}), and then you moved the axes so named into "
                "(B, H, T, d): the shape is right, but a reshape only regroups x's numbers "
                "in the order they lie in memory (batch entry, then token, then its D "
                "features), it cannot move an axis. Its sizes must follow that order; "
                "moving axes is the transpose's job, after it",
                _split_after(order),
            )
        )
    return tuple(found)


SPLIT_HEADS = GRADERS.add(
    Grader(
        name="split_heads",
        signature="split_heads(x, n_heads) with x: (B, T, D) -> (B, H, T, d)",
        reference=split_heads,
        cases=_split_cases(),
        mistakes=(
            Mistake(
                "you reshaped straight to (B, H, T, d): the shape is right but each 'head' "
                "holds consecutive numbers of the flat array (whole tokens), not the same d "
                "features of every token; reshape to (B, T, H, d) first, then swap axes 1 and 2",
                _split_direct,
            ),
            Mistake(
                "your heads take every H-th feature (reshape to (B, T, d, H)): head h must "
                "own the block of features h*d .. (h+1)*d - 1, so reshape to (B, T, H, d)",
                _split_interleaved,
            ),
            Mistake(
                "your reshape to (B, T, d, H) gives each head every H-th feature (the d and H "
                "of the reshape are in each other's place), and the swap after it leaves "
                "each head's features before the time axis: head h must own the block of "
                "features h*d .. (h+1)*d - 1, and the result is (B, H, T, d)",
                lambda x, n_heads: _split_interleaved(x, n_heads).swapaxes(2, 3),
            ),
            Mistake(
                "you reshaped to (B, T, H, d) but did not move the head axis in front of T: "
                "the heads must come before the time axis, (B, H, T, d). Which two axes "
                "change places?",
                _split_no_transpose,
            ),
            Mistake(
                "you moved the wrong axes: after the reshape to (B, T, H, d), only T and H "
                "change places; B stays first and each head's d features stay last",
                _split_wrong_transpose,
            ),
            Mistake(
                "your heads overlap: head h starts at feature h (a slice h:h+d), but each "
                "head owns its own block of d features, h*d .. (h+1)*d - 1",
                lambda x, n_heads: np.stack(
                    [x[..., h : h + x.shape[-1] // n_heads] for h in range(n_heads)], axis=1
                ),
            ),
            Mistake(
                "you split into 2 heads whatever `n_heads` is (the first case has 2): use "
                "the argument `n_heads`, and d = D // n_heads",
                _split_two_heads,
            ),
            *_split_order_mistakes(),
        ),
        error_hints=(
            (
                "cannot be interpreted as an integer",
                "D / H is a float, and a shape needs integers: the head size is the integer "
                "division D // H",
            ),
        ),
        hint="head h, position t must hold the features h*d .. (h+1)*d - 1 of token t: "
        "which reshape gives each head its own block of features, and which axes must then "
        'change places? The chapter\'s section "Split, attend, concatenate, project" '
        "draws it",
    )
)


def check_split_heads(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, n_heads)``: ``(B, T, D) -> (B, H, T, d)``, head ``h`` = features ``h·d..``.

    Taught in: chapters/04_multihead.ipynb (exercise in exercises/04_multihead.ipynb)
    """
    return SPLIT_HEADS.check(fn)


# ---- merge_heads -----------------------------------------------------------------------


def _merge_cases() -> tuple[Case, ...]:
    rng = _rng()
    shapes = {
        "B=1, H=2, T=3, d=2": (1, 2, 3, 2),
        "B=2, H=3, T=5, d=4": (2, 3, 5, 4),
        "one head (H=1)": (2, 1, 4, 6),
        "heads of size 1 (d=1)": (3, 8, 2, 1),
    }
    return tuple(Case(label, {"x": rng.standard_normal(s)}) for label, s in shapes.items())


def _merge_direct(x: np.ndarray) -> np.ndarray:
    B, H, T, d = x.shape
    return x.reshape(B, T, H * d)


def _merge_interleaved(x: np.ndarray) -> np.ndarray:
    B, H, T, d = x.shape
    return x.transpose(0, 2, 3, 1).reshape(B, T, H * d)


def _merge_concat_time(x: np.ndarray) -> np.ndarray:
    return np.concatenate([x[:, h] for h in range(x.shape[1])], axis=1)


def _merge_names_out_of_order(x: np.ndarray) -> np.ndarray:
    B, T, H, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * d)


def _merge_to_d(x: np.ndarray) -> np.ndarray:
    B, _H, T, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, d)


_HEAD_AXES = ("B", "H", "T", "d")


def _merge_after(order: tuple[int, ...]) -> Callable[[np.ndarray], np.ndarray]:
    """A merge that transposes x to ``order`` (any order but the right one), then reshapes."""

    def merge(x: np.ndarray) -> np.ndarray:
        B, H, T, d = x.shape
        return x.transpose(order).reshape(B, T, H * d)

    return merge


def _merge_order_mistakes() -> tuple[Mistake, ...]:
    """Each order of x's axes before the reshape but the right one (B, T, H, d), named
    by what moved; the orders with a diagnosis of their own are left out."""
    own = {(0, 1, 2, 3), (0, 2, 3, 1), (0, 3, 2, 1), (0, 2, 1, 3)}
    found = []
    for order in itertools.permutations(range(4)):
        if order in own:
            continue
        names = ", ".join(_HEAD_AXES[i] for i in order)
        moved = [i for i in range(4) if order[i] != i]
        if len(moved) == 2:
            a, b = (_HEAD_AXES[order[i]] for i in reversed(moved))
            what = f"it swaps x's axes {moved[0]} and {moved[1]}, {a} and {b}"
        else:
            what = "it moves x's batch axis" if order[0] != 0 else "it moves three axes"
        found.append(
            Mistake(
                f"your transpose puts x's axes in the order ({names}) before the reshape "
                f"({what}): the reshape to (B, T, H·d) keeps the first two axes and joins "
                "the last two, so B must stay first, T come next, and each head's d "
                "features last",
                _merge_after(order),
            )
        )
    return tuple(found)


def _merge_overlapping(x: np.ndarray) -> np.ndarray:
    B, H, T, d = x.shape
    out = np.zeros((B, T, H * d))
    for h in range(H):
        out[:, :, h : h + d] = x[:, h]
    return out


MERGE_HEADS = GRADERS.add(
    Grader(
        name="merge_heads",
        signature="merge_heads(x) with x: (B, H, T, d) -> (B, T, D)",
        reference=merge_heads,
        cases=_merge_cases(),
        mistakes=(
            Mistake(
                "you reshaped straight to (B, T, D): the shape is right but the rows mix "
                "tokens; first swap the head and time axes back, (B, H, T, d) -> "
                "(B, T, H, d), then reshape",
                _merge_direct,
            ),
            Mistake(
                "your rows interleave the heads (feature i of every head, then feature i+1): "
                "put the heads side by side, (B, T, H, d) then reshape to (B, T, H*d)",
                _merge_interleaved,
            ),
            Mistake(
                "you concatenated the heads along the time axis (axis 1 of each (B, T, d) "
                "head), which stacks them one after another in time: they go side by side "
                "along the feature axis, the last one",
                _merge_concat_time,
            ),
            Mistake(
                "you unpacked x.shape in another order than x has: x is (B, H, T, d), so the "
                "second name is the number of heads and the third the time",
                _merge_names_out_of_order,
            ),
            *(
                Mistake(
                    "you reduced the heads (a mean or a sum over axis 1): the merged vector "
                    "keeps every head's d features side by side, H·d numbers; concatenate "
                    "the heads along the feature axis instead",
                    lambda x, how=how: getattr(np, how)(x, axis=1),
                )
                for how in ("mean", "sum")
            ),
            Mistake(
                "your heads are in reverse order: head 0's features must come first (columns "
                "0 .. d-1), then head 1's, and so on",
                lambda x: merge_heads(x[:, ::-1]),
            ),
            Mistake(
                "you swapped the axes back to (B, T, H, d) but did not join the last two: "
                "reshape to (B, T, H·d), the heads' features side by side",
                lambda x: x.transpose(0, 2, 1, 3),
            ),
            Mistake(
                "you swapped axes 1 and 3, which gives (B, d, T, H): the head axis (1) and "
                "the time axis (2) change places, then the reshape joins H and d",
                lambda x: x.swapaxes(1, 3).reshape(x.shape[0], x.shape[2], -1),
            ),
            Mistake(
                "your transpose is right, but the reshape also joined the time axis into "
                "the features: (B, T·H·d). Keep T as its own axis; only the heads and their "
                "d features join",
                lambda x: x.transpose(0, 2, 1, 3).reshape(x.shape[0], -1),
            ),
            Mistake(
                "you reshape to (B, T, d): the merged axis holds every head's features, H·d "
                "numbers, not one head's d",
                _merge_to_d,
            ),
            Mistake(
                "you merged into 2 heads whatever x holds (the first case has 2): the number "
                "of heads is x.shape[1]; read it from x like the other sizes",
                lambda x: x.transpose(0, 2, 1, 3).reshape(x.shape[0], x.shape[2], 2 * x.shape[3]),
            ),
            Mistake(
                "np.concatenate(x, ...) goes through x's first axis, the batch: it joins the "
                "batch entries side by side, not the heads. The heads are x[:, h], along "
                "axis 1",
                lambda x: np.concatenate(list(x), axis=-1),
            ),
            Mistake(
                "your heads overlap: head h's block starts at column h (a slice h:h+d), but "
                "each head owns its own block of d columns, h*d .. (h+1)*d - 1",
                _merge_overlapping,
            ),
            *(
                Mistake(
                    f"your output holds one head's d features per token, {which} head's (a "
                    "slice or an index kept it and dropped the others): the merged vector "
                    "keeps all H heads side by side, H·d numbers a token",
                    lambda x, h=h: x[:, h],
                )
                for h, which in ((0, "the first"), (-1, "the last"))
            ),
            *_merge_order_mistakes(),
        ),
        hint="merge_heads undoes split_heads: which axes did the split move, and which axis "
        'did it cut in two? The chapter\'s section "Split, attend, concatenate, project" '
        "draws both directions",
    )
)


def check_merge_heads(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x)``: ``(B, H, T, d) -> (B, T, D)``, the heads side by side.

    Taught in: chapters/04_multihead.ipynb (exercise in exercises/04_multihead.ipynb)
    """
    return MERGE_HEADS.check(fn)


# ---- parameter count -------------------------------------------------------------------


def _count_cases() -> tuple[Case, ...]:
    sizes = [(8, 2, True), (512, 8, True), (512, 8, False), (768, 12, True), (6, 1, False)]
    return tuple(
        Case(
            f"D={D}, H={H}, bias={bias}",
            {"d_model": D, "n_heads": H},
            {"bias": bias},
        )
        for D, H, bias in sizes
    )


PARAMETER_COUNT = GRADERS.add(
    Grader(
        name="mha_parameter_count",
        signature="mha_parameter_count(d_model, n_heads, bias=True) -> int",
        reference=lambda d_model, n_heads, bias=True: mha_parameter_count(
            d_model, n_heads, bias=bias
        ),
        cases=_count_cases(),
        mistakes=(
            Mistake(
                "you left out the biases: with bias=True each of the four projections also "
                "has D bias numbers",
                lambda d_model, n_heads, bias=True: 4 * d_model**2,
            ),
            Mistake(
                "you counted three bias vectors: each of the four projections, W_o included, "
                "has a bias of D numbers",
                lambda d_model, n_heads, bias=True: 4 * d_model**2 + 3 * d_model * bias,
            ),
            Mistake(
                "you counted the biases even with bias=False",
                lambda d_model, n_heads, bias=True: 4 * d_model**2 + 4 * d_model,
            ),
            Mistake(
                "you forgot W_o: besides W_q, W_k and W_v there is the output projection, "
                "one more D x D matrix (and bias)",
                lambda d_model, n_heads, bias=True: 3 * d_model**2 + 3 * d_model * bias,
            ),
            Mistake(
                "you gave every head full D x D matrices: a head projects to d = D/H "
                "features, so the H heads together hold one D x D matrix per projection",
                lambda d_model, n_heads, bias=True: (
                    n_heads * 3 * d_model**2 + d_model**2 + (n_heads * 3 * d_model + d_model) * bias
                ),
            ),
            Mistake(
                "you counted the whole layer once per head: the H heads share the four "
                "D x D matrices (each head uses d = D/H of their rows), so the count does "
                "not depend on H",
                lambda d_model, n_heads, bias=True: n_heads * (4 * d_model**2 + 4 * d_model * bias),
            ),
            Mistake(
                "your biases hold d = D/H numbers each: each projection's bias has one "
                "number per output feature, D numbers, whatever the number of heads",
                lambda d_model, n_heads, bias=True: (
                    4 * d_model**2 + 4 * (d_model // n_heads) * bias
                ),
            ),
            Mistake(
                "you counted one head's W_q, W_k and W_v (D x d each): there are H of them, "
                "which together make one D x D matrix per projection",
                lambda d_model, n_heads, bias=True: (
                    3 * d_model * (d_model // n_heads) + d_model**2 + 4 * d_model * bias
                ),
            ),
            Mistake(
                "you counted all four projections as one head's D x d matrices: the H heads "
                "together make one D x D matrix per projection, 4·D² weights whatever H is",
                lambda d_model, n_heads, bias=True: (
                    4 * d_model * (d_model // n_heads) + 4 * d_model * bias
                ),
            ),
            Mistake(
                "your weights are right, but you counted one bias vector: each of the four "
                "projections has its own bias of D numbers",
                lambda d_model, n_heads, bias=True: 4 * d_model**2 + d_model * bias,
            ),
            Mistake(
                "you counted each bias as one number: a bias is a vector with one number "
                "per output feature, D numbers for each of the four projections",
                lambda d_model, n_heads, bias=True: 4 * d_model**2 + 4 * bias,
            ),
            Mistake(
                "you counted each bias as a D x D matrix, like the weight: a bias holds one "
                "number per output feature, D numbers for each of the four projections",
                lambda d_model, n_heads, bias=True: 4 * d_model**2 * (1 + int(bias)),
            ),
            Mistake(
                "with bias=False your count is 0: a conditional expression takes everything "
                "to its left, so `a + b if bias else 0` means `(a + b) if bias else 0` "
                "(Python's precedence). Which part of the sum should the `if` decide?",
                lambda d_model, n_heads, bias=True: 4 * d_model**2 + 4 * d_model if bias else 0,
            ),
            Mistake(
                "you counted one projection: the layer has four, W_q, W_k, W_v and W_o, each "
                "with a D x D weight and (with bias=True) a bias of D numbers",
                lambda d_model, n_heads, bias=True: d_model**2 + d_model * bias,
            ),
            Mistake(
                "you counted (D + 1)² per projection: a bias adds one vector of D numbers "
                "to the D x D weight, not a row and a column",
                lambda d_model, n_heads, bias=True: 4 * (d_model + int(bias)) ** 2,
            ),
            Mistake(
                "you multiplied the weights by the number of heads, H·4·D²: each head's "
                "W_q is D x d, and the H of them side by side make one D x D matrix, so "
                "the weights do not grow with H",
                lambda d_model, n_heads, bias=True: n_heads * 4 * d_model**2 + 4 * d_model * bias,
            ),
            Mistake(
                "you divided by the number of heads: H heads of D x d make D x D together; "
                "the count does not depend on H",
                lambda d_model, n_heads, bias=True: (
                    (4 * d_model**2 + 4 * d_model * bias) // n_heads
                ),
            ),
        ),
        hint="list the layer's projections and the shape of each one's weight and bias; "
        "does the number of heads change any of them? The chapter's section \"The cost is "
        'the same" counts them',
    )
)


def check_mha_parameter_count(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(d_model, n_heads, bias=True)``: the parameters of one multi-head layer.

    Taught in: chapters/04_multihead.ipynb (exercise in exercises/04_multihead.ipynb)
    """
    return PARAMETER_COUNT.check(fn)


def _count_mistakes_at(
    d_model: int, n_heads: int, besides: tuple[tuple[Any, str], ...] = ()
) -> tuple[tuple[int, str], ...]:
    """Exercise 4.3's counting mistakes as the numbers they give for one layer of this size,
    each with 4.3's diagnosis (a prediction of the count makes the same mistakes); the
    numbers ``besides`` already diagnoses are left to it."""
    right = mha_parameter_count(d_model, n_heads)
    found: dict[int, str] = {value: "" for value, _ in besides}
    for mistake in PARAMETER_COUNT.mistakes:
        value = int(mistake.fn(d_model, n_heads, bias=True))
        if value != right:
            found.setdefault(value, mistake.diagnosis)
    return tuple((value, said) for value, said in found.items() if said)


_BERT_WRONG: tuple[tuple[Any, str], ...] = (
    (
        12 * 2_362_368,
        "that gives every head its own 768 x 768 matrices; each head projects to "
        "64 features only, so the twelve together make one 768 x 768 matrix",
    ),
    (
        12 * 4 * 768 * 768,
        "that gives every head its own four 768 x 768 matrices: the twelve heads "
        "share them (each uses 64 of their rows), so the count does not grow with "
        "the heads",
    ),
    (
        3 * 768 * 64 + 768 * 768 + 4 * 768,
        "that counts one head's W_q, W_k and W_v (768 x 64 each): the twelve heads "
        "together have 768 x 768 each",
    ),
    (
        12 * 4 * 768 * 768 + 4 * 768,
        "that gives every head its own four 768 x 768 matrices (the biases you "
        "counted once): the twelve heads share the matrices (each uses 64 of their "
        "rows), so the count does not grow with the heads",
    ),
    (
        12 * 2_362_368 + 4 * 768,
        "that counts twelve whole layers (and the biases once more): it gives every "
        "head its own 768 x 768 matrices, but the twelve heads share them (each uses "
        "64 of their rows), so the count does not grow with the heads",
    ),
    (
        2_359_296,
        "that is the four weight matrices alone: each projection also has a bias",
    ),
    (
        3 * 768 * 768,
        "that is W_q, W_k and W_v without their biases: add the output projection "
        "W_o, and each projection's bias",
    ),
    (
        2.362368,
        "that looks like the count in millions, as papers write it (2.4M): give the "
        "exact number of parameters",
    ),
    (
        4 * 768 * 768 + 4 * 64,
        "your biases have 64 numbers each: a projection's bias has one number per "
        "output feature, D = 768, whatever the number of heads",
    ),
    (
        1_771_776,
        "that is W_q, W_k and W_v with their biases; add the output projection W_o",
    ),
    (
        2_362_368 // 12,
        "that is one twelfth of the layer: the count does not depend on the heads",
    ),
    (
        4 * 768 * 768 + 768,
        "that counts one bias vector; each of the four projections has its own bias",
    ),
    (
        768 * 768,
        "that is one 768 x 768 matrix: the layer has four projections, W_q, W_k, W_v "
        "and W_o, each with its weight and its bias",
    ),
)
"""4.4's own wrong counts (4.3's mistakes add the others)."""


def _bert_reason(given: float) -> str | None:
    """A count of 4.4 that no listed mistake explains, read from its distance to the right
    one: whole bias vectors of D = 768 too many or too few, or a slip in the arithmetic."""
    right = 2_362_368
    if given != int(given) or given <= 0:
        return None
    off = int(given) - right
    more = "too many" if off > 0 else "too few"
    vectors, left = divmod(abs(off), 768)
    if left == 0 and 1 <= vectors <= 8:
        return (
            f"your count is {abs(off):,} = {vectors} x 768 {more}: {vectors} vector"
            f"{'s' * (vectors > 1)} of D = 768 numbers (a bias, or a row of a 768 x 768 "
            f"matrix) {'counted where the layer has none' if off > 0 else 'left out'}: "
            "list each projection's weight and bias and count them again"
        )
    if abs(off) < 100:
        return (
            f"your count is {abs(off)} {more}, far less than any part of the layer (its "
            "smallest part, a bias, has 768 numbers): what you counted is right, the "
            "arithmetic slipped. Work out each term again, then add"
        )
    return None


BERT_PARAMETERS = GRADERS.add(
    Question(
        name="bert_parameters",
        answer=2_362_368,
        explanation="4·768² + 4·768 = 2,359,296 + 3,072: the twelve heads of size 64 share "
        "those four 768 x 768 matrices between them.",
        wrong=(*_BERT_WRONG, *_count_mistakes_at(768, 12, besides=_BERT_WRONG)),
        hint="what are the layer's weight matrices and biases, and how large is each for "
        "D = 768? Does the number of heads change them? (exercise 4.3)",
        atol=0.5,
        near=0.03,
        near_rounding=True,
        near_hint="close, but rounded: the question asks for the exact count, every weight "
        "and every bias of the layer",
        reason=_bert_reason,
    )
)


def check_bert_parameters(answer: Any) -> CheckResult:
    """Check a predicted parameter count of one BERT-base attention layer (D=768, H=12).

    Taught in: chapters/04_multihead.ipynb (exercise in exercises/04_multihead.ipynb)
    """
    return BERT_PARAMETERS.check(answer)


# ---- the nn.Module ---------------------------------------------------------------------

_NAMES = ("W_q", "W_k", "W_v", "W_o")


def _seeded_layer(d_model: int, n_heads: int, seed: int) -> MultiHeadAttention:
    seed_cpu(seed)
    layer = MultiHeadAttention(d_model, n_heads).double()
    with torch.no_grad():  # non-zero biases, so a missing or misplaced bias shows
        for name in _NAMES:
            getattr(layer, name).bias.normal_()
    return layer


def _module_cases() -> tuple[Case, ...]:
    """Self- and cross-attention; in cross-attention the keys differ from the values."""
    g = torch.Generator().manual_seed(4)
    # label: B, T, S, D, H, mask ("causal", "middle": key 2 hidden from every query)
    specs = {
        "self-attention, B=3, T=5, D=8, H=2": (3, 5, 5, 8, 2, None),
        "cross-attention, T=3 queries, S=6 keys (keys != values), D=12, H=3": (
            2,
            3,
            6,
            12,
            3,
            None,
        ),
        "one head, D=6": (1, 4, 4, 6, 1, None),
        "causal mask, B=2, T=5, D=16, H=4": (2, 5, 5, 16, 4, "causal"),
        "cross-attention, B=1, T=4, S=6, key 2 masked, D=8, H=2": (1, 4, 6, 8, 2, "middle"),
    }
    cases = []
    for i, (label, (B, T, S, D, H, masked)) in enumerate(specs.items()):
        query = torch.randn(B, T, D, generator=g, dtype=torch.float64)
        if label.startswith("cross"):
            key = torch.randn(B, S, D, generator=g, dtype=torch.float64)
            value = torch.randn(B, S, D, generator=g, dtype=torch.float64)
        else:
            key, value = query.clone(), query.clone()
        mask = None
        if masked == "causal":
            mask = torch.ones(T, S, dtype=torch.bool).tril()
        elif masked == "middle":
            mask = torch.ones(T, S, dtype=torch.bool)
            mask[:, 2] = False
        inputs = {
            "query": query,
            "key": key,
            "value": value,
            "n_heads": H,
            "seed": i,
            "mask": mask,
        }
        cases.append(Case(label, inputs))
    return tuple(cases)


def _same_parameters(layer: nn.Module, reference: nn.Module) -> None:
    """Raise :class:`~.specs.AnswerProblem` unless ``layer`` has the reference's parameters
    (the weights are copied in by name: a layer without biases cannot take them)."""
    want = {n: tuple(p.shape) for n, p in reference.state_dict().items()}
    got = {n: tuple(p.shape) for n, p in layer.state_dict().items()}
    if got == want:
        return
    missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
    if missing or extra:
        said = "; ".join(
            part
            for part in (
                f"missing {', '.join(missing)}" if missing else "",
                f"not expected {', '.join(extra)}" if extra else "",
            )
            if part
        )
        raise AnswerProblem(
            EXCEPTION,
            f"your layer's parameters are not the exercise's ({said})",
            "the layer has exactly four projections, self.W_q, self.W_k, self.W_v and "
            "self.W_o, each nn.Linear(d_model, d_model) with its bias (the default)",
        )
    wrong = next(n for n in want if got[n] != want[n])
    raise AnswerProblem(
        EXCEPTION,
        f"`{wrong}` has shape {got[wrong]}; expected {want[wrong]}",
        "each projection maps d_model features to d_model features: nn.Linear(d_model, "
        "d_model); the heads are made by splitting its output, not by smaller layers",
    )


_FORWARD_SEEDS = itertools.count(10_000)


def _run_module(cls: Any, query, key, value, n_heads, seed, mask=None) -> tuple[torch.Tensor, ...]:
    """One case for a class (see :func:`.modules.adapt`): build, load weights, run, backprop."""
    reference = _seeded_layer(query.shape[-1], n_heads, seed)
    layer = cls(query.shape[-1], n_heads).double()
    _same_parameters(layer, reference)
    layer.load_state_dict(reference.state_dict())
    query = query.detach().clone().requires_grad_()
    recorder = Recorder()
    # A new seed for each forward: a layer that draws random numbers (dropout left on)
    # gives other numbers on a second call, which the check then says.
    seed_cpu(next(_FORWARD_SEEDS))
    with recorder:
        made = layer(query, key, value, mask=mask)
    out, weights = returned_items(made, ("out", "weights"), "your forward")
    require_gradient(out, "out", recorder)
    g = torch.Generator().manual_seed(seed)
    upstream = torch.randn(out.shape, generator=g, dtype=out.dtype)
    (out * upstream).sum().backward()
    if query.grad is None:
        raise AnswerProblem(
            NO_GRADIENT,
            "no gradient flows from `out` back to the query",
            "`out` has the right numbers, but the path from the query to it was cut by "
            f"{cut_by(recorder)}: compute the scores, the softmax and the weighted sum with "
            "torch operations only (not NumPy)",
        )
    return out.detach(), weights.detach(), query.grad, layer.W_q.weight.grad


def planted_heads(
    bug: str, scores: torch.Tensor, v: torch.Tensor, mask: Any, W_o: nn.Module
) -> tuple[torch.Tensor, torch.Tensor]:
    """The end of a planted multi-head layer, from the scores ``(B, H, T, S)`` on.

    Mask (``True`` = may attend), softmax over the keys, weighted values, heads merged and
    projected by ``W_o``, each step with the ``bug`` it can carry ("mask ignored", "mask
    inverted", "mask after", "mask added", "softmax axis", "softmax heads", "direct merge",
    "cat time", "no W_o", "weights averaged").
    Chapter 8's grouped-query layer ends the same way.
    """
    if mask is not None and bug not in ("mask ignored", "mask after", "mask added"):
        hidden = mask if bug == "mask inverted" else ~mask
        scores = scores.masked_fill(hidden, -math.inf)
    if mask is not None and bug == "mask added":
        scores = scores + mask
    dim = {"softmax axis": -2, "softmax heads": 1}.get(bug, -1)
    weights = torch.softmax(scores, dim=dim)
    if mask is not None and bug == "mask after":
        weights = weights.masked_fill(~mask, 0.0)
    heads = weights @ v  # (B, H, T, d)
    B, H, T, d = heads.shape
    if bug == "direct merge":
        concat = heads.reshape(B, T, H * d)
    elif bug == "cat time":  # the heads one after another in time: (B, H * T, d)
        concat = torch.cat(heads.unbind(1), dim=1)
    else:
        concat = heads.transpose(1, 2).reshape(B, T, H * d)
    out = concat if bug == "no W_o" else W_o(concat)
    if bug == "weights averaged":  # as nn.MultiheadAttention does by default
        weights = weights.mean(dim=1)
    return out, weights


class _PlantedMHA(nn.Module):
    """A multi-head layer with the parameter names of the reference, and one bug."""

    bug = ""

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.n_heads, self.d_head = n_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def _split(self, x: torch.Tensor, length: int | None = None) -> torch.Tensor:
        B, L, _ = x.shape
        L = L if length is None else length
        if self.bug == "direct split":
            return x.reshape(B, self.n_heads, L, self.d_head)
        return x.reshape(B, L, self.n_heads, self.d_head).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        if self.bug == "key and value swapped":
            key, value = value, key
        # "query length": keys and values split with the queries' length T, not their S
        T = query.shape[1] if self.bug == "query length" else None
        if self.bug == "keys from query":  # self-attention's habit in a cross-attention
            key = value = query
        q, k, v = self._split(self.W_q(query)), self._split(self.W_k(key), T), None
        v = self.W_v(value) if self.bug == "v not split" else self._split(self.W_v(value), T)
        if self.bug == "mask axis 1" and mask is not None:  # (T, S) -> (T, 1, S)
            mask = mask[:, None]
        if self.bug == "own causal" and mask is not None:  # the mask given is not used
            mask = torch.ones(mask.shape, dtype=torch.bool).tril()
        if self.bug == "mask repeated" and mask is not None:  # (T, S) -> (1, H * T, S)
            mask = mask.unsqueeze(0).repeat_interleave(self.n_heads, dim=1)
        if self.bug == "k for v":
            v = self._split(self.W_k(value))
        if self.bug == "mask transposed" and mask is not None:
            mask = mask.T  # (S, T): raises for T != S, hides the past for a causal T = S
        scale = {
            "no scale": 1.0,
            "scale by D": 1 / math.sqrt(q.shape[-1] * self.n_heads),
            "scale by H": 1 / math.sqrt(self.n_heads),
        }
        kT = k.transpose(1, 2) if self.bug == "k transpose 1 2" else k.transpose(-2, -1)
        if self.bug == "scale after":  # the weights divided by √d after the softmax
            root = math.sqrt(q.shape[-1])
            out, weights = planted_heads("", q @ kT, v / root, mask, self.W_o)
            return out, weights / root
        scores = q @ kT * scale.get(self.bug, 1 / math.sqrt(q.shape[-1]))
        if self.bug == "keys first":  # k qᵀ: (B, H, S, T), one row per key
            scores = k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])
        return planted_heads(self.bug, scores, v, mask, self.W_o)


def _planted(bug: str) -> Callable[..., Any]:
    planted = type(f"Planted_{bug.replace(' ', '_')}", (_PlantedMHA,), {"bug": bug})
    return adapt(_run_module, planted)


MULTIHEAD_ATTENTION = GRADERS.add(
    Grader(
        name="multihead_attention",
        signature="MyMultiHeadAttention(d_model, n_heads); forward(query, key, value, "
        "mask=None) -> (out (B, T, D), weights (B, H, T, S))",
        reference=adapt(_run_module, MultiHeadAttention),
        cases=_module_cases(),
        outputs=("out", "weights", "query gradient", "W_q gradient"),
        mistakes=(
            Mistake(
                "you split the heads with one reshape to (B, H, T, d): reshape to "
                "(B, T, H, d), then transpose(1, 2)",
                _planted("direct split"),
            ),
            Mistake(
                "you merged the heads with one reshape to (B, T, D): transpose(1, 2) back "
                "to (B, T, H, d) first, then reshape",
                _planted("direct merge"),
            ),
            Mistake(
                "you did not scale the scores: divide q kᵀ by √d, with d = D/H the size of "
                "one head",
                _planted("no scale"),
            ),
            Mistake(
                "you scaled by √D: each head compares vectors of size d = D/H, so divide by √d",
                _planted("scale by D"),
            ),
            Mistake(
                "you scaled by √H, the number of heads: the scale belongs to the size of the "
                "vectors each head compares, d = D/H, the length of one head's queries and "
                "keys",
                _planted("scale by H"),
            ),
            Mistake(
                "you built a causal mask of your own instead of using the `mask` argument: "
                "the layer must hide exactly the keys the given mask hides (here key 2 of a "
                "cross-attention, which no causal mask describes)",
                _planted("own causal"),
            ),
            Mistake(
                "your keys and values come from `query`: in cross-attention the queries "
                "come from `query` but the keys and values from `key` and `value`, another "
                "sequence of length S, so your scores are (.., T, T) where (.., T, S) is "
                "expected",
                _planted("keys from query"),
            ),
            Mistake(
                "you split q and k into heads but not v: v is still (B, S, D), so the "
                "weights (B, H, T, S) cannot multiply it; the values are split into heads "
                "like the queries and keys",
                _planted("v not split"),
            ),
            Mistake(
                "mask[:, None] makes the (T, S) mask (T, 1, S), which lines its T axis up "
                "against the heads of the scores (B, H, T, S): a (T, S) mask already "
                "broadcasts over the batch and the heads as it is (axes of size 1 go in "
                "front, not in the middle)",
                _planted("mask axis 1"),
            ),
            Mistake(
                "the softmax runs over the queries (dim=-2); each query's weights must sum "
                "to 1 over the keys: dim=-1",
                _planted("softmax axis"),
            ),
            Mistake(
                "you returned the concatenated heads without the output projection: apply self.W_o",
                _planted("no W_o"),
            ),
            Mistake(
                "the values come from W_k; project them with W_v",
                _planted("k for v"),
            ),
            Mistake(
                "you ignored the mask: set the scores where mask is False to -inf before "
                "the softmax",
                _planted("mask ignored"),
            ),
            Mistake(
                "you averaged `weights` over the heads (axis 1), as nn.MultiheadAttention "
                "does by default: return every head's weights, (B, H, T, S)",
                _planted("weights averaged"),
            ),
            Mistake(
                "you added the boolean mask to the scores: that adds 1 where a query may "
                "look and 0 where it may not, so it hides nothing; set the hidden scores to "
                "-inf (masked_fill where the mask is False)",
                _planted("mask added"),
            ),
            Mistake(
                "you masked the weights after the softmax: the masked keys still took their "
                "share of the softmax, so the rows no longer sum to 1. Fill the scores with "
                "-inf where mask is False before the softmax",
                _planted("mask after"),
            ),
            Mistake(
                "your mask is inverted: masked_fill fills where its argument is True, and "
                "the mask is True where a query may look; fill where it is False",
                _planted("mask inverted"),
            ),
            Mistake(
                "the softmax runs over the heads (dim=1): each head's weights must sum to 1 "
                "over the keys, the last axis",
                _planted("softmax heads"),
            ),
            Mistake(
                "you concatenated the heads along the time axis (dim 1 of each (B, T, d) "
                "head), one after another in time: put them side by side along the "
                "features, the last axis, to get (B, T, D) for W_o",
                _planted("cat time"),
            ),
            Mistake(
                "you split the keys and values with the queries' length T: they have their "
                "own length S (key.shape[1]), which differs from T in cross-attention",
                _planted("query length"),
            ),
            Mistake(
                "the (T, S) mask broadcasts over the batch and the heads as it is; repeated "
                "along dim 1 it became (1, H·T, S), H·T rows of queries. Use it without "
                "repeating (or add axes of size 1 in front)",
                _planted("mask repeated"),
            ),
            Mistake(
                "keys and values are swapped: the scores compare the queries with W_k(key), "
                "and the weights average W_v(value) (in cross-attention they differ)",
                _planted("key and value swapped"),
            ),
            Mistake(
                "k is (B, H, S, d): transpose(1, 2) swaps its heads and keys, so q @ k no "
                "longer pairs each query with each key. The scores need the last two axes of "
                "k swapped, (B, H, d, S)",
                _planted("k transpose 1 2"),
            ),
            Mistake(
                "your score matrix is transposed: with the keys first in the product, it "
                "is (B, H, S, T), one row per key, so the softmax shares each key among "
                "the queries and the weights no longer multiply v's (S, d). The scores need "
                "one row per query, (B, H, T, S): which operand of the product gives the "
                "rows?",
                _planted("keys first"),
            ),
            Mistake(
                "the mask is (T, S), one row per query, and broadcasts over the scores "
                "(B, H, T, S) as it is: you transposed it (mask.T is (S, T)); with T = S it "
                "would hide the past instead of the future",
                _planted("mask transposed"),
            ),
            Mistake(
                "you divided the weights by √d after the softmax: they no longer sum to 1 "
                "over the keys. The scale belongs to the scores, before the softmax",
                _planted("scale after"),
            ),
        ),
        hint="follow one head through the layer: its queries, keys and values, the "
        "scores, their scale and the softmax's axis, then the heads put back side by side "
        'and projected. The chapter\'s section "Split, attend, concatenate, project" '
        "builds the layer step by step",
        solution="MyMultiHeadAttention",
        wrap=lambda cls: adapt(_run_module, cls),
        equivalent=(
            (
                "library: return self.W_o(concat), weights -> return (self.W_o(concat), "
                "torch.from_numpy(weights.detach().",
                "the weights are returned to be looked at: the gradients flow through `out`, "
                "which this change leaves as it is",
            ),
            (
                "swap: k.transpose(-2, -1) in scores = ( q @ k.transpose(-2, -1) / "
                "math.sqrt(d) ) -> k.transpose(-1, -2)",
                "transpose(-1, -2) and transpose(-2, -1) swap the same two axes",
            ),
            *(
                (
                    f'fill: float("-inf") in scores = scores.masked_fill(~mask, '
                    f'float("-inf")) -> {fill}',
                    "masked_fill replaces the score, and no row here is fully masked: any "
                    "fill far below the visible scores gives those keys exactly 0 weight",
                )
                for fill in ("-1000000000.0", "-10000.0", "-1.7976931348623157e+308")
            ),
            (
                "size: x.shape[1] in return x.reshape(x.shape[0], x.shape[1], H, d).transpose(1,"
                "… -> x.shape[-2]",
                "the projected inputs are 3-D: axis 1 is axis -2",
            ),
        ),
        rtol=1e-7,
        atol=1e-9,
    )
)


def check_multihead_attention(cls: Any) -> CheckResult:
    """Check a multi-head attention ``nn.Module`` class against the lib's, with copied weights.

    The class is built as ``cls(d_model, n_heads)``, gets the weights of a seeded
    :class:`~attnlab.mechanism.multihead.MultiHeadAttention` (parameters ``W_q, W_k, W_v, W_o``), and
    its outputs, per-head weights and gradients are compared.

    Taught in: chapters/04_multihead.ipynb (exercise in exercises/04_multihead.ipynb)
    """
    return check_class(
        MULTIHEAD_ATTENTION,
        cls,
        _run_module,
        example="check_multihead_attention(MyMultiHeadAttention)",
    )


# ---- weights into nn.MultiheadAttention -------------------------------------------------


def _torch_cases() -> tuple[Case, ...]:
    g = torch.Generator().manual_seed(5)
    specs = {"D=8, H=2": (2, 5, 8, 2), "D=12, H=3": (1, 4, 12, 3), "D=16, H=4": (2, 3, 16, 4)}
    return tuple(
        Case(
            label,
            {"x": torch.randn(B, T, D, generator=g, dtype=torch.float64), "n_heads": H, "seed": i},
        )
        for i, (label, (B, T, D, H)) in enumerate(specs.items())
    )


def _run_load(load: Callable[..., Any], x, n_heads, seed) -> tuple[torch.Tensor, ...]:
    """One case for a loader (see :func:`.modules.adapt`): copy into nn.MultiheadAttention, run."""
    ours = _seeded_layer(x.shape[-1], n_heads, seed)
    seed_cpu(1000 + seed)
    theirs = nn.MultiheadAttention(x.shape[-1], n_heads, batch_first=True, dtype=torch.float64)
    before = dict(theirs.named_parameters(remove_duplicate=False))
    load(ours, theirs)
    _kept_in_place(ours, theirs, before)
    with torch.no_grad():
        out, weights = theirs(x, x, x, average_attn_weights=False)
    return out, weights


def _kept_in_place(ours: nn.Module, theirs: nn.Module, before: dict[str, nn.Parameter]) -> None:
    """Raise :class:`AnswerProblem` unless theirs still holds its own parameter objects.

    The exercise copies *into* theirs' parameters: a new ``nn.Parameter`` in their place (an
    optimizer built on theirs keeps the old ones), or ours' own parameter or storage (the
    two layers are tied from then on), gives the right outputs once but is not a copy.
    """
    own = {id(p): name for name, p in ours.named_parameters()}
    memory = {p.untyped_storage().data_ptr(): name for name, p in ours.named_parameters()}
    for name, old in before.items():
        module, _, attribute = name.rpartition(".")
        new = getattr(theirs.get_submodule(module), attribute, None)
        if id(new) in own:
            raise AnswerProblem(
                WRONG_TYPE,
                f"theirs.{name} is ours.{own[id(new)]} itself: the two layers now share "
                "one parameter",
                f"theirs.{name} = ours.{own[id(new)]} does not copy the numbers, it ties the "
                "two layers together: training or editing one changes the other. Copy the "
                f"numbers into theirs' own tensor with theirs.{name}.copy_(...) under "
                "torch.no_grad()",
            )
        if new is not old:
            raise AnswerProblem(
                WRONG_TYPE,
                f"theirs.{name} is a new object: your function replaced theirs' parameter "
                "instead of filling it",
                "the statement asks for a copy in place: the outputs agree (theirs now runs "
                "on the new parameter, so the comparison below prints True), but an optimizer "
                f"or hook built on theirs before the load still holds the old theirs.{name}, "
                "which never got the numbers (the comparison's second line). Write into the existing parameter (.copy_() under torch.no_grad()) "
                "instead of assigning a new one to its name",
            )
        if isinstance(new, torch.Tensor) and new.untyped_storage().data_ptr() in memory:
            source = memory[new.untyped_storage().data_ptr()]
            raise AnswerProblem(
                WRONG_TYPE,
                f"theirs.{name} shares its memory with ours.{source}: the two layers are tied",
                f"theirs.{name} is still theirs' own parameter, but its .data is ours.{source}'s "
                "memory, not a copy of it: editing one layer changes the other. Copy the "
                f"numbers with theirs.{name}.copy_(...) under torch.no_grad()",
            )


def _reference_load(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    theirs.load_state_dict(ours.to_torch().state_dict())


def _loader(
    order=(0, 1, 2),
    transpose=False,
    biases=True,
    out_proj=True,
    cast=False,
    out_from="W_o",
    in_weight=True,
    in_bias=True,
    out_transpose=None,
    out_bias_from=None,
    bias_order=None,
    out_bias=True,
    side_by_side=False,
) -> Callable:
    out_transpose = transpose if out_transpose is None else out_transpose
    bias_order = order if bias_order is None else bias_order

    def load(ours, theirs):
        lins = [(ours.W_q, ours.W_k, ours.W_v)[i] for i in order]
        bias_lins = [(ours.W_q, ours.W_k, ours.W_v)[i] for i in bias_order]

        def numbers(t):  # through float32 first (cast): the digits beyond it are lost
            return t.float() if cast else t

        with torch.no_grad():
            w = [lin.weight.T if transpose else lin.weight for lin in lins]
            if in_weight:
                # side_by_side: joined along dim 1, (D, 3D), then reshaped to (3D, D)
                joined = (
                    torch.cat(w, dim=1).reshape(-1, w[0].shape[1]) if side_by_side else torch.cat(w)
                )
                theirs.in_proj_weight.copy_(numbers(joined))
            if biases and in_bias:
                theirs.in_proj_bias.copy_(numbers(torch.cat([lin.bias for lin in bias_lins])))
            if out_proj:
                source = getattr(ours, out_from)
                o = source.weight
                theirs.out_proj.weight.copy_(o.T if out_transpose else o)
                if biases and out_bias:
                    theirs.out_proj.bias.copy_(getattr(ours, out_bias_from or out_from).bias)

    return load


def _load_mistake(message: str, **loader: Any) -> Mistake:
    """A planted copy, made by ``_loader(**loader)``, run as the cases run the learner's."""
    return Mistake(message, adapt(_run_load, _loader(**loader)))


_IN_NAMES = ("W_q", "W_k", "W_v")


def _block_order_mistakes() -> tuple[Mistake, ...]:
    """in_proj's three blocks filled from any projections but W_q, W_k, W_v in that order
    (one repeated, two swapped, all moved round), the weights alone or with their biases;
    the two orders with a diagnosis of their own are left out."""
    found = []
    for order in itertools.product(range(3), repeat=3):
        if order in ((0, 1, 2), (1, 0, 2), (2, 1, 0)):
            continue
        held = ", ".join(_IN_NAMES[i] for i in order)
        if sorted(order) != [0, 1, 2]:
            twice = max(set(order), key=order.count)
            left = ", ".join(_IN_NAMES[i] for i in range(3) if i not in order)
            blocks = {2: "two of the three blocks", 3: "all three blocks"}[order.count(twice)]
            get = "gets" if "," not in left else "get"
            what = (
                f"{_IN_NAMES[twice]} fills {blocks} and {left.replace(', ', ' and ')} never "
                f"{get} in: each block has its own projection"
            )
        elif sum(order[i] != i for i in range(3)) == 2:
            a, b = (_IN_NAMES[i] for i in range(3) if order[i] != i)
            what = f"{a} and {b} are swapped"
        else:
            what = "every block holds another projection than its own"
        # A key bias adds the same amount to every score of a row, which the softmax
        # cancels: where only the keys' block is wrong, its bias cannot show.
        keys_only = [i for i in range(3) if order[i] != i] == [1]
        for with_bias in (True,) if keys_only else (True, False):
            part = "weights and biases" if with_bias else "weights (the biases are right)"
            part = "weights" if keys_only else part
            found.append(
                _load_mistake(
                    f"in_proj's {part} hold {held}, in that order: {what}. in_proj_weight "
                    "stacks the queries' block (rows 0..D-1), then the keys', then the "
                    "values'",
                    order=order,
                    bias_order=None if with_bias else (0, 1, 2),
                )
            )
    return tuple(found)


def _load_nothing(ours, theirs) -> None:
    """A loader that leaves ``theirs`` as it was (copies the other way, into a new layer)."""


LOAD_INTO_TORCH = GRADERS.add(
    Grader(
        name="load_into_torch",
        signature="load_into_torch(ours, theirs): copy ours' weights into theirs, in place",
        reference=adapt(_run_load, _reference_load),
        cases=_torch_cases(),
        outputs=("out", "weights"),
        mistakes=(
            _load_mistake(
                "W_q and W_k are swapped: in_proj_weight stacks W_q (rows 0..D-1), then "
                "W_k, then W_v",
                order=(1, 0, 2),
            ),
            _load_mistake(
                "the order of the stacked blocks is wrong: in_proj_weight holds the "
                "queries' block in rows 0..D-1, then the keys', then the values'",
                order=(2, 1, 0),
            ),
            _load_mistake(
                "you transposed the weights: both nn.Linear and in_proj_weight store a "
                "matrix as (out_features, in_features), so copy .weight as it is",
                transpose=True,
            ),
            _load_mistake(
                "you left the biases out: copy the three input biases into in_proj_bias "
                "and W_o's bias into out_proj.bias",
                biases=False,
            ),
            _load_mistake(
                "you did not copy W_o: it goes into theirs.out_proj (weight and bias)",
                out_proj=False,
            ),
            *(
                _load_mistake(
                    f"in_proj is right, but out_proj holds {name}'s numbers, not W_o's: the "
                    "output projection of ours is W_o; copy it into theirs.out_proj",
                    out_from=name,
                )
                for name in ("W_q", "W_k", "W_v")
            ),
            Mistake(
                "theirs is unchanged after your function: it still holds its own random "
                "initial numbers. The copies must go from ours into theirs' own parameters "
                "(theirs.in_proj_weight.copy_(...)): copying theirs into ours, building a "
                "new layer and returning it, or copying into a clone leaves theirs as it was",
                adapt(_run_load, _load_nothing),
            ),
            _load_mistake(
                "theirs.in_proj_weight kept its own random numbers: the stacked weights "
                "never reached it (copied into a clone or a local copy of it?). copy_ into "
                "theirs.in_proj_weight itself",
                in_weight=False,
            ),
            _load_mistake(
                "you copied the weights but not in_proj_bias: the three input biases, "
                "stacked in the same order as the weights, go into theirs.in_proj_bias",
                in_bias=False,
            ),
            _load_mistake(
                "in_proj is right, but you transposed W_o's weight: out_proj.weight is "
                "stored (out_features, in_features) like W_o.weight, so copy it as it is",
                out_transpose=True,
            ),
            *(
                _load_mistake(
                    f"out_proj's weight is right, but its bias is {name}'s: copy W_o's bias "
                    "into theirs.out_proj.bias",
                    out_bias_from=name,
                )
                for name in ("W_q", "W_k", "W_v")
            ),
            _load_mistake(
                "you copied out_proj's weight but not its bias: W_o's bias goes into "
                "theirs.out_proj.bias (theirs keeps its own random one otherwise)",
                out_bias=False,
            ),
            *_block_order_mistakes(),
            _load_mistake(
                "in_proj_weight has the right shape, but each of its rows mixes W_q, W_k and "
                "W_v: joined along dim 1 the three matrices sit side by side, (D, 3D), and a "
                "reshape to (3D, D) then cuts that into rows in memory order, pieces of all "
                "three. Its first D rows must be W_q's rows, whole, then W_k's, then W_v's: "
                "along which axis do blocks go one after another?",
                side_by_side=True,
            ),
            _load_mistake(
                "your weights went through float32 before the copy (a .float(), or a "
                "float32 tensor): copy_ keeps theirs' float64, but the digits beyond "
                "float32 are already lost, and the two layers no longer agree to 1e-12 as "
                "in the chapter. Copy the tensors in their own dtype",
                cast=True,
            ),
        ),
        wrap=lambda fn: adapt(_run_load, fn),
        # float64 layers with the same numbers agree to rounding: a float32 detour does not
        rtol=1e-10,
        atol=1e-12,
        equivalent=(
            (
                "axis: torch.cat(weights, dim=0) in theirs.in_proj_weight.copy_(torch.cat("
                "weights, dim=0)) -> torch.cat(weights, dim=-2)",
                "the weights are 2-D: dim -2 is dim 0",
            ),
        ),
        error_hints=(
            (
                "cannot assign",
                "a layer's parameter must stay an nn.Parameter: copy the numbers into it "
                "with .copy_() under torch.no_grad(), in place: the layer keeps its own "
                "parameter objects",
            ),
            (
                "Error(s) in loading state_dict",
                "the two layers name their parameters differently (W_q, W_k, W_v, W_o here; "
                "in_proj_weight, in_proj_bias, out_proj there): load_state_dict needs a dict "
                "with theirs' names and shapes",
            ),
            (
                "leaf Variable that requires grad",
                "copying into a parameter is an in-place edit that autograd refuses: do "
                "the copies inside `with torch.no_grad():`",
            ),
            (
                "must match the size",
                "in_proj_weight has shape (3D, D): stack W_q, W_k and W_v with torch.cat "
                "along dim 0",
            ),
            (
                "'NoneType' object has no attribute",
                "one of theirs' attributes is None: nn.MultiheadAttention keeps "
                "q_proj_weight, k_proj_weight and v_proj_weight (and bias_k, bias_v) as None "
                "unless the keys and values have other sizes than the queries (kdim, vdim); "
                "here the three input projections live stacked in in_proj_weight (3D, D) and "
                "in_proj_bias. Print theirs.state_dict()'s names to see what it holds",
            ),
        ),
        hint="print theirs.state_dict()'s names and shapes next to ours: which of our "
        "weights and biases goes where, in which order? The chapter's section \"The same "
        "layer as PyTorch's `nn.MultiheadAttention`\" lays them side by side",
    )
)


def check_load_into_torch(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(ours, theirs)``: copies a MultiHeadAttention's weights into PyTorch's layer.

    Taught in: chapters/04_multihead.ipynb (exercise in exercises/04_multihead.ipynb)
    """
    return check_function(LOAD_INTO_TORCH, fn, _run_load)


# ---- prediction questions about the maps -------------------------------------------------


def _blend_reason(given: float) -> str | None:
    """What a weight no listed mistake explains implies (without the answer)."""
    if not 0 <= given <= 1:
        return "a weight is a share of the row: a number between 0 and 1"
    return (
        f"that leaves {1 - given:.2g} of the row to the other words: which of them score as "
        "high as 'dog' from either relation, and which score 0?"
    )


def _position_reason(given: float) -> str | None:
    """A key that is no position of query 5's row."""
    if given < 0 or given > 5 or given != int(given):
        return (
            "the answer is a key's position, a whole number from 0 to 5 for query 5 (the "
            f"columns of the printed map, counted from 0): {given:g} is not one of them"
        )
    return None


BLEND_WEIGHT = GRADERS.add(
    Question(
        name="blend_weight",
        answer=0.5,
        atol=0.02,
        explanation="the one head's score for a key is the sum of the two relations' "
        "scores: 'dog' (the subject) and 'cat' (the previous word) score the same, every "
        "other word scores 0, so the row splits almost evenly between them.",
        wrong=(
            (1.0, "that is the subject head alone; the one head also wants the previous word"),
            (0.0, "'dog' is the subject, and the one head still looks for the subject"),
            (
                0.25,
                "a quarter would need four keys with the same high score: count the keys "
                "that score high from either relation (the other words score 0)",
            ),
            (
                1 / 3,
                "a third would need three keys with the same high score: count the keys that "
                "score high from either relation; the words that score 0 get almost nothing",
            ),
            (
                math.e / (1 + math.e),
                "that is the weight of one key scoring 1 against one key scoring 0 (a "
                "sigmoid): here the row has a key for every word; which of them score high, "
                "and how does the softmax split a row among equal scores?",
            ),
            (
                1 / 7,
                "a uniform row would need equal scores for all seven words; here some keys "
                "score high and the others 0",
            ),
            (
                1 / (1 + math.exp(-2)),
                "that is chapter 3's worked example (scores 112 and 96, one key far ahead of "
                "the other): here the scores come from the two relations of this sentence. "
                "Which keys score high, and are their scores equal?",
            ),
        ),
        reason=_blend_reason,
        hint="which keys get a high score from either relation? the softmax shares the "
        "weight between them",
    )
)


def check_blend_weight(answer: Any) -> CheckResult:
    """Check the predicted weight of 'barked' on 'dog' in the one-head-for-both map.

    Taught in: chapters/04_multihead.ipynb (exercise in exercises/04_multihead.ipynb)
    """
    return BLEND_WEIGHT.check(answer)


WHICH_KEY = GRADERS.add(
    Question(
        name="which_key",
        answer=0,
        atol=0.0,
        explanation="this head is the first-token head: every row puts its weight on key 0.",
        wrong=(
            (4, "key 4 is the previous token of query 5: that is the other head's pattern"),
            (5, "a head that attends to its own position would show the main diagonal"),
            (
                6,
                "query 5 sees the keys at positions 0 to 5 only (the model is causal): there "
                "is no key 6, and no query sees a later key",
            ),
            (
                1,
                "positions count from 0: the first token is key 0, key 1 is the second; "
                "read the column of the large numbers again",
            ),
            (
                7,
                "query 5 sees keys 0 .. 5 only (the model is causal): key 7 is in its future. "
                "Head 0 already fetches the previous token: which token does the task still "
                "need?",
            ),
            (
                3,
                "key 3 is two tokens back from query 5, and no relation of the task looks "
                "two back. Head 0 already fetches the previous token: which other token does "
                "the task need at every position?",
            ),
            (
                2,
                "key 2 is three tokens back from query 5, and no relation of the task looks "
                "three back. Head 0's printed map shows the token one head fetches: which "
                "other token does the task need, the same way at every position?",
            ),
        ),
        reason=_position_reason,
        hint="the printed map is head 0's: which token does it fetch for each query? The "
        "task needs two tokens at every position; which one is left for head 1, at query 5?",
    )
)


def check_which_key(answer: Any) -> CheckResult:
    """Check the predicted key (position) that query 5 attends to most in the printed map.

    Taught in: chapters/04_multihead.ipynb (exercise in exercises/04_multihead.ipynb)
    """
    return WHICH_KEY.check(answer)


summary = GRADERS.summary
