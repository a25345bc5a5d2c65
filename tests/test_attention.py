"""Tests for attnlab.mechanism.attention: scaled_dot_product_attention and SelfAttention."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attnlab.mechanism.attention import (
    CrossAttention,
    OneLayerAttention,
    SelfAttention,
    scaled_dot_product_attention,
)
from attnlab.mechanism.masking import causal_mask
from attnlab.tasks.data import pronoun_batch, pronoun_batches
from attnlab.tasks.training import train

TOL = 1e-10


def as_numpy(x) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def qkv(*lead, T=4, S=5, d=8, d_v=3, seed=0):
    rng = np.random.default_rng(seed)
    return (
        rng.normal(size=(*lead, T, d)),
        rng.normal(size=(*lead, S, d)),
        rng.normal(size=(*lead, S, d_v)),
    )


def naive_attention(q, k, v, mask=None, scale=None):
    """Loop-by-loop reference: one query at a time, plain Python sums over keys."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    out = np.zeros(q.shape[:-1] + v.shape[-1:])
    weights = np.zeros(q.shape[:-1] + k.shape[-2:-1])
    for idx in np.ndindex(q.shape[:-1]):
        lead = idx[:-1]
        s = np.array([q[idx] @ k[(*lead, j)] * scale for j in range(k.shape[-2])])
        visible = np.ones_like(s, dtype=bool) if mask is None else mask[idx]
        if visible.any():
            e = np.where(visible, np.exp(s - s[visible].max()), 0.0)
            weights[idx] = e / e.sum()
            out[idx] = weights[idx] @ v[tuple(lead)]
    return out, weights


# --- the seeds' worked example ------------------------------------------------------------


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_seeds_worked_example(kind) -> None:
    """q·k1 = 112, q·k2 = 96, d = 64: /8 -> 14, 12; softmax -> 0.88, 0.12; z = 0.88 v1 + 0.12 v2."""
    q = np.full((1, 64), 2.0)
    k = np.stack([np.full(64, 0.875), np.full(64, 0.75)])
    v = np.array([[1.0, 0.0], [0.0, 1.0]])
    if kind == "torch":
        q, k, v = (torch.from_numpy(a) for a in (q, k, v))
    out, weights = scaled_dot_product_attention(q, k, v)
    np.testing.assert_array_equal(np.round(as_numpy(weights), 2), [[0.88, 0.12]])
    np.testing.assert_allclose(as_numpy(out), as_numpy(weights), rtol=0, atol=TOL)  # v = I
    np.testing.assert_allclose(as_numpy(weights)[0, 0], 1 / (1 + math.exp(-2)), atol=TOL)


# --- values, shapes, kinds ----------------------------------------------------------------


@pytest.mark.parametrize("lead", [(), (3,), (2, 3)])
@pytest.mark.parametrize("masked", [False, True])
def test_matches_loop_reference(lead, masked) -> None:
    q, k, v = qkv(*lead, seed=1)
    rng = np.random.default_rng(2)
    mask = rng.random((*lead, 4, 5)) < 0.5 if masked else None
    if masked:
        mask[..., 1, :] = False  # one fully masked query
        mask[..., 0, 0] = True
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    ref_out, ref_weights = naive_attention(q, k, v, mask)
    assert out.shape == (*lead, 4, 3) and weights.shape == (*lead, 4, 5)
    np.testing.assert_allclose(out, ref_out, rtol=0, atol=TOL)
    np.testing.assert_allclose(weights, ref_weights, rtol=0, atol=TOL)


def test_custom_scale() -> None:
    q, k, v = qkv(seed=3)
    out, weights = scaled_dot_product_attention(q, k, v, scale=0.3)
    ref_out, ref_weights = naive_attention(q, k, v, scale=0.3)
    np.testing.assert_allclose(out, ref_out, rtol=0, atol=TOL)
    np.testing.assert_allclose(weights, ref_weights, rtol=0, atol=TOL)


