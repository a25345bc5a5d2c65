"""Decoding: a trained model's output, one token at a time (greedy or sampled), with a KV cache.

A model predicts a distribution over the next token; decoding turns those predictions into
a sequence by appending one token and running the model again. :func:`greedy_decode`
translates with an :class:`~attnlab.mechanism.transformer.EncoderDecoder` (the encoder runs
once, the decoder once per step); :func:`generate` continues a prompt with a
:class:`~attnlab.mechanism.transformer.DecoderOnlyLM`, greedily or by sampling at a
temperature, recomputing the prefix at every step or keeping its keys and values in a
:class:`~attnlab.mechanism.kvcache.KVCache`; :func:`generation_seconds` measures what the
cache saves.

Taught in: chapters/07_transformer.ipynb and chapters/08_scale.ipynb (the cache)
"""

from __future__ import annotations

import math

import torch

from .._validate import check_int, check_real, describe, positive_int
from ..measure import check_clock, median_seconds_each
from .kvcache import KVCache
from .transformer import DecoderOnlyLM, EncoderDecoder

__all__ = ["generate", "generation_seconds", "greedy_decode"]


@torch.no_grad()
def greedy_decode(
    model: EncoderDecoder, src: torch.Tensor, *, bos_id: int, eos_id: int, max_len: int
) -> torch.Tensor:
    """Translate ``src`` one token at a time, always taking the most likely next token.

    Starts every target with ``bos_id``; at each step runs the decoder on the prefix so far
    and appends the argmax of the last position's logits. A sequence that has produced
    ``eos_id`` is finished: later positions get ``model.pad_id``. Stops after ``max_len``
    tokens or when every sequence is finished. The encoder runs once. The model is put in
    eval mode for the call (dropout off) and restored afterwards.

    Args:
        model: an :class:`EncoderDecoder`.
        src: ``(B, S)`` source token ids.
        bos_id: the begin-of-sequence id that starts the decoder input.
        eos_id: the end-of-sequence id.
        max_len: the most tokens to generate (EOS included); at most ``model.max_len``.

    Returns:
        ``(B, L)`` generated ids with ``L <= max_len``, without the BOS, each row ending at its
        EOS and padded with ``model.pad_id`` after it; same layout as a ``tgt_out`` batch.

    Raises:
        ValueError: ``max_len`` out of range, or ids outside the target vocabulary.

    Taught in: chapters/07_transformer.ipynb
    """
    if not isinstance(model, EncoderDecoder):
        raise TypeError(f"greedy_decode needs an EncoderDecoder, got {type(model).__name__}")
    max_len = positive_int(max_len, "max_len")
    if max_len > model.max_len:
        raise ValueError(f"max_len={max_len} exceeds the model's max_len={model.max_len}")
    bos_id = _token_id(bos_id, "bos_id", model.tgt_vocab)
    eos_id = _token_id(eos_id, "eos_id", model.tgt_vocab)
    was_training = model.training
    model.eval()
    try:
        memory, src_mask = model.encode(src)  # (B, S, D), (B, 1, 1, S)
        B = src.shape[0]
        out = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)  # (B, 1)
        finished = torch.zeros(B, dtype=torch.bool, device=src.device)  # (B,)
        for _ in range(max_len):
            logits = model.decode(out, memory, src_mask)[:, -1]  # (B, t, n_vocab) -> (B, n_vocab)
            nxt = logits.argmax(dim=-1)  # (B,)
            nxt = torch.where(finished, torch.full_like(nxt, model.pad_id), nxt)
            out = torch.cat([out, nxt[:, None]], dim=1)  # (B, t) -> (B, t + 1)
            finished |= nxt == eos_id
            if bool(finished.all()):
                break
    finally:
        model.train(was_training)
    return out[:, 1:]  # drop BOS: (B, L)


