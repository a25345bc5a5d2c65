"""Graders for chapter 7's exercises: LayerNorm, the feed-forward network, both blocks, decoding.

Each grader compares the learner's code with a reference on seeded cases and knows the
planted mistakes beginners make (see :mod:`attnlab.grading.pipeline`). The references are
PyTorch's own layers where PyTorch has one (``F.layer_norm``, ``nn.TransformerEncoderLayer``,
``nn.TransformerDecoderLayer``) and the course's tested code otherwise
(:class:`~attnlab.mechanism.transformer.FeedForward`, :func:`~attnlab.mechanism.decoding.greedy_decode`,
:func:`~attnlab.tasks.training.sequence_loss`).

Four exercises hand in something other than a function of arrays, and are graded through
the adapter of :mod:`attnlab.grading.modules`, which turns it into one
(``run(learner, *inputs)``):

- ``encoder_block`` and ``decoder_block``: the learner's ``nn.Module`` class. The adapter
  builds a seeded PyTorch layer (random weights, biases and LayerNorm gains, so that a
  swapped or skipped part shows), builds the learner's class with the same sizes, copies
  the weights in with :func:`~attnlab.mechanism.interop.copy_torch_weights` and runs it;
- ``greedy_decode`` and ``training_loss``: the learner's function of a model. The adapter
  builds a small seeded :class:`~attnlab.mechanism.transformer.EncoderDecoder` (float64) and calls
  the function on it.

Taught in: exercises/07_transformer.ipynb
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ..mechanism.config import TransformerConfig
from ..mechanism.decoding import greedy_decode as _greedy_decode
from ..mechanism.interop import copy_torch_weights
from ..mechanism.multihead import MultiHeadAttention
from ..mechanism.transformer import EncoderDecoder, FeedForward, LayerNorm
from ..tasks.data import BOS_ID, EOS_ID, PAD_ID
from ..tasks.training import sequence_loss
from .forensics import call_quietly
from .gradients import Recorder, cut_by, require_gradient
from .modules import adapt, check_class, check_function, memoised, seed_cpu
from .pipeline import Grader
from .questions import Question, _decimals
from .registry import ChapterGraders
from .results import CheckResult
from .specs import AnswerProblem, Case, Mistake, Property
from .status import NO_GRADIENT, WRONG_TYPE, WRONG_VALUES

__all__ = [
    "GRADERS",
    "check_block_parameters",
    "check_decoder_block",
    "check_encoder_block",
    "check_feed_forward",
    "check_final_norm",
    "check_greedy_decode",
    "check_initial_loss",
    "check_layer_norm",
    "check_training_loss",
    "summary",
]

GRADERS = ChapterGraders(__name__, mutants_reviewed=True)
"""Chapter 7's exercises, in the order of the notebook."""


def _randn(g: torch.Generator, *shape: int, scale: float = 1.0) -> torch.Tensor:
    return scale * torch.randn(*shape, generator=g, dtype=torch.float64)


# ---- 7.1 LayerNorm ---------------------------------------------------------------------


def _layer_norm_cases() -> tuple[Case, ...]:
    g = torch.Generator().manual_seed(7)

    def inputs(shape: tuple[int, ...], loc: float = 0.0, spread: float = 1.0) -> dict:
        D = shape[-1]
        return {
            "x": loc + _randn(g, *shape, scale=spread),
            "gamma": 1.0 + _randn(g, D, scale=0.5),
            "beta": _randn(g, D, scale=0.5),
        }

    constant = inputs((1, 3, 6), loc=2.0, spread=3.0)
    constant["x"][0, 1] = 3.7  # one token whose features are all equal: variance 0
    return (
        Case("one sentence, B=1, T=4, D=8", inputs((1, 4, 8))),
        Case("off-centre and wide, B=2, T=3, D=16", inputs((2, 3, 16), loc=3.0, spread=5.0)),
        Case("a token of equal features", constant),
        Case("tokens without a batch axis, T=5, D=4", inputs((5, 4), loc=-1.0, spread=0.1)),
        Case("eps = 0.1, B=2, T=2, D=6", inputs((2, 2, 6), spread=0.3), {"eps": 0.1}),
    )


def _reference_layer_norm(x, gamma, beta, eps=1e-5):
    return F.layer_norm(x, (x.shape[-1],), gamma, beta, eps)  # PyTorch's own


def _ln(
    axis: Any = -1,
    correction: int = 0,
    eps_inside: bool = True,
    root: bool = True,
    centre: bool = True,
    affine: str = "after",
    fixed_eps: float | None = None,
) -> Callable[..., torch.Tensor]:
    """A LayerNorm with one planted difference (``fixed_eps``: a constant for ``eps``)."""

    def layer_norm(x, gamma, beta, eps=1e-5):
        if fixed_eps is not None:
            eps = fixed_eps
        if affine == "before":
            x = gamma * x + beta
        dims = tuple(range(x.ndim)) if axis == "all" else axis
        mu = x.mean(dim=dims, keepdim=True)
        var = x.var(dim=dims, keepdim=True, correction=correction)
        spread = (var + eps).sqrt() if eps_inside else var.sqrt() + eps
        if not root:
            spread = var + eps
        x_hat = ((x - mu) if centre else x) / spread
        if affine == "swapped":
            return beta * x_hat + gamma
        if affine in ("none", "before"):
            return x_hat
        return gamma * x_hat + beta

    return layer_norm


def _rms_norm(x, gamma, beta, eps=1e-5):
    return gamma * x / ((x**2).mean(dim=-1, keepdim=True) + eps).sqrt() + beta


def _ln_no_eps(x, gamma, beta, eps=1e-5):
    mu = x.mean(dim=-1, keepdim=True)
    sd = x.var(dim=-1, keepdim=True, correction=0).sqrt()
    return gamma * (x - mu) / sd + beta


LAYER_NORM = GRADERS.add(
    Grader(
        name="layer_norm",
        signature="layer_norm(x, gamma, beta, eps=1e-5) with x: (..., D) -> (..., D)",
        reference=_reference_layer_norm,
        cases=_layer_norm_cases(),
        mistakes=(
            Mistake(
                "your mean and variance run over the tokens (axis -2), not over each "
                "token's own features: LayerNorm normalises every token on its own, so "
                "its statistics come from the last axis only",
                _ln(axis=-2),
            ),
            Mistake(
                "your mean and variance run over axis 0, not over each token's own "
                "features: on a (B, T, D) batch axis 0 is the batch (with B = 1 every entry "
                "is its own mean), on (T, D) the tokens; LayerNorm normalises every token on "
                "its own, so its statistics come from the last axis, dim=-1",
                _ln(axis=0),
            ),
            Mistake(
                "that is RMSNorm, not LayerNorm: you divide by the root mean square of the "
                "features, but never subtract their mean; LayerNorm centres each token first "
                "(x minus its mean), then divides by the standard deviation",
                _rms_norm,
            ),
            Mistake(
                "your variance is the mean of x², not of (x - mean)²: you centre the "
                "numerator but divide by the root mean square of the raw features "
                "(RMSNorm's statistic); the variance is the mean of the squared deviations "
                "from the mean",
                lambda x, gamma, beta, eps=1e-5: (
                    gamma
                    * (x - x.mean(dim=-1, keepdim=True))
                    / ((x**2).mean(dim=-1, keepdim=True) + eps).sqrt()
                    + beta
                ),
            ),
            Mistake(
                "your mean and variance run over axis 1, not over each token's own "
                "features: on a (B, T, D) batch axis 1 is the tokens; LayerNorm normalises "
                "every token on its own, so its statistics come from the last axis, "
                "dim=-1, whatever the number of axes",
                _ln(axis=1),
            ),
            *(
                Mistake(
                    f"your eps is a constant ({eps:g}), not the `eps` argument: the "
                    "difference shows where a token's variance is small; use the argument "
                    "(1e-5 by default, nn.LayerNorm's value; 1e-6 and 1e-12 are other "
                    "libraries')",
                    _ln(fixed_eps=eps),
                )
                for eps in (1e-3, 1e-6, 1e-8, 1e-12)
            ),
            Mistake(
                "your mean and variance are taken over the whole tensor at once: then one "
                "token's output depends on every other token of the batch, which is "
                "exactly what LayerNorm avoids; each token gets its own statistics",
                _ln(axis="all"),
            ),
            Mistake(
                "you used the unbiased variance (dividing by D - 1; torch.var and "
                "Tensor.std do this by default): LayerNorm, like nn.LayerNorm, divides by D",
                _ln(correction=1),
            ),
            Mistake(
                "eps is added to the standard deviation, outside the square root: in "
                "LayerNorm it is added to the variance, under the root; the difference "
                "is small but shows, most with a large eps",
                _ln(eps_inside=False),
            ),
            Mistake(
                "there is no eps: a token whose features are all equal has variance 0, "
                "and dividing by its zero standard deviation gives inf or NaN; eps is "
                "there to keep that division finite",
                _ln_no_eps,
            ),
            Mistake(
                "you divided by the variance, not by the standard deviation: the result "
                "does not have unit spread (the square root is missing)",
                _ln(root=False),
            ),
            Mistake(
                "you did not subtract the mean: dividing by the standard deviation alone "
                "rescales the token but leaves it off-centre",
                _ln(centre=False),
            ),
            Mistake(
                "gamma and beta are swapped: gamma is the gain that multiplies the "
                "normalised features, beta the shift added after",
                _ln(affine="swapped"),
            ),
            Mistake(
                "gamma and beta are not applied: the output is the normalised token, "
                "without the learned gain and shift",
                _ln(affine="none"),
            ),
            Mistake(
                "gamma and beta act before the normalisation, so it undoes most of them: "
                "they must rescale and shift the normalised features",
                _ln(affine="before"),
            ),
            Mistake(
                "gamma multiplies x before the mean is subtracted, (gamma·x - mean) / σ: "
                "gamma scales the normalised features, after centring and dividing",
                lambda x, gamma, beta, eps=1e-5: (
                    (gamma * x - x.mean(dim=-1, keepdim=True))
                    / (x.var(dim=-1, keepdim=True, correction=0) + eps).sqrt()
                    + beta
                ),
            ),
            *(
                Mistake(
                    "your variance divides the summed squared deviations by a count that is "
                    f"not D: `x.shape[{axis}]` is the number of tokens of a (B, T, D) batch; "
                    "the count is the number of features of one token, the size of the last "
                    "axis",
                    lambda x, gamma, beta, eps=1e-5, axis=axis: (
                        gamma
                        * (x - x.mean(dim=-1, keepdim=True))
                        / (
                            ((x - x.mean(dim=-1, keepdim=True)) ** 2).sum(dim=-1, keepdim=True)
                            / x.shape[axis]
                            + eps
                        ).sqrt()
                        + beta
                    ),
                )
                for axis in (1, -2)
            ),
            Mistake(
                "your mean is each token's own, but your variance is taken over the whole "
                "tensor at once (no dim given), so every token is divided by the same "
                "number: the variance, like the mean, runs over each token's features",
                lambda x, gamma, beta, eps=1e-5: (
                    gamma * (x - x.mean(dim=-1, keepdim=True)) / (x.var(correction=0) + eps).sqrt()
                    + beta
                ),
            ),
        ),
        hint="for each token: the mean and the biased variance over its D features (the "
        "last axis), then the equation's normalisation and scale, step by step; compare each "
        "step with the statement's formula (the chapter's section \"Layer normalisation\")",
        equivalent=(
            (
                "swap: x - mu in var = ((x - mu) ** 2).mean(dim=-1, keepdim=True) -> mu - x",
                "the deviation is squared: (mu - x)² = (x - mu)²",
            ),
        ),
        error_hints=(
            (
                "keepdim",
                "reduce with keepdim=True so that the (…, 1) statistics broadcast "
                "against the (…, D) token",
            ),
        ),
    )
)


