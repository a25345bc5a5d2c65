"""Copy weights from PyTorch's own transformer layers into ours, to compare the two.

PyTorch's ``nn.TransformerEncoderLayer`` and ``nn.TransformerDecoderLayer`` compute the same
functions as :class:`~attnlab.mechanism.transformer.EncoderBlock` and
:class:`~attnlab.mechanism.transformer.DecoderBlock`, but store the weights differently:

- ``nn.MultiheadAttention`` packs ``W_q, W_k, W_v`` into one ``in_proj_weight`` of shape
  ``(3D, D)`` (rows ``[W_q; W_k; W_v]``) and calls ``W_o`` ``out_proj``; ours are four
  ``nn.Linear``;
- the decoder layer's cross-attention is ``multihead_attn`` there, ``cross_attn`` here;
- the feed-forward layers are ``linear1``/``linear2`` there, ``ffn.linear1``/``ffn.linear2``
  here;
- ``nn.LayerNorm`` calls ``γ, β`` ``weight, bias``; ours calls them ``gamma, beta``.

:func:`copy_torch_weights` fills one of ours from one of theirs, so that a chapter (or a
grader) can run both on the same input and print the largest difference. PyTorch's masks
mean the opposite of ours (``True`` = *ignore*): pass ``~mask`` to them (see
:func:`~attnlab.mechanism.masking.to_ignore_mask`).

Taught in: chapters/07_transformer.ipynb
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

__all__ = ["copy_torch_weights"]


def copy_torch_weights(ours: nn.Module, theirs: nn.Module) -> nn.Module:
    """Copy the weights of a PyTorch layer into the matching attnlab layer, in place.

    Supported pairs (``ours`` <- ``theirs``):

    - :class:`~attnlab.mechanism.multihead.MultiHeadAttention` <- ``nn.MultiheadAttention``;
    - :class:`~attnlab.mechanism.transformer.LayerNorm` <- ``nn.LayerNorm``;
    - :class:`~attnlab.mechanism.transformer.EncoderBlock` <- ``nn.TransformerEncoderLayer``;
    - :class:`~attnlab.mechanism.transformer.DecoderBlock` <- ``nn.TransformerDecoderLayer``.

    ``ours`` is matched by its parts, not its class: any module with the attribute names
    of the attnlab layer works (e.g. an exercise's own encoder block with ``self_attn``,
    ``ffn``, ``norm1``, ``norm2``).

    Args:
        ours: the attnlab layer (or a module laid out like it) to overwrite.
        theirs: the PyTorch layer to read; same ``d_model``, heads and ``d_ff``.

    Returns:
        ``ours``, for chaining.

    Raises:
        TypeError: ``theirs`` is not one of the supported PyTorch layers, or ``ours``
            lacks a part it needs (naming it).
        ValueError: a weight of a different shape (naming both shapes).

    Taught in: chapters/07_transformer.ipynb
    """
    if isinstance(theirs, nn.MultiheadAttention):
        _copy_mha(ours, theirs, "")
    elif isinstance(theirs, nn.LayerNorm):
        _copy_norm(ours, theirs, "")
    elif isinstance(theirs, (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer)):
        decoder = isinstance(theirs, nn.TransformerDecoderLayer)
        _copy_mha(_part(ours, "self_attn", ""), theirs.self_attn, "self_attn.")
        if decoder:
            _copy_mha(_part(ours, "cross_attn", ""), theirs.multihead_attn, "cross_attn.")
        for name in ("linear1", "linear2"):
            _copy_linear(_part(ours, f"ffn.{name}", ""), getattr(theirs, name), f"ffn.{name}.")
        for i in (1, 2, 3) if decoder else (1, 2):
            _copy_norm(_part(ours, f"norm{i}", ""), getattr(theirs, f"norm{i}"), f"norm{i}.")
    else:
        raise TypeError(
            "copy_torch_weights copies from nn.MultiheadAttention, nn.LayerNorm, "
            f"nn.TransformerEncoderLayer or nn.TransformerDecoderLayer, got {type(theirs).__name__}"
        )
    return ours


def _part(module: nn.Module, path: str, where: str) -> Any:
    obj: Any = module
    for name in path.split("."):
        if not hasattr(obj, name) or getattr(obj, name) is None:
            raise TypeError(
                f"{type(module).__name__} has no {where}{path}: it must be laid out like the "
                "attnlab layer it stands for"
            )
        obj = getattr(obj, name)
    return obj


def _set(target: Any, source: torch.Tensor, name: str) -> None:
    if not isinstance(target, torch.Tensor):
        raise TypeError(f"{name} must be a parameter tensor, got {type(target).__name__}")
    if target.shape != source.shape:
        raise ValueError(
            f"{name} has shape {tuple(target.shape)} but PyTorch's weight has shape "
            f"{tuple(source.shape)}: build both layers with the same sizes"
        )
    with torch.no_grad():
        target.copy_(source)


def _copy_linear(ours: Any, theirs: nn.Linear, where: str) -> None:
    _set(_part(ours, "weight", where), theirs.weight, f"{where}weight")
    if theirs.bias is not None:
        _set(_part(ours, "bias", where), theirs.bias, f"{where}bias")


def _copy_mha(ours: Any, theirs: nn.MultiheadAttention, where: str) -> None:
    if theirs.in_proj_weight is None:
        raise TypeError("nn.MultiheadAttention with kdim/vdim != embed_dim is not supported")
    w_q, w_k, w_v = theirs.in_proj_weight.chunk(3, dim=0)  # (3D, D) -> 3 x (D, D)
    biases = (None,) * 3 if theirs.in_proj_bias is None else theirs.in_proj_bias.chunk(3)
    for name, w, b in zip(("W_q", "W_k", "W_v"), (w_q, w_k, w_v), biases, strict=True):
        lin = _part(ours, name, where)
        _set(_part(lin, "weight", f"{where}{name}."), w, f"{where}{name}.weight")
        if b is not None:
            _set(_part(lin, "bias", f"{where}{name}."), b, f"{where}{name}.bias")
    _copy_linear(_part(ours, "W_o", where), theirs.out_proj, f"{where}W_o.")


def _copy_norm(ours: Any, theirs: nn.LayerNorm, where: str) -> None:
    if theirs.weight is None or theirs.bias is None:
        raise TypeError("nn.LayerNorm without elementwise_affine/bias has no gamma/beta to copy")
    _set(_part(ours, "gamma", where), theirs.weight, f"{where}gamma")
    _set(_part(ours, "beta", where), theirs.bias, f"{where}beta")
