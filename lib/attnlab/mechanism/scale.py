"""Attention at scale: online softmax, tiled attention, fewer key-value heads.

Plain attention builds the whole ``(T, S)`` matrix of weights. At ``T = S = 4096`` with 8
heads that is 512 MB in float32 for one layer, one sequence; training keeps it for the
backward pass too. Three ideas remove or shrink the costs that grow with length:

- **Online softmax** (:func:`online_softmax_update`): a softmax needs the row maximum and
  the row sum of exponentials. Both can be kept *running* over blocks of the row: when a
  block raises the maximum from ``m`` to ``m'``, the old sum is rescaled by
  ``exp(m - m')``. One pass over the blocks gives the exact normaliser.
- **Tiled attention** (:func:`tiled_attention`): the same rescaling applies to the running
  weighted sum of values, so attention can walk over blocks of keys and never hold more
  than one ``(block_q, block_k)`` tile of scores. The backward pass recomputes each tile
  from ``q``, ``k`` and the saved log-sum-exp instead of storing the weights. This is the
  algorithm of FlashAttention, written in plain torch for reading, not for speed.
- **Grouped-query attention** (:func:`grouped_query_attention`,
  :class:`GroupedQueryAttention`): ``H`` query heads share ``G < H`` key-value heads
  (``G = 1``: multi-query attention). Fewer key-value heads means a smaller KV cache
  (:mod:`attnlab.mechanism.kvcache`, the fourth idea of chapter 8).

Masks are boolean with ``True`` = may attend. A query row that sees no key at all gets
zero weights and a zero output (and zero gradients), never NaN, in every function here.

References:
    Milakov and Gimelshein, "Online normalizer calculation for softmax", 2018.
    Rabe and Staats, "Self-attention Does Not Need O(n²) Memory", 2021.
    Dao et al., "FlashAttention", 2022; Dao, "FlashAttention-2", 2023.
    Shazeer, "Fast Transformer Decoding: One Write-Head is All You Need", 2019 (MQA).
    Ainslie et al., "GQA: Training Generalized Multi-Query Transformer Models", 2023.

Taught in: chapters/08_scale.ipynb
"""

from __future__ import annotations

import math
from typing import Any

import array_api_compat.torch as torch_xp
import numpy as np
import torch
from array_api_compat import is_torch_array
from torch import nn

from .._validate import (
    NEG_INF,
    as_array,
    as_float,
    check_heads,
    check_input,
    check_mask,
    check_qkv,
    describe,
    device,
    namespace,
    positive_int,
)
from .attention import scaled_dot_product_attention
from .kvcache import LayerKV
from .multihead import _merge, _split

__all__ = [
    "GroupedQueryAttention",
    "attention_tile_update",
    "grouped_query_attention",
    "online_softmax",
    "online_softmax_stats",
    "online_softmax_update",
    "repeat_kv",
    "tiled_attention",
]


# --- online softmax ----------------------------------------------------------------------


def online_softmax_update(m: Any, l: Any, block: Any) -> tuple[Any, Any]:  # noqa: E741
    r"""Fold one block of logits into the running maximum ``m`` and running sum ``l``.

    .. math:: m' = \max\big(m, \max_j x_j\big), \qquad
        l' = l\, e^{m - m'} + \sum_j e^{x_j - m'}

    After the last block, ``m`` is the row maximum and ``l = Σ_i exp(x_i - m)``: the
    softmax is ``exp(x_i - m) / l``. Masked logits are ``-inf``; while every logit seen
    so far is ``-inf``, ``m`` stays ``-inf`` and ``l`` stays 0 (the exponent
    ``m - m'`` is never ``-inf - (-inf)``, so no NaN appears).

    Args:
        m: ``(...)`` running maximum (start: ``-inf``).
        l: ``(...)`` running sum of ``exp(x - m)`` (start: 0).
        block: ``(..., n)`` the next ``n >= 1`` logits of each row.

    Returns:
        ``(m', l')``, each ``(...)``, the same kind as the input.

    Raises:
        ValueError: an empty block or shapes that do not match.
        TypeError: mixed NumPy/torch input.

    Taught in: chapters/08_scale.ipynb
    """
    m, l, block = as_array(m, "m"), as_array(l, "l"), as_array(block, "block")  # noqa: E741
    xp = namespace(m=m, l=l, block=block)
    if block.ndim == 0 or block.shape[-1] == 0:
        raise ValueError(f"block must be (..., n) with n >= 1 logits, got {describe(block)}")
    if tuple(m.shape) != tuple(block.shape[:-1]) or tuple(l.shape) != tuple(m.shape):
        raise ValueError(
            f"m and l must have the block's leading shape {tuple(block.shape[:-1])}, got "
            f"m: shape {tuple(m.shape)} and l: shape {tuple(l.shape)}"
        )
    m_new = xp.maximum(m, xp.max(block, axis=-1))  # (...)
    m_safe = _finite_or_zero(m_new, xp)  # (...): 0 where nothing is visible yet
    alpha = xp.exp(m - m_safe)  # (...): rescales the old sum to the new maximum
    l_new = l * alpha + xp.sum(xp.exp(block - m_safe[..., None]), axis=-1)  # (...)
    return m_new, l_new


