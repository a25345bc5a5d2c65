"""Tests for attnlab.mechanism.scale: online softmax, tiled attention, grouped-query attention, KV cache.

Every attention variant is compared with ``torch.nn.functional.scaled_dot_product_attention``
(forward and backward), including masked tiles and query rows with no visible key.
"""

from __future__ import annotations

import math
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnlab.measure import median_seconds, peak_memory
from attnlab.mechanism.attention import scaled_dot_product_attention
from attnlab.mechanism.config import TransformerConfig
from attnlab.mechanism.kvcache import KVCache, LayerKV, kv_cache_bytes
from attnlab.mechanism.masking import causal_mask
from attnlab.mechanism.multihead import MultiHeadAttention
from attnlab.mechanism.scale import (
    GroupedQueryAttention,
    attention_tile_update,
    grouped_query_attention,
    online_softmax,
    online_softmax_stats,
    online_softmax_update,
    repeat_kv,
    tiled_attention,
)
from attnlab.mechanism.similarity import softmax

F32 = {"rtol": 1e-5, "atol": 1e-6}
F64 = {"rtol": 1e-12, "atol": 1e-12}


def sdpa(q, k, v, mask=None):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def random_mask(shape, p_visible, seed, dead_rows=(), dead_tile=None):
    """A boolean mask with some query rows fully hidden and optionally one hidden tile."""
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(shape, generator=g) < p_visible
    for r in dead_rows:
        mask[..., r, :] = False
    if dead_tile is not None:
        (i0, i1), (j0, j1) = dead_tile
        mask[..., i0:i1, j0:j1] = False
    return mask


# --- online softmax ----------------------------------------------------------------------


def test_update_formula_on_two_blocks() -> None:
    """Blocks [1, 3] then [5, 0]: m goes 3 -> 5 and the first sum is rescaled by e^(3-5)."""
    m, l = online_softmax_update(np.array(-np.inf), np.array(0.0), np.array([1.0, 3.0]))  # noqa: E741
    assert m == 3.0
    np.testing.assert_allclose(l, math.exp(-2) + 1, rtol=1e-15)
    m, l = online_softmax_update(m, l, np.array([5.0, 0.0]))  # noqa: E741
    assert m == 5.0
    expected = sum(math.exp(x - 5) for x in (1, 3, 5, 0))
    np.testing.assert_allclose(l, expected, rtol=1e-15)


def test_update_keeps_nothing_seen_for_masked_blocks() -> None:
    m, l = torch.tensor([-math.inf]), torch.tensor([0.0])  # noqa: E741
    m, l = online_softmax_update(m, l, torch.full((1, 4), -math.inf))  # noqa: E741
    assert m.item() == -math.inf and l.item() == 0.0
    m, l = online_softmax_update(m, l, torch.tensor([[2.0, -math.inf]]))  # noqa: E741
    assert m.item() == 2.0 and l.item() == pytest.approx(1.0, abs=0)
    m, l = online_softmax_update(m, l, torch.full((1, 3), -math.inf))  # noqa: E741
    assert m.item() == 2.0 and l.item() == pytest.approx(1.0, abs=0)


def test_update_rejects_bad_shapes() -> None:
    with pytest.raises(ValueError, match="n >= 1"):
        online_softmax_update(np.zeros(2), np.zeros(2), np.zeros((2, 0)))
    with pytest.raises(ValueError, match=r"leading shape \(2,\)"):
        online_softmax_update(np.zeros(3), np.zeros(3), np.zeros((2, 4)))
    with pytest.raises(TypeError, match="mixed"):
        online_softmax_update(torch.zeros(2), np.zeros(2), np.zeros((2, 4)))


@pytest.mark.parametrize("kind", ["numpy", "torch"])
@pytest.mark.parametrize("block_size", [1, 3, 4, 16, 100])
def test_online_softmax_equals_softmax(kind, block_size) -> None:
    rng = np.random.default_rng(block_size)
    x = rng.normal(scale=5.0, size=(3, 5, 16))
    mask = rng.random((5, 16)) < 0.6
    mask[1] = False  # a fully masked row
    mask[2, :8] = False  # a masked first half: the first blocks see only -inf
    if kind == "torch":
        x, mask = torch.from_numpy(x), torch.from_numpy(mask)
    for m in (None, mask):
        got = online_softmax(x, block_size, mask=m)
        assert type(got) is type(x)
        np.testing.assert_allclose(np.asarray(got), np.asarray(softmax(x, mask=m)), **F64)
    got = np.asarray(online_softmax(x, block_size, mask=mask))
    assert np.all(got[:, 1] == 0)  # fully masked row: zeros, not NaN
    np.testing.assert_allclose(got[:, [0, 2, 3, 4]].sum(-1), 1.0, **F64)


