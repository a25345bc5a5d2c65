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
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ..mechanism.attention import scaled_dot_product_attention
from ..mechanism.masking import causal_mask, padding_mask
from ..mechanism.similarity import softmax
from .modules import adapt, check_function
from .pipeline import Grader
from .questions import Question
from .registry import ChapterGraders
from .results import CheckResult
from .specs import Case, Mistake

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

CAUSAL_MASK = GRADERS.add(
    Grader(
        name="causal_mask",
        signature="causal_mask(T) -> (T, T) boolean, True = may attend",
        reference=lambda T: causal_mask(T),
        cases=tuple(Case(f"T = {T}", {"T": T}) for T in (1, 2, 4, 7)),
        mistakes=(
            Mistake(
                "your mask is upper-triangular: query i sees the keys AFTER it (the future). "
                "Query i may see keys 0 .. i: np.tril, not np.triu",
                lambda T: np.triu(np.ones((T, T), dtype=bool)),
            ),
            Mistake(
                "off by one: the diagonal is False, so a query cannot see its own token. "
                "Query i sees keys 0 .. i inclusive (np.tril with k=0)",
                lambda T: np.tril(np.ones((T, T), dtype=bool), k=-1),
            ),
            Mistake(
                "off by one: query i also sees key i + 1, the next token (the answer it must "
                "predict). Use np.tril with k=0",
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
        cases=(
            Case("one sequence", {"lengths": np.array([3]), "max_len": 5}),
            Case("three sequences", {"lengths": np.array([4, 2, 1]), "max_len": 4}),
            Case("padding beyond the longest", {"lengths": np.array([2, 3]), "max_len": 6}),
            Case("an empty sequence", {"lengths": np.array([0, 2]), "max_len": 3}),
        ),
        mistakes=(
            Mistake(
                "you returned (B, max_len): add the query axis of size 1, "
                "mask[:, None, :], so it broadcasts over the queries of (B, T, S) scores",
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
                "the mask is inverted: True must mark the real tokens (may attend), False "
                "the padding",
                lambda lengths, max_len: ~_positions_below(lengths, max_len)[:, None, :],
            ),
            Mistake(
                "you padded to the longest length, not to max_len: the batch may be padded "
                "further (np.arange(max_len))",
                lambda lengths, max_len: _positions_below(lengths, int(lengths.max()))[:, None],
            ),
            Mistake(
                "your mask is (1, B, S): the axes are in another order than (B, 1, S); the "
                "axis of size 1 (the queries) goes between the batch and the keys",
                lambda lengths, max_len: _positions_below(lengths, max_len)[None],
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


def _fill(scores: np.ndarray, mask: np.ndarray, fill: float) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return _softmax_rows(np.where(mask, scores, fill))


def _added(scores: np.ndarray, mask: np.ndarray, fill: float) -> np.ndarray:
    return _softmax_rows(scores + np.where(mask, 0.0, fill))


def _fill_zeroed(scores: np.ndarray, mask: np.ndarray, fill: float) -> np.ndarray:
    """Planted: a finite fill, and the rows with no visible key set to 0."""
    visible = np.any(mask, axis=-1, keepdims=True)
    return np.where(visible, _softmax_rows(np.where(mask, scores, fill)), 0.0)


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
                "softmax computes 0/0. Such rows must be all zeros: find them with "
                "mask.any(axis=-1, keepdims=True) and set their weights to 0",
                lambda scores, mask: _fill(scores, mask, -np.inf),
            ),
            Mistake(
                "a row with no visible key got uniform weights: a finite fill (-1e9) makes "
                "all its scores equal. The rule is all-zero weights there; fill with -inf "
                "and zero the rows where mask.any(axis=-1) is False",
                lambda scores, mask: _fill(scores, mask, -1e9),
            ),
            Mistake(
                "you added -1e4 to the masked scores: a masked score of 10000 becomes 0 and "
                "competes again: a masked score must be replaced, not shifted",
                lambda scores, mask: _added(scores, mask, -1e4),
            ),
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
                "you multiplied the scores by the mask: a masked score becomes 0, not -inf, "
                "and e^0 = 1 still gets weight. Replace masked scores by -inf",
                lambda scores, mask: _softmax_rows(scores * mask),
            ),
            Mistake(
                "the mask is inverted: True means 'may attend'; hide the keys where the mask "
                "is False",
                lambda scores, mask: softmax(scores, mask=~mask),
            ),
            Mistake(
                "a finite fill (-1e4) is not always below the visible scores: in a row whose "
                "visible scores are -20000, the masked key's -1e4 is the largest and takes "
                "the weight. Replace masked scores by -inf",
                lambda scores, mask: _fill_zeroed(scores, mask, -1e4),
            ),
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
            *(
                (
                    f"fill: -np.inf in z = np.where(mask, scores, -np.inf) -> {fill}",
                    "a fill replaces the masked scores; this far below every visible score "
                    "it gives them exactly 0 weight, as -inf does (the rows with no visible "
                    "key are set to 0 by the last line)",
                )
                for fill in ("-1000000000.0", "-1.7976931348623157e+308")
            ),
        ),
    )
)


def check_masked_softmax(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(scores, mask)``: softmax over the last axis with masked keys at weight 0.

    A row with no visible key must come out as all zeros, never NaN or uniform.

    Taught in: chapters/06_masking.ipynb (exercise in exercises/06_masking.ipynb)
    """
    return MASKED_SOFTMAX.check(fn)


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


def _qkv(B: int, S: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Seeded float32 queries, keys and values ``(B, S, D)`` (self-attention: T = S)."""
    g = torch.Generator().manual_seed(700 + 10 * B + S)
    return tuple(1.5 * _randn(g, B, S, _D_MODEL) for _ in range(3))  # type: ignore[return-value]


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
    converted = fn(mask)
    layer, x = _mha(mask.shape[0], mask.shape[-1])

    def attend(kpm: Any) -> tuple[Any, Any]:
        out, weights = layer(
            x, x, x, key_padding_mask=kpm, need_weights=True, average_attn_weights=False
        )
        return weights, out  # (B, H, T, S), (B, T, D)

    return _in_torch("nn.MultiheadAttention", converted, attend)


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
            "your mask lost the batch axis: squeeze() drops every axis of size 1, the batch "
            "too when B = 1; drop only the query axis, axis 1 (squeeze(1))"
        )
    if "but found" in message:
        return (
            "you kept the query axis: key_padding_mask is (B, S), one row per sequence; "
            "drop the axis of size 1, axis 1"
        )
    return None


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
    if re.search(r"attn_mask\.dtype: \w*(int|long|short|char)", message, re.IGNORECASE):
        return (
            "F.scaled_dot_product_attention takes a bool mask (True = attend) or a float "
            "one that it adds to the scores, not integers: compare with 1 "
            "(attention_mask == 1)"
        )
    return None


_NONE_HINT = ("returned None", "did you forget `return`?")
_NUMPY_HINT = (
    "NumPy array",
    "return a torch tensor, as the mask you were given: PyTorch's attention takes tensors",
)

TO_KEY_PADDING_MASK = GRADERS.add(
    Grader(
        name="to_key_padding_mask",
        signature="to_key_padding_mask(mask) with mask: (B, 1, S) boolean tensor, True = real "
        "token -> nn.MultiheadAttention's key_padding_mask, (B, S), True = padding (ignore)",
        reference=_reference_key_padding,
        cases=_kpm_cases(),
        outputs=_TORCH_OUTPUTS,
        mistakes=(
            Mistake(
                "you kept our convention: nn.MultiheadAttention IGNORES the keys marked True "
                "in key_padding_mask, so True must mark the padding; invert the mask (~mask). "
                "With yours it attended to the padding only, and a sequence without padding "
                "had no key left (NaN)",
                _key_padding(lambda mask: mask[:, 0, :]),
            ),
            Mistake(
                "a float key_padding_mask is ADDED to the scores: your 1.0 raises the "
                "padding's scores by 1 instead of hiding them; return bool values (True = "
                "padding), or a float mask of 0 and -inf",
                _key_padding(lambda mask: (~mask[:, 0, :]).float()),
            ),
        ),
        error_hints=(
            ("expected `key_padding_mask` to be `None` or 2-D", _kpm_dims_hint),
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
            _DTYPE_HINT,
            _NUMPY_HINT,
            _NONE_HINT,
        ),
        hint="print our mask and the one you return for a padded batch side by side: which "
        "shape does nn.MultiheadAttention want, and what does True mean to it? The "
        'chapter\'s section "One mask, four spellings" compares the conventions',
        wrap=_key_padding,
        equivalent=(
            (
                "library: return real == 0 -> return torch.from_numpy((real == 0).detach()"
                ".numpy().copy())",
                "a boolean mask carries no gradient: the same tensor, through NumPy or not",
            ),
        ),
        **_TORCH_TOLERANCES,
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


def _run_hf(fn: Callable[..., Any], attention_mask: torch.Tensor) -> tuple[Any, Any]:
    """F.scaled_dot_product_attention on a padded batch, with ``attn_mask=fn(attention_mask)``."""
    converted = fn(attention_mask)
    B, S = attention_mask.shape
    q, k, v = _qkv(B, S)
    eye = torch.eye(S).expand(B, S, S)

    def attend(mask: Any) -> tuple[Any, Any]:
        # With the identity as values, the output IS the weights PyTorch applied.
        weights = F.scaled_dot_product_attention(q, k, eye, attn_mask=mask)
        return weights, F.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    return _in_torch("F.scaled_dot_product_attention", converted, attend)


def _reference_hf(attention_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The attention Hugging Face's mask means: key j of sequence b visible iff it is 1."""
    B, S = attention_mask.shape
    q, k, v = (t.double() for t in _qkv(B, S))
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
    )


FROM_HF_ATTENTION_MASK = GRADERS.add(
    Grader(
        name="from_hf_attention_mask",
        signature="from_hf_attention_mask(attention_mask) with attention_mask: (B, S) integer "
        "tensor, 1 = real token -> (B, 1, S) boolean tensor, True = may attend",
        reference=_reference_hf,
        cases=_hf_cases(),
        outputs=_TORCH_OUTPUTS,
        mistakes=(
            Mistake(
                "the mask is inverted: in Hugging Face's attention_mask, 1 marks a real token "
                "(attend) and 0 the padding; compare with 1, not 0",
                _hf(lambda attention_mask: (attention_mask == 0)[:, None, :]),
            ),
            Mistake(
                "you put the new axis last, (B, S, 1): that would mask queries, not keys; "
                "the key axis must stay last ([:, None, :])",
                _hf(lambda attention_mask: (attention_mask == 1)[:, :, None]),
            ),
            Mistake(
                "a float mask is ADDED to the scores: 1 for a real token and 0 for padding "
                "hides nothing; F.scaled_dot_product_attention reads a bool mask as True = "
                "attend, so return booleans (attention_mask == 1)",
                _hf(lambda attention_mask: attention_mask[:, None, :].float()),
            ),
        ),
        error_hints=(
            (
                "must match the size of tensor",
                "you returned (B, S): add the query axis of size 1 ([:, None, :]) so that the "
                "mask broadcasts over the queries; PyTorch lines the mask's axes up with the "
                "scores (B, T, S) from the right, so a (B, S) mask is read as (T, S)",
            ),
            ("Expected attn_mask dtype", _integer_mask_hint),
            _DTYPE_HINT,
            _NUMPY_HINT,
            _NONE_HINT,
        ),
        hint="what does 1 mean in Hugging Face's mask and True in ours, and which axis does "
        "a key mask need so that it broadcasts over the queries? The chapter's section "
        '"One mask, four spellings" compares the conventions',
        wrap=_hf,
        equivalent=(
            (
                "library: return (attention_mask == 1)[:, None, :] -> return torch.from_numpy("
                "(attention_mask == 1)[:, None, :].de",
                "a boolean mask carries no gradient: the same tensor, through NumPy or not",
            ),
        ),
        **_TORCH_TOLERANCES,
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
        out, _ = scaled_dot_product_attention(x, x, x, self.mask(x.shape[0]))
        return out

    def __repr__(self) -> str:
        return f"{self.kind} attention"


def _zeroed(x: np.ndarray, *, start: int = 0, stop: int | None = None) -> np.ndarray:
    """A copy of ``x`` with the tokens ``start .. stop - 1`` set to zero."""
    edited = x.copy()
    edited[start:stop] = 0.0
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
            Mistake(
                "you returned one change per feature (a max over the tokens only): the "
                "answer is one number, the largest change over every output 0 .. t and "
                "every feature",
                lambda attend, x, t: _future_moved(attend, x, t).max(axis=0),
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
                "you also edited token t itself: the future starts at t + 1 "
                "(edited[t + 1:] = 0). Output t may depend on token t",
                lambda attend, x, t: _change(attend, x, t, edit_from=t, upto=t + 1),
            ),
            Mistake(
                "you compared every output, including the edited positions after t, which "
                "may change; compare the outputs 0 .. t only (out[: t + 1])",
                lambda attend, x, t: _change(attend, x, t, edit_from=t + 1, upto=x.shape[0]),
            ),
            Mistake(
                "you compared the outputs before t only; output t itself must not change "
                "either: out[: t + 1]",
                lambda attend, x, t: _change(attend, x, t, edit_from=t + 1, upto=t),
            ),
            Mistake(
                "you compared only output t; an earlier output can leak too (here token 0 "
                "sees everything): compare all of out[: t + 1]",
                lambda attend, x, t: float(np.max(_future_moved(attend, x, t)[t])),
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
    return FUTURE_CHANGE.check(fn)


# --- prediction questions -------------------------------------------------------------------

FILL_LEAK = GRADERS.add(
    Question(
        name="fill_leak",
        answer=0.5,
        atol=0.02,
        explanation="10000 + (-10000) = 0, exactly the visible key's score: the two keys tie "
        "and share the weight equally. A finite fill masks only when it dwarfs every score; "
        "-inf always does",
        wrong=(
            (
                0.0,
                "a fill of -1e4 is only 'very negative' next to small scores: added to a "
                "masked score of 10000 it gives 0, the same as the visible key's score (a tie)",
            ),
            (
                1 / (1 + math.e),
                "after the fill the masked key's score is 10000 - 10000 = 0: the same as the "
                "visible key's, a tie, not a difference of 1",
            ),
            (
                1.0,
                "after the fill the masked key's score is 10000 - 10000 = 0, not 10000: it "
                "no longer dominates, it ties with the visible key",
            ),
        ),
        hint="compute the masked key's score after adding the fill, then the softmax of two scores",
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
        atol=0.01,
        explanation="every score of the row becomes -1e9, so all four are equal and the "
        "softmax spreads the weight evenly: 1/4 each. The output is the plain average of the "
        "(padding) values: silently wrong, which is why the course returns zeros there",
        wrong=(
            (
                0.0,
                "that is the course's rule for such a row, but a plain -1e9 fill does not "
                "implement it: four equal scores give equal weights",
            ),
            (
                1.0,
                "the weights of a row still sum to 1 and are shared by four equal scores",
            ),
            (
                0.2,
                "the row has four keys, not five: count the keys of the mask's row",
            ),
            (
                1 / 3,
                "all four keys are masked, and all four get the same score after the fill",
            ),
        ),
        hint="after the fill, what do the four scores of the row have in common?",
    )
)


def check_blind_row(answer: Any) -> CheckResult:
    """Check the predicted weight of each key in a fully masked row filled with -1e9.

    Taught in: chapters/06_masking.ipynb (exercise in exercises/06_masking.ipynb)
    """
    return BLIND_ROW.check(answer)


summary = GRADERS.summary
"""``summary()``: the score table of every chapter 6 exercise, checked or not."""
