"""Our LayerNorm and transformer blocks against PyTorch's own (code we did not write).

Weights are copied from a freshly initialised PyTorch layer into ours, then both run on the
same input with the same masks; outputs and every gradient (inputs and parameters) must
agree to float64 round-off (1e-10) or float32 round-off (1e-5).

Conventions translated here:
- PyTorch's boolean masks mean True = *ignore* (``src_key_padding_mask``, ``tgt_mask``,
  ``memory_key_padding_mask``); ours mean True = may attend, so ours = ``~theirs``.
- ``nn.MultiheadAttention`` packs ``W_q, W_k, W_v`` into one ``in_proj_weight`` of shape
  ``(3D, D)`` (rows ``[W_q; W_k; W_v]``); ours are three ``nn.Linear``.
- ``nn.LayerNorm`` calls ``gamma, beta`` ``weight, bias``.

The PyTorch layers are kept in ``train()`` mode with ``dropout=0``: in ``eval()`` mode
``nn.TransformerEncoderLayer`` may take its "fast path", a fused C++ kernel
(``torch._transformer_encoder_layer_fwd``) that runs on nested tensors and returns zeros at
padded positions. That is a different computation from the documented layer (and has no
backward); with dropout 0, train mode gives exactly the documented layer, which is the one
we reproduce.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from attnlab.mechanism.config import TransformerConfig
from attnlab.mechanism.masking import causal_mask, combine_masks, padding_mask
from attnlab.mechanism.multihead import MultiHeadAttention
from attnlab.mechanism.transformer import DecoderBlock, Encoder, EncoderBlock, LayerNorm

TOLERANCES = {torch.float64: 1e-10, torch.float32: 1e-5}
D, H, D_FF = 16, 4, 24


def _close(ours: torch.Tensor, theirs: torch.Tensor, dtype: torch.dtype) -> None:
    tol = TOLERANCES[dtype]
    torch.testing.assert_close(ours, theirs, rtol=tol, atol=tol)


def _copy_mha(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    w_q, w_k, w_v = theirs.in_proj_weight.chunk(3, dim=0)  # (3D, D) -> 3 x (D, D)
    b_q, b_k, b_v = theirs.in_proj_bias.chunk(3, dim=0)  # (3D,) -> 3 x (D,)
    with torch.no_grad():
        for lin, w, b in ((ours.W_q, w_q, b_q), (ours.W_k, w_k, b_k), (ours.W_v, w_v, b_v)):
            lin.weight.copy_(w)
            lin.bias.copy_(b)
        ours.W_o.weight.copy_(theirs.out_proj.weight)
        ours.W_o.bias.copy_(theirs.out_proj.bias)


def _copy_norm(ours: LayerNorm, theirs: nn.LayerNorm) -> None:
    with torch.no_grad():
        ours.gamma.copy_(theirs.weight)
        ours.beta.copy_(theirs.bias)


def _copy_ffn(ours: nn.Module, theirs: nn.Module) -> None:
    with torch.no_grad():
        for name in ("linear1", "linear2"):
            getattr(ours.ffn, name).weight.copy_(getattr(theirs, name).weight)
            getattr(ours.ffn, name).bias.copy_(getattr(theirs, name).bias)


def _mha_grads_close(ours: MultiHeadAttention, theirs: nn.MultiheadAttention, dtype) -> None:
    g_in = torch.cat([ours.W_q.weight.grad, ours.W_k.weight.grad, ours.W_v.weight.grad])
    g_in_b = torch.cat([ours.W_q.bias.grad, ours.W_k.bias.grad, ours.W_v.bias.grad])
    _close(g_in, theirs.in_proj_weight.grad, dtype)
    _close(g_in_b, theirs.in_proj_bias.grad, dtype)
    _close(ours.W_o.weight.grad, theirs.out_proj.weight.grad, dtype)
    _close(ours.W_o.bias.grad, theirs.out_proj.bias.grad, dtype)


def _norm_ffn_grads_close(ours: nn.Module, theirs: nn.Module, norms: list[str], dtype) -> None:
    for name in norms:
        _close(getattr(ours, name).gamma.grad, getattr(theirs, name).weight.grad, dtype)
        _close(getattr(ours, name).beta.grad, getattr(theirs, name).bias.grad, dtype)
    for name in ("linear1", "linear2"):
        _close(getattr(ours.ffn, name).weight.grad, getattr(theirs, name).weight.grad, dtype)
        _close(getattr(ours.ffn, name).bias.grad, getattr(theirs, name).bias.grad, dtype)


def _lengths(batch: int, length: int, gen: torch.Generator) -> torch.Tensor:
    """Random lengths in 1..length with at least one full-length sequence (no empty rows)."""
    lengths = torch.randint(1, length + 1, (batch,), generator=gen)
    lengths[0] = length
    return lengths


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("shape", [(5,), (3, 5), (2, 4, 7)])
def test_layernorm_matches_nn_layernorm(dtype: torch.dtype, shape: tuple[int, ...]) -> None:
    gen = torch.Generator().manual_seed(0)
    d = shape[-1]
    theirs = nn.LayerNorm(d, eps=1e-5).to(dtype)
    with torch.no_grad():
        theirs.weight.copy_(torch.randn(d, generator=gen))
        theirs.bias.copy_(torch.randn(d, generator=gen))
    ours = LayerNorm(d, eps=1e-5).to(dtype)
    _copy_norm(ours, theirs)
    x = (3 * torch.randn(shape, generator=gen) + 2).to(dtype)
    x_ours, x_theirs = x.clone().requires_grad_(), x.clone().requires_grad_()
    out_ours, out_theirs = ours(x_ours), theirs(x_theirs)
    _close(out_ours, out_theirs, dtype)
    grad_out = torch.randn(shape, generator=gen).to(dtype)
    out_ours.backward(grad_out)
    out_theirs.backward(grad_out)
    _close(x_ours.grad, x_theirs.grad, dtype)
    _close(ours.gamma.grad, theirs.weight.grad, dtype)
    _close(ours.beta.grad, theirs.bias.grad, dtype)


def test_layernorm_uses_the_biased_variance() -> None:
    x = torch.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=torch.float64)
    out = LayerNorm(4, eps=0.0 + 1e-12)(x)
    var = torch.tensor(1.25, dtype=torch.float64)  # mean((x - 2.5)^2), not the unbiased 5/3
    expected = (x - 2.5) / torch.sqrt(var)
    torch.testing.assert_close(out, expected, rtol=0, atol=1e-9)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("causal", [False, True])
def test_encoder_block_matches_transformer_encoder_layer(
    dtype: torch.dtype, norm_first: bool, causal: bool
) -> None:
    torch.manual_seed(1)
    gen = torch.Generator().manual_seed(2)
    B, S = 3, 7
    theirs = nn.TransformerEncoderLayer(
        D, H, dim_feedforward=D_FF, dropout=0.0, batch_first=True, norm_first=norm_first
    ).to(dtype)
    theirs.train()  # no fast path (see the module docstring)
    ours = EncoderBlock(
        TransformerConfig(d_model=D, n_heads=H, d_ff=D_FF, dropout=0.0, norm_first=norm_first)
    ).to(dtype)
    _copy_mha(ours.self_attn, theirs.self_attn)
    _copy_norm(ours.norm1, theirs.norm1)
    _copy_norm(ours.norm2, theirs.norm2)
    _copy_ffn(ours, theirs)

    lengths = _lengths(B, S, gen)
    pad = padding_mask(lengths, S)  # (B, 1, S), True = real token
    our_mask = pad[:, None]  # (B, 1, 1, S)
    their_causal = None
    if causal:
        our_mask = combine_masks(our_mask, causal_mask(S, like=pad))  # (B, 1, S, S)
        their_causal = ~causal_mask(S, like=pad)  # (S, S), True = ignore
    their_padding = ~pad[:, 0]  # (B, S), True = ignore

    x = torch.randn(B, S, D, generator=gen).to(dtype)
    x_ours, x_theirs = x.clone().requires_grad_(), x.clone().requires_grad_()
    out_ours = ours(x_ours, our_mask)
    out_theirs = theirs(x_theirs, src_mask=their_causal, src_key_padding_mask=their_padding)
    _close(out_ours, out_theirs, dtype)

    grad_out = torch.randn(B, S, D, generator=gen).to(dtype)
    out_ours.backward(grad_out)
    out_theirs.backward(grad_out)
    _close(x_ours.grad, x_theirs.grad, dtype)
    _mha_grads_close(ours.self_attn, theirs.self_attn, dtype)
    _norm_ffn_grads_close(ours, theirs, ["norm1", "norm2"], dtype)
    assert ours.self_attn_weights.shape == (B, H, S, S)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_block_matches_transformer_decoder_layer(
    dtype: torch.dtype, norm_first: bool
) -> None:
    torch.manual_seed(3)
    gen = torch.Generator().manual_seed(4)
    B, T, S = 3, 6, 8
    theirs = nn.TransformerDecoderLayer(
        D, H, dim_feedforward=D_FF, dropout=0.0, batch_first=True, norm_first=norm_first
    ).to(dtype)
    theirs.train()
    ours = DecoderBlock(
        TransformerConfig(d_model=D, n_heads=H, d_ff=D_FF, dropout=0.0, norm_first=norm_first)
    ).to(dtype)
    _copy_mha(ours.self_attn, theirs.self_attn)
    _copy_mha(ours.cross_attn, theirs.multihead_attn)
    for i in (1, 2, 3):
        _copy_norm(getattr(ours, f"norm{i}"), getattr(theirs, f"norm{i}"))
    _copy_ffn(ours, theirs)

    tgt_pad = padding_mask(_lengths(B, T, gen), T)  # (B, 1, T)
    src_pad = padding_mask(_lengths(B, S, gen), S)  # (B, 1, S)
    causal = causal_mask(T, like=tgt_pad)  # (T, T)
    self_mask = combine_masks(causal, tgt_pad[:, None])  # (B, 1, T, T)
    memory_mask = src_pad[:, None]  # (B, 1, 1, S)

    x = torch.randn(B, T, D, generator=gen).to(dtype)
    memory = torch.randn(B, S, D, generator=gen).to(dtype)
    x_ours, x_theirs = x.clone().requires_grad_(), x.clone().requires_grad_()
    m_ours, m_theirs = memory.clone().requires_grad_(), memory.clone().requires_grad_()
    out_ours = ours(x_ours, m_ours, self_mask, memory_mask)
    out_theirs = theirs(
        x_theirs,
        m_theirs,
        tgt_mask=~causal,
        tgt_key_padding_mask=~tgt_pad[:, 0],
        memory_key_padding_mask=~src_pad[:, 0],
    )
    _close(out_ours, out_theirs, dtype)

    grad_out = torch.randn(B, T, D, generator=gen).to(dtype)
    out_ours.backward(grad_out)
    out_theirs.backward(grad_out)
    _close(x_ours.grad, x_theirs.grad, dtype)
    _close(m_ours.grad, m_theirs.grad, dtype)
    _mha_grads_close(ours.self_attn, theirs.self_attn, dtype)
    _mha_grads_close(ours.cross_attn, theirs.multihead_attn, dtype)
    _norm_ffn_grads_close(ours, theirs, ["norm1", "norm2", "norm3"], dtype)
    assert ours.self_attn_weights.shape == (B, H, T, T)
    assert ours.cross_attn_weights.shape == (B, H, T, S)


@pytest.mark.parametrize("norm_first", [False, True])
def test_a_wrong_layout_is_caught(norm_first: bool) -> None:
    """The comparison can fail: the other LayerNorm placement gives a different output."""
    torch.manual_seed(5)
    theirs = nn.TransformerEncoderLayer(
        D, H, dim_feedforward=D_FF, dropout=0.0, batch_first=True, norm_first=norm_first
    ).double()
    ours = EncoderBlock(
        TransformerConfig(d_model=D, n_heads=H, d_ff=D_FF, norm_first=not norm_first)
    ).double()
    _copy_mha(ours.self_attn, theirs.self_attn)
    _copy_norm(ours.norm1, theirs.norm1)
    _copy_norm(ours.norm2, theirs.norm2)
    _copy_ffn(ours, theirs)
    x = torch.randn(2, 5, D, dtype=torch.float64)
    with pytest.raises(AssertionError):
        _close(ours(x), theirs(x), torch.float64)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_stack_matches_nn_transformer_encoder(norm_first: bool) -> None:
    """Our pre-LN stack's final LayerNorm is nn.TransformerEncoder's optional ``norm``."""
    torch.manual_seed(6)
    layer = nn.TransformerEncoderLayer(
        D, H, dim_feedforward=D_FF, dropout=0.0, batch_first=True, norm_first=norm_first
    )
    final = nn.LayerNorm(D) if norm_first else None
    theirs = nn.TransformerEncoder(layer, 3, norm=final, enable_nested_tensor=False).double()
    theirs.train()
    with torch.no_grad():  # a non-trivial final norm
        for p in theirs.parameters():
            p.add_(0.1 * torch.randn_like(p))
    ours = Encoder(
        TransformerConfig(d_model=D, n_heads=H, n_layers=3, d_ff=D_FF, norm_first=norm_first)
    ).double()
    for mine, its in zip(ours.layers, theirs.layers, strict=True):
        _copy_mha(mine.self_attn, its.self_attn)
        _copy_norm(mine.norm1, its.norm1)
        _copy_norm(mine.norm2, its.norm2)
        _copy_ffn(mine, its)
    assert (ours.norm is None) == (theirs.norm is None)
    if norm_first:
        _copy_norm(ours.norm, theirs.norm)
    pad = padding_mask(torch.tensor([6, 3]), 6)  # (B, 1, S)
    x = torch.randn(2, 6, D, dtype=torch.float64)
    _close(ours(x, pad[:, None]), theirs(x, src_key_padding_mask=~pad[:, 0]), torch.float64)