def check_layer_norm(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, gamma, beta, eps=1e-5)``: LayerNorm over the last axis, as ``nn.LayerNorm``.

    Taught in: chapters/07_transformer.ipynb (exercise in exercises/07_transformer.ipynb)
    """
    return LAYER_NORM.check(fn)


# ---- 7.2 the feed-forward network -------------------------------------------------------


def _ffn_cases() -> tuple[Case, ...]:
    g = torch.Generator().manual_seed(72)

    def inputs(shape: tuple[int, ...], d_ff: int) -> dict:
        D = shape[-1]
        return {
            "x": _randn(g, *shape),
            "W_1": _randn(g, D, d_ff, scale=D**-0.5),
            "b_1": _randn(g, d_ff, scale=0.5),
            "W_2": _randn(g, d_ff, D, scale=d_ff**-0.5),
            "b_2": _randn(g, D, scale=0.5),
        }

    return (
        Case("B=1, T=3, D=4, d_ff=8", inputs((1, 3, 4), 8)),
        Case("B=2, T=5, D=8, d_ff=32", inputs((2, 5, 8), 32)),
        Case("tokens without a batch axis, T=4, D=6, d_ff=12", inputs((4, 6), 12)),
        Case("d_ff = D = 5", inputs((2, 2, 5), 5)),
    )


def _reference_ffn(x, W_1, b_1, W_2, b_2):
    """The course's layer with these weights (``nn.Linear`` stores W_1ᵀ, W_2ᵀ), run with
    ``functional_call`` so that the output stays differentiable in every argument and the
    check compares gradients too (a NumPy detour cuts them)."""
    D, d_ff = W_1.shape
    ffn = FeedForward(D, d_ff).double()
    weights = {
        "linear1.weight": W_1.T,  # (d_ff, D)
        "linear1.bias": b_1,
        "linear2.weight": W_2.T,  # (D, d_ff)
        "linear2.bias": b_2,
    }
    return torch.func.functional_call(ffn, weights, (x,))


def _ffn(
    act: Callable[[torch.Tensor], torch.Tensor] = torch.relu,
    bias_after: bool = False,
    out_act: bool = False,
    b2: bool = True,
    residual: bool = False,
    where: str = "hidden",
) -> Callable[..., torch.Tensor]:
    def feed_forward(x, W_1, b_1, W_2, b_2):
        if where == "input":
            return (act(x) @ W_1 + b_1) @ W_2 + b_2
        if where == "before b_2":
            return act((x @ W_1 + b_1) @ W_2) + b_2
        h = act(x @ W_1) + b_1 if bias_after else act(x @ W_1 + b_1)
        y = h @ W_2 + (b_2 if b2 else 0.0)
        if out_act:
            y = torch.relu(y)
        return x + y if residual else y

    return feed_forward


FEED_FORWARD = GRADERS.add(
    Grader(
        name="feed_forward",
        signature="feed_forward(x, W_1, b_1, W_2, b_2) with x: (..., D), W_1: (D, d_ff), "
        "W_2: (d_ff, D) -> (..., D)",
        reference=_reference_ffn,
        cases=_ffn_cases(),
        mistakes=(
            Mistake(
                "there is no non-linearity between the two layers: two linear maps in a "
                "row are one linear map, and the block would add no computation that "
                "attention's weighted averages lack",
                _ffn(act=lambda h: h),
            ),
            Mistake(
                "clamp(h, max=0) is min(h, 0): it keeps the negative half and zeroes the "
                "positive one, the opposite of ReLU, max(0, h), which keeps what is above 0",
                _ffn(act=lambda h: h.clamp(max=0)),
            ),
            Mistake(
                "you used GELU: BERT and GPT do, but this block (like the paper and "
                "nn.TransformerEncoderLayer's default) uses ReLU, max(0, ·)",
                _ffn(act=F.gelu),
            ),
            Mistake(
                "the output goes through ReLU too: only the hidden layer has the "
                "non-linearity; the output is added to the residual stream and must be "
                "able to be negative",
                _ffn(out_act=True),
            ),
            Mistake(
                "b_1 is added after the ReLU: the bias belongs to the first linear map, "
                "inside the max(0, ·)",
                _ffn(bias_after=True),
            ),
            Mistake("b_2 is missing: the second linear map has its bias too", _ffn(b2=False)),
            Mistake(
                "you added the input back (x + FFN(x)): the residual connection belongs "
                "to the block, which adds the FFN's output to the stream; the FFN itself "
                "returns only its own output",
                _ffn(residual=True),
            ),
            Mistake(
                "your ReLU is on the output, not on the hidden layer: the non-linearity "
                "sits between the two linear maps, on x W_1 + b_1; the output stays linear "
                "(it may be negative)",
                _ffn(act=lambda h: h, out_act=True),
            ),
            Mistake(
                "you multiplied by W_2ᵀ first and W_1ᵀ second, as if they were nn.Linear "
                "weights (stored (out, in)): these are plain matrices laid out as in the "
                "equation, x W_1 (D -> d_ff) then W_2 (d_ff -> D), no transpose",
                lambda x, W_1, b_1, W_2, b_2: torch.relu(x @ W_2.T + b_1) @ W_1.T + b_2,
            ),
            Mistake(
                "W_2 is transposed: the hidden layer is (…, d_ff) and W_2 is already "
                "(d_ff, D), laid out as in the equation; the second product needs no "
                "transpose (nn.Linear stores its weight the other way round, these are plain "
                "matrices)",
                lambda x, W_1, b_1, W_2, b_2: torch.relu(x @ W_1 + b_1) @ W_2.T + b_2,
            ),
            Mistake(
                "W_1 is transposed: x is (…, D) and W_1 is already (D, d_ff), laid out as in "
                "the equation; the first product needs no transpose (nn.Linear stores its "
                "weight the other way round, these are plain matrices)",
                lambda x, W_1, b_1, W_2, b_2: torch.relu(x @ W_1.T + b_1) @ W_2 + b_2,
            ),
            Mistake(
                "W_1 and W_2 are both transposed (as with nn.Linear's weights, stored "
                "(out, in)): these are plain matrices laid out as in the equation, x W_1 "
                "then W_2, no transpose",
                lambda x, W_1, b_1, W_2, b_2: torch.relu(x @ W_1.T + b_1) @ W_2.T + b_2,
            ),
            Mistake(
                "the biases are swapped: b_2 (D numbers) is added to the hidden layer, which "
                "has d_ff features, and b_1 (d_ff numbers) to the output, which has D; each "
                "bias goes with its own linear map (the sizes only meet when d_ff = D)",
                lambda x, W_1, b_1, W_2, b_2: torch.relu(x @ W_1 + b_2) @ W_2 + b_1,
            ),
            Mistake(
                "a parenthesis is misplaced: `@` binds tighter than `+`, so W_2 multiplies "
                "b_1 alone and the ReLU wraps the whole sum; the second linear map acts on "
                "the hidden layer, after the ReLU, which closes after b_1",
                lambda x, W_1, b_1, W_2, b_2: torch.relu(x @ W_1 + b_1 @ W_2 + b_2),
            ),
            Mistake(
                "your ReLU acts on the input x, not on the hidden layer x W_1 + b_1: the "
                "non-linearity sits between the two linear maps",
                _ffn(where="input"),
            ),
            Mistake(
                "your ReLU comes after the second matrix (before b_2): max(0, ·) acts on "
                "the hidden layer x W_1 + b_1, before W_2",
                _ffn(where="before b_2"),
            ),
            *(
                Mistake(
                    "you used a leaky ReLU (negative inputs scaled, not zeroed): the "
                    "formula is max(0, ·), which sets every negative to exactly 0",
                    _ffn(act=lambda h, slope=slope: F.leaky_relu(h, slope)),
                )
                for slope in (0.01, 0.1, 0.2)
            ),
            *(
                Mistake(
                    f"you used {name} where the formula has ReLU, max(0, ·): this block's "
                    "non-linearity keeps every positive input as it is and sets every "
                    "negative one to exactly 0",
                    _ffn(act=act),
                )
                for name, act in (
                    ("a sigmoid", torch.sigmoid),
                    ("softplus (a smooth ReLU)", F.softplus),
                    ("SiLU (x·sigmoid(x), also called swish)", F.silu),
                    ("ELU", F.elu),
                    ("softsign", F.softsign),
                    ("hardtanh (a clamp to [-1, 1])", F.hardtanh),
                )
            ),
        ),
        hint="two linear maps with a non-linearity between them, the same for every token; "
        "which one is it, and where do the biases go? (the chapter's section "
        '"The position-wise feed-forward network")',
        error_hints=(
            (
                "torch.return_types.max",
                "torch.max(h, 0) does not compare h with 0: its second argument is a dim, so "
                "it reduces along axis 0 and returns a (values, indices) pair; for max(0, ·) "
                "entry by entry compare with a tensor of zeros, or use ReLU itself",
            ),
            (
                "maximum(): argument 'other'",
                "torch.maximum compares two tensors elementwise, not a tensor with the "
                "number 0: for max(0, h) use torch.relu(h), h.clamp(min=0), or "
                "torch.maximum(h, torch.zeros_like(h))",
            ),
            (
                "cannot be multiplied",
                "a product whose sizes do not meet: x is (…, D), W_1 (D, d_ff), the hidden "
                "layer (…, d_ff) and W_2 (d_ff, D), all as given, so neither matrix needs a "
                "transpose (nn.Linear stores its weight the other way round, but these are "
                "plain matrices); the error's line shows which product",
            ),
        ),
    )
)


def check_feed_forward(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, W_1, b_1, W_2, b_2)``: the position-wise feed-forward network.

    Taught in: chapters/07_transformer.ipynb (exercise in exercises/07_transformer.ipynb)
    """
    return FEED_FORWARD.check(fn)


# ---- 7.3 predict: the parameters of a block ---------------------------------------------

_D, _F = 768, 3072
_ATTN = 4 * _D * _D + 4 * _D
_FFN = 2 * _D * _F + _F + _D
_BLOCK = _ATTN + _FFN + 2 * 2 * _D  # 7,087,872


