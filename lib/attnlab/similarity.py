"""How alike are two vectors? Dot product, cosine similarity, scaled scores and softmax.

These are the four small functions every attention layer is built from. Each accepts NumPy
arrays or torch tensors (and returns the same kind), works on any leading batch axes, and
raises a ``ValueError``/``TypeError`` that names the offending shape or dtype.

Taught in: chapters/02_similarity.ipynb
"""

from __future__ import annotations

import math
from typing import Any

from array_api_compat import is_torch_array

from ._array import (
    NEG_INF,
    as_array,
    as_float,
    broadcast_shape,
    check_last_dim,
    check_mask,
    describe,
    namespace,
    scalar_like,
)

__all__ = ["cosine_similarity", "dot", "scaled_scores", "scores", "softmax"]


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
    return s * (1.0 / math.sqrt(d) if scale is None else scale)


def softmax(x: Any, axis: int = -1, temperature: float = 1.0, *, mask: Any = None) -> Any:
    r"""Numerically stable softmax with temperature: :math:`\mathrm{softmax}(x/\tau)_i = \frac{e^{x_i/\tau - m}}{\sum_j e^{x_j/\tau - m}}`.

    Subtracting the maximum ``m`` changes nothing mathematically (it cancels) but keeps
    ``exp`` from overflowing: logits of 1000 give ``exp(0) = 1``, not ``inf``.

    Args:
        x: logits of any shape.
        axis: the axis that sums to 1.
        temperature: ``τ > 0``. Small ``τ`` sharpens towards the argmax; large ``τ``
            flattens towards uniform.
        mask: optional boolean array broadcastable to ``x``; ``True`` = keep. Masked entries
            get weight exactly 0. If every entry along ``axis`` is masked, the whole slice
            is 0 (never NaN).

    Returns:
        Weights of the same shape and kind as ``x``, non-negative, summing to 1 along
        ``axis`` (or 0 where everything is masked).

    Raises:
        ValueError: non-positive temperature, an axis out of range, or a mask that does not
            broadcast to ``x``.
        TypeError: non-numeric ``x`` or a non-boolean mask.
    """
    x = as_array(x, "x")
    xp = namespace(x=x)
    x = as_float(x, "x", xp)
    if not (isinstance(temperature, (int, float)) and temperature > 0):
        raise ValueError(f"temperature must be a positive number, got {temperature!r}")
    if x.ndim == 0:
        raise ValueError(f"softmax needs at least one axis, got {describe(x)}")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of range for {describe(x)}")
    z = x / temperature if temperature != 1 else x  # skip a pass over x when τ = 1
    if mask is None:
        return _normalized_exp(z, axis, xp)
    mask = check_mask(mask, tuple(x.shape), xp, what="logits")
    mask = xp.reshape(mask, (1,) * (x.ndim - mask.ndim) + tuple(mask.shape))  # align axes
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
