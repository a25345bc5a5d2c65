"""Tests for attnlab.mechanism.interop: after copy_torch_weights, ours and PyTorch's layers agree."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from attnlab.mechanism.config import TransformerConfig
from attnlab.mechanism.interop import copy_torch_weights
from attnlab.mechanism.masking import causal_mask, padding_mask
from attnlab.mechanism.multihead import MultiHeadAttention
from attnlab.mechanism.transformer import DecoderBlock, EncoderBlock, FeedForward, LayerNorm

D, H, D_FF = 16, 4, 24
TOL = 1e-10


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_block_equals_transformer_encoder_layer(norm_first: bool) -> None:
    torch.manual_seed(0)
    theirs = nn.TransformerEncoderLayer(
        D, H, D_FF, dropout=0.0, batch_first=True, norm_first=norm_first, dtype=torch.float64
    ).train()  # train mode: no fused fast path
    ours = EncoderBlock(
        TransformerConfig(d_model=D, n_heads=H, d_ff=D_FF, norm_first=norm_first)
    ).double()
    assert copy_torch_weights(ours, theirs) is ours
    x = torch.randn(2, 5, D, dtype=torch.float64)
    pad = padding_mask(torch.tensor([5, 3]), 5)  # (B, 1, S), True = real
    out = ours(x, pad[:, None])
    torch.testing.assert_close(out, theirs(x, src_key_padding_mask=~pad[:, 0]), rtol=TOL, atol=TOL)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_block_equals_transformer_decoder_layer(norm_first: bool) -> None:
    torch.manual_seed(1)
    theirs = nn.TransformerDecoderLayer(
        D, H, D_FF, dropout=0.0, batch_first=True, norm_first=norm_first, dtype=torch.float64
    ).train()
    ours = copy_torch_weights(
        DecoderBlock(
            TransformerConfig(d_model=D, n_heads=H, d_ff=D_FF, norm_first=norm_first)
        ).double(),
        theirs,
    )
    x, memory = torch.randn(2, 4, D, dtype=torch.float64), torch.randn(2, 6, D, dtype=torch.float64)
    causal = causal_mask(4)
    out = ours(x, memory, torch.as_tensor(causal))
    expected = theirs(x, memory, tgt_mask=~torch.as_tensor(causal))
    torch.testing.assert_close(out, expected, rtol=TOL, atol=TOL)


def test_attention_and_layernorm_alone() -> None:
    torch.manual_seed(2)
    theirs = nn.MultiheadAttention(D, H, batch_first=True, dtype=torch.float64)
    ours = copy_torch_weights(MultiHeadAttention(D, H).double(), theirs)
    q, kv = torch.randn(2, 3, D, dtype=torch.float64), torch.randn(2, 5, D, dtype=torch.float64)
    out, weights = ours(q, kv, kv)
    their_out, their_weights = theirs(q, kv, kv, average_attn_weights=False)
    torch.testing.assert_close(out, their_out, rtol=TOL, atol=TOL)
    torch.testing.assert_close(weights, their_weights, rtol=TOL, atol=TOL)

    norm = nn.LayerNorm(D, dtype=torch.float64)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 2.0)
        norm.bias.uniform_(-1.0, 1.0)
    ours_norm = copy_torch_weights(LayerNorm(D).double(), norm)
    torch.testing.assert_close(ours_norm(q), norm(q), rtol=TOL, atol=TOL)


def test_any_module_laid_out_like_ours_is_filled() -> None:
    """An exercise's own block (same attribute names, another class) can be filled too."""

    class MyBlock(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.self_attn = MultiHeadAttention(D, H)
            self.ffn = FeedForward(D, D_FF)
            self.norm1, self.norm2 = LayerNorm(D), LayerNorm(D)

    theirs = nn.TransformerEncoderLayer(D, H, D_FF, batch_first=True)
    mine = copy_torch_weights(MyBlock(), theirs)
    torch.testing.assert_close(mine.ffn.linear2.bias, theirs.linear2.bias, rtol=0, atol=0)
    torch.testing.assert_close(mine.norm2.gamma, theirs.norm2.weight, rtol=0, atol=0)
    w_k = theirs.self_attn.in_proj_weight[D : 2 * D]
    torch.testing.assert_close(mine.self_attn.W_k.weight, w_k, rtol=0, atol=0)


def test_errors_name_the_problem() -> None:
    theirs = nn.TransformerEncoderLayer(D, H, D_FF, batch_first=True)
    with pytest.raises(TypeError, match="got Linear"):
        copy_torch_weights(
            EncoderBlock(TransformerConfig(d_model=D, n_heads=H, d_ff=D_FF, norm_first=False)),
            nn.Linear(2, 2),
        )
    with pytest.raises(TypeError, match="Linear has no self_attn"):
        copy_torch_weights(nn.Linear(2, 2), theirs)
    with pytest.raises(ValueError, match=r"ffn.linear1.weight has shape \(32, 16\)"):
        copy_torch_weights(
            EncoderBlock(TransformerConfig(d_model=D, n_heads=H, d_ff=32, norm_first=False)), theirs
        )
    decoder = nn.TransformerDecoderLayer(D, H, D_FF, batch_first=True)
    gpt_block = DecoderBlock(
        TransformerConfig(d_model=D, n_heads=H, d_ff=D_FF, norm_first=False), cross_attention=False
    )
    with pytest.raises(TypeError, match="DecoderBlock has no cross_attn"):
        copy_torch_weights(gpt_block, decoder)
