"""Tests for attnlab.mechanism.positional: the sinusoidal table, its offset property, both modules."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.mechanism.attention import scaled_dot_product_attention
from attnlab.mechanism.masking import causal_mask
from attnlab.mechanism.positional import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    apply_rope,
    index_encoding,
    offset_matrix,
    permutation_gap,
    sinusoidal_encoding,
)


def _pe_by_the_formula(length: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """The paper's formula, one entry at a time (slow and obviously right)."""
    pe = np.zeros((length, d_model))
    for pos in range(length):
        for j in range(d_model):
            two_i = j - (j % 2)
            angle = pos / base ** (two_i / d_model)
            pe[pos, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return pe


@pytest.mark.parametrize(("length", "d_model"), [(1, 1), (7, 2), (5, 3), (50, 16), (13, 33)])
def test_sinusoidal_matches_formula_for_even_and_odd_d_model(length: int, d_model: int) -> None:
    pe = sinusoidal_encoding(length, d_model)
    assert isinstance(pe, np.ndarray)
    assert pe.shape == (length, d_model)
    assert pe.dtype == np.float64
    np.testing.assert_allclose(pe, _pe_by_the_formula(length, d_model), rtol=0, atol=1e-12)


def test_sinusoidal_custom_base_and_first_row() -> None:
    pe = sinusoidal_encoding(4, 6, base=100.0)
    np.testing.assert_allclose(pe, _pe_by_the_formula(4, 6, base=100.0), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(pe[0], [0, 1, 0, 1, 0, 1])


def test_sinusoidal_values_in_unit_range_and_rows_distinct() -> None:
    pe = sinusoidal_encoding(512, 64)
    assert np.abs(pe).max() <= 1.0
    distances = np.linalg.norm(pe[:, None] - pe[None, :], axis=-1)
    off_diagonal = distances[~np.eye(512, dtype=bool)]
    assert off_diagonal.min() > 0.1, "two positions got (almost) the same code"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
def test_sinusoidal_like_tensor_returns_tensor(dtype: torch.dtype) -> None:
    like = torch.zeros(2, dtype=dtype)
    pe = sinusoidal_encoding(9, 8, like=like)
    assert isinstance(pe, torch.Tensor)
    assert pe.device == like.device
    expected = dtype if dtype.is_floating_point else torch.get_default_dtype()
    assert pe.dtype == expected
    torch.testing.assert_close(
        pe.double(), torch.from_numpy(_pe_by_the_formula(9, 8)), rtol=0, atol=1e-6
    )


def test_sinusoidal_like_numpy_keeps_float_dtype() -> None:
    assert sinusoidal_encoding(3, 4, like=np.zeros(1, np.float32)).dtype == np.float32
    assert sinusoidal_encoding(3, 4, like=np.zeros(1, np.int32)).dtype == np.float64


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"length": 0, "d_model": 4}, "length"),
        ({"length": 3, "d_model": 0}, "d_model"),
        ({"length": 3, "d_model": 2.5}, "d_model"),
        ({"length": 3, "d_model": 4, "base": 1.0}, "base"),
    ],
)
def test_sinusoidal_rejects_bad_arguments(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        sinusoidal_encoding(**kwargs)


@settings(max_examples=40, deadline=None)
@given(
    k=st.integers(-30, 30),
    half_d=st.integers(1, 24),
    base=st.sampled_from([10.0, 100.0, 10000.0]),
)
def test_offset_matrix_shifts_every_position(k: int, half_d: int, base: float) -> None:
    d_model = 2 * half_d
    pe = sinusoidal_encoding(100, d_model, base=base)
    m = offset_matrix(k, d_model, base=base)
    lo, hi = max(0, -k), min(100, 100 - k)
    # Column convention: M_k PE[p] = PE[p + k]; for the rows of a table, PE @ M_kᵀ.
    np.testing.assert_allclose(pe[lo:hi] @ m.T, pe[lo + k : hi + k], rtol=0, atol=1e-9)
    p = lo + (hi - lo) // 2
    np.testing.assert_allclose(m @ pe[p], pe[p + k], rtol=0, atol=1e-9)
    # A rotation: orthogonal, and the offset -k undoes it.
    np.testing.assert_allclose(m @ m.T, np.eye(d_model), rtol=0, atol=1e-12)
    np.testing.assert_allclose(offset_matrix(-k, d_model, base=base), m.T, rtol=0, atol=1e-12)


def test_offset_matrix_is_block_diagonal_and_independent_of_position() -> None:
    m = offset_matrix(3, 8)
    blocks = np.zeros((8, 8), dtype=bool)
    for i in range(0, 8, 2):
        blocks[i : i + 2, i : i + 2] = True
    np.testing.assert_array_equal(m[~blocks], 0.0)
    np.testing.assert_allclose(offset_matrix(0, 8), np.eye(8), rtol=0, atol=0)
    # Composition: shifting by 2 then by 3 is shifting by 5.
    np.testing.assert_allclose(offset_matrix(2, 8) @ m, offset_matrix(5, 8), rtol=0, atol=1e-12)
    # The first block, entry by entry: (sin, cos) of the fastest pair turned by 3 radians.
    c, s_ = math.cos(3.0), math.sin(3.0)
    np.testing.assert_allclose(m[:2, :2], [[c, s_], [-s_, c]], rtol=0, atol=1e-15)


def test_offset_matrix_maps_a_position_by_hand() -> None:
    """PE(p) for d_model = 2 is (sin p, cos p); M_k must give (sin(p + k), cos(p + k))."""
    m = offset_matrix(2, 2)
    np.testing.assert_allclose(
        m @ np.array([math.sin(0.5), math.cos(0.5)]),
        [math.sin(2.5), math.cos(2.5)],
        rtol=0,
        atol=1e-15,
    )


def test_sinusoid_dot_product_depends_only_on_offset() -> None:
    pe = sinusoidal_encoding(60, 16)
    gram = pe @ pe.T  # (T, T)
    for k in range(-20, 21):
        diagonal = np.diagonal(gram, offset=k)
        np.testing.assert_allclose(diagonal, diagonal[0], rtol=0, atol=1e-12)
    # sum_i cos(k ω_i): 8 at k = 0, the maximum.
    np.testing.assert_allclose(np.diagonal(gram), 8.0, rtol=0, atol=1e-12)


def test_offset_matrix_like_tensor_and_errors() -> None:
    m = offset_matrix(1, 4, like=torch.zeros(1, dtype=torch.float32))
    assert isinstance(m, torch.Tensor) and m.dtype == torch.float32 and m.shape == (4, 4)
    with pytest.raises(ValueError, match="even d_model"):
        offset_matrix(1, 5)
    with pytest.raises(ValueError, match="integer offset"):
        offset_matrix(1.5, 4)


def test_sinusoidal_module_adds_table_and_is_a_buffer() -> None:
    module = SinusoidalPositionalEncoding(d_model=6, max_len=10)
    assert list(module.parameters()) == []
    assert "pe" in dict(module.named_buffers())
    x = torch.randn(3, 7, 6, dtype=torch.float64)
    expected = x + torch.from_numpy(_pe_by_the_formula(7, 6))
    torch.testing.assert_close(module(x), expected, rtol=0, atol=1e-6)


def test_sinusoidal_module_follows_dtype() -> None:
    module = SinusoidalPositionalEncoding(4, 5).double()
    x = torch.zeros(1, 5, 4, dtype=torch.float64)
    out = module(x)
    assert out.dtype == torch.float64
    torch.testing.assert_close(
        out[0], torch.from_numpy(_pe_by_the_formula(5, 4)), rtol=0, atol=1e-12
    )


@pytest.mark.parametrize(
    "module", [SinusoidalPositionalEncoding(8, 5), LearnedPositionalEmbedding(8, 5)]
)
def test_modules_reject_too_long_and_wrong_width(module: torch.nn.Module) -> None:
    with pytest.raises(ValueError, match=r"length 6 exceeds max_len=5"):
        module(torch.zeros(2, 6, 8))
    with pytest.raises(ValueError, match=r"d_model=8"):
        module(torch.zeros(2, 5, 7))
    with pytest.raises(TypeError, match=r"torch\.Tensor"):
        module(np.zeros((2, 5, 8)))


@pytest.mark.parametrize(
    "module", [SinusoidalPositionalEncoding(8, 5), LearnedPositionalEmbedding(8, 5)]
)
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool])
def test_modules_reject_non_float_input(module: torch.nn.Module, dtype: torch.dtype) -> None:
    """Integer input would truncate the sin/cos table to 0/1: embed the token ids first."""
    with pytest.raises(TypeError, match=rf"{str(dtype).removeprefix('torch.')}.*embed"):
        module(torch.zeros(2, 5, 8, dtype=dtype))


