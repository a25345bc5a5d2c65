"""Decoding: turning a language model's logits into text, five ways, and measuring the result.

A language model gives, at each position, logits over the vocabulary for the next token.
How the next token is chosen from them changes the text more than most training choices:

- **greedy**: always the most likely token (``temperature=0``);
- **temperature** :math:`\\tau`: sample from :math:`\\mathrm{softmax}(\\text{logits}/\\tau)`;
  below 1 sharper (safer, more repetitive), above 1 flatter (more varied, more mistakes);
- **top-k**: sample among the ``k`` most likely tokens only;
- **top-p** (nucleus): sample among the fewest most likely tokens whose probabilities add up
  to at least ``p``, so the candidate set widens where the model is unsure;
- **beam search**: keep the ``k`` most likely *sequences* so far, not tokens, and return the
  most likely continuations found.

The distribution functions (:func:`temperature_probs`, :func:`top_k_probs`,
:func:`top_p_probs`, :func:`next_token_probs`) accept NumPy arrays or tensors of logits
``(..., V)`` and return the same kind. The functions that run a model
(:func:`sample_tokens`, :func:`beam_search`, :func:`sequence_log_prob`) accept any callable
that maps token ids ``(B, T)`` to logits ``(B, T, V)``, such as
:class:`~attnlab.mechanism.transformer.DecoderOnlyLM`. Draws use an optional ``torch.Generator`` on
its own device (the same seed gives the same tokens on any device), the result is moved to
the device of the logits.

References:
    Fan, Lewis and Dauphin, "Hierarchical Neural Story Generation", 2018 (top-k sampling).
    Holtzman et al., "The Curious Case of Neural Text Degeneration", 2020 (nucleus sampling).

Written for chapter 9 (a GPT on real text).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch
from torch import nn

from .._validate import (
    as_array,
    as_float,
    check_device,
    check_int,
    check_real,
    describe,
    namespace,
    positive_int,
    to_numpy,
)

__all__ = [
    "beam_search",
    "bits_per_token",
    "next_token_probs",
    "perplexity",
    "repetition",
    "sample",
    "sample_from_logits",
    "sample_tokens",
    "sequence_log_prob",
    "temperature_probs",
    "text_loss",
    "top_k_probs",
    "top_p_probs",
]

Model = Callable[[torch.Tensor], torch.Tensor]
"""Any callable mapping token ids ``(B, T)`` to next-token logits ``(B, T, V)``."""

# -- distributions over the next token -----------------------------------------------------------


def _logits_in(logits: Any, name: str = "logits") -> tuple[torch.Tensor, bool]:
    """``logits`` as a floating tensor with at least one axis, and whether it was NumPy."""
    logits = as_array(logits, name)
    xp = namespace(**{name: logits})
    logits = as_float(logits, name, xp)
    if logits.ndim == 0 or logits.shape[-1] == 0:
        raise ValueError(f"{name} must be (..., V) with V >= 1 entries, got {describe(logits)}")
    is_numpy = isinstance(logits, np.ndarray)
    # a copy: torch cannot share a read-only or broadcast NumPy array's memory
    return (torch.from_numpy(np.array(logits)) if is_numpy else logits), is_numpy


def _out(x: torch.Tensor, is_numpy: bool) -> Any:
    return to_numpy(x) if is_numpy else x


def _temperature(value: Any, *, zero: bool = True) -> float:
    expected = "0 (greedy) or a positive number" if zero else "a positive number"
    return check_real(
        value, "temperature", expected=expected, ok=lambda t: t >= 0 if zero else t > 0
    )


def _sampling(
    temperature: Any, top_k: Any, top_p: Any, V: int | None = None
) -> tuple[float, int | None, float | None]:
    """The sampling parameters, checked (``top_k`` against the vocabulary size when known)."""
    tau = _temperature(temperature)
    if top_k is not None:
        high, expected = (
            (None, "a positive integer") if V is None else (V, f"an integer in 1..V={V}")
        )
        top_k = check_int(top_k, "top_k", low=1, high=high, expected=expected)
    if top_p is not None:
        top_p = check_real(top_p, "top_p", expected="a mass in (0, 1]", ok=lambda p: 0 < p <= 1)
    return tau, top_k, top_p


def _greedy(logits: torch.Tensor) -> torch.Tensor:
    """One-hot at the first maximum of each row: the limit of the softmax as τ -> 0."""
    best = logits.argmax(dim=-1, keepdim=True)  # (..., 1)
    return torch.zeros_like(logits).scatter_(-1, best, 1.0)  # (..., V)


def _top_k_mask(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Logits below the k-th largest of their row set to -inf (ties with it are kept)."""
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]  # (..., V) -> (..., 1)
    return logits.masked_fill(logits < kth, -math.inf)


