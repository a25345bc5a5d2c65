"""The full transformer: LayerNorm, the feed-forward network, encoder and decoder blocks, models.

A block is attention (tokens talk to each other) then a position-wise feed-forward network
(each token thinks on its own), each wrapped in a residual connection and a LayerNorm.
Where the LayerNorm sits is the one design choice that differs between papers:

- **post-LN** (the original): ``x = LN(x + Sublayer(x))``.
- **pre-LN**: ``x = x + Sublayer(LN(x))``, plus one final ``LN`` after the last block.
  The residual path is then a clean sum from input to output, which keeps gradients
  well-scaled at initialisation and lets deep stacks train without a careful warm-up.

Blocks, stacks and models are built from one :class:`~attnlab.mechanism.config.TransformerConfig`
(``EncoderBlock(config)``), whose ``norm_first`` says where the norms sit (pre-LN unless it
says otherwise). The two layers a chapter teaches by their sizes take them directly:
``LayerNorm(d_model)``, ``FeedForward(d_model, d_ff)``.

The blocks reproduce ``nn.TransformerEncoderLayer`` / ``nn.TransformerDecoderLayer``
layer for layer (same sub-layers, same dropout sites, ReLU), for both placements
(``norm_first``); ``tests/test_vs_pytorch_transformer.py`` checks it with copied weights.

Attention maps: every block keeps the attention weights of its last forward pass,
detached, in ``self_attn_weights`` (and ``cross_attn_weights`` for a decoder block with
cross-attention), each ``(B, H, T, S)``. The models collect them with
:meth:`EncoderDecoder.attention_maps` / :meth:`DecoderOnlyLM.attention_maps`: run a forward
pass, then read ``maps["cross"][layer][batch, head]``. (They are kept rather than returned so
that ``model(src, tgt_in)`` stays a plain "tokens in, logits out" call.)

Checks: a layer called on its own checks its input. A model checks its tokens once, then
runs its stacks inside :func:`~attnlab._validate.inputs_checked`: the blocks and their
sub-layers, which then receive only tensors the model made, skip their checks.

References:
    Vaswani et al., "Attention Is All You Need", 2017 (the architecture, post-LN).
    Ba, Kiros and Hinton, "Layer Normalization", 2016.
    Xiong et al., "On Layer Normalization in the Transformer Architecture", 2020 (pre-LN).

Taught in: chapters/07_transformer.ipynb
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch
import torch.nn.functional as F
from torch import nn

from .._validate import (
    check_device,
    check_input,
    check_int,
    check_token_batch,
    inputs_checked,
    positive_int,
    positive_number,
    probability,
)
from .config import TransformerConfig
from .kvcache import KVCache, LayerKV
from .masking import causal_mask, combine_masks, padding_mask
from .multihead import MultiHeadAttention
from .positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding

if TYPE_CHECKING:  # modern's layers build on this module's _FeatureNorm: imported where used
    from .modern import RMSNorm, SwiGLU

__all__ = [
    "Decoder",
    "DecoderBlock",
    "DecoderOnlyLM",
    "Encoder",
    "EncoderBlock",
    "EncoderDecoder",
    "FeedForward",
    "LayerNorm",
]


class _FeatureNorm(nn.Module):
    """What :class:`LayerNorm` and :class:`~attnlab.mechanism.modern.RMSNorm` share: ``D``,
    ``eps``, a gain ``γ`` per feature (starting at 1) and the check of their input."""

    def __init__(self, d_model: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.d_model, self.eps = positive_int(d_model, "d_model"), positive_number(eps, "eps")
        self.gamma = nn.Parameter(torch.ones(self.d_model))

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, eps={self.eps}"

    def _check(self, x: torch.Tensor) -> None:
        """``x`` of shape ``(..., D)``, floating point, on the weights' device (any dtype)."""
        check_input(x, self.d_model, who=type(self).__name__)
        check_device(x, self, who=type(self).__name__)


