"""Tests for attnlab.mechanism.multihead: split/merge heads and MultiHeadAttention."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attnlab.mechanism.masking import causal_mask, padding_mask
from attnlab.mechanism.multihead import MultiHeadAttention, merge_heads, split_heads

TOL = 1e-10


def layer(d_model=12, n_heads=3, seed=0, **kwargs) -> MultiHeadAttention:
    torch.manual_seed(seed)
    mha = MultiHeadAttention(d_model, n_heads, **kwargs).double()
    with torch.no_grad():  # non-zero biases, so tests notice a missing or misplaced bias
        for lin in (mha.W_q, mha.W_k, mha.W_v, mha.W_o):
            if lin.bias is not None:
                lin.bias.normal_()
    return mha


def randn(*shape, seed=0) -> torch.Tensor:
    return torch.randn(*shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))


# --- split_heads / merge_heads ------------------------------------------------------------


@pytest.mark.parametrize("kind", ["numpy", "torch"])
@pytest.mark.parametrize(("shape", "n_heads"), [((2, 5, 12), 3), ((1, 1, 8), 8), ((4, 6), 2)])
def test_split_heads_layout_and_round_trip(kind, shape, n_heads) -> None:
    x = np.arange(math.prod(shape), dtype=np.float64).reshape(shape)
    x = torch.from_numpy(x) if kind == "torch" else x
    heads = split_heads(x, n_heads)
    *lead, T, D = shape
    d = D // n_heads
    assert tuple(heads.shape) == (*lead, n_heads, T, d)
    assert isinstance(heads, type(x))
    # head h, position t holds features h*d .. (h+1)*d - 1 of token t
    for h in range(n_heads):
        np.testing.assert_array_equal(
            np.asarray(heads[..., h, :, :]), np.asarray(x[..., :, h * d : (h + 1) * d])
        )
    back = merge_heads(heads)
    assert isinstance(back, type(x))
    np.testing.assert_array_equal(np.asarray(back), np.asarray(x))


def test_split_heads_is_a_view_for_torch() -> None:
    x = torch.zeros(2, 3, 4)
    split_heads(x, 2)[0, 1, 2, 0] = 7.0  # batch 0, head 1, position 2, feature 0 of head 1
    assert x[0, 2, 2] == 7.0


def test_split_heads_keeps_gradients() -> None:
    x = randn(2, 3, 4).requires_grad_()
    (merge_heads(split_heads(x, 2)) * randn(2, 3, 4, seed=1)).sum().backward()
    torch.testing.assert_close(x.grad, randn(2, 3, 4, seed=1), rtol=0, atol=0)


def test_split_heads_rejects_indivisible_width() -> None:
    with pytest.raises(ValueError, match=r"shape \(2, 5, 10\) into 3 heads.*D=10"):
        split_heads(np.zeros((2, 5, 10)), 3)


@pytest.mark.parametrize("n_heads", [0, -2, 1.5, True])
def test_split_heads_rejects_bad_head_count(n_heads) -> None:
    with pytest.raises(ValueError, match="n_heads must be a positive integer"):
        split_heads(np.zeros((2, 5, 8)), n_heads)


def test_split_and_merge_reject_too_few_axes() -> None:
    with pytest.raises(ValueError, match=r"\(B, T, D\), got a numpy.ndarray of shape \(8,\)"):
        split_heads(np.zeros(8), 2)
    with pytest.raises(ValueError, match=r"\(B, H, T, d\), got a torch.Tensor of shape \(2, 8\)"):
        merge_heads(torch.zeros(2, 8))


def test_split_heads_accepts_lists() -> None:
    heads = split_heads([[[1, 2, 3, 4]]], 2)
    assert isinstance(heads, np.ndarray)
    np.testing.assert_array_equal(heads, [[[[1, 2]], [[3, 4]]]])


# --- MultiHeadAttention -------------------------------------------------------------------


@pytest.mark.parametrize(("d_model", "n_heads"), [(12, 3), (8, 1), (16, 16), (512, 8)])
def test_param_count_is_4_d_squared_plus_4_d(d_model, n_heads) -> None:
    mha = MultiHeadAttention(d_model, n_heads)
    assert sum(p.numel() for p in mha.parameters()) == 4 * d_model**2 + 4 * d_model
    no_bias = MultiHeadAttention(d_model, n_heads, bias=False)
    assert sum(p.numel() for p in no_bias.parameters()) == 4 * d_model**2
    for name in ("W_q", "W_k", "W_v", "W_o"):
        assert getattr(mha, name).weight.shape == (d_model, d_model)


def test_repr_names_the_sizes() -> None:
    assert "d_model=12, n_heads=3, d_head=4" in repr(MultiHeadAttention(12, 3))


def per_head_reference(mha: MultiHeadAttention, query, key, value, mask=None):
    """Multi-head attention written head by head with weight slices, as in the paper."""
    d, outs, weights = mha.d_head, [], []
    for h in range(mha.n_heads):
        rows = slice(h * d, (h + 1) * d)

        def project(lin, x, rows=rows):
            return x @ lin.weight[rows].T + lin.bias[rows]  # (B, L, D) @ (D, d) -> (B, L, d)

        q, k, v = project(mha.W_q, query), project(mha.W_k, key), project(mha.W_v, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d)  # (B, T, d) @ (B, d, S) -> (B, T, S)
        if mask is not None:
            scores = scores.masked_fill(~mask[:, 0] if mask.ndim == 4 else ~mask, -math.inf)
        w = torch.softmax(scores, dim=-1)
        weights.append(w)
        outs.append(w @ v)  # (B, T, S) @ (B, S, d) -> (B, T, d)
    concat = torch.cat(outs, dim=-1)  # H x (B, T, d) -> (B, T, D)
    return mha.W_o(concat), torch.stack(weights, dim=1)  # (B, T, D), (B, H, T, S)


@pytest.mark.parametrize("cross", [False, True])
@pytest.mark.parametrize("masked", [False, True])
def test_matches_head_by_head_computation(cross, masked) -> None:
    mha = layer()
    query = randn(2, 5, 12, seed=1)
    key = randn(2, 7, 12, seed=2) if cross else query
    value = randn(2, 7, 12, seed=3) if cross else query
    mask = padding_mask(lengths=torch.tensor([key.shape[1], 2]))[:, None] if masked else None
    out, weights = mha(query, key, value, mask=mask)
    ref_out, ref_weights = per_head_reference(mha, query, key, value, mask)
    assert out.shape == (2, 5, 12) and weights.shape == (2, 3, 5, key.shape[1])
    torch.testing.assert_close(out, ref_out, rtol=TOL, atol=TOL)
    torch.testing.assert_close(weights, ref_weights, rtol=TOL, atol=TOL)


def test_key_defaults_to_query_and_value_to_key() -> None:
    mha, x, mem = layer(), randn(2, 4, 12, seed=4), randn(2, 6, 12, seed=5)
    torch.testing.assert_close(mha(x)[0], mha(x, x, x)[0], rtol=0, atol=0)
    torch.testing.assert_close(mha(x, mem)[0], mha(x, mem, mem)[0], rtol=0, atol=0)


def test_uses_the_shared_attention_function(monkeypatch) -> None:
    """One implementation: the module must call attention.attend, the kernel of
    scaled_dot_product_attention."""
    import attnlab.mechanism.multihead as multihead
    from attnlab.mechanism.attention import attend

    calls = []

    def spy(*args, **kwargs):
        calls.append(args[0].shape)
        return attend(*args, **kwargs)

    monkeypatch.setattr(multihead, "attend", spy)
    layer()(randn(2, 5, 12))
    assert calls == [torch.Size([2, 3, 5, 4])]


def test_causal_mask_2d_is_used_directly() -> None:
    mha, x = layer(), randn(2, 5, 12, seed=6)
    out, weights = mha(x, mask=causal_mask(5, like=x))
    assert torch.all(weights.triu(diagonal=1) == 0)
    ref_out, ref_weights = per_head_reference(mha, x, x, x, causal_mask(5, like=x))
    torch.testing.assert_close(out, ref_out, rtol=TOL, atol=TOL)
    torch.testing.assert_close(weights, ref_weights, rtol=TOL, atol=TOL)


def test_padding_and_causal_masks_combine() -> None:
    mha, x = layer(), randn(2, 5, 12, seed=7)
    pad = padding_mask(lengths=torch.tensor([5, 3]))  # (B, 1, S)
    mask = pad[:, None] & causal_mask(5, like=x)  # (B, 1, 1, S) & (T, S) -> (B, 1, T, S)
    _, weights = mha(x, mask=mask)
    assert torch.all(weights[1, :, :, 3:] == 0)  # padded keys of sequence 1
    assert torch.all(weights.triu(diagonal=1) == 0)  # future keys
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, 5, dtype=torch.float64))


def test_fully_masked_rows_give_the_output_bias_and_no_nan() -> None:
    mha, x = layer(), randn(2, 4, 12, seed=8)
    mask = padding_mask(lengths=torch.tensor([4, 0]))[:, None]  # sequence 1: no visible key
    x.requires_grad_()
    out, weights = mha(x, mask=mask)
    assert torch.all(weights[1] == 0)
    torch.testing.assert_close(out[1], mha.W_o.bias.expand(4, 12), rtol=0, atol=0)
    out.sum().backward()
    assert torch.isfinite(x.grad).all()
    assert all(torch.isfinite(p.grad).all() for p in mha.parameters())


def test_rejects_a_3d_mask_as_ambiguous() -> None:
    mha, x = layer(), randn(2, 5, 12)
    pad = padding_mask(lengths=torch.tensor([5, 3]))
    with pytest.raises(ValueError, match=r"3-D mask of shape \(2, 1, 5\).*mask\[:, None\]"):
        mha(x, mask=pad)


def test_rejects_a_mask_of_the_wrong_shape() -> None:
    mha, x = layer(), randn(2, 5, 12)
    with pytest.raises(
        ValueError, match=r"mask of shape \(5, 4\) does not broadcast.*\(2, 3, 5, 5\)"
    ):
        mha(x, mask=torch.ones(5, 4, dtype=torch.bool))


def test_rejects_a_numpy_mask() -> None:
    mha, x = layer(), randn(2, 5, 12)
    with pytest.raises(TypeError, match=r"mask is a numpy.ndarray of shape \(5, 5\), bool"):
        mha(x, mask=causal_mask(5))


def test_rejects_a_non_boolean_mask() -> None:
    mha, x = layer(), randn(2, 5, 12)
    with pytest.raises(TypeError, match=r"mask must be boolean.*shape \(5, 5\), float64"):
        mha(x, mask=torch.ones(5, 5, dtype=torch.float64))


@pytest.mark.parametrize(("d_model", "n_heads"), [(10, 3), (8, 16)])
def test_rejects_d_model_not_divisible_by_heads(d_model, n_heads) -> None:
    with pytest.raises(
        ValueError, match=f"d_model={d_model} is not divisible by n_heads={n_heads}"
    ):
        MultiHeadAttention(d_model, n_heads)


@pytest.mark.parametrize("bad", [{"d_model": 0, "n_heads": 1}, {"d_model": 8, "n_heads": 2.0}])
def test_rejects_non_positive_integer_sizes(bad) -> None:
    with pytest.raises(ValueError, match="must be a positive integer"):
        MultiHeadAttention(**bad)


@pytest.mark.parametrize("p", [-0.1, 1.0])
def test_rejects_bad_dropout(p) -> None:
    with pytest.raises(ValueError, match=r"dropout must be a probability in \[0, 1\)"):
        MultiHeadAttention(8, 2, dropout=p)


def test_rejects_input_of_the_wrong_width() -> None:
    with pytest.raises(
        ValueError, match=r"query must have shape \(B, length, d_model=12\).*\(2, 5, 8\)"
    ):
        layer()(torch.zeros(2, 5, 8, dtype=torch.float64))


def test_rejects_2d_input() -> None:
    with pytest.raises(ValueError, match=r"query must have shape.*shape \(5, 12\)"):
        layer()(torch.zeros(5, 12, dtype=torch.float64))


def test_rejects_numpy_input() -> None:
    with pytest.raises(TypeError, match=r"expects torch tensors, got query: a numpy.ndarray"):
        layer()(np.zeros((2, 5, 12)))


def test_rejects_keys_and_values_of_different_lengths() -> None:
    mha, x = layer(), randn(2, 5, 12)
    with pytest.raises(ValueError, match=r"key: shape \(2, 6, 12\) and value: shape \(2, 7, 12\)"):
        mha(x, randn(2, 6, 12), randn(2, 7, 12))


def test_rejects_query_and_key_of_different_batch_sizes() -> None:
    mha = layer()
    with pytest.raises(ValueError, match=r"query: shape \(2, 5, 12\) and key: shape \(3, 5, 12\)"):
        mha(randn(2, 5, 12), randn(3, 5, 12))


def test_dropout_acts_on_output_weights_only_in_training() -> None:
    mha, x = layer(dropout=0.5), randn(2, 6, 12, seed=9)
    mha.eval()
    out_eval, w_eval = mha(x)
    torch.testing.assert_close(mha(x)[0], out_eval, rtol=0, atol=0)  # deterministic
    mha.train()
    torch.manual_seed(0)
    out_a, w_a = mha(x)
    torch.manual_seed(1)
    out_b, _ = mha(x)
    assert not torch.allclose(out_a, out_eval)
    assert not torch.allclose(out_a, out_b)
    # the returned weights are the ones before dropout: still the eval-mode weights
    torch.testing.assert_close(w_a, w_eval, rtol=0, atol=0)


def test_without_dropout_training_mode_changes_nothing() -> None:
    mha, x = layer(), randn(2, 6, 12, seed=10)
    out_train = mha.train()(x)[0]
    torch.testing.assert_close(mha.eval()(x)[0], out_train, rtol=0, atol=0)


def test_float32_works_and_keeps_dtype() -> None:
    torch.manual_seed(0)
    mha = MultiHeadAttention(8, 2)
    out, weights = mha(torch.randn(2, 3, 8))
    assert out.dtype == weights.dtype == torch.float32


# --- shape tracer -------------------------------------------------------------------------


@pytest.mark.parametrize(("B", "T", "D", "H", "S"), [(2, 5, 16, 4, None), (3, 4, 12, 3, 7)])
def test_trace_shapes_lists_every_intermediate(B, T, D, H, S) -> None:
    from attnlab.mechanism.multihead import trace_shapes

    trace = trace_shapes(B, T, D, H, k_len=S)
    S = T if S is None else S
    d = D // H
    assert trace.sizes == {"B": B, "T": T, "S": S, "D": D, "H": H, "d": d}
    numbers = {"B": B, "T": T, "S": S, "D": D, "H": H, "d": d}
    for step, symbols, shape in trace.steps:
        # the symbolic shape, evaluated with the sizes, is the recorded numeric shape
        expected = tuple(numbers[s.strip()] for s in symbols.strip("()").split(","))
        assert shape == expected, step
    assert trace.shape_of("split_heads(q): transpose") == (B, H, T, d)
    assert trace.shape_of("weights = softmax(scores)") == (B, H, T, S)
    assert trace.shape_of("out = concat @ W_o") == (B, T, D)
    assert [s for s, _, _ in trace.steps][-1] == "out = concat @ W_o"
    assert len(trace.steps) == 13
    text = str(trace)
    assert f"B={B}, T={T}, S={S}, D={D}, H={H}, d={d}" in text
    assert f"(B, H, T, S)  {(B, H, T, S)}" in text
    assert repr(trace) == text


def test_trace_shapes_leaves_no_recorder_behind_and_rejects_bad_sizes() -> None:
    from attnlab.mechanism.multihead import trace_shapes

    with pytest.raises(ValueError, match="d_model=10 is not divisible by n_heads=3"):
        trace_shapes(2, 5, 10, 3)
    with pytest.raises(ValueError, match="q_len must be a positive integer"):
        trace_shapes(2, 0, 8, 2)
    with pytest.raises(KeyError, match="no step 'nope'"):
        trace_shapes(1, 2, 4, 2).shape_of("nope")


def test_forward_holds_no_tracing() -> None:
    """Chapter 4's shape trace is a traced copy of forward (trace_shapes): forward itself
    only computes."""
    import inspect

    source = inspect.getsource(MultiHeadAttention.forward)
    assert "trace" not in source and "record" not in source
    assert len(source.splitlines()) <= 30, "forward fits on one screen"


# --- parameter and FLOP counts ------------------------------------------------------------


@pytest.mark.parametrize("D", [8, 12, 64, 512])
@pytest.mark.parametrize("bias", [True, False])
def test_parameter_count_matches_the_module_for_every_head_count(D, bias) -> None:
    from attnlab.mechanism.multihead import mha_parameter_count

    for H in [h for h in (1, 2, 3, 4, 8) if D % h == 0]:
        mha = MultiHeadAttention(D, H, bias=bias)
        assert mha_parameter_count(D, H, bias=bias) == sum(p.numel() for p in mha.parameters())
    assert mha_parameter_count(512, 8) == 1_050_624


def test_parameter_count_rejects_bad_sizes() -> None:
    from attnlab.mechanism.multihead import mha_parameter_count

    with pytest.raises(ValueError, match="d_model=10 is not divisible by n_heads=4"):
        mha_parameter_count(10, 4)
    with pytest.raises(ValueError, match="d_model must be a positive integer"):
        mha_parameter_count(0)


@pytest.mark.parametrize(("B", "T", "S", "D"), [(1, 5, 5, 16), (2, 3, 7, 24)])
def test_flops_match_torch_flop_counter_for_every_head_count(B, T, S, D) -> None:
    from torch.utils.flop_counter import FlopCounterMode

    from attnlab.mechanism.multihead import mha_flops

    totals = set()
    for H in [h for h in (1, 2, 4, 8) if D % h == 0]:
        mha = layer(D, H)
        query, memory = randn(B, T, D, seed=1), randn(B, S, D, seed=2)
        counter = FlopCounterMode(display=False)
        with counter, torch.no_grad():
            mha(query, memory, memory)
        cost = mha_flops(D, H, T, S, batch=B)
        assert counter.get_total_flops() == cost["total"]
        assert cost["softmax entries"] == B * H * T * S
        parts = ("W_q, W_k, W_v", "q @ k^T", "weights @ v", "W_o")
        assert cost["total"] == sum(cost[p] for p in parts)
        totals.add(cost["total"])
    assert len(totals) == 1  # the matrix products cost the same for every H


def test_flops_default_to_self_attention() -> None:
    from attnlab.mechanism.multihead import mha_flops

    assert mha_flops(8, 2, 5) == mha_flops(8, 2, 5, 5, batch=1)
    with pytest.raises(ValueError, match="batch must be a positive integer"):
        mha_flops(8, 2, 5, batch=0)


# --- conversion to and from nn.MultiheadAttention ----------------------------------------


@pytest.mark.parametrize("bias", [True, False])
def test_to_torch_and_back_give_equal_outputs_and_weights(bias) -> None:
    mha = layer(bias=bias)
    theirs = mha.to_torch()
    assert isinstance(theirs, torch.nn.MultiheadAttention) and theirs.batch_first
    assert theirs.in_proj_weight.dtype == torch.float64
    x, mem = randn(2, 5, 12, seed=1), randn(2, 7, 12, seed=2)
    out, weights = mha(x, mem, mem)
    ref_out, ref_weights = theirs(x, mem, mem, average_attn_weights=False)
    torch.testing.assert_close(out, ref_out, rtol=TOL, atol=TOL)
    torch.testing.assert_close(weights, ref_weights, rtol=TOL, atol=TOL)
    back = MultiHeadAttention.from_torch(theirs)
    assert back.n_heads == 3 and back.d_model == 12
    for name in ("W_q", "W_k", "W_v", "W_o"):
        torch.testing.assert_close(getattr(back, name).weight, getattr(mha, name).weight)
        if bias:
            torch.testing.assert_close(getattr(back, name).bias, getattr(mha, name).bias)
        else:
            assert getattr(back, name).bias is None
    torch.testing.assert_close(back(x)[0], mha(x)[0], rtol=0, atol=0)


def test_from_torch_keeps_mode_dropout_and_rejects_unsupported() -> None:
    theirs = torch.nn.MultiheadAttention(8, 2, dropout=0.25, batch_first=True).eval()
    ours = MultiHeadAttention.from_torch(theirs)
    assert ours.dropout.p == 0.25 and not ours.training
    assert ours.to_torch().dropout == 0.25
    with pytest.raises(TypeError, match=r"expected an nn\.MultiheadAttention, got a Linear"):
        MultiHeadAttention.from_torch(torch.nn.Linear(8, 8))
    with pytest.raises(ValueError, match="kdim, vdim"):
        MultiHeadAttention.from_torch(torch.nn.MultiheadAttention(8, 2, kdim=4))
    with pytest.raises(ValueError, match="add_bias_kv"):
        MultiHeadAttention.from_torch(torch.nn.MultiheadAttention(8, 2, add_bias_kv=True))
