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
import warnings
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
from .modules import adapt, check_class, memoised, seed_cpu
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


def _update_exp_of_sum(m: Any, l: Any, block: Any) -> tuple[Any, Any]:  # noqa: E741
    """Planted: e to the block's summed scores, not the sum of the exponentials."""
    m_new = np.maximum(m, np.max(block, axis=-1))
    with np.errstate(over="ignore", invalid="ignore"):
        return m_new, l * np.exp(m - m_new) + np.exp(np.sum(block, axis=-1) - m_new)


def _update_block_max_only(m: Any, l: Any, block: Any) -> tuple[Any, Any]:  # noqa: E741
    """Planted: the new max is the block's alone (the old m forgotten)."""
    m_new = np.max(block, axis=-1)
    with np.errstate(invalid="ignore", over="ignore"):
        return m_new, l * np.exp(m - m_new) + np.sum(np.exp(block - m_new[..., None]), axis=-1)


def _update_rescaled_by_block_max(m: Any, l: Any, block: Any) -> tuple[Any, Any]:  # noqa: E741
    """Planted: the old sum rescaled by exp(m - max(block)) instead of exp(m - m')."""
    top = np.max(block, axis=-1)
    m_new = np.maximum(m, top)
    with np.errstate(over="ignore", invalid="ignore"):
        return m_new, l * np.exp(m - top) + np.sum(np.exp(block - m_new[..., None]), axis=-1)


def _update_unshifted(m: Any, l: Any, block: Any) -> tuple[Any, Any]:  # noqa: E741
    """Planted: the new terms exp(x_j), no max subtracted."""
    m_new = np.maximum(m, np.max(block, axis=-1))
    with np.errstate(over="ignore", invalid="ignore"):
        return m_new, l * np.exp(m - m_new) + np.sum(np.exp(block), axis=-1)


def _update_variant(
    sum_axis: int = -1, width: int | None = None, keepdims: bool = False, log: bool = False
) -> Callable:
    """Planted: the worked update with one slip in the block's sum (its axis, a hard-coded
    width, a kept axis) or a log of the result."""

    def update(m: Any, l: Any, block: Any) -> tuple[Any, Any]:  # noqa: E741
        m_new = np.maximum(m, np.max(block, axis=-1))
        safe = np.where(np.isfinite(m_new), m_new, 0.0)
        terms = np.exp((block if width is None else block[..., :width]) - safe[..., None])
        total = l * np.exp(m - safe) + np.sum(terms, axis=sum_axis, keepdims=keepdims)
        return m_new, (np.log(total) if log else total)

    return update


def _update_row_loop(m: Any, l: Any, block: Any) -> tuple[Any, Any]:  # noqa: E741
    """Planted: a Python loop over the rows, written for one batch axis (built-in max)."""
    m_new, l_new = np.empty_like(m), np.empty_like(l)
    for i in range(len(m)):
        m_new[i] = max(m[i], block[i].max())
        l_new[i] = l[i] * np.exp(m[i] - m_new[i]) + np.exp(block[i] - m_new[i]).sum()
    return m_new, l_new