def test_broadcasts_keys_over_heads() -> None:
    q, _, _ = qkv(2, 3, seed=4)
    _, k, v = qkv(2, 1, seed=5)  # one set of keys/values shared by 3 heads
    out, _ = scaled_dot_product_attention(q, k, v)
    ref_out, _ = naive_attention(
        q, np.broadcast_to(k, (2, 3, 5, 8)), np.broadcast_to(v, (2, 3, 5, 3))
    )
    np.testing.assert_allclose(out, ref_out, rtol=0, atol=TOL)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_torch_in_torch_out_same_dtype(dtype) -> None:
    q, k, v = (torch.from_numpy(a).to(dtype) for a in qkv(2, seed=6))
    out, weights = scaled_dot_product_attention(q, k, v)
    assert isinstance(out, torch.Tensor) and isinstance(weights, torch.Tensor)
    assert out.dtype == weights.dtype == dtype


def test_numpy_in_numpy_out() -> None:
    out, weights = scaled_dot_product_attention(*qkv(seed=7))
    assert isinstance(out, np.ndarray) and isinstance(weights, np.ndarray)


def test_lists_and_integers_are_accepted() -> None:
    out, weights = scaled_dot_product_attention([[1, 0]], [[1, 0], [0, 1]], [[10, 0], [0, 10]])
    assert out.dtype == np.float64
    w = 1 / (1 + math.exp(-1 / math.sqrt(2)))
    np.testing.assert_allclose(weights, [[w, 1 - w]], rtol=0, atol=TOL)
    np.testing.assert_allclose(out, [[10 * w, 10 * (1 - w)]], rtol=0, atol=TOL)


def test_fully_masked_query_gets_zero_weights_and_output() -> None:
    q, k, v = (torch.from_numpy(a).requires_grad_() for a in qkv(seed=8))
    mask = torch.ones(4, 5, dtype=torch.bool)
    mask[2] = False
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    assert torch.all(weights[2] == 0) and torch.all(out[2] == 0)
    out.sum().backward()
    assert all(torch.isfinite(t.grad).all() for t in (q, k, v))


def test_causal_mask_hides_the_future() -> None:
    q, k, v = qkv(T=5, S=5, seed=9)
    _, weights = scaled_dot_product_attention(q, k, v, causal_mask(5))
    assert np.all(np.triu(weights, k=1) == 0)
    assert weights[0, 0] == pytest.approx(1.0, abs=TOL)


def test_dropout_hook_changes_output_not_returned_weights() -> None:
    q, k, v = qkv(seed=10)
    out, weights = scaled_dot_product_attention(q, k, v)
    halve = lambda w: w * 0.5  # noqa: E731
    out_h, weights_h = scaled_dot_product_attention(q, k, v, dropout=halve)
    np.testing.assert_array_equal(weights_h, weights)
    np.testing.assert_allclose(out_h, out * 0.5, rtol=0, atol=TOL)


# --- bad input ----------------------------------------------------------------------------


def test_rejects_q_and_k_of_different_width() -> None:
    with pytest.raises(ValueError, match=r"q: shape \(4, 8\) and k: shape \(5, 6\)"):
        scaled_dot_product_attention(np.ones((4, 8)), np.ones((5, 6)), np.ones((5, 3)))


def test_rejects_k_and_v_of_different_length() -> None:
    with pytest.raises(ValueError, match=r"k: shape \(5, 8\) and v: shape \(6, 3\)"):
        scaled_dot_product_attention(np.ones((4, 8)), np.ones((5, 8)), np.ones((6, 3)))


def test_rejects_vectors() -> None:
    with pytest.raises(ValueError, match=r"q must be \(..., length, features\).*shape \(8,\)"):
        scaled_dot_product_attention(np.ones(8), np.ones((5, 8)), np.ones((5, 3)))


