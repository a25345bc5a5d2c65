"""Tests for attnlab.mechanism.transformer: the layers' math, the masks' effects, the models and decoding.

Equality with PyTorch's own layers is in test_vs_pytorch_transformer.py.
"""

from __future__ import annotations

import os

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from attnlab.mechanism.config import TransformerConfig
from attnlab.mechanism.decoding import generate, greedy_decode
from attnlab.mechanism.masking import causal_mask, padding_mask
from attnlab.mechanism.transformer import (
    Decoder,
    DecoderBlock,
    DecoderOnlyLM,
    Encoder,
    EncoderBlock,
    EncoderDecoder,
    FeedForward,
    LayerNorm,
)

D, H, D_FF = 16, 4, 32
TOL = {"rtol": 0, "atol": 1e-10}


SIZES = {"d_model": D, "n_heads": H, "n_layers": 2, "d_ff": D_FF}


def _model(pad_id: int = 0, positional: str = "sinusoidal", **config) -> EncoderDecoder:
    torch.manual_seed(0)
    config = TransformerConfig(**{**SIZES, "max_len": 12, **config})
    return EncoderDecoder(12, 9, config, pad_id=pad_id, positional=positional).double()


def _lm(pad_id: int | None = None, positional: str = "learned") -> DecoderOnlyLM:
    torch.manual_seed(0)
    config = TransformerConfig(**SIZES, max_len=8)
    return DecoderOnlyLM(11, config, pad_id=pad_id, positional=positional).double()


# LayerNorm and FeedForward ------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(
    shift=st.floats(-1e3, 1e3),
    scale=st.floats(1e-2, 1e3),
    seed=st.integers(0, 2**16),
)
def test_layernorm_gives_mean_zero_variance_one_per_token(
    shift: float, scale: float, seed: int
) -> None:
    gen = torch.Generator().manual_seed(seed)
    x = shift + scale * torch.randn(3, 5, D, generator=gen, dtype=torch.float64)
    out = LayerNorm(D).double()(x)
    torch.testing.assert_close(out.mean(-1), torch.zeros(3, 5, dtype=torch.float64), **TOL)
    var = out.var(-1, correction=0)
    expected = x.var(-1, correction=0) / (x.var(-1, correction=0) + 1e-5)
    torch.testing.assert_close(var, expected, rtol=1e-9, atol=1e-9)


def test_layernorm_gamma_beta_scale_and_shift() -> None:
    norm = LayerNorm(4).double()
    with torch.no_grad():
        norm.gamma.copy_(torch.tensor([1.0, 2.0, 3.0, 4.0]))
        norm.beta.copy_(torch.tensor([0.5, 0.0, -0.5, 1.0]))
    x = torch.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=torch.float64)
    x_hat = (x - 2.5) / torch.sqrt(torch.tensor(1.25 + 1e-5, dtype=torch.float64))
    torch.testing.assert_close(norm(x), x_hat * norm.gamma.detach() + norm.beta.detach(), **TOL)
    assert {n for n, _ in norm.named_parameters()} == {"gamma", "beta"}


def test_layernorm_constant_vector_gives_beta_not_nan() -> None:
    norm = LayerNorm(3)
    out = norm(torch.full((2, 3), 7.0))
    torch.testing.assert_close(out, torch.zeros(2, 3), rtol=0, atol=0)


def test_layernorm_errors() -> None:
    with pytest.raises(ValueError, match=r"\(\.\.\., 4\).*\(2, 3\)"):
        LayerNorm(4)(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="eps"):
        LayerNorm(4, eps=0.0)
    with pytest.raises(TypeError, match=r"torch\.Tensor"):
        LayerNorm(4)([1.0, 2.0, 3.0, 4.0])


def test_feedforward_is_position_wise() -> None:
    torch.manual_seed(0)
    ffn = FeedForward(D, D_FF).double()
    x = torch.randn(2, 6, D, dtype=torch.float64)
    one_at_a_time = torch.stack([ffn(x[:, t]) for t in range(6)], dim=1)
    torch.testing.assert_close(ffn(x), one_at_a_time, rtol=0, atol=1e-12)
    # ...and it is exactly linear2(relu(linear1(x))).
    expected = ffn.linear2(torch.relu(ffn.linear1(x)))
    torch.testing.assert_close(ffn(x), expected, **TOL)


