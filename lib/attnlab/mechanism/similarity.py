"""How alike are two vectors? Dot product, cosine similarity, scaled scores and softmax.

These are the small functions every attention layer is built from. Each accepts NumPy
arrays or torch tensors (and returns the same kind), works on any leading batch axes, and
raises a ``ValueError``/``TypeError`` that names the offending shape or dtype.

Four ways to score a query against keys (chapter 3 compares them):

- ``scores``: the dot product ``q · k``;
- ``scaled_scores``: ``q · k / sqrt(d)`` (the transformer's);
- ``general_scores``: the bilinear form ``q W kᵀ`` (Luong et al., 2015, "general");
- ``additive_scores``: a one-hidden-layer network ``v_a · tanh(q W_a + k U_a)``
  (Bahdanau et al., 2015).

Taught in: chapters/02_similarity.ipynb and chapters/03_qkv.ipynb
"""

from __future__ import annotations

import math
from typing import Any

from array_api_compat import is_torch_array

from .._validate import (
    NEG_INF,
    as_array,
    as_float,
    broadcast_shape,
    check_int,
    check_last_dim,
    check_mask,
    check_real,
    describe,
    namespace,
    positive_number,
    scalar_like,
)

__all__ = [
    "additive_scores",
    "cosine_similarity",
    "dot",
    "general_scores",
    "scaled_scores",
    "scores",
    "softmax",
]


def dot(a: Any, b: Any) -> Any:
    r"""Dot product along the last axis: :math:`a \cdot b = \sum_i a_i b_i`.

    Args:
        a: ``(..., d)`` vectors.
        b: ``(..., d)`` vectors; the leading axes broadcast against ``a``'s.

    Returns:
        ``(...)``: one number per pair of vectors.

    Raises:
        ValueError: if the last axes differ in size.
    """
    a, b = as_array(a, "a"), as_array(b, "b")
    xp = namespace(a=a, b=b)
    a, b = as_float(a, "a", xp), as_float(b, "b", xp)
    _check_vector_pairs(a, b)
    return xp.sum(a * b, axis=-1)  # (..., d) * (..., d) -> (...)


def cosine_similarity(a: Any, b: Any, eps: float = 1e-8) -> Any:
    r"""Cosine of the angle between vectors: :math:`\frac{a \cdot b}{\max(\|a\|,\epsilon)\,\max(\|b\|,\epsilon)}`.

    Unlike the dot product it ignores length: ``cosine_similarity(a, 10 * b)`` equals
    ``cosine_similarity(a, b)``. The result lies in ``[-1, 1]``. Each norm is clamped at
    ``eps`` (as ``torch.nn.functional.cosine_similarity`` does) so a zero vector gives 0,
    not NaN.

    Args:
        a: ``(..., d)`` vectors.
        b: ``(..., d)`` vectors, broadcasting against ``a``.
        eps: smallest norm used in the denominator.

    Returns:
        ``(...)``: one cosine per pair.
    """
    a, b = as_array(a, "a"), as_array(b, "b")
    xp = namespace(a=a, b=b)
    a, b = as_float(a, "a", xp), as_float(b, "b", xp)
    _check_vector_pairs(a, b)
    eps = positive_number(eps, "eps")
    norm_a = xp.clip(xp.linalg.vector_norm(a, axis=-1), min=eps)  # (...)
    norm_b = xp.clip(xp.linalg.vector_norm(b, axis=-1), min=eps)  # (...)
    cos = xp.sum(a * b, axis=-1) / (norm_a * norm_b)
    # Rounding can push |cos| a hair above 1 for parallel vectors; the true value cannot.
    return xp.clip(cos, min=-1.0, max=1.0)