def test_online_softmax_float32_huge_logits() -> None:
    x = torch.tensor([[1000.0, 999.0, -1000.0, 1001.0, 0.0]])
    got = online_softmax(x, 2)
    torch.testing.assert_close(got, torch.softmax(x, -1), rtol=1e-6, atol=1e-7)


@settings(max_examples=60, deadline=None)
@given(
    x=arrays(
        np.float64, st.tuples(st.integers(1, 3), st.integers(1, 20)), elements=st.floats(-50, 50)
    ),
    block=st.integers(1, 25),
    data=st.data(),
)
def test_online_softmax_property(x, block, data) -> None:
    mask = data.draw(arrays(np.bool_, x.shape))
    got = online_softmax(x, block, mask=mask)
    np.testing.assert_allclose(got, softmax(x, mask=mask), rtol=1e-10, atol=1e-12)
    m, _ = online_softmax_stats(x, block, mask=mask)
    np.testing.assert_array_equal(m, np.maximum.accumulate(m, axis=-1))  # never decreases


def test_stats_last_block_is_max_and_sum() -> None:
    x = np.array([[0.5, 2.0, -1.0, 4.0, 3.0, 1.0, 0.0]])
    m, l = online_softmax_stats(x, 3)  # noqa: E741
    assert m.shape == l.shape == (1, 3)  # blocks of 3, 3, 1
    np.testing.assert_array_equal(m[0], [2.0, 4.0, 4.0])
    np.testing.assert_allclose(l[0, -1], np.exp(x - 4.0).sum(), rtol=1e-15)
    np.testing.assert_allclose(l[0, 0], np.exp(x[0, :3] - 2.0).sum(), rtol=1e-15)


def test_stats_bad_input() -> None:
    with pytest.raises(ValueError, match="block_size"):
        online_softmax_stats(np.zeros((2, 3)), 0)
    with pytest.raises(TypeError, match="boolean"):
        online_softmax(np.zeros((2, 3)), 2, mask=np.ones((2, 3)))
    with pytest.raises(ValueError, match="broadcast"):
        online_softmax(np.zeros((2, 3)), 2, mask=np.ones((2, 4), dtype=bool))


# --- one tile step -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_tile_updates_give_attention(kind) -> None:
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 9, 4)), rng.normal(size=(2, 9, 3))
    mask = rng.random((5, 9)) < 0.5
    mask[3] = False
    mask[:, :4] = False  # the first tile of keys is hidden from everyone
    if kind == "torch":
        q, k, v, mask = (torch.from_numpy(a) for a in (q, k, v, mask))
    xp_full = (
        (lambda s: torch.full(s, -math.inf, dtype=torch.float64))
        if kind == "torch"
        else (lambda s: np.full(s, -np.inf))
    )
    zeros = torch.zeros if kind == "torch" else np.zeros
    m, l, acc = xp_full((2, 5)), zeros((2, 5), dtype=q.dtype), zeros((2, 5, 3), dtype=q.dtype)  # noqa: E741
    for j0 in range(0, 9, 4):
        s = q @ k[:, j0 : j0 + 4].swapaxes(-1, -2) / 2.0  # (2, 5, ≤4), √d = 2
        vis = mask[:, j0 : j0 + 4]
        s = s.masked_fill(~vis, -math.inf) if kind == "torch" else np.where(vis, s, -np.inf)
        m, l, acc = attention_tile_update(m, l, acc, s, v[:, j0 : j0 + 4])  # noqa: E741
    assert type(acc) is type(q)
    out, _ = scaled_dot_product_attention(q, k, v, mask)
    seen = np.asarray(l) > 0
    np.testing.assert_array_equal(seen, np.asarray(mask).any(-1)[None].repeat(2, 0))
    ratio = np.asarray(acc)[seen] / np.asarray(l)[seen][:, None]
    np.testing.assert_allclose(ratio, np.asarray(out)[seen], **F64)
    assert np.all(np.asarray(acc)[~seen] == 0)