# Encoder and decoder blocks -------------------------------------------------------------------


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_block_without_mask_is_permutation_equivariant(norm_first: bool) -> None:
    torch.manual_seed(0)
    block = EncoderBlock(
        TransformerConfig(d_model=D, n_heads=H, d_ff=D_FF, norm_first=norm_first)
    ).double()
    x = torch.randn(2, 7, D, dtype=torch.float64)
    perm = torch.randperm(7)
    torch.testing.assert_close(block(x[:, perm]), block(x)[:, perm], rtol=0, atol=1e-12)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_block_padded_keys_change_nothing(norm_first: bool) -> None:
    torch.manual_seed(0)
    block = EncoderBlock(
        TransformerConfig(d_model=D, n_heads=H, d_ff=D_FF, norm_first=norm_first)
    ).double()
    lengths = torch.tensor([4, 7])
    mask = padding_mask(lengths, 7)[:, None]  # (B, 1, 1, S)
    x = torch.randn(2, 7, D, dtype=torch.float64)
    y = x.clone()
    y[0, 4:] = 100 * torch.randn(3, D, dtype=torch.float64)  # garbage in the padding
    out_x, out_y = block(x, mask), block(y, mask)
    torch.testing.assert_close(out_x[0, :4], out_y[0, :4], rtol=0, atol=1e-12)
    torch.testing.assert_close(out_x[1], out_y[1], rtol=0, atol=1e-12)
    weights = block.self_attn_weights
    assert weights.shape == (2, H, 7, 7)
    assert not weights.requires_grad
    torch.testing.assert_close(weights[0, ..., 4:], torch.zeros(H, 7, 3, dtype=torch.float64))
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, H, 7, dtype=torch.float64), **TOL)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("cross_attention", [True, False])
def test_decoder_block_is_causal(norm_first: bool, cross_attention: bool) -> None:
    torch.manual_seed(0)
    block = DecoderBlock(
        TransformerConfig(d_model=D, n_heads=H, d_ff=D_FF, norm_first=norm_first),
        cross_attention=cross_attention,
    ).double()
    x = torch.randn(2, 6, D, dtype=torch.float64)
    memory = torch.randn(2, 5, D, dtype=torch.float64) if cross_attention else None
    y = x.clone()
    y[:, 3:] = torch.randn(2, 3, D, dtype=torch.float64)  # change the future only
    mask = causal_mask(6, like=x)
    out_x, out_y = block(x, memory, mask), block(y, memory, mask)
    torch.testing.assert_close(out_x[:, :3], out_y[:, :3], rtol=0, atol=1e-12)
    assert not torch.allclose(out_x[:, 3:], out_y[:, 3:])
    torch.testing.assert_close(
        block.self_attn_weights[..., 0, 1:], torch.zeros(2, H, 5, dtype=torch.float64)
    )
    if cross_attention:
        assert block.cross_attn_weights.shape == (2, H, 6, 5)
    else:
        assert block.cross_attn is None and block.norm2 is None


def test_decoder_block_padded_memory_changes_nothing() -> None:
    torch.manual_seed(0)
    block = DecoderBlock(
        TransformerConfig(d_model=D, n_heads=H, d_ff=D_FF, norm_first=False)
    ).double()
    x = torch.randn(2, 4, D, dtype=torch.float64)
    memory = torch.randn(2, 6, D, dtype=torch.float64)
    other = memory.clone()
    other[1, 2:] = torch.randn(4, D, dtype=torch.float64)
    memory_mask = padding_mask(torch.tensor([6, 2]), 6)[:, None]  # (B, 1, 1, S)
    torch.testing.assert_close(
        block(x, memory, None, memory_mask), block(x, other, None, memory_mask), **TOL
    )
    torch.testing.assert_close(
        block.cross_attn_weights[1, ..., 2:], torch.zeros(H, 4, 4, dtype=torch.float64)
    )


