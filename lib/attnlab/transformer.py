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

from ._array import describe
from .masking import causal_mask, combine_masks, padding_mask
from .multihead import MultiHeadAttention
from .positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding

__all__ = [
    "Decoder",
    "DecoderBlock",
    "DecoderOnlyLM",
    "Encoder",
    "EncoderBlock",
    "EncoderDecoder",
    "FeedForward",
    "LayerNorm",
    "generate",
    "greedy_decode",
]


def _check_positive_int(name: str, n: Any) -> None:
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"{name} must be a positive integer, got {n!r}")


def _check_dropout(p: Any) -> None:
    if not isinstance(p, (int, float)) or isinstance(p, bool) or not 0.0 <= p < 1.0:
        raise ValueError(f"dropout must be a probability in [0, 1), got {p!r}")


class LayerNorm(nn.Module):
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

    Taught in: chapters/07_transformer.ipynb
    """

    def __init__(self, d_model: int, eps: float = 1e-5) -> None:
        super().__init__()
        _check_positive_int("d_model", d_model)
        if not isinstance(eps, (int, float)) or not eps > 0:
            raise ValueError(f"eps must be a positive number, got {eps!r}")
        self.d_model, self.eps = d_model, float(eps)
        self.gamma = nn.Parameter(torch.ones(d_model))
        self.beta = nn.Parameter(torch.zeros(d_model))

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, eps={self.eps}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"LayerNorm expects a torch.Tensor, got {describe(x)}")
        if x.ndim == 0 or x.shape[-1] != self.d_model:
            raise ValueError(
                f"LayerNorm expects x of shape (..., {self.d_model}), got {describe(x)}"
            )
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
        d_model: number of features ``D``.
        d_ff: hidden width.
        dropout: dropout on the hidden activations (as ``nn.TransformerEncoderLayer``).

    Shapes:
        ``x``: ``(B, T, D)`` (any leading axes); returns ``(B, T, D)``.

    Taught in: chapters/07_transformer.ipynb
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        _check_positive_int("d_model", d_model)
        _check_positive_int("d_ff", d_ff)
        _check_dropout(dropout)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.linear1(x))  # (B, T, D) -> (B, T, d_ff)
        return self.linear2(self.dropout(h))  # (B, T, d_ff) -> (B, T, D)


class EncoderBlock(nn.Module):
    """One encoder layer: self-attention, then the feed-forward network, each with residual + LN.

    Post-LN (``norm_first=False``, the paper and PyTorch's default)::

        x = norm1(x + dropout1(self_attn(x)))
        x = norm2(x + dropout2(ffn(x)))

    Pre-LN (``norm_first=True``)::

        x = x + dropout1(self_attn(norm1(x)))
        x = x + dropout2(ffn(norm2(x)))

    After a forward pass, ``self_attn_weights`` holds the (detached) ``(B, H, T, T)`` weights.

    Args:
        d_model: number of features ``D``.
        n_heads: attention heads ``H`` (must divide ``D``).
        d_ff: feed-forward hidden width.
        dropout: one rate for the attention weights, the FFN hidden layer and both residual
            branches (PyTorch's layers use one rate for all four too).
        norm_first: pre-LN if ``True``, post-LN if ``False``.

    Shapes:
        ``x``: ``(B, T, D)``; ``mask``: boolean, ``True`` = may attend, ``(T, T)`` or
        broadcastable 4-D ``(B, 1, 1, T)`` / ``(B, H, T, T)``. Returns ``(B, T, D)``.

    Taught in: chapters/07_transformer.ipynb
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        _check_dropout(dropout)
        self.norm_first = bool(norm_first)
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.self_attn_weights: torch.Tensor | None = None

    def extra_repr(self) -> str:
        return f"norm_first={self.norm_first}"

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), mask)
            x = x + self.dropout2(self.ffn(self.norm2(x)))
        else:
            x = self.norm1(x + self._self_attention(x, mask))
            x = self.norm2(x + self.dropout2(self.ffn(x)))
        return x  # (B, T, D)

    def _self_attention(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        out, weights = self.self_attn(x, mask=mask)  # (B, T, D), (B, H, T, T)
        self.self_attn_weights = weights.detach()
        return self.dropout1(out)


class DecoderBlock(nn.Module):
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
        d_model, n_heads, d_ff, dropout, norm_first: as in :class:`EncoderBlock`.
        cross_attention: whether the block attends to an encoder output.

    Shapes:
        ``x``: ``(B, T, D)``; ``memory``: ``(B, S, D)``; ``self_mask``: ``(T, T)`` or 4-D
        broadcastable to ``(B, H, T, T)`` (pass the causal mask here); ``memory_mask``: 4-D
        broadcastable to ``(B, H, T, S)`` (the source padding mask, ``(B, 1, 1, S)``).
        Returns ``(B, T, D)``.

    Raises:
        ValueError: ``memory`` missing with cross-attention, or given without it.

    Taught in: chapters/07_transformer.ipynb
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
        *,
        cross_attention: bool = True,
    ) -> None:
        super().__init__()
        _check_dropout(dropout)
        self.norm_first = bool(norm_first)
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout)
        self.cross_attn = (
            MultiHeadAttention(d_model, n_heads, dropout=dropout) if cross_attention else None
        )
        self.ffn = FeedForward(d_model, d_ff, dropout)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model) if cross_attention else None
        self.norm3 = LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.dropout3 = nn.Dropout(dropout)
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
    ) -> torch.Tensor:
        if self.cross_attn is not None and memory is None:
            raise ValueError("this DecoderBlock has cross-attention: pass the encoder memory")
        if self.cross_attn is None and memory is not None:
            raise ValueError(
                "this DecoderBlock was built with cross_attention=False: it takes no memory"
            )
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), self_mask)
            if self.cross_attn is not None:
                x = x + self._cross_attention(self.norm2(x), memory, memory_mask)
            x = x + self.dropout3(self.ffn(self.norm3(x)))
        else:
            x = self.norm1(x + self._self_attention(x, self_mask))
            if self.cross_attn is not None:
                x = self.norm2(x + self._cross_attention(x, memory, memory_mask))
            x = self.norm3(x + self.dropout3(self.ffn(x)))
        return x  # (B, T, D)

    def _self_attention(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        out, weights = self.self_attn(x, mask=mask)  # (B, T, D), (B, H, T, T)
        self.self_attn_weights = weights.detach()
        return self.dropout1(out)

    def _cross_attention(
        self, x: torch.Tensor, memory: torch.Tensor, mask: torch.Tensor | None
    ) -> torch.Tensor:
        out, weights = self.cross_attn(x, memory, memory, mask=mask)  # (B, T, D), (B, H, T, S)
        self.cross_attn_weights = weights.detach()
        return self.dropout2(out)


class Encoder(nn.Module):
    """A stack of ``n_layers`` :class:`EncoderBlock`; pre-LN stacks end with a final LayerNorm.

    Why the final norm: in a pre-LN block nothing normalises the residual stream on its way
    out (each norm sits on a sub-layer's *input*), so its scale grows with depth; one
    LayerNorm after the last block gives the next stage a normalised input. This is what
    GPT-2, ``nn.TransformerEncoder(..., norm=LayerNorm)`` setups and Xiong et al. (2020) do.
    A post-LN stack already ends with a norm, so it gets none (``self.norm`` is ``None``).

    Args:
        d_model, n_heads, d_ff, dropout, norm_first: as in :class:`EncoderBlock`.
        n_layers: number of blocks.

    Shapes:
        ``x``: ``(B, S, D)``; ``mask`` as in :class:`EncoderBlock`. Returns ``(B, S, D)``.

    Taught in: chapters/07_transformer.ipynb
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        n_layers: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        _check_positive_int("n_layers", n_layers)
        self.layers = nn.ModuleList(
            EncoderBlock(d_model, n_heads, d_ff, dropout, norm_first) for _ in range(n_layers)
        )
        self.norm = LayerNorm(d_model) if norm_first else None

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x, mask)  # (B, S, D) -> (B, S, D)
        return x if self.norm is None else self.norm(x)


class Decoder(nn.Module):
    """A stack of ``n_layers`` :class:`DecoderBlock`; pre-LN stacks end with a final LayerNorm.

    (See :class:`Encoder` for why.) Every block attends to the same encoder ``memory`` (the
    *last* encoder layer's output), as in the paper.

    Args:
        d_model, n_heads, d_ff, dropout, norm_first: as in :class:`EncoderBlock`.
        n_layers: number of blocks.
        cross_attention: ``False`` for a decoder-only model.

    Shapes:
        ``x``: ``(B, T, D)``; ``memory``: ``(B, S, D)``; masks as in :class:`DecoderBlock`.
        Returns ``(B, T, D)``.

    Taught in: chapters/07_transformer.ipynb
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        n_layers: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
        *,
        cross_attention: bool = True,
    ) -> None:
        super().__init__()
        _check_positive_int("n_layers", n_layers)
        self.layers = nn.ModuleList(
            DecoderBlock(
                d_model, n_heads, d_ff, dropout, norm_first, cross_attention=cross_attention
            )
            for _ in range(n_layers)
        )
        self.norm = LayerNorm(d_model) if norm_first else None

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor | None = None,
        self_mask: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x, memory, self_mask, memory_mask)  # (B, T, D) -> (B, T, D)
        return x if self.norm is None else self.norm(x)


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
        d_model: width ``D`` of every token vector.
        n_heads: attention heads ``H`` per attention layer.
        n_layers: blocks in the encoder and in the decoder.
        d_ff: feed-forward hidden width.
        max_len: the longest source or target sequence accepted.
        dropout: dropout rate (embeddings, attention weights, FFN, residual branches).
        norm_first: pre-LN (``True``) or post-LN (``False``) blocks.
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
        d_model: int,
        n_heads: int,
        n_layers: int,
        d_ff: int,
        max_len: int,
        dropout: float = 0.0,
        norm_first: bool = True,
        pad_id: int = 0,
        positional: str = "sinusoidal",
    ) -> None:
        super().__init__()
        for name, n in (("src_vocab", src_vocab), ("tgt_vocab", tgt_vocab), ("max_len", max_len)):
            _check_positive_int(name, n)
        if not isinstance(pad_id, int) or not 0 <= pad_id < min(src_vocab, tgt_vocab):
            raise ValueError(
                f"pad_id must be an id in both vocabularies (0..{min(src_vocab, tgt_vocab) - 1}), "
                f"got {pad_id!r}"
            )
        _check_dropout(dropout)
        self.src_vocab, self.tgt_vocab, self.d_model = src_vocab, tgt_vocab, d_model
        self.max_len, self.pad_id = max_len, pad_id
        self.src_embed = nn.Embedding(src_vocab, d_model, padding_idx=pad_id)
        self.tgt_embed = nn.Embedding(tgt_vocab, d_model, padding_idx=pad_id)
        self._init_embedding(self.src_embed, d_model)
        self._init_embedding(self.tgt_embed, d_model)
        self.positional = _make_positional(positional, d_model, max_len)
        self.dropout = nn.Dropout(dropout)
        self.encoder = Encoder(d_model, n_heads, n_layers, d_ff, dropout, norm_first)
        self.decoder = Decoder(d_model, n_heads, n_layers, d_ff, dropout, norm_first)
        self.to_logits = nn.Linear(d_model, tgt_vocab)

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
        d_model, n_heads, n_layers, d_ff, max_len, dropout, norm_first: as in
            :class:`EncoderDecoder`.
        positional: ``"learned"`` (GPT's choice, the default) or ``"sinusoidal"``.
        pad_id: optional padding id; if given, padded keys are hidden too and its embedding
            is zero.

    Shapes:
        ``forward(tokens (B, T))`` -> logits ``(B, T, vocab)``.

    Raises:
        ValueError / TypeError: as :class:`EncoderDecoder`.

    Taught in: chapters/07_transformer.ipynb
    """

    def __init__(
        self,
        vocab: int,
        d_model: int,
        n_heads: int,
        n_layers: int,
        d_ff: int,
        max_len: int,
        dropout: float = 0.0,
        norm_first: bool = True,
        positional: str = "learned",
        pad_id: int | None = None,
    ) -> None:
        super().__init__()
        _check_positive_int("vocab", vocab)
        _check_positive_int("max_len", max_len)
        if pad_id is not None and (not isinstance(pad_id, int) or not 0 <= pad_id < vocab):
            raise ValueError(f"pad_id must be None or an id in 0..{vocab - 1}, got {pad_id!r}")
        _check_dropout(dropout)
        self.vocab, self.d_model, self.max_len, self.pad_id = vocab, d_model, max_len, pad_id
        self.embed = nn.Embedding(vocab, d_model, padding_idx=pad_id)
        self._init_embedding(self.embed, d_model)
        self.positional = _make_positional(positional, d_model, max_len)
        self.dropout = nn.Dropout(dropout)
        self.decoder = Decoder(
            d_model, n_heads, n_layers, d_ff, dropout, norm_first, cross_attention=False
        )
        self.to_logits = nn.Linear(d_model, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        self._check_tokens(tokens, "tokens", self.vocab)
        T = tokens.shape[1]
        mask = causal_mask(T, like=tokens)  # (T, T)
        if self.pad_id is not None:
            keys = padding_mask(tokens=tokens, pad_id=self.pad_id)[:, None]  # (B, 1, 1, T)
            mask = combine_masks(mask, keys)  # -> (B, 1, T, T)
        x = self.embed(tokens) * math.sqrt(self.d_model)  # (B, T) -> (B, T, D)
        x = self.dropout(self.positional(x))  # (B, T, D)
        x = self.decoder(x, None, mask)  # (B, T, D)
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
    _check_positive_int("max_len", max_len)
    if max_len > model.max_len:
        raise ValueError(f"max_len={max_len} exceeds the model's max_len={model.max_len}")
    for name, i in (("bos_id", bos_id), ("eos_id", eos_id)):
        if not isinstance(i, int) or not 0 <= i < model.tgt_vocab:
            raise ValueError(f"{name} must be an id in 0..{model.tgt_vocab - 1}, got {i!r}")
    was_training = model.training
    model.eval()
    try:
        memory, src_mask = model.encode(src)  # (B, S, D), (B, 1, 1, S)
        B = src.shape[0]
        out = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)  # (B, 1)
        finished = torch.zeros(B, dtype=torch.bool, device=src.device)  # (B,)
        for _ in range(max_len):
            logits = model.decode(out, memory, src_mask)[:, -1]  # (B, t, V) -> (B, V)
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
) -> torch.Tensor:
    """Greedy continuation of ``prompt`` by a :class:`DecoderOnlyLM`.

    Appends the argmax next token ``max_new_tokens`` times. When the sequence outgrows
    ``model.max_len`` only its last ``max_len`` tokens are fed back (a sliding window, as
    nanoGPT does). With ``eos_id``, a row that produced it is continued with ``eos_id``
    and generation stops early once every row has. Runs in eval mode (restored after).

    Args:
        model: a :class:`DecoderOnlyLM`.
        prompt: ``(B, T0)`` token ids, ``T0 >= 1``.
        max_new_tokens: how many tokens to append.
        eos_id: optional end-of-sequence id.

    Returns:
        ``(B, T0 + n)`` ids: the prompt followed by ``n <= max_new_tokens`` new tokens.

    Taught in: chapters/07_transformer.ipynb
    """
    if not isinstance(model, DecoderOnlyLM):
        raise TypeError(f"generate needs a DecoderOnlyLM, got {type(model).__name__}")
    _check_positive_int("max_new_tokens", max_new_tokens)
    if not isinstance(prompt, torch.Tensor):
        raise TypeError(f"prompt must be a torch.Tensor of token ids, got {describe(prompt)}")
    model._check_tokens(prompt[:, -model.max_len :], "prompt", model.vocab)
    was_training = model.training
    model.eval()
    try:
        out = prompt.long()
        finished = torch.zeros(out.shape[0], dtype=torch.bool, device=out.device)  # (B,)
        for _ in range(max_new_tokens):
            logits = model(out[:, -model.max_len :])[:, -1]  # (B, t, V) -> (B, V)
            nxt = logits.argmax(dim=-1)  # (B,)
            if eos_id is not None:
                nxt = torch.where(finished, torch.full_like(nxt, eos_id), nxt)
                finished |= nxt == eos_id
            out = torch.cat([out, nxt[:, None]], dim=1)  # (B, t) -> (B, t + 1)
            if eos_id is not None and bool(finished.all()):
                break
    finally:
        model.train(was_training)
    return out
