"""Graders for chapter 6's exercises: masks, a masked softmax, conventions, a causality test.

Each grader compares the learner's function with the attnlab reference on seeded cases and
knows the planted mistakes beginners make (see :mod:`attnlab.grading.pipeline`). The two
mask converters are graded by PyTorch itself, not against attnlab's converters: the
learner's mask goes into ``nn.MultiheadAttention`` (``key_padding_mask``) or
``F.scaled_dot_product_attention`` (a boolean mask), and the attention PyTorch computes
with it must be the attention the original mask means (through the adapter of
:mod:`attnlab.grading.modules`).

Taught in: exercises/06_masking.ipynb
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ..mechanism.attention import scaled_dot_product_attention
from ..mechanism.masking import causal_mask, padding_mask
from ..mechanism.similarity import softmax
from .forensics import call_quietly
from .modules import adapt, check_function
from .pipeline import Grader
from .questions import Question
from .registry import ChapterGraders
from .results import CheckResult, record
from .specs import AnswerProblem, Case, Mistake, Property
from .status import EXCEPTION, WRONG_TYPE, WRONG_VALUES

__all__ = [
    "GRADERS",
    "check_blind_row",
    "check_causal_mask",
    "check_fill_leak",
    "check_from_hf_attention_mask",
    "check_future_change",
    "check_masked_softmax",
    "check_padding_mask",
    "check_to_key_padding_mask",
    "summary",
]

GRADERS = ChapterGraders(__name__, mutants_reviewed=True)
"""Chapter 6's exercises, in the order of the notebook."""


def _rng() -> np.random.Generator:
    return np.random.default_rng(6)


# --- causal_mask ----------------------------------------------------------------------------


def _first_only(T: int) -> np.ndarray:
    """A (T, T) mask True at (0, 0) only (the special case that hides 6.1's off-by-one)."""
    first = np.zeros((T, T), dtype=bool)
    first[0, 0] = True
    return first


CAUSAL_MASK = GRADERS.add(
    Grader(
        name="causal_mask",
        signature="causal_mask(T) -> (T, T) boolean, True = may attend",
        reference=lambda T: causal_mask(T),
        # T = 4 first: a failing case big enough to show the pattern (a 1 x 1 mask shows
        # almost nothing, not even whether 0 and -inf were returned for True and False)
        cases=tuple(Case(f"T = {T}", {"T": T}) for T in (4, 1, 2, 7)),
        mistakes=(
            Mistake(
                "your mask is upper-triangular: query i sees the keys AFTER it (the future). "
                "Query i may see keys 0 .. i, the other triangle (the diagonal included)",
                lambda T: np.triu(np.ones((T, T), dtype=bool)),
            ),
            Mistake(
                "off by one: the diagonal is False, so a query cannot see its own token. "
                "Query i sees keys 0 .. i inclusive: which diagonal offset keeps the main "
                "diagonal?",
                lambda T: np.tril(np.ones((T, T), dtype=bool), k=-1),
            ),
            Mistake(
                "your row 0 is all False: query 0 sees nothing, not even its own token (a "
                "loop over the rows that starts at 1?). Every query sees itself and the keys "
                "before it, query 0 included",
                lambda T: np.tril(np.ones((T, T), dtype=bool)) & (np.arange(T) >= 1)[:, None],
            ),
            Mistake(
                "off by one, hidden by a special case: your diagonal is False from row 1 on, "
                "True only at (0, 0). Every query sees its own token, not only the first: "
                "key i is visible to query i for every i, with no exception for row 0",
                lambda T: np.tril(np.ones((T, T), dtype=bool), k=-1) | _first_only(T),
            ),
            Mistake(
                "off by one: query i also sees key i + 1, the next token (the answer it must "
                "predict): the triangle stops at the main diagonal, key i",
                lambda T: np.tril(np.ones((T, T), dtype=bool), k=1),
            ),
            Mistake(
                "the mask is inverted: True must mean 'may attend' (the past and the "
                "token itself), False the future",
                lambda T: ~np.tril(np.ones((T, T), dtype=bool)),
            ),
            Mistake(
                "every entry is True: that is no mask at all; hide the keys after the query",
                lambda T: np.ones((T, T), dtype=bool),
            ),
            Mistake(
                "only the diagonal is True: query i sees its own token and nothing else. "
                "A causal query sees itself and the whole past, keys 0 .. i",
                lambda T: np.eye(T, dtype=bool),
            ),
        ),
        equivalent=(
            (
                "library: np.ones in return np.tril(np.ones((T, T), dtype=bool), k=0) -> "
                "torch.ones",
                "np.tril turns the torch tensor of ones into the same NumPy array",
            ),
        ),
        hint="write the mask for T = 3 by hand, one row per query: which keys may each query "
        "see, and is its own token one of them? The chapter's section \"Causality: no "
        'peeking at the future" draws it',
    )
)