def test_rejects_leading_axes_that_do_not_broadcast() -> None:
    with pytest.raises(ValueError, match=r"q \(2, 4, 8\) and k \(3, 5, 8\) do not broadcast"):
        scaled_dot_product_attention(torch.ones(2, 4, 8), torch.ones(3, 5, 8), torch.ones(3, 5, 3))


def test_rejects_v_batch_that_does_not_broadcast() -> None:
    with pytest.raises(ValueError, match=r"weights \(2, 4, 5\) and v \(3, 5, 3\)"):
        scaled_dot_product_attention(np.ones((2, 4, 8)), np.ones((2, 5, 8)), np.ones((3, 5, 3)))


@pytest.mark.parametrize("mask_shape", [(5, 4), (4,), (2, 4, 5)])
def test_rejects_mask_of_the_wrong_shape(mask_shape) -> None:
    shape = re_shape(mask_shape)
    with pytest.raises(ValueError, match=rf"mask of shape {shape} does not broadcast.*\(4, 5\)"):
        scaled_dot_product_attention(*qkv(seed=11), mask=np.ones(mask_shape, dtype=bool))


def re_shape(shape) -> str:
    """A tuple as it appears in an error message, escaped for a regex."""
    return str(tuple(shape)).replace("(", r"\(").replace(")", r"\)")


def test_rejects_non_boolean_mask() -> None:
    with pytest.raises(TypeError, match=r"mask must be boolean.*shape \(4, 5\), float64"):
        scaled_dot_product_attention(*qkv(seed=12), mask=np.ones((4, 5)))


def test_rejects_mixed_numpy_and_torch() -> None:
    q, k, v = qkv(seed=13)
    with pytest.raises(
        TypeError, match=r"mixed array kinds.*k is a torch.Tensor of shape \(5, 8\)"
    ):
        scaled_dot_product_attention(q, torch.from_numpy(k), v)


def test_rejects_a_torch_mask_for_numpy_inputs() -> None:
    with pytest.raises(TypeError, match=r"mask is a torch.Tensor of shape \(4, 5\), bool"):
        scaled_dot_product_attention(*qkv(seed=14), mask=torch.ones(4, 5, dtype=torch.bool))


def test_rejects_mixed_dtypes() -> None:
    q, k, v = (torch.from_numpy(a) for a in qkv(seed=15))
    with pytest.raises(TypeError, match=r"share a dtype.*float32.*float64"):
        scaled_dot_product_attention(q.float(), k, v)


# --- SelfAttention ------------------------------------------------------------------------


def test_self_attention_projects_to_a_smaller_head() -> None:
    torch.manual_seed(0)
    layer = SelfAttention(d_model=16, d_head=4).double()
    x = torch.randn(2, 6, 16, dtype=torch.float64)
    out, weights = layer(x)
    assert out.shape == (2, 6, 4) and weights.shape == (2, 6, 6)
    assert layer.W_q.weight.shape == (4, 16)
    q = x @ layer.W_q.weight.T  # (B, T, D) @ (D, d) -> (B, T, d)
    k, v = x @ layer.W_k.weight.T, x @ layer.W_v.weight.T
    ref_out, ref_weights = naive_attention(*(as_numpy(a) for a in (q, k, v)))
    np.testing.assert_allclose(out.detach().numpy(), ref_out, rtol=0, atol=TOL)
    np.testing.assert_allclose(weights.detach().numpy(), ref_weights, rtol=0, atol=TOL)


def test_self_attention_parameter_count() -> None:
    assert sum(p.numel() for p in SelfAttention(16, 4).parameters()) == 3 * 16 * 4
    assert sum(p.numel() for p in SelfAttention(16, 4, bias=True).parameters()) == 3 * (16 * 4 + 4)
    assert SelfAttention(8).W_v.weight.shape == (8, 8)  # d_head defaults to d_model


def test_self_attention_with_causal_mask() -> None:
    torch.manual_seed(1)
    layer = SelfAttention(8, 4)
    x = torch.randn(1, 5, 8)
    _, weights = layer(x, mask=causal_mask(5, like=x))
    assert torch.all(weights.triu(diagonal=1) == 0)


