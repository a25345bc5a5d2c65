"""Tests for attnlab.mechanism.masking: causal, padding, combining and converting masks.

The converters are checked against the libraries whose conventions they translate to:
``F.scaled_dot_product_attention`` and ``nn.MultiheadAttention`` given the converted mask
must give what attnlab gives with its own boolean mask; Hugging Face's ``attention_mask``
(not imported here) is checked against its documented meaning: 1 for a real token, 0 for
padding, one row per sequence.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from torch import nn

from attnlab.mechanism.attention import scaled_dot_product_attention
from attnlab.mechanism.masking import (
    causal_mask,
    combine_masks,
    from_additive_mask,
    from_hf_attention_mask,
    from_ignore_mask,
    padding_mask,
    to_additive_mask,
    to_hf_attention_mask,
    to_ignore_mask,
    to_key_padding_mask,
)
from attnlab.mechanism.multihead import MultiHeadAttention

TOL = {torch.float64: 1e-10, torch.float32: 1e-5}

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


# --- converters: unit behaviour -----------------------------------------------------------

MASK = np.array([[True, False, False], [True, True, False]])
PAD = padding_mask(lengths=[3, 1], max_len=4)  # (2, 1, 4)


def test_to_ignore_mask_flips_and_keeps_the_kind() -> None:
    np.testing.assert_array_equal(to_ignore_mask(MASK), ~MASK)
    got = to_ignore_mask(torch.from_numpy(MASK))
    assert isinstance(got, torch.Tensor) and got.dtype == torch.bool
    np.testing.assert_array_equal(got.numpy(), ~MASK)


@pytest.mark.parametrize("fn", [to_ignore_mask, from_ignore_mask, to_key_padding_mask])
def test_boolean_converters_reject_0_1_masks(fn) -> None:
    with pytest.raises(
        TypeError, match=r"boolean mask, got a numpy.ndarray of shape \(2, 3\), int64"
    ):
        fn(MASK.astype(np.int64))


@pytest.mark.parametrize("shape", [(2, 4), (2, 1, 4), (2, 1, 1, 4)])
def test_to_key_padding_mask_marks_padding_true(shape) -> None:
    got = to_key_padding_mask(PAD.reshape(shape))
    np.testing.assert_array_equal(got, [[False, False, False, True], [False, True, True, True]])


def test_key_mask_converters_reject_a_per_query_mask() -> None:
    per_query = np.ones((2, 3, 4), dtype=bool)  # (B, T, S): differs per query in general
    for fn in (to_key_padding_mask, to_hf_attention_mask):
        with pytest.raises(ValueError, match=r"same for every query, got .*shape \(2, 3, 4\)"):
            fn(per_query)
    with pytest.raises(ValueError, match=r"key mask .*shape \(4,\)"):
        to_key_padding_mask(np.ones(4, dtype=bool))


def test_to_additive_mask_values_and_dtypes() -> None:
    got = to_additive_mask(MASK)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, [[0, -np.inf, -np.inf], [0, 0, -np.inf]])
    t = to_additive_mask(torch.from_numpy(MASK), dtype=torch.float16, fill=-1e4)
    assert t.dtype == torch.float16
    np.testing.assert_array_equal(t.float().numpy(), [[0, -1e4, -1e4], [0, 0, -1e4]])
    assert to_additive_mask(torch.from_numpy(MASK)).dtype == torch.get_default_dtype()


def test_to_additive_mask_refuses_a_fill_the_dtype_cannot_hold() -> None:
    """-1e9 in float16 would silently become -inf (torch's masked_fill raises too)."""
    with pytest.raises(ValueError, match=r"fill=-1e\+09 does not fit in torch.float16.*-65504"):
        to_additive_mask(torch.from_numpy(MASK), dtype=torch.float16, fill=-1e9)
    with pytest.raises(ValueError, match="does not fit in"):
        to_additive_mask(MASK, dtype=np.float16, fill=-1e5)


@pytest.mark.parametrize("fill", [0.0, 5.0, float("nan"), True, "-inf"])
def test_to_additive_mask_rejects_fills_that_do_not_mask(fill) -> None:
    with pytest.raises(ValueError, match="fill must be a negative number"):
        to_additive_mask(MASK, fill=fill)


@pytest.mark.parametrize("dtype", [np.int64, torch.float32, "float32"])
def test_to_additive_mask_rejects_a_dtype_that_is_not_a_float_of_the_same_library(dtype) -> None:
    with pytest.raises(TypeError, match="real floating dtype"):
        to_additive_mask(MASK, dtype=dtype)


def test_from_additive_mask_threshold() -> None:
    additive = np.array([[0.0, -np.inf, -1e9, 0.5]])
    np.testing.assert_array_equal(from_additive_mask(additive), [[True, False, True, True]])
    np.testing.assert_array_equal(
        from_additive_mask(additive, threshold=-1e4), [[True, False, False, True]]
    )


def test_from_additive_mask_rejects_booleans_and_nan() -> None:
    with pytest.raises(TypeError, match="needs no conversion"):
        from_additive_mask(MASK)
    with pytest.raises(ValueError, match="NaN"):
        from_additive_mask(np.array([0.0, np.nan]))


def test_hf_attention_mask_is_one_for_real_tokens_zero_for_padding() -> None:
    """The documented meaning: one row per sequence, 1 = attend to this token, 0 = padding."""
    tokens = torch.tensor([[7, 4, 9, 0], [5, 0, 0, 0]])  # 0 is the padding id
    attention_mask = (tokens != 0).long()  # what a tokenizer returns for this padded batch
    got = to_hf_attention_mask(padding_mask(tokens=tokens, pad_id=0))
    assert got.dtype == torch.int64
    torch.testing.assert_close(got, attention_mask)
    back = from_hf_attention_mask(attention_mask)
    assert back.shape == (2, 1, 4) and back.dtype == torch.bool
    torch.testing.assert_close(back, padding_mask(tokens=tokens, pad_id=0))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float32, bool])