def _nucleus(probs: torch.Tensor, p: float) -> torch.Tensor:
    """Keep the fewest most likely tokens whose mass reaches ``p``; renormalise."""
    sorted_p, order = torch.sort(probs, dim=-1, descending=True, stable=True)  # (..., V)
    before = torch.cumsum(sorted_p, dim=-1) - sorted_p  # mass of the more likely tokens
    keep_sorted = before < p  # the first token always (0 < p); the one that reaches p too
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)  # back to id order
    kept = probs * keep  # (..., V)
    return kept / kept.sum(dim=-1, keepdim=True)


def temperature_probs(logits: Any, temperature: float = 1.0) -> Any:
    r"""The next-token distribution at temperature :math:`\tau`: :math:`\mathrm{softmax}(z/\tau)`.

    ``temperature=0`` gives greedy decoding's distribution: all the mass on the most likely
    token (the first one, on a tie).

    Args:
        logits: ``(..., V)``, a NumPy array or tensor.
        temperature: 0, or a positive number.

    Returns:
        ``(..., V)`` probabilities, each row summing to 1; the same kind as ``logits``.

    Raises:
        ValueError: a negative or non-numeric temperature, or logits with no last axis.

    Written for chapter 9 (a GPT on real text).
    """
    return next_token_probs(logits, temperature=temperature)


def top_k_probs(logits: Any, k: int, temperature: float = 1.0) -> Any:
    r"""The distribution restricted to the ``k`` most likely tokens, renormalised.

    .. math:: p_v \propto \exp(z_v/\tau) \text{ if } z_v \ge z_{(k)}, \text{ else } 0

    where :math:`z_{(k)}` is the ``k``-th largest logit of the row; a token tied with it is
    kept too (as nanoGPT does), so a row may keep more than ``k`` tokens on a tie.

    Args:
        logits: ``(..., V)``, a NumPy array or tensor.
        k: how many tokens to keep, ``1 <= k <= V``.
        temperature: a positive number (applied before the softmax).

    Returns:
        ``(..., V)`` probabilities, zero outside the top ``k``; the same kind as ``logits``.

    Raises:
        ValueError: ``k`` outside ``1..V``, or a temperature that is not positive.

    Written for chapter 9 (a GPT on real text).
    """
    return next_token_probs(logits, temperature=_temperature(temperature, zero=False), top_k=k)


def top_p_probs(logits: Any, p: float, temperature: float = 1.0) -> Any:
    r"""Nucleus sampling's distribution: the fewest most likely tokens holding mass ``p``.

    Sort the tokens by probability (at temperature :math:`\tau`); keep each token while the
    mass of the tokens before it is below ``p`` (so the token that reaches ``p`` is kept);
    renormalise. Where the model is sure, one or two tokens remain; where it is unsure,
    many.

    Args:
        logits: ``(..., V)``, a NumPy array or tensor.
        p: the mass to keep, in ``(0, 1]`` (1 keeps every token).
        temperature: a positive number (applied before the softmax).

    Returns:
        ``(..., V)`` probabilities, zero outside the nucleus; the same kind as ``logits``.

    Raises:
        ValueError: ``p`` outside ``(0, 1]``, or a temperature that is not positive.

    Written for chapter 9 (a GPT on real text).
    """
    return next_token_probs(logits, temperature=_temperature(temperature, zero=False), top_p=p)


