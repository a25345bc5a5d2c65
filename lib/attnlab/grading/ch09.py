"""Graders for chapter 9's exercises: a GPT on real text.

Perplexity and bits per character from a loss (NumPy); the top-k and top-p (nucleus)
distributions a sampler draws from (torch, graded on the distributions, not on draws);
beam search of width 2 on tiny models the grader builds; RMSNorm and the SwiGLU
feed-forward network as ``nn.Module`` classes (weights copied in from PyTorch's
``nn.RMSNorm`` and the course's :class:`~attnlab.mechanism.modern.SwiGLU`, gradients
compared); and two predictions: what lowering the temperature does to repetition, and
how many parameters weight tying saves.

Each grader compares the learner's code with the attnlab reference
(:mod:`attnlab.mechanism.sampling`, :mod:`attnlab.mechanism.modern`) or PyTorch's own on
seeded cases, and knows the planted mistakes of each exercise (see
:mod:`attnlab.grading.pipeline`).

Taught in: exercises/09_capstone.ipynb
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from ..mechanism.modern import SwiGLU, silu
from ..mechanism.sampling import beam_search as _beam_search
from ..mechanism.sampling import bits_per_token, perplexity, top_k_probs, top_p_probs
from .gradients import Recorder, cut_by, require_gradient
from .modules import adapt, check_class, check_function, memoised
from .pipeline import Grader
from .questions import Question
from .registry import ChapterGraders
from .results import CheckResult
from .specs import AnswerProblem, Case, Mistake, Property
from .status import NO_GRADIENT, WRONG_TYPE, WRONG_VALUES

__all__ = [
    "GRADERS",
    "check_beam_search",
    "check_loss_metrics",
    "check_rms_norm",
    "check_swiglu",
    "check_temperature_repetition",
    "check_tied_savings",
    "check_top_k",
    "check_top_p",
    "summary",
]

GRADERS = ChapterGraders(__name__, mutants_reviewed=True)
"""Chapter 9's exercises, in the order of the notebook."""

LN2 = math.log(2)
_NO_SUPER = (
    "cannot assign module before Module.__init__() call",
    "call super().__init__() first in your __init__: nn.Module sets up the registry of "
    "parameters and layers there, before any can be assigned",
)
_LOSS_SECTION = 'the chapter\'s section "Cross-entropy, bits per character and perplexity"'
_DECODING_SECTION = (
    'the chapter\'s section "Decoding: greedy, temperature, top-k, top-p and beam search"'
)
_MODERN_SECTION = 'the chapter\'s section "What modern blocks change"'


def _numpy_only(message: str) -> str | None:
    """A torch call on the NumPy arrays of a NumPy exercise."""
    low = message.lower()
    if "numpy" not in low and "dim" not in message and "tensor" not in low:
        return None
    return (
        "this exercise is in NumPy: `loss` is a NumPy array, not a tensor; write it with "
        "NumPy functions (np.exp, np.log, np.log2, **), whose results are NumPy arrays"
    )


def _torch_only(message: str) -> str | None:
    """A NumPy call on the tensors of a torch exercise."""
    low = message.lower()
    if "numpy" not in low and "axis" not in low and "tensor" not in low:
        return None
    return (
        "this exercise is in torch: `logits` is a torch tensor; write it with torch "
        "functions (torch.softmax, torch.topk, torch.sort, torch.cumsum), whose reductions "
        "take `dim=`, not `axis=`, and keep the result a tensor (so gradients can flow)"
    )


# --- 9.1 perplexity and bits per character --------------------------------------------------


def _loss_metrics_reference(loss: Any) -> tuple[Any, Any]:
    return perplexity(loss), bits_per_token(loss)


def _loss_cases() -> tuple[Case, ...]:
    rng = np.random.default_rng(9)
    return (
        Case("one loss, 1.88 nats", {"loss": np.array([1.88])}),
        Case("a uniform guess over 65 characters, ln 65", {"loss": np.array([math.log(65)])}),
        Case("ln 2: one bit", {"loss": np.array([LN2, 2 * LN2])}),
        Case("a perfect model, loss 0, and others", {"loss": np.array([0.0, 0.5, 3.3])}),
        Case("a (3, 4) table of losses", {"loss": 0.5 + 3.0 * rng.random((3, 4))}),
        Case("large losses, up to 30 nats", {"loss": np.array([12.0, 30.0])}),
    )


def _metrics(ppl: Callable[[Any], Any], bits: Callable[[Any], Any]) -> Callable[..., Any]:
    def loss_metrics(loss: Any) -> tuple[Any, Any]:
        with np.errstate(all="ignore"):
            return ppl(np.asarray(loss)), bits(np.asarray(loss))

    return loss_metrics


_RIGHT_PPL = np.exp
_RIGHT_BITS = lambda x: x / LN2  # noqa: E731


LOSS_METRICS = GRADERS.add(
    Grader(
        name="loss_metrics",
        signature="loss_metrics(loss) with loss: (...) in nats -> (perplexity, bits)",
        reference=_loss_metrics_reference,
        cases=_loss_cases(),
        outputs=("perplexity", "bits"),
        mistakes=(
            Mistake(
                "your perplexity is 2 to the loss: the loss is in nats (natural log), so "
                "the perplexity is e to the loss; 2 to the power is for a loss in bits",
                _metrics(lambda x: 2.0**x, _RIGHT_BITS),
            ),
            Mistake(
                "your bits are the loss times ln 2: a nat is 1/ln 2 ≈ 1.443 bits, so divide "
                "by ln 2 (the bits are more than the nats, not fewer)",
                _metrics(_RIGHT_PPL, lambda x: x * LN2),
            ),
            Mistake(
                "your bits are log2 of the loss: the loss is already a (mean) log; only its "
                "unit changes, nats to bits, by dividing by ln 2",
                _metrics(_RIGHT_PPL, np.log2),
            ),
            Mistake(
                "your bits are the loss divided by ln 10 (or log10 of e): that converts to "
                "digits (base 10), not bits; divide by ln 2",
                _metrics(_RIGHT_PPL, lambda x: x / math.log(10)),
            ),
            Mistake(
                "your perplexity is e to the bits: perplexity is e to the loss in nats, or "
                "equally 2 to the loss in bits, not a mix of the two",
                _metrics(lambda x: np.exp(x / LN2), _RIGHT_BITS),
            ),
            Mistake(
                "your perplexity is the loss itself, or its log: perplexity undoes the log "
                "of the loss, e to the loss",
                _metrics(lambda x: x, _RIGHT_BITS),
            ),
            Mistake(
                "your perplexity is e to *minus* the loss, below 1: a perplexity is at least "
                "1 (the number of equally likely choices); the loss is already the negative "
                "mean log-probability, so the perplexity is e to the loss itself",
                _metrics(lambda x: np.exp(-x), _RIGHT_BITS),
            ),
            *(
                Mistake(
                    "your bits use a rounded constant for ln 2 (or 1/ln 2 ≈ 1.4427): the "
                    "rounding shows in the third digit; compute the conversion (np.log(2)) "
                    "rather than typing it",
                    _metrics(_RIGHT_PPL, rounded),
                )
                for rounded in (
                    lambda x: x * 1.44,
                    lambda x: x * 1.4,
                    lambda x: x * 1.443,
                    lambda x: x / 0.69,
                    lambda x: x / 0.7,
                    lambda x: x / 0.693,
                )
            ),
            Mistake(
                "your outputs are in the other order: return (perplexity, bits)",
                lambda loss: _loss_metrics_reference(loss)[::-1],
            ),
        ),
        hint="the loss is a mean of natural logs (nats): perplexity undoes that log, and a "
        f"change of base turns nats into bits ({_LOSS_SECTION})",
        error_hints=(
            (
                "arrays can be converted to Python scalars",
                "math.exp and math.log take one Python number, and `loss` is a NumPy array "
                "of any shape (a loop over a table visits its rows, not numbers): use "
                "NumPy's functions, which work on every element at once",
            ),
            ("must be Tensor", _numpy_only),
            ("unexpected keyword argument 'dim'", _numpy_only),
            ("'numpy.ndarray' object has no attribute", _numpy_only),
        ),
        rtol=1e-9,
    )
)


