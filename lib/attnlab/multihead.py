"""Multi-head attention: several small attentions side by side, then one output projection.

.. math::
    \\mathrm{MultiHead}(Q, K, V) = \\mathrm{Concat}(\\mathrm{head}_1, \\dots, \\mathrm{head}_H)\\, W_O,
    \\qquad \\mathrm{head}_h = \\mathrm{Attention}(Q W_Q^h, K W_K^h, V W_V^h)

Each head projects the ``D``-dimensional input to its own ``d = D / H``-dimensional queries,
keys and values, so it can learn its own notion of "relevant" (one head may follow syntax,
another the previous token). The ``H`` heads are computed at once: one ``D -> D`` projection
is cut into ``H`` slices of width ``d`` (:func:`split_heads`), attention runs on all heads in
one batched matmul, and the head outputs are concatenated back (:func:`merge_heads`) and mixed
by ``W_o``.

Reference: Vaswani et al., "Attention Is All You Need", 2017, section 3.2.2.

Taught in: chapters/04_multihead.ipynb
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from ._array import as_array, describe, namespace
from .attention import scaled_dot_product_attention

__all__ = ["MultiHeadAttention", "merge_heads", "split_heads"]


def split_heads(x: Any, n_heads: int) -> Any:
    """Cut the feature axis into ``n_heads`` slices and move the head axis forward.

    ``x[b, t, h * d + i]`` becomes ``out[b, h, t, i]``: head ``h`` owns features
    ``h * d .. (h + 1) * d - 1`` (the layout ``nn.MultiheadAttention`` uses too).

    Args:
        x: ``(B, T, D)`` array or tensor (any number of leading axes before ``T``).
        n_heads: number of heads ``H``; must divide ``D``.

    Returns:
        ``(B, H, T, d)`` with ``d = D / H``, the same kind as ``x`` (a view when possible).

    Raises:
        ValueError: if ``x`` has fewer than 2 axes or ``D`` is not divisible by ``n_heads``.

    Taught in: chapters/04_multihead.ipynb
    """
    x = as_array(x, "x")
    xp = namespace(x=x)
    if not isinstance(n_heads, int) or isinstance(n_heads, bool) or n_heads < 1:
        raise ValueError(f"n_heads must be a positive integer, got {n_heads!r}")
    if x.ndim < 2:
        raise ValueError(f"split_heads expects x of shape (B, T, D), got {describe(x)}")
    *lead, T, D = x.shape
    if D % n_heads:
        raise ValueError(
            f"cannot split x of shape {tuple(x.shape)} into {n_heads} heads: "
            f"D={D} is not divisible by n_heads={n_heads}"
        )
    x = xp.reshape(x, (*lead, T, n_heads, D // n_heads))  # (B, T, D) -> (B, T, H, d)
    n = x.ndim
    return xp.permute_dims(x, (*range(n - 3), n - 2, n - 3, n - 1))  # -> (B, H, T, d)


def merge_heads(x: Any) -> Any:
    """Undo :func:`split_heads`: concatenate the heads back along the feature axis.

    Args:
        x: ``(B, H, T, d)`` array or tensor (any number of leading axes before ``H``).

    Returns:
        ``(B, T, D)`` with ``D = H * d``, the same kind as ``x``.

    Raises:
        ValueError: if ``x`` has fewer than 3 axes.

    Taught in: chapters/04_multihead.ipynb
    """
    x = as_array(x, "x")
    xp = namespace(x=x)
    if x.ndim < 3:
        raise ValueError(f"merge_heads expects x of shape (B, H, T, d), got {describe(x)}")
    *lead, H, T, d = x.shape
    n = x.ndim
    x = xp.permute_dims(x, (*range(n - 3), n - 2, n - 3, n - 1))  # (B, H, T, d) -> (B, T, H, d)
    return xp.reshape(x, (*lead, T, H * d))  # (B, T, H, d) -> (B, T, D)


class MultiHeadAttention(nn.Module):
    """Multi-head attention with learned projections ``W_q, W_k, W_v, W_o`` (each ``D -> D``).

    ``q, k, v`` are projected, split into ``H`` heads of size ``d = D / H``, attended with
    :func:`~attnlab.attention.scaled_dot_product_attention` (scale ``1 / sqrt(d)``), merged
    and projected by ``W_o``. With ``key`` and ``value`` omitted it is self-attention; with
    ``key = value = encoder_output`` it is the decoder's cross-attention.

    Parameter count: four ``D x D`` matrices plus (with ``bias=True``) four length-``D``
    biases, ``4·D² + 4·D`` in all; e.g. ``D = 512``: 1,050,624. It does not depend on ``H``:
    more heads means thinner heads, not more weights. ``nn.MultiheadAttention`` has the same
    count (it packs ``W_q, W_k, W_v`` into one ``in_proj_weight`` of shape ``(3D, D)``).

    Args:
        d_model: size ``D`` of each token vector.
        n_heads: number of heads ``H``; must divide ``d_model``.
        bias: whether the four projections have a bias.
        dropout: probability of zeroing an attention weight during training (applied to the
            weights that average the values, as ``nn.MultiheadAttention`` does; the returned
            weights are the ones before dropout).

    Shapes:
        ``query``: ``(B, T, D)``; ``key``, ``value``: ``(B, S, D)``; ``mask``: boolean,
        ``True`` = may attend, 2-D ``(T, S)`` (e.g. :func:`~attnlab.masking.causal_mask`) or
        4-D broadcastable to ``(B, H, T, S)`` (a ``(B, 1, S)`` padding mask becomes
        ``mask[:, None]``). Returns ``out``: ``(B, T, D)`` and per-head ``weights``:
        ``(B, H, T, S)``. A query with no visible key gets zero attention output (so ``out``
        is just ``W_o``'s bias there), never NaN.

    Raises:
        ValueError: ``d_model`` not divisible by ``n_heads``, inputs of the wrong shape, or a
            3-D mask (ambiguous: is the first axis the batch or the heads?).
        TypeError: non-tensor inputs.

    Taught in: chapters/04_multihead.ipynb
    """

    def __init__(
        self, d_model: int, n_heads: int, *, bias: bool = True, dropout: float = 0.0
    ) -> None:
        super().__init__()
        for name, n in (("d_model", d_model), ("n_heads", n_heads)):
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                raise ValueError(f"{name} must be a positive integer, got {n!r}")
        if d_model % n_heads:
            raise ValueError(
                f"d_model={d_model} is not divisible by n_heads={n_heads}: each head gets "
                "d_model / n_heads features"
            )
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be a probability in [0, 1), got {dropout!r}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, n_heads={self.n_heads}, d_head={self.d_head}"

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor | None = None,
        value: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        key = query if key is None else key
        value = key if value is None else value
        self._check_inputs(query, key, value, mask)
        H = self.n_heads
        q = split_heads(self.W_q(query), H)  # (B, T, D) -> (B, T, D) -> (B, H, T, d)
        k = split_heads(self.W_k(key), H)  # (B, S, D) -> (B, S, D) -> (B, H, S, d)
        v = split_heads(self.W_v(value), H)  # (B, S, D) -> (B, S, D) -> (B, H, S, d)
        dropout = self.dropout if self.training and self.dropout.p > 0 else None
        out, weights = scaled_dot_product_attention(q, k, v, mask, dropout=dropout)
        out = self.W_o(merge_heads(out))  # (B, H, T, d) -> (B, T, D) -> (B, T, D)
        return out, weights  # (B, T, D), (B, H, T, S)

    def _check_inputs(self, query: Any, key: Any, value: Any, mask: Any) -> None:
        for name, x in (("query", query), ("key", key), ("value", value)):
            if not isinstance(x, torch.Tensor):
                raise TypeError(
                    f"MultiHeadAttention expects torch tensors, got {name}: {describe(x)}"
                )
            if x.ndim != 3 or x.shape[-1] != self.d_model:
                raise ValueError(
                    f"{name} must have shape (B, length, d_model={self.d_model}), got {describe(x)}"
                )
        if key.shape[:2] != value.shape[:2]:
            raise ValueError(
                "key and value must have the same batch size and length (one value per key), "
                f"got key: shape {tuple(key.shape)} and value: shape {tuple(value.shape)}"
            )
        if query.shape[0] != key.shape[0]:
            raise ValueError(
                "query and key must have the same batch size, got "
                f"query: shape {tuple(query.shape)} and key: shape {tuple(key.shape)}"
            )
        if mask is not None and getattr(mask, "ndim", None) == 3:
            raise ValueError(
                f"a 3-D mask of shape {tuple(mask.shape)} is ambiguous for scores "
                f"(B, H, T, S): add the head axis, mask[:, None] for a (B, T, S) or "
                "(B, 1, S) mask shared by all heads"
            )