def test_from_hf_attention_mask_accepts_ints_floats_and_booleans(dtype) -> None:
    got = from_hf_attention_mask(np.array([[1, 1, 0]], dtype=dtype))
    np.testing.assert_array_equal(got, [[[True, True, False]]])


def test_from_hf_attention_mask_rejects_other_values_and_shapes() -> None:
    with pytest.raises(ValueError, match=r"only 0 \(padding\) and 1"):
        from_hf_attention_mask(np.array([[0.0, -np.inf]]))
    with pytest.raises(ValueError, match=r"\(batch, length\), got .*shape \(3,\)"):
        from_hf_attention_mask(np.array([1, 1, 0]))


@settings(deadline=None, max_examples=40)
@given(arrays(np.bool_, st.tuples(st.integers(1, 4), st.integers(1, 5))))
def test_every_conversion_round_trips(mask) -> None:
    np.testing.assert_array_equal(from_ignore_mask(to_ignore_mask(mask)), mask)
    np.testing.assert_array_equal(from_additive_mask(to_additive_mask(mask)), mask)
    np.testing.assert_array_equal(from_hf_attention_mask(to_hf_attention_mask(mask))[:, 0], mask)
    np.testing.assert_array_equal(from_ignore_mask(to_key_padding_mask(mask)), mask)


# --- converters against PyTorch's own attention -------------------------------------------


def randn(*shape, dtype=torch.float64, seed=0) -> torch.Tensor:
    return torch.randn(*shape, dtype=dtype, generator=torch.Generator().manual_seed(seed))


def decoder_batch_mask(B=3, T=5) -> torch.Tensor:
    """(B, T, T) causal AND padding, every query with at least one visible key."""
    pad = padding_mask(lengths=torch.tensor([T, 3, 1])[:B], max_len=T)  # (B, 1, T)
    return combine_masks(causal_mask(T, like=pad), pad)  # (B, T, T)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_sdpa_gives_the_same_result_for_bool_and_additive_masks(dtype) -> None:
    """torch's bool attn_mask (True = attend) and float attn_mask (added) vs attnlab."""
    B, H, T, d = 3, 2, 5, 4
    q, k, v = (randn(B, H, T, d, dtype=dtype, seed=s) for s in range(3))
    mask = decoder_batch_mask(B, T)[:, None]  # (B, 1, T, T)
    ours, _ = scaled_dot_product_attention(q, k, v, mask)
    theirs_bool = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    theirs_additive = F.scaled_dot_product_attention(
        q, k, v, attn_mask=to_additive_mask(mask, dtype=dtype)
    )
    for theirs in (theirs_bool, theirs_additive):
        torch.testing.assert_close(ours, theirs, rtol=TOL[dtype], atol=TOL[dtype])


