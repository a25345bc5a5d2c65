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

from .._validate import (
    as_array,
    as_float,
    broadcast_shape,
    check_device,
    check_input,
    check_mask,
    check_qkv,
    check_real,
    describe,
    namespace,
    positive_ints,
)
from .similarity import _masked_softmax

__all__ = ["CrossAttention", "OneLayerAttention", "SelfAttention", "scaled_dot_product_attention"]


def attend(
    q: Any,
    k: Any,
    v: Any,
    mask: Any,
    *,
    scale: float,
    dropout: Callable[[Any], Any] | None = None,
    xp: Any,
) -> tuple[Any, Any]:
    """The equation, on inputs already checked: ``(softmax(q kᵀ · scale) v, weights)``.

    :func:`scaled_dot_product_attention` checks its inputs, then calls this; so do the
    library's own layers, whose ``q, k, v`` are their own projections. Shapes: ``q``
    ``(..., T, d)``, ``k`` ``(..., S, d)``, ``v`` ``(..., S, d_v)``, ``mask`` ``None`` or
    boolean, broadcastable to ``(..., T, S)``; ``xp`` the array namespace of the three.
    """
    # (q · scale) kᵀ equals (q kᵀ) · scale; scaling the T x d queries is cheaper when d < S.
    q = q * scale if scale != 1 else q  # (..., T, d)
    scores = q @ xp.matrix_transpose(k)  # (..., T, d) @ (..., d, S) -> (..., T, S)
    weights = _masked_softmax(scores, -1, mask, xp)  # softmax over the visible keys
    dropped = weights if dropout is None else dropout(weights)  # (..., T, S)
    return dropped @ v, weights  # (..., T, S) @ (..., S, d_v) -> (..., T, d_v); (..., T, S)


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
    check_qkv(q, k, v)
    lead = broadcast_shape(tuple(q.shape[:-2]), tuple(k.shape[:-2]))
    if lead is None:
        raise ValueError(
            f"the leading (batch/head) axes of q {tuple(q.shape)} and k {tuple(k.shape)} "
            "do not broadcast"
        )
    scores_shape = (*lead, q.shape[-2], k.shape[-2])  # (..., T, S)
    if broadcast_shape(lead, tuple(v.shape[:-2])) is None:
        raise ValueError(
            f"the leading axes of the weights {scores_shape} and v {tuple(v.shape)} "
            "do not broadcast"
        )
    if mask is not None:
        mask = check_mask(mask, scores_shape, xp, what="scores (..., T, S)", like=q)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else check_real(scale, "scale")
    return attend(q, k, v, mask, scale=scale, dropout=dropout, xp=xp)


