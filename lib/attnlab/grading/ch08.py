"""Graders for chapter 8's exercises: online softmax, a tile step, a KV-cache step, GQA.

Each grader compares the learner's function with the attnlab reference on seeded cases and
knows the planted mistakes of each exercise (see :mod:`attnlab.grading.pipeline`); the two
prediction questions are :class:`~attnlab.grading.questions.Question` s. The grouped-query
attention layer (``gqa_module``) is the learner's ``nn.Module`` class, graded through the
module adapter (:mod:`attnlab.grading.modules`): it is built, gets the weights of a seeded
:class:`~attnlab.mechanism.scale.GroupedQueryAttention` (same parameter names), runs and
back-propagates, and its output, per-head weights and gradients are compared.

Taught in: exercises/08_scale.ipynb
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from ..mechanism.scale import (
    GroupedQueryAttention,
    attention_tile_update,
    grouped_query_attention,
    online_softmax,
    online_softmax_update,
    repeat_kv,
)
from .ch04 import planted_heads
from .gradients import Recorder, cut_by, require_gradient
from .modules import adapt, check_class, memoised
from .pipeline import Grader
from .questions import Question
from .registry import ChapterGraders
from .results import CheckResult
from .specs import AnswerProblem, Case, Mistake
from .specs import returned as returned_items
from .status import NO_GRADIENT, WRONG_TYPE

__all__ = [
    "GRADERS",
    "check_cache_memory",
    "check_causal_tiles",
    "check_gqa",
    "check_gqa_module",
    "check_kv_step",
    "check_online_softmax",
    "check_online_update",
    "check_tile_update",
    "summary",
]

GRADERS = ChapterGraders(__name__, mutants_reviewed=True)
"""Chapter 8's exercises, in the order of the notebook."""

INF = np.inf


def _rng() -> np.random.Generator:
    return np.random.default_rng(8)


# --- 8.1 one online-softmax update ---------------------------------------------------------


def _update_cases() -> tuple[Case, ...]:
    rng = _rng()

    def block(*shape: int, scale: float = 2.0) -> np.ndarray:
        return scale * rng.standard_normal(shape)

    masked = block(3, 4)
    masked[1] = -INF  # a row whose whole block is masked (its max is already finite)
    masked[2, :2] = -INF
    return (
        Case(
            "the first block", {"m": np.full(3, -INF), "total": np.zeros(3), "block": block(3, 4)}
        ),
        Case(
            "the max rises",
            {
                "m": np.array([-1.0, 0.0, 0.5]),
                "total": np.array([1.5, 2.0, 1.0]),
                "block": np.array([[3.0, 0.0], [4.0, 1.0], [2.0, 5.0]]),
            },
        ),
        Case(
            "the max stays",
            {"m": np.array([6.0, 5.0]), "total": np.array([1.2, 3.0]), "block": block(2, 5)},
        ),
        Case(
            "masked scores",
            {"m": np.array([1.0, 2.0, 0.0]), "total": np.array([2.0, 1.5, 1.0]), "block": masked},
        ),
        Case(
            "scores of 1000",
            {
                "m": np.array([998.0, 1001.0]),
                "total": np.array([1.0, 2.0]),
                "block": 1000.0 + block(2, 3),
            },
        ),
        Case(
            "one score per block",
            {"m": np.array([0.5]), "total": np.array([1.0]), "block": np.array([[2.0]])},
        ),
        Case(
            "a batch of rows, (2, 3, 4)",
            {"m": block(2, 3), "total": 1.0 + rng.random((2, 3)), "block": block(2, 3, 4)},
        ),
        Case(
            "rows far apart (near 0, 1000 and -1000)",  # each row needs its own max
            {
                "m": np.array([-1.0, 999.0, -1001.0]),
                "total": np.array([2.0, 1.0, 3.0]),
                "block": np.array([0.0, 1000.0, -1000.0])[:, None] + block(3, 4),
            },
        ),
    )


def _update_with(rescale: Callable[[Any, Any], Any], new: str = "new") -> Callable:
    """A planted update: ``l`` rescaled by ``rescale(m, m_new)``, new terms against ``new``."""

    def update(m: Any, l: Any, block: Any) -> tuple[Any, Any]:  # noqa: E741
        m_new = np.maximum(m, np.max(block, axis=-1))
        ref = {"new": m_new, "old": m, "block": np.max(block, axis=-1)}[new]
        if new == "new":  # the right reference, guarded; the wrong ones as a learner writes them
            ref = np.where(np.isfinite(ref), ref, 0.0)
        return m_new, rescale(m, m_new) * l + np.sum(np.exp(block - ref[..., None]), axis=-1)

    return update


def _update_block_max_only(m: Any, l: Any, block: Any) -> tuple[Any, Any]:  # noqa: E741
    """Planted: the new max is the block's alone (the old m forgotten)."""
    m_new = np.max(block, axis=-1)
    with np.errstate(invalid="ignore", over="ignore"):
        return m_new, l * np.exp(m - m_new) + np.sum(np.exp(block - m_new[..., None]), axis=-1)


def _update_unshifted(m: Any, l: Any, block: Any) -> tuple[Any, Any]:  # noqa: E741
    """Planted: the new terms exp(x_j), no max subtracted."""
    m_new = np.maximum(m, np.max(block, axis=-1))
    with np.errstate(over="ignore", invalid="ignore"):
        return m_new, l * np.exp(m - m_new) + np.sum(np.exp(block), axis=-1)


def _numpy_only(message: str) -> str | None:
    """A torch call on the NumPy arrays of a NumPy exercise."""
    if "numpy" not in message.lower() and "dim" not in message:
        return None
    return (
        "this exercise is in NumPy: its inputs are NumPy arrays, not tensors; write it with "
        "NumPy functions (np.maximum, np.exp, .max(axis=-1), .sum(axis=-1), @), whose "
        "reductions take `axis=`, not `dim=`"
    )


_NUMPY_ERRORS: tuple[tuple[str, Any], ...] = (
    (
        "only integer scalar arrays can be converted to a scalar index",
        "np.max(a, b) reads its second argument as an axis: to compare two arrays entry by "
        "entry (the old maximum and the block's, row by row) use np.maximum(a, b); np.max "
        "reduces one array",
    ),
    ("must be Tensor, not numpy.ndarray", _numpy_only),
    ("unexpected keyword argument 'dim'", _numpy_only),
    ("unexpected keyword argument 'keepdim'", _numpy_only),
    ("'numpy.ndarray' object has no attribute", _numpy_only),
)