def scores(q: Any, k: Any) -> Any:
    r"""All pairwise dot products of queries with keys: :math:`S = Q K^\top`.

    Args:
        q: ``(..., T, d)`` queries (one row per query position).
        k: ``(..., S, d)`` keys; leading axes broadcast against ``q``'s.

    Returns:
        ``(..., T, S)``: ``scores[..., i, j] = q[..., i, :] · k[..., j, :]``.
    """
    q, k = as_array(q, "q"), as_array(k, "k")
    xp = namespace(q=q, k=k)
    q, k = as_float(q, "q", xp), as_float(k, "k", xp)
    _check_matrices(q, k)
    return q @ xp.matrix_transpose(k)  # (..., T, d) @ (..., d, S) -> (..., T, S)


def scaled_scores(q: Any, k: Any, scale: float | None = None) -> Any:
    r"""Pairwise dot products divided by :math:`\sqrt{d}`: :math:`Q K^\top / \sqrt{d}`.

    For vectors with independent unit-variance entries, ``q · k`` has variance ``d``;
    dividing by ``sqrt(d)`` brings it back to 1, so softmax neither saturates nor flattens
    as ``d`` grows (chapter 2 measures this).

    Args:
        q: ``(..., T, d)`` queries.
        k: ``(..., S, d)`` keys.
        scale: multiply by this instead of ``1 / sqrt(d)``.

    Returns:
        ``(..., T, S)`` scaled scores.
    """
    s = scores(q, k)
    d = as_array(q, "q").shape[-1]
    if scale is None:
        return s * (1.0 / math.sqrt(d) if d else 1.0)
    return s * check_real(scale, "scale")


def general_scores(q: Any, k: Any, W: Any) -> Any:
    r"""Bilinear ("general") scores of queries with keys: :math:`S = Q W K^\top`.

    ``scores[..., i, j] = q_i W k_jᵀ = Σ_a Σ_b q_i[a] W[a, b] k_j[b]``. With ``W`` the
    identity it is the plain dot product. ``W`` lets a query match keys that point in a
    *different* direction, and lets queries and keys have different sizes. Computed as
    ``(q W) kᵀ``: project the queries once, then take dot products. Writing
    ``W = W_q W_kᵀ`` gives ``(q W_q)(k W_k)ᵀ``: learned query and key projections are a
    general score whose ``W`` has rank at most ``d_head``.

    Reference: Luong, Pham & Manning, "Effective Approaches to Attention-based Neural
    Machine Translation", 2015 (the "general" score).

    Args:
        q: ``(..., T, d_q)`` queries.
        k: ``(..., S, d_k)`` keys; leading axes broadcast against ``q``'s.
        W: ``(d_q, d_k)`` matrix (or ``(..., d_q, d_k)``, broadcasting).

    Returns:
        ``(..., T, S)`` scores. NumPy in, NumPy out; tensors in, tensors out.

    Raises:
        ValueError: ``q``/``k`` not matrices, or ``W`` not ``(d_q, d_k)``.
        TypeError: mixed NumPy/torch input or non-numeric input.

    Taught in: chapters/03_qkv.ipynb
    """
    q, k, W = as_array(q, "q"), as_array(k, "k"), as_array(W, "W")
    xp = namespace(q=q, k=k, W=W)
    q, k, W = as_float(q, "q", xp), as_float(k, "k", xp), as_float(W, "W", xp)
    if q.ndim < 2 or k.ndim < 2:
        raise ValueError(
            "queries and keys must be matrices (..., length, features) with one row per "
            f"position, got q: {describe(q)} and k: {describe(k)}"
        )
    if W.ndim < 2 or tuple(W.shape[-2:]) != (q.shape[-1], k.shape[-1]):
        raise ValueError(
            f"W must be (d_q, d_k) = ({q.shape[-1]}, {k.shape[-1]}) to compare q "
            f"{tuple(q.shape)} with k {tuple(k.shape)}, got {describe(W)}"
        )
    try:
        qW = q @ W  # (..., T, d_q) @ (d_q, d_k) -> (..., T, d_k)
        return qW @ xp.matrix_transpose(k)  # (..., T, d_k) @ (..., d_k, S) -> (..., T, S)
    except (ValueError, RuntimeError):
        raise ValueError(
            f"the leading axes of q {tuple(q.shape)}, W {tuple(W.shape)} and k "
            f"{tuple(k.shape)} do not broadcast"
        ) from None


