"""Tests for attnlab.mechanism.config: one TransformerConfig handed to every transformer part."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from attnlab.mechanism.config import TransformerConfig
from attnlab.mechanism.multihead import MultiHeadAttention
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

CFG = TransformerConfig(d_model=16, n_heads=4, n_layers=2, d_ff=32, max_len=12)


def test_is_exported_from_the_package() -> None:
    import attnlab

    assert attnlab.TransformerConfig is TransformerConfig
    assert "TransformerConfig" in attnlab.__all__
    assert attnlab.__all__ == sorted(attnlab.__all__)
    model = attnlab.EncoderDecoder(7, 7, attnlab.TransformerConfig(d_model=8, n_heads=2, max_len=6))
    assert model.config.d_head == 4


def test_defaults_and_derived_values() -> None:
    cfg = TransformerConfig(d_model=16, n_heads=4)
    assert (cfg.n_layers, cfg.d_ff, cfg.max_len, cfg.dropout) == (1, 64, None, 0.0)
    assert (cfg.norm_first, cfg.bias, cfg.eps, cfg.d_head) == (True, True, 1e-5, 4)


def test_is_frozen_and_replace_makes_a_checked_copy() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        CFG.d_model = 8  # type: ignore[misc]
    assert dataclasses.replace(CFG, dropout=0.1).dropout == 0.1
    with pytest.raises(ValueError, match="divisible"):
        dataclasses.replace(CFG, n_heads=3)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"d_model": 10, "n_heads": 4}, "d_model=10 is not divisible by n_heads=4"),
        ({"d_model": 0, "n_heads": 1}, "d_model must be a positive integer"),
        ({"d_model": 8, "n_heads": 2.0}, "n_heads must be a positive integer"),
        ({"d_model": 8, "n_heads": 2, "d_ff": 0}, "d_ff must be a positive integer"),
        ({"d_model": 8, "n_heads": 2, "n_layers": True}, "n_layers must be a positive integer"),
        ({"d_model": 8, "n_heads": 2, "dropout": 1.0}, r"dropout must be a probability"),
        ({"d_model": 8, "n_heads": 2, "max_len": 0}, "max_len must be a positive integer"),
        ({"d_model": 8, "n_heads": 2, "eps": 0.0}, "eps must be a positive number"),
    ],
)
def test_bad_values_are_named(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        TransformerConfig(**kwargs)


def test_every_part_reads_the_one_config() -> None:
    torch.manual_seed(0)
    model = EncoderDecoder(12, 9, CFG)
    assert model.config is CFG
    assert model.encoder.config is CFG and model.decoder.config is CFG
    assert len(model.encoder.layers) == len(model.decoder.layers) == 2
    block = model.decoder.layers[0]
    assert block.config is CFG and block.self_attn.config is CFG
    assert block.cross_attn.config is CFG
    assert block.ffn.linear1.out_features == 32
    assert model.encoder.norm is not None  # pre-LN: the config's default


def test_config_and_keyword_forms_build_the_same_model() -> None:
    torch.manual_seed(0)
    by_config = EncoderDecoder(12, 9, CFG)
    torch.manual_seed(0)
    by_keywords = EncoderDecoder(12, 9, d_model=16, n_heads=4, n_layers=2, d_ff=32, max_len=12)
    assert by_keywords.config == CFG
    src = torch.tensor([[3, 4, 5, 0]])
    tgt = torch.tensor([[1, 2, 3]])
    torch.testing.assert_close(by_config(src, tgt), by_keywords(src, tgt), rtol=0, atol=0)


def test_keyword_form_keeps_the_old_defaults() -> None:
    # Layers and stacks: post-LN, as PyTorch's; models: pre-LN, as the config.
    assert EncoderBlock(16, 4, 32).norm_first is False
    assert Encoder(16, 4, 2, 32).norm is None
    assert DecoderBlock(16, 4, 32).config.dropout == 0.0
    assert DecoderOnlyLM(11, 16, 4, 2, 32, 8).config.norm_first is True
    assert EncoderBlock(CFG).norm_first is True


def test_each_part_accepts_a_config() -> None:
    x = torch.randn(2, 5, 16)
    assert MultiHeadAttention(CFG)(x)[0].shape == (2, 5, 16)
    assert MultiHeadAttention(config=CFG).n_heads == 4
    assert FeedForward(CFG)(x).shape == (2, 5, 16)
    assert LayerNorm(CFG)(x).shape == (2, 5, 16)
    assert EncoderBlock(CFG)(x).shape == (2, 5, 16)
    assert DecoderBlock(CFG)(x, x).shape == (2, 5, 16)
    assert Encoder(CFG)(x).shape == (2, 5, 16)
    assert Decoder(CFG, cross_attention=False)(x).shape == (2, 5, 16)
    lm = DecoderOnlyLM(11, CFG)
    assert lm(torch.tensor([[1, 2, 3]])).shape == (1, 3, 11)


def test_bias_reaches_every_linear_layer() -> None:
    block = EncoderBlock(dataclasses.replace(CFG, bias=False))
    linears = [m for m in block.modules() if isinstance(m, torch.nn.Linear)]
    assert len(linears) == 6 and all(m.bias is None for m in linears)


def test_config_and_hyper_parameters_together_are_refused() -> None:
    with pytest.raises(TypeError, match="either a TransformerConfig or the hyper-parameters"):
        EncoderBlock(CFG, n_heads=2)
    with pytest.raises(TypeError, match="either a TransformerConfig or eps"):
        LayerNorm(CFG, eps=1e-6)
    with pytest.raises(TypeError, match="needs a TransformerConfig, or d_model and n_heads"):
        EncoderBlock()
    with pytest.raises(TypeError, match="config must be a TransformerConfig"):
        MultiHeadAttention(config={"d_model": 8})


def test_models_need_max_len() -> None:
    with pytest.raises(ValueError, match=r"EncoderDecoder needs config\.max_len"):
        EncoderDecoder(5, 5, TransformerConfig(8, 2))


def test_numpy_sizes_become_python_ints() -> None:
    cfg = TransformerConfig(np.int64(8), np.int64(2), max_len=np.int64(4))
    assert all(type(v) is int for v in (cfg.d_model, cfg.n_heads, cfg.d_ff, cfg.max_len))
    assert cfg == TransformerConfig(8, 2, max_len=4)
