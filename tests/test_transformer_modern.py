"""Chapter 9's options of the config-only transformer: norm, activation, ffn, tie_weights, fused.

Each option is checked against PyTorch where PyTorch has the piece: a block with GELU
against ``nn.TransformerEncoderLayer(activation="gelu")``, a block with RMSNorm against the
same layer whose norms are ``nn.RMSNorm``, fused attention against the course's own
attention (the same weights, outputs and gradients to float32 round-off). The defaults
build chapter 7's modules, parameter for parameter.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch
from test_vs_pytorch_transformer import _close, _copy_mha, _lengths
from torch import nn

from attnlab.mechanism.config import TransformerConfig
from attnlab.mechanism.masking import padding_mask
from attnlab.mechanism.modern import RMSNorm, SwiGLU
from attnlab.mechanism.multihead import MultiHeadAttention
from attnlab.mechanism.transformer import (
    DecoderOnlyLM,
    EncoderBlock,
    EncoderDecoder,
    FeedForward,
    LayerNorm,
)

D, H, D_FF, V = 16, 4, 24, 11


def _lm(**options: object) -> DecoderOnlyLM:
    torch.manual_seed(0)
    config = TransformerConfig(d_model=D, n_heads=H, n_layers=2, max_len=9, **options)
    return DecoderOnlyLM(V, config)


# -- the config ----------------------------------------------------------------------------------


def test_defaults_are_chapter_7s_block() -> None:
    cfg = TransformerConfig(d_model=D, n_heads=H)
    assert (cfg.norm, cfg.activation, cfg.ffn) == ("layer", "relu", "mlp")
    assert (cfg.tie_weights, cfg.fused_attention, cfg.d_ff) == (False, False, 4 * D)
    block = EncoderBlock(cfg)
    assert type(block.norm1) is LayerNorm and type(block.ffn) is FeedForward
    assert block.ffn.activation == "relu" and not block.self_attn.fused
    names = [n for n, _ in _lm().named_parameters()]
    assert "to_logits.weight" in names and "embed.weight" in names


def test_default_model_draws_the_same_weights_as_before() -> None:
    """The options consume no random numbers when left at their defaults: the weights of a
    seeded default model are those of a model built without them (chapter 7's)."""
    ours = _lm()
    again = _lm(norm="layer", activation="relu", ffn="mlp", tie_weights=False)
    for (name, a), (_, b) in zip(
        ours.state_dict().items(), again.state_dict().items(), strict=True
    ):
        assert torch.equal(a, b), name


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"norm": "batch"}, ValueError, "norm must be one of 'layer', 'rms', got 'batch'"),
        ({"norm": None}, ValueError, "norm must be one of"),
        ({"ffn": "glu"}, ValueError, "ffn must be one of 'mlp', 'swiglu', got 'glu'"),
        ({"activation": "tanh"}, ValueError, "activation must be one of 'relu', 'gelu'"),
        ({"activation": "gelu", "ffn": "swiglu"}, ValueError, "gates with a SiLU"),
        ({"tie_weights": 1}, TypeError, "tie_weights must be True or False, got 1"),
        ({"fused_attention": "yes"}, TypeError, "fused_attention must be True or False"),
    ],
)
def test_bad_options_are_named(options: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        TransformerConfig(d_model=D, n_heads=H, **options)


def test_swiglu_width_matches_the_mlp_parameters() -> None:
    cfg = TransformerConfig(d_model=96, n_heads=4, ffn="swiglu", bias=False)
    assert (cfg.activation, cfg.d_ff) == ("silu", 256)  # 8 * 96 // 3
    mlp = EncoderBlock(dataclasses.replace(cfg, ffn="mlp", activation="relu", d_ff=4 * 96)).ffn
    swiglu = EncoderBlock(cfg).ffn
    assert isinstance(swiglu, SwiGLU)
    count = [sum(p.numel() for p in m.parameters()) for m in (mlp, swiglu)]
    assert count == [2 * 96 * 384, 3 * 96 * 256] and count[0] == count[1]


# -- against PyTorch -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("norm", ["layer", "rms"])
@pytest.mark.parametrize("norm_first", [False, True])
def test_gelu_and_rms_blocks_match_pytorch(dtype: torch.dtype, norm: str, norm_first: bool) -> None:
    """``activation="gelu"`` is ``nn.TransformerEncoderLayer(activation="gelu")``; ``norm="rms"``
    is the same layer with its two norms replaced by ``nn.RMSNorm``."""
    torch.manual_seed(1)
    gen = torch.Generator().manual_seed(2)
    B, S = 3, 7
    theirs = nn.TransformerEncoderLayer(
        D, H, D_FF, dropout=0.0, activation="gelu", batch_first=True, norm_first=norm_first
    )
    if norm == "rms":
        theirs.norm1, theirs.norm2 = nn.RMSNorm(D, eps=1e-5), nn.RMSNorm(D, eps=1e-5)
        for n in (theirs.norm1, theirs.norm2):
            nn.init.uniform_(n.weight, 0.5, 1.5)  # not all ones: a swapped gamma would show
    theirs = theirs.to(dtype).train()  # train mode: no fused fast path, dropout is 0
    config = TransformerConfig(
        d_model=D, n_heads=H, d_ff=D_FF, norm_first=norm_first, norm=norm, activation="gelu"
    )
    ours = EncoderBlock(config).to(dtype)
    _copy_mha(ours.self_attn, theirs.self_attn)
    with torch.no_grad():
        for name in ("norm1", "norm2"):
            mine, other = getattr(ours, name), getattr(theirs, name)
            assert isinstance(mine, RMSNorm if norm == "rms" else LayerNorm)
            mine.gamma.copy_(other.weight)
            if norm == "layer":
                mine.beta.copy_(other.bias)
        for name in ("linear1", "linear2"):
            getattr(ours.ffn, name).weight.copy_(getattr(theirs, name).weight)
            getattr(ours.ffn, name).bias.copy_(getattr(theirs, name).bias)
    pad = padding_mask(_lengths(B, S, gen), S)  # (B, 1, S), True = real token
    x = torch.randn(B, S, D, generator=gen).to(dtype)
    x_ours, x_theirs = x.clone().requires_grad_(), x.clone().requires_grad_()
    out_ours = ours(x_ours, pad[:, None])
    out_theirs = theirs(x_theirs, src_key_padding_mask=~pad[:, 0])
    _close(out_ours, out_theirs, dtype)
    grad = torch.randn(B, S, D, generator=gen).to(dtype)
    out_ours.backward(grad)
    out_theirs.backward(grad)
    _close(x_ours.grad, x_theirs.grad, dtype)
    _close(ours.norm1.gamma.grad, theirs.norm1.weight.grad, dtype)
    _close(ours.ffn.linear1.weight.grad, theirs.linear1.weight.grad, dtype)


def test_a_block_with_relu_is_not_the_gelu_layer() -> None:
    """The comparison above can fail: the default (ReLU) block differs from the GELU layer."""
    torch.manual_seed(1)
    theirs = nn.TransformerEncoderLayer(D, H, D_FF, 0.0, "gelu", batch_first=True).train()
    ours = EncoderBlock(TransformerConfig(d_model=D, n_heads=H, d_ff=D_FF, norm_first=False))
    _copy_mha(ours.self_attn, theirs.self_attn)
    with torch.no_grad():
        for name in ("linear1", "linear2"):
            getattr(ours.ffn, name).weight.copy_(getattr(theirs, name).weight)
            getattr(ours.ffn, name).bias.copy_(getattr(theirs, name).bias)
    x = torch.randn(2, 5, D)
    assert not torch.allclose(ours(x), theirs(x), atol=1e-3)


@pytest.mark.parametrize("activation", ["gelu", "gelu_tanh", "silu"])
def test_feed_forward_activations_are_pytorchs(activation: str) -> None:
    torch.manual_seed(0)
    ffn = FeedForward(D, D_FF, activation=activation)
    x = torch.randn(2, 3, D)
    f = {
        "gelu": nn.GELU(),
        "gelu_tanh": nn.GELU(approximate="tanh"),
        "silu": nn.SiLU(),
    }[activation]
    torch.testing.assert_close(ffn(x), ffn.linear2(f(ffn.linear1(x))), rtol=0, atol=0)
    with pytest.raises(ValueError, match="activation must be one of"):
        FeedForward(D, D_FF, activation="swish")


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_fused_attention_equals_the_explicit_one(dtype: torch.dtype) -> None:
    """Same weights, same logits and gradients; the fused model keeps no weights."""
    ours = _lm().to(dtype)
    fused = _lm(fused_attention=True).to(dtype)
    fused.load_state_dict(ours.state_dict())
    tokens = torch.randint(V, (3, 9), generator=torch.Generator().manual_seed(3))
    out, out_fused = ours(tokens), fused(tokens)
    _close(out_fused, out, dtype)
    out.square().sum().backward()
    out_fused.square().sum().backward()
    for (name, p), q in zip(ours.named_parameters(), fused.parameters(), strict=True):
        tol = 1e-10 if dtype == torch.float64 else 1e-4
        torch.testing.assert_close(q.grad, p.grad, rtol=tol, atol=tol, msg=name)
    assert fused.decoder.layers[0].self_attn_weights is None
    with pytest.raises(RuntimeError, match="fused_attention=True keeps none"):
        fused.attention_maps()


def test_fused_attention_gives_a_fully_hidden_query_zero_output() -> None:
    torch.manual_seed(0)
    mha = MultiHeadAttention(D, H, fused=True)
    explicit = MultiHeadAttention(D, H)
    explicit.load_state_dict(mha.state_dict())
    x = torch.randn(2, 4, D)
    mask = torch.ones(2, 1, 4, 4, dtype=torch.bool)
    mask[0, 0, 2] = False  # query 2 of the first sequence sees no key
    out, weights = mha(x, mask=mask)
    assert weights is None and not out.isnan().any()
    torch.testing.assert_close(out, explicit(x, mask=mask)[0], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(out[0, 2], mha.W_o.bias)  # zero attention, then W_o's bias


def test_fused_attention_with_a_kv_cache_matches_a_full_pass() -> None:
    from attnlab.mechanism.kvcache import KVCache

    model = _lm(fused_attention=True).eval()
    tokens = torch.randint(V, (2, 6), generator=torch.Generator().manual_seed(4))
    full = model(tokens)
    cache = KVCache(model.config.n_layers)
    steps = [model(tokens[:, :3], cache)] + [model(tokens[:, t : t + 1], cache) for t in (3, 4, 5)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=1e-5, atol=1e-5)


# -- weight tying --------------------------------------------------------------------------------


def test_tied_read_out_is_the_embedding_matrix() -> None:
    untied, tied = _lm(), _lm(tie_weights=True)
    assert tied.to_logits.weight is tied.embed.weight
    count = [sum(p.numel() for p in m.parameters()) for m in (untied, tied)]
    assert count[0] - count[1] == V * D  # one (vocab, D) matrix saved
    assert tied.embed.weight.std().item() == pytest.approx(0.02, rel=0.3)  # GPT-2's scale
    tokens = torch.randint(V, (2, 5), generator=torch.Generator().manual_seed(5))
    loss = nn.functional.cross_entropy(tied(tokens).flatten(0, 1), tokens.flatten())
    assert abs(loss.item() - torch.log(torch.tensor(float(V))).item()) < 0.5  # starts near ln V
    loss.backward()
    grad = tied.embed.weight.grad
    assert grad is not None and grad.abs().sum() > 0
    # Both uses reach the one matrix: rows of tokens never read still get the read-out's share.
    unseen = sorted(set(range(V)) - set(tokens.flatten().tolist()))
    assert unseen and grad[unseen].abs().sum() > 0
    again = _lm(tie_weights=True)
    again.load_state_dict(tied.state_dict())
    assert again.to_logits.weight is again.embed.weight


def test_tied_encoder_decoder_shares_the_target_embedding() -> None:
    config = TransformerConfig(d_model=D, n_heads=H, max_len=6, tie_weights=True)
    model = EncoderDecoder(7, 9, config)
    assert model.to_logits.weight is model.tgt_embed.weight
    assert model.to_logits.weight is not model.src_embed.weight
    assert model(torch.ones(2, 4, dtype=torch.long), torch.ones(2, 3, dtype=torch.long)).shape == (
        2,
        3,
        9,
    )