def twin_mha(D=8, H=2, seed=0) -> tuple[MultiHeadAttention, nn.MultiheadAttention]:
    """attnlab's MultiHeadAttention with nn.MultiheadAttention's (random) weights."""
    torch.manual_seed(seed)
    theirs = nn.MultiheadAttention(D, H, batch_first=True, dtype=torch.float64).eval()
    ours = MultiHeadAttention(D, H).double().eval()
    with torch.no_grad():
        theirs.in_proj_bias.normal_()
        for i, lin in enumerate((ours.W_q, ours.W_k, ours.W_v)):
            lin.weight.copy_(theirs.in_proj_weight[i * D : (i + 1) * D])  # (3D, D) -> (D, D)
            lin.bias.copy_(theirs.in_proj_bias[i * D : (i + 1) * D])
        ours.W_o.weight.copy_(theirs.out_proj.weight)
        ours.W_o.bias.copy_(theirs.out_proj.bias)
    return ours, theirs


def test_mha_key_padding_mask_and_ignore_attn_mask_match_attnlab() -> None:
    """nn.MultiheadAttention: key_padding_mask (B, S) and bool attn_mask, True = ignore."""
    B, T, D = 3, 5, 8
    x = randn(B, T, D, seed=1)
    pad = padding_mask(lengths=torch.tensor([5, 3, 1]), max_len=T)  # (B, 1, T)
    causal = causal_mask(T, like=x)  # (T, T)
    ours_layer, theirs_layer = twin_mha()
    with torch.no_grad():
        ours, ours_w = ours_layer(x, mask=combine_masks(causal, pad)[:, None])  # (B,1,T,T)
        theirs, theirs_w = theirs_layer(
            x,
            x,
            x,
            key_padding_mask=to_key_padding_mask(pad),  # (B, T), True = padding
            attn_mask=to_ignore_mask(causal),  # (T, T), True = future
            average_attn_weights=False,
        )
    torch.testing.assert_close(ours, theirs, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(ours_w, theirs_w, rtol=1e-10, atol=1e-10)


def test_mha_additive_attn_mask_matches_attnlab() -> None:
    """A float attn_mask of shape (B·H, T, S) is added to the scores of every head."""
    B, H, T, D = 3, 2, 5, 8
    x = randn(B, T, D, seed=2)
    mask = decoder_batch_mask(B, T)  # (B, T, T)
    ours_layer, theirs_layer = twin_mha(D, H)
    additive = to_additive_mask(mask, dtype=torch.float64)  # (B, T, T)
    additive = additive.repeat_interleave(H, dim=0)  # (B, T, T) -> (B·H, T, T), batch-major
    with torch.no_grad():
        ours, _ = ours_layer(x, mask=mask[:, None])  # (B, 1, T, T)
        theirs, _ = theirs_layer(x, x, x, attn_mask=additive)
    torch.testing.assert_close(ours, theirs, rtol=1e-10, atol=1e-10)


def test_hf_attention_mask_hides_padding_like_padding_mask() -> None:
    """With the converted attention_mask, padding a sequence changes none of its outputs."""
    D, T = 8, 3
    x = randn(1, T, D, seed=3)
    padded = torch.cat([x, randn(1, 3, D, seed=4)], dim=1)  # 3 pad vectors appended
    attention_mask = torch.tensor([[1, 1, 1, 0, 0, 0]])  # 1 = real token, 0 = padding
    layer, _ = twin_mha(D)
    with torch.no_grad():
        alone, _ = layer(x)
        masked, _ = layer(padded, mask=from_hf_attention_mask(attention_mask)[:, None])
        unmasked, _ = layer(padded)
    torch.testing.assert_close(masked[:, :T], alone, rtol=1e-10, atol=1e-10)
    assert (unmasked[:, :T] - alone).abs().max() > 1e-3  # without the mask, padding leaks


def test_a_finite_additive_fill_leaks_when_masked_scores_are_as_large() -> None:
    """softmax(scores + fill): a masked score of 1e4 plus a fill of -1e4 is 0, a tie."""
    scores = np.array([0.0, 1e4])  # key 0 visible, key 1 masked
    keep = np.array([True, False])
    leaked = torch.softmax(torch.from_numpy(scores + to_additive_mask(keep, fill=-1e4)), -1)
    exact = torch.softmax(torch.from_numpy(scores + to_additive_mask(keep)), -1)
    np.testing.assert_allclose(leaked.numpy(), [0.5, 0.5], atol=1e-12)
    np.testing.assert_array_equal(exact.numpy(), [1.0, 0.0])
    assert math.isinf(to_additive_mask(keep)[1])