def online_softmax_stats(x: Any, block_size: int, *, mask: Any = None) -> tuple[Any, Any]:
    """The running maximum and running sum after each block of ``block_size`` logits.

    Args:
        x: ``(..., n)`` logits; the softmax is over the last axis.
        block_size: logits per block (the last block may be shorter).
        mask: optional boolean, broadcastable to ``x``; ``True`` = keep.

    Returns:
        ``(m, l)``, each ``(..., n_blocks)``: entry ``b`` holds the statistics after
        blocks ``0..b``. The last entry is the row maximum and ``Σ exp(x - max)``.

    Raises:
        ValueError: a non-positive ``block_size`` or a mask that does not broadcast.
        TypeError: non-numeric input or a non-boolean mask.

    Taught in: chapters/08_scale.ipynb
    """
    z, xp = _masked_logits(x, mask)
    positive_int(block_size, "block_size")
    m = xp.full(z.shape[:-1], NEG_INF, dtype=z.dtype, device=device(z))  # (...)
    l = xp.zeros(z.shape[:-1], dtype=z.dtype, device=device(z))  # noqa: E741  (...)
    ms, ls = [], []
    for start in range(0, z.shape[-1], block_size):
        m, l = online_softmax_update(m, l, z[..., start : start + block_size])  # noqa: E741
        ms.append(m)
        ls.append(l)
    return xp.stack(ms, axis=-1), xp.stack(ls, axis=-1)  # (..., n_blocks) each


def online_softmax(x: Any, block_size: int, *, mask: Any = None) -> Any:
    r"""Softmax over the last axis, its normaliser gathered in one pass over blocks.

    .. math:: \mathrm{softmax}(x)_i = \frac{e^{x_i - m}}{l}, \quad (m, l) \text{ from }
        :func:`online_softmax_update` \text{ over the blocks}

    Equal to :func:`attnlab.mechanism.similarity.softmax` (with the same mask) to float rounding.

    Args:
        x: ``(..., n)`` logits.
        block_size: logits per block.
        mask: optional boolean, broadcastable to ``x``; ``True`` = keep. A row with no
            kept logit gets all-zero weights.

    Returns:
        Weights of the shape and kind of ``x``, each row summing to 1 (or 0 if masked out).

    Raises:
        ValueError / TypeError: as :func:`online_softmax_stats`.

    Taught in: chapters/08_scale.ipynb
    """
    z, xp = _masked_logits(x, mask)
    m, l = online_softmax_stats(z, block_size)  # noqa: E741  (..., n_blocks) each
    m, l = m[..., -1:], l[..., -1:]  # noqa: E741  (..., 1): the final statistics
    seen = l > 0  # (..., 1): a row with no visible logit has l = 0
    e = xp.exp(z - _finite_or_zero(m, xp))  # (..., n)
    return xp.where(seen, e / xp.where(seen, l, xp.ones_like(l)), xp.zeros_like(e))


def _masked_logits(x: Any, mask: Any) -> tuple[Any, Any]:
    x = as_array(x, "x")
    xp = namespace(x=x)
    x = as_float(x, "x", xp)
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError(f"x must be (..., n) with n >= 1 logits, got {describe(x)}")
    if mask is None:
        return x, xp
    mask = check_mask(mask, tuple(x.shape), xp, what="logits", like=x)
    return xp.where(mask, x, xp.full_like(x, NEG_INF)), xp


