"""One place for input checks: arrays, numbers, and the inputs of modules.

The pure functions of attnlab (softmax, cosine similarity, attention, ...) are written once
against the Python array API standard. ``array-api-compat`` gives us a namespace ``xp`` with
the same functions for NumPy and torch, so a function called with NumPy arrays returns a
NumPy array and one called with tensors returns a tensor on the same device. This module
adds what that library does not do: turning bad input into an error message a learner can
act on (which argument, which shape, which dtype), the same way everywhere.

One behaviour for every check here:

- **Numbers.** A hyper-parameter that must be an integer accepts Python ``int``, NumPy
  integers (``np.int64(2)``) and 0-d integer arrays or tensors; a real-valued one also
  accepts floats and NumPy floats (``np.float32(0.5)``, what ``x.std()`` returns).
  Booleans are never numbers here (``True`` is a flag, not a size). The checks return a
  plain Python ``int``/``float``, so the rest of the library never sees a NumPy scalar.
  A value of the wrong kind or out of range raises ``ValueError`` naming the parameter.
- **Arrays.** :func:`as_array`, :func:`namespace`, :func:`as_float`, :func:`check_mask`:
  NumPy or torch in, the same kind out; mixing the two is a ``TypeError``.
- **Devices.** Tensors given together (``q, k, v``; scores and their mask; a module's
  weights and its input; new keys and a KV cache) must be on one device. Nothing is moved
  behind the learner's back: a ``ValueError`` names each tensor's device and the move
  that fixes it (:func:`same_device`, :func:`check_mask`, :func:`check_device`). Tensors
  become NumPy arrays only through :func:`to_numpy`, which copies them to the host first.
- **Module inputs.** :func:`check_input` checks that a module's input is a tensor of a
  floating dtype matching the module's weights, on their device, with the feature size the
  module was built for, so the error names the shapes and dtypes instead of torch's
  ``mat1 and mat2 shapes cannot be multiplied``.
"""

from __future__ import annotations

import contextlib
import math
import numbers
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

import numpy as np
from array_api_compat import array_namespace, device, is_numpy_array, is_torch_array

__all__ = [
    "NEG_INF",
    "as_array",
    "as_float",
    "broadcast_shape",
    "check_device",
    "check_heads",
    "check_input",
    "check_int",
    "check_last_dim",
    "check_mask",
    "check_real",
    "check_token_batch",
    "check_token_ids",
    "describe",
    "device",
    "inputs_checked",
    "match_kind",
    "namespace",
    "positive_int",
    "positive_ints",
    "positive_number",
    "probability",
    "same_device",
    "scalar_like",
    "to_numpy",
]

NEG_INF = -math.inf

# -- numbers -----------------------------------------------------------------------------------


def _scalar(value: Any, integral: bool) -> int | float | None:
    """``value`` as a Python ``int`` (or ``float`` when not ``integral``), else ``None``.

    Accepted: Python and NumPy numbers (``numbers.Integral``/``numbers.Real``) and 0-d
    NumPy arrays or torch tensors of such a dtype. Never booleans, never complex.
    """
    if isinstance(value, (bool, np.bool_)):
        return None
    if (is_numpy_array(value) or is_torch_array(value)) and value.ndim == 0:
        kind = to_numpy(value, numeric=False).dtype.kind
        if kind not in ("iu" if integral else "iuf"):
            return None
        value = value.item()
    if isinstance(value, numbers.Integral):
        return int(value)
    if not integral and isinstance(value, numbers.Real):
        return float(value)
    return None


