"""One implementation for NumPy arrays and torch tensors alike.

The pure functions of attnlab (softmax, cosine similarity, attention, ...) are written once
against the Python array API standard. ``array-api-compat`` gives us a namespace ``xp`` with
the same functions for NumPy and torch, so a function called with NumPy arrays returns a
NumPy array and one called with tensors returns a tensor on the same device. This module
only adds what that library does not do: turning bad input into an error message a learner
can act on (which argument, which shape, which dtype).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from array_api_compat import array_namespace, device, is_numpy_array, is_torch_array

__all__ = [
    "as_array",
    "as_float",
    "check_mask",
    "describe",
    "device",
    "namespace",
]


def describe(x: Any) -> str:
    """A short human description of an array: ``'a torch.Tensor of shape (2, 3), float32'``."""
    if is_torch_array(x):
        return f"a torch.Tensor of shape {tuple(x.shape)}, {str(x.dtype).removeprefix('torch.')}"
    if is_numpy_array(x):
        return f"a numpy.ndarray of shape {tuple(x.shape)}, {x.dtype}"
    return f"a {type(x).__name__}"


def as_array(x: Any, name: str) -> Any:
    """Return ``x`` as an array: NumPy arrays and torch tensors pass through unchanged.

    Python numbers and (nested) lists/tuples of numbers become NumPy arrays, so a learner can
    write ``softmax([1.0, 2.0, 3.0])``. Anything else raises a ``TypeError`` naming ``name``.
    """
    if is_numpy_array(x) or is_torch_array(x):
        return x
    if isinstance(x, (bool, int, float, list, tuple)):
        try:
            arr = np.asarray(x)
        except ValueError as err:  # ragged nested lists
            raise ValueError(f"{name} is a ragged nested list: {err}") from None
        if arr.dtype.kind in "biuf":
            return arr
    raise TypeError(
        f"{name} must be a NumPy array or a torch tensor (or a list of numbers), got {describe(x)}"
    )


def namespace(**arrays: Any) -> Any:
    """The array namespace shared by all ``arrays`` (given by name, for the error message).

    Raises ``TypeError`` when NumPy arrays and torch tensors are mixed: silently converting
    one into the other would hide a device transfer or a dtype change.
    """
    kinds = {name: ("torch" if is_torch_array(a) else "numpy") for name, a in arrays.items()}
    if len(set(kinds.values())) > 1:
        listing = ", ".join(f"{n} is {describe(a)}" for n, a in arrays.items())
        raise TypeError(f"mixed array kinds ({listing}): pass all NumPy arrays or all tensors")
    return array_namespace(*arrays.values())


def as_float(x: Any, name: str, xp: Any) -> Any:
    """Return ``x`` with a real floating dtype.

    Booleans and integers are promoted to the library's default float (NumPy: float64;
    torch: ``torch.get_default_dtype()``), as ``np.exp`` and ``torch.exp`` would do.
    Complex input raises ``TypeError``.
    """
    if xp.isdtype(x.dtype, "real floating"):
        return x
    if xp.isdtype(x.dtype, ("bool", "integral")):
        if is_torch_array(x):
            import torch

            return x.to(torch.get_default_dtype())
        return xp.astype(x, xp.float64)
    raise TypeError(f"{name} must hold real numbers, got {describe(x)}")


def check_last_dim(a: Any, b: Any, a_name: str, b_name: str) -> None:
    """Raise ``ValueError`` unless ``a`` and ``b`` have the same size along the last axis."""
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(
            f"{a_name} and {b_name} must be vectors (at least 1-D), got "
            f"{a_name}: {describe(a)} and {b_name}: {describe(b)}"
        )
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"{a_name} and {b_name} must have the same size in their last axis, got "
            f"{a_name}: shape {tuple(a.shape)} and {b_name}: shape {tuple(b.shape)}"
        )


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    """NumPy broadcasting of ``shapes``, or ``None`` when they do not broadcast."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def check_mask(mask: Any, target_shape: tuple[int, ...], xp: Any, what: str = "scores") -> Any:
    """Validate a boolean attention mask (``True`` = may attend) against ``target_shape``.

    The mask must be boolean (a float "additive" mask is a different convention, see
    chapter 6) and must broadcast to ``target_shape`` without changing it.
    """
    mask = as_array(mask, "mask")
    if is_torch_array(mask) != (xp.__name__.endswith("torch")):
        raise TypeError(f"mask is {describe(mask)}, but the {what} are the other kind of array")
    if not xp.isdtype(mask.dtype, "bool"):
        raise TypeError(
            f"mask must be boolean (True = may attend), got {describe(mask)}; "
            "for a 0/1 mask use mask.astype(bool) or mask.bool()"
        )
    if broadcast_shape(tuple(mask.shape), tuple(target_shape)) != tuple(target_shape):
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to the {what} shape "
            f"{tuple(target_shape)}"
        )
    return mask


def scalar_like(value: float, like: Any, xp: Any) -> Any:
    """A 0-d array holding ``value`` with the dtype and device of ``like``."""
    return xp.asarray(value, dtype=like.dtype, device=device(like))


NEG_INF = -math.inf