def test_tile_update_rejects_mismatched_shapes() -> None:
    m, l, acc = np.zeros(3), np.zeros(3), np.zeros((3, 2))  # noqa: E741
    with pytest.raises(ValueError, match="tile shapes"):
        attention_tile_update(m, l, acc, np.zeros((3, 4)), np.zeros((5, 2)))
    with pytest.raises(ValueError, match="tile shapes"):
        attention_tile_update(m, l, acc, np.zeros((3, 4)), np.zeros((4, 3)))


# --- tiled attention vs PyTorch ----------------------------------------------------------


def qkv(B, H, T, S, d, d_v, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    return tuple(
        torch.randn(*shape, generator=g, dtype=dtype).requires_grad_()
        for shape in ((B, H, T, d), (B, H, S, d), (B, H, S, d_v))
    )


def grads(out, inputs, seed):
    g = torch.Generator().manual_seed(seed)
    d_out = torch.randn(out.shape, generator=g, dtype=out.dtype)
    return torch.autograd.grad(out, inputs, d_out)


CASES = [
    # T, S, block_q, block_k, masking
    (37, 53, 8, 16, "none"),
    (37, 53, 8, 16, "random"),
    (37, 53, 16, 8, "causal"),
    (48, 48, 16, 16, "causal+random"),
    (40, 64, 16, 16, "dead tile"),
    (33, 33, 64, 64, "random"),  # one tile holds everything
    (20, 35, 1, 1, "causal+random"),  # one score per tile
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(("T", "S", "bq", "bk", "masking"), CASES)
def test_tiled_matches_pytorch_forward_and_backward(dtype, T, S, bq, bk, masking) -> None:
    q, k, v = qkv(2, 3, T, S, 8, 5, dtype, seed=T + S)
    mask = None
    if "random" in masking:
        mask = random_mask((2, 1, T, S), 0.6, seed=1, dead_rows=(0, T // 2))
    if masking == "dead tile":
        mask = random_mask((T, S), 0.9, seed=2, dead_tile=((0, 16), (16, 48)))
    causal = "causal" in masking
    ref_mask = mask
    if causal:
        cm = causal_mask(T, S, like=q)
        ref_mask = cm if mask is None else cm & mask
    out = tiled_attention(q, k, v, mask, causal=causal, block_q=bq, block_k=bk)
    ref = sdpa(q, k, v, ref_mask)
    tol = F32 if dtype == torch.float32 else F64
    torch.testing.assert_close(out, ref, **tol)
    for got, want in zip(grads(out, (q, k, v), 3), grads(ref, (q, k, v), 3), strict=True):
        torch.testing.assert_close(got, want, **tol)


def test_fully_masked_rows_give_zero_output_and_zero_gradient() -> None:
    q, k, v = qkv(1, 2, 12, 20, 4, 4, torch.float64, seed=5)
    mask = random_mask((12, 20), 0.5, seed=6, dead_rows=(0, 7, 11))
    out = tiled_attention(q, k, v, mask, block_q=4, block_k=8)
    assert torch.isfinite(out).all()
    assert torch.all(out[..., [0, 7, 11], :] == 0)
    dq, dk, dv = grads(out, (q, k, v), 7)
    assert torch.all(dq[..., [0, 7, 11], :] == 0)
    # Hidden rows contribute nothing to dk, dv: the same as attention without those rows.
    keep = [i for i in range(12) if i not in (0, 7, 11)]
    q2 = q.detach()[..., keep, :].requires_grad_()
    ref = scaled_dot_product_attention(q2, k, v, mask[keep])[0]
    g = torch.Generator().manual_seed(7)
    d_out = torch.randn(out.shape, generator=g, dtype=out.dtype)
    _, dk2, dv2 = torch.autograd.grad(ref, (q2, k, v), d_out[..., keep, :])
    torch.testing.assert_close(dk, dk2, **F64)
    torch.testing.assert_close(dv, dv2, **F64)


def test_tiled_gradcheck() -> None:
    q, k, v = qkv(1, 1, 5, 7, 3, 2, torch.float64, seed=8)
    mask = random_mask((5, 7), 0.7, seed=9, dead_rows=(2,))
    assert torch.autograd.gradcheck(
        lambda q, k, v: tiled_attention(q, k, v, mask, causal=True, block_q=2, block_k=3),
        (q, k, v),
    )


def test_tiled_broadcast_padding_mask_and_scale() -> None:
    q, k, v = qkv(2, 2, 6, 10, 4, 3, torch.float64, seed=10)
    pad = torch.tensor([[True] * 10, [True] * 6 + [False] * 4])[:, None, None, :]  # (B,1,1,S)
    out = tiled_attention(q, k, v, pad, scale=0.3, block_q=4, block_k=4)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=pad, scale=0.3)
    torch.testing.assert_close(out, ref, **F64)


def test_tiled_numpy_in_numpy_out() -> None:
    rng = np.random.default_rng(11)
    q, k, v = rng.normal(size=(3, 7, 4)), rng.normal(size=(3, 9, 4)), rng.normal(size=(3, 9, 2))
    mask = rng.random((7, 9)) < 0.5
    out = tiled_attention(q, k, v, mask, causal=True, block_q=3, block_k=2)
    assert isinstance(out, np.ndarray) and out.shape == (3, 7, 2)
    ref, _ = scaled_dot_product_attention(q, k, v, mask & causal_mask(7, 9))
    np.testing.assert_allclose(out, ref, **F64)


def test_tiled_never_holds_the_score_matrix() -> None:
    """Forward + backward at T = S = 256 needs less than one (T, S) float32 matrix."""
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 1, 256, 8) for _ in range(3))
    matrix = 256 * 256 * 4

    def run(fn):
        def go():
            a, b, c = (x.clone().requires_grad_() for x in (q, k, v))
            out = fn(a, b, c)
            out.backward(torch.ones_like(out))

        return go

    tiled = peak_memory(run(lambda a, b, c: tiled_attention(a, b, c, block_q=32, block_k=32)))
    full = peak_memory(run(lambda a, b, c: scaled_dot_product_attention(a, b, c)[0]))
    assert tiled < matrix / 2 < matrix < full


def test_tiled_errors() -> None:
    q, k, v = torch.zeros(2, 4, 8), torch.zeros(2, 6, 8), torch.zeros(2, 6, 3)
    with pytest.raises(ValueError, match="same leading"):
        tiled_attention(q, k[:1], v[:1])
    with pytest.raises(ValueError, match="T=4 > S=3"):
        tiled_attention(q, k[:, :3], v[:, :3], causal=True)
    with pytest.raises(ValueError, match="block_q"):
        tiled_attention(q, k, v, block_q=0)
    with pytest.raises(ValueError, match="same size in their last axis"):
        tiled_attention(q, k[..., :4], v)
    with pytest.raises(TypeError, match="boolean"):
        tiled_attention(q, k, v, torch.ones(4, 6))
    with pytest.raises(ValueError, match="broadcast"):
        tiled_attention(q, k, v, torch.ones(4, 5, dtype=torch.bool))
    with pytest.raises(TypeError, match="share a dtype"):
        tiled_attention(q, k.double(), v)


# --- grouped-query attention -------------------------------------------------------------


def test_repeat_kv_layout_matches_repeat_interleave() -> None:
    x = torch.arange(2 * 3 * 4 * 5.0).reshape(2, 3, 4, 5)
    torch.testing.assert_close(repeat_kv(x, 4), x.repeat_interleave(4, dim=1), rtol=0, atol=0)
    np.testing.assert_array_equal(repeat_kv(x.numpy(), 2), x.repeat_interleave(2, 1).numpy())
    with pytest.raises(ValueError, match="n_rep"):
        repeat_kv(x, 0)


def gqa_reference(q, k, v, mask):
    try:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
    except TypeError:  # torch < 2.5 has no enable_gqa: repeat the key-value heads
        n_rep = q.shape[-3] // k.shape[-3]
        return sdpa(q, repeat_kv(k, n_rep), repeat_kv(v, n_rep), mask)


@pytest.mark.parametrize(("H", "G"), [(8, 8), (8, 4), (8, 2), (8, 1), (6, 3)])
@pytest.mark.parametrize("mask_shape", [None, "TS", "B1TS", "BHTS"])
def test_gqa_matches_pytorch_enable_gqa(H, G, mask_shape) -> None:
    g = torch.Generator().manual_seed(H * 10 + G)
    B, T, S, d = 2, 6, 9, 4
    q = torch.randn(B, H, T, d, generator=g, dtype=torch.float64, requires_grad=True)
    k = torch.randn(B, G, S, d, generator=g, dtype=torch.float64, requires_grad=True)
    v = torch.randn(B, G, S, d, generator=g, dtype=torch.float64, requires_grad=True)
    shapes = {None: None, "TS": (T, S), "B1TS": (B, 1, T, S), "BHTS": (B, H, T, S)}
    mask = None if mask_shape is None else random_mask(shapes[mask_shape], 0.6, 12, (1,))
    out, weights = grouped_query_attention(q, k, v, mask)
    ref = gqa_reference(q, k, v, mask)
    torch.testing.assert_close(out, ref, **F64)
    for got, want in zip(grads(out, (q, k, v), 1), grads(ref, (q, k, v), 1), strict=True):
        torch.testing.assert_close(got, want, **F64)
    ref_w = scaled_dot_product_attention(q, repeat_kv(k, H // G), repeat_kv(v, H // G), mask)[1]
    torch.testing.assert_close(weights, ref_w, **F64)


def test_gqa_numpy_and_errors() -> None:
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(4, 3, 2)), rng.normal(size=(2, 5, 2)), rng.normal(size=(2, 5, 3))
    out, weights = grouped_query_attention(q, k, v)
    assert isinstance(out, np.ndarray) and out.shape == (4, 3, 3) and weights.shape == (4, 3, 5)
    ref, _ = scaled_dot_product_attention(q, repeat_kv(k, 2), repeat_kv(v, 2))
    np.testing.assert_allclose(out, ref, **F64)
    with pytest.raises(ValueError, match="G must divide H"):
        grouped_query_attention(q[:3], k, v)
    with pytest.raises(ValueError, match="same number of heads"):
        grouped_query_attention(q, k, v[:1])


def test_gqa_module_with_all_heads_is_multihead_attention() -> None:
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4)
    gqa = GroupedQueryAttention(16, 4, 4)
    gqa.load_state_dict(mha.state_dict())
    x = torch.randn(2, 5, 16)
    mask = causal_mask(5, like=x)
    out, w = gqa(x, mask)
    ref, ref_w = mha(x, mask=mask)
    torch.testing.assert_close(out, ref, **F32)
    torch.testing.assert_close(w, ref_w, **F32)


@pytest.mark.parametrize("G", [4, 2, 1])
def test_gqa_module_parameters_and_shapes(G) -> None:
    D, H = 32, 4
    gqa = GroupedQueryAttention(D, H, G)
    d = D // H
    assert sum(p.numel() for p in gqa.parameters()) == 2 * (D * D + D) + 2 * (D * G * d + G * d)
    out, w = gqa(torch.randn(3, 7, D))
    assert out.shape == (3, 7, D) and w.shape == (3, H, 7, 7)
    with pytest.raises(ValueError, match="n_kv_heads"):
        GroupedQueryAttention(D, H, 3)
    with pytest.raises(ValueError, match="d_model"):
        gqa(torch.randn(3, 7, D + 1))


# --- the KV cache ------------------------------------------------------------------------


@pytest.mark.parametrize("G", [4, 2, 1])
def test_cached_steps_equal_one_causal_pass(G) -> None:
    torch.manual_seed(1)
    layers = [GroupedQueryAttention(16, 4, G) for _ in range(2)]
    x = torch.randn(2, 9, 16)

    def full(x):
        for layer in layers:
            x = x + layer(x, causal_mask(x.shape[1], like=x))[0]
        return x

    cache = KVCache(len(layers))
    outs = []
    for start, stop in ((0, 4), (4, 5), (5, 6), (6, 9)):  # a prompt, then steps
        h = x[:, start:stop]
        for i, layer in enumerate(layers):
            mask = causal_mask(stop - start, stop, like=h)  # new queries see all cached keys
            h = h + layer(h, mask, cache=cache[i])[0]
        outs.append(h)
    torch.testing.assert_close(torch.cat(outs, dim=1), full(x), **F32)
    assert cache.length == 9
    d = 16 // 4
    assert cache.nbytes() == kv_cache_bytes(
        n_layers=2, n_kv_heads=G, d_head=d, seq_len=9, batch=2, bytes_per_value=4
    )


def test_layer_cache_rejects_mismatched_keys() -> None:
    layer = LayerKV()
    assert layer.length == 0 and layer.nbytes() == 0
    layer.update(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3, 4))
    with pytest.raises(ValueError, match="do not fit"):
        layer.update(torch.zeros(1, 3, 1, 4), torch.zeros(1, 3, 1, 4))
    assert repr(KVCache(2)) == "KVCache(layers=2, length=0, nbytes=0)"
    with pytest.raises(ValueError, match="n_layers"):
        KVCache(0)