def next_token_probs(
    logits: Any,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
) -> Any:
    """The distribution a sampler draws the next token from: temperature, then top-k, then top-p.

    The order of common libraries: divide the logits by the temperature, keep the top
    ``k``, take the softmax, keep the nucleus of mass ``top_p``, renormalise. With
    ``temperature=0`` the result is greedy's one-hot (``top_k`` and ``top_p`` change
    nothing then).

    Args:
        logits: ``(..., V)``, a NumPy array or tensor.
        temperature: 0 (greedy) or a positive number.
        top_k: optional, ``1 <= top_k <= V``.
        top_p: optional, in ``(0, 1]``.

    Returns:
        ``(..., V)`` probabilities, each row summing to 1; the same kind as ``logits``.

    Raises:
        ValueError: a parameter out of its range (the message names it).

    Written for chapter 9 (a GPT on real text).
    """
    z, is_numpy = _logits_in(logits)
    tau, top_k, top_p = _sampling(temperature, top_k, top_p, V=z.shape[-1])
    if tau == 0:
        return _out(_greedy(z), is_numpy)
    z = z / tau  # (..., V)
    if top_k is not None and top_k < z.shape[-1]:
        z = _top_k_mask(z, top_k)
    probs = torch.softmax(z, dim=-1)  # (..., V)
    if top_p is not None and top_p < 1:
        probs = _nucleus(probs, top_p)
    return _out(probs, is_numpy)


# -- drawing tokens ------------------------------------------------------------------------------


def sample(probs: Any, *, generator: torch.Generator | None = None) -> Any:
    r"""Draw one token id from each row of ``probs`` by inverting its cumulative distribution.

    .. math:: v = \min\{v : F_v > u\}, \qquad F_v = \sum_{w \le v} p_w, \quad u \sim U(0, F_V)

    One uniform number per row, drawn on the generator's device (the CPU for a CPU
    generator) and moved to the device of ``probs``: the same seed gives the same ids on
    any device. A token of probability 0 is never drawn. The rows need not sum to 1 (they
    are scaled by their sum).

    Args:
        probs: ``(..., V)`` non-negative weights, a NumPy array or tensor, each row with a
            positive sum.
        generator: optional ``torch.Generator`` (default: torch's global one).

    Returns:
        ``(...)`` int64 ids; the same kind as ``probs``.

    Raises:
        ValueError: a negative or NaN weight, or a row of zeros.

    Written for chapter 9 (a GPT on real text).
    """
    p, is_numpy = _logits_in(probs, "probs")
    V = p.shape[-1]
    flat = p.reshape(-1, V).double()  # (..., V) -> (N, V)
    if bool((flat < 0).any()) or bool(flat.isnan().any()):
        raise ValueError("probs must be non-negative numbers (not logits: take the softmax)")
    cdf = torch.cumsum(flat, dim=-1)  # (N, V)
    if bool((cdf[:, -1] <= 0).any()):
        raise ValueError("every row of probs needs a positive sum, got a row of zeros")
    where = generator.device if generator is not None else p.device
    u = torch.rand(flat.shape[0], generator=generator, device=where, dtype=torch.float64)
    target = u.to(p.device) * cdf[:, -1]  # (N,)
    ids = torch.searchsorted(cdf, target[:, None], right=True)[:, 0]  # (N, 1) -> (N,)
    last = V - 1 - (flat > 0).flip(-1).int().argmax(dim=-1)  # the last positive weight
    ids = torch.minimum(ids, last)  # u * F_V rounded up to F_V: the last possible token
    return _out(ids.reshape(p.shape[:-1]), is_numpy)


def sample_from_logits(
    logits: Any,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
) -> Any:
    """One next token per row of ``logits``: :func:`sample` of :func:`next_token_probs`.

    Args:
        logits: ``(..., V)``, a NumPy array or tensor.
        temperature, top_k, top_p: as :func:`next_token_probs` (``temperature=0``: greedy).
        generator: optional ``torch.Generator``.

    Returns:
        ``(...)`` int64 ids; the same kind as ``logits``.

    Written for chapter 9 (a GPT on real text).
    """
    probs = next_token_probs(logits, temperature=temperature, top_k=top_k, top_p=top_p)
    return sample(probs, generator=generator)


# -- running a model -------------------------------------------------------------------------------


@contextmanager
def _evaluating(model: Any) -> Iterator[None]:
    """Eval mode (no dropout) for an ``nn.Module`` during the block, restored after; no grad."""
    was_training = isinstance(model, nn.Module) and model.training
    if was_training:
        model.eval()
    try:
        with torch.no_grad():
            yield
    finally:
        if was_training:
            model.train()