def check_causal_mask(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(T)``: the ``(T, T)`` boolean causal mask, ``mask[i, j] = j <= i``.

    Taught in: chapters/06_masking.ipynb (exercise in exercises/06_masking.ipynb)
    """
    return CAUSAL_MASK.check(fn)


# --- padding_mask ---------------------------------------------------------------------------


def _pad_reference(lengths: Any, max_len: int) -> Any:
    return padding_mask(lengths=lengths, max_len=max_len)


def _positions_below(lengths: np.ndarray, max_len: int, *, inclusive: bool = False) -> Any:
    pos = np.arange(max_len)[None, :]  # (1, S)
    lens = lengths[:, None]  # (B, 1)
    return (pos <= lens) if inclusive else (pos < lens)  # (B, S)


PADDING_MASK = GRADERS.add(
    Grader(
        name="padding_mask",
        signature="padding_mask(lengths, max_len) with lengths: (B,) ints -> (B, 1, max_len) "
        "boolean, True = real token",
        reference=_pad_reference,
        # The first case has B != 1, so that a wrong shape's message names each axis once
        # (with B = 1, the axis of size 1 would read as B too).
        cases=(
            Case("three sequences", {"lengths": np.array([4, 2, 1]), "max_len": 4}),
            Case("one sequence", {"lengths": np.array([3]), "max_len": 5}),
            Case("padding beyond the longest", {"lengths": np.array([2, 3]), "max_len": 6}),
            Case("an empty sequence", {"lengths": np.array([0, 2]), "max_len": 3}),
        ),
        mistakes=(
            Mistake(
                "you returned (B, max_len): add the query axis (an axis of size 1) between "
                "the batch and the keys, so that the mask broadcasts over the queries of "
                "(B, T, S) scores",
                lambda lengths, max_len: _positions_below(lengths, max_len),
            ),
            Mistake(
                "off by one: position j is a real token when j < length (positions start at "
                "0), not j <= length",
                lambda lengths, max_len: _positions_below(lengths, max_len, inclusive=True)[
                    :, None, :
                ],
            ),
            Mistake(
                "off by one: each sequence gets one real token too few, its last real token "
                "is marked as padding. A sequence of length n has its real tokens at "
                "positions 0 .. n - 1, n of them: compare the positions with the length "
                "itself",
                lambda lengths, max_len: _positions_below(lengths - 1, max_len)[:, None, :],
            ),
            Mistake(
                "every sequence is cut at the first sequence's length: each row of the mask "
                "needs its own length, the one of its sequence (one comparison per "
                "sequence, not one bound for all)",
                lambda lengths, max_len: _positions_below(
                    np.full_like(lengths, lengths[0]), max_len
                )[:, None, :],
            ),
            Mistake(
                "you built a (B, max_len, max_len) query-by-key mask, the padded queries "
                "hidden too: a padding mask hides keys only, (B, 1, max_len), and its axis of "
                "size 1 broadcasts over every query (a padded query keeps its keys; its "
                "output is ignored later)",
                lambda lengths, max_len: (
                    _positions_below(lengths, max_len)[:, :, None]
                    & _positions_below(lengths, max_len)[:, None, :]
                ),
            ),
            Mistake(
                "your real positions run 1 .. length: position 0 is marked as padding and "
                "position `length` as a real token. Positions are numbered from 0: a "
                "sequence of length n has its real tokens at positions 0 .. n - 1",
                lambda lengths, max_len: (
                    _positions_below(lengths, max_len, inclusive=True)
                    & (np.arange(max_len) >= 1)[None, :]
                )[:, None, :],
            ),
            Mistake(
                "your mask is True at the positions after the length (j > length): True must "
                "mark the real tokens, the positions before the length, and False the padding",
                lambda lengths, max_len: (
                    ~_positions_below(lengths, max_len, inclusive=True)[:, None, :]
                ),
            ),
            Mistake(
                "the mask is inverted: True must mark the real tokens (may attend), False "
                "the padding",
                lambda lengths, max_len: ~_positions_below(lengths, max_len)[:, None, :],
            ),
            Mistake(
                "you padded to the longest length, not to max_len: the batch may be padded "
                "further, so the positions you compare run over all max_len slots, the "
                "padding beyond the longest sequence included",
                lambda lengths, max_len: _positions_below(lengths, int(lengths.max()))[:, None],
            ),
            Mistake(
                "np.arange(max_len), shape (max_len,), met lengths, shape (B,), entry by "
                "entry: to compare every position with every length, give lengths its own "
                "axis, lengths[:, None] of shape (B, 1), so that the comparison is "
                "(B, max_len)",
                lambda lengths, max_len: (np.arange(max_len) < lengths)[:, None, :],
            ),
            Mistake(
                "your mask is (max_len, 1, B): the positions went on the first axis (a "
                "column of positions) and the lengths on the last (a row of lengths), so "
                "each sequence is a column instead of a row. The batch comes first: compare "
                "a column of lengths, one per sequence, with a row of positions, then add "
                "the query axis between them",
                lambda lengths, max_len: _positions_below(lengths, max_len).T[:, None, :],
            ),
            Mistake(
                "your real tokens sit at the end of each row (left padding): this course "
                "pads on the right, a sequence of length n has its real tokens at positions "
                "0 .. n - 1 and its padding after them",
                lambda lengths, max_len: _positions_below(lengths, max_len)[:, None, ::-1],
            ),
            Mistake(
                "your mask is (1, B, S): the axes are in another order than (B, 1, S); the "
                "axis of size 1 (the queries) goes between the batch and the keys",
                lambda lengths, max_len: _positions_below(lengths, max_len)[None],
            ),
            Mistake(
                "your mask is (B, max_len, 1): the new axis went last, after the keys, so "
                "the positions now stand on the queries' axis; the axis of size 1 (the "
                "queries) goes between the batch and the keys",
                lambda lengths, max_len: _positions_below(lengths, max_len)[:, :, None],
            ),
            Mistake(
                "your comparison gives (max_len, B), positions down and sequences across, "
                "and the reshape to (B, 1, max_len) re-reads its entries in order: reshape "
                "never swaps axes, so each row mixes several sequences. Build the "
                "comparison with the sequences on the first axis (a (B, 1) column of lengths "
                "against the positions), or swap the axes before reshaping",
                lambda lengths, max_len: (
                    _positions_below(lengths, max_len).T.copy().reshape(len(lengths), 1, max_len)
                ),
            ),
            Mistake(
                "your mask is (B, max_len, max_len), the key mask repeated for as many "
                "queries as keys: the exercise asks for the key mask itself, (B, 1, max_len); "
                "its axis of size 1 broadcasts over any number of queries when it meets the "
                "scores, so do not expand it",
                lambda lengths, max_len: np.broadcast_to(
                    _positions_below(lengths, max_len)[:, None, :],
                    (len(lengths), max_len, max_len),
                ),
            ),
        ),
        hint="for one sequence of length 3 padded to 5, which positions are real? Then do "
        "all sequences at once, and give the mask the axis the (B, T, S) scores need. The "
        'chapter\'s section "Padding: the same sentence, different outputs" builds it',
    )
)


def check_padding_mask(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(lengths, max_len)``: the ``(B, 1, max_len)`` key mask of a padded batch.

    Taught in: chapters/06_masking.ipynb (exercise in exercises/06_masking.ipynb)
    """
    return PADDING_MASK.check(fn)


# --- masked_softmax -------------------------------------------------------------------------


def _softmax_rows(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - np.max(z, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def _zero_after(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return _softmax_rows(scores) * mask


def _renormalised_after(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    w = _softmax_rows(scores) * mask
    with np.errstate(invalid="ignore", divide="ignore"):
        return w / np.sum(w, axis=-1, keepdims=True)


def _max_with_masked(scores: np.ndarray, mask: np.ndarray, *, guard: str) -> np.ndarray:
    """Planted: each row's max taken over all its scores, the masked ones included, then
    exp, masked, renormalised; ``guard`` says which rows come out as 0 instead of 0/0:
    those whose sum is 0 (``"total"``) or those with no visible key (``"empty"``)."""
    e = np.exp(scores - np.max(scores, axis=-1, keepdims=True)) * mask
    total = np.sum(e, axis=-1, keepdims=True)
    if guard == "total":
        return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(np.any(mask, axis=-1, keepdims=True), e / total, 0.0)


def _no_max_empty_zeroed(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Planted: -inf fill and empty rows zeroed, but e^scores with no max subtracted."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        e = np.where(mask, np.exp(scores), 0.0)
        w = e / np.sum(e, axis=-1, keepdims=True)
    return np.where(np.any(mask, axis=-1, keepdims=True), w, 0.0)


def _softmax_along(scores: np.ndarray, mask: np.ndarray, axis: int) -> np.ndarray:
    """Planted: the whole softmax (max and sum) along another axis than the keys', the
    rows with no visible key zeroed."""
    empty = ~np.any(mask, axis=-1, keepdims=True)
    z = np.where(empty, 0.0, np.where(mask, scores, -np.inf))
    with np.errstate(invalid="ignore", divide="ignore"):
        e = np.exp(z - np.max(z, axis=axis, keepdims=True))
        return np.where(empty, 0.0, e / np.sum(e, axis=axis, keepdims=True))


def _empty_along_queries(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Planted: the test for an empty row along the queries (axis -2): a key no query sees
    keeps a score of 0 and stays in the sum; a row left all -inf (0/0) zeroed."""
    mask = np.broadcast_to(mask, scores.shape)
    empty = ~np.any(mask, axis=-2, keepdims=True)
    z = np.where(empty, 0.0, np.where(mask, scores, -np.inf))
    with np.errstate(invalid="ignore", divide="ignore"):
        e = np.exp(z - np.max(z, axis=-1, keepdims=True))
        total = np.sum(e, axis=-1, keepdims=True)
        return np.where(empty | ~np.isfinite(total), 0.0, e / total)


def _fill(scores: np.ndarray, mask: np.ndarray, fill: float) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return _softmax_rows(np.where(mask, scores, fill))


def _added(scores: np.ndarray, mask: np.ndarray, fill: float) -> np.ndarray:
    return _softmax_rows(scores + np.where(mask, 0.0, fill))


def _fill_zeroed(scores: np.ndarray, mask: np.ndarray, fill: float) -> np.ndarray:
    """Planted: a finite fill, and the rows with no visible key set to 0."""
    visible = np.any(mask, axis=-1, keepdims=True)
    return np.where(visible, _softmax_rows(np.where(mask, scores, fill)), 0.0)


def _added_zeroed(scores: np.ndarray, mask: np.ndarray, fill: float) -> np.ndarray:
    """Planted: a finite fill added to the masked scores, the rows with no visible key 0."""
    visible = np.any(mask, axis=-1, keepdims=True)
    return np.where(visible, _added(scores, mask, fill), 0.0)


_FILL_TEXT = {-1e4: "-1e4", -1e9: "-1e9"}
_BELOW_FILL = {-1e4: "-20000", -1e9: "-4e10"}
"""The visible scores of the cases that a replacing fill is not below."""
_ABOVE_FILL = {-1e4: "10000", -1e9: "4e10"}
"""The masked scores of the cases that an added fill does not bring down."""


def _replaced_text(fill: float) -> str:
    return (
        # "such as": a smaller finite fill (-50) gives the same weights on these cases
        f"a finite fill (such as {_FILL_TEXT[fill]}) is not always below the visible scores: "
        f"in a row whose visible scores are {_BELOW_FILL[fill]}, the masked key's fill is "
        "the largest and takes the weight. Replace masked scores by -inf (and treat the rows with no "
        "visible key apart)"
    )


def _added_text(fill: float) -> str:
    return (
        f"you added {_FILL_TEXT[fill]} to the masked scores: a masked score of "
        f"{_ABOVE_FILL[fill]} "
        f"becomes {float(_ABOVE_FILL[fill]) + fill:g} and competes again (a large enough "
        "masked score beats any finite fill). A masked score must be replaced by -inf, "
        "not shifted"
    )


def _row_stat_softmax(
    scores: np.ndarray, mask: np.ndarray, *, shift: str = "max", divide: str = "sum"
) -> np.ndarray:
    """6.3 with the row's min subtracted, or its largest exponential as the divisor."""
    empty = ~np.any(mask, axis=-1, keepdims=True)
    s = np.where(empty, 0.0, np.where(mask, scores, -np.inf))
    with np.errstate(all="ignore"):
        e = np.exp(s - getattr(s, shift)(axis=-1, keepdims=True))
        return np.where(empty, 0.0, e / getattr(e, divide)(axis=-1, keepdims=True))


def _global_max(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Planted: -inf fill and empty rows zeroed, but one max for the whole array."""
    empty = ~np.any(mask, axis=-1, keepdims=True)
    z = np.where(empty, 0.0, np.where(mask, scores, -np.inf))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        e = np.exp(z - z.max())
        return np.where(empty, 0.0, e / e.sum(axis=-1, keepdims=True))


def _no_max(scores: np.ndarray, mask: np.ndarray, *, guarded: bool) -> np.ndarray:
    """Planted: e^scores with no max subtracted (overflows for scores above 709); with
    ``guarded``, a row whose sum is 0 is left at 0."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        e = np.where(mask, np.exp(scores), 0.0)
        total = np.sum(e, axis=-1, keepdims=True)
        if guarded:
            return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
        return e / total


def _summed_along(scores: np.ndarray, mask: np.ndarray, axis: int) -> np.ndarray:
    """Planted: the exponentials divided by their sum along another axis than the keys'
    (NaN from the rows with no visible key turned into 0 at the end)."""
    z = np.where(mask, scores, -np.inf)
    with np.errstate(invalid="ignore", divide="ignore"):
        e = np.exp(z - np.max(z, axis=-1, keepdims=True))
        return np.nan_to_num(e / np.sum(e, axis=axis, keepdims=True))


def _one_max(scores: np.ndarray, mask: np.ndarray, *, of_scores: bool) -> np.ndarray:
    """Planted: one max for the whole array (of the scores, or of the masked scores)."""
    z = np.where(mask, scores, -np.inf)
    with np.errstate(invalid="ignore", divide="ignore"):
        e = np.exp(z - (np.max(scores) if of_scores else np.max(z)))
        total = np.sum(e, axis=-1, keepdims=True)
        if of_scores:
            return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
        return e / total


def _index(where: np.ndarray) -> int | tuple[int, ...]:
    """An index as the learner would write it: ``1`` for one axis, ``(0, 2)`` for more."""
    found = tuple(int(i) for i in where)
    return found[0] if len(found) == 1 else found


def _blind_rows_zero(outputs: Any, case: Case) -> str | None:
    """Property: a row with no visible key is all zeros."""
    w = np.asarray(outputs["output"], dtype=float)
    mask = np.broadcast_to(np.asarray(case.inputs["mask"]), w.shape)
    blind = ~mask.any(axis=-1)  # (..., T)
    wrong = blind & np.any(w != 0, axis=-1)
    if not wrong.any():
        return None
    row = _index(np.argwhere(wrong)[0])
    got = np.round(w[row], 3).tolist()
    return (
        f"row {row} has no visible key, and your weights there are {got}: such a row must "
        "come out all zeros (not uniform, not NaN). Find the rows whose mask holds no True "
        "along the keys and give them zeros, apart from the softmax"
    )


def _hidden_weight(outputs: Any, case: Case) -> str | None:
    """Property: every masked key gets weight exactly 0."""
    w = np.asarray(outputs["output"])
    mask = np.broadcast_to(np.asarray(case.inputs["mask"]), w.shape)
    leaked = ~mask & np.isfinite(w) & (np.abs(w) > 1e-12)
    if not leaked.any():
        return None
    where = tuple(int(i) for i in np.argwhere(leaked)[0])
    return (
        f"a masked key gets weight {float(w[where]):.3g} (at index {where}): masked keys "
        "must get exactly 0, whatever the scores. Does the masked score still take part "
        "in the softmax? A finite fill, added to it or put in its place, is beaten by a "
        "masked score larger than the fill or by visible scores below it; -inf never is"
    )


def _rows_sum_to_one(outputs: Any, case: Case) -> str | None:
    """Property: every row with a visible key sums to 1 over the keys (the last axis)."""
    w = np.asarray(outputs["output"], dtype=float)
    mask = np.broadcast_to(np.asarray(case.inputs["mask"]), w.shape)
    if w.ndim < 2 or not np.all(np.isfinite(w)):
        return None
    seen = mask.any(axis=-1)  # (..., T): rows with a visible key
    sums = w.sum(axis=-1)
    wrong = seen & ~np.isclose(sums, 1.0, atol=1e-6)
    if not wrong.any():
        return None
    row = _index(np.argwhere(wrong)[0])
    said = f"row {row} of your weights sums to {float(sums[row]):.3g} over the keys, not 1"
    if sums[row] == 0:
        scores = np.broadcast_to(np.asarray(case.inputs["scores"], dtype=float), w.shape)
        visible = scores[row][mask[row]]
        if visible.size and visible.max() > 709:  # e^709.8 is float64's largest
            return (
                f"row {row} of your weights is all zeros, though it has visible keys: its "
                f"largest visible score is {visible.max():g}, and exp of a score above 709 "
                "overflows to inf; inf / inf is NaN (and a NaN turned into 0 is still wrong). "
                "Subtract each row's largest visible score before the exponential: that is "
                "what makes the softmax stable"
            )
        return (
            f"row {row} of your weights is all zeros, though it has visible keys: every "
            "visible exponential underflowed to 0, because something larger than all of "
            f"this row's visible scores (the largest is {visible.max():g}) entered the row's "
            "max: a masked key's score, or the 0 that multiplying the scores by the mask "
            "gives a masked key. Mask with -inf before the max, so that only visible "
            "scores take part"
        )
    columns = (w * mask).sum(axis=-2)  # (..., S): the sums down each column
    if np.allclose(columns[mask.any(axis=-2)], 1.0, atol=1e-6):
        return (
            f"{said}: your weights sum to 1 down each column instead, over the queries "
            "(axis -2). Each query's weights are a softmax over the keys, the last axis: "
            "the max and the sum of your softmax run along the wrong axis"
        )
    return (
        f"{said}: each query's weights are a softmax over its visible keys, so every row "
        "with a visible key sums to 1 along the last axis; check the axis (and keepdims) "
        "of your max and sum, and that only the masked keys left the sum"
    )


def _masked_softmax_cases() -> tuple[Case, ...]:
    rng = _rng()
    causal = causal_mask(4)
    blind = np.array([[True, False, True], [False, False, False], [True, True, True]])
    big = np.array([[0.0, 1.0, 1e4, 2.0], [1.5, 1e4, 0.0, -1.0]])  # masked keys score 1e4
    # e^800 overflows; a row far below another needs its own max; a visible row of -20000
    # is below a -1e4 fill, so the masked key (3) must still get 0.
    large = np.array(
        [[800.0, 801.0, 5.0, 799.0], [-2e4, -20001.0, 3.0, -19999.0], [0.5, -1.0, 2.0, 1.0]]
    )
    # "No masked score can leak, however large": a masked score of 4e10 beats an added
    # -1e9, and visible scores of -4e10 are below a -1e9 fill put in the masked scores' place.
    huge = np.array([[3.0, 4e10, -1.0, 2.0], [-4e10 - 1.0, -4e10, 5.0, -4e10 + 1.0]])
    return (
        Case(
            "one row", {"scores": rng.normal(size=(1, 5)), "mask": np.array([[1, 1, 0, 1, 0]]) > 0}
        ),
        Case("a causal mask", {"scores": 2 * rng.normal(size=(4, 4)), "mask": causal}),
        Case(
            "a batch with a padding mask",
            {"scores": rng.normal(size=(2, 3, 4)), "mask": padding_mask(lengths=[4, 2], max_len=4)},
        ),
        Case(
            "masked scores of 10000",
            {"scores": big, "mask": np.array([[1, 1, 0, 1], [1, 0, 1, 1]]) > 0},
        ),
        Case("a row with no visible key", {"scores": rng.normal(size=(3, 3)), "mask": blind}),
        Case(
            "visible scores of 800 and of -20000",
            {"scores": large, "mask": np.array([[1, 1, 0, 1]] * 3) > 0},
        ),
        Case(
            "a masked score of 4e10, visible scores of -4e10",
            {"scores": huge, "mask": np.array([[1, 0, 1, 1], [1, 1, 0, 1]]) > 0},
        ),
    )


MASKED_SOFTMAX = GRADERS.add(
    Grader(
        name="masked_softmax",
        signature="masked_softmax(scores, mask) with scores: (..., T, S), mask: boolean "
        "broadcastable to it -> weights (..., T, S)",
        reference=lambda scores, mask: softmax(scores, mask=mask),
        cases=_masked_softmax_cases(),
        mistakes=(
            Mistake(
                "a row with no visible key gave NaN: every score there is -inf and the "
                "softmax computes 0/0. Such rows must be all zeros: find the rows whose "
                "mask holds no True along the keys (the last axis) and set their weights "
                "to 0, apart from the softmax",
                lambda scores, mask: _fill(scores, mask, -np.inf),
            ),
            Mistake(
                "a row with no visible key got uniform weights: a finite fill (such as "
                "-1e9) makes all its scores equal. The rule is all-zero weights there: "
                "fill with -inf, and give the rows with no True along the keys zeros "
                "apart from the softmax",
                lambda scores, mask: _fill(scores, mask, -1e9),
            ),
            # finfo.min, and -inf with finite placeholder scores in the rows with no
            # visible key (to keep their softmax from NaN): the same weights everywhere.
            Mistake(
                "a row with no visible key got uniform weights: its scores all ended up "
                "equal (a finite fill such as finfo.min, or finite placeholder scores given "
                "to those rows to keep their softmax from NaN), and its weights were not set "
                "to 0 afterwards. The rule is all-zero weights there: after the softmax, "
                "overwrite the weights of the rows with no True along the keys with zeros",
                lambda scores, mask: _fill(scores, mask, float(np.finfo(np.float64).min)),
            ),
            Mistake(
                "you subtracted each row's minimum, not its maximum: with -inf on the masked "
                "keys the minimum is -inf, and -inf - (-inf) is NaN (in a row without one, "
                "the largest score overflows). The stable softmax subtracts the largest "
                "visible score, so that the largest exponential is exactly 1",
                lambda scores, mask: _row_stat_softmax(scores, mask, shift="min"),
            ),
            Mistake(
                "you divided by each row's largest exponential, not by their sum: the "
                "largest weight comes out exactly 1 and the rows sum to more than 1. A "
                "weight is its exponential's share of the row's total",
                lambda scores, mask: _row_stat_softmax(scores, mask, divide="max"),
            ),
            Mistake(
                "you subtracted one maximum for the whole array (a max with no axis): a row "
                "whose scores sit far below the largest score anywhere (the case with "
                "visible scores of -20000 beside rows of 800) underflows to all zeros, and "
                "0/0 is NaN. Each row needs its own maximum, taken along the keys (the last "
                "axis) and kept as an axis of size 1",
                lambda scores, mask: _global_max(scores, mask),
            ),
            *(
                Mistake(
                    _added_text(fill),
                    lambda scores, mask, fill=fill, made=made: made(scores, mask, fill),
                )
                for fill in (-1e4, -1e9)
                for made in (_added, _added_zeroed)
            ),
            Mistake(_replaced_text(-1e9), lambda scores, mask: _fill_zeroed(scores, mask, -1e9)),
            Mistake(
                "you took the softmax first and zeroed the masked weights afterwards: the "
                "rows no longer sum to 1 and the masked scores still sit in the denominator. "
                "Mask the scores (with -inf) BEFORE the softmax",
                _zero_after,
            ),
            Mistake(
                "you masked after the softmax and renormalised: right on paper, but when a "
                "masked score is huge the visible weights underflow to 0 and you divide 0 by "
                "0. Mask the scores (with -inf) BEFORE the softmax",
                _renormalised_after,
            ),
            *(
                Mistake(
                    "your row max includes the masked scores: a masked score of 10000 is "
                    "its row's max, so every visible key's exp underflows to 0 and the "
                    "row cannot be renormalised. Mask the scores (with -inf) before the "
                    "softmax, so that the max runs over the visible keys only",
                    lambda scores, mask, guard=guard: _max_with_masked(scores, mask, guard=guard),
                )
                for guard in ("total", "empty")
            ),
            Mistake(
                "your softmax overflows: e^800 is inf in float64 and inf/inf is NaN. "
                "Subtract each row's max from its scores before the exp (the masked ones "
                "are -inf and stay at 0)",
                _no_max_empty_zeroed,
            ),
            Mistake(
                "your test for an empty row uses all() where it needs any(): ~mask.all(...) "
                "marks every row that hides at least one key as 'empty' and zeroes it. A row "
                "is empty when NO key is visible: that is any(), negated, along the keys",
                lambda scores, mask: np.where(
                    np.all(mask, axis=-1, keepdims=True), _fill(scores, mask, -np.inf), 0.0
                ),
            ),
            Mistake(
                "your test for an empty row runs along the queries (axis -2), not the keys: "
                "it marks a key that every query hides (a masked column) as 'empty', so that "
                "key's scores become 0 instead of -inf and it stays in the denominator, while "
                "a query that sees no key is not found. A row (one query) is empty when its "
                "mask holds no True along the last axis, the keys",
                _empty_along_queries,
            ),
            Mistake(
                "every weight is lost: mask arithmetic with -inf gives 0 · (-inf) = NaN at "
                "each visible key too (`~mask * -inf` is NaN where the mask is True), so every "
                "row is NaN (or the zeros you put in its place). -inf cannot be selected by "
                "multiplying; replace the hidden scores by -inf, keeping the visible ones as "
                "they are (a selection, not a product)",
                lambda scores, mask: np.zeros(np.broadcast_shapes(scores.shape, mask.shape)),
            ),
            Mistake(
                "you multiplied the scores by the mask: a masked score becomes 0, not -inf, "
                "and e^0 = 1 still gets weight. Replace masked scores by -inf",
                lambda scores, mask: _softmax_rows(scores * mask),
            ),
            Mistake(
                "the mask is inverted: True means 'may attend'; hide the keys where the mask "
                "is False",
                lambda scores, mask: softmax(scores, mask=~mask),
            ),
            Mistake(_replaced_text(-1e4), lambda scores, mask: _fill_zeroed(scores, mask, -1e4)),
            *(
                Mistake(
                    "your softmax overflows: e^800 is inf in float64 and inf/inf is NaN. "
                    "Subtract each row's max from its scores before the exp (the masked ones "
                    "are -inf and stay at 0)",
                    lambda scores, mask, guarded=guarded: _no_max(scores, mask, guarded=guarded),
                )
                for guarded in (True, False)
            ),
            *(
                Mistake(
                    "you normalised along another axis than the keys' (the sum runs over "
                    "the queries or the batch): each row's weights, along the last axis, "
                    "must sum to 1",
                    lambda scores, mask, axis=axis: _summed_along(scores, mask, axis),
                )
                for axis in (0, -2)
            ),
            Mistake(
                "your softmax runs along the queries (axis -2): each query's weights are "
                "normalised over the keys, the last axis (max and sum with axis=-1)",
                lambda scores, mask: _softmax_along(scores, mask, -2),
            ),
            *(
                Mistake(
                    "you subtracted one max for the whole array: each row needs its own "
                    "(axis=-1, keepdims=True). A row far below the global max underflows to "
                    "all zeros (here the row of -20000)",
                    lambda scores, mask, of=of: _one_max(scores, mask, of_scores=of),
                )
                for of in (True, False)
            ),
        ),
        hint="follow one row through your code, then a row with no visible key, then the "
        "row of large scores: what does each masked key get, is the exp safe, what does "
        'an empty row give? The chapter\'s section "Mask before the softmax, with -∞" '
        "does each step",
        equivalent=(
            (
                "drop: z = np.where(visible, z, 0.0) -> (left out)",
                "the last line sets the rows with no visible key to 0 whatever they held: "
                "this line only keeps NaN (and NumPy's warning) out of them on the way",
            ),
            (
                "fill: -np.inf in z = np.where(mask, scores, -np.inf) -> -1.7976931348623157e+308",
                "a fill replaces the masked scores; the lowest float64 is below every "
                "visible score, so it gives them exactly 0 weight, as -inf does (the rows "
                "with no visible key are set to 0 by the last line)",
            ),
        ),
        properties=(
            Property(_blind_rows_zero),
            Property(_hidden_weight),
            Property(_rows_sum_to_one),
        ),
    )
)


def check_masked_softmax(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(scores, mask)``: softmax over the last axis with masked keys at weight 0.

    A row with no visible key must come out as all zeros, never NaN or uniform.

    Taught in: chapters/06_masking.ipynb (exercise in exercises/06_masking.ipynb)
    """
    result = MASKED_SOFTMAX.check(fn)
    if not result.passed:
        return result
    leak = _leak_below_tolerance(fn)
    return result if leak is None else record(leak)


def _leak_below_tolerance(fn: Callable[..., Any]) -> CheckResult | None:
    """A masked weight that is small but not 0 (a finite fill of -50, or of the row's min
    minus 20): within the values' tolerance, but the statement asks for exactly 0."""
    for case in MASKED_SOFTMAX.cases:
        try:
            returned, _ = call_quietly(fn, case)
            w = np.asarray(returned, dtype=float)
            mask = np.broadcast_to(np.asarray(case.inputs["mask"]), w.shape)
        except Exception:
            return None  # the check that passed ran the same code: nothing to add
        leaked = ~mask & (w != 0)
        if leaked.any():
            where = _index(np.argwhere(leaked)[0])
            largest = float(np.abs(w[leaked]).max())
            return CheckResult(
                name="masked_softmax",
                status=WRONG_VALUES,
                passed=False,
                message=f"a masked key gets weight {float(w[where]):.2g}, not exactly 0, at "
                f"index {where} on case {case.describe()}",
                diagnosis=f"your masked keys keep a little weight (up to {largest:.2g}): a "
                "finite fill only makes a masked key's exponential small, never 0, and the "
                "statement asks for exactly 0, whatever the scores. Only -inf (or setting "
                "the masked weights to 0 afterwards) gives exact zeros",
                diagnosed=True,
            )
    return None


# --- conventions: graded by PyTorch itself -------------------------------------------------
#
# A converter is right when PyTorch, given the converted mask, attends exactly as the
# original mask means. So these checks compare no masks: they run PyTorch's own attention
# with the learner's mask (nn.MultiheadAttention for key_padding_mask, True = ignore;
# F.scaled_dot_product_attention for a boolean mask, True = attend) and compare the weights
# it applies and its output with the same attention computed from the original mask's
# meaning by the course's rule (-inf on the hidden keys before the softmax). Any mask that
# PyTorch reads the same way passes, e.g. a float mask of 0 and -inf (PyTorch adds a float
# mask to the scores); a mask PyTorch refuses is reported with PyTorch's own message.
#
# No case has a query without a visible key (every sequence has a real token): there,
# nn.MultiheadAttention gives NaN (a softmax of -inf everywhere, on the path that returns
# the weights, used here), F.scaled_dot_product_attention zeros in recent releases (NaN in
# older ones), and the course's rule zeros. That is a convention about empty rows, not
# about masks, so the cases leave it out. A learner's inverted mask does empty rows (in
# a sequence without padding): its check fails whichever way PyTorch fills them.

_D_MODEL, _N_HEADS = 4, 2
_TORCH_OUTPUTS = ("torch weights", "torch output")
_TORCH_TOLERANCES = {"rtol": 1e-4, "atol": 1e-5}  # float32, as a model's default
"""PyTorch computes in float32, the dtype a learner's float mask (0 / -inf) gets by
default; the expected values are computed in float64, then rounded to float32."""


def _randn(g: torch.Generator, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=g)


def _mha(B: int, S: int) -> tuple[torch.nn.MultiheadAttention, torch.Tensor]:
    """A seeded float32 ``nn.MultiheadAttention`` (no dropout) and tokens ``x: (B, S, D)``."""
    with torch.random.fork_rng(devices=[]):  # its default init must not move the global seed
        layer = torch.nn.MultiheadAttention(_D_MODEL, _N_HEADS, dropout=0.0, batch_first=True)
    g = torch.Generator().manual_seed(600 + 10 * B + S)
    with torch.no_grad():
        for p in layer.parameters():  # random biases too: nothing hides behind a zero
            p.copy_(0.8 * _randn(g, *p.shape))
    # Training mode (dropout 0): PyTorch's general path, which returns the weights per head.
    return layer.train(), _randn(g, B, S, _D_MODEL)


def _qkv(B: int, S: int, T: int | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Seeded float32 queries ``(B, T, D)``, keys and values ``(B, S, D)``; T = S (self-
    attention) unless given (cross-attention)."""
    g = torch.Generator().manual_seed(700 + 10 * B + S + 1000 * (T or 0))
    return tuple(  # type: ignore[return-value]
        1.5 * _randn(g, B, n, _D_MODEL) for n in (S if T is None else T, S, S)
    )


def _course_weights(q: torch.Tensor, k: torch.Tensor, attend: torch.Tensor) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) with -inf where ``attend`` is False; a row with no visible
    key gets zero weights (the course's rule; the cases have none)."""
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    weights = torch.softmax(scores.masked_fill(~attend, float("-inf")), dim=-1)
    return weights.nan_to_num(0.0)


def _described(mask: Any) -> str:
    if isinstance(mask, torch.Tensor):
        return f"a {mask.dtype} tensor of shape {tuple(mask.shape)}"
    if isinstance(mask, np.ndarray):
        return f"a NumPy array of shape {mask.shape}"
    return f"a {type(mask).__name__}"


def _in_torch(who: str, mask: Any, attend: Callable[[Any], Any]) -> tuple[Any, Any]:
    """``attend(mask)`` run by PyTorch; a refusal is raised with PyTorch's message.

    A float mask of another float dtype (a float64 mask of 0 and -inf, as NumPy and the
    chapter's demo make it) is given in the model's float32: 0 and -inf are exact in both,
    and the statement accepts any float mask of 0 and -inf.
    """
    if mask is None:  # PyTorch would read None as "no mask"
        raise TypeError("your function returned None")
    if isinstance(mask, torch.Tensor) and mask.is_floating_point():
        mask = mask.float()
    try:
        with torch.no_grad():
            return attend(mask)
    except Exception as err:
        raise ValueError(f"{who} refused your mask ({_described(mask)}): {err}") from None


def _run_key_padding(fn: Callable[..., Any], mask: torch.Tensor) -> tuple[Any, Any]:
    """nn.MultiheadAttention on a padded batch, with ``key_padding_mask=fn(mask)``."""
    B, S = mask.shape[0], mask.shape[-1]  # before the call, as in _run_hf
    real = mask[:, 0, :].clone()
    converted = fn(mask)
    _refuse_nan_mask(converted)
    if isinstance(converted, torch.Tensor) and converted.is_floating_point():
        values = converted.detach()
        finite = torch.isfinite(values) & (values < 0)
        if bool(finite.any()) and values.shape == real.shape:
            on_real = bool((finite == real).all())
            raise AnswerProblem(
                WRONG_VALUES,
                "returned a float mask with a finite penalty "
                f"({float(values[finite].flatten()[0]):g}),",
                _PENALTY_ON_REAL
                if on_real
                else "a float key_padding_mask is ADDED to the scores, and a finite penalty "
                "only lowers a padded key's score: one whose score is larger than the "
                "penalty still takes weight (the chapter's finite-fill leak). Put -inf on "
                "the padding (0 elsewhere), or return booleans, True = padding",
            )
    layer, x = _mha(B, S)

    def attend(kpm: Any) -> tuple[Any, Any]:
        out, weights = layer(
            x, x, x, key_padding_mask=kpm, need_weights=True, average_attn_weights=False
        )
        return weights, out  # (B, H, T, S), (B, T, D)

    return _in_torch("nn.MultiheadAttention", converted, attend)


def _refuse_nan_mask(converted: Any) -> None:
    """A float mask holding NaN (0 × -inf, a 0/1 mask multiplied by -inf): said as such,
    before the NaN it gives the weights is read as a mask the wrong way round."""
    if not isinstance(converted, torch.Tensor) or not converted.is_floating_point():
        return
    nan = torch.isnan(converted.detach())
    if bool(nan.any()):
        raise AnswerProblem(
            WRONG_VALUES,
            f"returned a float mask with NaN in {int(nan.sum())} of its "
            f"{converted.numel()} entries,",
            "0 × (-inf) is NaN, not 0: multiplying a 0/1 mask by -inf puts NaN wherever it "
            "held 0, and a NaN added to a score makes that row's weights NaN. Put -inf on "
            "the hidden keys and 0 elsewhere without multiplying by -inf (a selection "
            "between the two values), or return booleans",
        )


_PENALTY_ON_REAL = (
    "your float mask puts its penalty on the real tokens: a float key_padding_mask is ADDED "
    "to the scores, and yours adds a large negative number where our mask is True (the "
    "real tokens) and 0 on the padding, so the layer attends to the padding only. The "
    "penalty belongs on the padding (our mask negated), and -inf, not a finite number; or "
    "return booleans, True = padding"
)


def _reference_key_padding(mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The same layer's attention where ``mask`` (``(B, 1, S)``, True = real token) says."""
    layer, x = _mha(mask.shape[0], mask.shape[-1])
    layer, x = layer.double(), x.double()
    B, T, D = x.shape
    with torch.no_grad():
        q, k, v = (x @ layer.in_proj_weight.T + layer.in_proj_bias).chunk(3, dim=-1)

        def heads(t: torch.Tensor) -> torch.Tensor:  # (B, T, D) -> (B, H, T, D / H)
            return t.reshape(B, T, _N_HEADS, D // _N_HEADS).transpose(1, 2)

        weights = _course_weights(heads(q), heads(k), mask[:, None])  # mask: (B, 1, 1, S)
        out = layer.out_proj((weights @ heads(v)).transpose(1, 2).reshape(B, T, D))
        return weights.float(), out.float()


def _key_padding(convert: Callable[..., Any]) -> Callable[..., Any]:
    return adapt(_run_key_padding, convert)


def _kpm_dims_hint(message: str) -> str | None:
    """nn.MultiheadAttention's refusal of a key_padding_mask's number of axes."""
    if "but found 1-D" in message:
        return (
            "your mask lost the batch axis: key_padding_mask is (B, S), one row per "
            "sequence. A bare squeeze() drops every axis of size 1 (the batch too when "
            "B = 1), and a view(-1) or flatten() merges the batch into one row; drop only "
            "the query axis, axis 1, and name it: a squeeze told which axis to drop "
            "leaves the batch alone"
        )
    found = re.search(r"of shape \((\d+), (\d+), (\d+)\)\)", message)
    if found is not None and found[2] != "1" and found[3] == "1":
        return (
            f"your mask is ({found[1]}, {found[2]}, 1) = (B, S, 1): a transpose (such as "
            ".mT or .transpose(-2, -1)) moved the keys into the middle and the query axis "
            "of size 1 to the end, and it is still 3-D. key_padding_mask is (B, S): do not "
            "transpose; drop the query axis, axis 1 of the (B, 1, S) mask you were given"
        )
    if "but found" in message:
        return (
            "you kept the query axis: key_padding_mask is (B, S), one row per sequence; "
            "drop the axis of size 1, axis 1"
        )
    return None


def _kpm_shape_hint(message: str) -> str | None:
    """nn.MultiheadAttention's refusal of a 2-D key_padding_mask of the wrong sizes."""
    found = re.search(
        r"of shape \((\d+), (\d+)\)\): Expected key_padded_mask\.shape\[(\d)\] to be (\d+)",
        message,
    )
    older = re.search(  # the same refusal, as older PyTorch releases word it
        r"key_padding_mask shape of \((\d+), (\d+)\), but got torch\.Size\(\[(\d+), (\d+)\]\)",
        message,
    )
    if found is not None:
        rows, columns, axis, want = (int(n) for n in found.groups())
    elif older is not None:
        b, s, rows, columns = (int(n) for n in older.groups())
        axis, want = (0, b) if rows != b else (1, s)
    else:
        return None
    if axis == 0 and columns == want:
        return (
            f"your mask is ({rows}, {columns}) = (S, B): the batch and key axes are swapped "
            "(a reshape to (S, -1), or a transpose?). key_padding_mask is (B, S), one row "
            "per sequence: keep the batch axis first and drop only the query axis"
        )
    which = "the batch size B" if axis == 0 else "the number of keys S"
    return (
        f"axis {axis} of your mask has size {(rows, columns)[axis]} where "
        f"nn.MultiheadAttention expects {want}, {which}: key_padding_mask is (B, S), one "
        "row per sequence and one column per key; check which axes you kept"
    )


def _kpm_cases() -> tuple[Case, ...]:
    return (
        Case("one padded sequence", {"mask": padding_mask(lengths=torch.tensor([2]), max_len=4)}),
        Case(
            "three sequences",
            {"mask": padding_mask(lengths=torch.tensor([5, 3, 1]), max_len=5)},
        ),
        Case("no padding", {"mask": padding_mask(lengths=torch.tensor([3, 3]), max_len=3)}),
    )


_DTYPE_HINT = (
    "dtype",
    "a float mask must have the dtype of the model (float32 here, PyTorch's default): "
    "PyTorch does not mix dtypes; or return booleans",
)


def _integer_mask_hint(message: str) -> str | None:
    """SDPA's refusal of a mask's dtype: integers (this hint) or another float (None)."""
    found = re.search(
        r"attn_mask\.dtype: ([\w ]*?(int|long|short|char|byte)\w*)", message, re.IGNORECASE
    )
    if found:
        return (
            f"your mask's dtype is {found[1]}, an integer type: "
            "F.scaled_dot_product_attention takes a bool mask (True = attend) or a float "
            "one that it adds to the scores, not integers (`.byte()`, `.int()` and `.long()` "
            "give integers); a comparison of the 0/1 entries gives booleans"
        )
    return None


_NONE_HINT = ("returned None", "did you forget `return`?")
_BOOL_SUBTRACTION_HINT = (
    "with a bool tensor is not supported",
    "PyTorch refuses arithmetic such as `1 - mask` on a bool tensor, so subtraction cannot "
    "flip True and False: a bool tensor is negated with a logical not (the `~` operator, "
    "or the tensor's `logical_not` method)",
)
_NUMPY_HINT = (
    "NumPy array",
    "return a torch tensor, as the mask you were given: PyTorch's attention takes tensors",
)
_LIST_HINT = (
    "not list",
    "you returned a Python list: return a torch tensor, as the mask you were given "
    "(PyTorch's attention takes tensors); work on the tensor instead of converting it",
)


def _mask_conversion(*, error_hints: tuple, through_numpy: str, **declared: Any) -> Grader:
    """A grader of a mask conversion, judged by what PyTorch's attention does with the mask.

    What every such grader shares: the outputs compared (the weights PyTorch applied and
    its output) and their float32 tolerances; after the grader's own ``error_hints``, those
    for a mask of the wrong kind (dtype, NumPy, list, None); and one equivalent mutant, the
    answer routed through NumPy (``through_numpy``: the mutant as :mod:`.mutants` names it).
    """
    return Grader(
        outputs=_TORCH_OUTPUTS,
        error_hints=(
            *error_hints,
            _BOOL_SUBTRACTION_HINT,
            _DTYPE_HINT,
            _NUMPY_HINT,
            _LIST_HINT,
            _NONE_HINT,
        ),
        not_finite_hint="your function computes no exponential: the NaN comes from PyTorch's "
        "attention, which gives NaN for a row with every key hidden (no key left to share "
        "the weight). On this case your mask hides all the keys of some row: print it next "
        "to ours and check which entries mean 'hide' to PyTorch and which positions they mark",
        equivalent=(
            (
                f"library: {through_numpy}",
                "a boolean mask carries no gradient: the same tensor, through NumPy or not",
            ),
        ),
        **declared,
        **_TORCH_TOLERANCES,
    )


TO_KEY_PADDING_MASK = GRADERS.add(
    _mask_conversion(
        name="to_key_padding_mask",
        signature="to_key_padding_mask(mask) with mask: (B, 1, S) boolean tensor, True = real "
        "token -> nn.MultiheadAttention's key_padding_mask, (B, S), True = padding (ignore)",
        reference=_reference_key_padding,
        cases=_kpm_cases(),
        mistakes=(
            Mistake(
                "you kept our convention: nn.MultiheadAttention IGNORES the keys marked True "
                "in key_padding_mask, so True must mark the padding: the mask must be inverted. "
                "With yours it attended to the padding only, and a sequence without padding "
                "had no key left (NaN)",
                _key_padding(lambda mask: mask[:, 0, :]),
            ),
            Mistake(
                "`.flip(-1)` reverses the order of the positions (the last key becomes the "
                "first); it does not turn True into False. nn.MultiheadAttention wants True "
                "where the padding is: negate the mask instead of reversing it. With a "
                "reversed mask a sequence without padding keeps every key marked True, so "
                "it had no key left (NaN)",
                _key_padding(lambda mask: mask[:, 0, :].flip(-1)),
            ),
            Mistake(
                "a float key_padding_mask is ADDED to the scores: your 1.0 raises the "
                "padding's scores by 1 instead of hiding them; return bool values (True = "
                "padding), or a float mask of 0 and -inf",
                _key_padding(lambda mask: (~mask[:, 0, :]).float()),
            ),
            Mistake(
                "your mask hides the first keys of each sequence instead of its last ones: "
                "it is reversed along the keys (`.flip`, or positions counted from the "
                "end). The padding sits at the end of each sequence, where our mask is "
                "False; keep the positions in their order",
                _key_padding(lambda mask: (~mask[:, 0, :]).flip(-1)),
            ),
            Mistake(
                "your mask has the right shape, but its rows are not the sequences: "
                "reshaping (B, 1, S) to (S, B) and transposing re-reads the entries in "
                "another order, so each row mixes several sequences. `reshape` never swaps "
                "axes: select or drop the query axis of size 1 instead",
                _key_padding(lambda mask: ~mask.reshape(mask.shape[-1], mask.shape[0]).T),
            ),
        ),
        error_hints=(
            ("expected `key_padding_mask` to be `None` or 2-D", _kpm_dims_hint),
            ("key_padded_mask.shape", _kpm_shape_hint),
            ("key_padding_mask shape of", _kpm_shape_hint),
            (
                "expected shape",
                "nn.MultiheadAttention expects key_padding_mask of shape (B, S): one row per "
                "sequence, one column per key; check which axis you dropped or indexed",
            ),
            (
                "only bool and floating types of key_padding_mask",
                "nn.MultiheadAttention takes a bool key_padding_mask (True = ignore) or a "
                "float one that it adds to the scores; integers are refused: return bool "
                "values",
            ),
        ),
        hint="print our mask and the one you return for a padded batch side by side: which "
        "shape does nn.MultiheadAttention want, and what does True mean to it? The "
        'chapter\'s section "One mask, four spellings" compares the conventions',
        through_numpy="return real == 0 -> return torch.from_numpy((real == 0).detach()"
        ".numpy().copy())",
        wrap=_key_padding,
    )
)


def check_to_key_padding_mask(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(mask)``: our ``(B, 1, S)`` padding mask as ``nn.MultiheadAttention``'s
    ``key_padding_mask`` (``(B, S)``, ``True`` = ignore), by PyTorch's own behaviour.

    A seeded ``nn.MultiheadAttention`` runs on padded batches with
    ``key_padding_mask=fn(mask)``; the weights it applies and its output must be those of
    the same layer attending where ``mask`` says (the course's rule: -inf before the
    softmax). Any mask PyTorch reads that way passes (a float mask of 0 and -inf too). No
    case has a sequence without a real token (PyTorch gives NaN there, the course zeros).

    Taught in: chapters/06_masking.ipynb (exercise in exercises/06_masking.ipynb)
    """
    return check_function(TO_KEY_PADDING_MASK, fn, _run_key_padding)


def _additive(mask: Any) -> bool:
    """Is ``mask`` a float tensor of 0 and -inf only (the additive form of a boolean mask)?"""
    if not isinstance(mask, torch.Tensor) or not mask.is_floating_point():
        return False
    values = mask.detach()
    return bool(((values == 0) | (values == float("-inf"))).all())


def _additive_hf_text(converted: torch.Tensor, attention_mask: torch.Tensor) -> str:
    """The diagnosis of an additive (0 / -inf) answer to 6.5: where do its -inf sit?"""
    booleans = (
        "the course's masks are boolean, True = may attend (al.combine_masks and the "
        "chapter's functions take no other)"
    )
    hidden = converted.detach() == float("-inf")
    real = (attention_mask == 1)[:, None, :]
    try:
        on_real = bool((hidden == real).all())
        on_padding = bool((hidden == ~real).all())
    except RuntimeError:  # shapes that do not broadcast: the shape is checked later
        on_real = on_padding = False
    if on_real:
        return (
            "two mistakes: the exercise asks for booleans, not an additive float mask; and "
            "your -inf sit on the real tokens (the 1s), your 0s on the padding, so even as "
            "an additive mask it would hide the words and attend to the padding only. "
            f"{booleans[0].upper()}{booleans[1:]}: return booleans, True on the real tokens"
        )
    if on_padding:
        return (
            "PyTorch reads this additive form (-inf on the padding) the same way, but it is "
            f"not our mask: {booleans}; keep the meaning of 1 and return booleans"
        )
    return (
        f"the additive form is not our mask: {booleans}. Return booleans, True where "
        "attention_mask is 1"
    )


def _float_hf_text(converted: torch.Tensor, attention_mask: torch.Tensor) -> str:
    """The diagnosis of a float answer to 6.5 other than 0 / -inf (:func:`_additive_hf_text`):
    what its values do."""
    values = converted.detach()
    booleans = "return booleans, True where attention_mask is 1"
    try:
        real = torch.broadcast_to((attention_mask == 1)[:, None, :], values.shape)
    except RuntimeError:
        real = None
    if real is not None and bool(((values == 0) | (values == 1)).all()):
        if bool(((values == 1) == real).all()):
            return (
                "a float mask is ADDED to the scores: 1 for a real token and 0 for padding "
                "hides nothing; F.scaled_dot_product_attention reads a bool mask as True = "
                f"attend, so {booleans}"
            )
    negative = values < 0
    if real is not None and bool(negative.any()) and bool((negative == real).all()):
        return (
            "your float mask hides the real tokens: a float mask is ADDED to the scores, and "
            "yours puts its negative numbers on the 1s (the real tokens) and 0 on the "
            f"padding, the wrong way round; {booleans}"
        )
    shown = ", ".join(f"{float(v):g}" for v in torch.unique(values)[:4])
    ours = (
        "it is not our mask: the course's masks are boolean, True = may attend (al."
        f"combine_masks and the chapter's functions take no other). {booleans[0].upper()}"
        f"{booleans[1:]}"
    )
    hidden = values == float("-inf")
    if real is not None and bool(hidden.any()) and bool((hidden == ~real).all()):
        others = ", ".join(f"{float(v):g}" for v in torch.unique(values[~hidden])[:4])
        return (
            "a float mask is ADDED to the scores: your -inf hide the padding, and your "
            f"other values shift the real tokens' scores ({others}); {ours}"
        )
    return (
        f"a float mask is ADDED to the scores: yours shifts them by {shown} instead of "
        "hiding keys: only -inf hides a key entirely (a -1 hides nothing, and a finite "
        f"penalty leaks against a large enough score); {ours}"
    )


def _run_hf(
    fn: Callable[..., Any], attention_mask: torch.Tensor, T: int | None = None
) -> tuple[Any, Any]:
    """F.scaled_dot_product_attention on a padded batch, with ``attn_mask=fn(attention_mask)``:
    self-attention, or ``T`` queries attending to the batch's keys (cross-attention)."""
    B, S = attention_mask.shape  # before the call: an in-place edit is the learner's to hear
    converted = fn(attention_mask)
    _refuse_nan_mask(converted)
    if isinstance(converted, torch.Tensor) and converted.is_floating_point():
        additive = _additive(converted)
        raise AnswerProblem(
            WRONG_TYPE,
            f"returned a {converted.dtype} mask{' of 0 and -inf' * additive} where the "
            "exercise asks for a boolean tensor,",
            (_additive_hf_text if additive else _float_hf_text)(converted, attention_mask),
        )
    q, k, v = _qkv(B, S, T)
    eye = torch.eye(S).expand(B, S, S)

    def attend(mask: Any) -> tuple[Any, Any]:
        # With the identity as values, the output IS the weights PyTorch applied.
        weights = F.scaled_dot_product_attention(q, k, eye, attn_mask=mask)
        return weights, F.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    return _in_torch("F.scaled_dot_product_attention", converted, attend)


def _reference_hf(
    attention_mask: torch.Tensor, T: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The attention Hugging Face's mask means: key j of sequence b visible iff it is 1."""
    B, S = attention_mask.shape
    q, k, v = (t.double() for t in _qkv(B, S, T))
    weights = _course_weights(q, k, (attention_mask == 1)[:, None, :])  # (B, T, S)
    return weights.float(), (weights @ v).float()


def _hf(convert: Callable[..., Any]) -> Callable[..., Any]:
    return adapt(_run_hf, convert)


def _hf_cases() -> tuple[Case, ...]:
    return (
        Case("one sequence", {"attention_mask": torch.tensor([[1, 1, 1, 0]])}),
        Case(
            "a padded batch",
            {"attention_mask": torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]])},
        ),
        Case("no padding", {"attention_mask": torch.ones(2, 3, dtype=torch.long)}),
        # A key mask serves any number of queries: a (B, S, S) mask fits only T = S.
        Case(
            "cross-attention, 2 queries",
            {"attention_mask": torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0]]), "T": 2},
        ),
    )


def _hf_shape_hint(message: str) -> str | None:
    """PyTorch's refusal of a mask that does not broadcast to the scores (B, T, S)."""
    found = re.search(r"of shape \(([\d, ]*)\)\)", message)
    if found is None:
        return None
    shape = tuple(int(n) for n in found[1].split(",") if n.strip())
    said = f"your mask has shape {shape}"
    if len(shape) == 2:
        return (
            f"{said}, (B, S): add the query axis of size 1 between the batch and the keys, "
            "so that the mask broadcasts over the queries; PyTorch lines the mask's axes up "
            "with the scores (B, T, S) from the right, so a (B, S) mask is read as (T, S)"
        )
    sizes = re.search(
        r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\)", message
    )
    axis = re.search(r"at non-singleton dimension (\d+)", message)
    last = axis is None or int(axis[1]) == len(shape) - 1  # the keys' axis disagrees
    if sizes is not None and shape and last:
        keys, yours = int(sizes[1]), int(sizes[2])
        if shape[-1] == yours and yours > keys and yours % keys == 0:
            return (
                f"{said}: its last axis holds {yours} = {yours // keys} × {keys} entries, "
                f"where the input has S = {keys} keys per sequence: the {yours // keys} "
                "sequences were merged into one long row of keys (a reshape or view to a "
                "single row). Keep the batch axis first and give the mask its query axis "
                "of size 1: (B, 1, S)"
            )
    scores = re.search(r"output with shape \[(\d+), (\d+), (\d+)\]", message)
    if scores is not None and len(shape) == 3:
        B, _, S = (int(n) for n in scores.groups())
        if B != S and shape == (S, 1, B):
            return (
                f"{said}, (S, 1, B): the batch and the key axes are swapped (a reshape to "
                "(S, 1, B), or a transpose, moves the keys to the front). PyTorch lines the "
                "mask up with the scores (B, T, S): the batch first, a query axis of size 1, "
                "the keys last"
            )
    if len(shape) == 3 and shape[0] == 1:
        return (
            f"{said}, (1, B, S): the new axis went in front. PyTorch lines the mask's axes "
            "up with the scores (B, T, S): the query axis of size 1 goes between the batch "
            "and the keys, at position 1"
        )
    if len(shape) == 3 and shape[1] == shape[2] > 1:
        return (
            f"{said}, (B, S, S): one row per query, which fits only as many queries as "
            "keys; with T = 2 queries (cross-attention) PyTorch cannot use it. Return the "
            "key mask (B, 1, S): its axis of size 1 broadcasts over any number of queries"
        )
    return (
        f"{said}: PyTorch lines it up with the scores (B, T, S) from the right, so it must "
        "be (B, 1, S): the batch, a query axis of size 1, the keys last"
    )


FROM_HF_ATTENTION_MASK = GRADERS.add(
    _mask_conversion(
        name="from_hf_attention_mask",
        signature="from_hf_attention_mask(attention_mask) with attention_mask: (B, S) integer "
        "tensor, 1 = real token -> (B, 1, S) boolean tensor, True = may attend",
        reference=_reference_hf,
        cases=_hf_cases(),
        mistakes=(
            Mistake(
                "the mask is inverted: in Hugging Face's attention_mask, 1 marks a real token "
                "(attend) and 0 the padding; True must mark the 1s, not the 0s",
                _hf(lambda attention_mask: (attention_mask == 0)[:, None, :]),
            ),
            Mistake(
                "you put the new axis last, (B, S, 1): that would mask queries, not keys; "
                "the key axis must stay last, the axis of size 1 between the batch and the "
                "keys",
                _hf(lambda attention_mask: (attention_mask == 1)[:, :, None]),
            ),
            Mistake(
                "your mask lets every key through: `~` on an integer tensor is a bitwise NOT "
                "(1 -> -2, 0 -> -1), both non-zero, so .bool() makes every entry True and "
                "the padding is never hidden. `~` flips booleans only: make the 0/1 integers "
                "booleans first, and ask whether the two conventions need a flip at all (what "
                "does 1 mean in each?)",
                _hf(lambda attention_mask: (~attention_mask)[:, None, :].bool()),
            ),
            Mistake(
                "you added a causal triangle: query i sees only keys 0 .. i. Hugging Face's "
                "attention_mask says which keys are real tokens, nothing about their order; "
                "a decoder adds the causal mask separately (and an (S, S) triangle does not "
                "fit T = 2 queries). Convert the key mask only",
                _hf(
                    lambda attention_mask: (
                        (attention_mask == 1)[:, None, :]
                        & torch.ones(attention_mask.shape[-1], attention_mask.shape[-1])
                        .tril()
                        .bool()
                    )
                ),
            ),
            Mistake(
                "your mask is (B, S, S), one row per query: it fits only as many queries as "
                "keys, and PyTorch cannot use it for T = 2 queries (cross-attention). Return "
                "the key mask (B, 1, S): its axis of size 1 broadcasts over any number of "
                "queries",
                _hf(
                    lambda attention_mask: (attention_mask == 1)[:, None, :].expand(
                        -1, attention_mask.shape[-1], -1
                    )
                ),
            ),
            Mistake(
                "your mask has a batch of 1 for a batch of B sequences: indexing [0] kept the "
                "first sequence only, and PyTorch broadcast its padding to every sequence. "
                "Keep the batch axis, one row of keys per sequence",
                _hf(lambda attention_mask: (attention_mask[0] == 1)[None, None, :]),
            ),
            Mistake(
                "for a batch of one, a bare `squeeze()` drops the batch axis too: one "
                "sequence's (1, S) mask became (S,), and the axis you added after it made "
                "(S, 1), which PyTorch reads as one row per query: it hides whole queries, "
                "not keys. Keep the batch axis (no squeeze is needed) and add the query axis "
                "between the batch and the keys",
                _hf(lambda attention_mask: (attention_mask == 1).squeeze()[:, None]),
            ),
            *(
                Mistake(
                    "your mask has the right shape and dtype, but its entries are not in "
                    "the input's places: `reshape` keeps the order of the entries in memory, "
                    f"so {how} moves tokens from one sequence to another. Print "
                    "attention_mask and your mask side by side for a padded batch; adding an "
                    "axis of size 1 needs no reordering of the data",
                    _hf(scramble),
                )
                for how, scramble in (
                    (
                        "reshaping (B, S) to (S, 1, B) and transposing back",
                        lambda m: (m == 1).reshape(m.shape[1], 1, m.shape[0]).transpose(0, 2),
                    ),
                    (
                        "transposing to (S, B) and reshaping to (B, 1, S)",
                        lambda m: (m == 1).T.reshape(m.shape[0], 1, m.shape[1]),
                    ),
                )
            ),
        ),
        error_hints=(
            ("must match the size of tensor", _hf_shape_hint),
            ("doesn't match the broadcast shape", _hf_shape_hint),
            ("Expected attn_mask dtype", _integer_mask_hint),
        ),
        hint="what does 1 mean in Hugging Face's mask and True in ours, and which axis does "
        "a key mask need so that it broadcasts over the queries? The chapter's section "
        '"One mask, four spellings" compares the conventions',
        through_numpy="return (attention_mask == 1)[:, None, :] -> return torch.from_numpy("
        "(attention_mask == 1)[:, None, :].de",
        wrap=_hf,
    )
)


def check_from_hf_attention_mask(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(attention_mask)``: Hugging Face's 0/1 ``attention_mask`` as our key mask,
    by PyTorch's own behaviour.

    ``F.scaled_dot_product_attention`` (whose boolean mask means True = attend, as ours)
    runs on padded batches with ``attn_mask=fn(attention_mask)``; the weights it applies
    and its output must be those of attention to exactly the keys marked 1. No case has a
    sequence without a real token.

    Taught in: chapters/06_masking.ipynb (exercise in exercises/06_masking.ipynb)
    """
    return check_function(FROM_HF_ATTENTION_MASK, fn, _run_hf)


# --- a test of causality: edit the future, measure the past --------------------------------


@dataclass(frozen=True, repr=False)
class Attend:
    """Weightless self-attention ``x: (T, D) -> (T, D)`` with a mask chosen by ``kind``.

    ``"causal"`` (lower triangle), ``"full"`` (no mask), ``"one ahead"`` (each query also
    sees the next token), ``"global first"`` (causal, except that query 0 sees everything).
    The grader's cases pass these to the learner's test; equal kinds compare equal.
    """

    kind: str

    def mask(self, T: int) -> np.ndarray:
        if self.kind == "full":
            return np.ones((T, T), dtype=bool)
        if self.kind == "one ahead":
            return np.tril(np.ones((T, T), dtype=bool), k=1)
        mask = causal_mask(T)
        if self.kind == "global first":
            mask = mask.copy()
            mask[0] = True
        return mask

    def __call__(self, x: np.ndarray) -> np.ndarray:
        if not isinstance(x, np.ndarray):
            raise TypeError(
                f"attend takes a NumPy array, as x is, and was given a {type(x).__module__}."
                f"{type(x).__name__}"
            )
        out, _ = scaled_dot_product_attention(x, x, x, self.mask(x.shape[0]))
        return out

    def __repr__(self) -> str:
        return f"{self.kind} attention"


def _zeroed(x: np.ndarray, *, start: int = 0, stop: int | None = None) -> np.ndarray:
    """A copy of ``x`` with the tokens ``start .. stop - 1`` set to zero."""
    edited = x.copy()
    edited[start:stop] = 0.0
    return edited


def _zeroed_columns(x: np.ndarray, start: int) -> np.ndarray:
    """A copy of ``x`` with the features (columns) from ``start`` on set to zero."""
    edited = x.copy()
    edited[:, start:] = 0.0
    return edited


def _moved(attend: Callable[..., Any], x: np.ndarray, edited: np.ndarray) -> np.ndarray:
    """How far each output entry moves when the input ``x`` becomes ``edited``: (T, D)."""
    return np.abs(attend(edited) - attend(x))


def _change(attend: Callable[..., Any], x: np.ndarray, t: int, *, edit_from: int, upto: int):
    diff = _moved(attend, x, _zeroed(x, start=edit_from))  # (T, D)
    return float(np.max(diff[:upto], initial=0.0))


def _edited_change(attend: Callable[..., Any], x: np.ndarray, t: int, edited: np.ndarray):
    return float(np.max(_moved(attend, x, edited)[: t + 1]))


def _future_moved(attend: Callable[..., Any], x: np.ndarray, t: int) -> np.ndarray:
    """How far outputs ``0 .. t`` move when the tokens after ``t`` are zeroed: (t + 1, D)."""
    return _moved(attend, x, _zeroed(x, start=t + 1))[: t + 1]


def _future_change(attend: Callable[..., Any], x: np.ndarray, t: int) -> float:
    return _change(attend, x, t, edit_from=t + 1, upto=t + 1)


def _future_change_cases() -> tuple[Case, ...]:
    rng = _rng()
    x = rng.normal(size=(5, 3))
    return (
        Case("causal, t = 1", {"attend": Attend("causal"), "x": x, "t": 1}),
        Case("no mask, t = 2", {"attend": Attend("full"), "x": x, "t": 2}),
        Case("causal, t = 3", {"attend": Attend("causal"), "x": x, "t": 3}),
        Case("sees one token ahead, t = 1", {"attend": Attend("one ahead"), "x": x, "t": 1}),
        Case("token 0 sees everything, t = 2", {"attend": Attend("global first"), "x": x, "t": 2}),
        Case("causal, last position", {"attend": Attend("causal"), "x": x, "t": 4}),
    )


FUTURE_CHANGE = GRADERS.add(
    Grader(
        name="future_change",
        signature="future_change(attend, x, t) with attend: (T, D) -> (T, D), x: (T, D), "
        "t: int -> float",
        reference=_future_change,
        cases=_future_change_cases(),
        mistakes=(
            *(
                Mistake(
                    f"your number is the right one rounded to {digits} decimal"
                    f"{'s' if digits > 1 else ''}: return the full value. Inside a test, "
                    "rounding hides what the test is for: a leak of 1e-4 rounds to 0.0 and "
                    "would pass as causal",
                    lambda attend, x, t, digits=digits: round(_future_change(attend, x, t), digits),
                )
                for digits in (1, 2, 3, 4)
            ),
            Mistake(
                "you returned one change per feature (a max over the tokens only): the "
                "answer is one number, the largest change over every output 0 .. t and "
                "every feature",
                lambda attend, x, t: _future_moved(attend, x, t).max(axis=0),
            ),
            Mistake(
                "you returned one change per output position (a max over the features "
                "only): the answer is one number, the largest change over every output "
                "0 .. t and every feature, as a float",
                lambda attend, x, t: _future_moved(attend, x, t).max(axis=1),
            ),
            *(
                Mistake(
                    "you took the largest *signed* difference: an output that moved down "
                    "changed too, and a max of signed differences misses it (it can even be "
                    "negative). Measure the size of each change (its absolute value) before "
                    "taking the largest",
                    lambda attend, x, t, sign=sign: float(
                        np.max(sign * (attend(x) - attend(_zeroed(x, start=t + 1)))[: t + 1])
                    ),
                )
                for sign in (1.0, -1.0)
            ),
            *(
                Mistake(
                    "you took |a| - |b|, the difference of the sizes, not the size of the "
                    "difference |a - b|: an output that changes sign (0.3 to -0.3) looks "
                    "unmoved, and the result can be negative. Subtract the two outputs "
                    "first, then measure the size of that change",
                    lambda attend, x, t, sign=sign: float(
                        np.max(
                            sign
                            * (
                                np.abs(attend(_zeroed(x, start=t + 1)))[: t + 1]
                                - np.abs(attend(x))[: t + 1]
                            )
                        )
                    ),
                    needs=r"abs\([\s\S]*?[)\]]\s*-\s*(?:np\.|torch\.)?abs\(",
                )
                for sign in (1.0, -1.0)
            ),
            Mistake(
                "you read t as counted from 1: your test zeroes token t itself and compares "
                "the outputs before t only. Positions count from 0 here: token t is the "
                "present (it stays), the future starts at t + 1, and output t is one of "
                "those that must not move",
                lambda attend, x, t: float(
                    np.max(np.abs(attend(_zeroed(x, start=t)) - attend(x))[:t], initial=0.0)
                ),
            ),
            Mistake(
                "your test runs backwards in time: it edits the tokens before t and compares "
                "the outputs from t on. Causality is about the future: edit the tokens after "
                "t, and compare the outputs that must not see them, those up to t",
                lambda attend, x, t: float(
                    np.max(np.abs(attend(_zeroed(x, stop=t)) - attend(x))[t:], initial=0.0)
                ),
            ),
            Mistake(
                "you compared the two largest outputs, max |a| against max |b|, not the "
                "outputs entry by entry: an output can change while the largest one stays "
                "the same. Take the difference of the two outputs first, then the largest "
                "size in it",
                lambda attend, x, t: float(
                    abs(
                        np.abs(attend(_zeroed(x, start=t + 1))[: t + 1]).max()
                        - np.abs(attend(x)[: t + 1]).max()
                    )
                ),
            ),
            Mistake(
                "you sliced the outputs' features, not their positions: the outputs are "
                "(T, D), positions on the first axis, so `[:, : t + 1]` keeps features "
                "0 .. t of every output, the future positions included. The outputs that "
                "must not move are the positions 0 .. t",
                lambda attend, x, t: float(
                    np.max(np.abs(attend(_zeroed(x, start=t + 1)) - attend(x))[:, : t + 1])
                ),
            ),
            Mistake(
                "you divided each change by the size of the output: that is a relative "
                "change, and the statement asks for the absolute one, |new - old|, with no "
                "normalisation (an output near 0 would make any change look huge)",
                lambda attend, x, t: float(
                    np.max(
                        np.abs(attend(_zeroed(x, start=t + 1)) - attend(x))[: t + 1]
                        / np.abs(attend(x))[: t + 1]
                    )
                ),
            ),
            Mistake(
                "you returned where the largest change is (argmax, an index into the "
                "flattened outputs), not how large it is: the answer is the size of the "
                "largest change",
                lambda attend, x, t: float(_future_moved(attend, x, t).argmax()),
            ),
            Mistake(
                "you summed the changes: the answer is the largest change of one entry "
                "(np.max), so that it is 0 exactly when nothing moved and says by how much "
                "the worst output moved",
                lambda attend, x, t: float(_future_moved(attend, x, t).sum()),
            ),
            Mistake(
                "you averaged the changes: one leaking entry is enough to break causality, "
                "so return the largest change (np.max), not the mean",
                lambda attend, x, t: float(_future_moved(attend, x, t).mean()),
            ),
            *(
                Mistake(
                    "you zeroed the tokens before t (the past), not those after it: the "
                    "future of position t is the tokens t + 1 .. T - 1; keep the others",
                    lambda attend, x, t, upto=upto: _edited_change(
                        attend, x, t, _zeroed(x, stop=t + upto)
                    ),
                )
                for upto in (0, 1)
            ),
            Mistake(
                "you zeroed every token, not only the future ones: keep tokens 0 .. t as "
                "they are and set only the tokens after t to 0",
                lambda attend, x, t: _edited_change(attend, x, t, np.zeros_like(x)),
            ),
            Mistake(
                "you also edited token t itself: the future starts at t + 1, so token t "
                "keeps its value. Output t may depend on token t",
                lambda attend, x, t: _change(attend, x, t, edit_from=t, upto=t + 1),
            ),
            Mistake(
                "you compared every output, including the edited positions after t, which "
                "may change; compare the outputs 0 .. t only",
                lambda attend, x, t: _change(attend, x, t, edit_from=t + 1, upto=x.shape[0]),
            ),
            Mistake(
                "you compared the outputs before t only; output t itself must not change "
                "either: compare the outputs 0 .. t, t included",
                lambda attend, x, t: _change(attend, x, t, edit_from=t + 1, upto=t),
            ),
            Mistake(
                "you compared only output t; an earlier output can leak too (here token 0 "
                "sees everything): compare every output from 0 to t",
                lambda attend, x, t: float(np.max(_future_moved(attend, x, t)[t])),
            ),
            Mistake(
                "you returned 1.0 or 0.0, whether the outputs moved: the statement asks how "
                "much they moved, the largest absolute change itself (0.0 for a causal layer)",
                lambda attend, x, t: float(np.max(_future_moved(attend, x, t)) > 1e-6),
            ),
            Mistake(
                "you returned the norm of the whole difference (its size over every entry): "
                "the statement asks for the largest absolute change of one entry, a max",
                lambda attend, x, t: float(np.linalg.norm(_future_moved(attend, x, t))),
            ),
            Mistake(
                "you measured each output's change with a vector norm over its features "
                "(np.linalg.norm along the last axis), then took the largest: the statement "
                "asks for the largest absolute change of one entry, over every output "
                "0 .. t and every feature",
                lambda attend, x, t: float(
                    np.max(np.linalg.norm(_future_moved(attend, x, t), axis=-1))
                ),
            ),
            *(
                Mistake(
                    f"you compared only the {which} feature of each output: a leak can show "
                    "in any feature, so compare every feature of the outputs 0 .. t",
                    lambda attend, x, t, j=j: float(np.max(_future_moved(attend, x, t)[:, j])),
                )
                for which, j in (("first", 0), ("last", -1))
            ),
            Mistake(
                "your function returns 0 even for the layer without a mask, which does peek "
                "(its outputs 0 .. t move by 0.12 on this case): your two sides are the same "
                "computation (the edited input run twice, or the layer never run). One side "
                "is the layer on the original x, the other the layer on the edited copy",
                lambda attend, x, t: 0.0,
            ),
            Mistake(
                "you zeroed feature columns, not tokens: x[:, t + 1:] = 0 sets the columns "
                "(features) after t of EVERY token to 0, the past included. The tokens are "
                "the rows of x (T, D): the future of position t is the rows after t, so "
                "the slice that selects it goes on the first axis",
                lambda attend, x, t: _edited_change(attend, x, t, _zeroed_columns(x, t + 1)),
            ),
            *(
                Mistake(
                    "you compared an output with the input x itself: attention changes "
                    "every token, so an output never equals its input. Compare two OUTPUTS, "
                    "attend(x)[: t + 1] against attend(edited)[: t + 1], the same layer on "
                    "the two inputs",
                    lambda attend, x, t, edit=edit: float(
                        np.max(
                            np.abs(
                                attend(_zeroed(x, start=t + 1) if edit else x)[: t + 1] - x[: t + 1]
                            )
                        )
                    ),
                )
                for edit in (True, False)
            ),
            Mistake(
                "you compared the outputs after t, those of the tokens you edited (they may "
                "change); the outputs that must not move are those at positions 0 .. t, "
                "out[: t + 1]. At the last position there is no output after t, so the "
                "slice is empty and max has nothing to take",
                lambda attend, x, t: float(
                    np.abs(attend(x)[t + 1 :] - attend(_zeroed(x, start=t + 1))[t + 1 :]).max()
                ),
            ),
            Mistake(
                "you ran the layer on the tokens 0 .. t alone, dropping the future: the "
                "statement keeps the sequence's length and sets the tokens after t to 0 "
                "(a different input, and a different number for a layer that peeks)",
                lambda attend, x, t: float(np.max(np.abs(attend(x[: t + 1]) - attend(x)[: t + 1]))),
            ),
        ),
        error_hints=(
            (
                "attend takes a NumPy array",
                "the layer you test, attend, takes and returns NumPy arrays, as x is: your "
                "test gave it another kind of array (a torch tensor made from x, say). Copy "
                "x with NumPy and stay in NumPy",
            ),
            (
                "zero-size array",
                "the slice of outputs you take the max of is empty on this case: there is no "
                "output after the last position (and none before position 0). The outputs "
                "that must not move are those at positions 0 .. t, t included",
            ),
        ),
        hint="which tokens are the future of position t, which outputs must not move when "
        "they change, and which single number says how much those outputs moved? The "
        'chapter\'s section "Causality: no peeking at the future" runs this test',
        equivalent=(
            (
                "drop: float(np.max(change[: t + 1])) in return float(np.max(change[: t + 1]))"
                " -> np.max(change[:t + 1])",
                "np.max already returns one number (a NumPy float, compared by value)",
            ),
            (
                "swap: attend(edited) - attend(x) in change = np.abs(attend(edited) - "
                "attend(x)) -> attend(x) - attend(edited)",
                "the absolute value does not depend on the order of the difference",
            ),
        ),
    )
)


def check_future_change(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(attend, x, t)``: the largest change of outputs ``0 .. t`` when the tokens
    after ``t`` are set to zero (0.0 for every ``t`` proves a layer causal on ``x``).

    Taught in: chapters/06_masking.ipynb (exercise in exercises/06_masking.ipynb)
    """
    result = FUTURE_CHANGE.check(fn)
    if result.passed or not callable(fn):
        return result
    if result.diagnosed and result.status not in (WRONG_VALUES, EXCEPTION):
        return result
    # What the test did to its input is direct evidence: it comes before what the
    # outputs suggest (a case clue such as "wrong only when t = 2").
    edit = _other_edit(fn)
    if edit is None:
        return result
    return record(replace(result, diagnosis=edit, diagnosed=True))


class _Recorder:
    """An ``attend`` that remembers every input it is given (a copy of each)."""

    def __init__(self, attend: Attend) -> None:
        self.attend, self.inputs = attend, []

    def __call__(self, x: Any) -> Any:
        if not isinstance(x, np.ndarray):
            return self.attend(x)  # refused there, with the kind of array it was given
        self.inputs.append(np.array(x, dtype=float, copy=True))
        return self.attend(np.asarray(x, dtype=float))


def _other_edit(fn: Callable[..., Any]) -> str | None:
    """What the learner's test did to the future tokens, when it did not set all of them
    to zeros (the past and present unchanged); else ``None``."""
    x, t = _rng().normal(size=(5, 3)), 1
    spy = _Recorder(Attend("causal"))
    try:
        with np.errstate(all="ignore"):
            fn(spy, x.copy(), t)
    except Exception:
        pass  # what it did before it failed is still recorded
    for seen in spy.inputs:
        if seen.shape != x.shape or np.array_equal(seen, x):
            continue
        if not np.array_equal(seen[: t + 1], x[: t + 1]):
            continue  # the past was edited: the planted mistakes say so
        kept = [r for r in range(t + 1, len(x)) if np.array_equal(seen[r], x[r])]
        if kept:
            edited = [r for r in range(t + 1, len(x)) if r not in kept]
            return (
                f"called again with t = {t} to see what it edits, your test edits "
                f"token{'s' * (len(edited) != 1)} "
                f"{', '.join(map(str, edited))} and leaves token{'s' * (len(kept) != 1)} "
                f"{', '.join(map(str, kept))} as {'they were' if len(kept) > 1 else 'it was'}: "
                "every token after t is the future, and all of them must be set to zero"
            )
        if np.any(seen[t + 1 :] != 0):
            return (
                "your test gives the tokens after t other values than zeros (called again "
                f"with t = {t} to see what it edits, your edited token {t + 1} is "
                f"{np.round(seen[t + 1], 3).tolist()}): "
                "the statement sets them to 0, so that everyone's test returns the same "
                "number for the same layer. Set the future tokens of the copy to zero"
            )
    return None


# --- prediction questions -------------------------------------------------------------------


def _weight_range(w: float, what: str) -> str | None:
    """What an answer outside [0, 1] to a weight question says: it is no weight (a score?)."""
    if 0.0 <= w <= 1.0:
        return None
    score = "" if math.isinf(w) else f" ({w:g} reads like a score, not its weight)"
    return (
        f"a softmax weight lies between 0 and 1, and a row's weights sum to 1{score}: "
        f"compute {what}, then the softmax of the row"
    )


def _blind_row_reason(w: float) -> str | None:
    """What an unlisted answer to 6.8 implies: no weight, or a row that does not sum to 1."""
    if not 0.0 <= w <= 1.0:
        return _weight_range(w, "the four scores after the fill")
    if w > 0.0 and abs(4 * w - 1) > 0.05:
        return (
            f"four keys of {w:g} each would make the row sum to {4 * w:g}, and a softmax row "
            "sums to 1: what do the four scores of the row have in common after the fill?"
        )
    return None


FILL_LEAK = GRADERS.add(
    Question(
        name="fill_leak",
        answer=0.5,
        # exact: the two scores tie, and 0.49 or 0.51 would be weights of scores that differ
        atol=1e-3,
        near=0.12,
        near_hint="close, but not it: after the fill the two scores are exact numbers, and "
        "so is their softmax; no estimate or rounding is needed. Compute the masked key's "
        "score after the fill exactly, then the softmax of the two scores",
        explanation="10000 + (-10000) = 0, exactly the visible key's score: the two keys tie "
        "and share the weight equally. A finite fill masks only when it dwarfs every score; "
        "-inf always does",
        # The diagnoses lead to the step that was missed; none states the weight (the
        # learner's next try must still be a computation, not a copy).
        wrong=(
            (
                0.0,
                "a fill of -1e4 is only 'very negative' next to small scores, and this masked "
                "score is 10000: compute its score after the fill is added, then compare it "
                "with the visible key's score before taking the softmax",
            ),
            (
                1 / (1 + math.e),
                "1 / (1 + e) = 0.269 is the weight of a score 0 against a score 1: but after "
                "the fill the masked key's score is not 1. Compute 10000 + (-10000) again",
            ),
            (
                math.e / (1 + math.e),
                "e / (1 + e) = 0.731 is the weight of a score 1 against a score 0: but after "
                "the fill the masked key's score is not 1. Compute 10000 + (-10000) again",
            ),
            (
                0.25,
                "0.25 is one key's share among four equal scores (the next question's row); "
                "this row has two keys, one visible with score 0 and one masked: compute "
                "the masked key's score after the fill, then the softmax of the two scores",
            ),
            (
                1.0,
                "1 means one key takes all the weight: the masked key, if it kept its score "
                "of 10000 (no fill added), or the visible key, if the masked key's score "
                "were the fill alone (-1e4, its own 10000 forgotten). The question asks for "
                "the masked key's weight, and the fill is added to its score: what is that "
                "score after the fill, next to the visible key's 0?",
            ),
            (
                math.exp(-1),
                "e^-1 = 0.368 is one exponential, not a weight: a weight is one key's "
                "exponential divided by the sum of the row's. Compute the masked key's score "
                "after the fill, then the softmax of the two scores",
            ),
        ),
        hint="compute the masked key's score after adding the fill, then the softmax of two scores",
        reason=lambda w: _weight_range(w, "the masked key's score after the fill"),
        nan_hint="NaN needs an infinity somewhere (an overflowing exp, or -inf minus "
        "-inf); here every score is finite, and the fill is added before the softmax: "
        "compute the masked key's score after the fill, then the softmax of the two scores",
    )
)


def check_fill_leak(answer: Any) -> CheckResult:
    """Check the predicted weight of a masked key of score 1e4 after adding a -1e4 fill.

    Taught in: chapters/06_masking.ipynb (exercise in exercises/06_masking.ipynb)
    """
    return FILL_LEAK.check(answer)


BLIND_ROW = GRADERS.add(
    Question(
        name="blind_row",
        answer=0.25,
        atol=1e-3,
        near=0.12,
        near_hint="close, but not it: the answer is exact, not an estimate. After the fill, "
        "what do the four scores of the row have in common, and what does that make "
        "their softmax?",
        each=(4, "key"),
        explanation="every score of the row becomes -1e9, so all four are equal and the "
        "softmax spreads the weight evenly: 1/4 each. The output is the plain average of the "
        "(padding) values: silently wrong, which is why the course returns zeros there",
        # As for fill_leak: each diagnosis names the step, none the weight.
        wrong=(
            (
                0.0,
                "all-zero weights are what the course's masked_softmax gives such a row, by "
                "treating it apart; a plain -1e9 fill does not: the softmax of a row still "
                "sums to 1. Look at the four scores after the fill, then take their softmax",
            ),
            (
                1.0,
                "1 is what one key takes when its score is far above the others', or each "
                "key's exponential e^0 = 1 before the division: a weight is its exponential "
                "divided by the sum of the row's four, and the weights of a row sum to 1: "
                "compare the four scores after the fill",
            ),
            (
                0.2,
                "the row has four keys, not five: count the keys of the mask's row",
            ),
            (
                1 / 3,
                "all four keys are masked, and the fill replaces each of their scores: count "
                "the keys whose weights you are sharing",
            ),
        ),
        hint="after the fill, what do the four scores of the row have in common?",
        reason=_blind_row_reason,
        nan_hint="NaN comes from -inf: a row of -inf minus its max is -inf - (-inf), "
        "and 0/0 follows. Here the fill is -1e9, a finite number: subtract the row's max "
        "from each of the four scores and see what the exponentials give",
    )
)


def check_blind_row(answer: Any) -> CheckResult:
    """Check the predicted weight of each key in a fully masked row filled with -1e9.

    Taught in: chapters/06_masking.ipynb (exercise in exercises/06_masking.ipynb)
    """
    return BLIND_ROW.check(answer)


summary = GRADERS.summary
"""``summary()``: the score table of every chapter 6 exercise, checked or not."""
