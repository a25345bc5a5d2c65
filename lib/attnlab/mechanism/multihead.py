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

import math
from dataclasses import dataclass
from typing import Any

import array_api_compat.torch as torch_xp
import torch
import torch.nn.functional as F
from torch import nn

from .._validate import (
    as_array,
    check_heads,
    check_input,
    check_mask,
    describe,
    namespace,
    positive_int,
    positive_ints,
    probability,
)
from .attention import attend

__all__ = [
    "MultiHeadAttention",
    "ShapeTrace",
    "merge_heads",
    "mha_flops",
    "mha_parameter_count",
    "split_heads",
    "trace_shapes",
]

_SCORES = "scores (..., T, S)"  # what a mask must fit, as the messages name it


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
    n_heads = positive_int(n_heads, "n_heads")
    if x.ndim < 2:
        raise ValueError(f"split_heads expects x of shape (B, T, D), got {describe(x)}")
    D = x.shape[-1]
    if D % n_heads:
        raise ValueError(
            f"cannot split x of shape {tuple(x.shape)} into {n_heads} heads: "
            f"D={D} is not divisible by n_heads={n_heads}"
        )
    return _split(x, n_heads, xp)


def _split(x: Any, n_heads: int, xp: Any) -> Any:
    """:func:`split_heads` of a checked ``x``."""
    *lead, T, D = x.shape
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
    return _merge(x, xp)


def _merge(x: Any, xp: Any) -> Any:
    """:func:`merge_heads` of a checked ``x``."""
    *lead, H, T, d = x.shape
    n = x.ndim
    x = xp.permute_dims(x, (*range(n - 3), n - 2, n - 3, n - 1))  # (B, H, T, d) -> (B, T, H, d)
    return xp.reshape(x, (*lead, T, H * d))  # (B, T, H, d) -> (B, T, D)