def test_preallocated_cache_equals_the_growing_one() -> None:
    torch.manual_seed(2)
    growing, preallocated = LayerKV(), LayerKV(capacity=9)
    for n in (4, 1, 1, 3):  # a prompt, two steps, three more
        k, v = torch.randn(2, 3, n, 5), torch.randn(2, 3, n, 7)  # d = 5, d_v = 7
        k_all, v_all = preallocated.update(k, v)
        torch.testing.assert_close(k_all, growing.update(k, v)[0], rtol=0, atol=0)
        torch.testing.assert_close(v_all, growing.v, rtol=0, atol=0)
        assert preallocated.length == growing.length == k_all.shape[-2]
        assert preallocated.nbytes() == growing.nbytes() == growing.reserved_bytes()
    assert preallocated.length == 9 and tuple(preallocated.k.shape) == (2, 3, 9, 5)
    assert preallocated.reserved_bytes() == 2 * 3 * 9 * (5 + 7) * 4
    with pytest.raises(ValueError, match="at most capacity=9 positions: 9 cached"):
        preallocated.update(torch.zeros(2, 3, 1, 5), torch.zeros(2, 3, 1, 7))
    with pytest.raises(ValueError, match="do not fit"):
        preallocated.update(torch.zeros(1, 3, 1, 5), torch.zeros(1, 3, 1, 7))
    with pytest.raises(ValueError, match="capacity"):
        KVCache(2, capacity=0)


