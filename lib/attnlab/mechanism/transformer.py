"""The full transformer: LayerNorm, the feed-forward network, encoder and decoder blocks, models.

A block is attention (tokens talk to each other) then a position-wise feed-forward network
(each token thinks on its own), each wrapped in a residual connection and a LayerNorm.
Where the LayerNorm sits is the one design choice that differs between papers:

- **post-LN** (the original): ``x = LN(x + Sublayer(x))``.
- **pre-LN**: ``x = x + Sublayer(LN(x))``, plus one final ``LN`` after the last block.
  The residual path is then a clean sum from input to output, which keeps gradients
  well-scaled at initialisation and lets deep stacks train without a careful warm-up.

The blocks here reproduce ``nn.TransformerEncoderLayer`` / ``nn.TransformerDecoderLayer``
layer for layer (same sub-layers, same dropout sites, ReLU), for both placements
(``norm_first``); ``tests/test_vs_pytorch_transformer.py`` checks it with copied weights.

Attention maps: every block keeps the attention weights of its last forward pass,
detached, in ``self_attn_weights`` (and ``cross_attn_weights`` for a decoder block with
cross-attention), each ``(B, H, T, S)``. The models collect them with
:meth:`EncoderDecoder.attention_maps` / :meth:`DecoderOnlyLM.attention_maps`: run a forward
pass, then read ``maps["cross"][layer][batch, head]``. (They are kept rather than returned so
that ``model(src, tgt_in)`` stays a plain "tokens in, logits out" call.)

References:
    Vaswani et al., "Attention Is All You Need", 2017 (the architecture, post-LN).
    Ba, Kiros and Hinton, "Layer Normalization", 2016.
    Xiong et al., "On Layer Normalization in the Transformer Architecture", 2020 (pre-LN).

Taught in: chapters/07_transformer.ipynb
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from .._validate import (
    check_device,
    check_input,
    check_int,
    check_real,
    describe,
    inputs_checked,
    positive_int,
    positive_number,
)
from ..measure import check_clock, median_seconds_each
from .config import TransformerConfig
from .masking import causal_mask, combine_masks, padding_mask
from .multihead import MultiHeadAttention
from .positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from .scale import KVCache, LayerKV

__all__ = [
    "Decoder",
    "DecoderBlock",
    "DecoderOnlyLM",
    "Encoder",
    "EncoderBlock",
    "EncoderDecoder",
    "FeedForward",
    "LayerNorm",
    "TransformerConfig",
    "generate",
    "generation_seconds",
    "greedy_decode",
]

# The keyword form's defaults: the layers and stacks default to post-LN (as PyTorch's
# layers), the models to pre-LN (as TransformerConfig).
_LAYER_DEFAULTS = {"n_layers": 1, "dropout": 0.0, "norm_first": False}
_MODEL_DEFAULTS = {"dropout": 0.0, "norm_first": True}


class LayerNorm(nn.Module):
    r"""Normalise each token vector to mean 0 and variance 1, then scale and shift it.

    .. math:: \mathrm{LN}(x) = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}} + \beta,
        \qquad \mu = \frac{1}{D}\sum_j x_j, \quad \sigma^2 = \frac{1}{D}\sum_j (x_j - \mu)^2

    The statistics are over the features of *one* token (not over the batch, unlike
    BatchNorm), so the layer behaves the same in training and inference and for any batch
    size. The variance is the biased one (divide by ``D``), as in ``nn.LayerNorm``.
    ``γ`` starts at 1 and ``β`` at 0, so a fresh layer is a pure normalisation.

    Args:
        d_model: number of features ``D``, or a :class:`TransformerConfig` (its
            ``d_model`` and ``eps``).
        eps: added to the variance so a constant vector does not divide by zero
            (default ``1e-5``).

    Shapes:
        ``x``: ``(..., D)``; returns ``(..., D)``.

    Raises:
        ValueError: ``x`` whose last axis is not ``D``.
        TypeError: ``x`` not a floating-point tensor.

    Taught in: chapters/07_transformer.ipynb
    """

    def __init__(self, d_model: int | TransformerConfig, eps: float | None = None) -> None:
        super().__init__()
        if isinstance(d_model, TransformerConfig):
            if eps is not None:
                raise TypeError("LayerNorm: pass either a TransformerConfig or eps, not both")
            d_model, eps = d_model.d_model, d_model.eps
        d_model = positive_int(d_model, "d_model")
        eps = positive_number(1e-5 if eps is None else eps, "eps")
        self.d_model, self.eps = d_model, eps
        self.gamma = nn.Parameter(torch.ones(d_model))
        self.beta = nn.Parameter(torch.zeros(d_model))

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, eps={self.eps}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # No dtype match required: the arithmetic below promotes (float64 x, float32 γ).
        check_input(x, self.d_model, who="LayerNorm")
        check_device(x, self, who="LayerNorm")  # any float dtype, but the weights' device
        if x.numel() == 0:  # an empty batch: nothing to normalise (and no variance warning)
            return self.gamma * x + self.beta
        mu = x.mean(dim=-1, keepdim=True)  # (..., D) -> (..., 1)
        var = x.var(dim=-1, keepdim=True, correction=0)  # (..., D) -> (..., 1), biased
        x_hat = (x - mu) / torch.sqrt(var + self.eps)  # (..., D)
        return self.gamma * x_hat + self.beta  # (D,) * (..., D) + (D,) -> (..., D)


class FeedForward(nn.Module):
    r"""The position-wise feed-forward network: the same two-layer MLP applied to every token.

    .. math:: \mathrm{FFN}(x) = \max(0,\; x W_1 + b_1)\, W_2 + b_2

    ``W_1`` widens ``D -> d_ff`` (the paper: 512 -> 2048), ``W_2`` narrows back. No token
    sees another here; mixing across positions is attention's job.

    Args:
        d_model: number of features ``D``, or a :class:`TransformerConfig` (its
            ``d_model``, ``d_ff``, ``dropout`` and ``bias``).
        d_ff: hidden width (required with an integer ``d_model``).
        dropout: dropout on the hidden activations (as ``nn.TransformerEncoderLayer``).

    Shapes:
        ``x``: ``(B, T, D)`` (any leading axes); returns ``(B, T, D)``.

    Raises:
        ValueError: ``x`` whose last axis is not ``D``.
        TypeError: ``x`` not a tensor of the layer's floating dtype.

    Taught in: chapters/07_transformer.ipynb
    """

    def __init__(
        self,
        d_model: int | TransformerConfig,
        d_ff: int | None = None,
        dropout: float | None = None,
    ) -> None:
        super().__init__()
        if not isinstance(d_model, TransformerConfig) and d_ff is None:
            raise TypeError("FeedForward needs a TransformerConfig, or d_model and d_ff")
        defaults = {"n_heads": 1, "dropout": 0.0}
        config = TransformerConfig.resolve(
            d_model, None, "FeedForward", defaults, d_ff=d_ff, dropout=dropout
        )
        self.d_model = config.d_model
        self.linear1 = nn.Linear(config.d_model, config.d_ff, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)
        self.linear2 = nn.Linear(config.d_ff, config.d_model, bias=config.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_input(x, self.d_model, who="FeedForward", module=self)
        h = torch.relu(self.linear1(x))  # (B, T, D) -> (B, T, d_ff)
        return self.linear2(self.dropout(h))  # (B, T, d_ff) -> (B, T, D)


class _Block(nn.Module):
    """What the encoder and decoder blocks share: the config, the self-attention sub-layer,
    the checks.

    ``__init__`` takes a :class:`TransformerConfig` or the keyword form (post-LN default),
    then ``_build(config, **options)`` (the subclass's) creates the sub-layers.
    """

    config: TransformerConfig
    self_attn: MultiHeadAttention
    dropout1: nn.Dropout
    self_attn_weights: torch.Tensor | None

    def __init__(
        self,
        config: TransformerConfig | int | None = None,
        n_heads: int | None = None,
        d_ff: int | None = None,
        dropout: float | None = None,
        norm_first: bool | None = None,
        *,
        d_model: int | None = None,
        **options: Any,
    ) -> None:
        super().__init__()
        config = TransformerConfig.resolve(
            config,
            None,
            type(self).__name__,
            _LAYER_DEFAULTS,
            d_model=d_model,
            n_heads=n_heads,
            d_ff=d_ff,
            dropout=dropout,
            norm_first=norm_first,
        )
        self.config, self.norm_first = config, config.norm_first
        self._build(config, **options)

    def _build(self, config: TransformerConfig) -> None:
        raise NotImplementedError

    def _check(self, x: Any, name: str = "x") -> None:
        D = self.config.d_model
        check_input(
            x,
            D,
            who=type(self).__name__,
            name=name,
            shape=f"(B, T, d_model={D})",
            ndim=3,
            module=self,
        )

    def _self_attention(
        self, x: torch.Tensor, mask: torch.Tensor | None, cache: LayerKV | None = None
    ) -> torch.Tensor:
        out, weights = self.self_attn(x, mask=mask, cache=cache)  # (B, T, D), (B, H, T, S)
        self.self_attn_weights = weights.detach()
        return self.dropout1(out)


class EncoderBlock(_Block):
    """One encoder layer: self-attention, then the feed-forward network, each with residual + LN.

    Post-LN (``norm_first=False``, the paper and PyTorch's default)::

        x = norm1(x + dropout1(self_attn(x)))
        x = norm2(x + dropout2(ffn(x)))

    Pre-LN (``norm_first=True``)::

        x = x + dropout1(self_attn(norm1(x)))
        x = x + dropout2(ffn(norm2(x)))

    After a forward pass, ``self_attn_weights`` holds the (detached) ``(B, H, T, T)`` weights.

    Args:
        config: a :class:`TransformerConfig` (``d_model``, ``n_heads``, ``d_ff``,
            ``dropout``, ``norm_first``, ``bias``, ``eps``). The keyword form
            ``EncoderBlock(d_model, n_heads, d_ff, dropout=0.0, norm_first=False)`` builds
            one: note its post-LN default.

    Shapes:
        ``x``: ``(B, T, D)``; ``mask``: boolean, ``True`` = may attend, ``(T, T)`` or
        broadcastable 4-D ``(B, 1, 1, T)`` / ``(B, H, T, T)``. Returns ``(B, T, D)``.

    Raises:
        ValueError: ``x`` not of shape ``(B, T, D)``.
        TypeError: ``x`` not a tensor of the block's floating dtype.

    Taught in: chapters/07_transformer.ipynb
    """

    def _build(self, config: TransformerConfig) -> None:
        self.self_attn = MultiHeadAttention(config)
        self.ffn = FeedForward(config)
        self.norm1 = LayerNorm(config)
        self.norm2 = LayerNorm(config)
        self.dropout1 = nn.Dropout(config.dropout)
        self.dropout2 = nn.Dropout(config.dropout)
        self.self_attn_weights: torch.Tensor | None = None

    def extra_repr(self) -> str:
        return f"norm_first={self.norm_first}"

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        self._check(x)
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), mask)
            x = x + self.dropout2(self.ffn(self.norm2(x)))
        else:
            x = self.norm1(x + self._self_attention(x, mask))
            x = self.norm2(x + self.dropout2(self.ffn(x)))
        return x  # (B, T, D)


class DecoderBlock(_Block):
    """One decoder layer: masked self-attention, cross-attention over the encoder, then the FFN.

    Post-LN (``norm_first=False``)::

        x = norm1(x + dropout1(self_attn(x, mask=self_mask)))
        x = norm2(x + dropout2(cross_attn(x, memory, memory, mask=memory_mask)))
        x = norm3(x + dropout3(ffn(x)))

    Pre-LN (``norm_first=True``) moves each ``norm`` onto the sub-layer's input, as in
    :class:`EncoderBlock`. In cross-attention the queries come from the decoder and the
    keys and values from the encoder output ``memory``: each target token looks up the
    source tokens it needs.

    With ``cross_attention=False`` the middle sub-layer (and ``norm2``) is absent: that is the
    block of a decoder-only (GPT-style) model, a causally masked encoder block.

    After a forward pass, ``self_attn_weights`` holds ``(B, H, T, T)`` and
    ``cross_attn_weights`` ``(B, H, T, S)`` (detached).

    Args:
        config: a :class:`TransformerConfig`, or the keyword form of :class:`EncoderBlock`.
        cross_attention: whether the block attends to an encoder output.

    Shapes:
        ``x``: ``(B, T, D)``; ``memory``: ``(B, S, D)``; ``self_mask``: ``(T, T)`` or 4-D
        broadcastable to ``(B, H, T, T)`` (pass the causal mask here); ``memory_mask``: 4-D
        broadcastable to ``(B, H, T, S)`` (the source padding mask, ``(B, 1, 1, S)``).
        Returns ``(B, T, D)``.

    Raises:
        ValueError: ``memory`` missing with cross-attention, or given without it; ``x`` or
            ``memory`` not of shape ``(B, length, D)``.
        TypeError: ``x`` or ``memory`` not a tensor of the block's floating dtype.

    Taught in: chapters/07_transformer.ipynb
    """

    def _build(self, config: TransformerConfig, *, cross_attention: bool = True) -> None:
        self.self_attn = MultiHeadAttention(config)
        self.cross_attn = MultiHeadAttention(config) if cross_attention else None
        self.ffn = FeedForward(config)
        self.norm1 = LayerNorm(config)
        self.norm2 = LayerNorm(config) if cross_attention else None
        self.norm3 = LayerNorm(config)
        self.dropout1 = nn.Dropout(config.dropout)
        self.dropout2 = nn.Dropout(config.dropout)
        self.dropout3 = nn.Dropout(config.dropout)
        self.self_attn_weights: torch.Tensor | None = None
        self.cross_attn_weights: torch.Tensor | None = None

    def extra_repr(self) -> str:
        return f"norm_first={self.norm_first}, cross_attention={self.cross_attn is not None}"

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor | None = None,
        self_mask: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
        *,
        cache: LayerKV | None = None,
    ) -> torch.Tensor:
        if self.cross_attn is not None and memory is None:
            raise ValueError("this DecoderBlock has cross-attention: pass the encoder memory")
        if self.cross_attn is None and memory is not None:
            raise ValueError(
                "this DecoderBlock was built with cross_attention=False: it takes no memory"
            )
        self._check(x)
        if memory is not None:
            self._check(memory, "memory")
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), self_mask, cache)
            if self.cross_attn is not None:
                x = x + self._cross_attention(self.norm2(x), memory, memory_mask)
            x = x + self.dropout3(self.ffn(self.norm3(x)))
        else:
            x = self.norm1(x + self._self_attention(x, self_mask, cache))
            if self.cross_attn is not None:
                x = self.norm2(x + self._cross_attention(x, memory, memory_mask))
            x = self.norm3(x + self.dropout3(self.ffn(x)))
        return x  # (B, T, D)

    def _cross_attention(
        self, x: torch.Tensor, memory: torch.Tensor, mask: torch.Tensor | None
    ) -> torch.Tensor:
        out, weights = self.cross_attn(x, memory, memory, mask=mask)  # (B, T, D), (B, H, T, S)
        self.cross_attn_weights = weights.detach()
        return self.dropout2(out)


class _Stack(nn.Module):
    """``n_layers`` blocks, and a final LayerNorm for a pre-LN stack (see :class:`Encoder`).

    ``__init__`` takes a :class:`TransformerConfig` or the keyword form (post-LN default);
    ``block_options`` go to every block (``cross_attention`` for a :class:`Decoder`).
    """

    block: type[_Block]

    def __init__(
        self,
        config: TransformerConfig | int | None = None,
        n_heads: int | None = None,
        n_layers: int | None = None,
        d_ff: int | None = None,
        dropout: float | None = None,
        norm_first: bool | None = None,
        *,
        d_model: int | None = None,
        **block_options: Any,
    ) -> None:
        config = TransformerConfig.resolve(
            config,
            None,
            type(self).__name__,
            _LAYER_DEFAULTS,
            d_model=d_model,
            n_heads=n_heads,
            n_layers=n_layers,
            d_ff=d_ff,
            dropout=dropout,
            norm_first=norm_first,
        )
        super().__init__()
        self.config = config
        layers = (self.block(config, **block_options) for _ in range(config.n_layers))
        self.layers = nn.ModuleList(layers)
        self.norm = LayerNorm(config) if config.norm_first else None

    def _finish(self, x: torch.Tensor) -> torch.Tensor:
        return x if self.norm is None else self.norm(x)


class Encoder(_Stack):
    """A stack of ``n_layers`` :class:`EncoderBlock`; pre-LN stacks end with a final LayerNorm.

    Why the final norm: in a pre-LN block nothing normalises the residual stream on its way
    out (each norm sits on a sub-layer's *input*), so its scale grows with depth; one
    LayerNorm after the last block gives the next stage a normalised input. This is what
    GPT-2, ``nn.TransformerEncoder(..., norm=LayerNorm)`` setups and Xiong et al. (2020) do.
    A post-LN stack already ends with a norm, so it gets none (``self.norm`` is ``None``).

    Args:
        config: a :class:`TransformerConfig` (with ``n_layers``), or the keyword form
            ``Encoder(d_model, n_heads, n_layers, d_ff, dropout=0.0, norm_first=False)``.

    Shapes:
        ``x``: ``(B, S, D)``; ``mask`` as in :class:`EncoderBlock`. Returns ``(B, S, D)``.

    Taught in: chapters/07_transformer.ipynb
    """

    block = EncoderBlock

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x, mask)  # (B, S, D) -> (B, S, D)
        return self._finish(x)


class Decoder(_Stack):
    """A stack of ``n_layers`` :class:`DecoderBlock`; pre-LN stacks end with a final LayerNorm.

    (See :class:`Encoder` for why.) Every block attends to the same encoder ``memory`` (the
    *last* encoder layer's output), as in the paper.

    Args:
        config: a :class:`TransformerConfig`, or the keyword form of :class:`Encoder`.
        cross_attention: ``False`` for a decoder-only model.

    Shapes:
        ``x``: ``(B, T, D)``; ``memory``: ``(B, S, D)``; masks as in :class:`DecoderBlock`.
        Returns ``(B, T, D)``.

    Taught in: chapters/07_transformer.ipynb
    """

    block = DecoderBlock

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor | None = None,
        self_mask: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
        *,
        cache: KVCache | None = None,
    ) -> torch.Tensor:
        for i, layer in enumerate(self.layers):
            layer_cache = None if cache is None else cache[i]
            x = layer(x, memory, self_mask, memory_mask, cache=layer_cache)  # (B, T, D)
        return self._finish(x)


class _TokenModel(nn.Module):
    """Shared checks and embedding for the two models."""

    max_len: int
    pad_id: int | None

    def _check_tokens(self, tokens: Any, name: str, vocab: int) -> None:
        if not isinstance(tokens, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor of token ids, got {describe(tokens)}")
        if tokens.dtype.is_floating_point or tokens.dtype.is_complex or tokens.dtype == torch.bool:
            raise TypeError(f"{name} must hold integer token ids, got {describe(tokens)}")
        if tokens.ndim != 2 or tokens.shape[1] == 0:
            raise ValueError(f"{name} must have shape (batch, length >= 1), got {describe(tokens)}")
        check_device(tokens, self, who=type(self).__name__, name=name)
        if tokens.shape[1] > self.max_len:
            raise ValueError(
                f"{name} has length {tokens.shape[1]}, longer than the model's "
                f"max_len={self.max_len}"
            )
        lo, hi = int(tokens.min()), int(tokens.max())
        if lo < 0 or hi >= vocab:
            bad = hi if hi >= vocab else lo
            raise ValueError(
                f"{name} holds token id {bad} (ids range over {lo}..{hi}), but the vocabulary "
                f"has {vocab} ids: valid ids are 0..{vocab - 1}"
            )

    @staticmethod
    def _init_embedding(embedding: nn.Embedding, d_model: int) -> None:
        # N(0, 1/D): after the sqrt(D) scaling the token vectors have unit-variance entries,
        # the same scale as the positional code they are added to.
        nn.init.normal_(embedding.weight, std=d_model**-0.5)
        if embedding.padding_idx is not None:
            with torch.no_grad():
                embedding.weight[embedding.padding_idx].zero_()


def _token_id(i: Any, name: str, size: int, where: str = "") -> int:
    """``i`` as an ``int`` in ``0 .. size - 1`` (NumPy integers accepted, bools not)."""
    try:
        n = check_int(i, name)
    except ValueError:
        n = -1
    if not 0 <= n < size:
        raise ValueError(f"{name} must be an id in {where}0..{size - 1}, got {i!r}")
    return n


def _make_positional(kind: str, d_model: int, max_len: int) -> nn.Module:
    if kind == "sinusoidal":
        return SinusoidalPositionalEncoding(d_model, max_len)
    if kind == "learned":
        return LearnedPositionalEmbedding(max_len, d_model)
    raise ValueError(f"positional must be 'sinusoidal' or 'learned', got {kind!r}")


class EncoderDecoder(_TokenModel):
    """The encoder–decoder transformer of Vaswani et al. (2017), for sequence-to-sequence tasks.

    ``src`` tokens -> embedding · √D + positions -> :class:`Encoder` -> ``memory``;
    ``tgt_in`` tokens (the target shifted right, starting with BOS) -> embedding · √D +
    positions -> :class:`Decoder` (causal self-attention, cross-attention over ``memory``)
    -> a linear map to one logit per target-vocabulary entry.

    Masks are built from the tokens: source keys equal to ``pad_id`` are hidden from the
    encoder's self-attention and from every cross-attention; the decoder's self-attention
    is causal and also hides padded target keys. (A source made only of padding thus
    gives all-zero cross-attention weights, never NaN.)

    The model defaults to pre-LN (``norm_first=True``) because it trains reliably on a CPU
    with Adam and a short warm-up; ``norm_first=False`` gives the paper's post-LN layout.

    Args:
        src_vocab: number of source token ids.
        tgt_vocab: number of target token ids.
        config: a :class:`TransformerConfig` with ``max_len`` set (the longest source or
            target sequence accepted); its ``n_layers`` blocks go in the encoder and in
            the decoder, its ``dropout`` also on the embeddings. The keyword form
            ``EncoderDecoder(src_vocab, tgt_vocab, d_model, n_heads, n_layers, d_ff,
            max_len, dropout=0.0, norm_first=True)`` builds one.
        pad_id: the padding token id (in both vocabularies); its embedding is zero and
            receives no gradient.
        positional: ``"sinusoidal"`` (the paper) or ``"learned"``.

    Shapes:
        ``forward(src (B, S), tgt_in (B, T))`` -> logits ``(B, T, tgt_vocab)``.

    Raises:
        ValueError: token ids outside the vocabulary (naming the id and the vocabulary
            size), sequences longer than ``max_len``, inconsistent batch sizes.
        TypeError: tokens that are not an integer tensor.

    Taught in: chapters/07_transformer.ipynb
    """

    def __init__(
        self,
        src_vocab: int,
        tgt_vocab: int,
        config: TransformerConfig | int | None = None,
        n_heads: int | None = None,
        n_layers: int | None = None,
        d_ff: int | None = None,
        max_len: int | None = None,
        dropout: float | None = None,
        norm_first: bool | None = None,
        pad_id: int = 0,
        positional: str = "sinusoidal",
        *,
        d_model: int | None = None,
    ) -> None:
        super().__init__()
        src_vocab = positive_int(src_vocab, "src_vocab")
        tgt_vocab = positive_int(tgt_vocab, "tgt_vocab")
        config = TransformerConfig.resolve(
            config,
            None,
            "EncoderDecoder",
            _MODEL_DEFAULTS,
            d_model=d_model,
            n_heads=n_heads,
            n_layers=n_layers,
            d_ff=d_ff,
            max_len=max_len,
            dropout=dropout,
            norm_first=norm_first,
        )
        max_len = config.require_max_len("EncoderDecoder")
        pad_id = _token_id(pad_id, "pad_id", min(src_vocab, tgt_vocab), "both vocabularies: ")
        D = config.d_model
        self.config = config
        self.src_vocab, self.tgt_vocab, self.d_model = src_vocab, tgt_vocab, D
        self.max_len, self.pad_id = max_len, pad_id
        self.src_embed = nn.Embedding(src_vocab, D, padding_idx=pad_id)
        self.tgt_embed = nn.Embedding(tgt_vocab, D, padding_idx=pad_id)
        self._init_embedding(self.src_embed, D)
        self._init_embedding(self.tgt_embed, D)
        self.positional = _make_positional(positional, D, max_len)
        self.dropout = nn.Dropout(config.dropout)
        self.encoder = Encoder(config)
        self.decoder = Decoder(config)
        self.to_logits = nn.Linear(D, tgt_vocab)

    def encode(self, src: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Run the encoder: returns ``memory`` ``(B, S, D)`` and the source mask ``(B, 1, 1, S)``."""
        self._check_tokens(src, "src", self.src_vocab)
        src_mask = padding_mask(tokens=src, pad_id=self.pad_id)[
            :, None
        ]  # (B, 1, S) -> (B, 1, 1, S)
        x = self.src_embed(src) * math.sqrt(self.d_model)  # (B, S) -> (B, S, D)
        x = self.dropout(self.positional(x))  # (B, S, D)
        return self.encoder(x, src_mask), src_mask

    def decode(
        self, tgt_in: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor
    ) -> torch.Tensor:
        """Run the decoder on ``tgt_in`` ``(B, T)`` over ``memory``: logits ``(B, T, tgt_vocab)``."""
        self._check_tokens(tgt_in, "tgt_in", self.tgt_vocab)
        if tgt_in.shape[0] != memory.shape[0]:
            raise ValueError(
                f"tgt_in has batch size {tgt_in.shape[0]} but the encoder memory has "
                f"{memory.shape[0]}: pass one target per source sequence"
            )
        T = tgt_in.shape[1]
        self_mask = combine_masks(
            causal_mask(T, like=tgt_in),  # (T, T)
            padding_mask(tokens=tgt_in, pad_id=self.pad_id)[:, None],  # (B, 1, 1, T)
        )  # -> (B, 1, T, T)
        y = self.tgt_embed(tgt_in) * math.sqrt(self.d_model)  # (B, T) -> (B, T, D)
        y = self.dropout(self.positional(y))  # (B, T, D)
        y = self.decoder(y, memory, self_mask, src_mask)  # (B, T, D)
        return self.to_logits(y)  # (B, T, D) -> (B, T, tgt_vocab)

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        memory, src_mask = self.encode(src)
        return self.decode(tgt_in, memory, src_mask)

    def attention_maps(self) -> dict[str, list[torch.Tensor]]:
        """The attention weights of the last forward pass, one ``(B, H, T, S)`` tensor per layer.

        Returns:
            ``{"encoder_self": [...], "decoder_self": [...], "cross": [...]}``, each a list
            over layers of detached weights: encoder self-attention ``(B, H, S, S)``, decoder
            masked self-attention ``(B, H, T, T)``, cross-attention ``(B, H, T, S)``.

        Raises:
            RuntimeError: if the model has not run a forward pass yet.
        """
        maps = {
            "encoder_self": [b.self_attn_weights for b in self.encoder.layers],
            "decoder_self": [b.self_attn_weights for b in self.decoder.layers],
            "cross": [b.cross_attn_weights for b in self.decoder.layers],
        }
        return _complete(maps)


class DecoderOnlyLM(_TokenModel):
    """A GPT-style language model: decoder blocks without cross-attention, causally masked.

    ``tokens`` -> embedding · √D + positions -> :class:`Decoder` (``cross_attention=False``)
    -> logits for the *next* token at every position. Position ``t`` sees tokens ``0..t``
    only, so one forward pass trains all ``T`` next-token predictions at once.

    Args:
        vocab: number of token ids.
        config: a :class:`TransformerConfig` with ``max_len`` set, as in
            :class:`EncoderDecoder`; or the keyword form ``DecoderOnlyLM(vocab, d_model,
            n_heads, n_layers, d_ff, max_len, dropout=0.0, norm_first=True)``.
        positional: ``"learned"`` (GPT's choice, the default) or ``"sinusoidal"``.
        pad_id: optional padding id; if given, padded keys are hidden too and its embedding
            is zero.

    Shapes:
        ``forward(tokens (B, T))`` -> logits ``(B, T, vocab)``. With a
        :class:`~attnlab.mechanism.scale.KVCache`, ``forward(tokens, cache)`` processes only the
        new tokens: they take positions ``cache.length ..``, attend to the cached keys and
        values as well as their own, and append theirs to the cache (chapter 8).

    Raises:
        ValueError / TypeError: as :class:`EncoderDecoder`.

    Taught in: chapters/07_transformer.ipynb
    """

    def __init__(
        self,
        vocab: int,
        config: TransformerConfig | int | None = None,
        n_heads: int | None = None,
        n_layers: int | None = None,
        d_ff: int | None = None,
        max_len: int | None = None,
        dropout: float | None = None,
        norm_first: bool | None = None,
        positional: str = "learned",
        pad_id: int | None = None,
        *,
        d_model: int | None = None,
    ) -> None:
        super().__init__()
        vocab = positive_int(vocab, "vocab")
        config = TransformerConfig.resolve(
            config,
            None,
            "DecoderOnlyLM",
            _MODEL_DEFAULTS,
            d_model=d_model,
            n_heads=n_heads,
            n_layers=n_layers,
            d_ff=d_ff,
            max_len=max_len,
            dropout=dropout,
            norm_first=norm_first,
        )
        max_len = config.require_max_len("DecoderOnlyLM")
        pad_id = None if pad_id is None else _token_id(pad_id, "pad_id", vocab)
        D = config.d_model
        self.config = config
        self.vocab, self.d_model, self.max_len, self.pad_id = vocab, D, max_len, pad_id
        self.embed = nn.Embedding(vocab, D, padding_idx=pad_id)
        self._init_embedding(self.embed, D)
        self.positional = _make_positional(positional, D, max_len)
        self.dropout = nn.Dropout(config.dropout)
        self.decoder = Decoder(config, cross_attention=False)
        self.to_logits = nn.Linear(D, vocab)

    def forward(self, tokens: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        self._check_tokens(tokens, "tokens", self.vocab)
        T = tokens.shape[1]
        past = 0 if cache is None else cache.length  # positions already in the cache
        if past + T > self.max_len:
            raise ValueError(
                f"{past} cached + {T} new tokens exceed the model's max_len={self.max_len}"
            )
        # The new queries are the last T of past + T positions. A single one may see every
        # key: no causal mask to build (the one-token steps of cached generation).
        mask = None if T == 1 else causal_mask(T, past + T, like=tokens)  # (T, S)
        if self.pad_id is not None:
            keys = padding_mask(tokens=tokens, pad_id=self.pad_id)[:, None]  # (B, 1, 1, T)
            if cache is not None:  # padding among the cached keys stays hidden
                if cache.key_visible is not None:
                    keys = torch.cat([cache.key_visible, keys], dim=-1)  # (B, 1, 1, S)
                cache.key_visible = keys
            mask = keys if mask is None else combine_masks(mask, keys)  # -> (B, 1, T, S)
        x = self.embed(tokens) * math.sqrt(self.d_model)  # (B, T) -> (B, T, D)
        x = self.dropout(self.positional(x, past))  # positions past .. past + T - 1
        # Checked once here (the embeddings match the blocks' weights); the blocks and their
        # sub-layers, which receive only tensors made inside the model, skip their checks.
        check_input(x, self.d_model, who="DecoderOnlyLM", module=self.decoder)
        with inputs_checked():
            x = self.decoder(x, None, mask, cache=cache)  # (B, T, D)
        return self.to_logits(x)  # (B, T, D) -> (B, T, vocab)

    def attention_maps(self) -> dict[str, list[torch.Tensor]]:
        """``{"decoder_self": [...]}``: per layer, the ``(B, H, T, T)`` causal weights of the last pass."""
        return _complete({"decoder_self": [b.self_attn_weights for b in self.decoder.layers]})


def _complete(maps: dict[str, list[Any]]) -> dict[str, list[torch.Tensor]]:
    if any(w is None for ws in maps.values() for w in ws):
        raise RuntimeError("no attention weights yet: run the model on a batch first")
    return maps


@torch.no_grad()
def greedy_decode(
    model: EncoderDecoder, src: torch.Tensor, *, bos_id: int, eos_id: int, max_len: int
) -> torch.Tensor:
    """Translate ``src`` one token at a time, always taking the most likely next token.

    Starts every target with ``bos_id``; at each step runs the decoder on the prefix so far
    and appends the argmax of the last position's logits. A sequence that has produced
    ``eos_id`` is finished: later positions get ``model.pad_id``. Stops after ``max_len``
    tokens or when every sequence is finished. The encoder runs once. The model is put in
    eval mode for the call (dropout off) and restored afterwards.

    Args:
        model: an :class:`EncoderDecoder`.
        src: ``(B, S)`` source token ids.
        bos_id: the begin-of-sequence id that starts the decoder input.
        eos_id: the end-of-sequence id.
        max_len: the most tokens to generate (EOS included); at most ``model.max_len``.

    Returns:
        ``(B, L)`` generated ids with ``L <= max_len``, without the BOS, each row ending at its
        EOS and padded with ``model.pad_id`` after it; same layout as a ``tgt_out`` batch.

    Raises:
        ValueError: ``max_len`` out of range, or ids outside the target vocabulary.

    Taught in: chapters/07_transformer.ipynb
    """
    if not isinstance(model, EncoderDecoder):
        raise TypeError(f"greedy_decode needs an EncoderDecoder, got {type(model).__name__}")
    max_len = positive_int(max_len, "max_len")
    if max_len > model.max_len:
        raise ValueError(f"max_len={max_len} exceeds the model's max_len={model.max_len}")
    bos_id = _token_id(bos_id, "bos_id", model.tgt_vocab)
    eos_id = _token_id(eos_id, "eos_id", model.tgt_vocab)
    was_training = model.training
    model.eval()
    try:
        memory, src_mask = model.encode(src)  # (B, S, D), (B, 1, 1, S)
        B = src.shape[0]
        out = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)  # (B, 1)
        finished = torch.zeros(B, dtype=torch.bool, device=src.device)  # (B,)
        for _ in range(max_len):
            logits = model.decode(out, memory, src_mask)[:, -1]  # (B, t, n_vocab) -> (B, n_vocab)
            nxt = logits.argmax(dim=-1)  # (B,)
            nxt = torch.where(finished, torch.full_like(nxt, model.pad_id), nxt)
            out = torch.cat([out, nxt[:, None]], dim=1)  # (B, t) -> (B, t + 1)
            finished |= nxt == eos_id
            if bool(finished.all()):
                break
    finally:
        model.train(was_training)
    return out[:, 1:]  # drop BOS: (B, L)


@torch.no_grad()
def generate(
    model: DecoderOnlyLM,
    prompt: torch.Tensor,
    *,
    max_new_tokens: int,
    eos_id: int | None = None,
    use_cache: bool = False,
    temperature: float = 0.0,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    r"""Continue ``prompt`` with a :class:`DecoderOnlyLM`: greedily, or by sampling.

    .. math:: p(\text{next} = v) = \mathrm{softmax}(\text{logits} / \tau)_v

    Appends one token ``max_new_tokens`` times: with ``temperature`` 0 (the default) the
    argmax (greedy decoding); with ``temperature`` :math:`\tau > 0` a token drawn from the
    softmax of the logits divided by :math:`\tau` (chapter 2's temperature: below 1 sharper,
    above 1 flatter; :math:`\tau \to 0` is greedy). When the sequence outgrows
    ``model.max_len`` only its last ``max_len`` tokens are fed back (a sliding window, as
    nanoGPT does). With ``eos_id``, a row that produced it is continued with ``eos_id``
    and generation stops early once every row has. Runs in eval mode (restored after).

    With ``use_cache=True`` the prompt runs once and every later step feeds only the new
    token, whose query attends to the keys and values kept in a
    :class:`~attnlab.mechanism.scale.KVCache`: the same tokens as recomputation, with one token's
    work per step instead of the whole prefix's. Once the window slides (the positions of
    every kept token shift), the cache is rebuilt from the window at each step.

    Args:
        model: a :class:`DecoderOnlyLM`.
        prompt: ``(B, T0)`` token ids, ``T0 >= 1``.
        max_new_tokens: how many tokens to append.
        eos_id: optional end-of-sequence id.
        use_cache: keep the keys and values of past tokens (chapter 8).
        temperature: 0 for greedy decoding, or a positive sampling temperature.
        generator: optional ``torch.Generator`` for the draws (the same seed gives the same
            samples).

    Returns:
        ``(B, T0 + n)`` ids: the prompt followed by ``n <= max_new_tokens`` new tokens.

    Raises:
        ValueError: a negative or non-numeric ``temperature``.

    Taught in: chapters/07_transformer.ipynb and chapters/08_scale.ipynb (the cache)
    """
    if not isinstance(model, DecoderOnlyLM):
        raise TypeError(f"generate needs a DecoderOnlyLM, got {type(model).__name__}")
    temperature = check_real(
        temperature,
        "temperature",
        expected="0 (greedy) or a positive number",
        ok=lambda t: 0.0 <= t < math.inf,
    )
    max_new_tokens = positive_int(max_new_tokens, "max_new_tokens")
    eos_id = None if eos_id is None else _token_id(eos_id, "eos_id", model.vocab)
    if not isinstance(prompt, torch.Tensor):
        raise TypeError(f"prompt must be a torch.Tensor of token ids, got {describe(prompt)}")
    model._check_tokens(prompt[:, -model.max_len :], "prompt", model.vocab)
    window = model.max_len
    was_training = model.training
    model.eval()
    try:
        out = prompt.long()
        finished = torch.zeros(out.shape[0], dtype=torch.bool, device=out.device)  # (B,)
        cache = None
        for _ in range(max_new_tokens):
            if not use_cache:
                logits = model(out[:, -window:])[:, -1]  # (B, t, n_vocab) -> (B, n_vocab)
            elif cache is None or cache.length >= window:  # prefill (again)
                cache = KVCache(len(model.decoder.layers), capacity=window)
                logits = model(out[:, -window:], cache)[:, -1]  # (B, n_vocab)
            else:  # one new token: (B, 1) -> (B, 1, n_vocab) -> (B, n_vocab)
                logits = model(out[:, -1:], cache)[:, -1]
            nxt = _next_token(logits, temperature, generator)  # (B,)
            if eos_id is not None:
                nxt = torch.where(finished, torch.full_like(nxt, eos_id), nxt)
                finished |= nxt == eos_id
            out = torch.cat([out, nxt[:, None]], dim=1)  # (B, t) -> (B, t + 1)
            if eos_id is not None and bool(finished.all()):
                break
    finally:
        model.train(was_training)
    return out


def generation_seconds(
    model: DecoderOnlyLM,
    prompt: torch.Tensor,
    new_tokens: list[int],
    *,
    repeats: int = 3,
    clock: str = "cpu",
) -> list[dict[str, float]]:
    """What the KV cache saves: time of greedy :func:`generate` without and with it.

    For each ``n`` in ``new_tokens``, generation of ``n`` tokens after ``prompt`` is timed
    both ways, the two in turns, median of ``repeats``
    (:func:`attnlab.measure.median_seconds_each`), in processor time by default, so that
    other programs on the machine count for neither. Both ways are warmed up once, at the
    first ``n``.

    Args:
        model: a :class:`DecoderOnlyLM`.
        prompt: ``(B, T0)`` token ids.
        new_tokens: the numbers of tokens to generate, each ``>= 1``.
        repeats: timed runs of each (the median is kept).
        clock: ``"cpu"`` (processor time, the default) or ``"wall"`` (elapsed time).

    Returns:
        One dict per ``n``: ``{"new_tokens": n, "recompute_s": ..., "cache_s": ...,
        "speedup": recompute_s / cache_s}``.

    Raises:
        ValueError: an empty ``new_tokens``, a count or ``repeats`` that is not a positive
            integer, or an unknown ``clock``.

    Taught in: chapters/08_scale.ipynb
    """
    counts = [positive_int(n, "new_tokens") for n in new_tokens]
    if not counts:
        raise ValueError("new_tokens must list at least one number of tokens to generate")
    positive_int(repeats, "repeats")
    check_clock(clock)
    rows = []
    for i, n in enumerate(counts):
        runs = {
            "recompute": lambda n=n: generate(model, prompt, max_new_tokens=n),
            "cache": lambda n=n: generate(model, prompt, max_new_tokens=n, use_cache=True),
        }
        seconds = median_seconds_each(
            runs, repeats, clock=clock, device=prompt.device, warm_up=i == 0
        )
        rows.append(
            {
                "new_tokens": n,
                "recompute_s": seconds["recompute"],
                "cache_s": seconds["cache"],
                "speedup": seconds["recompute"] / seconds["cache"],
            }
        )
    return rows


def _next_token(
    logits: torch.Tensor, temperature: float, generator: torch.Generator | None
) -> torch.Tensor:
    if temperature == 0:
        return logits.argmax(dim=-1)  # (B, n_vocab) -> (B,)
    probs = torch.softmax(logits.double() / temperature, dim=-1)  # (B, n_vocab)
    return torch.multinomial(probs, 1, generator=generator)[:, 0]  # (B, 1) -> (B,)