@pytest.mark.parametrize(
    "module", [SinusoidalPositionalEncoding(8, 10), LearnedPositionalEmbedding(8, 10)]
)
def test_modules_give_positions_from_start(module: torch.nn.Module) -> None:
    """forward(x, start): the rows start..start+T-1 of the table, as a KV cache needs."""
    x = torch.randn(2, 10, 8)
    with torch.no_grad():
        whole = module(x)
        for start, stop in ((0, 3), (3, 4), (4, 10)):
            part = module(x[:, start:stop], start)
            torch.testing.assert_close(part, whole[:, start:stop], rtol=0, atol=0)
        assert torch.equal(module(x[:, :4], np.int64(0)), whole[:, :4])
    with pytest.raises(ValueError, match=r"positions 8\.\.10 exceed max_len=10"):
        module(x[:, :3], 8)
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="start must be a non-negative integer"):
            module(x[:, :3], bad)


def test_learned_embedding_adds_rows_and_learns() -> None:
    torch.manual_seed(0)
    module = LearnedPositionalEmbedding(d_model=4, max_len=10)
    (table,) = module.parameters()
    assert table.shape == (10, 4)
    x = torch.randn(2, 6, 4)
    torch.testing.assert_close(module(x), x + table[:6], rtol=0, atol=0)
    module(x).sum().backward()
    assert table.grad is not None
    torch.testing.assert_close(table.grad[:6], torch.full((6, 4), 2.0), rtol=0, atol=0)
    torch.testing.assert_close(table.grad[6:], torch.zeros(4, 4), rtol=0, atol=0)


