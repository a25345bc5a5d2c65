"""Tests for attnlab.masking: causal, padding, combining and converting masks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlab.masking import causal_mask, combine_masks, from_ignore_mask, padding_mask

# --- causal_mask --------------------------------------------------------------------------


def test_causal_mask_values() -> None:
    expected = np.array(
        [
            [True, False, False],
            [True, True, False],
            [True, True, True],
        ]
    )
    got = causal_mask(3)
    assert isinstance(got, np.ndarray) and got.dtype == bool
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(("q_len", "k_len"), [(1, 1), (4, 4), (2, 5), (1, 6)])
def test_causal_mask_lets_query_i_see_keys_up_to_its_position(q_len, k_len) -> None:
    """Queries are the last q_len positions: query i sits at key position i + k_len - q_len."""
    got = causal_mask(q_len, k_len)
    assert got.shape == (q_len, k_len)
    for i in range(q_len):
        for j in range(k_len):
            assert got[i, j] == (j <= i + k_len - q_len)


def test_causal_mask_decoding_one_token_sees_everything() -> None:
    np.testing.assert_array_equal(causal_mask(1, 6), np.ones((1, 6), dtype=bool))


def test_causal_mask_like_a_tensor_returns_a_tensor_on_its_device() -> None:
    like = torch.zeros(2, dtype=torch.float32)
    got = causal_mask(4, like=like)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.bool
    assert got.device == like.device
    np.testing.assert_array_equal(got.numpy(), np.tril(np.ones((4, 4), dtype=bool)))


def test_causal_mask_like_numpy_returns_numpy() -> None:
    assert isinstance(causal_mask(3, like=np.zeros(1)), np.ndarray)


def test_causal_mask_accepts_numpy_integers() -> None:
    assert causal_mask(np.int64(3)).shape == (3, 3)


@pytest.mark.parametrize(
    ("args", "name"), [((0,), "q_len"), ((3, 0), "k_len"), ((2.0,), "q_len"), ((True,), "q_len")]
)
def test_causal_mask_rejects_bad_lengths(args, name) -> None:
    with pytest.raises(ValueError, match=f"{name} must be a positive integer"):
        causal_mask(*args)


@pytest.mark.parametrize(("q_len", "k_len"), [(5, 2), (2, 1), (7, 6)])
def test_causal_mask_rejects_more_queries_than_keys(q_len, k_len) -> None:
    """The first q_len - k_len queries would see no key at all (fully masked rows)."""
    with pytest.raises(ValueError, match=rf"q_len={q_len} > k_len={k_len}"):
        causal_mask(q_len, k_len)


# --- padding_mask -------------------------------------------------------------------------


def test_padding_mask_from_lengths() -> None:
    got = padding_mask(lengths=[3, 1, 0], max_len=4)
    expected = np.array(
        [
            [True, True, True, False],
            [True, False, False, False],
            [False, False, False, False],
        ]
    )[:, None, :]
    assert isinstance(got, np.ndarray) and got.shape == (3, 1, 4)
    np.testing.assert_array_equal(got, expected)


def test_padding_mask_max_len_defaults_to_the_longest() -> None:
    assert padding_mask(lengths=np.array([2, 5])).shape == (2, 1, 5)


def test_padding_mask_from_tensor_lengths_is_a_tensor() -> None:
    got = padding_mask(lengths=torch.tensor([2, 3]), max_len=3)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.bool
    np.testing.assert_array_equal(got.numpy(), [[[True, True, False]], [[True, True, True]]])


@pytest.mark.parametrize("kind", ["list", "numpy", "torch"])
def test_padding_mask_from_tokens(kind) -> None:
    tokens = [[5, 7, 0, 0], [3, 0, 2, 0]]
    if kind == "numpy":
        tokens = np.array(tokens)
    elif kind == "torch":
        tokens = torch.tensor(tokens)
    got = padding_mask(tokens=tokens, pad_id=0)
    assert isinstance(got, torch.Tensor if kind == "torch" else np.ndarray)
    expected = [[[True, True, False, False]], [[True, False, True, False]]]
    np.testing.assert_array_equal(np.asarray(got), expected)


def test_padding_mask_combines_with_causal_mask() -> None:
    pad = padding_mask(lengths=[2, 3], max_len=3)  # (B, 1, S)
    mask = pad & causal_mask(3)  # (B, 1, S) & (T, S) -> (B, T, S)
    assert mask.shape == (2, 3, 3)
    np.testing.assert_array_equal(mask[0], [[1, 0, 0], [1, 1, 0], [1, 1, 0]])
    np.testing.assert_array_equal(mask[1], np.tril(np.ones((3, 3))))


def test_padding_mask_needs_exactly_one_source() -> None:
    with pytest.raises(ValueError, match="either lengths"):
        padding_mask()
    with pytest.raises(ValueError, match="either lengths"):
        padding_mask(lengths=[1], tokens=[[1]], pad_id=0)


def test_padding_mask_tokens_need_pad_id() -> None:
    with pytest.raises(ValueError, match="needs the pad_id"):
        padding_mask(tokens=[[1, 2]])


def test_padding_mask_rejects_1d_tokens() -> None:
    with pytest.raises(ValueError, match=r"\(batch, length\), got a numpy.ndarray of shape \(3,\)"):
        padding_mask(tokens=[1, 2, 0], pad_id=0)


@pytest.mark.parametrize("lengths", [[[1, 2]], [1.5, 2.0]])
def test_padding_mask_rejects_bad_lengths_array(lengths) -> None:
    with pytest.raises(ValueError, match=r"lengths must be a 1-D array of integers.*shape"):
        padding_mask(lengths=lengths)


@pytest.mark.parametrize("lengths", [[2, 5], [-1, 2]])
def test_padding_mask_rejects_lengths_out_of_range(lengths) -> None:
    with pytest.raises(ValueError, match=r"every length must lie in 0\.\.4"):
        padding_mask(lengths=lengths, max_len=4)


# --- combine_masks and from_ignore_mask ---------------------------------------------------


def test_combine_masks_is_logical_and_with_broadcasting() -> None:
    a = np.array([[True, True, False]])  # (1, 3)
    b = np.array([[True], [False]])  # (2, 1)
    np.testing.assert_array_equal(combine_masks(a, None, b), [[True, True, False], [False] * 3])


def test_combine_masks_single_and_none() -> None:
    m = torch.tensor([True, False])
    assert combine_masks(None, m) is m
    assert combine_masks(None, None) is None


def test_combine_masks_rejects_non_boolean() -> None:
    with pytest.raises(TypeError, match=r"boolean.*shape \(2,\), int64"):
        combine_masks(np.array([True, False]), np.array([1, 0]))


def test_combine_masks_rejects_shapes_that_do_not_broadcast() -> None:
    with pytest.raises(ValueError, match=r"shapes \(2, 3\) and \(4,\) do not broadcast"):
        combine_masks(np.ones((2, 3), dtype=bool), np.ones(4, dtype=bool))


def test_combine_masks_rejects_mixed_kinds() -> None:
    with pytest.raises(TypeError, match="mixed array kinds"):
        combine_masks(np.ones(2, dtype=bool), torch.ones(2, dtype=torch.bool))


def test_from_ignore_mask_flips_the_convention() -> None:
    ignore = torch.tensor([[False, False, True]])  # key_padding_mask: True = padding
    np.testing.assert_array_equal(from_ignore_mask(ignore).numpy(), [[True, True, False]])
    np.testing.assert_array_equal(from_ignore_mask(np.array([True])), [False])


def test_from_ignore_mask_rejects_float_masks() -> None:
    with pytest.raises(
        TypeError, match=r"boolean mask, got a torch.Tensor of shape \(3,\), float32"
    ):
        from_ignore_mask(torch.zeros(3))