def test_decoder_block_memory_errors() -> None:
    x = torch.randn(1, 3, D)
    with pytest.raises(ValueError, match="pass the encoder memory"):
        DecoderBlock(TransformerConfig(d_model=D, n_heads=H, d_ff=D_FF, norm_first=False))(x)
    with pytest.raises(ValueError, match="cross_attention=False"):
        DecoderBlock(
            TransformerConfig(d_model=D, n_heads=H, d_ff=D_FF, norm_first=False),
            cross_attention=False,
        )(x, x)


@pytest.mark.parametrize("norm_first", [False, True])
def test_stacks_have_a_final_norm_only_when_pre_ln(norm_first: bool) -> None:
    torch.manual_seed(0)
    encoder = Encoder(
        TransformerConfig(d_model=D, n_heads=H, n_layers=3, d_ff=D_FF, norm_first=norm_first)
    ).double()
    decoder = Decoder(
        TransformerConfig(d_model=D, n_heads=H, n_layers=2, d_ff=D_FF, norm_first=norm_first)
    ).double()
    assert len(encoder.layers) == 3 and len(decoder.layers) == 2
    assert (encoder.norm is not None) == norm_first
    assert (decoder.norm is not None) == norm_first
    x = torch.randn(2, 5, D, dtype=torch.float64)
    expected = x
    for layer in encoder.layers:
        expected = layer(expected)
    if norm_first:
        expected = encoder.norm(expected)
    torch.testing.assert_close(encoder(x), expected, **TOL)


def test_post_ln_block_output_is_normalised() -> None:
    """Post-LN ends with a LayerNorm: with γ = 1, β = 0 each output token has mean 0."""
    torch.manual_seed(0)
    out = EncoderBlock(
        TransformerConfig(d_model=D, n_heads=H, d_ff=D_FF, norm_first=False)
    ).double()(torch.randn(2, 5, D, dtype=torch.float64))
    torch.testing.assert_close(out.mean(-1), torch.zeros(2, 5, dtype=torch.float64), **TOL)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"d_model": 10, "n_heads": 4}, "divisible"),
        ({"dropout": 1.0}, "dropout"),
        ({"d_ff": 0}, "d_ff"),
    ],
)
def test_block_arguments_are_checked(kwargs: dict, match: str) -> None:
    args = {"d_model": D, "n_heads": H, "d_ff": D_FF, **kwargs}
    with pytest.raises(ValueError, match=match):
        EncoderBlock(TransformerConfig(**args))


# EncoderDecoder -------------------------------------------------------------------------------


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("positional", ["sinusoidal", "learned"])
def test_encoder_decoder_shapes_and_attention_maps(norm_first: bool, positional: str) -> None:
    model = _model(norm_first=norm_first, positional=positional)
    src = torch.tensor([[3, 4, 5, 6, 7], [8, 9, 10, 0, 0]])
    tgt_in = torch.tensor([[1, 3, 4, 5], [1, 6, 0, 0]])
    logits = model(src, tgt_in)
    assert logits.shape == (2, 4, 9) and logits.dtype == torch.float64
    maps = model.attention_maps()
    assert set(maps) == {"encoder_self", "decoder_self", "cross"}
    for kind, shape in [
        ("encoder_self", (2, H, 5, 5)),
        ("decoder_self", (2, H, 4, 4)),
        ("cross", (2, H, 4, 5)),
    ]:
        assert len(maps[kind]) == 2
        assert all(w.shape == shape for w in maps[kind]), kind
    # Padded source keys get no attention anywhere; future target keys neither.
    for w in (*maps["encoder_self"], *maps["cross"]):
        torch.testing.assert_close(w[1, ..., 3:], torch.zeros_like(w[1, ..., 3:]), **TOL)
    for w in maps["decoder_self"]:
        assert torch.all(w.triu(diagonal=1) == 0)


def test_attention_maps_before_any_forward_pass() -> None:
    with pytest.raises(RuntimeError, match="run the model"):
        _model().attention_maps()


