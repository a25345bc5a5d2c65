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

Taught in: chapters/07_transformer.ipynb
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._validate import positive_int, positive_number, probability

__all__ = ["TransformerConfig"]


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
        eps: the LayerNorm epsilon.

    Raises:
        ValueError: a size that is not a positive integer (``np.int64`` is fine), a
            ``d_model`` that ``n_heads`` does not divide, a dropout rate outside
            ``[0, 1)``, a non-positive ``eps``.

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

    def __post_init__(self) -> None:
        d_model = positive_int(self.d_model, "d_model")
        n_heads = positive_int(self.n_heads, "n_heads")
        if d_model % n_heads:
            raise ValueError(
                f"d_model={d_model} is not divisible by n_heads={n_heads}: each head gets "
                "d_model / n_heads features"
            )
        d_ff = 4 * d_model if self.d_ff is None else positive_int(self.d_ff, "d_ff")
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