def _finite_or_zero(m: Any, xp: Any) -> Any:
    """``m`` with ``-inf`` (nothing visible yet) replaced by 0, to subtract safely."""
    return xp.where(m == NEG_INF, xp.zeros_like(m), m)


# --- tiled attention ---------------------------------------------------------------------


def attention_tile_update(
    m: Any,
    l: Any,  # noqa: E741
    acc: Any,
    scores: Any,
    v: Any,
) -> tuple[Any, Any, Any]:
    r"""One tile step of tiled attention: fold a block of scores and its values into the state.

    .. math:: m' = \max(m, \max_j s_j), \quad \alpha = e^{m - m'}, \quad p_j = e^{s_j - m'},
        \quad l' = \alpha\, l + \textstyle\sum_j p_j, \quad
        \mathrm{acc}' = \alpha\, \mathrm{acc} + p\, V

    The state of each query row is its running maximum ``m``, running sum ``l`` and the
    running *unnormalised* output ``acc``; after the last block the attention output is
    ``acc / l``. Masked scores are ``-inf`` (they give ``p = 0``).

    Args:
        m: ``(..., Tb)`` running maximum of each query's scores (start: ``-inf``).
        l: ``(..., Tb)`` running sum of ``exp(s - m)`` (start: 0).
        acc: ``(..., Tb, d_v)`` running ``Σ exp(s - m) v`` (start: 0).
        scores: ``(..., Tb, Sb)`` this tile of scaled scores ``q kᵀ / √d``.
        v: ``(..., Sb, d_v)`` the values of this block of keys.

    Returns:
        ``(m', l', acc')`` with the shapes of ``(m, l, acc)``, the same kind as the input.

    Raises:
        ValueError: shapes that do not fit together. TypeError: mixed NumPy/torch input.

    Taught in: chapters/08_scale.ipynb
    """
    arrays = {"m": m, "l": l, "acc": acc, "scores": scores, "v": v}
    arrays = {name: as_array(a, name) for name, a in arrays.items()}
    xp = namespace(**arrays)
    m, l, acc, scores, v = arrays.values()  # noqa: E741
    if scores.ndim < 2 or v.ndim < 2 or acc.ndim < 2:
        raise ValueError(
            f"scores, v and acc must be matrices (..., rows, cols), got scores: "
            f"{describe(scores)}, v: {describe(v)}, acc: {describe(acc)}"
        )
    Tb, Sb = scores.shape[-2:]
    if (
        tuple(m.shape) != tuple(scores.shape[:-1])
        or tuple(l.shape) != tuple(m.shape)
        or tuple(acc.shape[:-1]) != tuple(m.shape)
        or v.shape[-2] != Sb
        or acc.shape[-1] != v.shape[-1]
    ):
        raise ValueError(
            f"tile shapes do not fit: scores {tuple(scores.shape)} (..., Tb={Tb}, Sb={Sb}) "
            f"needs m, l of shape (..., Tb), acc (..., Tb, d_v) and v (..., Sb, d_v); got "
            f"m {tuple(m.shape)}, l {tuple(l.shape)}, acc {tuple(acc.shape)}, "
            f"v {tuple(v.shape)}"
        )
    return _tile_update(m, l, acc, scores, v, xp)


def _tile_update(m: Any, l: Any, acc: Any, s: Any, v: Any, xp: Any) -> tuple[Any, Any, Any]:  # noqa: E741
    m_new = xp.maximum(m, xp.max(s, axis=-1))  # (..., Tb)
    m_safe = _finite_or_zero(m_new, xp)  # (..., Tb)
    alpha = xp.exp(m - m_safe)  # (..., Tb): 0 on the first visible block
    p = xp.exp(s - m_safe[..., None])  # (..., Tb, Sb)
    l_new = alpha * l + xp.sum(p, axis=-1)  # (..., Tb)
    acc_new = alpha[..., None] * acc + p @ v  # (..., Tb, Sb) @ (..., Sb, d_v) -> (..., Tb, d_v)
    return m_new, l_new, acc_new