@torch.no_grad()
def generate(
    model: DecoderOnlyLM,
    prompt: torch.Tensor,
    *,
    max_new_tokens: int,
    eos_id: int | None = None,
    use_cache: bool = False,
    temperature: float = 0.0,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    r"""Continue ``prompt`` with a :class:`DecoderOnlyLM`: greedily, or by sampling.

    .. math:: p(\text{next} = v) = \mathrm{softmax}(\text{logits} / \tau)_v

    Appends one token ``max_new_tokens`` times: with ``temperature`` 0 (the default) the
    argmax (greedy decoding); with ``temperature`` :math:`\tau > 0` a token drawn from the
    softmax of the logits divided by :math:`\tau` (chapter 2's temperature: below 1 sharper,
    above 1 flatter; :math:`\tau \to 0` is greedy). When the sequence outgrows
    ``model.max_len`` only its last ``max_len`` tokens are fed back (a sliding window, as
    nanoGPT does). With ``eos_id``, a row that produced it is continued with ``eos_id``
    and generation stops early once every row has. Runs in eval mode (restored after).

    With ``use_cache=True`` the prompt runs once and every later step feeds only the new
    token, whose query attends to the keys and values kept in a
    :class:`~attnlab.mechanism.kvcache.KVCache`: the same tokens as recomputation, with one token's
    work per step instead of the whole prefix's. Once the window slides (the positions of
    every kept token shift), the cache is rebuilt from the window at each step.

    Args:
        model: a :class:`DecoderOnlyLM`.
        prompt: ``(B, T0)`` token ids, ``T0 >= 1``.
        max_new_tokens: how many tokens to append.
        eos_id: optional end-of-sequence id.
        use_cache: keep the keys and values of past tokens (chapter 8).
        temperature: 0 for greedy decoding, or a positive sampling temperature.
        generator: optional ``torch.Generator`` for the draws (the same seed gives the same
            samples).

    Returns:
        ``(B, T0 + n)`` ids: the prompt followed by ``n <= max_new_tokens`` new tokens.

    Raises:
        ValueError: a negative or non-numeric ``temperature``.

    Taught in: chapters/07_transformer.ipynb and chapters/08_scale.ipynb (the cache)
    """
    if not isinstance(model, DecoderOnlyLM):
        raise TypeError(f"generate needs a DecoderOnlyLM, got {type(model).__name__}")
    temperature = check_real(
        temperature,
        "temperature",
        expected="0 (greedy) or a positive number",
        ok=lambda t: 0.0 <= t < math.inf,
    )
    max_new_tokens = positive_int(max_new_tokens, "max_new_tokens")
    eos_id = None if eos_id is None else _token_id(eos_id, "eos_id", model.vocab)
    if not isinstance(prompt, torch.Tensor):
        raise TypeError(f"prompt must be a torch.Tensor of token ids, got {describe(prompt)}")
    model._check_tokens(prompt[:, -model.max_len :], "prompt", model.vocab)
    window = model.max_len
    was_training = model.training
    model.eval()
    try:
        out = prompt.long()
        finished = torch.zeros(out.shape[0], dtype=torch.bool, device=out.device)  # (B,)
        cache = None
        for _ in range(max_new_tokens):
            if not use_cache:
                logits = model(out[:, -window:])[:, -1]  # (B, t, n_vocab) -> (B, n_vocab)
            elif cache is None or cache.length >= window:  # prefill (again)
                cache = KVCache(len(model.decoder.layers), capacity=window)
                logits = model(out[:, -window:], cache)[:, -1]  # (B, n_vocab)
            else:  # one new token: (B, 1) -> (B, 1, n_vocab) -> (B, n_vocab)
                logits = model(out[:, -1:], cache)[:, -1]
            nxt = _next_token(logits, temperature, generator)  # (B,)
            if eos_id is not None:
                nxt = torch.where(finished, torch.full_like(nxt, eos_id), nxt)
                finished |= nxt == eos_id
            out = torch.cat([out, nxt[:, None]], dim=1)  # (B, t) -> (B, t + 1)
            if eos_id is not None and bool(finished.all()):
                break
    finally:
        model.train(was_training)
    return out


def generation_seconds(
    model: DecoderOnlyLM,
    prompt: torch.Tensor,
    new_tokens: list[int],
    *,
    repeats: int = 3,
    clock: str = "cpu",
) -> list[dict[str, float]]:
    """What the KV cache saves: time of greedy :func:`generate` without and with it.

    For each ``n`` in ``new_tokens``, generation of ``n`` tokens after ``prompt`` is timed
    both ways, the two in turns, median of ``repeats``
    (:func:`attnlab.measure.median_seconds_each`), in processor time by default, so that
    other programs on the machine count for neither. Both ways are warmed up once, at the
    first ``n``.

    Args:
        model: a :class:`DecoderOnlyLM`.
        prompt: ``(B, T0)`` token ids.
        new_tokens: the numbers of tokens to generate, each ``>= 1``.
        repeats: timed runs of each (the median is kept).
        clock: ``"cpu"`` (processor time, the default) or ``"wall"`` (elapsed time).

    Returns:
        One dict per ``n``: ``{"new_tokens": n, "recompute_s": ..., "cache_s": ...,
        "speedup": recompute_s / cache_s}``.

    Raises:
        ValueError: an empty ``new_tokens``, a count or ``repeats`` that is not a positive
            integer, or an unknown ``clock``.

    Taught in: chapters/08_scale.ipynb
    """
    counts = [positive_int(n, "new_tokens") for n in new_tokens]
    if not counts:
        raise ValueError("new_tokens must list at least one number of tokens to generate")
    positive_int(repeats, "repeats")
    check_clock(clock)
    rows = []
    for i, n in enumerate(counts):
        runs = {
            "recompute": lambda n=n: generate(model, prompt, max_new_tokens=n),
            "cache": lambda n=n: generate(model, prompt, max_new_tokens=n, use_cache=True),
        }
        seconds = median_seconds_each(
            runs, repeats, clock=clock, device=prompt.device, warm_up=i == 0
        )
        rows.append(
            {
                "new_tokens": n,
                "recompute_s": seconds["recompute"],
                "cache_s": seconds["cache"],
                "speedup": seconds["recompute"] / seconds["cache"],
            }
        )
    return rows


def _next_token(
    logits: torch.Tensor, temperature: float, generator: torch.Generator | None
) -> torch.Tensor:
    if temperature == 0:
        return logits.argmax(dim=-1)  # (B, n_vocab) -> (B,)
    probs = torch.softmax(logits.double() / temperature, dim=-1)  # (B, n_vocab)
    return torch.multinomial(probs, 1, generator=generator)[:, 0]  # (B, 1) -> (B,)


def _token_id(i: object, name: str, size: int) -> int:
    """``i`` as an ``int`` in ``0 .. size - 1`` (NumPy integers accepted, bools not)."""
    return check_int(i, name, low=0, high=size - 1, expected=f"an id in 0..{size - 1}")
