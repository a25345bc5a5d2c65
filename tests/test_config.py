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
    assert block.config is CFG
    for attention in (block.self_attn, block.cross_attn):
        assert (attention.d_model, attention.n_heads) == (CFG.d_model, CFG.n_heads)
    assert block.ffn.linear1.out_features == 32
    assert model.encoder.norm is not None  # pre-LN: the config's default


def test_one_default_for_the_norm_placement() -> None:
    """Blocks, stacks and models alike: pre-LN unless the config says norm_first=False."""
    cfg = TransformerConfig(d_model=16, n_heads=4, d_ff=32, max_len=8)
    assert EncoderBlock(cfg).norm_first is True
    assert DecoderBlock(cfg).norm_first is True
    assert Encoder(cfg).norm is not None and Decoder(cfg).norm is not None
    assert DecoderOnlyLM(11, cfg).decoder.norm is not None
    post = dataclasses.replace(cfg, norm_first=False)
    assert EncoderBlock(post).norm_first is False and Encoder(post).norm is None


def test_each_part_is_built_from_a_config() -> None:
    x = torch.randn(2, 5, 16)
    assert EncoderBlock(CFG)(x).shape == (2, 5, 16)
    assert DecoderBlock(CFG)(x, x).shape == (2, 5, 16)
    assert Encoder(CFG)(x).shape == (2, 5, 16)
    assert Decoder(CFG, cross_attention=False)(x).shape == (2, 5, 16)
    lm = DecoderOnlyLM(11, CFG)
    assert lm(torch.tensor([[1, 2, 3]])).shape == (1, 3, 11)


def test_the_layers_a_chapter_teaches_take_their_sizes() -> None:
    x = torch.randn(2, 5, 16)
    assert MultiHeadAttention(16, 4)(x)[0].shape == (2, 5, 16)
    assert FeedForward(16, 32)(x).shape == (2, 5, 16)
    assert LayerNorm(16)(x).shape == (2, 5, 16)


def test_bias_reaches_every_linear_layer() -> None:
    block = EncoderBlock(dataclasses.replace(CFG, bias=False))
    linears = [m for m in block.modules() if isinstance(m, torch.nn.Linear)]
    assert len(linears) == 6 and all(m.bias is None for m in linears)


@pytest.mark.parametrize(
    "build",
    [
        lambda: EncoderBlock(16, 4),
        lambda: DecoderBlock(d_model=16),
        lambda: Encoder({"d_model": 16, "n_heads": 4}),
        lambda: Decoder(None),
        lambda: EncoderDecoder(5, 5, 16),
        lambda: DecoderOnlyLM(5, d_model=16),
    ],
)
def test_hyper_parameters_without_a_config_are_refused(build) -> None:
    with pytest.raises(
        TypeError, match=r"built from a TransformerConfig|unexpected keyword|positional argument"
    ):
        build()


def test_models_need_max_len() -> None:
    with pytest.raises(ValueError, match=r"EncoderDecoder needs config\.max_len"):
        EncoderDecoder(5, 5, TransformerConfig(8, 2))


def test_numpy_sizes_become_python_ints() -> None:
    cfg = TransformerConfig(np.int64(8), np.int64(2), max_len=np.int64(4))
    assert all(type(v) is int for v in (cfg.d_model, cfg.n_heads, cfg.d_ff, cfg.max_len))
    assert cfg == TransformerConfig(8, 2, max_len=4)
