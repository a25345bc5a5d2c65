"""attnlab against PyTorch's own implementations, which we did not write.

Every comparison copies the same inputs (and weights) into both and checks the results with
explicit tolerances: float64 within 1e-10, float32 within 1e-5.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention.bias import causal_lower_right

from attnlab.mechanism.attention import CrossAttention, SelfAttention, scaled_dot_product_attention
from attnlab.mechanism.masking import causal_mask, from_ignore_mask, padding_mask
from attnlab.mechanism.multihead import MultiHeadAttention
from attnlab.mechanism.similarity import additive_scores, cosine_similarity, general_scores, softmax

TOL = {torch.float64: 1e-10, torch.float32: 1e-5}
DTYPES = [torch.float64, torch.float32]


def close(actual, expected, dtype) -> None:
    """assert_close with the suite's tolerance for ``dtype`` (NumPy results are converted)."""
    if isinstance(actual, (np.ndarray, np.generic)):  # NumPy reductions give scalars
        actual = torch.from_numpy(np.asarray(actual))
    torch.testing.assert_close(actual, expected, rtol=TOL[dtype], atol=TOL[dtype])


def randn(*shape, dtype=torch.float64, seed=0) -> torch.Tensor:
    return torch.randn(*shape, dtype=dtype, generator=torch.Generator().manual_seed(seed))


def random_mask(*shape, seed=0) -> torch.Tensor:
    """A random boolean mask (True = may attend) with at least one visible key per query.

    PyTorch returns NaN for a query with no visible key where attnlab returns 0, so the
    parity tests keep every row partly visible; the fully masked case is tested separately.
    """
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(*shape, generator=g) < 0.6
    mask[..., 0] = True
    return mask


# --- scaled dot-product attention vs F.scaled_dot_product_attention ----------------------