def test_preallocated_cache_writes_in_place() -> None:
    layer = LayerKV(capacity=6)
    layer.update(torch.ones(1, 2, 2, 4), torch.ones(1, 2, 2, 4))
    buffer = layer.k.untyped_storage().data_ptr()
    layer.update(torch.zeros(1, 2, 1, 4), torch.zeros(1, 2, 1, 4))
    assert layer.k.untyped_storage().data_ptr() == buffer  # no new allocation, no copy
    assert layer.k[0, 0, :, 0].tolist() == [1.0, 1.0, 0.0]
    short = LayerKV(capacity=2)
    with pytest.raises(ValueError, match="at most capacity=2 positions: 0 cached \\+ 3 new"):
        short.update(torch.zeros(1, 1, 3, 4), torch.zeros(1, 1, 3, 4))


def test_kv_cache_bytes_examples() -> None:
    # 32 layers, 32 heads of 128, 4096 positions, 16-bit: 2 GiB; 8 key-value heads: 512 MiB.
    sizes = {"n_layers": 32, "d_head": 128, "seq_len": 4096}
    assert kv_cache_bytes(n_kv_heads=32, **sizes) == 2 * 2**30
    assert kv_cache_bytes(n_kv_heads=8, **sizes) == 512 * 2**20
    assert kv_cache_bytes(n_kv_heads=1, batch=3, bytes_per_value=4, **sizes) == 3 * 128 * 2**20
    with pytest.raises(ValueError, match="seq_len"):
        kv_cache_bytes(n_layers=1, n_kv_heads=1, d_head=1, seq_len=0)


