"""What modern decoder blocks change: RMSNorm, GELU, and the SwiGLU feed-forward network.

Chapter 7's block is the 2017 one: LayerNorm, and a two-layer feed-forward network with
ReLU. Language models since then mostly swap three parts, each a few lines:

- **GELU** instead of ReLU (GPT-2, BERT): :math:`x\\,\\Phi(x)`, a smooth ReLU that lets a
  little negative signal through; :func:`gelu`, and :class:`MLP`, the two-layer network
  with a choice of activation.
- **RMSNorm** instead of LayerNorm (T5, LLaMA): rescale each token vector by its root mean
  square, without subtracting the mean and without a shift :math:`\\beta`
  (:class:`RMSNorm`).
- **SwiGLU** instead of the two-layer network (PaLM, LLaMA): a gated network whose hidden
  units are products of a SiLU-activated projection and a plain one (:class:`SwiGLU`).

Each is compared with PyTorch where PyTorch has one (``nn.RMSNorm``, ``F.gelu``) in
``tests/test_modern.py``.

References:
    Hendrycks and Gimpel, "Gaussian Error Linear Units (GELUs)", 2016.
    Zhang and Sennrich, "Root Mean Square Layer Normalization", 2019.
    Shazeer, "GLU Variants Improve Transformer", 2020.

Written for chapter 9 (a GPT on real text).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from .._validate import (
    as_array,
    as_float,
    check_input,
    namespace,
    positive_int,
    probability,
)
from .transformer import _FeatureNorm

__all__ = ["ACTIVATIONS", "MLP", "RMSNorm", "SwiGLU", "gelu", "silu"]

_APPROXIMATIONS = ("none", "tanh")


def gelu(x: Any, approximate: str = "none") -> Any:
    r"""The Gaussian error linear unit: each input times the chance a standard normal is below it.

    .. math:: \mathrm{GELU}(x) = x\,\Phi(x) = \tfrac{x}{2}\left(1 + \mathrm{erf}(x/\sqrt{2})\right)

    With ``approximate="tanh"`` (GPT-2's form):
    :math:`\tfrac{x}{2}\left(1 + \tanh\left(\sqrt{2/\pi}\,(x + 0.044715\,x^3)\right)\right)`.

    Args:
        x: a NumPy array or torch tensor (or a list of numbers), any shape.
        approximate: ``"none"`` (the exact form) or ``"tanh"``, as in ``F.gelu``.

    Returns:
        The same kind of array as ``x``, its shape, a floating dtype.

    Raises:
        ValueError: an unknown ``approximate``.
        TypeError: ``x`` holds no real numbers.

    Written for chapter 9 (a GPT on real text).
    """
    if approximate not in _APPROXIMATIONS:
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    x = as_array(x, "x")
    xp = namespace(x=x)
    x = as_float(x, "x", xp)
    if approximate == "tanh":
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)
        return 0.5 * x * (1 + xp.tanh(inner))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def _erf(x: Any) -> Any:
    """The error function, elementwise (the array API has none: torch's, or math.erf)."""
    if isinstance(x, torch.Tensor):
        return torch.erf(x)
    return np.vectorize(math.erf, otypes=[x.dtype])(x) if x.size else x.copy()


def silu(x: Any) -> Any:
    r"""The sigmoid linear unit (also "swish"): :math:`\mathrm{SiLU}(x) = x\,\sigma(x)`.

    Args:
        x: a NumPy array or torch tensor (or a list of numbers), any shape.

    Returns:
        The same kind of array as ``x``, its shape, a floating dtype.

    Written for chapter 9 (a GPT on real text).
    """
    x = as_array(x, "x")
    xp = namespace(x=x)
    x = as_float(x, "x", xp)
    e = xp.exp(-xp.abs(x))  # in (0, 1]: no overflow for any x
    sigmoid = xp.where(x >= 0, 1 / (1 + e), e / (1 + e))  # σ(x), both branches stable
    return x * sigmoid


def _relu(x: Any) -> Any:
    return x * (x > 0)


ACTIVATIONS: dict[str, Callable[[Any], Any]] = {
    "relu": _relu,
    "gelu": gelu,
    "gelu_tanh": lambda x: gelu(x, approximate="tanh"),
    "silu": silu,
}
"""The activations :class:`MLP` accepts, by name."""


class RMSNorm(_FeatureNorm):
    r"""Rescale each token vector to root mean square 1, then scale it feature by feature.

    .. math:: \mathrm{RMSNorm}(x) = \gamma \odot \frac{x}{\sqrt{\tfrac{1}{D}\sum_j x_j^2 + \epsilon}}

    LayerNorm without its two centring steps: no mean is subtracted and there is no shift
    :math:`\beta`. What is left, the rescaling, is what keeps activations well-scaled; it
    is cheaper and trains as well. ``γ`` starts at 1, so a fresh layer only rescales.
    Matches ``torch.nn.RMSNorm(D, eps=eps)`` (whose ``weight`` is our ``gamma``).

    Args:
        d_model: number of features ``D``.
        eps: added to the mean square so a zero vector does not divide by zero
            (default ``1e-5``).

    Shapes:
        ``x``: ``(..., D)``; returns ``(..., D)``.

    Raises:
        ValueError: ``x`` whose last axis is not ``D``, or another device than the weights'.
        TypeError: ``x`` not a floating-point tensor.

    Written for chapter 9 (a GPT on real text).
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self._check(x)
        mean_square = (x * x).mean(dim=-1, keepdim=True)  # (..., D) -> (..., 1)
        return self.gamma * (x * torch.rsqrt(mean_square + self.eps))  # (D,) * (..., D)


class MLP(nn.Module):
    r"""The two-layer feed-forward network, with a choice of activation (GELU by default).

    .. math:: \mathrm{MLP}(x) = f(x W_1 + b_1)\, W_2 + b_2

    Chapter 7's :class:`~attnlab.mechanism.transformer.FeedForward` with :math:`f` = ReLU is
    ``MLP(..., activation="relu")``; GPT-2 uses GELU (its tanh form).

    Args:
        d_model: number of features ``D``.
        d_ff: hidden width (GPT-2: ``4 * D``).
        activation: a name in :data:`ACTIVATIONS` (``"relu"``, ``"gelu"``, ``"gelu_tanh"``,
            ``"silu"``).
        dropout: dropout on the output (as nanoGPT's MLP).
        bias: whether the two linear layers have biases.

    Shapes:
        ``x``: ``(B, T, D)`` (any leading axes); returns ``(B, T, D)``.

    Raises:
        ValueError: an unknown activation, a size that is not a positive integer, ``x``
            whose last axis is not ``D``.
        TypeError: ``x`` not a tensor of the layer's floating dtype.

    Written for chapter 9 (a GPT on real text).
    """

    def __init__(
        self,
        d_model: int,
        d_ff: int,
        activation: str = "gelu",
        dropout: float = 0.0,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        self.d_model = positive_int(d_model, "d_model")
        d_ff = positive_int(d_ff, "d_ff")
        self.activation = activation
        self.linear1 = nn.Linear(self.d_model, d_ff, bias=bias)
        self.linear2 = nn.Linear(d_ff, self.d_model, bias=bias)
        self.dropout = nn.Dropout(probability(dropout))

    def extra_repr(self) -> str:
        return f"activation={self.activation!r}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_input(x, self.d_model, who="MLP", module=self)
        h = ACTIVATIONS[self.activation](self.linear1(x))  # (B, T, D) -> (B, T, d_ff)
        return self.dropout(self.linear2(h))  # (B, T, d_ff) -> (B, T, D)


class SwiGLU(nn.Module):
    r"""The gated feed-forward network of LLaMA: a SiLU gate times a linear "up" projection.

    .. math:: \mathrm{SwiGLU}(x) = \left(\mathrm{SiLU}(x W_{\text{gate}}) \odot x W_{\text{up}}\right) W_{\text{down}}

    Three matrices instead of two: at equal parameter count its hidden width is about
    :math:`\tfrac{2}{3}` of the two-layer network's (LLaMA: ``d_ff = 8D/3`` instead of
    ``4D``). Each hidden unit is a product, so the network can switch a feature on or off
    by the input itself, which a single activation cannot.

    Args:
        d_model: number of features ``D``.
        d_ff: hidden width.
        dropout: dropout on the output.
        bias: whether the three linear layers have biases (LLaMA: none).

    Shapes:
        ``x``: ``(B, T, D)`` (any leading axes); returns ``(B, T, D)``.

    Raises:
        ValueError: a size that is not a positive integer, ``x`` whose last axis is not
            ``D``.
        TypeError: ``x`` not a tensor of the layer's floating dtype.

    Written for chapter 9 (a GPT on real text).
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, bias: bool = False) -> None:
        super().__init__()
        self.d_model = positive_int(d_model, "d_model")
        d_ff = positive_int(d_ff, "d_ff")
        self.W_gate = nn.Linear(self.d_model, d_ff, bias=bias)
        self.W_up = nn.Linear(self.d_model, d_ff, bias=bias)
        self.W_down = nn.Linear(d_ff, self.d_model, bias=bias)
        self.dropout = nn.Dropout(probability(dropout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_input(x, self.d_model, who="SwiGLU", module=self)
        h = silu(self.W_gate(x)) * self.W_up(x)  # (B, T, D) -> (B, T, d_ff), elementwise
        return self.dropout(self.W_down(h))  # (B, T, d_ff) -> (B, T, D)