def reference_weights(q, k, mask=None, scale=None) -> torch.Tensor:
    """softmax(q kᵀ · scale) with masked scores at -inf, written with torch ops only."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale  # (..., T, d) @ (..., d, S) -> (..., T, S)
    if mask is not None:
        scores = scores.masked_fill(~mask, -math.inf)
    return torch.softmax(scores, dim=-1)


SDPA_SHAPES = [
    # (q shape, k shape, d_v)
    ((5, 4), (5, 4), 4),
    ((3, 6, 8), (3, 9, 8), 5),
    ((2, 4, 7, 16), (2, 4, 7, 16), 16),
    ((2, 4, 3, 8), (2, 4, 11, 8), 6),
    ((2, 4, 6, 8), (2, 1, 6, 8), 8),  # keys shared by every head (broadcast)
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("q_shape", "k_shape", "d_v"), SDPA_SHAPES)
@pytest.mark.parametrize("masked", [False, True])
def test_sdpa_matches_torch(dtype, q_shape, k_shape, d_v, masked) -> None:
    q = randn(*q_shape, dtype=dtype, seed=1)
    k = randn(*k_shape, dtype=dtype, seed=2)
    v = randn(*k_shape[:-1], d_v, dtype=dtype, seed=3)
    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    mask = random_mask(*lead, q.shape[-2], k.shape[-2]) if masked else None
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    k_b = k.expand(*lead, *k.shape[-2:])  # torch's kernel wants matching batch axes
    v_b = v.expand(*lead, *v.shape[-2:])
    close(out, F.scaled_dot_product_attention(q, k_b, v_b, attn_mask=mask), dtype)
    close(weights, reference_weights(q, k, mask), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sdpa_numpy_input_matches_torch(dtype) -> None:
    q, k, v = (randn(2, 3, 6, 8, dtype=dtype, seed=s) for s in (4, 5, 6))
    mask = random_mask(2, 1, 6, 6)
    out, weights = scaled_dot_product_attention(q.numpy(), k.numpy(), v.numpy(), mask.numpy())
    assert isinstance(out, np.ndarray) and isinstance(weights, np.ndarray)
    assert out.dtype == q.numpy().dtype
    close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), dtype)
    close(weights, reference_weights(q, k, mask), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("length", [1, 2, 9])
def test_causal_mask_matches_is_causal(dtype, length) -> None:
    q, k, v = (randn(2, 3, length, 8, dtype=dtype, seed=s) for s in (7, 8, 9))
    out, _ = scaled_dot_product_attention(q, k, v, causal_mask(length, like=q))
    close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True), dtype)


@pytest.mark.parametrize(("q_len", "k_len"), [(3, 7), (1, 5), (4, 4)])
def test_causal_mask_with_longer_keys_matches_lower_right(q_len, k_len) -> None:
    """Queries are the *last* q_len positions: torch calls this `causal_lower_right`."""
    q = randn(2, 2, q_len, 8, seed=10)
    k, v = randn(2, 2, k_len, 8, seed=11), randn(2, 2, k_len, 8, seed=12)
    out, _ = scaled_dot_product_attention(q, k, v, causal_mask(q_len, k_len, like=q))
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(q_len, k_len))
    close(out, expected, torch.float64)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scale", [0.05, 1.0, 2.5])
def test_sdpa_custom_scale_matches_torch(dtype, scale) -> None:
    q, k, v = (randn(2, 5, 8, dtype=dtype, seed=s) for s in (13, 14, 15))
    mask = random_mask(2, 5, 5, seed=3)
    out, weights = scaled_dot_product_attention(q, k, v, mask, scale=scale)
    close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale), dtype)
    close(weights, reference_weights(q, k, mask, scale), dtype)


def test_sdpa_gradients_match_torch() -> None:
    q, k, v = (randn(2, 3, 5, 8, seed=s).requires_grad_() for s in (16, 17, 18))
    mask = random_mask(2, 1, 5, 5, seed=4)
    scaled_dot_product_attention(q, k, v, mask)[0].sum().backward()
    ours = [t.grad for t in (q, k, v)]
    for t in (q, k, v):
        t.grad = None
    F.scaled_dot_product_attention(q, k, v, attn_mask=mask).sum().backward()
    for mine, theirs in zip(ours, (q.grad, k.grad, v.grad), strict=True):
        close(mine, theirs, torch.float64)


# --- single-head layers vs F.scaled_dot_product_attention with the projections applied --


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("d_model", "d_head", "d_v"), [(8, 8, 8), (16, 4, 4), (12, 4, 6)])
@pytest.mark.parametrize("masked", [False, True])
def test_self_attention_is_torch_sdpa_of_projections(dtype, d_model, d_head, d_v, masked) -> None:
    torch.manual_seed(0)
    layer = SelfAttention(d_model, d_head, d_v=d_v).to(dtype)
    x = randn(3, 5, d_model, dtype=dtype, seed=20)
    mask = random_mask(3, 5, 5, seed=5) if masked else None
    out, weights = layer(x, mask)
    # nn.Linear stores W transposed: x @ weight.T is x W.
    q, k, v = (x @ lin.weight.T for lin in (layer.W_q, layer.W_k, layer.W_v))
    assert out.shape == (3, 5, d_v) and weights.shape == (3, 5, 5)
    close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), dtype)
    close(weights, reference_weights(q, k, mask), dtype)


def test_self_attention_gradients_match_torch_sdpa() -> None:
    torch.manual_seed(1)
    layer = SelfAttention(8, 4).double()
    x = randn(2, 6, 8, seed=21)
    layer(x)[0].square().sum().backward()
    ours = [p.grad.clone() for p in (layer.W_q.weight, layer.W_k.weight, layer.W_v.weight)]
    layer.zero_grad()
    q, k, v = (x @ lin.weight.T for lin in (layer.W_q, layer.W_k, layer.W_v))
    F.scaled_dot_product_attention(q, k, v).square().sum().backward()
    theirs = [layer.W_q.weight.grad, layer.W_k.weight.grad, layer.W_v.weight.grad]
    for mine, ref in zip(ours, theirs, strict=True):
        close(mine, ref, torch.float64)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("T", "S"), [(3, 7), (6, 2), (4, 4)])
def test_cross_attention_is_torch_sdpa_of_projections(dtype, T, S) -> None:
    torch.manual_seed(2)
    layer = CrossAttention(d_model=8, d_context=10, d_head=4, d_v=5).to(dtype)
    x, c = randn(2, T, 8, dtype=dtype, seed=22), randn(2, S, 10, dtype=dtype, seed=23)
    out, weights = layer(x, c)
    assert out.shape == (2, T, 5) and weights.shape == (2, T, S)
    q = x @ layer.W_q.weight.T  # (B, T, 8) @ (8, 4) -> (B, T, 4)
    k, v = c @ layer.W_k.weight.T, c @ layer.W_v.weight.T  # (B, S, 4), (B, S, 5)
    close(out, F.scaled_dot_product_attention(q, k, v), dtype)
    close(weights, reference_weights(q, k), dtype)


# --- general and additive scores vs torch's bilinear and linear layers --------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_general_scores_match_torch_bilinear(dtype) -> None:
    """F.bilinear(x1, x2, A) = x1ᵀ A x2 per pair: give it every (query, key) pair."""
    q, k, W = (
        randn(2, 3, 4, dtype=dtype, seed=24),
        randn(2, 5, 6, dtype=dtype, seed=25),
        randn(4, 6, dtype=dtype, seed=26),
    )
    q_pairs = q[:, :, None, :].expand(2, 3, 5, 4)  # (B, T, 1, d_q) -> (B, T, S, d_q)
    k_pairs = k[:, None, :, :].expand(2, 3, 5, 6)  # (B, 1, S, d_k) -> (B, T, S, d_k)
    expected = F.bilinear(q_pairs, k_pairs, W[None])[..., 0]  # (B, T, S, 1) -> (B, T, S)
    close(general_scores(q, k, W), expected, dtype)
    close(general_scores(q.numpy(), k.numpy(), W.numpy()), expected, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_additive_scores_match_torch_linear_layers(dtype) -> None:
    """Bahdanau's score as torch layers: Linear(d_q, h) + Linear(d_k, h), tanh, Linear(h, 1)."""
    torch.manual_seed(3)
    W, U, out = (
        nn.Linear(4, 7, bias=False),
        nn.Linear(6, 7, bias=False),
        nn.Linear(7, 1, bias=False),
    )
    W, U, out = W.to(dtype), U.to(dtype), out.to(dtype)
    q, k = randn(2, 3, 4, dtype=dtype, seed=27), randn(2, 5, 6, dtype=dtype, seed=28)
    with torch.no_grad():
        expected = out(torch.tanh(W(q)[:, :, None, :] + U(k)[:, None, :, :]))[..., 0]
        got = additive_scores(q, k, W.weight.T, U.weight.T, out.weight[0])
    close(got, expected, dtype)