def test_median_seconds_and_peak_memory() -> None:
    calls = []
    assert median_seconds(lambda: calls.append(1), repeats=3) >= 0
    assert len(calls) > 4  # warm-up calls, then three rounds (of many calls: it is short)
    with pytest.raises(ValueError, match="repeats"):
        median_seconds(lambda: None, repeats=0)
    size = peak_memory(lambda: torch.ones(1024, 1024))
    assert 4 * 2**20 <= size < 5 * 2**20  # one float32 megamatrix, counted once


# --- the KV cache in the decoder-only model ----------------------------------------------


def small_lm(seed: int, **kwargs):
    from attnlab.mechanism.transformer import DecoderOnlyLM

    torch.manual_seed(seed)
    model_options = {k: kwargs.pop(k) for k in ("pad_id", "positional") if k in kwargs}
    sizes = {"d_model": 32, "n_heads": 4, "n_layers": 2, "d_ff": 64, "max_len": 40}
    config = TransformerConfig(**{**sizes, **kwargs})
    return DecoderOnlyLM(23, config, **model_options).eval()


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"norm_first": False},
        {"positional": "sinusoidal"},
        {"pad_id": 0},
        {"n_layers": 3, "n_heads": 2},
    ],
    ids=["pre-LN", "post-LN", "sinusoidal", "padding", "3 layers"],
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generate_with_cache_gives_the_same_tokens(options, seed) -> None:
    from attnlab.mechanism.decoding import generate

    model = small_lm(seed, **options)
    g = torch.Generator().manual_seed(seed)
    prompt = torch.randint(1, 23, (3, 5), generator=g)
    if "pad_id" in options:
        prompt[1, :2] = 0  # left padding in one row: padded keys stay hidden in the cache
    slow = generate(model, prompt, max_new_tokens=25)
    fast = generate(model, prompt, max_new_tokens=25, use_cache=True)
    torch.testing.assert_close(fast, slow, rtol=0, atol=0)


