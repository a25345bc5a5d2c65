"""Tests for attnlab.mechanism.similarity: dot, cosine_similarity, scores, scaled_scores, softmax."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from attnlab.mechanism.similarity import (
    additive_scores,
    cosine_similarity,
    dot,
    general_scores,
    scaled_scores,
    scores,
    softmax,
)

TOL = 1e-10


def as_numpy(x) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def kinds(x: np.ndarray) -> list:
    """The same data as a NumPy array and as a tensor."""
    return [x, torch.from_numpy(np.array(x))]


# --- dot ----------------------------------------------------------------------------------


def test_dot_known_value() -> None:
    assert dot([1.0, 2.0, 3.0], [4.0, -5.0, 6.0]) == pytest.approx(12.0, abs=TOL)


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_dot_batches_and_broadcasts(kind) -> None:
    a = np.arange(12.0).reshape(4, 3)
    b = np.array([1.0, 0.0, -1.0])
    if kind == "torch":
        a, b = torch.from_numpy(a), torch.from_numpy(b)
    got = dot(a, b)
    assert isinstance(got, np.ndarray if kind == "numpy" else torch.Tensor)
    np.testing.assert_allclose(as_numpy(got), [-2.0, -2.0, -2.0, -2.0], rtol=0, atol=TOL)


def test_dot_promotes_integers() -> None:
    got = dot(np.array([1, 2]), np.array([3, 4]))
    assert got.dtype == np.float64 and got == 11.0
    t = dot(torch.tensor([1, 2]), torch.tensor([3, 4]))
    assert t.dtype == torch.get_default_dtype() and t.item() == 11.0


def test_dot_rejects_mismatched_sizes() -> None:
    with pytest.raises(ValueError, match=r"a: shape \(3,\) and b: shape \(4,\)"):
        dot(np.ones(3), np.ones(4))


def test_dot_rejects_leading_axes_that_do_not_broadcast() -> None:
    with pytest.raises(ValueError, match=r"a \(2, 3\) and b \(4, 3\) do not broadcast"):
        dot(torch.ones(2, 3), torch.ones(4, 3))


def test_dot_rejects_scalars() -> None:
    with pytest.raises(ValueError, match=r"at least 1-D.*shape \(\)"):
        dot(np.float64(2.0), np.ones(3))


def test_dot_rejects_mixed_kinds() -> None:
    with pytest.raises(TypeError, match=r"mixed array kinds.*numpy.ndarray of shape \(3,\).*torch"):
        dot(np.ones(3), torch.ones(3))


def test_dot_rejects_non_numbers() -> None:
    with pytest.raises(TypeError, match=r"a must be a NumPy array or a torch tensor.*got a str"):
        dot("abc", [1.0, 2.0, 3.0])


# --- cosine similarity --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ([1.0, 0.0], [0.0, 1.0], 0.0),
        ([1.0, 0.0], [1.0, 1.0], 1 / math.sqrt(2)),
        ([1.0, 2.0], [2.0, 4.0], 1.0),
        ([1.0, 2.0], [-3.0, -6.0], -1.0),
        ([0.0, 0.0], [1.0, 1.0], 0.0),  # zero vector: 0, not NaN
    ],
)
def test_cosine_known_values(a, b, expected) -> None:
    for x, y in zip(kinds(np.array(a)), kinds(np.array(b)), strict=True):
        assert float(cosine_similarity(x, y)) == pytest.approx(expected, abs=TOL)


def test_cosine_ignores_length_unlike_dot() -> None:
    a, b = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    assert cosine_similarity(a, 10 * b) == pytest.approx(cosine_similarity(a, b), abs=TOL)
    assert dot(a, 10 * b) == pytest.approx(10 * dot(a, b), abs=TOL)


def test_cosine_of_parallel_vectors_never_exceeds_one() -> None:
    a = np.random.default_rng(0).normal(size=(200, 7))
    got = cosine_similarity(a, 3.7 * a)
    assert np.all(got <= 1.0)
    np.testing.assert_allclose(got, 1.0, atol=TOL)


def test_cosine_returns_the_input_kind_and_dtype() -> None:
    got = cosine_similarity(torch.ones(2, 3, dtype=torch.float32), torch.ones(3))
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float32 and got.shape == (2,)


def test_cosine_rejects_mismatched_sizes() -> None:
    with pytest.raises(ValueError, match=r"a: shape \(2, 3\) and b: shape \(2, 5\)"):
        cosine_similarity(np.ones((2, 3)), np.ones((2, 5)))


def test_cosine_rejects_mixed_kinds() -> None:
    with pytest.raises(TypeError, match="mixed array kinds"):
        cosine_similarity(torch.ones(3), np.ones(3))


# --- scores and scaled scores: the seeds' worked example ----------------------------------


def seeds_example():
    """One query and two keys in d = 64 with q·k1 = 112 and q·k2 = 96 (as in the seeds)."""
    q = np.full((1, 64), 2.0)
    k = np.stack([np.full(64, 0.875), np.full(64, 0.75)])  # 64·2·0.875 = 112, 64·2·0.75 = 96
    return q, k


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_seeds_worked_example(kind) -> None:
    q, k = seeds_example()
    if kind == "torch":
        q, k = torch.from_numpy(q), torch.from_numpy(k)
    np.testing.assert_allclose(as_numpy(scores(q, k)), [[112.0, 96.0]], rtol=0, atol=TOL)
    s = scaled_scores(q, k)  # divided by sqrt(64) = 8
    np.testing.assert_allclose(as_numpy(s), [[14.0, 12.0]], rtol=0, atol=TOL)
    weights = as_numpy(softmax(s))
    np.testing.assert_array_equal(np.round(weights, 2), [[0.88, 0.12]])
    np.testing.assert_allclose(weights, [[1 / (1 + math.exp(-2)), 1 / (1 + math.exp(2))]], atol=TOL)


def test_scores_shape_and_values() -> None:
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4))
    got = scores(q, k)
    assert got.shape == (2, 3, 5)
    np.testing.assert_allclose(got[1, 2, 4], q[1, 2] @ k[1, 4], rtol=0, atol=TOL)


def test_scaled_scores_custom_scale() -> None:
    q, k = seeds_example()
    np.testing.assert_allclose(scaled_scores(q, k, scale=0.5), [[56.0, 48.0]], atol=TOL)


def test_scores_accept_integer_lists() -> None:
    got = scores([[1, 2]], [[3, 4], [5, 6]])
    assert isinstance(got, np.ndarray) and got.dtype == np.float64
    np.testing.assert_array_equal(got, [[11.0, 17.0]])


def test_scores_reject_mismatched_sizes() -> None:
    with pytest.raises(ValueError, match=r"q: shape \(3, 4\) and k: shape \(5, 6\)"):
        scores(np.ones((3, 4)), np.ones((5, 6)))


def test_scores_reject_vectors() -> None:
    with pytest.raises(ValueError, match=r"must be matrices.*q: a numpy.ndarray of shape \(4,\)"):
        scores(np.ones(4), np.ones((5, 4)))


# --- softmax ------------------------------------------------------------------------------


def test_softmax_known_values() -> None:
    e = np.exp([1.0, 2.0, 3.0])
    np.testing.assert_allclose(softmax([1.0, 2.0, 3.0]), e / e.sum(), rtol=0, atol=TOL)


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_softmax_returns_input_kind_shape_and_dtype(kind) -> None:
    x = np.random.default_rng(2).normal(size=(2, 3, 4)).astype(np.float32)
    x = torch.from_numpy(x) if kind == "torch" else x
    got = softmax(x)
    assert type(got) is type(x) and got.shape == x.shape and got.dtype == x.dtype


def test_softmax_promotes_integers() -> None:
    got = softmax([1, 2, 3])
    assert isinstance(got, np.ndarray) and got.dtype == np.float64
    t = softmax(torch.tensor([1, 2, 3]))
    assert t.dtype == torch.get_default_dtype()
    np.testing.assert_allclose(t.numpy(), got, rtol=1e-6)


@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_softmax_sums_to_one_along_axis(axis) -> None:
    x = np.random.default_rng(3).normal(size=(3, 5))
    for arr in kinds(x):
        total = as_numpy(softmax(arr, axis=axis)).sum(axis=axis)
        np.testing.assert_allclose(total, 1.0, rtol=0, atol=TOL)


def test_softmax_temperature_sharpens_and_flattens() -> None:
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(softmax(x, temperature=2.0), softmax(x / 2.0), rtol=0, atol=TOL)
    assert softmax(x, temperature=0.01)[2] > 1 - 1e-12  # nearly one-hot at the argmax
    np.testing.assert_allclose(softmax(x, temperature=1e6), 1 / 3, atol=1e-6)  # near uniform


def test_softmax_is_stable_for_huge_logits() -> None:
    for x in kinds(np.array([1000.0, 1001.0, -1e4])):
        got = as_numpy(softmax(x))
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got[:2], softmax([0.0, 1.0]), rtol=0, atol=TOL)


def test_softmax_mask_zeroes_hidden_entries() -> None:
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    mask = np.array([[True, False, True], [False, False, False]])
    for arr, m in zip(kinds(x), kinds(mask), strict=True):
        got = as_numpy(softmax(arr, mask=m))
        np.testing.assert_allclose(
            got[0], [1 / (1 + math.e**2), 0.0, 1 / (1 + math.e**-2)], atol=TOL
        )
        np.testing.assert_array_equal(got[1], 0.0)  # fully masked: zeros, not NaN


def test_softmax_mask_uses_minus_infinity_not_a_big_negative_number() -> None:
    """A fill value like -1e9 leaks weight onto masked keys when real logits are lower."""
    x = np.array([-3e9, -2e9, 5.0])
    mask = np.array([True, True, False])
    for arr, m in zip(kinds(x), kinds(mask), strict=True):
        got = as_numpy(softmax(arr, mask=m))
        np.testing.assert_array_equal(got, [0.0, 1.0, 0.0])


def test_softmax_mask_broadcasts_and_works_on_other_axes() -> None:
    x = np.random.default_rng(4).normal(size=(2, 3, 4))
    key_mask = np.array([True, True, False, True])  # (S,) broadcasts over (2, 3, S)
    got = softmax(x, mask=key_mask)
    assert np.all(got[..., 2] == 0)
    np.testing.assert_allclose(got.sum(-1), 1.0, atol=TOL)
    row_mask = np.array([[True], [False], [True]])  # (3, 1): masks along axis -2
    got = softmax(x, axis=-2, mask=row_mask)
    assert np.all(got[:, 1] == 0)
    np.testing.assert_allclose(got.sum(-2), 1.0, atol=TOL)


def test_softmax_masked_gradient_is_finite() -> None:
    x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    mask = torch.tensor([[True, False, True], [False, False, False]])
    (softmax(x, mask=mask) * torch.arange(3.0)).sum().backward()
    assert torch.isfinite(x.grad).all()
    assert torch.all(x.grad[:, 1] == 0) and torch.all(x.grad[1] == 0)


@pytest.mark.parametrize("temperature", [0, -1.0, float("nan"), "2"])
def test_softmax_rejects_bad_temperature(temperature) -> None:
    with pytest.raises(ValueError, match="temperature must be a positive number"):
        softmax([1.0, 2.0], temperature=temperature)


@pytest.mark.parametrize("axis", [2, -3])
def test_softmax_rejects_axis_out_of_range(axis) -> None:
    with pytest.raises(ValueError, match=rf"axis {axis} is out of range for .*shape \(2, 3\)"):
        softmax(np.ones((2, 3)), axis=axis)


def test_softmax_rejects_scalars() -> None:
    with pytest.raises(ValueError, match=r"at least one axis.*shape \(\)"):
        softmax(np.float64(1.0))


def test_softmax_rejects_mask_of_wrong_shape() -> None:
    with pytest.raises(ValueError, match=r"mask of shape \(4,\) does not broadcast.*\(2, 3\)"):
        softmax(np.ones((2, 3)), mask=np.ones(4, dtype=bool))


def test_softmax_rejects_non_boolean_mask() -> None:
    with pytest.raises(TypeError, match=r"mask must be boolean.*shape \(3,\), int64"):
        softmax(np.ones((2, 3)), mask=np.array([1, 0, 1]))


def test_softmax_rejects_mixed_kinds() -> None:
    with pytest.raises(TypeError, match=r"mask is a numpy.ndarray of shape \(3,\), bool"):
        softmax(torch.ones(2, 3), mask=np.ones(3, dtype=bool))


def test_softmax_rejects_complex() -> None:
    with pytest.raises(TypeError, match=r"x must hold real numbers.*complex128"):
        softmax(np.array([1 + 1j]))


def test_softmax_rejects_ragged_lists() -> None:
    with pytest.raises(ValueError, match="ragged"):
        softmax([[1.0, 2.0], [3.0]])


def test_softmax_signature_matches_the_exercise() -> None:
    """softmax(x, axis, temperature) can be called positionally, as the exercise writes it."""
    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(
        softmax(x, 0, 0.5), softmax(x, axis=0, temperature=0.5), rtol=0, atol=0
    )
    np.testing.assert_allclose(softmax(x, 0, 0.5).sum(axis=0), 1.0, rtol=1e-12)


# --- general (bilinear) and additive scores ----------------------------------------------


def _loop_general(q, k, W):
    """scores[i, j] = Σ_a Σ_b q[i, a] W[a, b] k[j, b], with Python loops."""
    out = np.zeros((q.shape[0], k.shape[0]))
    for i, j in itertools.product(range(q.shape[0]), range(k.shape[0])):
        out[i, j] = sum(
            q[i, a] * W[a, b] * k[j, b] for a in range(q.shape[1]) for b in range(k.shape[1])
        )
    return out


def _loop_additive(q, k, W_a, U_a, v_a):
    """scores[i, j] = v_a · tanh(q_i W_a + k_j U_a), one pair at a time."""
    out = np.zeros((q.shape[0], k.shape[0]))
    for i, j in itertools.product(range(q.shape[0]), range(k.shape[0])):
        out[i, j] = float(v_a @ np.tanh(q[i] @ W_a + k[j] @ U_a))
    return out


def _qkw(T=3, S=5, d_q=4, d_k=6, h=7, seed=0):
    rng = np.random.default_rng(seed)
    return (
        rng.normal(size=(T, d_q)),
        rng.normal(size=(S, d_k)),
        rng.normal(size=(d_q, d_k)),
        rng.normal(size=(d_q, h)),
        rng.normal(size=(d_k, h)),
        rng.normal(size=h),
    )


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_general_scores_match_loops_with_different_sizes(kind) -> None:
    q, k, W, *_ = _qkw()
    args = (q, k, W) if kind == "numpy" else tuple(torch.from_numpy(a) for a in (q, k, W))
    got = general_scores(*args)
    assert isinstance(got, np.ndarray if kind == "numpy" else torch.Tensor)
    assert tuple(got.shape) == (3, 5)
    np.testing.assert_allclose(as_numpy(got), _loop_general(q, k, W), rtol=0, atol=1e-10)


def test_general_scores_with_identity_are_dot_products() -> None:
    q, k, *_ = _qkw(d_k=4)
    np.testing.assert_allclose(general_scores(q, k, np.eye(4)), scores(q, k), atol=TOL)


def test_general_scores_of_a_low_rank_W_are_projected_dot_products() -> None:
    """W = W_q W_kᵀ gives (q W_q)(k W_k)ᵀ: query/key projections are a general score."""
    q, k, _, W_q, W_k, _ = _qkw()
    got = general_scores(q, k, W_q @ W_k.T)
    np.testing.assert_allclose(got, scores(q @ W_q, k @ W_k), rtol=1e-12, atol=1e-10)


def test_general_scores_broadcast_batches() -> None:
    rng = np.random.default_rng(1)
    q, k, W = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 6)), rng.normal(size=(4, 6))
    got = general_scores(q, k, W)
    assert got.shape == (2, 3, 5)
    np.testing.assert_allclose(got[1], _loop_general(q[1], k[1], W), atol=1e-10)


def test_general_scores_reject_a_W_of_the_wrong_shape() -> None:
    q, k, *_ = _qkw()
    with pytest.raises(ValueError, match=r"W must be \(d_q, d_k\) = \(4, 6\).*shape \(6, 4\)"):
        general_scores(q, k, np.ones((6, 4)))


def test_general_scores_reject_vectors_and_mixed_kinds() -> None:
    with pytest.raises(ValueError, match="must be matrices"):
        general_scores(np.ones(4), np.ones((2, 4)), np.eye(4))
    with pytest.raises(TypeError, match="mixed array kinds"):
        general_scores(np.ones((2, 4)), np.ones((2, 4)), torch.eye(4))


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_additive_scores_match_loops(kind) -> None:
    q, k, _, W_a, U_a, v_a = _qkw()
    args = (q, k, W_a, U_a, v_a)
    if kind == "torch":
        args = tuple(torch.from_numpy(a) for a in args)
    got = additive_scores(*args)
    assert isinstance(got, np.ndarray if kind == "numpy" else torch.Tensor)
    assert tuple(got.shape) == (3, 5)
    np.testing.assert_allclose(as_numpy(got), _loop_additive(q, k, W_a, U_a, v_a), atol=1e-10)


def test_additive_scores_are_bounded_by_the_readout() -> None:
    """tanh lies in (-1, 1), so |score| <= Σ|v_a| however large q and k get."""
    q, k, _, W_a, U_a, v_a = _qkw()
    got = additive_scores(1e6 * q, 1e6 * k, W_a, U_a, v_a)
    assert np.all(np.isfinite(got))
    assert np.abs(got).max() <= np.abs(v_a).sum() + 1e-12


def test_additive_scores_broadcast_batches_and_give_gradients() -> None:
    rng = np.random.default_rng(2)
    q = torch.from_numpy(rng.normal(size=(2, 3, 4))).requires_grad_()
    k = torch.from_numpy(rng.normal(size=(2, 5, 6)))
    W_a, U_a, v_a = (torch.from_numpy(rng.normal(size=s)) for s in ((4, 7), (6, 7), (7,)))
    got = additive_scores(q, k, W_a, U_a, v_a)
    assert got.shape == (2, 3, 5)
    ref = _loop_additive(*(a.detach().numpy() for a in (q[1], k[1], W_a, U_a, v_a)))
    np.testing.assert_allclose(got[1].detach().numpy(), ref, atol=1e-10)
    got.sum().backward()
    assert q.grad is not None and torch.isfinite(q.grad).all() and q.grad.abs().sum() > 0


@pytest.mark.parametrize(
    ("W_shape", "U_shape", "v_shape", "message"),
    [
        ((5, 7), (6, 7), (7,), r"W_a must be \(4, h=7\)"),
        ((4, 7), (6, 3), (7,), r"U_a must be \(6, h=7\)"),
        ((4, 7), (6, 7), (7, 1), r"v_a must be a vector"),
    ],
)
def test_additive_scores_reject_weights_that_do_not_fit(W_shape, U_shape, v_shape, message) -> None:
    q, k, *_ = _qkw()
    with pytest.raises(ValueError, match=message):
        additive_scores(q, k, np.ones(W_shape), np.ones(U_shape), np.ones(v_shape))