# --- softmax and cosine similarity -------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("temperature", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_softmax_matches_torch(dtype, temperature, axis, kind) -> None:
    x = randn(3, 4, 5, dtype=dtype, seed=19) * 4
    got = softmax(x.numpy() if kind == "numpy" else x, axis=axis, temperature=temperature)
    assert isinstance(got, np.ndarray if kind == "numpy" else torch.Tensor)
    close(got, torch.softmax(x / temperature, dim=axis), dtype)


def test_softmax_mask_matches_masked_torch_softmax() -> None:
    x, mask = randn(4, 6, seed=20), random_mask(4, 6, seed=5)
    expected = torch.softmax(x.masked_fill(~mask, -math.inf), dim=-1)
    close(softmax(x, mask=mask), expected, torch.float64)
    close(softmax(x.numpy(), mask=mask.numpy()), expected, torch.float64)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("a_shape", "b_shape"), [((8,), (8,)), ((5, 8), (5, 8)), ((5, 8), (8,)), ((2, 1, 8), (3, 8))]
)
def test_cosine_similarity_matches_torch(dtype, a_shape, b_shape) -> None:
    a, b = randn(*a_shape, dtype=dtype, seed=21), randn(*b_shape, dtype=dtype, seed=22)
    expected = F.cosine_similarity(a, b, dim=-1)
    close(cosine_similarity(a, b), expected, dtype)
    close(cosine_similarity(a.numpy(), b.numpy()), expected, dtype)


