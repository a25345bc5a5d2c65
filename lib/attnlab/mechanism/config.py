"""The hyper-parameters of a transformer, in one frozen object handed to every part.

A transformer has a handful of numbers that every layer must agree on: the width ``D`` of a
token vector, the number of heads, the feed-forward width, the dropout rate, where the
LayerNorm sits. Passing them by hand from the model to the stack to the block to the
attention layer repeats them five times and lets two layers disagree. Instead, write them
once::

    config = TransformerConfig(d_model=64, n_heads=4, n_layers=2, max_len=32)
    model = EncoderDecoder(src_vocab, tgt_vocab, config)
    block = EncoderBlock(config)            # the same numbers, one argument

and every part reads what it needs (nanoGPT's ``GPTConfig`` does the same). The object is
frozen: ``dataclasses.replace(config, dropout=0.1)`` makes a changed copy.

Chapter 9's modern blocks are options of the same object, whose defaults are chapter 7's
block: ``norm="rms"`` (RMSNorm for LayerNorm), ``activation="gelu"`` (for ReLU),
``ffn="swiglu"`` (the gated feed-forward network), ``tie_weights=True`` (the language
model's read-out shares the embedding matrix) and ``fused_attention=True`` (PyTorch's
fused kernel computes the attention; the weights are then not kept).

Taught in: chapters/07_transformer.ipynb
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import positive_int, positive_number, probability

__all__ = ["ACTIVATION_NAMES", "FFNS", "NORMS", "TransformerConfig"]

NORMS = ("layer", "rms")
"""``norm``: LayerNorm (chapter 7) or RMSNorm (chapter 9)."""
FFNS = ("mlp", "swiglu")
"""``ffn``: the two-layer network with an activation, or the gated SwiGLU network."""
ACTIVATION_NAMES = ("relu", "gelu", "gelu_tanh", "silu")
"""``activation`` of the two-layer network (``ffn="mlp"``)."""


@dataclass(frozen=True)
class TransformerConfig:
    """The shared hyper-parameters of a transformer's layers.

    Args:
        d_model: width ``D`` of every token vector.
        n_heads: attention heads ``H`` per attention layer; must divide ``d_model``.
        n_layers: blocks in each stack (the encoder's and the decoder's).
        d_ff: hidden width of the feed-forward network (default ``4 * d_model``, as in
            the paper: 512 -> 2048).
        max_len: the longest sequence a model accepts (its positional table's length);
            needed by the models, not by the layers.
        dropout: one rate for the attention weights, the FFN hidden layer, the residual
            branches and the embeddings.
        norm_first: pre-LN blocks (``True``, the default: they train reliably without a
            careful warm-up) or the paper's post-LN (``False``).
        bias: whether the attention projections and the FFN's linear layers have biases.
        eps: the LayerNorm (or RMSNorm) epsilon.
        norm: ``"layer"`` (LayerNorm, the default) or ``"rms"`` (RMSNorm: no centring, no
            shift), for every norm of the blocks and the stacks.
        activation: the feed-forward network's activation, one of
            :data:`ACTIVATION_NAMES`; default ``"relu"`` (the paper's), or ``"silu"`` for
            ``ffn="swiglu"``, the only one that network takes (its gate is a SiLU).
        ffn: ``"mlp"`` (the two-layer network, the default) or ``"swiglu"`` (gated, three
            matrices). With ``d_ff`` left out, SwiGLU's hidden width is ``8 * d_model // 3``,
            about as many weights as the two-layer network's ``4 * d_model``.
        tie_weights: a language model's read-out uses the token embedding matrix as its
            weight (one ``vocab x d_model`` matrix instead of two; its bias stays).
        fused_attention: compute attention with ``torch.nn.functional.scaled_dot_product_attention``
            (faster; the same numbers up to rounding). The attention weights are then
            not computed, so blocks keep none (``attention_maps`` raises): build the same
            model without it (``dataclasses.replace(config, fused_attention=False)``, then
            ``load_state_dict``) to look at the maps.

    Raises:
        ValueError: a size that is not a positive integer (``np.int64`` is fine), a
            ``d_model`` that ``n_heads`` does not divide, a dropout rate outside
            ``[0, 1)``, a non-positive ``eps``, an unknown ``norm``, ``activation`` or
            ``ffn``, an activation other than SiLU for ``ffn="swiglu"``.

    Example::

        TransformerConfig(d_model=16, n_heads=4).d_ff   # 64

    Taught in: chapters/07_transformer.ipynb
    """

    d_model: int
    n_heads: int
    n_layers: int = 1
    d_ff: int | None = None
    max_len: int | None = None
    dropout: float = 0.0
    norm_first: bool = True
    bias: bool = True
    eps: float = 1e-5
    norm: str = "layer"
    activation: str | None = None
    ffn: str = "mlp"
    tie_weights: bool = False
    fused_attention: bool = False

    def __post_init__(self) -> None:
        d_model = positive_int(self.d_model, "d_model")
        n_heads = positive_int(self.n_heads, "n_heads")
        if d_model % n_heads:
            raise ValueError(
                f"d_model={d_model} is not divisible by n_heads={n_heads}: each head gets "
                "d_model / n_heads features"
            )
        norm = _choice(self.norm, "norm", NORMS)
        ffn = _choice(self.ffn, "ffn", FFNS)
        activation = _activation(self.activation, ffn)
        wide = 4 * d_model if ffn == "mlp" else 8 * d_model // 3  # about 8·D² weights either way
        d_ff = wide if self.d_ff is None else positive_int(self.d_ff, "d_ff")
        max_len = None if self.max_len is None else positive_int(self.max_len, "max_len")
        checked = {
            "d_model": d_model,
            "n_heads": n_heads,
            "n_layers": positive_int(self.n_layers, "n_layers"),
            "d_ff": d_ff,
            "max_len": max_len,
            "dropout": probability(self.dropout, "dropout"),
            "norm_first": bool(self.norm_first),
            "bias": bool(self.bias),
            "eps": positive_number(self.eps, "eps"),
            "norm": norm,
            "activation": activation,
            "ffn": ffn,
            "tie_weights": _flag(self.tie_weights, "tie_weights"),
            "fused_attention": _flag(self.fused_attention, "fused_attention"),
        }
        # Frozen: the checked (plain Python) values are set once, here.
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    @property
    def d_head(self) -> int:
        """Features per head, ``d_model / n_heads``."""
        return self.d_model // self.n_heads

    def require_max_len(self, who: str) -> int:
        """``max_len``, or a ``ValueError`` saying that ``who`` (a model) needs one."""
        if self.max_len is None:
            raise ValueError(f"{who} needs config.max_len (the longest sequence), got None")
        return self.max_len

    @classmethod
    def check(cls, config: Any, who: str) -> TransformerConfig:
        """``config``, or a ``TypeError`` saying that ``who`` is built from a :class:`TransformerConfig`.

        Raises:
            TypeError: "EncoderBlock is built from a TransformerConfig, got a int: write
                EncoderBlock(TransformerConfig(d_model=..., n_heads=...))".
        """
        if not isinstance(config, cls):
            raise TypeError(
                f"{who} is built from a TransformerConfig, got a {type(config).__name__}: "
                f"write {who}(TransformerConfig(d_model=..., n_heads=...))"
            )
        return config


def _choice(value: Any, name: str, options: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in options:
        names = ", ".join(repr(o) for o in options)
        raise ValueError(f"{name} must be one of {names}, got {value!r}")
    return value


def _activation(value: Any, ffn: str) -> str:
    if ffn == "swiglu":
        if value not in (None, "silu"):
            raise ValueError(
                f"ffn='swiglu' gates with a SiLU, so activation must be 'silu' or left out, got "
                f"{value!r} (the activation choice is for ffn='mlp')"
            )
        return "silu"
    return "relu" if value is None else _choice(value, "activation", ACTIVATION_NAMES)


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)