def tiled_attention(
    q: Any,
    k: Any,
    v: Any,
    mask: Any = None,
    *,
    causal: bool = False,
    scale: float | None = None,
    block_q: int = 128,
    block_k: int = 128,
) -> Any:
    """Attention computed tile by tile, never holding the ``(T, S)`` matrix of weights.

    The queries are cut into blocks of ``block_q`` rows and the keys into blocks of
    ``block_k``; for each query block, :func:`attention_tile_update` folds in one key block
    at a time. The largest temporary is one ``(..., block_q, block_k)`` tile, so the extra
    memory grows like ``T`` (the output and the per-row statistics), not ``T · S``.

    Backward: torch autograd sees one operation. Its backward pass recomputes every tile of
    weights from ``q``, ``k`` and the saved per-row log-sum-exp (as FlashAttention does),
    so it does not store the weights either. With ``causal=True``, tiles above the
    diagonal are skipped entirely, forward and backward.

    Args:
        q: ``(..., T, d)`` queries.
        k: ``(..., S, d)`` keys (the same leading axes as ``q``).
        v: ``(..., S, d_v)`` values.
        mask: optional boolean mask broadcastable to ``(..., T, S)``; ``True`` = may attend.
        causal: also hide later keys, aligned as :func:`attnlab.mechanism.masking.causal_mask`
            (query ``i`` sees keys ``j <= i + S - T``); needs ``S >= T``.
        scale: multiply the scores by this instead of ``1 / sqrt(d)``.
        block_q: queries per tile. block_k: keys per tile.

    Returns:
        ``out``: ``(..., T, d_v)``, equal to ``softmax(q kᵀ · scale) v`` to float rounding;
        NumPy in, NumPy out (no weights are returned: they are never formed). A query
        with no visible key gets a zero output and zero gradients.

    Raises:
        ValueError: mismatched shapes, ``causal`` with ``T > S``, or bad block sizes.
        TypeError: mixed kinds, non-float dtypes that differ, or a non-boolean mask.

    Taught in: chapters/08_scale.ipynb
    """
    q, k, v = as_array(q, "q"), as_array(k, "k"), as_array(v, "v")
    xp = namespace(q=q, k=k, v=v)
    q, k, v = (as_float(a, n, xp) for a, n in ((q, "q"), (k, "k"), (v, "v")))
    check_qkv(q, k, v)
    if q.shape[:-2] != k.shape[:-2] or k.shape[:-2] != v.shape[:-2]:
        raise ValueError(
            "tiled_attention needs q, k and v with the same leading (batch, head) axes, got "
            f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)} (for fewer "
            "key-value heads use grouped_query_attention or repeat_kv)"
        )
    positive_int(block_q, "block_q")
    positive_int(block_k, "block_k")
    T, S = q.shape[-2], k.shape[-2]
    if causal and T > S:
        raise ValueError(f"causal=True needs at least as many keys as queries, got T={T} > S={S}")
    if mask is not None:
        mask = check_mask(mask, (*q.shape[:-1], S), xp, what="scores (..., T, S)", like=q)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    if is_torch_array(q):
        return _TiledAttention.apply(q, k, v, mask, bool(causal), scale, block_q, block_k)
    tensors = [torch.from_numpy(np.ascontiguousarray(a)) for a in (q, k, v)]
    t_mask = None if mask is None else torch.from_numpy(np.ascontiguousarray(mask))
    with torch.no_grad():
        out = _TiledAttention.apply(*tensors, t_mask, bool(causal), scale, block_q, block_k)
    return out.numpy()