def test_cosine_similarity_of_zero_vector_matches_torch() -> None:
    a, b = torch.zeros(2, 4, dtype=torch.float64), randn(2, 4, seed=23)
    close(cosine_similarity(a, b), F.cosine_similarity(a, b, dim=-1), torch.float64)


# --- MultiHeadAttention vs nn.MultiheadAttention ------------------------------------------

D_MODEL, N_HEADS = 16, 4


# nn.MultiheadAttention packs the three input projections into one matrix.
# in_proj_weight has shape (3D, D): rows 0..D-1 are W_q, rows D..2D-1 are W_k, rows
# 2D..3D-1 are W_v, each stored as nn.Linear stores its weight, (out_features, in_features),
# so that q = x @ in_proj_weight[:D].T + in_proj_bias[:D]. in_proj_bias (3D,) is split the
# same way. out_proj is an ordinary nn.Linear(D, D): our W_o. Inside each D-wide block,
# features h*d .. (h+1)*d-1 belong to head h, exactly as in attnlab.mechanism.multihead.split_heads.
def copy_weights(theirs: nn.MultiheadAttention, ours: MultiHeadAttention) -> None:
    """Give ``ours`` the weights of ``theirs`` (both with ``d_model = D``)."""
    D = theirs.embed_dim
    with torch.no_grad():
        for i, lin in enumerate((ours.W_q, ours.W_k, ours.W_v)):
            lin.weight.copy_(theirs.in_proj_weight[i * D : (i + 1) * D])  # (3D, D) -> (D, D)
            lin.bias.copy_(theirs.in_proj_bias[i * D : (i + 1) * D])  # (3D,) -> (D,)
        ours.W_o.weight.copy_(theirs.out_proj.weight)
        ours.W_o.bias.copy_(theirs.out_proj.bias)


def twin_layers(dtype=torch.float64, seed=0) -> tuple[MultiHeadAttention, nn.MultiheadAttention]:
    torch.manual_seed(seed)
    theirs = nn.MultiheadAttention(D_MODEL, N_HEADS, batch_first=True, dtype=dtype)
    with torch.no_grad():  # torch initialises the biases to 0: make them count
        theirs.in_proj_bias.normal_()
        theirs.out_proj.bias.normal_()
    ours = MultiHeadAttention(D_MODEL, N_HEADS).to(dtype)
    copy_weights(theirs, ours)
    return ours, theirs


def test_copy_weights_gives_the_same_parameter_count() -> None:
    ours, theirs = twin_layers()
    count = sum(p.numel() for p in ours.parameters())
    assert count == sum(p.numel() for p in theirs.parameters())
    assert count == 4 * D_MODEL**2 + 4 * D_MODEL


MASKS = ["none", "padding", "causal", "padding+causal"]


def mha_inputs(kind: str, masks: str, dtype=torch.float64):
    """query, key, value, ours' mask, and nn.MultiheadAttention's (key_padding_mask, attn_mask)."""
    B, T = 3, 6
    S = T if kind == "self" else 8
    query = randn(B, T, D_MODEL, dtype=dtype, seed=30).requires_grad_()
    if kind == "self":
        key = value = query
    elif kind == "cross":
        key = value = randn(B, S, D_MODEL, dtype=dtype, seed=31).requires_grad_()
    else:  # separate keys and values
        key = randn(B, S, D_MODEL, dtype=dtype, seed=31).requires_grad_()
        value = randn(B, S, D_MODEL, dtype=dtype, seed=32).requires_grad_()
    # torch's conventions: True = ignore. Translate them with from_ignore_mask.
    key_padding_mask = attn_mask = None
    ours_mask = None
    if "padding" in masks:
        key_padding_mask = ~padding_mask(lengths=torch.tensor([S, S - 2, 3]), max_len=S)[:, 0]
        ours_mask = from_ignore_mask(key_padding_mask)[:, None, None, :]  # (B, S) -> (B,1,1,S)
    if "causal" in masks:
        attn_mask = ~causal_mask(T, S, like=query)  # (T, S), True = ignore
        causal = from_ignore_mask(attn_mask)
        ours_mask = causal if ours_mask is None else ours_mask & causal
    return query, key, value, ours_mask, key_padding_mask, attn_mask