def test_encoder_decoder_is_causal_in_the_target() -> None:
    model = _model()
    src = torch.tensor([[3, 4, 5, 6]])
    a = torch.tensor([[1, 3, 4, 5, 6]])
    b = torch.tensor([[1, 3, 4, 8, 2]])
    torch.testing.assert_close(model(src, a)[:, :3], model(src, b)[:, :3], **TOL)
    assert not torch.allclose(model(src, a)[:, 3:], model(src, b)[:, 3:])


def test_encoder_decoder_extra_padding_changes_nothing() -> None:
    model = _model()
    src = torch.tensor([[3, 4, 5, 6]])
    tgt_in = torch.tensor([[1, 3, 4]])
    padded_src = torch.tensor([[3, 4, 5, 6, 0, 0, 0]])
    padded_tgt = torch.tensor([[1, 3, 4, 0, 0]])
    torch.testing.assert_close(model(padded_src, tgt_in), model(src, tgt_in), **TOL)
    torch.testing.assert_close(model(src, padded_tgt)[:, :3], model(src, tgt_in), **TOL)


def test_encoder_decoder_embeddings_scaled_and_pad_embedding_zero() -> None:
    model = _model()
    assert torch.all(model.src_embed.weight[0] == 0) and torch.all(model.tgt_embed.weight[0] == 0)
    # Entries ~ N(0, 1/D): times sqrt(D) they have about unit variance.
    var = (model.src_embed.weight[1:] * D**0.5).var().item()
    assert 0.5 < var < 1.5


def test_encoder_decoder_rejects_bad_tokens() -> None:
    model = _model()
    ok_src, ok_tgt = torch.tensor([[3, 4]]), torch.tensor([[1, 3]])
    with pytest.raises(ValueError, match=r"token id 12 .*vocabulary has 12 ids.*0\.\.11"):
        model(torch.tensor([[3, 12]]), ok_tgt)
    with pytest.raises(ValueError, match=r"tgt_in holds token id 9 .*vocabulary has 9 ids"):
        model(ok_src, torch.tensor([[1, 9]]))
    with pytest.raises(ValueError, match="token id -1"):
        model(torch.tensor([[3, -1]]), ok_tgt)
    with pytest.raises(ValueError, match=r"length 13, longer than the model's max_len=12"):
        model(torch.full((1, 13), 3), ok_tgt)
    with pytest.raises(TypeError, match="integer token ids"):
        model(ok_src.float(), ok_tgt)
    with pytest.raises(TypeError, match=r"torch\.Tensor"):
        model([[3, 4]], ok_tgt)
    with pytest.raises(ValueError, match=r"\(batch, length >= 1\)"):
        model(torch.tensor([3, 4]), ok_tgt)
    with pytest.raises(ValueError, match="batch size 2"):
        model(ok_src, torch.tensor([[1, 3], [1, 4]]))
    with pytest.raises(ValueError, match="pad_id"):
        _model(pad_id=9)
    with pytest.raises(ValueError, match="positional"):
        _model(positional="rotary")


def test_all_padding_source_gives_zero_cross_attention_not_nan() -> None:
    model = _model()
    logits = model(torch.tensor([[0, 0, 0]]), torch.tensor([[1, 3]]))
    assert torch.isfinite(logits).all()
    for w in model.attention_maps()["cross"]:
        torch.testing.assert_close(w, torch.zeros_like(w), rtol=0, atol=0)


def test_dropout_is_active_only_in_training() -> None:
    model = _model(dropout=0.5)
    src, tgt_in = torch.tensor([[3, 4, 5]]), torch.tensor([[1, 3, 4]])
    model.eval()
    torch.testing.assert_close(model(src, tgt_in), model(src, tgt_in), rtol=0, atol=0)
    model.train()
    assert not torch.allclose(model(src, tgt_in), model(src, tgt_in))


# Greedy decoding ------------------------------------------------------------------------------


