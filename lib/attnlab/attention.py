"""Scaled dot-product attention, the one equation the whole course is about.

.. math:: \\mathrm{Attention}(Q, K, V) = \\mathrm{softmax}\\!\\left(\\frac{Q K^\\top}{\\sqrt{d}}\\right) V

Each query row asks "which keys look like me?" (the scores), turns the answer into weights
that sum to 1 (the softmax), and returns that weighted average of the value rows.

Reference: Vaswani et al., "Attention Is All You Need", 2017, section 3.2.1.

Taught in: chapters/02_similarity.ipynb (no weights) and chapters/03_qkv.ipynb (learned W_q, W_k, W_v)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from ._array import as_array, as_float, check_last_dim, check_mask, describe, namespace
from .similarity import softmax

__all__ = ["SelfAttention", "scaled_dot_product_attention"]


def scaled_dot_product_attention(
    q: Any,
    k: Any,
    v: Any,
    mask: Any = None,
    *,
    scale: float | None = None,
    dropout: Callable[[Any], Any] | None = None,
) -> tuple[Any, Any]:
    """Attention of every query over every key: ``(softmax(q kᵀ / √d) v, weights)``.

    Args:
        q: ``(..., T, d)`` queries.
        k: ``(..., S, d)`` keys.
        v: ``(..., S, d_v)`` values, one per key.
        mask: optional boolean mask broadcastable to ``(..., T, S)``; ``True`` = may attend.
            A query with no visible key gets all-zero weights and a zero output (not NaN).
        scale: multiply the scores by this instead of ``1 / sqrt(d)``.
        dropout: optional function applied to the weights just before they average the
            values (e.g. an ``nn.Dropout``); the returned ``weights`` are the ones before it.

    Returns:
        ``out``: ``(..., T, d_v)``, and ``weights``: ``(..., T, S)``, each row summing to 1
        over the visible keys. NumPy in, NumPy out; tensors in, tensors out.

    Raises:
        ValueError: if ``q`` and ``k`` differ in ``d``, ``k`` and ``v`` differ in length, the
            leading axes do not broadcast, or the mask does not fit ``(..., T, S)``.
        TypeError: mixed NumPy/torch input, non-numeric input or a non-boolean mask.
    """
    q, k, v = as_array(q, "q"), as_array(k, "k"), as_array(v, "v")
    xp = namespace(q=q, k=k, v=v)
    q, k, v = (as_float(a, n, xp) for a, n in ((q, "q"), (k, "k"), (v, "v")))
    for name, a in (("q", q), ("k", k), ("v", v)):
        if a.ndim < 2:
            raise ValueError(
                f"{name} must be (..., length, features) with one row per position, "
                f"got {describe(a)}"
            )
    check_last_dim(q, k, "q", "k")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            "k and v must have one row per key (the same length), got "
            f"k: shape {tuple(k.shape)} and v: shape {tuple(v.shape)}"
        )
    if q.dtype != k.dtype or k.dtype != v.dtype:
        raise TypeError(f"q, k and v must share a dtype, got {q.dtype}, {k.dtype} and {v.dtype}")
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    # (q * scale) kᵀ equals (q kᵀ) * scale, and scaling the T x d queries is cheaper than
    # scaling the T x S scores whenever d < S.
    q_scaled = q * scale if scale != 1 else q  # (..., T, d)
    try:
        scores = q_scaled @ xp.matrix_transpose(k)  # (..., T, d) @ (..., d, S) -> (..., T, S)
    except (ValueError, RuntimeError):
        raise ValueError(
            f"the leading (batch/head) axes of q {tuple(q.shape)} and k {tuple(k.shape)} "
            "do not broadcast"
        ) from None
    if mask is not None:
        check_mask(mask, tuple(scores.shape), xp, what="scores (..., T, S)")
    weights = softmax(scores, axis=-1, mask=mask)  # (..., T, S)
    try:
        dropped = weights if dropout is None else dropout(weights)  # (..., T, S)
        out = dropped @ v  # (..., T, S) @ (..., S, d_v) -> (..., T, d_v)
    except (ValueError, RuntimeError):
        raise ValueError(
            f"the leading axes of the weights {tuple(weights.shape)} and v {tuple(v.shape)} "
            "do not broadcast"
        ) from None
    return out, weights


class SelfAttention(nn.Module):
    """Single-head self-attention with learned projections W_q, W_k, W_v.

    ``q = x W_q``, ``k = x W_k``, ``v = x W_v`` (each ``d_model -> d_head``), then
    :func:`scaled_dot_product_attention`. With ``d_head < d_model`` the projections map to a
    smaller space (BERT: 768 -> 64). There is no output projection here: that belongs to
    multi-head attention.

    Args:
        d_model: size ``D`` of each input vector.
        d_head: size ``d`` of queries, keys and values (default ``d_model``).
        bias: whether the projections have a bias (the seeds' are plain matrices).

    Shapes:
        ``x``: ``(B, T, D)``; returns ``out``: ``(B, T, d)`` and ``weights``: ``(B, T, T)``.

    Taught in: chapters/03_qkv.ipynb
    """

    def __init__(self, d_model: int, d_head: int | None = None, bias: bool = False) -> None:
        super().__init__()
        d_head = d_model if d_head is None else d_head
        for name, n in (("d_model", d_model), ("d_head", d_head)):
            if not isinstance(n, int) or n < 1:
                raise ValueError(f"{name} must be a positive integer, got {n!r}")
        self.d_model, self.d_head = d_model, d_head
        self.W_q = nn.Linear(d_model, d_head, bias=bias)
        self.W_k = nn.Linear(d_model, d_head, bias=bias)
        self.W_v = nn.Linear(d_model, d_head, bias=bias)

    def forward(self, x: torch.Tensor, mask: Any = None) -> tuple[torch.Tensor, torch.Tensor]:
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"SelfAttention expects a torch.Tensor, got {describe(x)}")
        if x.ndim < 2 or x.shape[-1] != self.d_model:
            raise ValueError(
                f"expected x of shape (..., T, d_model={self.d_model}), got {describe(x)}"
            )
        q = self.W_q(x)  # (B, T, D) -> (B, T, d)
        k = self.W_k(x)  # (B, T, D) -> (B, T, d)
        v = self.W_v(x)  # (B, T, D) -> (B, T, d)
        return scaled_dot_product_attention(q, k, v, mask)