def additive_scores(q: Any, k: Any, W_a: Any, U_a: Any, v_a: Any) -> Any:
    r"""Additive (Bahdanau) scores: :math:`s_{ij} = v_a^\top \tanh(q_i W_a + k_j U_a)`.

    A small neural network scores each (query, key) pair: both are projected to a hidden
    size ``h``, added, squashed by ``tanh`` and read out by the vector ``v_a``. Queries and
    keys may have different sizes. It costs a ``(..., T, S, h)`` intermediate (every pair
    gets its own hidden vector), where dot-product scores need one matrix product; that
    is why transformers use the dot product.

    Reference: Bahdanau, Cho & Bengio, "Neural Machine Translation by Jointly Learning to
    Align and Translate", 2015 (written there with column vectors, ``W_a s + U_a h``).

    Args:
        q: ``(..., T, d_q)`` queries.
        k: ``(..., S, d_k)`` keys; leading axes broadcast against ``q``'s.
        W_a: ``(d_q, h)`` projection of the queries.
        U_a: ``(d_k, h)`` projection of the keys.
        v_a: ``(h,)`` read-out vector.

    Returns:
        ``(..., T, S)`` scores. NumPy in, NumPy out; tensors in, tensors out.

    Raises:
        ValueError: ``q``/``k`` not matrices, or a weight whose shape does not fit.
        TypeError: mixed NumPy/torch input or non-numeric input.

    Taught in: chapters/03_qkv.ipynb
    """
    arrays = {"q": q, "k": k, "W_a": W_a, "U_a": U_a, "v_a": v_a}
    arrays = {n: as_array(a, n) for n, a in arrays.items()}
    xp = namespace(**arrays)
    q, k, W_a, U_a, v_a = (as_float(a, n, xp) for n, a in arrays.items())
    if q.ndim < 2 or k.ndim < 2:
        raise ValueError(
            "queries and keys must be matrices (..., length, features) with one row per "
            f"position, got q: {describe(q)} and k: {describe(k)}"
        )
    if v_a.ndim != 1:
        raise ValueError(f"v_a must be a vector (h,), got {describe(v_a)}")
    h = v_a.shape[0]
    for name, w, d in (("W_a", W_a, q.shape[-1]), ("U_a", U_a, k.shape[-1])):
        if tuple(w.shape) != (d, h):
            raise ValueError(
                f"{name} must be ({d}, h={h}) for q {tuple(q.shape)}, k {tuple(k.shape)} "
                f"and v_a {tuple(v_a.shape)}, got {describe(w)}"
            )
    qW = q @ W_a  # (..., T, d_q) @ (d_q, h) -> (..., T, h)
    kU = k @ U_a  # (..., S, d_k) @ (d_k, h) -> (..., S, h)
    try:
        # (..., T, 1, h) + (..., 1, S, h) -> (..., T, S, h): one hidden vector per pair
        hidden = xp.tanh(qW[..., :, None, :] + kU[..., None, :, :])
    except (ValueError, RuntimeError):
        raise ValueError(
            f"the leading (batch) axes of q {tuple(q.shape)} and k {tuple(k.shape)} "
            "do not broadcast"
        ) from None
    return hidden @ v_a  # (..., T, S, h) @ (h,) -> (..., T, S)