def test_greedy_decode_is_the_argmax_of_its_own_prefix() -> None:
    model = _model()
    model.train()
    src = torch.tensor([[3, 4, 5, 6, 7], [8, 9, 10, 11, 0]])
    out = greedy_decode(model, src, bos_id=1, eos_id=2, max_len=6)
    assert model.training, "greedy_decode must restore train mode"
    assert out.shape[0] == 2 and 1 <= out.shape[1] <= 6
    tgt_in = torch.cat([torch.ones(2, 1, dtype=torch.long), out[:, :-1]], dim=1)
    model.eval()
    expected = model(src, tgt_in).argmax(-1)  # (B, L)
    for b in range(2):
        row = out[b].tolist()
        n = row.index(2) + 1 if 2 in row else len(row)  # up to and including EOS
        assert row[:n] == expected[b, :n].tolist()
        assert all(t == model.pad_id for t in row[n:])


@pytest.mark.parametrize(("favourite", "length"), [(2, 1), (5, 7)])
def test_greedy_decode_stops_at_eos_or_max_len(favourite: int, length: int) -> None:
    model = _model()
    with torch.no_grad():
        model.to_logits.bias.zero_()
        model.to_logits.bias[favourite] = 1e3  # this token wins every step
    out = greedy_decode(model, torch.tensor([[3, 4], [5, 6]]), bos_id=1, eos_id=2, max_len=7)
    assert out.shape == (2, length)
    assert torch.all(out == favourite)


class _ScriptedDecoder(EncoderDecoder):
    """An EncoderDecoder whose decoder ignores its input and plays a script.

    ``script[b][t]`` is the token row ``b`` "predicts" at generation step ``t`` (then 8
    forever): a row may keep predicting real tokens after its EOS, which greedy_decode must
    overwrite with padding.
    """

    def __init__(self, script: list[list[int]]) -> None:
        super().__init__(12, 9, TransformerConfig(d_model=D, n_heads=H, d_ff=D_FF, max_len=12))
        self.script = script

    def decode(self, tgt_in: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor):
        B, T = tgt_in.shape
        step = T - 1  # tgt_in holds BOS and the `step` tokens generated so far
        logits = torch.zeros(B, T, self.tgt_vocab)  # (B, T, n_vocab)
        for b, row in enumerate(self.script):
            logits[b, -1, row[step] if step < len(row) else 8] = 1.0
        return logits


def test_greedy_decode_pads_rows_after_their_eos_until_all_finish() -> None:
    eos, pad = 2, 0
    model = _ScriptedDecoder([[5, eos, 6, 7, 6, 7], [4, 5, 6, eos, 3, 3]])
    out = greedy_decode(model, torch.tensor([[3, 4], [5, 6]]), bos_id=1, eos_id=eos, max_len=10)
    # Row 0 finished at step 1; its later predictions (6, 7) become padding. Row 1 goes on
    # to its own EOS at step 3, and decoding stops there, well before max_len.
    assert out.tolist() == [[5, eos, pad, pad], [4, 5, 6, eos]]


def test_greedy_decode_pads_finished_rows_up_to_max_len() -> None:
    eos = 2
    model = _ScriptedDecoder([[5, eos, 6, 7], [4, 5, 6, 7]])  # row 1 never ends
    out = greedy_decode(model, torch.tensor([[3, 4], [5, 6]]), bos_id=1, eos_id=eos, max_len=6)
    assert out.tolist() == [[5, eos, 0, 0, 0, 0], [4, 5, 6, 7, 8, 8]]


def test_greedy_decode_argument_errors() -> None:
    model = _model()
    src = torch.tensor([[3, 4]])
    with pytest.raises(ValueError, match="exceeds the model's max_len=12"):
        greedy_decode(model, src, bos_id=1, eos_id=2, max_len=13)
    with pytest.raises(ValueError, match="bos_id"):
        greedy_decode(model, src, bos_id=9, eos_id=2, max_len=3)
    with pytest.raises(TypeError, match="EncoderDecoder"):
        greedy_decode(_lm(), src, bos_id=1, eos_id=2, max_len=3)


# DecoderOnlyLM --------------------------------------------------------------------------------


