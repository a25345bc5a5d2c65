"""Positional encodings: telling attention *where* each token is.

Attention without positions is permutation-equivariant: shuffle the tokens and the outputs
shuffle the same way, so "dog bites man" and "man bites dog" look alike. The fix is to add a
position vector to each token vector before the first layer.

The sinusoidal encoding (Vaswani et al., "Attention Is All You Need", 2017, section 3.5):

.. math::
    PE_{pos,\\,2i} = \\sin\\!\\left(\\frac{pos}{b^{2i/D}}\\right), \\qquad
    PE_{pos,\\,2i+1} = \\cos\\!\\left(\\frac{pos}{b^{2i/D}}\\right), \\qquad b = 10000

Each pair of features ``(2i, 2i+1)`` is a point turning on a circle at its own frequency
``ω_i = b^{-2i/D}``, from one turn every ``2π`` positions (``i = 0``) to one every
``2π·b`` positions. Moving ``k`` positions turns every circle by a fixed angle ``k·ω_i``,
so ``PE[pos + k]`` is a *linear* function of ``PE[pos]`` whatever ``pos`` is
(:func:`offset_matrix`): relative offsets are easy to express. The learned alternative
(BERT, GPT) is a trainable table with one row per position (:class:`LearnedPositionalEmbedding`).
Rotary position embedding (Su et al., "RoFormer", 2021) uses the same rotations on the
queries and keys instead of adding anything to the tokens (:func:`apply_rope`), so that a
query-key score depends on the two positions only through their offset.

The naive codes that motivate all this, the raw index and the index divided by the length,
are :func:`index_encoding`; :func:`permutation_gap` measures how far a layer is from
permutation-equivariant.

Taught in: chapters/05_positional.ipynb
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from .._validate import (
    as_array,
    as_float,
    check_device,
    check_input,
    check_int,
    check_real,
    describe,
    match_kind,
    namespace,
    positive_int,
    to_numpy,
)

__all__ = [
    "LearnedPositionalEmbedding",
    "SinusoidalPositionalEncoding",
    "apply_rope",
    "index_encoding",
    "offset_matrix",
    "permutation_gap",
    "sinusoidal_encoding",
]


def _check_base(base: Any) -> float:
    return check_real(base, "base", expected="a number greater than 1", ok=lambda b: b > 1)


def _frequencies(d_model: int, base: float) -> np.ndarray:
    """``ω_i = base^(-2i / D)`` for ``i = 0 .. ceil(D / 2) - 1``: one per (sin, cos) pair."""
    two_i = np.arange(0, d_model, 2, dtype=np.float64)  # (ceil(D/2),)
    return base ** (-two_i / d_model)


def sinusoidal_encoding(
    length: int, d_model: int, *, base: float = 10000.0, like: Any = None
) -> Any:
    """The sinusoidal position table: ``PE[pos, 2i] = sin(pos·ω_i)``, ``PE[pos, 2i+1] = cos(pos·ω_i)``.

    With ``ω_i = base^(-2i/D)``. Works for any ``d_model``: when ``D`` is odd the last
    feature is the sine of the slowest pair, whose cosine would be feature ``D`` (cut off).
    Every entry lies in ``[-1, 1]``; ``PE[0]`` is ``(0, 1, 0, 1, ...)``.

    Args:
        length: number of positions ``T`` (rows ``0 .. T-1``).
        d_model: number of features ``D``.
        base: the ``10000`` of the paper; it sets the slowest wavelength ``2π·base``.
        like: an array or tensor; the table is returned as the same kind, on the same device,
            with its floating dtype (the default float for integer/boolean ``like``).
            Default: a float64 NumPy array.

    Returns:
        ``(T, D)`` table of position vectors.

    Raises:
        ValueError: non-positive ``length`` or ``d_model``, or ``base <= 1``.

    Taught in: chapters/05_positional.ipynb
    """
    length = positive_int(length, "length")
    d_model = positive_int(d_model, "d_model")
    base = _check_base(base)
    pos = np.arange(length, dtype=np.float64)[:, None]  # (T, 1)
    angles = pos * _frequencies(d_model, base)[None, :]  # (T, 1) * (1, ceil(D/2)) -> (T, ceil(D/2))
    pe = np.empty((length, d_model), dtype=np.float64)  # (T, D)
    pe[:, 0::2] = np.sin(angles)  # even features: ceil(D/2) of them
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])  # odd features: floor(D/2) of them
    return match_kind(pe, like)


def offset_matrix(k: int, d_model: int, base: float = 10000.0, *, like: Any = None) -> Any:
    """The matrix ``M_k`` that moves every sinusoidal position ``k`` steps: ``PE[p + k] = M_k PE[p]``.

    By the angle-addition formulas, for each pair ``(sin a, cos a)`` with ``a = p·ω_i``
    and ``b = k·ω_i``:

    .. math::
        \\begin{pmatrix}\\sin(a+b) \\\\ \\cos(a+b)\\end{pmatrix}
        = \\begin{pmatrix}\\cos b & \\sin b \\\\ -\\sin b & \\cos b\\end{pmatrix}
          \\begin{pmatrix}\\sin a \\\\ \\cos a\\end{pmatrix}

    so ``M_k`` is block-diagonal with one ``2 x 2`` rotation per pair. It depends on ``k``
    but not on ``p``: one fixed linear map expresses "``k`` positions later" everywhere.
    Position vectors are columns here; for a ``(T, D)`` table whose rows are positions,
    ``table @ M_k.T`` shifts every row at once. ``k`` may be negative (``M_{-k}`` is the
    inverse, and the transpose, of ``M_k``).

    Args:
        k: the offset, any integer.
        d_model: number of features ``D``; must be even (with odd ``D`` the last sine has no
            cosine partner, and ``sin(a + b)`` is not a linear function of ``sin a`` alone).
        base: as in :func:`sinusoidal_encoding`.
        like: return the same kind of array as ``like`` (default NumPy float64).

    Returns:
        ``(D, D)`` orthogonal matrix.

    Raises:
        ValueError: odd or non-positive ``d_model``, non-integer ``k``, or ``base <= 1``.

    Taught in: chapters/05_positional.ipynb
    """
    try:
        k = check_int(k, "k")
    except ValueError:
        raise ValueError(f"k must be an integer offset, got {k!r}") from None
    d_model = positive_int(d_model, "d_model")
    base = _check_base(base)
    if d_model % 2:
        raise ValueError(
            f"offset_matrix needs an even d_model, got {d_model}: the last feature of an "
            "odd-sized encoding is a sine without its cosine, so no linear map shifts it"
        )
    b = k * _frequencies(d_model, base)  # (D/2,) rotation angle of each pair
    cos, sin = np.cos(b), np.sin(b)
    m = np.zeros((d_model, d_model), dtype=np.float64)  # (D, D)
    even, odd = np.arange(0, d_model, 2), np.arange(1, d_model, 2)
    m[even, even] = cos  # new sin <- cos b · old sin
    m[even, odd] = sin  # new sin <- sin b · old cos
    m[odd, even] = -sin  # new cos <- -sin b · old sin
    m[odd, odd] = cos  # new cos <- cos b · old cos
    return match_kind(m, like)


def index_encoding(
    length: int, d_model: int, *, divide_by_length: bool = False, like: Any = None
) -> Any:
    """The naive position codes: every feature of row ``p`` is ``p`` (or ``p / T``).

    Two ideas that do not work, kept to show why. The raw index ``p`` grows without bound,
    so for long sequences it swamps the token embedding it is added to. Dividing by the
    length ``T`` keeps it in ``[0, 1)``, but then the same position gets a different code
    in sequences of different lengths, and the step between neighbours, ``1 / T``, changes
    with ``T`` too.

    Args:
        length: number of positions ``T``.
        d_model: number of features ``D`` (every feature holds the same number).
        divide_by_length: return ``p / T`` instead of ``p``.
        like: return the same kind of array as ``like`` (default NumPy float64).

    Returns:
        ``(T, D)`` table.

    Raises:
        ValueError: non-positive ``length`` or ``d_model``.

    Taught in: chapters/05_positional.ipynb
    """
    length = positive_int(length, "length")
    d_model = positive_int(d_model, "d_model")
    pos = np.arange(length, dtype=np.float64)  # (T,)
    if divide_by_length:
        pos = pos / length
    return match_kind(np.repeat(pos[:, None], d_model, axis=1), like)  # (T, D)


def apply_rope(x: Any, positions: Any = None, *, base: float = 10000.0) -> Any:
    """Rotary position embedding: turn each feature pair of ``x`` by its position's angle.

    Feature pair ``(x_{2i}, x_{2i+1})`` of the vector at position ``p`` is rotated by the
    angle ``p·ω_i``, with the frequencies ``ω_i = base^(-2i/d)`` of the sinusoidal encoding.
    Read each pair as one complex number, and the rotation is a multiplication:

    .. math::
        z_i = x_{2i} + \\mathrm{i}\\,x_{2i+1}, \\qquad
        z_i' = z_i\\, e^{\\mathrm{i}\\,p\\,\\omega_i}.

    Applied to queries and keys (never to values), it makes their dot product depend on the
    positions only through the offset: ``rope(q, p) · rope(k, s)`` is a function of ``q``,
    ``k`` and ``s - p``, because rotating both by ``p`` changes no dot product.

    Args:
        x: ``(..., T, d)`` queries or keys, ``d`` even; NumPy or torch.
        positions: the position of each of the ``T`` rows, a length-``T`` sequence of
            numbers (default ``0, 1, ..., T-1``); they need not be consecutive.
        base: as in :func:`sinusoidal_encoding`.

    Returns:
        ``(..., T, d)``, the same kind, dtype and device as ``x`` (integer input becomes
        the default float).

    Raises:
        ValueError: odd ``d``, ``x`` with fewer than 2 axes, ``positions`` of another
            length than ``T``, or ``base <= 1``.
        TypeError: ``x`` not a numeric array or tensor.

    Taught in: chapters/05_positional.ipynb
    """
    x = as_array(x, "x")
    xp = namespace(x=x)
    x = as_float(x, "x", xp)
    _check_base(base)
    if x.ndim < 2:
        raise ValueError(f"x must be (..., T, d) with one row per position, got {describe(x)}")
    T, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError(
            f"apply_rope needs an even feature size d to pair the features, got {describe(x)}"
        )
    if positions is None:
        pos = np.arange(T, dtype=np.float64)  # (T,)
    else:
        pos = np.asarray(to_numpy(positions), dtype=np.float64)
        if pos.shape != (T,):
            raise ValueError(
                f"positions must hold one number per row of x (T={T}), got shape {pos.shape}"
            )
    angles = pos[:, None] * _frequencies(d, base)[None, :]  # (T, 1) * (1, d/2) -> (T, d/2)
    cos, sin = match_kind(np.cos(angles), x), match_kind(np.sin(angles), x)  # (T, d/2) each
    x_even, x_odd = x[..., 0::2], x[..., 1::2]  # (..., T, d/2) each
    rot_even = x_even * cos - x_odd * sin  # real part of z·e^{iθ}
    rot_odd = x_even * sin + x_odd * cos  # imaginary part
    out = xp.stack([rot_even, rot_odd], axis=-1)  # (..., T, d/2, 2)
    return xp.reshape(out, tuple(x.shape))  # (..., T, d/2, 2) -> (..., T, d): pairs interleaved


def permutation_gap(fn: Callable[[Any], Any], x: Any, perm: Sequence[int]) -> float:
    """How far ``fn`` is from permutation-equivariant on ``x``: ``max |fn(x[π]) - fn(x)[π]|``.

    A layer is permutation-equivariant when shuffling its input tokens shuffles its output
    tokens the same way and changes nothing else. Self-attention without positions is; the
    gap is then zero up to rounding (about ``1e-15`` in float64).

    Args:
        fn: maps ``(..., T, D)`` tokens to ``(..., T, D')`` outputs, one row per token (for
            a layer returning ``(out, weights)``, pass ``lambda x: layer(x)[0]``).
        x: ``(..., T, D)`` NumPy array or tensor; tokens along axis ``-2``.
        perm: a permutation of ``0 .. T-1``: new row ``j`` is old row ``perm[j]``.

    Returns:
        The largest absolute difference, a Python float.

    Raises:
        ValueError: ``perm`` is not a permutation of ``0 .. T-1``, or ``fn`` changes the
            number of rows.

    Taught in: chapters/05_positional.ipynb
    """
    x = as_array(x, "x")
    if x.ndim < 2:
        raise ValueError(f"x must be (..., T, D) with tokens along axis -2, got {describe(x)}")
    T = x.shape[-2]
    order = [int(i) for i in to_numpy(perm).reshape(-1)]
    if sorted(order) != list(range(T)):
        raise ValueError(f"perm must be a permutation of 0..{T - 1}, got {order}")
    idx = order if isinstance(x, np.ndarray) else torch.tensor(order, device=x.device)
    out, out_shuffled = fn(x), fn(x[..., idx, :])  # (..., T, D') each
    if out.shape[-2] != T or out_shuffled.shape != out.shape:
        raise ValueError(f"fn must return one row per token: got {describe(out)} for {describe(x)}")
    gap = abs(out_shuffled - out[..., idx, :]).max()  # |fn(x[π]) - fn(x)[π]|
    return float(to_numpy(gap))  # detached: a gap is a measurement, not a loss


class _AddedPositions(nn.Module):
    """What both position layers share: checked sizes, and ``forward(x) = x + table[:T]``.

    A subclass builds its ``(max_len, D)`` table in ``__init__`` and returns its rows
    ``start .. start + T - 1`` from ``_table(start, T)``. ``forward(x, start)`` gives the
    tokens of ``x`` the positions ``start ..`` (a decoder with a KV cache passes the number
    of tokens already cached, chapter 8).
    """

    def __init__(self, d_model: int, max_len: int) -> None:
        super().__init__()
        self.d_model = positive_int(d_model, "d_model")
        self.max_len = positive_int(max_len, "max_len")

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, max_len={self.max_len}"

    def _table(self, start: int, T: int) -> torch.Tensor:
        """Rows ``start .. start + T - 1`` of the position table, ``(T, D)``."""
        raise NotImplementedError

    def forward(self, x: torch.Tensor, start: int = 0) -> torch.Tensor:
        T, start = _check_input(x, self.d_model, self.max_len, type(self).__name__, start)
        check_device(x, self, who=type(self).__name__)
        return x + self._table(start, T).to(x.dtype)  # (B, T, D) + (T, D) -> (B, T, D)


class SinusoidalPositionalEncoding(_AddedPositions):
    """Adds the fixed sinusoidal table to a batch of token vectors: ``x + PE[:T]``.

    The table is a (non-trainable) buffer of shape ``(max_len, D)``, so it follows the module
    to its device (``.to(...)``) and is not touched by the optimizer; it is added in the
    dtype of ``x``.

    Args:
        d_model: number of features ``D``.
        max_len: the longest sequence this module accepts.
        base: as in :func:`sinusoidal_encoding`.

    Shapes:
        ``x``: ``(B, T, D)`` with ``T <= max_len``; returns ``(B, T, D)``. With
        ``forward(x, start)`` the tokens take positions ``start .. start + T - 1``
        (default 0; ``start + T <= max_len``).

    Raises:
        ValueError: ``T > max_len`` or a feature size other than ``d_model``.
        TypeError: ``x`` not a floating-point tensor (token ids must be embedded first).

    Taught in: chapters/05_positional.ipynb (exercise in exercises/05_positional.ipynb)
    """

    pe: torch.Tensor

    def __init__(self, d_model: int, max_len: int, *, base: float = 10000.0) -> None:
        super().__init__(d_model, max_len)
        pe = torch.from_numpy(sinusoidal_encoding(self.max_len, self.d_model, base=base))
        # Kept in float64 (cast to the input's dtype when added), so `.double()` loses nothing.
        # Not persistent: it is a function of (max_len, d_model, base), recomputed on load.
        self.register_buffer("pe", pe, persistent=False)

    def _table(self, start: int, T: int) -> torch.Tensor:
        return self.pe[start : start + T]  # (max_len, D) -> (T, D)


class LearnedPositionalEmbedding(_AddedPositions):
    """Adds a trainable vector per position (BERT, GPT): ``x + P[:T]`` with ``P`` a ``(max_len, D)`` table.

    Unlike the sinusoids it can learn whatever position code helps the task, but it knows
    nothing about positions it never saw in training (``T > max_len`` is impossible).
    Initialised ``N(0, 0.02²)``, as GPT-2.

    A drop-in replacement for :class:`SinusoidalPositionalEncoding`: the same arguments
    (without ``base``), shapes, ``forward(x, start)`` and errors.

    Args:
        d_model: number of features ``D``.
        max_len: number of positions (rows of the table).

    Taught in: chapters/05_positional.ipynb
    """

    def __init__(self, d_model: int, max_len: int) -> None:
        super().__init__(d_model, max_len)
        self.embedding = nn.Embedding(self.max_len, self.d_model)
        nn.init.normal_(self.embedding.weight, std=0.02)

    def _table(self, start: int, T: int) -> torch.Tensor:
        positions = torch.arange(start, start + T, device=self.embedding.weight.device)  # (T,)
        return self.embedding(positions)  # (T, D)


def _check_input(x: Any, d_model: int, max_len: int, who: str, start: Any) -> tuple[int, int]:
    # Cast to an integer dtype, the sin/cos (or learned) table would truncate to 0/1/-1.
    hint = ": embed the token ids first (e.g. nn.Embedding), then add the positions"
    shape = f"(B, T, d_model={d_model})"
    check_input(x, d_model, who=who, shape=shape, min_ndim=2, hint=hint)
    T = x.shape[-2]
    start = check_int(start, "start", low=0)
    if T > max_len:
        raise ValueError(
            f"sequence length {T} exceeds max_len={max_len} of {who}: build it with a larger "
            "max_len or shorten the input"
        )
    if start + T > max_len:
        raise ValueError(
            f"positions {start}..{start + T - 1} exceed max_len={max_len} of {who} "
            f"(start={start}, sequence length {T})"
        )
    return T, start