class _Tiles:
    """Which tiles exist and which of their entries are visible (mask and causality)."""

    def __init__(
        self, T: int, S: int, mask: torch.Tensor | None, causal: bool, bq: int, bk: int
    ) -> None:
        self.T, self.S, self.causal, self.bq, self.bk = T, S, causal, bq, bk
        # Expand (no copy) so that slicing the last two axes works for broadcast masks.
        self.mask = None if mask is None else mask.expand(*mask.shape[:-2], T, S)

    def query_blocks(self) -> range:
        return range(0, self.T, self.bq)

    def key_blocks(self, i0: int) -> range:
        """Key blocks that query block ``i0`` can see (causal: none beyond the diagonal)."""
        if not self.causal:
            return range(0, self.S, self.bk)
        last_visible = min(i0 + self.bq, self.T) - 1 + (self.S - self.T)  # last query's last key
        return range(0, last_visible + 1, self.bk)

    def visible(self, i0: int, j0: int, like: torch.Tensor) -> torch.Tensor | None:
        """Boolean ``(..., bq, bk)`` visibility of a tile, or ``None`` if all visible."""
        i1, j1 = min(i0 + self.bq, self.T), min(j0 + self.bk, self.S)
        vis = None if self.mask is None else self.mask[..., i0:i1, j0:j1]
        if self.causal and j1 - 1 > i0 + (self.S - self.T):  # the tile crosses the diagonal
            rows = torch.arange(i0, i1, device=like.device)[:, None]  # (bq, 1)
            cols = torch.arange(j0, j1, device=like.device)[None, :]  # (1, bk)
            tri = cols <= rows + (self.S - self.T)  # (bq, bk)
            vis = tri if vis is None else vis & tri
        return vis

    def scores(self, q_blk: torch.Tensor, k: torch.Tensor, i0: int, j0: int) -> torch.Tensor:
        """Scaled scores of one tile, ``-inf`` where hidden: ``(..., bq, bk)``."""
        k_blk = k[..., j0 : j0 + self.bk, :]  # (..., bk, d)
        s = q_blk @ k_blk.transpose(-2, -1)  # (..., bq, d) @ (..., d, bk) -> (..., bq, bk)
        vis = self.visible(i0, j0, s)
        return s if vis is None else s.masked_fill(~vis, NEG_INF)


class _TiledAttention(torch.autograd.Function):
    """Forward over tiles with the online softmax; backward by recomputing each tile."""

    @staticmethod
    def forward(ctx, q, k, v, mask, causal, scale, block_q, block_k):
        tiles = _Tiles(q.shape[-2], k.shape[-2], mask, causal, block_q, block_k)
        xp = namespace(q=q)  # the array-API view of torch, as in attention_tile_update
        out = q.new_zeros((*q.shape[:-1], v.shape[-1]))  # (..., T, d_v)
        lse = q.new_full(q.shape[:-1], math.inf)  # (..., T): +inf marks a row with no key
        for i0 in tiles.query_blocks():
            q_blk = q[..., i0 : i0 + block_q, :] * scale  # (..., bq, d)
            m = q.new_full(q_blk.shape[:-1], NEG_INF)  # (..., bq)
            l = q.new_zeros(q_blk.shape[:-1])  # noqa: E741  (..., bq)
            acc = q.new_zeros((*q_blk.shape[:-1], v.shape[-1]))  # (..., bq, d_v)
            for j0 in tiles.key_blocks(i0):
                s = tiles.scores(q_blk, k, i0, j0)  # (..., bq, bk)
                m, l, acc = _tile_update(m, l, acc, s, v[..., j0 : j0 + block_k, :], xp)  # noqa: E741
            seen = l > 0  # (..., bq)
            l_safe = torch.where(seen, l, torch.ones_like(l))
            out[..., i0 : i0 + block_q, :] = torch.where(
                seen[..., None], acc / l_safe[..., None], torch.zeros_like(acc)
            )
            lse[..., i0 : i0 + block_q] = torch.where(
                seen, m + torch.log(l_safe), torch.full_like(m, math.inf)
            )
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.tiles, ctx.scale = tiles, scale
        return out

    @staticmethod
    def backward(ctx, d_out):
        q, k, v, out, lse = ctx.saved_tensors
        tiles, scale, bq, bk = ctx.tiles, ctx.scale, ctx.tiles.bq, ctx.tiles.bk
        d_out = d_out.contiguous()
        delta = (d_out * out).sum(dim=-1)  # (..., T): Σ_c dO·O = Σ_j P dP per row
        dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
        for i0 in tiles.query_blocks():
            q_blk = q[..., i0 : i0 + bq, :] * scale  # (..., bq, d)
            do_blk = d_out[..., i0 : i0 + bq, :]  # (..., bq, d_v)
            lse_blk = lse[..., i0 : i0 + bq, None]  # (..., bq, 1)
            for j0 in tiles.key_blocks(i0):
                k_blk, v_blk = k[..., j0 : j0 + bk, :], v[..., j0 : j0 + bk, :]
                p = torch.exp(tiles.scores(q_blk, k, i0, j0) - lse_blk)  # (..., bq, bk)
                dv[..., j0 : j0 + bk, :] += p.transpose(-2, -1) @ do_blk  # -> (..., bk, d_v)
                dp = do_blk @ v_blk.transpose(-2, -1)  # (..., bq, d_v) @ (..., d_v, bk)
                ds = p * (dp - delta[..., i0 : i0 + bq, None])  # (..., bq, bk): softmax'
                dq[..., i0 : i0 + bq, :] += (ds @ k_blk) * scale  # -> (..., bq, d)
                dk[..., j0 : j0 + bk, :] += ds.transpose(-2, -1) @ q_blk  # -> (..., bk, d)
        return dq, dk, dv, None, None, None, None, None