def test_lm_is_causal_and_maps_are_retrievable() -> None:
    lm = _lm()
    a = torch.tensor([[3, 4, 5, 6, 7]])
    b = torch.tensor([[3, 4, 9, 9, 9]])
    torch.testing.assert_close(lm(a)[:, :2], lm(b)[:, :2], **TOL)
    assert not torch.allclose(lm(a)[:, 2:], lm(b)[:, 2:])
    maps = lm.attention_maps()
    assert list(maps) == ["decoder_self"] and len(maps["decoder_self"]) == 2
    for w in maps["decoder_self"]:
        assert w.shape == (1, H, 5, 5)
        assert torch.all(w.triu(diagonal=1) == 0)
    assert all(block.cross_attn is None for block in lm.decoder.layers)


def test_lm_padding_and_errors() -> None:
    lm = _lm(pad_id=0, positional="sinusoidal")
    x = torch.tensor([[3, 4, 5, 0, 0]])
    lm(x)
    for w in lm.attention_maps()["decoder_self"]:
        torch.testing.assert_close(w[..., 3:, 3:], torch.zeros_like(w[..., 3:, 3:]))
    with pytest.raises(ValueError, match=r"token id 11 .*vocabulary has 11 ids"):
        lm(torch.tensor([[3, 11]]))
    with pytest.raises(ValueError, match="max_len=8"):
        lm(torch.full((1, 9), 3))


def test_generate_appends_argmax_tokens_with_a_sliding_window() -> None:
    lm = _lm()
    prompt = torch.tensor([[3, 4, 5], [6, 7, 8]])
    out = generate(lm, prompt, max_new_tokens=10)  # 13 tokens > max_len = 8
    assert out.shape == (2, 13)
    torch.testing.assert_close(out[:, :3], prompt, rtol=0, atol=0)
    lm.eval()
    for t in range(3, 13):
        context = out[:, max(0, t - 8) : t]
        torch.testing.assert_close(lm(context)[:, -1].argmax(-1), out[:, t], rtol=0, atol=0)


def test_generate_stops_at_eos() -> None:
    lm = _lm()
    with torch.no_grad():
        lm.to_logits.bias.zero_()
        lm.to_logits.bias[2] = 1e3
    out = generate(lm, torch.tensor([[3, 4]]), max_new_tokens=5, eos_id=2)
    assert out.tolist() == [[3, 4, 2]]
    with pytest.raises(TypeError, match="DecoderOnlyLM"):
        generate(_model(), torch.tensor([[3]]), max_new_tokens=2)


# The hypothesis profile of tests/conftest.py -------------------------------------------------


def test_ci_hypothesis_profile_is_derandomized_and_loaded_under_ci() -> None:
    try:
        ci = settings.get_profile("ci")
    except InvalidArgument:
        pytest.fail("tests/conftest.py must register a hypothesis profile named 'ci'")
    assert ci.derandomize and ci.deadline is None and ci.print_blob
    if os.environ.get("CI"):
        assert settings.default.derandomize, "under CI the 'ci' profile must be loaded"


def test_generate_with_temperature_samples_and_zero_is_greedy() -> None:
    torch.manual_seed(0)
    lm = DecoderOnlyLM(7, TransformerConfig(d_model=16, n_heads=2, d_ff=32, max_len=8))
    prompt = torch.tensor([[1, 2, 3]] * 64)
    greedy = generate(lm, prompt, max_new_tokens=4)
    assert torch.equal(generate(lm, prompt, max_new_tokens=4, temperature=0.0), greedy)
    cold = generate(
        lm, prompt, max_new_tokens=4, temperature=1e-4, generator=torch.Generator().manual_seed(0)
    )
    assert torch.equal(cold, greedy), "a tiny temperature samples the argmax"
    hot = [
        generate(
            lm,
            prompt,
            max_new_tokens=4,
            temperature=5.0,
            generator=torch.Generator().manual_seed(1),
        )
        for _ in range(2)
    ]
    assert torch.equal(hot[0], hot[1]), "the same generator seed gives the same samples"
    assert len({tuple(r) for r in hot[0][:, 3:].tolist()}) > 10, "a high temperature varies"
    with pytest.raises(ValueError, match="temperature"):
        generate(lm, prompt, max_new_tokens=1, temperature=-1.0)