class SelfAttention(nn.Module):
    """Single-head self-attention with learned projections W_q, W_k, W_v.

    ``q = x W_q``, ``k = x W_k``, ``v = x W_v``, then :func:`scaled_dot_product_attention`:

    .. math:: \\mathrm{out} = \\mathrm{softmax}\\!\\left(\\frac{(X W_q)(X W_k)^\\top}{\\sqrt{d}}\\right) X W_v

    ``W_q, W_k`` are ``D x d`` and ``W_v`` is ``D x d_v``. With ``d < D`` the projections
    map to a smaller space (BERT: 768 -> 64). There is no output projection here: that
    belongs to multi-head attention. Each projection is an ``nn.Linear``, which stores its
    matrix transposed: ``W_q = self.W_q.weight.T`` (shape ``(D, d)``).

    Args:
        d_model: size ``D`` of each input vector.
        d_head: size ``d`` of queries and keys (default ``d_model``).
        bias: whether the projections have a bias (plain matrices by default).
        d_v: size of the values and of the output (default ``d_head``).

    Shapes:
        ``x``: ``(B, T, D)``; returns ``out``: ``(B, T, d_v)`` and ``weights``:
        ``(B, T, T)``. ``mask``: boolean, broadcastable to ``(B, T, T)``, ``True`` = may
        attend.

    Raises:
        ValueError: sizes that are not positive integers, or ``x`` whose last axis is not
            ``d_model``.
        TypeError: ``x`` is not a tensor.

    Taught in: chapters/03_qkv.ipynb
    """

    def __init__(
        self, d_model: int, d_head: int | None = None, bias: bool = False, *, d_v: int | None = None
    ) -> None:
        super().__init__()
        d_head = d_model if d_head is None else d_head
        d_v = d_head if d_v is None else d_v
        d_model, d_head, d_v = positive_ints(d_model=d_model, d_head=d_head, d_v=d_v)
        self.d_model, self.d_head, self.d_v = d_model, d_head, d_v
        self.W_q = nn.Linear(d_model, d_head, bias=bias)
        self.W_k = nn.Linear(d_model, d_head, bias=bias)
        self.W_v = nn.Linear(d_model, d_v, bias=bias)

    def forward(self, x: torch.Tensor, mask: Any = None) -> tuple[torch.Tensor, torch.Tensor]:
        _check_input(x, self.d_model, "x", "SelfAttention", "d_model", self)
        q = self.W_q(x)  # (B, T, D) -> (B, T, d)
        k = self.W_k(x)  # (B, T, D) -> (B, T, d)
        v = self.W_v(x)  # (B, T, D) -> (B, T, d_v)
        return scaled_dot_product_attention(q, k, v, mask)


