"""Tests for attnlab.positional: the sinusoidal table, its offset property, both modules."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.positional import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    offset_matrix,
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
    np.testing.assert_allclose(pe[lo:hi] @ m, pe[lo + k : hi + k], rtol=0, atol=1e-9)
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
    "module", [SinusoidalPositionalEncoding(8, 5), LearnedPositionalEmbedding(5, 8)]
)
def test_modules_reject_too_long_and_wrong_width(module: torch.nn.Module) -> None:
    with pytest.raises(ValueError, match=r"length 6 exceeds max_len=5"):
        module(torch.zeros(2, 6, 8))
    with pytest.raises(ValueError, match=r"d_model=8"):
        module(torch.zeros(2, 5, 7))
    with pytest.raises(TypeError, match=r"torch\.Tensor"):
        module(np.zeros((2, 5, 8)))


@pytest.mark.parametrize(
    "module", [SinusoidalPositionalEncoding(8, 5), LearnedPositionalEmbedding(5, 8)]
)
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool])
def test_modules_reject_non_float_input(module: torch.nn.Module, dtype: torch.dtype) -> None:
    """Integer input would truncate the sin/cos table to 0/1: embed the token ids first."""
    with pytest.raises(TypeError, match=rf"{str(dtype).removeprefix('torch.')}.*embed"):
        module(torch.zeros(2, 5, 8, dtype=dtype))


def test_learned_embedding_adds_rows_and_learns() -> None:
    torch.manual_seed(0)
    module = LearnedPositionalEmbedding(max_len=10, d_model=4)
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
