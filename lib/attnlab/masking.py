"""Masks say which keys each query may look at. Convention: boolean, ``True`` = may attend.

This is the convention of ``torch.nn.functional.scaled_dot_product_attention``. Other APIs
use the opposite one (``nn.MultiheadAttention``'s ``key_padding_mask`` and boolean
``attn_mask`` mark what to *ignore*); :func:`from_ignore_mask` converts. A masked score
becomes ``-inf`` before the softmax, so it gets weight exactly 0. A query with no visible
key at all gets zero weights and a zero output, never NaN.

Taught in: chapters/06_masking.ipynb
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._array import as_array, describe, namespace

__all__ = ["causal_mask", "combine_masks", "from_ignore_mask", "padding_mask"]


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
    """
    k_len = q_len if k_len is None else k_len
    for name, n in (("q_len", q_len), ("k_len", k_len)):
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
            raise ValueError(f"{name} must be a positive integer, got {n!r}")
    if q_len > k_len:
        raise ValueError(
            f"causal_mask needs at least as many keys as queries, got q_len={q_len} > "
            f"k_len={k_len}: the queries are the last q_len of the k_len positions, so the "
            f"first {q_len - k_len} would see no key at all"
        )
    mask = np.tril(np.ones((q_len, k_len), dtype=bool), k=k_len - q_len)  # (T, S)
    return _like(mask, like)


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
    longest = int(xp.max(lengths)) if lengths.shape[0] else 0
    max_len = longest if max_len is None else max_len
    if int(xp.min(lengths)) < 0 or longest > max_len:
        raise ValueError(f"every length must lie in 0..{max_len}, got {lengths.tolist()}")
    positions = xp.arange(max_len, device=_device(lengths))  # (S,)
    return (positions[None, :] < lengths[:, None])[:, None, :]  # (B, S) -> (B, 1, S)


def combine_masks(*masks: Any) -> Any:
    """Logical AND of boolean masks (broadcasting): a key is visible only if every mask allows it.

    ``None`` entries are skipped; returns ``None`` if all are ``None``.
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


def from_ignore_mask(ignore: Any) -> Any:
    """Convert a ``True`` = *ignore* mask (``nn.MultiheadAttention``'s ``key_padding_mask``,
    its boolean ``attn_mask``) into attnlab's ``True`` = *may attend* convention."""
    ignore = as_array(ignore, "ignore")
    xp = namespace(ignore=ignore)
    if not xp.isdtype(ignore.dtype, "bool"):
        raise TypeError(f"expected a boolean mask, got {describe(ignore)}")
    return ~ignore


def _device(x: Any) -> Any:
    from ._array import device

    return device(x)


def _like(mask: np.ndarray, like: Any) -> Any:
    if like is None:
        return mask
    like = as_array(like, "like")
    if isinstance(like, np.ndarray):
        return mask
    import torch

    return torch.from_numpy(mask).to(like.device)
