"""Masks say which keys each query may look at. Convention: boolean, ``True`` = may attend.

This is the convention of ``torch.nn.functional.scaled_dot_product_attention``. A masked
score becomes ``-inf`` before the softmax, so it gets weight exactly 0. A query with no
visible key at all gets zero weights and a zero output, never NaN.

Other libraries spell the same information differently. The converters below translate
between them, and each is tested against the library it targets:

- attnlab and ``F.scaled_dot_product_attention`` with a boolean ``attn_mask``:
  ``True`` = may attend (the reference convention, no conversion);
- ``nn.MultiheadAttention`` (and ``nn.Transformer*``): a boolean ``attn_mask`` or
  ``key_padding_mask`` marks what to *ignore*, ``True`` = masked out:
  :func:`to_ignore_mask`, :func:`from_ignore_mask`, :func:`to_key_padding_mask`;
- the additive float mask that both torch APIs also accept, added to the scores:
  ``0`` = may attend, ``-inf`` = masked: :func:`to_additive_mask`, :func:`from_additive_mask`;
- Hugging Face's ``attention_mask``, one row of 0/1 integers per sequence, ``1`` = a real
  token that may be attended to, ``0`` = padding: :func:`to_hf_attention_mask`,
  :func:`from_hf_attention_mask`. It describes keys only; a decoder model adds the causal
  part itself.

Taught in: chapters/06_masking.ipynb
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import (
    NEG_INF,
    as_array,
    check_int,
    check_real,
    describe,
    device,
    match_kind,
    namespace,
    positive_int,
)

__all__ = [
    "causal_mask",
    "combine_masks",
    "from_additive_mask",
    "from_hf_attention_mask",
    "from_ignore_mask",
    "padding_mask",
    "to_additive_mask",
    "to_hf_attention_mask",
    "to_ignore_mask",
    "to_key_padding_mask",
]


def causal_mask(q_len: int, k_len: int | None = None, *, like: Any = None) -> Any:
    """Lower-triangular mask: query ``i`` may attend to keys ``0 .. i`` (no peeking ahead).

    ``mask[i, j] = j <= i + (k_len - q_len)``; with ``k_len > q_len`` the queries are taken
    to be the *last* ``q_len`` positions (as when decoding with a cache of earlier keys),
    which is why ``k_len >= q_len`` is required.

    Args:
        q_len: number of query positions ``T``.
        k_len: number of key positions ``S >= T`` (default ``T``).
        like: an array or tensor; the mask is returned as the same kind (and on the same
            device). Default: a NumPy array.

    Returns:
        ``(T, S)`` boolean mask, broadcastable against ``(B, H, T, S)`` scores.

    Raises:
        ValueError: a length that is not a positive integer, or ``q_len > k_len`` (the first
            queries would have no visible key).

    Taught in: chapters/06_masking.ipynb
    """
    q_len = positive_int(q_len, "q_len")
    k_len = q_len if k_len is None else positive_int(k_len, "k_len")
    if q_len > k_len:
        raise ValueError(
            f"causal_mask needs at least as many keys as queries, got q_len={q_len} > "
            f"k_len={k_len}: the queries are the last q_len of the k_len positions, so the "
            f"first {q_len - k_len} would see no key at all"
        )
    mask = np.tril(np.ones((q_len, k_len), dtype=bool), k=k_len - q_len)  # (T, S)
    return match_kind(mask, like)


def padding_mask(
    lengths: Any = None,
    max_len: int | None = None,
    *,
    tokens: Any = None,
    pad_id: int | None = None,
) -> Any:
    """Key mask that hides padding: ``mask[b, j]`` is ``True`` where key ``j`` is a real token.

    Give either the true ``lengths`` of each sequence, or the padded ``tokens`` with the
    ``pad_id`` used for padding.

    Args:
        lengths: ``(B,)`` integer lengths, each in ``0 .. max_len``.
        max_len: padded length ``S`` (default: the largest length).
        tokens: ``(B, S)`` integer token ids.
        pad_id: the id that marks padding in ``tokens``.

    Returns:
        ``(B, 1, S)`` boolean mask of the same kind as ``lengths``/``tokens``. The middle
        axis of size 1 broadcasts over query positions, so it combines directly with a
        ``(T, S)`` causal mask; add a head axis with ``mask[:, None]`` for ``(B, H, T, S)``.
        An empty batch (``B = 0``) gives an empty ``(0, 1, S)`` mask, for NumPy and torch.

    Raises:
        ValueError: both or neither of ``lengths`` and ``tokens``; ``tokens`` without
            ``pad_id`` or not 2-D; ``lengths`` not a 1-D integer array or outside
            ``0 .. max_len``.

    Taught in: chapters/06_masking.ipynb
    """
    if (lengths is None) == (tokens is None):
        raise ValueError("give either lengths=... or tokens=... with pad_id=..., not both")
    if tokens is not None:
        if pad_id is None:
            raise ValueError("padding_mask(tokens=...) needs the pad_id that marks padding")
        tokens = as_array(tokens, "tokens")
        if tokens.ndim != 2:
            raise ValueError(f"tokens must be (batch, length), got {describe(tokens)}")
        return (tokens != pad_id)[:, None, :]  # (B, S) -> (B, 1, S)
    lengths = as_array(lengths, "lengths")
    xp = namespace(lengths=lengths)
    if lengths.ndim != 1 or not xp.isdtype(lengths.dtype, "integral"):
        raise ValueError(f"lengths must be a 1-D array of integers, got {describe(lengths)}")
    empty = lengths.shape[0] == 0  # an empty batch: a (0, 1, max_len) mask
    longest = 0 if empty else int(xp.max(lengths))
    max_len = longest if max_len is None else check_int(max_len, "max_len", low=0)
    if not empty and (int(xp.min(lengths)) < 0 or longest > max_len):
        raise ValueError(f"every length must lie in 0..{max_len}, got {lengths.tolist()}")
    positions = xp.arange(max_len, device=device(lengths))  # (S,)
    return (positions[None, :] < lengths[:, None])[:, None, :]  # (B, S) -> (B, 1, S)


def combine_masks(*masks: Any) -> Any:
    """Logical AND of boolean masks (broadcasting): a key is visible only if every mask allows it.

    ``mask = m_1 & m_2 & ...``; for a decoder batch, ``combine_masks(causal_mask(T),
    padding_mask(lengths=...))`` gives ``(B, T, T)``: query ``i`` of sequence ``b`` sees key
    ``j`` only if ``j <= i`` and ``j`` is a real token.

    Args:
        masks: boolean masks (``True`` = may attend) whose shapes broadcast together;
            ``None`` entries are skipped.

    Returns:
        The broadcast AND, of the same kind as the inputs; ``None`` if all are ``None``.

    Raises:
        TypeError: a mask that is not boolean, or NumPy and torch mixed.
        ValueError: shapes that do not broadcast.

    Taught in: chapters/06_masking.ipynb
    """
    present = [as_array(m, f"masks[{i}]") for i, m in enumerate(masks) if m is not None]
    if not present:
        return None
    xp = namespace(**{f"masks[{i}]": m for i, m in enumerate(present)})
    out = present[0]
    for i, m in enumerate(present):
        if not xp.isdtype(m.dtype, "bool"):
            raise TypeError(f"masks must be boolean (True = may attend), got {describe(m)}")
        if i:
            try:
                out = out & m
            except (ValueError, RuntimeError):
                raise ValueError(
                    f"masks of shapes {tuple(out.shape)} and {tuple(m.shape)} do not broadcast"
                ) from None
    return out


# --- converters between the conventions of different libraries --------------------------


def from_ignore_mask(ignore: Any) -> Any:
    """Convert a ``True`` = *ignore* mask into attnlab's ``True`` = *may attend*: ``~ignore``.

    ``nn.MultiheadAttention``'s boolean ``attn_mask`` and ``key_padding_mask`` (and those of
    ``nn.Transformer*``) mark the positions that must *not* be attended to.

    Args:
        ignore: boolean mask of any shape, ``True`` = masked out.

    Returns:
        The boolean mask ``~ignore`` (same shape and kind), ``True`` = may attend. A
        ``(B, S)`` key padding mask becomes ``(B, S)``: add axes (``[:, None, :]``) to
        broadcast it against ``(B, T, S)`` scores.

    Raises:
        TypeError: a mask that is not boolean (a float mask is additive: see
            :func:`from_additive_mask`).

    Taught in: chapters/06_masking.ipynb
    """
    return ~_bool_mask(ignore, "ignore")


def to_ignore_mask(mask: Any) -> Any:
    """Convert attnlab's ``True`` = *may attend* mask into ``True`` = *ignore*: ``~mask``.

    Pass the result as ``nn.MultiheadAttention``'s boolean ``attn_mask`` (shape ``(T, S)``
    or ``(B·H, T, S)``). For ``key_padding_mask`` use :func:`to_key_padding_mask`, which
    also drops the query axis.

    Args:
        mask: boolean mask of any shape, ``True`` = may attend.

    Returns:
        ``~mask``: same shape and kind, ``True`` = masked out.

    Raises:
        TypeError: a mask that is not boolean.

    Taught in: chapters/06_masking.ipynb
    """
    return ~_bool_mask(mask, "mask")


def to_key_padding_mask(mask: Any) -> Any:
    """Convert a key mask (``True`` = real token) into ``nn.MultiheadAttention``'s
    ``key_padding_mask`` (``True`` = padding, ignore).

    ``key_padding_mask[b, j] = not mask[b, ..., j]``.

    Args:
        mask: boolean ``(B, S)``, or a padding mask with size-1 middle axes such as
            ``(B, 1, S)`` (what :func:`padding_mask` returns) or ``(B, 1, 1, S)``.

    Returns:
        ``(B, S)`` boolean, ``True`` = ignore this key, of the same kind as ``mask``.

    Raises:
        TypeError: a mask that is not boolean.
        ValueError: a mask that differs between queries (a middle axis larger than 1): that
            is not a key padding mask but a full ``attn_mask``.

    Taught in: chapters/06_masking.ipynb
    """
    return ~_key_mask(_bool_mask(mask, "mask"), "mask")


def to_additive_mask(mask: Any, *, dtype: Any = None, fill: float = NEG_INF) -> Any:
    """Convert a boolean mask into the additive float form: ``0`` where attend, ``fill`` elsewhere.

    ``additive[i, j] = 0 if mask[i, j] else fill``, so that ``softmax(scores + additive)``
    is the masked softmax. Both ``F.scaled_dot_product_attention`` and
    ``nn.MultiheadAttention`` accept it as a float ``attn_mask`` and add it to the scores.

    Args:
        mask: boolean mask of any shape, ``True`` = may attend.
        dtype: float dtype of the result, of the same library as ``mask`` (e.g.
            ``torch.float16``); default ``torch.get_default_dtype()`` or ``numpy.float64``.
            Give the dtype of the scores: torch requires the two to match.
        fill: the value added to masked scores; ``-inf`` (default) masks exactly. A finite
            fill such as ``-1e9`` only *nearly* masks, and leaks when scores are large.

    Returns:
        A float array of the same shape and kind as ``mask``.

    Raises:
        TypeError: a mask that is not boolean, or a dtype that is not floating.
        ValueError: ``fill`` is not negative, is NaN, or overflows ``dtype`` (``-1e9`` in
            float16 would silently become ``-inf``).

    Taught in: chapters/06_masking.ipynb
    """
    mask = _bool_mask(mask, "mask")
    xp = namespace(mask=mask)
    if dtype is None:
        dtype = _default_float(mask)
    try:
        # A dtype, not its name: NumPy 1.x's isdtype would accept "float32" (NumPy 2 refuses).
        floating = not isinstance(dtype, str) and xp.isdtype(dtype, "real floating")
    except (TypeError, ValueError, AttributeError):
        floating = False
    if not floating:
        raise TypeError(f"dtype must be a real floating dtype of the mask's library, got {dtype!r}")
    fill = check_real(fill, "fill", expected="a negative number (or -inf)", ok=lambda f: f < 0)
    lowest = float(xp.finfo(dtype).min)
    if math.isfinite(fill) and fill < lowest:
        raise ValueError(
            f"fill={fill:g} does not fit in {dtype} (lowest finite value {lowest:g}): it "
            "would silently become -inf; use -inf, or a fill the dtype can hold"
        )
    dev = device(mask)
    zero = xp.asarray(0.0, dtype=dtype, device=dev)
    masked = xp.asarray(fill, dtype=dtype, device=dev)
    return xp.where(mask, zero, masked)


def from_additive_mask(additive: Any, *, threshold: float = NEG_INF) -> Any:
    """Convert an additive float mask into a boolean one: ``True`` where ``additive > threshold``.

    An additive mask may also carry finite biases (e.g. a position penalty) on visible
    entries; only entries at or below ``threshold`` count as masked.

    Args:
        additive: float mask of any shape, added to the scores.
        threshold: entries ``<= threshold`` are masked. The default ``-inf`` recognises only
            ``-inf``; for a mask filled with a large finite value (``-1e9``, or
            ``torch.finfo(dtype).min``) pass a threshold such as ``-1e4``.

    Returns:
        Boolean mask of the same shape and kind, ``True`` = may attend.

    Raises:
        TypeError: ``additive`` is not floating (a boolean mask needs no conversion).
        ValueError: ``additive`` contains NaN.

    Taught in: chapters/06_masking.ipynb
    """
    additive = as_array(additive, "additive")
    xp = namespace(additive=additive)
    if not xp.isdtype(additive.dtype, "real floating"):
        raise TypeError(
            f"an additive mask holds floats (0 or -inf), got {describe(additive)}; a boolean "
            "mask needs no conversion"
        )
    if bool(xp.any(xp.isnan(additive))):
        raise ValueError(f"the additive mask contains NaN: {describe(additive)}")
    return additive > threshold


def to_hf_attention_mask(mask: Any) -> Any:
    """Convert a key mask into Hugging Face's ``attention_mask``: ``1`` = real token, ``0`` = pad.

    ``attention_mask[b, j] = 1 if mask[b, ..., j] else 0``. This is what a Hugging Face
    tokenizer returns next to ``input_ids`` for a padded batch.

    Args:
        mask: boolean ``(B, S)``, or a padding mask with size-1 middle axes such as
            ``(B, 1, S)`` or ``(B, 1, 1, S)``; ``True`` = may attend.

    Returns:
        ``(B, S)`` integer (int64) 0/1 array of the same kind as ``mask``.

    Raises:
        TypeError: a mask that is not boolean.
        ValueError: a mask that differs between queries (a middle axis larger than 1): the
            ``attention_mask`` describes keys only.

    Taught in: chapters/06_masking.ipynb
    """
    keys = _key_mask(_bool_mask(mask, "mask"), "mask")
    xp = namespace(mask=keys)
    return xp.astype(keys, xp.int64)


def from_hf_attention_mask(attention_mask: Any) -> Any:
    """Convert Hugging Face's ``attention_mask`` (``1`` = real token) into a boolean key mask.

    ``mask[b, 0, j] = attention_mask[b, j] == 1``, shaped like :func:`padding_mask` so it
    combines with a ``(T, S)`` causal mask.

    Args:
        attention_mask: ``(B, S)`` of 0 and 1 (integers, floats or booleans).

    Returns:
        ``(B, 1, S)`` boolean mask of the same kind, ``True`` = may attend.

    Raises:
        ValueError: not 2-D, or a value other than 0 and 1 (is it an additive mask?).
        TypeError: not an array of numbers.

    Taught in: chapters/06_masking.ipynb
    """
    attention_mask = as_array(attention_mask, "attention_mask")
    xp = namespace(attention_mask=attention_mask)
    if attention_mask.ndim != 2:
        raise ValueError(f"attention_mask must be (batch, length), got {describe(attention_mask)}")
    if xp.isdtype(attention_mask.dtype, "bool"):
        return attention_mask[:, None, :]  # (B, S) -> (B, 1, S)
    ones = attention_mask == 1
    if not bool(xp.all(ones | (attention_mask == 0))):
        raise ValueError(
            "attention_mask must hold only 0 (padding) and 1 (real token), got "
            f"{describe(attention_mask)} with other values; an additive mask (0/-inf) "
            "converts with from_additive_mask"
        )
    return ones[:, None, :]  # (B, S) -> (B, 1, S)


def _bool_mask(mask: Any, name: str) -> Any:
    mask = as_array(mask, name)
    xp = namespace(**{name: mask})
    if not xp.isdtype(mask.dtype, "bool"):
        raise TypeError(
            f"expected a boolean mask, got {describe(mask)}; a 0/1 mask converts with "
            "mask.astype(bool) or mask.bool(), an additive one with from_additive_mask"
        )
    return mask


def _key_mask(mask: Any, name: str) -> Any:
    """``(B, S)`` from a key mask ``(B, S)``, ``(B, 1, S)`` or ``(B, 1, 1, S)``."""
    if mask.ndim < 2 or any(n != 1 for n in mask.shape[1:-1]):
        raise ValueError(
            f"{name} must be a key mask (B, S), (B, 1, S) or (B, 1, 1, S) that is the same "
            f"for every query, got {describe(mask)}"
        )
    return mask.reshape(mask.shape[0], mask.shape[-1])  # (B, 1, ..., S) -> (B, S)


def _default_float(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return np.float64
    import torch

    return torch.get_default_dtype()