def test_positions_break_permutation_equivariance() -> None:
    """Without positions, permuting tokens permutes the encoded rows; with them, it does not."""
    x = torch.randn(1, 5, 8, dtype=torch.float64)
    perm = torch.tensor([3, 0, 4, 1, 2])
    module = SinusoidalPositionalEncoding(8, 5).double()
    assert not torch.allclose(module(x[:, perm]), module(x)[:, perm])


# --- naive codes ----------------------------------------------------------------------------


def test_index_encoding_raw_and_divided() -> None:
    raw = index_encoding(5, 3)
    np.testing.assert_array_equal(raw, np.repeat(np.arange(5.0)[:, None], 3, axis=1))
    frac = index_encoding(4, 2, divide_by_length=True)
    np.testing.assert_array_equal(frac[:, 0], [0.0, 0.25, 0.5, 0.75])
    # The failure it is kept for: position 2 gets different codes at lengths 4 and 8.
    assert index_encoding(8, 2, divide_by_length=True)[2, 0] == 0.25 != frac[2, 0]
    t = index_encoding(3, 2, like=torch.zeros(1, dtype=torch.float32))
    assert isinstance(t, torch.Tensor) and t.dtype == torch.float32
    with pytest.raises(ValueError, match="length"):
        index_encoding(0, 2)


# --- rotary position embedding --------------------------------------------------------------