class MultiHeadAttention(nn.Module):
    """Multi-head attention with learned projections ``W_q, W_k, W_v, W_o`` (each ``D -> D``).

    ``q, k, v`` are projected, split into ``H`` heads of size ``d = D / H``, attended with
    :func:`~attnlab.mechanism.attention.scaled_dot_product_attention` (scale ``1 / sqrt(d)``), merged
    and projected by ``W_o``. With ``key`` and ``value`` omitted it is self-attention; with
    ``key = value = encoder_output`` it is the decoder's cross-attention.

    Parameter count: four ``D x D`` matrices plus (with ``bias=True``) four length-``D``
    biases, ``4·D² + 4·D`` in all; e.g. ``D = 512``: 1,050,624. It does not depend on ``H``:
    more heads means thinner heads, not more weights. ``nn.MultiheadAttention`` has the same
    count (it packs ``W_q, W_k, W_v`` into one ``in_proj_weight`` of shape ``(3D, D)``).

    Args:
        d_model: size ``D`` of each token vector.
        n_heads: number of heads ``H``; must divide ``d_model``.
        bias: whether the four projections have a bias (default ``True``).
        dropout: probability of zeroing an attention weight during training (applied to the
            weights that average the values, as ``nn.MultiheadAttention`` does; the returned
            weights are the ones before dropout). Default 0.
        fused: compute the attention with PyTorch's fused kernel,
            ``torch.nn.functional.scaled_dot_product_attention`` (the same equation, the
            same mask convention; faster, as it never keeps the ``(B, H, T, S)`` weights
            for the backward pass). ``forward`` then returns ``None`` for the weights, and
            a query with no visible key still gets a zero attention output. Default ``False``.

    Shapes:
        ``query``: ``(B, T, D)``; ``key``, ``value``: ``(B, S, D)``; ``mask``: boolean,
        ``True`` = may attend, 2-D ``(T, S)`` (e.g. :func:`~attnlab.mechanism.masking.causal_mask`) or
        4-D broadcastable to ``(B, H, T, S)`` (a ``(B, 1, S)`` padding mask becomes
        ``mask[:, None]``). Returns ``out``: ``(B, T, D)`` and per-head ``weights``:
        ``(B, H, T, S)``. A query with no visible key gets zero attention output (so ``out``
        is just ``W_o``'s bias there), never NaN. ``cache``: an optional
        :class:`~attnlab.mechanism.kvcache.LayerKV`; the new keys and values are appended to it and
        the queries attend to all of them (``S`` = cached + new; the mask must cover them).

    Raises:
        ValueError: ``d_model`` not divisible by ``n_heads``, inputs of the wrong shape, or a
            3-D mask (ambiguous: is the first axis the batch or the heads?).
        TypeError: non-tensor inputs, or inputs whose dtype is not the weights'.

    Taught in: chapters/04_multihead.ipynb
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        *,
        bias: bool = True,
        dropout: float = 0.0,
        fused: bool = False,
    ) -> None:
        super().__init__()
        self.fused = bool(fused)
        d_model, n_heads = check_heads(d_model, n_heads)
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.scale = 1.0 / math.sqrt(self.d_head)  # the scores' 1 / sqrt(d)
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(probability(dropout))

    def extra_repr(self) -> str:
        fused = ", fused=True" if self.fused else ""
        return f"d_model={self.d_model}, n_heads={self.n_heads}, d_head={self.d_head}{fused}"

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor | None = None,
        value: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
        *,
        cache: Any = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        key = query if key is None else key
        value = key if value is None else value
        self._check_inputs(query, key, value, mask)
        H, xp = self.n_heads, torch_xp
        q = _split(self.W_q(query), H, xp)  # (B, T, D) -> (B, T, H, d) -> (B, H, T, d)
        k = _split(self.W_k(key), H, xp)  # (B, S, D) -> (B, S, H, d) -> (B, H, S, d)
        v = _split(self.W_v(value), H, xp)  # (B, S, D) -> (B, S, H, d) -> (B, H, S, d)
        if cache is not None:  # a KV cache (chapter 8): attend to the cached keys too
            k, v = cache.update(k, v)  # -> (B, H, S_cached + S, d) each
        if mask is not None:  # True = may attend, broadcastable to (B, H, T, S)
            mask = check_mask(mask, (*q.shape[:-1], k.shape[-2]), xp, what=_SCORES, like=q)
        if self.fused:  # PyTorch's kernel: no weights kept
            heads, weights = _fused(q, k, v, mask, self.scale, self.dropout), None
        else:
            dropout = self.dropout if self.training and self.dropout.p > 0 else None
            heads, weights = attend(q, k, v, mask, scale=self.scale, dropout=dropout, xp=xp)
        out = self.W_o(_merge(heads, xp))  # (B, H, T, d) -> (B, T, H, d) -> (B, T, D) @ W_o
        return out, weights  # (B, T, D), (B, H, T, S)

    @classmethod
    def from_torch(cls, theirs: nn.MultiheadAttention) -> MultiHeadAttention:
        """A copy of PyTorch's ``nn.MultiheadAttention`` as a :class:`MultiHeadAttention`.

        ``theirs.in_proj_weight`` ``(3D, D)`` stacks ``W_q, W_k, W_v`` (rows ``0..D-1``,
        ``D..2D-1``, ``2D..3D-1``, each stored as ``nn.Linear`` stores its weight,
        ``(out_features, in_features)``); ``in_proj_bias`` ``(3D,)`` is cut the same way;
        ``out_proj`` is ``W_o``. Head ``h`` owns features ``h·d .. (h+1)·d - 1`` in both.

        Args:
            theirs: an ``nn.MultiheadAttention`` with ``kdim = vdim = embed_dim`` and
                without ``add_bias_kv`` / ``add_zero_attn``.

        Returns:
            A new module on the same device and dtype, in the same train/eval mode, with
            the same dropout rate and equal outputs (for ``batch_first=True`` inputs).

        Raises:
            TypeError: ``theirs`` is not an ``nn.MultiheadAttention``.
            ValueError: separate key/value sizes, or extra key/value biases.

        Taught in: chapters/04_multihead.ipynb
        """
        if not isinstance(theirs, nn.MultiheadAttention):
            raise TypeError(f"expected an nn.MultiheadAttention, got a {type(theirs).__name__}")
        if not theirs._qkv_same_embed_dim:
            raise ValueError("key/value sizes (kdim, vdim) differ from embed_dim: not supported")
        if theirs.bias_k is not None or theirs.add_zero_attn:
            raise ValueError("add_bias_kv / add_zero_attn have no counterpart here")
        D, bias = theirs.embed_dim, theirs.in_proj_bias is not None
        w = theirs.in_proj_weight
        ours = cls(D, theirs.num_heads, bias=bias, dropout=theirs.dropout)
        ours = ours.to(device=w.device, dtype=w.dtype).train(theirs.training)
        with torch.no_grad():
            for i, lin in enumerate((ours.W_q, ours.W_k, ours.W_v)):
                lin.weight.copy_(w[i * D : (i + 1) * D])  # (3D, D) -> (D, D)
                if bias:
                    lin.bias.copy_(theirs.in_proj_bias[i * D : (i + 1) * D])  # (3D,) -> (D,)
            ours.W_o.weight.copy_(theirs.out_proj.weight)
            if bias:
                ours.W_o.bias.copy_(theirs.out_proj.bias)
        return ours

    def to_torch(self) -> nn.MultiheadAttention:
        """PyTorch's ``nn.MultiheadAttention`` (``batch_first=True``) with this layer's weights.

        ``W_q, W_k, W_v`` are stacked into ``in_proj_weight`` ``(3D, D)`` (and their biases
        into ``in_proj_bias`` ``(3D,)``); ``W_o`` becomes ``out_proj``. Call it as
        ``theirs(x, x, x, average_attn_weights=False)`` to get per-head weights
        ``(B, H, T, S)``; by default it returns their mean over the heads, ``(B, T, S)``.

        Returns:
            A new ``nn.MultiheadAttention`` on the same device and dtype, in the same
            train/eval mode.

        Taught in: chapters/04_multihead.ipynb
        """
        w = self.W_q.weight
        bias = self.W_q.bias is not None
        theirs = nn.MultiheadAttention(
            self.d_model,
            self.n_heads,
            dropout=self.dropout.p,
            bias=bias,
            batch_first=True,
            device=w.device,
            dtype=w.dtype,
        ).train(self.training)
        with torch.no_grad():
            theirs.in_proj_weight.copy_(
                torch.cat([self.W_q.weight, self.W_k.weight, self.W_v.weight])  # (3D, D)
            )
            theirs.out_proj.weight.copy_(self.W_o.weight)
            if bias:
                theirs.in_proj_bias.copy_(
                    torch.cat([self.W_q.bias, self.W_k.bias, self.W_v.bias])  # (3D,)
                )
                theirs.out_proj.bias.copy_(self.W_o.bias)
        return theirs

    def _check_inputs(self, query: Any, key: Any, value: Any, mask: Any) -> None:
        D = self.d_model
        for name, x in (("query", query), ("key", key), ("value", value)):
            check_input(
                x,
                D,
                who="MultiHeadAttention",
                name=name,
                shape=f"(B, length, d_model={D})",
                ndim=3,
                module=self,
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


def _fused(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: Any, scale: float, dropout: nn.Dropout
) -> torch.Tensor:
    """``softmax(q kᵀ · scale) v`` by ``F.scaled_dot_product_attention``: ``(B, H, T, d)``.

    A query row whose mask hides every key gets a zero output, as :func:`attend` gives it
    (the kernel's own answer there differs between its backends).
    """
    p = dropout.p if dropout.training else 0.0
    heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p, scale=scale)
    if mask is None:
        return heads  # (B, H, T, d)
    seen = mask.any(dim=-1, keepdim=True)  # (..., T, S) -> (..., T, 1): any visible key
    return heads.masked_fill(~seen, 0.0)  # (B, H, T, d), hidden rows zero


def mha_parameter_count(d_model: int, n_heads: int = 1, *, bias: bool = True) -> int:
    """Number of learned numbers in a :class:`MultiHeadAttention` layer: ``4·D² + 4·D``.

    ``W_q, W_k, W_v`` map ``D -> H·d = D`` and ``W_o`` maps ``D -> D``: four ``D x D``
    matrices (plus four length-``D`` biases). ``H`` heads of size ``d = D / H`` have
    ``H · (3·D·d) = 3·D²`` input-projection weights, exactly as many as one head of size
    ``D``: the count does not depend on ``n_heads`` (it is an argument only to check that
    it divides ``d_model``).

    Args:
        d_model: model width ``D``.
        n_heads: number of heads ``H``; must divide ``D``.
        bias: count the biases too.

    Returns:
        ``4·D² + 4·D`` (``4·D²`` without biases); e.g. 1,050,624 for ``D = 512``.

    Raises:
        ValueError: a size that is not a positive integer, or ``H`` not dividing ``D``.

    Taught in: chapters/04_multihead.ipynb
    """
    check_heads(d_model, n_heads)
    return 4 * d_model * d_model + (4 * d_model if bias else 0)


def mha_flops(
    d_model: int,
    n_heads: int,
    q_len: int,
    k_len: int | None = None,
    *,
    batch: int = 1,
) -> dict[str, int]:
    """Floating-point operations of one :class:`MultiHeadAttention` forward pass, by step.

    A matrix product ``(m, n) @ (n, p)`` costs ``2·m·n·p`` operations (one multiply and
    one add per term), the convention of ``torch.utils.flop_counter.FlopCounterMode``.
    With ``B`` sequences, ``T`` queries, ``S`` keys, ``H`` heads of size ``d = D / H``:

    - projections: ``2·B·(T + 2S)·D²`` (``W_q`` on the queries, ``W_k, W_v`` on the keys);
    - scores ``q kᵀ``: ``H`` products of ``(T, d) @ (d, S)``: ``2·B·H·T·d·S = 2·B·T·S·D``;
    - ``weights @ v``: ``2·B·H·T·S·d = 2·B·T·S·D``;
    - output projection ``W_o``: ``2·B·T·D²``.

    None depends on ``H``: the heads cut the same products into thinner slices. What does
    grow with ``H`` is the softmax, one exponential per score: ``B·H·T·S`` entries (given as
    ``"softmax entries"``, not counted in ``"total"``, which is the matrix products only).
    Biases, the ``1/√d`` scaling and reshapes are left out (a few ``B·T·D`` each).

    Args:
        d_model: model width ``D``.
        n_heads: number of heads ``H`` (must divide ``D``).
        q_len: number of queries ``T``.
        k_len: number of keys ``S`` (default ``T``: self-attention).
        batch: number of sequences ``B``.

    Returns:
        ``{"W_q, W_k, W_v": ..., "q @ k^T": ..., "weights @ v": ..., "W_o": ...,
        "total": ..., "softmax entries": ...}``, Python ints.

    Raises:
        ValueError: a size that is not a positive integer, or ``H`` not dividing ``D``.

    Taught in: chapters/04_multihead.ipynb
    """
    B, T, S, D, H = _sizes(batch, q_len, k_len, d_model, n_heads)
    d = D // H
    cost = {
        "W_q, W_k, W_v": 2 * B * (T + 2 * S) * D * D,
        "q @ k^T": 2 * B * H * T * d * S,
        "weights @ v": 2 * B * H * T * S * d,
        "W_o": 2 * B * T * D * D,
    }
    cost["total"] = sum(cost.values())
    cost["softmax entries"] = B * H * T * S
    return cost


@dataclass(frozen=True)
class ShapeTrace:
    """The shape of every intermediate of one :class:`MultiHeadAttention` forward pass.

    Printing it (or leaving it as a notebook cell's last expression) shows one line per
    step: what was computed, its shape in symbols and in numbers.

    Attributes:
        sizes: the sizes used, ``{"B": ..., "T": ..., "S": ..., "D": ..., "H": ..., "d": ...}``.
        steps: ``(step, symbols, shape)`` triples in the order the forward pass made them.
    """

    sizes: dict[str, int]
    steps: tuple[tuple[str, str, tuple[int, ...]], ...]

    def shape_of(self, step: str) -> tuple[int, ...]:
        """The shape recorded for ``step`` (raises ``KeyError`` naming the known steps)."""
        for name, _, shape in self.steps:
            if name == step:
                return shape
        raise KeyError(f"no step {step!r}; steps: {[s for s, _, _ in self.steps]}")

    def __str__(self) -> str:
        sizes = ", ".join(f"{k}={v}" for k, v in self.sizes.items())
        width = max(len(step) for step, _, _ in self.steps)
        lines = [f"MultiHeadAttention shapes for {sizes}"]
        lines.append(f"{'query (input)':<{width}}  {'(B, T, D)':<13} {self._query_shape()}")
        for step, symbols, shape in self.steps:
            lines.append(f"{step:<{width}}  {symbols:<13} {shape}")
        return "\n".join(lines)

    def _query_shape(self) -> tuple[int, ...]:
        return (self.sizes["B"], self.sizes["T"], self.sizes["D"])

    def __repr__(self) -> str:
        return str(self)


def trace_shapes(
    batch: int, q_len: int, d_model: int, n_heads: int, *, k_len: int | None = None
) -> ShapeTrace:
    """Run a :class:`MultiHeadAttention` once and list the shape of every intermediate.

    The shapes are read from the tensors of a real pass (random input, random weights):
    a traced copy of :meth:`MultiHeadAttention.forward` that notes each step's shape, and
    whose output is checked against the forward's own, so the trace cannot drift from the
    code (the scores, which stay inside :func:`~attnlab.mechanism.attention.attend`, are
    listed with the shape of the weights made from them). With ``k_len`` the keys and values
    come from a second sequence of that length (cross-attention); otherwise ``S = T``.

    Args:
        batch: ``B``.
        q_len: ``T``, the number of queries.
        d_model: ``D``.
        n_heads: ``H``; must divide ``D``.
        k_len: ``S``, the number of keys and values (default ``T``).

    Returns:
        A :class:`ShapeTrace`; print it for the table.

    Raises:
        ValueError: a size that is not a positive integer, or ``H`` not dividing ``D``.

    Taught in: chapters/04_multihead.ipynb
    """
    B, T, S, D, H = _sizes(batch, q_len, k_len, d_model, n_heads)
    mha = MultiHeadAttention(D, H)  # on torch's default device
    generator = torch.Generator().manual_seed(0)  # a CPU generator: draw there, then move

    def draw(length: int) -> torch.Tensor:
        x = torch.randn(B, length, D, generator=generator, device="cpu")
        return x.to(mha.W_q.weight.device)

    query = draw(T)
    memory = query if k_len is None else draw(S)
    with torch.no_grad():
        steps, out = _traced_forward(mha, query, memory)
        expected = mha(query, memory, memory)[0]  # the copy must compute what forward does
        same = out.shape == expected.shape and (
            out.device.type == "meta" or torch.allclose(out, expected)  # meta: no values
        )
        if not same:
            raise AssertionError("trace_shapes' traced copy drifted from MultiHeadAttention")
    return ShapeTrace(sizes={"B": B, "T": T, "S": S, "D": D, "H": H, "d": D // H}, steps=steps)


def _sizes(
    batch: int, q_len: int, k_len: int | None, d_model: int, n_heads: int
) -> tuple[int, int, int, int, int]:
    """``(B, T, S, D, H)`` as positive ``int``s, ``H`` dividing ``D``; ``S`` defaults to ``T``."""
    D, H = check_heads(d_model, n_heads)
    B, T, S = positive_ints(batch=batch, q_len=q_len, k_len=q_len if k_len is None else k_len)
    return B, T, S, D, H


def _traced_forward(
    mha: MultiHeadAttention, query: torch.Tensor, memory: torch.Tensor
) -> tuple[tuple[tuple[str, str, tuple[int, ...]], ...], torch.Tensor]:
    """:meth:`MultiHeadAttention.forward` step by step, noting the shape after each step."""
    steps: list[tuple[str, str, tuple[int, ...]]] = []

    def note(step: str, x: torch.Tensor, symbols: str) -> torch.Tensor:
        steps.append((step, symbols, tuple(x.shape)))
        return x

    H, xp = mha.n_heads, torch_xp
    q = note("q = query @ W_q", mha.W_q(query), "(B, T, D)")
    k = note("k = key @ W_k", mha.W_k(memory), "(B, S, D)")
    v = note("v = value @ W_v", mha.W_v(memory), "(B, S, D)")
    q = _split(q, H, xp)
    note("split_heads(q): reshape", q.transpose(1, 2), "(B, T, H, d)")
    note("split_heads(q): transpose", q, "(B, H, T, d)")
    k = note("split_heads(k)", _split(k, H, xp), "(B, H, S, d)")
    v = note("split_heads(v)", _split(v, H, xp), "(B, H, S, d)")
    heads, weights = attend(q, k, v, None, scale=mha.scale, xp=xp)
    note("scores = q @ k^T / sqrt(d)", weights, "(B, H, T, S)")  # the scores' shape
    note("weights = softmax(scores)", weights, "(B, H, T, S)")
    note("heads = weights @ v", heads, "(B, H, T, d)")
    note("merge_heads: transpose", heads.transpose(1, 2), "(B, T, H, d)")
    concat = note("merge_heads: reshape (concat)", _merge(heads, xp), "(B, T, D)")
    out = note("out = concat @ W_o", mha.W_o(concat), "(B, T, D)")
    return tuple(steps), out