def check_loss_metrics(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(loss) -> (perplexity, bits)``: a loss in nats as perplexity and bits.

    Taught in: chapters/09_capstone.ipynb (exercise in exercises/09_capstone.ipynb)
    """
    return LOSS_METRICS.check(fn)


# --- 9.2 top-k ----------------------------------------------------------------------------


def _logits(g: torch.Generator, *shape: int, scale: float = 2.0, loc: float = 0.0) -> torch.Tensor:
    return loc + scale * torch.randn(*shape, generator=g, dtype=torch.float64)


def _f64(values: Any) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def _sampling_cases(
    seed: int, name: str, values: tuple[Any, ...], special: tuple[Case, ...]
) -> tuple[Case, ...]:
    """The cases top-k and top-p share, with ``values`` for the parameter ``name`` (``k``
    or ``p``), in order, around the exercise's own ``special`` cases: one row, a batch,
    logits near 1000, a temperature below 1 on a (2, 3, 6) batch, one above 1 on a batch
    of 1."""
    g = torch.Generator().manual_seed(seed)
    shared = (
        ("one row, V=5", _f64([1.0, 3.0, 0.5, 2.0, -1.0]), {}),
        ("a batch of 3 rows, V=7", _logits(g, 3, 7), {}),
        ("logits near 1000", _logits(g, 2, 5, loc=1000.0), {}),
        ("temperature 0.5, (2, 3, 6)", _logits(g, 2, 3, 6), {"temperature": 0.5}),
        ("a temperature above 1, (1, 9)", _logits(g, 1, 9), {"temperature": 2.5}),
    )
    cases = [
        Case(f"{label}, {name}={value}", {"logits": logits, name: value}, options)
        for (label, logits, options), value in zip(shared, values, strict=True)
    ]
    return (*cases[:2], *special, *cases[2:])


def _top_k_cases() -> tuple[Case, ...]:
    g = torch.Generator().manual_seed(92)
    far = _logits(g, 3, 6)
    far[1] += 100.0  # each row's own k-th largest matters
    far[2] -= 100.0
    special = (
        Case(
            "a tie with the k-th logit, k=2",
            {"logits": _f64([[0.5, 2.0, 1.0, -1.0, 1.0], [3.0, 1.0, 1.0, 1.0, 0.0]]), "k": 2},
        ),
        Case("k = 1", {"logits": _logits(g, 2, 6), "k": 1}),
        Case("k = V = 6", {"logits": _logits(g, 2, 6), "k": 6}),
        Case("logits near -20000, k=2", {"logits": _logits(g, 2, 5, loc=-20000.0), "k": 2}),
        Case("rows far apart (near 0, 100 and -100), k=2", {"logits": far, "k": 2}),
    )
    return _sampling_cases(192, "k", (2, 3, 3, 4, 3), special)


def _top_k_with(
    threshold: str = "row",
    exact_k: bool = False,
    strict: bool = False,
    renormalise: bool | str = True,
    temperature: str = "before",
    fill: float = -math.inf,
) -> Callable[..., Any]:
    """A top-k distribution with one planted difference."""

    def top_k(logits: Any, k: int, temperature_: float = 1.0, **options: Any) -> Any:
        tau = options.get("temperature", temperature_)
        z = logits / tau if temperature == "before" else logits
        if temperature == "times":
            z = logits * tau
        if strict and k < z.shape[-1]:
            keep = z > torch.topk(z, k + 1, dim=-1).values[..., -1:]
        elif exact_k:
            index = torch.topk(z, k, dim=-1).indices
            keep = torch.zeros_like(z, dtype=torch.bool).scatter(-1, index, True)
        elif threshold == "k-th smallest":
            keep = z >= torch.kthvalue(z, k, dim=-1, keepdim=True).values
        elif threshold == "max":
            keep = z >= z.max(dim=-1, keepdim=True).values
        elif threshold == "sorted[k]":  # the (k+1)-th largest: k + 1 kept
            ranked = torch.sort(z, dim=-1, descending=True).values
            keep = z >= ranked[..., min(k, z.shape[-1] - 1), None]
        elif threshold == "axis dropped":  # the k-th largest without its axis: (...,)
            keep = z >= torch.topk(z, k, dim=-1).values[..., -1]
        elif threshold == "global":
            kth = torch.topk(z.reshape(-1), k).values[-1]
            keep = z >= kth
        else:
            keep = z >= torch.topk(z, k, dim=-1).values[..., -1:]
        if renormalise == "max":
            kept = torch.softmax(z, dim=-1) * keep
            return kept / kept.max(dim=-1, keepdim=True).values
        if not renormalise:
            return torch.softmax(z, dim=-1) * keep
        probs = torch.softmax(z.masked_fill(~keep, fill), dim=-1)
        if temperature == "divides probs":
            return probs / tau
        if temperature in ("after", "power probs"):
            probs = probs ** (1 / tau)
        if temperature == "after":
            probs = probs / probs.sum(dim=-1, keepdim=True)
        return probs

    return top_k


_UNSTABLE_SORT = (
    "torch.sort on the CPU keeps tied entries in index order for rows this short, stable "
    "or not: the order the statement asks for; an unstable sort that reorders ties (on "
    "another device) gets the ties diagnosis"
)


TOP_K = GRADERS.add(
    Grader(
        name="top_k",
        signature="top_k(logits, k, temperature=1.0) with logits: (..., V) -> probs (..., V)",
        reference=lambda logits, k, temperature=1.0: top_k_probs(logits, k, temperature),
        cases=_top_k_cases(),
        outputs=("probs",),
        mistakes=(
            Mistake(
                "you kept exactly k tokens (the indices torch.topk returns): a token tied with "
                "the k-th largest logit is as likely as it, and the statement keeps it too; "
                "compare every logit with the k-th largest value of its row",
                _top_k_with(exact_k=True),
            ),
            Mistake(
                "you kept the logits above the (k+1)-th largest: when the k-th and the "
                "(k+1)-th are tied, the tied tokens are dropped, though each is as likely as "
                "the k-th; keep every logit at least as large as the k-th largest",
                _top_k_with(strict=True),
            ),
            Mistake(
                "you took one k-th largest logit for the whole batch: each row (each "
                "position's next token) keeps its own k most likely tokens; take the k-th "
                "largest along the last axis, one per row",
                _top_k_with(threshold="global"),
            ),
            Mistake(
                "your kept probabilities are not renormalised: you zeroed the tokens outside "
                "the top k after the softmax, so each row sums to less than 1; hide them "
                "before the softmax (or divide by the kept mass)",
                _top_k_with(renormalise=False),
            ),
            Mistake(
                "your threshold is the k-th *smallest* logit (torch.kthvalue counts from the "
                "bottom): top-k keeps the k largest, so the threshold is the k-th largest of "
                "each row",
                _top_k_with(threshold="k-th smallest"),
            ),
            Mistake(
                "your threshold is each row's largest logit, so only the maximum is kept: "
                "the threshold is the k-th largest, the last of the k values torch.topk "
                "returns, not the first",
                _top_k_with(threshold="max"),
            ),
            Mistake(
                "you kept k + 1 tokens: the sorted logits are counted from 0, so the k-th "
                "largest sits at index k - 1, not k",
                _top_k_with(threshold="sorted[k]"),
            ),
            Mistake(
                "you divided the kept probabilities by their largest one: a distribution's "
                "probabilities sum to 1, so divide by their sum (or hide the other tokens "
                "before the softmax)",
                _top_k_with(renormalise="max"),
            ),
            Mistake(
                "you divided the probabilities by the temperature after the softmax: the "
                "rows no longer sum to 1; the temperature divides the logits, before the "
                "softmax",
                _top_k_with(temperature="divides probs"),
            ),
            Mistake(
                "you applied the temperature to the probabilities after the softmax (a "
                "power 1/temperature): the rows no longer sum to 1; the temperature divides "
                "the logits, before the softmax",
                _top_k_with(temperature="power probs"),
            ),
            Mistake(
                "your threshold, the k-th largest logit, lost its axis: `values[..., -1]` "
                "is one number per row, shape (...,), and compared with the logits (..., V) "
                "it lines up against the vocabulary axis instead of the rows; keep the "
                "axis, a threshold of shape (..., 1)",
                _top_k_with(threshold="axis dropped"),
            ),
            Mistake(
                "you multiplied the logits by the temperature: divide by it (a temperature "
                "below 1 sharpens the distribution)",
                _top_k_with(temperature="times"),
            ),
            Mistake(
                "the temperature has no effect: it is not used, or it divides the "
                "probabilities after the softmax, where renormalising cancels it; divide "
                "the logits by it, before the softmax",
                _top_k_with(temperature="ignored"),
            ),
            Mistake(
                "the hidden tokens got logit 0, not -inf: exp(0) is not 0, so they keep a "
                "probability (a large one when the other logits are negative); give them "
                "-inf, so that the softmax gives them exactly 0",
                _top_k_with(fill=0.0),
            ),
            Mistake(
                "the hidden tokens got logit -1e4: when the logits themselves are below "
                "-1e4 (the case near -20000) the hidden tokens become the likeliest; use "
                "-inf",
                _top_k_with(fill=-1e4),
            ),
        ),
        hint="per row: the k-th largest logit is the threshold, every token below it gets "
        "probability 0, the others share the mass as a softmax at the temperature does "
        f"({_DECODING_SECTION})",
        error_hints=(
            ("unexpected keyword argument 'axis'", _torch_only),
            ("'Tensor' object has no attribute 'astype'", _torch_only),
            ("must be real number, not Tensor", _torch_only),
            (
                "selected index k out of range",
                "torch.topk needs k <= the size of the axis it runs along: take it "
                "along the vocabulary, the last axis (dim=-1)",
            ),
        ),
        equivalent=tuple(
            (
                f'fill: float("-inf") in z = z.masked_fill(z < kth, float("-inf")) -> {fill}',
                "a fill this far below any logit a model gives (the cases go down to "
                "-20000) gets probability e^(fill - max) = 0 exactly, as -inf does; the "
                "fills 0 and -1e4 are caught",
            )
            for fill in ("-1000000000.0",)
        ),
    )
)


def check_top_k(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(logits, k, temperature=1.0)``: the top-k sampling distribution.

    Taught in: chapters/09_capstone.ipynb (exercise in exercises/09_capstone.ipynb)
    """
    return TOP_K.check(fn)


# --- 9.3 top-p ----------------------------------------------------------------------------


def _top_p_cases() -> tuple[Case, ...]:
    g = torch.Generator().manual_seed(93)
    sure_and_unsure = torch.stack([_logits(g, 7, scale=0.3), _logits(g, 7, scale=0.3)])
    sure_and_unsure[0, 3] += 6.0  # one token holds most of the mass in the first row
    special = (
        Case(
            "p exactly at a sum: 4 equal tokens, p=0.5",
            {"logits": torch.zeros(1, 4, dtype=torch.float64), "p": 0.5},
        ),
        Case(
            "a tie inside the nucleus, p=0.8",
            {"logits": _f64([[0.0, 2.0, 1.0, 2.0, -1.0]]), "p": 0.8},
        ),
        Case("p tiny (1e-9): the likeliest token only", {"logits": _logits(g, 2, 6), "p": 1e-9}),
        Case("p = 1.0: every token", {"logits": _logits(g, 2, 6), "p": 1.0}),
        Case("one sure row, one unsure row, p=0.9", {"logits": sure_and_unsure, "p": 0.9}),
    )
    return _sampling_cases(193, "p", (0.9, 0.5, 0.8, 0.7, 0.6), special)


def _top_p_with(
    keep: str = "before < p",
    order: str = "descending",
    renormalise: bool = True,
    back: bool | str = True,
    temperature: str = "before",
    first_kept: bool = False,
    running: str = "probs",
) -> Callable[..., Any]:
    """A nucleus distribution with one planted difference."""

    def top_p(logits: Any, p: float, temperature_: float = 1.0, **options: Any) -> Any:
        tau = options.get("temperature", temperature_)
        z = logits / tau if temperature == "before" else logits
        probs = torch.softmax(z, dim=-1)
        descending = order != "ascending"
        sorted_p, index = torch.sort(probs, dim=-1, descending=descending, stable=True)
        if order == "ids":  # the running mass in token-id order: no sort
            sorted_p, index = probs, torch.arange(probs.shape[-1]).expand(probs.shape)
        if order == "ties last":  # ties taken larger id first
            V = probs.shape[-1]
            flipped = torch.sort(probs.flip(-1), dim=-1, descending=True, stable=True)
            index = V - 1 - flipped.indices
            sorted_p = flipped.values
        summed = sorted_p
        if running == "logits":
            summed = torch.sort(z, dim=-1, descending=True, stable=True).values
        cumulative = torch.cumsum(summed, dim=-1)
        before = cumulative - summed
        kept_sorted = {
            "before < p": before < p,
            "before <= p": before <= p,
            "cumulative <= p": cumulative <= p,
            "cumulative < p": cumulative < p,
            "cumulative >= p": cumulative >= p,
        }[keep]
        if first_kept:
            kept_sorted = kept_sorted.clone()
            kept_sorted[..., 0] = True
        if back == "gather":
            kept = probs * kept_sorted.gather(-1, index)
        elif back == "gather values":
            kept = (sorted_p * kept_sorted).gather(-1, index)
        elif back == "mask as is":  # the sorted-order mask on the id-order probabilities
            kept = probs * kept_sorted
        elif back == "by value":  # every token at least as likely as the last kept one
            smallest = torch.where(kept_sorted, sorted_p, torch.full_like(sorted_p, 2.0))
            kept = probs * (probs >= smallest.min(dim=-1, keepdim=True).values)
        elif not back:
            kept = sorted_p * kept_sorted
        else:
            mask = torch.zeros_like(kept_sorted).scatter(-1, index, kept_sorted)
            kept = probs * mask
        if not renormalise:
            return kept
        with np.errstate(all="ignore"):
            return kept / kept.sum(dim=-1, keepdim=True)

    return top_p


TOP_P = GRADERS.add(
    Grader(
        name="top_p",
        signature="top_p(logits, p, temperature=1.0) with logits: (..., V) -> probs (..., V)",
        reference=lambda logits, p, temperature=1.0: top_p_probs(logits, p, temperature),
        cases=_top_p_cases(),
        outputs=("probs",),
        mistakes=(
            Mistake(
                "you dropped the token whose probability takes the mass past p: the nucleus "
                "is the fewest tokens whose mass reaches p, so the token that crosses p is "
                "kept (keep a token while the mass *before* it is below p)",
                _top_p_with(keep="cumulative <= p"),
            ),
            Mistake(
                "you kept only the tokens whose running mass stays below p: the token that "
                "reaches or crosses p belongs to the nucleus too, and with a tiny p your "
                "nucleus is empty; keep a token while the mass *before* it is below p",
                _top_p_with(keep="cumulative < p"),
            ),
            Mistake(
                "you dropped the token whose probability takes the mass past p (keeping "
                "the first token by hand only hides it when the first alone passes p): the "
                "nucleus is the fewest tokens whose mass reaches p, so the token that "
                "crosses p is kept; test the mass *before* each token, not the mass up to "
                "and including it",
                _top_p_with(keep="cumulative <= p", first_kept=True),
            ),
            Mistake(
                "you kept only the tokens whose running mass (including their own) stays "
                "below p, plus the first by hand: the token that reaches or crosses p "
                "belongs to the nucleus too; test the mass *before* each token against p",
                _top_p_with(keep="cumulative < p", first_kept=True),
            ),
            Mistake(
                "your mask is inverted: you kept the tokens whose running mass is already "
                "at least p, the unlikely tail, and dropped the nucleus (a row with nothing "
                "kept then divides 0 by 0); keep the tokens whose mass *before* them is "
                "still below p",
                _top_p_with(keep="cumulative >= p"),
            ),
            Mistake(
                "you added up the probabilities in token-id order, without sorting: the "
                "nucleus is the most likely tokens, so the running mass must go down the "
                "probabilities sorted largest first",
                _top_p_with(order="ids"),
            ),
            Mistake(
                "your running mass adds up logits, not probabilities: logits are not a "
                "share of anything (they can be negative, and their sum is not 1); take "
                "the softmax first, sort those probabilities and add them up",
                _top_p_with(running="logits"),
            ),
            Mistake(
                "you applied the keep mask, which is in sorted order, directly to the "
                "tokens in id order: entry i of the mask is about the i-th likeliest "
                "token, not token i; put the mask back in id order first (scatter with "
                "the sort's indices)",
                _top_p_with(back="mask as is"),
            ),
            Mistake(
                "you put the kept probabilities back with gather(-1, order): that applies "
                "the sort's permutation once more instead of undoing it; scatter(-1, "
                "order, ...) writes each sorted entry back at its token's id (or gather "
                "with the inverse order, order.argsort(dim=-1))",
                _top_p_with(back="gather values"),
            ),
            Mistake(
                "you kept one token too many when the mass reaches p exactly: four tokens "
                "of 0.25 and p = 0.5 keep two (0.25 + 0.25 reaches p); keep a token while "
                "the mass before it is strictly below p",
                _top_p_with(keep="before <= p"),
            ),
            Mistake(
                "you chose the nucleus by probability value (every token at least as likely "
                "as the last one kept): a token tied with that one but past the cut comes "
                "in too, so four tokens of 0.25 with p = 0.5 keep all four; decide which "
                "tokens to keep by their position in the sorted order, then put that mask "
                "back in id order",
                _top_p_with(back="by value"),
            ),
            Mistake(
                "you sorted the probabilities in increasing order: the nucleus takes the "
                "*most* likely tokens first (descending=True)",
                _top_p_with(order="ascending"),
            ),
            Mistake(
                "your probabilities are in sorted order, not in token-id order: after "
                "choosing the nucleus in sorted order, put each kept probability back at "
                "its token's id (scatter with the sort's indices)",
                _top_p_with(back=False),
            ),
            Mistake(
                "you put the kept mask back with gather(-1, order): that applies the sort's "
                "permutation once more instead of undoing it; scatter(-1, order, ...) writes "
                "each sorted entry back at its token's id (or gather with the inverse order, "
                "order.argsort(dim=-1))",
                _top_p_with(back="gather"),
            ),
            Mistake(
                "your kept probabilities are not renormalised: divide them by their sum, so "
                "that each row sums to 1",
                _top_p_with(renormalise=False),
            ),
            Mistake(
                "the temperature has no effect: it is not used, or it divides the "
                "probabilities after the softmax, where renormalising cancels it; divide "
                "the logits by it before the softmax (the nucleus is chosen from the "
                "tempered probabilities)",
                _top_p_with(temperature="ignored"),
            ),
            Mistake(
                "on a tie your nucleus takes the tied token with the larger id first: the "
                "statement orders ties by id, smaller first (a stable sort keeps that "
                "order: torch.sort(..., descending=True, stable=True))",
                _top_p_with(order="ties last"),
            ),
        ),
        hint="per row: sort the probabilities (largest first), walk down the sorted list "
        "adding them up, and ask for each token whether the mass before it is already p; "
        f"then put the kept probabilities back in id order and renormalise ({_DECODING_SECTION})",
        error_hints=(
            ("unexpected keyword argument 'axis'", _torch_only),
            ("'Tensor' object has no attribute 'astype'", _torch_only),
            ("must be real number, not Tensor", _torch_only),
            (
                "scatter",
                "scatter(dim, index, src) writes src[i] at position index[i] along dim: "
                "index and src must have the same shape, the sort's indices and the kept "
                "mask (or probabilities) in sorted order",
            ),
        ),
        equivalent=(
            (
                "drop: torch.sort(probs, dim=-1, descending=True, stable=True) in "
                "sorted_p, order = torch.sort(probs, dim=-1, descending=True… -> "
                "torch.sort(probs, dim=-1, descending=True)",
                _UNSTABLE_SORT,
            ),
            (
                "constant: torch.zeros_like(keep_sorted) in keep = "
                "torch.zeros_like(keep_sorted).scatter(-1, order, kee… -> "
                "torch.ones_like(keep_sorted)",
                "the sort's indices are a permutation: scatter writes every position, so "
                "the starting values are all overwritten",
            ),
        ),
    )
)


def check_top_p(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(logits, p, temperature=1.0)``: the nucleus (top-p) sampling distribution.

    Taught in: chapters/09_capstone.ipynb (exercise in exercises/09_capstone.ipynb)
    """
    return TOP_P.check(fn)


# --- 9.4 beam search ------------------------------------------------------------------------


class TinyLM(nn.Module):
    """A tiny language model built by the grader: logits from the position and the last token.

    ``table[t, v]`` holds the logits of the token after a prefix of ``t + 1`` tokens that
    ends with ``v``: the model reads the whole sequence (its length matters), as a real one.
    """

    def __init__(self, table: torch.Tensor) -> None:
        super().__init__()
        self.register_buffer("table", table)  # (positions, V, V)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        T = ids.shape[1]
        positions = torch.arange(T)  # (T,)
        return self.table[positions[None, :], ids]  # (B, T) -> (B, T, V)


def _tiny_models() -> tuple[TinyLM, ...]:
    g = torch.Generator().manual_seed(94)

    def table(V: int, n: int, scale: float = 2.0) -> torch.Tensor:
        return scale * torch.randn(n, V, V, generator=g, dtype=torch.float64)

    # 0: greedy is not the best: the likeliest first token leads to flat next tokens
    trap = torch.zeros(4, 5, 5, dtype=torch.float64)
    trap[:, :, :] = torch.log(torch.full((5,), 0.2, dtype=torch.float64))
    first = torch.log(torch.tensor([0.05, 0.5, 0.4, 0.03, 0.02], dtype=torch.float64))
    trap[0, 0] = first  # after the prompt token 0 at position 0
    trap[1, 2] = torch.log(torch.tensor([0.9, 0.025, 0.025, 0.025, 0.025], dtype=torch.float64))
    # 2: every logit equal: every extension ties
    flat = torch.zeros(6, 3, 3, dtype=torch.float64)
    # 3: logits thousands apart: probabilities underflow, log-probabilities do not
    gaps = torch.tensor([0.0, -1000.0, -1700.0], dtype=torch.float64)  # every detour costs
    order = torch.argsort(torch.rand(5, 3, 3, generator=g), dim=-1)  # >= 1000 nats
    spread = gaps[order] + torch.randn(5, 3, 3, generator=g, dtype=torch.float64)
    return (
        TinyLM(trap),
        TinyLM(table(5, 8)),
        TinyLM(flat),
        TinyLM(spread),
        TinyLM(table(7, 9, scale=1.0)),
        TinyLM(table(3, 6, scale=3.0)),
    )


_MODELS = _tiny_models()


def _beam_cases() -> tuple[Case, ...]:
    def prompt(*ids: int) -> torch.Tensor:
        return torch.tensor([list(ids)])

    return (
        Case(
            "greedy's first token is not the best start, V=5, 2 new tokens",
            {"model": 0, "prompt": prompt(0), "beam_width": 2, "max_new_tokens": 2},
        ),
        Case(
            "a prompt of 3 tokens, V=5, 4 new tokens",
            {"model": 1, "prompt": prompt(1, 4, 2), "beam_width": 2, "max_new_tokens": 4},
        ),
        Case(
            "every extension ties, V=3, 3 new tokens",
            {"model": 2, "prompt": prompt(2, 1), "beam_width": 2, "max_new_tokens": 3},
        ),
        Case(
            "logits thousands apart (probabilities underflow), V=3",
            {"model": 3, "prompt": prompt(1), "beam_width": 2, "max_new_tokens": 4},
        ),
        Case(
            "one new token, V=7",
            {"model": 4, "prompt": prompt(3, 0), "beam_width": 2, "max_new_tokens": 1},
        ),
        Case(
            "width 3, V=3, 5 new tokens",
            {"model": 5, "prompt": prompt(0), "beam_width": 3, "max_new_tokens": 5},
        ),
    )


def _run_beam(fn: Any, model: int, prompt: Any, beam_width: int, max_new_tokens: int) -> Any:
    """One case: the learner's ``fn`` on the tiny model ``model`` (a fresh copy of it)."""
    lm = TinyLM(_MODELS[model].table.clone())
    return fn(lm, prompt, beam_width, max_new_tokens)


def _beam_reference(model: int, prompt: Any, beam_width: int, max_new_tokens: int) -> Any:
    def reference(lm: Any, prompt: Any, beam_width: int, max_new_tokens: int) -> Any:
        return _beam_search(lm, prompt, beam_width=beam_width, max_new_tokens=max_new_tokens)

    return _run_beam(reference, model, prompt, beam_width, max_new_tokens)


def _beam(
    score: str = "sum",
    grow: bool = False,
    include_prompt: bool = True,
    reads: str = "all",
    ties: str = "stable",
    parent: str = "flat // V",
    start: str = "prompt",
    extend: str = "every beam",
    normalise: str = "",
    ranking: str = "best first",
) -> Callable[..., Any]:
    """A beam search with one planted difference."""

    def beam_search(model: Any, prompt: Any, beam_width: int, max_new_tokens: int) -> Any:
        beams = prompt
        scores = torch.zeros(1, dtype=torch.float64)
        if start == "copies":
            beams = prompt.repeat(beam_width, 1)
            scores = torch.zeros(beam_width, dtype=torch.float64)
        for step in range(max_new_tokens):
            window = beams[:, -1:] if reads == "last" else beams
            position = 0 if reads == "first" else -1
            logits = model(window)[:, position].double()  # (k', V)
            V = logits.shape[-1]
            if extend == "greedy after the first" and step > 0:
                best_next = torch.log_softmax(logits, dim=-1).max(dim=-1)
                beams = torch.cat([beams, best_next.indices[:, None]], dim=1)
                scores = scores + best_next.values
                continue
            if extend == "best beam":
                logits, scores = logits[:1], scores[:1]
            if score == "logits":
                step_score = logits
            elif score == "probs":
                step_score = torch.softmax(logits, dim=-1)
            else:
                step_score = torch.log_softmax(logits, dim=-1)
            if score == "probs":
                total = (scores[:, None] if step else 1.0) * step_score
            elif score == "last step":
                total = step_score + 0.0 * scores[:, None]
            else:
                total = scores[:, None] + step_score
            flat = total.reshape(-1)
            if ties == "topk":
                best, order = torch.topk(flat, min(beam_width, flat.shape[0]))
            elif ties == "larger id":
                flat_rev = flat.flip(0)
                best, order = torch.sort(flat_rev, descending=True, stable=True)
                order = flat.shape[0] - 1 - order
            else:
                best, order = torch.sort(flat, descending=True, stable=True)
            width = beam_width * (beams.shape[0] if grow else 1)
            keep, best = order[:width], best[:width]
            rows = {
                "flat // V": keep // V,
                "flat % beams": keep % total.shape[0],  # // and % swapped
                "none": torch.zeros_like(keep),  # tokens appended, beams not reordered
                "flat // width": keep // beam_width,
                "flat // width, clamped": (keep // beam_width).clamp(max=beams.shape[0] - 1),
            }[parent]
            token = keep // total.shape[0] if parent == "flat % beams" else keep % V
            if parent.startswith("flat // width"):
                token = keep % beam_width
            if parent == "none" and beams.shape[0] > 1:
                rows = torch.arange(len(keep))
            beams = torch.cat([beams[rows], token[:, None]], dim=1)
            if score == "last step":
                scores = scores[keep // V] + step_score.reshape(-1)[keep]
            else:
                scores = best
        if score == "probs":
            scores = torch.log(scores)
        if normalise == "new tokens":
            scores = scores / max_new_tokens
        if normalise == "length":
            scores = scores / beams.shape[1]
        if extend == "greedy after the first":
            ranked = torch.sort(scores, descending=True, stable=True).indices
            beams, scores = beams[ranked], scores[ranked]
        if ranking == "worst first":
            beams, scores = beams.flip(0), scores.flip(0)
        out = beams if include_prompt else beams[:, prompt.shape[1] :]
        return out, scores

    return beam_search


def _planted_beam(**bug: Any) -> Callable[..., Any]:
    return memoised(adapt(_run_beam, _beam(**bug)))


def _beam_grows(outputs: dict[str, Any], case: Case) -> str | None:
    rows = outputs["ids"].shape[0] if outputs["ids"].ndim else 0
    if rows <= case.inputs["beam_width"]:
        return None
    return (
        f"your beam grows: {rows} sequences come back for beam_width="
        f"{case.inputs['beam_width']}; you kept beam_width extensions of *each* beam, but a "
        "beam keeps beam_width sequences in all, the best among every extension of every beam"
    )


def _positive_scores(outputs: dict[str, Any], case: Case) -> str | None:
    scores = np.asarray(outputs["log_probs"], dtype=float)
    if not np.any(scores > 0):
        return None
    return (
        "some of your scores are above 0: a log-probability is never positive (a "
        "probability is at most 1); return the summed log-probabilities, not "
        "probabilities (exp) or sums of raw logits"
    )


BEAM_SEARCH = GRADERS.add(
    Grader(
        name="beam_search",
        signature="beam_search(model, prompt, beam_width, max_new_tokens) with prompt: (1, T0) "
        "-> (ids (k, T0 + n), log_probs (k,))",
        reference=memoised(_beam_reference),
        cases=_beam_cases(),
        outputs=("ids", "log_probs"),
        mistakes=(
            Mistake(
                "you multiplied probabilities: over a few tokens they underflow to 0 and "
                "every sequence ties (the case with logits thousands apart); add "
                "log-probabilities instead (log_softmax), which never underflow",
                _planted_beam(score="probs"),
            ),
            Mistake(
                "you scored each extension by its last token's log-probability alone: a "
                "sequence's score is the sum of the log-probabilities of all its new tokens, "
                "the beam's score so far plus the new token's",
                _planted_beam(score="last step"),
            ),
            Mistake(
                "you added the raw logits: a logit is not a log-probability until the "
                "log-softmax subtracts the row's log-sum-exp (each step's logits may be "
                "shifted by any constant)",
                _planted_beam(score="logits"),
            ),
            Mistake(
                "you divided the scores by the number of new tokens (length normalisation): "
                "every continuation here has the same length, and the statement asks for the "
                "summed log-probability",
                _planted_beam(normalise="new tokens"),
            ),
            Mistake(
                "you divided the scores by the sequences' length (length normalisation): "
                "every continuation here has the same length, and the statement asks for the "
                "summed log-probability of the new tokens, not a mean per token",
                _planted_beam(normalise="length"),
            ),
            Mistake(
                "your tokens are right but each is appended to the beam in the same row, "
                "not to the beam it extends: after choosing the best (beam, token) pairs, "
                "reorder the beams by each pair's parent beam before appending its token",
                _planted_beam(parent="none"),
            ),
            Mistake(
                "you read the flat index the wrong way round: in a (beams, V) table "
                "flattened row by row, the row (the parent beam) is the index divided by "
                "the row's length V, and the token is the remainder",
                _planted_beam(parent="flat % beams"),
            ),
            Mistake(
                "you split the flat index with beam_width: in a (beams, V) table flattened "
                "row by row, each beam's row holds V entries, one per token, so the parent "
                "beam and the token come from the row's length V, not from the beam width",
                _planted_beam(parent="flat // width"),
            ),
            Mistake(
                "you split the flat index with beam_width (and clamped the beam to stay in "
                "range, which hides the error): in a (beams, V) table flattened row by row, "
                "each beam's row holds V entries, one per token, so the parent beam and the "
                "token come from the row's length V, not from the beam width",
                _planted_beam(parent="flat // width, clamped"),
            ),
            Mistake(
                "you started with beam_width copies of the prompt: at the first step the "
                "copies offer the same extensions, so the same sequence is kept several "
                "times; start with one beam, the prompt, with score 0",
                _planted_beam(start="copies"),
            ),
            Mistake(
                "you extend only the best beam at each step: every kept beam competes, "
                "each with all its extensions; the best pairs may come from the second "
                "beam",
                _planted_beam(extend="best beam"),
            ),
            Mistake(
                "after the first step each beam takes its own likeliest token (greedy per "
                "beam): at every step all extensions of all beams compete for the "
                "beam_width places",
                _planted_beam(extend="greedy after the first"),
            ),
            Mistake(
                "you took the logits of the first position ([:, 0]): the next token's "
                "logits are at the last position of each beam ([:, -1])",
                _planted_beam(reads="first"),
            ),
            Mistake(
                "your beams come back worst first: return them best first, in descending "
                "order of score",
                _planted_beam(ranking="worst first"),
            ),
            Mistake(
                "your beam grows: you kept beam_width extensions of *each* beam; keep "
                "beam_width sequences in all, the best among every extension of every beam",
                _planted_beam(grow=True),
            ),
            Mistake(
                "your sequences leave out the prompt: return them whole, the prompt's T0 "
                "tokens and then the new ones",
                _planted_beam(include_prompt=False),
            ),
            Mistake(
                "you gave the model only the last token: it reads the whole sequence (the "
                "tiny model's logits depend on the position too), so pass each beam's "
                "tokens so far and take the last position's logits",
                _planted_beam(reads="last"),
            ),
            Mistake(
                "torch.topk returns tied scores in no promised order (here not the smaller "
                "index first), so on a tie your beams come out in another order: the "
                "statement breaks ties by the earlier beam, then the smaller id; a stable "
                "sort of the flattened scores, torch.sort(..., descending=True, "
                "stable=True), keeps that order",
                _planted_beam(ties="topk"),
            ),
            Mistake(
                "on a tie your beam prefers the larger token id (or the later beam): the "
                "statement breaks ties by the earlier beam, then the smaller id; a stable "
                "sort of the flattened (beam, token) scores keeps that order",
                _planted_beam(ties="larger id"),
            ),
        ),
        hint="at each step: the log-probabilities of every next token for every beam, each "
        "added to its beam's score so far, then the beam_width best of all those (beam, "
        f"token) pairs, and their tokens appended to their beams ({_DECODING_SECTION})",
        error_hints=(
            ("unexpected keyword argument 'axis'", _torch_only),
            (
                "tensors used as indices must be long",
                "the model looks its tokens up by id, and your beams hold floats: token ids "
                "are integers; keep the beams an integer tensor (the prompt's dtype) when "
                "you append the new tokens, without .float() or .double()",
            ),
            (
                "Tensors must have same number of dimensions",
                "torch.cat joins tensors with the same number of axes: the kept beams are "
                "(k, t) and the new tokens (k,); make the tokens a column, (k, 1), with "
                "[:, None], then join along dim=1",
            ),
            (
                "Sizes of tensors must match except in dimension",
                "torch.cat joins tensors along one dim: the kept beams are (k, t) and the "
                "new tokens must be (k, 1), a column, joined along dim=1",
            ),
        ),
        properties=(Property(_beam_grows), Property(_positive_scores)),
        solution="beam_search",
        wrap=lambda fn: adapt(_run_beam, fn),
        equivalent=(
            (
                "library: return beams, scores -> return (torch.from_numpy(beams.detach()."
                "numpy().copy()), sco",
                "token ids carry no gradient: a copy through NumPy is the same tensor",
            ),
            (
                "library: return beams, scores -> return (beams, torch.from_numpy(scores."
                "detach().numpy().copy",
                "the scores of a search are not trained through: a copy through NumPy is "
                "the same numbers",
            ),
            (
                "dtype: torch.zeros(1, dtype=torch.float64) in scores = torch.zeros(1, "
                "dtype=torch.float64) -> torch.zeros(1)",
                "0 is exact in float32, and adding the float64 log-probabilities promotes "
                "the scores to float64 at the first step",
            ),
            (
                "offset: range(max_new_tokens) in for _ in range(max_new_tokens): -> "
                "reversed(range(max_new_tokens))",
                "the loop's counter is not used: only the number of steps matters",
            ),
            (
                "size: logits.shape[-1] in V = logits.shape[-1] -> logits.shape[1]",
                "the last position's logits are (k', V): axis 1 is the last axis",
            ),
            (
                "axis: torch.log_softmax(logits, dim=-1) in log_p = torch.log_softmax("
                "logits, dim=-1) -> torch.log_softmax(logits, dim=1)",
                "the last position's logits are (k', V): axis 1 is the last axis",
            ),
            (
                "drop: torch.sort(total, descending=True, stable=True) in best, order = "
                "torch.sort(total, descending=True, stable=Tru… -> torch.sort(total, "
                "descending=True)",
                _UNSTABLE_SORT,
            ),
            (
                "axis: torch.cat([beams[keep // V], new], dim=1) in beams = torch.cat("
                "[beams[keep // V], new], dim=1) -> torch.cat([beams[keep // V], new], dim=-1)",
                "the beams are (k, t): axis 1 is the last axis",
            ),
        ),
    )
)


def check_beam_search(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(model, prompt, beam_width, max_new_tokens)`` on tiny models the grader builds.

    Taught in: chapters/09_capstone.ipynb (exercise in exercises/09_capstone.ipynb)
    """
    return check_function(BEAM_SEARCH, fn, _run_beam)


# --- 9.5 prediction: temperature and repetition ------------------------------------------

TEMPERATURE_REPETITION = GRADERS.add(
    Question(
        name="temperature_repetition",
        answer="rises",
        choices=("rises", "falls", "stays the same"),
        explanation="a lower temperature sharpens every step's distribution towards its "
        "likeliest token: the samples follow the same high-probability paths again and "
        "again, and at the limit (greedy) the text falls into a loop, so the share of "
        "repeated 4-grams rises.",
        wrong=(
            (
                "falls",
                "a lower temperature makes each step *more* predictable, not less: the "
                "same likely continuations come back, so repeated 4-grams become more "
                "frequent; it is a high temperature that brings new (and odd) 4-grams",
            ),
            (
                "stays the same",
                "the temperature changes which tokens are drawn: below 1 the likeliest "
                "ones win more often, and the text returns to them",
            ),
        ),
        hint="at temperature 0 sampling is greedy decoding: what does greedy decoding of a "
        f"character model tend to do after a while? ({_DECODING_SECTION})",
    )
)


def check_temperature_repetition(answer: Any) -> CheckResult:
    """Check the prediction: how repetition changes when the temperature goes from 1 to 0.3.

    Taught in: chapters/09_capstone.ipynb (exercise in exercises/09_capstone.ipynb)
    """
    return TEMPERATURE_REPETITION.check(answer)


# --- 9.6 RMSNorm (nn.Module) ----------------------------------------------------------------


def _rms_cases() -> tuple[Case, ...]:
    g = torch.Generator().manual_seed(96)

    def x(*shape: int, scale: float = 1.0, loc: float = 0.0) -> torch.Tensor:
        return loc + scale * torch.randn(*shape, generator=g, dtype=torch.float64)

    small = x(1, 3, 6)
    small[0, 1] = 1e-3 * small[0, 1]  # a token of tiny values: eps matters
    small[0, 2] = 0.0  # a zero token
    return (
        Case("B=2, T=3, D=8", {"x": x(2, 3, 8), "eps": None, "seed": 0}),
        Case(
            "off-centre tokens, D=16",
            {"x": x(1, 4, 16, scale=2.0, loc=3.0), "eps": None, "seed": 1},
        ),
        Case("a tiny token and a zero token, D=6", {"x": small, "eps": None, "seed": 2}),
        Case("eps = 0.1, D=5", {"x": x(2, 2, 5, scale=0.3), "eps": 0.1, "seed": 3}),
        Case("tokens without a batch axis, (5, 4)", {"x": x(5, 4), "eps": 1e-6, "seed": 4}),
        Case(
            "float32, D=12",
            {"x": x(2, 3, 12).float(), "eps": None, "seed": 5},
        ),
    )


def _seeded_rms(D: int, eps: float | None, seed: int, dtype: torch.dtype) -> nn.RMSNorm:
    with torch.random.fork_rng(devices=[]):  # the notebook's own random numbers untouched
        torch.manual_seed(100 + seed)
        norm = nn.RMSNorm(D, eps=1e-5 if eps is None else eps).to(dtype)
        with torch.no_grad():
            norm.weight.copy_(1.0 + 0.5 * torch.randn(D, dtype=dtype))
    return norm


def _backward(layer: nn.Module, x: torch.Tensor, seed: int, weights: tuple[str, ...]) -> tuple:
    """Run ``layer`` on ``x``, backpropagate a seeded projection; outputs and gradients."""
    x = x.detach().clone().requires_grad_()
    recorder = Recorder()
    with recorder:
        out = layer(x)
    if not isinstance(out, torch.Tensor):
        raise AnswerProblem(
            WRONG_TYPE,
            f"your forward returned {type(out).__name__}, not a torch.Tensor",
            "return the output tensor itself (one tensor, computed with torch operations)",
        )
    require_gradient(out, "out", recorder)
    if recorder.cuts:
        raise AnswerProblem(
            NO_GRADIENT,
            "part of your layer's computation is cut from the autograd graph",
            f"{cut_by(recorder)} cuts the gradient: the numbers may come out right, but "
            "nothing before the cut (the input, the weights) would be trained through it; "
            "compute every step with torch operations on the tensors",
        )
    g = torch.Generator().manual_seed(seed)
    upstream = torch.randn(out.shape, generator=g, dtype=torch.float64).to(out.dtype)
    (out * upstream).sum().backward()
    if x.grad is None:
        raise AnswerProblem(
            NO_GRADIENT,
            "no gradient reaches the input x through your layer",
            f"the input was cut from the computation by {cut_by(recorder)}: compute every "
            "step with torch operations on the tensors",
        )
    grads = []
    for name in weights:
        w = getattr(layer, name)
        grads.append(torch.zeros_like(w) if w.grad is None else w.grad)
    return (out.detach(), x.grad, *grads)


def _torch_rms_norm(d_model: int, eps: float = 1e-5) -> nn.RMSNorm:
    """PyTorch's RMSNorm with the statement's default eps (its own default is finfo.eps)."""
    return nn.RMSNorm(d_model, eps=eps)


def _rms_weight(layer: nn.Module, D: int) -> None:
    """The gain: a registered parameter named ``weight``, D ones when the layer is built."""
    weight = getattr(layer, "weight", None)
    if weight is None:
        others = [name for name, w in layer.named_parameters() if tuple(w.shape) == (D,)]
        if others:
            raise AnswerProblem(
                WRONG_TYPE,
                f"your layer's gain is named `{others[0]}`, not `weight`",
                "the checker copies a torch.nn.RMSNorm's gain into yours by name, and torch "
                "names it `weight`: call yours self.weight, the statement's name",
            )
        raise AnswerProblem(
            WRONG_TYPE,
            "your layer has no `weight`",
            "RMSNorm ends with a learnable gain, one number per feature, named `weight` "
            "as in torch.nn.RMSNorm: which parameters does your __init__ create?",
        )
    if not isinstance(weight, nn.Parameter):
        raise AnswerProblem(
            WRONG_TYPE,
            f"your layer's `weight` is a {type(weight).__name__}, not an nn.Parameter",
            "a plain tensor stored on a module is not one of its parameters: it is not "
            "trained, not saved and not moved by .to(); the gain must be learnable (the "
            "chapter's modules show how a tensor becomes a registered parameter)",
        )
    ones = bool(torch.all(weight.detach() == 1))
    if tuple(weight.shape) != (D,) or not ones:
        shape = ", ".join(str(n) for n in weight.shape)
        values = "all ones" if ones else "not all ones"
        raise AnswerProblem(
            WRONG_VALUES,
            f"your layer's `weight` starts with shape ({shape}), {values}, for d_model={D}",
            "the statement's gain starts as d_model ones, one per feature: a fresh RMSNorm "
            "leaves every token's normalised features as they are, and training moves "
            "each gain away from 1",
        )


def _run_rms(cls: Any, x: torch.Tensor, eps: float | None, seed: int) -> tuple:
    D = x.shape[-1]
    reference = _seeded_rms(D, eps, seed, x.dtype)
    with torch.random.fork_rng(devices=[]):
        layer = cls(D) if eps is None else cls(D, eps=eps)
    layer = layer.to(x.dtype)
    _rms_weight(layer, D)
    layer.load_state_dict(reference.state_dict())
    return _backward(layer, x, seed, ("weight",))


class _PlantedRMS(nn.Module):
    bug = ""

    def __init__(self, d_model: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = {"eps 1e-6": 1e-6, "eps 1e-8": 1e-8}.get(self.bug, eps)
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bug = self.bug
        if bug == "centred":
            x = x - x.mean(dim=-1, keepdim=True)
        if bug == "weight before":
            x = self.weight * x
        square = x * x
        if bug == "mean abs":
            square = x.abs()
        if bug == "variance":
            square = (x - x.mean(dim=-1, keepdim=True)) ** 2
        if bug == "unbiased variance":
            D = x.shape[-1]
            square = (x - x.mean(dim=-1, keepdim=True)) ** 2 * D / (D - 1)
        mean_square = square.mean(dim=-2 if bug == "axis -2" else -1, keepdim=True)
        if bug == "norm":
            mean_square = square.sum(dim=-1, keepdim=True)
        if bug == "eps outside":
            rms = mean_square.sqrt() + self.eps
        elif bug in ("no sqrt", "mean abs"):
            rms = mean_square + self.eps
        elif bug == "no eps":
            rms = mean_square.sqrt()
        else:
            rms = (mean_square + self.eps).sqrt()
        if bug == "no weight":
            return x / rms
        if bug == "plus weight":
            return x / rms + self.weight
        if bug == "weight before":
            return x / rms
        return self.weight * (x / rms)


def _planted_rms(bug: str) -> Callable[..., Any]:
    planted = type(f"Planted_{bug.replace(' ', '_')}", (_PlantedRMS,), {"bug": bug})
    return memoised(adapt(_run_rms, planted))


_IN_PLACE = (
    "your forward edits a tensor in place (a method ending in `_`, such as x.mul_, or "
    "x *= ...): autograd needs the input and every intermediate value as they were to "
    "compute the gradients, and the caller's x must not change; compute a new tensor "
    "instead (x * ..., not x.mul_(...))"
)


def _rms_keys_hint(message: str) -> str | None:
    if "weight" not in message:
        return None
    return (
        "name the gain `self.weight`, an nn.Parameter of d_model ones, as torch.nn.RMSNorm "
        "does: the checker copies the weight of a torch.nn.RMSNorm into yours by that name"
    )


RMS_NORM = GRADERS.add(
    Grader(
        name="rms_norm",
        signature="MyRMSNorm(d_model, eps=1e-5); forward(x) with x: (..., D) -> (..., D)",
        reference=memoised(adapt(_run_rms, _torch_rms_norm)),
        cases=_rms_cases(),
        outputs=("out", "x gradient", "weight gradient"),
        mistakes=(
            Mistake(
                "you subtracted the mean: that is LayerNorm; RMSNorm only rescales each token "
                "by its root mean square, without centring it",
                _planted_rms("centred"),
            ),
            Mistake(
                "you divided by the standard deviation (the variance, around the mean): "
                "RMSNorm divides by the root of the mean of the squares themselves, x², "
                "with no mean subtracted",
                _planted_rms("variance"),
            ),
            Mistake(
                "you divided by the standard deviation (torch.var or .std, around the mean, "
                "and unbiased, dividing by D - 1): RMSNorm divides by the root of the mean "
                "of the squares themselves, x², with no mean subtracted",
                _planted_rms("unbiased variance"),
            ),
            Mistake(
                "eps is added outside the square root: add it to the mean square, under the "
                "root, as torch.nn.RMSNorm does (the difference shows on small tokens)",
                _planted_rms("eps outside"),
            ),
            Mistake(
                "you divided by the mean square, not by its square root: the output does not "
                "have root mean square 1",
                _planted_rms("no sqrt"),
            ),
            Mistake(
                "there is no eps: a token of zeros divides 0 by 0; add eps to the mean square "
                "under the root",
                _planted_rms("no eps"),
            ),
            *(
                Mistake(
                    f"your eps is a constant ({eps}), not the `eps` argument: use the value "
                    "the layer is built with (1e-5 by default)",
                    _planted_rms(f"eps {eps}"),
                )
                for eps in ("1e-6", "1e-8")
            ),
            Mistake(
                "you used the sum of the squares (the vector's norm), not their mean: the "
                "output is smaller by √D; the root *mean* square divides by D",
                _planted_rms("norm"),
            ),
            Mistake(
                "your mean runs over the tokens (dim=-2): each token is normalised by its "
                "own features, the last axis (dim=-1, keepdim=True)",
                _planted_rms("axis -2"),
            ),
            Mistake(
                "the learnable weight is not applied: multiply the normalised token by "
                "self.weight, feature by feature",
                _planted_rms("no weight"),
            ),
            Mistake(
                "you added the weight: it is a gain, which multiplies the normalised token",
                _planted_rms("plus weight"),
            ),
            Mistake(
                "you multiplied by the weight before normalising: the root mean square "
                "then includes the gain, which the normalisation divides away again; "
                "normalise the token first, then apply the gain to the result",
                _planted_rms("weight before"),
            ),
            Mistake(
                "you divided by the mean absolute value: RMSNorm divides by the root of "
                "the mean of the *squares* (plus eps), which weighs large features more",
                _planted_rms("mean abs"),
            ),
        ),
        error_hints=(
            _NO_SUPER,
            ("a leaf Variable that requires grad is being used in an in-place", _IN_PLACE),
            ("modified by an inplace operation", _IN_PLACE),
            ("state_dict", _rms_keys_hint),
            (
                "unexpected keyword argument 'eps'",
                "keep the signature MyRMSNorm(d_model, eps=1e-5): the checker builds the "
                "layer with eps=... as a keyword",
            ),
        ),
        hint="for each token: the mean of its squared features, plus eps, under a square "
        f"root; divide, then multiply by the learnable weight ({_MODERN_SECTION})",
        solution="MyRMSNorm",
        wrap=lambda cls: adapt(_run_rms, cls),
        rtol=1e-5,
        atol=1e-9,
        norm_atol=1e-6,
    )
)


def check_rms_norm(cls: Any) -> CheckResult:
    """Check an RMSNorm ``nn.Module`` class against ``torch.nn.RMSNorm``, weight copied in.

    Built as ``cls(d_model)`` or ``cls(d_model, eps=eps)``; its output and the gradients of
    the input and of ``weight`` are compared, in float64 and float32.

    Taught in: chapters/09_capstone.ipynb (exercise in exercises/09_capstone.ipynb)
    """
    return check_class(RMS_NORM, cls, _run_rms, example="check_rms_norm(MyRMSNorm)")


# --- 9.7 SwiGLU (nn.Module) -----------------------------------------------------------------

_SWIGLU_NAMES = ("W_gate", "W_up", "W_down")


def _swiglu_cases() -> tuple[Case, ...]:
    g = torch.Generator().manual_seed(97)

    def x(*shape: int, scale: float = 1.0) -> torch.Tensor:
        return scale * torch.randn(*shape, generator=g, dtype=torch.float64)

    return (
        Case("B=2, T=3, D=8, d_ff=12", {"x": x(2, 3, 8), "d_ff": 12, "seed": 0}),
        Case("a batch of 1, D=6, d_ff=16", {"x": x(1, 4, 6), "d_ff": 16, "seed": 1}),
        Case("large inputs, D=4, d_ff=6", {"x": x(2, 2, 4, scale=8.0), "d_ff": 6, "seed": 2}),
        Case("d_ff < D: D=10, d_ff=7", {"x": x(3, 2, 10), "d_ff": 7, "seed": 3}),
        Case("tokens without a batch axis, (5, 8), d_ff=20", {"x": x(5, 8), "d_ff": 20, "seed": 4}),
    )


def _seeded_swiglu(D: int, d_ff: int, seed: int) -> SwiGLU:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(200 + seed)
        return SwiGLU(D, d_ff).double()


class _Weights(nn.Module):
    """A layer whose ``W_gate``, ``W_up``, ``W_down`` are read as their weight matrices."""

    def __init__(self, layer: nn.Module) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer(x)

    def __getattr__(self, name: str) -> Any:
        if name in _SWIGLU_NAMES:
            return getattr(self._modules["layer"], name).weight
        return super().__getattr__(name)


def _run_swiglu_any(cls: Any, x: torch.Tensor, d_ff: int, seed: int) -> tuple:
    D = x.shape[-1]
    reference = _seeded_swiglu(D, d_ff, seed)
    with torch.random.fork_rng(devices=[]):
        layer = cls(D, d_ff)
    layer = layer.double()
    layer.load_state_dict(reference.state_dict())
    return _backward(_Weights(layer), x, seed, _SWIGLU_NAMES)


class _PlantedSwiGLU(nn.Module):
    bug = ""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.W_gate = nn.Linear(d_model, d_ff, bias=False)
        self.W_up = nn.Linear(d_model, d_ff, bias=False)
        self.W_down = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bug = self.bug
        if bug == "weights not transposed":  # nn.Linear's weight is (out, in)
            h = silu(x @ self.W_gate.weight) * (x @ self.W_up.weight)
            return h @ self.W_down.weight
        if bug == "up weight as down":
            return (silu(self.W_gate(x)) * self.W_up(x)) @ self.W_up.weight
        gate, up = self.W_gate(x), self.W_up(x)
        act = {
            "relu": torch.relu,
            "gelu": nn.functional.gelu,
            "sigmoid": torch.sigmoid,
            "tanh": torch.tanh,
        }.get(bug, silu)
        if bug == "silu on up":
            h = gate * silu(up)
        elif bug == "no gate":
            h = silu(up)
        elif bug == "no up":
            h = silu(gate)
        elif bug == "silu after product":
            h = silu(gate * up)
        elif bug == "sum":
            h = silu(gate) + up
        elif bug == "sigmoid of up":
            h = gate * torch.sigmoid(up)
        else:
            h = act(gate) * up
        if bug == "no down":
            return h
        out = self.W_down(h)
        if bug == "silu on output":
            out = silu(out)
        return out


def _planted_swiglu(bug: str) -> Callable[..., Any]:
    planted = type(f"Planted_{bug.replace(' ', '_')}", (_PlantedSwiGLU,), {"bug": bug})
    return memoised(adapt(_run_swiglu_any, planted))


def _swiglu_keys_hint(message: str) -> str | None:
    if ".bias" in message:
        return (
            "your linear layers have biases: SwiGLU's three matrices have none here "
            "(nn.Linear(..., bias=False)), as in LLaMA and the course's SwiGLU"
        )
    return (
        "name the three matrices self.W_gate, self.W_up (d_model -> d_ff) and self.W_down "
        "(d_ff -> d_model), nn.Linear without bias: the checker copies the course's SwiGLU "
        "weights into yours by these names"
    )


def _swiglu_size_hint(message: str) -> str | None:
    found = re.search(r"size mismatch for (W_\w+)", message)
    if found is None:
        return None
    which = found[1]
    if which == "W_down":
        return "W_down maps the d_ff hidden units back to the model: nn.Linear(d_ff, d_model)"
    return f"{which} maps the model's D features to the d_ff hidden units: nn.Linear(d_model, d_ff)"


SWIGLU = GRADERS.add(
    Grader(
        name="swiglu",
        signature="MySwiGLU(d_model, d_ff); forward(x) with x: (..., D) -> (..., D)",
        reference=memoised(adapt(_run_swiglu_any, SwiGLU)),
        cases=_swiglu_cases(),
        outputs=("out", "x gradient", "W_gate gradient", "W_up gradient", "W_down gradient"),
        mistakes=(
            Mistake(
                "SiLU is applied to the up projection, not to the gate: the gate is "
                "SiLU(x W_gate), and it multiplies the plain x W_up",
                _planted_swiglu("silu on up"),
            ),
            Mistake(
                "you used ReLU: SwiGLU's gate is SiLU, x·sigmoid(x) (F.silu)",
                _planted_swiglu("relu"),
            ),
            Mistake(
                "you used GELU: SwiGLU's gate is SiLU, x·sigmoid(x) (F.silu); GELU is GPT-2's "
                "two-layer network",
                _planted_swiglu("gelu"),
            ),
            Mistake(
                "you used the sigmoid alone (that is the original GLU): SwiGLU's gate is "
                "SiLU, x·sigmoid(x)",
                _planted_swiglu("sigmoid"),
            ),
            Mistake(
                "you used tanh: SwiGLU's gate is SiLU, x·sigmoid(x)",
                _planted_swiglu("tanh"),
            ),
            Mistake(
                "there is no gate: W_gate is never used; the hidden units are the product "
                "SiLU(x W_gate) * (x W_up)",
                _planted_swiglu("no gate"),
            ),
            Mistake(
                "the up projection is never used: the hidden units are the product "
                "SiLU(x W_gate) * (x W_up), not SiLU(x W_gate) alone",
                _planted_swiglu("no up"),
            ),
            Mistake(
                "you applied SiLU to the product: only the gate goes through SiLU, then it "
                "multiplies x W_up",
                _planted_swiglu("silu after product"),
            ),
            Mistake(
                "you added the gate and the up projection: they are multiplied, elementwise",
                _planted_swiglu("sum"),
            ),
            Mistake(
                "you applied SiLU to the output too: W_down's output is the layer's output",
                _planted_swiglu("silu on output"),
            ),
            Mistake(
                "you multiplied x by the Linear layers' `.weight` as it is stored: "
                "nn.Linear(d_in, d_out) keeps its weight as (d_out, d_in), so x @ weight "
                "needs its transpose (or call the layer itself, which does that for you)",
                _planted_swiglu("weights not transposed"),
            ),
            Mistake(
                "you mapped the hidden units back with W_up's weight: W_down is the matrix "
                "from d_ff back to d_model, and it is never used",
                _planted_swiglu("up weight as down"),
            ),
            Mistake(
                "your output has d_ff features, not d_model: the hidden units still need "
                "W_down, the matrix from d_ff back to d_model, which your forward never uses",
                _planted_swiglu("no down"),
            ),
            Mistake(
                "you multiplied the gate by the sigmoid of the up projection: SiLU(x W_gate) "
                "is the gate, x·sigmoid(x) of the gate's own projection, and it multiplies "
                "the plain x W_up",
                _planted_swiglu("sigmoid of up"),
            ),
        ),
        error_hints=(
            _NO_SUPER,
            ("size mismatch for", _swiglu_size_hint),
            ("key(s) in state_dict", _swiglu_keys_hint),
        ),
        hint="two projections of x to d_ff hidden units, one through SiLU, multiplied "
        f"elementwise, then W_down back to D ({_MODERN_SECTION})",
        solution="MySwiGLU",
        wrap=lambda cls: adapt(_run_swiglu_any, cls),
        rtol=1e-7,
        atol=1e-9,
    )
)


def check_swiglu(cls: Any) -> CheckResult:
    """Check a SwiGLU ``nn.Module`` class against the course's, weights copied in.

    Built as ``cls(d_model, d_ff)`` with ``W_gate``, ``W_up``, ``W_down``; its output and
    the gradients of the input and of the three matrices are compared.

    Taught in: chapters/09_capstone.ipynb (exercise in exercises/09_capstone.ipynb)
    """
    return check_class(SWIGLU, cls, _run_swiglu_any, example="check_swiglu(MySwiGLU)")


# --- 9.8 prediction: the parameters weight tying saves --------------------------------------

_V, _D = 512, 192


def _tied_reason(n: float) -> str | None:
    """What an unlisted answer to 9.8 implies: a product with one of the sizes misread."""
    if n != int(n) or n <= 0:
        return None
    for size, name, other, other_name in ((_V, "V", _D, "D"), (_D, "D", _V, "V")):
        factor = int(n) // size
        if int(n) % size == 0 and factor not in (other, 1) and abs(factor - other) <= other // 4:
            return (
                f"{int(n):,} = {size} × {factor}: {name} = {size} is right, but {factor} is "
                f"not the question's {other_name}; read the model's sizes again"
            )
    return None


TIED_SAVINGS = GRADERS.add(
    Question(
        name="tied_savings",
        answer=_V * _D,
        explanation=f"the output layer's weight is a V x D matrix, {_V} x {_D} = "
        f"{_V * _D:,} numbers, the same shape as the token embedding's table: tying makes "
        "them one tensor, so those numbers are stored and trained once. The output layer's "
        f"bias ({_V} numbers) is not tied: it stays.",
        wrong=(
            (_V * _D + _V, "the output layer's bias is not tied: only its V x D weight is shared"),
            (2 * _V * _D, "tying keeps one of the two matrices: it saves one V x D, not both"),
            (_V, "that is the bias; the weight tying shares is the V x D matrix"),
            (_D * _D, "the matrices tied are V x D (vocabulary by width), not D x D"),
            (_V * _V, "the matrices tied are V x D (vocabulary by width), not V x V"),
            (0, "tying does save parameters: the output layer no longer has its own weight"),
            (_V * _D // 2, "tying saves a whole V x D matrix, not half of one"),
            (_V + _D, "a matrix of V rows and D columns holds V x D numbers, not V + D"),
            (
                2 * _V * _D + _V,
                "that counts both tied matrices and the bias: tying removes one V x D "
                "matrix (the output layer's weight); the embedding's table stays, and so "
                "does the bias",
            ),
            (
                4 * _V * _D,
                "that is the bytes the matrix takes in float32 (4 per number): the "
                "question counts parameters, numbers",
            ),
        ),
        reason=_tied_reason,
        near=0.01,
        near_hint="close, but a parameter count is exact: multiply the two sizes of the "
        "tied matrix out, every digit (a rounded or estimated count is not accepted)",
        hint="which two tensors does tying make one, and what is the shape of each? "
        f"({_MODERN_SECTION})",
    )
)


def check_tied_savings(answer: Any) -> CheckResult:
    """Check the predicted number of parameters weight tying saves (V=512, D=192).

    Taught in: chapters/09_capstone.ipynb (exercise in exercises/09_capstone.ipynb)
    """
    return TIED_SAVINGS.check(answer)


summary = GRADERS.summary
"""``summary()``: the score table of every chapter 9 exercise, checked or not."""