ONLINE_UPDATE = GRADERS.add(
    Grader(
        name="online_update",
        signature="online_update(m, total, block) with m, total: (...), block: (..., n) -> "
        "(m, total)",
        reference=online_softmax_update,
        cases=_update_cases(),
        outputs=("m", "total"),
        mistakes=(
            Mistake(
                "you did not rescale the old sum: when the max rises from m to m', every "
                "term already in `total` must be multiplied by exp(m - m')",
                _update_with(lambda m, m_new: 1.0),
            ),
            Mistake(
                "you rescaled the old sum by exp(m' - m), the wrong way round: the old "
                "terms shrink when the max rises, so the factor is exp(m - m') <= 1",
                _update_with(lambda m, m_new: np.exp(np.where(np.isfinite(m), m_new - m, -INF))),
            ),
            Mistake(
                "you exponentiated the new block against the old max m; use the new max "
                "m' = max(m, max(block)) for the new terms too",
                _update_with(lambda m, m_new: np.exp(m - m_new), new="old"),
            ),
            Mistake(
                "you exponentiated the new block against its own max; every term of `total` must "
                "be relative to the same number, the new running max m'",
                _update_with(lambda m, m_new: np.exp(m - m_new), new="block"),
            ),
            Mistake(
                "your m is the block's max alone; the running max is max(m, max(block)): "
                "it never goes down",
                _update_block_max_only,
            ),
            Mistake(
                "your m is the block's max alone; the running max is max(m, max(block)): "
                "it never goes down",
                lambda m, l, block: (  # noqa: E741
                    np.max(block, axis=-1),
                    online_softmax_update(m, l, block)[1],
                ),
            ),
            Mistake(
                "the block's terms are exp(x_j) without a max subtracted: subtract the new "
                "running max m' inside the exponential, or scores near 1000 overflow (and the "
                "old and new terms must be relative to the same max)",
                _update_unshifted,
            ),
        ),
        hint="the new maximum compares the old one with the block's own, row by row; then "
        "ask what each term already in `total` is relative to, and what it must be relative "
        'to now (the chapter\'s section "Online softmax: one pass over blocks")',
        error_hints=_NUMPY_ERRORS,
        equivalent=(
            (
                "swap: np.maximum(m, block.max(axis=-1)) in m_new = np.maximum(m, "
                "block.max(axis=-1)) -> np.maximum(block.max(axis=-1), m)",
                "np.maximum compares its two arguments entry by entry: their order does not matter",
            ),
        ),
    )
)