@pytest.mark.parametrize("kind", ["self", "cross", "separate"])
@pytest.mark.parametrize("masks", MASKS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_mha_outputs_and_weights_match(kind, masks, dtype) -> None:
    ours, theirs = twin_layers(dtype)
    query, key, value, mask, key_padding_mask, attn_mask = mha_inputs(kind, masks, dtype)
    out, weights = ours(query, key, value, mask=mask)
    kwargs = {"key_padding_mask": key_padding_mask, "attn_mask": attn_mask}
    ref_out, ref_avg = theirs(query, key, value, average_attn_weights=True, **kwargs)
    _, ref_heads = theirs(query, key, value, average_attn_weights=False, **kwargs)
    fast_out, none = theirs(query, key, value, need_weights=False, **kwargs)
    assert none is None
    assert weights.shape == ref_heads.shape == (3, N_HEADS, query.shape[1], key.shape[1])
    close(out, ref_out, dtype)
    close(out, fast_out, dtype)
    close(weights, ref_heads, dtype)
    close(weights.mean(dim=1), ref_avg, dtype)


@pytest.mark.parametrize("kind", ["self", "cross", "separate"])
@pytest.mark.parametrize("masks", ["none", "padding+causal"])
def test_mha_gradients_match(kind, masks) -> None:
    ours, theirs = twin_layers(seed=1)
    query, key, value, mask, key_padding_mask, attn_mask = mha_inputs(kind, masks)
    inputs = list({id(t): t for t in (query, key, value)}.values())  # distinct tensors

    ours(query, key, value, mask=mask)[0].sum().backward()
    our_input_grads = [t.grad.clone() for t in inputs]
    for t in inputs:
        t.grad = None
    theirs(query, key, value, key_padding_mask=key_padding_mask, attn_mask=attn_mask)[
        0
    ].sum().backward()

    for mine, t in zip(our_input_grads, inputs, strict=True):
        close(mine, t.grad, torch.float64)
    D = D_MODEL
    for i, lin in enumerate((ours.W_q, ours.W_k, ours.W_v)):
        close(lin.weight.grad, theirs.in_proj_weight.grad[i * D : (i + 1) * D], torch.float64)
        close(lin.bias.grad, theirs.in_proj_bias.grad[i * D : (i + 1) * D], torch.float64)
    close(ours.W_o.weight.grad, theirs.out_proj.weight.grad, torch.float64)
    close(ours.W_o.bias.grad, theirs.out_proj.bias.grad, torch.float64)


def test_mha_without_bias_matches() -> None:
    torch.manual_seed(2)
    theirs = nn.MultiheadAttention(D_MODEL, N_HEADS, bias=False, batch_first=True).double()
    ours = MultiHeadAttention(D_MODEL, N_HEADS, bias=False).double()
    with torch.no_grad():
        for i, lin in enumerate((ours.W_q, ours.W_k, ours.W_v)):
            lin.weight.copy_(theirs.in_proj_weight[i * D_MODEL : (i + 1) * D_MODEL])
        ours.W_o.weight.copy_(theirs.out_proj.weight)
    x = randn(2, 5, D_MODEL, seed=33)
    out, weights = ours(x)
    ref_out, ref_weights = theirs(x, x, x, average_attn_weights=False)
    close(out, ref_out, torch.float64)
    close(weights, ref_weights, torch.float64)


def test_mha_dropout_in_eval_mode_matches() -> None:
    torch.manual_seed(3)
    theirs = nn.MultiheadAttention(D_MODEL, N_HEADS, dropout=0.5, batch_first=True).double()
    ours = MultiHeadAttention(D_MODEL, N_HEADS, dropout=0.5).double()
    copy_weights(theirs, ours)
    ours.eval()
    theirs.eval()
    x = randn(2, 5, D_MODEL, seed=34)
    close(ours(x)[0], theirs(x, x, x)[0], torch.float64)