def _maximum_swapped(scores: str) -> tuple[str, str]:
    """The generated swap of np.maximum's arguments, recorded as equivalent."""
    return (
        f"swap: np.maximum(m, {scores}.max(axis=-1)) in m_new = np.maximum(m, "
        f"{scores}.max(axis=-1)) -> np.maximum({scores}.max(axis=-1), m)",
        "np.maximum compares its two arguments entry by entry: their order does not matter",
    )


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
                "you exponentiated the sum of the block's scores, e^(x_1 + x_2 + ... - m'); "
                "the new terms are the sum of the exponentials, e^(x_1 - m') + e^(x_2 - m') "
                "+ ...: exponentiate each score first, then sum",
                _update_exp_of_sum,
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
                "you rescaled the old sum by exp(m - max(block)), the block's own max: the "
                "old sum must be brought to the new running max, exp(m - m') with m' = "
                "max(m, max(block)), the same max the block's terms use (a block whose "
                "scores are all masked has max -inf, and its factor becomes e^(+inf))",
                _update_rescaled_by_block_max,
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
                "a reduction runs along axis 0 (down the rows), not along each row's scores: "
                "a `sum` or `max` with axis=0 gives one number per column of the block, "
                "where `m` and `total` hold one per row; reduce along the last axis, "
                "axis=-1 (the error's line shows which reduction)",
                _update_variant(sum_axis=0),
            ),
            *(
                Mistake(
                    f"your sum reads only the first {width} scores of each block (a "
                    "slice of fixed width): blocks have any width, the whole last axis; "
                    "sum the exponentials of every score in the block",
                    _update_variant(width=width),
                )
                for width in (1, 2, 3, 4)
            ),
            Mistake(
                "your block sum keeps its axis (keepdims=True): it is (..., 1) where `total` "
                "is (...), so the two broadcast into a table or fail; sum without keepdims "
                "(a max kept with keepdims for broadcasting is fine)",
                _update_variant(keepdims=True),
            ),
            Mistake(
                "your `total` is the log of the right one: the state keeps the running sum "
                "of the exponentials itself, not its log",
                _update_variant(log=True),
            ),
            Mistake(
                "your loop over the rows (m[i], block[i]) assumes one batch axis: with m of "
                "shape (2, 3), m[i] is a whole row of running maxima and Python's max "
                "compares arrays; work on whole arrays with NumPy, reductions along "
                "axis=-1, with no loop over rows",
                _update_row_loop,
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
        error_hints=(
            *_NUMPY_ERRORS,
            ("could not be broadcast", lambda message: _tile_broadcast_hint(message)),
        ),
        equivalent=(_maximum_swapped("block"),),
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
    peak = rng.standard_normal((2, 8))
    peak[:, 1] += 800.0  # the max of the row comes first, every later block far below it
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
        Case("the max in the first block (800 above the rest)", {"x": peak, "block_size": 3}),
        Case(
            "scores that rise by 800 after the first block",  # the first block's max overflows
            {
                "x": np.array(
                    [
                        [0.0, 0.0, 0.0, 800.0, 801.0, 0.0],
                        [-INF, -INF, -INF, 900.0, 901.0, 0.0],
                        [0.5, -1.0, 0.0, 1.0, 2.0, -0.5],
                    ]
                ),
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
    blocks: str = "all",
    rescale: bool = True,
    empty: str = "zero",
    forget_max: bool = False,
    width: int = 0,
    weights_max: str = "final",
    two_d: bool = False,
    start_max: float = -INF,
    skip_empty: bool = True,
    start_total: float = 0.0,
) -> Callable[..., Any]:
    """Planted: the worked online softmax with one difference (blocks, their width, rescale,
    empty rows, a running max that forgets, the max the weights use, 2-D only indexing, the
    running max's starting value)."""

    def softmax(x: Any, block_size: int) -> Any:
        n = x.shape[1] if two_d else x.shape[-1]
        stop = {"all": n, "full": n - n % block_size, "short": n - block_size}[blocks]
        rows = x.shape[:1] if two_d else x.shape[:-1]
        m, total = np.full(rows, start_max), np.full(rows, start_total)
        first = None
        for start in range(0, stop, block_size):
            end = start + block_size + width
            block = x[:, start:end] if two_d else x[..., start:end]
            if block.shape[-1] == 0 and skip_empty:
                continue
            top = np.max(block, axis=1 if two_d else -1)
            m_new = top if forget_max else np.maximum(m, top)
            safe = np.where(np.isneginf(m_new), 0.0, m_new)
            # a learner's guard of the old max (0 where it is -inf): with a start of 0 the
            # same as none, with a sum started at 1 that 1 is carried along
            old = np.where(np.isneginf(m), 0.0, m) if forget_max or start_total else m
            alpha = np.exp(old - safe) if rescale else 1.0
            total = total * alpha + np.sum(np.exp(block - safe[..., None]), axis=-1)
            m = m_new
            first = safe if first is None else first
        safe = np.where(np.isneginf(m), 0.0, m)[..., None]
        if weights_max == "first" and first is not None:
            safe = first[..., None]
        seen = total[..., None] > 0
        fill = 0.0 if empty == "zero" else 1.0 / n
        return np.where(seen, np.exp(x - safe) / np.where(seen, total[..., None], 1.0), fill)

    return softmax


def _softmax_max_not_stored(x: Any, block_size: int) -> Any:
    """Planted: m_new computed but never stored (m stays -inf), final weights by the row max."""
    m, total = np.full(x.shape[:-1], -INF), np.zeros(x.shape[:-1])
    for start in range(0, x.shape[-1], block_size):
        block = x[..., start : start + block_size]
        m_new = np.maximum(m, np.max(block, axis=-1))
        safe = np.where(np.isneginf(m_new), 0.0, m_new)
        old = np.where(np.isneginf(m), 0.0, m)
        total = total * np.exp(old - safe) + np.sum(np.exp(block - safe[..., None]), axis=-1)
    top = np.max(x, axis=-1)
    safe = np.where(np.isneginf(top), 0.0, top)[..., None]
    seen = total[..., None] > 0
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(seen, np.exp(x - safe) / np.where(seen, total[..., None], 1.0), 0.0)


def _softmax_running_weights(x: Any, block_size: int) -> Any:
    """Planted: each block's weights written with the running max and sum of that moment."""
    m, total, out = np.full(x.shape[:-1], -INF), np.zeros(x.shape[:-1]), np.zeros(x.shape)
    for start in range(0, x.shape[-1], block_size):
        block = x[..., start : start + block_size]
        m, total = online_softmax_update(m, total, block)
        safe = np.where(np.isneginf(m), 0.0, m)[..., None]
        seen = total[..., None] > 0
        e = np.exp(block - safe)
        out[..., start : start + block_size] = np.where(
            seen, e / np.where(seen, total[..., None], 1.0), 0.0
        )
    return out


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


def _softmax_stale(x: Any, block_size: int) -> Any:
    """Planted: each block's numerators against the running max of their time, never updated."""
    m, total, parts = np.full(x.shape[:-1], -INF), np.zeros(x.shape[:-1]), []
    for start in range(0, x.shape[-1], block_size):
        block = x[..., start : start + block_size]
        m, total = online_softmax_update(m, total, block)
        parts.append(np.exp(block - np.where(np.isneginf(m), 0.0, m)[..., None]))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.concatenate(parts, axis=-1) / np.where(total == 0, 1.0, total)[..., None]


def _softmax_first_max(x: Any, block_size: int) -> Any:
    """Planted: the first block's max as the reference of every exponential, never updated."""
    m = np.max(x[..., :block_size], axis=-1)
    m = np.where(np.isneginf(m), 0.0, m)[..., None]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        e = np.exp(x - m)
        total = np.sum(e, axis=-1, keepdims=True)
        return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)


def _softmax_index_starts(x: Any, block_size: int) -> Any:
    """Planted: the block's number used as its start (blocks at 0, 1, 2, ...: they overlap)."""
    m, total = np.full(x.shape[:-1], -INF), np.zeros(x.shape[:-1])
    for start in range(-(-x.shape[-1] // block_size)):
        m, total = online_softmax_update(m, total, x[..., start : start + block_size])
    safe = np.where(np.isneginf(m), 0.0, m)[..., None]
    seen = total[..., None] > 0
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(seen, np.exp(x - safe) / np.where(seen, total[..., None], 1.0), 0.0)


def _softmax_nan_hidden(x: Any, block_size: int) -> Any:
    """Planted: no guard inside the loop, the NaN turned into 0 at the end."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.nan_to_num(_softmax_planted(_update_unguarded)(x, block_size))


class _Watched(np.ndarray):
    """The scores of a row, handed to the learner: records every max or sum taken over them.

    A max or a sum over the last axis of an array as wide as the row means the function did
    not walk the row block by block; arrays derived from the scores stay watched.
    """

    seen: list[int]  # the lengths of the last axes reduced at once

    def __array_finalize__(self, obj: Any) -> None:
        self.seen = getattr(obj, "seen", [])

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        keywords = [*kwargs.get("out", ()), kwargs.get("where")]
        seen = next(x.seen for x in (*inputs, *keywords) if isinstance(x, _Watched))
        plain = [x.view(np.ndarray) if isinstance(x, _Watched) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(
                x.view(np.ndarray) if isinstance(x, _Watched) else x for x in kwargs["out"]
            )
        if isinstance(kwargs.get("where"), _Watched):  # np.divide(..., where=total > 0)
            kwargs["where"] = kwargs["where"].view(np.ndarray)
        if method == "reduce" and ufunc in (np.maximum, np.fmax, np.add) and plain[0].ndim:
            axis = kwargs.get("axis", 0)
            axes = range(plain[0].ndim) if axis is None else np.atleast_1d(axis)
            if any(int(a) % plain[0].ndim == plain[0].ndim - 1 for a in axes):
                seen.append(plain[0].shape[-1])
        result = getattr(ufunc, method)(*plain, **kwargs)
        if isinstance(result, np.ndarray) and result.ndim:
            result = result.view(_Watched)
            result.seen = seen
        return result


def _reduced_widths(fn: Any, rows: int, block_size: int) -> list[int] | None:
    """The widths of the maxima and sums ``fn`` takes along rows of 10 watched scores, or
    ``None`` where it raises (its values were right on plain arrays: nothing to conclude)."""
    watched = _rng().standard_normal((rows, 10)).view(_Watched)
    watched.seen = []
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the learner's warnings were shown on the cases
            fn(watched, block_size)
    except Exception:
        return None
    return watched.seen


def _walks_blocks(fn: Any) -> tuple[str, str] | None:
    """Refuses an online softmax that takes a max or sum over more than one block of a row."""
    seen = _reduced_widths(fn, 3, 4)
    if seen is None:
        return None
    widest = max(seen, default=0)
    if widest <= 4:
        return _uses_block_size(fn)
    return (
        f"right values, but not block by block: called with rows of 10 scores and "
        f"block_size=4, your code took a max or a sum over {widest} scores of a row at once",
        "the exercise is the online softmax: it reads each row in blocks of `block_size` "
        "scores along the last axis, never the whole row at once, and keeps only a running "
        "max and sum per row between blocks (your update of 8.1); the one-pass softmax "
        "gives the same numbers but needs the whole row in memory",
    )


def _uses_block_size(fn: Any) -> tuple[str, str] | None:
    """Refuses an online softmax whose blocks are as wide as it likes, whatever `block_size`."""
    widths = sorted(set(_reduced_widths(fn, 2, 3) or ()))
    if not widths or 3 in widths:
        return None
    return (
        f"right values, but not with the blocks asked for: called with rows of 10 scores "
        f"and block_size=3, your code reduced blocks of {' and '.join(map(str, widths))} "
        "scores",
        "your loop ignores its `block_size` argument (a block width written as a number): "
        "the caller picks the block size, as a kernel picks the tile that fits its fast "
        "memory; step and slice with `block_size` itself",
    )


ONLINE_SOFTMAX = GRADERS.add(
    Grader(
        name="online_softmax",
        signature="online_softmax(x, block_size) with x: (..., n) -> weights (..., n)",
        reference=online_softmax,
        cases=_softmax_cases(),
        structure=_walks_blocks,
        mistakes=(
            Mistake(
                "NaN in a row that starts with masked blocks: while nothing is visible the "
                "running max is -inf and exp(m - m') is exp(-inf - (-inf)) = NaN: that "
                "subtraction needs a guard for as long as no visible score has been seen",
                _softmax_planted(_update_unguarded),
            ),
            Mistake(
                "a row that starts with masked blocks comes out all zero although it has "
                "visible scores: the NaN is born inside the loop and poisons `total`: while "
                "the running max m' is still -inf, every subtraction of it is -inf - (-inf) = "
                "NaN, in the rescale exp(m - m') and in the block's own exp(x - m') alike (a "
                "guard on one of them leaves the other); replacing NaN at the end cannot "
                "bring the row back, so guard the subtraction inside the loop: a finite "
                "stand-in for m' in both exponents while it is -inf",
                _softmax_nan_hidden,
            ),
            Mistake(
                "the weights of the early blocks are stale: you computed each block's "
                "exponentials against the running max of that moment and kept them, but the "
                "final weights are all relative to the final max of the row; rescale what "
                "you kept when the max rises, or compute the exponentials once, after the loop",
                _softmax_stale,
            ),
            Mistake(
                "a row with no visible score gives 0/0 = NaN or exp(-inf - (-inf)) = NaN: such a "
                "row ends with `total` = 0 and m = -inf, so both the division by `total` and "
                "exp(x - m) (unless m is guarded as in the loop) need a guard; give such a row "
                "all-zero weights",
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
                "your running max forgets the old one: each block sets m to its own max, so "
                "it can go down, and the sum and the final weights are then relative to the "
                "last block's max; the running max is max(m, max(block)), it never goes "
                "down (your update of 8.1)",
                _softmax_variant(forget_max=True),
            ),
            Mistake(
                "your running max starts at 0, not at -inf: it can only go up from its start, "
                "so a row whose scores all lie below 0 (here the row near -1000) keeps m = 0, "
                "every e^(x - m) underflows to 0 and its weights vanish; start from a max that "
                "has seen nothing, below every score",
                _softmax_variant(start_max=0.0),
            ),
            Mistake(
                "your running sum starts at 1, not at 0: a state that has seen nothing has "
                "m = -inf and `total` = 0; the extra 1 stays in every denominator (rescaled "
                "along), so every weight comes out a little too small",
                _softmax_variant(start_total=1.0),
            ),
            Mistake(
                "your loop computes the new max but never stores it (no `m = m_new`): the "
                "running max stays -inf, so every block is treated as the first and `total` "
                "is rescaled against the wrong max; store the new max at the end of each step",
                _softmax_max_not_stored,
            ),
            Mistake(
                "your blocks leave out one score each (a slice that stops one short of "
                "start + block_size): those scores never reach the running max and sum, so "
                "the weights come out too large; a slice's end is excluded already, so a "
                "block ends at start + block_size",
                _softmax_variant(width=-1),
            ),
            Mistake(
                "your blocks leave out one score each (a slice that stops one short of "
                "start + block_size): with block_size = 1 the block is empty, and a max over "
                "no scores has no value; a slice's end is excluded already, so a block ends "
                "at start + block_size",
                _softmax_variant(width=-1, skip_empty=False),
            ),
            Mistake(
                "your blocks overlap by one score (a slice one past start + block_size): the "
                "scores at the block edges are counted twice in the running sum; the end of "
                "a slice is excluded already",
                _softmax_variant(width=1),
            ),
            Mistake(
                "your final weights use the max of the first block, but `total` is relative "
                "to the final running max: compute every weight e^(x - m) with the m the "
                "loop ends with",
                _softmax_variant(weights_max="first"),
            ),
            Mistake(
                "your reference max is fixed by the first block and never updated: a later "
                "block with much larger scores (here 800 after a first block near 0) "
                "overflows exp, e^800 = inf and inf/inf = NaN; keep a running max, raise it "
                "with each block, and rescale the running sum when it rises (your update "
                "of 8.1)",
                _softmax_first_max,
            ),
            Mistake(
                "your blocks start at 0, 1, 2, ... (each block's number used as its start): "
                "they overlap, so most scores are counted several times, and the scores "
                "after the last of those blocks are never seen; block i starts at "
                "i · block_size, so the starts step by block_size",
                _softmax_index_starts,
            ),
            Mistake(
                "you wrote each block's weights with the running max and sum as they stood "
                "then: the sum is complete only after the last block; walk all the blocks "
                "first, then write every weight with the final max and sum",
                _softmax_running_weights,
            ),
            Mistake(
                "your code is written for a 2-D x (`x[:, start:end]`, a max over axis 1): "
                "the input may have several batch axes, (..., n); index the last axis with "
                "`x[..., start:end]` and reduce along axis=-1",
                _softmax_variant(two_d=True),
            ),
            Mistake(
                "a row with no visible score (all -inf) must get all-zero weights; yours "
                "gets 1/n everywhere (a uniform row): it has no key to attend to, not every "
                "key",
                _softmax_variant(empty="uniform"),
            ),
        ),
        equivalent=(
            _maximum_swapped("block"),
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
    rescaled_scores: bool = False,
    alpha_twice: bool = False,
    alpha_outside: bool = False,
    alpha_on_p: bool = False,
    alpha_on_new: bool = False,
    alpha_squared: bool = False,
    scaled_first: bool = False,
    p_normalised: bool = False,
    p_softmax: bool = False,
    inverted: bool = False,
    forget_max: bool = False,
    dot: bool = False,
    old_m_returned: bool = False,
) -> Callable:
    def step(m: Any, l: Any, acc: Any, scores: Any, v: Any) -> tuple[Any, Any, Any]:  # noqa: E741
        if old_m_returned:
            _, l_new, acc_new = step_right(m, l, acc, scores, v)
            return m, l_new, acc_new
        if scaled_first:  # the scores divided by √d again, before anything else
            scores = scores / math.sqrt(v.shape[-1])
        m_new = np.maximum(m, np.max(scores) if one_max else np.max(scores, axis=-1))
        if forget_max:  # as a learner writes it: no guard
            m_new = np.max(scores, axis=-1)
            p = np.exp(scores - m_new[..., None])
            alpha = np.exp(m - m_new)
            return m_new, alpha * l + np.sum(p, axis=-1), alpha[..., None] * acc + p @ v
        safe = np.where(np.isfinite(m_new), m_new, 0.0)
        if against == "own":  # as a learner writes it: the tile's own max, no guard
            with np.errstate(invalid="ignore"):
                p = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
            alpha = np.exp(np.where(np.isfinite(m), m - safe, -INF))
            return m_new, alpha * l + np.sum(p, axis=-1), alpha[..., None] * acc + p @ v
        ref = {
            "new": safe,
            "old": np.where(np.isfinite(m), m, 0.0),
            "old where finite": np.where(np.isfinite(m), m, safe),
        }[against]
        alpha = np.exp(np.where(np.isfinite(m), m - safe, -INF))
        if inverted:
            alpha = np.exp(safe - m)
        elif forget_max:
            alpha = np.exp(m - m_new)
        p = np.exp(
            (scores / math.sqrt(v.shape[-1]) if rescaled_scores else scores) - ref[..., None]
        )
        if alpha_on_p:
            p = alpha[..., None] * p
        if p_softmax:  # as a learner writes it: p divided by its own sum, for total and acc
            with np.errstate(invalid="ignore", divide="ignore"):
                p = p / np.sum(p, axis=-1, keepdims=True)
        l_new = (alpha * l if alpha_l else l) + np.sum(p, axis=-1)
        mixed = p @ v if values == "v" else scores @ v
        if p_normalised:  # a softmax within the tile
            with np.errstate(invalid="ignore", divide="ignore"):
                mixed = (p / np.sum(p, axis=-1, keepdims=True)) @ v
        if alpha_on_new:  # acc + alpha·(p v)
            return m_new, l_new, acc + alpha[..., None] * mixed
        if alpha_squared:
            return m_new, l_new, (alpha**2)[..., None] * acc + mixed
        if dot:
            mixed = np.dot(p, v)
        acc_new = (alpha[..., None] * acc if alpha_acc else acc) + mixed
        if alpha_twice:
            acc_new = alpha[..., None] * acc_new
        if alpha_outside:  # alpha·(acc + p v)
            acc_new = alpha[..., None] * (acc + mixed)
        if normalised:
            acc_new = acc_new / l_new[..., None]
        return m_new, l_new, acc_new

    step_right = _tile_with() if old_m_returned else None
    return step


def _tile_alpha_flat(m: Any, l: Any, acc: Any, scores: Any, v: Any) -> tuple[Any, Any, Any]:  # noqa: E741
    """Planted: alpha (..., Tb) times acc (..., Tb, d_v) without the value axis."""
    m_new = np.maximum(m, np.max(scores, axis=-1))
    alpha = np.exp(m - m_new)
    p = np.exp(scores - m_new[..., None])
    return m_new, alpha * l + np.sum(p, axis=-1), alpha * acc + p @ v


def _tile_running_average(m: Any, l: Any, acc: Any, scores: Any, v: Any) -> tuple[Any, Any, Any]:  # noqa: E741
    """Planted: acc kept as a running average (times the old total, over the new one)."""
    m_new, l_new, acc_new = _tile_with()(m, l, acc * l[..., None], scores, v)
    with np.errstate(invalid="ignore", divide="ignore"):
        return m_new, l_new, acc_new / l_new[..., None]


def _tile_inverted_guarded(m: Any, l: Any, acc: Any, scores: Any, v: Any) -> tuple[Any, Any, Any]:  # noqa: E741
    """Planted: alpha = exp(m' - m), guarded where m = -inf (so the first tile is right)."""
    m_new = np.maximum(m, np.max(scores, axis=-1))
    alpha = np.exp(np.where(np.isfinite(m), m_new - m, -INF))
    p = np.exp(scores - np.where(np.isfinite(m_new), m_new, 0.0)[..., None])
    return m_new, alpha * l + np.sum(p, axis=-1), alpha[..., None] * acc + p @ v


def _tile_broadcast_hint(message: str) -> str | None:
    """A per-row vector against the keys: a reduction over the wrong axis or a missing axis."""
    two = re.search(r"shapes \((\d+),\) \((\d+),\)", message)
    if two is not None:
        return (
            f"two vectors of different lengths met ({two[1]} and {two[2]}): `m`, `total` and "
            "the tile's max and sum hold one number per query row; a `sum` or `max` of "
            "the scores along axis=-2 gives one number per key instead: reduce each row "
            "over its keys, along the last axis"
        )
    flipped = re.search(r"shapes \((\d+),(\d+)\) \((\d+),(\d+)\)", message)
    if flipped is not None and flipped[1] == flipped[4] != flipped[2] == flipped[3]:
        return (
            f"two arrays with the same axes in opposite orders met, ({flipped[1]},"
            f"{flipped[2]}) and ({flipped[3]},{flipped[4]}): the weighted values came out "
            "transposed, features first; acc keeps one row per query and the values' "
            "features last, so check the order of the product's operands and any transpose"
        )
    per_key = re.search(r"shapes \((\d+),(\d+)\) \((\d+),(\d+)\)", message)
    if per_key is not None and per_key[2] == per_key[4] and per_key[1] != per_key[3]:
        return (
            f"an array of {per_key[1]} rows met one of {per_key[3]} rows, both with "
            f"{per_key[2]} value features: acc has one row per query, but your weighted "
            "values came out with one row per key; the product of p and v sums over the "
            "keys, (..., Tb, Sb) @ (..., Sb, d_v) -> (..., Tb, d_v), and an elementwise "
            "product summed along another axis keeps the keys"
        )
    row = re.search(r"shapes \((\d+),(\d+)\) \((\d+),\)", message)
    if row is not None and row[1] == row[3]:
        return (
            f"a (rows, keys) array, shape ({row[1]},{row[2]}), met a vector of one number "
            f"per row, shape ({row[3]},): NumPy lines a vector up with the last axis, the "
            "keys; to subtract each row's max from its own scores, give the vector a last "
            "axis of size 1 ([..., None])"
        )
    return None


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
                "you multiply the new tile's term by alpha too, alpha·(acc + p v): only what "
                "acc held before is relative to the old max; the new tile's weights p are "
                "computed against the new max already, so only the old acc is rescaled",
                _tile_with(alpha_outside=True),
            ),
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
                "you exponentiated this tile against its own max, but alpha rescales the old "
                "state to the new running max m': the tile's terms must use that same m', "
                "or `total` and acc add numbers on two scales (and a row of -inf scores "
                "gives -inf - (-inf) = NaN)",
                _tile_with(against="own"),
            ),
            Mistake(
                "you return the old running max m, not the new one m' (on the first tile "
                "it is still -inf): the returned max must be the one that the returned "
                "`total` and acc are now relative to",
                _tile_with(old_m_returned=True),
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
                "you normalised the tile's p by its own sum (a softmax within the tile): the "
                "tile step keeps the *unnormalised* exponentials e^(s - m'), which `total` "
                "sums and acc weights v with; the division by `total` happens once, after "
                "the last tile (a tile whose scores are all masked has p summing to 0, and "
                "0/0 gives NaN)",
                _tile_with(p_softmax=True),
            ),
            Mistake(
                "you divided acc by the running sum inside the update: the state keeps the "
                "*unnormalised* sum of p·v, and the division by `total` happens once, after "
                "the last tile",
                _tile_with(normalised=True),
            ),
            Mistake(
                "you keep acc normalised, a running average (the old acc times the old "
                "`total`, divided by the new one): the state acc is the *unnormalised* sum "
                "of p·v, rescaled like `total`, and the division by `total` happens once, "
                "after the last tile",
                _tile_running_average,
            ),
            Mistake(
                "your new maximum is one number for the whole tile (a max without axis=-1): "
                "each query row needs its own, or a row far below the tile's largest score "
                "gets p = 0 everywhere",
                _tile_with(one_max=True),
            ),
            Mistake(
                "you exponentiated this tile against the old max m wherever it was finite; "
                "use the new max m' = max(m, max(scores)) for every row, the same one the "
                "rescaled state refers to",
                _tile_with(against="old where finite"),
            ),
            Mistake(
                "you rescaled the old state by exp(m' - m), the wrong way round: the old "
                "terms shrink when the max rises, so alpha = exp(m - m') <= 1 (as in 8.1)",
                _tile_with(inverted=True),
            ),
            Mistake(
                "you rescaled the old state by exp(m' - m), the wrong way round (guarded "
                "for m = -inf, so the first tile comes out right): the old terms shrink when "
                "the max rises, so alpha = exp(m - m') <= 1 (as in 8.1)",
                _tile_inverted_guarded,
            ),
            Mistake(
                "your m' is this tile's max alone; the running max is max(m, max(scores)): "
                "it never goes down (a tile whose scores are all masked would make it -inf)",
                _tile_with(forget_max=True),
            ),
            Mistake(
                "you multiplied this tile's p by alpha as well: p = exp(scores - m') is "
                "already relative to the new max; only the old state, `total` and acc, is "
                "rescaled by alpha",
                _tile_with(alpha_on_p=True),
            ),
            Mistake(
                "np.dot does not batch over leading axes: on 3-D arrays it pairs every "
                "batch of p with every batch of v (a 4-D result); use p @ v (np.matmul), "
                "which multiplies batch by batch",
                _tile_with(dot=True),
            ),
            Mistake(
                "the scores you receive are already scaled: dividing them by √d again "
                "changes every weight; exponentiate `scores` as given",
                _tile_with(rescaled_scores=True),
            ),
            Mistake(
                "alpha scales acc twice and the new term p·v once: the factor exp(m - m') "
                "applies once, to the old accumulator only; this tile's p·v is already "
                "relative to the new max",
                _tile_with(alpha_twice=True),
            ),
            Mistake(
                "you multiplied acc by alpha twice (alpha**2): the old accumulator needs "
                "the factor exp(m - m') once, exactly as `total` does",
                _tile_with(alpha_squared=True),
            ),
            Mistake(
                "you put alpha on this tile's p·v instead of on the old acc (acc + alpha·p v): "
                "p is computed against the new max already; it is the old acc, summed "
                "against the old max, that alpha = exp(m - m') rescales, as for `total`",
                _tile_with(alpha_on_new=True),
            ),
            Mistake(
                "the scores you receive are already scaled: you divided them by √d again "
                "(the max and the weights then come from other numbers); use `scores` as "
                "given",
                _tile_with(scaled_first=True),
            ),
            Mistake(
                "you normalised p within the tile (p divided by its own row sum): p stays "
                "unnormalised, exp(scores - m'), so that tiles add up; the one division by "
                "`total` comes after the last tile (and a tile row with every key masked "
                "would give 0/0)",
                _tile_with(p_normalised=True),
            ),
        ),
        hint="it is your update of 8.1 with a third running quantity: which of `total` and "
        "acc was computed against the old maximum, and what must multiply it now? (the "
        'chapter\'s section "Tiled attention: never holding the weights")',
        error_hints=(*_NUMPY_ERRORS, ("could not be broadcast", _tile_broadcast_hint)),
        equivalent=(_maximum_swapped("scores"),),
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


def _appended(k_cache: Any, v_cache: Any, k: Any, v: Any) -> tuple[Any, Any]:
    return torch.cat([k_cache, k], -2), torch.cat([v_cache, v], -2)  # (B, H, t + 1, d)


def _planted_kv_step(
    out: Callable[[Any, Any, Any], Any] = _attend,
    grow: Callable[[Any, Any, Any, Any], tuple[Any, Any]] = _appended,
    old_caches: bool = False,
) -> Callable[..., Any]:
    """Planted: the caches grown by ``grow(k_cache, v_cache, k, v)``, ``out(q, keys, values)``
    over what they hold, and those caches returned (the old ones where ``old_caches``)."""

    def kv_step(q: Any, k: Any, v: Any, kc: Any, vc: Any) -> tuple[Any, Any, Any]:
        keys, values = grow(kc, vc, k, v)
        returned = (kc.clone(), vc.clone()) if old_caches else (keys, values)
        return out(q, keys, values), *returned

    return kv_step


def _attend_scaled(size: Callable[[Any, Any], float]) -> Callable[[Any, Any, Any], Any]:
    """``_attend`` with the scores scaled by 1/sqrt(size(q, keys)) instead of 1/sqrt(d)."""
    return lambda q, keys, values: _attend(q, keys, values, scale=1 / math.sqrt(size(q, keys)))


_KV_BUGS: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "you scaled by the square root of H·d, the width of all heads together; the "
        "scale is 1/sqrt(d), d = q.shape[-1]: the size of one head's query and key "
        "vectors",
        {"out": _attend_scaled(lambda q, keys: q.shape[1] * q.shape[-1])},
    ),
    (
        "your query saw only the first key: that is a causal mask aligned to the top "
        "left (`is_causal=True` with one query and t + 1 keys); the new token is the "
        "last position, so it may see every key in the cache: no mask is needed here",
        {"out": lambda q, keys, values: values[..., :1, :].expand_as(q).clone()},
    ),
    (
        "your query attended to the cache only: append the new key and value first, "
        "then attend (a token may attend to itself)",
        {"out": lambda q, keys, values: _attend(q, keys[..., :-1, :], values[..., :-1, :])},
    ),
    (
        "your query attended to the new token only: out must average the values of "
        "every cached token plus the new one",
        {"out": lambda q, keys, values: values[..., -1:, :].clone()},
    ),
    (
        "you put the new key and value first; append them at the end of the cache "
        "(dim=-2), so that cache position i is token i",
        {"grow": lambda kc, vc, k, v: _appended(k, v, kc, vc)},
    ),
    (
        "your scores are not divided by √d: no scale at all, or one that is always "
        "1, such as sqrt(q.shape[-2]) (the one query of this step); d is the size "
        "of a query or key vector, q.shape[-1]",
        {"out": lambda q, keys, values: _attend(q, keys, values, scale=1.0)},
    ),
    (
        "keys and values are swapped in the attention: the scores compare the query "
        "with the keys (q Kᵀ), and the weights average the values (weights @ V)",
        {"out": lambda q, keys, values: _attend(q, values, keys)},
    ),
    (
        "the new key went into the value cache and the new value into the key cache: "
        "each cache grows by its own kind of vector, the key cache by k and the value "
        "cache by v",
        {"grow": lambda kc, vc, k, v: _appended(kc, vc, v, k)},
    ),
    (
        "every weight of yours is 1, so out is the sum of the values: your softmax "
        "normalises one number at a time, either because it runs along the query "
        "axis (dim=-2, of size 1 here) or because your scores are keys times query, "
        "(t + 1, 1) per head; the one query's scores form a row, (1, t + 1), "
        "normalised along the keys, the last axis",
        {"out": lambda q, keys, values: values.sum(-2, keepdim=True)},
    ),
    (
        "you returned the old caches: return the caches with the new key and value "
        "appended, for the next step",
        {"old_caches": True},
    ),
    (
        "you scaled the scores by the square root of the number of keys (t + 1): the "
        "scale is 1/√d, d the size of one query or key vector, whatever the length "
        "of the cache",
        {"out": _attend_scaled(lambda q, keys: keys.shape[-2])},
    ),
)