def check_online_update(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(m, total, block)``: one online-softmax update of the running max and sum.

    Taught in: chapters/08_scale.ipynb (exercise in exercises/08_scale.ipynb)
    """
    return ONLINE_UPDATE.check(fn)


# --- 8.2 the online softmax over blocks ----------------------------------------------------


def _softmax_cases() -> tuple[Case, ...]:
    rng = _rng()
    masked = 2.0 * rng.standard_normal((4, 10))
    masked[0, :6] = -INF  # its first blocks see only masked scores
    masked[2] = -INF  # a row with no visible score
    masked[3, ::3] = -INF
    return (
        Case("blocks of 3", {"x": 2.0 * rng.standard_normal((3, 9)), "block_size": 3}),
        Case("a short last block", {"x": 2.0 * rng.standard_normal((2, 7)), "block_size": 3}),
        Case("blocks of 1", {"x": rng.standard_normal((2, 5)), "block_size": 1}),
        Case("one block", {"x": rng.standard_normal((2, 6)), "block_size": 6}),
        Case("a block larger than the row", {"x": rng.standard_normal((3, 4)), "block_size": 10}),
        Case("scores of 1000", {"x": 1000.0 + 3.0 * rng.standard_normal((2, 8)), "block_size": 3}),
        Case("a batch", {"x": rng.standard_normal((2, 3, 8)), "block_size": 4}),
        Case("masked scores (-inf)", {"x": masked, "block_size": 3}),
        Case(
            "rows far apart (near 0, 1000 and -1000)",  # each row needs its own max
            {
                "x": np.array([[0.0], [1000.0], [-1000.0]]) + rng.standard_normal((3, 7)),
                "block_size": 3,
            },
        ),
    )


def _softmax_planted(update: Callable, normalise: bool = True) -> Callable:
    def softmax(x: Any, block_size: int) -> Any:
        m, l = np.full(x.shape[:-1], -INF), np.zeros(x.shape[:-1])  # noqa: E741
        for start in range(0, x.shape[-1], block_size):
            m, l = update(m, l, x[..., start : start + block_size])  # noqa: E741
        e = np.exp(x - np.where(np.isfinite(m), m, 0.0)[..., None])
        with np.errstate(invalid="ignore", divide="ignore"):
            return e / l[..., None] if normalise else e

    return softmax


def _update_unguarded(m: Any, l: Any, block: Any) -> tuple[Any, Any]:  # noqa: E741
    """Planted: no guard for a running max of -inf (-inf - (-inf) = NaN)."""
    m_new = np.maximum(m, np.max(block, axis=-1))
    with np.errstate(invalid="ignore"):
        alpha = np.exp(m - m_new)
        return m_new, alpha * l + np.sum(np.exp(block - m_new[..., None]), axis=-1)


def _softmax_last_block_max(x: Any, block_size: int) -> Any:
    """Planted: the weights use the last block's max, not the running max."""
    m, l = np.full(x.shape[:-1], -INF), np.zeros(x.shape[:-1])  # noqa: E741
    for start in range(0, x.shape[-1], block_size):
        m, l = online_softmax_update(m, l, x[..., start : start + block_size])  # noqa: E741
    last = np.max(x[..., -(x.shape[-1] % block_size or block_size) :], axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.exp(x - last[..., None]) / l[..., None]


def _softmax_one_max(x: Any, block_size: int) -> Any:
    """Planted: one running max for the whole array, not one per row."""
    m, l = -INF, np.zeros(x.shape[:-1])  # noqa: E741
    for start in range(0, x.shape[-1], block_size):
        block = x[..., start : start + block_size]
        m_new = max(m, float(np.max(block)))
        safe = m_new if np.isfinite(m_new) else 0.0
        l = l * np.exp(m - safe) + np.sum(np.exp(block - safe), axis=-1)  # noqa: E741
        m = m_new
    safe = m if np.isfinite(m) else 0.0
    seen = l[..., None] > 0  # a row far below the max ends with l = 0 (NaN matches it too)
    return np.where(seen, np.exp(x - safe) / np.where(seen, l[..., None], 1.0), 0.0)


def _softmax_variant(
    blocks: str = "all", rescale: bool = True, empty: str = "zero"
) -> Callable[..., Any]:
    """Planted: the worked online softmax with one difference (blocks, rescale, empty rows)."""

    def softmax(x: Any, block_size: int) -> Any:
        n = x.shape[-1]
        stop = {"all": n, "full": n - n % block_size, "short": n - block_size}[blocks]
        m, total = np.full(x.shape[:-1], -INF), np.zeros(x.shape[:-1])
        for start in range(0, stop, block_size):
            block = x[..., start : start + block_size]
            m_new = np.maximum(m, np.max(block, axis=-1))
            safe = np.where(np.isneginf(m_new), 0.0, m_new)
            alpha = np.exp(m - safe) if rescale else 1.0
            total = total * alpha + np.sum(np.exp(block - safe[..., None]), axis=-1)
            m = m_new
        safe = np.where(np.isneginf(m), 0.0, m)[..., None]
        seen = total[..., None] > 0
        fill = 0.0 if empty == "zero" else 1.0 / n
        return np.where(seen, np.exp(x - safe) / np.where(seen, total[..., None], 1.0), fill)

    return softmax


def _softmax_per_block(x: Any, block_size: int) -> Any:
    """Planted: each block normalised on its own (a softmax per block)."""
    out = np.zeros_like(x)
    for start in range(0, x.shape[-1], block_size):
        b = x[..., start : start + block_size]
        m = np.max(b, axis=-1, keepdims=True)
        m = np.where(np.isfinite(m), m, 0.0)
        e = np.exp(b - m)
        s = np.sum(e, axis=-1, keepdims=True)
        out[..., start : start + block_size] = np.where(s > 0, e / np.where(s > 0, s, 1), 0)
    return out


ONLINE_SOFTMAX = GRADERS.add(
    Grader(
        name="online_softmax",
        signature="online_softmax(x, block_size) with x: (..., n) -> weights (..., n)",
        reference=online_softmax,
        cases=_softmax_cases(),
        mistakes=(
            Mistake(
                "NaN in a row that starts with masked blocks: while nothing is visible the "
                "running max is -inf and exp(m - m') is exp(-inf - (-inf)) = NaN; subtract 0 "
                "instead of m' while m' is -inf",
                _softmax_planted(_update_unguarded),
            ),
            Mistake(
                "a row with no visible score gives 0/0 = NaN: such a row ends with `total` = 0; "
                "give it all-zero weights",
                _softmax_planted(online_softmax_update),
            ),
            Mistake(
                "you forgot to normalise: divide exp(x - m) by the final running sum `total`",
                _softmax_planted(online_softmax_update, normalise=False),
            ),
            Mistake(
                "you used the last block's max for the weights; use the final running max m "
                "(the max of the whole row)",
                _softmax_last_block_max,
            ),
            Mistake(
                "you normalised each block on its own: the running sum must gather every "
                "block before any weight is divided by it",
                _softmax_per_block,
            ),
            Mistake(
                "your running max is one number for the whole array (a max without "
                "axis=-1): each row needs its own, or a row far below the largest score "
                "overall gets e^(x - m) = 0 everywhere (here the row near -1000, against a "
                "max near 1000)",
                _softmax_one_max,
            ),
            Mistake(
                "your loop leaves out the last, shorter block (a range over the full blocks "
                "only, n // block_size of them): the scores of the partial last block never "
                "reach the running max and sum; a slice past the end of the row simply stops "
                "there, so step through every start, 0, block_size, 2·block_size, ...",
                _softmax_variant(blocks="full"),
            ),
            Mistake(
                "your loop stops one block early (range(0, n - block_size, block_size)): the "
                "last block never reaches the running max and sum; the starts must run up to "
                "n, the end of the row",
                _softmax_variant(blocks="short"),
            ),
            Mistake(
                "you did not rescale the running sum when the max rises: every term already "
                "in `total` is relative to the old max m and must be multiplied by "
                "e^(m - m') (your update of exercise 8.1)",
                _softmax_variant(rescale=False),
            ),
            Mistake(
                "a row with no visible score (all -inf) must get all-zero weights; yours "
                "gets 1/n everywhere (a uniform row): it has no key to attend to, not every "
                "key",
                _softmax_variant(empty="uniform"),
            ),
        ),
        equivalent=(
            (
                "swap: np.maximum(m, block.max(axis=-1)) in m_new = np.maximum(m, "
                "block.max(axis=-1)) -> np.maximum(block.max(axis=-1), m)",
                "np.maximum compares its two arguments entry by entry: their order does not matter",
            ),
            (
                "constant: np.zeros(x.shape[:-1]) in total = np.zeros(x.shape[:-1]) -> "
                "np.ones(x.shape[:-1])",
                "the first visible block multiplies the starting total by e^(-inf - m') = 0, "
                "so its value never counts",
            ),
            (
                "library: np.zeros in total = np.zeros(x.shape[:-1]) -> torch.zeros",
                "the first visible block multiplies the starting total by 0, and adds NumPy "
                "terms to it: what it started as never reaches the weights",
            ),
            (
                "offset: x.shape[:-1] in m = np.full(x.shape[:-1], -np.inf) -> x.shape[:0]",
                "a single -inf broadcasts against the first block's maxima, one per row",
            ),
            (
                "offset: x.shape[:-1] in total = np.zeros(x.shape[:-1]) -> x.shape[:0]",
                "a single 0 broadcasts against the first block's sums, one per row",
            ),
            *(
                (
                    f"fill: -np.inf in m = np.full(x.shape[:-1], -np.inf) -> {fill}",
                    "a finite start far below every score: a row's first visible score "
                    "replaces it as the running max, and a row that sees nothing keeps a "
                    "total of 0 (all-zero weights) either way",
                )
                for fill in ("-1000000000.0", "-10000.0", "-1.7976931348623157e+308")
            ),
            (
                "offset: range(0, x.shape[-1], block_size) in for start in range(0, "
                "x.shape[-1], block_size): -> reversed(range(0, x.shape[-1], block_size))",
                "the blocks may be folded in any order: the running max and sum end the same",
            ),
            (
                "swap: np.where(seen, total[..., None], 1.0) in denominator = np.where(seen, "
                "total[..., None], 1.0) -> np.where(1.0, total[..., None], seen)",
                "the denominator only keeps 0/0 out of rows that saw nothing, whose weights "
                "the last line sets to 0 anyway",
            ),
            (
                "swap: np.where(np.isneginf(m), 0.0, m) in safe = np.where(np.isneginf(m), "
                "0.0, m)[..., None] -> np.where(0.0, np.isneginf(m), m)",
                "the guard only matters in rows that saw nothing, whose weights the last "
                "line sets to 0 anyway",
            ),
        ),
        hint="walk the row block by block with your update of 8.1, from a state that has "
        "seen nothing; what does each final weight need from the running max and sum, and "
        "what must a row that never saw a visible score get? (the chapter's section "
        '"Online softmax: one pass over blocks")',
        error_hints=_NUMPY_ERRORS,
    )
)


def check_online_softmax(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, block_size)``: the softmax over the last axis, gathered block by block.

    Taught in: chapters/08_scale.ipynb (exercise in exercises/08_scale.ipynb)
    """
    return ONLINE_SOFTMAX.check(fn)


# --- 8.3 one tile step ---------------------------------------------------------------------


def _tile_cases() -> tuple[Case, ...]:
    rng = _rng()

    def state(rows: int, d_v: int, first: bool = False) -> dict[str, np.ndarray]:
        if first:
            return {"m": np.full(rows, -INF), "total": np.zeros(rows), "acc": np.zeros((rows, d_v))}
        return {
            "m": rng.standard_normal(rows),
            "total": 1.0 + rng.random(rows),
            "acc": rng.standard_normal((rows, d_v)),
        }

    masked = 2.0 * rng.standard_normal((3, 4))
    masked[0] = -INF  # a query whose keys in this tile are all masked
    masked[1, 1:] = -INF
    return (
        Case(
            "the first tile",
            {
                **state(3, 2, True),
                "scores": rng.standard_normal((3, 4)),
                "v": rng.standard_normal((4, 2)),
            },
        ),
        Case(
            "a later tile",
            {
                **state(3, 2),
                "scores": 2.0 * rng.standard_normal((3, 5)),
                "v": rng.standard_normal((5, 2)),
            },
        ),
        Case(
            "the max rises",
            {
                "m": np.array([-2.0, 0.0]),
                "total": np.array([1.0, 2.0]),
                "acc": rng.standard_normal((2, 3)),
                "scores": np.array([[3.0, 1.0], [2.0, 4.0]]),
                "v": rng.standard_normal((2, 3)),
            },
        ),
        Case("masked scores", {**state(3, 2), "scores": masked, "v": rng.standard_normal((4, 2))}),
        Case(
            "a batch of heads",
            {
                "m": rng.standard_normal((2, 3)),
                "total": 1 + rng.random((2, 3)),
                "acc": rng.standard_normal((2, 3, 4)),
                "scores": rng.standard_normal((2, 3, 5)),
                "v": rng.standard_normal((2, 5, 4)),
            },
        ),
        Case(
            "query rows far apart (near 0, 1000 and -1000)",  # each row needs its own max
            {
                "m": np.array([-1.0, 999.0, -1001.0]),
                "total": 1.0 + rng.random(3),
                "acc": rng.standard_normal((3, 2)),
                "scores": np.array([[0.0], [1000.0], [-1000.0]]) + rng.standard_normal((3, 4)),
                "v": rng.standard_normal((4, 2)),
            },
        ),
    )


def _tile_with(
    alpha_l: bool = True,
    alpha_acc: bool = True,
    against: str = "new",
    values: str = "v",
    normalised: bool = False,
    one_max: bool = False,
) -> Callable:
    def step(m: Any, l: Any, acc: Any, scores: Any, v: Any) -> tuple[Any, Any, Any]:  # noqa: E741
        m_new = np.maximum(m, np.max(scores) if one_max else np.max(scores, axis=-1))
        safe = np.where(np.isfinite(m_new), m_new, 0.0)
        ref = safe if against == "new" else np.where(np.isfinite(m), m, 0.0)
        alpha = np.exp(np.where(np.isfinite(m), m - safe, -INF))
        p = np.exp(scores - ref[..., None])
        l_new = (alpha * l if alpha_l else l) + np.sum(p, axis=-1)
        mixed = p @ v if values == "v" else scores @ v
        acc_new = (alpha[..., None] * acc if alpha_acc else acc) + mixed
        if normalised:
            acc_new = acc_new / l_new[..., None]
        return m_new, l_new, acc_new

    return step


def _tile_alpha_flat(m: Any, l: Any, acc: Any, scores: Any, v: Any) -> tuple[Any, Any, Any]:  # noqa: E741
    """Planted: alpha (..., Tb) times acc (..., Tb, d_v) without the value axis."""
    m_new = np.maximum(m, np.max(scores, axis=-1))
    alpha = np.exp(m - m_new)
    p = np.exp(scores - m_new[..., None])
    return m_new, alpha * l + np.sum(p, axis=-1), alpha * acc + p @ v


TILE_UPDATE = GRADERS.add(
    Grader(
        name="tile_update",
        signature="tile_update(m, total, acc, scores, v) with m, total: (..., Tb), acc: "
        "(..., Tb, d_v), scores: (..., Tb, Sb), v: (..., Sb, d_v) -> (m, total, acc)",
        reference=attention_tile_update,
        cases=_tile_cases(),
        outputs=("m", "total", "acc"),
        mistakes=(
            Mistake(
                "you rescaled `total` but not acc: the accumulator is a sum of exp(s - m) v, so "
                "it needs the same factor exp(m - m') as `total` when the max rises",
                _tile_with(alpha_acc=False),
            ),
            Mistake(
                "you rescaled acc but not `total`: the running sum needs the factor exp(m - m') too",
                _tile_with(alpha_l=False),
            ),
            Mistake(
                "you rescaled neither `total` nor acc: both were computed against the old max m; "
                "multiply both by exp(m - m')",
                _tile_with(alpha_l=False, alpha_acc=False),
            ),
            Mistake(
                "you exponentiated this tile against the old max m; use the new max "
                "m' = max(m, max(scores)), the same one the rescaled state refers to",
                _tile_with(against="old"),
            ),
            Mistake(
                "you added scores @ v; the values are weighted by p = exp(scores - m'), not "
                "by the raw scores",
                _tile_with(values="scores"),
            ),
            Mistake(
                "you multiplied acc by alpha as it is: alpha has one number per query row, "
                "shape (..., Tb), and acc a value axis more, (..., Tb, d_v); give alpha that "
                "axis (alpha[..., None]) so that each row's factor scales its whole vector",
                _tile_alpha_flat,
            ),
            Mistake(
                "you divided acc by the running sum inside the update: the state keeps the "
                "*unnormalised* sum of p·v, and the division by `total` happens once, after "
                "the last tile",
                _tile_with(normalised=True),
            ),
            Mistake(
                "your new maximum is one number for the whole tile (a max without axis=-1): "
                "each query row needs its own, or a row far below the tile's largest score "
                "gets p = 0 everywhere",
                _tile_with(one_max=True),
            ),
        ),
        hint="it is your update of 8.1 with a third running quantity: which of `total` and "
        "acc was computed against the old maximum, and what must multiply it now? (the "
        'chapter\'s section "Tiled attention: never holding the weights")',
        error_hints=_NUMPY_ERRORS,
        equivalent=(
            (
                "swap: np.maximum(m, scores.max(axis=-1)) in m_new = np.maximum(m, "
                "scores.max(axis=-1)) -> np.maximum(scores.max(axis=-1), m)",
                "np.maximum compares its two arguments entry by entry: their order does not matter",
            ),
        ),
    )
)


def check_tile_update(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(m, total, acc, scores, v)``: one tile step of tiled attention.

    Taught in: chapters/08_scale.ipynb (exercise in exercises/08_scale.ipynb)
    """
    return TILE_UPDATE.check(fn)


# --- 8.4 a KV-cache decoding step -----------------------------------------------------------


def _kv_step_reference(q: Any, k: Any, v: Any, k_cache: Any, v_cache: Any) -> tuple:
    k_all = torch.cat([k_cache, k], dim=-2)  # (B, H, t, d) -> (B, H, t + 1, d)
    v_all = torch.cat([v_cache, v], dim=-2)
    weights = torch.softmax(q @ k_all.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v_all, k_all, v_all  # (B, H, 1, t + 1) @ (B, H, t + 1, d)


def _kv_cases() -> tuple[Case, ...]:
    g = torch.Generator().manual_seed(8)

    def t(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g, dtype=torch.float64)

    def case(label: str, B: int, H: int, past: int, d: int, scale: float = 1.0) -> Case:
        names = ("q", "k", "v", "k_cache", "v_cache")
        shapes = ((B, H, 1, d),) * 3 + ((B, H, past, d),) * 2
        inputs = {n: t(*s) for n, s in zip(names, shapes, strict=True)}
        inputs["q"] = scale * inputs["q"]
        return Case(label, inputs)

    return (
        case("one cached token", 1, 1, 1, 4),
        case("five cached tokens, 2 heads", 1, 2, 5, 8),
        case("a batch of 3", 3, 2, 4, 4),
        case("a long cache", 2, 4, 20, 16),
        case("an empty cache: the first token", 2, 2, 0, 4),
        case("large scores (an unstable softmax overflows)", 1, 2, 3, 4, scale=400.0),
    )


def _attend(q: Any, k: Any, v: Any, scale: float | None = None) -> Any:
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    return torch.softmax(q @ k.transpose(-2, -1) * scale, dim=-1) @ v


KV_STEP = GRADERS.add(
    Grader(
        name="kv_step",
        signature="kv_step(q, k, v, k_cache, v_cache) with q, k, v: (B, H, 1, d), caches: "
        "(B, H, t, d) -> (out (B, H, 1, d), k_cache (B, H, t+1, d), v_cache (B, H, t+1, d))",
        reference=_kv_step_reference,
        cases=_kv_cases(),
        outputs=("out", "k_cache", "v_cache"),
        mistakes=(
            Mistake(
                "your query attended to the cache only: append the new key and value first, "
                "then attend (a token may attend to itself)",
                lambda q, k, v, kc, vc: (
                    _attend(q, kc, vc),
                    torch.cat([kc, k], -2),
                    torch.cat([vc, v], -2),
                ),
            ),
            Mistake(
                "your query attended to the new token only: out must average the values of "
                "every cached token plus the new one",
                lambda q, k, v, kc, vc: (v.clone(), torch.cat([kc, k], -2), torch.cat([vc, v], -2)),
            ),
            Mistake(
                "you put the new key and value first; append them at the end of the cache "
                "(dim=-2), so that cache position i is token i",
                lambda q, k, v, kc, vc: (
                    _attend(q, torch.cat([k, kc], -2), torch.cat([v, vc], -2)),
                    torch.cat([k, kc], -2),
                    torch.cat([v, vc], -2),
                ),
            ),
            Mistake(
                "you forgot to scale: divide the scores by sqrt(d)",
                lambda q, k, v, kc, vc: (
                    _attend(q, torch.cat([kc, k], -2), torch.cat([vc, v], -2), scale=1.0),
                    torch.cat([kc, k], -2),
                    torch.cat([vc, v], -2),
                ),
            ),
            Mistake(
                "you returned the old caches: return the caches with the new key and value "
                "appended, for the next step",
                lambda q, k, v, kc, vc: (
                    _attend(q, torch.cat([kc, k], -2), torch.cat([vc, v], -2)),
                    kc.clone(),
                    vc.clone(),
                ),
            ),
            Mistake(
                "you scaled the scores by the square root of the number of keys (t + 1): the "
                "scale is 1/√d, d the size of one query or key vector, whatever the length "
                "of the cache",
                lambda q, k, v, kc, vc: (
                    _attend(
                        q,
                        torch.cat([kc, k], -2),
                        torch.cat([vc, v], -2),
                        scale=1 / math.sqrt(kc.shape[-2] + 1),
                    ),
                    torch.cat([kc, k], -2),
                    torch.cat([vc, v], -2),
                ),
            ),
        ),
        hint="grow each cache by one token along the token axis, then let the one query "
        "attend to every key it now holds, as in chapter 3; the step returns the grown "
        'caches too (the chapter\'s section "The KV cache: generate without recomputing")',
        equivalent=(
            (
                "swap: k_cache.transpose(-2, -1) in scores = ( q @ k_cache.transpose(-2, -1) "
                "/ math.sqrt(q.shap… -> k_cache.transpose(-1, -2)",
                "swapping axes -2 and -1 is swapping -1 and -2",
            ),
            *(
                (
                    f"input: q in scores = ( q @ k_cache.transpose(-2, -1) / "
                    f"math.sqrt(q.shap… -> {name} (2)",
                    "queries and keys have the same size d: either one's last axis gives the scale",
                )
                for name in ("k", "k_cache")
            ),
            *(
                (
                    f"input: q in scores = ( q @ k_cache.transpose(-2, -1) / "
                    f"math.sqrt(q.shap… -> {name} (2)",
                    "the statement gives the values the size d of the queries and keys (as "
                    "every layer of the course does), so their last axis is d too",
                )
                for name in ("v", "v_cache")
            ),
        ),
    )
)


def check_kv_step(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(q, k, v, k_cache, v_cache)``: one decoding step with a KV cache.

    Taught in: chapters/08_scale.ipynb (exercise in exercises/08_scale.ipynb)
    """
    return KV_STEP.check(fn)


# --- 8.5 grouped-query attention ------------------------------------------------------------


def _gqa_reference(q: Any, k: Any, v: Any) -> Any:
    return grouped_query_attention(q, k, v)[0]


def _gqa_cases() -> tuple[Case, ...]:
    g = torch.Generator().manual_seed(8)

    def case(
        label: str, B: int, H: int, G: int, T: int, S: int, d: int, scale: float = 1.0
    ) -> Case:
        return Case(
            label,
            {
                "q": scale * torch.randn(B, H, T, d, generator=g, dtype=torch.float64),
                "k": torch.randn(B, G, S, d, generator=g, dtype=torch.float64),
                "v": torch.randn(B, G, S, d, generator=g, dtype=torch.float64),
            },
        )

    return (
        case("4 query heads, 2 key-value heads", 1, 4, 2, 3, 3, 4),
        case("6 query heads, 3 key-value heads, T=4, S=5", 2, 6, 3, 4, 5, 8),
        case("multi-query: 4 heads share 1", 1, 4, 1, 3, 6, 4),
        case("8 heads in 4 groups", 2, 8, 4, 5, 5, 4),
        case("multi-head: as many key-value heads", 1, 2, 2, 3, 4, 4),
        case("large scores (an unstable softmax overflows)", 2, 4, 2, 3, 4, 4, scale=400.0),
    )


def _heads_hint(message: str) -> str | None:
    """q @ kᵀ with G key-value heads where q has H: the repeat is missing or on another axis."""
    found = re.search(
        r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at "
        r"non-singleton dimension 1",
        message,
    )
    if found is None:
        return None
    return (
        f"the query heads and your key-value heads do not line up on the head axis (dim 1: "
        f"sizes {found[1]} and {found[2]}): each of the G key-value heads must appear H/G "
        "times along dim=1 before the product; a repeat along another axis (or without "
        "`dim=`, which flattens), or none, leaves G heads there"
    )


GQA = GRADERS.add(
    Grader(
        name="gqa",
        signature="gqa(q, k, v) with q: (B, H, T, d), k, v: (B, G, S, d) -> out (B, H, T, d)",
        reference=_gqa_reference,
        cases=_gqa_cases(),
        mistakes=(
            Mistake(
                "query head h used key-value head h % G (k.repeat tiles the heads: 0, 1, 0, "
                "1, ...); head h belongs to group h // (H / G): repeat each key-value head "
                "H/G times in place (repeat_interleave)",
                lambda q, k, v: _attend(
                    q,
                    k.repeat(1, q.shape[1] // k.shape[1], 1, 1),
                    v.repeat(1, q.shape[1] // k.shape[1], 1, 1),
                ),
            ),
            Mistake(
                "you forgot to scale: divide the scores by sqrt(d)",
                lambda q, k, v: _attend(
                    q, *(repeat_kv(x, q.shape[1] // k.shape[1]) for x in (k, v)), scale=1.0
                ),
            ),
            Mistake(
                "softmax over the wrong axis: each query's weights over the keys (the last "
                "axis of the scores) must sum to 1",
                lambda q, k, v: (
                    torch.softmax(
                        q
                        @ repeat_kv(k, q.shape[1] // k.shape[1]).transpose(-2, -1)
                        / math.sqrt(q.shape[-1]),
                        dim=-2,
                    )
                    @ repeat_kv(v, q.shape[1] // k.shape[1])
                ),
            ),
        ),
        hint="repeat each of the G key-value heads H/G times along the head axis "
        "(query head h reads key-value head h // (H/G)), then ordinary attention per head",
        error_hints=(
            ("non-singleton dimension 1", _heads_hint),
            (
                "expanded size of the tensor",
                "`expand` only stretches an axis of size 1: with G > 1 key-value heads it "
                "cannot make H of them; each of the G heads must be copied H/G times, next "
                "to each other, along the head axis",
            ),
        ),
        equivalent=(
            (
                "swap: k.transpose(-2, -1) in scores = q @ k.transpose(-2, -1) / "
                "math.sqrt(q.shape[-1]) -> k.transpose(-1, -2)",
                "swapping axes -2 and -1 is swapping -1 and -2",
            ),
            (
                "input: k in n_rep = q.shape[1] // k.shape[1] -> v",
                "keys and values have the same G heads",
            ),
            (
                "input: q in scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) -> k (2)",
                "queries and keys have the same size d: either one's last axis gives the scale",
            ),
            (
                "input: q in scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) -> v (2)",
                "the statement gives the values the size d of the queries and keys: their "
                "last axis is d too",
            ),
        ),
    )
)


def check_gqa(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(q, k, v)``: grouped-query attention, ``G`` key-value heads for ``H`` queries.

    Taught in: chapters/08_scale.ipynb (exercise in exercises/08_scale.ipynb)
    """
    return GQA.check(fn)


# --- 8.6 a grouped-query attention layer (nn.Module) ---------------------------------------

_GQA_NAMES = ("W_q", "W_k", "W_v", "W_o")


def _seeded_gqa(d_model: int, n_heads: int, n_kv_heads: int, seed: int) -> GroupedQueryAttention:
    with torch.random.fork_rng(devices=[]):  # the notebook's own random numbers untouched
        torch.manual_seed(seed)
        layer = GroupedQueryAttention(d_model, n_heads, n_kv_heads).double()
        with torch.no_grad():  # non-zero biases, so a missing or misplaced bias shows
            for name in _GQA_NAMES:
                getattr(layer, name).bias.normal_()
        return layer


def _gqa_module_cases() -> tuple[Case, ...]:
    g = torch.Generator().manual_seed(86)
    specs = {
        # label: (B, T, D, H, G, mask)
        "4 heads share 2 key-value heads, B=2, T=5, D=16": (2, 5, 16, 4, 2, None),
        "6 heads in 3 groups, causal mask, T=6, D=12": (2, 6, 12, 6, 3, "causal"),
        "multi-query: 4 heads, 1 key-value head, D=8": (1, 4, 8, 4, 1, None),
        "8 heads in 2 groups, causal mask, T=5, D=16": (1, 5, 16, 8, 2, "causal"),
        "multi-head: 2 heads, 2 key-value heads, D=8": (2, 3, 8, 2, 2, None),
        "padding mask (B, 1, 1, S), 4 heads in 2 groups": (2, 4, 8, 4, 2, "padding"),
    }
    cases = []
    for seed, (label, (B, T, D, H, G, kind)) in enumerate(specs.items()):
        mask = None
        if kind == "causal":
            mask = torch.ones(T, T, dtype=torch.bool).tril()  # (T, S)
        elif kind == "padding":
            mask = torch.ones(B, 1, 1, T, dtype=torch.bool)  # (B, 1, 1, S)
            mask[1, ..., -2:] = False  # the second sequence ends with 2 padded keys
        x = torch.randn(B, T, D, generator=g, dtype=torch.float64)
        inputs = {"x": x, "n_heads": H, "n_kv_heads": G, "seed": seed, "mask": mask}
        cases.append(Case(label, inputs))
    return tuple(cases)


def _run_gqa_module(cls: Any, x, n_heads, n_kv_heads, seed, mask=None) -> tuple[torch.Tensor, ...]:
    """One case for a class (see :func:`.modules.adapt`): build, load weights, run, backprop.

    What the layer returns is checked before the grader uses it (a pair of tensors, ``out``
    carrying a gradient), so that a problem with it is reported as the learner's answer,
    never as an exception of the grader. A gradient that does not reach ``x`` or ``W_k``
    is compared as zeros.
    """
    reference = _seeded_gqa(x.shape[-1], n_heads, n_kv_heads, seed)
    with torch.random.fork_rng(devices=[]):  # building a layer draws random weights
        layer = cls(x.shape[-1], n_heads, n_kv_heads).double()
    layer.load_state_dict(reference.state_dict())
    x = x.detach().clone().requires_grad_()
    recorder = Recorder()
    with recorder:
        returned = layer(x, mask=mask)
    out, weights = returned_items(returned, ("out", "weights"), "your forward")
    for name, value in (("out", out), ("weights", weights)):
        if not isinstance(value, torch.Tensor):
            raise AnswerProblem(
                WRONG_TYPE,
                f"your forward returned `{name}` as {type(value).__name__}, not a torch.Tensor",
                "compute with torch operations on the tensors, so that the layer returns "
                "tensors (and gradients can flow back through them)",
            )
    require_gradient(out, "out", recorder)
    g = torch.Generator().manual_seed(seed)
    upstream = torch.randn(out.shape, generator=g, dtype=out.dtype)
    (out * upstream).sum().backward()
    if x.grad is None:
        raise AnswerProblem(
            NO_GRADIENT,
            "no gradient reaches the input x through your layer (only the weights after "
            "the cut get one)",
            f"the attention was cut from the computation by {cut_by(recorder)}: a loss on "
            "`out` could not train W_q, W_k, W_v or anything before the layer; compute "
            "every step with torch operations on the tensors",
        )
    return (out.detach(), weights.detach(), _grad(x), _grad(layer.W_k.weight))


def _grad(w: torch.Tensor) -> torch.Tensor:
    """``w.grad``, or zeros where no gradient reached ``w`` (compared as such)."""
    return torch.zeros_like(w) if w.grad is None else w.grad


class _PlantedGQA(nn.Module):
    """A grouped-query layer with the parameter names of the reference, and one bug."""

    bug = ""

    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.n_heads, self.n_kv_heads, self.d_head = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d_head)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d_head)
        self.W_o = nn.Linear(d_model, d_model)

    def _split(self, x: torch.Tensor, heads: int) -> torch.Tensor:
        B, T, _ = x.shape
        if self.bug == "direct split":
            return x.reshape(B, heads, T, self.d_head)
        return x.reshape(B, T, heads, self.d_head).transpose(1, 2)  # (B, heads, T, d)

    def forward(self, x, mask=None):
        H, G = self.n_heads, self.n_kv_heads
        q = self._split(self.W_q(x), H)  # (B, H, T, d)
        k, v = self._split(self.W_k(x), G), self._split(self.W_v(x), G)  # (B, G, S, d)
        if self.bug == "tiled heads":  # heads 0, 1, 0, 1, ...
            k, v = k.repeat(1, H // G, 1, 1), v.repeat(1, H // G, 1, 1)
        else:  # heads 0, 0, 1, 1, ...
            k, v = k.repeat_interleave(H // G, dim=1), v.repeat_interleave(H // G, dim=1)
        scale = {"no scale": 1.0, "model scale": 1 / math.sqrt(x.shape[-1])}.get(
            self.bug, 1 / math.sqrt(self.d_head)
        )
        scores = q @ k.transpose(-2, -1) * scale  # (B, H, T, S)
        if self.bug in ("mask after softmax", "mask inverted, empty rows zeroed"):
            if mask is not None and self.bug == "mask inverted, empty rows zeroed":
                scores = scores.masked_fill(mask, -math.inf)
            weights = torch.nan_to_num(torch.softmax(scores, dim=-1))
            if mask is not None and self.bug == "mask after softmax":
                weights = weights * mask
            B, T, D = x.shape
            return self.W_o((weights @ v).transpose(1, 2).reshape(B, T, D)), weights
        return planted_heads(self.bug, scores, v, mask, self.W_o)


def _planted_gqa(bug: str) -> Callable[..., Any]:
    planted = type(f"Planted_{bug.replace(' ', '_')}", (_PlantedGQA,), {"bug": bug})
    return memoised(adapt(_run_gqa_module, planted))


_KV_SIZE = (
    "W_k and W_v project to the G key-value heads only: each head keeps the size d = "
    "d_model / n_heads of a query head, so their out_features is G heads' worth of "
    "features, not d_model; that is where the layer saves parameters and cache"
)

GQA_MODULE = GRADERS.add(
    Grader(
        name="gqa_module",
        signature="MyGroupedQueryAttention(d_model, n_heads, n_kv_heads); forward(x, "
        "mask=None) -> (out (B, T, D), weights (B, H, T, S))",
        reference=memoised(adapt(_run_gqa_module, GroupedQueryAttention)),
        cases=_gqa_module_cases(),
        outputs=("out", "weights", "x gradient", "W_k gradient"),
        mistakes=(
            Mistake(
                "query head h used key-value head h % G (.repeat tiles the heads: 0, 1, 0, "
                "1, ...); head h belongs to group h // (H / G): repeat each key-value head "
                "H/G times in place, repeat_interleave(H // G, dim=1)",
                _planted_gqa("tiled heads"),
            ),
            Mistake(
                "you did not scale the scores: divide q kᵀ by √d, with d = d_model / n_heads "
                "the size of one head",
                _planted_gqa("no scale"),
            ),
            Mistake(
                "the softmax runs over the queries (dim=-2); each query's weights must sum "
                "to 1 over the keys: dim=-1",
                _planted_gqa("softmax axis"),
            ),
            Mistake(
                "you ignored the mask: set the scores where mask is False to -inf before "
                "the softmax",
                _planted_gqa("mask ignored"),
            ),
            Mistake(
                "you hid the keys where the mask is True; True means may attend: fill the "
                "scores where it is False, scores.masked_fill(~mask, -inf)",
                _planted_gqa("mask inverted"),
            ),
            Mistake(
                "you merged the heads with one reshape to (B, T, D): transpose(1, 2) back "
                "to (B, T, H, d) first, then reshape",
                _planted_gqa("direct merge"),
            ),
            Mistake(
                "you returned the concatenated heads without the output projection: apply self.W_o",
                _planted_gqa("no W_o"),
            ),
            Mistake(
                "you scaled the scores by √d_model: the scale is √d, with d = d_model / "
                "n_heads the size of one head, the length of the vectors each dot product "
                "multiplies",
                _planted_gqa("model scale"),
            ),
            Mistake(
                "you split the heads with one view/reshape to (B, heads, T, d): that cuts "
                "the features of different tokens into one head; view as (B, T, heads, d) "
                "first, then transpose(1, 2)",
                _planted_gqa("direct split"),
            ),
            Mistake(
                "you applied the mask after the softmax (weights * mask): the visible "
                "weights then no longer sum to 1; hide the keys in the scores, before the "
                "softmax, so that it renormalises over the visible ones",
                _planted_gqa("mask after softmax"),
            ),
            Mistake(
                "you hid the keys where the mask is True (and zeroed the rows left with no "
                "key); True means may attend: fill the scores where it is False",
                _planted_gqa("mask inverted, empty rows zeroed"),
            ),
        ),
        error_hints=(
            ("size mismatch for W_k", _KV_SIZE),
            ("size mismatch for W_v", _KV_SIZE),
            (
                "size mismatch for W_q",
                "W_q keeps all H query heads: nn.Linear(d_model, d_model); only W_k and W_v "
                "shrink to n_kv_heads * d_head",
            ),
            (
                "size mismatch for W_o",
                "W_o mixes the H concatenated heads back: nn.Linear(d_model, d_model)",
            ),
            (
                "key(s) in state_dict",
                "name the four projections self.W_q, self.W_k, self.W_v and self.W_o "
                "(nn.Linear, with bias), as the lib's GroupedQueryAttention does: the "
                "checker copies its weights into yours by these names",
            ),
        ),
        hint="project x with W_q to H heads and with W_k, W_v to G heads, repeat each "
        "key-value head H/G times in place, then attention as in chapter 4 (the mask hides "
        "keys before the softmax), heads merged back to (B, T, D), then W_o (the chapter's "
        'section "Fewer key-value heads: multi-query and grouped-query attention")',
        solution="MyGroupedQueryAttention",
        wrap=lambda cls: adapt(_run_gqa_module, cls),
        equivalent=(
            (
                "library: return self.W_o(concat), weights -> return (self.W_o(concat), "
                "torch.from_numpy(weights.detach().",
                "the weights are returned to be looked at; the gradients flow through out, "
                "which is checked",
            ),
            (
                "swap: k.transpose(-2, -1) in scores = q @ k.transpose(-2, -1) / "
                "math.sqrt(d) -> k.transpose(-1, -2)",
                "swapping axes -2 and -1 is swapping -1 and -2",
            ),
            *(
                (
                    'fill: float("-inf") in scores = scores.masked_fill(~mask, '
                    f'float("-inf")) -> {fill}',
                    "every query sees at least one key (the statement asks for no rule for "
                    "a query that sees none): a fill this far below the scores gives the "
                    "hidden keys e^(fill - max) = 0 exactly, as -inf does",
                )
                for fill in ("-1000000000.0", "-10000.0", "-1.7976931348623157e+308")
            ),
        ),
        rtol=1e-7,
        atol=1e-9,
    )
)


def check_gqa_module(cls: Any) -> CheckResult:
    """Check a grouped-query attention ``nn.Module`` class against the lib's, weights copied.

    The class is built as ``cls(d_model, n_heads, n_kv_heads)``, gets the weights of a seeded
    :class:`~attnlab.mechanism.scale.GroupedQueryAttention` (parameters ``W_q, W_k, W_v, W_o``), and
    its outputs, per-head weights and gradients (of the input and of ``W_k``) are compared.

    Taught in: chapters/08_scale.ipynb (exercise in exercises/08_scale.ipynb)
    """
    return check_class(
        GQA_MODULE, cls, _run_gqa_module, example="check_gqa_module(MyGroupedQueryAttention)"
    )


# --- prediction questions -------------------------------------------------------------------

CACHE_MEMORY = GRADERS.add(
    Question(
        name="cache_memory",
        answer=48.0,
        atol=0.5,
        explanation="2 (key and value) x 24 layers x 4 key-value heads x 2048 tokens x 64 "
        "x 2 bytes = 50,331,648 bytes = 48 MiB. The 16 query heads do not count: the cache "
        "holds keys and values only.",
        wrong=(
            (
                192.0,
                "that is the cache with 16 key-value heads: only the 4 key-value heads "
                "are cached, the query heads are not",
            ),
            (24.0, "you counted the keys or the values, not both: the factor 2"),
            (96.0, "float16 is 2 bytes per number, not 4"),
            (384.0, "only the 4 key-value heads are cached, and float16 is 2 bytes"),
            (
                50.331648,
                "that is the size in MB (10**6 bytes); the question asks for MiB, 1 MiB = "
                "2**20 bytes",
            ),
            (2.0, "that is the cache of one layer: the model has 24 layers, each with its own"),
            (49152.0, "that is the size in KiB (2**10 bytes): 1 MiB is 2**20 bytes"),
        ),
        hint="bytes = 2 · layers · kv_heads · tokens · d_head · bytes per number; "
        "1 MiB = 2**20 bytes",
    )
)


def check_cache_memory(answer: Any) -> CheckResult:
    """Check the predicted KV-cache size (MiB) of the model in exercise 8.8.

    Taught in: chapters/08_scale.ipynb (exercise in exercises/08_scale.ipynb)
    """
    return CACHE_MEMORY.check(answer)


CAUSAL_TILES = GRADERS.add(
    Question(
        name="causal_tiles",
        answer=36,
        explanation="8 diagonal tiles (partly masked) + 28 below the diagonal (fully "
        "visible) = 36 = 8·9/2; the 28 above the diagonal see only future keys and are "
        "skipped.",
        wrong=(
            (
                28,
                "you counted the tiles below the diagonal; the 8 diagonal tiles are partly "
                "visible and must be computed too",
            ),
            (64, "tiles above the diagonal see only future keys: they are skipped"),
            (
                8,
                "the diagonal tiles are computed, but so are the 28 below it: every query "
                "there sees every key, all of them in its past",
            ),
            (
                56,
                "that is every tile but the diagonal; the tiles above the diagonal see only "
                "future keys and are skipped, the diagonal ones are computed",
            ),
            (
                32,
                "half of 64 cuts the diagonal tiles in two, but a tile is computed whole: "
                "count the tiles on the diagonal and those below it separately",
            ),
        ),
        hint="a tile is skipped only when every key in it comes after every query in it: "
        "count the tiles that hold at least one pair a query may see",
    )
)


def check_causal_tiles(answer: Any) -> CheckResult:
    """Check the predicted number of tiles a causal 8 x 8 tile grid computes.

    Taught in: chapters/08_scale.ipynb (exercise in exercises/08_scale.ipynb)
    """
    return CAUSAL_TILES.check(answer)


summary = GRADERS.summary
"""``summary()``: the score table of every chapter 8 exercise, checked or not."""