def _block_reason(given: float) -> str | None:
    """A count of 7.3 that no listed mistake explains, read from its distance to the right
    one: whole vectors of D = 768 (a bias, a LayerNorm's γ or β), a multiple of one head's
    64 (something counted per head), or a slip in the arithmetic."""
    if given != int(given) or given <= 0:
        return None
    off = int(given) - _BLOCK
    more = "too many" if off > 0 else "too few"
    vectors, left = divmod(abs(off), _D)
    if left == 0 and 1 <= vectors <= 12:
        return (
            f"your count is {abs(off):,} = {vectors} x 768 {more}: {vectors} vector"
            f"{'s' * (vectors > 1)} of D = 768 numbers (a bias of the model's width, or a "
            f"LayerNorm's γ or β) {'counted where the block has none' if off > 0 else 'left out'}"
            ": list each bias and each LayerNorm's vectors with their sizes and count them again"
        )
    heads, left = divmod(abs(off), _D // 12)
    if left == 0 and heads <= 12 * 8:
        return (
            f"your count is {abs(off):,} = {heads} x 64 {more}: a multiple of one head's "
            "size, 64, as if something were counted per head; the 12 heads share the four "
            "768 x 768 projections and their biases, and no part of the block is per head"
        )
    if abs(off) < 100:
        return (
            f"your count is {abs(off)} {more}, far less than any part of the block (its "
            "smallest part, a bias, has 768 numbers): what you counted is right, the "
            "arithmetic slipped. Work out each term again, then add"
        )
    if abs(off) <= 0.02 * _BLOCK:
        return (
            f"your count is an exact integer, {abs(off):,} {more}: look for a term of "
            "about that size (a bias has 768 or 3072 numbers, a LayerNorm 2·768) that is "
            "missing, counted twice, or of the wrong size"
        )
    return None


BLOCK_PARAMETERS = GRADERS.add(
    Question(
        name="block_parameters",
        answer=_BLOCK,
        atol=0.5,
        explanation=f"attention 4·768² + 4·768 = {_ATTN:,}; feed-forward 2·768·3072 + "
        f"3072 + 768 = {_FFN:,}; two LayerNorms 2·2·768 = 3,072. Total {_BLOCK:,}: two "
        "thirds of it in the feed-forward network, and none of it depends on the 12 heads.",
        wrong=(
            (
                _ATTN + _FFN,
                "that is 4·768 short, which fits two slips: it leaves out the two LayerNorms "
                "(γ and β: 2·768 numbers each), or it leaves out the attention's four biases "
                "(one of 768 per projection, W_q, W_k, W_v and W_o); check which of the two "
                "your sum is missing",
            ),
            (
                4 * _D * _D + 2 * _D * _F,
                "that counts the weight matrices only: add the biases and the LayerNorms",
            ),
            (
                12 * _ATTN + _FFN + 4 * _D,
                "that gives every head its own 768 x 768 matrices; the 12 heads of 64 "
                "share the four 768 x 768 projections between them",
            ),
            (
                2 * _ATTN + _FFN + 6 * _D,
                "that is a decoder block (self- and cross-attention, three LayerNorms); "
                "an encoder block has one attention layer and two LayerNorms",
            ),
            (
                12 * _BLOCK,
                "that is the whole 12-block encoder: the question asks for one block",
            ),
            (
                _ATTN,
                "that is the attention layer alone: the block also holds the feed-forward "
                "network and two LayerNorms",
            ),
            (
                _ATTN + _D * _F + _F + 4 * _D,
                "that counts one matrix of the feed-forward network: it has two, "
                "768 -> 3072 and 3072 -> 768",
            ),
            (
                4 * _D * _D + 2 * _D * _F + 4 * _D,
                "that leaves out exactly the biases (one per attention projection, one per "
                "layer of the feed-forward network); the LayerNorms are there, the biases "
                "are not",
            ),
            (
                _BLOCK - _D * _D - _D,
                "that leaves out one 768 x 768 matrix and its bias: the attention layer has "
                "four projections, W_q, W_k, W_v and the output projection W_o",
            ),
            (
                4 * _D * _D + 2 * _D * _F + 2 * _D,
                "that leaves out every bias vector (4·768 for the attention's projections, 3072 + 768 for "
                "the feed-forward network, and the LayerNorms' β, 2·768): count the weight "
                "matrices, then each bias vector, then γ and β of both LayerNorms",
            ),
            (
                _BLOCK - _D * _F,
                "that leaves out one matrix of the feed-forward network: it has two, W_1 "
                "(768 x 3072) and W_2 (3072 x 768)",
            ),
            (
                _BLOCK / 1e6,
                "that looks like the count in millions: the question asks for the exact "
                "number of parameters, an integer with every digit",
            ),
            (
                _BLOCK - 2 * _D,
                "that is 2·768 short, which fits two slips: it leaves out one LayerNorm "
                "(a block has two, one per sub-layer), or it counts each LayerNorm as one "
                "vector of 768 where it has two, γ and β",
            ),
            (
                _BLOCK - _F + _D,
                "that is 3·768 short, which fits two slips: b_1 given the model's width (b_1 "
                "belongs to the hidden layer, so it has d_ff entries, b_2 has D), or "
                "LayerNorms three vectors short (two LayerNorms with γ and β each: four "
                "vectors of 768 in all)",
            ),
            (
                _BLOCK + _F - _D,
                "that is 3·768 too many, which fits two slips: b_2 given d_ff entries (b_2 "
                "belongs to the output layer, so it has D, like the block's output), or "
                "biases counted per head (12 x 64 for each of three projections: the heads "
                "share the projections, and their biases, of width 768)",
            ),
            (
                _BLOCK - _D,
                "one vector of 768 is missing: a bias of the model's width (b_2 of the "
                "feed-forward network, or one projection's bias) or one LayerNorm's γ or β; "
                "count the biases and the LayerNorms' vectors one by one",
            ),
            (
                4 * _D * (_D // 12) + 4 * (_D // 12) + _FFN + 4 * _D,
                "that gives each projection 768 x 64 entries, one head's slice: W_q, W_k, "
                "W_v and W_o are 768 x 768 each, and the 12 heads share them",
            ),
        ),
        near=0.02,
        near_rounding=True,
        near_hint="close, but rounded: the question asks for the exact count, an integer: "
        "every weight, every bias and both LayerNorms, counted one by one",
        reason=_block_reason,
        hint="add the attention layer (chapter 4), the two matrices and two biases of the "
        "feed-forward network, and γ and β of each LayerNorm",
    )
)


def check_block_parameters(answer: Any) -> CheckResult:
    """Check a predicted parameter count of one BERT-base encoder block (D=768, d_ff=3072).

    Taught in: chapters/07_transformer.ipynb (exercise in exercises/07_transformer.ipynb)
    """
    return BLOCK_PARAMETERS.check(answer)


# ---- shared by the two blocks -------------------------------------------------------------


def _randomise(layer: nn.Module, seed: int) -> nn.Module:
    """Random weights, biases and LayerNorm gains: a missing or swapped part changes the output."""
    g = torch.Generator().manual_seed(1000 + seed)
    with torch.no_grad():
        for name, p in layer.named_parameters():
            if p.ndim == 2:
                p.copy_(_randn(g, *p.shape, scale=p.shape[1] ** -0.5))
            elif name.startswith("norm") and name.endswith("weight"):
                p.copy_(1.0 + _randn(g, *p.shape, scale=0.3))
            else:
                p.copy_(_randn(g, *p.shape, scale=0.3))
    return layer


def _torch_layer(kind: type, d_model: int, n_heads: int, d_ff: int, norm_first: bool, seed: int):
    with torch.random.fork_rng(devices=[]):  # the notebook's own random numbers untouched
        layer = kind(
            d_model,
            n_heads,
            d_ff,
            dropout=0.0,
            batch_first=True,
            norm_first=norm_first,
            dtype=torch.float64,
        )
    return _randomise(layer, seed).train()  # train mode (dropout 0): the plain code path


def _key_ignore(mask: torch.Tensor | None) -> torch.Tensor | None:
    """Our ``(B, 1, 1, S)`` padding mask (True = may attend) as PyTorch's ``(B, S)`` (True = ignore)."""
    return None if mask is None else ~mask.reshape(mask.shape[0], mask.shape[-1])


def _build(cls: Any, d_model: int, n_heads: int, d_ff: int, norm_first: bool, theirs: nn.Module):
    ours = cls(d_model, n_heads, d_ff, norm_first=norm_first)
    ours = ours.to(torch.float64)
    copy_torch_weights(ours, theirs)
    return ours


_BUILD_HINTS = (
    (
        "has no ",
        "keep the __init__ of the exercise: the checker copies PyTorch's weights into "
        "the parts named self_attn, ffn and norm1, norm2 (and cross_attn, norm3)",
    ),
    (
        "positional argument",
        "keep the signatures of the exercise: __init__(self, d_model, n_heads, d_ff, "
        "norm_first=False) and forward as given",
    ),
    (
        "before Module.__init__() call",
        "call super().__init__() first in __init__",
    ),
)


# ---- 7.4 the encoder block ---------------------------------------------------------------


def _encoder_cases() -> tuple[Case, ...]:
    g = torch.Generator().manual_seed(74)
    pad = torch.tensor([[True] * 5, [True] * 3 + [False] * 2]).reshape(2, 1, 1, 5)
    specs = [
        ("post-LN, B=2, T=5, D=8, 2 heads", (2, 5, 8, 2, 16), False, None),
        ("pre-LN, B=2, T=5, D=8, 2 heads", (2, 5, 8, 2, 16), True, None),
        ("post-LN with a padding mask, D=12, 3 heads", (2, 5, 12, 3, 24), False, pad),
        ("pre-LN with a padding mask, D=12, 3 heads", (2, 5, 12, 3, 24), True, pad),
        ("pre-LN, one head, B=1, T=3, D=6", (1, 3, 6, 1, 12), True, None),
    ]
    return tuple(
        Case(
            label,
            {
                "x": _randn(g, B, T, D),
                "mask": mask,
                "n_heads": H,
                "d_ff": d_ff,
                "norm_first": norm_first,
                "seed": i,
            },
        )
        for i, (label, (B, T, D, H, d_ff), norm_first, mask) in enumerate(specs)
    )


def _with_gradient(block: nn.Module, forward: Callable[[], Any]) -> Any:
    """The block's output, checked to carry a gradient back to its weights (then detached).

    A block's output that is a tensor without a graph (a ``.detach()``, a NumPy detour, a
    ``torch.no_grad()`` inside ``forward``) could not be trained: that is reported as the
    learner's answer (:class:`~.specs.AnswerProblem`), not compared. So is a sub-layer
    whose weights get no gradient because the graph was cut on the way (a sub-layer left
    out altogether is a wrong value, diagnosed as such).
    """
    recorder = Recorder()
    with recorder:
        out = forward()
    if not (isinstance(out, torch.Tensor) and out.is_floating_point()):
        return out
    require_gradient(out, "the block's output", recorder)
    if recorder.cuts:
        out.sum().backward(retain_graph=False)
        for name, part in block.named_children():
            if any(p.grad is None for p in part.parameters()):
                raise AnswerProblem(
                    NO_GRADIENT,
                    f"no gradient reaches the weights of `self.{name}`",
                    f"`self.{name}`'s output was cut from the computation by "
                    f"{cut_by(recorder)}: the block's output has the right numbers but "
                    "training could not update that sub-layer; keep every step in torch",
                )
    return out.detach()


def _run_encoder(cls, x, mask, n_heads, d_ff, norm_first, seed):
    theirs = _torch_layer(nn.TransformerEncoderLayer, x.shape[-1], n_heads, d_ff, norm_first, seed)
    with torch.random.fork_rng(devices=[]):  # building layers draws random weights
        ours = _build(cls, x.shape[-1], n_heads, d_ff, norm_first, theirs)
    return _with_gradient(ours, lambda: ours(x, mask))


@memoised
def _reference_encoder(x, mask, n_heads, d_ff, norm_first, seed):
    theirs = _torch_layer(nn.TransformerEncoderLayer, x.shape[-1], n_heads, d_ff, norm_first, seed)
    with torch.no_grad():
        return theirs(x, src_key_padding_mask=_key_ignore(mask))


class _EncoderParts(nn.Module):
    """The parts of an encoder block, named as the exercise's (and the lib's)."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, norm_first: bool = False) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads)
        self.ffn = FeedForward(d_model, d_ff)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)


def _bug(block: Any) -> str:
    """The planted bug of ``block``, or ``""`` in the placement its ``only`` leaves out."""
    only = {"": None, "post": False, "pre": True}[block.only]
    return block.bug if only is None or only == block.norm_first else ""


def _swapped_affine(norm: LayerNorm) -> Callable[[torch.Tensor], torch.Tensor]:
    """``norm`` with its gain and shift exchanged: γ/β swapped when the LayerNorm is called."""

    def swapped(x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, (x.shape[-1],), norm.beta, norm.gamma, norm.eps)

    return swapped


def _plain_norm(t: torch.Tensor) -> torch.Tensor:
    """A LayerNorm without its γ and β (``F.layer_norm(t, (D,))``)."""
    return F.layer_norm(t, (t.shape[-1],))


def _stale(sub_layer: str) -> str:
    """A pre-LN sub-layer that reads the stream from before the previous residual."""
    return (
        f"in your pre-LN block the {sub_layer} reads a stale tensor, the stream (or its "
        "normalised copy) from before the previous sub-layer's residual was added: it must "
        "read the stream as the previous sub-layer left it, x after `x = x + ...`, through "
        "its own LayerNorm"
    )


def _sum_not_normalised(sub_layer: str, norm: str) -> str:
    """A post-LN sub-layer whose residual sum skips its LayerNorm."""
    return (
        f"in your post-LN block the {sub_layer} sub-layer's residual sum is never "
        "normalised: post-LN passes each sub-layer's sum, x + sub-layer(x), through that "
        f"sub-layer's own LayerNorm ({norm})"
    )


_NORM_ON_RESIDUAL_INPUT = (
    "your post-LN block normalises only the stream that the residual carries, "
    "norm(x) + sub-layer(x): post-LN adds the sub-layer's output to the stream first and "
    "then normalises the sum"
)

_RESIDUAL_DOUBLED = (
    "in your pre-LN block each residual adds both the stream and its normalised copy, "
    "x + norm(x) + sub-layer(norm(x)): the normalised copy only feeds the sub-layer, and "
    "only the sub-layer's output is added to the stream"
)

_SUBLAYER_BUGS = (
    (
        "your LayerNorms have no γ and β: a normalisation such as `F.layer_norm(t, shape)` "
        "without weight and bias (or one written by hand) leaves out the learned gain and "
        "shift of the block's own LayerNorm modules (norm1, norm2, ...), which hold them",
        "no affine",
    ),
    (
        "your LayerNorm has γ and β swapped: β multiplies the normalised features and γ is "
        "added (a call such as layer_norm(t, norm.beta, norm.gamma)); γ is the gain, β the "
        "shift, as in exercise 7.1",
        "gamma beta swapped",
    ),
    (
        "no sub-layer has its residual connection: each sub-layer's output replaces the "
        "stream instead of being added to it; in both placements every sub-layer adds its "
        "output to the stream it read",
        "no residuals",
    ),
)
"""Bugs planted the same way in every block (encoder and decoder): ``(diagnosis, bug)``."""

_PRE_LN_SELF_BUGS = (
    (
        "in your pre-LN block the self-attention's queries come from the raw stream x, its "
        "keys and values from the normalised one: in pre-LN the sub-layer reads norm(x) "
        "alone, as its queries, keys and values",
        "self queries not normalised",
    ),
    (
        "in your pre-LN block the self-attention's keys and values come from the raw "
        "stream x, only its queries from the normalised one: in pre-LN the sub-layer reads "
        "norm(x) alone, as its queries, keys and values",
        "self keys values raw",
    ),
    *(
        (_stale("feed-forward network's LayerNorm"), bug)
        for bug in ("ffn reads stale input", "ffn reads stale normed")
    ),
)
"""Pre-LN slips of the self-attention and the feed-forward input, in every block."""


class _PlantedEncoder(_EncoderParts):
    """An encoder block with one bug (``bug``), in both placements or ``only`` one."""

    bug = ""
    only = ""

    def forward(self, x, mask=None):
        bug = _bug(self)
        if bug == "mask ignored":
            mask = None
        elif bug == "mask inverted" and mask is not None:
            mask = ~mask

        def attn(h, raw=None):
            if bug.startswith("weights mix"):  # the returned weights, averaged, times a stream
                mixed = raw if raw is not None and bug.endswith("raw") else h
                return self.self_attn(h, mask=mask)[1].mean(1) @ mixed
            if bug == "self queries not normalised" and raw is not None:
                return self.self_attn(raw, h, h, mask=mask)[0]
            if bug == "self keys values raw" and raw is not None:
                return self.self_attn(h, raw, raw, mask=mask)[0]
            return self.self_attn(h, mask=mask)[0]

        n1, n2 = (self.norm2, self.norm1) if bug == "norms swapped" else (self.norm1, self.norm2)
        if bug == "one norm":
            n2 = n1
        if bug == "gamma beta swapped":
            n1, n2 = _swapped_affine(n1), _swapped_affine(n2)
        if bug == "no affine":
            n1 = n2 = _plain_norm
        pre = {
            "always post-LN": False,
            "always pre-LN": True,
            "placements swapped": not self.norm_first,
        }.get(bug, self.norm_first)
        if bug == "ffn first":
            if pre:
                x = x + self.ffn(n1(x))
                return x + attn(n2(x))
            x = n1(x + self.ffn(x))
            return n2(x + attn(x))
        if bug == "norm inside residual" and not pre:
            x = x + n1(attn(x))
            return x + n2(self.ffn(x))
        if bug == "norm on residual input" and not pre:
            x = n1(x) + attn(x)
            return n2(x) + self.ffn(x)
        if bug == "residual doubled" and pre:
            h = n1(x)
            x = x + h + attn(h)
            h = n2(x)
            return x + h + self.ffn(h)
        if bug.startswith("sum not normalised") and not pre:
            a = x + attn(x)
            x = a if bug.endswith("attn") else n1(a)
            a = x + self.ffn(x)
            return a if bug.endswith("ffn") else n2(a)
        if bug == "ffn residual from input" and not pre:
            y = n1(x + attn(x))
            return n2(x + self.ffn(y))
        if bug == "ffn residual from input" and pre:
            a = x + attn(n1(x))
            return x + self.ffn(n2(a))
        if bug == "final norm" and pre:
            x = x + attn(n1(x))
            x = x + self.ffn(n2(x))
            return n2(x)
        if bug == "parallel":
            if pre:
                return x + attn(n1(x)) + self.ffn(n2(x))
            return n2(n1(x + attn(x)) + self.ffn(x))
        if bug == "pre attn, post ffn":
            x = x + attn(n1(x))
            return n2(x + self.ffn(x))
        if bug == "post attn, pre ffn":
            x = n1(x + attn(x))
            return x + self.ffn(n2(x))
        if bug == "no residuals":
            if pre:
                x = attn(n1(x))
                return self.ffn(n2(x))
            return n2(self.ffn(n1(attn(x))))
        if pre:
            if bug == "normalised stream":
                x = n1(x)
                x = x + attn(x)
                x = n2(x)
                return x + self.ffn(x)
            if bug in ("ffn reads stale input", "ffn reads stale normed"):
                h = n1(x)
                before = h if bug.endswith("normed") else x
                x = x + attn(h)
                return x + self.ffn(n2(before))
            a = attn(n1(x), raw=x)
            x = a if bug == "no attention residual" else x + a
            f = self.ffn(n2(x))
            return f if bug == "no ffn residual" else x + f
        x = n1(attn(x) if bug == "no attention residual" else x + attn(x))
        return n2(self.ffn(x) if bug == "no ffn residual" else x + self.ffn(x))


_PAIR = (
    "the attention layer returns the pair (out, weights): a tensor plus that tuple is "
    "what failed; the residual connection adds the first element of the pair only"
)
_PAIR_HINTS = (
    ("unsupported operand type(s) for +: 'Tensor' and 'tuple'", _PAIR),
    ("unsupported operand type(s) for +: 'tuple' and 'Tensor'", _PAIR),
    ("must be Tensor, not tuple", _PAIR),
    ("'tuple' object has no attribute", _PAIR),
)


def _masks_hint(message: str) -> str | None:
    """A mask of the wrong attention: self_mask (T, T) given to the cross-attention, ..."""
    if "does not broadcast to the scores" not in message:
        return None
    return (
        "a mask that does not fit the scores it was given to: each attention has its own, "
        "self_mask (T, T) for the self-attention over the target tokens, memory_mask "
        "(B, 1, 1, S) for the cross-attention, whose scores are (T, S)"
    )


_SWAPPED_PLACEMENTS = (
    "your two placements are swapped: with norm_first=False your block runs pre-LN, and "
    "with norm_first=True post-LN (each branch is right on its own): check the condition"
)

_POSITIONAL_MASK = (
    "a mask went into the attention's `key`: MultiHeadAttention's parameters are "
    "(query, key=None, value=None, mask=None), so `attn(h, mask)` passes the mask as the "
    "keys; pass it by name, `mask=...`"
)


def _positional_mask_hint(message: str) -> str | None:
    """A bool tensor given as the attention's key: a mask passed positionally."""
    if "key must have shape" in message and message.rstrip().endswith("bool"):
        return _POSITIONAL_MASK
    return None


def _weights_hint(message: str) -> str | None:
    """The attention weights (B, H, T, T) added to the stream (B, T, D): ``[1]`` for ``[0]``."""
    if "at non-singleton dimension 3" in message:
        return (
            "the attention layer returns the pair (out, weights): `[1]` is the weights, "
            "(B, H, T, T); the residual adds the output, the first element `[0]`, (B, T, D)"
        )
    return None


_PARALLEL = (
    "the feed-forward network reads the block's input, not the output of the attention "
    "sub-layer: the two sub-layers run one after the other"
)


def _planted_block(base: type, run: Callable[..., Any], bug: str, only: str) -> Callable[..., Any]:
    """A subclass of the planted block ``base`` with ``bug`` (in ``only`` one placement), run."""
    name = f"Planted_{bug.replace(' ', '_')}{'_' * bool(only)}{only}"
    cls = type(name, (base,), {"bug": bug, "only": only})
    return memoised(adapt(run, cls))


def _in_placements(planted: Callable[[str, str], Any], diagnosis: str, bug: str) -> tuple:
    """The bug in both placements, and in either one alone (an if/else with one slip)."""
    return tuple(Mistake(diagnosis, planted(bug, only)) for only in ("", "post", "pre"))


def _block_grader(run: Callable[..., Any], *, error_hints: tuple = (), **declared: Any) -> Grader:
    """A grader of a block class, run by ``run`` against PyTorch's layer with its weights.

    What the encoder and decoder blocks share: the hints for building the block and for a
    sub-layer's (out, weights) pair, a mask passed positionally and the weights added to
    the stream (then the block's own ``error_hints``), the class wrapped by ``run``, and
    float64 tolerances.
    """
    return Grader(
        error_hints=(
            *_BUILD_HINTS,
            *_PAIR_HINTS,
            ("key must have shape", _positional_mask_hint),
            ("must match the size of tensor", _weights_hint),
            *error_hints,
        ),
        wrap=lambda cls: adapt(run, cls),
        rtol=1e-7,
        atol=1e-9,
        **declared,
    )


def _planted_encoder(bug: str, only: str = "") -> Callable[..., Any]:
    return _planted_block(_PlantedEncoder, _run_encoder, bug, only)


def _encoder_mistakes(diagnosis: str, bug: str) -> tuple[Mistake, ...]:
    return _in_placements(_planted_encoder, diagnosis, bug)


ENCODER_BLOCK = GRADERS.add(
    _block_grader(
        _run_encoder,
        name="encoder_block",
        signature="MyEncoderBlock(d_model, n_heads, d_ff, norm_first=False); "
        "forward(x, mask=None) -> (B, T, D)",
        reference=_reference_encoder,
        cases=_encoder_cases(),
        mistakes=(
            *_encoder_mistakes(
                "the attention sub-layer has no residual connection: its output replaces "
                "the token instead of being added to it, so the block loses its input",
                "no attention residual",
            ),
            *_encoder_mistakes(
                "the feed-forward sub-layer has no residual connection: its output "
                "replaces the stream instead of being added to it",
                "no ffn residual",
            ),
            Mistake(
                "your block is post-LN even when norm_first=True: with pre-LN each "
                "LayerNorm sits on the sub-layer's input, and the residual sum is not "
                "normalised",
                _planted_encoder("always post-LN"),
            ),
            Mistake(
                "your block is pre-LN even when norm_first=False: post-LN (the paper's "
                "placement) normalises the residual sum, after the sub-layer is added",
                _planted_encoder("always pre-LN"),
            ),
            Mistake(
                "in your pre-LN block the residual carries the normalised token: the "
                "LayerNorm must feed only the sub-layer, and the un-normalised x is what "
                "the sub-layer's output is added to",
                _planted_encoder("normalised stream"),
            ),
            *_encoder_mistakes(
                "norm1 and norm2 are swapped: norm1 goes with the attention sub-layer, "
                "norm2 with the feed-forward one (each has its own γ and β)",
                "norms swapped",
            ),
            *_encoder_mistakes(
                "the mask is not passed to the attention: padded positions are read as "
                "if they were tokens",
                "mask ignored",
            ),
            *_encoder_mistakes(
                "the mask is inverted: in the course's convention True means 'may "
                "attend' (PyTorch's key_padding_mask means the opposite); MultiHeadAttention "
                "takes our convention as it is",
                "mask inverted",
            ),
            *(
                Mistake(
                    "the residual adds a mixture you built from the attention's weights (the "
                    "second element of the pair it returns) and the stream: it must add the "
                    "attention's output, the first element, the heads' weighted values "
                    "passed through W_o",
                    _planted_encoder(bug),
                )
                for bug in ("weights mix raw", "weights mix normed")
            ),
            *_encoder_mistakes(_PARALLEL, "parallel"),
            Mistake(_SWAPPED_PLACEMENTS, _planted_encoder("placements swapped")),
            *_encoder_mistakes(
                "your sub-layers run in the wrong order: the attention comes first (the "
                "tokens exchange information), then the feed-forward network",
                "ffn first",
            ),
            Mistake(
                "your post-LN block normalises the sub-layer's output and then adds it to the "
                "stream: post-LN adds first, then normalises the sum",
                _planted_encoder("norm inside residual", "post"),
            ),
            Mistake(
                "in your pre-LN block the feed-forward output is added to the block's "
                "input x, not to the stream after the attention sub-layer: the attention's "
                "contribution is lost; each residual adds to the stream as the previous "
                "sub-layer left it",
                _planted_encoder("ffn residual from input", "pre"),
            ),
            Mistake(
                "in your post-LN block the feed-forward output is added to the block's "
                "input x, not to the stream the attention sub-layer returned (which only "
                "feeds the feed-forward network): the attention's contribution is lost; each "
                "residual adds to the stream as the previous sub-layer left it",
                _planted_encoder("ffn residual from input", "post"),
            ),
            Mistake(_NORM_ON_RESIDUAL_INPUT, _planted_encoder("norm on residual input", "post")),
            Mistake(_RESIDUAL_DOUBLED, _planted_encoder("residual doubled", "pre")),
            *(
                Mistake(_sum_not_normalised(name, norm), _planted_encoder(bug, "post"))
                for name, norm, bug in (
                    ("attention", "norm1", "sum not normalised attn"),
                    ("feed-forward", "norm2", "sum not normalised ffn"),
                )
            ),
            Mistake(
                "your pre-LN block ends with a LayerNorm on the stream: in pre-LN the "
                "norms sit on the sub-layers' inputs only; the one final norm belongs after "
                "the whole stack (exercise 7.5), not inside each block",
                _planted_encoder("final norm", "pre"),
            ),
            *_encoder_mistakes(
                "your two sub-layers use different placements: the attention's LayerNorm "
                "sits on its input (pre-LN) and the feed-forward's on the sum x + FFN(x) "
                "(post-LN); in one block both sub-layers use the placement norm_first picks",
                "pre attn, post ffn",
            ),
            *_encoder_mistakes(
                "your two sub-layers use different placements: the attention's LayerNorm "
                "sits on the sum x + attention(x) (post-LN) and the feed-forward's on its "
                "input (pre-LN); in one block both sub-layers use the placement norm_first "
                "picks",
                "post attn, pre ffn",
            ),
            *(m for diagnosis, bug in _SUBLAYER_BUGS for m in _encoder_mistakes(diagnosis, bug)),
            *(
                Mistake(d, _planted_encoder(bug, "pre"))
                for d, bug in _PRE_LN_SELF_BUGS
                if bug != "ffn reads stale input"  # pre-LN's "parallel" sub-layers, above
            ),
            *_encoder_mistakes(
                "norm1 serves both sub-layers: each sub-layer has its own LayerNorm with "
                "its own γ and β, norm1 for the attention and norm2 for the feed-forward "
                "network",
                "one norm",
            ),
        ),
        hint="two sub-layers in a row, attention then feed-forward, each with its own "
        "LayerNorm module (norm1, norm2, with their γ and β) and a residual connection that "
        "adds the sub-layer's output to the stream as the previous sub-layer left it; the "
        "placements differ only in what the LayerNorm normalises: the sum (post-LN) or the "
        "sub-layer's input (pre-LN) (the chapter's section \"The encoder block, and what it "
        'costs")',
        solution="MyEncoderBlock",
    )
)


def check_encoder_block(cls: Any) -> CheckResult:
    """Check an encoder-block class against ``nn.TransformerEncoderLayer``, weights copied.

    The class is built as ``cls(d_model, n_heads, d_ff, norm_first=...)``; PyTorch's layer's
    (random) weights are copied into its ``self_attn``, ``ffn``, ``norm1`` and ``norm2``; the
    outputs are compared in both LayerNorm placements, with and without a padding mask.

    Taught in: chapters/07_transformer.ipynb (exercise in exercises/07_transformer.ipynb)
    """
    return check_class(
        ENCODER_BLOCK, cls, _run_encoder, example="check_encoder_block(MyEncoderBlock)"
    )


# ---- 7.5 predict: what pre-LN's final LayerNorm is for -----------------------------------

FINAL_NORM = GRADERS.add(
    Question(
        name="final_norm",
        answer="b",
        choices=("a", "b", "c", "d"),
        explanation="in a pre-LN block every LayerNorm sits on a sub-layer's input; the "
        "residual stream itself is only ever added to, so nothing normalises it on its "
        "way out and its scale drifts with depth. One LayerNorm after the last block hands "
        "the next stage (the output layer, or the decoder's cross-attention) a normalised "
        "vector. A post-LN stack already ends with a norm.",
        wrong=(
            (
                "a",
                "the attention weights are already a softmax, summing to 1 over the keys; "
                "no LayerNorm touches them",
            ),
            (
                "c",
                "the final norm changes nothing about warm-up: it acts on the output of "
                "the last block, and pre-LN needs little warm-up because of where its other "
                "norms sit",
            ),
            (
                "d",
                "a LayerNorm cannot undo another: it normalises whatever it receives; and "
                "the stream it receives here has never been normalised",
            ),
        ),
        hint="in a pre-LN block, which vectors pass through a LayerNorm, and which one never does?",
    )
)


def check_final_norm(answer: Any) -> CheckResult:
    """Check the chosen role of a pre-LN stack's final LayerNorm (a, b, c or d).

    Taught in: chapters/07_transformer.ipynb (exercise in exercises/07_transformer.ipynb)
    """
    return FINAL_NORM.check(answer)


# ---- 7.6 the decoder block ---------------------------------------------------------------


def _decoder_cases() -> tuple[Case, ...]:
    g = torch.Generator().manual_seed(76)

    def causal(T: int) -> torch.Tensor:
        return torch.ones(T, T, dtype=torch.bool).tril()

    def src_pad(lengths: list[int], S: int) -> torch.Tensor:
        keep = torch.arange(S)[None, :] < torch.tensor(lengths)[:, None]  # (B, S)
        return keep.reshape(len(lengths), 1, 1, S)

    specs = [
        ("post-LN, T=4 targets, S=6 sources, D=8", (2, 4, 6, 8, 2, 16), False, None),
        ("pre-LN, T=4 targets, S=6 sources, D=8", (2, 4, 6, 8, 2, 16), True, None),
        ("post-LN, source padding, T=5, S=5", (2, 5, 5, 12, 3, 24), False, [5, 3]),
        ("pre-LN, source padding, T=3, S=7", (2, 3, 7, 12, 3, 24), True, [7, 4]),
        ("pre-LN, one head, T=6, S=2", (1, 6, 2, 6, 1, 12), True, None),
    ]
    cases = []
    for i, (label, (B, T, S, D, H, d_ff), norm_first, lengths) in enumerate(specs):
        inputs = {
            "x": _randn(g, B, T, D),
            "memory": _randn(g, B, S, D),
            "self_mask": causal(T),
            "memory_mask": None if lengths is None else src_pad(lengths, S),
            "n_heads": H,
            "d_ff": d_ff,
            "norm_first": norm_first,
            "seed": 10 + i,
        }
        cases.append(Case(label, inputs))
    return tuple(cases)


def _run_decoder(cls, x, memory, self_mask, memory_mask, n_heads, d_ff, norm_first, seed):
    theirs = _torch_layer(nn.TransformerDecoderLayer, x.shape[-1], n_heads, d_ff, norm_first, seed)
    with torch.random.fork_rng(devices=[]):  # building layers draws random weights
        ours = _build(cls, x.shape[-1], n_heads, d_ff, norm_first, theirs)
    return _with_gradient(ours, lambda: ours(x, memory, self_mask, memory_mask))


@memoised
def _reference_decoder(x, memory, self_mask, memory_mask, n_heads, d_ff, norm_first, seed):
    theirs = _torch_layer(nn.TransformerDecoderLayer, x.shape[-1], n_heads, d_ff, norm_first, seed)
    with torch.no_grad():
        return theirs(
            x,
            memory,
            tgt_mask=None if self_mask is None else ~self_mask,  # PyTorch: True = ignore
            memory_key_padding_mask=_key_ignore(memory_mask),
        )


class _DecoderParts(nn.Module):
    """The parts of a decoder block, named as the exercise's (and the lib's)."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, norm_first: bool = False) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads)
        self.cross_attn = MultiHeadAttention(d_model, n_heads)
        self.ffn = FeedForward(d_model, d_ff)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.norm3 = LayerNorm(d_model)


class _PlantedDecoder(_DecoderParts):
    """A decoder block with one bug (``bug``), in both placements or ``only`` one."""

    bug = ""
    only = ""

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        bug = _bug(self)
        if bug == "no causal mask":
            self_mask = None
        elif bug == "causal mask inverted" and self_mask is not None:
            self_mask = ~self_mask
        if bug == "memory mask ignored":
            memory_mask = None
        elif bug == "memory mask inverted" and memory_mask is not None:
            memory_mask = ~memory_mask
        n1, n2, n3 = self.norm1, self.norm2, self.norm3
        if bug == "gamma beta swapped":
            n1, n2, n3 = (_swapped_affine(n) for n in (n1, n2, n3))
        if bug == "no affine":
            n1 = n2 = n3 = _plain_norm
        if bug == "norms 2 and 3 swapped":
            n2, n3 = n3, n2
        elif bug == "norm2 twice":
            n3 = n2

        def self_sub(h, raw=None):
            if bug == "self queries not normalised" and raw is not None:
                return self.self_attn(raw, h, h, mask=self_mask)[0]
            if bug == "self keys values raw" and raw is not None:
                return self.self_attn(h, raw, raw, mask=self_mask)[0]
            return self.self_attn(h, mask=self_mask)[0]

        def cross_sub(h, normed_memory=None):
            mem = memory if normed_memory is None else normed_memory
            fits = h.shape[-2] == mem.shape[-2]  # T == S: a stream swapped in runs
            if bug == "values from stream" or (bug == "values from stream if T == S" and fits):
                return self.cross_attn(h, mem, h, mask=memory_mask)[0]
            if bug == "keys from stream" or (bug == "keys from stream if T == S" and fits):
                return self.cross_attn(h, h, mem, mask=memory_mask)[0]
            if bug == "queries from memory":
                return self.cross_attn(mem, h, h)[0]
            if bug == "cross on itself":
                return self.cross_attn(h, h, h, mask=None)[0]
            if bug == "cross on itself, memory mask":
                return self.cross_attn(h, h, h, mask=memory_mask)[0]
            return self.cross_attn(h, mem, mem, mask=memory_mask)[0]

        order = ("cross", "self") if bug == "cross first" else ("self", "cross")
        subs = {"self": (self_sub, n1), "cross": (cross_sub, n2)}
        pre = {
            "always post-LN": False,
            "always pre-LN": True,
            "placements swapped": not self.norm_first,
        }.get(bug, self.norm_first)
        written = _decoder_written(self, bug, pre, x, self_sub, cross_sub, (n1, n2, n3))
        if written is not None:
            return written
        if bug in ("no cross sub-layer", "no cross sub-layer, norm2 for ffn"):
            n_ffn = n2 if bug.endswith("ffn") else n3
            if pre:
                x = x + self_sub(n1(x))
                return x + self.ffn(n_ffn(x))
            x = n1(x + self_sub(x))
            return n_ffn(x + self.ffn(x))
        stale = block_input = x
        for which in order:
            sub, norm = subs[which]
            keep = not (which == "cross" and bug == "no cross residual") and bug != "no residuals"
            stale = norm(x) if bug == "ffn reads stale normed" else x
            if which == "cross" and bug == "cross reads block input":
                out = sub(norm(block_input) if pre else block_input)
                x = x + out if pre else norm(x + out)
                continue
            if pre:
                if which == "cross" and bug == "memory normalised":
                    out = cross_sub(norm(x), norm(memory))
                elif which == "cross" and bug == "cross queries not normalised":
                    out = sub(x)
                elif which == "self":
                    out = sub(norm(x), raw=x)
                else:
                    out = sub(norm(x))
                if bug == "normalised stream" or (
                    bug == "normalised stream " + which
                ):  # the residual adds to the normalised token
                    x = norm(x)
                x = x + out if keep else out
            elif which == "cross" and bug == "memory normalised":
                out = cross_sub(x, norm(memory))
                x = norm(x + out)
            else:
                out = sub(x)
                x = norm(x + out if keep else out)
        bare = bug in ("no ffn residual", "no residuals")
        if pre:
            h = n3(stale if bug.startswith("ffn reads stale") else x)
            if bare:
                return self.ffn(h)
            return (h if bug == "normalised stream" else x) + self.ffn(h)
        return n3(self.ffn(x) if bare else x + self.ffn(x))


def _decoder_written(
    block: nn.Module,
    bug: str,
    pre: bool,
    x: torch.Tensor,
    self_sub: Callable[..., torch.Tensor],
    cross_sub: Callable[..., torch.Tensor],
    norms: tuple[Callable[[torch.Tensor], torch.Tensor], ...],
) -> torch.Tensor | None:
    """The planted decoder bugs written out whole (``None`` for the others)."""
    n1, n2, n3 = norms
    if bug == "cross first, norms in order":
        if pre:
            x = x + cross_sub(n1(x))
            x = x + self_sub(n2(x))
            return x + block.ffn(n3(x))
        x = n1(x + cross_sub(x))
        x = n2(x + self_sub(x))
        return n3(x + block.ffn(x))
    if bug == "cross reads stale normed" and pre:
        h = n1(x)
        x = x + self_sub(h)
        x = x + cross_sub(h)
        return x + block.ffn(n3(x))
    if bug == "cross residual from block input" and not pre:
        y = n1(x + self_sub(x))
        x = n2(x + cross_sub(y))
        return n3(x + block.ffn(x))
    if bug.startswith("sum not normalised") and not pre:
        which = bug.rsplit(" ", 1)[1]
        a = x + self_sub(x)
        x = a if which == "self" else n1(a)
        a = x + cross_sub(x)
        x = a if which == "cross" else n2(a)
        a = x + block.ffn(x)
        return a if which == "ffn" else n3(a)
    if bug == "norm on residual input" and not pre:
        x = n1(x) + self_sub(x)
        x = n2(x) + cross_sub(x)
        return n3(x) + block.ffn(x)
    if bug == "residual doubled" and pre:
        for sub, norm in ((self_sub, n1), (cross_sub, n2), (block.ffn, n3)):
            h = norm(x)
            x = x + h + sub(h)
        return x
    return None


_CROSS_ON_ITSELF = (
    "your cross-attention attends over the decoder's own tokens: its keys and values must "
    "come from the encoder's output, memory (that is how the source gets into the decoder)"
)

_QUERIES_FROM_MEMORY = (
    "your cross-attention takes its queries from memory, the encoder's output, so it "
    "returns one vector per *source* token: the queries must come from the decoder's "
    "stream, one per *target* token, to be added to that stream; memory supplies only "
    "the keys and values"
)
"""Also the hint for the size error this mistake raises when T != S."""


def _planted_decoder(bug: str, only: str = "") -> Callable[..., Any]:
    return _planted_block(_PlantedDecoder, _run_decoder, bug, only)


def _decoder_mistakes(diagnosis: str, *bugs: str) -> tuple[Mistake, ...]:
    """Each of ``bugs`` in both placements and in either one alone, with one diagnosis."""
    return tuple(m for bug in bugs for m in _in_placements(_planted_decoder, diagnosis, bug))


DECODER_BLOCK = GRADERS.add(
    _block_grader(
        _run_decoder,
        name="decoder_block",
        signature="MyDecoderBlock(d_model, n_heads, d_ff, norm_first=False); "
        "forward(x, memory, self_mask=None, memory_mask=None) -> (B, T, D)",
        reference=_reference_decoder,
        cases=_decoder_cases(),
        mistakes=(
            *_decoder_mistakes(
                "the self-attention ignores self_mask (the causal mask): every target "
                "token sees the tokens after it, the answer it is trained to predict",
                "no causal mask",
            ),
            *_decoder_mistakes(
                "the cross-attention ignores memory_mask: the target tokens read the "
                "source's padding as if it were input",
                "memory mask ignored",
            ),
            *_decoder_mistakes(_QUERIES_FROM_MEMORY, "queries from memory"),
            *_decoder_mistakes(
                "your cross-attention reads the block's input, not the stream after the "
                "self-attention sub-layer: its queries must come from the stream as the "
                "previous sub-layer left it (the sub-layers run one after the other)",
                "cross reads block input",
            ),
            *(
                Mistake(_CROSS_ON_ITSELF, m)
                for bug in ("cross on itself", "cross on itself, memory mask")
                for m in (
                    _planted_decoder(bug),
                    _planted_decoder(bug, "post"),
                    _planted_decoder(bug, "pre"),
                )
            ),
            *_decoder_mistakes(
                "the cross-attention sub-layer has no residual connection: its output "
                "replaces the stream instead of being added to it",
                "no cross residual",
            ),
            *_decoder_mistakes(
                "your block normalises memory with norm2: the block's LayerNorms are for "
                "the decoder's own stream; memory enters the cross-attention's keys and "
                "values as the encoder left it (a pre-LN encoder already ends with its "
                "final norm)",
                "memory normalised",
            ),
            # a learner who meets the size error (T != S) often patches it: the same
            # mistake is then seen on the cases where T == S only
            *_decoder_mistakes(
                "your cross-attention takes its keys from memory but its values from the "
                "decoder's own stream: keys and values both come from the encoder's output, "
                "memory (the queries come from the decoder)",
                "values from stream",
            ),
            Mistake(
                "your cross-attention takes its keys from memory but its values from the "
                "decoder's own stream: keys and values both come from the encoder's output, "
                "memory (the queries come from the decoder)",
                _planted_decoder("values from stream if T == S"),
            ),
            *_decoder_mistakes(
                "your cross-attention takes its values from memory but its keys from the "
                "decoder's own stream: keys and values both come from the encoder's output, "
                "memory (the queries come from the decoder)",
                "keys from stream",
            ),
            Mistake(
                "your cross-attention takes its values from memory but its keys from the "
                "decoder's own stream: keys and values both come from the encoder's output, "
                "memory (the queries come from the decoder)",
                _planted_decoder("keys from stream if T == S"),
            ),
            *_decoder_mistakes(
                "your block's output does not depend on memory at all: the cross-attention "
                "sub-layer (queries from the stream, keys and values from memory, with norm2 "
                "and its residual) is missing between the self-attention and the "
                "feed-forward network",
                "no cross sub-layer",
                "no cross sub-layer, norm2 for ffn",
            ),
            *_decoder_mistakes(
                "the cross-attention comes before the masked self-attention: the block's "
                "order is self-attention, cross-attention, feed-forward",
                "cross first",
                "cross first, norms in order",
            ),
            Mistake(
                _stale("cross-attention")
                + " (here the normalised copy kept from before the self-attention)",
                _planted_decoder("cross reads stale normed", "pre"),
            ),
            Mistake(
                "in your post-LN block the cross-attention's output is added to the block's "
                "input x, not to the stream the self-attention sub-layer returned (which "
                "only feeds the cross-attention's queries): the self-attention's "
                "contribution is lost; each residual adds to the stream as the previous "
                "sub-layer left it",
                _planted_decoder("cross residual from block input", "post"),
            ),
            Mistake(_NORM_ON_RESIDUAL_INPUT, _planted_decoder("norm on residual input", "post")),
            Mistake(_RESIDUAL_DOUBLED, _planted_decoder("residual doubled", "pre")),
            *(
                Mistake(_sum_not_normalised(name, norm), _planted_decoder(bug, "post"))
                for name, norm, bug in (
                    ("self-attention", "norm1", "sum not normalised self"),
                    ("cross-attention", "norm2", "sum not normalised cross"),
                    ("feed-forward", "norm3", "sum not normalised ffn"),
                )
            ),
            Mistake(
                "your block is post-LN even when norm_first=True: with pre-LN each "
                "LayerNorm sits on its sub-layer's input and the residual sum is not "
                "normalised",
                _planted_decoder("always post-LN"),
            ),
            Mistake(
                "your block is pre-LN even when norm_first=False: post-LN (the paper's "
                "placement) normalises the residual sum, after the sub-layer is added",
                _planted_decoder("always pre-LN"),
            ),
            Mistake(_SWAPPED_PLACEMENTS, _planted_decoder("placements swapped")),
            *_decoder_mistakes(
                "the causal mask is inverted: in the course's convention True means 'may "
                "attend' (PyTorch's tgt_mask means the opposite), so with ~self_mask each "
                "token sees only the tokens after it; pass self_mask as it is",
                "causal mask inverted",
            ),
            *_decoder_mistakes(
                "norm2 and norm3 are swapped: norm2 goes with the cross-attention, norm3 "
                "with the feed-forward network (each has its own γ and β)",
                "norms 2 and 3 swapped",
            ),
            *_decoder_mistakes(
                "norm3 is never used: norm2 serves both the cross-attention and the "
                "feed-forward network; each sub-layer has its own LayerNorm, norm1, norm2 "
                "and norm3 in order",
                "norm2 twice",
            ),
            *(
                Mistake(
                    "in your pre-LN block the residual carries the normalised token: the "
                    "LayerNorm must feed only the sub-layer, and the un-normalised x is "
                    "what the sub-layer's output is added to",
                    _planted_decoder(bug),
                )
                for bug in (
                    "normalised stream",
                    "normalised stream cross",
                    "normalised stream self",
                )
            ),
            *(m for diagnosis, bug in _SUBLAYER_BUGS for m in _decoder_mistakes(diagnosis, bug)),
            *(Mistake(d, _planted_decoder(bug, "pre")) for d, bug in _PRE_LN_SELF_BUGS),
            *_decoder_mistakes(
                "the feed-forward sub-layer has no residual connection: its output "
                "replaces the stream instead of being added to it",
                "no ffn residual",
            ),
            *_decoder_mistakes(
                "the memory mask is inverted: in the course's convention True means 'may "
                "attend' (PyTorch's memory_key_padding_mask means the opposite), so with "
                "~memory_mask the target tokens read only the source's padding; pass "
                "memory_mask as it is",
                "memory mask inverted",
            ),
            Mistake(
                "in your pre-LN block the cross-attention's queries come from the raw "
                "stream x: like every pre-LN sub-layer, it reads the normalised norm2(x) "
                "(its keys and values are memory as it is)",
                _planted_decoder("cross queries not normalised"),
            ),
        ),
        hint="three sub-layers in order, masked self-attention, cross-attention, "
        "feed-forward, each wrapped like the encoder's: its own LayerNorm module (norm1, "
        "norm2, norm3, with their γ and β) and a residual connection onto the stream as the "
        "previous sub-layer left it, placed as norm_first says; and for each attention, "
        "where its queries, keys and values come from and which mask it gets (the chapter's "
        'section "The decoder block: masked self-attention and cross-attention")',
        error_hints=(
            ("must match the size of tensor", _QUERIES_FROM_MEMORY),
            ("does not broadcast to the scores", _masks_hint),
        ),
        solution="MyDecoderBlock",
    )
)


def check_decoder_block(cls: Any) -> CheckResult:
    """Check a decoder-block class against ``nn.TransformerDecoderLayer``, weights copied.

    Built as ``cls(d_model, n_heads, d_ff, norm_first=...)``; its ``self_attn``,
    ``cross_attn``, ``ffn`` and ``norm1..3`` get PyTorch's (random) weights; run with a
    causal ``self_mask`` and, in some cases, a source padding ``memory_mask``.

    Taught in: chapters/07_transformer.ipynb (exercise in exercises/07_transformer.ipynb)
    """
    return check_class(
        DECODER_BLOCK, cls, _run_decoder, example="check_decoder_block(MyDecoderBlock)"
    )


# ---- the small models of 7.7 and 7.8 -----------------------------------------------------

_VOCAB = 12
_MODELS = ((6, 1.0), (6, 0.5), (1, 1.0), (4, 0.5), (7, 0.5), (14, 0.0, (9, 10, 11)))
"""``(seed, EOS bias[, (pad, BOS, EOS ids)])`` of each small model: untrained, but biased
towards EOS so that rows end at different steps (the tests check the cases cover early
ends and unfinished rows). The last one gives the special tokens other ids than the
course's 0, 1, 2 (which are then ordinary tokens), so that an answer that writes those
numbers instead of ``model.pad_id``, ``pad_id``, ``bos_id`` or ``eos_id`` is told apart."""


def _vocab(index: int) -> int:
    """The vocabulary size of the ``index``-th small model: 14 for the one with other ids
    (a size written as 12 is told apart), 12 for the others."""
    return _VOCAB + 2 if len(_MODELS[index]) > 2 else _VOCAB


def _ids(index: int) -> tuple[int, int, int]:
    """``(pad, BOS, EOS)`` ids of the ``index``-th small model."""
    found = _MODELS[index]
    return found[2] if len(found) > 2 else (PAD_ID, BOS_ID, EOS_ID)


def _tokens(index: int, g: torch.Generator, *shape: int) -> torch.Tensor:
    """Random ordinary tokens (no special id) for the ``index``-th small model."""
    special = _ids(index)
    ordinary = torch.tensor([i for i in range(_vocab(index)) if i not in special])
    return ordinary[torch.randint(0, len(ordinary), shape, generator=g)]


def _small_model(index: int, dropout: float = 0.0) -> EncoderDecoder:
    """The ``index``-th seeded, untrained float64 :class:`EncoderDecoder` the graders use.

    Vocabulary of 12 ids (``PAD_ID``, ``BOS_ID``, ``EOS_ID`` first; see :func:`_vocab` and
    :func:`_ids` for the last model), D = 16, 2 heads, one layer each side, ``max_len``
    12; its output bias never picks PAD or BOS. It is returned in training mode: with a
    ``dropout``, a decoder that does not switch it to ``eval()`` draws other tokens.
    """
    seed, eos_bias = _MODELS[index][:2]
    pad, bos, eos = _ids(index)
    seed_cpu(seed)
    config = TransformerConfig(
        d_model=16, n_heads=2, n_layers=1, d_ff=32, max_len=12, dropout=dropout
    )
    vocab = _vocab(index)
    model = EncoderDecoder(vocab, vocab, config, pad_id=pad).double()
    with torch.no_grad():
        model.to_logits.bias[eos] += eos_bias
        model.to_logits.bias[pad] -= 10.0
        model.to_logits.bias[bos] -= 10.0
    return model


# ---- 7.7 greedy decoding -----------------------------------------------------------------


def _greedy_cases() -> tuple[Case, ...]:
    g = torch.Generator().manual_seed(77)

    def src(B: int, S: int) -> torch.Tensor:
        return torch.randint(3, _VOCAB, (B, S), generator=g)

    padded = src(4, 6)
    padded[1, 4:] = PAD_ID
    padded[3, 2:] = PAD_ID
    return (
        Case("rows end at different steps", {"src": src(4, 6), "max_len": 10, "model": 0}),
        Case("some rows never end", {"src": src(4, 6), "max_len": 10, "model": 1}),
        Case("every row ends early", {"src": src(4, 6), "max_len": 8, "model": 2}),
        Case("padded sources", {"src": padded, "max_len": 9, "model": 3}),
        Case("max_len 4, no row ends", {"src": src(2, 5), "max_len": 4, "model": 4}),
        Case(
            "padding id 9, BOS 10, EOS 11 (0, 1 and 2 are ordinary tokens here)",
            {"src": _tokens(5, g, 4, 6), "max_len": 10, "model": 5},
        ),
    )


def _run_greedy(fn, src, max_len, model):
    _, bos, eos = _ids(model)
    with torch.random.fork_rng(devices=[]):  # the notebook's own random numbers untouched
        lm = _small_model(model, dropout=_GREEDY_DROPOUT)
        calls = []  # the source rows each encoder run reads: the statement asks for one run
        hook = lm.encoder.register_forward_hook(lambda _, given, __: calls.append(len(given[0])))
        try:
            out = fn(lm, src, bos_id=bos, eos_id=eos, max_len=max_len)
        finally:
            hook.remove()
    _ENCODER_RUNS[:] = [len(calls), sum(calls), len(src)]
    return out


_ENCODER_RUNS: list[int] = []
"""The last decoding's encoder runs, the source rows they read in all, and the batch size."""


def _encodes_once(fn: Any) -> tuple[str, str] | None:
    """Refuses a decoding with the right tokens that runs the encoder at every step."""
    case = GREEDY_DECODE.cases[0]
    try:
        call_quietly(fn, case)
    except Exception:  # the values were right on every case: nothing to conclude
        return None
    if not _ENCODER_RUNS:
        return None
    runs, rows, batch = _ENCODER_RUNS
    if rows <= batch:  # each source row encoded once (all at once, or row by row)
        return None
    return (
        f"right tokens, but your decoding ran the encoder {runs} times for one source "
        f"batch (case {case.describe()})",
        "the statement asks to run the encoder once: the source does not change while you "
        "decode, so encode it before the loop (`model.encode(src)`) and give that memory to "
        "`model.decode` at every step; calling the whole model, `model(src, prefix)`, "
        "encodes the source again at each step (the same tokens, at many times the cost)",
    )


_GREEDY_DROPOUT = 0.3
"""The decoding models' dropout: left in training mode, they would decode other tokens."""


@memoised
def _reference_greedy(src, max_len, model):
    return _run_greedy(_greedy_decode, src, max_len, model)


def _greedy(
    stop: str = "all",
    pad_after: Any = "pad",
    keep_bos: bool = False,
    position: int = -1,
    steps: int = 0,
    prepend: bool = False,
    fixed: str = "",
    train_mode: bool = False,
    eval_late: bool = False,
    mark_first: bool = False,
    pick: str = "",
    last_only: bool = False,
    sticky: str = "yes",
) -> Callable[..., torch.Tensor]:
    """A greedy decoder with one planted difference (``fixed``: an id written as a number)."""

    @torch.no_grad()
    def decode(model, src, bos_id, eos_id, max_len):
        pad_id = PAD_ID if fixed == "pad" else model.pad_id
        bos_id = BOS_ID if fixed == "bos" else bos_id
        eos_id = EOS_ID if fixed == "eos" else eos_id
        if not train_mode and not eval_late:
            model.eval()
        memory, src_mask = model.encode(src)
        if eval_late:
            model.eval()
        out = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        for _ in range(max_len + steps):
            logits = model.decode(out[:, -1:] if last_only else out, memory, src_mask)
            if pick == "sample":
                nxt = torch.multinomial(logits[:, -1].softmax(-1), 1)[:, 0]
            elif pick == "softmax over positions":
                nxt = logits.softmax(dim=1)[:, position].argmax(-1)
            elif pick == "argmax over positions":
                nxt = logits.argmax(dim=1)[:, position]
            else:
                nxt = logits[:, position].argmax(-1)
            raw = nxt
            if mark_first:
                done |= nxt == eos_id
            if pad_after == "pad":
                nxt = torch.where(done, torch.full_like(nxt, pad_id), nxt)
            elif pad_after == "eos":
                nxt = torch.where(done, torch.full_like(nxt, eos_id), nxt)
            elif pad_after == "after eos only":
                nxt = torch.where(out[:, -1] == eos_id, torch.full_like(nxt, pad_id), nxt)
            if prepend:
                out = torch.cat([out[:, :1], nxt[:, None], out[:, 1:]], dim=1)
            else:
                out = torch.cat([out, nxt[:, None]], dim=1)
            if sticky == "raw":  # the finished flags forget the rows that ended before
                done = raw == eos_id
            elif sticky == "written":
                done = nxt == eos_id
            else:
                done |= nxt == eos_id
            if (stop == "all" and bool(done.all())) or (stop == "any" and bool(done.any())):
                break
        return out if keep_bos else out[:, 1:]

    return decode


def _decoded_length(outputs: Any, case: Case) -> str | None:
    """A decoding of the wrong length: the loop ran too long or stopped too soon."""
    got = outputs["output"]
    want = _reference_greedy(**case.inputs)
    if got.ndim != 2 or got.shape[0] != want.shape[0] or got.shape[1] == want.shape[1]:
        return None
    more = "more" if got.shape[1] > want.shape[1] else "fewer"
    return (
        f"your rows are {got.shape[1]} tokens long, the right decoding's "
        f"{want.shape[1]}: your loop ran {more} steps; it ends after max_len tokens, or as "
        "soon as every row has written EOS (a finished row stays finished), and what the "
        "decoder reads at each step, the whole prefix, decides which tokens come"
    )


def _float_ids_hint(message: str) -> str:
    """A float prefix given to model.decode: the BOS column itself, or a token appended."""
    found = re.search(r"shape \((\d+), (\d+)\), (\w+)", message)
    if found is not None and int(found[2]) > 1:
        return (
            f"the prefix was integer ids at the first step, but after a step it is "
            f"{found[3]}, shape ({found[1]}, {found[2]}): the token you appended is a float, "
            "a logit's value; the next token id is the position of the largest logit, an "
            "index: `max` along a dim returns the values first and the indices second, "
            "`argmax` the index alone"
        )
    return (
        "token ids are integers: your BOS column is a float tensor (torch.ones and "
        "torch.zeros make float32); give it an integer dtype, dtype=torch.long"
    )


def _planted_greedy(**bug: Any) -> Callable[..., Any]:
    return memoised(adapt(_run_greedy, _greedy(**bug)))


GREEDY_DECODE = GRADERS.add(
    Grader(
        name="greedy_decode",
        signature="greedy_decode(model, src, bos_id, eos_id, max_len) -> (B, L) token ids",
        reference=_reference_greedy,
        cases=_greedy_cases(),
        mistakes=(
            Mistake(
                "your decoding does not stop at EOS: it writes max_len tokens for every "
                "row, and keeps writing after a row's EOS; a finished row is padded, and "
                "the loop ends once every row has its EOS",
                _planted_greedy(stop="never", pad_after=None),
            ),
            Mistake(
                "your loop runs to max_len even when every row has already produced EOS: "
                "it should end as soon as all rows are finished",
                _planted_greedy(stop="never"),
            ),
            Mistake(
                "you stop as soon as one row produces EOS: the other rows are not "
                "finished; stop when every row has",
                _planted_greedy(stop="any"),
            ),
            Mistake(
                "a row keeps writing after its EOS: once a row is finished, every later "
                "position must be the padding id (model.pad_id)",
                _planted_greedy(pad_after=None),
            ),
            Mistake(
                "after EOS your rows are filled with EOS: the expected layout (that of "
                "tgt_out) fills them with the padding id, model.pad_id",
                _planted_greedy(pad_after="eos"),
            ),
            Mistake(
                "the output starts with BOS: BOS is the decoder's first input, not a "
                "token the model wrote, so it is not part of the result",
                _planted_greedy(keep_bos=True),
            ),
            Mistake(
                "every step predicts from BOS alone, so every row repeats one token: either "
                "the prefix you give the decoder never grows (append each new token to the "
                "prefix you decode next), or you take the logits of the first position "
                "(the *last* position's logits predict the next token; the first one only "
                "ever sees BOS)",
                _planted_greedy(position=0),
            ),
            Mistake(
                "you draw the next token at random from the softmax (torch.multinomial, a "
                "sample): greedy decoding takes the most likely token, the argmax of the last "
                "position's logits over the vocabulary, so the same source always gives the "
                "same tokens",
                _planted_greedy(pick="sample"),
            ),
            Mistake(
                "the new token goes in front of the earlier ones: the decoder must read "
                "its own output in order, BOS then the tokens in the order they were written",
                _planted_greedy(prepend=True),
            ),
            Mistake(
                "your loop runs one step too few: max_len counts the tokens written, EOS included",
                _planted_greedy(steps=-1),
            ),
            Mistake(
                f"you pad the finished rows with {PAD_ID}, the course's usual padding id, "
                "written as a number: this model's padding id is another one; read it "
                "from the model, `model.pad_id`",
                _planted_greedy(fixed="pad"),
            ),
            Mistake(
                "the model stays in training mode, so its dropout is on while you decode "
                "and the tokens are drawn at random; switch it to evaluation mode "
                "(`model.eval()`) before decoding",
                _planted_greedy(train_mode=True),
            ),
            Mistake(
                "you switch to evaluation mode after `model.encode(src)`: the encoder ran "
                "in training mode, with dropout on, so memory is noisy and every token "
                "decoded from it may change; call `model.eval()` before the encoder runs",
                _planted_greedy(eval_late=True),
            ),
            Mistake(
                "your rows hold no EOS: you mark a row finished before you write its token, "
                "so the EOS itself is replaced by padding; pad the rows that were already "
                "finished, then update `finished` with the new tokens",
                _planted_greedy(mark_first=True),
            ),
            Mistake(
                "you pad only the token right after EOS: at the next step the last token is "
                "that padding, not EOS, and the row starts writing again; remember which "
                "rows are finished in a (B,) boolean tensor",
                _planted_greedy(pad_after="after eos only"),
            ),
            Mistake(
                "your softmax runs over the positions axis (dim=1) of the (B, t, n_vocab) "
                "logits, so the last position's argmax is no longer its most likely token; "
                "no softmax is needed: argmax over the vocabulary (the last axis) of the "
                "last position's logits",
                _planted_greedy(pick="softmax over positions"),
            ),
            Mistake(
                "your argmax runs over the positions axis (dim=1) of the (B, t, n_vocab) "
                "logits: it picks a position, not a token; take the last position's logits, "
                "logits[:, -1], then argmax over the vocabulary (dim=-1)",
                _planted_greedy(pick="argmax over positions"),
            ),
            Mistake(
                "the decoder reads only the last token at each step: without a KV cache it "
                "must re-read the whole prefix at every step, BOS and every token written "
                "so far, and the last position's logits choose the next token",
                _planted_greedy(last_only=True),
            ),
            *(
                Mistake(
                    "your finished flags are not kept: each step sets them from the new "
                    "tokens alone (finished = next == eos_id), so a row that ended forgets "
                    "it and writes again; a finished row stays finished (combine the old "
                    "flags with the new ones by a logical or)",
                    _planted_greedy(sticky=sticky),
                )
                for sticky in ("raw", "written")
            ),
            Mistake(
                f"you compare with {EOS_ID}, the course's usual EOS id, written as a number: "
                "use the `eos_id` the function is given (this model's EOS is another id)",
                _planted_greedy(fixed="eos"),
            ),
            Mistake(
                f"you start from {BOS_ID}, the course's usual BOS id, written as a number: "
                "use the `bos_id` the function is given (this model's BOS is another id)",
                _planted_greedy(fixed="bos"),
            ),
        ),
        hint="follow one row by hand: what the decoder reads at the first step, which "
        "position's logits choose the next token, what a finished row writes, and when the "
        'loop may end (the chapter\'s section "Greedy decoding, one token at a time")',
        error_hints=(
            (
                "expected scalar type",
                "token ids are integers (torch.long); build the BOS column with dtype=torch.long",
            ),
            ("must hold integer token ids", _float_ids_hint),
            (
                "memory must have shape",
                "model.decode wants the encoder's output, memory (B, S, D), from "
                "model.encode(src), not the source's token ids",
            ),
            (
                "Tensors must have same number of dimensions",
                "the prefix is (B, t) and the new tokens are (B,), one per row: give them a "
                "token axis of length 1, (B, 1), before joining them along dim=1 (indexing "
                "with None, or unsqueeze)",
            ),
            (
                "cannot be converted to Scalar",
                "`.item()` needs a one-element tensor, and the next tokens hold one per row: "
                "keep a (B,) `finished` tensor and stop when finished.all()",
            ),
        ),
        properties=(Property(_decoded_length),),
        structure=_encodes_once,
        rtol=0.0,
        atol=0.0,
        wrap=lambda fn: adapt(_run_greedy, fn),
        equivalent=(
            (
                "library: return out[:, 1:] -> return torch.from_numpy(out[:, 1:].detach()."
                "numpy().copy())",
                "token ids carry no gradient: a NumPy round trip of the result changes nothing",
            ),
            (
                "size: src.shape[0] in B = src.shape[0] -> src.shape[-2]",
                "src is (B, S): axis -2 is axis 0",
            ),
            (
                "dtype: torch.full((B, 1), bos_id, dtype=torch.long, device=src.dev… in out = "
                "torch.full((B, 1), bos_id, dtype=torch.long, device=s… -> torch.full((B, 1), "
                "bos_id, device=src.device)",
                "torch.full with an int fill value makes int64 (torch.long) already",
            ),
            (
                "offset: range(max_len) in for _ in range(max_len): -> reversed(range(max_len))",
                "the loop's counter is not used: only the number of steps counts",
            ),
            (
                "axis: logits[:, -1].argmax(dim=-1) in nxt = logits[:, -1].argmax(dim=-1) -> "
                "logits[:, -1].argmax(dim=1)",
                "the last position's logits are (B, n_vocab): axis 1 is the last axis",
            ),
            (
                "axis: torch.cat([out, nxt[:, None]], dim=1) in out = torch.cat([out, nxt[:, "
                "None]], dim=1) -> torch.cat([out, nxt[:, None]], dim=-1)",
                "the tokens are (B, t): axis -1 is axis 1",
            ),
        ),
    )
)


def check_greedy_decode(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(model, src, bos_id, eos_id, max_len)`` against the lib's ``greedy_decode``.

    It runs on small seeded, untrained models whose rows end at different steps (and some
    not at all): the tokens must be the same, padded after EOS, and the loop must stop once
    every row has ended.

    Taught in: chapters/07_transformer.ipynb (exercise in exercises/07_transformer.ipynb)
    """
    return check_function(GREEDY_DECODE, fn, _run_greedy)


# ---- 7.8 one training step's loss ----------------------------------------------------------


def _loss_cases() -> tuple[Case, ...]:
    g = torch.Generator().manual_seed(78)

    def batch(src_lengths: list[int], tgt_lengths: list[int], model: int) -> dict:
        pad, bos, eos = _ids(model)
        S, L = max(src_lengths), max(tgt_lengths) + 2  # + BOS and EOS
        src = torch.full((len(src_lengths), S), pad)
        tgt = torch.full((len(tgt_lengths), L), pad)
        for b, (s, t) in enumerate(zip(src_lengths, tgt_lengths, strict=True)):
            if model == 5:
                src[b, :s] = _tokens(model, g, s)
                y = _tokens(model, g, t)
            else:  # the course's ids: the cases drawn before the model with other ids
                src[b, :s] = torch.randint(3, _VOCAB, (s,), generator=g)
                y = torch.randint(3, _VOCAB, (t,), generator=g)
            tgt[b, : t + 2] = torch.cat([torch.tensor([bos]), y, torch.tensor([eos])])
        return {"src": src, "tgt": tgt, "model": model}

    return (
        Case("no padding", batch([5, 5], [4, 4], 0)),
        Case("targets of lengths 6, 3, 1", batch([6, 4, 5], [6, 3, 1], 2)),
        Case("padded sources and targets", batch([7, 2], [5, 2], 3)),
        Case("one long and three short", batch([4, 4, 4, 4], [8, 2, 3, 1], 1)),
        Case(
            "padding id 9, BOS 10, EOS 11 (0, 1 and 2 are ordinary tokens here)",
            batch([6, 3, 5], [5, 2, 3], 5),
        ),
    )


def _run_loss(fn, src, tgt, model):
    with torch.random.fork_rng(devices=[]):  # the notebook's own random numbers untouched
        lm = _small_model(model)
        recorder = Recorder(quiet=lm)  # the learner's call only: building a model uses no_grad
        with recorder:
            loss = fn(lm, src, tgt, pad_id=_ids(model)[0])
    if not lm.training:
        raise AnswerProblem(
            WRONG_VALUES,
            "your training_loss leaves the model in evaluation mode (the model was in "
            "training mode when it was called)",
            "`model.eval()` inside the loss switches dropout off for the rest of training, "
            "not just for this call: the training loop sets the mode (model.train() before "
            "training, model.eval() to decode); the loss only computes",
        )
    if isinstance(loss, float):
        raise AnswerProblem(
            WRONG_TYPE,
            "your loss is a Python float, not a tensor",
            "a Python number (what `.item()` or `float(...)` returns) carries no graph: "
            "`loss.backward()` needs the scalar tensor itself; keep `.item()` for printing",
        )
    if isinstance(loss, torch.Tensor) and loss.is_floating_point() and not loss.requires_grad:
        raise AnswerProblem(
            NO_GRADIENT,
            "your loss has no gradient: nothing connects it back to the model's weights",
            f"the loss was cut from the model's computation by {cut_by(recorder)}: its "
            "value can be right, but `loss.backward()` in the training loop then fails "
            "(the loss 'does not require grad') and no weight is ever updated; the logits "
            "the loss is computed from must stay in the graph of the model's forward pass",
        )
    return loss


@memoised
def _reference_loss(src, tgt, model):
    with torch.random.fork_rng(devices=[]):
        lm = _small_model(model)
    logits = lm(src, tgt[:, :-1])  # teacher forcing: the decoder reads BOS + y
    return sequence_loss(logits, tgt[:, 1:], _ids(model)[0])  # ... and predicts y + EOS


def _loss(
    shift: str = "right",
    reduce: str = "tokens",
    ignore: str = "target",
    softmax: bool = False,
    nll_on_logits: bool = False,
    log_softmax_dim: int | None = None,
    smoothing: float = 0.0,
) -> Callable[..., torch.Tensor]:
    """A training loss with one planted difference."""

    def training_loss(model, src, tgt, pad_id):
        tgt_in, tgt_out = {
            "right": (tgt[:, :-1], tgt[:, 1:]),
            "none": (tgt, tgt),
            "targets not shifted": (tgt[:, :-1], tgt[:, :-1]),
            "reversed": (tgt[:, 1:], tgt[:, :-1]),
            "one column short": (tgt[:, :-2], tgt[:, 1:-1]),
        }[shift]
        logits = model(src, tgt_in)  # (B, T, n_vocab)
        if softmax:
            logits = logits.softmax(dim=-1)
        if log_softmax_dim is not None:
            logits = logits.log_softmax(dim=log_softmax_dim)
        if nll_on_logits or log_softmax_dim is not None:
            per_token = F.nll_loss(logits.transpose(1, 2), tgt_out, reduction="none")
        else:
            per_token = F.cross_entropy(
                logits.transpose(1, 2), tgt_out, reduction="none", label_smoothing=smoothing
            )
        keep = {
            "target": tgt_out != pad_id,
            "none": torch.ones_like(tgt_out, dtype=torch.bool),
            "input": tgt_in != pad_id,
            "eos too": (tgt_out != pad_id) & (tgt_out != EOS_ID),
            "pad 0": tgt_out != PAD_ID,
        }[ignore].to(per_token.dtype)
        if reduce == "sum":
            return (per_token * keep).sum()
        if reduce == "positions":
            return (per_token * keep).mean()
        if reduce == "sequences":
            return ((per_token * keep).sum(1) / keep.sum(1)).mean()
        return (per_token * keep).sum() / keep.sum()

    return training_loss


def _planted_loss(**bug: Any) -> Callable[..., Any]:
    return memoised(adapt(_run_loss, _loss(**bug)))


TRAINING_LOSS = GRADERS.add(
    Grader(
        name="training_loss",
        signature="training_loss(model, src, tgt, pad_id) -> scalar tensor, with tgt = "
        "[BOS] + y + [EOS] padded",
        reference=_reference_loss,
        cases=_loss_cases(),
        mistakes=(
            *(
                Mistake(
                    f"that is a label-smoothed loss (label_smoothing={eps}): the exercise's "
                    "loss is the plain cross-entropy, minus the log of the right token's "
                    "probability; smoothing is a training choice that changes the number",
                    _planted_loss(smoothing=eps),
                )
                for eps in (0.1, 0.05, 0.2)
            ),
            Mistake(
                "the decoder reads the very tokens it must predict (no shift): with the "
                "causal mask position t sees token t, so it only has to copy; it must "
                "read the target shifted right and predict the next token",
                _planted_loss(shift="none"),
            ),
            Mistake(
                "only the decoder's input is cut, not the targets: position t then "
                "predicts the token it reads, not the next one",
                _planted_loss(shift="targets not shifted"),
            ),
            Mistake(
                "the shift goes the wrong way: the decoder reads the target without its "
                "BOS and predicts the token before, so it always has the answer in view",
                _planted_loss(shift="reversed"),
            ),
            Mistake(
                "your decoder input and your targets are both one column short: the "
                "last column of tgt is never predicted, so in a row without padding (the "
                'case "no padding") the prediction of EOS is missing from the loss; the decoder '
                "reads every token of tgt but the last, and predicts every token but the "
                "first (BOS)",
                _planted_loss(shift="one column short"),
            ),
            Mistake(
                "padding is counted in the loss: the positions whose target is the "
                "padding id are not tokens, and the mean must leave them out",
                _planted_loss(ignore="none"),
            ),
            Mistake(
                "you left out the positions where the decoder's *input* is padding; the "
                "ones to leave out are those whose *target* is padding (the two differ by "
                "one position in every padded row)",
                _planted_loss(ignore="input"),
            ),
            Mistake(
                "EOS is left out of the loss: predicting the end is part of the task "
                "(greedy decoding stops on it); leave out only the padding",
                _planted_loss(ignore="eos too"),
            ),
            Mistake(
                "the loss is a sum: it must be the mean over the real target tokens, so "
                "that it does not grow with the batch or the lengths",
                _planted_loss(reduce="sum"),
            ),
            Mistake(
                "you averaged each sequence, then the sequences: short sequences then "
                "weigh as much as long ones; the loss is the mean over all real target "
                "tokens of the batch",
                _planted_loss(reduce="sequences"),
            ),
            Mistake(
                f"you left out the targets equal to {PAD_ID}, the course's usual padding id, "
                "written as a number: use the `pad_id` the function is given (here "
                "another id, and 0 an ordinary token)",
                _planted_loss(ignore="pad 0"),
            ),
            Mistake(
                "you applied a softmax before the cross-entropy: F.cross_entropy takes "
                "logits and applies log-softmax itself, so the softmax is applied twice",
                _planted_loss(softmax=True),
            ),
            Mistake(
                "F.nll_loss expects log-probabilities: on raw logits it returns minus the "
                "logit of the right token (a loss that can be negative); use "
                "F.cross_entropy, or F.log_softmax over the vocabulary first",
                _planted_loss(nll_on_logits=True),
            ),
            Mistake(
                "your log-softmax runs over the positions (dim=1) of the (B, T, n_vocab) "
                "logits: each position's distribution is over the vocabulary, the last axis "
                "(dim=-1)",
                _planted_loss(log_softmax_dim=1),
            ),
            Mistake(
                "you zero the padding positions but divide by all B·(L-1) positions, so the "
                "loss shrinks as padding grows: divide by the number of real target tokens "
                "(or use ignore_index with the default mean)",
                _planted_loss(reduce="positions"),
            ),
        ),
        hint="write one row out, BOS y_1 ... EOS PAD, and line up under each token what the "
        "decoder reads and what it must predict there; then which positions count in the "
        'mean? (the chapter\'s section "Training an encoder–decoder: rewriting dates")',
        error_hints=(
            (
                "holds token id -",
                "a negative id reached the decoder's input: `tgt_out[...] = -100` writes into "
                "a slice of tgt, which is a view sharing tgt's memory, so tgt_in (and the "
                "caller's batch) changed too; never write into a slice of the caller's tensor: "
                "use ignore_index=pad_id (or build a new tensor with torch.where)",
            ),
            (
                "Expected input batch_size",
                "the logits and the targets have different lengths: the decoder reads L - 1 "
                "tokens, tgt[:, :-1] (it never reads the last one), and predicts the L - 1 "
                "tokens tgt[:, 1:]",
            ),
            (
                "Expected target size",
                "F.cross_entropy wants logits (N, n_vocab) and targets (N,) (or the classes on "
                "axis 1): flatten the batch and time axes first",
            ),
            (
                "only batches of spatial targets",
                "F.cross_entropy wants logits (N, n_vocab) and targets (N,): flatten the batch "
                "and time axes first",
            ),
        ),
        rtol=1e-9,
        atol=1e-12,
        wrap=lambda fn: adapt(_run_loss, fn),
    )
)


def check_training_loss(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(model, src, tgt, pad_id)``: teacher forcing and a loss that ignores padding.

    Compared with :func:`~attnlab.tasks.training.sequence_loss` of ``model(src, tgt[:, :-1])``
    against ``tgt[:, 1:]`` on small seeded models and batches with and without padding.

    Taught in: chapters/07_transformer.ipynb (exercise in exercises/07_transformer.ipynb)
    """
    return check_function(TRAINING_LOSS, fn, _run_loss)


# ---- 7.9 predict: the loss at step 0 --------------------------------------------------------

_GPT2_VOCAB = 50_257


def _loss_reason(given: float) -> str | None:
    """A predicted loss of 7.9 that no listed mistake explains: the log of a round number
    (ln 10,000 = 9.21 for a vocabulary rounded down), the right formula with another n.
    Only a value written with decimals is read so (9 or 10 are guesses, not logs)."""
    decimals = _decimals(given)
    if not 4 < given < 25 or decimals == 0:
        return None
    slack = 1e-6 if decimals is None else 0.5 * 10.0**-decimals + 1e-9
    n = float(f"{math.exp(given):.0e}")  # the round number (one digit) nearest e^given
    if abs(math.log(n) - given) > slack:
        return None
    return (
        f"that is ln {n:,.0f}: minus the log of 1/n is the right idea, but with n = "
        f"{n:,.0f} tokens; the question's vocabulary has {_GPT2_VOCAB:,}"
    )


INITIAL_LOSS = GRADERS.add(
    Question(
        name="initial_loss",
        answer=math.log(_GPT2_VOCAB),
        # "about": 11, 10.8 or 10.83 (within ±0.2); the nearest plausible wrong answer,
        # ln 30,522 = 10.33 (BERT's vocabulary, not GPT-2's), is 0.49 away
        atol=0.2,
        explanation=f"an untrained model spreads its probability about evenly over the "
        f"{_GPT2_VOCAB:,} tokens, so the right token gets about 1/{_GPT2_VOCAB:,} and the "
        f"cross-entropy -ln(1/n_vocab) = ln n_vocab = {math.log(_GPT2_VOCAB):.2f}. A first loss far "
        "above ln n_vocab means the initial logits are too large (a confident, wrong model).",
        wrong=(
            (
                math.log2(_GPT2_VOCAB),
                "that is log base 2 (bits); PyTorch's cross-entropy uses the natural log",
            ),
            (
                math.log10(_GPT2_VOCAB),
                "that is log base 10; the cross-entropy uses the natural log",
            ),
            (
                _GPT2_VOCAB,
                "that is the number of tokens: each gets probability 1/n_vocab, and the "
                "loss is minus the log of the probability of the right one",
            ),
            (
                -math.log(_GPT2_VOCAB),
                "the right size with the wrong sign: a cross-entropy is never negative; it is "
                "minus the log of a probability below 1",
            ),
            (
                math.log(math.log(_GPT2_VOCAB)),
                "that is the log taken twice, ln(ln n_vocab): the loss is minus the log of "
                "the right token's probability, one log",
            ),
            (
                math.log(_GPT2_VOCAB) / 2,
                "that is half of ln n_vocab: the cross-entropy is -ln(1/n_vocab) = "
                "ln n_vocab, with no factor 1/2",
            ),
            (
                math.log(28),
                "ln 28 is the first loss of the chapter's date task, with its 28 tokens; "
                f"here the vocabulary has {_GPT2_VOCAB:,}",
            ),
            (
                1,
                "equal logits do not give a loss of 1: the right token gets probability "
                f"1/{_GPT2_VOCAB:,}, and the loss is minus the log of that",
            ),
            (
                0,
                "about 0 is the loss of a perfect model (or, 1/n_vocab, the probability an "
                "untrained model gives the right token); the loss is minus the log of "
                "that probability",
            ),
            (
                math.log(2),
                "ln 2 is the loss of a coin flip, a choice between two equally likely "
                f"classes; here the model chooses among {_GPT2_VOCAB:,} tokens",
            ),
            (
                math.log(_GPT2_VOCAB) / _GPT2_VOCAB,
                "that is ln n_vocab divided by n_vocab: the cross-entropy averages over "
                "positions, not over the vocabulary's entries; at each position only the "
                "right token's log-probability counts, once",
            ),
            (
                math.sqrt(_GPT2_VOCAB),
                "that is the square root of n_vocab, a scale like the attention's √d_k "
                "(chapter 3), not a loss: the cross-entropy is minus the log of the "
                "probability the model gives the right token",
            ),
        ),
        reason=_loss_reason,
        hint="if every token gets the same probability, what is the probability of the "
        "right one, and what is minus its log?",
        equivalent=(
            (
                "answer = math.log(50256)",
                "one token fewer changes ln n_vocab in the fifth decimal: the same loss",
            ),
            (
                "answer = math.log(50258)",
                "one token more changes ln n_vocab in the fifth decimal: the same loss",
            ),
        ),
    )
)


def check_initial_loss(answer: Any) -> CheckResult:
    """Check a predicted cross-entropy at step 0 for a vocabulary of 50,257 tokens.

    Taught in: chapters/07_transformer.ipynb (exercise in exercises/07_transformer.ipynb)
    """
    return INITIAL_LOSS.check(answer)


summary = GRADERS.summary