@pytest.mark.parametrize(("d_model", "d_head"), [(0, 4), (8, -1), (8, 2.5)])
def test_self_attention_rejects_bad_sizes(d_model, d_head) -> None:
    with pytest.raises(ValueError, match="must be a positive integer"):
        SelfAttention(d_model, d_head)


def test_self_attention_rejects_wrong_width() -> None:
    with pytest.raises(ValueError, match=r"d_model=8\), got a torch.Tensor of shape \(2, 5, 6\)"):
        SelfAttention(8, 4)(torch.ones(2, 5, 6))


def test_self_attention_rejects_numpy() -> None:
    with pytest.raises(TypeError, match=r"expects a torch.Tensor, got a numpy.ndarray"):
        SelfAttention(8, 4)(np.ones((2, 5, 8)))


def test_self_attention_values_may_have_their_own_size() -> None:
    layer = SelfAttention(12, 4, d_v=6)
    out, weights = layer(torch.randn(2, 5, 12))
    assert out.shape == (2, 5, 6) and weights.shape == (2, 5, 5)
    assert layer.W_v.weight.shape == (6, 12) and layer.W_k.weight.shape == (4, 12)
    assert sum(p.numel() for p in layer.parameters()) == 12 * 4 + 12 * 4 + 12 * 6


# --- CrossAttention -----------------------------------------------------------------------


def test_cross_attention_gives_a_non_square_weight_matrix() -> None:
    torch.manual_seed(2)
    layer = CrossAttention(d_model=8, d_context=6, d_head=4).double()
    x, c = torch.randn(2, 3, 8, dtype=torch.float64), torch.randn(2, 7, 6, dtype=torch.float64)
    out, weights = layer(x, c)
    assert out.shape == (2, 3, 4) and weights.shape == (2, 3, 7)
    q = x @ layer.W_q.weight.T  # (B, T, D) @ (D, d) -> (B, T, d)
    k, v = c @ layer.W_k.weight.T, c @ layer.W_v.weight.T
    ref_out, ref_weights = naive_attention(*(as_numpy(a) for a in (q, k, v)))
    np.testing.assert_allclose(as_numpy(out), ref_out, rtol=0, atol=TOL)
    np.testing.assert_allclose(as_numpy(weights), ref_weights, rtol=0, atol=TOL)