class CrossAttention(nn.Module):
    """Single-head cross-attention: queries from ``x``, keys and values from ``context``.

    The same computation as :class:`SelfAttention`, with two inputs: ``q = x W_q``,
    ``k = c W_k``, ``v = c W_v``. A decoder uses it to look at the encoder's output. The
    weights are ``(T, S)``: one row per query position of ``x``, one column per position
    of ``context``, so the matrix is square only when the two sequences are as long.

    .. math:: \\mathrm{out} = \\mathrm{softmax}\\!\\left(\\frac{(X W_q)(C W_k)^\\top}{\\sqrt{d}}\\right) C W_v

    Args:
        d_model: size ``D`` of each vector of ``x`` (the queries' side).
        d_head: size ``d`` of queries and keys (default ``d_model``).
        bias: whether the projections have a bias.
        d_context: size of each vector of ``context`` (default ``d_model``).
        d_v: size of the values and of the output (default ``d_head``).

    The arguments come in :class:`SelfAttention`'s order; the two sizes it does not have
    (``d_context``, ``d_v``) are keywords.

    Shapes:
        ``x``: ``(B, T, D)``, ``context``: ``(B, S, D_c)``; returns ``out``: ``(B, T, d_v)``
        and ``weights``: ``(B, T, S)``. ``mask`` broadcastable to ``(B, T, S)``.

    Raises:
        ValueError: sizes that are not positive integers, or inputs of the wrong width.
        TypeError: an input that is not a tensor.

    Taught in: chapters/03_qkv.ipynb
    """

    def __init__(
        self,
        d_model: int,
        d_head: int | None = None,
        bias: bool = False,
        *,
        d_context: int | None = None,
        d_v: int | None = None,
    ) -> None:
        super().__init__()
        d_context = d_model if d_context is None else d_context
        d_head = d_model if d_head is None else d_head
        d_v = d_head if d_v is None else d_v
        d_model, d_context, d_head, d_v = positive_ints(
            d_model=d_model, d_context=d_context, d_head=d_head, d_v=d_v
        )
        self.d_model, self.d_context, self.d_head, self.d_v = d_model, d_context, d_head, d_v
        self.W_q = nn.Linear(d_model, d_head, bias=bias)
        self.W_k = nn.Linear(d_context, d_head, bias=bias)
        self.W_v = nn.Linear(d_context, d_v, bias=bias)

    def forward(
        self, x: torch.Tensor, context: torch.Tensor, mask: Any = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        _check_input(x, self.d_model, "x", "CrossAttention", "d_model", self)
        _check_input(context, self.d_context, "context", "CrossAttention", "d_context", self)
        q = self.W_q(x)  # (B, T, D) -> (B, T, d)
        k = self.W_k(context)  # (B, S, D_c) -> (B, S, d)
        v = self.W_v(context)  # (B, S, D_c) -> (B, S, d_v)
        return scaled_dot_product_attention(q, k, v, mask)


class OneLayerAttention(nn.Module):
    """The smallest model with attention: fixed embeddings, one attention layer, a read-out.

    Token ids pick rows of a fixed embedding table ``E`` (``n_vocab x D``); one
    :class:`SelfAttention` (``d_v = D``) mixes them; each output is scored against every
    embedding, ``logits = out Eᵀ``, so a position "predicts" the token whose embedding
    its output points to. With ``learned=False`` the layer has no weights at all
    (``q = k = v = x``, chapter 2's weightless attention) and cannot be trained.

    Args:
        embeddings: ``(n_vocab, D)`` the fixed embedding table (copied; not trained).
        learned: use learned ``W_q, W_k, W_v`` (``True``) or none (``False``).
        d_head: size of queries and keys when learned (default ``D``).

    Shapes:
        ``ids``: ``(B, T)`` integer token ids; ``forward`` returns logits ``(B, T, n_vocab)``;
        :meth:`attend` returns ``out`` ``(B, T, D)`` and ``weights`` ``(B, T, T)``.

    Raises:
        ValueError: ``embeddings`` not 2-D, or ids out of range.
        TypeError: ``embeddings`` not a float tensor, or ids not an integer tensor.

    Taught in: chapters/03_qkv.ipynb
    """

    def __init__(
        self, embeddings: torch.Tensor, learned: bool = True, d_head: int | None = None
    ) -> None:
        super().__init__()
        if not isinstance(embeddings, torch.Tensor) or not embeddings.is_floating_point():
            raise TypeError(
                f"embeddings must be a float tensor (n_vocab, D), got {describe(embeddings)}"
            )
        if embeddings.ndim != 2:
            raise ValueError(f"embeddings must be (n_vocab, D), got {describe(embeddings)}")
        self.register_buffer("E", embeddings.detach().clone())
        D = embeddings.shape[1]
        self.learned = bool(learned)
        self.attention = (
            SelfAttention(D, d_head, d_v=D).to(embeddings.dtype) if self.learned else None
        )

    def attend(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The attention layer alone: ``(out (B, T, D), weights (B, T, T))``."""
        if not isinstance(ids, torch.Tensor) or ids.is_floating_point() or ids.dtype == torch.bool:
            raise TypeError(f"ids must be an integer tensor (B, T), got {describe(ids)}")
        check_device(ids, self, who="OneLayerAttention", name="ids")
        n_vocab = self.E.shape[0]
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= n_vocab):
            raise ValueError(
                f"ids must lie in 0 .. {n_vocab - 1}, got values {int(ids.min())} .. {int(ids.max())}"
            )
        x = self.E[ids]  # (B, T) -> (B, T, D)
        if self.attention is None:
            return scaled_dot_product_attention(x, x, x)
        return self.attention(x)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out, _ = self.attend(ids)  # (B, T, D)
        return out @ self.E.T  # (B, T, D) @ (D, n_vocab) -> (B, T, n_vocab)


def _check_input(
    x: Any, width: int, name: str, owner: str, width_name: str, module: Any = None
) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{owner} expects a torch.Tensor, got {describe(x)} as {name}")
    shape = f"(..., length, {width_name}={width})"
    if x.ndim < 2 or x.shape[-1] != width:
        raise ValueError(f"{owner}: expected {name} of shape {shape}, got {describe(x)}")
    # dtype (floating, the weights') and device: the library's one check
    check_input(x, width, who=owner, name=name, shape=shape, min_ndim=2, module=module)