KV_STEP = GRADERS.add(
    Grader(
        name="kv_step",
        signature="kv_step(q, k, v, k_cache, v_cache) with q, k, v: (B, H, 1, d), caches: "
        "(B, H, t, d) -> (out (B, H, 1, d), k_cache (B, H, t+1, d), v_cache (B, H, t+1, d))",
        reference=_kv_step_reference,
        cases=_kv_cases(),
        outputs=("out", "k_cache", "v_cache"),
        mistakes=tuple(Mistake(diagnosis, _planted_kv_step(**bug)) for diagnosis, bug in _KV_BUGS),
        error_hints=(
            (
                "stack expects each tensor to be equal size",
                "torch.stack puts tensors side by side on a new axis, so it needs them of "
                "one shape; a cache grows along an axis it already has, its tokens (t "
                "cached + 1 new): that is a concatenation, torch.cat, along the token axis",
            ),
        ),
        hint="which axis of a cache counts its tokens, and which keys and values may the "
        "one new query see once this step is done? The step returns the caches it leaves "
        'behind too (the chapter\'s section "The KV cache: generate without recomputing")',
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
        # H, d, T and S differ within every case (and H·d is no square of any of them), so a
        # scale by the wrong size or a size read from the wrong axis is never right by chance
        case("4 query heads, 2 key-value heads", 1, 4, 2, 3, 5, 6),
        case("6 query heads, 3 key-value heads, T=4, S=5", 2, 6, 3, 4, 5, 8),
        case("multi-query: 4 heads share 1", 1, 4, 1, 3, 6, 8),
        case("8 heads in 4 groups", 2, 8, 4, 5, 7, 6),
        case("multi-head: as many key-value heads", 1, 2, 2, 3, 4, 6),
        case("large scores (an unstable softmax overflows)", 2, 4, 2, 3, 5, 6, scale=400.0),
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
        "times along dim=1 before the product, in both tensors that meet the query heads, "
        "k (in q kᵀ) and v (in weights @ v); a repeat along another axis (or without "
        "`dim=`, which flattens), or none, leaves G heads there"
    )


def _gqa_scaled(size: Callable[[Any, Any], float]) -> Callable[..., Any]:
    """Planted: the right repeat, scaled by 1/sqrt(size(q, k)) instead of 1/sqrt(d)."""

    def gqa(q: Any, k: Any, v: Any) -> Any:
        n = q.shape[1] // k.shape[1]
        return _attend(q, repeat_kv(k, n), repeat_kv(v, n), scale=1 / math.sqrt(size(q, k)))

    return gqa


def _gqa_mixed_repeats(q: Any, k: Any, v: Any) -> Any:
    """Planted: k tiled with .repeat, v repeated in place (or the other way round)."""
    n = q.shape[1] // k.shape[1]
    return _attend(q, k.repeat(1, n, 1, 1), repeat_kv(v, n))


def _gqa_mixed_repeats_v(q: Any, k: Any, v: Any) -> Any:
    n = q.shape[1] // k.shape[1]
    return _attend(q, repeat_kv(k, n), v.repeat(1, n, 1, 1))


def _gqa_shared_queries(q: Any, k: Any, v: Any) -> Any:
    """Planted: the query heads of a group averaged, one attention per key-value head."""
    B, H, T, d = q.shape
    G = k.shape[1]
    return _attend(q.reshape(B, G, H // G, T, d).mean(2), k, v).repeat_interleave(H // G, 1)


def _gqa_reshaped_keys(q: Any, k: Any, v: Any) -> Any:
    """Planted: k reshaped to (B, G, d, S) instead of transposed."""
    n = q.shape[1] // k.shape[1]
    k, v = repeat_kv(k, n), repeat_kv(v, n)
    B, H, S, d = k.shape
    return torch.softmax(q @ k.reshape(B, H, d, S) / math.sqrt(d), dim=-1) @ v


_WRONG_SCALE = (
    "the scale is 1/sqrt(d), d = q.shape[-1]: the size of one head's query and key vectors"
)
_GQA_MISTAKES = (
    Mistake(
        f"you scaled by the square root of H·d, the width of all heads together; {_WRONG_SCALE}",
        _gqa_scaled(lambda q, k: q.shape[1] * q.shape[-1]),
    ),
    Mistake(
        "you scaled by the square root of d·H/G, the head size times the group size; the "
        "number of query heads sharing a key-value head does not change the length of the "
        f"vectors each dot product multiplies: {_WRONG_SCALE}",
        _gqa_scaled(lambda q, k: q.shape[-1] * (q.shape[1] // k.shape[1])),
    ),
    Mistake(
        f"you scaled by the square root of S, the number of keys; {_WRONG_SCALE}",
        _gqa_scaled(lambda q, k: k.shape[-2]),
    ),
    Mistake(
        "keys and values were expanded in two different ways (one tiled with `.repeat`, "
        "0, 1, 0, 1, the other in place, 0, 0, 1, 1): query head h then reads the keys of "
        "one group and the values of another; expand both the same way, in place",
        _gqa_mixed_repeats,
    ),
    Mistake(
        "keys and values were expanded in two different ways (one tiled with `.repeat`, "
        "0, 1, 0, 1, the other in place, 0, 0, 1, 1): query head h then reads the keys of "
        "one group and the values of another; expand both the same way, in place",
        _gqa_mixed_repeats_v,
    ),
    Mistake(
        "every head of a group got the same output: only the keys and values are shared, "
        "each query head keeps its own queries; attend with every one of the H query heads "
        "against its group's keys and values (do not average or merge the query heads)",
        _gqa_shared_queries,
    ),
    Mistake(
        "`k.reshape(..., d, S)` is not k transposed: a reshape keeps the numbers in their "
        "order and cuts them into new rows; the scores need the last two axes of k swapped",
        _gqa_reshaped_keys,
    ),
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
                "H/G times in place, next to itself",
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
            *_GQA_MISTAKES,
            Mistake(
                "every query head read key-value head 0 only: the other G - 1 key-value "
                "heads are never used; query head h belongs to key-value head h // (H/G), "
                "so each of the G heads is repeated H/G times",
                lambda q, k, v: _attend(q, k[:, :1], v[:, :1]),
            ),
            *(
                Mistake(
                    f"your repeat factor is a fixed number ({n}): it fits only H/G = {n}; "
                    "read it from the shapes, the number of query heads over the number "
                    "of key-value heads",
                    lambda q, k, v, n=n: _attend(
                        q, k.repeat_interleave(n, dim=1), v.repeat_interleave(n, dim=1)
                    ),
                )
                for n in (2, 3, 4)
            ),
        ),
        hint="print the shapes of q, k and v, and of the scores: which query heads should "
        "read which key-value head, and how does your code line them up? is anything "
        "besides the heads different from the attention of chapter 3? (the chapter's "
        'section "Fewer key-value heads: multi-query and grouped-query attention")',
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
        seed_cpu(seed)
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
        if self.bug == "direct split of q":
            q = self.W_q(x).reshape(q.shape)
        k, v = self._split(self.W_k(x), G), self._split(self.W_v(x), G)  # (B, G, S, d)
        if self.bug == "direct split of kv":
            k, v = self.W_k(x).reshape(k.shape), self.W_v(x).reshape(v.shape)
        if self.bug == "kv split head last":  # (B, T, d, G): the head index the fast one
            B, T, _ = x.shape
            k, v = (
                t.reshape(B, T, self.d_head, G).permute(0, 3, 1, 2)
                for t in (self.W_k(x), self.W_v(x))
            )
        if self.bug == "keys from W_q":  # copy-paste: the first G heads of W_q's output
            k = self._split(self.W_q(x)[..., : G * self.d_head], G)
        if self.bug == "always causal":
            T = x.shape[1]
            mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        if self.bug == "fixed repeat":
            k, v = k.repeat_interleave(2, dim=1), v.repeat_interleave(2, dim=1)
        elif self.bug == "tiled heads":  # heads 0, 1, 0, 1, ...
            k, v = k.repeat(1, H // G, 1, 1), v.repeat(1, H // G, 1, 1)
        else:  # heads 0, 0, 1, 1, ...
            k, v = k.repeat_interleave(H // G, dim=1), v.repeat_interleave(H // G, dim=1)
        scale = {
            "no scale": 1.0,
            "model scale": 1 / math.sqrt(x.shape[-1]),
            "kv head scale": 1 / math.sqrt(x.shape[-1] // G),  # d_model / n_kv_heads
            "kv width scale": 1 / math.sqrt(G * self.d_head),  # W_k's out_features
        }.get(self.bug, 1 / math.sqrt(self.d_head))
        scores = q @ k.transpose(-2, -1) * scale  # (B, H, T, S)
        if mask is not None and self.bug == "mask inverted, finite fill":  # True hidden
            scores, mask = scores.masked_fill(mask, -1e9), None
        if mask is not None and self.bug == "mask added":  # True adds 1, False adds 0
            scores, mask = scores + mask, None
        if mask is not None and self.bug == "mask unsqueezed":  # (T, S) -> (T, 1, S)
            scores, mask = scores.masked_fill(~mask.unsqueeze(1), -math.inf), None
        if self.bug == "weights detached":
            if mask is not None:
                scores = scores.masked_fill(~mask, -math.inf)
            weights = torch.softmax(scores, dim=-1).detach()
            B, T, D = x.shape
            return self.W_o((weights @ v).transpose(1, 2).reshape(B, T, D)), weights
        if self.bug == "scores as weights":
            if mask is not None:
                scores = scores.masked_fill(~mask, -math.inf)
            weights = torch.softmax(scores, dim=-1)
            B, T, D = x.shape
            return self.W_o((weights @ v).transpose(1, 2).reshape(B, T, D)), scores
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


def _kv_size_hint(message: str) -> str:
    """W_k or W_v built with another output size: say which size the learner gave."""
    found = re.search(
        r"size mismatch for (W_[kv])\.weight: copying a param with shape torch\.Size\(\[(\d+), "
        r"\d+\]\) from checkpoint, the shape in current model is torch\.Size\(\[(\d+), \d+\]\)",
        message,
    )
    if found is None:
        return _KV_SIZE
    return (
        f"your {found[1]} has {found[3]} output features where the layer needs {found[2]}: "
        "W_k and W_v project to the G key-value heads only, and each head keeps the size "
        "d = d_model / n_heads of a query head, so their out_features is n_kv_heads · d "
        "(not d_model, which is every query head's worth, nor n_kv_heads, one number a "
        "head); that is where the layer saves parameters and cache"
    )


def _bias_hint(message: str) -> str | None:
    """A layer whose projections have no bias: the only keys that do not match are biases."""
    keys = re.findall(r'"([\w.]+)"', message)
    if not keys or not all(k.endswith(".bias") for k in keys):
        return None
    return (
        "your projections have no bias (bias=False): the lib's GroupedQueryAttention, whose "
        "weights the checker copies into yours, uses nn.Linear with its default bias"
    )


def _kv_head_size_hint(message: str) -> str | None:
    """q @ kᵀ whose inner sizes differ because k was split into too many heads."""
    found = re.search(r"to be: \[(\d+), (\d+)\] but got: \[(\d+), (\d+)\]", message)
    if found is None or found[1] != found[3]:
        return None
    want, got = int(found[2]), int(found[4])
    if not got < want or want % got:
        return None
    return (
        f"your keys have {got} features per head where the queries have {want}: W_k's and "
        "W_v's output holds G heads of d = d_model / n_heads features each; split it into "
        "n_kv_heads heads (not n_heads, which cuts it into smaller pieces), then repeat "
        "each head to line up with the query heads"
    )


def _view_head_size_hint(message: str) -> str | None:
    """A 4-D view of a projection whose heads are larger than what the projection holds."""
    found = re.search(
        r"shape '\[(\d+), (\d+), (\d+), (\d+)\]' is invalid for input of size (\d+)", message
    )
    if found is None:
        return None
    b, t, heads, size, total = (int(found[i]) for i in range(1, 6))
    if total % (b * t) or (total // (b * t)) % heads:
        return None
    features = total // (b * t)
    if size <= features // heads:
        return None
    return (
        f"your view cuts {features} features per token into {heads} heads of {size}: "
        f"{heads} heads of that projection hold {features // heads} features each; every "
        "head, a query head or a key-value head, has the size d = d_model / n_heads "
        "(d_model / n_kv_heads is larger), and a key-value projection holds n_kv_heads "
        "such heads"
    )


def _module_heads_hint(message: str, line: str = "") -> str | None:
    """A product whose dim 1 does not line up: heads not moved to dim 1, or not repeated
    there; named by the product's right operand in the learner's line (k in q kᵀ, v in
    weights @ v) where the line shows it."""
    found = re.search(r"tensor a \((\d+)\) must match the size of tensor b \((\d+)\)", message)
    if found is None:
        return None
    right = re.search(
        r"@\s*\(?\s*(?:self\.)?([A-Za-z_]\w*)|matmul\(\s*[^,]+,\s*(?:self\.)?(\w+)", line
    )
    name = (right[1] or right[2]) if right else ""
    if name.lower().startswith(("v", "value")):
        sides = "the weights and v", "v"
    elif name.lower().startswith(("k", "key")):
        sides = "q and k", "k"
    else:
        sides = "the two sides of this product", "k (in q kᵀ) and v (in weights @ v)"
    return (
        f"{sides[0]} do not line up on dim 1 (sizes {found[1]} and {found[2]}): the product "
        "needs (B, heads, T, ...) on both sides, the H query heads on dim 1, so each of "
        f"the G key-value heads must appear H/G times on dim 1 of {sides[1]}; without a "
        "repeat (k and v each need their own), or with one along another dim (which copies "
        "tokens instead of heads), G heads stay on dim 1; and after the split "
        "`view(B, T, heads, d)` the heads sit on dim 2 until two axes are swapped"
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
                "your layer hides the future keys even when no mask is given: with "
                "mask=None every query sees every key; apply only the mask you are given "
                "(the caller builds the causal one when it wants it)",
                _planted_gqa("always causal"),
            ),
            Mistake(
                "your `weights` are the scores before the softmax (they hold -inf where "
                "masked and do not sum to 1): return the softmax of the scores, the weights "
                "that multiply the values",
                _planted_gqa("scores as weights"),
            ),
            Mistake(
                "your repeat factor is a fixed number (2): it fits only n_heads / "
                "n_kv_heads = 2; compute it from the layer's sizes, n_heads // n_kv_heads",
                _planted_gqa("fixed repeat"),
            ),
            Mistake(
                "query head h used key-value head h % G (.repeat tiles the heads: 0, 1, 0, "
                "1, ...); head h belongs to group h // (H / G): repeat each key-value head "
                "H/G times in place, next to itself, along the head axis",
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
                "you hid the keys where the mask is True; True means may attend: the keys "
                "to hide are those where it is False",
                _planted_gqa("mask inverted"),
            ),
            Mistake(
                "you hid the keys where the mask is True (with a large negative number in "
                "place of -inf); True means may attend: the keys to hide are those where it "
                "is False",
                _planted_gqa("mask inverted, finite fill"),
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
                "you scaled the scores by √(d_model / n_kv_heads), a head size computed from "
                "the key-value heads: every head, query or key-value, has d = d_model / "
                "n_heads features, and the scale is 1/√d",
                _planted_gqa("kv head scale"),
            ),
            Mistake(
                "you scaled the scores by the square root of n_kv_heads · d, the width of "
                "W_k's output: the scale is 1/√d, d = d_model / n_heads the size of one "
                "head's query and key vectors",
                _planted_gqa("kv width scale"),
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
                "you split the key-value heads with one view/reshape to (B, G, T, d): W_k(x) "
                "is (B, T, G·d), token by token, so that view cuts the features of different "
                "tokens into one head (every shape is right, the values are not); view as "
                "(B, T, G, d) first, then swap the token and head axes, as for the queries",
                _planted_gqa("direct split of kv"),
            ),
            Mistake(
                "you split the key-value features as (B, T, d, G), the head index last: W_k(x) "
                "holds each token's G heads one after another, d features each, so the head "
                "index is the slower of the two (every shape is right, the values are not); "
                "the head axis comes before the feature axis in the view, as for the queries",
                _planted_gqa("kv split head last"),
            ),
            Mistake(
                "you split the query heads with one view/reshape to (B, H, T, d): that cuts "
                "the features of different tokens into one head; view as (B, T, H, d) first, "
                "then swap the token and head axes, as for the keys and values",
                _planted_gqa("direct split of q"),
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
            Mistake(
                "your keys come from W_q's output (its first G heads), not from W_k: the "
                "keys are the projection self.W_k(x), split into the G key-value heads",
                _planted_gqa("keys from W_q"),
            ),
            Mistake(
                "you added the boolean mask to the scores: True adds 1 to the visible "
                "scores and False adds 0, so nothing is hidden; fill the scores where the "
                "mask is False with -inf (masked_fill) instead of adding it",
                _planted_gqa("mask added"),
            ),
            Mistake(
                "the mask line fails, not the heads: mask.unsqueeze(1) turns the (T, S) "
                "mask into (T, 1, S), whose first axis then lines up with the heads of the "
                "(B, H, T, S) scores; a (T, S) mask broadcasts over batch and heads as it "
                "is, and a (B, 1, 1, S) one already has its axes",
                _planted_gqa("mask unsqueezed"),
            ),
            Mistake(
                "out and weights are right but no gradient flows back through the weights: "
                "the .detach() on them cuts the graph, so W_q and W_k (and x through them) "
                "get no gradient from the softmax; keep the weights in the graph",
                _planted_gqa("weights detached"),
            ),
        ),
        error_hints=(
            ("key(s) in state_dict", _bias_hint),
            ("is invalid for input of size", _view_head_size_hint),
            ("non-singleton dimension 1", _module_heads_hint),
            ("Expected size for first two dimensions of batch2", _kv_head_size_hint),
            ("size mismatch for W_k", _kv_size_hint),
            ("size mismatch for W_v", _kv_size_hint),
            (
                "size mismatch for W_q",
                "W_q keeps all H query heads, H·d = d_model features in and out, the "
                "size of a multi-head layer's; only W_k and W_v shrink to n_kv_heads * "
                "d_head",
            ),
            (
                "size mismatch for W_o",
                "W_o mixes the H concatenated heads back: H·d = d_model features in, "
                "d_model out (the query heads, not the n_kv_heads key-value heads)",
            ),
            (
                "key(s) in state_dict",
                "name the four projections self.W_q, self.W_k, self.W_v and self.W_o "
                "(nn.Linear, with bias), as the lib's GroupedQueryAttention does: the "
                "checker copies its weights into yours by these names",
            ),
        ),
        hint="follow one case through your forward, printing each tensor's shape: which "
        "step's output first differs from what the lib's GroupedQueryAttention computes "
        "(the heads, their grouping, the mask, the merge)? Compare that step with the "
        'chapter\'s section "Fewer key-value heads: multi-query and grouped-query attention"',
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
            (
                24.0,
                "a factor is missing: either you cached the keys or the values alone (the "
                "cache holds both), or you counted numbers, not bytes (a float16 number is "
                "2 bytes)",
            ),
            (
                240.0,
                "that counts 20 heads, the 16 query heads with the 4 key-value heads: only "
                "keys and values are cached, so only the 4 key-value heads count",
            ),
            (
                0.75,
                "you left out the head size: each cached key and value is a vector of "
                "d_head numbers, not one number",
            ),
            (
                72.0,
                "that has a factor 3 (queries, keys and values): the queries are not "
                "cached, only keys and values (the factor 2)",
            ),
            (
                50331648 / (1024 * 1000),
                "that divides by 1024·1000: a MiB is 1024·1024 = 2**20 bytes",
            ),
            (96.0, "float16 is 2 bytes per number, not 4"),
            (
                384.0,
                "that counts bits, not bytes (a float16 number is 16 bits, 2 bytes), or "
                "else the 16 query heads with 4-byte numbers",
            ),
            (
                50331648.0,
                "that is the size in bytes; the question asks for MiB, 1 MiB = 2**20 bytes",
            ),
            (0.046875, "that is the size in GiB (2**30 bytes); the question asks for MiB"),
            (
                2 * 24 * 4 * 64 * 2 / 2**20,
                "that is the cache of one token (its key and value in every layer): the "
                "cache holds them for each of the 2048 tokens of the context",
            ),
            (
                12.0,
                "that is a quarter of the cache, and two mistakes give it: either one "
                "key-value head where the model has 4 (the heads are shared among groups of "
                "queries, but there are 4 groups), or two factors of 2 left out, keys "
                "alone without the values and numbers counted instead of bytes",
            ),
            (
                50.331648,
                "that is the size in MB (10**6 bytes); the question asks for MiB, 1 MiB = "
                "2**20 bytes",
            ),
            (2.0, "that is the cache of one layer: the model has 24 layers, each with its own"),
            (49152.0, "that is the size in KiB (2**10 bytes): 1 MiB is 2**20 bytes"),
            (
                768.0,
                "that stores d_model = 16 · 64 = 1024 numbers per key-value head and token: "
                "each key-value head stores one key and one value of the head size, 64 "
                "numbers each",
            ),
        ),
        hint="write down what one token leaves in the cache of one layer (which heads, which "
        "vectors, how long each is, how many bytes a number takes), then how many layers and "
        "tokens there are (the chapter's section \"The KV cache: generate without "
        'recomputing")',
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
                "28 fits two counts: either you counted the tiles below the diagonal and "
                "left out the tiles on the diagonal (partly visible, so computed too), or you "
                "counted the tiles skipped, those above the diagonal; the question asks for "
                "the tiles computed",
            ),
            (64, "tiles above the diagonal see only future keys: they are skipped"),
            (
                29,
                "you counted the diagonal as one tile: it is a line of tiles, one in every "
                "row of tiles, each partly visible and computed",
            ),
            (
                8,
                "the diagonal tiles are computed, but so is every tile below the diagonal: "
                "every query there sees every key, all of them in its past",
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
            (
                35,
                "one short: count the tiles row of tiles by row of tiles again (query tile i "
                "computes the key tiles 0 to i, both ends included)",
            ),
            (
                37,
                "one too many: count the tiles row of tiles by row of tiles again (query tile i "
                "computes the key tiles 0 to i, both ends included)",
            ),
            (
                36.5,
                "a tile is computed whole or skipped whole, never half: count whole tiles, "
                "those on the diagonal and those below it",
            ),
            (
                72,
                "that counts the diagonal and the tiles below it twice: count each computed "
                "tile once, those on the diagonal and those below it",
            ),
            (
                45,
                "that is 9·10/2, a grid of 9 x 9 tiles: 1024 / 128 = 8 tiles per side",
            ),
            (
                36 / 64,
                "that is a fraction of the tiles: the question asks for the number of tiles "
                "computed, a whole number",
            ),
            (
                524800,
                "that counts the (query, key) pairs a query may see, 1024·1025/2; the question "
                "asks for tiles of 128 × 128",
            ),
            (
                44,
                "that counts the 8 diagonal tiles twice (on their own, and again with the "
                "tiles below them): each computed tile counts once",
            ),
            (
                1024 * 1025 / 2 / 128**2,
                "that is the number of visible (query, key) pairs divided by a tile's area, "
                "a count of pairs, not of tiles: a tile holding even one visible pair is "
                "computed whole, so count whole tiles",
            ),
        ),
        hint="which tiles hold at least one (query, key) pair a query may see? A tile is "
        "skipped only when every key in it comes after every query in it (the chapter's "
        'section "Tiled attention: never holding the weights")',
    )
)


def check_causal_tiles(answer: Any) -> CheckResult:
    """Check the predicted number of tiles a causal 8 x 8 tile grid computes.

    Taught in: chapters/08_scale.ipynb (exercise in exercises/08_scale.ipynb)
    """
    return CAUSAL_TILES.check(answer)


summary = GRADERS.summary
"""``summary()``: the score table of every chapter 8 exercise, checked or not."""