def test_cross_attention_on_its_own_input_is_self_attention() -> None:
    torch.manual_seed(3)
    cross, self_ = CrossAttention(8, d_head=4), SelfAttention(8, 4)
    self_.load_state_dict(cross.state_dict())
    x = torch.randn(2, 5, 8)
    for a, b in zip(cross(x, x), self_(x), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_cross_attention_mask_hides_context_positions() -> None:
    torch.manual_seed(4)
    layer = CrossAttention(8, d_head=4)
    x, c = torch.randn(1, 3, 8), torch.randn(1, 5, 8)
    mask = torch.tensor([True, True, False, True, False])  # hide context positions 2 and 4
    _, weights = layer(x, c, mask)
    assert torch.all(weights[..., [2, 4]] == 0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(1, 3), rtol=0, atol=1e-6)


@pytest.mark.parametrize(
    ("x_shape", "c_shape", "message"),
    [
        ((2, 3, 7), (2, 5, 6), r"x of shape \(..., length, d_model=8\)"),
        ((2, 3, 8), (2, 5, 8), r"context of shape \(..., length, d_context=6\)"),
    ],
)
def test_cross_attention_rejects_wrong_widths(x_shape, c_shape, message) -> None:
    with pytest.raises(ValueError, match=message):
        CrossAttention(8, d_context=6, d_head=4)(torch.ones(x_shape), torch.ones(c_shape))


def test_cross_attention_rejects_numpy_context() -> None:
    with pytest.raises(
        TypeError,
        match=r"torch.Tensor, got a numpy.ndarray of shape \(1, 3, 8\), float64 as context",
    ):
        CrossAttention(8)(torch.ones(1, 2, 8), np.ones((1, 3, 8)))


# --- OneLayerAttention on the pronouns task -----------------------------------------------

HE, SHE = 0, 1


def _embeddings(V=16, D=16, seed=0) -> torch.Tensor:
    return torch.from_numpy(np.random.default_rng(seed).standard_normal((V, D)))


def _pronoun_accuracy(model, ids, targets) -> float:
    predicted = model(ids).argmax(-1)
    pronouns = ids < 2
    return (predicted == targets)[pronouns].double().mean().item()


def test_one_layer_attention_shapes_and_readout() -> None:
    torch.manual_seed(0)
    E = _embeddings()
    model = OneLayerAttention(E, d_head=4)
    ids, _ = pronoun_batch(3, rng=0)
    out, weights = model.attend(ids)
    assert out.shape == (3, 6, 16) and weights.shape == (3, 6, 6)
    torch.testing.assert_close(model(ids), out @ E.T, rtol=0, atol=0)
    assert sum(p.numel() for p in model.parameters()) == 16 * 4 * 2 + 16 * 16  # E is fixed


def test_weightless_attention_is_q_k_v_equal_to_the_embeddings() -> None:
    E = _embeddings()
    model = OneLayerAttention(E, learned=False)
    assert list(model.parameters()) == []
    ids, targets = pronoun_batch(500, rng=1)
    x = E[ids]
    _, weights = scaled_dot_product_attention(x, x, x)
    torch.testing.assert_close(model.attend(ids)[1], weights, rtol=0, atol=0)
    # A word's strongest match is itself: the pronouns mostly name themselves.
    assert (weights.argmax(-1) == torch.arange(6)).double().mean() > 0.9
    assert _pronoun_accuracy(model, ids, targets) < 0.3


@pytest.mark.slow
def test_learned_projections_resolve_the_pronouns() -> None:
    """A few seconds on one thread: W_q, W_k learn to look for a key unlike the query."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: one thread is fastest, and not slowed by load
    try:
        _train_pronouns()
    finally:
        torch.set_num_threads(threads)


def _train_pronouns() -> None:
    torch.manual_seed(0)
    model = OneLayerAttention(_embeddings(), d_head=4)
    ids, targets = pronoun_batch(1000, rng=2)
    before = _pronoun_accuracy(model, ids, targets)
    train(model, pronoun_batches(32, rng=0), steps=100, lr=1e-2, pad_id=None,
          schedule="constant", progress=False)  # fmt: skip
    after = _pronoun_accuracy(model, ids, targets)
    assert before < 0.4, f"an untrained layer should not already resolve pronouns ({before:.3f})"
    assert after >= 0.99, f"pronoun accuracy on 1000 fresh sentences after training: {after:.3f}"
    _, weights = model.attend(ids)  # (B, T, T)
    he_row = weights[ids == HE]  # (B, T): the row of "he" in each sentence
    male = (ids >= 2) & (ids < 6)  # the male name of each sentence
    assert he_row[male].mean() > 0.6, "'he' attends to the male name (uniform: 1/6)"


def test_one_layer_attention_rejects_bad_input() -> None:
    with pytest.raises(TypeError, match="float tensor"):
        OneLayerAttention(torch.ones(4, 3, dtype=torch.long))
    with pytest.raises(ValueError, match=r"embeddings must be \(n_vocab, D\)"):
        OneLayerAttention(torch.ones(4))
    model = OneLayerAttention(_embeddings())
    with pytest.raises(ValueError, match=r"ids must lie in 0 .. 15, got values 0 .. 16"):
        model(torch.tensor([[0, 16]]))
    with pytest.raises(TypeError, match="ids must be an integer tensor"):
        model(torch.zeros(1, 2))