def _rope_by_complex_numbers(x: np.ndarray, positions: np.ndarray, base: float) -> np.ndarray:
    """RoPE as written in the RoFormer paper: pair (x_2i, x_2i+1) is z, rotated by e^{i p ω}."""
    d = x.shape[-1]
    out = np.empty_like(x)
    for t, p in enumerate(positions):
        for i in range(d // 2):
            z = complex(x[..., t, 2 * i].item(), x[..., t, 2 * i + 1].item())
            w = z * complex(math.cos(p * base ** (-2 * i / d)), math.sin(p * base ** (-2 * i / d)))
            out[..., t, 2 * i], out[..., t, 2 * i + 1] = w.real, w.imag
    return out


@settings(max_examples=30, deadline=None)
@given(
    T=st.integers(1, 9),
    half_d=st.integers(1, 8),
    base=st.sampled_from([10.0, 10000.0]),
    shift=st.integers(0, 50),
    seed=st.integers(0, 2**16),
)
def test_rope_matches_the_complex_number_formula(
    T: int, half_d: int, base: float, shift: int, seed: int
) -> None:
    x = np.random.default_rng(seed).standard_normal((T, 2 * half_d))
    positions = np.arange(T) * 3 + shift  # not consecutive, not starting at 0
    expected = _rope_by_complex_numbers(x, positions, base)
    np.testing.assert_allclose(apply_rope(x, positions, base=base), expected, rtol=0, atol=1e-12)
    out_t = apply_rope(torch.from_numpy(x), torch.from_numpy(positions), base=base)
    assert isinstance(out_t, torch.Tensor) and out_t.dtype == torch.float64
    np.testing.assert_allclose(out_t.numpy(), expected, rtol=0, atol=1e-12)


def test_rope_batched_heads_default_positions_and_vectorised_complex() -> None:
    x = torch.randn(2, 3, 6, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    out = apply_rope(x)  # (B, H, T, d)
    z = torch.view_as_complex(x.reshape(2, 3, 6, 4, 2).contiguous())  # (B, H, T, d/2)
    omega = 10000.0 ** (-torch.arange(0, 8, 2, dtype=torch.float64) / 8)  # (d/2,)
    angle = torch.arange(6, dtype=torch.float64)[:, None] * omega  # (T, d/2)
    expected = torch.view_as_real(z * torch.polar(torch.ones_like(angle), angle)).flatten(-2)
    torch.testing.assert_close(out, expected, rtol=0, atol=1e-12)
    # position 0 is not rotated; every rotation keeps the length of each pair
    torch.testing.assert_close(out[..., 0, :], x[..., 0, :], rtol=0, atol=0)
    torch.testing.assert_close(out.norm(dim=-1), x.norm(dim=-1), rtol=0, atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_rope_scores_depend_only_on_the_offset(dtype: torch.dtype) -> None:
    g = torch.Generator().manual_seed(0)
    q, k = (
        torch.randn(1, 16, dtype=dtype, generator=g),
        torch.randn(1, 16, dtype=dtype, generator=g),
    )
    tol = 1e-4 if dtype == torch.float32 else 1e-10
    for offset in (-7, 0, 3, 40):
        scores = [
            float(apply_rope(q, [p]) @ apply_rope(k, [p + offset]).T) for p in (0, 5, 123, 1000)
        ]
        np.testing.assert_allclose(scores, scores[0], rtol=0, atol=tol)
    # ... but not a constant: the offset changes the score
    s0 = float(apply_rope(q, [0]) @ apply_rope(k, [0]).T)
    s9 = float(apply_rope(q, [0]) @ apply_rope(k, [9]).T)
    assert abs(s0 - s9) > 0.1


def test_rope_is_the_sinusoid_rotation() -> None:
    """Rotating the vector (0, 1, 0, 1, ...) = PE[0] by RoPE at position p gives (-sin, cos)."""
    pe = sinusoidal_encoding(10, 8)
    rotated = apply_rope(np.tile([0.0, 1.0], (10, 4)))  # (T, 8): each pair (0, 1) turned by pω
    np.testing.assert_allclose(rotated[:, 0::2], -pe[:, 0::2], rtol=0, atol=1e-12)
    np.testing.assert_allclose(rotated[:, 1::2], pe[:, 1::2], rtol=0, atol=1e-12)


def test_rope_keeps_float32_and_promotes_ints() -> None:
    x32 = np.ones((3, 4), dtype=np.float32)
    assert apply_rope(x32).dtype == np.float32
    assert apply_rope(torch.ones(3, 4, dtype=torch.int64)).dtype == torch.get_default_dtype()


@pytest.mark.parametrize(
    ("x", "kwargs", "error", "match"),
    [
        (np.zeros((3, 5)), {}, ValueError, "even feature size"),
        (np.zeros(4), {}, ValueError, r"\(\.\.\., T, d\)"),
        (np.zeros((3, 4)), {"positions": [0, 1]}, ValueError, "T=3"),
        (np.zeros((3, 4)), {"base": 0.5}, ValueError, "base"),
        ("abc", {}, TypeError, "x must be"),
    ],
)
def test_rope_rejects_bad_input(x, kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        apply_rope(x, **kwargs)


# --- permutation equivariance ---------------------------------------------------------------


def _self_attention(x):
    return scaled_dot_product_attention(x, x, x)[0]


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_permutation_gap_is_zero_for_attention_without_positions(kind: str) -> None:
    x = np.random.default_rng(0).standard_normal((2, 6, 8))
    x = x if kind == "numpy" else torch.from_numpy(x)
    perm = [2, 0, 5, 1, 4, 3]
    assert permutation_gap(_self_attention, x, perm) < 1e-12
    # Adding positions breaks it: the same token gets another code at another place.
    pe = sinusoidal_encoding(6, 8, like=x)
    assert permutation_gap(lambda x: _self_attention(x + pe), x, perm) > 0.1
    # So does a causal mask (token j sees tokens 0..j, an order-dependent set).
    mask = causal_mask(6, like=x)
    gap = permutation_gap(lambda x: scaled_dot_product_attention(x, x, x, mask)[0], x, perm)
    assert gap > 0.1


def test_permutation_gap_errors() -> None:
    x = np.zeros((4, 2))
    with pytest.raises(ValueError, match=r"permutation of 0\.\.3"):
        permutation_gap(_self_attention, x, [0, 1, 1, 2])
    with pytest.raises(ValueError, match="one row per token"):
        permutation_gap(lambda x: x.sum(axis=0, keepdims=True), x, [1, 0, 3, 2])


def test_permutation_gap_of_a_layer_with_parameters() -> None:
    """A module's output requires grad; the gap is still a plain float, with no warning."""
    torch.manual_seed(0)
    layer = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    x = torch.randn(1, 5, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gap = permutation_gap(lambda x: layer(x, x, x)[0], x, [4, 2, 0, 1, 3])
    assert isinstance(gap, float) and gap < 1e-5
