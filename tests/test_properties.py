"""Invariants of attention that must hold for every input (hypothesis property tests)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnlab.mechanism.attention import scaled_dot_product_attention
from attnlab.mechanism.masking import causal_mask, padding_mask
from attnlab.mechanism.multihead import MultiHeadAttention
from attnlab.mechanism.similarity import cosine_similarity, softmax

TOL = 1e-10
SETTINGS = settings(deadline=None, max_examples=40)
SETTINGS_MHA = settings(deadline=None, max_examples=20)  # a module call per example

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False, width=64)
dims = st.integers(1, 6)


def matrices(rows, cols, elements=finite):
    return arrays(np.float64, st.tuples(rows, cols), elements=elements)


@st.composite
def attention_inputs(draw, masked=True):
    """q (T, d), k (S, d), v (S, d_v) and a random boolean (T, S) mask (rows may be empty)."""
    T, S, d, d_v = draw(dims), draw(dims), draw(dims), draw(dims)
    q = draw(matrices(st.just(T), st.just(d)))
    k = draw(matrices(st.just(S), st.just(d)))
    v = draw(matrices(st.just(S), st.just(d_v)))
    mask = draw(arrays(np.bool_, (T, S))) if masked else None
    return q, k, v, mask


def mha_layer(d_model=8, n_heads=2, seed=0) -> MultiHeadAttention:
    torch.manual_seed(seed)
    return MultiHeadAttention(d_model, n_heads).double().eval()


# --- attention weights --------------------------------------------------------------------


@SETTINGS
@given(attention_inputs())
def test_weight_rows_sum_to_one_over_visible_keys(inputs) -> None:
    q, k, v, mask = inputs
    _, weights = scaled_dot_product_attention(q, k, v, mask)
    assert np.all(weights >= 0)
    assert np.all(weights[~mask] == 0)
    visible = mask.any(axis=-1)
    np.testing.assert_allclose(weights[visible].sum(axis=-1), 1.0, rtol=0, atol=TOL)


@SETTINGS
@given(attention_inputs())
def test_fully_masked_rows_give_zero_weights_and_output(inputs) -> None:
    q, k, v, mask = inputs
    mask = mask.copy()
    mask[0] = False  # the first query sees nothing
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    assert np.all(weights[0] == 0) and np.all(out[0] == 0)
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(weights))


@SETTINGS
@given(attention_inputs(), st.sampled_from([1e4, -1e4]))
def test_huge_logits_give_no_nan_or_inf(inputs, big) -> None:
    q, k, v, mask = inputs
    for m in (None, mask):
        out, weights = scaled_dot_product_attention(q, k, v, m, scale=big)
        assert np.all(np.isfinite(out)) and np.all(np.isfinite(weights))
        rows = slice(None) if m is None else m.any(axis=-1)
        np.testing.assert_allclose(weights[rows].sum(axis=-1), 1.0, rtol=0, atol=TOL)


@SETTINGS
@given(attention_inputs())
def test_numpy_and_torch_give_the_same_attention(inputs) -> None:
    q, k, v, mask = inputs
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    t_out, t_weights = scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v, mask)))
    assert isinstance(t_out, torch.Tensor) and isinstance(out, np.ndarray)
    np.testing.assert_allclose(t_out.numpy(), out, rtol=TOL, atol=TOL)
    np.testing.assert_allclose(t_weights.numpy(), weights, rtol=TOL, atol=TOL)


# --- causality, padding and order ---------------------------------------------------------

token_batches = arrays(
    np.float64, st.tuples(st.integers(1, 3), st.integers(2, 7), st.just(8)), elements=finite
)


def replaced(x: np.ndarray, where, seed: int) -> np.ndarray:
    """A copy of ``x`` with ``x[where]`` replaced by fresh random numbers."""
    out = x.copy()
    out[where] = np.random.default_rng(seed).normal(scale=5.0, size=out[where].shape)
    return out


@SETTINGS_MHA
@given(token_batches, st.data(), st.integers(0, 2**32 - 1))
def test_causal_outputs_ignore_future_tokens(x, data, seed) -> None:
    T = x.shape[1]
    t = data.draw(st.integers(0, T - 2), label="t")
    changed = replaced(x, np.s_[:, t + 1 :], seed)
    mha = mha_layer()
    mask = causal_mask(T, like=torch.zeros(1))
    with torch.no_grad():
        out = mha(torch.from_numpy(x), mask=mask)[0]
        out_changed = mha(torch.from_numpy(changed), mask=mask)[0]
    torch.testing.assert_close(out_changed[:, : t + 1], out[:, : t + 1], rtol=TOL, atol=TOL)


@SETTINGS_MHA
@given(token_batches, st.data(), st.integers(0, 2**32 - 1))
def test_padded_keys_change_no_output_of_real_tokens(x, data, seed) -> None:
    B, T, _ = x.shape
    lengths = np.array(data.draw(st.lists(st.integers(1, T), min_size=B, max_size=B)))
    changed = x
    for b, n in enumerate(lengths):
        changed = replaced(changed, np.s_[b, n:], seed + b)
    mha = mha_layer()
    mask = padding_mask(lengths=torch.from_numpy(lengths), max_len=T)[:, None]  # (B, 1, 1, S)
    with torch.no_grad():
        out = mha(torch.from_numpy(x), mask=mask)[0]
        out_changed = mha(torch.from_numpy(changed), mask=mask)[0]
    for b, n in enumerate(lengths):
        torch.testing.assert_close(out_changed[b, :n], out[b, :n], rtol=TOL, atol=TOL)


@SETTINGS_MHA
@given(token_batches, st.randoms(use_true_random=False))
def test_self_attention_without_positions_is_permutation_equivariant(x, rnd) -> None:
    T = x.shape[1]
    perm = list(range(T))
    rnd.shuffle(perm)
    mha = mha_layer()
    with torch.no_grad():
        out, weights = mha(torch.from_numpy(x))
        out_p, weights_p = mha(torch.from_numpy(x[:, perm]))
    torch.testing.assert_close(out_p, out[:, perm], rtol=TOL, atol=TOL)
    # the weights permute along both the query and the key axis
    torch.testing.assert_close(weights_p, weights[:, :, perm][:, :, :, perm], rtol=TOL, atol=TOL)


def test_permutation_equivariance_can_fail_with_a_causal_mask() -> None:
    """Sanity check of the test above: with a causal mask order matters, so it must break."""
    x = torch.randn(1, 4, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    perm = [3, 1, 2, 0]
    mha, mask = mha_layer(), causal_mask(4, like=x)
    with torch.no_grad():
        out, out_p = mha(x, mask=mask)[0], mha(x[:, perm], mask=mask)[0]
    assert not torch.allclose(out_p, out[:, perm])


# --- softmax ------------------------------------------------------------------------------

logits = arrays(
    np.float64, st.tuples(st.integers(1, 4), st.integers(1, 6)), elements=st.floats(-1e4, 1e4)
)


@SETTINGS
@given(logits, st.sampled_from([0.05, 1.0, 7.0]))
def test_softmax_rows_sum_to_one_without_overflow(x, temperature) -> None:
    for arr in (x, torch.from_numpy(x)):
        w = np.asarray(softmax(arr, temperature=temperature))
        assert np.all(np.isfinite(w)) and np.all(w >= 0)
        np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=TOL)


@SETTINGS
@given(logits, st.floats(-1e3, 1e3))
def test_softmax_ignores_a_constant_shift(x, c) -> None:
    np.testing.assert_allclose(softmax(x + c), softmax(x), rtol=1e-9, atol=1e-12)


@SETTINGS
@given(logits)
def test_softmax_numpy_and_torch_agree(x) -> None:
    np.testing.assert_allclose(
        softmax(torch.from_numpy(x), axis=0).numpy(), softmax(x, axis=0), rtol=TOL, atol=TOL
    )


@SETTINGS
@given(logits.filter(lambda x: x.shape[-1] > 1))
def test_softmax_extremes_are_exact(x) -> None:
    x = x.copy()
    x[:, 0] = 1e4
    x[:, 1:] = -1e4
    np.testing.assert_array_equal(softmax(x)[:, 0], 1.0)


# --- cosine similarity --------------------------------------------------------------------

vectors = st.integers(1, 8).flatmap(
    lambda n: st.tuples(*(arrays(np.float64, (3, n), elements=st.floats(-1e3, 1e3)),) * 2)
)


@SETTINGS
@given(vectors)
def test_cosine_lies_in_minus_one_to_one(ab) -> None:
    a, b = ab
    for x, y in ((a, b), (torch.from_numpy(a), torch.from_numpy(b))):
        c = np.asarray(cosine_similarity(x, y))
        assert np.all(c >= -1.0) and np.all(c <= 1.0)


@SETTINGS
@given(vectors, st.floats(1e-3, 1e3), st.sampled_from([1.0, -1.0]))
def test_cosine_is_scale_invariant(ab, scale, sign) -> None:
    a, b = ab
    norms_ok = (np.linalg.norm(a, axis=-1) > 1e-3) & (np.linalg.norm(b, axis=-1) > 1e-3)
    c = cosine_similarity(a, b)
    c_scaled = cosine_similarity(a, sign * scale * b)
    np.testing.assert_allclose(c_scaled[norms_ok], sign * c[norms_ok], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_cosine_numpy_and_torch_agree(kind) -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    expected = cosine_similarity(a, b)
    if kind == "torch":
        a, b = torch.from_numpy(a), torch.from_numpy(b)
    np.testing.assert_allclose(np.asarray(cosine_similarity(a, b)), expected, rtol=TOL, atol=TOL)