def check_int(
    value: Any,
    name: str,
    *,
    low: int | None = None,
    high: int | None = None,
    expected: str | None = None,
) -> int:
    """``value`` as a Python ``int``, checked to be an integer in ``low .. high``.

    Args:
        value: a Python or NumPy integer, or a 0-d integer array or tensor.
        name: the parameter's name, for the message.
        low, high: the smallest and largest allowed values (inclusive; ``None``: no bound).
        expected: what the message says the value must be, instead of the default
            ("a positive integer", "an integer in 1..4", ...).

    Raises:
        ValueError: ``value`` is not an integer (a float, a bool, a string...) or is out of
            range; the message names ``name``: "n_heads must be a positive integer,
            got 2.0".
    """
    n = _scalar(value, integral=True)
    if n is None or (low is not None and n < low) or (high is not None and n > high):
        if expected is None:
            what = {None: "an integer", 0: "a non-negative integer", 1: "a positive integer"}
            expected = what.get(low, f"an integer >= {low}")
            if high is not None:
                expected = (
                    f"an integer <= {high}" if low is None else f"an integer in {low}..{high}"
                )
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    return n


def positive_int(value: Any, name: str) -> int:
    """``check_int(value, name, low=1)``: a size, a length, a count of steps."""
    return check_int(value, name, low=1)


def positive_ints(**sizes: Any) -> list[int]:
    """Each of ``sizes`` (by name) as a positive Python ``int``, in order (:func:`positive_int`)."""
    return [positive_int(n, name) for name, n in sizes.items()]


def check_real(
    value: Any,
    name: str,
    *,
    expected: str = "a real number",
    ok: Any = None,
) -> float:
    """``value`` as a Python ``float``, checked to be a real number for which ``ok`` holds.

    Args:
        value: the number (Python, NumPy scalar, or a 0-d array/tensor).
        name: the parameter's name, for the message.
        expected: what it must be, for the message ("a positive number").
        ok: optional predicate on the float (``lambda t: t > 0``); NaN never passes.

    Raises:
        ValueError: "temperature must be a positive number, got 0".
    """
    x = _scalar(value, integral=False)
    if x is None or math.isnan(x) or (ok is not None and not ok(x)):
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    return x


def positive_number(value: Any, name: str) -> float:
    """A real number ``> 0`` (a temperature, an epsilon, a learning rate)."""
    return check_real(value, name, expected="a positive number", ok=lambda x: x > 0)


def probability(value: Any, name: str = "dropout") -> float:
    """A dropout rate: a real number in ``[0, 1)``."""
    return check_real(value, name, expected="a probability in [0, 1)", ok=lambda p: 0.0 <= p < 1.0)


def check_heads(
    width: Any,
    heads: Any,
    *,
    width_name: str = "d_model",
    heads_name: str = "n_heads",
    why: str = "",
) -> tuple[int, int]:
    """``(width, heads)`` as positive ``int``s, ``heads`` dividing ``width``.

    The one check that a layer's ``d_model`` splits into ``n_heads`` equal heads (and, with
    other names, that ``n_heads`` query heads share ``n_kv_heads`` key-value heads evenly).

    Raises:
        ValueError: a size that is not a positive integer, or "d_model=10 is not divisible
            by n_heads=4: each head gets d_model / n_heads features".
    """
    width, heads = positive_int(width, width_name), positive_int(heads, heads_name)
    if width % heads:
        why = why or f"each head gets {width_name} / {heads_name} features"
        raise ValueError(f"{width_name}={width} is not divisible by {heads_name}={heads}: {why}")
    return width, heads