class LayerNorm(_FeatureNorm):
    r"""Normalise each token vector to mean 0 and variance 1, then scale and shift it.

    .. math:: \mathrm{LN}(x) = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}} + \beta,
        \qquad \mu = \frac{1}{D}\sum_j x_j, \quad \sigma^2 = \frac{1}{D}\sum_j (x_j - \mu)^2

    The statistics are over the features of *one* token (not over the batch, unlike
    BatchNorm), so the layer behaves the same in training and inference and for any batch
    size. The variance is the biased one (divide by ``D``), as in ``nn.LayerNorm``.
    ``γ`` starts at 1 and ``β`` at 0, so a fresh layer is a pure normalisation.

    Args:
        d_model: number of features ``D``.
        eps: added to the variance so a constant vector does not divide by zero.

    Shapes:
        ``x``: ``(..., D)``; returns ``(..., D)``.

    Raises:
        ValueError: ``x`` whose last axis is not ``D``.
        TypeError: ``x`` not a floating-point tensor.

    Taught in: chapters/07_transformer.ipynb
    """

    def __init__(self, d_model: int, eps: float = 1e-5) -> None:
        super().__init__(d_model, eps)
        self.beta = nn.Parameter(torch.zeros(self.d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # No dtype match required: the arithmetic below promotes (float64 x, float32 γ).
        self._check(x)
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
    sees another here; mixing across positions is attention's job. Chapter 9 swaps the
    ReLU (``max(0, ·)``) for another activation: ``activation="gelu"`` is GPT-2's network.

    Args:
        d_model: number of features ``D``.
        d_ff: hidden width.
        dropout: dropout on the hidden activations (as ``nn.TransformerEncoderLayer``).
        bias: whether the two linear layers have biases.
        activation: ``"relu"`` (the default), ``"gelu"``, ``"gelu_tanh"`` or ``"silu"``,
            PyTorch's kernels of the functions :mod:`attnlab.mechanism.modern` writes out
            (``tests/test_modern.py`` checks they agree).

    Shapes:
        ``x``: ``(B, T, D)`` (any leading axes); returns ``(B, T, D)``.

    Raises:
        ValueError: ``x`` whose last axis is not ``D``.
        TypeError: ``x`` not a tensor of the layer's floating dtype.

    Taught in: chapters/07_transformer.ipynb
    """

    def __init__(
        self,
        d_model: int,
        d_ff: int,
        dropout: float = 0.0,
        *,
        bias: bool = True,
        activation: str = "relu",
    ) -> None:
        super().__init__()
        self.d_model, d_ff = positive_int(d_model, "d_model"), positive_int(d_ff, "d_ff")
        if activation not in _ACTIVATIONS:
            raise ValueError(
                f"activation must be one of {sorted(_ACTIVATIONS)}, got {activation!r}"
            )
        self.activation = activation
        self.linear1 = nn.Linear(self.d_model, d_ff, bias=bias)
        self.dropout = nn.Dropout(probability(dropout))
        self.linear2 = nn.Linear(d_ff, self.d_model, bias=bias)

    def extra_repr(self) -> str:
        return "" if self.activation == "relu" else f"activation={self.activation!r}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_input(x, self.d_model, who="FeedForward", module=self)
        h = _ACTIVATIONS[self.activation](self.linear1(x))  # (B, T, D) -> (B, T, d_ff)
        return self.linear2(self.dropout(h))  # (B, T, d_ff) -> (B, T, D)


_ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "relu": torch.relu,
    "gelu": F.gelu,
    "gelu_tanh": functools.partial(F.gelu, approximate="tanh"),
    "silu": F.silu,
}


# -- the parts of a block, from its config --------------------------------------------------------


def _attention(config: TransformerConfig) -> MultiHeadAttention:
    return MultiHeadAttention(
        config.d_model,
        config.n_heads,
        bias=config.bias,
        dropout=config.dropout,
        fused=config.fused_attention,
    )


def _feed_forward(config: TransformerConfig) -> FeedForward | SwiGLU:
    from .modern import SwiGLU

    if config.ffn == "swiglu":  # its output dropout is the block's (dropout2 / dropout3)
        return SwiGLU(config.d_model, config.d_ff, bias=config.bias)
    return FeedForward(
        config.d_model, config.d_ff, config.dropout, bias=config.bias, activation=config.activation
    )


def _norm(config: TransformerConfig) -> LayerNorm | RMSNorm:
    from .modern import RMSNorm

    if config.norm == "rms":
        return RMSNorm(config.d_model, config.eps)
    return LayerNorm(config.d_model, config.eps)


class _Block(nn.Module):
    """What the encoder and decoder blocks share: the config, self-attention, the checks."""

    self_attn: MultiHeadAttention
    dropout1: nn.Dropout
    self_attn_weights: torch.Tensor | None

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.config = TransformerConfig.check(config, type(self).__name__)
        self.norm_first = config.norm_first

    def _check(self, x: Any, name: str = "x") -> None:
        D = self.config.d_model
        shape = f"(B, T, d_model={D})"
        check_input(x, D, who=type(self).__name__, name=name, shape=shape, ndim=3, module=self)

    def _self_attention(
        self, x: torch.Tensor, mask: torch.Tensor | None, cache: LayerKV | None = None
    ) -> torch.Tensor:
        out, weights = self.self_attn(x, mask=mask, cache=cache)  # (B, T, D), (B, H, T, S)
        self.self_attn_weights = None if weights is None else weights.detach()  # None: fused
        return self.dropout1(out)


class EncoderBlock(_Block):
    """One encoder layer: self-attention, then the feed-forward network, each with residual + LN.

    Pre-LN (``config.norm_first``, the default)::

        x = x + dropout1(self_attn(norm1(x)))
        x = x + dropout2(ffn(norm2(x)))

    Post-LN (``norm_first=False``, the paper and PyTorch's default)::

        x = norm1(x + dropout1(self_attn(x)))
        x = norm2(x + dropout2(ffn(x)))

    After a forward pass, ``self_attn_weights`` holds the (detached) ``(B, H, T, T)`` weights.

    Args:
        config: a :class:`TransformerConfig` (``d_model``, ``n_heads``, ``d_ff``,
            ``dropout``, ``norm_first``, ``bias``, ``eps``).

    Shapes:
        ``x``: ``(B, T, D)``; ``mask``: boolean, ``True`` = may attend, ``(T, T)`` or
        broadcastable 4-D ``(B, 1, 1, T)`` / ``(B, H, T, T)``. Returns ``(B, T, D)``.

    Raises:
        ValueError: ``x`` not of shape ``(B, T, D)``.
        TypeError: ``config`` not a :class:`TransformerConfig`; ``x`` not a tensor of the
            block's floating dtype.

    Taught in: chapters/07_transformer.ipynb
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__(config)
        self.self_attn, self.ffn = _attention(config), _feed_forward(config)
        self.norm1, self.norm2 = _norm(config), _norm(config)
        self.dropout1, self.dropout2 = nn.Dropout(config.dropout), nn.Dropout(config.dropout)
        self.self_attn_weights: torch.Tensor | None = None

    def extra_repr(self) -> str:
        return f"norm_first={self.norm_first}"

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        self._check(x)
        if self.norm_first:  # pre-LN: x + Sublayer(LN(x))
            x = x + self._self_attention(self.norm1(x), mask)  # (B, T, D)
            x = x + self.dropout2(self.ffn(self.norm2(x)))  # (B, T, D)
        else:  # post-LN: LN(x + Sublayer(x))
            x = self.norm1(x + self._self_attention(x, mask))  # (B, T, D)
            x = self.norm2(x + self.dropout2(self.ffn(x)))  # (B, T, D)
        return x


class DecoderBlock(_Block):
    """One decoder layer: masked self-attention, cross-attention over the encoder, then the FFN.

    Pre-LN (``config.norm_first``, the default)::

        x = x + dropout1(self_attn(norm1(x), mask=self_mask))
        x = x + dropout2(cross_attn(norm2(x), memory, memory, mask=memory_mask))
        x = x + dropout3(ffn(norm3(x)))

    Post-LN (``norm_first=False``) moves each ``norm`` onto the residual sum, as in
    :class:`EncoderBlock`. In cross-attention the queries come from the decoder and the
    keys and values from the encoder output ``memory``: each target token looks up the
    source tokens it needs.

    With ``cross_attention=False`` the middle sub-layer (and ``norm2``) is absent: that is the
    block of a decoder-only (GPT-style) model, a causally masked encoder block.

    After a forward pass, ``self_attn_weights`` holds ``(B, H, T, T)`` and
    ``cross_attn_weights`` ``(B, H, T, S)`` (detached).

    Args:
        config: a :class:`TransformerConfig`.
        cross_attention: whether the block attends to an encoder output.

    Shapes:
        ``x``: ``(B, T, D)``; ``memory``: ``(B, S, D)``; ``self_mask``: ``(T, T)`` or 4-D
        broadcastable to ``(B, H, T, T)`` (pass the causal mask here); ``memory_mask``: 4-D
        broadcastable to ``(B, H, T, S)`` (the source padding mask, ``(B, 1, 1, S)``).
        ``cache``: an optional :class:`~attnlab.mechanism.kvcache.LayerKV` for the
        self-attention. Returns ``(B, T, D)``.

    Raises:
        ValueError: ``memory`` missing with cross-attention, or given without it; ``x`` or
            ``memory`` not of shape ``(B, length, D)``.
        TypeError: ``config`` not a :class:`TransformerConfig`; ``x`` or ``memory`` not a
            tensor of the block's floating dtype.

    Taught in: chapters/07_transformer.ipynb
    """

    def __init__(self, config: TransformerConfig, *, cross_attention: bool = True) -> None:
        super().__init__(config)
        self.self_attn = _attention(config)
        self.cross_attn = _attention(config) if cross_attention else None
        self.ffn = _feed_forward(config)
        self.norm1 = _norm(config)
        self.norm2 = _norm(config) if cross_attention else None
        self.norm3 = _norm(config)
        self.dropout1, self.dropout2, self.dropout3 = (nn.Dropout(config.dropout) for _ in "123")
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
        self._check_inputs(x, memory)
        attend = self._self_attention
        if self.norm_first:  # pre-LN: x + Sublayer(LN(x))
            x = x + attend(self.norm1(x), self_mask, cache)  # (B, T, D)
            if self.cross_attn is not None:  # (B, T, D) queries over (B, S, D) memory
                x = x + self._cross_attention(self.norm2(x), memory, memory_mask)
            x = x + self.dropout3(self.ffn(self.norm3(x)))  # (B, T, D)
        else:  # post-LN: LN(x + Sublayer(x))
            x = self.norm1(x + attend(x, self_mask, cache))  # (B, T, D)
            if self.cross_attn is not None:
                x = self.norm2(x + self._cross_attention(x, memory, memory_mask))
            x = self.norm3(x + self.dropout3(self.ffn(x)))  # (B, T, D)
        return x

    def _check_inputs(self, x: Any, memory: Any) -> None:
        if self.cross_attn is not None and memory is None:
            raise ValueError("this DecoderBlock has cross-attention: pass the encoder memory")
        if self.cross_attn is None and memory is not None:
            raise ValueError(
                "this DecoderBlock was built with cross_attention=False: it takes no memory"
            )
        self._check(x)
        if memory is not None:
            self._check(memory, "memory")

    def _cross_attention(
        self, x: torch.Tensor, memory: torch.Tensor, mask: torch.Tensor | None
    ) -> torch.Tensor:
        out, weights = self.cross_attn(x, memory, memory, mask=mask)  # (B, T, D), (B, H, T, S)
        self.cross_attn_weights = None if weights is None else weights.detach()
        return self.dropout2(out)


class _Stack(nn.Module):
    """``config.n_layers`` blocks, and a final LayerNorm for a pre-LN stack (see :class:`Encoder`).

    ``block_options`` go to every block (``cross_attention`` for a :class:`Decoder`).
    """

    block: type[_Block]

    def __init__(self, config: TransformerConfig, **block_options: Any) -> None:
        super().__init__()
        self.config = TransformerConfig.check(config, type(self).__name__)
        layers = (self.block(config, **block_options) for _ in range(config.n_layers))
        self.layers = nn.ModuleList(layers)
        self.norm = _norm(config) if config.norm_first else None

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
        config: a :class:`TransformerConfig` (its ``n_layers`` blocks).

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
        config: a :class:`TransformerConfig`.
        cross_attention: ``False`` for a decoder-only model.

    Shapes:
        ``x``: ``(B, T, D)``; ``memory``: ``(B, S, D)``; masks as in :class:`DecoderBlock`.
        Returns ``(B, T, D)``.

    Taught in: chapters/07_transformer.ipynb
    """

    block = DecoderBlock

    def __init__(self, config: TransformerConfig, *, cross_attention: bool = True) -> None:
        super().__init__(config, cross_attention=cross_attention)

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


# -- the models ---------------------------------------------------------------------------------


class _TokenModel(nn.Module):
    """What the two models share: the config, the token checks, embedding, running a stack."""

    def _setup(self, config: TransformerConfig, pad_id: int | None) -> None:
        who = type(self).__name__
        self.config = TransformerConfig.check(config, who)
        self.d_model, self.max_len = config.d_model, config.require_max_len(who)
        self.pad_id = pad_id

    def _embedding(self, vocab: int) -> nn.Embedding:
        return nn.Embedding(vocab, self.d_model, padding_idx=self.pad_id)

    def _init_embedding(self, embedding: nn.Embedding) -> None:
        # N(0, 1/D): after the sqrt(D) scaling the token vectors have unit-variance entries,
        # the same scale as the positional code they are added to.
        nn.init.normal_(embedding.weight, std=self.d_model**-0.5)
        if embedding.padding_idx is not None:
            with torch.no_grad():
                embedding.weight[embedding.padding_idx].zero_()

    def _read_out(self, table: nn.Embedding) -> nn.Linear:
        """The linear map ``D -> vocab`` to logits; with ``config.tie_weights``, its weight *is*
        the embedding matrix ``table.weight`` ``(vocab, D)`` (one parameter, trained by both).

        A tied matrix starts at N(0, 0.02²), GPT-2's scale, not N(0, 1/D): a normalised
        token vector ``x`` holds its own token's embedding, and with rows of norm 1 the
        logit ``x · e_i`` of the token just read would start near ``√D`` and the model
        would first predict each character again (an initial loss of about 10 nats, not
        ``ln vocab``). Rows of norm ``0.02·√D`` keep that logit near ``0.02·D``.
        """
        vocab = table.num_embeddings
        to_logits = nn.Linear(self.d_model, vocab)  # weight (vocab, D), bias (vocab,)
        if self.config.tie_weights:
            nn.init.normal_(table.weight, std=0.02)
            if table.padding_idx is not None:
                with torch.no_grad():
                    table.weight[table.padding_idx].zero_()
            to_logits.weight = table.weight  # (vocab, D): token i's logit is x · e_i + b_i
        return to_logits

    def _embed(self, table: nn.Embedding, tokens: torch.Tensor, start: int = 0) -> torch.Tensor:
        """Token vectors · √D + positions ``start ..``, then dropout: ``(B, T) -> (B, T, D)``."""
        x = table(tokens) * math.sqrt(self.d_model)  # (B, T) -> (B, T, D)
        return self.dropout(self.positional(x, start))  # (B, T, D)

    def _run(self, stack: _Stack, x: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        """``stack(x, ...)``, with ``x`` checked once here: the layers inside receive only
        tensors the model made, so they skip their own checks (:func:`inputs_checked`)."""
        check_input(x, self.d_model, who=type(self).__name__, module=stack)
        with inputs_checked():
            return stack(x, *args, **kwargs)  # (B, T, D) -> (B, T, D)

    def _check_tokens(self, tokens: Any, name: str, vocab: int) -> None:
        check_token_batch(
            tokens, vocab, who=type(self).__name__, name=name, module=self, max_len=self.max_len
        )


def _token_id(i: Any, name: str, size: int, where: str = "") -> int:
    """``i`` as an ``int`` in ``0 .. size - 1`` (NumPy integers accepted, bools not)."""
    return check_int(i, name, low=0, high=size - 1, expected=f"an id in {where}0..{size - 1}")


def _positions(kind: str, d_model: int, max_len: int) -> nn.Module:
    if kind == "sinusoidal":
        return SinusoidalPositionalEncoding(d_model, max_len)
    if kind == "learned":
        return LearnedPositionalEmbedding(d_model, max_len)
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

    The config's default, pre-LN (``norm_first=True``), trains reliably on a CPU with Adam
    and a short warm-up; ``norm_first=False`` gives the paper's post-LN layout.

    Args:
        src_vocab: number of source token ids.
        tgt_vocab: number of target token ids.
        config: a :class:`TransformerConfig` with ``max_len`` set (the longest source or
            target sequence accepted); its ``n_layers`` blocks go in the encoder and in
            the decoder, its ``dropout`` also on the embeddings.
        pad_id: the padding token id (in both vocabularies); its embedding is zero and
            receives no gradient.
        positional: ``"sinusoidal"`` (the paper) or ``"learned"``.

    Shapes:
        ``forward(src (B, S), tgt_in (B, T))`` -> logits ``(B, T, tgt_vocab)``.

    Raises:
        ValueError: token ids outside the vocabulary (naming the id and the vocabulary
            size), sequences longer than ``max_len``, inconsistent batch sizes.
        TypeError: a ``config`` that is not a :class:`TransformerConfig`; tokens that are
            not an integer tensor.

    Taught in: chapters/07_transformer.ipynb
    """

    def __init__(
        self,
        src_vocab: int,
        tgt_vocab: int,
        config: TransformerConfig,
        *,
        pad_id: int = 0,
        positional: str = "sinusoidal",
    ) -> None:
        super().__init__()
        src_vocab = positive_int(src_vocab, "src_vocab")
        tgt_vocab = positive_int(tgt_vocab, "tgt_vocab")
        pad_id = _token_id(pad_id, "pad_id", min(src_vocab, tgt_vocab), "both vocabularies: ")
        self._setup(config, pad_id)
        self.src_vocab, self.tgt_vocab = src_vocab, tgt_vocab
        self.src_embed, self.tgt_embed = self._embedding(src_vocab), self._embedding(tgt_vocab)
        self._init_embedding(self.src_embed)
        self._init_embedding(self.tgt_embed)
        self.positional = _positions(positional, self.d_model, self.max_len)
        self.dropout = nn.Dropout(config.dropout)
        self.encoder, self.decoder = Encoder(config), Decoder(config)
        self.to_logits = self._read_out(self.tgt_embed)

    def encode(self, src: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Run the encoder: returns ``memory`` ``(B, S, D)`` and the source mask ``(B, 1, 1, S)``."""
        self._check_tokens(src, "src", self.src_vocab)
        src_mask = padding_mask(tokens=src, pad_id=self.pad_id)[:, None]  # (B, 1, 1, S)
        x = self._embed(self.src_embed, src)  # (B, S) -> (B, S, D)
        return self._run(self.encoder, x, src_mask), src_mask  # (B, S, D), (B, 1, 1, S)

    def decode(
        self, tgt_in: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor
    ) -> torch.Tensor:
        """Run the decoder on ``tgt_in`` ``(B, T)`` over ``memory``: logits ``(B, T, tgt_vocab)``."""
        self._check_tokens(tgt_in, "tgt_in", self.tgt_vocab)
        D = self.d_model
        shape = f"(B, S, d_model={D})"
        check_input(
            memory, D, who="EncoderDecoder", name="memory", shape=shape, ndim=3, module=self
        )
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
        y = self._embed(self.tgt_embed, tgt_in)  # (B, T) -> (B, T, D)
        y = self._run(self.decoder, y, memory, self_mask, src_mask)  # (B, T, D)
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
            :class:`EncoderDecoder`.
        positional: ``"learned"`` (GPT's choice, the default) or ``"sinusoidal"``.
        pad_id: optional padding id; if given, padded keys are hidden too and its embedding
            is zero.

    Shapes:
        ``forward(tokens (B, T))`` -> logits ``(B, T, vocab)``. With a
        :class:`~attnlab.mechanism.kvcache.KVCache`, ``forward(tokens, cache)`` processes
        only the new tokens: they take positions ``cache.length ..``, attend to the cached
        keys and values as well as their own, and append theirs to the cache (chapter 8).

    Raises:
        ValueError / TypeError: as :class:`EncoderDecoder`.

    Taught in: chapters/07_transformer.ipynb
    """

    def __init__(
        self,
        vocab: int,
        config: TransformerConfig,
        *,
        positional: str = "learned",
        pad_id: int | None = None,
    ) -> None:
        super().__init__()
        vocab = positive_int(vocab, "vocab")
        pad_id = None if pad_id is None else _token_id(pad_id, "pad_id", vocab)
        self._setup(config, pad_id)
        self.vocab = vocab
        self.embed = self._embedding(vocab)
        self._init_embedding(self.embed)
        self.positional = _positions(positional, self.d_model, self.max_len)
        self.dropout = nn.Dropout(config.dropout)
        self.decoder = Decoder(config, cross_attention=False)
        self.to_logits = self._read_out(self.embed)

    def forward(self, tokens: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        self._check_tokens(tokens, "tokens", self.vocab)
        T = tokens.shape[1]
        past = 0 if cache is None else cache.length  # positions already in the cache
        if past + T > self.max_len:
            raise ValueError(
                f"{past} cached + {T} new tokens exceed the model's max_len={self.max_len}"
            )
        mask = self._mask(tokens, past, cache)  # (T, S), (B, 1, T, S) or None
        x = self._embed(self.embed, tokens, past)  # (B, T, D), positions past .. past + T - 1
        x = self._run(self.decoder, x, None, mask, cache=cache)  # (B, T, D)
        return self.to_logits(x)  # (B, T, D) -> (B, T, vocab)

    def _mask(self, tokens: torch.Tensor, past: int, cache: KVCache | None) -> Any:
        """Causal over ``past + T`` keys, padded keys hidden (the cached ones too)."""
        T = tokens.shape[1]
        # The new queries are the last T of past + T positions. A single one may see every
        # key: no causal mask to build (the one-token steps of cached generation).
        mask = None if T == 1 else causal_mask(T, past + T, like=tokens)  # (T, S)
        if self.pad_id is None:
            return mask
        keys = padding_mask(tokens=tokens, pad_id=self.pad_id)[:, None]  # (B, 1, 1, T)
        if cache is not None:  # padding among the cached keys stays hidden
            if cache.key_visible is not None:
                keys = torch.cat([cache.key_visible, keys], dim=-1)  # (B, 1, 1, S)
            cache.key_visible = keys
        return keys if mask is None else combine_masks(mask, keys)  # -> (B, 1, T, S)

    def attention_maps(self) -> dict[str, list[torch.Tensor]]:
        """``{"decoder_self": [...]}``: per layer, the ``(B, H, T, T)`` causal weights of the last pass."""
        return _complete({"decoder_self": [b.self_attn_weights for b in self.decoder.layers]})


def _complete(maps: dict[str, list[Any]]) -> dict[str, list[torch.Tensor]]:
    if any(w is None for ws in maps.values() for w in ws):
        raise RuntimeError(
            "no attention weights yet: run the model on a batch first (a model built with "
            "fused_attention=True keeps none: rebuild it with fused_attention=False and "
            "load_state_dict to see its maps)"
        )
    return maps