def _check_model_and_ids(model: Any, ids: Any, name: str, who: str) -> torch.Tensor:
    """``ids`` as a ``(B, T)`` int64 tensor (a 1-D one gains a batch axis), checked."""
    if not callable(model):
        raise TypeError(
            f"{who}: model must map token ids (B, T) to logits (B, T, V), got "
            f"{type(model).__name__}"
        )
    if not isinstance(ids, torch.Tensor):
        raise TypeError(f"{who}: {name} must be a tensor of token ids, got {describe(ids)}")
    if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
        raise TypeError(f"{who}: {name} must hold integer token ids, got {describe(ids)}")
    if ids.ndim == 1:
        ids = ids[None]  # (T,) -> (1, T)
    if ids.ndim != 2 or ids.shape[1] == 0:
        raise ValueError(f"{who}: {name} must be (B, T) token ids with T >= 1, got {describe(ids)}")
    if isinstance(model, nn.Module):
        check_device(ids, model, who=who, name=name)
    return ids.long()


def _next_logits(model: Model, ids: torch.Tensor, context: int | None, who: str) -> torch.Tensor:
    """The model's logits for the token after ``ids``: ``(B, T) -> (B, V)``."""
    window = ids if context is None else ids[:, -context:]  # (B, min(T, context))
    logits = model(window)
    _check_logits(logits, window, who)
    return logits[:, -1]  # (B, T, V) -> (B, V)


def _context(context: Any) -> int | None:
    return None if context is None else positive_int(context, "context")


def sample_tokens(
    model: Model,
    prompt: torch.Tensor,
    *,
    max_new_tokens: int,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
    context: int | None = None,
) -> torch.Tensor:
    """Continue ``prompt`` one sampled token at a time (greedy with ``temperature=0``).

    At each step the model reads the sequence so far (its last ``context`` tokens, when
    given: the model's window) and the next token is drawn from
    :func:`next_token_probs` of the last position's logits. An ``nn.Module`` runs in eval
    mode (restored after); no gradients are kept.

    Args:
        model: any callable mapping ids ``(B, T)`` to logits ``(B, T, V)``.
        prompt: ``(B, T0)`` or ``(T0,)`` token ids, ``T0 >= 1``.
        max_new_tokens: how many tokens to append.
        temperature, top_k, top_p: as :func:`next_token_probs`.
        generator: optional ``torch.Generator`` (the same seed gives the same text).
        context: optional, the most tokens the model reads at once.

    Returns:
        ``(B, T0 + max_new_tokens)`` int64 ids: the prompt, then the new tokens.

    Raises:
        TypeError: a model that is not callable, or ids that are not an integer tensor.
        ValueError: a bad size or sampling parameter, ids on another device than the
            model's weights, or a model whose output is not ``(B, T, V)``.

    Written for chapter 9 (a GPT on real text).
    """
    ids = _check_model_and_ids(model, prompt, "prompt", "sample_tokens")
    n = positive_int(max_new_tokens, "max_new_tokens")
    context = _context(context)
    _sampling(temperature, top_k, top_p)  # fail before the first step
    with _evaluating(model):
        for _ in range(n):
            logits = _next_logits(model, ids, context, "sample_tokens")  # (B, V)
            nxt = sample_from_logits(
                logits, temperature=temperature, top_k=top_k, top_p=top_p, generator=generator
            )  # (B,)
            ids = torch.cat([ids, nxt[:, None]], dim=1)  # (B, t) -> (B, t + 1)
    return ids