# -- arrays ------------------------------------------------------------------------------------


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
    one into the other would hide a device transfer or a dtype change. For the same
    reason tensors on different devices raise ``ValueError`` (:func:`same_device`).
    """
    kinds = {_kind(a) for a in arrays.values()}
    if "torch" in kinds and len(kinds) > 1:
        listing = ", ".join(f"{n} is {describe(a)}" for n, a in arrays.items())
        raise TypeError(f"mixed array kinds ({listing}): pass all NumPy arrays or all tensors")
    if len(arrays) > 1 and kinds == {"torch"}:
        same_device(**arrays)
    if len(kinds) != 1 or "other" in kinds:
        return array_namespace(*arrays.values())
    (kind,) = kinds
    if kind not in _NAMESPACES:  # one namespace per kind, whatever the dtype or device
        _NAMESPACES[kind] = array_namespace(*arrays.values())
    return _NAMESPACES[kind]


def _kind(a: Any) -> str:
    return "torch" if is_torch_array(a) else "numpy" if is_numpy_array(a) else "other"


_NAMESPACES: dict[str, Any] = {}


def same_device(**tensors: Any) -> None:
    """Raise ``ValueError`` unless the torch tensors among ``tensors`` share one device.

    PyTorch refuses to mix devices too, but its message ("Expected all tensors to be on
    the same device") names no argument; this one names each, and the move that fixes it.
    Moving a tensor silently instead would hide a copy between host and GPU at every call.
    NumPy arrays and ``None`` are ignored.

    Args:
        tensors: the tensors, by the names the message uses (``q=q, k=k, v=v``).

    Raises:
        ValueError: "q, k and v must be on one device, got q on cuda:0, k on cuda:0 and
            v on cpu: move them, e.g. v.to('cuda:0')".
    """
    placed = [(name, t.device) for name, t in tensors.items() if is_torch_array(t)]
    if len({dev for _, dev in placed}) <= 1:
        return
    dev = placed[0][1]
    odd = next(name for name, d in placed if d != dev)
    names = _and([name for name, _ in placed])
    where = _and([f"{name} on {d}" for name, d in placed])
    raise ValueError(
        f"{names} must be on one device, got {where}: move them, e.g. {odd}.to('{dev}')"
    )


def _and(words: list[str]) -> str:
    """``"a, b and c"``."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


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


def check_qkv(q: Any, k: Any, v: Any) -> None:
    """Check attention's inputs: ``q (..., T, d)``, ``k (..., S, d)``, ``v (..., S, d_v)``.

    Raises:
        ValueError: an input with fewer than 2 axes, ``q`` and ``k`` of different ``d``
            or of width ``d = 0``, or ``k`` and ``v`` of different lengths.
        TypeError: the three do not share a dtype.
    """
    for name, a in (("q", q), ("k", k), ("v", v)):
        if a.ndim < 2:
            raise ValueError(
                f"{name} must be (..., length, features) with one row per position, "
                f"got {describe(a)}"
            )
    check_last_dim(q, k, "q", "k")
    if q.shape[-1] == 0:
        raise ValueError(
            "q and k must have at least one feature (d >= 1): with none every score is 0 "
            f"and the weights are uniform, got q: shape {tuple(q.shape)} and k: shape "
            f"{tuple(k.shape)}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            "k and v must have one row per key (the same length), got "
            f"k: shape {tuple(k.shape)} and v: shape {tuple(v.shape)}"
        )
    if q.dtype != k.dtype or k.dtype != v.dtype:
        raise TypeError(f"q, k and v must share a dtype, got {q.dtype}, {k.dtype} and {v.dtype}")


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    """NumPy broadcasting of ``shapes``, or ``None`` when they do not broadcast."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def check_mask(
    mask: Any, target_shape: tuple[int, ...], xp: Any, what: str = "scores", *, like: Any
) -> Any:
    """Validate a boolean attention mask (``True`` = may attend) against ``target_shape``.

    The mask must be boolean (a float "additive" mask is a different convention, see
    chapter 6), must broadcast to ``target_shape`` without changing it, and must be the
    same kind of array as ``like`` (the scores or logits it masks), on its device.

    Raises:
        TypeError: the other kind of array than ``like``, or not boolean.
        ValueError: another device than ``like``'s, or a shape that does not broadcast.
    """
    mask = as_array(mask, "mask")
    if is_torch_array(mask) != (xp.__name__.endswith("torch")):
        raise TypeError(f"mask is {describe(mask)}, but the {what} are the other kind of array")
    if is_torch_array(mask) and mask.device != like.device:
        raise ValueError(
            f"mask is on {mask.device} but the {what} are on {like.device}: move the mask, "
            f"e.g. mask.to('{like.device}')"
        )
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


def to_numpy(x: Any, name: str = "x", *, numeric: bool = True) -> np.ndarray:
    """``x`` as a NumPy array: tensors are detached and copied to the CPU, lists converted.

    The one conversion used to draw (:mod:`attnlab.drawing.viz`) and to compare answers
    (:mod:`attnlab.grading`).

    Args:
        x: a NumPy array, a torch tensor (any device, with or without grad), a number or
            a (nested) list.
        name: the argument's name, for the messages.
        numeric: require real numbers (booleans and integers included).

    Raises:
        ValueError: a ragged nested list.
        TypeError: with ``numeric``, values that are not real numbers (strings, objects,
            complex numbers).
    """
    if is_torch_array(x):
        x = x.detach().cpu().numpy()
    try:
        arr = np.asarray(x)
    except ValueError as err:  # ragged nested lists
        raise ValueError(f"{name} is ragged: {err}") from None
    if numeric and arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers, got {describe(arr)}")
    return arr


# -- the inputs of modules ---------------------------------------------------------------------


_INPUTS_CHECKED: ContextVar[bool] = ContextVar("attnlab_inputs_checked", default=False)


@contextlib.contextmanager
def inputs_checked() -> Iterator[None]:
    """Inside this block :func:`check_input` returns at once, checking nothing.

    For a model that checked its input once at its boundary: the layers inside then
    receive tensors the model made itself, and checking them again in every layer of every
    generation step costs more than the arithmetic of one token.
    """
    token = _INPUTS_CHECKED.set(True)
    try:
        yield
    finally:
        _INPUTS_CHECKED.reset(token)


def check_input(
    x: Any,
    features: int,
    *,
    who: str,
    name: str = "x",
    shape: str | None = None,
    ndim: int | None = None,
    min_ndim: int = 1,
    module: Any = None,
    hint: str = "",
) -> None:
    """Check a module's input tensor: kind, dtype, device and feature size, with clear errors.

    Args:
        x: the input.
        features: the size its last axis must have (the module's ``d_model``).
        who: the module's name, for the messages (``"FeedForward"``).
        name: the argument's name (``"x"``, ``"query"``, ``"memory"``).
        shape: the expected shape as the message writes it (default ``(..., features)``).
        ndim: the exact number of axes required (default: any, at least ``min_ndim``).
        min_ndim: the fewest axes accepted.
        module: an ``nn.Module`` whose weights ``x`` must match in dtype and device.
        hint: appended to the floating-dtype error (e.g. "embed the token ids first").

    Raises:
        TypeError: ``x`` is not a tensor, not floating-point, or not of the weights' dtype.
        ValueError: the wrong number of axes, the wrong feature size, or another device.
    """
    if _INPUTS_CHECKED.get():  # inside a model that checked its input (inputs_checked)
        return
    if not is_torch_array(x):
        if name == "x":
            raise TypeError(f"{who} expects a torch.Tensor, got {describe(x)}")
        raise TypeError(f"{who} expects torch tensors, got {name}: {describe(x)}")
    shape = f"(..., {features})" if shape is None else shape
    if (ndim is not None and x.ndim != ndim) or x.ndim < min_ndim or x.shape[-1] != features:
        raise ValueError(f"{who}: {name} must have shape {shape}, got {describe(x)}")
    if not x.is_floating_point():
        raise TypeError(f"{who} expects floating-point {name}, got {describe(x)}{hint}")
    weight = _first_tensor(module)
    if weight is None:
        return
    if x.dtype != weight.dtype:
        w = str(weight.dtype).removeprefix("torch.")
        raise TypeError(
            f"{who} has {w} weights but {name} is {describe(x)}: convert one to the other, "
            f"e.g. {name}.to(torch.{w}) or module.to({x.dtype})"
        )
    check_device(x, module, who=who, name=name)


def check_token_ids(
    ids: Any, size: int, *, name: str = "ids", what: str = "the vocabulary"
) -> None:
    """Raise ``ValueError`` unless every integer in ``ids`` is a valid id, ``0 .. size - 1``.

    The one token-id range check (models, embedding tables, tokenizers, toy tasks).
    ``ids`` is a NumPy array or a tensor of integers (an empty one passes).

    Raises:
        ValueError: "tokens holds token id 9 (ids range over 0..9), but the vocabulary has
            7 ids: valid ids are 0..6".
    """
    if math.prod(ids.shape) == 0:
        return
    lo, hi = int(ids.min()), int(ids.max())
    if lo < 0 or hi >= size:
        bad = hi if hi >= size else lo
        raise ValueError(
            f"{name} holds token id {bad} (ids range over {lo}..{hi}), but {what} has "
            f"{size} ids: valid ids are 0..{size - 1}"
        )


def check_token_batch(
    tokens: Any, vocab: int, *, who: str, name: str, module: Any, max_len: int
) -> None:
    """Check a model's batch of token ids: an integer ``(B, T)`` tensor, ``1 <= T <= max_len``,
    on the model's device, every id in ``0 .. vocab - 1``.

    Raises:
        TypeError: not a tensor, or not of an integer dtype.
        ValueError: another shape, a length over ``max_len``, another device, or an id
            outside the vocabulary (:func:`check_token_ids`).
    """
    if not is_torch_array(tokens):
        raise TypeError(f"{name} must be a torch.Tensor of token ids, got {describe(tokens)}")
    if (
        tokens.dtype.is_floating_point
        or tokens.dtype.is_complex
        or str(tokens.dtype) == "torch.bool"
    ):
        raise TypeError(f"{name} must hold integer token ids, got {describe(tokens)}")
    if tokens.ndim != 2 or tokens.shape[1] == 0:
        raise ValueError(f"{name} must have shape (batch, length >= 1), got {describe(tokens)}")
    check_device(tokens, module, who=who, name=name)
    if tokens.shape[1] > max_len:
        raise ValueError(
            f"{name} has length {tokens.shape[1]}, longer than the model's max_len={max_len}"
        )
    check_token_ids(tokens, vocab, name=name)


def check_device(x: Any, module: Any, *, who: str, name: str = "x") -> None:
    """Raise ``ValueError`` unless the tensor ``x`` is on the device of ``module``'s weights.

    For inputs that :func:`check_input` does not see: token ids (integers, looked up in an
    embedding), or inputs of a layer that accepts any floating dtype (``LayerNorm``). A
    module without parameters or buffers accepts any device. Runs even inside
    :func:`inputs_checked` (it costs one comparison).

    Raises:
        ValueError: "DecoderOnlyLM has its weights on cuda:0 but tokens is on cpu: move
            one, e.g. tokens.to('cuda:0')".
    """
    weight = _first_tensor(module)
    if weight is not None and is_torch_array(x) and x.device != weight.device:
        raise ValueError(
            f"{who} has its weights on {weight.device} but {name} is on {x.device}: "
            f"move one, e.g. {name}.to('{weight.device}')"
        )


def _first_tensor(module: Any) -> Any:
    """The first parameter (else buffer) of ``module``, or ``None``.

    The first of ``module.parameters()`` (else ``module.buffers()``), found without building
    those generators: the module itself, then its children depth-first, as they do.
    """
    if module is None:
        return None
    found = _first_in(module, "_parameters")
    return _first_in(module, "_buffers") if found is None else found


def _first_in(module: Any, table: str) -> Any:
    for tensor in getattr(module, table).values():
        if tensor is not None:
            return tensor
    for child in module._modules.values():
        found = None if child is None else _first_in(child, table)
        if found is not None:
            return found
    return None


def match_kind(table: np.ndarray, like: Any) -> Any:
    """Return the NumPy ``table`` as the kind of array ``like`` is, on its device.

    ``like=None`` keeps ``table``. A floating ``table`` takes ``like``'s floating dtype, or
    the default float when ``like`` holds integers or booleans (NumPy: float64; torch:
    ``torch.get_default_dtype()``); any other ``table`` (a boolean mask) keeps its dtype.
    Used by the functions with a ``like=`` argument (``causal_mask``,
    ``sinusoidal_encoding``, ...).
    """
    if like is None:
        return table
    like = as_array(like, "like")
    floating = table.dtype.kind == "f"
    if is_numpy_array(like):
        return table.astype(like.dtype) if floating and like.dtype.kind == "f" else table
    import torch

    out = torch.from_numpy(table)
    if not floating:
        return out.to(like.device)
    dtype = like.dtype if like.is_floating_point() else torch.get_default_dtype()
    return out.to(device=like.device, dtype=dtype)