def softmax(x: Any, axis: int = -1, temperature: float = 1.0, *, mask: Any = None) -> Any:
    r"""Numerically stable softmax with temperature: :math:`\mathrm{softmax}(x/\tau)_i = \frac{e^{x_i/\tau - m}}{\sum_j e^{x_j/\tau - m}}`.

    Subtracting the maximum ``m`` changes nothing mathematically (it cancels) but keeps
    ``exp`` from overflowing: logits of 1000 give ``exp(0) = 1``, not ``inf``.

    Args:
        x: logits of any shape.
        axis: the axis that sums to 1.
        temperature: ``τ > 0`` (a Python or NumPy number). Small ``τ`` sharpens towards the argmax; large ``τ``
            flattens towards uniform.
        mask: optional boolean array broadcastable to ``x``; ``True`` = keep. Masked entries
            get weight exactly 0. If every entry along ``axis`` is masked, the whole slice
            is 0 (never NaN).

    Returns:
        Weights of the same shape and kind as ``x``, non-negative, summing to 1 along
        ``axis`` (or 0 where everything is masked). An empty ``axis`` (zero keys) gives an
        empty result, for NumPy as for torch.

    Raises:
        ValueError: non-positive temperature, an axis out of range, or a mask that does not
            broadcast to ``x``.
        TypeError: non-numeric ``x``, an ``axis`` that is not an integer, or a non-boolean
            mask.
    """
    x = as_array(x, "x")
    xp = namespace(x=x)
    x = as_float(x, "x", xp)
    temperature = positive_number(temperature, "temperature")
    if x.ndim == 0:
        raise ValueError(f"softmax needs at least one axis, got {describe(x)}")
    try:
        axis = check_int(axis, "axis")
    except ValueError:  # None, a float, a string: the wrong type, as everywhere a TypeError
        raise TypeError(f"axis must be an integer, got {axis!r}") from None
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of range for {describe(x)}")
    z = x / temperature if temperature != 1 else x  # skip a pass over x when τ = 1
    if mask is not None:
        mask = check_mask(mask, tuple(x.shape), xp, what="logits", like=x)
    return _masked_softmax(z, axis, mask, xp)


def _masked_softmax(z: Any, axis: int, mask: Any, xp: Any) -> Any:
    """:func:`softmax` of checked logits ``z`` with a checked ``mask`` (or ``None``)."""
    if mask is None:
        return _normalized_exp(z, axis, xp)
    mask = xp.reshape(mask, (1,) * (z.ndim - mask.ndim) + tuple(mask.shape))  # align axes
    # A slice with no visible entry would be exp(-inf - (-inf)) = NaN. Leave such slices
    # unmasked (their logits are finite), then set their weights to exactly 0.
    visible = xp.any(mask, axis=axis, keepdims=True)  # (..., 1, ...): any key visible?
    z = xp.where(mask | ~visible, z, scalar_like(NEG_INF, z, xp))
    return xp.where(visible, _normalized_exp(z, axis, xp), scalar_like(0.0, z, xp))


def _normalized_exp(z: Any, axis: int, xp: Any) -> Any:
    """``exp(z - max) / sum(exp(z - max))`` along ``axis``: the stable softmax kernel.

    Subtracting the max makes the largest exponent ``exp(0) = 1``: nothing overflows, and
    entries of ``-inf`` (masked) become exactly 0. torch ships this exact kernel fused
    (one pass forward, one backward; about 3x faster under autograd than the three lines
    below, which compute the same numbers), so tensors use it; everything else runs the
    three lines.
    """
    if is_torch_array(z):
        return z.softmax(dim=axis)
    if z.shape[axis] == 0:  # nothing to normalise (zero keys): an empty result, as torch
        return xp.zeros_like(z)
    e = xp.exp(z - xp.max(z, axis=axis, keepdims=True))
    return e / xp.sum(e, axis=axis, keepdims=True)


def _check_vector_pairs(a: Any, b: Any) -> None:
    check_last_dim(a, b, "a", "b")
    if broadcast_shape(tuple(a.shape[:-1]), tuple(b.shape[:-1])) is None:
        raise ValueError(
            f"the leading axes of a {tuple(a.shape)} and b {tuple(b.shape)} do not broadcast: "
            "give one vector per pair, or a single vector to compare with all"
        )


def _check_matrices(q: Any, k: Any) -> None:
    if q.ndim < 2 or k.ndim < 2:
        raise ValueError(
            "queries and keys must be matrices (..., length, d) with one row per position, "
            f"got q: {describe(q)} and k: {describe(k)}"
        )
    check_last_dim(q, k, "q", "k")