def beam_search(
    model: Model,
    prompt: torch.Tensor,
    *,
    beam_width: int,
    max_new_tokens: int,
    eos_id: int | None = None,
    context: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""The ``beam_width`` most likely continuations that a beam of that width finds.

    .. math:: \log p(y_1 \dots y_n \mid x) = \sum_{t=1}^{n} \log p(y_t \mid x, y_{<t})

    Start from the prompt; at each step extend every kept sequence by every token, score
    each extension by its total log-probability, and keep the ``beam_width`` best (ties:
    the earlier beam, then the smaller token id). Width 1 is greedy decoding; a width of
    ``V ** (n - 1)`` or more keeps every prefix, so it finds the exact best continuations.
    With ``eos_id``, a sequence that produced it is finished: it is continued with
    ``eos_id`` at no cost, its score frozen. No length normalisation.

    Args:
        model: any callable mapping ids ``(B, T)`` to logits ``(B, T, V)``.
        prompt: ``(T0,)`` or ``(1, T0)`` token ids (one prompt).
        beam_width: ``k >= 1``, the sequences kept at each step.
        max_new_tokens: ``n``, the length of each continuation.
        eos_id: optional end-of-sequence id.
        context: optional, the most tokens the model reads at once.

    Returns:
        ``(ids, log_probs)``: ``(k', T0 + n)`` int64 sequences, prompt included, best first,
        and ``(k',)`` float64 log-probabilities of their continuations; ``k' = min(k, V**n)``
        (fewer when fewer continuations have a probability above 0).

    Raises:
        TypeError: a model that is not callable, or ids that are not an integer tensor.
        ValueError: more than one prompt, a bad size, ids on another device than the
            model's weights, or a model whose output is not ``(B, T, V)``.

    Written for chapter 9 (a GPT on real text).
    """
    beams = _check_model_and_ids(model, prompt, "prompt", "beam_search")  # (1, T0)
    if beams.shape[0] != 1:
        raise ValueError(f"beam_search takes one prompt, (T0,) or (1, T0), got {describe(prompt)}")
    k = positive_int(beam_width, "beam_width")
    n = positive_int(max_new_tokens, "max_new_tokens")
    context = _context(context)
    eos = None if eos_id is None else check_int(eos_id, "eos_id", low=0)
    scores = torch.zeros(1, dtype=torch.float64, device=beams.device)  # (k',)
    finished = torch.zeros(1, dtype=torch.bool, device=beams.device)  # (k',)
    with _evaluating(model):
        for _ in range(n):
            logits = _next_logits(model, beams, context, "beam_search")  # (k', V)
            V = logits.shape[-1]
            if eos is not None and eos >= V:
                raise ValueError(f"eos_id={eos} is out of range for V={V} logits")
            log_p = torch.log_softmax(logits.double(), dim=-1)  # (k', V)
            if eos is not None:  # a finished beam: eos again, at no cost
                done = torch.full_like(log_p, -math.inf)
                done[:, eos] = 0.0
                log_p = torch.where(finished[:, None], done, log_p)
            total = (scores[:, None] + log_p).reshape(-1)  # (k', V) -> (k' V,)
            best, order = torch.sort(total, descending=True, stable=True)
            alive = int((best > -math.inf).sum())
            keep = order[: max(1, min(k, alive))]  # (k'',)
            beam, token = keep // V, keep % V  # which beam, which token
            beams = torch.cat([beams[beam], token[:, None]], dim=1)  # (k'', t + 1)
            scores = total[keep]
            finished = finished[beam] if eos is None else finished[beam] | (token == eos)
    return beams, scores


def sequence_log_prob(
    model: Model, ids: torch.Tensor, *, start: int = 1, context: int | None = None
) -> torch.Tensor:
    r"""The log-probability the model gives to ``ids[:, start:]``, each token after those before.

    .. math:: \log p(x_{s} \dots x_{T-1} \mid x_{<s}) = \sum_{t=s}^{T-1} \log \mathrm{softmax}(z_{t-1})_{x_t}

    where :math:`z_{t-1}` are the logits the model gives after reading :math:`x_{<t}` (its
    last ``context`` tokens, when given). Divide by the number of tokens for the mean
    log-probability per token, whose negative is the cross-entropy loss.

    Args:
        model: any callable mapping ids ``(B, T)`` to logits ``(B, T, V)``.
        ids: ``(B, T)`` or ``(T,)`` token ids.
        start: ``s``, how many leading tokens are given, not scored (``1 <= s < T``).
        context: optional, the most tokens the model reads at once.

    Returns:
        ``(B,)`` float64 log-probabilities (``<= 0``), on the device of ``ids``.

    Raises:
        ValueError: ``start`` outside ``1..T-1``, ids on another device than the model's
            weights, or a model whose output is not ``(B, T, V)``.

    Written for chapter 9 (a GPT on real text).
    """
    ids = _check_model_and_ids(model, ids, "ids", "sequence_log_prob")  # (B, T)
    T = ids.shape[1]
    if T < 2:
        raise ValueError(
            f"sequence_log_prob needs at least 2 tokens (one given, one scored), got T={T}"
        )
    start = check_int(start, "start", low=1, high=T - 1, expected=f"an integer in 1..T-1={T - 1}")
    context = _context(context)
    with _evaluating(model):
        if context is None or T - 1 <= context:  # one pass reads every prefix at once
            logits = model(ids[:, :-1])  # (B, T - 1, V): position t-1 predicts token t
            _check_logits(logits, ids[:, :-1], "sequence_log_prob")
            logits = logits[:, start - 1 :]  # (B, T - s, V)
        else:  # a window slides: one pass per scored token
            steps = [
                _next_logits(model, ids[:, :t], context, "sequence_log_prob")
                for t in range(start, T)
            ]
            logits = torch.stack(steps, dim=1)  # T - s of (B, V) -> (B, T - s, V)
        log_p = torch.log_softmax(logits.double(), dim=-1)  # (B, T - s, V)
        picked = log_p.gather(-1, ids[:, start:, None])[..., 0]  # (B, T - s, 1) -> (B, T - s)
    return picked.sum(dim=-1)  # (B,)


def text_loss(model: Model, ids: torch.Tensor, *, context: int, batch_size: int = 32) -> float:
    r"""The mean cross-entropy (nats per token) of a model on a whole token stream, exactly.

    .. math:: \mathcal{L} = -\frac{1}{N - 1} \sum_{t=1}^{N-1} \log p(x_t \mid \text{window before } x_t)

    The stream is cut into consecutive windows of ``context + 1`` tokens that overlap by one
    (starts ``0, T, 2T, ...``): the model reads each window's first ``T`` tokens and is
    scored on its last ``T``, so every token but the first is predicted exactly once, from
    the tokens before it in its window (the last window may be shorter). No sampling: the
    same model and stream always give the same number, unlike a loss estimated on random
    batches.

    Args:
        model: any callable mapping ids ``(B, T)`` to logits ``(B, T, V)``.
        ids: ``(N,)`` token ids, ``N >= 2`` (e.g. the validation text, encoded).
        context: ``T``, the most tokens the model reads at once.
        batch_size: windows per forward pass.

    Returns:
        The mean loss in nats, a Python float (:func:`perplexity` and
        :func:`bits_per_token` convert it).

    Raises:
        TypeError: a model that is not callable, or ids that are not an integer tensor.
        ValueError: ids that are not one stream of at least 2 tokens, a size that is not a
            positive integer, ids on another device than the model's weights, or a model
            whose output is not ``(B, T, V)``.

    Written for chapter 9 (a GPT on real text).
    """
    if isinstance(ids, torch.Tensor) and ids.ndim != 1:
        raise ValueError(f"text_loss: ids must be one stream of tokens (N,), got {describe(ids)}")
    stream = _check_model_and_ids(model, ids, "ids", "text_loss")[0]  # (N,)
    T = positive_int(context, "context")
    batch_size = positive_int(batch_size, "batch_size")
    N = stream.shape[0]
    if N < 2:
        raise ValueError(f"text_loss needs at least 2 tokens (one read, one scored), got N={N}")
    full = (N - 1) // T  # windows of T + 1 tokens
    total = torch.zeros((), dtype=torch.float64, device=stream.device)
    with _evaluating(model):
        if full:
            windows = stream[: full * T + 1].unfold(0, T + 1, T)  # (N,) -> (full, T + 1)
            for chunk in windows.split(batch_size):  # (b, T + 1) each
                total = total + _window_nll(model, chunk)
        if full * T + 1 < N:  # the partial last window
            total = total + _window_nll(model, stream[full * T :][None])
    return float(total) / (N - 1)


def _window_nll(model: Model, windows: torch.Tensor) -> torch.Tensor:
    """Summed negative log-likelihood of ``windows[:, 1:]`` given ``windows[:, :-1]``."""
    inputs, targets = windows[:, :-1], windows[:, 1:]  # (b, t), (b, t)
    logits = model(inputs)
    _check_logits(logits, inputs, "text_loss")
    log_p = torch.log_softmax(logits.double(), dim=-1)  # (b, t, V)
    return -log_p.gather(-1, targets[..., None]).sum()  # (b, t, 1) -> ()


def _check_logits(logits: Any, ids: torch.Tensor, who: str) -> None:
    if (
        not isinstance(logits, torch.Tensor)
        or logits.ndim != 3
        or (tuple(logits.shape[:2]) != tuple(ids.shape))
    ):
        raise ValueError(
            f"{who}: the model must return logits (B, T, V) for ids (B, T) = "
            f"{tuple(ids.shape)}, got {describe(logits)}"
        )


# -- what came out ---------------------------------------------------------------------------------


def repetition(tokens: Any, n: int = 4) -> float:
    r"""The share of a sequence's ``n``-grams that repeat an earlier one.

    .. math:: \mathrm{rep}_n = 1 - \frac{\#\,\text{distinct } n\text{-grams}}{\#\,n\text{-grams}}

    0 when no ``n`` consecutive tokens occur twice; close to 1 for text stuck in a loop
    ("the the the ..."). One minus the "distinct-n" score of the literature. Works on
    token ids or directly on a string (its characters).

    Args:
        tokens: a string, or a 1-D sequence of ids (list, NumPy array or tensor).
        n: the length of the n-grams, at least 1.

    Returns:
        A float in ``[0, 1)``.

    Raises:
        TypeError: ``tokens`` not a string or a 1-D sequence.
        ValueError: fewer than ``n`` tokens.

    Written for chapter 9 (a GPT on real text).
    """
    n = positive_int(n, "n")
    if isinstance(tokens, (torch.Tensor, np.ndarray)):
        if tokens.ndim != 1:
            raise TypeError(f"tokens must be a string or a 1-D sequence, got {describe(tokens)}")
        tokens = to_numpy(tokens, "tokens").tolist()
    elif not isinstance(tokens, (str, list, tuple)):
        raise TypeError(f"tokens must be a string or a 1-D sequence, got {describe(tokens)}")
    count = len(tokens) - n + 1
    if count < 1:
        raise ValueError(f"repetition needs at least n={n} tokens, got {len(tokens)}")
    grams = {tuple(tokens[i : i + n]) for i in range(count)}
    return 1.0 - len(grams) / count


def perplexity(loss: Any) -> Any:
    r"""The perplexity of a mean cross-entropy loss in nats: :math:`e^{\text{loss}}`.

    The number of equally likely tokens the model is, on average, choosing between: a
    uniform guess over ``V`` tokens has loss :math:`\ln V` and perplexity ``V``.

    Args:
        loss: a mean cross-entropy in nats (natural log), ``>= 0``: a number, NumPy array or
            tensor (elementwise).

    Returns:
        The same kind as ``loss`` (a Python float for a number).

    Raises:
        ValueError: a negative or NaN loss.

    Written for chapter 9 (a GPT on real text).
    """
    return _from_loss(loss, "perplexity", lambda x, xp: xp.exp(x))


def bits_per_token(loss: Any) -> Any:
    r"""A mean cross-entropy loss in nats as bits per token: :math:`\text{loss} / \ln 2`.

    For a character-level model, bits per character: what an ideal compressor driven by
    the model would spend on each character of the text (8 bits for plain ASCII storage).

    Args:
        loss: a mean cross-entropy in nats, ``>= 0``: a number, NumPy array or tensor.

    Returns:
        The same kind as ``loss`` (a Python float for a number).

    Raises:
        ValueError: a negative or NaN loss.

    Written for chapter 9 (a GPT on real text).
    """
    return _from_loss(loss, "bits_per_token", lambda x, xp: x / math.log(2))


def _from_loss(loss: Any, who: str, f: Callable[[Any, Any], Any]) -> Any:
    if isinstance(loss, (bool, int, float, np.generic)):  # a number (a bool is refused)
        x = check_real(loss, "loss", expected="a cross-entropy in nats (>= 0)", ok=lambda v: v >= 0)
        return float(f(np.float64(x), np))
    x = as_array(loss, "loss")
    xp = namespace(loss=x)
    x = as_float(x, "loss", xp)
    if bool(xp.any(x < 0)) or bool(xp.any(xp.isnan(x))):
        raise ValueError(f"{who}: loss must be a cross-entropy in nats (>= 0), got {x!r}")
    return f(x, xp)