# --- grouped-query attention -------------------------------------------------------------


def repeat_kv(x: Any, n_rep: int) -> Any:
    """Repeat each key-value head ``n_rep`` times: ``(..., G, S, d) -> (..., G·n_rep, S, d)``.

    Query head ``h`` then reads key-value head ``h // n_rep``: heads ``0..n_rep-1`` share
    group 0, and so on (the layout of ``F.scaled_dot_product_attention(enable_gqa=True)``).
    This copies the keys; :func:`grouped_query_attention` gets the same result without.

    Args:
        x: ``(..., G, S, d)`` keys or values with ``G`` heads.
        n_rep: query heads per key-value head.

    Returns:
        ``(..., G·n_rep, S, d)``, the same kind as ``x``.

    Raises:
        ValueError: ``x`` with fewer than 3 axes or a non-positive ``n_rep``.

    Taught in: chapters/08_scale.ipynb
    """
    x = as_array(x, "x")
    xp = namespace(x=x)
    positive_int(n_rep, "n_rep")
    if x.ndim < 3:
        raise ValueError(f"repeat_kv expects x of shape (..., G, S, d), got {describe(x)}")
    return xp.repeat(x, n_rep, axis=-3)  # (..., G, S, d) -> (..., G·n_rep, S, d)


def grouped_query_attention(
    q: Any, k: Any, v: Any, mask: Any = None, *, scale: float | None = None
) -> tuple[Any, Any]:
    """Attention with ``H`` query heads sharing ``G`` key-value heads (``G`` divides ``H``).

    Query head ``h`` attends with key-value head ``h // (H / G)``. Instead of copying the
    keys ``H / G`` times (:func:`repeat_kv`), the query heads are grouped:
    ``(..., H, T, d) -> (..., G, H/G, T, d)``, and each group's keys broadcast over its
    ``H/G`` query heads. ``G = H`` is multi-head attention; ``G = 1`` is multi-query.

    Args:
        q: ``(..., H, T, d)`` queries.
        k: ``(..., G, S, d)`` keys. v: ``(..., G, S, d_v)`` values.
        mask: optional boolean mask broadcastable to ``(..., H, T, S)``.
        scale: as :func:`attnlab.mechanism.attention.scaled_dot_product_attention`.

    Returns:
        ``out`` ``(..., H, T, d_v)`` and ``weights`` ``(..., H, T, S)``.

    Raises:
        ValueError: ``G`` does not divide ``H``, or shapes that do not fit.

    Taught in: chapters/08_scale.ipynb
    """
    q, k, v = as_array(q, "q"), as_array(k, "k"), as_array(v, "v")
    xp = namespace(q=q, k=k, v=v)
    for name, a in (("q", q), ("k", k), ("v", v)):
        if a.ndim < 3:
            raise ValueError(f"{name} must be (..., heads, length, d), got {describe(a)}")
    H, G = q.shape[-3], k.shape[-3]
    if v.shape[-3] != G:
        raise ValueError(
            f"k and v must have the same number of heads, got k {tuple(k.shape)} and "
            f"v {tuple(v.shape)}"
        )
    if H % G:
        raise ValueError(
            f"the {H} query heads of q {tuple(q.shape)} cannot be shared evenly by the "
            f"{G} key-value heads of k {tuple(k.shape)}: G must divide H"
        )
    *lead, _, T, d = q.shape
    S = k.shape[-2]
    if mask is not None:
        mask = check_mask(mask, (*lead, H, T, S), xp, what="scores (..., H, T, S)", like=q)
        if mask.ndim >= 3 and mask.shape[-3] == H and H > 1:
            # (..., H, T, S) -> (..., G, H/G, T, S): each group's query heads together
            mask = xp.reshape(mask, (*mask.shape[:-3], G, H // G, T, S))
        elif mask.ndim >= 3:
            mask = mask[..., None, :, :]  # (..., 1, T, S) -> (..., 1, 1, T, S)
    q_g = xp.reshape(q, (*lead, G, H // G, T, d))  # (..., H, T, d) -> (..., G, H/G, T, d)
    k_g, v_g = k[..., None, :, :], v[..., None, :, :]  # (..., G, S, d) -> (..., G, 1, S, d)
    out, weights = scaled_dot_product_attention(q_g, k_g, v_g, mask, scale=scale)
    out = xp.reshape(out, (*lead, H, T, v.shape[-1]))  # (..., G, H/G, T, d_v) -> (..., H, T, d_v)
    weights = xp.reshape(weights, (*lead, H, T, S))  # (..., G, H/G, T, S) -> (..., H, T, S)
    return out, weights


class GroupedQueryAttention(nn.Module):
    """Self-attention with ``n_heads`` query heads and ``n_kv_heads`` key-value heads.

    ``W_q`` maps ``D -> D`` (``H`` heads of ``d = D / H``), ``W_k`` and ``W_v`` map
    ``D -> G·d`` (only ``G`` heads), ``W_o`` maps ``D -> D``. With ``n_kv_heads = n_heads``
    this is :class:`attnlab.mechanism.multihead.MultiHeadAttention` (same parameters, same output);
    with ``n_kv_heads = 1`` it is multi-query attention. The key-value projections, and
    the KV cache, shrink by ``G / H``.

    Args:
        d_model: width ``D``.
        n_heads: query heads ``H`` (divides ``D``).
        n_kv_heads: key-value heads ``G`` (divides ``H``).
        bias: whether the projections have a bias.

    Shapes:
        ``x``: ``(B, T, D)``; ``mask`` broadcastable to ``(B, H, T, S)`` (2-D ``(T, S)``
        or 4-D); ``cache``: an optional :class:`LayerKV`: the new keys and values are
        appended to it and the queries attend to all of them (``S`` = cached + ``T``).
        Returns ``out`` ``(B, T, D)`` and ``weights`` ``(B, H, T, S)``.

    Raises:
        ValueError: sizes that do not divide, or ``x`` of the wrong shape.
        TypeError: ``x`` not a tensor.

    Taught in: chapters/08_scale.ipynb
    """

    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int, *, bias: bool = True):
        super().__init__()
        d_model, n_heads = check_heads(d_model, n_heads)
        n_heads, n_kv_heads = check_heads(
            n_heads,
            n_kv_heads,
            width_name="n_heads",
            heads_name="n_kv_heads",
            why="each key-value head serves the same number of query heads",
        )
        self.d_model, self.n_heads, self.n_kv_heads = d_model, n_heads, n_kv_heads
        self.d_head = d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d_head, bias=bias)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d_head, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)

    def extra_repr(self) -> str:
        return (
            f"d_model={self.d_model}, n_heads={self.n_heads}, "
            f"n_kv_heads={self.n_kv_heads}, d_head={self.d_head}"
        )

    def forward(
        self, x: torch.Tensor, mask: Any = None, cache: LayerKV | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        D, xp = self.d_model, torch_xp
        check_input(
            x, D, who="GroupedQueryAttention", shape=f"(B, T, d_model={D})", ndim=3, module=self
        )
        q = _split(self.W_q(x), self.n_heads, xp)  # (B, T, D) -> (B, H, T, d)
        k = _split(self.W_k(x), self.n_kv_heads, xp)  # (B, T, G·d) -> (B, G, T, d)
        v = _split(self.W_v(x), self.n_kv_heads, xp)  # (B, T, G·d) -> (B, G, T, d)
        if cache is not None:
            k, v = cache.update(k, v)  # -> (B, G, S, d) each, S = cached + T
        out, weights = grouped_query_attention(q, k, v, mask)  # (B, H, T, d), (B, H, T, S)
        return self.W_o(_merge(out, xp)), weights  # (B, H, T, d) -> (B, T, D) -> (B, T, D)