def test_cached_logits_equal_full_logits() -> None:
    model = small_lm(3)
    tokens = torch.randint(0, 23, (2, 12), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        full = model(tokens)  # (B, T, V)
        cache = KVCache(len(model.decoder.layers))
        parts = [model(tokens[:, :7], cache)]  # the prompt at once
        parts += [model(tokens[:, t : t + 1], cache) for t in range(7, 12)]  # then one by one
    torch.testing.assert_close(torch.cat(parts, dim=1), full, rtol=1e-5, atol=1e-5)
    assert cache.length == 12
    assert cache.nbytes() == kv_cache_bytes(
        n_layers=2, n_kv_heads=4, d_head=8, seq_len=12, batch=2, bytes_per_value=4
    )


def test_preallocated_cache_in_the_model() -> None:
    model = small_lm(6, pad_id=0)
    tokens = torch.randint(1, 23, (2, 9), generator=torch.Generator().manual_seed(6))
    tokens[0, :2] = 0  # padding among the cached keys
    with torch.no_grad():
        full = model(tokens)
        cache = KVCache(len(model.decoder.layers), capacity=model.max_len)
        parts = [model(tokens[:, :5], cache)]
        parts += [model(tokens[:, t : t + 1], cache) for t in range(5, 9)]
    torch.testing.assert_close(torch.cat(parts, dim=1), full, rtol=1e-5, atol=1e-5)
    assert cache.reserved_bytes() == 2 * 2 * 2 * 4 * model.max_len * 8 * 4  # the whole window
    assert cache.nbytes() == kv_cache_bytes(
        n_layers=2, n_kv_heads=4, d_head=8, seq_len=9, batch=2, bytes_per_value=4
    )


@pytest.mark.parametrize("cached", [False, True])
def test_generate_calls_the_model(cached) -> None:
    """Through model(...): forward hooks run and a subclass's forward is the one used."""
    from attnlab.mechanism.decoding import generate

    model, calls = small_lm(8), []
    model.register_forward_hook(lambda module, args, out: calls.append(args[0].shape[1]))
    generate(model, torch.tensor([[1, 2, 3]]), max_new_tokens=4, use_cache=cached)
    assert calls == ([3, 1, 1, 1] if cached else [3, 4, 5, 6])


def test_model_checks_its_input_once_at_the_boundary() -> None:
    """The blocks skip their checks inside the model: its own check must catch a mismatch."""
    model = small_lm(7)
    model.decoder.double()  # the embeddings stay float32
    with pytest.raises(TypeError, match="DecoderOnlyLM has float64 weights"):
        model(torch.ones(1, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="token id 23"):
        model(torch.full((1, 3), 23))


def test_generate_with_cache_past_max_len_and_eos() -> None:
    from attnlab.mechanism.decoding import generate

    model = small_lm(4, max_len=10)
    prompt = torch.tensor([[5, 6, 7], [8, 9, 10]])
    slow = generate(model, prompt, max_new_tokens=20)  # the window slides after 7 steps
    fast = generate(model, prompt, max_new_tokens=20, use_cache=True)
    torch.testing.assert_close(fast, slow, rtol=0, atol=0)
    eos = int(slow[0, 4])  # a token the first row produces: it finishes early
    slow = generate(model, prompt, max_new_tokens=20, eos_id=eos)
    fast = generate(model, prompt, max_new_tokens=20, eos_id=eos, use_cache=True)
    torch.testing.assert_close(fast, slow, rtol=0, atol=0)


def test_model_rejects_a_cache_beyond_max_len() -> None:
    model = small_lm(5, max_len=6)
    cache = KVCache(2)
    with torch.no_grad():
        model(torch.ones(1, 5, dtype=torch.long), cache)
        with pytest.raises(ValueError, match="exceed the model's max_len=6"):
            model(torch.ones(1, 2, dtype=torch.long), cache)


def test_sampling_with_cache_draws_the_same_tokens() -> None:
    from attnlab.mechanism.decoding import generate

    model = small_lm(5)
    prompt = torch.randint(1, 23, (8, 4), generator=torch.Generator().manual_seed(5))
    draws = [
        generate(
            model,
            prompt,
            max_new_tokens=15,
            temperature=1.5,
            generator=torch.Generator().manual_seed(7),
            use_cache=cached,
        )
        for cached in (False, True)
    ]
    torch.testing.assert_close(draws[1], draws[0], rtol=0, atol=0)
    greedy = generate(model, prompt, max_new_tokens=15)
    assert not torch.equal(draws[0], greedy), "temperature 1.5 must sample, not take argmax"


# --- what the cache saves: the timings behind chapter 8's figure ------------------------
# Processor time (the default clock) does not count other programs, so these hold on a busy
# machine; each is asserted where it holds by a wide margin.

CHAPTER_8 = Path(__file__).resolve().parent.parent / "chapters" / "08_scale.ipynb"


def chapter_8_lm():
    """The model of chapter 8's KV-cache figure."""
    from attnlab.mechanism.transformer import DecoderOnlyLM

    torch.manual_seed(0)
    return DecoderOnlyLM(
        50, TransformerConfig(d_model=64, n_heads=4, n_layers=2, d_ff=128, max_len=300)
    )


def test_generation_seconds_rows() -> None:
    from attnlab.mechanism.decoding import generation_seconds

    model, state = small_lm(0), torch.random.get_rng_state()
    rows = generation_seconds(model, torch.tensor([[1, 2, 3]]), [1, 4], repeats=1)
    assert torch.equal(torch.random.get_rng_state(), state), "greedy timing draws nothing"
    assert [row["new_tokens"] for row in rows] == [1, 4]
    for row in rows:
        assert set(row) == {"new_tokens", "recompute_s", "cache_s", "speedup"}
        assert row["recompute_s"] > 0 and row["cache_s"] > 0
        assert row["speedup"] == pytest.approx(row["recompute_s"] / row["cache_s"])
    for bad, match in (([], "at least one"), ([0], "new_tokens"), ([2], "clock")):
        with pytest.raises(ValueError, match=match):
            generation_seconds(model, torch.tensor([[1]]), bad, clock="gpu" if bad else "cpu")


def test_the_cache_is_many_times_faster_where_the_prefix_is_long() -> None:
    # 32 tokens after a 192-token prompt: recomputation feeds about 200 tokens a step, the
    # cache one. Measured about 5 times faster; at 1 token both run the prompt once.
    from attnlab.mechanism.decoding import generation_seconds
    from attnlab.mechanism.transformer import DecoderOnlyLM

    torch.manual_seed(0)
    model = DecoderOnlyLM(50, TransformerConfig(d_model=128, n_heads=4, d_ff=512, max_len=256))
    prompt = torch.randint(0, 50, (1, 192), generator=torch.Generator().manual_seed(0))
    one, many = generation_seconds(model.eval(), prompt, [1, 32], repeats=3)
    assert many["speedup"] > 2.5, many
    assert many["speedup"] > 2 * one["speedup"], (one, many)


def test_chapter_8_the_cache_lead_grows_with_the_tokens_generated() -> None:
    from attnlab.measure import times_faster
    from attnlab.mechanism.decoding import generation_seconds

    prose = " ".join(
        " ".join(cell.source.split())
        for cell in nbformat.read(CHAPTER_8, as_version=4).cells
        if cell.cell_type == "markdown"
    )
    assert "the cache's lead grows with $n$, and the title gives it as measured" in prose
    # Chapter 8's model at 4 and 128 tokens: measured about 1.3 and 2.5 times faster.
    prompt = torch.tensor([[3, 1, 4, 1, 5]])
    first, last = generation_seconds(chapter_8_lm().eval(), prompt, [4, 128], repeats=3)
    assert last["speedup"] > 1.3 * first["speedup"], (first, last)
    assert times_faster(last["speedup"]).endswith("x faster")  # what the title then says
